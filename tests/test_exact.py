"""fp.exact_mst against scipy, networkx and the naive Prim, on every input form."""

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree

import fastpamst_nb as fp
from fastpamst_nb.graph import as_graph
from fastpamst_nb import graph as graph_module

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import naive
except ImportError:  # tests/ became a package, or --import-mode=importlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import naive

try:
    import networkx as nx
except ImportError:  # pragma: no cover - networkx is a test extra
    nx = None

requires_nx = pytest.mark.skipif(nx is None, reason="needs networkx")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def random_symmetric(rng, n, low=0.1, high=1.0):
    """Complete graph with distinct (a.s.) positive weights and a zero diagonal."""
    W = np.triu(rng.uniform(low, high, size=(n, n)), 1)
    return W + W.T


def integer_symmetric(rng, n, low, high):
    """Symmetric integer weights in [low, high) as float64: many ties."""
    W = np.triu(rng.integers(low, high, size=(n, n)), 1).astype(np.float64)
    return W + W.T


def dyadic_symmetric(rng, n):
    """Distinct weights k / 2**20, exact in float32, so both precisions see the same graph."""
    m = n * (n - 1) // 2
    vals = (rng.permutation(2 ** 20)[:m] + 1) / 2.0 ** 20
    W = np.zeros((n, n))
    W[np.triu_indices(n, 1)] = vals
    return W + W.T


def random_connected_sparse(rng, n, p, low=0.1, high=1.0):
    """Symmetric scipy.sparse CSR: a random spanning path plus Erdos-Renyi(p) edges."""
    mask = np.triu(rng.random((n, n)) < p, 1)
    order = rng.permutation(n)
    a, b = order[:-1], order[1:]
    mask[np.minimum(a, b), np.maximum(a, b)] = True
    i, j = np.nonzero(mask)
    w = rng.uniform(low, high, size=i.size)
    return sp.csr_matrix((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(n, n))


def nx_graph(weights):
    """networkx graph of a dense complete graph or of a sparse matrix's stored entries."""
    g = nx.Graph()
    if sp.issparse(weights):
        coo = sp.coo_matrix(weights)
        n = weights.shape[0]
        g.add_nodes_from(range(n))
        for a, b, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
            if a != b:
                g.add_edge(a, b, weight=w)
        return g
    W = np.asarray(weights, dtype=np.float64)
    n = W.shape[0]
    g.add_nodes_from(range(n))
    for a in range(n):
        for b in range(a + 1, n):
            g.add_edge(a, b, weight=W[a, b])
    return g


def nx_weight(tree):
    return sum(d["weight"] for _, _, d in tree.edges(data=True))


def assert_prim_tree(edges, n, start):
    """n-1 rows (tree vertex, new vertex) in selection order that span all n vertices."""
    assert edges.shape == (n - 1, 2)
    assert edges.dtype == np.int64
    seen = {start}
    for k, (a, b) in enumerate(edges.tolist()):
        assert a in seen, f"row {k}: {a} is not yet in the tree {sorted(seen)}"
        assert b not in seen, f"row {k}: {b} is already in the tree"
        seen.add(b)
    assert seen == set(range(n))


def edge_set(edges):
    return {(min(a, b), max(a, b)) for a, b in edges.tolist()}


# ---------------------------------------------------------------------------
# weight of the tree vs scipy / networkx / naive
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 50, 200])
def test_dense_weight_matches_scipy_and_naive(n):
    W = random_symmetric(np.random.default_rng(n), n)  # positive: scipy reads 0 as "no edge"
    tree = fp.exact_mst(W)
    assert_prim_tree(tree.edges, n, 0)
    assert tree.weight == pytest.approx(minimum_spanning_tree(W).sum(), rel=1e-12, abs=1e-12)
    # distinct weights: the MST is unique, so the edge sets agree, not only the weights
    ref_edges, ref_weight = naive.prim_mst(W)
    assert edge_set(tree.edges) == edge_set(ref_edges)
    assert tree.weight == pytest.approx(ref_weight, rel=1e-12, abs=1e-12)


@requires_nx
@pytest.mark.parametrize("n", [2, 3, 50])
@pytest.mark.parametrize("low, high", [(0.1, 1.0), (-1.0, 1.0), (-5.0, -1.0)])
def test_dense_weight_matches_networkx_including_negative(n, low, high):
    W = random_symmetric(np.random.default_rng(100 + n), n, low, high)
    tree = fp.exact_mst(W)
    assert_prim_tree(tree.edges, n, 0)
    ref = nx_weight(nx.minimum_spanning_tree(nx_graph(W)))
    assert tree.weight == pytest.approx(ref, rel=1e-12, abs=1e-12)


@requires_nx
@pytest.mark.parametrize("seed", range(5))
def test_ties_integer_weights(seed):
    # weights in {1, 2, 3}: many equal-weight MSTs, only the weight is determined
    n = 30
    W = integer_symmetric(np.random.default_rng(seed), n, 1, 4)
    tree = fp.exact_mst(W)
    assert_prim_tree(tree.edges, n, 0)
    assert tree.weight == nx_weight(nx.minimum_spanning_tree(nx_graph(W)))
    assert tree.weight == minimum_spanning_tree(W).sum()


@requires_nx
@pytest.mark.parametrize("fmt", ["csr", "coo", "csr_array", "csc"])
@pytest.mark.parametrize("n, p", [(2, 1.0), (10, 0.3), (100, 0.05)])
def test_sparse_formats_match_scipy_and_networkx(fmt, n, p):
    A = random_connected_sparse(np.random.default_rng(n), n, p)
    A = {"csr": sp.csr_matrix, "coo": sp.coo_matrix, "csr_array": sp.csr_array,
         "csc": sp.csc_matrix}[fmt](A)
    tree = fp.exact_mst(A)
    assert_prim_tree(tree.edges, n, 0)
    assert tree.weight == pytest.approx(minimum_spanning_tree(A).sum(), rel=1e-12)
    assert tree.weight == pytest.approx(nx_weight(nx.minimum_spanning_tree(nx_graph(A))), rel=1e-12)
    # every tree edge must be a stored entry, with its stored weight
    D = A.toarray()
    for (a, b), w in zip(tree.edges.tolist(), tree.edge_weights.tolist()):
        assert A.tocsr()[a, b] != 0
        assert w == D[a, b]


def test_sparse_complete_topology_equals_dense():
    W = random_symmetric(np.random.default_rng(7), 40)
    assert edge_set(fp.exact_mst(sp.csr_matrix(W)).edges) == edge_set(fp.exact_mst(W).edges)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.coo_matrix, sp.csr_array])
def test_sparse_explicit_zero_is_an_edge(fmt):
    # Vertex 3 is reachable only through the explicit zero (2, 3); the zero edge
    # (0, 1) is also the cheapest.  Dropping zeros would disconnect the graph.
    rows = [0, 1, 1, 2, 0, 2, 2, 3]
    cols = [1, 0, 2, 1, 2, 0, 3, 2]
    vals = [0.0, 0.0, 1.0, 1.0, 5.0, 5.0, 0.0, 0.0]
    A = fmt(sp.csr_matrix((vals, (rows, cols)), shape=(4, 4)))
    assert A.nnz == 8  # the zeros really are stored
    tree = fp.exact_mst(A)
    assert_prim_tree(tree.edges, 4, 0)
    assert edge_set(tree.edges) == {(0, 1), (1, 2), (2, 3)}
    assert tree.weight == 1.0


def test_sparse_negative_weights_and_diagonal_ignored():
    A = random_connected_sparse(np.random.default_rng(3), 30, 0.2, low=-2.0, high=1.0).tolil()
    A.setdiag(-100.0)  # a self-loop is never an edge, however cheap
    A = A.tocsr()
    D = A.toarray()
    np.fill_diagonal(D, 0.0)
    tree = fp.exact_mst(A)
    _, ref = naive.prim_mst(D, adjacency=(A.toarray() != 0))
    assert tree.weight == pytest.approx(ref, rel=1e-12)


# ---------------------------------------------------------------------------
# maximum, start, structure
# ---------------------------------------------------------------------------

@requires_nx
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [2, 3, 40])
def test_maximum_matches_networkx_and_mirrors_minimum(sparse, n):
    rng = np.random.default_rng(200 + n)
    W = random_connected_sparse(rng, n, 0.3) if sparse else random_symmetric(rng, n, -1.0, 1.0)
    tree = fp.exact_mst(W, maximum=True)
    assert_prim_tree(tree.edges, n, 0)
    assert tree.info["maximum"] is True
    ref = nx_weight(nx.maximum_spanning_tree(nx_graph(W)))
    assert tree.weight == pytest.approx(ref, rel=1e-12)
    # a maximum tree of W is a minimum tree of -W
    mirror = fp.exact_mst(-W)
    assert edge_set(tree.edges) == edge_set(mirror.edges)
    assert tree.weight == pytest.approx(-mirror.weight, rel=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("maximum", [False, True])
def test_every_start_gives_the_same_tree(sparse, maximum):
    rng = np.random.default_rng(11)
    n = 25
    W = random_connected_sparse(rng, n, 0.25) if sparse else random_symmetric(rng, n)
    ref = fp.exact_mst(W, maximum=maximum)
    for start in range(n):
        tree = fp.exact_mst(W, maximum=maximum, start=start)
        assert_prim_tree(tree.edges, n, start)
        # distinct weights: unique optimum, so the same edge set from every start
        assert edge_set(tree.edges) == edge_set(ref.edges)
        assert tree.weight == pytest.approx(ref.weight, rel=1e-12)


@pytest.mark.parametrize("start", [0, 3, 6])
def test_every_start_same_weight_with_ties(start):
    n = 7
    W = integer_symmetric(np.random.default_rng(5), n, 0, 3)
    tree = fp.exact_mst(W, start=start)
    assert_prim_tree(tree.edges, n, start)
    assert tree.weight == naive.prim_mst(W)[1]


def test_prim_order_matches_naive():
    # distinct weights: Prim's selection order is determined, so compare row by row
    W = random_symmetric(np.random.default_rng(9), 30)
    for start in (0, 17):
        ref, _ = naive.prim_mst(W, start=start)
        np.testing.assert_array_equal(fp.exact_mst(W, start=start).edges, ref)
        A = sp.csr_matrix(W)
        np.testing.assert_array_equal(fp.exact_mst(A, start=start).edges, ref)


@pytest.mark.parametrize("seed", range(4))
def test_dense_prim_breaks_ties_like_naive(seed):
    # weights in {0, 1, 2}: the dense kernel keeps its candidates in vertex order, so
    # ties go to the smallest new vertex and the earliest tree end, as in naive.prim_mst
    rng = np.random.default_rng(seed)
    n = 40
    W = integer_symmetric(rng, n, 0, 3)
    for start in (0, n - 1, int(rng.integers(n))):
        np.testing.assert_array_equal(fp.exact_mst(W, start=start).edges,
                                      naive.prim_mst(W, start=start)[0])
        np.testing.assert_array_equal(fp.exact_mst(W, start=start, maximum=True).edges,
                                      naive.prim_mst(-W, start=start)[0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_prim_kernel_with_infinite_weights(dtype):
    # post_processing's noisy weights can overflow to +-inf: a vertex whose every edge
    # is +inf (score -inf) must still join, by the same rule as naive.prim_mst
    from fastpamst_nb.prim import prim_dense_exact

    n = 25
    W = integer_symmetric(np.random.default_rng(3), n, 0, 4)
    W[W == 3] = np.inf
    W[0, 5] = W[5, 0] = -np.inf
    W[7, :] = W[:, 7] = np.inf
    W = W.astype(dtype)
    for start in (0, 7, 24):
        with np.errstate(invalid="ignore"):  # the naive total weight is inf - inf
            ref = naive.prim_mst(W.astype(np.float64), start=start)[0]
        np.testing.assert_array_equal(prim_dense_exact(W, start, -1.0), ref)


# ---------------------------------------------------------------------------
# input dtypes and memory layouts: same tree, input untouched, no copy
# ---------------------------------------------------------------------------

def _layouts(W64, tmp_path):
    """(name, array, shares_memory_expected) for every dense input form we promise to read in place."""
    W32 = W64.astype(np.float32)
    ro = W64.copy()
    ro.flags.writeable = False
    mm = np.memmap(tmp_path / "w.dat", dtype=np.float64, mode="w+", shape=W64.shape)
    mm[:] = W64
    mm.flush()
    mm_ro = np.memmap(tmp_path / "w.dat", dtype=np.float64, mode="r", shape=W64.shape)
    mm32 = np.memmap(tmp_path / "w32.dat", dtype=np.float32, mode="w+", shape=W64.shape, order="F")
    mm32[:] = W32
    return [
        ("float64", W64.copy(), True),
        ("float32", W32, True),
        ("float64_F", np.asfortranarray(W64), True),
        ("float32_F", np.asfortranarray(W32), True),
        ("readonly", ro, True),
        ("memmap", mm, True),
        ("memmap_readonly", mm_ro, True),
        ("memmap_float32_F", mm32, True),
        ("strided", np.ascontiguousarray(np.repeat(np.repeat(W64, 2, 0), 2, 1))[::2, ::2], False),
        ("int64", (W64 * 2 ** 20).astype(np.int64), False),
    ]


def test_input_layouts_same_tree_unmodified_and_not_copied(tmp_path, monkeypatch):
    # small float32 matrices are widened to float64 (graph.kernel_view); here none is,
    # so that float32 is seen read in place as large ones are
    monkeypatch.setattr(graph_module, "_WIDEN_FLOAT32_MAX_ENTRIES", 0)
    W = dyadic_symmetric(np.random.default_rng(0), 60)
    ref = fp.exact_mst(W)
    for name, X, no_copy in _layouts(W, tmp_path):
        before = np.array(X, copy=True)
        tree = fp.exact_mst(X)
        np.testing.assert_array_equal(tree.edges, ref.edges, err_msg=name)
        np.testing.assert_array_equal(np.asarray(X), before, err_msg=f"{name} was modified")
        if name != "int64":
            assert tree.weight == pytest.approx(ref.weight, rel=1e-12), name
        if no_copy:
            assert np.shares_memory(as_graph(X).W, X), f"{name} was copied"


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
def test_integer_dtypes(dtype):
    rng = np.random.default_rng(1)
    n = 20
    W = np.triu(rng.integers(0, 100, size=(n, n)), 1)
    W = (W + W.T).astype(dtype)
    before = W.copy()
    tree = fp.exact_mst(W)
    assert_prim_tree(tree.edges, n, 0)
    assert tree.weight == naive.prim_mst(W.astype(np.float64))[1]
    assert tree.edge_weights.dtype == np.float64
    np.testing.assert_array_equal(W, before)


def test_integer_sparse_input():
    A = random_connected_sparse(np.random.default_rng(4), 15, 0.3)
    A.data = np.round(A.data * 10).astype(np.int32)
    tree = fp.exact_mst(A)
    assert tree.weight == pytest.approx(minimum_spanning_tree(A.astype(np.float64)).sum())


def test_sparse_input_not_modified():
    A = random_connected_sparse(np.random.default_rng(8), 30, 0.2).tolil()
    A.setdiag(1.0)
    A = A.tocsr()
    before = A.copy()
    fp.exact_mst(A)
    fp.exact_mst(A, maximum=True)
    assert (A != before).nnz == 0
    np.testing.assert_array_equal(A.indptr, before.indptr)
    np.testing.assert_array_equal(A.indices, before.indices)
    np.testing.assert_array_equal(A.data, before.data)


# ---------------------------------------------------------------------------
# the exact Prim beside the validation (as_graph(alongside=))
# ---------------------------------------------------------------------------

@pytest.fixture
def overlapped(monkeypatch):
    """Two threads and no size threshold: exact_mst runs its Prim beside the validation
    even on these small matrices. Records every W the Prim was handed."""
    from fastpamst_nb import api, dense_scan, threads

    monkeypatch.setattr(threads, "thread_count", lambda: 2)
    monkeypatch.setattr(dense_scan, "_THREADED_MIN_ENTRIES", 0)
    seen = []
    real = api.prim_dense_exact

    def recording(W, start, sgn):
        seen.append(W)
        return real(W, start, sgn)

    monkeypatch.setattr(api, "prim_dense_exact", recording)
    return seen


@pytest.mark.parametrize("seed", range(3))
def test_exact_prim_beside_the_validation_gives_the_naive_tree(seed, overlapped):
    rng = np.random.default_rng(seed)
    n = 70  # two tile rows
    for W in (random_symmetric(rng, n), integer_symmetric(rng, n, 0, 3)):
        for start, maximum in ((0, False), (n - 1, True), (int(rng.integers(n)), False)):
            tree = fp.exact_mst(W, start=start, maximum=maximum)
            ref, _ = naive.prim_mst(-W if maximum else W, start=start)
            np.testing.assert_array_equal(tree.edges, ref)
            assert fp.excess_weight(W, tree) == pytest.approx(0.0, abs=1e-12)
    # it ran once per exact_mst and excess_weight, on the array the graph keeps
    assert len(overlapped) == 12 and all(w.shape == (n, n) for w in overlapped)
    F = np.asfortranarray(random_symmetric(rng, n))  # read through its C-ordered transpose
    np.testing.assert_array_equal(fp.exact_mst(F).edges, naive.prim_mst(F)[0])
    assert overlapped[-1].flags.c_contiguous


@pytest.mark.parametrize("defect", ["nan", "inf", "asymmetric"])
def test_exact_prim_beside_a_failing_validation_raises_the_validation_error(defect, overlapped):
    # the Prim runs before the matrix is known valid: it must survive any values, and
    # the error must be the validation's, raised after the Prim has returned
    W = random_symmetric(np.random.default_rng(4), 90)
    W[80, 3] = {"nan": np.nan, "inf": np.inf, "asymmetric": 7.0}[defect]
    if defect != "asymmetric":
        W[3, 80] = W[80, 3]
    match = r"not symmetric" if defect == "asymmetric" else r"\[3, 80\] is not finite"
    with pytest.raises(ValueError, match=match):
        fp.exact_mst(W)
    assert len(overlapped) == 1


def test_no_prim_beside_the_validation_on_one_thread(monkeypatch):
    from fastpamst_nb import dense_scan, threads

    monkeypatch.setattr(threads, "thread_count", lambda: 1)
    monkeypatch.setattr(dense_scan, "_THREADED_MIN_ENTRIES", 0)
    called = []
    as_graph(random_symmetric(np.random.default_rng(0), 80), alongside=called.append)
    assert called == []
    monkeypatch.setattr(threads, "thread_count", lambda: 2)
    W = random_symmetric(np.random.default_rng(0), 80)
    g = as_graph(W, alongside=called.append)
    assert len(called) == 1 and called[0] is g.W
    # a topology, one triangle, a sparse matrix: no dense matrix read whole, no call
    as_graph(W, symmetric="upper", alongside=called.append)
    as_graph(sp.csr_matrix(W), alongside=called.append)
    as_graph(W, topology=np.ones((80, 80), dtype=bool), alongside=called.append)
    assert len(called) == 1


def test_the_scan_takes_the_thread_of_a_call_that_returned(monkeypatch):
    # once the call beside the scan has returned (``freed``), the scan's later chunks
    # are split over its thread too; the defect reported is still the first in tile
    # order, and the range is the one-thread scan's
    from fastpamst_nb import dense_scan, threads
    from fastpamst_nb.window import NO_WINDOW

    monkeypatch.setattr(dense_scan, "_FIRST_SCAN_ENTRIES", 1)  # a chunk a tile row at first
    # chunks grow while they run faster than a quarter of their target in seconds: an
    # infinite target makes them 1, 2, 4, ... whatever the clock (under
    # NUMBA_DISABLE_JIT, or on a loaded machine, a tile row can take longer than that)
    chunked = dense_scan.run_in_chunks
    monkeypatch.setattr(dense_scan, "run_in_chunks",
                        lambda advance, n_steps, **kw: chunked(advance, n_steps, target=float("inf"), **kw))
    parts = []
    real = threads.run_side_by_side

    def recording(calls):
        parts.append(len(calls))
        return real(calls)

    monkeypatch.setattr(threads, "run_side_by_side", recording)
    W = random_symmetric(np.random.default_rng(5), 600)  # ten tile rows: chunks of 1, 2, 4, 2
    ref = dense_scan._scan_dense(W, NO_WINDOW, 1)
    assert set(parts) == {1}
    parts.clear()
    assert dense_scan._scan_dense(W, NO_WINDOW, 1, freed=[1]) == ref
    assert 2 in parts and max(parts) == 2
    # and beside a call (which frees its thread whenever it returns): the same answer
    assert dense_scan._scan_dense(W, NO_WINDOW, 2, alongside=lambda W: None) == ref
    for a, b in ((560, 400), (330, 590), (580, 200)):  # defects in tile rows 6, 5 and 3
        W[a, b] = 9.0
    ref = dense_scan._scan_dense(W, NO_WINDOW, 1)
    assert ref[:3] == (2, 200, 580)
    assert dense_scan._scan_dense(W, NO_WINDOW, 1, freed=[1]) == ref
    assert dense_scan._scan_dense(W, NO_WINDOW, 2, alongside=lambda W: None) == ref
