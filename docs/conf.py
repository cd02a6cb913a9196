"""Sphinx configuration of the fastpamst_nb documentation.

Build (warnings are errors, as on CI)::

    python -m pip install ".[docs]"
    sphinx-build -W -b html docs docs/_build/html

The build is offline: nothing is fetched (no intersphinx inventories). Pages
load MathJax from its CDN when they are *viewed*; an offline reader can pass
``-D mathjax_path=file:///path/to/tex-mml-chtml.js`` to use a local copy.
"""

import os
import sys

# local extension (docs/_ext): the `fastpamst --help` text
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

import fastpamst_nb  # noqa: E402  (autodoc imports the installed package anyway)

project = "fastpamst_nb"
author = "fastpamst_nb developers"
copyright = "fastpamst_nb developers, BSD-3-Clause"
release = fastpamst_nb.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    # CHANGELOG.md is Markdown: changelog.rst includes it through MyST's parser
    "myst_parser",
    "cli_help",
]

# figure1.png and figure2.png live here because README.md links them; they are
# shown by user_guide.rst, not sources of their own
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"
# `code` in the text means Python code, like ``code``
default_role = "code"
highlight_language = "python3"
pygments_style = "sphinx"

# -- autodoc / autosummary / numpydoc -----------------------------------------

# types are given by the numpydoc "Parameters" sections; the annotations use
# names that exist only for type checkers (Weights, Topology, Seed)
autodoc_typehints = "none"
autodoc_member_order = "bysource"
# the right-hand table of contents lists `save()`, not `SpanningTree.save()`
toc_object_entries_show_parents = "hide"
# summary tables only: every object is documented once, by hand, in api/*.rst
autosummary_generate = False

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc's docstring checks are not part of the build (numpydoc's default,
# spelled out); run them by hand with `python -m numpydoc validate NAME`
numpydoc_validation_checks = set()

# -- HTML -------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"fastpamst_nb {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
# single pages: no left sidebar (the right one holds the page's contents);
# the API reference keeps it for its sub-pages
html_sidebars = {page: [] for page in ("index", "user_guide", "cli", "design", "errata", "changelog")}


# -- docstrings: the Sphinx roles that help() shows as plain text -------------

def _docstring_as_written(app, what, name, obj, options, lines):
    """Give autodoc the docstring as written in the sources, roles included: the
    package's import renders them as plain text for help() (fastpamst_nb/_docstrings.py)."""
    from sphinx.util.docstrings import prepare_docstring

    from fastpamst_nb._docstrings import sphinx_doc

    doc = sphinx_doc(obj)
    if doc is not None:
        lines[:] = prepare_docstring(doc)


def setup(app):
    # before numpydoc's handler (priority 500), which parses the sections of these lines
    app.connect("autodoc-process-docstring", _docstring_as_written, priority=100)
