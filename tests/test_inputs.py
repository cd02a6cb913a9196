"""Inputs people already have (issue 11): masked arrays, pdist vectors, networkx graphs,
SPEC 7 seeds, trees of another graph, inputs too large to convert, and the API docs."""

import doctest
import inspect
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import pdist, squareform

import fastpamst_nb as fp
from fastpamst_nb import api, core
from fastpamst_nb.graph import as_graph

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import networkx as nx
except ImportError:  # pragma: no cover - networkx is a test extra
    nx = None

requires_nx = pytest.mark.skipif(nx is None, reason="needs networkx")

ALGOS = {
    "exact_mst": lambda W, **kw: fp.exact_mst(W, **kw),
    "pamst": lambda W, **kw: fp.pamst(W, **{"rho": 1.0, "sensitivity": 0.1, "rng": 3, **kw}),
    "post_processing": lambda W, **kw: fp.post_processing(
        W, **{"rho": 1.0, "sensitivity": 0.1, "rng": 3, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(
        W, **{"rho": 1.0, "sensitivity": 0.1, "rng": 3, "noise": "exponential", **kw}),
    "fast_pamst_gumbel": lambda W, **kw: fp.fast_pamst(
        W, **{"rho": 1.0, "sensitivity": 0.1, "rng": 3, "noise": "gumbel", **kw}),
}
PRIVATE = ["pamst", "post_processing", "fast_pamst", "fast_pamst_gumbel"]


def points(n=25, seed=0):
    return np.random.default_rng(seed).random((n, 3))


def random_symmetric(n, seed=0):
    W = np.triu(np.random.default_rng(seed).uniform(0.1, 1.0, size=(n, n)), 1)
    return W + W.T


# ---------------------------------------------------------------------------
# 1. masked arrays are refused, with the way to say "missing edge"
# ---------------------------------------------------------------------------

def _masked(n=6):
    W = random_symmetric(n)
    mask = np.zeros((n, n), dtype=bool)
    mask[0, 3] = mask[3, 0] = True  # "no edge between 0 and 3"
    return np.ma.masked_array(W, mask=mask)


@pytest.mark.parametrize("algo", list(ALGOS))
def test_masked_array_is_refused_with_the_fix(algo):
    M = _masked()
    before = M.data.copy(), M.mask.copy()
    with pytest.raises(TypeError, match="masked array") as info:
        ALGOS[algo](M)
    msg = str(info.value)
    assert "topology=~weights.mask" in msg and "weights.filled(0)" in msg and "scipy.sparse" in msg
    np.testing.assert_array_equal(M.data, before[0])
    np.testing.assert_array_equal(M.mask, before[1])


def test_masked_array_without_masked_entries_is_refused_too():
    with pytest.raises(TypeError, match="masked array"):
        fp.exact_mst(np.ma.masked_array(random_symmetric(4)))


def test_masked_topology_is_refused():
    W = random_symmetric(5)
    with pytest.raises(TypeError, match="topology is a numpy masked array"):
        fp.exact_mst(W, topology=np.ma.masked_array(np.ones((5, 5), dtype=bool)))


def test_the_suggested_fix_leaves_the_masked_edges_out():
    M = _masked()
    M.data[0, 3] = M.data[3, 0] = -100.0  # the cheapest edge, but it does not exist
    tree = fp.exact_mst(M.filled(0), topology=~M.mask)
    assert {0, 3} not in [set(e) for e in tree.edges.tolist()]
    assert len(tree.edges) == 5


# ---------------------------------------------------------------------------
# 2. condensed distance vectors (scipy.spatial.distance.pdist)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_pdist_vector_is_its_squareform(algo, dtype):
    v = pdist(points()) * (1000 if dtype == np.int64 else 1)
    v = v.astype(dtype)
    before = v.copy()
    tree = ALGOS[algo](v)
    ref = ALGOS[algo](squareform(v))
    np.testing.assert_array_equal(tree.edges, ref.edges)
    assert tree.n_vertices == 25 and tree.weight == ref.weight
    np.testing.assert_array_equal(v, before)


def test_pdist_vector_with_a_topology_and_in_excess_weight():
    v = pdist(points(12))
    mask = np.zeros((12, 12), dtype=bool)
    for a in range(12):
        for b in (a + 1, a + 3):
            if b < 12:
                mask[a, b] = mask[b, a] = True
    ref = fp.exact_mst(squareform(v), topology=mask)
    tree = fp.exact_mst(v, topology=mask)
    np.testing.assert_array_equal(tree.edges, ref.edges)
    assert fp.excess_weight(v, tree, topology=mask) == 0.0


def test_pdist_of_two_points_is_one_edge():
    tree = fp.exact_mst(pdist(np.array([[0.0], [2.5]])))
    np.testing.assert_array_equal(tree.edges, [[0, 1]])
    assert tree.weight == 2.5


@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("length", [0, 2, 4, 5, 7, 44])
def test_wrong_length_vector_names_squareform(algo, length):
    with pytest.raises(ValueError, match=rf"1-D of length {length}.*squareform"):
        ALGOS[algo](np.ones(length))


def test_nonfinite_pdist_entry_is_named_by_its_matrix_indices():
    v = pdist(points(5))
    v[0] = np.nan  # the distance between points 0 and 1
    with pytest.raises(ValueError, match=r"weights\[0, 1\] is not finite"):
        fp.exact_mst(v)


def test_condensed_vector_too_large_is_refused_before_squareform(monkeypatch):
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 2**20)
    n = 5000  # squareform would allocate 8 n^2 = 200 MB
    v = np.broadcast_to(np.float64(1.0), (n * (n - 1) // 2,))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="memory") as info:
            fp.exact_mst(v)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "squareform" in str(info.value) and f"({n}, {n})" in str(info.value)
    assert peak < 16 * 2**20


# ---------------------------------------------------------------------------
# 3. networkx graphs
# ---------------------------------------------------------------------------

def zero_edge_network(n=10):
    """A weighted networkx graph whose minimum spanning tree must use the weight-0 edge (2, 5).

    Returns the graph, its dense weights and its edge mask.
    """
    rng = np.random.default_rng(1)
    W = random_symmetric(n, seed=2)
    mask = np.triu(rng.random((n, n)) < 0.5, 1)
    for a in range(n - 1):
        mask[a, a + 1] = True
    mask[2, 5] = True
    mask = mask | mask.T
    W[2, :] += 5.0  # every other edge at vertex 2 is expensive ...
    W[:, 2] += 5.0
    W[2, 5] = W[5, 2] = 0.0  # ... so vertex 2 joins through the zero edge
    G = nx.Graph()
    G.add_nodes_from(rng.permutation(n).tolist())  # node order is not the label order
    for a, b in zip(*np.nonzero(np.triu(mask, 1))):
        G.add_edge(int(a), int(b), weight=float(W[a, b]))
    return G, W * mask, mask


@requires_nx
@pytest.mark.parametrize("algo", list(ALGOS))
def test_networkx_graph_keeps_its_zero_weight_edge(algo):
    G, W, mask = zero_edge_network()
    edges_before = sorted(G.edges(data=True))
    tree = ALGOS[algo](G)
    ref = ALGOS[algo](W, topology=mask)
    np.testing.assert_array_equal(tree.edges, ref.edges)
    assert tree.weight == ref.weight
    if algo == "exact_mst":
        assert {2, 5} in [set(e) for e in tree.edges.tolist()]
    assert all(mask[a, b] for a, b in tree.edges.tolist())
    assert sorted(G.edges(data=True)) == edges_before
    graph = as_graph(G)
    assert graph.m == G.number_of_edges() and not graph.dense


@requires_nx
def test_networkx_graph_in_excess_weight_and_integer_weights():
    G, W, mask = zero_edge_network()
    tree = fp.fast_pamst(G, 1e6, 1e-3, rng=0)
    assert fp.excess_weight(G, tree) == pytest.approx(fp.excess_weight(W, tree, topology=mask))
    H = nx.Graph([(0, 1, {"weight": 3}), (1, 2, {"weight": 0}), (0, 2, {"weight": 1})])
    H.add_edge(1, 1, weight=-50)  # a self-loop is a diagonal entry: ignored
    tree = fp.exact_mst(H)
    assert sorted(map(sorted, tree.edges.tolist())) == [[0, 2], [1, 2]] and tree.weight == 1.0


@requires_nx
@pytest.mark.parametrize("edges, match", [
    ([(0, 1, {"weight": 1.0}), (1, 2, {"w": 2.0})], r"edge \(1, 2\).*no 'weight' attribute"),
    ([(0, 1, {"weight": 1.0}), (2, 3, {"weight": 1.0})], r"disconnected"),
    ([], r"empty \(n = 0\)"),
])
def test_bad_networkx_graphs_raise_value_error(edges, match):
    # (nodes other than 0..n-1 are no longer an error: they become tree.labels)
    G = nx.Graph(edges)
    for algo in ("exact_mst", "fast_pamst"):
        with pytest.raises(ValueError, match=match):
            ALGOS[algo](G)


@requires_nx
@pytest.mark.parametrize("kind, edges, match", [
    ("DiGraph", [(0, 1, {"weight": 1.0}), (1, 0, {"weight": 1.0})], r"directed.*DiGraph"),
    ("MultiGraph", [(0, 1, {"weight": 1.0}), (0, 1, {"weight": 2.0})], r"multigraph.*MultiGraph"),
    ("Graph", [(0, 1, {"weight": "heavy"})], r"'weight' attributes.*real numbers"),
    ("Graph", [(0, 1, {"weight": 1 + 2j})], r"'weight' attributes.*real numbers"),
    ("Graph", [(0, 1, {"weight": True})], r"'weight' attributes.*real numbers"),
])
def test_bad_networkx_graphs_raise_type_error(kind, edges, match):
    G = getattr(nx, kind)(edges)
    for algo in ("exact_mst", "fast_pamst"):
        with pytest.raises(TypeError, match=match):
            ALGOS[algo](G)


@requires_nx
def test_networkx_messages_never_quote_a_weight():
    G = nx.Graph([(0, 1, {"weight": 123.456789}), (1, 2, {"weight": float("nan")})])
    with pytest.raises(ValueError, match=r"not finite") as info:
        fp.exact_mst(G)
    assert "123.45" not in str(info.value)


@requires_nx
def test_networkx_graph_with_a_topology_is_ambiguous():
    G, _, mask = zero_edge_network()
    with pytest.raises(ValueError, match="networkx graph.*drop topology="):
        fp.exact_mst(G, topology=mask)


def test_networkx_is_not_imported_for_other_inputs():
    code = ("import sys, numpy as np, fastpamst_nb as fp\n"
            "fp.exact_mst(np.ones((4, 4))); fp.exact_mst(np.ones(6))\n"
            "fp.fast_pamst(np.ones((4, 4)), 1.0, 1.0, rng=0)\n"
            "print('networkx' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------
# 4. rng: everything SPEC 7 / numpy.random.default_rng accepts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("algo", PRIVATE)
def test_seed_sequence_and_bit_generator_are_accepted(algo):
    W = random_symmetric(30, seed=4)
    ref = ALGOS[algo](W, rng=np.random.default_rng(np.random.SeedSequence(5))).edges
    for rng in (np.random.SeedSequence(5), np.random.PCG64(5), 5,
                np.random.default_rng(np.random.PCG64(5))):
        np.testing.assert_array_equal(ALGOS[algo](W, rng=rng).edges, ref, err_msg=repr(rng))
    a = ALGOS[algo](W, rng=np.random.Philox(7)).edges
    np.testing.assert_array_equal(a, ALGOS[algo](W, rng=np.random.default_rng(np.random.Philox(7))).edges)


def test_a_bit_generator_is_shared_like_a_generator():
    bg = np.random.PCG64(11)
    gen = core.as_generator(bg)
    assert gen.bit_generator is bg  # default_rng wraps it, so its state advances
    g = np.random.default_rng(0)
    assert core.as_generator(g) is g


@pytest.mark.parametrize("algo", PRIVATE)
def test_random_state_is_refused_pointing_to_default_rng(algo):
    match = r"legacy numpy\.random\.RandomState; use a Generator.*np\.random\.default_rng"
    with pytest.raises(TypeError, match=match):
        ALGOS[algo](random_symmetric(5), rng=np.random.RandomState(0))


@pytest.mark.parametrize("rng", [True, np.bool_(False), 1.5, "0", [0], np.float64(2.0)])
def test_other_rng_types_are_refused(rng):
    with pytest.raises(TypeError, match="rng must be None, an int seed >= 0, a numpy.random.SeedSequence"):
        fp.fast_pamst(random_symmetric(5), 1.0, 0.1, rng=rng)


def test_rng_is_checked_before_the_weights_are_read():
    W = random_symmetric(5)
    W[0, 1] = np.nan  # validation would complain about this, but the bad rng comes first
    with pytest.raises(TypeError, match="rng must be"):
        fp.fast_pamst(W, 1.0, 0.1, rng=1.5)


# ---------------------------------------------------------------------------
# 5. excess_weight with a tree of another graph
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["dense", "sparse", "list", "pdist"])
def test_excess_weight_refuses_a_tree_of_another_size(form):
    W = random_symmetric(12)
    tree = fp.exact_mst(random_symmetric(10))
    X = {"dense": W, "sparse": sp.csr_matrix(W), "list": W.tolist(),
         "pdist": squareform(W, checks=False)}[form]
    with pytest.raises(ValueError, match=r"n_vertices = 10 .*n = 12"):
        fp.excess_weight(X, tree)


def test_excess_weight_size_check_comes_before_validation():
    W = random_symmetric(12)
    W[3, 4] = np.nan  # the O(n^2) validation would report this
    with pytest.raises(ValueError, match=r"n_vertices = 10 .*n = 12"):
        fp.excess_weight(W, fp.exact_mst(random_symmetric(10)))


def test_excess_weight_refuses_tree_edges_outside_the_topology():
    W = np.ones((6, 6))
    W[0, :] = W[:, 0] = 0.1  # the minimum spanning tree is the star around 0
    star = fp.exact_mst(W)
    assert sorted(star.edges[:, 1].tolist()) == [1, 2, 3, 4, 5]
    path = np.zeros((6, 6), dtype=bool)
    for a in range(5):
        path[a, a + 1] = path[a + 1, a] = True
    with pytest.raises(ValueError, match=r"tree edge \(0, [2-5]\) is not an edge of the graph"):
        fp.excess_weight(W, star, topology=path)
    with pytest.raises(ValueError, match=r"tree edge \(0, [2-5]\) is not an edge of the graph"):
        fp.excess_weight(sp.csr_matrix(W * path), star)


def test_excess_weight_needs_a_spanning_tree():
    with pytest.raises(TypeError, match="tree must be a SpanningTree"):
        fp.excess_weight(random_symmetric(4), np.array([[0, 1], [1, 2], [2, 3]]))


def test_excess_weight_reads_the_tree_weight_from_the_weights():
    W = random_symmetric(15)
    tree = fp.fast_pamst(W, 0.05, 0.1, rng=0)
    best = fp.exact_mst(W).weight
    assert fp.excess_weight(W, tree) == pytest.approx(tree.weight - best, rel=1e-12)
    assert fp.excess_weight(2 * W, tree) == pytest.approx(2 * (tree.weight - best), rel=1e-12)


# ---------------------------------------------------------------------------
# 6. inputs too large to convert or copy are refused from their shape
# ---------------------------------------------------------------------------

@pytest.fixture
def little_memory(monkeypatch):
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 2**20)


@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float32])
def test_huge_noncontiguous_input_is_refused_before_copying(algo, dtype, little_memory):
    n = 200_000  # a copy would take 160-320 GiB; the view itself takes 8 bytes
    W = np.broadcast_to(np.ones((), dtype=dtype), (n, n))
    assert not W.flags.c_contiguous and not W.flags.f_contiguous
    with pytest.raises(ValueError, match=r"GiB of working memory.*available") as info:
        ALGOS[algo](W)
    msg = str(info.value)
    if algo == "fast_pamst":
        # fast_pamst (exponential) refuses even earlier, from the size of its edge store
        # (gumbel keeps no edge store: O(n) extra memory)
        assert f"fast_pamst on n = {n} (its edge store)" in msg
    elif dtype == np.int64:
        assert "converting weights of dtype int64" in msg and f"({n}, {n})" in msg
    else:
        assert "non-contiguous weights" in msg


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_noncontiguous_input_check_allocates_nothing(dtype, little_memory):
    n = 4000  # 128 MB as float64: above require_memory's 64 MiB threshold
    W = np.broadcast_to(np.ones((), dtype=dtype), (n, n))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="memory"):
            fp.exact_mst(W)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


@pytest.mark.slow_python
def test_integer_conversion_is_exact_and_checked_in_blocks():
    n = 1100  # more than one conversion block
    W = np.zeros((n, n), dtype=np.int64)
    W[np.triu_indices(n, 1)] = np.arange(n * (n - 1) // 2) + 1
    W = W + W.T
    # the first validation of a process loads its compiled kernels (numba's dispatchers
    # allocate ~12 MB then): warm them on a small matrix so that the peak below is the
    # conversion's alone, whichever tests ran before in this worker
    as_graph(W[:64, :64].copy())
    tracemalloc.start()
    try:
        graph = as_graph(W)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert graph.W.dtype == np.float64 and np.array_equal(graph.W, W)
    assert peak < 1.5 * 8 * n * n  # one float64 copy, not a second full-size check array
    W[n - 1, n - 2] = W[n - 2, n - 1] = 2**53 + 1  # not a float64, in the last block
    with pytest.raises(ValueError, match="cannot be represented exactly as float64"):
        fp.exact_mst(W)
    W[n - 1, n - 2] = W[n - 2, n - 1] = 2**60  # exact in float64
    assert as_graph(W).wmax == 2.0**60


def test_integer_weights_with_a_topology_convert_only_the_edges(little_memory):
    n = 4000  # converting the whole matrix would take 128 MB
    W = np.broadcast_to(np.ones((), dtype=np.int64), (n, n))
    a = np.arange(n)
    b = (a + 1) % n
    ring = sp.csr_matrix((np.ones(2 * n), (np.r_[a, b], np.r_[b, a])), shape=(n, n))
    tracemalloc.start()
    try:
        tree = fp.exact_mst(W, topology=ring)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tree.edges) == n - 1 and tree.weight == n - 1
    assert peak < 16 * 2**20


# ---------------------------------------------------------------------------
# 7. documentation of the public functions
# ---------------------------------------------------------------------------

PUBLIC = [fp.exact_mst, fp.excess_weight, fp.pamst, fp.post_processing, fp.fast_pamst]


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: f.__name__)
def test_numpydoc_sections_and_every_parameter_documented(func):
    doc = inspect.getdoc(func)
    for section in ("Parameters\n----------", "Returns\n-------", "Raises\n------", "Examples\n--------"):
        assert section in doc, f"{func.__name__} lacks {section.splitlines()[0]}"
    params = doc.split("Parameters\n----------")[1].split("Returns\n-------")[0]
    sig = inspect.signature(func)
    for name, p in sig.parameters.items():
        assert f"\n{name} :" in "\n" + params, f"{func.__name__}: {name} undocumented"
        assert p.annotation is not inspect.Parameter.empty, f"{func.__name__}: {name} unannotated"
    assert sig.return_annotation is not inspect.Signature.empty
    if "rho" in sig.parameters:
        assert "zCDP" in params and "dimensionless" in params and "weights' units" in params
    if "rng" in sig.parameters:
        assert "rng=0" in doc.split("Examples")[1] and "reproducib" in doc.split("Examples")[1]


def test_api_examples_run():
    # the public functions report fastpamst_nb as their module, so name them explicitly
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for func in (fp.exact_mst, fp.excess_weight, fp.pamst, fp.post_processing, fp.fast_pamst):
        for test in finder.find(func, func.__name__, globs={}):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 10 and result.failed == 0


def test_public_functions_name_the_public_module():
    import pydoc

    for obj in (fp.fast_pamst, fp.exact_mst, fp.pamst, fp.post_processing, fp.SpanningTree,
                fp.chow_liu, fp.private_edge_weights):
        assert obj.__module__ == "fastpamst_nb"
    assert "fastpamst_nb.api" not in pydoc.render_doc(fp.fast_pamst)


def test_fast_pamst_memory_is_checked_from_the_shape_before_validation(monkeypatch):
    from fastpamst_nb import core, graph

    def no_scan(*args):
        raise AssertionError("the O(n^2) validation pass ran before the memory check")

    monkeypatch.setattr(graph, "_scan_dense", no_scan)
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 2**30)
    W = np.broadcast_to(np.float32(1.0), (40000, 40000))  # 6 GB of edge store, no data
    with pytest.raises(ValueError, match="memory"):
        fp.fast_pamst(W, 1.0, 1.0)


# ---------------------------------------------------------------------------
# cold start (issue 24, item 5): one compiled kernel serves every kind of dense input
# ---------------------------------------------------------------------------

def _input_kinds(W, tmp_path):
    """Dense inputs numba would type apart: writable, read-only, memmap 'r', F order, float32."""
    ro = W.copy()
    ro.setflags(write=False)  # what np.asarray(DataFrame) gives under pandas' copy-on-write
    np.save(tmp_path / "w.npy", W)
    return {"writable": W.copy(), "read-only": ro, "memmap-r": np.load(tmp_path / "w.npy", mmap_mode="r"),
            "fortran": np.asfortranarray(W), "float32": W.astype(np.float32),
            "float32-read-only": ro.astype(np.float32)}


def test_every_dense_input_kind_reaches_the_kernels_as_one_type(tmp_path):
    from numba import typeof

    W = squareform(pdist(points(12)))
    W32 = W.astype(np.float32).astype(np.float64)  # what float32 inputs are widened to
    types = set()
    for kind, X in _input_kinds(W, tmp_path).items():
        before, writeable = np.array(X, copy=True), X.flags.writeable
        g = as_graph(X)
        assert not g.W.flags.writeable and g.W.flags.c_contiguous and g.W.dtype == np.float64, kind
        np.testing.assert_array_equal(g.W, W32 if "float32" in kind else W, err_msg=kind)
        if "float32" not in kind:
            assert np.shares_memory(g.W, X), f"{kind} was copied"
        assert X.flags.writeable == writeable, kind  # the caller's flag is untouched
        np.testing.assert_array_equal(X, before, err_msg=kind)
        types.add(str(typeof(g.W)))
    assert types == {"readonly array(float64, 2d, C)"}
    # the caller's writable array stays writable: only the kernels' view is read-only
    A = W.copy()
    as_graph(A)
    assert A.flags.writeable


@pytest.mark.skipif(not hasattr(fp.exact_mst.__globals__["prim_dense_exact"], "signatures"),
                    reason="NUMBA_DISABLE_JIT=1: nothing is compiled")
def test_input_kinds_compile_no_new_version_of_the_release(tmp_path):
    from fastpamst_nb.prim import prim_dense_exact, prim_dense_private

    W = squareform(pdist(points(12)))
    fp.fast_pamst(W, rho=1.0, sensitivity=0.1, rng=0, noise="exponential")
    fp.exact_mst(W)
    counts = len(prim_dense_private.signatures), len(prim_dense_exact.signatures)
    trees = {kind: fp.fast_pamst(X, rho=1.0, sensitivity=0.1, rng=0, noise="exponential").edges
             for kind, X in _input_kinds(W, tmp_path).items()}
    for X in _input_kinds(W, tmp_path).values():
        fp.exact_mst(X)
    assert (len(prim_dense_private.signatures), len(prim_dense_exact.signatures)) == counts
    for kind, edges in trees.items():
        np.testing.assert_array_equal(edges, trees["writable"], err_msg=kind)


def test_a_large_float32_matrix_is_read_in_place(monkeypatch):
    from fastpamst_nb import graph

    monkeypatch.setattr(graph, "_WIDEN_FLOAT32_MAX_ENTRIES", 100)  # 12 x 12 counts as large
    X = squareform(pdist(points(12))).astype(np.float32)
    g = as_graph(X)
    assert g.W.dtype == np.float32 and np.shares_memory(g.W, X) and not g.W.flags.writeable
    assert X.flags.writeable


@requires_nx
@pytest.mark.parametrize("nodes", [("a", "b", "c"), (1, 2, 3), (0.0, 1.0, 2.0), (True, 2, "x")])
def test_networkx_nodes_other_than_0_to_n_minus_1_are_numbered_in_node_order(nodes):
    a, b, c = nodes
    G = nx.Graph([(a, b, {"weight": 1.0}), (b, c, {"weight": 2.0}), (a, c, {"weight": 5.0})])
    tree = fp.exact_mst(G)
    assert tree.labels == tuple(G.nodes) == nodes
    assert sorted(map(frozenset, tree.edge_labels()), key=str) == sorted(
        [frozenset((a, b)), frozenset((b, c))], key=str)
    assert fp.excess_weight(G, tree) == 0.0


# ---------------------------------------------------------------------------
# help() shows no raw Sphinx roles; the Sphinx build gets them back (issue 24, item 6)
# ---------------------------------------------------------------------------

def test_help_shows_no_raw_sphinx_roles():
    import pydoc
    import re

    role = re.compile(r":(?:py:)?[a-z]+:`")
    public = [getattr(fp, name) for name in fp.__all__]
    for obj in public + [fp.SpanningTree.save, fp.SpanningTree.to_scipy, fp.privacy.discretized_sensitivity]:
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert not role.search(text), (obj, role.search(text))
    # the sources keep them, for the HTML docs' links (docs/conf.py)
    from fastpamst_nb._docstrings import sphinx_doc

    assert ":ref:`design-sampler`" in sphinx_doc(fp.fast_pamst)
    assert 'the "design-sampler" section of the docs' in fp.fast_pamst.__doc__
    assert sphinx_doc(fp.SpanningTree.true_weight) is not None  # a property
    assert sphinx_doc(fp.privacy.discretized_sensitivity) is not None  # an lru_cache wrapper


@pytest.mark.parametrize("written, shown", [
    (":func:`fast_pamst`", "fast_pamst()"),
    (":func:`~fastpamst_nb.privacy.resolve_rho`", "resolve_rho()"),
    (":meth:`SpanningTree.save`", "SpanningTree.save()"),
    (":class:`fastpamst_nb.SpanningTree`", "fastpamst_nb.SpanningTree"),
    (":py:attr:`edge_weights`", "edge_weights"),
    (":ref:`the calibration <design-calibration>`", "the calibration"),
    (":ref:`erratum-2`", 'the "erratum-2" section of the docs'),
    (":math:`\\hat p`", "\\hat p"),
    ("``literal`` and `code` stay", "``literal`` and `code` stay"),
])
def test_plain_roles(written, shown):
    from fastpamst_nb._docstrings import plain_roles

    assert plain_roles(written) == shown
