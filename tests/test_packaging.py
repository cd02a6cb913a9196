"""The suite runs against the installed distribution, and the wheel carries what users need."""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import fastpamst_nb

ROOT = Path(__file__).resolve().parents[1]
DIST = importlib.metadata.distribution("fastpamst-nb")


def _editable():
    direct = DIST.read_text("direct_url.json")
    return bool(direct) and json.loads(direct).get("dir_info", {}).get("editable", False)


def _installed_files():
    return {Path(DIST.locate_file(f)).resolve() for f in DIST.files or ()}


def test_the_imported_package_is_the_installed_one():
    module = Path(fastpamst_nb.__file__).resolve()
    assert fastpamst_nb.__version__ == DIST.version
    if _editable():  # `pip install -e .`: the sources are the installed package
        assert module.parent == ROOT / "fastpamst_nb"
    else:  # the wheel's copy in site-packages, not the checkout's
        assert module in _installed_files()
        assert ROOT not in module.parents


def test_the_distribution_ships_license_type_marker_and_modules():
    assert DIST.metadata["License-Expression"] == "BSD-3-Clause"
    assert "LICENSE" in DIST.metadata.get_all("License-File")
    if not _editable():  # a wheel copies it under .dist-info/licenses/ (PEP 639)
        assert "LICENSE" in {Path(str(f)).name for f in DIST.files or ()}
    package = Path(fastpamst_nb.__file__).resolve().parent
    assert (package / "py.typed").is_file()
    sources = {p.name for p in (ROOT / "fastpamst_nb").glob("*.py")}
    assert sources <= {p.name for p in package.glob("*.py")}  # no module left out of the wheel


def test_subprocesses_import_the_installed_package_too():
    # the tests' CLI and notebook subprocesses start in the checkout: PYTHONSAFEPATH keeps
    # its sources off their sys.path
    out = subprocess.run([sys.executable, "-c", "import fastpamst_nb; print(fastpamst_nb.__file__)"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == Path(fastpamst_nb.__file__).resolve()
    assert os.environ.get("PYTHONSAFEPATH") == "1"
