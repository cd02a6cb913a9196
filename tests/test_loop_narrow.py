"""The update loops' row listing at narrow noise (docs/design.rst, The selection loop at
narrow noise): ``cutqueue._row_hits_sparse`` (64-entry bitmasks, set bits by
trailing-zero counts) and ``_chunk_hits`` list exactly the entries a plain filter passes,
in order, against ``np.flatnonzero`` (the slow reference), on hit shares from none to
all, unaligned chunk bounds, ties at the threshold, signed zeros, infinities, keys near
2**53 and float32 rows; the step's update as ``sampler.rnm_steps`` writes it out keeps
the cut's sides and counts those counted plainly from W (design.rst, The selection loop
at narrow noise, second pass). A speed change only: the releases' trees are main's (checked by
hashes, see design.rst); the loop's law tests are those of test_shapes.py and
test_fast_pamst.py."""

import numpy as np
import pytest
from numba import njit

from fastpamst_nb.cutqueue import _chunk_hits, _row_hits, _row_hits_sparse, _trailing_zeros

pytestmark = pytest.mark.nojit_lane


@njit
def _listed(row, c0, c1, sgn, ythr, how):
    """The listing of row[c0:c1] by ``how``: 0 the bitmask listing, 1 the branch-free one,
    2 ``_chunk_hits`` with ``sparse`` set, 3 unset."""
    hit = np.full(max(c1 - c0, 1), -7, dtype=np.int64)
    if how == 0:
        k = _row_hits_sparse(row, c0, c1, sgn, ythr, hit)
    elif how == 1:
        k = _row_hits(row, c0, c1, sgn, ythr, hit)
    else:
        k = _chunk_hits(row, c0, c1, sgn, ythr, hit, how == 2)
    return hit[:k].copy()


@njit
def _tz(m):
    return np.int64(_trailing_zeros(m))


def _reference(row, c0, c1, sgn, ythr):
    y = sgn * np.asarray(row[c0:c1], dtype=np.float64)
    return c0 + np.flatnonzero(y >= ythr)


def _rows():
    """(name, row, thresholds): rows whose hit shares span none, few, many and all."""
    rng = np.random.default_rng(31)
    u = rng.random(1500)
    ties = np.repeat(np.arange(10.0), 150)
    rng.shuffle(ties)
    big = 2.0 ** 53 - rng.integers(0, 64, 1500).astype(np.float64)
    odd = rng.random(1500)
    odd[::7] = -0.0
    odd[3::11] = 0.0
    odd[5::13] = np.inf
    odd[6::17] = -np.inf
    yield "uniform", u, np.quantile(u, [0.0, 0.5, 0.93, 0.99, 1.0]).tolist() + [2.0, -1.0]
    yield "float32", u.astype(np.float32), [0.5, 0.93, float(np.float32(u[17]))]
    yield "ties", ties, [0.0, 3.0, 9.0, 9.5]
    yield "near 2**53", big, [2.0 ** 53 - 5, 2.0 ** 53 - 63, 2.0 ** 53]
    yield "zeros and infinities", odd, [0.0, -0.0, np.inf, -np.inf, 0.9]


@pytest.mark.parametrize("how", [0, 1, 2, 3])
def test_listing_matches_filter(how):
    bounds = [(0, 1500), (0, 64), (0, 63), (5, 69), (1, 1024), (64, 1000), (1400, 1500), (700, 700),
              (13, 1499)]
    for name, row, thresholds in _rows():
        for sgn in (1.0, -1.0):
            for t in thresholds:
                ythr = sgn * t if np.isfinite(t) else t
                for c0, c1 in bounds:
                    got = _listed(row, c0, c1, sgn, ythr, how)
                    want = _reference(row, c0, c1, sgn, ythr)
                    assert np.array_equal(got, want), (name, sgn, t, c0, c1)


def test_every_bit_of_a_block():
    """Each single hit and the pattern of all hits at each of a block's 64 positions (the
    mask's top bit included)."""
    for pos in range(64):
        row = np.zeros(200)
        row[64 + pos] = 1.0
        assert _listed(row, 64, 128, 1.0, 0.5, 0).tolist() == [64 + pos]
        row = np.ones(200)
        row[64 + pos] = 0.0
        assert _listed(row, 64, 128, 1.0, 0.5, 0).tolist() == [u for u in range(64, 128) if u != 64 + pos]


def test_trailing_zeros():
    for j in range(64):
        assert _tz(np.uint64(1) << np.uint64(j)) == j
        assert _tz(np.uint64(0xFFFFFFFFFFFFFFFF) << np.uint64(j)) == j


def _window_case(W, sensitivity, rho=0.1, sgn=-1.0):
    from fastpamst_nb import api, privacy
    from fastpamst_nb import window as wm
    from fastpamst_nb.cutqueue_build import gq_build
    from fastpamst_nb.graph import as_graph

    n = W.shape[0]
    s = privacy.default_discretization(sensitivity)
    r = privacy.fast_pamst_key_rate(rho, sensitivity, n, s, "exponential")
    win = wm.top_window(sgn, s, r, api.DEFAULT_BUCKET_WIDTH)
    g = as_graph(W, window=win)
    q = gq_build(g, sgn, s, r, api.DEFAULT_BUCKET_WIDTH, win)
    return win, q, s


@pytest.mark.slow_python
def test_window_sizes_the_top_buckets_that_fit():
    """A crowded top (uniform weights over 12 noise-wide buckets, ~40,000 edges a bucket,
    bins shared by neighbouring buckets far fuller than ``window_extra_max``): the window
    sizes the top buckets whose excess fits, not none (it gave up before, and the loop's
    first materialization then made a sizing pass over the upper triangle). Each
    capacity bounds its bucket's edges (counted here from the keys, plainly), and the
    capacities exceed the edges by at most the excess reported."""
    from fastpamst_nb import window as wm

    n = 1000
    rng = np.random.default_rng(5)
    A = 0.5 + 0.047 * rng.random((n, n))
    W = np.triu(A, 1)
    W = W + W.T
    win, q, s = _window_case(W, 1e-5)
    lay = q.layout
    assert lay.direct
    m = n * (n - 1) // 2
    B, kmin, bshift = int(lay.n_buckets), int(lay.kmin), int(lay.bucket_shift)
    got = wm.window_capacities(win, kmin, bshift, B, m)
    assert got is not None
    b_lo, caps, extra = got
    assert 0 < b_lo < B - 1  # some top buckets, not all of the window's
    assert int(q.store.sized[0]) == b_lo
    assert 0 <= extra <= wm.window_extra_max(m)
    iu = np.triu_indices(n, 1)
    keys = np.floor(-W[iu] / s).astype(np.int64)  # s is a power of two: exact
    edges = np.bincount((keys - kmin) >> bshift, minlength=B)[b_lo:]
    assert np.all(caps >= edges + 1)
    assert int((caps - 1 - edges).sum()) <= extra


@pytest.mark.slow_python
def test_the_window_sizing_changes_no_tree(monkeypatch):
    """Speed only: the crowded top above, released with the window's partial sizing and
    with none (``window_capacities`` answering None: every bucket sized later, exactly,
    by the materialization's own pass), gives the same trees, minimum and maximum."""
    import fastpamst_nb as fp
    from fastpamst_nb import cutqueue_build

    n = 1000
    rng = np.random.default_rng(5)
    A = 0.5 + 0.047 * rng.random((n, n))
    W = np.triu(A, 1)
    W = W + W.T
    kw = {"rho": 0.1, "sensitivity": 1e-5, "noise": "exponential"}
    sized = [fp.fast_pamst(W, rng=seed, maximum=mx, **kw).edges for seed in (3, 4) for mx in (False, True)]
    monkeypatch.setattr(cutqueue_build, "_window_capacities", lambda *args, **kwargs: None)
    for k, (seed, mx) in enumerate((s, m) for s in (3, 4) for m in (False, True)):
        assert np.array_equal(fp.fast_pamst(W, rng=seed, maximum=mx, **kw).edges, sized[k]), (seed, mx)


def _cut_counts(W, visited, q, s, sgn=-1.0):
    """Per bucket, the cut's edges (a visited end, an unvisited one), counted plainly from
    the keys (s a power of two: key = floor(sgn w / s) exactly, sgn = -1 for a minimum
    tree, +1 for a maximum one) and the queue's
    bucket of each key (direct: its offset from kmin; compressed: the sorted base keys)."""
    lay, keys = q.layout, q.keys
    a = np.flatnonzero(visited)
    u = np.flatnonzero(~visited)
    k = np.floor(sgn * W[np.ix_(a, u)] / s).astype(np.int64).ravel()
    if lay.direct:
        b = (k - int(lay.kmin)) >> int(lay.bucket_shift)
    else:
        b = np.searchsorted(keys.key, k, side="right") - 1
    return np.bincount(b, minlength=int(lay.n_buckets))


@pytest.mark.slow_python
@pytest.mark.parametrize("shape, sensitivity, sgn", [
    ("uniform", 1e-5, -1.0), ("integers", 1e-5, -1.0), ("integers", 1e-3, -1.0), ("clusters", 1e-3, -1.0),
    ("pareto", 1e-3, -1.0), ("outlier", 1e-3, -1.0), ("pareto", 0.1, -1.0),
    ("integers", 1e-5, 1.0), ("pareto", 1e-3, 1.0)])  # sgn +1: a maximum tree
def test_the_written_out_update_keeps_the_counts(shape, sensitivity, sgn):
    """``sampler.rnm_steps`` writes out a dense step's join and lazy update (the filtered
    loops on the arrays it read off, or the counted range's count): after every chunk of
    a release the cut's sides, its size, each materialized bucket's count and the counted
    range's count equal those counted plainly from W and the visited set."""
    from fastpamst_nb import api, bench, privacy
    from fastpamst_nb.core import as_generator
    from fastpamst_nb.prim import prim_dense_private
    from fastpamst_nb.sampler import N_STATS

    n = 240
    W = bench.shape_weights(shape, n)
    _, q, s = _window_case(W, sensitivity, sgn=sgn)
    r = privacy.fast_pamst_key_rate(0.1, sensitivity, n, s, "exponential")
    assert q.layout.lazy_counts and not q.layout.wide
    if shape == "integers":  # the written-out update's compressed-key branch is taken
        assert not q.layout.direct
    visited = np.zeros(n, np.bool_)
    edges = np.empty((n - 1, 2), np.int64)
    stats = np.zeros(N_STATS, np.int64)
    gen = as_generator(11)
    v, step, checked = 0, 0, 0
    chunks = (1, 1, 2, 5, 20, 60, 150)
    for chunk in chunks:
        v = prim_dense_private(q, W, visited, edges, step, chunk, v, r, api.DEFAULT_THETA,
                               api.DEFAULT_BUCKET_WIDTH, gen, stats)
        step += chunk
        t = int(visited.sum())
        assert t == step and int(q.cut.sizes[0]) == t and int(q.cut.sizes[1]) == n - t
        assert set(q.cut.inside[:t].tolist()) == set(np.flatnonzero(visited).tolist())
        assert set(q.cut.rest[:n - t].tolist()) == set(np.flatnonzero(~visited).tolist())
        assert int(q.counts.total[0]) == t * (n - t)
        want = _cut_counts(W, visited, q, s, sgn)
        mat = int(q.store.materialized[0])
        assert np.array_equal(q.counts.bucket[mat:], want[mat:]), (step, mat)
        ra = int(q.store.top_range[0])
        if 0 <= ra < q.layout.n_buckets:
            assert int(q.store.top_range[1]) == int(want[ra:].sum()), step
        checked += mat < q.layout.n_buckets or 0 <= ra < q.layout.n_buckets
    # every chunk ran one of the two written-out paths (buckets counted, or the range)
    assert checked == len(chunks)
