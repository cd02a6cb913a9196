"""Every ```python block of README.md runs as written, in order, in one fresh namespace."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"

# an opening fence ```python (any indentation, optional trailing words), the code, a closing fence
_BLOCK = re.compile(r"^(?P<indent>[ \t]*)```[ \t]*python\b[^\n]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)


def python_blocks(text):
    """The code of every ```python block of ``text``, dedented, in order."""
    return [textwrap.dedent(m.group("code")) for m in _BLOCK.finditer(text)]


def test_block_regex():
    text = "intro\n```python\na = 1\n```\n```bash\nls\n```\n  ```python title\n  b = a + 1\n  ```\n"
    assert python_blocks(text) == ["a = 1\n", "b = a + 1\n"]


def test_readme_has_python_blocks():
    assert len(python_blocks(README.read_text(encoding="utf-8"))) >= 1


def test_readme_python_blocks_run(tmp_path):
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    # one fresh interpreter: the blocks share a namespace as a reader's session would; a failure names its block
    runner = textwrap.dedent("""\
        import sys, traceback
        blocks = {blocks!r}
        namespace = {{"__name__": "__main__"}}
        for i, code in enumerate(blocks, 1):
            try:
                exec(compile(code, f"README.md python block {{i}}", "exec"), namespace)
            except BaseException:
                print(f"README.md python block {{i}} of {{len(blocks)}} failed:", file=sys.stderr)
                traceback.print_exc()
                sys.exit(1)
        """).format(blocks=blocks)
    (tmp_path / "run_readme.py").write_text(runner, encoding="utf-8")
    proc = subprocess.run([sys.executable, "run_readme.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
