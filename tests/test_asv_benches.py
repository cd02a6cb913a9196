"""Keep the airspeed-velocity benchmarks (asv_benches/) from rotting.

Imports every module under asv_benches, checks asv's naming convention and the
params/param_names shapes, then runs every benchmark method once per parameter
combination (setup, call, teardown) on tiny graphs: the size parameter ``n`` is
replaced by a small n, and the tracks' sizes (class attributes ``n``/``pamst_n``) are shrunk.
"""

import importlib
import inspect
import itertools
import json
import math
import pathlib
import pkgutil
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "asv_benches"
if str(ROOT) not in sys.path:  # for `asv_benches` only: fastpamst_nb is already the installed one
    sys.path.append(str(ROOT))

BENCH_PREFIXES = ("time_", "timeraw_", "mem_", "peakmem_", "track_")
ASV_HOOKS = {"setup", "teardown", "setup_cache"}
TINY_N = 24
SIZE_ATTRS = ("n", "pamst_n", "sparse_n")


def _modules():
    names = [f"asv_benches.{m.name}" for m in pkgutil.iter_modules([str(BENCH_DIR)])]
    return [importlib.import_module(name) for name in sorted(names)]


def _benchmarks():
    """(module, class or None, method name) for every benchmark asv would discover."""
    found = []
    for mod in _modules():
        for name, obj in vars(mod).items():
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__ and name.startswith(BENCH_PREFIXES):
                found.append((mod, None, name))
            elif inspect.isclass(obj) and obj.__module__ == mod.__name__:
                for meth in sorted(vars(obj)):
                    if meth.startswith(BENCH_PREFIXES):
                        found.append((mod, obj, meth))
    return found


def _classes():
    return [obj for mod in _modules() for obj in vars(mod).values()
            if inspect.isclass(obj) and obj.__module__ == mod.__name__]


def _param_lists(cls):
    params = getattr(cls, "params", None)
    if params is None:
        return []
    if params and not isinstance(params[0], (list, tuple)):
        return [list(params)]
    return [list(p) for p in params]


def _tiny_arg_sets(cls):
    """Every parameter combination, with the size parameter ('n') pinned to TINY_N."""
    names = list(getattr(cls, "param_names", []))
    lists = [[TINY_N] if i < len(names) and names[i] == "n" else values
             for i, values in enumerate(_param_lists(cls))]
    return [list(combo) for combo in itertools.product(*lists)]


def test_config_points_at_benchmarks():
    text = (ROOT / "asv.conf.json").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    conf = json.loads(body)
    assert conf["version"] == 1
    assert conf["benchmark_dir"] == "asv_benches"
    assert conf["repo"] == "."
    assert (BENCH_DIR / "__init__.py").exists()


def test_modules_import_and_define_benchmarks():
    assert _modules(), "no benchmark modules under asv_benches"
    names = {meth for _, _, meth in _benchmarks()}
    for required in ("time_exact_mst", "time_fast_pamst", "time_post_processing", "time_pamst",
                     "peakmem_fast_pamst"):
        assert required in names
    assert any(n.startswith("track_excess") for n in names)
    assert {"track_x_floor", "track_x_scipy"} <= names


def test_sizes_match_the_issue():
    bm = importlib.import_module("asv_benches.benchmarks")
    for cls in (bm.ExactMST, bm.PostProcessing):
        assert _param_lists(cls) == [[500, 2000, 5000]]
    assert _param_lists(bm.FastPAMST)[0] == [500, 2000, 5000]
    assert _param_lists(bm.PAMST) == [[200, 800]]
    assert _param_lists(bm.FastPAMSTMemory) == [[2000, 5000]]
    assert (bm.Utility.n, bm.Utility.pamst_n, bm.Utility.unit) == (2000, 800, "weight")
    assert (bm.FloorRatio.n, bm.FloorRatio.unit) == (4000, "x floor")
    assert _param_lists(bm.FloorRatio) == [[c for c in bm.bench.ALGORITHMS
                                            if c not in ("floor", "pamst", "numpy+scipy")]]
    assert (bm.SparseRatio.n, bm.SparseRatio.unit) == (100_000, "x scipy")
    assert (bm.ShapeRatio.n, bm.ShapeRatio.sparse_n) == (4000, 20_000)  # issue 31's table
    assert _param_lists(bm.ShapeRatio) == [list(bm.bench.SHAPES)]
    assert bm.ShapeRatio.WIDE_SENSITIVITY == 0.1  # the wide-group regime (sparse rows)
    assert (bm.RHO, bm.SENSITIVITY, bm.SEED) == (0.1, 1e-5, 0)


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_naming_convention(cls):
    public = [m for m, v in vars(cls).items() if callable(v) and not m.startswith("_")]
    benches = [m for m in public if m.startswith(BENCH_PREFIXES)]
    assert benches, f"{cls.__name__} defines no benchmark"
    stray = [m for m in public if m not in ASV_HOOKS and not m.startswith(BENCH_PREFIXES)]
    assert not stray, f"{cls.__name__}: public methods asv would ignore: {stray}"
    # asv would treat classes named Time*/Track*/... as benchmarks themselves
    assert not re.match(r"^(Time|TimeRaw|Mem|PeakMem|Track)[A-Z_]", cls.__name__)
    lists = _param_lists(cls)
    names = list(getattr(cls, "param_names", []))
    assert len(names) == len(lists), f"{cls.__name__}: param_names does not match params"
    for m in benches:
        assert inspect.getdoc(getattr(cls, m)), f"{cls.__name__}.{m} has no docstring"
        sig = inspect.signature(getattr(cls, m))
        assert len(sig.parameters) == 1 + len(lists), f"{cls.__name__}.{m} does not take {names}"


@pytest.mark.parametrize("bench", _benchmarks(), ids=lambda b: f"{b[1].__name__ if b[1] else b[0].__name__}.{b[2]}")
def test_runs_once_on_tiny_graph(bench):
    mod, cls, meth = bench
    if cls is None:
        result = getattr(mod, meth)()
    else:
        obj = cls()
        for attr in SIZE_ATTRS:
            if hasattr(cls, attr):
                setattr(obj, attr, TINY_N)
        for args in _tiny_arg_sets(cls):
            if hasattr(obj, "setup"):
                obj.setup(*args)
            try:
                result = getattr(obj, meth)(*args)
            finally:
                if hasattr(obj, "teardown"):
                    obj.teardown(*args)
    if meth.startswith("track_"):
        assert isinstance(result, (int, float)) and math.isfinite(result)
        assert result >= 0
