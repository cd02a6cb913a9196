"""``.. fastpamst-help:: [SUBCOMMAND]``: the ``--help`` text of the ``fastpamst`` command.

The text comes from the package's own argparse parser at build time
(``fastpamst_nb.cli._build_parser``), so the page cannot drift from the code.
It is formatted at a fixed width of 88 columns, whatever the terminal.
"""

import os
import re

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

# argparse reads the width from COLUMNS; Python >= 3.14 colours help on a terminal
# unless PYTHON_COLORS=0 (escape codes are stripped as well, to be sure)
ENV = {"COLUMNS": "88", "PYTHON_COLORS": "0"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _help_text(subcommand):
    from fastpamst_nb import cli

    old = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    try:
        parser = cli._build_parser()
        if subcommand:
            actions = [a for a in parser._actions if a.choices and subcommand in a.choices]
            if not actions:
                raise ValueError(f"fastpamst has no subcommand {subcommand!r}")
            parser = actions[0].choices[subcommand]
        return _ANSI.sub("", parser.format_help())
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class FastpamstHelp(SphinxDirective):
    optional_arguments = 1
    has_content = False

    def run(self):
        sub = self.arguments[0] if self.arguments else None
        try:
            text = _help_text(sub)
        except Exception as exc:  # a broken parser is a build error, not an empty block
            raise self.error(f"fastpamst-help: {exc}") from None
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("fastpamst-help", FastpamstHelp)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
