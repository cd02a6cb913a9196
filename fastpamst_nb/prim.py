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
from .cutqueue import _rank_group as rank_group, code_ends, gq_join, gq_update, slot_pack
from .keys import discretize
from .sampler import rnm_select_roles


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
    counter decrement; their slots die lazily). Then one private selection.
    The caller runs the steps in chunks so that a long release can be interrupted.
    """
    n = W.shape[0]
    lay, keys, counts, st, cut = q.layout, q.keys, q.counts, q.store, q.cut
    for step in range(step0, step0 + n_steps):
        gq_join(lay, cut, v, visited)
        gq_update(q, W[v], v, visited, v * n)
        code = rnm_select_roles(lay, keys, counts, st, cut, W, visited, key_rate, theta,
                                bucket_width, rng, stats)
        a, b = code_ends(code)
        edges[step, 0] = a
        edges[step, 1] = b
        v = b
    return v


@njit(cache=CACHE, nogil=True)
def prim_csr_private(q, graph, visited, edges, step0, n_steps, v, key_rate, theta, bucket_width,
                     rng, stats):
    """As :func:`prim_dense_private` on a symmetric CSR topology: ``graph``, a sparse
    :class:`fastpamst_nb.graph.Graph` (its ``indptr``, ``indices``, ``data`` are read)."""
    indptr, indices, data = graph.indptr, graph.indices, graph.data
    no_dense = np.zeros((0, 0))
    # The queue's arrays are read off once per chunk and the cut update (cutqueue's
    # gq_update for dense graphs) is written here, flat: a per-step call passing the
    # queue, or an inlined helper taking its arrays, paid two atomic reference counts
    # per array at every step (docs/design.rst, Where the time goes, sparse)
    lay, keys, counts, st, cut = q.layout, q.keys, q.counts, q.store, q.cut
    slots, start, fill = st.slots, st.start, st.fill
    bucket, block, group, total, rank = counts.bucket, counts.block, counts.group, counts.total, keys.rank
    bshift, block_shift, group_counts, layered = lay.bucket_shift, lay.block_shift, lay.group_counts, lay.layered
    direct, sgn, s, inv, kmin = lay.direct, lay.sgn, lay.s, lay.inv, lay.kmin
    for step in range(step0, step0 + n_steps):
        visited[v] = True  # gq_join: a sparse queue keeps no cut sides
        # v's CSR row joins or leaves the cut; a sparse edge's code is its CSR position
        # in the row of its visited end
        delta = 0
        for e in range(indptr[v], indptr[v + 1]):
            if direct:
                g = discretize(data[e], sgn, s, inv) - kmin
            else:
                g = rank_group(rank[e], data[e], sgn, s, inv, kmin, bshift)
            b = g >> bshift
            if visited[indices[e]]:
                d = -1
            else:
                d = 1
                slots[start[b] + fill[b]] = slot_pack(g - (b << bshift), e)
                fill[b] += 1
            if group_counts:
                group[g] += d
            bucket[b] += d
            if layered:
                block[b >> block_shift] += d
            delta += d
        total[0] += delta
        p = rnm_select_roles(lay, keys, counts, st, cut, no_dense, visited, key_rate, theta,
                             bucket_width, rng, stats)
        b = indices[p]
        edges[step, 0] = np.searchsorted(indptr, p, side="right") - 1
        edges[step, 1] = b
        v = b
    return v
