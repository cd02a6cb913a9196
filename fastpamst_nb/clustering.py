"""Single-linkage clustering by cutting a (released) spanning tree.

Cutting the n_clusters - 1 longest edges of a minimum spanning tree gives exactly
the single-linkage clustering with n_clusters clusters (Gower & Ross 1969). On a
privately released tree this is post-processing: it reads only the released
tree and the weights it is given, so it costs no privacy budget of its own --
provided those weights are themselves public or privately released (see the
caution in :func:`single_linkage` and :func:`private_edge_weights`).
"""

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from . import privacy
from .api import _require_inputs
from .core import as_generator, check_positive

__all__ = ["adjusted_rand_index", "linkage_matrix", "private_edge_weights", "single_linkage"]


def _check_tree(tree):
    for attr in ("edges", "edge_weights", "n_vertices", "info"):
        if not hasattr(tree, attr):
            raise TypeError("tree must be a SpanningTree (from fastpamst_nb's exact_mst, fast_pamst, "
                            f"pamst, post_processing or chow_liu), got {type(tree).__name__}")
    n = int(tree.n_vertices)
    edges = np.asarray(tree.edges, dtype=np.int64).reshape(-1, 2)
    if n < 1 or edges.shape[0] != n - 1:
        raise ValueError(f"tree must be a spanning tree: {n} vertices need {max(n - 1, 0)} edges, "
                         f"got {edges.shape[0]}")
    return n, edges


def _tree_weights(tree, n, weights, metric, p):
    """The weights that choose the cut: ``weights`` (per edge, or points X with a
    metric), else the tree's true weights."""
    if metric is not None:
        from .metrics import edge_distances, prepare_points

        if weights is None:
            raise TypeError(f"metric={metric!r} computes the edges' distances from points: pass "
                            "weights=X, the (n, d) points the tree was computed from")
        P = prepare_points(weights, metric, p, name="weights")
        if P[0].shape[0] != n:
            raise ValueError(f"weights holds {P[0].shape[0]} points but the tree has n = {n} vertices; "
                             "pass the points the tree was computed from")
        return edge_distances(P, np.asarray(tree.edges, dtype=np.int64).reshape(-1, 2))
    if p is not None:
        raise ValueError("p= is the exponent of metric='minkowski'; drop it, or add metric='minkowski'")
    if weights is None:
        w = np.asarray(tree.edge_weights, dtype=np.float64)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n - 1,):
            raise ValueError(f"weights must have one entry per tree edge, shape ({n - 1},), got {w.shape}")
    if np.isnan(w).any():
        if weights is None:
            raise ValueError("tree has no true weights (NaN: unpickled, or loaded from a file saved "
                             "without include_true_weights=True); pass weights=, e.g. privately "
                             "released ones")
        raise ValueError("weights must not contain NaN")
    return w


def single_linkage(tree, n_clusters, *, weights=None, metric=None, p=None):
    """Cluster labels from cutting a spanning tree into ``n_clusters`` components.

    Parameters
    ----------
    tree : SpanningTree
        A spanning tree on n vertices, e.g. ``fast_pamst(D, ...)`` of a distance
        matrix D, or a maximum spanning tree of similarities (``maximum=True``).
    n_clusters : int
        Number of clusters, 1 <= n_clusters <= n.
    weights : array_like of float, shape (n - 1,), or points (n, d) with ``metric``, optional
        Weights of ``tree.edges`` (same order) used to choose the cut. Default
        ``tree.edge_weights``, the tree's *true* input weights (see Privacy).
        With ``metric``: the points X the tree was computed from, whose
        distances along the tree's edges are the weights (true distances:
        not private either).
    metric : str, optional
        A name of :data:`fastpamst_nb.metrics.METRICS`: ``weights`` is points.
    p : float, optional
        The exponent of ``metric="minkowski"``.

    Returns
    -------
    ndarray of int64, shape (n,)
        ``labels[v]`` in 0 .. n_clusters-1; clusters are numbered in the order of
        their smallest vertex (``labels[0] == 0``).

    Notes
    -----
    *Which edges are cut.* For a minimum spanning tree (distances: small = close)
    the n_clusters - 1 heaviest edges are removed; for a tree released with
    ``maximum=True`` (``tree.info["maximum"]``, similarities such as mutual
    information: large = close) the n_clusters - 1 *lightest* edges are removed.
    Ties are cut in the order the edges were released. Applied to an exact
    minimum spanning tree this equals single-linkage agglomerative clustering
    (``scipy.cluster.hierarchy.fcluster(..., criterion="maxclust")``) when
    the weights have no ties. Cost: O(n log n).

    *Privacy.* This is post-processing: its output is a function of its
    inputs only, so it adds no privacy cost to whatever released them. The
    tree's edges from a private algorithm are private, but
    ``SpanningTree.edge_weights`` are the true, un-noised weights and are
    *not* covered by that guarantee. For an end-to-end private clustering pass
    ``weights`` that were released privately too, e.g.
    :func:`private_edge_weights` (which spends its own rho), or weights computed
    from public information.

    Examples
    --------
    >>> import numpy as np, fastpamst_nb as fp
    >>> from fastpamst_nb.clustering import single_linkage
    >>> x = np.array([0.0, 0.1, 0.2, 5.0, 5.1, 9.0])
    >>> tree = fp.exact_mst(np.abs(x[:, None] - x[None, :]))
    >>> single_linkage(tree, 3).tolist()
    [0, 0, 0, 1, 1, 2]
    """
    n, edges = _check_tree(tree)
    if isinstance(n_clusters, (bool, np.bool_)) or not isinstance(n_clusters, numbers.Integral):
        raise TypeError(f"n_clusters must be an int, got {type(n_clusters).__name__}")
    n_clusters = int(n_clusters)
    if not 1 <= n_clusters <= n:
        raise ValueError(f"n_clusters must satisfy 1 <= n_clusters <= n_vertices = {n}, got {n_clusters}")
    w = _tree_weights(tree, n, weights, metric, p)
    n_cut = n_clusters - 1
    # heaviest first for minimum trees, lightest first for maximum trees; stable => release order on ties
    key = w if tree.info.get("maximum", False) else -w
    order = np.argsort(key, kind="stable")
    kept = edges[order[n_cut:]]
    A = sp.coo_matrix((np.ones(kept.shape[0]), (kept[:, 0], kept[:, 1])), shape=(n, n)).tocsr()
    n_comp, raw = connected_components(A, directed=False)
    # renumber clusters by their smallest vertex
    _, first = np.unique(raw, return_index=True)
    rank = np.empty(n_comp, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(n_comp, dtype=np.int64)
    return rank[raw]


def linkage_matrix(tree, weights=None, *, metric=None, p=None):
    """The scipy linkage matrix of the single-linkage hierarchy of a spanning tree.

    Merging the tree's edges from the lightest to the heaviest (Kruskal's order)
    builds the single-linkage dendrogram of a minimum spanning tree (Gower &
    Ross 1969). The result is in the format of ``scipy.cluster.hierarchy.linkage``,
    so ``fcluster``, ``dendrogram``, ``cut_tree`` and friends take it.

    Parameters
    ----------
    tree : SpanningTree
        A spanning tree on n vertices (a minimum spanning tree of distances;
        a tree released with ``maximum=True`` needs distance ``weights``).
    weights : array_like of float, shape (n - 1,), or points (n, d) with ``metric``, optional
        The merge heights, one per edge of ``tree.edges`` (same order).
        Default ``tree.edge_weights``, the TRUE weights, which are not private:
        for a private dendrogram pass privately released weights, e.g.
        :func:`private_edge_weights` (its own rho), and never the true ones.
        With ``metric``: points X, the heights are their true distances.
    metric : str, optional
        A name of :data:`fastpamst_nb.metrics.METRICS`: ``weights`` is points.
    p : float, optional
        The exponent of ``metric="minkowski"``.

    Returns
    -------
    ndarray of float64, shape (n - 1, 4)
        Row i merges clusters ``Z[i, 0]`` < ``Z[i, 1]`` (ids < n are vertices,
        id n + k is the cluster formed by row k) at height ``Z[i, 2]`` into a
        cluster of ``Z[i, 3]`` vertices. Heights are the weights sorted
        (stable: ties in release order), with negative ones (noised weights
        of short edges can be) raised to 0, as scipy requires; the merge
        order still follows the weights.

    Raises
    ------
    TypeError
        ``tree`` is not a SpanningTree.
    ValueError
        Weights of the wrong shape, with NaN, a tree without true weights and
        no ``weights``, or a maximum tree without ``weights``.

    Notes
    -----
    O(n log n): a sort and a union-find. Post-processing of the tree and the
    weights: private when both are.

    Examples
    --------
    >>> import numpy as np, fastpamst_nb as fp
    >>> from scipy.cluster.hierarchy import fcluster
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [9.0]])
    >>> Z = fp.linkage_matrix(fp.exact_mst(X, metric="euclidean"))
    >>> fcluster(Z, 3, criterion="maxclust").tolist()
    [1, 1, 1, 2, 2, 3]
    """
    n, edges = _check_tree(tree)
    if weights is None and metric is None and tree.info.get("maximum", False):
        raise ValueError("tree is a maximum spanning tree (similarities: large = close), but a linkage "
                         "matrix needs distances; pass weights= as distances, e.g. w.max() - w")
    w = _tree_weights(tree, n, weights, metric, p)
    order = np.argsort(w, kind="stable")
    parent = np.arange(2 * n - 1, dtype=np.int64)  # union-find over cluster ids

    def find(a):
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:  # path compression
            parent[a], a = root, parent[a]
        return root

    size = np.ones(2 * n - 1, dtype=np.int64)
    Z = np.empty((n - 1, 4))
    for i, e in enumerate(order):
        a, b = find(edges[e, 0]), find(edges[e, 1])
        new = n + i
        parent[a] = parent[b] = new
        size[new] = size[a] + size[b]
        Z[i] = (min(a, b), max(a, b), max(float(w[e]), 0.0), size[new])
    return Z


def private_edge_weights(tree, rho=None, sensitivity=None, *, epsilon=None, delta=None, rng=None):
    """Gaussian-noised weights of a released tree's edges (rho-zCDP), for cutting it privately.

    Parameters
    ----------
    tree : SpanningTree
        A released tree (its edge set is already public), with its true
        weights (``tree.has_true_weights``; not a tree loaded from a file
        saved without them).
    rho : float, optional
        zCDP budget of this release (> 0); or give ``epsilon`` and ``delta``
        instead. It composes additively with the tree's own: releasing a tree
        with rho_1 and these weights with rho_2 is (rho_1 + rho_2)-zCDP.
    sensitivity : float
        l_inf sensitivity Delta of every weight (> 0, in the units of the
        tree's weights). Required.
    epsilon, delta : float, optional
        The budget as (epsilon, delta)-DP instead of ``rho`` (epsilon > 0,
        0 < delta < 1), converted to the largest rho that guarantees it with
        :func:`fastpamst_nb.privacy.resolve_rho` (the CKS conversion).
    rng : None, int, numpy.random.SeedSequence, BitGenerator or Generator (SPEC 7)
        Source of the noise; ``None`` (fresh entropy) for a real release.

    Returns
    -------
    ndarray of float64, shape (n - 1,)
        ``tree.edge_weights + N(0, sigma^2)`` in the order of ``tree.edges``
        (weights' units), with ``sigma = Delta * sqrt((n - 1) / (2 rho))``: the
        n - 1 weights each move by at most Delta, so their l2 sensitivity is
        Delta sqrt(n - 1) (the Gaussian mechanism, Bun & Steinke 2016,
        Prop. 1.6). Empty for a single-vertex tree.

    Raises
    ------
    TypeError
        If ``tree`` is not a SpanningTree, ``sensitivity`` is missing, or a
        budget argument is not a real number.
    ValueError
        If no budget or both ``rho`` and ``(epsilon, delta)`` are given, a
        budget or ``sensitivity`` is not finite and positive, ``delta`` is
        not in (0, 1), or the tree has no true weights.

    Examples
    --------
    >>> import numpy as np, fastpamst_nb as fp
    >>> x = np.array([0.0, 0.1, 0.2, 5.0, 5.1, 9.0])
    >>> D = np.abs(x[:, None] - x[None, :])
    >>> tree = fp.fast_pamst(D, rho=10.0, sensitivity=0.01, rng=0)
    >>> w = fp.private_edge_weights(tree, rho=10.0, sensitivity=0.01, rng=1)   # total rho = 20
    >>> w.shape
    (5,)
    >>> w = fp.private_edge_weights(tree, epsilon=1.0, delta=1e-6, sensitivity=0.01, rng=1)
    """
    n, _ = _check_tree(tree)
    _require_inputs("private_edge_weights", rho, epsilon, delta, sensitivity)
    rho = privacy.resolve_rho(rho, epsilon, delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    gen = as_generator(rng)
    w = np.asarray(tree.edge_weights, dtype=np.float64)
    if np.isnan(w).any():
        raise ValueError("tree has no true weights (NaN: unpickled, or loaded from a file saved "
                         "without include_true_weights=True); noise the weights of the original "
                         "tree instead")
    if n < 2:
        return w.copy()
    sigma = privacy.gaussian_sigma(rho, sensitivity, n - 1)
    return w + gen.normal(0.0, sigma, size=w.shape)


def adjusted_rand_index(labels_a, labels_b):
    """Adjusted Rand index of two clusterings of the same n items (Hubert & Arabie 1985).

    Parameters
    ----------
    labels_a, labels_b : array_like (n,)
        Cluster labels (any hashable values), e.g. from :func:`single_linkage`.

    Returns
    -------
    float
        1.0 for identical partitions (up to relabelling), about 0 for independent
        ones, negative when they agree less than chance. 1.0 when both put every
        item in one cluster (or every item alone). O(n log n).

    Examples
    --------
    >>> import fastpamst_nb as fp
    >>> fp.adjusted_rand_index([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    """
    a = np.asarray(labels_a).ravel()
    b = np.asarray(labels_b).ravel()
    if a.shape != b.shape:
        raise ValueError(f"labels_a and labels_b must label the same items, got {a.size} and {b.size} labels")
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    table = sp.coo_matrix((np.ones(a.size), (ia.ravel(), ib.ravel()))).tocsr()
    table.sum_duplicates()

    def pairs(x):
        x = np.asarray(x, dtype=np.float64)
        return float((x * (x - 1) / 2).sum())

    both = pairs(table.data)
    rows = pairs(np.asarray(table.sum(axis=1)).ravel())
    cols = pairs(np.asarray(table.sum(axis=0)).ravel())
    total = a.size * (a.size - 1) / 2
    expected = rows * cols / total if total else 0.0
    top = (rows + cols) / 2 - expected
    return 1.0 if top == 0 else (both - expected) / top
