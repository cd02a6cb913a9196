"""The grouped cut queue: Prim's cut edges grouped by discretized score.

A ``GroupQueue`` is a namedtuple of flat arrays with ``gq_*`` kernels beside it.
The ``gq_*`` kernels are jit-only (``core.jit_only``: no Python entry point,
whose wrapper cost as much to compile as a kernel); ``gq_build``, which builds
the queue, is a Python function.

* **Groups.** An edge's score is ``s * key`` with ``key = floor(sgn * w / s)``
  (``sgn = -1``: minimum tree). Edges with equal keys form a group; groups are
  indexed 0..G-1 in increasing key order and ``gq_key(q, g)`` is each group's key.
  When the *buckets* of the key range are few against m (``B <= m/4 + 2**18``,
  B = K / 2**sh1 for a key range K) a group index is ``key - kmin`` (direct
  addressing: empty groups allowed, nothing stored per edge or per key, only
  O(B) per bucket), so a fine step or a wide weight range costs nothing as long
  as the range spans fewer than ~m/4 buckets of ``sigma`` noise units; otherwise
  the distinct keys are found by an LSD radix sort (never a comparison sort of
  m keys), stored in ``key``, and each edge's group rank is stored in ``rank``.
* **Buckets.** Groups are gathered in buckets of ``2**sh1`` consecutive groups,
  the widest whose key span r * (2**sh1 - 1) stays below the sampler's ``sigma``
  (r: noise rate in key units). A bucket's maximum noise is one draw and its
  carrier is looked up only when it could win, so the sampler works bucket by
  bucket, not group by group.
* **Wide buckets** (``wide``, dense only). When that makes more than 16,384
  buckets (weights x 1000, a fine step), the counters would be a random write
  per edge event into megabytes. Then buckets are widened until at most 16,384
  cover the key range (their counters stay in cache) and each is cut into
  sub-buckets of ``2**shf`` groups, the noise-wide buckets above. Nothing is
  counted per sub-bucket: a slot stores its sub-bucket (instead of its group
  offset, which the edge's weight gives back when a draw needs it), and the
  sampler splits the one or two wide buckets it reaches by partitioning their
  compacted slots (``sampler._walk_wide``), O(their slots) per selection. A
  key range whose buckets crowd (one holding more than 16 times the mean and
  4096 edges) keeps the layouts below, so that no selection splits a bucket
  holding most of the cut. ``openb`` = (bucket, unprocessed slots) while the
  sampler is inside one.
* **Edge store.** Each bucket owns the slots ``bag[start[b]:start[b+1]]``, as many
  as it has edges (a histogram, so the store is built in O(m + G) and holds each
  edge once). A slot packs the edge's group offset in its bucket (high bits) and
  its code (low 40 bits): ``a << 20 | b`` dense (a visited, b not, when it
  joined), the CSR position sparse.
* **Lazy deletion.** The paper swaps an edge out of its group's interval and keeps
  a position index per edge; at n = 5000 that measured ~12x the cost of a whole
  exact Prim (random writes; docs/design.rst, Lazy deletion, and why). Here an edge joining the cut is
  *appended* to its bucket and an edge leaving it only decrements counters.
  Counts are exact at all times; dead slots (both endpoints visited) stay until
  the bucket is sampled from: a pick draws a uniformly random slot, rejects dead
  ones (and, for a pick inside one group, other groups), and first compacts the
  bucket when more than half of its slots are dead, so compaction costs O(1)
  amortized per edge. A uniformly random *active* member is all exactness needs,
  and that is what rejection gives.
* **Lazy materialization (dense).** The sampler reads slots only of the few
  buckets near the top of the cut, so a dense queue starts with no bucket
  materialized (``thr[0] = B``): joining edges of buckets below ``thr`` are only
  counted. When a pick needs a bucket below ``thr``, one pass over the current cut
  (``inside`` x ``rest``) fills it and at least as many buckets again
  (``gq_materialize``), so there are O(log B) passes; a bottom candidate drawn
  from most of the cut is a uniform (visited, unvisited) pair instead
  (``gq_take_cut``). At n = 5000 the top 16 of 196 buckets end up materialized;
  at n = 30000 this cut the time from 30 s to 17 s and the memory by 2.8 GB.
  Sparse queues materialize everything (``thr[0] = 0``).
* **Counters.** ``cnt[:B]`` holds each bucket's active count; above 16384 buckets a
  second layer (``cnt[off[1]:]``, blocks of ``2**sh2`` ~ sqrt(B) buckets) keeps the
  best non-empty bucket and rank selection at O(sqrt(B)) (the paper's layered
  blocks, with two layers since buckets already gather ~G/B groups); below it a
  scan of B counts is cheaper than the extra counter update per edge.
  ``cntg`` (per group) is kept only where a bucket may fail the span test
  (compressed keys), and ``total[0]`` counts the whole cut.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .core import CACHE, jit_only, require_memory
from .privacy import key_limit

GroupQueue = namedtuple(
    "GroupQueue",
    ["n", "dense", "ends", "sgn", "s", "kmin", "direct", "G", "rank", "key", "sh1", "sh2",
     "wide", "shf", "openb", "groups", "layered", "cntg", "cnt", "total", "off", "start",
     "fill", "bag", "thr", "inside", "rest", "where", "sizes"],
)

# Direct addressing pays ~40 bytes per bucket of the key range; allow it while that
# stays well below the edge store itself.
_DIRECT_SLACK = 1 << 18
# a slot is (group offset in its bucket) << _CODE_BITS | edge code; a dense code
# is a << _END_BITS | b (a shift and a mask: a 64-bit modulo per slot dominated compaction)
_CODE_BITS = 40
_CODE_MASK = (1 << _CODE_BITS) - 1
_END_BITS = 20
_END_MASK = (1 << _END_BITS) - 1
_MAX_SH1 = 20
# wide buckets: considered above _WIDE_MIN_FINE noise-wide buckets, at most
# _WIDE_BUCKETS of them (3 int64 arrays of that length fit in a 512 KB L2 cache); a
# slot then stores its sub-bucket in the wide bucket (< 2**_FINE_BITS, the bits above
# the code) instead of the group offset
_WIDE_MIN_FINE = 1 << 14
_WIDE_BUCKETS = 1 << 14
_FINE_BITS = 23
_WIDE_FILL_MIN = 1 << 12
_WIDE_FILL_FACTOR = 16


@njit(cache=CACHE, nogil=True)
def discretize(w, sgn, s):
    """The integer key floor(sgn * w / s); score = s * key.

    The quotient is one correctly rounded division (no fastmath), exact when s is
    a power of two. Its only inexact case then is an underflow: a negative
    quotient below 2**-1075 in magnitude rounds to -0.0, whose floor would be 0
    instead of -1. The privacy calibration (``privacy.discretized_sensitivity``)
    relies on keys being exact there and within 1/4 otherwise (|w / s| < 2**52,
    checked by ``gq_build``).
    """
    y = sgn * w
    x = y / s
    if x == 0.0 and y < 0.0:
        return np.int64(-1)
    return np.int64(math.floor(x))


@jit_only
def _group(w, idx, direct, sgn, s, kmin, rank):
    """Group of an edge of weight ``w`` at flat position ``idx`` (v*n+u dense, CSR
    position sparse), for per-draw code (``gq_take_cut``); per-edge loops inline it."""
    if direct:
        return discretize(w, sgn, s) - kmin
    return np.int64(rank[idx])


@jit_only
def _end(code, dense, ends):
    """The endpoint that was unvisited when the edge joined; the edge is alive while it is."""
    if dense:
        return code & _END_MASK
    return ends[code]


# The level codes are np.int64, not int: numba compiles a callee once per literal
# argument it is given (Literal[int](3) is a type of its own), which had tripled the
# compile time of the selection kernels (docs/design.rst, Compile time).
ROOT = np.int64(3)  # the level of the node that holds the whole cut


@jit_only(inline="always")
def gq_key(q, g):
    """The integer key of group g (per step, not per edge: it takes the queue)."""
    if q.direct:
        return q.kmin + g
    return q.key[g]


@jit_only
def _update_plain(row, v, visited, bag, start, fill, cnt, sgn, s, kmin, sh1, thr, shs):
    """``gq_update``'s loop for direct keys, no per-group counts, no block layer (the
    benchmark's case); returns the change of the cut's size."""
    delta = 0
    for u in range(row.shape[0]):
        if u == v:
            continue
        g = discretize(np.float64(row[u]), sgn, s) - kmin
        b = g >> sh1
        if visited[u]:
            d = -1
        else:
            d = 1
            if b >= thr:
                bag[start[b] + fill[b]] = (((g - (b << sh1)) >> shs) << _CODE_BITS) | (v << _END_BITS) | u
                fill[b] += 1
        cnt[b] += d
        delta += d
    return delta


@jit_only
def _update_layered(row, v, visited, bag, start, fill, cnt, sgn, s, kmin, sh1, thr, o1, sh2):
    """As ``_update_plain`` with the block layer (more than 16384 buckets: a fine
    step or a wide weight range)."""
    delta = 0
    for u in range(row.shape[0]):
        if u == v:
            continue
        g = discretize(np.float64(row[u]), sgn, s) - kmin
        b = g >> sh1
        if visited[u]:
            d = -1
        else:
            d = 1
            if b >= thr:
                bag[start[b] + fill[b]] = ((g - (b << sh1)) << _CODE_BITS) | (v << _END_BITS) | u
                fill[b] += 1
        cnt[b] += d
        cnt[o1 + (b >> sh2)] += d
        delta += d
    return delta


@jit_only
def _update_general(row, v, visited, bag, start, fill, cnt, cntg, sgn, s, kmin, sh1, thr, o1,
                    sh2, direct, rank, rank_base, groups, layered):
    """``gq_update``'s loop in general: radix-sorted ranks, per-group counts."""
    delta = 0
    for u in range(row.shape[0]):
        if u == v:
            continue
        if direct:
            g = discretize(np.float64(row[u]), sgn, s) - kmin
        else:
            g = np.int64(rank[rank_base + u])
        b = g >> sh1
        if visited[u]:
            d = -1
        else:
            d = 1
            if b >= thr:
                bag[start[b] + fill[b]] = ((g - (b << sh1)) << _CODE_BITS) | (v << _END_BITS) | u
                fill[b] += 1
        if groups:
            cntg[g] += d
        cnt[b] += d
        if layered:
            cnt[o1 + (b >> sh2)] += d
        delta += d
    return delta


@jit_only
def gq_update(q, row, v, visited, rank_base):
    """Vertex v joined the tree (dense): row v of W is read once; edges to
    unvisited vertices join the cut (appended to their bucket), edges to visited
    ones leave it (counters only).

    ``v`` must already be recorded by ``gq_join``. The loop is written flat, on the
    queue's arrays passed as arguments (field reads of the namedtuple inside it
    measured 4x slower, and per-edge helpers taking arrays 3-5x slower), in three
    kernels: replaying the updates of a release at n = 4000, the plain loop alone in
    its kernel took 0.042 s, against 0.098 s for the same loop in one function with
    the others and 0.125 s for the general loop; with 512,000 buckets the layered
    kernel took 0.10 s, the general one 0.36 s, per-edge helpers 0.65 s.
    """
    thr = q.thr[0]
    if q.direct and not q.groups and not q.layered:
        # wide queues always take this loop (at most _WIDE_BUCKETS buckets: no block layer);
        # their slots keep the sub-bucket, the group offset >> shf
        delta = _update_plain(row, v, visited, q.bag, q.start, q.fill, q.cnt, q.sgn, q.s, q.kmin,
                              q.sh1, thr, q.shf if q.wide else 0)
    elif q.direct and not q.groups:
        delta = _update_layered(row, v, visited, q.bag, q.start, q.fill, q.cnt, q.sgn, q.s,
                                q.kmin, q.sh1, thr, q.off[1], q.sh2)
    else:
        delta = _update_general(row, v, visited, q.bag, q.start, q.fill, q.cnt, q.cntg, q.sgn,
                                q.s, q.kmin, q.sh1, thr, q.off[1], q.sh2, q.direct, q.rank,
                                rank_base, q.groups, q.layered)
    q.total[0] += delta


@jit_only
def gq_update_csr(q, indptr, indices, data, v, visited):
    """Vertex v joined the tree (sparse): its CSR row joins or leaves the cut.

    A sparse edge's code is its CSR position in the row of its visited end.
    """
    bag, start, fill, cnt, cntg = q.bag, q.start, q.fill, q.cnt, q.cntg
    o1, sh1, sh2, groups, layered = q.off[1], q.sh1, q.sh2, q.groups, q.layered
    direct, sgn, s, kmin, rank = q.direct, q.sgn, q.s, q.kmin, q.rank
    delta = 0
    # one flat loop (helpers taking arrays, per edge, measured 3.4x slower here: 0.27 s
    # against 0.08 s for 4M edge events at n = 20,000); the flags are loop-invariant
    for p in range(indptr[v], indptr[v + 1]):
        if direct:
            g = discretize(data[p], sgn, s) - kmin
        else:
            g = np.int64(rank[p])
        b = g >> sh1
        if visited[indices[p]]:
            d = -1
        else:
            d = 1
            bag[start[b] + fill[b]] = ((g - (b << sh1)) << _CODE_BITS) | p
            fill[b] += 1
        if groups:
            cntg[g] += d
        cnt[b] += d
        if layered:
            cnt[o1 + (b >> sh2)] += d
        delta += d
    q.total[0] += delta


@jit_only(inline="always")
def gq_count(q, level, node):
    """Active edges in a node: level 0 a group (needs ``q.groups``), 1 a bucket,
    2 a block of 2**sh2 buckets, ROOT (node 0) the whole cut."""
    if level == 0:
        return q.cntg[node]
    if level == 1:
        return q.cnt[node]
    if level == 2:
        return q.cnt[q.off[1] + node]
    return q.total[0]


@jit_only(inline="always")
def gq_width_shift(q, level):
    """log2 of how many groups a node of ``level`` (0, 1 or 2) spans."""
    if level == 0:
        return np.int64(0)
    if level == 1:
        return q.sh1
    return q.sh1 + q.sh2


@jit_only
def gq_top(q):
    """A group index p such that no active edge lies above p, p within the top
    non-empty bucket (the exact top group when groups are tracked); -1 if empty."""
    if q.total[0] == 0:
        return -1
    cnt = q.cnt
    B = q.off[1]
    b = B - 1
    if q.layered:
        o1 = q.off[1]
        j = q.off[2] - o1 - 1
        while j >= 0 and cnt[o1 + j] == 0:
            j -= 1
        b = min((j + 1) << q.sh2, B) - 1
    # the guards turn inconsistent counts into an error instead of a wrapped index
    while b >= 0 and cnt[b] == 0:
        b -= 1
    if b < 0:
        raise AssertionError("gq_top: the cut is not empty but every counter is 0")
    p = min((b + 1) << q.sh1, q.G) - 1
    if q.groups:
        lo = b << q.sh1
        while p >= lo and q.cntg[p] == 0:
            p -= 1
        if p < lo:
            raise AssertionError("gq_top: a bucket's count disagrees with its groups'")
    return p


@jit_only
def gq_select(q, level, node, r):
    """Bucket holding the r-th (0-based, from the lowest group up) active edge of a
    node of ``level`` 1, 2 or ROOT; returns (bucket, rank within it).

    Ranks below the count of groups 0..p select within that prefix.
    """
    cnt = q.cnt
    o1 = q.off[1]
    j = node
    if level == ROOT:
        j = 0
        if not q.layered:
            while j < o1 and r >= cnt[j]:
                r -= cnt[j]
                j += 1
            if j == o1:
                raise AssertionError("gq_select: rank beyond the cut's counts")
            return j, r
        n_blocks = q.off[2] - o1
        while j < n_blocks and r >= cnt[o1 + j]:
            r -= cnt[o1 + j]
            j += 1
        if j == n_blocks:
            raise AssertionError("gq_select: rank beyond the cut's counts")
        level = 2
    if level == 2:
        j = j << q.sh2
        end = min(j + (np.int64(1) << q.sh2), o1)
        while j < end and r >= cnt[j]:
            r -= cnt[j]
            j += 1
        if j == end:
            raise AssertionError("gq_select: rank beyond the block's counts")
    return j, r


@jit_only
def _compact(q, b, visited):
    """Drop the dead slots of bucket b (amortized O(1) per edge: at least half are dead)."""
    bag, ends = q.bag, q.ends
    lo = q.start[b]
    k = lo
    # per slot, so written flat (no helper taking arrays), once per layout
    if q.dense:
        for i in range(lo, lo + q.fill[b]):
            slot = bag[i]
            if not visited[slot & _END_MASK]:
                bag[k] = slot
                k += 1
    else:
        for i in range(lo, lo + q.fill[b]):
            slot = bag[i]
            if not visited[ends[slot & _CODE_MASK]]:
                bag[k] = slot
                k += 1
    q.fill[b] = k - lo


@jit_only
def gq_join(q, v, visited):
    """Vertex v joins the tree: mark it and, dense, move it from ``rest`` to ``inside``."""
    visited[v] = True
    if q.dense:
        n_in, n_rest = q.sizes[0], q.sizes[1]
        q.inside[n_in] = v
        i = q.where[v]
        last = q.rest[n_rest - 1]
        q.rest[i] = last
        q.where[last] = i
        q.sizes[0] = n_in + 1
        q.sizes[1] = n_rest - 1


@jit_only
def gq_materialize(q, W, b_need):
    """Make bucket ``b_need`` (and at least as many buckets again as are already
    materialized) hold its active edges, by one pass over the cut of a dense graph.

    Buckets below ``thr`` keep exact counts but no slots, so an edge joining the
    cut costs no write there; the sampler needs slots only near the top of the
    cut. Growing the materialized range geometrically bounds the passes by
    log2(B) per run; each reads the t (n - t) cut entries once.
    """
    thr = q.thr[0]
    if b_need >= thr:
        return
    new = max(min(b_need, 2 * thr - q.off[1]), 0)
    n = q.n
    bag, start, fill, sh1 = q.bag, q.start, q.fill, q.sh1
    inside, rest, n_in, n_rest = q.inside, q.rest, q.sizes[0], q.sizes[1]
    direct, sgn, s, kmin, rank = q.direct, q.sgn, q.s, q.kmin, q.rank
    shs = q.shf if q.wide else 0
    for i in range(n_in):
        a = inside[i]
        row = W[a]
        for k in range(n_rest):
            u = rest[k]
            if direct:  # written flat: per cut entry (see gq_update)
                g = discretize(np.float64(row[u]), sgn, s) - kmin
            else:
                g = np.int64(rank[a * n + u])
            b = g >> sh1
            if new <= b < thr:
                bag[start[b] + fill[b]] = (((g - (b << sh1)) >> shs) << _CODE_BITS) | (a << _END_BITS) | u
                fill[b] += 1
    q.thr[0] = new


@jit_only
def gq_take_cut(q, W, pmax, rng):
    """A uniformly random active edge of group <= pmax of a dense cut, by rejection
    from uniform (visited, unvisited) pairs: every such pair is a cut edge of the
    complete graph. Returns (group, code); callers use it when it accepts often."""
    n, inside, rest, n_in, n_rest = q.n, q.inside, q.rest, q.sizes[0], q.sizes[1]
    direct, sgn, s, kmin, rank = q.direct, q.sgn, q.s, q.kmin, q.rank
    # callers guarantee an acceptance rate >= 1/2: 2000 rejections in a row mean
    # the counts are wrong (or happen with probability 2**-2000)
    for _ in range(2000):
        a = inside[np.int64(rng.random() * n_in)]
        u = rest[np.int64(rng.random() * n_rest)]
        g = _group(np.float64(W[a, u]), a * n + u, direct, sgn, s, kmin, rank)
        if g <= pmax:
            return g, (a << _END_BITS) | u
    raise AssertionError("gq_take_cut: no edge of the cut lies in the counted groups")


@jit_only
def gq_slot_group(q, W, b, slot):
    """Group of a slot of bucket b (per draw, not per edge). A wide bucket's slot
    holds only its fine sub-bucket, so there the group comes from the edge's weight."""
    if q.wide:
        code = slot & _CODE_MASK
        return discretize(np.float64(W[code >> _END_BITS, code & _END_MASK]), q.sgn, q.s) - q.kmin
    return (b << q.sh1) + (slot >> _CODE_BITS)


@jit_only
def gq_take(q, W, b, lo, hi, count, visited, rng):
    """A uniformly random active edge of bucket b whose group offset lies in [lo, hi].

    ``count`` is how many there are (> 0). Returns (group, code). Materializes
    the bucket first if needed; then rejection over the bucket's slots when that
    accepts often enough, else one scan.
    """
    if b < q.thr[0]:
        gq_materialize(q, W, b)
    if q.fill[b] > 2 * q.cnt[b]:
        _compact(q, b, visited)
    bag, dense, ends = q.bag, q.dense, q.ends
    first = q.start[b]
    f = q.fill[b]
    base = b << q.sh1
    whole = lo == 0 and hi >= (np.int64(1) << q.sh1) - 1
    if whole or f <= 8 * count:
        # acceptance >= 1/8 with right counts; after 1000 misses (probability
        # < 1e-57) fall through to the scan, which fails loudly if counts are wrong
        for _ in range(1000):
            slot = bag[first + np.int64(rng.random() * f)]
            code = slot & _CODE_MASK
            if not visited[_end(code, dense, ends)]:
                g = gq_slot_group(q, W, b, slot)
                if whole or lo <= g - base <= hi:
                    return g, code
    j = np.int64(rng.random() * count)
    for i in range(first, first + f):
        slot = bag[i]
        code = slot & _CODE_MASK
        if not visited[_end(code, dense, ends)]:
            g = gq_slot_group(q, W, b, slot)
            if whole or lo <= g - base <= hi:
                if j == 0:
                    return g, code
                j -= 1
    raise AssertionError("gq_take: count exceeds the active edges of the range")


# ----------------------------------------------------------------------------
# construction
# ----------------------------------------------------------------------------

def _bucket_shift(G, r, sigma):
    """log2 of the bucket width: the widest bucket whose key span r * (2**sh1 - 1) <= sigma.

    Such buckets are resolved whole by the sampler (in direct mode their span is
    exactly that), so a wider one saves draws and a narrower one keeps the
    expected number of extra candidates per bucket below e**sigma - 1.
    """
    cap = min(_MAX_SH1, max(int(G - 1).bit_length(), 0))
    sh1 = 0
    while sh1 < cap and r * np.float64((1 << (sh1 + 1)) - 1) <= sigma:
        sh1 += 1
    return sh1


# below this many buckets a scan of the bucket counts (from the top for the best
# bucket, which stops at once on most steps) is cheaper than keeping a second layer
# of counters up to date on every edge event; at 1024 the gumbel variant at
# n = 400..900 (about 1500 buckets) fell off the fast update loop and ran 3x slower
_LAYER2_MIN_BUCKETS = 1 << 14


# a wide queue never needs the block layer, so its updates run in _update_plain
assert _WIDE_BUCKETS <= _LAYER2_MIN_BUCKETS


def _layer_offsets(B):
    """Whether a second counter layer is kept, its fan-out shift over the B buckets
    (about sqrt(B)), and the layers' offsets in ``cnt``."""
    if B <= _LAYER2_MIN_BUCKETS:
        return False, 0, np.array([0, B, B], dtype=np.int64)
    sh2 = max(1, -(-int(B - 1).bit_length() // 2))
    return True, sh2, np.array([0, B, B + ((B - 1) >> sh2) + 1], dtype=np.int64)


@njit(cache=CACHE, nogil=True)
def _hist_dense_direct(W, sgn, s, kmin, sh1, B):
    """Edges per bucket (upper triangle), bucket = (key - kmin) >> sh1."""
    h = np.zeros(B, dtype=np.int64)
    n = W.shape[0]
    for i in range(n):
        row = W[i]
        for j in range(i + 1, n):
            h[(discretize(np.float64(row[j]), sgn, s) - kmin) >> sh1] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _hist_csr_direct(indptr, indices, data, sgn, s, kmin, sh1, B):
    h = np.zeros(B, dtype=np.int64)
    for a in range(indptr.shape[0] - 1):
        for p in range(indptr[a], indptr[a + 1]):
            if indices[p] > a:
                h[(discretize(data[p], sgn, s) - kmin) >> sh1] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _keys_dense(W, sgn, s, kmin):
    """key - kmin of every upper-triangle edge, row by row, and its position
    i << 20 | j (i < j)."""
    n = W.shape[0]
    m = n * (n - 1) // 2
    keys = np.empty(m, dtype=np.uint64)
    pos = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(n):
        row = W[i]
        for j in range(i + 1, n):
            keys[k] = np.uint64(discretize(np.float64(row[j]), sgn, s) - kmin)
            pos[k] = (i << _END_BITS) | j
            k += 1
    return keys, pos


@njit(cache=CACHE, nogil=True)
def _keys_csr(indptr, indices, data, sgn, s, kmin):
    """key - kmin of every stored entry and its CSR position."""
    keys = np.empty(data.shape[0], dtype=np.uint64)
    for p in range(data.shape[0]):
        keys[p] = np.uint64(discretize(data[p], sgn, s) - kmin)
    return keys, np.arange(data.shape[0])


@njit(cache=CACHE, nogil=True)
def radix_sort_pairs(keys, vals, bits):
    """Sort ``keys`` (uint64) by an LSD radix sort on their low ``bits`` bits (11-bit
    digits), carrying ``vals`` along; stable. Returns the sorted (keys, vals); the
    inputs are used as buffers. O(m bits / 11) time, 16 m bytes of extra memory."""
    src_k, src_v = keys, vals
    dst_k = np.empty_like(keys)
    dst_v = np.empty_like(vals)
    count = np.empty(1 << 11, dtype=np.int64)
    shift = 0
    while shift < bits:
        count[:] = 0
        for x in src_k:
            count[(x >> np.uint64(shift)) & np.uint64(0x7FF)] += 1
        total = 0
        for d in range(1 << 11):
            c = count[d]
            count[d] = total
            total += c
        for t in range(src_k.shape[0]):
            x = src_k[t]
            d = (x >> np.uint64(shift)) & np.uint64(0x7FF)
            dst_k[count[d]] = x
            dst_v[count[d]] = src_v[t]
            count[d] += 1
        src_k, dst_k = dst_k, src_k
        src_v, dst_v = dst_v, src_v
        shift += 11
    return src_k, src_v


@njit(cache=CACHE, nogil=True)
def _ranks_sorted(skeys, spos, n, dense, rank):
    """Group ranks from the sorted keys: the g-th distinct key is group g. Writes each
    edge's rank (dense: at i*n+j and j*n+i; sparse: at its CSR position) and returns
    (distinct keys, edges per group). One pass and one scattered write per edge,
    instead of a binary search per edge (which took 5.7 s at n = 4000)."""
    m = skeys.shape[0]
    distinct = np.empty(m, dtype=np.uint64)
    hist = np.zeros(m, dtype=np.int64)
    g = -1
    for t in range(m):
        x = skeys[t]
        if g < 0 or x != distinct[g]:
            g += 1
            distinct[g] = x
        hist[g] += 1
        p = spos[t]
        if dense:
            i = p >> _END_BITS
            j = p & _END_MASK
            rank[i * n + j] = g
            rank[j * n + i] = g
        else:
            rank[p] = g
    return distinct[:g + 1].copy(), hist[:g + 1].copy()


@njit(cache=CACHE, nogil=True)
def _hist_csr_ranks(indptr, indices, rank, G):
    """Edges per group of a CSR graph, counting each edge at its entry above the diagonal."""
    h = np.zeros(G, dtype=np.int64)
    for a in range(indptr.shape[0] - 1):
        for p in range(indptr[a], indptr[a + 1]):
            if indices[p] > a:
                h[rank[p]] += 1
    return h


def _key_range(graph, sgn, s):
    """(kmin, kmax) of the keys, after checking |w / s| < ``privacy.key_limit(s)``.

    The message names the parameters and the fix, never the weights.
    """
    limit = key_limit(s)
    lo, hi = sorted((sgn * graph.wmin / s, sgn * graph.wmax / s))
    if max(abs(lo), abs(hi)) >= limit:
        exponent = int(math.log2(limit))
        kind = "a power of two" if exponent == 62 else "not a power of two"
        raise ValueError(
            f"the discretization step s = {s!r} is too fine for these weights: some "
            f"|w / s| >= 2**{exponent} (the limit for a step that is {kind}, where the "
            "privacy calibration is proven); use a larger discretization or rescale the weights"
        )
    # the kernels' own rounding (discretize is monotone in sgn * w)
    keys = sorted((int(discretize(graph.wmin, sgn, s)), int(discretize(graph.wmax, sgn, s))))
    return keys[0], keys[1]


def gq_build(graph, sgn, s, r, sigma):
    """Build an empty ``GroupQueue`` for every edge of ``graph`` (a ``Graph``).

    ``r`` (the noise rate in key units) and ``sigma`` set the bucket width (see
    ``sampler.rnm_select``); a negative ``sigma`` makes buckets single groups
    resolved one by one (a test setting). O(m + G) time: a histogram of keys and
    prefix sums (direct addressing), or a radix sort of the keys when their range
    is large. Checks the memory it needs before allocating.
    """
    n, m = graph.n, graph.m
    if n > 1 << _END_BITS and graph.dense:
        raise ValueError(f"dense input with n = {n} > 2**20 vertices is not supported; use scipy.sparse")
    kmin, kmax = _key_range(graph, sgn, s) if m > 0 else (0, 0)
    K = kmax - kmin + 1
    # direct addressing when the key range makes few buckets (their width depends
    # on r and sigma only, never on the weights' layout); keys are never stored then
    sh1 = _bucket_shift(K, r, sigma) if sigma >= 0 else 0
    B = ((K - 1) >> sh1) + 1  # buckets of the key range
    shf = sh1
    wide = False
    bucket_hist = None
    if graph.dense and sigma >= 0 and B > _WIDE_MIN_FINE:
        # many noise-wide buckets: try at most _WIDE_BUCKETS wide ones instead, whose
        # counters stay in cache; the sampler splits the few it reaches (docs/design.rst)
        sh_c = sh1
        while ((K - 1) >> sh_c) + 1 > _WIDE_BUCKETS:
            sh_c += 1
        B_c = ((K - 1) >> sh_c) + 1
        hist_c = _hist_dense_direct(graph.W, sgn, s, kmin, sh_c, B_c)
        # a crowded bucket would be split at O(its edges) per selection
        if hist_c.max() <= max(_WIDE_FILL_MIN, _WIDE_FILL_FACTOR * m // B_c):
            # sub-buckets of sigma noise units, or wider when a slot cannot number them
            # all (keys spanning over 2**(37 + sh1)): exact still, a few more draws
            shf = max(sh1, sh_c - _FINE_BITS)
            wide, sh1, B, bucket_hist = True, sh_c, B_c, hist_c
    direct = wide or B <= m // 4 + _DIRECT_SLACK
    rank_t = np.int32 if m < 2**31 else np.int64
    need = 8 * m + 40 * (B if direct else m)
    if not direct:
        rank_len = n * n if graph.dense else graph.data.shape[0]
        # keys and positions, their sort buffers, the distinct keys and the histogram
        need += rank_len * np.dtype(rank_t).itemsize + 48 * max(m, rank_len)
    require_memory(need, f"fast_pamst on n = {n}, m = {m}")

    if direct:
        G = K
        key = np.zeros(0, dtype=np.int64)  # gq_key: kmin + g
        rank = np.zeros(0, dtype=rank_t)
        if bucket_hist is not None:
            pass  # wide buckets: their histogram decided the layout
        elif graph.dense:
            bucket_hist = _hist_dense_direct(graph.W, sgn, s, kmin, sh1, B)
        else:
            bucket_hist = _hist_csr_direct(graph.indptr, graph.indices, graph.data, sgn, s, kmin, sh1, B)
    else:
        if graph.dense:
            keys, pos = _keys_dense(graph.W, sgn, s, kmin)
            rank = np.zeros(n * n, dtype=rank_t)
        else:
            keys, pos = _keys_csr(graph.indptr, graph.indices, graph.data, sgn, s, kmin)
            rank = np.empty(graph.data.shape[0], dtype=rank_t)
        keys, pos = radix_sort_pairs(keys, pos, max(int(K - 1).bit_length(), 1))
        distinct, hist = _ranks_sorted(keys, pos, n, graph.dense, rank)
        del keys, pos
        if not graph.dense:  # each edge once: the stored entries above the diagonal
            hist = _hist_csr_ranks(graph.indptr, graph.indices, rank, hist.shape[0])
        G = distinct.shape[0]
        key = distinct.astype(np.int64) + kmin
        # buckets of consecutive ranks, whose key spans vary: per-group counts below
        sh1 = _bucket_shift(G, r, sigma) if sigma >= 0 else 0
        bucket_hist = np.add.reduceat(hist, np.arange(0, G, 1 << sh1))
        B = bucket_hist.shape[0]
    # per-group counts are needed only where a bucket can fail the span test
    groups = (not direct) or sigma < 0
    start = np.zeros(B + 1, dtype=np.int64)
    np.cumsum(bucket_hist, out=start[1:])
    layered, sh2, off = _layer_offsets(B)
    return GroupQueue(
        n=np.int64(n),
        dense=bool(graph.dense),
        ends=graph.indices,
        sgn=np.float64(sgn),
        s=np.float64(s),
        kmin=np.int64(kmin),
        direct=bool(direct),
        G=np.int64(G),
        rank=rank,
        key=key,
        sh1=np.int64(sh1),
        sh2=np.int64(sh2),
        wide=bool(wide),
        shf=np.int64(shf),
        openb=np.array([-1, 0], dtype=np.int64),
        groups=bool(groups),
        layered=bool(layered),
        cntg=np.zeros(G if groups else 1, dtype=np.int64),
        cnt=np.zeros(off[2], dtype=np.int64),
        total=np.zeros(1, dtype=np.int64),
        off=off,
        start=start,
        fill=np.zeros(B, dtype=np.int64),
        # np.empty leaves pages untouched: slots of buckets never materialized cost no memory
        bag=np.empty(max(m, 1), dtype=np.int64),
        # dense graphs start with no bucket materialized, sparse ones with all
        thr=np.array([B if graph.dense else 0], dtype=np.int64),
        inside=np.empty(n if graph.dense else 0, dtype=np.int64),
        rest=np.arange(n if graph.dense else 0, dtype=np.int64),
        where=np.arange(n if graph.dense else 0, dtype=np.int64),
        sizes=np.array([0, n], dtype=np.int64),
    )
