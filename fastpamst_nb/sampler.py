"""The discretized, grouped Report-Noisy-Max kernel: one private Prim selection.

It returns exactly ``argmax_e (key_e + Z_e)`` over the active cut edges, with
i.i.d. exponential noise Z_e (in key units, rate ``r = lam * s``): report-noisy-max,
``fast_pamst(noise="exponential")``. (``noise="gumbel"``, the exponential mechanism,
is one Gumbel per edge and an exact Prim: :mod:`fastpamst_nb.gumbel`.) Nothing but
the noise that matters is drawn:

* **Buckets from the top down.** Starting at the best non-empty bucket and
  walking down, each step takes the largest aligned node of the queue (a bucket,
  a block of buckets, or a single group where a bucket's key span exceeds
  ``bucket_width / r``) and draws its maximum noise in one go, ``MaxNoise(c)`` (for a
  single group that is the paper's MaxExp). Only when ``key_top + MaxNoise`` could
  beat the best so far is the carrier of that maximum looked up (a uniformly
  random active member, found by rank selection): its value is exact. The other
  c - 1 edges, whose noise is i.i.d. conditioned on being at most the maximum,
  can only win by exceeding ``best - key_top``: their number is Binomial and those
  few get a noise drawn from the doubly truncated law.
* **Bottom trick, adaptive** (docs/design.rst, The adaptive bottom trick). Before each block, if the
  remaining |L| edges, all with keys at most ``key_top``, expect fewer than
  ``theta`` noises above ``t = best - key_top``, stop: k ~ Binomial(|L|, P(Z > t)),
  k distinct uniformly random edges of L get noise from the law conditioned on
  ``Z > t`` (memoryless for exponential noise: t + Exp), the rest cannot win.

* **Wide nodes drawn from the cut** (docs/design.rst, Wide nodes drawn from the
  cut). Below the counted buckets (lazy counting) the remaining edges are exactly
  those of groups <= p: where they hold at least 1/8 of the cut and span a few
  noise units (high noise: one or two buckets hold the whole cut) they are one
  node, its members uniform pairs of the cut, and nothing is counted or written.

The stopping point and the node sizes depend only on counts and on noise
already drawn for *other* edges, never on the noise of the edges they decide
about, so the output distribution does not depend on ``theta`` or ``bucket_width``
(tests run the extremes). They only change the speed.

The noise law is handled through its survival function S(t) = exp(-r t) (t >= 0)
and its inverse, in key units.
"""

import math

import numpy as np
from numba import njit

from .core import CACHE, jit_only
from .cutqueue import (
    BUCKET, GROUP, ROOT, code_pack, gq_compact, gq_count, gq_group, gq_key, gq_select, gq_slot_group,
    gq_take, gq_take_cut, gq_top, gq_width_shift, slot_code, slot_offset,
)
from .cutqueue_materialize import gq_materialize


# stats counters (an int64 array the caller may pass; tests read them)
ST_STEPS = 0
ST_GROUP_DRAWS = 1      # single groups resolved by one MaxNoise draw
ST_BLOCK_DRAWS = 2      # nodes whose carrier had to be looked up
ST_BLOCK_EXTRA = 3      # extra candidates drawn inside blocks
ST_BOTTOM_CALLS = 4     # times the bottom trick ended a selection
ST_BOTTOM_K = 5         # candidates (k) the bottom trick drew in total
ST_BOTTOM_WINS = 6      # selections won by a bottom candidate
ST_NODES = 7            # groups, buckets and blocks visited (empty ones included)
ST_CUT_NODES = 8        # nodes of uncounted buckets resolved whole from the cut
N_STATS = 9

# the bottom trick's stopping threshold (expected candidates) where the walk would
# otherwise count more buckets: a candidate from the cut is cheap, a
# materialization a pass over the cut
_UNCOUNTED_THETA = 64.0

# the uncounted buckets below the walk are resolved as one node, its members drawn
# from the cut, when they hold at least 1/_CUT_SHARE of the cut (the acceptance of a
# cut draw) and span at most _CUT_NODE_WIDTH * bucket_width noise units (the extra
# candidates of a node grow like e**span / span)
_CUT_SHARE = 8
_CUT_NODE_WIDTH = 2.0

# node kinds beyond the queue's levels GROUP, BUCKET, BLOCK and ROOT
SUB = np.int64(4)    # a slot range of the open wide bucket, every slot active (node = first slot)
WIDE = np.int64(5)   # a wide bucket, resolved by its fine sub-buckets (_walk_wide)


@jit_only
def _u01(rng):
    """Uniform on the open interval (0, 1)."""
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


@njit(cache=CACHE, nogil=True)
def survival(t, r):
    """P(Z > t) for exponential noise of rate r."""
    if t <= 0.0:
        return 1.0
    return math.exp(-r * t)


@njit(cache=CACHE, nogil=True)
def log_survival(t, r):
    """log P(Z > t), exact where P(Z > t) itself underflows (r t > 745)."""
    return -r * max(t, 0.0)


@njit(cache=CACHE, nogil=True)
def survival_inv(y, r):
    """The t with P(Z > t) = y, for 0 < y < 1."""
    return -math.log(y) / r


@njit(cache=CACHE, nogil=True)
def tail_noise(t, log_pt, r, rng):
    """A noise drawn from its law conditioned on Z > t (log_pt = log P(Z > t), unused:
    exponential noise is memoryless, max(t, 0) + Exp(r))."""
    return max(t, 0.0) - math.log(_u01(rng)) / r


@njit(cache=CACHE, nogil=True)
def max_noise(c, r, rng):
    """The maximum of c i.i.d. noises: S^-1(1 - U^(1/c)) (docs/errata.rst, erratum 1)."""
    return survival_inv(-math.expm1(math.log(_u01(rng)) / c), r)


@njit(cache=CACHE, nogil=True)
def extra_share(t, r, zmax):
    """For Z exponential of rate r: (tt, span, p) with tt = max(t, 0), span =
    P(Z <= zmax | Z > tt) (what a draw of Z in (tt, zmax] needs) and p =
    P(t < Z <= zmax | Z <= zmax) (at most 1), the chance that another member of a group
    whose maximum noise is zmax also beats t. Written with expm1 so neither underflows
    when r * t is large. Scalars only: both selections call it once a group."""
    tt = max(t, 0.0)
    span = -math.expm1(-r * (zmax - tt))
    return tt, span, min(math.exp(-r * tt) * span / -math.expm1(-r * zmax), 1.0)


# waiting-time gaps at or above this cannot fit in n (n < 2**62 is required)
_GAP_CAP = 2.0 ** 62


@njit(cache=CACHE, nogil=True)
def binomial(n, p, rng):
    """Binomial(n, p) by waiting times: geometric gaps between successes until they
    pass n (Devroye 1986, X.4.3), in O(1 + min(np, n(1-p))) draws.

    Every binomial here has a small mean (about theta, or the few non-carriers
    that can still win), where this is exact and cheap; numba's BTPE binomial
    alone took seconds of compile time per call site.

    Exact for every 0 <= p <= 1 and 0 <= n < 2**62. A gap is floor(log U / log(1-p)),
    which exceeds 2**63 once p < ~4e-18 (p = 1e-300 gives ~1e300): it is compared
    with the trials left as a float and cast to int64 only when it fits (the cast
    of a larger gap wrapped and returned n + 1 successes, docs/design.rst, Exact arithmetic at the extremes).
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n >= np.int64(1) << 62:
        raise ValueError("binomial: n must be below 2**62")
    flip = p > 0.5
    lq = math.log1p(-(1.0 - p if flip else p))  # < 0: p <= 0.5 here is never lost to rounding
    k = 0
    pos = 0  # trials used so far; the next success comes after `gap` failures
    while True:
        # compare as a float before any conversion: numba's math.floor already
        # returns int64, and converting a float >= 2**63 is undefined
        x = math.log(_u01(rng)) / lq
        if x >= _GAP_CAP:
            break
        g = np.int64(math.floor(x))
        if g >= n - pos:
            break
        pos += g + 1
        k += 1
    return n - k if flip else k


# The kernels below take the queue's role tuples (lay, keys, counts, st, cut), not
# the queue: numba increments and decrements the reference count of every array a
# call passes, so a call passing the whole queue (18 arrays) costs more than one
# passing its counters. The per-node helpers take no tuple with arrays
# beyond the few they read, and the draws are inlined into the one kernel that
# looks up a node's edges (_resolve) or the bottom candidates (_bottom).

@jit_only(inline="always")
def _take_below(lay, keys, counts, st, cut, W, level, node, count, pmax, visited, rng):
    """A uniformly random active edge of a node (level BUCKET, BLOCK, ROOT = the whole
    cut, or SUB = ``count`` slots of the open wide bucket from slot ``node``) among
    its groups <= pmax, given their number ``count``; returns (group, code)."""
    if level == SUB:
        slot = st.slots[node + np.int64(rng.random() * count)]
        return gq_slot_group(lay, W, st.open_bucket[0], slot), slot_code(slot)
    total = counts.total[0]
    if level == ROOT and lay.dense and count * lay.n >= total:
        # 1/n of the cut or more qualifies: draw from the cut itself, in at most n
        # tries expected, and no bucket is touched. A rank among the buckets would
        # count, size and materialize them all: most of a release for the seeds that
        # needed it (docs/design.rst, Measurements behind the code)
        return gq_take_cut(lay, keys, cut, W, pmax, 64 * (total // count + 1), rng)
    if level == ROOT and lay.lazy_counts and st.materialized[0] > 0:
        # a rank among every bucket's count: count (and materialize) them all, once
        gq_materialize(lay, keys, counts, st, cut, W, np.int64(0))
    bb, w = gq_select(lay, counts, level, node, np.int64(rng.random() * count))
    if bb == st.open_bucket[0]:
        # the open wide bucket: its unprocessed edges are its first open_bucket[1]
        # slots (compacted), and the rank fell among them
        slot = st.slots[st.start[bb] + w]
        return gq_slot_group(lay, W, bb, slot), slot_code(slot)
    if bb < st.materialized[0]:
        gq_materialize(lay, keys, counts, st, cut, W, bb)
    lo = bb << lay.bucket_shift
    top = (np.int64(1) << lay.bucket_shift) - 1
    active = counts.bucket[bb]
    if not lay.group_counts or pmax - lo >= top:
        # a whole bucket: without group counts, p always sits at a bucket's top
        return gq_take(lay, st, W, bb, np.int64(0), top, active, active, visited, rng)
    c = np.int64(0)
    for g in range(lo, pmax + 1):
        c += counts.group[g]
    return gq_take(lay, st, W, bb, np.int64(0), pmax - lo, c, active, visited, rng)


# multiplicative hashing (Knuth, TAOCP vol. 3, 6.4): middle bits of code * M, M odd.
# Codes are < 2**40 (a dense code is ``code_pack(a, b)`` = a << 20 | b, a sparse one a CSR position) and
# M < 2**23, so the product fits in int64 (no wrap-around, the same in plain Python)
_HASH_MUL = 0x5BD1E5
_HASH_SHIFT = 12


@jit_only
def _seen_set(k):
    """An empty set for up to k edge codes: open addressing in a power-of-two table
    at most half full (-1 = free slot), so a lookup costs O(1) expected instead of
    the O(k) scan of a list of the codes drawn so far (O(k**2) per selection). Where
    k nears the node's count (bucket_width = theta = inf at a small rate) the rejections
    of already-drawn edges still cost O(count log count): the set removes the scan,
    not the coupon-collector draws."""
    size = 16
    while size < 2 * k:
        size <<= 1
    return np.full(size, -1, dtype=np.int64)


@jit_only
def _seen_add(seen, code):
    """Insert ``code`` (>= 0) into ``seen``; False when it was already there."""
    mask = seen.shape[0] - 1
    i = ((code * _HASH_MUL) >> _HASH_SHIFT) & mask
    while seen[i] >= 0:
        if seen[i] == code:
            return False
        i = (i + 1) & mask
    seen[i] = code
    return True


@jit_only(inline="always")
def _distinct_edge(lay, keys, counts, st, cut, W, level, node, count, pmax, seen, n_seen,
                   visited, rng):
    """As ``_take_below``, but not one of the n_seen codes in ``seen``, to which it
    is added (uniform over the rest).

    Rejection accepts with probability (count - n_seen) / count >= 1 / count, so
    64 (count + 1) tries fail only with probability < e**-64 when the counts are
    right; past them (or when asked for more edges than exist) the counts are wrong
    and the kernel raises instead of spinning.
    """
    if n_seen >= count:
        raise AssertionError("rnm_select: asked for more distinct edges than the node holds")
    for _ in range(64 * (count + 1)):
        g, code = _take_below(lay, keys, counts, st, cut, W, level, node, count, pmax, visited, rng)
        if _seen_add(seen, code):
            return g, code
    raise AssertionError("rnm_select: no fresh edge found; the queue's counts are inconsistent")


@jit_only
def _cut_members(lay, keys, cut, W, k, pmax, count, seen, rng, gs, codes):
    """``k`` distinct uniformly random active edges of groups <= pmax of a dense cut,
    none of the codes already in ``seen`` (to which they are added), written to
    ``gs`` (groups) and ``codes``; ``count``: how many such edges the cut holds.

    Rejection from uniform (visited, unvisited) pairs, as ``cutqueue.gq_take_cut``
    draws one, but in batches: the pairs of a batch first, then their weights,
    then the tests. The reads of W are then independent of each other, so the
    processor overlaps their cache misses instead of waiting for each in turn
    (docs/design.rst, Wide nodes drawn from the cut). The accepted pairs are
    those sequential rejection would accept, in the same order: i.i.d. uniform
    members conditioned on being new, so the law is the same. Raises after
    4096 (count + 1) (total / count + 1) pairs, where the counts must be wrong.
    """
    n, inside, rest, n_in, n_rest = lay.n, cut.inside, cut.rest, cut.sizes[0], cut.sizes[1]
    total = n_in * n_rest
    limit = 4096 * (count + 1) * (total // count + 1)
    a_buf = np.empty(k, dtype=np.int64)
    u_buf = np.empty(k, dtype=np.int64)
    w_buf = np.empty(k, dtype=np.float64)
    got = 0
    tries = 0
    while got < k:
        m = k - got  # at most m of a batch are accepted: never more than asked for
        tries += m
        if tries > limit:
            raise AssertionError("rnm_select: no fresh edge found in the cut; the counts are inconsistent")
        for i in range(m):
            a_buf[i] = inside[np.int64(rng.random() * n_in)]
            u_buf[i] = rest[np.int64(rng.random() * n_rest)]
        for i in range(m):
            w_buf[i] = np.float64(W[a_buf[i], u_buf[i]])
        for i in range(m):
            a = a_buf[i]
            u = u_buf[i]
            g = gq_group(w_buf[i], a * n + u, lay, keys)
            if g <= pmax:
                code = code_pack(a, u)
                if _seen_add(seen, code):
                    gs[got] = g
                    codes[got] = code
                    got += 1


@jit_only(inline="always")
def _bottom_count(r, theta, rng, stats, remaining, t):
    """The adaptive stop before a node (docs/design.rst, The adaptive bottom trick):
    when the ``remaining`` edges, whose keys are all at most t below the best value so
    far, expect fewer than theta noises above t, the walk stops and
    k ~ Binomial(remaining, P(Z > t)) of them get a noise from the tail above t.
    Returns (k, log P(Z > t)), or k = -1 when the walk goes on."""
    log_pt = log_survival(t, r)
    if remaining * math.exp(log_pt) >= theta:
        return np.int64(-1), log_pt
    stats[ST_BOTTOM_CALLS] += 1
    k = binomial(remaining, math.exp(log_pt), rng)
    stats[ST_BOTTOM_K] += k
    return k, log_pt


@jit_only
def _bottom(lay, keys, counts, st, cut, W, visited, r, rng, stats, k, p, k0, remaining,
            t, log_pt, best, win_g, win_code):
    """The bottom trick's k candidates: k distinct uniformly random edges among the
    ``remaining`` active edges of groups <= p (keys <= gq_key(p)), each with a noise
    conditioned on Z > t (t = best - ktop); the others cannot beat ``best``.
    Returns the updated (best, win_g, win_code)."""
    if k == 0:
        return best, win_g, win_code
    seen = _seen_set(k)
    from_cut = lay.dense and remaining * lay.n >= counts.total[0]  # as _take_below draws them
    gs = np.empty(k if from_cut else 0, dtype=np.int64)
    codes = np.empty(k if from_cut else 0, dtype=np.int64)
    if from_cut:
        _cut_members(lay, keys, cut, W, k, p, remaining, seen, rng, gs, codes)
    for i in range(k):
        if from_cut:
            g, code = gs[i], codes[i]
        else:
            g, code = _distinct_edge(lay, keys, counts, st, cut, W, ROOT, np.int64(0), remaining, p,
                                     seen, i, visited, rng)
        val = np.float64(gq_key(lay, keys, g) - k0) + tail_noise(t, log_pt, r, rng)
        if val > best:
            best = val
            win_g = g
            win_code = code
            stats[ST_BOTTOM_WINS] += 1
    return best, win_g, win_code


@jit_only(inline="always")
def _node_at(lay, keys, counts, p, first, r, bucket_width):
    """The node a walk at group p resolves next: the largest aligned node whose top
    is p (on the first step any node holding p: nothing above p is active) that is
    empty or narrow enough (r * key span <= bucket_width) to be resolved whole; buckets
    always are when groups are not tracked, and a non-empty wide bucket is WIDE.
    Returns (level, node, lo, count)."""
    for lv in range(2 if lay.layered else 1, 0, -1):  # BLOCK, then BUCKET
        w = gq_width_shift(lay, lv)
        if not first and (p + 1) & ((np.int64(1) << w) - 1) != 0:
            continue
        nd = p >> w
        cc = gq_count(counts, lv, nd)
        nlo = nd << w
        if lv == BUCKET and lay.wide and cc > 0:
            return WIDE, nd, nlo, cc
        if (cc == 0 or (lv == BUCKET and not lay.group_counts)
                or r * np.float64(gq_key(lay, keys, p) - gq_key(lay, keys, nlo)) <= bucket_width):
            return lv, nd, nlo, cc
    return GROUP, p, p, counts.group[p]


@jit_only(inline="always")
def _resolve(lay, keys, counts, st, cut, W, visited, r, rng, stats, level, node, c, p, k0,
             ktop, zmax, best, win_g, win_code):
    """A node of c > 0 edges of groups <= p (keys <= ktop + k0) whose maximum noise
    zmax could beat the best so far (ktop + zmax > best): its carrier, a uniformly
    random member, gets zmax; the c - 1 others have i.i.d. noises conditioned on
    being <= zmax, which matter only above t = best - ktop, so a Binomial number of
    them, distinct and uniform, get a noise from the law doubly truncated to
    (t, zmax]. Returns the updated (best, win_g, win_code)."""
    stats[ST_BLOCK_DRAWS] += 1
    carrier_g, carrier = _take_below(lay, keys, counts, st, cut, W, level, node, c, p, visited, rng)
    val = np.float64(gq_key(lay, keys, carrier_g) - k0) + zmax
    if val > best:
        best = val
        win_g = carrier_g
        win_code = carrier
    t = best - ktop
    if c == 1 or t >= zmax:
        return best, win_g, win_code
    # the other members above t: Binomial(c - 1, P(t < Z <= zmax | Z <= zmax)), each
    # then Z = t + Exp truncated to [0, zmax - t]
    tt, span, pc = extra_share(t, r, zmax)
    k = binomial(c - 1, pc, rng)
    stats[ST_BLOCK_EXTRA] += k
    if k == 0:
        return best, win_g, win_code
    seen = _seen_set(k + 1)
    _seen_add(seen, carrier)
    if level == ROOT and lay.dense and c * lay.n >= counts.total[0]:
        # the whole cut's members (a node of uncounted buckets) in one batch of cut draws
        gs = np.empty(k, dtype=np.int64)
        codes = np.empty(k, dtype=np.int64)
        _cut_members(lay, keys, cut, W, k, p, c, seen, rng, gs, codes)
        for i in range(k):
            best, win_g, win_code = _extra_value(gq_key(lay, keys, gs[i]) - k0, gs[i], codes[i], tt,
                                                 span, r, rng, best, win_g, win_code)
        return best, win_g, win_code
    # (no empty batch arrays allocated here: this path runs at most steps)
    for i in range(k):
        g, code = _distinct_edge(lay, keys, counts, st, cut, W, level, node, c, p, seen, i + 1,
                                 visited, rng)
        best, win_g, win_code = _extra_value(gq_key(lay, keys, g) - k0, g, code, tt, span, r, rng,
                                             best, win_g, win_code)
    return best, win_g, win_code


@jit_only(inline="always")
def _extra_value(dk, g, code, tt, span, r, rng, best, win_g, win_code):
    """One of ``_resolve``'s other members (key dk above k0): its noise from the law
    doubly truncated to (tt, tt + span in survival terms], and the updated best."""
    u = _u01(rng)
    z = tt - math.log1p(-u * span) / r
    val = np.float64(dk) + z
    if val > best:
        return val, g, code
    return best, win_g, win_code


@jit_only
def _split_top(slots, lo, hi, fmax):
    """Move the slots of slots[lo:hi] in fine sub-bucket ``fmax`` to the end of the range;
    returns (how many, the largest fine sub-bucket among the others or -1)."""
    j = hi
    nxt = np.int64(-1)
    i = lo
    while i < j:
        f = slot_offset(slots[i])
        if f == fmax:
            j -= 1
            slots[i], slots[j] = slots[j], slots[i]
        else:
            nxt = max(nxt, f)
            i += 1
    return hi - j, nxt


@jit_only
def _walk_wide(lay, keys, counts, st, cut, W, visited, r, theta, rng, stats, b, p, first,
               k0, remaining, best, win_g, win_code):
    """Resolve wide bucket b (key span above bucket_width) by its fine sub-buckets, top down,
    as ``rnm_select`` resolves buckets: the bucket (materialized) is compacted, and
    each sub-bucket's slots are moved to the end of the unprocessed range (one pass
    over it, which also finds the next sub-bucket). While the walk is inside b,
    ``st.open_bucket`` = (b, unprocessed slots) lets bottom draws reach b's
    unprocessed edges. Returns (best, win_g, win_code, remaining, stopped by the
    bottom trick)."""
    # wide queues count lazily: the walk materialized b before it could see b's count
    gq_compact(lay, st, b, visited)
    if b < st.materialized[0] or st.fill[b] != counts.bucket[b]:
        raise AssertionError("rnm_select: a wide bucket's slots disagree with its count")
    slots = st.slots
    lo = st.start[b]
    hi = lo + st.fill[b]
    base = b << lay.bucket_shift
    sub_shift = lay.sub_shift
    fmax = np.int64(-1)
    for i in range(lo, hi):
        fmax = max(fmax, slot_offset(slots[i]))
    st.open_bucket[0] = b
    stopped = False
    while fmax >= 0:
        st.open_bucket[1] = hi - lo
        ptop = min(p, base + ((fmax + 1) << sub_shift) - 1)
        ktop = np.float64(gq_key(lay, keys, ptop) - k0)
        # the stop test as in rnm_select's walk, written out: a helper taking the queue's
        # arrays would count their references at every node (docs/design.rst, Call costs)
        if not first:
            t = best - ktop
            k, log_pt = _bottom_count(r, theta, rng, stats, remaining, t)
            if k >= 0:
                if k > 0:  # most stops draw no candidate: no call, so no reference counts
                    best, win_g, win_code = _bottom(lay, keys, counts, st, cut, W, visited, r,
                                                    rng, stats, k, ptop, k0, remaining, t, log_pt,
                                                    best, win_g, win_code)
                stopped = True
                break
        first = False
        c, nxt = _split_top(slots, lo, hi, fmax)
        stats[ST_NODES] += 1
        zmax = max_noise(c, r, rng)
        if ktop + zmax > best:
            best, win_g, win_code = _resolve(lay, keys, counts, st, cut, W, visited, r, rng,
                                             stats, SUB, hi - c, c, ptop, k0, ktop, zmax, best,
                                             win_g, win_code)
        remaining -= c
        hi -= c
        p = base + (fmax << sub_shift) - 1
        fmax = nxt
    st.open_bucket[0] = -1
    return best, win_g, win_code, remaining, stopped


@jit_only(inline="always")
def _cut_node(lay, keys, r, width, p):
    """Whether the active edges of groups <= p, all below the counted buckets, are
    resolved as one node drawn from the cut (``rnm_select``): their key span is at
    most ``width`` noise units. Speed only."""
    return r * np.float64(gq_key(lay, keys, p) - lay.kmin) <= width


@jit_only(inline="always")
def _counted_top(lay, keys, counts, st, cut, W, r, width):
    """``gq_top``, materializing (and so counting) lower buckets while the counted
    ones are all empty (``lazy_counts``); each pass at least doubles their range.
    Where the uncounted buckets are one cut node (``_cut_node``), the top group of
    the uncounted range instead: nothing lies above it, and nothing is counted."""
    lowest = st.materialized[0] if lay.lazy_counts else np.int64(0)
    p = gq_top(lay, counts, lowest)
    if p == -2:
        top = min(lowest << lay.bucket_shift, lay.n_groups) - 1
        if _cut_node(lay, keys, r, width, top):
            return top
    while p == -2:
        gq_materialize(lay, keys, counts, st, cut, W, lowest - 1)
        lowest = st.materialized[0]
        p = gq_top(lay, counts, lowest)
    return p


@jit_only
def rnm_select(q, W, visited, r, theta, bucket_width, rng, stats):
    """One private selection from the cut held by ``q``; returns the winning edge's code
    (``rnm_select_roles`` on the queue's role tuples: the same draws, the same edge)."""
    return rnm_select_roles(q.layout, q.keys, q.counts, q.store, q.cut, W, visited, r, theta,
                            bucket_width, rng, stats)


@jit_only
def rnm_select_roles(lay, keys, counts, st, cut, W, visited, r, theta, bucket_width, rng, stats):
    """One private selection from the cut held by a queue's role tuples (``lay``, ``keys``,
    ``counts``, ``st``, ``cut``: a ``GroupQueue``'s fields); returns the winning edge's code.

    The dense driver calls it with the role tuples it reads off the queue once per chunk:
    unpacking the queue here counted references to its arrays a second time at every
    step (docs/design.rst, Where the time goes, sparse). ``rnm_select`` takes the queue.
    The sparse driver (``prim.prim_csr_private``) runs this walk written out in its own
    body, with the same draws in the same order (``tests/test_sampler.py`` compares
    them): a change of the walk here is a change there too.

    Parameters
    ----------
    lay, keys, counts, st, cut : QueueLayout, GroupKeys, QueueCounts, SlotStore, CutSides
        The cut (at least one active edge).
    W : (n, n) array
        The dense weights (an empty array for a sparse graph), read to materialize
        buckets and to draw bottom candidates straight from the cut.
    visited : bool array (n,)
    r : float
        Noise rate in key units (lam * s).
    theta : float
        Stop and run the bottom trick once the expected number of remaining
        noises above the current best is below theta (speed only).
    bucket_width : float
        Largest r * (key span) of a node resolved as a whole (speed only).
    rng : numpy.random.Generator
    stats : int64 array (N_STATS,)

    Complexity: O(1) expected per node visited and per candidate drawn; with the default theta and bucket_width a
    handful of buckets per selection on the paper's benchmark. Keys are int64
    and only differences to the top key k0 are turned into floats, so a constant
    offset of every weight (a multiple of s) leaves the law unchanged.
    """
    stats[ST_STEPS] += 1
    width = _CUT_NODE_WIDTH * bucket_width
    p = _counted_top(lay, keys, counts, st, cut, W, r, width)
    k0 = gq_key(lay, keys, p)
    remaining = counts.total[0]
    best = -np.inf
    win_g = np.int64(-1)
    win_code = np.int64(-1)
    first = True
    while remaining > 0:
        if p < 0:
            raise AssertionError("rnm_select: the walk left the queue; its counts are inconsistent")
        ktop = np.float64(gq_key(lay, keys, p) - k0)
        # the walk reached the buckets that are not counted yet (lazy counts)
        uncounted = lay.lazy_counts and (p >> lay.bucket_shift) < st.materialized[0]
        # the remaining edges are those of groups <= p: one node drawn from the cut
        whole = (uncounted and remaining * _CUT_SHARE >= counts.total[0]
                 and _cut_node(lay, keys, r, width, p))
        if not first:
            t = best - ktop
            # before counting more buckets (a pass over the cut, and over W to size
            # them) the walk stops while the bottom trick expects
            # at most _UNCOUNTED_THETA candidates; it is exact wherever it stops
            k, log_pt = _bottom_count(r, max(theta, _UNCOUNTED_THETA) if uncounted and not whole
                                      else theta, rng, stats, remaining, t)
            if k >= 0:
                if k > 0:  # most stops draw no candidate: no call, so no reference counts
                    best, win_g, win_code = _bottom(lay, keys, counts, st, cut, W, visited, r,
                                                    rng, stats, k, p, k0, remaining, t, log_pt,
                                                    best, win_g, win_code)
                break
        if uncounted:
            if whole:
                # one node of `remaining` edges, its members drawn as uniform pairs of
                # the cut (at least 1/_CUT_SHARE of them qualify), so nothing is
                # counted, sized or written (docs/design.rst, Wide nodes drawn from the cut)
                stats[ST_NODES] += 1
                stats[ST_CUT_NODES] += 1
                zmax = max_noise(remaining, r, rng)
                if ktop + zmax > best:
                    best, win_g, win_code = _resolve(lay, keys, counts, st, cut, W, visited, r,
                                                     rng, stats, ROOT, np.int64(0), remaining, p,
                                                     k0, ktop, zmax, best, win_g, win_code)
                break
            gq_materialize(lay, keys, counts, st, cut, W, p >> lay.bucket_shift)
        level, node, lo, c = _node_at(lay, keys, counts, p, first, r, bucket_width)
        if level == WIDE:
            best, win_g, win_code, remaining, stopped = _walk_wide(
                lay, keys, counts, st, cut, W, visited, r, theta, rng, stats, node, p, first,
                k0, remaining, best, win_g, win_code)
            if stopped:
                break
            first = False
            p = lo - 1
            continue
        first = False
        stats[ST_NODES] += 1
        if c > 0:
            zmax = max_noise(c, r, rng)
            if level == GROUP:
                stats[ST_GROUP_DRAWS] += 1
                if ktop + zmax > best:
                    best = ktop + zmax
                    win_g = p
                    win_code = -1
            elif ktop + zmax > best:
                # below best, neither the carrier nor the c - 1 smaller noises can win,
                # so no edge is looked up
                best, win_g, win_code = _resolve(lay, keys, counts, st, cut, W, visited, r,
                                                 rng, stats, level, node, c, p, k0, ktop, zmax,
                                                 best, win_g, win_code)
        remaining -= c
        p = lo - 1
    if win_code < 0:
        # a single group won: its edge is a uniformly random member
        b = win_g >> lay.bucket_shift
        if b < st.materialized[0]:
            gq_materialize(lay, keys, counts, st, cut, W, b)
        goff = win_g - (b << lay.bucket_shift)
        _, win_code = gq_take(lay, st, W, b, goff, goff, counts.group[win_g], counts.bucket[b],
                              visited, rng)
    return win_code
