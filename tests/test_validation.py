"""Input validation of the four public functions: every rule raises, naming the problem."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import naive
except ImportError:  # tests/ became a package, or --import-mode=importlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import naive

RHO, DELTA_W = 1.0, 0.1  # a valid budget and sensitivity for the private functions


def good(n=5, seed=0):
    W = np.triu(np.random.default_rng(seed).uniform(0.1, 1.0, size=(n, n)), 1)
    return W + W.T


# Each entry calls one public function with valid defaults; **kw overrides them.
ALGOS = {
    "exact_mst": lambda W, **kw: fp.exact_mst(W, **kw),
    "pamst": lambda W, **kw: fp.pamst(W, **{"rho": RHO, "sensitivity": DELTA_W, "rng": 0, **kw}),
    "post_processing": lambda W, **kw: fp.post_processing(
        W, **{"rho": RHO, "sensitivity": DELTA_W, "rng": 0, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, **{"rho": RHO, "sensitivity": DELTA_W, "rng": 0, **kw}),
}
ALL = list(ALGOS)
PRIVATE = ["pamst", "post_processing", "fast_pamst"]
WITH_START = ["exact_mst", "pamst", "fast_pamst"]
WITH_NOISE = ["pamst", "fast_pamst"]
PRIVATE_FUNCS = {"pamst": fp.pamst, "post_processing": fp.post_processing, "fast_pamst": fp.fast_pamst}


def run(algo, W, **kw):
    return ALGOS[algo](W, **kw)


# ---------------------------------------------------------------------------
# the weights argument
# ---------------------------------------------------------------------------

def _asym_structure():
    """Dense-symmetric values, asymmetric topology: (0, 1) an explicit zero, (1, 0) missing."""
    W = good(4)
    i, j = np.nonzero(~np.eye(4, dtype=bool))
    vals = W[i, j]
    vals[(i == 0) & (j == 1)] = 0.0
    keep = ~((i == 1) & (j == 0))
    return sp.csr_matrix((vals[keep], (i[keep], j[keep])), shape=(4, 4))


def _nonfinite_dense(value):
    W = good()
    W[1, 3] = W[3, 1] = value
    return W


def _nonfinite_sparse(value):
    A = sp.lil_matrix(good())
    A[1, 3] = A[3, 1] = value
    return A.tocsr()


def _asym_dense():
    W = good()
    W[0, 2] += 1e-9
    return W


def _asym_sparse_values():
    A = sp.lil_matrix(good())
    A[0, 2] = 7.0
    return A.tocsr()


def _disconnected_sparse():
    W = good(6)
    W[:3, 3:] = 0.0
    W[3:, :3] = 0.0
    return sp.csr_matrix(W)


BAD_VALUES = [
    pytest.param(np.ones(4), ValueError, r"2-D", id="1-D"),
    pytest.param(np.ones((2, 2, 2)), ValueError, r"2-D", id="3-D"),
    pytest.param(np.ones((3, 4)), ValueError, r"square", id="not-square"),
    pytest.param(sp.csr_matrix((3, 4)), ValueError, r"square", id="sparse-not-square"),
    pytest.param(np.ones((0, 0)), ValueError, r"empty.*n = 0", id="n=0"),
    pytest.param(sp.csr_matrix((0, 0)), ValueError, r"empty.*n = 0", id="sparse-n=0"),
    pytest.param(_nonfinite_dense(np.nan), ValueError, r"\[1, 3\].*not finite", id="nan-dense"),
    pytest.param(_nonfinite_dense(np.inf), ValueError, r"not finite", id="inf-dense"),
    pytest.param(_nonfinite_dense(-np.inf), ValueError, r"not finite", id="-inf-dense"),
    pytest.param(_nonfinite_sparse(np.nan), ValueError, r"not finite", id="nan-sparse"),
    pytest.param(_nonfinite_sparse(np.inf), ValueError, r"not finite", id="inf-sparse"),
    pytest.param(_asym_dense(), ValueError, r"not symmetric.*symmetrize", id="asym-dense"),
    pytest.param(_asym_sparse_values(), ValueError, r"not symmetric.*symmetrize", id="asym-sparse-values"),
    pytest.param(_asym_structure(), ValueError, r"not symmetric.*symmetrize", id="asym-sparse-structure"),
    pytest.param(_disconnected_sparse(), ValueError, r"disconnected.*2 components", id="disconnected"),
    pytest.param(sp.csr_matrix((3, 3)), ValueError, r"disconnected", id="sparse-no-edges"),
]


@pytest.mark.parametrize("algo", ALL)
@pytest.mark.parametrize("weights, exc, match", BAD_VALUES)
def test_bad_weights_raise_value_error(algo, weights, exc, match):
    with pytest.raises(exc, match=match):
        run(algo, weights)


def test_asym_structure_fixture_is_what_it_claims():
    # guards the test above: same dense values, but (0, 1) stored and (1, 0) not
    A = _asym_structure()
    np.testing.assert_array_equal(A.toarray(), A.toarray().T)
    coo = sp.coo_matrix(A)
    stored = set(zip(coo.row.tolist(), coo.col.tolist()))
    assert (0, 1) in stored and (1, 0) not in stored


BAD_TYPES = [
    pytest.param("abc", id="str"),
    pytest.param(None, id="None"),
    pytest.param(np.array([["a", "b"], ["b", "a"]]), id="str-array"),
    pytest.param(np.array([[0, "x"], ["x", 0]], dtype=object), id="object-array"),
    pytest.param(np.array([[0.0, 1.0], [1.0, 0.0]], dtype=object), id="object-array-of-floats"),
    pytest.param(good(3).astype(np.complex128), id="complex"),
    pytest.param(good(3) > 0.5, id="bool"),
    pytest.param(sp.csr_matrix(good(3).astype(np.complex128)), id="sparse-complex"),
    pytest.param(sp.csr_matrix(good(3) > 0), id="sparse-bool"),
    pytest.param([[0, 1], [1]], id="ragged"),
]


@pytest.mark.parametrize("algo", ALL)
@pytest.mark.parametrize("weights", BAD_TYPES)
def test_non_numeric_weights_raise_type_error(algo, weights):
    with pytest.raises(TypeError, match=r"weights"):
        run(algo, weights)


@pytest.mark.parametrize("algo", ALL)
def test_nested_lists_are_accepted(algo):
    W = good(4)
    np.testing.assert_array_equal(run(algo, W.tolist()).edges, run(algo, W).edges)


@pytest.mark.parametrize("algo", ALL)
@pytest.mark.parametrize("diag", [np.nan, np.inf, -1e300])
def test_diagonal_is_ignored(algo, diag):
    # the dense scan reads only off-diagonal entries and sparse drops the diagonal;
    # private algorithms with the same seed must draw the same noise too
    W = good(8)
    ref = run(algo, W)
    Wd = W.copy()
    np.fill_diagonal(Wd, diag)
    tree = run(algo, Wd)
    np.testing.assert_array_equal(tree.edges, ref.edges)
    assert tree.weight == ref.weight
    A = sp.lil_matrix(W)
    A.setdiag(diag)
    tree = run(algo, A.tocsr())
    ref_sparse = run(algo, sp.csr_matrix(W))
    np.testing.assert_array_equal(tree.edges, ref_sparse.edges)


# ---------------------------------------------------------------------------
# n = 1 and n = 2
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("algo", ALL)
@pytest.mark.parametrize("weights", [np.zeros((1, 1)), np.array([[np.nan]]), [[3]], sp.csr_matrix((1, 1))],
                         ids=["dense", "nan-diag", "list", "sparse"])
def test_single_vertex_has_no_edges(algo, weights):
    tree = run(algo, weights)
    assert tree.edges.shape == (0, 2)
    assert tree.edge_weights.shape == (0,)
    assert tree.weight == 0.0
    assert tree.n_vertices == 1
    assert len(tree) == 0


@pytest.mark.parametrize("algo", ALL)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("maximum", [False, True])
def test_two_vertices_give_the_one_edge(algo, sparse, maximum):
    W = np.array([[0.0, -2.5], [-2.5, 0.0]])
    tree = run(algo, sp.csr_matrix(W) if sparse else W, maximum=maximum)
    np.testing.assert_array_equal(tree.edges, [[0, 1]])
    assert tree.weight == -2.5
    if algo in WITH_START:
        tree = run(algo, W, start=1)
        np.testing.assert_array_equal(tree.edges, [[1, 0]])


# ---------------------------------------------------------------------------
# budget, sensitivity, start, noise, rng
# ---------------------------------------------------------------------------

BAD_POSITIVE = [0, 0.0, -1, -1.0, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("algo", PRIVATE)
@pytest.mark.parametrize("param", ["rho", "sensitivity"])
@pytest.mark.parametrize("value", BAD_POSITIVE)
def test_rho_and_sensitivity_must_be_finite_positive(algo, param, value):
    with pytest.raises(ValueError, match=rf"{param} must be a finite positive number"):
        run(algo, good(), **{param: value})


@pytest.mark.parametrize("algo", PRIVATE)
@pytest.mark.parametrize("param", ["rho", "sensitivity"])
@pytest.mark.parametrize("value", ["1", True, [1.0], 1j])
def test_rho_and_sensitivity_must_be_real_numbers(algo, param, value):
    with pytest.raises(TypeError, match=param):
        run(algo, good(), **{param: value})


@pytest.mark.parametrize("algo", PRIVATE)
def test_missing_sensitivity_is_a_type_error(algo):
    with pytest.raises(TypeError, match="sensitivity"):
        PRIVATE_FUNCS[algo](good(), rho=1.0, rng=0)
    with pytest.raises(TypeError, match="sensitivity"):
        PRIVATE_FUNCS[algo](good(), 1.0)


def test_discretization_must_be_finite_positive():
    for value in BAD_POSITIVE:
        with pytest.raises(ValueError, match="discretization"):
            run("fast_pamst", good(), discretization=value)


@pytest.mark.parametrize("algo", WITH_START)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("start", [-1, 5, 100])
def test_start_out_of_range(algo, sparse, start):
    W = good(5)
    with pytest.raises(ValueError, match=rf"start = {start} is out of range.*n = 5"):
        run(algo, sp.csr_matrix(W) if sparse else W, start=start)


@pytest.mark.parametrize("algo", WITH_START)
@pytest.mark.parametrize("start", [1.0, "1", True, None, np.float64(2.0)])
def test_start_must_be_an_int(algo, start):
    with pytest.raises(TypeError, match="start must be an int"):
        run(algo, good(), start=start)


@pytest.mark.parametrize("algo", WITH_START)
def test_numpy_int_start_is_accepted(algo):
    W = good(6)
    np.testing.assert_array_equal(run(algo, W, start=np.int32(3)).edges, run(algo, W, start=3).edges)
    assert run(algo, W, start=np.int64(3)).edges[0, 0] == 3


@pytest.mark.parametrize("algo", WITH_NOISE)
@pytest.mark.parametrize("noise", ["foo", "Exponential", "", None])
def test_unknown_noise(algo, noise):
    with pytest.raises(ValueError, match=r"noise must be 'exponential'.*'gumbel'"):
        run(algo, good(), noise=noise)


@pytest.mark.parametrize("algo", PRIVATE)
@pytest.mark.parametrize("rng", ["0", 1.5, np.random.RandomState(0), [0], True])
def test_rng_of_wrong_type(algo, rng):
    # SeedSequence and BitGenerator are accepted (SPEC 7): see test_inputs.py
    with pytest.raises(TypeError, match="rng must be None, an int seed >= 0, a numpy.random.SeedSequence, "
                                        "a numpy.random.BitGenerator or a numpy.random.Generator"):
        run(algo, good(), rng=rng)


@pytest.mark.parametrize("algo", PRIVATE)
def test_negative_seed(algo):
    with pytest.raises(ValueError, match="seed must be non-negative"):
        run(algo, good(), rng=-1)


# ---------------------------------------------------------------------------
# (epsilon, delta) budgets
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("algo", PRIVATE)
def test_rho_and_epsilon_together(algo):
    with pytest.raises(ValueError, match="either rho or .*epsilon and delta.*not both"):
        run(algo, good(), rho=1.0, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="not both"):
        run(algo, good(), rho=1.0, delta=1e-6)


@pytest.mark.parametrize("algo", PRIVATE)
def test_no_budget(algo):
    with pytest.raises(ValueError, match="privacy budget is required"):
        PRIVATE_FUNCS[algo](good(), sensitivity=0.1, rng=0)


@pytest.mark.parametrize("algo", PRIVATE)
def test_epsilon_without_delta_and_delta_without_epsilon(algo):
    with pytest.raises(ValueError, match="privacy budget is required"):
        run(algo, good(), rho=None, epsilon=1.0)
    with pytest.raises(ValueError, match="privacy budget is required"):
        run(algo, good(), rho=None, delta=1e-6)


@pytest.mark.parametrize("algo", PRIVATE)
@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-6, 1.5, math.nan, math.inf])
def test_delta_outside_unit_interval(algo, delta):
    with pytest.raises(ValueError, match="delta must lie strictly between 0 and 1"):
        run(algo, good(), rho=None, epsilon=1.0, delta=delta)


@pytest.mark.parametrize("algo", PRIVATE)
@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, math.inf])
def test_epsilon_must_be_finite_positive(algo, epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite positive number"):
        run(algo, good(), rho=None, epsilon=epsilon, delta=1e-6)


@pytest.mark.parametrize("algo", PRIVATE)
def test_epsilon_delta_converts_to_rho(algo):
    eps, delta = 2.0, 1e-6
    tree = run(algo, good(), rho=None, epsilon=eps, delta=delta)
    rho = tree.info["rho"]
    assert rho == fp.approx_dp_to_zcdp(eps, delta)
    # the default conversion (Canonne, Kamath & Steinke 2020) is tight and never overshoots
    assert fp.zcdp_to_approx_dp(rho, delta) <= eps
    assert fp.zcdp_to_approx_dp(rho, delta) == pytest.approx(eps, rel=1e-9)
    # and it allows more budget than Bun & Steinke's rho + 2 sqrt(rho ln(1/delta))
    L = math.log(1 / delta)
    assert rho > (math.sqrt(L + eps) - math.sqrt(L)) ** 2


# ---------------------------------------------------------------------------
# the tiled scan (dense_scan._scan_dense) against a plain reading of W
# ---------------------------------------------------------------------------

def _defects(W):
    """Every bad upper-triangle entry of W, by a plain double loop: {(i, j): 1 non-finite, 2 asymmetric}."""
    n = W.shape[0]
    bad = {}
    for i in range(n):
        for j in range(i + 1, n):
            w = float(W[i, j])
            if not math.isfinite(w):
                bad[(i, j)] = 1
            elif w != float(W[j, i]):
                bad[(i, j)] = 2
    return bad


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(6))
def test_tiled_scan_finds_a_planted_defect_and_the_range(seed, dtype, workers):
    # with 2 or 3 threads (forced: the default keeps a small matrix on one) the tile
    # rows after the first are split between threads; the first defect in tile order
    # must still be the one named
    from functools import partial

    from fastpamst_nb import dense_scan

    _scan_dense = partial(dense_scan._scan_dense, workers=workers)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200)) if workers == 1 else int(rng.integers(130, 400))
    W = np.triu(rng.normal(size=(n, n)) * 1e3, 1)
    W = (W + W.T).astype(dtype)
    W[0, n - 1] = W[n - 1, 0] = -0.0  # -0.0 == 0.0: symmetric
    upper = W[np.triu_indices(n, 1)].astype(np.float64)
    assert _scan_dense(W) == (0, 0, 0, upper.min(), upper.max())
    # plant one to five defects anywhere (either triangle): the scan must name the first
    for _ in range(int(rng.integers(1, 6))):
        i, j = (int(x) for x in rng.choice(n, size=2, replace=False))
        W[i, j] = rng.choice([np.nan, np.inf, -np.inf, W[i, j] * (1 + 1e-6) + 1e-30])
    status, i, j, _, _ = _scan_dense(W)
    bad = _defects(W)
    # the first in tile order (64 x 64 tiles row by row, each entry by entry)
    first = min(bad, key=lambda e: (e[0] // 64, e[1] // 64, e[0], e[1]))
    assert (status, i, j) == (bad[first], *first), (status, i, j, bad)
    lone = np.array(W, copy=True)
    for (a, b) in list(bad)[1:]:  # keep the first defect only: then it is the one named
        lone[a, b], lone[b, a] = 1.0, 1.0
    (a, b), kind = next(iter(bad.items()))
    assert _scan_dense(lone)[:3] == (kind, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("defect", ["nan", "inf both", "-inf both", "asymmetric", "nan both"])
def test_blocked_scan_sees_a_defect_at_every_row_of_a_block(defect, dtype):
    # off-diagonal 64 x 64 tiles are compared 8 rows at a time with no branch per
    # entry: a defect at any of the 8 rows (and in either triangle) must surface
    from fastpamst_nb.dense_scan import _scan_dense

    n = 200
    rng = np.random.default_rng(11)
    W = np.triu(rng.random((n, n)), 1)
    W = (W + W.T).astype(dtype)
    for i, j in [(64 + d, 150 + d) for d in range(8)] + [(3, 100), (191, 70)]:
        B = W.copy()
        a, b = min(i, j), max(i, j)
        if defect == "asymmetric":
            B[i, j] = B[i, j] * 2 + 1
            want = 2
        else:
            value = {"nan": np.nan, "nan both": np.nan, "inf both": np.inf, "-inf both": -np.inf}[defect]
            B[i, j] = value
            if defect.endswith("both"):
                B[j, i] = value
            want = 1 if (defect.endswith("both") or i < j) else 2
        assert _scan_dense(B)[:3] == (want, a, b), (defect, i, j)


def _random_csr(rng, n, density, components=1):
    """A symmetric canonical CSR matrix: random edges inside each of ``components``
    blocks of vertices, each block held together by a path."""
    rows, cols = [], []
    blocks = np.array_split(rng.permutation(n), components)
    for blk in blocks:
        rows += list(blk[:-1])
        cols += list(blk[1:])
        k = int(density * len(blk) ** 2)
        a, b = rng.choice(blk, size=k), rng.choice(blk, size=k)
        rows += list(a[a != b])
        cols += list(b[a != b])
    upper = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    upper.data = rng.random(upper.nnz) + 0.5
    A = (upper + upper.T).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    return A


def _perturbed_csr(rng, A, defect):
    """A canonical CSR copy of the symmetric ``A`` with one ``defect``."""
    n = A.shape[0]
    C = A.tocoo()
    rows, cols, vals = C.row.tolist(), C.col.tolist(), C.data.tolist()
    k = int(rng.integers(len(vals)))
    if defect == "value":  # one entry differs from its mirror
        vals[k] += 1.0
    elif defect == "missing mirror":
        del rows[k], cols[k], vals[k]
    elif defect == "extra entry":  # an entry whose mirror is not stored
        i, j = (int(x) for x in rng.choice(n, size=2, replace=False))
        if A[i, j] != 0:
            return _perturbed_csr(rng, A, "value")
        rows, cols, vals = rows + [i], cols + [j], vals + [1.0]
    elif defect == "diagonal":  # its own mirror: still symmetric
        i = int(rng.integers(n))
        rows, cols, vals = rows + [i], cols + [i], vals + [2.0]
    elif defect == "signed zero":  # -0.0 == 0.0, as np.array_equal compares them
        vals[k] = 0.0
        mirror = [q for q in range(len(vals)) if (rows[q], cols[q]) == (cols[k], rows[k])][0]
        vals[mirror] = -0.0
    B = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    B.sum_duplicates()
    return B


@pytest.mark.parametrize("defect", ["none", "value", "missing mirror", "extra entry",
                                    "diagonal", "signed zero"])
def test_mirror_scan_matches_the_naive_symmetry_check(defect):
    from fastpamst_nb.csr_checks import _mirrors_match

    rng = np.random.default_rng(sum(map(ord, defect)))
    verdicts = set()
    for _ in range(40):
        n = int(rng.integers(2, 30))
        A = _random_csr(rng, n, 0.15)
        B = A if defect == "none" else _perturbed_csr(rng, A, defect)
        assert B.has_canonical_format
        indptr, indices = B.indptr.astype(np.int64), B.indices.astype(np.int64)
        want = naive.csr_is_symmetric(indptr, indices, B.data)
        assert _mirrors_match(indptr, indices, B.data) == want, (n, defect)
        verdicts.add(want)
    # the defects that break symmetry always break it; the others never do
    assert verdicts == ({True} if defect in ("none", "diagonal", "signed zero") else {False})
    # no entries at all: symmetric
    empty = np.zeros(4, dtype=np.int64)
    assert _mirrors_match(empty, empty[:0], np.zeros(0))


def _graph_fields(g):
    return (g.n, g.m, g.indptr.tolist(), g.indices.tolist(), g.data.tolist(), g.wmin, g.wmax)


@pytest.mark.parametrize("side_by_side", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_canonical_csr_fast_path_matches_the_general_path(seed, side_by_side, monkeypatch):
    # side_by_side: the symmetry and connectivity scans run on two threads (forced here;
    # by default only from 2**17 stored entries)
    from fastpamst_nb import csr_checks, threads
    from fastpamst_nb.csr_checks import _n_components
    from fastpamst_nb.graph import as_graph
    from scipy.sparse.csgraph import connected_components

    if side_by_side:
        monkeypatch.setattr(csr_checks, "_THREADED_MIN_STORED", 0)
        monkeypatch.setattr(threads, "thread_count", lambda: 2)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    A = _random_csr(rng, n, 0.1)
    assert A.has_canonical_format
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    # the fast path (canonical CSR) and the general one (COO) build the same graph
    assert _graph_fields(as_graph(A)) == _graph_fields(as_graph(A.tocoo()))
    assert all(np.array_equal(x, y) for x, y in zip(before, (A.data, A.indices, A.indptr)))
    # a stored diagonal sends it to the general path, which drops it
    D = (A + sp.diags(rng.random(n) + 1.0)).tocsr()
    assert D.has_canonical_format
    assert _graph_fields(as_graph(D)) == _graph_fields(as_graph(A))
    # the same errors, named at the same entry
    B = A.copy()
    k = int(rng.integers(B.nnz))
    i, j = int(np.searchsorted(B.indptr, k, side="right") - 1), int(B.indices[k])
    B.data[k] = np.inf
    for M in (B, B.tocoo()):
        with pytest.raises(ValueError, match=rf"weights\[{i}, {j}\] is not finite"):
            as_graph(M, name="weights")
    B.data[k] = 7.0  # its mirror still holds the old weight
    for M in (B, B.tocoo()):
        with pytest.raises(ValueError, match="not symmetric"):
            as_graph(M)
    # components: the depth-first search counts what scipy counts
    c = int(rng.integers(2, 5))
    C = _random_csr(rng, max(n, 2 * c), 0.1, components=c)
    indptr, indices = C.indptr.astype(np.int64), C.indices.astype(np.int64)
    assert _n_components(indptr, indices) == connected_components(C, directed=False)[0] == c
    for M in (C, C.tocoo()):
        with pytest.raises(ValueError, match=rf"disconnected \({c} components\)"):
            as_graph(M)
