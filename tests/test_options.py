"""Issue 11 options: symmetric= (one triangle of a nearly symmetric matrix), progress=
(a tqdm bar over the private steps), the FASTPAMST_NB_CACHE switch and the nojit lane."""

import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb import core
from fastpamst_nb.chunks import run_in_chunks
from fastpamst_nb.graph import as_graph

pytestmark = pytest.mark.nojit_lane  # small inputs only: the lane runs the kernels as Python

KW = {"rho": 1.0, "sensitivity": 0.1, "rng": 3}
ALGOS = {
    "exact_mst": lambda W, **kw: fp.exact_mst(W, **kw),
    "pamst": lambda W, **kw: fp.pamst(W, **{**KW, **kw}),
    "post_processing": lambda W, **kw: fp.post_processing(W, **{**KW, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, **{**KW, **kw}),
    "fast_pamst_gumbel": lambda W, **kw: fp.fast_pamst(W, **{**KW, "noise": "gumbel", **kw}),
}


def corr_distance(n=12, seed=0):
    """1 - corrcoef: symmetric in exact arithmetic, asymmetric by rounding in float64."""
    X = np.random.default_rng(seed).normal(size=(n, 7))
    W = 1.0 - np.corrcoef(X)
    assert not np.array_equal(W, W.T) and np.allclose(W, W.T, rtol=0, atol=1e-14)
    return W


def mirrored(W, lower=False):
    """The symmetric matrix of one strict triangle of W (the reference of symmetric=)."""
    T = np.tril(W, -1) if lower else np.triu(W, 1)
    return T + T.T


def garbage_below(n=10, seed=1):
    """Upper triangle of random weights; the lower triangle and diagonal hold NaN and junk."""
    rng = np.random.default_rng(seed)
    W = rng.uniform(0.1, 1.0, size=(n, n))
    il = np.tril_indices(n, -1)
    W[il] = rng.uniform(-50.0, 50.0, size=il[0].size)
    W[2, 0] = np.nan
    W[n - 1, 1] = np.inf
    np.fill_diagonal(W, np.nan)
    return W


# ---------------------------------------------------------------------------
# 1. symmetric="upper" / "lower"
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("algo", list(ALGOS))
def test_rounding_asymmetric_matrix_is_read_from_one_triangle(algo):
    W = corr_distance()
    before = W.copy()
    with pytest.raises(ValueError, match="not symmetric"):
        ALGOS[algo](W)
    for side in ("upper", "lower"):
        tree = ALGOS[algo](W, symmetric=side)
        ref = ALGOS[algo](mirrored(W, side == "lower"))
        np.testing.assert_array_equal(tree.edges, ref.edges)
        np.testing.assert_array_equal(tree.edge_weights, ref.edge_weights)
    np.testing.assert_array_equal(W, before)  # the user's array is never modified


@pytest.mark.parametrize("algo", list(ALGOS))
def test_the_other_triangle_and_the_diagonal_are_never_read(algo):
    W = garbage_below()
    before = W.copy()
    tree = ALGOS[algo](W, symmetric="upper")
    np.testing.assert_array_equal(tree.edges, ALGOS[algo](mirrored(W)).edges)
    np.testing.assert_array_equal(tree.edge_weights, ALGOS[algo](mirrored(W)).edge_weights)
    # "lower" of the transpose is the same graph
    np.testing.assert_array_equal(ALGOS[algo](np.ascontiguousarray(W.T), symmetric="lower").edges,
                                  tree.edges)
    assert np.array_equal(W, before, equal_nan=True)


@pytest.mark.parametrize("layout", ["C", "F", "strided", "int64", "int64-F", "float32", "list"])
def test_every_memory_layout_reads_the_same_triangle(layout):
    n = 9
    base = np.random.default_rng(5).integers(1, 100, size=(2 * n, 2 * n))
    W = base[:n, :n].astype(np.float64)  # deliberately not symmetric: the triangle decides
    make = {
        "C": lambda: W.copy(),
        "F": lambda: np.asfortranarray(W),
        "strided": lambda: np.repeat(np.repeat(W, 2, 0), 2, 1)[::2, ::2],
        "int64": lambda: W.astype(np.int64),
        "int64-F": lambda: np.asfortranarray(W.astype(np.int64)),
        "float32": lambda: W.astype(np.float32),
        "list": lambda: W.tolist(),
    }
    for side in ("upper", "lower"):
        A = make[layout]()
        before = np.array(A, copy=True)
        g = as_graph(A, symmetric=side)
        np.testing.assert_array_equal(g.W, mirrored(W, side == "lower"))
        # a small float32 matrix is widened to float64, read-only (graph.kernel_view)
        assert g.W.flags.c_contiguous and g.W.dtype == np.float64 and not g.W.flags.writeable
        assert np.array_equal(np.asarray(A), before)  # not modified, also when F-ordered or int
        if isinstance(A, np.ndarray):
            assert not np.shares_memory(g.W, A)
        T = np.triu(W, 1) if side == "upper" else np.tril(W, -1)
        assert (g.wmin, g.wmax) == (T[T != 0].min(), T.max())


def test_a_condensed_vector_or_symmetric_matrix_gives_the_same_graph_either_way():
    from scipy.spatial.distance import pdist
    v = pdist(np.random.default_rng(2).random((8, 3)))
    for side in (None, "upper", "lower"):
        np.testing.assert_array_equal(as_graph(v, symmetric=side).W, as_graph(v).W)
    S = mirrored(np.random.default_rng(3).random((7, 7)))
    for side in ("upper", "lower"):
        np.testing.assert_array_equal(as_graph(S, symmetric=side).W, S)


@pytest.mark.parametrize("side, bad, named", [
    ("upper", (1, 4), r"weights\[1, 4\]"),
    ("lower", (4, 1), r"weights\[4, 1\]"),
])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nonfinite_entry_of_the_read_triangle_is_named(side, bad, named, order):
    W = mirrored(np.random.default_rng(0).random((6, 6)))
    W[bad] = np.nan
    W = np.asfortranarray(W) if order == "F" else W
    with pytest.raises(ValueError, match=named + r" is not finite"):
        fp.exact_mst(W, symmetric=side)
    other = "lower" if side == "upper" else "upper"
    assert len(fp.exact_mst(W, symmetric=other).edges) == 5  # the NaN is in the unread triangle


def test_sparse_input_uses_the_stored_entries_of_one_triangle():
    rng = np.random.default_rng(4)
    n = 10
    W = mirrored(rng.uniform(0.1, 1.0, size=(n, n)))
    W[W < 0.4] = 0.0
    W[0, 1] = W[1, 0] = 0.0  # keep a stored zero-weight edge below
    U = sp.triu(sp.csr_matrix(W), 1).tocoo()
    U = sp.coo_matrix((np.r_[U.data, 0.0], (np.r_[U.row, 0], np.r_[U.col, 1])), shape=(n, n))
    # the reference: the stored upper entries and their mirrors (U + U.T would drop the zero)
    full = sp.coo_matrix((np.r_[U.data, U.data], (np.r_[U.row, U.col], np.r_[U.col, U.row])),
                         shape=(n, n))
    junk = sp.coo_matrix((np.r_[U.data, 7.0, np.nan], (np.r_[U.row, 3, 5], np.r_[U.col, 2, 5])),
                         shape=(n, n))  # (3, 2) is below, (5, 5) on the diagonal: never read
    with pytest.raises(ValueError, match="not symmetric"):
        fp.exact_mst(U)
    for A in (U, junk, sp.csr_array(junk)):
        g = as_graph(A, symmetric="upper")
        ref = as_graph(full)
        assert g.m == ref.m == U.nnz  # the stored zero (0, 1) is an edge
        np.testing.assert_array_equal(g.indptr, ref.indptr)
        np.testing.assert_array_equal(g.indices, ref.indices)
        np.testing.assert_array_equal(g.data, ref.data)
    assert as_graph(sp.csr_matrix(U.T), symmetric="lower").m == U.nnz
    for algo in ALGOS:
        np.testing.assert_array_equal(ALGOS[algo](junk, symmetric="upper").edges, ALGOS[algo](full).edges)


def test_a_topology_reads_each_edge_from_the_chosen_triangle():
    n = 8
    W = garbage_below(n, seed=6)
    ring = np.zeros((n, n), dtype=bool)
    a = np.arange(n)
    ring[a, (a + 1) % n] = ring[(a + 1) % n, a] = True
    ring[0, 4] = ring[4, 0] = True
    for T in (ring, sp.csr_matrix(ring)):
        tree = fp.fast_pamst(W, **KW, topology=T, symmetric="upper")
        ref = fp.fast_pamst(mirrored(W), **KW, topology=T)
        np.testing.assert_array_equal(tree.edges, ref.edges)
        np.testing.assert_array_equal(tree.edge_weights, ref.edge_weights)
    with pytest.raises(ValueError, match=r"weights\[2, 0\] is not finite"):  # NaN below...
        fp.exact_mst(W, topology=ring | np.eye(n, k=-2, dtype=bool) | np.eye(n, k=2, dtype=bool),
                     symmetric="lower")
    # ... and the sparse weights' unstored entries weigh 0 as ever
    S = sp.csr_matrix(np.triu(W, 1))
    np.testing.assert_array_equal(fp.exact_mst(S, topology=ring, symmetric="upper").edges,
                                  fp.exact_mst(mirrored(W), topology=ring).edges)


def test_excess_weight_takes_the_triangle_too():
    W = corr_distance(15, seed=2)
    tree = fp.fast_pamst(W, **KW, symmetric="upper")
    assert fp.excess_weight(W, tree, symmetric="upper") == fp.excess_weight(mirrored(W), tree)
    with pytest.raises(ValueError, match="not symmetric"):
        fp.excess_weight(W, tree)


@pytest.mark.parametrize("value, exc, match", [
    ("both", ValueError, r"symmetric must be None.*'upper' or 'lower'.*got 'both'"),
    ("Upper", ValueError, r"got 'Upper'"),
    (True, TypeError, r"symmetric must be None.*got bool"),
    (1, TypeError, r"got int"),
])
@pytest.mark.parametrize("algo", list(ALGOS))
def test_bad_symmetric_values_are_refused_before_the_matrix_is_read(algo, value, exc, match):
    W = np.full((5, 5), np.nan)  # any pass over the values would fail with another message
    with pytest.raises(exc, match=match):
        ALGOS[algo](W, symmetric=value)


def test_the_copy_is_checked_against_memory_before_it_is_allocated(monkeypatch):
    W = mirrored(np.random.default_rng(0).random((40, 40)))
    monkeypatch.setattr(core, "_SMALL", 0)
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 1000)
    assert len(fp.exact_mst(W).edges) == 39  # exactly symmetric: read in place, no copy
    with pytest.raises(ValueError, match=r"symmetric='upper': the symmetric \(40, 40\) float64 copy"):
        fp.exact_mst(W, symmetric="upper")


# --- the message of the default check: which of two coarse classes, never a value

def _messages(A):
    out = []
    for algo in ALGOS:
        with pytest.raises(ValueError) as info:
            ALGOS[algo](A)
        out.append(str(info.value))
    assert len(set(out)) == 1
    return out[0]


def test_asymmetry_message_does_not_classify_the_data():
    # issue 25 item 6: the advice (symmetric='upper') without a data-derived bit: an
    # asymmetry at rounding level and a large one give the same message
    W = 1234.5678 * corr_distance()  # asymmetric by rounding only, first at some (i, j)
    msg = _messages(W)
    assert "not symmetric" in msg and "symmetric='upper'" in msg and "(W + W.T) / 2" in msg
    big = W.copy()
    i, j = (int(x) for x in re.search(r"weights\[(\d+), (\d+)\]", msg).groups())
    big[i, j] += 3.25  # the same first asymmetric pair, by far more than rounding
    assert _messages(big) == msg
    W32 = mirrored(W).astype(np.float32)
    W32[0, 3] = np.nextafter(W32[0, 3], np.float32(np.inf))  # one float32 ulp
    W32b = W32.copy()
    W32b[0, 3] += 1.0
    assert _messages(W32) == _messages(W32b)
    assert "rounding (relative" not in msg and "more than rounding" not in msg


@pytest.mark.parametrize("kind", ["big", "nan-below", "inf-below"])
def test_real_asymmetry_names_the_pair_and_both_fixes(kind):
    W = 1234.5678 * mirrored(np.random.default_rng(8).random((12, 12)))
    W[3, 9] = {"big": 3.25, "nan-below": W[3, 9], "inf-below": W[3, 9]}[kind]
    if kind != "big":
        W[9, 3] = np.nan if kind == "nan-below" else np.inf
    msg = _messages(W)
    assert "weights[3, 9] != weights[9, 3]" in msg
    assert "(W + W.T) / 2" in msg and "symmetric='upper'" in msg
    for v in (W[3, 9], W[9, 3], W.max()):  # no weight is quoted
        if not np.isfinite(v):
            continue
        for text in (repr(v), f"{v:g}", f"{v:.4f}", str(v)[:6]):
            assert text not in msg


def test_sparse_asymmetry_messages_do_not_classify_either():
    S = sp.csr_matrix(1234.5678 * corr_distance(10))
    msg = _messages(S)
    assert "symmetric='upper'" in msg and "W.maximum(W.T)" in msg
    D = S.tolil()
    k = re.search(r"weights\[(\d+), (\d+)\]", msg).groups()
    D[int(k[0]), int(k[1])] = 1.5
    assert _messages(D.tocsr()) == msg
    msg = _messages(sp.triu(S, 1).tocsr())  # the stored entries differ
    assert "stored entries" in msg and "symmetric='upper'" in msg and "W.maximum(W.T)" in msg


# ---------------------------------------------------------------------------
# 2. progress=
# ---------------------------------------------------------------------------

class FakeBar:
    made = []

    def __init__(self, total=None, desc=None, unit=None):
        self.total, self.desc, self.updates, self.closed = total, desc, [], False
        FakeBar.made.append(self)

    def update(self, k):
        assert not self.closed
        self.updates.append(k)

    def close(self):
        self.closed = True


@pytest.fixture
def fake_tqdm(monkeypatch):
    module = types.ModuleType("tqdm.auto")
    module.tqdm = FakeBar
    FakeBar.made = []
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    return FakeBar.made


PROGRESS = {
    "pamst": lambda W, **kw: fp.pamst(W, **{**KW, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, **{**KW, **kw}),
    "fast_pamst_gumbel": lambda W, **kw: fp.fast_pamst(W, **{**KW, "noise": "gumbel", **kw}),
}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("algo", list(PROGRESS))
def test_progress_bar_counts_the_steps_and_leaves_the_tree_alone(algo, sparse, fake_tqdm):
    n = 40
    W = mirrored(np.random.default_rng(1).random((n, n)))
    W = sp.csr_matrix(W) if sparse else W
    quiet = PROGRESS[algo](W)
    assert fake_tqdm == []  # off by default
    loud = PROGRESS[algo](W, progress=True)
    np.testing.assert_array_equal(loud.edges, quiet.edges)
    (bar,) = fake_tqdm
    assert bar.total == n - 1 and sum(bar.updates) == n - 1 and bar.closed
    assert len(bar.updates) > 1  # per chunk (sizes 1, 2, 4, ...), not once at the end
    assert bar.desc == algo.replace("_gumbel", "")


def test_progress_bar_is_closed_when_the_run_is_interrupted(fake_tqdm, monkeypatch):
    from fastpamst_nb import pipeline

    def boom(advance, n_steps, callback=None, first=1):
        advance(0, 1)
        callback(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run_in_chunks", boom)
    with pytest.raises(KeyboardInterrupt):
        fp.fast_pamst(mirrored(np.random.default_rng(0).random((6, 6))), **KW, progress=True)
    (bar,) = fake_tqdm
    assert bar.updates == [1] and bar.closed


@pytest.mark.parametrize("algo", list(PROGRESS))
def test_progress_without_tqdm_says_how_to_install_it_before_reading_weights(algo, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    with pytest.raises(ImportError, match=r"python -m pip install tqdm"):
        PROGRESS[algo](np.full((5, 5), np.nan), progress=True)
    assert len(PROGRESS[algo](mirrored(np.ones((5, 5)))).edges) == 4  # progress=False needs no tqdm


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_progress_must_be_a_bool(value, fake_tqdm):
    with pytest.raises(TypeError, match="progress must be True or False"):
        fp.fast_pamst(np.full((4, 4), np.nan), **KW, progress=value)


def test_run_in_chunks_reports_each_chunk_once():
    seen, reported = [], []
    run_in_chunks(lambda s, k: seen.append((s, k)), 100, callback=reported.append)
    assert [k for _, k in seen] == reported and sum(reported) == 100
    assert [s for s, _ in seen] == list(np.cumsum([0] + reported[:-1]))
    assert len(reported) > 1


# ---------------------------------------------------------------------------
# 3. FASTPAMST_NB_CACHE
# ---------------------------------------------------------------------------

def _import_core(value):
    env = {k: v for k, v in os.environ.items() if k not in ("FASTPAMST_NB_CACHE", "NUMBA_DISABLE_JIT")}
    if value is not None:
        env["FASTPAMST_NB_CACHE"] = value
    code = ("import fastpamst_nb.core as c, fastpamst_nb.dense_scan as g; "
            "print(c.CACHE, type(g._dense_scan._cache).__name__)")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)


def test_cache_switch_is_read_from_the_environment():
    for value, cache in [("Off", False), (None, True)]:  # other spellings: test_cache_spellings
        out = _import_core(value)
        assert out.returncode == 0, out.stderr
        flag, kind = out.stdout.split()
        assert flag == str(cache), value
        assert (kind == "NullCache") == (not cache), value  # what numba was told, not just the constant


def test_cache_switch_refuses_an_unknown_value_at_import():
    out = _import_core("sometimes")
    assert out.returncode != 0
    assert "ValueError" in out.stderr and "FASTPAMST_NB_CACHE" in out.stderr
    assert "'sometimes'" in out.stderr and "0, false, no, off" in out.stderr


@pytest.mark.parametrize("value, expected", [
    (None, True), ("", True), (" ON ", True), ("yes", True), ("TRUE", True),
    ("0", False), ("false", False), ("No", False), ("OFF", False),
])
def test_cache_spellings(value, expected):
    env = {} if value is None else {"FASTPAMST_NB_CACHE": value}
    assert core.cache_from_env(env) is expected


@pytest.mark.parametrize("value", ["2", "disable", "nope"])
def test_cache_unknown_spellings(value):
    with pytest.raises(ValueError, match="FASTPAMST_NB_CACHE"):
        core.cache_from_env({"FASTPAMST_NB_CACHE": value})


# stale kernels: numba checks a cached kernel against its own file only

def test_purge_removes_only_the_packages_kernels_when_the_sources_change(tmp_path):
    names = ["prim.prim_dense_private-154.py311.nbi", "prim.prim_dense_private-154.py311.1.nbc",
             "cutqueue.gq_update-300.py311.nbi", "prim.cpython-311.pyc", "other.f-1.py311.nbi"]
    for name in names:
        (tmp_path / name).write_text("x")
    assert core.purge_stale_kernels(str(tmp_path), "a" * 64, ["prim", "cutqueue"]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["prim.cpython-311.pyc", "other.f-1.py311.nbi", core.STAMP_NAME])
    # same sources: a kernel cached since then is kept
    (tmp_path / names[0]).write_text("x")
    assert core.purge_stale_kernels(str(tmp_path), "a" * 64, ["prim", "cutqueue"]) == 0
    assert (tmp_path / names[0]).exists()
    # any module changed: purged again
    assert core.purge_stale_kernels(str(tmp_path), "b" * 64, ["prim", "cutqueue"]) == 1
    assert not (tmp_path / names[0]).exists()
    assert (tmp_path / core.STAMP_NAME).read_text().strip() == "b" * 64


def test_fingerprint_covers_every_module(tmp_path):
    for name in ("prim.py", "cutqueue.py"):
        (tmp_path / name).write_text("x = 1\n")
    before = core.source_fingerprint(str(tmp_path))
    (tmp_path / "notes.txt").write_text("not a module")
    assert core.source_fingerprint(str(tmp_path)) == before
    (tmp_path / "cutqueue.py").write_text("x = 2\n")  # an edit of a module no driver lives in
    assert core.source_fingerprint(str(tmp_path)) != before


def test_import_stamps_the_cache_it_uses():
    if not core.CACHE:
        pytest.skip("the numba cache is off in this run")
    package_dir = os.path.dirname(core.__file__)
    stamp = os.path.join(core._numba_cache_dir(), core.STAMP_NAME)
    with open(stamp) as f:
        assert f.read().strip() == core.source_fingerprint(package_dir)


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"),
                    reason="without the JIT a jit-only kernel is the plain function")
def test_jit_only_kernels_refuse_a_python_call_but_run_from_njit():
    # numba would jump to the missing Python entry point and crash the interpreter
    from numba import njit

    from fastpamst_nb import cutqueue, sampler

    for kernel in (cutqueue.gq_top, cutqueue.gq_take, sampler.rnm_select, sampler.rnm_steps):
        assert isinstance(kernel, core.JitOnlyDispatcher), kernel
        with pytest.raises(TypeError, match=r"jit-only kernel: call it from an @njit function"):
            kernel(1, 2)

    @core.jit_only
    def twice(x):
        return 2 * x

    @njit
    def caller(x):
        return twice(x) + 1

    assert caller(20) == 41
    with pytest.raises(TypeError, match="twice is a jit-only kernel"):
        twice(20)


# the validation's threads (fastpamst_nb.threads)

def test_validation_threads_follow_numba_num_threads(monkeypatch):
    import numba

    from fastpamst_nb import threads

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert threads.thread_count() == 1
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 4096)  # capped by this process's CPUs
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert threads.thread_count() == cpus


def test_side_by_side_calls_return_in_order_and_raise_a_workers_error():
    from fastpamst_nb import threads

    assert threads.run_side_by_side([lambda k=k: k * k for k in range(5)]) == [0, 1, 4, 9, 16]

    def fail():
        raise ZeroDivisionError("in a worker")

    with pytest.raises(ZeroDivisionError, match="in a worker"):
        threads.run_side_by_side([lambda: 1, fail])
