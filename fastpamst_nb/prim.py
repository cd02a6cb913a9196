"""Prim drivers: the exact MST kernels and the Fast-PAMST driver.

Every driver *maximizes* a score ``sgn * w`` (``sgn = -1`` for a minimum
spanning tree, ``+1`` for a maximum one), so one kernel serves both problems.
Drivers return ``edges`` (n - 1, 2) as (tree vertex, new vertex) in selection
order; dense drivers read row ``v`` of W when vertex ``v`` joins the tree (W is
symmetric and C-contiguous, so the read is sequential), CSR drivers read
``indices/data[indptr[v]:indptr[v+1]]``.
"""

import numpy as np
from numba import njit

from .core import CACHE, jit_only
from .sampler import rnm_steps


# ----------------------------------------------------------------------------
# exact Prim
# ----------------------------------------------------------------------------

@njit(cache=CACHE, nogil=True)
def prim_dense_exact(W, start, sgn):
    """Exact O(n^2) Prim on the complete graph of W, maximizing sgn * w.

    The unvisited vertices are kept in ``rest`` in increasing order, with their
    best score and its tree end at the same position (``best``, ``parent``), so
    step t touches only the n - t candidates and reads row v of W in address
    order: the hardware prefetcher streams the row. (A swap-remove order reads it
    at random, and measured about twice as slow.)
    The vertex that joins is removed by shifting the positions after it down by
    one inside the same loop, so the order costs no extra pass. Ties go to the
    smallest vertex.
    """
    n = W.shape[0]
    r = n - 1
    rest = np.empty(r, dtype=np.int64)
    best = np.empty(r)
    parent = np.empty(r, dtype=np.int64)
    edges = np.empty((max(r, 0), 2), dtype=np.int64)
    if r <= 0:
        return edges
    row = W[start]
    top = -np.inf
    arg = 0
    k = 0
    for u in range(n):
        if u != start:
            rest[k] = u
            best[k] = sgn * np.float64(row[u])
            parent[k] = start
            # '>' never holds against -inf: a score of -inf (a noisy overflow) still gets arg 0
            if best[k] > top:
                top = best[k]
                arg = k
            k += 1
    for step in range(n - 1):
        v = rest[arg]
        edges[step, 0] = parent[arg]
        edges[step, 1] = v
        row = W[v]
        gone = arg
        top = -np.inf
        arg = 0
        for k in range(gone):  # before the removed position: in place
            s = sgn * np.float64(row[rest[k]])
            b = best[k]
            if s > b:
                b = s
                best[k] = s
                parent[k] = v
            if b > top:
                top = b
                arg = k
        for k in range(gone + 1, r):  # after it: shifted down by one
            u = rest[k]
            s = sgn * np.float64(row[u])
            b = best[k]
            p = parent[k]
            if s > b:
                b = s
                p = v
            rest[k - 1] = u
            best[k - 1] = b
            parent[k - 1] = p
            if b > top:
                top = b
                arg = k - 1
        r -= 1
    return edges


@jit_only
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] >= keys[i]:
            break
        keys[p], keys[i] = keys[i], keys[p]
        vals[p], vals[i] = vals[i], vals[p]
        i = p
    return size + 1


@jit_only
def _heap_pop(keys, vals, size):
    """Remove the max; return (key, val, new size)."""
    key = keys[0]
    val = vals[0]
    size -= 1
    keys[0] = keys[size]
    vals[0] = vals[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] > keys[c]:
            c += 1
        if keys[i] >= keys[c]:
            break
        keys[c], keys[i] = keys[i], keys[c]
        vals[c], vals[i] = vals[i], vals[c]
        i = c
    return key, val, size


@njit(cache=CACHE, nogil=True)
def prim_csr_exact(indptr, indices, data, start, sgn):
    """Exact O(m log n) Prim on a symmetric CSR graph, maximizing sgn * w.

    A lazy binary max-heap of CSR positions: an entry is pushed when it improves
    its endpoint's best score and skipped when popped stale. Returns
    ``(edges, pos)`` with ``pos`` the CSR position of each tree edge.
    """
    n = indptr.shape[0] - 1
    best = np.full(n, -np.inf)
    reached = np.zeros(n, dtype=np.bool_)
    visited = np.zeros(n, dtype=np.bool_)
    cap = indices.shape[0] + 1
    keys = np.empty(cap)
    vals = np.empty(cap, dtype=np.int64)
    size = np.int64(0)  # not a literal 0: that would compile the heap kernels twice
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    pos = np.empty(max(n - 1, 0), dtype=np.int64)
    # row[p] = the row a CSR position belongs to, so a popped position names both ends
    row = np.empty(indices.shape[0], dtype=np.int64)
    for a in range(n):
        for p in range(indptr[a], indptr[a + 1]):
            row[p] = a
    v = start
    visited[v] = True
    for step in range(n - 1):
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if not visited[u]:
                s = sgn * data[p]
                if s > best[u] or not reached[u]:
                    best[u] = s
                    reached[u] = True
                    size = _heap_push(keys, vals, size, s, p)
        while True:
            key, p, size = _heap_pop(keys, vals, size)
            u = indices[p]
            if not visited[u] and key == best[u]:
                break
        visited[u] = True
        edges[step, 0] = row[p]
        edges[step, 1] = u
        pos[step] = p
        v = u
    return edges, pos


# ----------------------------------------------------------------------------
# Fast-PAMST: Prim whose selection is the discretized grouped report-noisy-max
# ----------------------------------------------------------------------------

@njit(cache=CACHE, nogil=True)
def prim_dense_private(q, W, visited, edges, step0, n_steps, v, key_rate, theta, bucket_width, rng, stats):
    """Steps ``step0 .. step0 + n_steps - 1`` of Fast-PAMST on the complete graph of W
    (q built by ``gq_build``); ``v`` is the vertex that joins the tree first (the
    start, or the last vertex selected). Returns the next vertex to join.

    When v joins the tree, row v of W is read once: edges to unvisited vertices
    join the cut (one scattered append), edges to visited ones leave it (a
    counter decrement; their slots die lazily). Then one private selection
    (``sampler.rnm_steps``, the one selection path, which runs the chunk's steps on the
    queue's arrays read off once). The caller runs the steps in chunks so that a long
    release can be interrupted.
    """
    no_int = np.empty(0, dtype=np.int64)
    return rnm_steps(q.layout, q.keys, q.counts, q.store, q.cut, W, no_int, no_int, np.empty(0),
                     visited, edges, step0, n_steps, v, key_rate, theta, bucket_width, rng, stats, np.int64(0))


@njit(cache=CACHE, nogil=True)
def prim_csr_private(q, graph, visited, edges, step0, n_steps, v, key_rate, theta, bucket_width,
                     rng, stats):
    """As :func:`prim_dense_private` on a symmetric CSR topology: ``graph``, a sparse
    :class:`fastpamst_nb.graph.Graph` (its ``indptr``, ``indices``, ``data`` are read).

    The steps are ``sampler.rnm_steps``'s, the dense driver's path: a step calls
    nothing that receives an array but the rare binomial of a stop that draws
    candidates (docs/design.rst, One selection path).
    """
    return rnm_steps(q.layout, q.keys, q.counts, q.store, q.cut, np.zeros((0, 0)), graph.indptr,
                     graph.indices, graph.data, visited, edges, step0, n_steps, v, key_rate, theta,
                     bucket_width, rng, stats, np.int64(0))
