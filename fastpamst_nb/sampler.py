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
    BLOCK, BUCKET, GROUP, ROOT, UpdateScalars, _key_test, _range_count, _update_compressed, _update_plain,
    code_ends, code_pack,
    gq_compact, gq_group, gq_take_cut, gq_update_roles, slot_code, slot_offset,
)
from .cutqueue_materialize import gq_count_range, gq_materialize, gq_split_fill, gq_split_wide
from .keys import discretize, score_floor


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
ST_RANGE_NODES = 9      # nodes of the counted range (counted, never written) drawn from the cut
ST_WIDE_SLOTS = 10      # slots of wide buckets read to open and partition them (not split ones)
ST_SPLIT_KEYS = 11      # entries keyed into a split wide bucket: its row passes and fills (SlotStore.split[3])
ST_TIGHT_TOPS = 12      # counted buckets whose key bound came from their highest written offset (SlotStore.top)
N_STATS = 13

# a wide bucket opened with at least this many times n slots, and at least half the cut
# (a crowded range: elsewhere the partition reads few slots, and a split bucket's walk
# visits its emptied sub-buckets too), is split once into its occupied sub-buckets (cutqueue_materialize.gq_split_wide: a pass over W), whose own
# counts make a step O(1) a sub-bucket instead of a partition of its slots, O(its
# slots) a step (issue 31: O(n^3) where one wide bucket holds most edges)
_SPLIT_MIN_FILL = 4

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

# ... or, at the top of the key range of a dense queue, when the edges of the whole
# graph more than that span below the top (the far edges, counted once: data only)
# are few: a far carrier (probability far / count) costs at most the node's count
# times log(count) cut draws, so a step expects at most far * (1 + log(count)) of
# them, against a row of n entries counted and written to slots when the node is
# refused (docs/design.rst, The wide-noise cliff on dense shapes): at most
# n / _FAR_SHARE of them (so never on the tiny graphs of the law tests that
# exercise the walk: there far = 0, the span rule's case, or the rule refuses)
_FAR_SHARE = 16

# the node kind beyond the queue's levels GROUP, BUCKET, BLOCK and ROOT
SUB = np.int64(4)    # a slot range of the open wide bucket, every slot active (node = first slot)


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
def max_noise_u(u, c, r):
    """The maximum of c i.i.d. noises from a uniform u in (0, 1): S^-1(1 - u^(1/c)),
    written -log(-expm1(log(u) / c)) / r (docs/errata.rst, erratum 1). Scalars only:
    the walk calls it at every node it draws."""
    return -math.log(-math.expm1(math.log(u) / c)) / r


@njit(cache=CACHE, nogil=True)
def max_noise(c, r, rng):
    """The maximum of c i.i.d. noises: S^-1(1 - U^(1/c)) (docs/errata.rst, erratum 1)."""
    return max_noise_u(_u01(rng), c, r)


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


@njit(cache=CACHE, nogil=True)
def _member_group(sx, w, wide, base, whole_b, lo_off, hi_off, sgn, s, inv, kmin):
    """The group of an active member drawn from slot ``sx`` of the bucket whose first
    group is ``base``, or -1 when its group offset lies outside [lo_off, hi_off] (the
    range being drawn from; ``whole_b``: the whole bucket). A wide bucket's slot stores
    the sub-bucket, not the group, so there the group comes from the edge's weight
    ``w`` (the caller reads W only then). Scalars only: the rejection loop and its
    fallback scan call it once a member."""
    gx = discretize(w, sgn, s, inv) - kmin if wide else base + slot_offset(sx)
    if whole_b or lo_off <= gx - base <= hi_off:
        return gx
    return -1


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


@jit_only
def _cut_members(lay, keys, cut, W, k, pmin, pmax, count, seen, rng, gs, codes):
    """``k`` distinct uniformly random active edges of groups pmin .. pmax of a dense cut,
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
            if pmin <= g <= pmax:
                code = code_pack(a, u)
                if _seen_add(seen, code):
                    gs[got] = g
                    codes[got] = code
                    got += 1


@jit_only
def _far_edges(W, sgn, s, inv, kthr, cap):
    """Edges (i < j) of the complete graph of W whose key lies below ``kthr``: the
    far members of a cut node at the top of the key range. One pass, once a release,
    stopped as soon as the count exceeds ``cap`` (the rule refuses any count above
    n / _FAR_SHARE whatever the cut's size, since 1 + ln c >= 1: the decision is the
    same, and shapes with many far edges, Pareto's tail or far clusters, pay a row or
    two instead of the triangle)."""
    n = W.shape[0]
    far = np.int64(0)
    for i in range(n):
        for j in range(i + 1, n):
            if discretize(np.float64(W[i, j]), sgn, s, inv) < kthr:
                far += 1
        if far > cap:
            return far
    return far


@jit_only
def _few_far_edges(W, far_edges, sgn, s, inv, kthr, c):
    """The far-edge rule for a cut node of ``c`` edges at the top of the key range: the
    far edges (keys below ``kthr``, counted once a release by ``_far_edges`` and kept in
    ``SlotStore.far_edges[0]``, -1 until then) number at most n / _FAR_SHARE / (1 + ln c).
    Called at most once a selection, only where the span rule refused the node."""
    n = W.shape[0]
    if far_edges[0] < 0:
        far_edges[0] = _far_edges(W, sgn, s, inv, kthr, n / _FAR_SHARE)
    return far_edges[0] * (1.0 + math.log(c)) <= n / _FAR_SHARE


@jit_only
def _cut_pass_extras(lay, keys, cut, W, kx, pmin, pmax, c, carrier, tt, span, r, k0, best, win_g, win_code,
                     rng):
    """The ``kx`` extras of a cut node of ``c`` members (groups pmin .. pmax) when they are
    many (a far carrier brings up to all c - 1 others): a uniformly random kx-subset
    of the members other than ``carrier``, chosen in one pass over the cut's pairs by
    sequential selection (each member taken with probability needed / left, Knuth's
    Algorithm S, TAOCP vol. 2, 3.4.2), each with a noise of the law doubly truncated
    to (tt, tt + span]; returns the updated (best, win_g, win_code).

    Rejection from uniform pairs would need about c ln c reads and a seen table of
    2 c codes for the same subset (docs/design.rst, The wide-noise cliff on dense
    shapes); the pass costs the cut's pairs and no memory. The subset is uniform
    and the noises i.i.d. as with _cut_members, so the law is the same."""
    n, inside, rest, n_in, n_rest = lay.n, cut.inside, cut.rest, cut.sizes[0], cut.sizes[1]
    direct, kmin, bshift = lay.direct, lay.kmin, lay.bucket_shift
    low = (np.int64(1) << bshift) - 1
    key_base = keys.key
    need = kx
    left = c - 1
    for i in range(n_in):
        a = inside[i]
        for j in range(n_rest):
            b = rest[j]
            g = gq_group(np.float64(W[a, b]), a * n + b, lay, keys)
            if g > pmax or g < pmin:
                continue
            cx = code_pack(a, b)
            if cx == carrier:
                continue
            if rng.random() * left < need:
                u = rng.random()
                while u == 0.0:
                    u = rng.random()
                val = np.float64((kmin + g if direct else key_base[g >> bshift] + (g & low)) - k0) + (
                    tt - math.log1p(-u * span) / r)
                if val > best:
                    best = val
                    win_g = g
                    win_code = cx
                need -= 1
                if need == 0:
                    return best, win_g, win_code
            left -= 1
    raise AssertionError("rnm_select: the cut holds fewer members than the node's count")


@jit_only
def _split_member(slots, subs, x, c, visited, rng):
    """A uniformly random active member (its code) of sub-bucket x of the split wide
    bucket (``SlotStore.subs``), c active: rejection over its region's written slots,
    compacted first when more than half are dead (amortized O(1) a slot). Per draw."""
    lo = subs[2, x]
    if subs[3, x] > 2 * c:
        k = lo
        for i in range(lo, lo + subs[3, x]):
            sx = slots[i]
            if not visited[code_ends(slot_code(sx))[1]]:
                slots[k] = sx
                k += 1
        subs[3, x] = k - lo
    f = subs[3, x]
    # acceptance >= 1/2 with right counts; 1000 misses (probability < 1e-300) mean wrong ones
    for _ in range(1000):
        cx = slot_code(slots[lo + np.int64(rng.random() * f)])
        if not visited[code_ends(cx)[1]]:
            return cx
    raise AssertionError("rnm_select: a split sub-bucket's count exceeds its active slots")


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




# the seen set of a selection's distinct draws is this table, reused while it stays at
# most half full (_seen_set's rule: a table of any power-of-two size at most half full
# gives the same answers, so the draws do not depend on which one is used)
_SEEN_SMALL = 64


@jit_only
def rnm_steps(lay, keys, counts, st, cut, W, visited, edges, step0, n_steps, v, r, theta,
              bucket_width, rng, stats, select_only):
    """Fast-PAMST's steps ``step0 .. step0 + n_steps - 1`` on the queue's role tuples
    (``lay``, ``keys``, ``counts``, ``st``, ``cut``: a ``GroupQueue``'s fields): vertex
    ``v`` joins the tree (its row of W joins or leaves the cut), then one private
    selection, whose edge goes to ``edges[step]``; returns the next vertex to join: the
    dense driver. With ``select_only`` it makes one selection on the cut as it is, dense
    or sparse, and returns the winning edge's code (a dense ``code_pack(a, b)``, a
    sparse CSR position): ``rnm_select``. A sparse release's steps run in
    ``prim.prim_csr_private``, whose written-out twin of this walk measured faster.

    This is the one selection path of both drivers and of ``rnm_select``. It is written
    out in this body, on the queue's arrays read off once per call, because numba
    counts references to every array a call (or an inlined helper) receives: the
    helpers it calls per node take scalars (``max_noise_u``, ``extra_share``); what
    takes arrays runs only on rare events (a stop that draws candidates:
    ``binomial``; a materialization; a node drawn from the cut; a wide bucket's
    partition). docs/design.rst, One selection path.

    The walk (module docstring; docs/design.rst, One selection): from the top group
    down, node by node (a block, a bucket, a group where a bucket is wider than
    ``bucket_width`` noise units with per-group counts, the sub-buckets of a wide
    bucket, or the uncounted buckets as one node drawn from the cut), the stop test
    first, then the node's maximum noise; a node whose maximum could win gets its
    carrier (a uniformly random active member) and a Binomial number of extra members;
    a stop gets a Binomial number of bottom candidates. Every candidate is a uniformly
    random active member of its node drawn by one block of code below: rank
    selection among the counts, then rejection over one bucket's slots (or uniform
    pairs of a dense cut, or slots of an open wide bucket).

    Parameters
    ----------
    lay, keys, counts, st, cut : QueueLayout, GroupKeys, QueueCounts, SlotStore, CutSides
    W : (n, n) array
        The dense weights (an empty (0, 0) array for a sparse graph).
    visited : bool array (n,)
    edges : int64 array (n - 1, 2)
    step0, n_steps, v : int
    r : float
        Noise rate in key units (lam * s).
    theta, bucket_width : float
        The stop's expected candidates and the widest node resolved whole, in noise
        units (speed only: the law does not depend on them).
    rng : numpy.random.Generator
    stats : int64 array (N_STATS,)
    select_only : int
        1: one selection, no update (``rnm_select``); 0: the steps. (An int64, not a
        literal: numba compiles a callee once per literal argument.)

    Complexity: O(n) a dense step for its row, then O(1) expected per
    node visited and per candidate drawn.
    """
    n = lay.n
    dense, direct, wide, layered, lazy = lay.dense, lay.direct, lay.wide, lay.layered, lay.lazy_counts
    group_counts = lay.group_counts
    sgn, s, inv, kmin = lay.sgn, lay.s, lay.inv, lay.kmin
    n_buckets, n_blocks, n_groups = lay.n_buckets, lay.n_blocks, lay.n_groups
    bshift, block_shift, sub_shift = lay.bucket_shift, lay.block_shift, lay.sub_shift
    slots, start, fill, ends = st.slots, st.start, st.fill, st.ends
    materialized, open_bucket, top_range, far_edges = st.materialized, st.open_bucket, st.top_range, st.far_edges
    split, subs, top = st.split, st.subs, st.top
    bucket, block, group, total = counts.bucket, counts.block, counts.group, counts.total
    key_base = keys.key
    table, slot_rank = keys.table, keys.slot_rank
    inside, rest, where, sizes = cut.inside, cut.rest, cut.where, cut.sizes
    low = (np.int64(1) << bshift) - 1  # a group's offset in its bucket; the top offset
    blk_w = bshift + block_shift  # log2 of the groups a block spans
    width = _CUT_NODE_WIDTH * bucket_width
    # the far-edge rule of a cut node at the top (not for one selection: its pass over W
    # is paid once a release, its count kept in far_edges[0], -1 until counted)
    far_rule = dense and lazy and not select_only
    # a counted bucket's keys are bounded by its highest written offset (SlotStore.top,
    # kept by the lazy loops of a dense queue; a wide bucket's slots keep sub-buckets)
    tops = lazy and not wide
    seen_small = np.full(_SEEN_SMALL, -1, dtype=np.int64)
    v = np.int64(v)
    for step in range(step0, step0 + n_steps):
        if not select_only:
            if not dense:
                # a sparse queue's steps run in prim.prim_csr_private (its written-out
                # twin of this walk, measured faster there: docs/design.rst, One
                # selection path); here a sparse queue only selects (rnm_select)
                raise AssertionError("rnm_steps: the steps of a sparse queue run in prim_csr_private")
            # gq_join and, with lazy counts and no wide bucket (the narrow noise levels'
            # steps; nothing materialized: the counted range's), gq_update_roles, written
            # out on the arrays read off above: a call taking the role tuples counted a
            # reference to each of their ~30 arrays, a few tenths of a microsecond a step
            # (docs/design.rst, The selection loop at narrow noise, second pass)
            visited[v] = True
            n_in, n_rest = sizes[0], sizes[1]
            inside[n_in] = v
            i_v = where[v]
            last_v = rest[n_rest - 1]
            rest[i_v] = last_v
            where[last_v] = i_v
            sizes[0] = n_in + 1
            sizes[1] = n_rest - 1
            mat = materialized[0]
            if lazy and mat >= n_buckets:
                # nothing materialized: the row is read for the counted range's count only
                ra = top_range[0]
                if 0 <= ra < n_buckets:
                    mul, by_div, thr = _key_test(kmin + (ra << bshift) if direct else key_base[ra], inv)
                    top_range[1] += _range_count(W[v], v, visited, sgn, mul, s, by_div, thr)
                total[0] += sizes[1] - (sizes[0] - 1)
            elif lazy and not wide:
                # _filter_floor of bucket mat
                ythr = score_floor(kmin, mat, bshift, s) if direct else score_floor(
                    key_base[mat], np.int64(0), bshift, s)
                sc = UpdateScalars(sgn, s, inv, kmin, bshift, mat, block_shift, np.int64(0), lay.hash_bits,
                                   ythr, direct, group_counts, layered, v * n, np.int64(-1), split[1])
                if direct:
                    _update_plain(W[v], v, visited, slots, start, fill, bucket, subs, top, sc)
                else:
                    _update_compressed(W[v], v, visited, slots, start, fill, bucket, block, table, slot_rank,
                                       top, sc)
                total[0] += sizes[1] - (sizes[0] - 1)
            else:
                gq_update_roles(lay, keys, counts, st, cut, W[v], v, visited, v * n)
            if wide:
                stats[ST_SPLIT_KEYS] += split[3]
                split[3] = 0

        # ================= one selection =================
        stats[ST_STEPS] += 1
        if total[0] <= 0:
            raise AssertionError("rnm_select: the cut is empty (is the graph connected?)")
        # ---- the top: gq_top over the counted buckets; with lazy counts, the top of
        # the uncounted ones when they are one cut node, else materialize lower
        lowest = materialized[0] if lazy else np.int64(0)
        tried = False
        ranged = False  # the walk starts with the counted range's node
        p = np.int64(-1)
        while True:
            bt = n_buckets - 1
            if layered:
                j = n_blocks - 1
                while j >= 0 and block[j] == 0:
                    j -= 1
                bt = min((j + 1) << block_shift, n_buckets) - 1
            while bt >= lowest and bucket[bt] == 0:
                bt -= 1
            if bt >= lowest:
                p = min((bt + 1) << bshift, n_groups) - 1
                if group_counts:
                    glo = bt << bshift
                    while p >= glo and group[p] == 0:
                        p -= 1
                    if p < glo:
                        raise AssertionError("gq_top: a bucket's count disagrees with its groups'")
                break
            if lowest <= 0:
                raise AssertionError("gq_top: the cut is not empty but every counter is 0")
            if not tried:
                tried = True
                p = min(lowest << bshift, n_groups) - 1
                kp = kmin + p if direct else key_base[p >> bshift] + (p & low)
                if r * np.float64(kp - kmin) <= width:
                    break
                if far_rule and p == n_groups - 1 and _few_far_edges(W, far_edges, sgn, s, inv,
                                                                     np.float64(kp) - width / r, total[0]):
                    break
                if dense and lazy and p == n_groups - 1:
                    # nothing counted or written: the counted range, the buckets within
                    # width noise units of the top key, counted but never written
                    # (docs/design.rst, Wide nodes drawn from the cut), formed once a
                    # release by a pass that only counts (the first step's cut is one row),
                    # then counted by gq_update; its node is drawn from the cut while it
                    # holds 1/_CUT_SHARE of it, else it is materialized below like the
                    # rest (gq_materialize ends it). Counts, the rate and the key range
                    # decide, never the noise: the cut node's law argument
                    if top_range[0] < 0:
                        # the lowest bucket whose base key is within width of the top
                        # (none: a wide bucket at the top spans more)
                        ra = n_buckets
                        while ra > 0 and r * np.float64(
                                kp - (kmin + ((ra - 1) << bshift) if direct else key_base[ra - 1])) <= width:
                            ra -= 1
                        if ra < n_buckets:
                            top_range[1] = gq_count_range(lay, keys, cut, W, visited, ra)
                        top_range[0] = ra
                    if top_range[0] < n_buckets and top_range[1] * _CUT_SHARE >= total[0]:
                        ranged = True
                        break
            gq_materialize(lay, keys, counts, st, cut, W, lowest - 1)
            lowest = materialized[0]
        k0 = kmin + p if direct else key_base[p >> bshift] + (p & low)

        remaining = total[0]
        best = -np.inf
        win_g = np.int64(-1)
        win_code = np.int64(-1)
        first = True
        done = False  # the walk is over; a single group's win still needs its edge
        # the open wide bucket (-1: none): its unprocessed slots [wlo, whi), base group,
        # first group and largest unprocessed sub-bucket
        wb = np.int64(-1)
        wlo = whi = wbase = wnlo = fmax = np.int64(0)
        # ... or a split one (its sub-buckets counted: SlotStore.subs): the highest
        # unprocessed sub-bucket's index and the bucket's unprocessed edges
        wsplit = False
        widx = wleft = np.int64(0)
        while True:
            # what this pass resolves: n_draw members of node (level, node) of c active
            # edges of groups <= pmax; kind 1: a carrier (noise zmax) and its extra
            # members, 2: bottom candidates above t, 3: the winning group's edge
            kind = 0
            level = BUCKET
            node = np.int64(0)
            c = np.int64(0)
            n_draw = np.int64(0)
            pmax = p
            pmin = np.int64(0)  # the node's lowest group (> 0: the counted range)
            range_node = False
            ktop = 0.0
            zmax = 0.0
            t = 0.0
            last = False  # the walk ends after these draws
            th = theta
            kp = np.int64(0)
            uncounted = False
            whole = False
            if done or remaining <= 0:
                if win_code >= 0:
                    break
                if win_g < 0:
                    raise AssertionError("rnm_select: no edge won; the queue's counts are inconsistent")
                # a single group won: its edge is a uniformly random member
                kind, level, node, c, n_draw, last = 3, GROUP, win_g, group[win_g], np.int64(1), True
            elif wb >= 0:
                # inside a wide bucket: its fine sub-buckets, top down (_split_top; a
                # split bucket's by their counts)
                if widx < 0 if wsplit else fmax < 0:
                    open_bucket[0] = -1
                    wb = -1
                    wsplit = False
                    first = False
                    p = wnlo - 1
                    continue
                open_bucket[1] = wleft if wsplit else whi - wlo
                ftop = subs[0, widx] if wsplit else fmax
                pmax = min(p, wbase + ((ftop + 1) << sub_shift) - 1)
                ktop = np.float64((kmin + pmax if direct else key_base[pmax >> bshift] + (pmax & low)) - k0)
                th = theta
            else:
                if p < 0:
                    raise AssertionError("rnm_select: the walk left the queue; its counts are inconsistent")
                kp = kmin + p if direct else key_base[p >> bshift] + (p & low)
                ktop = np.float64(kp - k0)
                # the walk reached the buckets not counted yet (lazy counts); the
                # remaining edges, those of groups <= p, may be one node drawn from the cut
                uncounted = lazy and (p >> bshift) < materialized[0]
                range_node = ranged and first
                whole = (uncounted and not range_node and remaining * _CUT_SHARE >= total[0]
                         and r * np.float64(kp - kmin) <= width)
                if (uncounted and not whole and not range_node and far_rule and p == n_groups - 1
                        and remaining * _CUT_SHARE >= total[0]):
                    whole = _few_far_edges(W, far_edges, sgn, s, inv, np.float64(kp) - width / r, remaining)
                # before counting more buckets (a pass over the cut) the walk stops
                # while the bottom trick expects at most _UNCOUNTED_THETA candidates
                th = max(theta, _UNCOUNTED_THETA) if uncounted and not whole else theta
                if tops and not uncounted and (first or ((p + 1) & low) == 0):
                    # p tops a counted bucket: its active members' offsets are at most
                    # top[nb] and every remaining edge below it lies lower, so the stop
                    # test, the node's maximum and its extras' threshold may use that
                    # key (data and past selections only, never this noise: the law is
                    # the same; docs/design.rst, The selection loop on the shapes)
                    nb = p >> bshift
                    if bucket[nb] > 0 and top[nb] < 0:
                        # every slot write of a lazy dense queue raises its bucket's top
                        raise AssertionError("a counted bucket holds active edges but no written offset")
                    gt = (nb << bshift) + top[nb]
                    if bucket[nb] > 0 and gt < p:
                        stats[ST_TIGHT_TOPS] += 1
                        ktop = np.float64((kmin + gt if direct else key_base[nb] + (gt & low)) - k0)
            if kind == 0 and not first:
                # the adaptive stop (docs/design.rst, The adaptive bottom trick)
                t = best - ktop
                pt = math.exp(-r * max(t, 0.0))
                if remaining * pt < th:
                    stats[ST_BOTTOM_CALLS] += 1
                    kb = binomial(remaining, pt, rng)
                    stats[ST_BOTTOM_K] += kb
                    if kb == 0:
                        done = True
                        continue
                    kind, level, node, c, n_draw, last = 2, ROOT, np.int64(0), remaining, kb, True
            if kind == 0 and wb >= 0 and wsplit:
                # the split bucket's next sub-bucket: its count, no slot read (filled
                # first when the walk reaches the unfilled ones: gq_split_fill)
                if widx < split[2]:
                    stats[ST_SPLIT_KEYS] += gq_split_fill(lay, st, cut, W, widx)
                first = False
                stats[ST_NODES] += 1
                c = subs[1, widx]
                node = widx
                p = wbase + (subs[0, widx] << sub_shift) - 1
                widx -= 1
                wleft -= c
                if c == 0:
                    continue
                zmax = max_noise(c, r, rng)
                remaining -= c
                if not ktop + zmax > best:
                    continue
                kind, level, n_draw = 1, SUB, np.int64(1)
            elif kind == 0 and wb >= 0:
                first = False
                stats[ST_WIDE_SLOTS] += whi - wlo
                c, nxt = _split_top(slots, wlo, whi, fmax)
                stats[ST_NODES] += 1
                zmax = max_noise(c, r, rng)
                remaining -= c
                whi -= c
                p = wbase + (fmax << sub_shift) - 1
                fmax = nxt
                if not ktop + zmax > best:
                    continue
                kind, level, node, n_draw = 1, SUB, whi, np.int64(1)
            elif kind == 0:
                if range_node:
                    # the counted range: top_range[1] edges of groups pmin .. p, members
                    # uniform pairs of the cut in that range (>= 1/_CUT_SHARE of them)
                    stats[ST_NODES] += 1
                    stats[ST_RANGE_NODES] += 1
                    first = False
                    c = top_range[1]
                    pmin = top_range[0] << bshift
                    remaining -= c
                    p = pmin - 1
                    zmax = max_noise(c, r, rng)
                    if not ktop + zmax > best:
                        continue
                    kind, level, node, n_draw = 1, ROOT, np.int64(0), np.int64(1)
                elif uncounted and whole:
                    # one node of `remaining` edges, its members uniform pairs of the cut
                    # (docs/design.rst, Wide nodes drawn from the cut)
                    stats[ST_NODES] += 1
                    stats[ST_CUT_NODES] += 1
                    c = remaining
                    zmax = max_noise(c, r, rng)
                    if not ktop + zmax > best:
                        done = True
                        continue
                    kind, level, node, n_draw, last = 1, ROOT, np.int64(0), np.int64(1), True
                else:
                    if uncounted:
                        gq_materialize(lay, keys, counts, st, cut, W, p >> bshift)
                    # the node at p: the largest aligned node whose top is p (on the
                    # first step any node holding p) that is empty or at most
                    # bucket_width noise units wide; a bucket always is without group
                    # counts; a non-empty wide bucket opens; else the group p
                    level = GROUP
                    node = p
                    nlo = p
                    found = False
                    if layered and (first or ((p + 1) & ((np.int64(1) << blk_w) - 1)) == 0):
                        nd = p >> blk_w
                        lo_g = nd << blk_w
                        klo = kmin + lo_g if direct else key_base[lo_g >> bshift] + (lo_g & low)
                        if block[nd] == 0 or r * np.float64(kp - klo) <= bucket_width:
                            level, node, nlo, c, found = BLOCK, nd, lo_g, block[nd], True
                    if not found and (first or ((p + 1) & low) == 0):
                        nd = p >> bshift
                        lo_g = nd << bshift
                        cc = bucket[nd]
                        if wide and cc > 0:
                            # open the wide bucket: compacted (it was materialized before
                            # its count could be seen), its largest sub-bucket found; a
                            # crowded one is split once (its sub-buckets then counted)
                            if nd != split[0]:
                                gq_compact(lay, st, nd, visited)
                                if nd < materialized[0] or fill[nd] != cc:
                                    raise AssertionError("rnm_select: a wide bucket's slots disagree with its count")
                                stats[ST_WIDE_SLOTS] += cc
                                if split[0] < 0 and cc >= _SPLIT_MIN_FILL * n and 2 * cc >= total[0]:
                                    # filled: the sub-buckets within the walk's reach of
                                    # the top (its stop expects theta candidates within
                                    # about ln(cut) noise units), and a node's width
                                    gq_split_wide(lay, st, cut, W, visited, nd, r,
                                                  math.log(np.float64(total[0]) + 1.0) + width)
                            if nd == split[0]:
                                wsplit = True
                                widx = split[1] - 1
                                wleft = cc
                                wbase = lo_g
                                wnlo = lo_g
                                open_bucket[0] = nd
                                wb = nd
                                continue
                            wlo = start[nd]
                            whi = wlo + fill[nd]
                            wbase = lo_g
                            wnlo = lo_g
                            fmax = -1
                            for x in range(wlo, whi):
                                fmax = max(fmax, slot_offset(slots[x]))
                            open_bucket[0] = nd
                            wb = nd
                            continue
                        klo = kmin + lo_g if direct else key_base[lo_g >> bshift] + (lo_g & low)
                        if cc == 0 or not group_counts or r * np.float64(kp - klo) <= bucket_width:
                            level, node, nlo, c, found = BUCKET, nd, lo_g, cc, True
                    if not found:
                        c = group[p]
                    first = False
                    stats[ST_NODES] += 1
                    remaining -= c
                    p = nlo - 1
                    if c == 0:
                        continue
                    zmax = max_noise(c, r, rng)
                    if level == GROUP:
                        stats[ST_GROUP_DRAWS] += 1
                        if ktop + zmax > best:
                            best = ktop + zmax
                            win_g = pmax
                            win_code = -1
                        continue
                    if not ktop + zmax > best:
                        # below best, neither the carrier nor the c - 1 smaller noises
                        # can win, so no edge is looked up
                        continue
                    kind, n_draw = 1, np.int64(1)
            if kind == 1:
                stats[ST_BLOCK_DRAWS] += 1

            # ---- n_draw uniformly random active members of the node, distinct but
            # for the carrier and the group's edge: the carrier gets zmax, its extra
            # members a noise doubly truncated to (t, zmax], bottom candidates t + Exp
            carrier_phase = kind == 1
            from_cut = dense and level == ROOT and (range_node or c * n >= total[0])
            seen = seen_small
            small = True
            if kind == 2 and 2 * n_draw > _SEEN_SMALL:
                seen = _seen_set(n_draw)
                small = False
            used = False
            n_seen = np.int64(0)
            tt = 0.0
            span = 0.0
            i = np.int64(0)
            tries = np.int64(0)
            if kind == 2 and from_cut:
                # at least 1/n of the cut qualifies: the candidates are uniform pairs
                # of the cut, drawn in one batch (_cut_members)
                gs = np.empty(n_draw, dtype=np.int64)
                codes = np.empty(n_draw, dtype=np.int64)
                _cut_members(lay, keys, cut, W, n_draw, pmin, pmax, c, seen, rng, gs, codes)
                used = True
                for x in range(n_draw):
                    u = rng.random()
                    while u == 0.0:
                        u = rng.random()
                    gx = gs[x]
                    val = np.float64((kmin + gx if direct else key_base[gx >> bshift] + (gx & low)) - k0) + (
                        max(t, 0.0) - math.log(u) / r)
                    if val > best:
                        best = val
                        win_g = gx
                        win_code = codes[x]
                        stats[ST_BOTTOM_WINS] += 1
                i = n_draw
            while i < n_draw:
                distinct = not carrier_phase and kind != 3
                if distinct:
                    # rejection of the members drawn already accepts with probability
                    # >= 1/c: past 64 (c + 1) tries the counts are wrong
                    if n_seen >= c:
                        raise AssertionError("rnm_select: asked for more distinct edges than the node holds")
                    tries += 1
                    if tries > 64 * (c + 1):
                        raise AssertionError("rnm_select: no fresh edge found; the queue's counts are inconsistent")
                # -- one uniformly random active member (g, code) of the node
                g = np.int64(-1)
                code = np.int64(-1)
                bb = np.int64(0)
                cnt = np.int64(0)
                if level == SUB:
                    # the slots of a sub-bucket of the open wide bucket, all active (a
                    # split bucket's: by rejection over its region)
                    if wsplit:
                        code = _split_member(slots, subs, node, c, visited, rng)
                    else:
                        code = slot_code(slots[node + np.int64(rng.random() * c)])
                    ga, gu = code_ends(code)
                    g = discretize(np.float64(W[ga, gu]), sgn, s, inv) - kmin
                elif from_cut:
                    # uniform (visited, unvisited) pairs, at least 1/n of them qualifying
                    g, code = gq_take_cut(lay, keys, cut, W, pmin, pmax, 64 * (total[0] // c + 1), rng)
                else:
                    lo_off = np.int64(0)
                    hi_off = low
                    open_hit = False
                    if level == GROUP:
                        bb = node >> bshift
                        lo_off = node - (bb << bshift)
                        hi_off = lo_off
                        cnt = c
                    else:
                        if level == ROOT and lazy and materialized[0] > 0:
                            # a rank among every bucket's count: count them all, once
                            gq_materialize(lay, keys, counts, st, cut, W, np.int64(0))
                        # gq_select: the bucket of the rk-th active edge of the node
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
                        if bb == split[0]:
                            # the split wide bucket: the rank, counted from the top of its
                            # unprocessed edges (every one when it is not open: a uniform
                            # rank either way), among its unprocessed sub-buckets' counts,
                            # the unfilled ones filled when it reaches them; then a uniform
                            # active member of the one it falls in
                            x = widx if wsplit else split[1] - 1
                            rk = (wleft if wsplit else bucket[bb]) - 1 - rk
                            while x >= 0:
                                if x < split[2]:
                                    stats[ST_SPLIT_KEYS] += gq_split_fill(lay, st, cut, W, x)
                                if rk < subs[1, x]:
                                    break
                                rk -= subs[1, x]
                                x -= 1
                            if x < 0 or rk < 0:
                                raise AssertionError("gq_select: rank beyond the split bucket's counts")
                            code = _split_member(slots, subs, x, subs[1, x], visited, rng)
                            ga, gu = code_ends(code)
                            g = discretize(np.float64(W[ga, gu]), sgn, s, inv) - kmin
                            open_hit = True
                        elif bb == open_bucket[0]:
                            # the open wide bucket: its unprocessed edges are its first
                            # open_bucket[1] slots (compacted), and the rank fell among them
                            slot = slots[start[bb] + rk]
                            code = slot_code(slot)
                            ga, gu = code_ends(code)
                            g = discretize(np.float64(W[ga, gu]), sgn, s, inv) - kmin
                            open_hit = True
                        else:
                            cnt = bucket[bb]
                            if group_counts and pmax - (bb << bshift) < low:
                                # the groups <= pmax of the node's top bucket
                                hi_off = pmax - (bb << bshift)
                                cnt = 0
                                for x in range(bb << bshift, pmax + 1):
                                    cnt += group[x]
                    if not open_hit:
                        # gq_take: a uniformly random active slot of bucket bb whose group
                        # offset lies in [lo_off, hi_off], cnt of them
                        if bb < materialized[0]:
                            gq_materialize(lay, keys, counts, st, cut, W, bb)
                        if bb < materialized[0]:
                            raise AssertionError("gq_take: the bucket is not materialized")
                        active = bucket[bb]
                        lo_s = start[bb]
                        if fill[bb] > 2 * active:
                            # compact: more than half of its slots are dead
                            gq_compact(lay, st, bb, visited)
                        f = fill[bb]
                        base = bb << bshift
                        whole_b = lo_off == 0 and hi_off >= low
                        if whole_b or f <= 8 * cnt:
                            # acceptance >= 1/8 with right counts; after 1000 misses
                            # (probability < 1e-57) the scan below, which fails loudly
                            # if the counts are wrong
                            for _ in range(1000):
                                sx = slots[lo_s + np.int64(rng.random() * f)]
                                cx = slot_code(sx)
                                if not visited[code_ends(cx)[1] if dense else ends[cx]]:
                                    gx = _member_group(sx, np.float64(W[code_ends(cx)]) if wide else 0.0,
                                                       wide, base, whole_b, lo_off, hi_off, sgn, s, inv, kmin)
                                    if gx >= 0:
                                        g = gx
                                        code = cx
                                        break
                        if code < 0:
                            jj = np.int64(rng.random() * cnt)
                            for x in range(lo_s, lo_s + f):
                                sx = slots[x]
                                cx = slot_code(sx)
                                if not visited[code_ends(cx)[1] if dense else ends[cx]]:
                                    gx = _member_group(sx, np.float64(W[code_ends(cx)]) if wide else 0.0,
                                                       wide, base, whole_b, lo_off, hi_off, sgn, s, inv, kmin)
                                    if gx >= 0:
                                        if jj == 0:
                                            g = gx
                                            code = cx
                                            break
                                        jj -= 1
                            if code < 0:
                                raise AssertionError("gq_take: count exceeds the active edges of the range")
                # -- what the member is for
                if kind == 3:
                    win_code = code
                    break
                if distinct:
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
                    used = True
                    n_seen += 1
                dk = np.float64((kmin + g if direct else key_base[g >> bshift] + (g & low)) - k0)
                if carrier_phase:
                    # the carrier gets zmax; the c - 1 others matter only above
                    # t = best - ktop: Binomial(c - 1, P(t < Z <= zmax | Z <= zmax)) of
                    # them, distinct and uniform, from the law doubly truncated to (t, zmax]
                    carrier_phase = False
                    val = dk + zmax
                    if val > best:
                        best = val
                        win_g = g
                        win_code = code
                    t = best - ktop
                    if c == 1 or t >= zmax:
                        break
                    tt, span, pc = extra_share(t, r, zmax)
                    kx = binomial(c - 1, pc, rng)
                    stats[ST_BLOCK_EXTRA] += kx
                    if kx == 0:
                        break
                    if from_cut and 8 * kx > c and kx > _SEEN_SMALL:
                        # most of a large node (a far carrier): one pass over the cut,
                        # no seen table
                        best, win_g, win_code = _cut_pass_extras(lay, keys, cut, W, kx, pmin, pmax, c, code, tt,
                                                                 span, r, k0, best, win_g, win_code, rng)
                        break
                    if 2 * (kx + 1) > _SEEN_SMALL:
                        seen = _seen_set(kx + 1)
                        small = False
                    mask = seen.shape[0] - 1
                    seen[((code * _HASH_MUL) >> _HASH_SHIFT) & mask] = code
                    used = True
                    n_seen = 1
                    if from_cut:
                        # the whole cut's members in one batch of cut draws
                        gs = np.empty(kx, dtype=np.int64)
                        codes = np.empty(kx, dtype=np.int64)
                        _cut_members(lay, keys, cut, W, kx, pmin, pmax, c, seen, rng, gs, codes)
                        for x in range(kx):
                            u = rng.random()
                            while u == 0.0:
                                u = rng.random()
                            gx = gs[x]
                            val = np.float64((kmin + gx if direct else key_base[gx >> bshift] + (gx & low)) - k0) + (
                                tt - math.log1p(-u * span) / r)
                            if val > best:
                                best = val
                                win_g = gx
                                win_code = codes[x]
                        break
                    n_draw = 1 + kx
                    i = 1
                    tries = 0
                    continue
                u = rng.random()
                while u == 0.0:
                    u = rng.random()
                if kind == 2:
                    # the tail above t: max(t, 0) + Exp(r), memoryless
                    val = dk + (max(t, 0.0) - math.log(u) / r)
                    if val > best:
                        best = val
                        win_g = g
                        win_code = code
                        stats[ST_BOTTOM_WINS] += 1
                else:
                    val = dk + (tt - math.log1p(-u * span) / r)
                    if val > best:
                        best = val
                        win_g = g
                        win_code = code
                i += 1
                tries = 0
            if used and small:
                for x in range(_SEEN_SMALL):
                    seen_small[x] = -1
            if kind == 3:
                break
            if last:
                done = True
        if wb >= 0:
            open_bucket[0] = -1

        if select_only:
            return win_code
        a, b = code_ends(win_code)
        edges[step, 0] = a
        edges[step, 1] = b
        v = b
    return v


@jit_only
def rnm_select(q, W, visited, r, theta, bucket_width, rng, stats):
    """One private selection from the cut held by ``q``; returns the winning edge's code
    (``rnm_steps`` with ``select_only``: the drivers' own path, the same draws)."""
    return rnm_select_roles(q.layout, q.keys, q.counts, q.store, q.cut, W, visited, r, theta,
                            bucket_width, rng, stats)


@jit_only
def rnm_select_roles(lay, keys, counts, st, cut, W, visited, r, theta, bucket_width, rng, stats):
    """One private selection from the cut held by a queue's role tuples; returns the
    winning edge's code (``rnm_steps`` with ``select_only``; see it for the parameters).
    """
    return rnm_steps(lay, keys, counts, st, cut, W, visited, np.empty((0, 2), dtype=np.int64), np.int64(0),
                     np.int64(1), np.int64(0), r, theta, bucket_width, rng, stats, np.int64(1))
