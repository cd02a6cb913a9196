"""Prim drivers: the exact MST kernels and the Fast-PAMST driver.

Every driver *maximizes* a score ``sgn * w`` (``sgn = -1`` for a minimum
spanning tree, ``+1`` for a maximum one), so one kernel serves both problems.
Drivers return ``edges`` (n - 1, 2) as (tree vertex, new vertex) in selection
order; dense drivers read row ``v`` of W when vertex ``v`` joins the tree (W is
symmetric and C-contiguous, so the read is sequential), CSR drivers read
``indices/data[indptr[v]:indptr[v+1]]``.
"""

import math

import numpy as np
from numba import njit

from .core import CACHE, jit_only
from .cutqueue import (
    BLOCK, BUCKET, ROOT, _rank_group as rank_group, slot_code, slot_offset,
    slot_pack,
)
from .keys import discretize
from .sampler import (
    _HASH_MUL, _HASH_SHIFT, ST_BLOCK_DRAWS, ST_BLOCK_EXTRA, ST_BOTTOM_CALLS, ST_BOTTOM_K, ST_BOTTOM_WINS,
    ST_NODES, ST_STEPS, _seen_set, binomial, extra_share, rnm_select_roles, rnm_steps,
)


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
        # the row indexed by uint64 and the loop after the position through views from
        # it: an index numba cannot prove >= 0 gets a negative-index fix-up per access
        for k in range(gone):  # before the removed position: in place
            s = sgn * np.float64(row[np.uint64(rest[k])])
            b = best[k]
            if s > b:
                b = s
                best[k] = s
                parent[k] = v
            if b > top:
                top = b
                arg = k
        rs = rest[gone + 1:r]  # after it: shifted down by one
        bs = best[gone + 1:r]
        ps = parent[gone + 1:r]
        rd = rest[gone:r]
        bd = best[gone:r]
        pd = parent[gone:r]
        for q in range(r - gone - 1):
            u = rs[q]
            s = sgn * np.float64(row[np.uint64(u)])
            b = bs[q]
            p = ps[q]
            if s > b:
                b = s
                p = v
            rd[q] = u
            bd[q] = b
            pd[q] = p
            if b > top:
                top = b
                arg = gone + q
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
    return rnm_steps(q.layout, q.keys, q.counts, q.store, q.cut, W, visited, edges, step0, n_steps, v,
                     key_rate, theta, bucket_width, rng, stats, np.int64(0))


# the seen set of prim_csr_private's distinct draws is this table, reused, while it
# stays at most half full (sampler._seen_set's rule; any such size gives the same answers)
_SEEN_SMALL = 64


@njit(cache=CACHE, nogil=True)
def prim_csr_private(q, graph, visited, edges, step0, n_steps, v, key_rate, theta, bucket_width,
                     rng, stats):
    """As :func:`prim_dense_private` on a symmetric CSR topology: ``graph``, a sparse
    :class:`fastpamst_nb.graph.Graph` (its ``indptr``, ``indices``, ``data`` are read).

    The selection is ``sampler.rnm_steps``'s walk written out for a sparse queue
    (every bucket materialized and counted, no wide buckets, no cut sides), in this
    body, on the queue's arrays read off once per chunk: the same draws in the same
    order, so the same trees (``tests/test_sampler.py`` compares whole releases). Run
    through ``rnm_steps`` itself, sparse releases measured 10-40% slower on the
    compressed and layered shapes (docs/design.rst, One selection path), so this
    twin stays until that is understood. A call, or an inlined helper, that receives arrays
    pays two atomic reference counts per array (docs/design.rst, Where the time goes,
    sparse); here a step calls nothing that takes an array but the rare binomial
    tail. Queues with per-group counts (``bucket_width < 0``, a test setting) take
    ``rnm_select_roles`` itself.
    """
    indptr, indices, data = graph.indptr, graph.indices, graph.data
    no_dense = np.zeros((0, 0))
    lay, keys, counts, st, cut = q.layout, q.keys, q.counts, q.store, q.cut
    slots, start, fill, ends = st.slots, st.start, st.fill, st.ends
    bucket, block, group, total, rank = counts.bucket, counts.block, counts.group, counts.total, keys.rank
    key_base = keys.key
    bshift, block_shift, group_counts, layered = lay.bucket_shift, lay.block_shift, lay.group_counts, lay.layered
    direct, sgn, s, inv, kmin = lay.direct, lay.sgn, lay.s, lay.inv, lay.kmin
    n_buckets, n_blocks, n_groups = lay.n_buckets, lay.n_blocks, lay.n_groups
    r = key_rate
    low = (np.int64(1) << bshift) - 1  # a group's offset in its bucket
    blk_w = bshift + block_shift  # log2 of the groups a block spans
    if lay.dense or lay.lazy_counts or lay.wide or st.materialized[0] != 0:
        raise AssertionError("prim_csr_private: not a sparse queue")
    # the seen set of a selection's distinct draws (sampler._seen_set), reused while it
    # is small: a table of any power-of-two size at most half full gives the same answers
    seen_small = np.full(_SEEN_SMALL, -1, dtype=np.int64)
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
        if group_counts:
            p = rnm_select_roles(lay, keys, counts, st, cut, no_dense, visited, key_rate, theta,
                                 bucket_width, rng, stats)
        else:
            # ---- one selection: sampler.rnm_select_roles for this queue --------------
            stats[ST_STEPS] += 1
            # gq_top: the top group of the best non-empty bucket
            if total[0] <= 0:
                raise AssertionError("prim_csr_private: the cut is empty (is the graph connected?)")
            bt = n_buckets - 1
            if layered:
                j = n_blocks - 1
                while j >= 0 and block[j] == 0:
                    j -= 1
                bt = min((j + 1) << block_shift, n_buckets) - 1
            while bt >= 0 and bucket[bt] == 0:
                bt -= 1
            if bt < 0:
                raise AssertionError("gq_top: the cut is not empty but every counter is 0")
            pg = min((bt + 1) << bshift, n_groups) - 1
            k0 = kmin + pg if direct else key_base[pg >> bshift] + (pg & low)
            remaining = total[0]
            best = -np.inf
            win_code = np.int64(-1)
            first = True
            while remaining > 0:
                if pg < 0:
                    raise AssertionError("rnm_select: the walk left the queue; its counts are inconsistent")
                kp = kmin + pg if direct else key_base[pg >> bshift] + (pg & low)
                ktop = np.float64(kp - k0)
                t = 0.0
                zmax = 0.0
                # the bottom trick's count k (-1: the walk goes on); n_draw candidates
                # are drawn below, from ROOT (the bottom) or from the node (a carrier
                # and its extra members)
                n_draw = np.int64(0)
                if not first:
                    t = best - ktop
                    log_pt = -r * max(t, 0.0)
                    if remaining * math.exp(log_pt) < theta:
                        stats[ST_BOTTOM_CALLS] += 1
                        kb = binomial(remaining, math.exp(log_pt), rng)
                        stats[ST_BOTTOM_K] += kb
                        if kb == 0:
                            break
                        # kb distinct uniform edges of groups <= pg, each t + Exp(r)
                        level, node, c, n_draw = ROOT, np.int64(0), remaining, kb
                if n_draw == 0:
                    # the node: the largest aligned node whose top is pg (on the first
                    # step any node holding pg) that is empty or at most bucket_width
                    # noise units wide; without group counts a bucket always is
                    level = BUCKET
                    node = pg >> bshift
                    lo = node << bshift
                    if layered and (first or ((pg + 1) & ((np.int64(1) << blk_w) - 1)) == 0):
                        nd = pg >> blk_w
                        nlo = nd << blk_w
                        klo = kmin + nlo if direct else key_base[nlo >> bshift] + (nlo & low)
                        if block[nd] == 0 or r * np.float64(kp - klo) <= bucket_width:
                            level, node, lo = BLOCK, nd, nlo
                    c = block[node] if level == BLOCK else bucket[node]
                    first = False
                    stats[ST_NODES] += 1
                    remaining -= c
                    pg = lo - 1
                    if c == 0:
                        continue
                    # max_noise(c): S^-1(1 - U^(1/c))
                    u = rng.random()
                    while u == 0.0:
                        u = rng.random()
                    zmax = -math.log(-math.expm1(math.log(u) / c)) / r
                    if not ktop + zmax > best:
                        # neither the carrier nor the c - 1 smaller noises can win
                        continue
                    stats[ST_BLOCK_DRAWS] += 1
                    n_draw = np.int64(1)  # the carrier; its extra members follow
                # ---- n_draw distinct uniform active members of (level, node), c edges:
                # _take_below/_distinct_edge (gq_select, then gq_take of a whole bucket)
                bottom = level == ROOT
                carrier_phase = not bottom
                seen = seen_small
                if bottom and 2 * n_draw > _SEEN_SMALL:
                    seen = _seen_set(n_draw)
                n_seen = np.int64(0)
                tt = 0.0
                span = 0.0
                i = np.int64(0)
                tries = np.int64(0)
                while i < n_draw:
                    if not carrier_phase:
                        if n_seen >= c:
                            raise AssertionError("rnm_select: asked for more distinct edges than the node holds")
                        tries += 1
                        if tries > 64 * (c + 1):
                            raise AssertionError("rnm_select: no fresh edge found; the queue's counts are inconsistent")
                    # gq_select: the bucket of the rank-th active edge of the node
                    rk = np.int64(rng.random() * c)
                    if level == BUCKET:
                        bb = node
                    else:
                        j = np.int64(0)
                        if level == ROOT and layered:
                            while j < n_blocks and rk >= block[j]:
                                rk -= block[j]
                                j += 1
                            if j == n_blocks:
                                raise AssertionError("gq_select: rank beyond the cut's counts")
                            j = j << block_shift
                            end = min(j + (np.int64(1) << block_shift), n_buckets)
                        elif level == ROOT:
                            end = n_buckets
                        else:
                            j = node << block_shift
                            end = min(j + (np.int64(1) << block_shift), n_buckets)
                        while j < end and rk >= bucket[j]:
                            rk -= bucket[j]
                            j += 1
                        if j == end:
                            raise AssertionError("gq_select: rank beyond the node's counts")
                        bb = j
                    # gq_take of bucket bb, whole: compact when more than half is dead,
                    # then a uniformly random slot until one is alive
                    active = bucket[bb]
                    lo_s = start[bb]
                    if fill[bb] > 2 * active:
                        kk = lo_s
                        for x in range(lo_s, lo_s + fill[bb]):
                            slot = slots[x]
                            if not visited[ends[slot_code(slot)]]:
                                slots[kk] = slot
                                kk += 1
                        fill[bb] = kk - lo_s
                    f = fill[bb]
                    code = np.int64(-1)
                    for _ in range(1000):
                        slot = slots[lo_s + np.int64(rng.random() * f)]
                        if not visited[ends[slot_code(slot)]]:
                            code = slot_code(slot)
                            break
                    if code < 0:
                        # after 1000 misses (probability < 1e-57): one scan, which
                        # fails loudly if the counts are wrong
                        jj = np.int64(rng.random() * active)
                        for x in range(lo_s, lo_s + f):
                            slot = slots[x]
                            if not visited[ends[slot_code(slot)]]:
                                if jj == 0:
                                    code = slot_code(slot)
                                    break
                                jj -= 1
                        if code < 0:
                            raise AssertionError("gq_take: count exceeds the active edges of the range")
                    g = (bb << bshift) + slot_offset(slot)
                    if not carrier_phase:
                        # _seen_add: open addressing, -1 = free
                        mask = seen.shape[0] - 1
                        h = ((code * _HASH_MUL) >> _HASH_SHIFT) & mask
                        fresh = True
                        while seen[h] >= 0:
                            if seen[h] == code:
                                fresh = False
                                break
                            h = (h + 1) & mask
                        if not fresh:
                            continue
                        seen[h] = code
                        n_seen += 1
                    dk = (kmin + g if direct else key_base[g >> bshift] + (g & low)) - k0
                    if carrier_phase:
                        # _resolve: the carrier gets zmax; the c - 1 others matter only
                        # above t = best - ktop, a Binomial number of them, from the law
                        # doubly truncated to (t, zmax]
                        carrier_phase = False
                        val = np.float64(dk) + zmax
                        if val > best:
                            best = val
                            win_code = code
                        t = best - ktop
                        if c == 1 or t >= zmax:
                            break
                        tt, span, pc = extra_share(t, r, zmax)
                        kx = binomial(c - 1, pc, rng)
                        stats[ST_BLOCK_EXTRA] += kx
                        if kx == 0:
                            break
                        if 2 * (kx + 1) > _SEEN_SMALL:
                            seen = _seen_set(kx + 1)
                        mask = seen.shape[0] - 1
                        h = ((code * _HASH_MUL) >> _HASH_SHIFT) & mask
                        seen[h] = code
                        n_seen = 1
                        n_draw = 1 + kx
                        i = 1
                        tries = 0
                        continue
                    u = rng.random()
                    while u == 0.0:
                        u = rng.random()
                    if bottom:
                        # tail_noise: max(t, 0) + Exp(r), memoryless
                        val = np.float64(dk) + (max(t, 0.0) - math.log(u) / r)
                        if val > best:
                            best = val
                            win_code = code
                            stats[ST_BOTTOM_WINS] += 1
                    else:
                        # _extra_value
                        val = np.float64(dk) + (tt - math.log1p(-u * span) / r)
                        if val > best:
                            best = val
                            win_code = code
                    i += 1
                    tries = 0
                if n_seen > 0 and seen.shape[0] == _SEEN_SMALL:
                    for x in range(_SEEN_SMALL):
                        seen_small[x] = -1
                if bottom:
                    break
            if win_code < 0:
                raise AssertionError("rnm_select: no edge won; the queue's counts are inconsistent")
            p = win_code
        # the tree end is the row of CSR position p, found after the chunk's steps:
        # the next step needs only the new vertex
        edges[step, 0] = p
        edges[step, 1] = indices[p]
        v = indices[p]
    for step in range(step0, step0 + n_steps):
        # the row of CSR position p (np.searchsorted(indptr, p, side="right") - 1),
        # written as a scalar search (the call took the array); the searches of a chunk
        # are independent of each other and of the draws, so they overlap
        p = edges[step, 0]
        lo_r = np.int64(0)
        hi_r = indptr.shape[0]
        while lo_r < hi_r:
            mid = (lo_r + hi_r) >> 1
            if indptr[mid] <= p:
                lo_r = mid + 1
            else:
                hi_r = mid
        edges[step, 0] = lo_r - 1
    return v
