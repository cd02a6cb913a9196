"""SpanningTree: weights, conversions, repr, and fp.excess_weight."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb import SpanningTree

N = 12


def random_symmetric(rng, n, low=0.1, high=1.0):
    W = np.triu(rng.uniform(low, high, size=(n, n)), 1)
    return W + W.T


def zero_edge_graph(sparse):
    """Complete graph on N vertices whose minimum spanning tree must use the 0-weight edge (2, 5)."""
    W = random_symmetric(np.random.default_rng(0), N, -1.0, 1.0)
    W[2, :] += 5.0  # every other edge at vertex 2 is expensive ...
    W[:, 2] += 5.0
    W[2, 5] = W[5, 2] = 0.0  # ... so vertex 2 joins through the zero edge
    if not sparse:
        return W
    i, j = np.nonzero(~np.eye(N, dtype=bool))
    A = sp.csr_matrix((W[i, j], (i, j)), shape=(N, N))
    assert A.nnz == N * (N - 1)  # the zero is stored explicitly
    return A


def dense(weights):
    return weights.toarray() if sp.issparse(weights) else np.asarray(weights)


ALGOS = {
    "exact": lambda W, **kw: fp.exact_mst(W, **kw),
    "pamst": lambda W, **kw: fp.pamst(W, 0.5, 0.1, **{"rng": 1, **kw}),
    "pamst-gumbel": lambda W, **kw: fp.pamst(W, 0.5, 0.1, noise="gumbel", **{"rng": 1, **kw}),
    "post_processing": lambda W, **kw: fp.post_processing(W, 0.5, 0.01, **{"rng": 1, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, 0.5, 0.1, **{"rng": 1, **kw}),
    "fast_pamst-gumbel": lambda W, **kw: fp.fast_pamst(W, 0.5, 0.1, noise="gumbel", **{"rng": 1, **kw}),
}


@pytest.fixture(params=[False, True], ids=["dense", "sparse"])
def graph(request):
    return zero_edge_graph(request.param)


@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("maximum", [False, True])
def test_weights_are_the_input_weights(algo, maximum, graph):
    tree = ALGOS[algo](graph, maximum=maximum)
    D = dense(graph)
    expected = D[tree.edges[:, 0], tree.edges[:, 1]]
    # true weights, never the noisy ones (post-processing noises a copy)
    np.testing.assert_array_equal(tree.edge_weights, expected)
    assert tree.edge_weights.dtype == np.float64 and tree.edge_weights.shape == (N - 1,)
    assert tree.weight == pytest.approx(expected.sum(), rel=1e-12, abs=1e-12)
    assert isinstance(tree.weight, float)
    assert len(tree) == N - 1 and tree.n_vertices == N
    assert tree.info["maximum"] is maximum


@pytest.mark.parametrize("algo", list(ALGOS))
def test_algorithm_name(algo):
    tree = ALGOS[algo](zero_edge_graph(False))
    assert tree.algorithm == algo.split("-")[0]


def test_exact_tree_uses_the_zero_edge(graph):
    tree = fp.exact_mst(graph)
    assert {(2, 5), (5, 2)} & set(map(tuple, tree.edges.tolist()))
    assert 0.0 in tree.edge_weights.tolist()


@pytest.mark.parametrize("algo", list(ALGOS))
def test_to_scipy(algo, graph):
    tree = ALGOS[algo](graph)
    S = tree.to_scipy()
    assert sp.issparse(S) and S.shape == (N, N)
    assert S.nnz == 2 * (N - 1)  # every tree edge twice, explicit zeros kept
    assert abs(S - S.T).max() == 0
    D = dense(graph)
    for a, b in tree.edges.tolist():
        assert S[a, b] == D[a, b] == S[b, a]
    # the stored pattern is exactly the tree
    coo = sp.coo_matrix(S)
    stored = {(min(a, b), max(a, b)) for a, b in zip(coo.row.tolist(), coo.col.tolist())}
    assert stored == {(min(a, b), max(a, b)) for a, b in tree.edges.tolist()}
    assert S.sum() / 2 == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


def test_to_scipy_keeps_explicit_zero():
    tree = fp.exact_mst(zero_edge_graph(True))
    S = tree.to_scipy()
    assert S.nnz == 2 * (N - 1)
    assert np.count_nonzero(S.data == 0.0) == 2
    # the round trip through scipy is a valid sparse input with the same tree
    again = fp.exact_mst(S)
    assert again.weight == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("algo", list(ALGOS))
def test_to_networkx(algo, graph):
    nx = pytest.importorskip("networkx")
    tree = ALGOS[algo](graph)
    g = tree.to_networkx()
    assert nx.is_tree(g)
    assert g.number_of_nodes() == N and g.number_of_edges() == N - 1
    D = dense(graph)
    for a, b, data in g.edges(data=True):
        assert data["weight"] == D[a, b]
    assert g.size(weight="weight") == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


def test_conversions_on_single_vertex():
    tree = fp.exact_mst(np.zeros((1, 1)))
    assert tree.to_scipy().shape == (1, 1) and tree.to_scipy().nnz == 0
    pytest.importorskip("networkx")
    g = tree.to_networkx()
    assert g.number_of_nodes() == 1 and g.number_of_edges() == 0


@pytest.mark.parametrize("algo", list(ALGOS))
def test_repr(algo):
    tree = ALGOS[algo](random_symmetric(np.random.default_rng(2), 500))
    r = repr(tree)
    assert len(r) < 120 and "\n" not in r  # short, even for a big tree
    assert "n_vertices=500" in r and "n_edges=499" in r
    assert f"algorithm={algo.split('-')[0]!r}" in r
    # the repr (what Jupyter shows) publishes only public parameters: never the true weight
    assert "weight" not in r
    assert f"{tree.weight:.6g}" not in r and f"{tree.weight:.3g}" not in r
    if algo == "exact":
        assert "rho" not in r  # no budget: nothing to show
    else:
        assert f"rho={tree.info['rho']!r}" in r


def distinctive_path(n=6, w=123.456789):
    """A path graph whose every edge weighs ``w`` (a number that cannot appear by accident)."""
    W = np.zeros((n, n))
    i = np.arange(n - 1)
    W[i, i + 1] = W[i + 1, i] = w
    return sp.csr_matrix(W)


@pytest.mark.parametrize("algo", list(ALGOS))
def test_repr_and_str_show_no_weight_digits(algo):
    tree = ALGOS[algo](distinctive_path())
    assert tree.weight == pytest.approx(5 * 123.456789)
    for text in (repr(tree), str(tree), repr([tree])):
        for digits in ("123.45", "123.46", "617.28", "617.3", "617.2"):
            assert digits not in text, text


def test_true_weight_is_an_alias_documented_as_not_private():
    tree = fp.fast_pamst(distinctive_path(), 0.5, 0.1, rng=0)
    assert tree.true_weight == tree.weight == pytest.approx(5 * 123.456789)
    doc = SpanningTree.true_weight.__doc__
    assert "TRUE" in doc and "NOT private" in doc
    assert "NOT private" in SpanningTree.edge_weights.__doc__
    assert "NOT private" in SpanningTree.__doc__


def test_constructor_normalizes():
    t = SpanningTree([[0, 1], [1, 2]], [1, 2], 3, "manual")
    assert t.edges.dtype == np.int64 and t.edges.shape == (2, 2)
    assert t.weight == 3.0 and t.info == {}
    empty = SpanningTree(np.zeros((0, 2)), [], 1, "manual", {"x": 1})
    assert empty.edges.shape == (0, 2) and empty.weight == 0.0 and empty.info == {"x": 1}


# ---------------------------------------------------------------------------
# excess_weight
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("maximum", [False, True])
def test_excess_weight_zero_for_the_exact_tree(graph, maximum):
    tree = fp.exact_mst(graph, maximum=maximum)
    assert fp.excess_weight(graph, tree) == 0.0
    assert fp.excess_weight(graph, tree, maximum=maximum) == 0.0


@pytest.mark.parametrize("algo", [a for a in ALGOS if a != "exact"])
@pytest.mark.parametrize("maximum", [False, True])
def test_excess_weight_positive_for_noisy_trees(algo, maximum):
    # strong noise on 40 vertices: the private tree is never the optimum
    W = random_symmetric(np.random.default_rng(3), 40)
    f = ALGOS[algo]
    for seed in range(3):
        tree = f(W, maximum=maximum, rng=seed)
        excess = fp.excess_weight(W, tree)
        best = fp.exact_mst(W, maximum=maximum).weight
        assert excess == pytest.approx(abs(tree.weight - best), rel=1e-12)
        assert excess > 0.0


def test_excess_weight_of_a_maximum_tree_measured_as_minimum():
    W = random_symmetric(np.random.default_rng(4), 30)
    tmax = fp.exact_mst(W, maximum=True)
    tmin = fp.exact_mst(W)
    # against the minimum tree, a maximum tree is as bad as it gets
    assert fp.excess_weight(W, tmax, maximum=False) == pytest.approx(tmax.weight - tmin.weight)
    assert fp.excess_weight(W, tmax, maximum=False) > 0
    assert fp.excess_weight(W, tmin, maximum=True) == pytest.approx(tmax.weight - tmin.weight)


def test_excess_weight_never_negative_on_many_random_trees():
    rng = np.random.default_rng(5)
    for trial in range(20):
        W = random_symmetric(rng, 15, -1.0, 1.0)
        for maximum in (False, True):
            tree = fp.pamst(W, 10.0 ** rng.uniform(-2, 4), 0.1, rng=trial, maximum=maximum)
            assert fp.excess_weight(W, tree) >= 0.0
