"""Construction of the grouped cut queue (``cutqueue.GroupQueue``): ``gq_build``.

``gq_build`` runs once per release, in Python, calling jitted passes over the
weights; the per-step kernels that then update and read the queue are in
:mod:`fastpamst_nb.cutqueue`. It works in named steps:

1. **Memory** (``queue_memory_bytes``): the need of every layout for the
   graph's shape, whatever its weights, checked before anything is allocated,
   so that a refusal never depends on the weights (issue 25).
2. **Key range** (``_key_range``): kmin and kmax of the keys
   ``floor(sgn * w / s)``, after checking ``|w / s|`` against
   ``privacy.key_limit(s)``.
3. **Layout decision.** Buckets of ``2**bucket_shift`` keys, the widest within
   the sampler's ``bucket_width`` noise units (``keys.bucket_shift_for``). When the
   buckets of the key range are few against m (``B <= m/4 + 2**18``; dense:
   ``B <= 2**14``) a group index is ``key - kmin`` (*direct* addressing:
   nothing stored per edge or per key, only O(B) per bucket), so a fine step
   or a wide weight range costs nothing as long as the range spans few noise
   units. A dense range of more buckets is covered by at most 16,384 *wide*
   buckets (``window.wide_shift``; their counters stay in cache, where more
   would make each edge event a random write into megabytes), cut into
   noise-wide sub-buckets, unless its buckets crowd (one holding more than 16
   times the mean and 4096 edges, estimated from a sample of rows,
   ``_hist_dense_rows``): then, and for a sparse range of more buckets, the
   buckets are *compressed*: only the occupied aligned buckets
   ((key - kmin) >> bucket_shift) exist, found by a hash set of their ids
   (``_occupied``; never a comparison sort of m keys; a dense graph's islands,
   found in a sample, join the set whole, empty buckets included, and the pass
   keys only the entries outside them, ``_islands``) and ranked in key order
   (``_compress``). Every bucket then spans at most its noise width, and a
   far outlier costs one bucket (docs/design.rst, Compressed buckets).
4. **Sizing**: each bucket's region of the slot pool, from the histogram the
   layout built anyway (sparse, compressed), from the validation's window
   (``window.window_capacities``) or later, when the sampler materializes it
   (dense, direct).
5. **Counters and state**: the block layer over more than 16,384 buckets
   (``_block_layer``) and the empty ``QueueCounts``, ``SlotStore`` and
   ``CutSides``.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .core import CACHE, jit_only, memory_fits, require_memory
from .cutqueue import (
    _END_BITS, _HSET_BITS, CutSides, GroupKeys, GroupQueue, QueueCounts, QueueLayout, SlotStore,
    _hset_home,
)
from .cutqueue_codes import hset_items
from .cutqueue_materialize import SPLIT_MAX, _SIZE_MIN
# (the moved rules keep their old names here, so the code below reads as before)
from .keys import bucket_shift_for as _bucket_shift, discretize, exact_inverse
from .privacy import key_limit
from .threads import run_side_by_side, thread_count
from . import window as _window
from .window import (
    WIDE_BUCKETS as _WIDE_BUCKETS, wide_shift as _wide_shift, window_capacities as _window_capacities,
    window_extra_max as _extra_max,
)

# Direct addressing pays ~40 bytes per bucket of the key range; allow it while that
# stays well below the edge store itself.
_DIRECT_SLACK = 1 << 18
# a dense queue addresses at most this many noise-wide buckets directly (no block
# layer, lazy counts, no per-edge state); beyond it wide buckets, or compressed ones
# where the range crowds
_DIRECT_DENSE_MAX = 1 << 14
# wide buckets (above window.WIDE_MIN_FINE noise-wide buckets, read at each build from
# its one home, where top_window reads it too; at most window.WIDE_BUCKETS): a slot then stores its
# sub-bucket in the wide bucket (< 2**_FINE_BITS, the bits above the code) instead of
# the group offset
_FINE_BITS = 23
_WIDE_FILL_MIN = 1 << 12
_WIDE_FILL_FACTOR = 16
# ... and with wide buckets at least the top ones that hold about 1/_WIDE_SIZE_SHARE
# of the edges (estimated from the crowding test's sample, ``QueueLayout.min_sized``).
# A wide bucket is 1/16,384 of the key range, far wider than the noise, so how deep
# the walks reach is set by the weights, not by bucket_width: on Uniform(0, 1) x 1000 at
# n = 4000 they reached 40 buckets (the MST's heaviest edges, ~log(n)/n of the
# range), and sizing 8 took a second pass over W late in the release (0.3x the
# floor). A sizing pass reads all of W whatever it sizes; what it sizes costs a key
# per edge, ~3% of the entries here
_WIDE_SIZE_SHARE = 32

# below this many buckets a scan of the bucket counts (from the top for the best
# bucket, which stops at once on most steps) is cheaper than keeping a second layer
# of counters up to date on every edge event; a lower threshold sent mid-sized
# queues off the fast update loop (docs/design.rst, Measurements behind the code)
_LAYER2_MIN_BUCKETS = 1 << 14
# ... except in a dense compressed queue, whose counts are lazy: there the walk and
# gq_top read only the materialized buckets near the top (a scan of those), and the
# block layer's only use, ranking among every bucket, first materializes them all
# (a pass over the cut, O(n^2), above the O(B) scan of B <= m counts). The layer cost
# much more than it saved: a lazily counted block is materialized whole, so Pareto
# weights at n = 4000 (196,181 buckets, blocks of 512) wrote and keyed the slots of 85
# buckets instead of 8, and the selection loop ran 3.8x the floor instead of 1.7x
# (docs/design.rst, Compressed buckets). Tests lower it to reach the layered code
_LAYER2_MIN_LAZY = 1 << 62


# a wide queue never needs the block layer, so its updates run in _update_plain
assert _WIDE_BUCKETS <= _LAYER2_MIN_BUCKETS


def _block_layer(B, lazy=False):
    """Whether a second counter layer is kept over the B buckets, its fan-out shift
    (about sqrt(B) buckets per block) and its number of blocks; ``lazy``: a dense
    compressed queue (lazily counted), which keeps none below _LAYER2_MIN_LAZY."""
    if B <= (_LAYER2_MIN_LAZY if lazy else _LAYER2_MIN_BUCKETS):
        return False, 0, 0
    block_shift = max(1, -(-int(B - 1).bit_length() // 2))
    return True, block_shift, ((B - 1) >> block_shift) + 1


# the wide buckets' crowding test reads whole rows of W: about this many entries, and
# at least _CROWD_ROWS rows (a larger sample cost a visible share of a release); a
# crowded bucket holds 16x the mean, while the fullest of 16,384 buckets in a sample
# of 2**18 entries (mean 16) holds ~2x it by chance
_CROWD_SAMPLE = 1 << 18
_CROWD_ROWS = 32


@njit(cache=CACHE, nogil=True)
def _hist_dense_rows(W, sgn, s, inv, kmin, bshift, B, stride):
    """Entries per bucket, bucket = (key - kmin) >> bshift, in rows 0, stride,
    2 stride, ... of W (diagonal excluded): the whole matrix when stride = 1, else a
    sample of its keys."""
    h = np.zeros(B, dtype=np.int64)
    n = W.shape[0]
    for i in range(0, n, stride):
        row = W[i]
        for j in range(n):
            if j != i:
                h[(discretize(np.float64(row[j]), sgn, s, inv) - kmin) >> bshift] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _hist_csr_direct(indptr, indices, data, sgn, s, inv, kmin, bshift, B):
    h = np.zeros(B, dtype=np.int64)
    for a in range(indptr.shape[0] - 1):
        for p in range(indptr[a], indptr[a + 1]):
            if indices[p] > a:
                h[(discretize(data[p], sgn, s, inv) - kmin) >> bshift] += 1
    return h


@njit(cache=CACHE, nogil=True)
def _hset_grow(table, counts, bits):
    """The ids of ``table``, and their counts, in a table of 2**bits slots."""
    new = np.full(np.int64(1) << bits, -1, dtype=np.int64)
    new_counts = np.zeros(np.int64(1) << bits, dtype=np.int64)
    mask = (np.int64(1) << bits) - 1
    for i in range(table.shape[0]):
        x = table[i]
        if x >= 0:
            h = _hset_home(x, bits)
            while new[h] >= 0:
                h = (h + 1) & mask
            new[h] = x
            new_counts[h] = counts[i]
    return new, new_counts


# The islands of a crowded dense range (issue 31). A sample of rows counts its
# entries per coarse block of 2**_COARSE_SHIFT noise-wide buckets; the blocks with at
# least an edge per bucket, estimated, are dense, and nearby dense blocks are joined
# into a few *islands* of buckets. Every bucket of an island is a bucket of the
# queue, empty or not, so the pass over W need not find them: an entry whose score
# lies inside an island costs a compare per island (a vectorized, branch-free
# listing), and only the others (an outlier, a heavy tail) get a key and an append
# to a buffer of ids, sorted after (the hash set is built once from the ids). Which
# buckets the islands add changes only how many empty buckets the queue holds (a
# walk passes an empty bucket at a stop test's cost), never which edge a bucket
# holds: the law is the same whatever the sample.
_COARSE_SHIFT = 6
# the islands' buckets: at most m / _COARSE_BUDGET plus this many
_COARSE_SLACK = 1 << 16
_COARSE_BUDGET = 16
# islands closer than this many coarse blocks are joined (their gap's buckets are empty
# buckets of the queue: at most 4 * 64 a join); at most _MAX_RANGES islands, since the
# pass compares every entry with each
_JOIN_GAP = 4
_MAX_RANGES = 8
# the pass's filter lists a row's entries in chunks of this many
_PASS_CHUNK = 1024

Islands = namedtuple("Islands", ["lo", "hi"])
Islands.__doc__ = """The islands of a dense compressed queue (``_island_ranges``).

lo, hi : int64 (R,)
    Island r holds the aligned buckets lo[r] <= a < hi[r] ((key - kmin) >> bucket_shift),
    each of which is a bucket of the queue; increasing and disjoint.
"""

NO_RANGES = Islands(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@jit_only(inline="always")
def _hset_slot(table, mask, bits, a):
    """The slot of id a in the hash set, or the free slot where it goes."""
    h = _hset_home(a, bits)
    while table[h] >= 0 and table[h] != a:
        h = (h + 1) & mask
    return h


@jit_only(inline="always")
def _converts(w, sgn, s, inv):
    """Whether w's key converts: sgn * w / s finite and below 2**62 in magnitude."""
    y = sgn * w
    x = y * inv if inv != 0.0 else y / s
    return abs(x) < 2.0 ** 62


@njit(cache=CACHE, nogil=True)
def _sample_key_range(W, sgn, s, inv, stride):
    """(whether any key converts, the lowest, the highest) over the keys of rows 0,
    stride, 2 stride, ... of W (diagonal included: speed only) that convert
    (``_converts``): the extreme scores sgn * w, then their keys (``discretize`` is
    monotone in sgn * w); a select, no branch, per entry."""
    n = W.shape[0]
    lo = np.inf
    hi = -np.inf
    for i in range(0, n, stride):
        row = W[i]
        for j in range(n):
            y = sgn * np.float64(row[j])
            ok = _converts(y, 1.0, s, inv)
            lo = min(lo, y if ok else np.inf)
            hi = max(hi, y if ok else -np.inf)
    if lo > hi:
        return False, np.int64(0), np.int64(0)
    return True, discretize(sgn * lo, sgn, s, inv), discretize(sgn * hi, sgn, s, inv)


def _sample_stride(n):
    """The rows 0, stride, 2 stride, ... that the crowding test and the islands sample."""
    return max(1, n // max(_CROWD_ROWS, _CROWD_SAMPLE // n))


# the share of the entries (estimated from the sample) that may lie outside the sampled
# islands for the validation to list them: beyond it a list would run out of room
# (window.listed_capacity: m / 32 a part), and the build makes its own pass instead
# (the integers at Delta = 1e-3: four islands of a hundred values)
_OUTSIDE_SHARE_MAX = 1 / 32


def island_keys(W, sgn, s, inv, bshift, max_ranges, direct_max=None):
    """The islands of W's key range from a sample of rows, in keys: (lo, hi, skewed),
    island r the keys lo[r] <= key < hi[r], each an aligned run of buckets of 2**bshift
    keys from the sample's lowest key (``_island_ranges``, at most ``max_ranges`` of
    them), the fullest first; ``skewed``: the first holds 7/8 of the sample or more.
    Safe on W not yet validated (keys that do not convert are skipped): the
    validation's scan then lists the entries outside them (``dense_scan.sample_islands``).
    Python ints, |key| < 2**62 + 2**bshift. One island, the sample's whole range, when
    the sample's keys span at most ``direct_max`` buckets (a range the queue likely
    addresses directly: the scan then lists only the keys outside the sample's range,
    which a queue compressed after all by far keys the sample missed needs). None
    when the islands hold less than 1 - _OUTSIDE_SHARE_MAX of the edges (estimated)."""
    n = W.shape[0]
    found, kmin, kmax = _sample_key_range(W, sgn, s, inv, _sample_stride(n))
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), False
    span = ((int(kmax) - int(kmin)) >> bshift) + 1  # the sample's buckets
    if direct_max is not None and span <= direct_max:
        # one island, every bucket of the sample's range: the queue is likely direct
        # (the listed keys then go unused), but when a few far keys the sample missed
        # compress it after all (the integers' weights of 10^9), the scan has listed
        # them, and the build needs no pass over W
        return (np.array([int(kmin)], dtype=np.int64),
                np.array([int(kmin) + (span << bshift)], dtype=np.int64), False)
    ranges, full = _island_ranges(W, sgn, s, inv, int(kmin), int(kmax), bshift, n * (n - 1) // 2, max_ranges,
                                  direct=True, populations=True)
    # the fullest first: the scan tests them in this order and stops at the first that
    # holds the entry (ties: the lower keys first; the order is the sample's, never a thread's)
    full = np.asarray(full, dtype=np.float64)
    if full.sum() < (1 - _OUTSIDE_SHARE_MAX) * (n * (n - 1) // 2):
        return None  # most of the sample outside the islands: a list would overflow
    order = np.argsort(-full, kind="stable")
    lo = np.array([int(kmin) + (int(ranges.lo[r]) << bshift) for r in order], dtype=np.int64)
    hi = np.array([int(kmin) + (int(ranges.hi[r]) << bshift) for r in order], dtype=np.int64)
    skewed = full.shape[0] > 1 and 8 * full[order[0]] >= 7 * full.sum()
    return lo, hi, skewed


def _window_ranges(window, kmin, kmax, bshift):
    """The islands a validation window sampled (``island_keys``), as ranges of the aligned
    buckets ((key - kmin) >> bshift) of a queue whose range is kmin .. kmax: each the
    buckets that hold any of its keys, within the range, overlapping ones merged
    (exact, Python ints). None when the window sampled none for these buckets."""
    if window is None or int(window.state[_window.WIN_ISLANDS]) < 0 \
            or int(window.state[_window.WIN_BSHIFT]) != int(bshift):
        return None
    state = window.state
    top = (int(kmax) - int(kmin)) >> int(bshift)
    runs = []
    for r in range(int(state[_window.WIN_ISLANDS])):
        klo = int(state[_window.WIN_ISLAND_KEYS + 2 * r])
        khi = int(state[_window.WIN_ISLAND_KEYS + 2 * r + 1])
        lo = max((klo - int(kmin)) >> int(bshift), 0)
        hi = min(((khi - 1 - int(kmin)) >> int(bshift)) + 1, top + 1)
        if lo < hi:
            runs.append([lo, hi])
    runs.sort()
    merged = []
    for lo, hi in runs:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return Islands(np.array([a for a, _ in merged], dtype=np.int64),
                   np.array([b for _, b in merged], dtype=np.int64))


# the sample's set of coarse ids: 2**_SAMPLE_BITS slots (in cache), at most a quarter
# full; a sample of more distinct blocks stops there (its blocks are thin anyway)
_SAMPLE_BITS = 16


@njit(cache=CACHE, nogil=True)
def _coarse_sample(W, sgn, s, inv, kmin, shift, stride):
    """Entries per coarse id ((key - kmin) >> shift) in rows 0, stride, 2 stride, ...
    of W (diagonal excluded), until a 2**(_SAMPLE_BITS - 2) + 1-th distinct id:
    returns (ids, counts). Entries whose key does not convert (not finite, or
    |w / s| >= 2**62) are skipped: the sample may run before W is validated
    (``island_keys``); a validated range has none."""
    bits = _SAMPLE_BITS
    table = np.full(np.int64(1) << bits, -1, dtype=np.int64)
    counts = np.zeros(np.int64(1) << bits, dtype=np.int64)
    mask = (np.int64(1) << bits) - 1
    n = W.shape[0]
    last = -1
    h = 0
    used = 0
    full = False
    for i in range(0, n, stride):
        row = W[i]
        for j in range(n):
            if j == i or not _converts(np.float64(row[j]), sgn, s, inv):
                continue
            c = (discretize(np.float64(row[j]), sgn, s, inv) - kmin) >> shift
            if c != last:
                last = c
                h = _hset_slot(table, mask, bits, c)
                if table[h] < 0:
                    if 4 * used >= mask + 1:
                        full = True
                        break
                    table[h] = c
                    used += 1
            counts[h] += 1
        if full:
            break
    return hset_items(table, counts, used)


@njit(cache=CACHE, nogil=True)
def _coarse_sample_direct(W, sgn, s, inv, kmin, shift, stride, blocks):
    """``_coarse_sample`` counted in an array of ``blocks`` coarse ids (the sample's keys
    all in kmin .. kmin + blocks 2**shift - 1, checked by the caller): no probe per
    entry. Returns (ids, counts), the ids increasing."""
    counts = np.zeros(blocks, dtype=np.int64)
    n = W.shape[0]
    for i in range(0, n, stride):
        row = W[i]
        for j in range(n):
            w = np.float64(row[j])
            if j == i or not _converts(w, sgn, s, inv):
                continue
            counts[(discretize(w, sgn, s, inv) - kmin) >> shift] += 1
    ids = np.flatnonzero(counts)
    return ids.astype(np.int64), counts[ids]


# the sample before the validation counts its coarse blocks in an array up to this many
# of them (else in the hash set, as _coarse_sample)
_DIRECT_SAMPLE_BLOCKS = 1 << 16


def _island_ranges(W, sgn, s, inv, kmin, kmax, bshift, m, max_ranges=_MAX_RANGES, direct=False,
                   populations=False):
    """The ``Islands`` of a crowded dense range, from a sample of rows (the crowding test's rows): the dense coarse blocks
    (an edge per bucket or more, estimated), the densest first within
    m / _COARSE_BUDGET + _COARSE_SLACK buckets, joined across gaps of at most
    _JOIN_GAP blocks while that budget lasts; at most ``max_ranges`` of them, the
    fullest. Every bucket of a range becomes a bucket of the queue, empty or not, so
    the pass over W need not find them (``_islands``). Speed only: any ranges give an
    exact queue (a few empty buckets more or less: the same law). ``direct``: count the
    sample in an array when its coarse blocks are few (``_coarse_sample_direct``);
    ``populations``: also return each island's estimated edges."""
    n = W.shape[0]
    stride = _sample_stride(n)
    blocks = ((int(kmax) - int(kmin)) >> (bshift + _COARSE_SHIFT)) + 1
    if direct and blocks <= _DIRECT_SAMPLE_BLOCKS:
        ids, counts = _coarse_sample_direct(W, sgn, s, inv, kmin, bshift + _COARSE_SHIFT, stride, blocks)
    else:
        ids, counts = _coarse_sample(W, sgn, s, inv, kmin, bshift + _COARSE_SHIFT, stride)
    est = counts * (m / max(1, counts.sum()))  # edges per block, estimated
    width = 1 << _COARSE_SHIFT
    budget = (m // _COARSE_BUDGET + _COARSE_SLACK) // width  # in blocks
    dense = np.flatnonzero(est >= width)
    if dense.shape[0] == 0:
        return (NO_RANGES, np.zeros(0)) if populations else NO_RANGES
    chosen = dense[np.argsort(-est[dense], kind="stable")][:budget]
    order = np.argsort(ids[chosen])
    dense, dense_est = ids[chosen][order], est[chosen][order]
    if dense.shape[0] == 0:
        return (NO_RANGES, np.zeros(0)) if populations else NO_RANGES
    gaps = dense[1:] - dense[:-1] - 1
    # join across the smallest gaps (each at most _JOIN_GAP blocks: their buckets are
    # empty ones of the queue) while the blocks they add fit the budget
    order = np.argsort(gaps, kind="stable")
    fits = (np.cumsum(gaps[order]) <= budget - dense.shape[0]) & (gaps[order] <= _JOIN_GAP)
    joined = np.zeros(gaps.shape[0], dtype=np.bool_)
    joined[order[fits]] = True
    first = np.concatenate(([0], np.flatnonzero(~joined) + 1))
    last = np.concatenate((np.flatnonzero(~joined), [dense.shape[0] - 1]))
    # the fullest _MAX_RANGES ranges (the pass tests each entry against every range)
    full = np.add.reduceat(dense_est, first)
    keep = np.sort(np.argsort(-full, kind="stable")[:max_ranges])
    lo = dense[first[keep]] << _COARSE_SHIFT
    hi = (dense[last[keep]] + 1) << _COARSE_SHIFT
    # no bucket above the highest key's (a coarse block may reach past it)
    hi = np.minimum(hi, ((kmax - kmin) >> bshift) + 1)
    if populations:
        return Islands(lo.astype(np.int64), hi.astype(np.int64)), full[keep]
    return Islands(lo.astype(np.int64), hi.astype(np.int64))


def _range_scores(ranges, sgn, s, inv, kmin, bshift):
    """(2 _MAX_RANGES,) scores lo_0, hi_0, lo_1, hi_1, ...: an entry with
    lo_r <= sgn * w < hi_r surely has its aligned bucket in island r (``_islands``'
    filter; the others get their exact key); unused islands never hold one.

    The island's keys are [K_lo, K_hi). With a power-of-two step (``inv`` != 0) and
    |K| < 2**53 the bounds are exact: K s is a float, y inv = y / s exactly (an
    underflow only near key 0 or -1, where ``keys.discretize`` returns the floor of
    the exact quotient), so key >= K_lo iff y >= K_lo s, and key < K_hi iff
    y < K_hi s. Otherwise the quotient fl(y / s) errs by at most 1/2 (|y / s| < 2**52,
    ``_key_range``): y >= (K_lo + 2) s gives a key >= K_lo + 1, y < (K_hi - 2) s one
    <= K_hi - 2, and these bounds, computed in floating point, are moved inwards by
    2**-40 of their magnitude, far more than their rounding."""
    out = np.empty(2 * _MAX_RANGES, dtype=np.float64)
    out[0::2] = np.inf
    out[1::2] = -np.inf
    for r in range(ranges.lo.shape[0]):
        klo = kmin + (int(ranges.lo[r]) << bshift)
        khi = kmin + (int(ranges.hi[r]) << bshift)
        if inv != 0.0 and max(abs(klo), abs(khi)) < 2**53:
            out[2 * r] = float(klo) * s
            out[2 * r + 1] = float(khi) * s
            continue
        flo, fhi = float(klo) + 2.0, float(khi) - 2.0
        out[2 * r] = flo * s + abs(flo) * s * 2.0 ** -40
        out[2 * r + 1] = fhi * s - abs(fhi) * s * 2.0 ** -40
    return out


@jit_only(inline="always")
def _in_islands(x, b):
    """1 if the score x lies surely inside an island (``_range_scores``' 8 pairs), else 0:
    written out, so that the chunk loop that sums it vectorizes."""
    return np.int64(((x >= b[0]) & (x < b[1])) | ((x >= b[2]) & (x < b[3]))
                    | ((x >= b[4]) & (x < b[5])) | ((x >= b[6]) & (x < b[7]))
                    | ((x >= b[8]) & (x < b[9])) | ((x >= b[10]) & (x < b[11]))
                    | ((x >= b[12]) & (x < b[13])) | ((x >= b[14]) & (x < b[15])))


@jit_only(inline="always")
def _in_islands1(x, b):
    """``_in_islands`` for at most 1 island (the others are empty: never inside)."""
    return np.int64((x >= b[0]) & (x < b[1]))


@jit_only(inline="always")
def _in_islands4(x, b):
    """``_in_islands`` for at most 4 islands."""
    return np.int64(((x >= b[0]) & (x < b[1])) | ((x >= b[2]) & (x < b[3]))
                    | ((x >= b[4]) & (x < b[5])) | ((x >= b[6]) & (x < b[7])))


@njit(cache=CACHE, nogil=True)
def _ids_outside(buf, used, W, i0, i1, scale, rlo, rhi, bounds):
    """Append to ``buf`` (from ``used`` on) the aligned bucket ids of the upper triangle
    of W's rows i0 .. i1 - 1 that lie outside every island [rlo[r], rhi[r]) (a run of
    one id written once), while ``buf`` keeps room for a whole row. Returns (next row,
    ids in ``buf``). ``bounds``: ``_range_scores``. A chunk of a row whose entries all
    score surely inside an island costs a vectorized count of them (the pass streams
    W); only a chunk with others lists them (branch-free) and keys them. No probe: the
    caller sorts the ids (``_outside_part``); a probe of a hash set per entry cost
    Pareto weights' pass 225 ns an entry (two cache misses, the set and its counts,
    2026-11-27). ``scale``: (sgn, s, inv, kmin, bshift) of the keys."""
    sgn, s, inv, kmin, bshift = scale
    n = W.shape[0]
    R = rlo.shape[0]
    b = np.empty(2 * _MAX_RANGES, dtype=np.float64)  # a local copy: no aliasing with W
    for t in range(2 * _MAX_RANGES):
        b[t] = bounds[t]
    hit = np.empty(_PASS_CHUNK, dtype=np.int64)
    flag = np.empty(_PASS_CHUNK, dtype=np.int64)
    last = -1
    i = i0
    while i < i1 and used + n <= buf.shape[0]:
        row = W[i]
        for c0 in range(i + 1, n, _PASS_CHUNK):
            c1 = min(c0 + _PASS_CHUNK, n)
            out = 0
            # the compares of the islands in use only (one loop each, so that each
            # vectorizes): the outlier's and the integers' one island cost 2 compares an
            # entry instead of 16 (the same entries listed)
            if R <= 1:
                for t in range(c1 - c0):
                    f = 1 - _in_islands1(sgn * np.float64(row[c0 + t]), b)
                    flag[t] = f
                    out += f
            elif R <= 4:
                for t in range(c1 - c0):
                    f = 1 - _in_islands4(sgn * np.float64(row[c0 + t]), b)
                    flag[t] = f
                    out += f
            else:
                for t in range(c1 - c0):
                    f = 1 - _in_islands(sgn * np.float64(row[c0 + t]), b)
                    flag[t] = f
                    out += f
            if out == 0:
                continue
            k = 0
            for t in range(c1 - c0):
                hit[k] = c0 + t
                k += flag[t]
            for t in range(k):
                a = (discretize(np.float64(row[hit[t]]), sgn, s, inv) - kmin) >> bshift
                near = False  # in an island after all (a score within 2 keys of its bounds)
                for r in range(R):
                    if rlo[r] <= a < rhi[r]:
                        near = True
                # branch-free append; a run of one bucket (an outlier's row) is written once
                buf[used] = a
                used += (not near) & (a != last)
                if not near:
                    last = a
        i += 1
    return i, used


def _grow_for(table, counts, bits, used, need):
    """The set grown, if need be, to hold ``need`` more ids at most half full."""
    while 2 * (used + need) > table.shape[0]:
        bits += 1
        if bits > _HSET_BITS:  # 2**30 buckets: beyond what the memory check admits
            raise AssertionError("gq_build: the hash set outgrew its 31-bit hash")
        table, counts = _hset_grow(table, counts, bits)
    return table, counts, bits


# the outside ids' buffer starts with this many slots; when full it is sorted and
# deduplicated, and doubled when still over half full (at most twice the distinct ids)
_BUF_MIN = 1 << 16


def _distinct(x):
    """The distinct values of x, increasing. ``np.sort`` (vectorized on this machine:
    1.8 ms for 129,448 ids) and a mask: ``np.unique`` took 0.25 s for them (numpy
    2.4, 2026-11-27)."""
    x = np.sort(x)
    if x.shape[0] < 2:
        return x
    keep = np.empty(x.shape[0], dtype=np.bool_)
    keep[0] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]


def _outside_part(W, i0, i1, scale, ranges, bounds, cap=None):
    """The occupied aligned buckets outside the islands of W's rows i0 .. i1 - 1 (upper
    triangle): their ids, increasing and distinct; None once more than ``cap`` (a count
    under a memory budget, ``_counted_fits``: the buffer never grows past about
    4 (cap + n) ids)."""
    buf = np.empty(max(_BUF_MIN, 4 * W.shape[0]), dtype=np.int64)
    used = 0
    i = i0
    while i < i1:
        i, used = _ids_outside(buf, used, W, i, i1, scale, ranges.lo, ranges.hi, bounds)
        if i < i1:  # full: deduplicate (numpy's sort releases the GIL), grow if need be
            ids = _distinct(buf[:used])
            used = ids.shape[0]
            if cap is not None and used > cap:
                return None
            if 2 * (used + W.shape[0]) > buf.shape[0]:
                buf = np.empty(2 * buf.shape[0] + W.shape[0], dtype=np.int64)
            buf[:used] = ids
    ids = _distinct(buf[:used])
    return None if cap is not None and ids.shape[0] > cap else ids


# the islands' pass runs in parts side by side on the validation's threads from this
# many edges (``threads.run_side_by_side``; at most _PASS_PARTS: it streams W, and
# two cores about exhaust the memory bandwidth), each part with its own set, merged
# after: the same set whatever the number of parts
_PARALLEL_MIN = 1 << 20
_PASS_PARTS = 2


def _outside_pass(graph, sgn, s, inv, kmin, bshift, ranges, cap=None):
    """The aligned buckets ((key - kmin) >> bshift) of the entries outside ``ranges``'
    islands, increasing and distinct: one pass over the upper triangle, in parts side by
    side above _PARALLEL_MIN edges (``_outside_part``). None when a part finds more than
    ``cap`` of them (a count under a memory budget, ``_counted_fits``)."""
    W, n, m = graph.W, graph.n, graph.m
    scale = (np.float64(sgn), np.float64(s), np.float64(inv), np.int64(kmin), np.int64(bshift))
    bounds = _range_scores(ranges, sgn, s, inv, kmin, bshift)
    parts = min(_PASS_PARTS, thread_count()) if m >= _PARALLEL_MIN else 1
    # row bounds that give each part about m / parts entries of the upper triangle
    # (rows 0 .. i - 1 hold m - (n - i)(n - i - 1) / 2 of them)
    rows = [0] + [n - int(math.sqrt((1 - k / parts) * n * n)) for k in range(1, parts)] + [n]
    found = run_side_by_side([
        (lambda k=k: _outside_part(W, rows[k], rows[k + 1], scale, ranges, bounds, cap)) for k in range(parts)])
    if any(ids is None for ids in found):
        return None
    return _distinct(np.concatenate(found)) if parts > 1 else found[0]


def _dense_outside(graph, sgn, s, inv, kmin, kmax, bshift, window=None, cap=None):
    """(ranges, outside): the islands of a dense compressed queue (the validation's,
    ``_window_ranges``, when it sampled them, else ``_island_ranges``) and the occupied
    aligned buckets ((key - kmin) >> bshift) outside them, increasing and distinct:
    from the keys the validation listed when its list is complete (no pass over W),
    else by one pass (``_outside_pass``). ``outside`` is None when more than ``cap``
    (a count under a memory budget, ``_counted_fits``). The one source of both the
    count and the build: the count's result is the build's (issue 31)."""
    ranges = _window_ranges(window, kmin, kmax, bshift)
    if ranges is not None and window.state[_window.WIN_COMPLETE] \
            and window.state[_window.WIN_ISLANDS] > 0 and not window.state[_window.WIN_LISTED_FULL]:
        outside = _outside_listed(window.listed[0][:int(window.state[_window.WIN_LISTED])], kmin, bshift, ranges)
        return ranges, (None if cap is not None and outside.shape[0] > cap else outside)
    if ranges is None:
        ranges = _island_ranges(graph.W, sgn, s, inv, kmin, kmax, bshift, graph.m)
    return ranges, _outside_pass(graph, sgn, s, inv, kmin, bshift, ranges, cap)


def _islands(graph, sgn, s, inv, kmin, bshift, ranges=None, outside=None):
    """The buckets of a dense compressed queue: every aligned bucket of the islands
    (``_island_ranges``, or ``ranges``), empty or not, and the occupied ones outside
    them, in a hash set; returns (table, bits, the ids in increasing order, each slot's
    rank among them) (a dense queue sizes its buckets lazily: no counts). One pass over
    the upper triangle, in parts side by side above _PARALLEL_MIN edges, in which an
    entry of an island costs a few compares and only the others a key and an append to
    a buffer, deduplicated by sorting; the set is built once from the sorted ids
    (docs/design.rst, Compressed buckets). ``outside``: the occupied buckets outside
    ``ranges``' islands, found already (``_dense_outside``: by the count's pass, or from
    the keys the validation listed, with no pass): then no pass here."""
    W, m = graph.W, graph.m
    if ranges is None:
        ranges = _island_ranges(W, sgn, s, inv, kmin, _key_range(graph, sgn, s)[1], bshift, m)
    if outside is None:
        outside = _outside_pass(graph, sgn, s, inv, kmin, bshift, ranges)
    # the ids in order: the islands' runs merged with the sorted others (one merge; a
    # stable sort of their concatenation, the same array, cost 1 ms more on Pareto's)
    ids = _merge_islands(outside, ranges.lo.astype(np.int64), ranges.hi.astype(np.int64))
    # the set, at most half full, built once from the ids in order, with each slot's rank
    bits = 4
    while 2 * ids.shape[0] > 1 << bits:
        bits += 1
    if bits > _HSET_BITS:  # 2**30 buckets: beyond what the memory check admits
        raise AssertionError("gq_build: the hash set outgrew its 31-bit hash")
    table, slot_rank = _hset_build(ids, bits)
    return table, bits, ids, slot_rank


def _outside_listed(keys, kmin, bshift, ranges):
    """The aligned buckets ((key - kmin) >> bshift) of ``keys`` that lie outside every
    island of ``ranges``, increasing and distinct (the keys are increasing)."""
    return _outside_listed_kernel(keys, np.int64(kmin), np.int64(bshift), ranges.lo, ranges.hi)


@njit(cache=CACHE, nogil=True)
def _outside_listed_kernel(keys, kmin, bshift, lo, hi):
    """``_outside_listed`` in one pass: the keys are increasing, so their buckets are
    nondecreasing (a run of one bucket kept once, no sort) and the islands (increasing,
    disjoint) are passed in order. Pareto weights at Delta = 1e-5, n = 4000: 129,477
    keys, 3.7 ms in numpy (a shift, masks, a sort, a mask), a fraction of it here."""
    out = np.empty(keys.shape[0], dtype=np.int64)
    used = 0
    r = 0
    R = lo.shape[0]
    for t in range(keys.shape[0]):
        a = (keys[t] - kmin) >> bshift
        while r < R and a >= hi[r]:
            r += 1
        if r < R and a >= lo[r]:
            continue  # inside island r
        if used == 0 or out[used - 1] != a:
            out[used] = a
            used += 1
    return out[:used].copy()


@njit(cache=CACHE, nogil=True)
def _merge_islands(outside, lo, hi):
    """The ids of a dense compressed queue in increasing order: the sorted ``outside``
    merged with the islands' runs lo[r] .. hi[r] - 1 (increasing, disjoint): what a
    stable sort of their concatenation gives (an id in both, were any, kept twice, as
    there), in O(ids) with no sort."""
    total = outside.shape[0]
    for r in range(lo.shape[0]):
        total += hi[r] - lo[r]
    ids = np.empty(total, dtype=np.int64)
    i = 0
    k = 0
    n_out = outside.shape[0]
    for r in range(lo.shape[0]):
        for a in range(lo[r], hi[r]):
            while i < n_out and outside[i] <= a:
                ids[k] = outside[i]
                k += 1
                i += 1
            ids[k] = a
            k += 1
    while i < n_out:
        ids[k] = outside[i]
        k += 1
        i += 1
    return ids


@njit(cache=CACHE, nogil=True)
def _hset_build(ids, bits):
    """A hash set of 2**bits slots holding the distinct ``ids`` (-1 marks a free slot),
    and each slot's rank: the index of its id in ``ids`` (free slots: 0, never read)."""
    mask = (np.int64(1) << bits) - 1
    table = np.full(np.int64(1) << bits, -1, dtype=np.int64)
    slot_rank = np.zeros(np.int64(1) << bits, dtype=np.int64)
    for i in range(ids.shape[0]):
        h = _hset_home(ids[i], bits)
        while table[h] >= 0:
            h = (h + 1) & mask
        table[h] = ids[i]
        slot_rank[h] = i
    return table, slot_rank


@njit(cache=CACHE, nogil=True)
def _hset_add(table, counts, bits, used, data, p0, room, scale):
    """Add to the hash set the aligned bucket ids of data[p0:] (a sparse graph's stored
    entries), counting the entries of each, while the table keeps room for ``room``
    more ids (a chunk of entries) at most half full. Returns (next entry, ids in the
    set). The caller grows the table and calls again: growing it inside the per-edge
    loop (a reassigned array) made the loop several times slower. ``scale``: (sgn, s,
    inv, kmin, bshift) of the keys."""
    sgn, s, inv, kmin, bshift = scale
    mask = (np.int64(1) << bits) - 1
    i = p0
    n = data.shape[0]
    last = -1
    h = 0
    while i < n and 2 * (used + room) <= mask + 1:
        j1 = min(i + room, n)
        for j in range(i, j1):
            a = (discretize(np.float64(data[j]), sgn, s, inv) - kmin) >> bshift
            if a != last:  # runs of one bucket skip the probe
                last = a
                h = _hset_slot(table, mask, bits, a)
                if table[h] < 0:
                    table[h] = a
                    used += 1
            counts[h] += 1
        i = j1
    return i, used


# the least room _occupied keeps in its set for a chunk of entries
_HSET_ROOM_MIN = 1 << 12


def _occupied(graph, sgn, s, inv, kmin, bshift):
    """Hash set of the aligned bucket ids (key - kmin) >> bshift of a sparse graph's
    stored entries; returns (table, counts, bits), -1 marking a free slot, the table
    at most half full, counts[h] the entries of slot h's bucket. O(m) expected. (A
    dense graph's buckets come from ``_islands``.)"""
    bits = 4
    table = np.full(1 << bits, -1, dtype=np.int64)
    counts = np.zeros(1 << bits, dtype=np.int64)
    used = 0
    scale = (np.float64(sgn), np.float64(s), np.float64(inv), np.int64(kmin), np.int64(bshift))
    data = graph.data
    n = data.shape[0]
    i = 0
    while i < n:
        # the room a chunk needs (each entry a new id at worst) grows with the ids found:
        # a fixed 2**16 grew the set to 2**18 slots for a range of 100 buckets, and
        # growing, clearing and scanning it was most of a sparse build (issue 31)
        room = min(max(_HSET_ROOM_MIN, used), 1 << 16, n)
        table, counts, bits = _grow_for(table, counts, bits, used, room)
        i, used = _hset_add(table, counts, bits, used, data, i, room, scale)
    return table, counts, bits


@njit(cache=CACHE, nogil=True)
def _ranks_dense(W, sgn, s, inv, kmin, bshift, table, bits, slot_rank, n_ranks, rank):
    """Write each entry's compressed bucket (``slot_rank`` of its id's slot in the hash
    set ``table``) at rank[i * n + j] (0 on the diagonal), rows in order; returns the
    edges per compressed bucket."""
    n = W.shape[0]
    mask = (np.int64(1) << bits) - 1
    hist = np.zeros(n_ranks, dtype=np.int64)
    last = -1
    last_rank = 0
    for i in range(n):
        row = W[i]
        base = i * n
        for j in range(n):
            if j == i:
                rank[base + j] = 0
                continue
            a = (discretize(np.float64(row[j]), sgn, s, inv) - kmin) >> bshift
            if a != last:
                h = _hset_home(a, bits)
                while table[h] != a:
                    h = (h + 1) & mask
                last = a
                last_rank = slot_rank[h]
            rank[base + j] = last_rank
            if j > i:
                hist[last_rank] += 1
    return hist


@njit(cache=CACHE, nogil=True)
def _ranks_csr(indptr, indices, data, sgn, s, inv, kmin, bshift, table, bits, slot_rank, n_ranks, rank):
    """As ``_ranks_dense`` for a CSR graph (each edge counted at its entry above the diagonal)."""
    mask = (np.int64(1) << bits) - 1
    hist = np.zeros(n_ranks, dtype=np.int64)
    for v in range(indptr.shape[0] - 1):
        for p in range(indptr[v], indptr[v + 1]):
            a = (discretize(data[p], sgn, s, inv) - kmin) >> bshift
            h = _hset_home(a, bits)
            while table[h] != a:
                h = (h + 1) & mask
            rank[p] = slot_rank[h]
            if indices[p] > v:
                hist[slot_rank[h]] += 1
    return hist


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
            "privacy calibration is proven). Whether weights pass this check depends on the "
            "data, so the inputs must lie in a public range: pass bounds=(lo, hi), public "
            "clipping bounds chosen without looking at the data, which clip every weight "
            "and make this check depend on the bounds alone; or use a larger discretization"
        )
    # the kernels' own rounding (discretize is monotone in sgn * w)
    inv = exact_inverse(s)
    keys = sorted((int(discretize(graph.wmin, sgn, s, inv)), int(discretize(graph.wmax, sgn, s, inv))))
    return keys[0], keys[1]


def queue_memory_bytes(n, m, dense, stored=None):
    """Bytes a grouped-queue release (``noise="exponential"``) may need on a graph of
    this shape, WHATEVER its weights: what :func:`gq_build` checks, and all it may use.

    Parameters
    ----------
    n, m : int
        Vertices and (undirected) edges.
    dense : bool
        A dense matrix (m = n (n - 1) / 2) or a CSR graph.
    stored : int, optional
        Stored entries of the CSR graph (2 m by default).

    Returns
    -------
    int
        Dense: the slot store (one int64 per edge, a spare per bucket, the
        window's extra slots), the arrays of the at most 2**14 buckets of the
        direct and wide layouts, the O(n) Prim state, and the validation's
        listing buffers (``listing_bytes``: allocated before the queue, and the
        main one alive beside it). Sparse: the compressed
        layout (a rank per stored entry, the slots, and for up to m occupied
        buckets the hash set and the per-bucket arrays: 4 stored + 136 m bytes)
        or the direct one (at most 8 m + 56 (m / 4 + 2**18)), whichever is larger.

    Notes
    -----
    Public quantities only (n, m, dense, stored), never the key range: a release
    of a given shape is then refused for every input or for none (issue 25). The
    layouts that would need more (a dense range of many buckets that crowd: the
    compressed layout, whose hash set may hold up to m buckets) are used only
    when they fit in the memory available at that time, and otherwise the wide
    layout (exact too, slower on such weights) is. The slot store is allocated
    lazily, but weights that the noise swamps write nearly every slot, so it is
    counted whole (docs/design.rst, What a release allocates).
    """
    n, m = int(n), int(m)
    if dense:
        # buckets: at most WIDE_MIN_FINE direct ones (more are wide ones, or a layout
        # used only when it fits), at most _WIDE_BUCKETS wide ones
        B = max(min(_window.WIDE_MIN_FINE, m // 4 + _DIRECT_SLACK), _WIDE_BUCKETS)
        # (a wide bucket's split: its sub-buckets' arrays and the hash set that counts them)
        return 8 * (m + _extra_max(m) + B) + 48 * B + 64 * n + listing_bytes(n) + 128 * SPLIT_MAX
    stored = 2 * m if stored is None else int(stored)
    return max(_compressed_bytes(m, m, stored), 8 * m + 56 * (m // 4 + _DIRECT_SLACK)) + 64 * n


def listing_bytes(n):
    """The validation's listing buffers of an (n, n) matrix (``dense_scan.sample_islands``:
    one of ``window.listed_capacity(n)`` int64 keys, for matrices of at least
    ``window.ISLANDS_MIN_ENTRIES`` entries, and one per extra scan part,
    ``window.window_fork``): counted for every such matrix whether or not its weights
    make the scan list anything (so the figure stays a function of n and the thread
    count, issue 25), one buffer a thread (``threads.thread_count``: the scan's parts).
    The forks' buffers are freed with the scan, before the queue is built; the main
    one lives beside the queue."""
    n = int(n)
    if n * n < _window.ISLANDS_MIN_ENTRIES:
        return 0
    return 8 * _window.listed_capacity(n) * thread_count()


def _compressed_bytes(m, distinct, ranked):
    """The compressed layout's need: a rank (int32, or int64 from 2**31 edges) for each
    of ``ranked`` entries, the slot store, and for up to ``distinct`` occupied buckets
    the hash set (ids, counts and ranks in at most 4 slots per bucket, and its copy
    while it grows), its sorted ids and the per-bucket arrays: 128 bytes each at most,
    plus the room a row or a chunk of 2**16 entries keeps in the set."""
    rank_bytes = 4 if m < 2**31 else 8
    return ranked * rank_bytes + 8 * m + 128 * distinct + 2**23


def _ranges_bytes(m, distinct):
    """The most the islands (``_island_ranges``) add for a dense graph of m edges with at
    most ``distinct`` occupied buckets outside them (a bound, or counted:
    ``_counted_fits``): their buckets beyond the occupied ones (128 bytes each, as
    ``_compressed_bytes``), the sample's set, and the buffers of the pass's parts
    before they merge: an id in one of them per edge at most (32 bytes each), and at
    most about twice the distinct ids of their part plus a row or two
    (``_outside_part``: deduplicated when full, doubled while over half full), five such
    arrays alive at a deduplication (the buffer, its sorted copy, the mask, the distinct
    ids, the grown buffer): 512 bytes an id and a vertex, plus the initial buffers."""
    buffers = min(32 * m, 512 * (int(distinct) + math.isqrt(2 * m) + 2) + (1 << 24))
    return 128 * (m // _COARSE_BUDGET + _COARSE_SLACK) + buffers + (16 << _SAMPLE_BITS)


def _compressed_need(m, occupied):
    """The dense compressed layout's need for at most ``occupied`` occupied buckets
    outside its islands: ``gq_build``'s one figure, with the bound min(m, B + 1) first,
    then (``_counted_fits``) with a count."""
    return _compressed_bytes(m, occupied, 0) + _ranges_bytes(m, occupied)


def _counted_fits(graph, sgn, s, inv, kmin, kmax, bshift, most, fits, window=None):
    """The islands and the occupied buckets outside them, (ranges, outside)
    (``_dense_outside``), when the dense compressed layout (kmin: its own,
    ``_compressed_kmin``) fits by ``fits`` with them counted, else None: the build
    then takes them as they are (one pass over W at most, issue 31), or the keys the
    validation ``window`` listed outside its islands (no pass). Counted, not bounded by
    ``most`` (the key range's B + 1, or m). The estimate ``gq_build`` tries first assumes
    ``most`` of them, and where that does not fit the wide layout was taken, whose top
    bucket, when it holds most edges (integers 0..99 plus a few 10**9: ~1e11 noise-wide
    buckets, ~100 occupied), is split at O(its edges) a step: O(n**3) (issue 31;
    docs/design.rst, One far edge at n = 16,000). The count is the islands' own pass
    (``_island_ranges``, ``_outside_part``: a few compares an entry of an island, a key
    for the others) under a cap on the ids, the most that fit (by doubling), so it
    stays within the figure it checks. Never an under-estimate: the islands' buckets
    and the pass's buffers are bounded as ``_ranges_bytes`` bounds them. Speed only: the
    refusal stays ``queue_memory_bytes``' (issue 25), and either layout is exact."""
    m = graph.m
    cap = 0
    d = 1 << 12
    while d <= 2 * most and fits(_compressed_need(m, min(most, d))):
        cap = d
        d *= 2
    if cap == 0:
        return None
    ranges, outside = _dense_outside(graph, sgn, s, inv, kmin, kmax, bshift, window, cap)
    if outside is not None and outside.shape[0] <= cap and fits(_compressed_need(m, min(most, outside.shape[0]))):
        return ranges, outside
    return None


def _compress(graph, sgn, s, inv, kmin, bshift, rank_t, ranked, window=None, kmax=None, counted=None):
    """The compressed layout: the occupied aligned buckets ((key - kmin) >> bshift) in a
    hash set (never a comparison sort of m keys), their ids (increasing) and edge
    counts, and, where ``ranked``, each edge's rank among them (else an empty array: the update loops look the few ranks they need
    up in the set). Returns (rank, occupied, hist, table, slot_rank, bits).
    O(m) expected time. ``window``: the validation's complete ``TopWindow``, or None; a
    dense graph's islands are then the ones it sampled (when it did), and the keys it
    listed outside them (when complete) replace the pass over W (``_islands``)."""
    n = graph.n
    if window is not None and tuple(window.scale) != (sgn, s, inv):
        raise AssertionError("gq_build: the window counted other keys")
    if graph.dense:
        # the islands and the buckets outside them: the count's when gq_build counted
        # them (``_counted_fits``, the same kmin and shift), else found now
        ranges, outside = counted if counted is not None else _dense_outside(graph, sgn, s, inv, kmin, kmax,
                                                                             bshift, window)
        # the ids in order: the islands' runs merged with the sorted others (a stable
        # sort of a few sorted runs: timsort), then each slot's rank by a lookup per id
        table, bits, occupied, slot_rank = _islands(graph, sgn, s, inv, kmin, bshift, ranges, outside=outside)
    else:
        table, counts, bits = _occupied(graph, sgn, s, inv, kmin, bshift)
        valid = np.flatnonzero(table >= 0)
        # one argsort of the B ids gives both their order and each slot's rank (a
        # searchsorted of the whole table cost 4x more with Pareto weights' 196,181 buckets)
        order = np.argsort(table[valid])
        occupied = table[valid[order]]
        slot_rank = np.zeros(table.shape[0], dtype=np.int64)  # free slots: never read
        slot_rank[valid[order]] = np.arange(order.shape[0], dtype=np.int64)
    B = occupied.shape[0]
    if not ranked:  # dense: sized lazily (the window, then cutqueue_materialize._size_buckets)
        return np.zeros(0, dtype=rank_t), occupied, None, table, slot_rank, bits
    if graph.dense:
        rank = np.empty(n * n, dtype=rank_t)
        hist = _ranks_dense(graph.W, sgn, s, inv, kmin, bshift, table, bits, slot_rank, B, rank)
    else:
        rank = np.empty(graph.data.shape[0], dtype=rank_t)
        hist = _ranks_csr(graph.indptr, graph.indices, graph.data, sgn, s, inv, kmin, bshift, table,
                          bits, slot_rank, B, rank)
    return rank, occupied, hist, table, slot_rank, bits


def _top_pad(K, bshift, fine_shift):
    """By how many keys a compressed queue's kmin moves down (its groups below the true
    kmin stay empty) so that kmax lies near the top of its bucket: the walk bounds a
    bucket by its highest key, and with kmin-aligned buckets the best key lay anywhere
    up to sigma noise units below its bucket's top, a gap that every step paid in
    nodes and extra members (Pareto weights at n = 4000: 6.6 nodes and 3.5 extras a
    step, against 4.0 and 1.3 on uniform weights). The pad stays a multiple of the
    validation window's bin width (2**fine_shift keys; -1: no window), so the buckets'
    bounds keep their place against the bins (``window.window_capacities``): a bucket
    straddling two bins would be sized with both, every edge of the window counted
    twice where few keys crowd (integer weights: bins and buckets of 2**13 keys, the
    window then sized nothing). Speed only: which bucket an edge is in never changes
    the law (docs/design.rst, Compressed buckets). O(1)."""
    pad = (-int(K)) & ((1 << int(bshift)) - 1)
    if fine_shift > 0:
        pad &= ~((1 << int(fine_shift)) - 1)
    return pad


# a re-aligned key range keeps kmin above -2**62 and every key - kmin below 2**62
_KEY_ALIGN_LIMIT = 1 << 62


def _compressed_kmin(kmin, K, bshift, window):
    """A compressed queue's kmin: moved down by ``_top_pad`` (the window's bins, when
    any, set its multiple), while the range stays within the keys' +-2**62 (Python
    ints: no int64 wrap at the extremes)."""
    pad = _top_pad(K, bshift, -1 if window is None else int(window.state[_window.WIN_FINE_SHIFT]))
    if int(K) + pad <= _KEY_ALIGN_LIMIT and int(kmin) - pad > -_KEY_ALIGN_LIMIT:
        return kmin - pad
    return kmin


def gq_build(graph, sgn, s, r, bucket_width, window=None, fits=memory_fits):
    """Build an empty ``GroupQueue`` for every edge of ``graph`` (a ``Graph``).

    ``r`` (the noise rate in key units) and ``bucket_width`` set the bucket width (see
    ``sampler.rnm_select``); a negative ``bucket_width`` makes buckets single groups
    resolved one by one (a test setting). O(n + B) time for a dense queue with
    direct keys, O(m + B) otherwise (B buckets): a histogram of the buckets
    (direct addressing), or the occupied ones compressed (``_compress``; expected
    time with its hash set). Checks the memory it needs before allocating. ``window``: the
    :class:`TopWindow` of ``top_window(sgn, s, r, bucket_width)`` that validated the
    graph's W, or None; when complete, the top buckets of a lazily sized queue are
    sized from it (no sizing pass at the first materialization). ``fits``: whether a
    number of bytes more fits in memory (``core.memory_fits``, which reads the free
    memory); it decides between the wide and the compressed layouts of a crowded dense
    range, a speed choice (tests pass their own to force either); the refusal is
    ``queue_memory_bytes``', checked with ``core.require_memory`` whatever ``fits``.
    """
    n, m = graph.n, graph.m
    if n > 1 << _END_BITS and graph.dense:
        raise ValueError(f"dense input with n = {n} > 2**20 vertices is not supported; use scipy.sparse")
    # the need of every layout for this shape, whatever the weights: checked first, so
    # that a refusal never depends on the weights (issue 25)
    require_memory(queue_memory_bytes(n, m, graph.dense, None if graph.dense else graph.data.shape[0]),
                   f"fast_pamst on n = {n}, m = {m}")
    inv = exact_inverse(s)
    kmin, kmax = _key_range(graph, sgn, s) if m > 0 else (0, 0)
    K = kmax - kmin + 1
    # direct addressing when the key range makes few buckets (their width depends
    # on r and bucket_width only, never on the weights' layout); keys are never stored then
    bshift = _bucket_shift(K, r, bucket_width) if bucket_width >= 0 else 0
    B = ((K - 1) >> bshift) + 1  # buckets of the key range
    sub_shift = bshift
    wide = False
    min_sized = _SIZE_MIN
    bucket_hist = None
    counted = None  # the islands and the buckets outside them, when counted (_counted_fits)
    rank_t = np.int32 if m < 2**31 else np.int64
    if graph.dense and bucket_width >= 0 and B > _window.WIDE_MIN_FINE:
        # many noise-wide buckets: try at most _WIDE_BUCKETS wide ones instead, whose
        # counters stay in cache; the sampler splits the few it reaches (docs/design.rst)
        wshift = int(_wide_shift(np.int64(K - 1), np.int64(bshift)))
        B_wide = ((K - 1) >> wshift) + 1
        # a crowded bucket would be split at O(its edges) per selection. The test needs
        # only the share of the fullest bucket, so it reads a sample of whole rows
        # (about 2**18 entries): a histogram of every key cost more than the release.
        # Speed only: either layout is exact
        stride = max(1, n // max(_CROWD_ROWS, _CROWD_SAMPLE // n))
        sample = _hist_dense_rows(graph.W, sgn, s, inv, kmin, wshift, B_wide, stride)
        fullest = sample.max() * m / sample.sum()  # its estimated number of edges
        # compressed: the hash set of up to m occupied buckets (a dense queue stores no
        # rank per entry); speed only: wide buckets where it does not fit
        # (its occupied buckets are at most the range's B noise-wide ones, plus one for the
        # alignment at the top: counting m of them refused the compressed layout of one far
        # edge over n = 16,000 uniform weights, 21 GB estimated, and the wide one it got
        # instead kept all the others in one bucket split at O(its edges) a step: hours)
        other = _compressed_need(m, min(m, B + 1))
        crowded = fullest > max(_WIDE_FILL_MIN, _WIDE_FILL_FACTOR * m // B_wide)
        if crowded and not fits(other):
            # ... and where that bound does not fit, the occupied buckets counted (a pass
            # over W): integers 0..99 plus a few 10**9 at n = 16,000 have ~1e11 of the
            # range's buckets and ~100 occupied (issue 31)
            # (counted once: the build takes the count's result, _compress)
            counted = _counted_fits(graph, sgn, s, inv, _compressed_kmin(kmin, K, bshift, window), kmax, bshift,
                                    min(m, B + 1), fits, window)
            crowded = counted is not None
        if not crowded:
            # sub-buckets of bucket_width noise units, or wider when a slot cannot number them
            # all (keys spanning over 2**(37 + bshift)): exact still, a few more draws
            sub_shift = max(bshift, wshift - _FINE_BITS)
            wide, bshift, B = True, wshift, B_wide
            # the top buckets that hold ~1/_WIDE_SIZE_SHARE of the sample: the first
            # sizing pass covers them (speed only, like the rest of the sample's use)
            from_top = np.cumsum(sample[::-1])
            min_sized = max(min_sized, int(np.searchsorted(from_top, from_top[-1] / _WIDE_SIZE_SHARE)) + 1)
    if bucket_width < 0:
        # the test setting (single-group buckets): direct while the range is small
        # against m, else compressed buckets of one key each (the distinct keys)
        direct = B <= m // 4 + _DIRECT_SLACK
    elif graph.dense:
        # more than WIDE_MIN_FINE noise-wide buckets that crowd (or wide ones that do
        # not fit): compressed, whose cost follows the occupied buckets, not the span
        direct = wide or B <= _DIRECT_DENSE_MAX
    else:
        direct = B <= m // 4 + _DIRECT_SLACK

    hash_bits = 0
    table = slot_rank = np.zeros(0, dtype=np.int64)
    if direct:
        G = K
        key = np.zeros(0, dtype=np.int64)  # gq_key: kmin + g
        rank = np.zeros(0, dtype=rank_t)
        # a dense queue sizes its buckets when it materializes them (cutqueue_materialize._size_buckets): a
        # histogram of every key cost more than the sizing passes, for the few buckets
        # the sampler reads
        if not graph.dense:
            bucket_hist = _hist_csr_direct(graph.indptr, graph.indices, graph.data, sgn, s, inv, kmin,
                                           bshift, B)
    else:
        # a rank per edge where the update loops read every edge's group (sparse,
        # single groups); a dense queue (lazy counts) finds the groups of the few edges
        # it filters in through the hash set instead
        ranked = not graph.dense or bucket_width < 0
        # kmax at the top of its bucket (dense: as near as the window's bins allow)
        kmin = _compressed_kmin(kmin, K, bshift, window)

        rank, occupied, bucket_hist, table, slot_rank, bits = _compress(graph, sgn, s, inv, kmin, bshift,
                                                                        rank_t, ranked, window, kmax, counted)
        B = occupied.shape[0]
        G = B << bshift
        # gq_key: the base key of each compressed bucket (aligned at kmin, moved so that
        # kmax tops its bucket), plus the offset
        key = (occupied.astype(np.int64) << bshift) + kmin
        if ranked:
            table = slot_rank = np.zeros(0, dtype=np.int64)
        else:
            hash_bits = bits
    # per-group counts are needed only where a bucket can fail the span test: single
    # groups (bucket_width < 0); a compressed bucket spans at most its 2**bshift keys
    group_counts = bucket_width < 0
    # one spare slot per bucket, past its edges: the plain update loop writes a
    # leaving edge's slot there instead of branching on it
    start = np.zeros(B, dtype=np.int64)
    extra = 0  # slots past m + B: a window's capacities may exceed their edges
    if bucket_hist is None:
        cap = np.zeros(B, dtype=np.int64)
        sized = np.array([B, 0], dtype=np.int64)
        top = None
        if window is not None:
            if tuple(window.scale) != (sgn, s, inv):
                raise AssertionError("gq_build: the window counted other keys")
            top = _window_capacities(window, kmin, bshift, B, m, None if direct else key)
        if top is not None:
            b_lo, caps, extra = top
            cap[b_lo:] = caps
            np.cumsum(cap[b_lo:-1], out=start[b_lo + 1:])
            sized[:] = (b_lo, caps.sum())
    else:
        cap = bucket_hist.astype(np.int64) + 1
        np.cumsum(cap[:-1], out=start[1:])
        sized = np.array([0, cap.sum()], dtype=np.int64)
    layered, block_shift, n_blocks = _block_layer(B, graph.dense and not direct and not group_counts)
    layout = QueueLayout(
        n=np.int64(n),
        dense=bool(graph.dense),
        sgn=np.float64(sgn),
        s=np.float64(s),
        inv=np.float64(inv),
        kmin=np.int64(kmin),
        direct=bool(direct),
        n_groups=np.int64(G),
        n_buckets=np.int64(B),
        n_blocks=np.int64(n_blocks),
        bucket_shift=np.int64(bshift),
        block_shift=np.int64(block_shift),
        layered=bool(layered),
        wide=bool(wide),
        sub_shift=np.int64(sub_shift),
        group_counts=bool(group_counts),
        # the plain update loop of a dense graph counts only materialized buckets
        # (direct or compressed keys alike: _update_plain, _update_compressed, the latter
        # with the block layer too, materialized by whole blocks)
        lazy_counts=bool(graph.dense and not group_counts and (not direct or not layered)),
        min_sized=np.int64(min(min_sized, B)),
        hash_bits=np.int64(hash_bits),
    )
    counts = QueueCounts(
        bucket=np.zeros(B, dtype=np.int64),
        block=np.zeros(n_blocks, dtype=np.int64),
        group=np.zeros(G if group_counts else 1, dtype=np.int64),
        total=np.zeros(1, dtype=np.int64),
    )
    store = SlotStore(
        start=start,
        cap=cap,
        fill=np.zeros(B, dtype=np.int64),
        # np.empty leaves pages untouched: slots of buckets never materialized cost no memory
        slots=np.empty(m + B + extra, dtype=np.int64),
        ends=graph.indices,
        # dense graphs start with no bucket materialized, sparse ones with all
        materialized=np.array([B if graph.dense else 0], dtype=np.int64),
        open_bucket=np.array([-1, 0], dtype=np.int64),
        sized=sized,
        # the sampler's counted range (none decided yet) and far-edge count (not counted yet)
        top_range=np.array([-1, 0], dtype=np.int64),
        far_edges=np.array([-1], dtype=np.int64),
        # the wide bucket split into its sub-buckets (none yet; SlotStore.split's four
        # fields), and their arrays
        split=np.array([-1, 0, 0, 0], dtype=np.int64),
        subs=np.zeros((4, SPLIT_MAX if wide else 0), dtype=np.int64),
        # no slot written yet: every bucket's highest written offset is -1
        top=np.full(B, -1, dtype=np.int64),
    )
    nd = n if graph.dense else 0
    cut = CutSides(
        inside=np.empty(nd, dtype=np.int64),
        rest=np.arange(nd, dtype=np.int64),
        where=np.arange(nd, dtype=np.int64),
        sizes=np.array([0, n], dtype=np.int64),
    )
    return GroupQueue(layout, GroupKeys(key=key, rank=rank, table=table, slot_rank=slot_rank), counts,
                      store, cut)
