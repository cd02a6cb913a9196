"""The validation's window by bitmasks (docs/design.rst, The validation's window by
bitmasks): the full-height tiles off the diagonal (below the tiles read without a list)
are listed by bitmasks (``dense_scan._mask_tile``): each row of a strip tested into a
64-bit mask by vector compares, the set bits visited in order. What the scan computes
must not change: its result (the first defect, the range), the window (its state and the
counts of its bins) and the keys listed outside the islands, in the same order.

References: the scan listing entry by entry (``dense_scan.MASK_TILES`` 0:
``dense_scan._relist``), and, tile by tile, the kernel on hard tiles (scores on the
islands' and the threshold's bounds and one ulp either side, signed zeros, infinities,
a NaN, an asymmetric pair, strips across two islands, a tile narrower than 64 columns)
listed by bitmasks against entry by entry.
"""

import numpy as np
import pytest

from fastpamst_nb import bench, dense_scan, privacy
from fastpamst_nb import window as topwin
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH

from test_window_tile import _copy, _same, _tile_window, _view, scan_cases

MASK_DEFAULT = dense_scan.MASK_TILES

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

MASKS = -1  # MASK_TILES: every full-height tile off the diagonal listed by bitmasks
NO_MASKS = 0  # MASK_TILES: every tile listed entry by entry (the reference)


def _scan(W, sgn, s, r, workers, monkeypatch, bulk_min=None, masks=NO_MASKS):
    monkeypatch.setattr(dense_scan, "MASK_TILES", masks)
    if bulk_min is not None:
        monkeypatch.setattr(dense_scan, "BULK_MIN", bulk_min)
    win = topwin.top_window(sgn, s, r, DEFAULT_BUCKET_WIDTH)
    got = dense_scan._scan_dense(W, win, workers=workers)
    return got, win


@pytest.mark.parametrize("shape", ["pareto", "integers", "outlier", "uniform", "clusters", "lognormal"])
@pytest.mark.slow_python
def test_scan_by_masks_is_the_scan_by_entries(shape, monkeypatch):
    # every shape at four noise levels, minimum and maximum, float64 and float32 on 1, 2
    # and 3 threads: the tiles listed by bitmasks give the scan's result, window and list
    # exactly, with and without the tiles read without a list at high noise
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    never = topwin.TILE ** 2 + 1
    runs = tuple((dt, w) for dt in (np.float64, np.float32) for w in (1, 2, 3))
    for Wd, sgn, s, r, workers, why in scan_cases(shape, 6, runs):
        ref = _scan(Wd, sgn, s, r, workers, monkeypatch, bulk_min=never)
        _same(ref, _scan(Wd, sgn, s, r, workers, monkeypatch, bulk_min=never, masks=MASKS), why)
        _same(ref, _scan(Wd, sgn, s, r, workers, monkeypatch, masks=MASK_DEFAULT), why)


@pytest.mark.slow_python
def test_scan_by_masks_names_the_same_defect(monkeypatch):
    # a NaN, infinities, an asymmetry in a tile listed by bitmasks: the same first defect,
    # the same window and list
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    n = 330
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s, "exponential")
    for shape in ("uniform", "pareto", "clusters"):
        for value, (i, j) in [(np.nan, (70, 200)), (np.inf, (130, 260)), (-np.inf, (5, 300)), (2.5, (66, 140))]:
            W = bench.shape_weights(shape, n, seed=1)
            W[i, j] = value
            if value != 2.5:
                W[j, i] = value
            for sgn in (-1.0, 1.0):
                for workers in (1, 2):
                    ref = _scan(W, sgn, s, r, workers, monkeypatch)
                    assert ref[0][0] != 0
                    _same(ref, _scan(W, sgn, s, r, workers, monkeypatch, masks=MASKS), (shape, value, sgn, workers))


def _kernel(win, W, masks=NO_MASKS):
    """The scan of tile row 0 of W (its tile (0, 64) full-height, off the diagonal) into
    ``win``: (status, i, j, wmin, wmax)."""
    listed = win.listed[0] if win.listed else topwin.NO_LISTED
    return dense_scan._dense_scan(W, 0, 1, win.ring, win.state, win.scale, win.islands, listed,
                                  topwin.TILE ** 2 + 1, masks)


def test_masks_list_hard_tiles_as_entries():
    # hard tiles: scores on the islands' bounds and on the threshold, signed zeros,
    # infinities, a NaN, an asymmetric pair, strips across two islands, one island and
    # up to four (skewed or not), minimum and maximum: the same result, window and list,
    # the tile listed by bitmasks against entry by entry
    rng = np.random.default_rng(11)
    N = topwin.TILE * topwin.TILE
    s = 2.0 ** -10
    runs = 0
    for sgn in (-1.0, 1.0):
        bounds = [sgn * s * 100, sgn * s * 300, sgn * s * 400, sgn * s * 600, sgn * s * 700, sgn * s * 900]
        isl3 = list(np.sort(bounds))
        isl1 = sorted(bounds[:2])
        # the thresholds of the three seeds below (the window's bottom score, as the scan
        # reads it) on the grid too
        thrs = [sgn * topwin.window_threshold(_tile_window(sgn, s, sgn * s * m).state,
                                              _tile_window(sgn, s, sgn * s * m).scale) for m in (500, 50, 2000)]
        grid = np.array(bounds + [sgn * s * 500, 0.0, -0.0, sgn * s * 1000]
                        + [t for t in thrs if np.isfinite(t)])
        hard = np.concatenate([grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf)])
        for case in range(7):
            if case in (0, 6):  # weights on the bounds themselves, and one ulp either side
                v = rng.choice(hard, N)
            elif case == 1:  # mostly inside one island, a few outside
                v = sgn * s * (rng.random(N) * 150 + 120)
                v[rng.random(N) < 0.02] = sgn * s * 50
            elif case == 2:  # across islands (the clusters' blocks)
                v = sgn * s * rng.choice([150.0, 450.0, 800.0], N)
            elif case == 3:  # infinities
                v = sgn * s * (rng.random(N) * 150 + 120)
                v[rng.integers(0, N, 5)] = np.inf
                v[rng.integers(0, N, 5)] = -np.inf
            else:  # a NaN, an asymmetric pair (defects: the same defect and window)
                v = sgn * s * (rng.random(N) * 1000)
            n = 100 if case == 6 else 128  # 6: a tile (0, 64) of 36 columns, a partial mask
            W = np.zeros((n, n))
            W[0:64, 64:n] = v[:64 * (n - 64)].reshape(64, n - 64)
            W[64:n, 0:64] = W[0:64, 64:n].T
            if case == 4:
                W[10, 77] = W[77, 10] = np.nan
            if case == 5:
                W[12, 90] += s
            for isl, skewed in ((None, 0), (isl1, 0), (isl3, 0), (isl3, 1)):
                for seed_w in (sgn * s * 500, sgn * s * 50, sgn * s * 2000):
                    win = _tile_window(sgn, s, seed_w, isl, skewed=skewed)
                    ref = _copy(win)
                    got = _kernel(win, W, MASKS)
                    want = _kernel(ref, W, NO_MASKS)
                    assert got == want or (np.isnan(got[3]) and np.isnan(want[3]))
                    for x, y in zip(_view(win), _view(ref)):
                        assert (x is None and y is None) or np.array_equal(x, y), (sgn, case, isl, skewed, seed_w)
                    runs += 1
    assert runs == 2 * 7 * 4 * 3
