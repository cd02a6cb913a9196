"""Lazy materialization of a dense grouped cut queue: ``gq_materialize``.

A dense ``cutqueue.GroupQueue`` starts with no bucket materialized; the sampler
calls ``gq_materialize`` when a pick needs a bucket below
``SlotStore.materialized[0]``. One pass over the current cut (``inside`` x
``rest``) then fills that bucket and at least as many again, counting them where
counts are lazy, after sizing the regions of buckets that have none by one pass
over the upper triangle (``_size_buckets``). The rule and why it is exact are in
:mod:`fastpamst_nb.cutqueue` (Lazy materialization, Lazy counting); the reasons in
docs/design.rst, Lazy materialization.
"""

import numpy as np

from .core import jit_only
from .cutqueue import (
    _CHUNK, _PREFETCH_AHEAD, _SPARSE_HITS, _chunk_hits, _filter_floor, _hash_group, _hset_home, _prefetch_row,
    _rank_group, _row_hits, _score_floor, _sub_index, _unvisited,
    code_pack, range_threshold, slot_offset, slot_pack,
)
# (the moved rule keeps its old name here, so the code below reads as before)
from .cutqueue_codes import hset_items
from .keys import discretize
from .window import WINDOW_BINS, WINDOW_FINE_BITS


# buckets sized at least by a materialization's sizing pass: the sampler reads
# ~10-20 below the top of the cut (sigma = 2), while every bucket sized costs the
# pass a key per edge it holds
_SIZE_MIN = 8
# the validation's window counts at least the _SIZE_MIN top buckets, whatever their alignment
assert WINDOW_BINS >= (_SIZE_MIN + 2) << WINDOW_FINE_BITS


@jit_only
def _size_buckets(lay, keys, st, cut, W, lo):
    """Give buckets lo .. sized[0] - 1 of a dense queue (direct keys, or compressed ones
    found through the hash set) their regions
    of the pool: as many slots as they have edges that can still join the cut or be
    in it (an unvisited end), plus the spare slot. One pass over W, which computes
    the key only of entries scoring at least the lowest of those buckets
    (``_score_floor``; the others cost a vectorized compare): over the upper
    triangle (every edge) while at least half of the vertices are unvisited, else
    over the rows of the unvisited ones, so that a sizing late in a release (a
    bottom draw ranked among every bucket sizes them all) reads only those rows.
    """
    hi = st.sized[0]
    if lo >= hi:
        return
    direct = lay.direct
    if not lay.dense or not (direct or lay.hash_bits > 0):  # others are sized whole by gq_build
        raise AssertionError("_size_buckets: only dense queues without stored ranks size lazily")
    n, sgn, s, inv, kmin, bshift = lay.n, lay.sgn, lay.s, lay.inv, lay.kmin, lay.bucket_shift
    rest, where, n_rest = cut.rest, cut.where, cut.sizes[1]
    h = np.zeros(hi - lo, dtype=np.int64)
    ythr = _filter_floor(lay, keys, lo)
    hit = np.empty(min(n, _CHUNK), dtype=np.int64)
    by_rest = 2 * n_rest < n
    for i in range(n_rest if by_rest else n):
        a = rest[i] if by_rest else i
        row = W[a]
        u0 = 0 if by_rest else a + 1
        _prefetch_row(row, np.int64(u0), np.int64(u0 + _PREFETCH_AHEAD))
        sparse = True  # the update loops' listing (cutqueue._update_plain): the same hits
        for c0 in range(u0, n, _CHUNK):
            c1 = min(c0 + _CHUNK, n)
            nh = _chunk_hits(row, c0, c1, sgn, ythr, hit, sparse)
            sparse = nh * _SPARSE_HITS < c1 - c0
            for t in range(nh):
                u = hit[t]
                if by_rest:
                    # {a, u}, a unvisited: counted here unless u is an unvisited
                    # vertex below a (then from u's row) or a itself
                    if u == a or (u < a and _unvisited(rest, where, n_rest, u)):
                        continue
                if direct:
                    b = (discretize(np.float64(row[u]), sgn, s, inv) - kmin) >> bshift
                else:
                    b = _hash_group(keys.table, keys.slot_rank, lay.hash_bits, np.float64(row[u]), sgn,
                                    s, inv, kmin, bshift) >> bshift
                if lo <= b < hi:
                    h[b - lo] += 1
    top = st.sized[1]
    for b in range(lo, hi):
        st.start[b] = top
        st.cap[b] = h[b - lo] + 1
        top += h[b - lo] + 1
    if top > st.slots.shape[0]:
        raise AssertionError("_size_buckets: the regions overflow the slot pool")
    st.sized[0] = lo
    st.sized[1] = top
@jit_only
def gq_materialize(lay, keys, counts, st, cut, W, b_need):
    """Make bucket ``b_need`` (and at least as many buckets again as are already
    materialized) hold its active edges, and count them with ``lazy_counts``, by
    one pass over the cut of a dense graph.

    Buckets below ``materialized[0]`` keep no slots (and with ``lazy_counts`` no
    count), so an edge joining the cut costs no write there; the sampler needs
    slots and counts only near the top of the cut. Growing the materialized range
    geometrically bounds the passes by log2(B) per run; each reads the t (n - t)
    cut entries once (reading the rows of the smaller side of the cut whole, in order).
    """
    mat = st.materialized[0]
    if b_need >= mat:
        return
    # the counted range's buckets are materialized (and counted per bucket) below like
    # any other: it is over for this release (sampler.rnm_steps)
    st.top_range[0] = lay.n_buckets
    st.top_range[1] = 0
    new = max(min(b_need, 2 * mat - lay.n_buckets), 0)
    if lay.layered and lay.lazy_counts:
        # whole blocks (compressed buckets with the block layer): a block's counter is
        # then exact or 0, like its buckets', and the sampler never reads a partial one
        new = (new >> lay.block_shift) << lay.block_shift
    if new < st.sized[0]:
        # size 4x the range still needed, and at least the top min_sized buckets, so
        # that the next materializations find their buckets sized: a pass over W per
        # quadrupling of the sized range. (A release's first materializations come
        # one or two buckets at a time; its walks reach ~10-20 buckets below the top.)
        lo = min(new - 3 * (st.sized[0] - new), lay.n_buckets - lay.min_sized)
        _size_buckets(lay, keys, st, cut, W, max(lo, 0))
    _materialize_pass(lay, keys, counts, st, cut, W, new, mat)


@jit_only
def _materialize_pass(lay, keys, counts, st, cut, W, new, mat):
    """``gq_materialize``'s pass over the cut: fill (and with ``lazy_counts`` count)
    buckets new .. mat - 1, already sized, with the cut edges they hold (and raise their
    ``SlotStore.top``)."""
    n = lay.n
    slots, start, fill, top, bshift = st.slots, st.start, st.fill, st.top, lay.bucket_shift
    inside, rest, n_in, n_rest = cut.inside, cut.rest, cut.sizes[0], cut.sizes[1]
    direct, sgn, s, inv, kmin, rank = lay.direct, lay.sgn, lay.s, lay.inv, lay.kmin, keys.rank
    sub_shift = lay.sub_shift if lay.wide else np.int64(0)
    lazy, bucket = lay.lazy_counts, counts.bucket
    where = cut.where
    # direct keys: the rows of the smaller side of the cut are read whole, in order
    # (W is symmetric), entries scoring below the new buckets skipped before their key
    # is computed (as in _update_plain). Gathering the n - t unvisited entries of each
    # visited row touched most of its cache lines in random order, several times
    # slower than reading the smaller side's rows whole (docs/design.rst, Measurements
    # behind the code). Compressed keys with lazy counts are filtered the same way,
    # from the base key of bucket `new`, and gather the ranks of the hits only
    filt = direct or lazy
    from_rest = filt and n_rest < n_in  # rows of the unvisited side
    ythr = _filter_floor(lay, keys, new) if filt else -np.inf
    hit = np.empty(min(n, _CHUNK) if filt else 0, dtype=np.int64)
    span = n if filt else n_rest  # entries of a row read: all of them, or the unvisited
    for i in range(n_rest if from_rest else n_in):
        x = rest[i] if from_rest else inside[i]
        row = W[x]
        sparse = True  # the update loops' listing (cutqueue._update_plain): the same hits
        if filt:
            _prefetch_row(row, np.int64(0), np.int64(_PREFETCH_AHEAD))
        for c0 in range(0, span, _CHUNK):
            c1 = min(c0 + _CHUNK, span)
            nh = c1 - c0
            if filt:
                nh = _chunk_hits(row, c0, c1, sgn, ythr, hit, sparse)
                sparse = nh * _SPARSE_HITS < c1 - c0
            for h in range(nh):  # written flat: per cut entry (see gq_update)
                if filt:
                    y = hit[h]
                    # the edge {x, y} is in the cut iff y is on the other side
                    if _unvisited(rest, where, n_rest, y) == from_rest:
                        continue
                    if direct:
                        g = discretize(np.float64(row[y]), sgn, s, inv) - kmin
                    else:
                        g = _hash_group(keys.table, keys.slot_rank, lay.hash_bits, np.float64(row[y]),
                                        sgn, s, inv, kmin, bshift)
                else:
                    y = rest[c0 + h]
                    g = _rank_group(rank[x * n + y], np.float64(row[y]), sgn, s, inv, kmin, bshift)
                a, u = (y, x) if from_rest else (x, y)  # visited, unvisited
                b = g >> bshift
                if new <= b < mat:
                    off = (g - (b << bshift)) >> sub_shift
                    slots[start[b] + fill[b]] = slot_pack(off, code_pack(a, u))
                    fill[b] += 1
                    top[b] = max(top[b], off)
                    if lazy:
                        bucket[b] += 1
                        if lay.layered:
                            counts.block[b >> lay.block_shift] += 1
    st.materialized[0] = new


@jit_only
def gq_count_range(lay, keys, cut, W, visited, ra):
    """The active cut edges of buckets ra .. B - 1 of a dense queue (the sampler's counted
    range, ``SlotStore.top_range``), by one pass over the cut that writes nothing: the
    rows of the smaller side read whole, each entry tested against the range's base key
    (``cutqueue.range_threshold``: exact, no key computed) and against the other side.
    O(t (n - t)) for a cut of t visited vertices; once a release, at its first step
    where the cut is one row."""
    n = lay.n
    inside, rest, n_in, n_rest = cut.inside, cut.rest, cut.sizes[0], cut.sizes[1]
    sgn, s = lay.sgn, lay.s
    mul, by_div, thr = range_threshold(lay, keys, ra)
    from_rest = n_rest < n_in  # rows of the unvisited side: the partner must be visited
    c = np.int64(0)
    for i in range(n_rest if from_rest else n_in):
        row = W[rest[i] if from_rest else inside[i]]
        for y in range(n):
            w = sgn * np.float64(row[y])
            hit = (w / s if by_div else w * mul) >= thr
            c += np.int64(hit and visited[y] == from_rest)
    return c


# a split wide bucket holds at most this many occupied sub-buckets (``SlotStore.subs``'
# columns; gq_build allocates them with a wide queue); a bucket of more is not split
SPLIT_MAX = 1 << 12


@jit_only
def gq_split_wide(lay, st, cut, W, visited, b, r, span):
    """Split wide bucket b (materialized, compacted: its fill[b] slots are its active
    edges) once into its occupied sub-buckets: each gets a region of the bucket's own
    slots, as many as its edges with an unvisited end (those in the cut or still to
    join it: one pass over the upper triangle, counted in a hash set of sub-bucket ids),
    its active slots moved there (the bucket's slots sorted in place: a slot's high bits
    are its sub-bucket), and its own count, kept up to date by the update loop
    (``cutqueue._update_plain``). The sampler then walks the sub-buckets by their counts
    and draws a member of one by rejection over its region: O(1) a sub-bucket a step
    instead of a partition of every slot (O(n^3) a release where one wide bucket holds
    most edges; issue 31). Returns whether it split (False: more than SPLIT_MAX
    sub-buckets, or the regions would not fit the bucket's). O(n^2) once, plus the
    sort of the bucket's slots. Which slots a sub-bucket holds is what the partition
    found: the same members, the same law (docs/design.rst, Counted, not bounded).

    Only the sub-buckets near the top are *filled* (slots and counts): those whose base
    key lies within ``span`` noise units (``r``: the rate in key units) of the top key of
    the highest one with active edges, X .. S - 1 (``SlotStore.split[2]`` = X). The
    update loop counts the lower ones' edges in the bucket's count only, a compare an
    entry (``cutqueue._update_split``), and the sampler fills them when its walk or a
    rank reaches them (``gq_split_fill``). Which sub-buckets this split fills is decided
    from counts, the rate and the keys; the later fills follow the walk (so the noise),
    but they only decide which slots are written out, never which edge a draw selects."""
    n, sgn, s, inv, kmin = lay.n, lay.sgn, lay.s, lay.inv, lay.kmin
    bshift, sub_shift = lay.bucket_shift, lay.sub_shift
    slots, start, fill = st.slots, st.start, st.fill
    subs = st.subs
    if subs.shape[1] == 0 or st.split[0] >= 0:
        return False
    bits = np.int64(2)
    while (np.int64(1) << bits) < 4 * SPLIT_MAX:
        bits += 1
    mask = (np.int64(1) << bits) - 1
    table = np.full(np.int64(1) << bits, -1, dtype=np.int64)
    tot = np.zeros(np.int64(1) << bits, dtype=np.int64)
    used = 0
    base = b << bshift
    for a in range(n):
        row = W[a]
        va = visited[a]
        for u in range(a + 1, n):
            if va and visited[u]:
                continue
            g = discretize(np.float64(row[u]), sgn, s, inv) - kmin
            if (g >> bshift) != b:
                continue
            f = (g - base) >> sub_shift
            h = _hset_home(f, bits)
            while table[h] >= 0 and table[h] != f:
                h = (h + 1) & mask
            if table[h] < 0:
                if used == SPLIT_MAX:
                    return False
                table[h] = f
                used += 1
            tot[h] += 1
    ids, tots = hset_items(table, tot, used)
    order = np.argsort(ids)
    ids = ids[order]
    tots = tots[order]
    if tots.sum() > st.cap[b]:
        return False
    lo = start[b]
    f0 = fill[b]
    # the active slots in sub-bucket order (a slot's high bits), then each moved up to
    # its region, from the top down: a region starts at or above its slots' first
    # (its edges are at least its active ones), so no slot is overwritten unread
    srt = np.sort(slots[lo:lo + f0])
    slots[lo:lo + f0] = srt
    act = np.zeros(used, dtype=np.int64)
    x = 0
    for i in range(f0):
        while ids[x] != slot_offset(slots[lo + i]):
            x += 1
        act[x] += 1
    # the filled sub-buckets: from the highest with active edges down to the lowest whose
    # base key is within span noise units of its top key
    xt = used - 1
    while xt > 0 and act[xt] == 0:
        xt -= 1
    ktop = np.float64(((ids[xt] + 1) << sub_shift) - 1)
    x_lo = xt
    while x_lo > 0 and r * (ktop - np.float64(ids[x_lo - 1] << sub_shift)) <= span:
        x_lo -= 1
    first = np.empty(used, dtype=np.int64)
    acc = lo
    for i in range(used):
        first[i] = acc
        acc += tots[i]
    src = lo + f0
    for i in range(used - 1, -1, -1):
        for j in range(act[i] - 1, -1, -1):
            src -= 1
            if i >= x_lo:
                slots[first[i] + j] = slots[src]
    for i in range(used):
        subs[0, i] = ids[i]
        subs[1, i] = act[i] if i >= x_lo else 0
        subs[2, i] = first[i]
        subs[3, i] = act[i] if i >= x_lo else 0
    fill[b] = 0
    st.split[0] = b
    st.split[1] = used
    st.split[2] = x_lo
    return True


@jit_only
def gq_split_fill(lay, st, cut, W, x_need):
    """Fill the split wide bucket's sub-buckets from x_need (or lower: at least as many
    again as are filled, so that a release makes at most log2(S) fills) up to the lowest
    filled one, ``SlotStore.split[2]``: their slots and counts from one pass over the cut
    (``gq_materialize``'s pass: the rows of its smaller side read whole, entries scoring
    below the new lowest sub-bucket skipped before their key). Their regions were sized
    at the split by every edge with an unvisited end, so the cut's edges fit, and the
    update loop's appends after the fill, edges not yet in the cut, too. O(t (n - t)) for
    a cut of t visited vertices; returns the entries keyed."""
    b, S, x_lo = st.split[0], st.split[1], st.split[2]
    if x_need >= x_lo:
        return np.int64(0)
    subs, slots = st.subs, st.slots
    new = max(min(x_need, x_lo - (S - x_lo)), 0)
    for x in range(new, x_lo):
        subs[1, x] = 0
        subs[3, x] = 0
    n, sgn, s, inv, kmin = lay.n, lay.sgn, lay.s, lay.inv, lay.kmin
    bshift, sub_shift = lay.bucket_shift, lay.sub_shift
    base = b << bshift
    f_new, f_old = subs[0, new], subs[0, x_lo]
    ythr = _score_floor(kmin + base + (f_new << sub_shift), np.int64(0), bshift, s)
    inside, rest, n_in, n_rest, where = cut.inside, cut.rest, cut.sizes[0], cut.sizes[1], cut.where
    from_rest = n_rest < n_in  # rows of the unvisited side: the partner must be visited
    hit = np.empty(min(n, _CHUNK), dtype=np.int64)
    ids = subs[0]
    keyed = np.int64(0)
    for i in range(n_rest if from_rest else n_in):
        xv = rest[i] if from_rest else inside[i]
        row = W[xv]
        for c0 in range(0, n, _CHUNK):
            nh = _row_hits(row, c0, min(c0 + _CHUNK, n), sgn, ythr, hit)
            for h in range(nh):
                y = hit[h]
                if _unvisited(rest, where, n_rest, y) == from_rest:
                    continue
                g = discretize(np.float64(row[y]), sgn, s, inv) - kmin
                keyed += 1
                if (g >> bshift) != b:
                    continue
                f = (g - base) >> sub_shift
                if f < f_new or f >= f_old:
                    continue
                a, u = (y, xv) if from_rest else (xv, y)  # visited, unvisited
                x = _sub_index(ids, S, f)
                slots[subs[2, x] + subs[3, x]] = slot_pack(f, code_pack(a, u))
                subs[3, x] += 1
                subs[1, x] += 1
    st.split[2] = new
    return keyed
