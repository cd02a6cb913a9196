"""The grouped cut queue: Prim's cut edges grouped by discretized score.

Design (``GroupQueue``, a namedtuple of flat arrays, with ``gq_*`` kernels):

* **Groups.** Each edge's score is ``s * key`` with ``key = floor(sgn * w / s)``
  (``sgn = -1``: minimum tree). Edges with equal keys form a group; groups are
  indexed 0..G-1 in increasing key order and ``key[g]`` stores each group's key.
  When the key range is small against m (``K <= m/4 + 2**18``) a group index is
  ``key - kmin`` (direct addressing, empty groups allowed, nothing stored per
  edge); otherwise the distinct keys are found by an LSD radix sort (never a
  comparison sort of m keys) and each edge's group rank is stored (``rank``).
* **Edge store.** ``bag[start[g]:start[g+1]]`` are group g's slots; capacity is
  the number of edges with that key (a histogram), so the store is built in
  O(m + G) and holds every edge at most once.
* **Lazy deletion.** The paper swaps an edge out of its group interval and keeps
  a position index; at n = 5000 that measured ~12x the cost of a whole exact
  Prim (random writes; NOTES section 5). Here an edge joining the cut is
  *appended* to its group (one scattered write, ``fill[g] += 1``) and an edge
  leaving it only decrements the counters. Counts are therefore exact at all
  times, while dead slots (both endpoints visited) stay until the group is
  picked: a pick draws a uniformly random slot, rejects dead ones, and first
  compacts the group if more than half of its slots are dead, so a pick costs
  O(1) expected and compaction O(1) amortized per edge. A uniformly random
  *active* member is all exactness needs, and that is what rejection gives.
* **Block layers.** ``cnt`` holds the active counts of four layers laid end to
  end (``off[l]`` is layer l's offset): layer 0 per group, layer l per block of
  F**l groups, F = 2**sh with F**4 >= G (the paper's four layers of about
  G**(1/4)). They find the best non-empty group, the count of any aligned block,
  and the group holding the r-th active edge of a block, each in O(4 F).
* **Codes.** A cut edge is stored as ``a * n + b`` with ``a`` visited and ``b``
  unvisited when it joined; it is alive while ``b`` is unvisited.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .core import CACHE, require_memory

GroupQueue = namedtuple(
    "GroupQueue",
    ["n", "sgn", "s", "kmin", "direct", "rank", "key", "start", "fill", "bag", "cnt", "off", "sh"],
)

# Direct addressing pays ~40 bytes per possible key; allow it while that stays well
# below the edge store itself.
_DIRECT_SLACK = 1 << 18
_KEY_LIMIT = 2.0 ** 62


@njit(cache=CACHE, nogil=True, inline="always")
def discretize(w, sgn, s):
    """The integer key floor(sgn * w / s); score = s * key."""
    return np.int64(math.floor(sgn * w / s))


@njit(cache=CACHE, nogil=True, inline="always")
def gq_group_of(q, w, idx):
    """Group of an edge of weight ``w`` at flat position ``idx`` (v*n+u dense, CSR position sparse)."""
    if q.direct:
        return discretize(w, q.sgn, q.s) - q.kmin
    return np.int64(q.rank[idx])


@njit(cache=CACHE, nogil=True, inline="always")
def _count_add(q, g, d):
    cnt = q.cnt
    off = q.off
    sh = q.sh
    cnt[g] += d
    cnt[off[1] + (g >> sh)] += d
    cnt[off[2] + (g >> (2 * sh))] += d
    cnt[off[3] + (g >> (3 * sh))] += d


@njit(cache=CACHE, nogil=True, inline="always")
def gq_insert(q, g, code):
    """An edge joins the cut: append its code to group g's slots."""
    q.bag[q.start[g] + q.fill[g]] = code
    q.fill[g] += 1
    _count_add(q, g, 1)


@njit(cache=CACHE, nogil=True, inline="always")
def gq_remove(q, g):
    """An edge leaves the cut: counters only, its slot dies lazily."""
    _count_add(q, g, -1)


@njit(cache=CACHE, nogil=True)
def gq_count(q, level, node):
    """Active edges in block ``node`` of layer ``level`` (level 4: all of them)."""
    if level == 4:
        total = 0
        for i in range(q.off[3], q.off[4]):
            total += q.cnt[i]
        return total
    return q.cnt[q.off[level] + node]


@njit(cache=CACHE, nogil=True)
def gq_top(q):
    """Index of the highest non-empty group, or -1 when the cut is empty."""
    cnt = q.cnt
    off = q.off
    F = 1 << q.sh
    j = -1
    for i in range(off[4] - off[3] - 1, -1, -1):
        if cnt[off[3] + i] > 0:
            j = i
            break
    if j < 0:
        return -1
    for level in range(2, -1, -1):
        size = off[level + 1] - off[level]
        i = min((j + 1) * F, size) - 1
        while cnt[off[level] + i] == 0:
            i -= 1
        j = i
    return j


@njit(cache=CACHE, nogil=True)
def gq_select(q, level, node, r):
    """Group holding the r-th (0-based, from the lowest group up) active edge of a block.

    ``level = 4`` (node 0) means the whole queue, so ranks below the count of
    groups 0..p select within that prefix. Requires r < the block's count.
    """
    cnt = q.cnt
    off = q.off
    sh = q.sh
    j = node
    for level_ in range(level - 1, -1, -1):
        i = off[level_] + (j << sh)
        while r >= cnt[i]:
            r -= cnt[i]
            i += 1
        j = i - off[level_]
    return j


@njit(cache=CACHE, nogil=True)
def gq_take_edge(q, g, visited, rng):
    """A uniformly random active edge of group g (its code); the group must be non-empty.

    Compacts the group first when more than half of its slots are dead, so the
    rejection loop below takes fewer than two draws on average.
    """
    bag = q.bag
    n = q.n
    lo = q.start[g]
    f = q.fill[g]
    if f > 2 * q.cnt[g]:
        k = lo
        for i in range(lo, lo + f):
            code = bag[i]
            if not visited[code % n]:
                bag[k] = code
                k += 1
        f = k - lo
        q.fill[g] = f
    while True:
        code = np.int64(bag[lo + np.int64(rng.random() * f)])
        if not visited[code % n]:
            return code


# ----------------------------------------------------------------------------
# construction
# ----------------------------------------------------------------------------

def _layer_shift(G):
    """sh with (2**sh)**4 >= G, at least 1."""
    bits = max(int(G - 1).bit_length(), 1)
    return max(1, -(-bits // 4))


def _layer_offsets(G, sh):
    sizes = [G]
    for level in range(1, 4):
        sizes.append(((G - 1) >> (level * sh)) + 1)
    off = np.zeros(5, dtype=np.int64)
    off[1:] = np.cumsum(sizes)
    return off


@njit(cache=CACHE, nogil=True)
def _hist_dense_direct(W, sgn, s, kmin, G):
    h = np.zeros(G, dtype=np.int64)
    n = W.shape[0]
    for i in range(n):
        row = W[i]
        for j in range(i + 1, n):
            h[discretize(np.float64(row[j]), sgn, s) - kmin] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _hist_csr_direct(indptr, indices, data, sgn, s, kmin, G):
    h = np.zeros(G, dtype=np.int64)
    for a in range(indptr.shape[0] - 1):
        for p in range(indptr[a], indptr[a + 1]):
            if indices[p] > a:
                h[discretize(data[p], sgn, s) - kmin] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _keys_dense(W, sgn, s, kmin):
    """key - kmin of every upper-triangle edge, row by row."""
    n = W.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=np.uint64)
    k = 0
    for i in range(n):
        row = W[i]
        for j in range(i + 1, n):
            out[k] = np.uint64(discretize(np.float64(row[j]), sgn, s) - kmin)
            k += 1
    return out


@njit(cache=CACHE, nogil=True)
def _keys_csr(indptr, indices, data, sgn, s, kmin):
    out = np.empty(data.shape[0], dtype=np.uint64)
    for p in range(data.shape[0]):
        out[p] = np.uint64(discretize(data[p], sgn, s) - kmin)
    return out


@njit(cache=CACHE, nogil=True)
def radix_sort_u64(a, bits):
    """Sorted copy of ``a`` by an LSD radix sort on the low ``bits`` bits (16-bit digits)."""
    src = a.copy()
    dst = np.empty_like(src)
    count = np.empty(1 << 16, dtype=np.int64)
    shift = 0
    while shift < bits:
        count[:] = 0
        for x in src:
            count[(x >> np.uint64(shift)) & np.uint64(0xFFFF)] += 1
        total = 0
        for d in range(1 << 16):
            c = count[d]
            count[d] = total
            total += c
        for x in src:
            d = (x >> np.uint64(shift)) & np.uint64(0xFFFF)
            dst[count[d]] = x
            count[d] += 1
        src, dst = dst, src
        shift += 16
    return src


@njit(cache=CACHE, nogil=True)
def _distinct_sorted(a):
    if a.shape[0] == 0:
        return a.copy()
    k = 1
    for i in range(1, a.shape[0]):
        if a[i] != a[k - 1]:
            a[k] = a[i]
            k += 1
    return a[:k].copy()


@njit(cache=CACHE, nogil=True)
def _ranks_dense(W, sgn, s, kmin, distinct, rank):
    """rank[i*n+j] = rank[j*n+i] = index of the edge's key among the distinct keys."""
    n = W.shape[0]
    G = distinct.shape[0]
    h = np.zeros(G, dtype=np.int64)
    for i in range(n):
        row = W[i]
        for j in range(i + 1, n):
            x = np.uint64(discretize(np.float64(row[j]), sgn, s) - kmin)
            g = np.searchsorted(distinct, x)
            rank[i * n + j] = g
            rank[j * n + i] = g
            h[g] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _ranks_csr(indptr, indices, keys, distinct, rank):
    G = distinct.shape[0]
    h = np.zeros(G, dtype=np.int64)
    for a in range(indptr.shape[0] - 1):
        for p in range(indptr[a], indptr[a + 1]):
            g = np.searchsorted(distinct, keys[p])
            rank[p] = g
            if indices[p] > a:
                h[g] += 1
    return h


def _key_range(graph, sgn, s):
    lo, hi = sorted((sgn * graph.wmin / s, sgn * graph.wmax / s))
    if max(abs(lo), abs(hi)) >= _KEY_LIMIT:
        raise ValueError(
            f"the discretization step s = {s:g} is too fine for weights in "
            f"[{graph.wmin:g}, {graph.wmax:g}]: keys w/s exceed 2**62; use a larger "
            "discretization (it defaults to the sensitivity) or rescale the weights"
        )
    return int(math.floor(lo)), int(math.floor(hi))


def gq_build(graph, sgn, s):
    """Build an empty ``GroupQueue`` for every edge of ``graph`` (a ``Graph``).

    O(m + G) time: a histogram of keys and prefix sums (direct addressing), or
    a radix sort of the keys when their range is large. Checks the memory it
    needs before allocating.
    """
    n, m = graph.n, graph.m
    kmin, kmax = _key_range(graph, sgn, s) if m > 0 else (0, 0)
    K = kmax - kmin + 1
    direct = K <= m // 4 + _DIRECT_SLACK
    code_t = np.int32 if n * n < 2**31 else np.int64
    G_bound = K if direct else m
    need = m * np.dtype(code_t).itemsize + 40 * G_bound
    if not direct:
        rank_len = n * n if graph.dense else graph.data.shape[0]
        need += rank_len * np.dtype(code_t).itemsize + 24 * max(m, rank_len)
    require_memory(need, f"fast_pamst on n = {n}, m = {m}")

    if direct:
        G = K
        key = np.arange(kmin, kmax + 1, dtype=np.int64)
        rank = np.zeros(0, dtype=code_t)
        if graph.dense:
            hist = _hist_dense_direct(graph.W, sgn, s, kmin, G)
        else:
            hist = _hist_csr_direct(graph.indptr, graph.indices, graph.data, sgn, s, kmin, G)
    else:
        if graph.dense:
            keys = _keys_dense(graph.W, sgn, s, kmin)
        else:
            keys = _keys_csr(graph.indptr, graph.indices, graph.data, sgn, s, kmin)
        distinct = _distinct_sorted(radix_sort_u64(keys, max(int(K - 1).bit_length(), 1)))
        G = distinct.shape[0]
        key = distinct.astype(np.int64) + kmin
        if graph.dense:
            del keys
            rank = np.zeros(n * n, dtype=code_t)
            hist = _ranks_dense(graph.W, sgn, s, kmin, distinct, rank)
        else:
            rank = np.empty(graph.data.shape[0], dtype=code_t)
            hist = _ranks_csr(graph.indptr, graph.indices, keys, distinct, rank)
    start = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(hist, out=start[1:])
    sh = _layer_shift(G)
    off = _layer_offsets(G, sh)
    return GroupQueue(
        n=np.int64(n),
        sgn=np.float64(sgn),
        s=np.float64(s),
        kmin=np.int64(kmin),
        direct=bool(direct),
        rank=rank,
        key=key,
        start=start,
        fill=np.zeros(G, dtype=np.int64),
        bag=np.empty(max(m, 1), dtype=code_t),
        cnt=np.zeros(off[4], dtype=np.int64),
        off=off,
        sh=np.int64(sh),
    )
