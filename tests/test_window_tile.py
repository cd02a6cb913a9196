"""The validation's window at honest noise (docs/design.rst, The validation's window at
honest noise): a full tile most of whose entries reach the window's threshold is read
without a list and counted from W (``window.window_add_tile``). What the scan computes
must not change: its result (the first defect, the range), the window (its state and
the counts of its bins) and the keys listed outside the islands, in the same order.

Three references: the scan with the listing loops only (``dense_scan.BULK_MIN`` above a
tile's entries, ``MASK_TILES`` 0: no bitmasks, entry by entry), a naive
count of every key (the complete window holds the top bins of all keys; the list, the
keys outside the islands), and, tile by tile,
``window.window_list`` / ``window.window_add`` on the list the scan's loop would make,
on hard tiles (signed zeros, underflowing quotients, 1e12 offsets, keys near 2**50,
infinities, a list that fills mid-tile, wide bins, a step that is not a power of two).
"""

import numpy as np
import pytest

from fastpamst_nb import bench, dense_scan, privacy
from fastpamst_nb import window as topwin
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

NEVER = topwin.TILE * topwin.TILE + 1  # BULK_MIN: no tile read without a list
MASK_DEFAULT = dense_scan.MASK_TILES
ALWAYS = 0  # BULK_MIN: every full tile read without a list


def _view(win):
    """What a validation's window holds that anything reads: its state, the counts of the
    bins in the window, and the listed keys."""
    state = win.state.copy()
    ring = None
    if state[topwin.WIN_SEEN]:
        top, bins = int(state[topwin.WIN_TOP]), int(state[topwin.WIN_BINS])
        ring = win.ring[np.arange(top - bins + 1, top + 1) & (topwin._WINDOW_RING - 1)].copy()
    listed = win.listed[0][:int(state[topwin.WIN_LISTED])].copy() if win.listed else None
    return state, ring, listed


def _scan(W, sgn, s, r, workers, bulk_min, monkeypatch, masks=None):
    monkeypatch.setattr(dense_scan, "BULK_MIN", bulk_min)
    # the reference (no tile without a list) lists entry by entry: no bitmasks
    # (dense_scan.MASK_TILES 0); the others by the defaults
    ref = bulk_min == NEVER if masks is None else False
    monkeypatch.setattr(dense_scan, "MASK_TILES", 0 if ref else (MASK_DEFAULT if masks is None else masks))
    win = topwin.top_window(sgn, s, r, DEFAULT_BUCKET_WIDTH)
    got = dense_scan._scan_dense(W, win, workers=workers)
    return got, win


def _same(a, b, why):
    (got_a, win_a), (got_b, win_b) = a, b
    assert got_a == got_b, why
    for x, y in zip(_view(win_a), _view(win_b)):
        assert (x is None and y is None) or np.array_equal(x, y), why


def scan_cases(shape, seed, runs):
    """The scans the window's tests compare: ``shape``'s weights (n = 520: 28 full tiles
    off the diagonal, a ragged tile row and column) at four noise levels, minimum and
    maximum, for each (dtype, workers) of ``runs``: (W, sgn, s, r, workers, why)."""
    n = 520
    W = bench.shape_weights(shape, n, seed=seed)
    for level in (1e-5, 1e-3, 0.1, 1.0):
        s = privacy.default_discretization(level)
        r = privacy.fast_pamst_key_rate(0.1, level, n, s, "exponential")
        for sgn in (-1.0, 1.0):
            for dtype, workers in runs:
                yield W.astype(dtype), sgn, s, r, workers, (shape, level, sgn, dtype.__name__, workers)


def _naive_window(W, sgn, s, fsh, bins):
    """The complete window from every key of the strict upper triangle: (top bin, the
    counts of bins top - bins + 1 .. top); s a power of two (keys exact)."""
    y = sgn * W[np.triu_indices(W.shape[0], 1)].astype(np.float64)
    x = y / s
    key = np.floor(x) - ((x == 0.0) & (y < 0.0))  # discretize: an underflow to -0.0 is key -1
    f = (key.astype(np.int64)) >> fsh
    top = int(f.max())
    return top, np.bincount(f[f > top - bins] - (top - bins + 1), minlength=bins)


@pytest.mark.parametrize("shape", ["pareto", "integers", "outlier", "uniform", "clusters", "lognormal"])
@pytest.mark.slow_python
def test_scan_without_a_list_is_the_scan_with_one(shape, monkeypatch):
    # every shape at four noise levels, minimum and maximum, float64 and float32, 1 and 2
    # threads: the tiles read without a list give the scan's result, window and list
    # exactly; and the window and the list are the naive ones
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    for Wd, sgn, s, r, workers, why in scan_cases(shape, 3, ((np.float64, 1), (np.float64, 2), (np.float32, 1))):
        ref = _scan(Wd, sgn, s, r, workers, NEVER, monkeypatch)
        bulk = _scan(Wd, sgn, s, r, workers, ALWAYS, monkeypatch)
        _same(ref, bulk, why)
        _same(ref, _scan(Wd, sgn, s, r, workers, dense_scan.BULK_MIN, monkeypatch), why)
        # the tiles below BULK_MIN by bitmasks everywhere (dense_scan.MASK_TILES -1)
        _same(ref, _scan(Wd, sgn, s, r, workers, dense_scan.BULK_MIN, monkeypatch, masks=-1), why)
        win = bulk[1]
        state = win.state
        fsh, bins = int(state[topwin.WIN_FINE_SHIFT]), int(state[topwin.WIN_BINS])
        top, counts = _naive_window(Wd, sgn, s, fsh, bins)
        assert int(state[topwin.WIN_TOP]) == top, why
        assert np.array_equal(_view(win)[1], counts), why
        if state[topwin.WIN_ISLANDS] > 0 and not state[topwin.WIN_LISTED_FULL]:
            y = sgn * Wd[np.triu_indices(Wd.shape[0], 1)].astype(np.float64)
            b = win.islands
            inside = np.zeros(y.shape[0], dtype=bool)
            for t in range(topwin.ISLANDS_MAX):
                inside |= (y >= b[2 * t]) & (y < b[2 * t + 1])
            x = y[~inside] / s
            keys = (np.floor(x) - ((x == 0.0) & (y[~inside] < 0.0))).astype(np.int64)
            assert np.array_equal(_view(win)[2], np.unique(keys)), why


@pytest.mark.slow_python
def test_scan_without_a_list_names_the_same_defect(monkeypatch):
    # a NaN, an infinity, an asymmetry in a tile read without a list: the same first
    # defect, and the scan goes on as before
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    n = 330
    s = privacy.default_discretization(0.1)
    r = privacy.fast_pamst_key_rate(0.1, 0.1, n, s, "exponential")
    for shape in ("uniform", "pareto"):
        for value, (i, j) in [(np.nan, (70, 200)), (np.inf, (130, 260)), (-np.inf, (5, 300)), (2.5, (66, 140))]:
            W = bench.shape_weights(shape, n, seed=1)
            W[i, j] = value
            if value != 2.5:
                W[j, i] = value
            for workers in (1, 2):
                ref = _scan(W, -1.0, s, r, workers, NEVER, monkeypatch)
                assert ref[0][0] != 0
                _same(ref, _scan(W, -1.0, s, r, workers, ALWAYS, monkeypatch), (shape, value, workers))


def _tile_window(sgn, s, seed_w, islands=None, cap=1 << 12, wide=False, skewed=0):
    """A window that has counted ``seed_w`` (seen), with these island score bounds (pairs)
    (``skewed``: the first tested first, as when it holds most entries)."""
    win = topwin.top_window(sgn, s, 2.0 ** -6, 1.0)
    if wide:
        win.state[topwin.WIN_BINS] = topwin._WINDOW_BINS_WIDE
    topwin.window_add(win.ring, win.state, win.scale, np.array([float(seed_w)]), 1)
    if islands is not None:
        win.islands[:len(islands)] = islands
        win.state[topwin.WIN_ISLANDS] = len(islands) // 2
        win.state[topwin.WIN_SKEWED] = skewed
        win.listed.append(np.empty(cap, dtype=np.int64))
    return win


def _copy(win):
    return topwin.TopWindow(win.ring.copy(), win.state.copy(), win.scale, win.islands.copy(),
                            [b.copy() for b in win.listed])


def _by_list(win, W, i0, j0):
    """The scan's list of a full tile (its order: strips of 8 rows, column by column)
    through window_list / window_add, as the listing loops do."""
    sgn = win.scale[0]
    thr = topwin.window_threshold(win.state, win.scale)
    isl = int(win.state[topwin.WIN_ISLANDS]) if win.listed else 0
    b = win.islands
    hitw = []
    for i in range(i0, i0 + topwin.TILE, 8):
        for j in range(j0, j0 + topwin.TILE):
            for d in range(8):
                w = float(W[i + d, j])
                y = sgn * w
                inside = any(b[2 * t] <= y < b[2 * t + 1] for t in range(topwin.ISLANDS_MAX))
                if y >= thr or (isl > 0 and not inside):
                    hitw.append(w)
    hitw = np.array(hitw + [0.0])  # a spare entry: never read
    k = hitw.shape[0] - 1
    if k > 0:
        if isl > 0:
            topwin.window_list(win.ring, win.state, win.scale, win.islands, win.listed[0], hitw, k)
        else:
            topwin.window_add(win.ring, win.state, win.scale, hitw, k)


def _by_tile(win, W, i0, j0):
    sgn = win.scale[0]
    tile = W[i0:i0 + topwin.TILE, j0:j0 + topwin.TILE].astype(np.float64)
    wtop = tile.max() if sgn > 0 else tile.min()
    wbot = tile.min() if sgn > 0 else tile.max()
    thr = topwin.window_threshold(win.state, win.scale)
    isl = 0
    if win.listed and not win.state[topwin.WIN_LISTED_FULL]:
        isl = 1 if win.state[topwin.WIN_ISLANDS] == 1 else (2 if win.state[topwin.WIN_SKEWED] else 3)
    listed = win.listed[0] if win.listed else np.zeros(0, dtype=np.int64)
    return topwin.window_add_tile(win.ring, win.state, win.scale, win.islands, listed, W, i0, j0,
                                  wtop, wbot, thr, isl, *topwin.tile_scratch())


def _tile_case(values, rng, n=128):
    """An (n, n) matrix whose tile (0, 64) holds ``values`` (4,096 of them, shuffled)."""
    W = np.zeros((n, n))
    W[0:64, 64:128] = rng.permutation(np.asarray(values, dtype=np.float64)).reshape(64, 64)
    return W


def test_tile_counts_as_its_list():
    # hard tiles, minimum and maximum: window_add_tile gives the window and the list the
    # scan's list gives, or declines (-1) and changes nothing
    rng = np.random.default_rng(7)
    N = topwin.TILE * topwin.TILE
    taken = declined = 0
    for sgn in (-1.0, 1.0):
        for s in (2.0 ** -10, 4.0, 2.0 ** -40):
            cases = [
                # most entries a few bins apart, some far below the window, some above its top
                (rng.random(N) * s * 160, sgn * s * 40, None),
                # one bin (8 keys wide here), in the window, then far below it
                ((rng.random(N) * 0.5 + 0.25) * s * 8, sgn * s * 4, None),
                ((rng.random(N) * 0.5 + 0.25) * s * 8, sgn * s * 8000, None),
                # signed zeros, quotients that underflow (key -1), keys around zero
                (np.concatenate([np.zeros(N - 6), [-0.0, 5e-324, -5e-324, 1e-310, -1e-310, s]]),
                 0.0, None),
                (rng.standard_normal(N) * s * 30, 0.0, None),
                # an offset of 1e12 weights: keys of 2**50 and more decline for the small steps
                (1e12 + rng.random(N) * 1e6 * s, 1e12, None),
                # one island, entries outside it above and below, its list open
                (rng.random(N) * s * 600, sgn * s * 300,
                 [sgn * s * 100, sgn * s * 100 + s * 200] if sgn > 0 else [-s * 300, -s * 100]),
                # three islands (the list), the window's threshold crossing them
                (rng.random(N) * s * 1000, sgn * s * 500,
                 list(np.sort(sgn * s * np.array([100.0, 300, 400, 600, 700, 900])))),
                # an infinity at the top: its key does not convert
                (np.concatenate([rng.random(N - 1) * s * 64, [sgn * np.inf]]), 0.0, None),
            ]
            for values, seed_w, isl in cases:
                for wide, skewed, cap in [(False, 0, 1 << 12), (True, 0, 1 << 12)] + (
                        [] if isl is None else [(False, 0, 5), (False, 1, 1 << 12), (True, 1, 5)]):
                    W = _tile_case(values, rng)
                    win = _tile_window(sgn, s, seed_w, isl, cap=cap, wide=wide, skewed=skewed)
                    ref = _copy(win)
                    before = _view(win)
                    got = _by_tile(win, W, 0, 64)
                    if got < 0:
                        declined += 1
                        for x, y in zip(_view(win), before):
                            assert (x is None and y is None) or np.array_equal(x, y)
                        continue
                    taken += 1
                    _by_list(ref, W, 0, 64)
                    thr = topwin.window_threshold(before[0], win.scale)
                    assert got == int(np.sum(sgn * W[0:64, 64:128] >= thr))
                    for x, y in zip(_view(win), _view(ref)):
                        assert (x is None and y is None) or np.array_equal(x, y), (sgn, s, seed_w, cap, skewed)
    assert taken > 40 and declined > 5  # both paths ran


def test_tile_declines_what_it_cannot_count():
    # a step that is not a power of two, a window that has counted nothing
    rng = np.random.default_rng(8)
    W = _tile_case(rng.random(topwin.TILE ** 2), rng)
    win = _tile_window(-1.0, 0.3, 0.5)
    assert _by_tile(win, W, 0, 64) == -1
    fresh = topwin.top_window(-1.0, 2.0 ** -10, 2.0 ** -6, 1.0)
    assert _by_tile(fresh, W, 0, 64) == -1
    assert not fresh.state[topwin.WIN_SEEN]
