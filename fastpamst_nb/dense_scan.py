"""The validation pass over a dense matrix: one tiled read of W, split across threads.

:func:`_scan_dense` reads the strict upper triangle of an (n, n) matrix once, in
64 x 64 tiles, and checks in that one pass that every edge weight is finite and
that W equals its transpose, while it takes the weight range and fills the
queue's top window (:mod:`fastpamst_nb.window`) for ``fast_pamst(noise=
"exponential")``. The pass runs in chunks of tile rows (so that Ctrl-C stops it
on a huge memmap), each chunk split by work across the validation threads;
the result, and the defect it reports, do not depend on the number of threads.
:func:`_dense_mirror` is the pass of ``symmetric="upper"``/``"lower"``: it reads
one triangle and writes the symmetric copy.

:func:`fastpamst_nb.graph.as_graph` calls both and turns a defect into the
error message; nothing here raises.
"""

import numpy as np
from numba import njit

from . import threads
from .chunks import run_in_chunks
from .core import CACHE, jit_only
from .cutqueue import _trailing_zeros
from . import window as window_mod
from .window import (
    ISLANDS_MAX, NO_LISTED, NO_WINDOW, WIN_BSHIFT, WIN_COMPLETE, WIN_FINE_SHIFT, WIN_ISLAND_KEYS, WIN_ISLANDS, WIN_LISTED_FULL,
    WIN_SEEN, WIN_SKEWED, WIN_WIDE_MIN,
    in_islands, outside_islands, tile_scratch, window_add, window_add_tile, window_fork, window_join, window_list,
    window_threshold,
)

_TILE = 64  # rows and columns of a validation tile
_SCAN_ROWS = 8  # rows of a tile compared per pass over its columns (divides _TILE)
assert _TILE == window_mod.TILE
# a full tile is read without a list, and counted from W by window.window_add_tile, when
# the last full tile listed at least this many of its 4,096 entries (high noise; read by
# _scan_dense at each call: tests set 0, always, or 4,097, never)
BULK_MIN = _TILE * _TILE // 2

# which entries of a full tile the scan lists (``_listed``): those reaching the window's
# threshold, and those outside one island, or outside up to four (every island tested,
# or the fullest first)
_PLAIN, _ONE, _MANY, _SKEWED = 0, 1, 2, 3


@jit_only(inline="always")
def _listed(x, mode, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    """1 if an entry of score x goes to the tile's list under ``mode`` (a literal at each
    call: the branches fold), else 0; the scan's four tile loops written with one rule.
    Branch-free but for ``_SKEWED`` (whose fullest island, tested first, stops
    most entries: eight compares on every entry cost Pareto weights' scan 3 ns an entry)."""
    if mode == _PLAIN:
        return np.int64(x >= thr)
    if mode == _ONE:  # thr is min(thr, b1) here: outside [b0, b1) or reaching thr, 2 compares
        return np.int64((x >= thr) | (x < b0))
    if mode == _MANY:
        return np.int64(x >= thr) | outside_islands(x, b0, b1, b2, b3, b4, b5, b6, b7)
    return np.int64((x >= thr) | (1 - (((x >= b0) & (x < b1))
                                       or (((x >= b2) & (x < b3)) | ((x >= b4) & (x < b5))
                                           | ((x >= b6) & (x < b7))))))


@jit_only
def _relist(W, i0, j0, j1, hitw, sgn, mode, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    """The list of one full-height tile (rows i0 .. i0 + 63, columns j0 .. j1 - 1, off the
    diagonal) under ``mode`` (``thr``: the threshold, or min(thr, b1) for ``_ONE``), entry
    by entry in the scan's order (strip of 8 rows, column, row): for a tile read without a
    list that ``window.window_add_tile`` did not take (rare: speed only), and the scan's
    listing with ``MASK_TILES`` 0, the reference of :func:`_mask_tile`'s (tests)."""
    k = 0
    for i in range(i0, i0 + _TILE, _SCAN_ROWS):
        for j in range(j0, j1):
            for d in range(_SCAN_ROWS):
                w = np.float64(W[i + d, j])
                hitw[k] = w
                k += _listed(sgn * w, mode, thr, b0, b1, b2, b3, b4, b5, b6, b7)
    return k


@jit_only(inline="always")
def _strip(W, i, j):
    """The check and the range of the block W[i .. i + 7, j] against its mirror
    W[j, i .. i + 7]: (lo, hi, differ), differ when a pair differs or a NaN was read (it
    fails its own comparison; min and max skip it). How every full-height tile off the
    diagonal is read (``_tile_range``, ``_mask_tile``)."""
    col = W[j]
    lo = np.inf
    hi = -np.inf
    differ = False
    for d in range(_SCAN_ROWS):
        w = np.float64(W[i + d, j])
        differ |= w != np.float64(col[i + d])
        lo = min(lo, w)
        hi = max(hi, w)
    return lo, hi, differ


@jit_only(inline="always")
def _tile_range(W, i0, i1, j0, j1):
    """The check and the range of a full-height tile off the diagonal, strip by strip
    (``_strip``), with no list: (bad, lo, hi) as ``_strip``'s over the tile."""
    tbad = False
    tlo = np.inf
    thi = -np.inf
    for i in range(i0, i1, _SCAN_ROWS):
        for j in range(j0, j1):
            lo, hi, differ = _strip(W, i, j)
            tbad |= differ
            tlo = min(tlo, lo)
            thi = max(thi, hi)
    return tbad, tlo, thi


# a full-height tile off the diagonal that the loop without a list does not take is
# listed by bitmasks (``_mask_tile``) unless this is 0: then entry by entry (``_relist``,
# the tests' reference; read by _scan_dense at each call). Stop 44's blocks of 8
# (``_sparse_tile``, ``SPARSE_HITS``) were removed once the masks beat them on every
# shape (docs/design.rst, The validation's window by bitmasks)
MASK_TILES = -1


@jit_only(inline="always")
def _mask_tile(W, i0, j0, j1, hitw, msk, sgn, mode, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    """The scan of one full-height tile (rows i0 .. i0 + 63, columns j0 .. j1 - 1, off the
    diagonal), its list made by bitmasks: returns (k, bad, lo, hi): the list in hitw[:k]
    that the scan's listing loop of ``mode`` makes (the same entries in the same order),
    whether a pair differed or a NaN was read, and the tile's lowest and highest weights.

    Each strip of 8 rows is read as by the loop without a list (the check and the range,
    ``_strip``); then each of its rows, from L1, is tested by ``_listed`` into a 64-bit
    mask (bit c: entry W[i + d, j0 + c] is listed), a loop without a branch or a store
    that vectorizes (a vector compare an entry: the islands' eight compares cost no chain
    of the count); the columns holding a listed entry are the set bits of the masks' OR,
    visited lowest first by trailing zeros (``cutqueue._row_hits_sparse``), and each such
    column's 8 entries are stored, the count advanced by its bits: the listing loop's
    order (strip, column, row) and its entries. ``mode``: ``_PLAIN``, ``_ONE`` or
    ``_MANY`` (a literal), never ``_SKEWED``: the caller passes ``_MANY`` for it, the same
    value (its fullest island first only short-cuts the test, which here is branch-free
    anyway). O(64 (j1 - j0)) time."""
    tbad = False
    tlo = np.inf
    thi = -np.inf
    k = 0
    wid = j1 - j0
    for i in range(i0, i0 + _TILE, _SCAN_ROWS):
        for j in range(j0, j1):
            lo, hi, differ = _strip(W, i, j)
            tbad |= differ
            tlo = min(tlo, lo)
            thi = max(thi, hi)
        cols = np.uint64(0)
        for d in range(_SCAN_ROWS):
            row = W[i + d, j0:j1]
            m = np.uint64(0)
            for c in range(wid):
                m |= np.uint64(_listed(sgn * np.float64(row[c]), mode, thr, b0, b1, b2, b3, b4, b5, b6, b7)) \
                    << np.uint64(c)
            msk[d] = m
            cols |= m
        while cols != np.uint64(0):
            c = np.int64(_trailing_zeros(cols))
            cols &= cols - np.uint64(1)
            for d in range(_SCAN_ROWS):
                hitw[k] = np.float64(W[i + d, j0 + c])
                k += np.int64((msk[d] >> np.uint64(c)) & np.uint64(1))
    return k, tbad, tlo, thi


# _mask_tile under each mode, each a kernel of its own (a call per tile): inlined into
# _dense_scan, its loops slowed the scan without a window (gumbel's and exact_mst's) by
# 3-8% (docs/design.rst, The validation's window by bitmasks)
@jit_only
def _mask_tile_plain(W, i0, j0, j1, hitw, msk, sgn, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    return _mask_tile(W, i0, j0, j1, hitw, msk, sgn, _PLAIN, thr, b0, b1, b2, b3, b4, b5, b6, b7)


@jit_only
def _mask_tile_one(W, i0, j0, j1, hitw, msk, sgn, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    return _mask_tile(W, i0, j0, j1, hitw, msk, sgn, _ONE, thr, b0, b1, b2, b3, b4, b5, b6, b7)


@jit_only
def _mask_tile_many(W, i0, j0, j1, hitw, msk, sgn, thr, b0, b1, b2, b3, b4, b5, b6, b7):
    return _mask_tile(W, i0, j0, j1, hitw, msk, sgn, _MANY, thr, b0, b1, b2, b3, b4, b5, b6, b7)


@njit(cache=CACHE, nogil=True)
def _dense_scan(W, t0, t1, ring, state, scale, islands, listed, bulk_min, masks):
    """One tiled pass over the strict upper triangle of tile rows t0 .. t1 - 1 (rows
    64 t0 .. 64 t1 - 1): finiteness, symmetry, range, and the top window.

    Returns (status, i, j, wmin, wmax); status 0 ok, 1 non-finite at (i, j),
    2 W[i, j] != W[j, i]; wmin/wmax are +-inf when the range holds no edge.
    :func:`_scan_dense` runs it in chunks of tile rows so that Ctrl-C stops the
    pass over a huge matrix.

    The fast pass has no branch per entry: it folds every comparison into one
    flag and the range into min/max (a NaN fails its own comparison, an inf
    shows in the range). Off-diagonal tiles are read 8 rows at a time, so the
    transposed reads W[j, i .. i + 7] are one 32- or 64-byte run instead of 8
    strided loads (faster than an entry-by-entry scan: docs/design.rst, Measurements
    behind the code). Only when the pass finds a defect does
    :func:`_dense_locate` rescan the range to name the first one.

    ``ring, state, scale, islands, listed``: a ``window.TopWindow``
    (``window.NO_WINDOW`` for none). Each entry of the upper triangle is also listed,
    without a branch, when its score reaches the window's threshold; a tile's list
    goes to ``window.window_add``, so fast_pamst's top buckets are sized by this pass.
    When the window holds sampled islands (``state[WIN_ISLANDS] > 0``,
    :func:`sample_islands`) an entry outside every island is listed too, and
    ``window.window_list`` appends its key to ``listed``: the buckets of a compressed
    queue, found in this read of W instead of a pass of the build's own.

    ``bulk_min``: a full tile after one that listed at least this many entries (high
    noise) is read without a list and handed whole to ``window.window_add_tile``, which
    counts and lists from W what the list would have held (the same window and list;
    docs/design.rst, The validation's window at honest noise); 0: every full tile,
    above 4,096: none.

    ``masks``: a full-height tile off the diagonal that the above does not take is
    listed by bitmasks (:func:`_mask_tile`: the same list; docs/design.rst, The
    validation's window by bitmasks); 0: entry by entry (:func:`_relist`, the reference).
    """
    n = W.shape[0]
    tile = _TILE
    bad = False
    wmin = np.inf
    wmax = -np.inf
    sgn = scale[0]
    thr = window_threshold(state, scale)
    fused = state[WIN_ISLANDS] > 0
    nowin = state[WIN_FINE_SHIFT] < 0  # window.NO_WINDOW: never written
    b = np.empty(2 * ISLANDS_MAX)  # a local copy: no aliasing with W
    for t in range(2 * ISLANDS_MAX):
        b[t] = islands[t]
    # the bounds as scalars: read from an array in the loop, they were reloaded at every
    # entry (hitw may alias them) and the fused loop ran 4x slower
    b0, b1, b2, b3, b4, b5, b6, b7 = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    hitw = np.empty(tile * tile)
    # bulk: the last full tile listed at least bulk_min entries (high noise), so this one is
    # read without a list and counted from the cache (window.window_add_tile), which needs a
    # power-of-two step; a tile it does not take is listed again and ends bulk for this call
    bulk_ok = not nowin and scale[2] != 0.0
    bulk = bulk_ok and bulk_min <= 0
    msk = np.empty(_SCAN_ROWS, dtype=np.uint64)  # a strip's row masks (_mask_tile)
    idx, hist, rowout, spots = tile_scratch()
    for i0 in range(t0 * tile, min(t1 * tile, n), tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            k = 0
            if j0 == i0 or i1 - i0 < tile:  # diagonal or ragged tile: entry by entry
                for i in range(i0, i1):
                    for j in range(max(j0, i + 1), j1):
                        w = np.float64(W[i, j])
                        bad |= w != np.float64(W[j, i])
                        wmin = min(wmin, w)
                        wmax = max(wmax, w)
                        hitw[k] = w
                        k += (sgn * w >= thr) | (fused and in_islands(sgn * w, b) == 0)
            elif nowin:
                # no list: without a window (exact_mst, gumbel) there is nothing to list,
                # so no store per entry (the list's store and compare cost this loop 15%
                # at n = 4,000)
                tbad, tlo, thi = _tile_range(W, i0, i1, j0, j1)
                bad |= tbad
                wmin = min(wmin, tlo)
                wmax = max(wmax, thi)
                continue
            else:
                # a full-height tile off the diagonal: its listing rule (mode, and the
                # threshold it compares with) from the window's islands
                mode = _PLAIN
                cut = thr
                if fused and state[WIN_ISLANDS] == 1:
                    # one island [b0, b1): an entry is listed when it scores below b0 or
                    # at least min(thr, b1) (window_list sorts them out)
                    mode = _ONE
                    cut = min(thr, b1)
                elif fused:
                    mode = _SKEWED if state[WIN_SKEWED] else _MANY
                if bulk and j1 - j0 == tile:
                    # a bulk tile: read without a list, then window_add_tile reads its
                    # entries again, from the cache: the list it would have held, keyed and
                    # counted without a store and a compare per entry here
                    tbad, tlo, thi = _tile_range(W, i0, i1, j0, j1)
                    bad |= tbad
                    wmin = min(wmin, tlo)
                    wmax = max(wmax, thi)
                    got = -1
                    if not tbad:  # a NaN fails its own comparison: none here
                        isl = 0 if mode == _PLAIN else (1 if mode == _ONE else (2 if mode == _SKEWED else 3))
                        got = window_add_tile(ring, state, scale, b, listed, W, i0, j0,
                                              thi if sgn > 0 else tlo, tlo if sgn > 0 else thi, thr, isl,
                                              idx, hist, rowout, spots)
                    if got >= 0:
                        bulk = got >= bulk_min
                        fused = fused and state[WIN_LISTED_FULL] == 0
                        thr = window_threshold(state, scale)
                        continue
                    bulk_ok = False
                    bulk = False
                    k = _relist(W, i0, j0, j1, hitw, sgn, mode, cut, b0, b1, b2, b3, b4, b5, b6, b7)
                elif masks != 0:
                    # by bitmasks, each mode a kernel (_SKEWED's test is _MANY's without its
                    # short cut: the same value, vectorized): the listing loops paid a store,
                    # up to nine compares and the count's chain an entry (docs/design.rst,
                    # The validation's window by bitmasks)
                    if mode == _ONE:
                        k, tbad, tlo, thi = _mask_tile_one(W, i0, j0, j1, hitw, msk, sgn, cut,
                                                           b0, b1, b2, b3, b4, b5, b6, b7)
                    elif mode != _PLAIN:
                        k, tbad, tlo, thi = _mask_tile_many(W, i0, j0, j1, hitw, msk, sgn, cut,
                                                            b0, b1, b2, b3, b4, b5, b6, b7)
                    else:
                        k, tbad, tlo, thi = _mask_tile_plain(W, i0, j0, j1, hitw, msk, sgn, cut,
                                                             b0, b1, b2, b3, b4, b5, b6, b7)
                    bad |= tbad
                    wmin = min(wmin, tlo)
                    wmax = max(wmax, thi)
                else:  # the reference (tests): the check and range, then entry by entry
                    tbad, tlo, thi = _tile_range(W, i0, i1, j0, j1)
                    bad |= tbad
                    wmin = min(wmin, tlo)
                    wmax = max(wmax, thi)
                    k = _relist(W, i0, j0, j1, hitw, sgn, mode, cut, b0, b1, b2, b3, b4, b5, b6, b7)
            if bulk_ok and j1 - j0 == tile and i1 - i0 == tile and j0 != i0:
                bulk = k >= bulk_min  # a full tile's list: the next one's loop
            if k > 0:
                if fused:
                    window_list(ring, state, scale, b, listed, hitw, k)
                    # a full list is of no use (the build makes its own pass): stop listing
                    fused = state[WIN_LISTED_FULL] == 0
                else:
                    window_add(ring, state, scale, hitw, k)
                thr = window_threshold(state, scale)
    if bad or wmin == -np.inf or wmax == np.inf:
        return _dense_locate(W, t0, t1)
    return 0, 0, 0, wmin, wmax


@njit(cache=CACHE, nogil=True)
def _dense_locate(W, t0, t1):
    """:func:`_dense_scan`'s result, entry by entry in the same tile order: the
    first defect's position (only run once the fast pass has found one)."""
    n = W.shape[0]
    tile = _TILE
    wmin = np.inf
    wmax = -np.inf
    for i0 in range(t0 * tile, min(t1 * tile, n), tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    w = np.float64(W[i, j])
                    if not np.isfinite(w):
                        return 1, i, j, 0.0, 0.0
                    if w != np.float64(W[j, i]):
                        return 2, i, j, 0.0, 0.0
                    if w < wmin:
                        wmin = w
                    if w > wmax:
                        wmax = w
    return 0, 0, 0, wmin, wmax


# below this many entries a pass stays on one thread: a hand-off would cost more than it saves
_THREADED_MIN_ENTRIES = 1 << 20
# the chunk after the first tile row reads about this many entries (a few ms), so that
# the hand-offs are few; later chunks grow to ~0.1 s (run_in_chunks)
_FIRST_SCAN_ENTRIES = 1 << 22


def _scan_dense(W, window=NO_WINDOW, workers=None, alongside=None, freed=None):
    """:func:`_dense_scan` over all of W in chunks of about 0.1 s (interruptible), each
    chunk split by work across ``workers`` threads (default ``threads.thread_count()``,
    one thread for a matrix under 2**20 entries).

    Returns (status, i, j, wmin, wmax), with wmin = wmax = 0.0 when n < 2; a defect is
    the first in tile order, as on one thread. ``window``: a ``window.TopWindow`` to
    fill, marked complete when W passed. Each thread fills a fork of it
    (``window.window_fork``, made once the first tile row has decided its bins), joined
    into it at the end: the same counts as one thread's.

    ``alongside``: a callable ``f(W)`` (a nogil kernel's caller) run on a thread of its
    own during the scan, which then has one thread less; it is called only when there
    are two threads or more for a matrix of 2**20 entries or more, and the scan returns
    after it has returned. It must be safe on any W: it runs before W is known valid.
    The thread it held joins the scan's parts once it has returned (``exact_mst``'s Prim
    ends before the scan at n = 16,000: its core then reads the rest of W).

    ``freed``: a one-element list, the threads added to ``workers`` from the next chunk
    on (set by the ``alongside`` run when it returns).
    """
    n = W.shape[0]
    if workers is None:
        workers = threads.thread_count() if n * n >= _THREADED_MIN_ENTRIES else 1
    if alongside is not None and workers >= 2:
        freed = [0]

        def beside():
            try:
                return alongside(W)
            finally:
                freed[0] = 1  # its thread is free for the scan's later chunks
        scan, _ = threads.run_side_by_side([lambda: _scan_dense(W, window, workers - 1, freed=freed),
                                            beside])
        return scan
    windows = [window]
    found = [(0, 0, 0, np.inf, -np.inf)]

    def part(t0, t1, w):
        return lambda: _dense_scan(W, t0, t1, w.ring, w.state, w.scale, w.islands,
                                   w.listed[0] if w.listed else NO_LISTED, BULK_MIN, MASK_TILES)

    if window.state[WIN_ISLANDS] == -1 and n * n >= window_mod.ISLANDS_MIN_ENTRIES:
        sample_islands(W, window)

    def advance(t0, k):
        status, i, j, lo, hi = found[-1]
        if status != 0:
            return
        want = workers + (freed[0] if freed is not None else 0)
        if len(windows) < want and (window.state[WIN_SEEN] or window.state[WIN_FINE_SHIFT] < 0):
            windows.extend(window_fork(window) for _ in range(want - len(windows)))
        cuts = _split_tile_rows(n, t0, t0 + k, len(windows))
        results = threads.run_side_by_side(
            [part(a, b, w) for a, b, w in zip(cuts[:-1], cuts[1:], windows)])
        for s, a, b, lo2, hi2 in results:  # in tile order: the first defect wins
            if s != 0:
                found.append((s, a, b, 0.0, 0.0))
                return
            lo, hi = min(lo, lo2), max(hi, hi2)
        found.append((0, 0, 0, lo, hi))

    advance(0, 1)  # on this thread: the first tile row decides the window's bins
    rows = -(-n // _TILE) - 1
    if rows > 0:
        run_in_chunks(lambda t0, k: advance(1 + t0, k), rows,
                      first=max(1, _FIRST_SCAN_ENTRIES // (_TILE * n)))
    status, i, j, wmin, wmax = found[-1]
    if status == 0 and window is not NO_WINDOW:
        window_join(window, windows[1:])
        window.state[WIN_COMPLETE] = 1
    if n < 2:
        return status, i, j, 0.0, 0.0
    return status, i, j, wmin, wmax


def sample_islands(W, window):
    """Sample the islands of W's key range into ``window`` (a ``window.TopWindow`` that
    wants them, ``state[WIN_ISLANDS] == -1``), before the validation reads W: the dense
    blocks of keys of a sample of rows (``cutqueue_build.island_keys``, at most
    ``window.ISLANDS_MAX`` islands), their keys in the window's state and their score
    bounds in ``window.islands``. The scan then lists the keys of the entries outside
    them, so that a dense compressed queue needs no pass over W of its own
    (docs/design.rst, Islands sampled before the validation). Safe on any W (entries
    whose key does not convert are skipped): it runs before W is known valid. Speed
    only: any islands give the same queue's law."""
    from .cutqueue_build import island_keys  # cutqueue_build imports the window: import late

    state = window.state
    sgn, s, inv = (float(x) for x in window.scale)
    found = island_keys(W, sgn, s, inv, int(state[WIN_BSHIFT]), ISLANDS_MAX, int(state[WIN_WIDE_MIN]))
    if found is None:  # islands that would leave too many keys outside: nothing to list
        state[WIN_ISLANDS] = -3
        return
    lo, hi, skewed = found
    R = lo.shape[0]
    state[WIN_SKEWED] = skewed
    for r in range(R):
        state[WIN_ISLAND_KEYS + 2 * r] = lo[r]
        state[WIN_ISLAND_KEYS + 2 * r + 1] = hi[r]
    window.islands[:] = island_scores(lo, hi, sgn, s, inv)
    state[WIN_ISLANDS] = R
    if R > 0:
        window.listed[:] = [np.empty(window_mod.listed_capacity(W.shape[0]), dtype=np.int64)]


def island_scores(lo, hi, sgn, s, inv):
    """(2 ISLANDS_MAX,) scores lo_0, hi_0, ...: an entry with lo_r <= sgn * w < hi_r surely
    has its key in [lo[r], hi[r]) (``cutqueue_build._range_scores`` on keys); unused
    islands (inf, -inf)."""
    from .cutqueue_build import Islands, _range_scores

    b = _range_scores(Islands(np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)),
                      sgn, s, inv, 0, 0)
    return b[:2 * ISLANDS_MAX]


def _split_tile_rows(n, t0, t1, parts):
    """Cut tile rows t0 .. t1 - 1 into at most ``parts`` consecutive runs of about equal
    work (tile row t scans the n - 64 t columns from its diagonal on); returns the
    boundaries, t0 first and t1 last, without empty runs."""
    if parts <= 1 or t1 - t0 <= 1:
        return [t0, t1]
    work = np.cumsum(np.maximum(n - _TILE * np.arange(t0, t1), 1))
    want = work[-1] * np.arange(1, parts) / parts
    inner = t0 + 1 + np.searchsorted(work[:-1], want)
    return sorted({t0, t1, *(int(t) for t in inner if t0 < t < t1)})


@njit(cache=CACHE, nogil=True)
def _dense_mirror(W, S, lower):
    """Fill ``S`` with the symmetric matrix of one triangle of ``W``; check it, get its range.

    Reads W[i, j] for i < j (``lower`` False) or W[j, i] for i < j (``lower``
    True), writes it to S[i, j] and S[j, i], and zeroes the diagonal of S. ``S``
    may be ``W`` itself (it then only overwrites the other triangle and the
    diagonal). Returns (status, r, c, wmin, wmax); status 0 ok, 1 non-finite at
    W[r, c] (r, c the entry read). Tiles keep the transposed writes in cache.
    """
    n = W.shape[0]
    tile = 64
    wmin = np.inf
    wmax = -np.inf
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    w = W[j, i] if lower else W[i, j]
                    wf = np.float64(w)
                    if not np.isfinite(wf):
                        if lower:
                            return 1, j, i, 0.0, 0.0
                        return 1, i, j, 0.0, 0.0
                    S[i, j] = w
                    S[j, i] = w
                    if wf < wmin:
                        wmin = wf
                    if wf > wmax:
                        wmax = wf
    for i in range(n):
        S[i, i] = 0
    if n < 2:
        return 0, 0, 0, 0.0, 0.0
    return 0, 0, 0, wmin, wmax
