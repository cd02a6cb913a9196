import os
import sys

import pytest

# tests import the slow references as `import naive`
sys.path.insert(0, os.path.dirname(__file__))

# The suite tests the INSTALLED package (the wheel `pip install ".[test]"` built, or an
# editable install), never the source tree by accident: `python -m pytest` run from the
# checkout puts the checkout first on sys.path, where `import fastpamst_nb` would find the
# sources and miss packaging mistakes (a module or data file left out of the wheel). So
# the checkout leaves sys.path before the package is imported, and the Python
# subprocesses the tests start (CLI, notebooks, README) get PYTHONSAFEPATH=1 (Python
# 3.11+), which keeps their working directory off sys.path too.
# test_packaging.py checks which copy was imported.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != ROOT]
os.environ["PYTHONSAFEPATH"] = "1"
try:
    import fastpamst_nb  # noqa: E402,F401  (pinned now: later sys.path changes cannot swap it)
except ImportError as exc:
    raise ImportError(f"fastpamst_nb is not installed in this environment ({exc}); the tests run "
                      "against the installed package: python -m pip install \".[test]\"") from None

# The nojit lane: tests fast enough to pass with NUMBA_DISABLE_JIT=1, where every kernel
# runs as plain Python (so coverage sees its lines). They run in the normal suite too;
#     NUMBA_DISABLE_JIT=1 python -m pytest -m nojit tests/
# runs the lane alone. A file joins the lane with ``pytestmark = pytest.mark.nojit_lane``;
# its tests too slow as Python (chi-squares, big n, subprocesses that need compiled
# kernels) carry ``@pytest.mark.slow_python`` (or ``pytest.param(..., marks=...)``) and stay
# out. Every other test of the file is marked ``nojit`` here.


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "nojit: in the NUMBA_DISABLE_JIT=1 lane (kernels run as Python, for line coverage); "
        "select it with -m nojit",
    )
    config.addinivalue_line(
        "markers", "nojit_lane: the file's tests are in the nojit lane, but its slow_python ones")
    config.addinivalue_line(
        "markers", "slow_python: too slow with NUMBA_DISABLE_JIT=1: kept out of the nojit lane")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("nojit_lane") and not item.get_closest_marker("slow_python"):
            item.add_marker(pytest.mark.nojit)
