"""Uniformly random spanning trees: the "learned nothing" line of :func:`fastpamst_nb.plan`.

A release whose excess weight is no better than that of a spanning tree drawn
uniformly at random from the public topology has learned nothing about the
weights. Wilson's algorithm (Wilson 1996, "Generating random spanning trees more
quickly than the cover time") draws such a tree exactly: loop-erased random walks
from each vertex not yet in the tree until they hit it. On the complete graph a
walk step is one uniform draw among the n - 1 other vertices, so a tree costs
O(n) expected steps; on a sparse graph the mean hitting time.

The kernels take the graph's storage (:class:`fastpamst_nb.graph.Graph`: a dense
matrix means the complete graph, else the symmetric CSR arrays) and a numpy
Generator; edges come out as an (n - 1, 2) int64 array, child then parent
(towards the root, vertex 0).
"""

import numpy as np
from numba import njit

from .core import CACHE


@njit(cache=CACHE)
def rt_step_dense(n, u, x):
    """The neighbour of ``u`` on the complete graph for a uniform ``x`` in [0, 1)."""
    v = int(x * (n - 1))
    if v > n - 2:  # x * (n - 1) rounded up to n - 1
        v = n - 2
    return v + 1 if v >= u else v


@njit(cache=CACHE)
def rt_wilson(n, dense, indptr, indices, gen):
    """One uniformly random spanning tree (Wilson's algorithm), rooted at vertex 0.

    Parameters
    ----------
    n : int
        Number of vertices (>= 1).
    dense : bool
        True: the complete graph (``indptr``/``indices`` unused).
    indptr, indices : int64 arrays
        Symmetric CSR pattern without diagonal (sparse graphs); must be connected.
    gen : numpy.random.Generator

    Returns
    -------
    ndarray (n - 1, 2) int64
        Edges (child, parent).
    """
    in_tree = np.zeros(n, dtype=np.bool_)
    parent = np.full(n, -1, dtype=np.int64)
    in_tree[0] = True
    for i in range(1, n):
        # the walk from i records the last exit of each vertex: following it from i
        # erases the loops (Wilson's cycle popping)
        u = i
        while not in_tree[u]:
            x = gen.random()
            if dense:
                v = rt_step_dense(n, u, x)
            else:
                lo = indptr[u]
                deg = indptr[u + 1] - lo
                k = int(x * deg)
                if k >= deg:
                    k = deg - 1
                v = indices[lo + k]
            parent[u] = v
            u = v
        u = i
        while not in_tree[u]:
            in_tree[u] = True
            u = parent[u]
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    for i in range(1, n):
        edges[i - 1, 0] = i
        edges[i - 1, 1] = parent[i]
    return edges


def random_spanning_tree(graph, gen):
    """Edges of a uniformly random spanning tree of a validated ``graph`` (any weights ignored).

    Parameters
    ----------
    graph : fastpamst_nb.graph.Graph
        Connected (the validation guarantees it).
    gen : numpy.random.Generator

    Returns
    -------
    ndarray (n - 1, 2) int64
    """
    return rt_wilson(graph.n, graph.dense, graph.indptr, graph.indices, gen)
