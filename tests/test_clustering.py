"""single_linkage: cutting a spanning tree equals single-linkage clustering."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist, squareform

import fastpamst_nb as fp
from fastpamst_nb.clustering import private_edge_weights, single_linkage
from fastpamst_nb.tree import SpanningTree

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests


def blobs(seed=0, per=30, spread=0.3):
    """Three well-separated 2-D Gaussian blobs, shuffled; returns points and true blob ids."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 6.0]])
    truth = np.repeat(np.arange(3), per)
    X = centers[truth] + spread * rng.standard_normal((3 * per, 2))
    perm = rng.permutation(3 * per)
    return X[perm], truth[perm]


def same_partition(a, b):
    """True when labelings a and b define the same partition (up to renaming)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def canonical(labels):
    """Renumber clusters 0, 1, ... in order of their smallest vertex."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inv]


def test_recovers_blobs_and_matches_scipy():
    X, truth = blobs()
    D = squareform(pdist(X))
    tree = fp.exact_mst(D)
    labels = single_linkage(tree, 3)
    assert labels.dtype == np.int64 and labels.shape == (90,)
    assert same_partition(labels, truth)
    Z = linkage(pdist(X), method="single")
    for k in range(1, 12):
        ref = fcluster(Z, k, criterion="maxclust")
        lab = single_linkage(tree, k)
        assert len(np.unique(lab)) == k
        assert np.array_equal(lab, canonical(ref)), k


def test_label_order_and_extremes():
    X, _ = blobs(seed=1, per=10)
    tree = fp.exact_mst(squareform(pdist(X)))
    for k in (1, 2, 3, 7, 30):
        lab = single_linkage(tree, k)
        assert lab[0] == 0
        _, first = np.unique(lab, return_index=True)
        assert np.all(np.diff(first) > 0)  # clusters numbered by smallest vertex
        assert set(lab.tolist()) == set(range(k))
    assert np.array_equal(single_linkage(tree, 1), np.zeros(30, dtype=np.int64))
    assert np.array_equal(single_linkage(tree, 30), np.arange(30))


def test_maximum_tree_cuts_lightest_edges():
    X, truth = blobs(seed=2)
    D = squareform(pdist(X))
    S = np.exp(-D)  # similarity: large = close
    tree = fp.exact_mst(S, maximum=True)
    assert tree.info["maximum"] is True
    assert same_partition(single_linkage(tree, 3), truth)
    assert np.array_equal(single_linkage(tree, 3), single_linkage(fp.exact_mst(D), 3))


def test_private_tree_and_private_weights():
    X, truth = blobs(seed=3)
    D = squareform(pdist(X))
    tree = fp.fast_pamst(D, rho=5.0, sensitivity=1e-3, noise="gumbel", rng=0)
    edges_before = tree.edges.copy()
    lab = single_linkage(tree, 3)
    assert same_partition(lab, truth)
    w = private_edge_weights(tree, rho=5.0, sensitivity=1e-3, rng=1)
    assert w.shape == (89,)
    assert np.array_equal(w, private_edge_weights(tree, rho=5.0, sensitivity=1e-3, rng=1))
    sigma = 1e-3 * np.sqrt(89 / (2 * 5.0))
    assert np.abs(w - tree.edge_weights).max() < 6 * sigma
    assert same_partition(single_linkage(tree, 3, weights=w), truth)
    assert np.array_equal(tree.edges, edges_before)  # the tree is not modified


def test_explicit_weights_choose_the_cut():
    # path 0-1-2-3 with true weights 1, 5, 1; other weights make the cut fall elsewhere
    tree = SpanningTree([[0, 1], [1, 2], [2, 3]], [1.0, 5.0, 1.0], 4, "exact", {"maximum": False})
    assert single_linkage(tree, 2).tolist() == [0, 0, 1, 1]
    assert single_linkage(tree, 2, weights=[9.0, 0.0, 0.0]).tolist() == [0, 1, 1, 1]
    # ties are cut in release order
    tree = SpanningTree([[0, 1], [1, 2], [2, 3]], [2.0, 2.0, 2.0], 4, "exact", {})
    assert single_linkage(tree, 2).tolist() == [0, 1, 1, 1]


def test_single_vertex():
    tree = fp.exact_mst(np.zeros((1, 1)))
    assert single_linkage(tree, 1).tolist() == [0]


def test_errors():
    X, _ = blobs(seed=4, per=5)
    tree = fp.exact_mst(squareform(pdist(X)))
    with pytest.raises(ValueError, match="1 <= n_clusters <= n_vertices = 15"):
        single_linkage(tree, 0)
    with pytest.raises(ValueError, match="1 <= n_clusters"):
        single_linkage(tree, 16)
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        single_linkage(tree, 2.0)
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        single_linkage(tree, True)
    with pytest.raises(TypeError, match="SpanningTree"):
        single_linkage(np.zeros((3, 3)), 2)
    with pytest.raises(ValueError, match="one entry per tree edge"):
        single_linkage(tree, 2, weights=np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        single_linkage(tree, 2, weights=np.full(14, np.nan))
    with pytest.raises(ValueError, match="spanning tree"):
        single_linkage(SpanningTree([[0, 1]], [1.0], 4, "exact"), 2)
    with pytest.raises(ValueError, match="rho"):
        private_edge_weights(tree, rho=0.0, sensitivity=1.0)


def test_private_edge_weights_epsilon_delta_budget():
    X, _ = blobs(seed=5, per=10)
    tree = fp.fast_pamst(squareform(pdist(X)), rho=1.0, sensitivity=1e-3, rng=0)
    rho = fp.approx_dp_to_zcdp(1.0, 1e-6)
    w = private_edge_weights(tree, epsilon=1.0, delta=1e-6, sensitivity=1e-3, rng=2)
    # (epsilon, delta) is the converted rho: the same noise as asking for that rho
    assert np.array_equal(w, private_edge_weights(tree, rho=rho, sensitivity=1e-3, rng=2))
    assert not np.array_equal(w, private_edge_weights(tree, rho=2 * rho, sensitivity=1e-3, rng=2))
    # the spread matches sigma = Delta sqrt((n - 1) / (2 rho)) for the converted rho
    noise = np.concatenate([private_edge_weights(tree, epsilon=1.0, delta=1e-6, sensitivity=1e-3, rng=s)
                            - tree.edge_weights for s in range(200)])
    sigma = 1e-3 * np.sqrt(29 / (2 * rho))
    assert noise.std() == pytest.approx(sigma, rel=0.05)
    # the default conversion is CKS, as in the algorithms
    assert rho == fp.privacy.resolve_rho(None, 1.0, 1e-6)


def test_private_edge_weights_budget_errors():
    X, _ = blobs(seed=6, per=5)
    tree = fp.fast_pamst(squareform(pdist(X)), rho=1.0, sensitivity=1e-3, rng=0)
    with pytest.raises(ValueError, match="not both"):
        private_edge_weights(tree, rho=1.0, epsilon=1.0, delta=1e-6, sensitivity=1e-3)
    with pytest.raises(ValueError, match="privacy budget is required"):
        private_edge_weights(tree, sensitivity=1e-3)
    with pytest.raises(ValueError, match="privacy budget is required"):
        private_edge_weights(tree, epsilon=1.0, sensitivity=1e-3)
    with pytest.raises(ValueError, match="delta must lie strictly between 0 and 1"):
        private_edge_weights(tree, epsilon=1.0, delta=1.5, sensitivity=1e-3)
    with pytest.raises(TypeError, match="needs sensitivity="):
        private_edge_weights(tree, rho=1.0)
    with pytest.raises(TypeError, match="needs a privacy budget and a sensitivity"):
        private_edge_weights(tree)
    with pytest.raises(ValueError, match="sensitivity"):
        private_edge_weights(tree, rho=1.0, sensitivity=-1.0)
    # rho and sensitivity stay positional, as in the algorithms
    assert private_edge_weights(tree, 1.0, 1e-3, rng=0).shape == (14,)


def test_loaded_release_without_true_weights(tmp_path):
    X, truth = blobs(seed=7)
    D = squareform(pdist(X))
    tree = fp.fast_pamst(D, rho=5.0, sensitivity=1e-3, noise="gumbel", rng=0)
    w = private_edge_weights(tree, rho=5.0, sensitivity=1e-3, rng=1)
    tree.save(tmp_path / "release.npz")
    loaded = SpanningTree.load(tmp_path / "release.npz")
    # the published release (edges + private weights) is enough to cluster
    assert np.array_equal(single_linkage(loaded, 3, weights=w), single_linkage(tree, 3, weights=w))
    assert same_partition(single_linkage(loaded, 3, weights=w), truth)
    # but there are no true weights to cut by, or to noise again
    with pytest.raises(ValueError, match="no true weights.*pass weights="):
        single_linkage(loaded, 3)
    with pytest.raises(ValueError, match="no true weights"):
        private_edge_weights(loaded, rho=1.0, sensitivity=1e-3)


def test_private_edge_weights_docstring_sections():
    doc = private_edge_weights.__doc__
    for section in ("Parameters", "Returns", "Raises", "Examples", "epsilon, delta"):
        assert section in doc


def _ari_by_pairs(a, b):
    """The adjusted Rand index from its definition: agreements over all pairs of items."""
    from itertools import combinations

    n = len(a)
    same_a = np.array([a[i] == a[j] for i, j in combinations(range(n), 2)])
    same_b = np.array([b[i] == b[j] for i, j in combinations(range(n), 2)])
    index = np.sum(same_a & same_b)
    expected = same_a.sum() * same_b.sum() / len(same_a)
    top = (same_a.sum() + same_b.sum()) / 2
    return 1.0 if top == expected else (index - expected) / (top - expected)


def test_adjusted_rand_index_against_its_definition():
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.integers(0, 4, 25)
        b = rng.integers(0, 3, 25)
        assert fp.adjusted_rand_index(a, b) == pytest.approx(_ari_by_pairs(a, b), abs=1e-12)
    assert fp.adjusted_rand_index([0, 0, 1, 1, 2], ["x", "x", "y", "y", "z"]) == 1.0
    assert fp.adjusted_rand_index([0, 0, 0], [1, 1, 1]) == 1.0
    with pytest.raises(ValueError, match="same items"):
        fp.adjusted_rand_index([0, 1], [0, 1, 2])
