"""The validation's top window: the highest keys of W, counted while W is validated.

A release with ``noise="exponential"`` builds a grouped queue (``cutqueue_build.gq_build``)
whose sampler reads only the few buckets near the top of the cut. Their sizes,
and whether the key range calls for wide buckets, are what the queue build needs
to choose its layout and size its slot store. Rather than a second pass over W
of its own, it reads them from a :class:`TopWindow` that the validation pass
(``graph._dense_scan``) fills as it reads each tile: a running histogram of the
highest keys, in fine bins that need neither the minimum key nor the bucket
layout (known only after the pass). Speed only: any window, or none, gives the
same releases.

``top_window`` makes an empty window, ``window_threshold`` and ``window_add``
are what the validation's compiled scan calls per tile (``window_list`` with islands,
``window_add_tile`` for a tile read without a list at high noise), ``window_fork`` and
``window_join`` split and merge it across the validation threads, and
``window_capacities`` turns a complete window into the top buckets' capacities
for ``gq_build``. The wide-bucket rule the window anticipates (``WIDE_MIN_FINE``,
``WIDE_BUCKETS``, ``wide_shift``) is the queue's, kept here, below both.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from .core import CACHE, jit_only
from .keys import bucket_shift_for, discretize, exact_inverse, score_floor

# the queue's wide buckets (cutqueue_build.gq_build): considered above WIDE_MIN_FINE
# noise-wide buckets, at most WIDE_BUCKETS of them (3 int64 arrays of that length
# fit in a 512 KB L2 cache)
WIDE_MIN_FINE = 1 << 14
WIDE_BUCKETS = 1 << 14


# the slots of TopWindow.state (documented there)
WIN_TOP = 0
WIN_FINE_SHIFT = 1
WIN_SEEN = 2
WIN_COMPLETE = 3
WIN_BINS = 4
WIN_WIDE_MIN = 5
WIN_BSHIFT = 6
WIN_ISLANDS = 7
WIN_LISTED = 8
WIN_LISTED_FULL = 9
WIN_SKEWED = 10
WIN_ISLAND_KEYS = 11  # island r's keys: [state[WIN_ISLAND_KEYS + 2 r], state[WIN_ISLAND_KEYS + 2 r + 1])

# at most this many islands are sampled before the validation (its scan compares every
# entry with each: 2 compares an island)
ISLANDS_MAX = 4
# the islands are sampled, and the entries outside them listed, for matrices of at least
# this many entries (below it the queue's own pass costs little); read by
# ``dense_scan._scan_dense`` at each call (tests lower it)
ISLANDS_MIN_ENTRIES = 1 << 20
# the keys one part of the scan lists (each part its own buffer): at least this many,
# at most _LISTED_MAX; a part that lists more stops listing (the build then makes its
# own pass over W: the same buckets)
_LISTED_MIN = 1 << 16
_LISTED_MAX = 1 << 22
WIN_SLOTS = WIN_ISLAND_KEYS + 2 * ISLANDS_MAX

TopWindow = namedtuple("TopWindow", ["ring", "state", "scale", "islands", "listed"])
TopWindow.__doc__ = """A running histogram of the highest keys of a dense matrix.

``graph._dense_scan`` fills it while it validates W, so that ``gq_build`` can
size the top buckets (what a release's first materialization needs, and on the
benchmark all it needs) without a sizing pass over W of its own (measured in
docs/design.rst, Lazy materialization). Keys are counted in *fine bins* of
2**fine_shift keys, aligned at multiples of it, so the counts need neither kmin
nor the bucket layout, which are known only after the pass. A bucket's capacity
is the sum of the fine bins it overlaps: an upper bound of its edges (its end
bins may be shared), which is all a capacity must be.

ring : int64 (_WINDOW_RING,)
    The edge counts of the fine bins top - bins + 1 .. top (the window); bin f at
    ring[f & (_WINDOW_RING - 1)]. Bins below the window are not counted.
state : int64 (WIN_SLOTS,)
    Indexed by the module's constants: ``WIN_TOP`` the highest fine bin seen,
    ``WIN_FINE_SHIFT`` the log2 of a bin's width in keys (-1: no window, nothing
    is counted), ``WIN_SEEN`` 1 once a bin was counted, ``WIN_COMPLETE`` 1 once
    every entry of the strict upper triangle went through the window,
    ``WIN_BINS`` the window's length (WINDOW_BINS), ``WIN_WIDE_MIN`` the number
    of noise-wide buckets above which the queue makes wide ones (WIDE_MIN_FINE,
    unless ``top_window`` was given another). When the first tile's keys alone
    would make wide buckets, the first ``window_add`` widens the bins to half a
    wide bucket of that range and the window to _WINDOW_BINS_WIDE of them, before
    counting anything. ``WIN_BSHIFT`` the log2 of a noise-wide bucket in keys
    (the queue's ``bucket_shift`` for any range of more than WIDE_MIN_FINE of
    them). The islands (``dense_scan.sample_islands``, docs/design.rst, Islands
    sampled before the validation): ``WIN_ISLANDS`` -2 when none are wanted, -1
    when wanted but not sampled (a small matrix), -3 when the islands would leave
    over 1/32 of the entries outside (nothing is listed), else how many were
    sampled (0 to ISLANDS_MAX; one, the sample's whole range, when its keys span few
    buckets), island r's keys in [state[WIN_ISLAND_KEYS + 2 r],
    state[WIN_ISLAND_KEYS + 2 r + 1]); ``WIN_SKEWED`` 1 when the first island holds
    most entries (the scan then tests it first, with a branch); ``WIN_LISTED`` the
    keys in ``listed``;
    ``WIN_LISTED_FULL`` 1 when ``listed`` ran out of room (the list is then
    incomplete).
scale : float64 (3,)
    (sgn, s, inv) of the keys, as ``discretize`` takes them.
islands : float64 (2 ISLANDS_MAX,)
    Scores lo_r, hi_r such that an entry with lo_r <= sgn * w < hi_r surely has its
    key in island r (``cutqueue_build._range_scores``); unused islands (inf, -inf)
    never hold an entry.
listed : list
    Empty, or (once the islands are sampled) one int64 buffer (``listed_capacity``)
    whose first ``state[WIN_LISTED]`` entries are the keys of the entries the scan
    found outside every island (joined: distinct and increasing): with the islands,
    all the buckets of a dense compressed queue, so that ``gq_build`` needs no pass
    over W of its own.
"""

WINDOW_FINE_BITS = 3  # a noise-wide bucket (2**bshift keys) is 8 fine bins
WINDOW_BINS = 80  # 10 noise-wide buckets: the cutqueue_materialize._SIZE_MIN top ones, whatever their alignment
# wide buckets: bins of half a wide bucket of the first tile's key range, 1000 of them
# (~500 buckets, about 3% of the range: the depth cutqueue_build._WIDE_SIZE_SHARE aims at)
_WINDOW_BINS_WIDE = 1000
_WINDOW_RING = 1024
_WINDOW_FULL_TILE = 1024  # entries of a first tile that decides its bins by its crowding
assert _WINDOW_BINS_WIDE <= _WINDOW_RING and _WINDOW_RING & (_WINDOW_RING - 1) == 0


def _empty_state(fine_shift, wide_min_fine, bshift=-1, islands=False):
    """The state of a window that has counted nothing, with bins of 2**fine_shift keys."""
    state = np.zeros(WIN_SLOTS, dtype=np.int64)
    state[WIN_FINE_SHIFT] = fine_shift
    state[WIN_BINS] = WINDOW_BINS
    state[WIN_WIDE_MIN] = wide_min_fine
    state[WIN_BSHIFT] = bshift
    state[WIN_ISLANDS] = -1 if islands else -2
    return state


def _no_islands():
    """The ``islands`` of a window without islands: every bound (inf, -inf)."""
    b = np.empty(2 * ISLANDS_MAX, dtype=np.float64)
    b[0::2] = np.inf
    b[1::2] = -np.inf
    return b


def top_window(sgn, s, r, bucket_width, wide_min_fine=None):
    """An empty :class:`TopWindow` for the queue ``gq_build(graph, sgn, s, r, bucket_width)``
    will build: fine bins of an eighth of its noise-wide buckets. Public inputs only.

    ``wide_min_fine``: above how many noise-wide buckets the queue will make wide
    ones, None for the queue's rule (WIDE_MIN_FINE, read at this call). The window's
    compiled rule takes it from the state, not from the module global, which numba
    would have frozen at compile time: a caller that builds its queue under another
    rule (a test turning wide buckets off) passes it here.

    The window wants islands (``state[WIN_ISLANDS]`` -1): a validation of a matrix of
    at least ISLANDS_MIN_ENTRIES entries samples them before its pass and lists the
    keys outside them (``dense_scan.sample_islands``), so that a compressed queue's
    build needs no pass over W.
    """
    if wide_min_fine is None:
        wide_min_fine = WIDE_MIN_FINE
    fine_shift = bshift = -1
    if bucket_width >= 0:
        bshift = bucket_shift_for(np.int64(2) ** 62, r, bucket_width)
        fine_shift = max(bshift - WINDOW_FINE_BITS, 0)
    return TopWindow(
        ring=np.zeros(_WINDOW_RING, dtype=np.int64),
        state=_empty_state(fine_shift, wide_min_fine, bshift, bucket_width >= 0),
        scale=np.array([sgn, s, exact_inverse(s)], dtype=np.float64),
        islands=_no_islands(),
        listed=[],
    )


def listed_capacity(n):
    """The keys one part of the validation of an (n, n) matrix may list outside the
    islands (each part its own buffer): m / 32, within [_LISTED_MIN, _LISTED_MAX]."""
    return min(max(_LISTED_MIN, (n * (n - 1) // 2) >> 5), _LISTED_MAX)


# shared by every validation without a window: never written (fine_shift -1; a
# read-only ring would be another type, so another compilation of the scan)
NO_WINDOW = TopWindow(np.zeros(_WINDOW_RING, dtype=np.int64), _empty_state(-1, WIDE_MIN_FINE),
                      np.array([-1.0, 1.0, 1.0]), _no_islands(), [])
# the kernel's ``listed`` when a window lists nothing
NO_LISTED = np.zeros(0, dtype=np.int64)


@njit(cache=CACHE, nogil=True)
def window_threshold(state, scale):
    """A score below which no entry can enter the window: every entry scoring at
    least this must go to :func:`window_add` (+inf without a window, -inf before
    the first bin)."""
    if state[WIN_FINE_SHIFT] < 0:
        return np.inf
    if state[WIN_SEEN] == 0:
        return -np.inf
    bottom = (state[WIN_TOP] - state[WIN_BINS] + 1) << state[WIN_FINE_SHIFT]  # its lowest key
    return score_floor(bottom, np.int64(0), np.int64(0), scale[1])


@jit_only(inline="always")
def _window_key(w, sgn, s, inv):
    """(whether w's key converts, the key): quotients that are not finite or reach 2**62
    are skipped by the window (the scan refuses the first, ``gq_build`` the second)."""
    y = sgn * w
    x = y * inv if inv != 0.0 else y / s
    if not abs(x) < 2.0 ** 62:
        return False, np.int64(0)
    return True, discretize(w, sgn, s, inv)


@njit(cache=CACHE, nogil=True)
def wide_shift(span, bshift):
    """log2 of the width of the wide buckets over keys spanning ``span`` + 1: the
    smallest shift >= bshift that makes at most WIDE_BUCKETS of them."""
    wshift = bshift
    while (span >> wshift) + 1 > WIDE_BUCKETS:
        wshift += 1
    return wshift


@jit_only
def _window_for_wide(state, scale, hitw, k, wide_min_fine):
    """At the window's first tile (every entry listed): when the tile's key range
    alone spans more than ``wide_min_fine`` noise-wide buckets (the queue's
    WIDE_MIN_FINE, passed from ``state[WIN_WIDE_MIN]``), the queue will have wide
    buckets, and the window counts bins of half a wide bucket of that range instead
    (``state[WIN_FINE_SHIFT]``), ``_WINDOW_BINS_WIDE`` of them (``state[WIN_BINS]``),
    unless over an eighth of a large tile falls in that window. A wider final range
    makes wider buckets, each the sum of more bins: the capacities stay upper
    bounds. Speed only."""
    sgn, s, inv = scale[0], scale[1], scale[2]
    lo = np.int64(2) ** 62
    hi = -lo
    for t in range(k):
        ok, key = _window_key(hitw[t], sgn, s, inv)
        if ok:
            lo = min(lo, key)
            hi = max(hi, key)
    if hi < lo:
        return
    span = hi - lo  # K - 1
    if (span >> (state[WIN_FINE_SHIFT] + WINDOW_FINE_BITS)) + 1 <= wide_min_fine:
        return
    fsh = wide_shift(span, state[WIN_FINE_SHIFT] + WINDOW_FINE_BITS) - 1  # as gq_build widens the buckets
    # a crowded top (most keys near the highest, a few far below: likely a crowded
    # layout, not a wide one) would make the validation key most entries: keep the
    # fine bins when over an eighth of a full tile lands in the wide window (a matrix
    # of a few tiles costs nothing either way)
    top = hi >> fsh
    inside = 0
    valid = 0
    for t in range(k):
        ok, key = _window_key(hitw[t], sgn, s, inv)
        valid += ok
        inside += ok and (key >> fsh) > top - _WINDOW_BINS_WIDE
    if valid >= _WINDOW_FULL_TILE and 8 * inside > valid:
        return
    state[WIN_FINE_SHIFT] = fsh
    state[WIN_BINS] = _WINDOW_BINS_WIDE


# the order-preserving map between a float64's bits and an int64 (an involution): the
# range of a batch is then an integer min/max, which vectorizes (a float one does not)
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)
# a batch of at least _BATCH_MIN weights whose keys span at most _BATCH_BINS fine bins is
# counted whole (window_add's batch path); a smaller one costs less entry by entry (the
# batch's two arrays: docs/design.rst, The validation pass at high noise)
_BATCH_MIN = 1024
_BATCH_BINS = 256


@jit_only(inline="always")
def ordered_bits(v):
    """The int64 bits v of a float64 mapped so that integer order is the floats' order
    (-0.0 just below +0.0, NaNs beyond the infinities); its own inverse."""
    return v ^ ((v >> 63) & _LOW63)


@jit_only
def _window_add_batch(ring, state, scale, hitw, k):
    """:func:`window_add` for a whole batch at once, when its keys span few fine bins
    (high noise: most entries of a tile reach the threshold, a few bins hold them all).
    Returns False, having changed nothing, when it does not apply.

    The batch's key range comes from its lowest and highest weights (keys are monotone
    in the weight), so every key of the batch converts when both ends do. One bin: the
    window slides to it and adds k, with no key per entry. A few bins (power-of-two s):
    the bins in one loop that vectorizes, counted in four local histograms. Sliding to the batch's
    highest bin first and counting the bins then inside the window gives the window the
    per-entry loop gives: a bin it counted and then left is never read again (its slot is
    cleared before it re-enters)."""
    sgn, s, inv = scale[0], scale[1], scale[2]
    v = hitw.view(np.int64)
    lo = _LOW63
    hi = -_LOW63 - 1
    for t in range(k):
        x = ordered_bits(v[t])
        lo = min(lo, x)
        hi = max(hi, x)
    ends = np.empty(2, dtype=np.int64)
    ends[0] = ordered_bits(lo)
    ends[1] = ordered_bits(hi)
    w = ends.view(np.float64)
    ok0, ka = _window_key(w[0], sgn, s, inv)
    ok1, kb = _window_key(w[1], sgn, s, inv)
    if not (ok0 and ok1):
        return False
    fsh = state[WIN_FINE_SHIFT]
    flo = min(ka, kb) >> fsh
    fhi = max(ka, kb) >> fsh
    if fhi - flo >= _BATCH_BINS:
        return False
    if fhi > flo and inv == 0.0:
        return False  # the bins below need the exact quotient
    top = state[WIN_TOP]
    bins = state[WIN_BINS]
    mask = _WINDOW_RING - 1
    if fhi > top:  # as the per-entry loop slides at its highest entry
        for g in range(max(top + 1, fhi - _WINDOW_RING + 1), fhi + 1):
            ring[g & mask] = 0
        top = fhi
    if flo == fhi:
        if flo > top - bins:
            ring[flo & mask] += k
    else:
        # each entry's bin, in floating point: the key floor(y inv) as discretize computes
        # it (y inv is exact for a power-of-two s; an underflow to -0.0 of a negative y is
        # key -1), then floor(key 2**-fsh) = key >> fsh (an integer below 2**62 scaled by
        # a power of two: exact). A loop that vectorizes, then the increments into four
        # histograms, so that runs of one bin do not chain on one counter
        span = fhi - flo + 1
        down = 2.0 ** -np.float64(fsh)
        base = np.float64(flo)
        idx = np.empty(k, dtype=np.int32)
        for t in range(k):
            y = sgn * hitw[t]
            x = y * inv
            key = np.floor(x) - np.float64((x == 0.0) & (y < 0.0))
            idx[t] = np.int32(np.floor(key * down) - base)
        hist = np.zeros((4, span), dtype=np.int64)
        for t in range(k):
            hist[t & 3, idx[t]] += 1
        for f in range(max(flo, top - bins + 1), fhi + 1):
            c = f - flo
            ring[f & mask] += hist[0, c] + hist[1, c] + hist[2, c] + hist[3, c]
    state[WIN_TOP] = top
    return True


@njit(cache=CACHE, nogil=True)
def window_add(ring, state, scale, hitw, k):
    """Count the weights hitw[:k] (entries that passed ``window_threshold``) in their fine
    bins, sliding the window up to the highest. Per validation tile, not per entry.

    Weights whose quotient is not finite or reaches 2**62 are skipped: the scan
    refuses the first, ``gq_build`` the second, and their keys would not convert.
    ``hitw``: a contiguous float64 array. A batch whose keys span few bins is counted
    whole (``_window_add_batch``: the same window).
    """
    sgn, s, inv = scale[0], scale[1], scale[2]
    if state[WIN_FINE_SHIFT] < 0:
        return
    top = state[WIN_TOP]
    seen = state[WIN_SEEN]
    if seen != 0 and k >= _BATCH_MIN and _window_add_batch(ring, state, scale, hitw, k):
        return
    if seen == 0:
        _window_for_wide(state, scale, hitw, k, state[WIN_WIDE_MIN])
    fsh = state[WIN_FINE_SHIFT]
    bins = state[WIN_BINS]
    mask = _WINDOW_RING - 1
    for t in range(k):
        ok, key = _window_key(hitw[t], sgn, s, inv)
        if not ok:
            continue
        f = key >> fsh
        if seen == 0:
            top = f
            seen = 1
        elif f > top:
            # the slots of bins top + 1 .. f held bins below the window: clear them
            for g in range(max(top + 1, f - _WINDOW_RING + 1), f + 1):
                ring[g & mask] = 0
            top = f
        if f > top - bins:
            ring[f & mask] += 1
    state[WIN_TOP] = top
    state[WIN_SEEN] = seen


def window_fork(window):
    """A window that counts another part of the matrix in ``window``'s bins: the same
    state (top, bins, length: decided by the first tile, so fork after it), an empty
    ring. The validation threads each fill one; :func:`window_join` adds them up.
    Without a window (``NO_WINDOW``, never written) the window itself."""
    if window.state[WIN_FINE_SHIFT] < 0:
        return window
    state = window.state.copy()
    state[WIN_LISTED] = 0
    state[WIN_LISTED_FULL] = 0
    return TopWindow(np.zeros_like(window.ring), state, window.scale, window.islands,
                     [np.empty_like(b) for b in window.listed])


@jit_only(inline="always")
def outside_island(x, b0, b1):
    """1 if the score x lies outside the one island [b0, b1) (``TopWindow.islands``' first
    pair), else 0 (a NaN too: the scan refuses it). The one-island test of the
    validation's scan and of :func:`window_list`, written once; branch-free, so that a
    loop summing it vectorizes."""
    return np.int64((x < b0) | (x >= b1))


@jit_only(inline="always")
def outside_islands(x, b0, b1, b2, b3, b4, b5, b6, b7):
    """1 if the score x lies outside every island [b0, b1), ..., [b6, b7)
    (``TopWindow.islands``' ISLANDS_MAX pairs, an unused one (inf, -inf)), else 0. Scalars,
    so that a loop over a tile keeps them in registers (read from the array, they were
    reloaded at every entry: the list may alias it); written out, so that it vectorizes."""
    return 1 - np.int64(((x >= b0) & (x < b1)) | ((x >= b2) & (x < b3))
                        | ((x >= b4) & (x < b5)) | ((x >= b6) & (x < b7)))


@jit_only(inline="always")
def in_islands(x, b):
    """1 if the score x lies surely inside an island (``TopWindow.islands``' ISLANDS_MAX
    pairs), else 0: :func:`outside_islands` of the array's bounds."""
    return 1 - outside_islands(x, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7])


@jit_only(inline="always")
def _append_key(listed, used, key):
    """The list's rule for one key outside the islands, written once (``window_list``,
    ``window_add_tile``): a run of one key is kept once. Returns the new count of
    ``listed``, or -1 when it has no room left (the list is then incomplete)."""
    if used > 0 and listed[used - 1] == key:
        return used
    if used < listed.shape[0]:
        listed[used] = key
        return used + 1
    return -1


@njit(cache=CACHE, nogil=True)
def window_list(ring, state, scale, islands, listed, hitw, k):
    """A tile's listed entries hitw[:k] when islands were sampled: each entry either
    reached ``window_threshold`` or lies outside every island (or both). The first go to
    :func:`window_add`; the keys of the second are appended to ``listed`` (a run of one
    key once), until it is full (``state[WIN_LISTED_FULL]``: the list is then
    incomplete, and the queue's build makes its own pass). Keys that do not convert are
    skipped, as in ``window_add``. Per validation tile, not per entry."""
    sgn, s, inv = scale[0], scale[1], scale[2]
    thr = window_threshold(state, scale)
    used = state[WIN_LISTED]
    full = state[WIN_LISTED_FULL]
    cap = listed.shape[0]
    one = state[WIN_ISLANDS] == 1
    b0, b1 = islands[0], islands[1]
    # at high noise most entries of a tile reach the threshold and come here, nearly all
    # inside the islands: then they all go to window_add as they are (one branch-free
    # pass to find out instead of a pass that keys, lists and compacts; one island, a
    # direct-looking range, tested by its two compares, not every island's eight)
    out = 0
    if one:
        for t in range(k):
            out += outside_island(sgn * hitw[t], b0, b1)
    else:
        for t in range(k):
            out += 1 - in_islands(sgn * hitw[t], islands)
    if out == 0:
        window_add(ring, state, scale, hitw, k)  # every entry reached thr: none is outside
        return
    # the keys of the entries outside the islands (few: a branch each, well predicted),
    # then the entries reaching thr, compacted only when some do not (at high noise all
    # do, and the tile goes to window_add as it is): two loops without a chain between them
    if full == 0:
        for t in range(k):
            w = hitw[t]
            x = sgn * w
            outside = outside_island(x, b0, b1) if one else 1 - in_islands(x, islands)
            if outside:
                ok, key = _window_key(w, sgn, s, inv)
                if ok:
                    used = _append_key(listed, used, key)
                    if used < 0:
                        used = cap
                        full = 1
                        break
    state[WIN_LISTED] = used
    state[WIN_LISTED_FULL] = full
    above = 0
    for t in range(k):
        above += sgn * hitw[t] >= thr
    if 0 < above < k:
        kt = 0
        for t in range(k):  # compacted in place (kt <= t)
            w = hitw[t]
            hitw[kt] = w
            kt += sgn * w >= thr
    if above > 0:
        window_add(ring, state, scale, hitw, above)


# window_add_tile: a tile of the validation's scan (TILE x TILE entries, strictly above
# the diagonal) counted from W itself, in _TILE_HISTS local histograms (so that runs of
# one bin do not chain on one counter)
TILE = 64
_TILE_HISTS = 4
_TILE_BINS_MAX = 1 << 50  # |bin| below this: every bin and its offset exact in a float64


@njit(cache=CACHE, nogil=True)
def tile_scratch():
    """The work arrays of :func:`window_add_tile` (one set a scan part, reused tile after
    tile): each entry's bin (int32 (TILE**2,)), the histograms (int64 (_TILE_HISTS,
    _WINDOW_BINS_WIDE + 1)), each row's entries outside the islands (int64 (TILE,)) and
    their places in the tile (int64 (TILE**2,))."""
    return (np.empty(TILE * TILE, dtype=np.int32),
            np.empty((_TILE_HISTS, _WINDOW_BINS_WIDE + 1), dtype=np.int64),
            np.empty(TILE, dtype=np.int64),
            np.empty(TILE * TILE, dtype=np.int64))


@njit(cache=CACHE, nogil=True)
def window_add_tile(ring, state, scale, islands, listed, W, i0, j0, wtop, wbot, thr, isl, idx, hist, rowout,
                    spots):
    """What :func:`window_list` (``isl`` > 0) or :func:`window_add` (``isl`` 0) makes of the
    entries the scan lists from one full tile W[i0:i0 + TILE, j0:j0 + TILE] (strictly above
    the diagonal, already scanned: finite or infinite, no NaN), read again from W (from the
    cache) instead of from a list: the same window, the same keys listed in the same order.
    For the tiles most of whose entries reach the threshold (high noise), where the scan's
    list holds nearly the whole tile. Per tile, not per entry; O(TILE**2 + bins).

    ``wtop``, ``wbot``: the tile's weights of highest and lowest score (sgn * w); ``thr``:
    ``window_threshold``; ``isl``: 0 (no islands, or the list closed), 1 (one island,
    islands[0:2]), 2 (up to ISLANDS_MAX islands, the first holding most entries:
    ``WIN_SKEWED``) or 3 (up to ISLANDS_MAX). ``idx, hist, rowout, spots``:
    :func:`tile_scratch`.

    When the tile's highest and lowest keys share a bin, the tile is counted whole (no
    bin per entry). Else every entry's bin in one pass that vectorizes, in floating point
    (exact for a power-of-two s), offset so that the window's bins after the slide to the
    tile's top are 1 .. bins and everything lower, entries below the threshold included,
    is 0 (such an entry's key is below the window's bottom: ``window_threshold``); then
    the histograms, and the slide and the window's bins as ``_window_add_batch``. The entries outside the islands are counted by rows (a loop
    that vectorizes; with ``isl`` 1 or 2, two compares an entry: those outside the first
    island), found in the rows that hold any (tested against every island), and keyed and
    listed in the scan's order (strips of 8 rows, column by column).

    Returns how many entries reach ``thr``, or -1, having changed nothing, when it does not
    apply: a step that is not a power of two, a window that has counted nothing, a top key
    that does not convert, bins of 2**50 or more."""
    sgn, s, inv = scale[0], scale[1], scale[2]
    if inv == 0.0 or state[WIN_SEEN] == 0:
        return -1
    fsh = state[WIN_FINE_SHIFT]
    top = state[WIN_TOP]
    bins = state[WIN_BINS]
    reach = sgn * wtop >= thr
    newtop = top
    ftop = top  # the tile's highest bin, when it reaches thr
    if reach:
        ok, key = _window_key(wtop, sgn, s, inv)
        if not ok:
            return -1
        ftop = key >> fsh
        newtop = max(top, ftop)  # keys are monotone in the score: the tile's highest
    if abs(newtop) >= _TILE_BINS_MAX:
        return -1
    if not reach and isl == 0:
        return 0
    # every entry in the top entry's bin (uniform weights at high noise, the outlier's
    # tiles): no bin per entry, as _window_add_batch's one bin
    one = False
    if reach:
        okb, kb = _window_key(wbot, sgn, s, inv)
        one = okb and (kb >> fsh) == ftop
    base = np.float64(newtop - bins)  # the highest bin below the window: offset 0
    nb = np.float64(bins)
    # a bin is floor(y / (s 2**fsh)) = floor(floor(y / s) 2**-fsh): one exact product by a
    # power of two (an underflow to -0.0 of a negative y is bin -1, as discretize's key -1)
    c2 = inv * 2.0 ** -np.float64(fsh)
    if not c2 >= 2.0 ** -1022:  # not a normal power of two: the product would not be exact
        return -1
    # the islands as scalars (read from the array in the loop, they would be reloaded at
    # every entry: idx may alias it)
    b0, b1, b2, b3 = islands[0], islands[1], islands[2], islands[3]
    b4, b5, b6, b7 = islands[4], islands[5], islands[6], islands[7]
    above = 0
    out = 0
    for r in range(TILE):  # loops without a branch, so that they vectorize
        row = W[i0 + r, j0:j0 + TILE]  # indexed by c >= 0 only: plain loads (row[j0 + c]: gathers)
        if not one:
            a = 0
            for c in range(TILE):
                y = sgn * np.float64(row[c])
                x = y * c2
                f = np.floor(x) - np.float64((x == 0.0) & (y < 0.0))
                idx[r * TILE + c] = np.int32(min(max(f - base, 0.0), nb))
                a += y >= thr
            above += a
        o = 0
        if isl == 1 or isl == 2:  # outside the first island (the only one, or the fullest)
            for c in range(TILE):
                o += outside_island(sgn * np.float64(row[c]), b0, b1)
        elif isl == 3:
            for c in range(TILE):
                o += outside_islands(sgn * np.float64(row[c]), b0, b1, b2, b3, b4, b5, b6, b7)
        out += o
        rowout[r] = o
    if one:
        above = TILE * TILE
        if sgn * wbot < thr:  # some entries below the threshold (then below the window)
            above = 0
            for r in range(TILE):
                row = W[i0 + r, j0:j0 + TILE]
                a = 0
                for c in range(TILE):
                    a += sgn * np.float64(row[c]) >= thr
                above += a
    if out > 0 and state[WIN_LISTED_FULL] == 0:
        # the outside entries' places, from the rows that hold any, coded in the scan's order
        # (strip of 8 rows, column, row in the strip) and sorted (a few a tile at high noise),
        # then keyed and listed in that order
        cnt = 0
        for r in range(TILE):
            if rowout[r] == 0:
                continue
            row = W[i0 + r, j0:j0 + TILE]
            for c in range(TILE):
                spots[cnt] = ((r >> 3) * TILE + c) * 8 + (r & 7)
                cnt += outside_islands(sgn * np.float64(row[c]), b0, b1, b2, b3, b4, b5, b6, b7)
        spots[:cnt].sort()
        used = state[WIN_LISTED]
        full = 0
        for u in range(cnt):
            code = spots[u]
            w = np.float64(W[i0 + (code >> 9) * 8 + (code & 7), j0 + ((code >> 3) & (TILE - 1))])
            ok, key = _window_key(w, sgn, s, inv)
            if ok:
                used = _append_key(listed, used, key)
                if used < 0:
                    used = listed.shape[0]
                    full = 1
                    break
        state[WIN_LISTED] = used
        state[WIN_LISTED_FULL] = full
    if above > 0:
        mask = _WINDOW_RING - 1
        if newtop > top:  # as _window_add_batch slides to the batch's highest bin
            for g in range(max(top + 1, newtop - _WINDOW_RING + 1), newtop + 1):
                ring[g & mask] = 0
        if one:
            if ftop > newtop - bins:  # then every entry reaches the window's old bottom, so thr
                ring[ftop & mask] += TILE * TILE
        else:
            for h in range(_TILE_HISTS):
                for v in range(bins + 1):
                    hist[h, v] = 0
            for t in range(TILE * TILE):
                hist[t & (_TILE_HISTS - 1), idx[t]] += 1
            for v in range(1, bins + 1):
                total = np.int64(0)
                for h in range(_TILE_HISTS):
                    total += hist[h, v]
                ring[(newtop - bins + v) & mask] += total
        state[WIN_TOP] = newtop
    return above


def _join_listed(window, forks):
    """The keys every part listed, distinct and increasing, into ``window.listed`` (or
    ``WIN_LISTED_FULL`` when any part ran out of room or they do not fit)."""
    state = window.state
    parts = (window, *forks)
    full = any(int(w.state[WIN_LISTED_FULL]) for w in parts)
    if not full:
        keys = np.sort(np.concatenate([w.listed[0][:int(w.state[WIN_LISTED])] for w in parts]))
        if keys.shape[0] > 1:
            keep = np.empty(keys.shape[0], dtype=np.bool_)
            keep[0] = True
            np.not_equal(keys[1:], keys[:-1], out=keep[1:])
            keys = keys[keep]
        if keys.shape[0] <= window.listed[0].shape[0]:
            window.listed[0][:keys.shape[0]] = keys
            state[WIN_LISTED] = keys.shape[0]
        else:
            full = True
    state[WIN_LISTED_FULL] = int(full)


def window_join(window, forks):
    """Add the counts of ``forks`` (from :func:`window_fork`) into ``window``.

    Exact: each window counts its own entries exactly in the bins of its own range
    (its top - length + 1 .. its top), and holds none above its top. The joined top is
    the highest; every bin of the joined range lies at or above each part's bottom, and
    a part counts 0 there above its own top. Per pass, not per entry. The keys the
    parts listed outside the islands are merged too (distinct, increasing)."""
    state = window.state
    if state[WIN_ISLANDS] > 0:
        _join_listed(window, forks)
    parts = [w for w in (window, *forks) if w.state[WIN_SEEN]]
    if state[WIN_FINE_SHIFT] < 0 or not parts:
        return
    bins = int(state[WIN_BINS])
    top = max(int(w.state[WIN_TOP]) for w in parts)
    f = np.arange(top - bins + 1, top + 1)
    total = np.zeros(bins, dtype=np.int64)
    for w in parts:
        total += np.where(f <= w.state[WIN_TOP], w.ring[f & (_WINDOW_RING - 1)], 0)
    window.ring[f & (_WINDOW_RING - 1)] = total  # after every read: the parts may share slots
    state[WIN_TOP] = top
    state[WIN_SEEN] = 1


def window_capacities(window, kmin, bshift, B, m, base=None):
    """Capacities (spare slot included) of the top buckets b_lo .. B - 1 from a complete
    ``window`` (``base``: the buckets' lowest keys, increasing, for compressed
    buckets; None: bucket b's is kmin + b 2**bshift): returns (b_lo, caps, extra) for
    the most top buckets whose bounds fit a pool of m + B slots (bins much wider than
    the buckets, each of which gets whole bins, overcount: a crowded range after a
    wide-looking first tile; the lower buckets are then sized later, exactly), or None
    when the window covers none or not even the top bucket fits.
    ``extra``: by how many slots the capacities may exceed the edges they hold (the
    counts of bins they share), which the pool needs on top of m + B for the buckets
    sized exactly later. Keys are below 2**62, so int64 holds every bound."""
    ring, state = window.ring, window.state
    top, fsh, seen = int(state[WIN_TOP]), int(state[WIN_FINE_SHIFT]), int(state[WIN_SEEN])
    complete, bins = int(state[WIN_COMPLETE]), int(state[WIN_BINS])
    if fsh < 0 or not complete or not seen:
        return None
    bottom = top - bins + 1
    width = 1 << int(bshift)
    kmin = int(kmin)
    # the buckets whose lowest key's bin is in the window: b >= ((bottom << fsh) - kmin) / width
    if base is None:
        b_lo = max(-((kmin - (bottom << fsh)) // width), 0)
    else:
        b_lo = int(np.searchsorted(base, bottom << fsh, side="left"))
    if b_lo >= B:
        return None
    if base is None:
        klo = kmin + np.arange(b_lo, B, dtype=np.int64) * width
    else:
        klo = base[b_lo:B].astype(np.int64)
    flo = klo >> fsh
    fhi = np.minimum((klo + (width - 1)) >> fsh, top)
    # edges in bins bottom .. f - 1: within[f - bottom]
    within = np.zeros(bins + 1, dtype=np.int64)
    np.cumsum(ring[np.arange(bottom, top + 1) & (_WINDOW_RING - 1)], out=within[1:])
    caps = 1 + within[fhi - bottom + 1] - within[flo - bottom]
    # sized from bucket b_lo + i for each i: the slots, and the bins wholly inside
    # (-(-k >> fsh): the lowest bin at or above the bucket's lowest key)
    totals = np.cumsum(caps[::-1])[::-1]
    surely = within[bins] - within[-((-klo) >> fsh) - bottom]
    extras = totals - (len(caps) - np.arange(len(caps))) - surely
    # the most top buckets whose slots fit m + B and whose excess keeps the slot store
    # within queue_memory_bytes: where the shared end bins are crowded (log-normal
    # weights at 1e-5: ~25,000 edges a bin) the lower buckets are left to the sizing
    # pass rather than the whole window (docs/design.rst, The selection loop at narrow noise)
    fits = np.flatnonzero((totals <= m + B) & (extras <= window_extra_max(m)))
    if fits.size == 0:
        return None
    i = int(fits[0])
    return b_lo + i, caps[i:], int(extras[i])


def window_extra_max(m):
    """The most slots past m + B that a window's capacities may add (``window_capacities``
    gives up beyond it: speed only), so that the slot store's size is public."""
    return m // 64 + 4096
