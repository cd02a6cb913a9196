"""The queue on the weight shapes of real data (issue 31): outliers, heavy tails, far
clusters, integers with huge values.

Two properties. The released law is the exact one on tiny graphs of each shape,
dense (in the compressed layout, and in the default one) and sparse, for the minimum
and the maximum tree, including inputs whose far keys are reached only at the end of
the release (a vertex whose only edges are far): 20,000 seeded releases against
the exact sequence probabilities, failing at p < 1e-4. And a selection's work stays
bounded whatever the span of the key range: the nodes a walk visits per step
(``ST_NODES``) on each shape at n = 400 (dense) and 600 (sparse).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import naive
from numba import njit

from fastpamst_nb import bench, cutqueue, cutqueue_build, cutqueue_materialize, dense_scan, privacy
from fastpamst_nb import window as topwin
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA, _fast_pamst_graph
from fastpamst_nb.graph import as_graph
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.keys import bucket_shift_for, exact_inverse
from fastpamst_nb.sampler import ST_GROUP_DRAWS, ST_NODES, ST_STEPS, ST_TIGHT_TOPS
from test_fast_pamst import expected_sequences
from test_hard_inputs import _rho_for_rate, released_counts  # the compiled loop of releases

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

RUNS = 20_000
P_FAIL = 1e-4
LAM = 1.0  # rate with s = sensitivity = 1: one key (one weight unit) is one noise unit


def _dense(n, edges, default):
    W = np.full((n, n), float(default))
    np.fill_diagonal(W, 0.0)
    for (a, b), w in edges.items():
        W[a, b] = W[b, a] = w
    return W


def _ring6(weights):
    """naive.ring6's topology (a ring of six plus chords 0-3 and 1-4) with these weights,
    in the order (0,1) (1,2) (2,3) (3,4) (4,5) (5,0) (0,3) (1,4)."""
    rows = [0, 1, 2, 3, 4, 5, 0, 1]
    cols = [1, 2, 3, 4, 5, 0, 3, 4]
    A = sp.coo_matrix((np.asarray(weights, dtype=np.float64), (rows, cols)), shape=(6, 6))
    return (A + A.T).tocsr()


# near weights a few noise units apart (ties included) on five vertices
_NEAR = {(0, 1): 1, (0, 2): 2, (0, 3): 1, (1, 2): 1, (1, 3): 3, (2, 3): 2}

# name: (dense weights on 5 vertices, sparse weights on ring6). Far keys are 4e4 to 1e9
# noise units below the near ones: far past the direct layout's limit. The dense key
# ranges span an odd number of keys, so that kmin moves down to put kmax at the top of
# its bucket of 2 keys (cutqueue_build._top_pad; also both sparse ranges of 1e6 + 1)
SHAPES = {
    # one far edge; the tree never takes it, but it spreads the key range
    "outlier": (_dense(5, {**_NEAR, (2, 4): 1, (3, 4): 2, (1, 4): 2, (0, 4): 4e4 + 1}, 3),
                _ring6([1, 2, 1, 2, 1, 1, 2, 1e6])),
    # weights over decades, the heavy ones in the tree (vertex 4 joins by one of them)
    "pareto": (_dense(5, {**_NEAR, (0, 4): 3e4, (1, 4): 3e4 + 1, (2, 4): 4e4 + 1, (3, 4): 3e4}, 0),
               _ring6([1, 2, 1, 40, 300, 301, 2, 3e6])),
    # two far clusters: {3, 4} joins {0, 1, 2} by one of its far edges (1e6 apart)
    "clusters": (_dense(5, {(0, 1): 1, (0, 2): 2, (1, 2): 1, (3, 4): 1, (0, 3): 1e6, (1, 3): 1e6 + 1,
                            (2, 3): 1e6, (0, 4): 1e6 + 3, (1, 4): 1e6 + 1, (2, 4): 1e6}, 0),
                 _ring6([1, 2, 1, 1e6 + 1, 1, 1e6, 2, 1e6])),
    # integers with a few of 1e9
    "integers": (_dense(5, {**_NEAR, (0, 4): 1e9 + 1, (1, 4): 2, (2, 4): 1e9, (3, 4): 3}, 0),
                 _ring6([1, 2, 3, 1, 1e9, 2, 1, 3])),
    # far keys reached only at the end: vertex 4 (dense) / 5 (sparse) has far edges only
    "pendant": (_dense(5, {**_NEAR, (0, 4): 1e6, (1, 4): 1e6 + 1, (2, 4): 1e6, (3, 4): 1e6 + 3}, 0),
                _ring6([1, 2, 1, 2, 1e6 + 1, 1e6, 1, 2])),
}


def _law(weights, maximum=False):
    if maximum:
        weights = -weights  # the maximum tree of -W takes the walks of the minimum tree of W
    n = weights.shape[0]
    rho = _rho_for_rate(LAM, 1.0, 1.0, n, "exponential")
    counts, stats, rate = released_counts(weights, rho, 1.0, None, maximum=maximum)
    assert rate == pytest.approx(LAM, rel=1e-12)
    expected = expected_sequences(weights, rate, 1.0, maximum=maximum)
    assert sum(RUNS * p >= 5 for p in expected.values()) >= 3, "configuration too concentrated"
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
    return stats


def _layout(weights):
    q = gq_build(as_graph(weights), -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
    lay = q.layout
    return "wide" if lay.wide else "direct" if lay.direct else "compressed"


@pytest.fixture
def no_wide(monkeypatch):
    # dense graphs this small always pass the wide layout's crowding test: make every
    # wide bucket count as crowded, so that their key ranges take the compressed layout.
    # (Read by gq_build, a Python function, at each call. Raising window.WIDE_MIN_FINE
    # instead would leave the key ranges below it direct, not compressed.)
    monkeypatch.setattr(cutqueue_build, "_WIDE_FILL_MIN", 0)
    monkeypatch.setattr(cutqueue_build, "_WIDE_FILL_FACTOR", 0)


# every shape for the minimum tree, two for the maximum one (the same walks mirrored):
# each case is 20,000 releases
CASES = [(name, False) for name in SHAPES] + [("outlier", True), ("pendant", True)]
IDS = [f"{name}-{'max' if maximum else 'min'}" for name, maximum in CASES]


@pytest.mark.parametrize("name, maximum", CASES, ids=IDS)
@pytest.mark.slow_python
def test_compressed_dense_law(name, maximum, no_wide):
    W = SHAPES[name][0]
    assert _layout(W) == "compressed"
    _law(W, maximum)


@pytest.mark.parametrize("name", ["pareto", "clusters", "pendant"])
@pytest.mark.slow_python
def test_compressed_layered_dense_law(name, no_wide, monkeypatch):
    # the block layer over a few compressed buckets (blocks of 2 to 4): counted lazily,
    # materialized by whole blocks, walked block by block
    monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_BUCKETS", 2)
    monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_LAZY", 2)
    W = SHAPES[name][0]
    q = gq_build(as_graph(W), -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
    assert not q.layout.direct and q.layout.layered and q.layout.lazy_counts and q.layout.n_blocks >= 2
    stats = _law(W)
    assert stats[ST_TIGHT_TOPS] > 0  # the walk's tight bucket tops on a block node: the law with them


@pytest.mark.parametrize("name, maximum", [("clusters", False), ("pendant", False), ("outlier", True)],
                         ids=["clusters-min", "pendant-min", "outlier-max"])
@pytest.mark.slow_python
def test_compressed_islands_dense_law(name, maximum, no_wide, monkeypatch):
    # islands at this size: coarse blocks of one bucket, each occupied one dense, joined
    # across gaps of up to 4 empty buckets, which become (empty) buckets of the queue;
    # the far ones stay islands of their own, so the walk passes empty buckets and jumps
    # the far gaps (pendant: reached at the end of the release)
    monkeypatch.setattr(cutqueue_build, "_COARSE_SHIFT", 0)
    W = 3.0 * SHAPES[name][0]  # near keys 3 apart: buckets of 2 keys, every other one empty
    q = gq_build(as_graph(-W if maximum else W), -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
    lay = q.layout
    assert not lay.direct and lay.lazy_counts and lay.hash_bits > 0
    shift = int(lay.bucket_shift)
    w = (-W if maximum else W)[np.triu_indices(W.shape[0], 1)]
    occupied = np.unique((np.floor(-w).astype(np.int64) - lay.kmin) >> shift)
    assert lay.n_buckets > occupied.shape[0]  # empty buckets inside the islands
    _law(W, maximum)


@pytest.mark.parametrize("name, maximum", CASES, ids=IDS)
@pytest.mark.slow_python
def test_sparse_law(name, maximum):
    A = SHAPES[name][1]
    assert _layout(A) == "compressed"
    _law(A, maximum)


@pytest.mark.parametrize("name", ["clusters", "pendant"])
@pytest.mark.slow_python
def test_default_dense_law(name):
    # tiny dense graphs take wide buckets by default (their crowding test always passes)
    W = SHAPES[name][0]
    assert _layout(W) == "wide"
    _law(W)


def test_compressed_layout_of_each_shape(no_wide):
    # both builds of the compressed layout (a table of the aligned buckets when they are
    # few against m, else a hash set of the occupied ones) give the same buckets: the
    # occupied noise-wide buckets of the key range, in order, none empty; with no window
    # the buckets are aligned so that kmax is the highest key of its bucket (kmin moved
    # down by less than a bucket), which most law cases above then run on
    moved = 0
    for name, (W, A) in SHAPES.items():
        for weights in (W, A):
            graph = as_graph(weights)
            q = gq_build(graph, -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
            if q.layout.direct:
                continue
            shift = int(q.layout.bucket_shift)
            if graph.dense:
                w = weights[np.triu_indices(weights.shape[0], 1)]
            else:
                w = sp.triu(weights, 1).tocoo().data
            keys = np.floor(-w).astype(np.int64)
            aligned = np.unique((keys - q.layout.kmin) >> shift)
            assert np.array_equal(q.keys.key, q.layout.kmin + (aligned << shift)), name
            assert q.layout.kmin <= keys.min() < q.layout.kmin + (1 << shift), name
            assert (keys.max() - q.layout.kmin + 1) % (1 << shift) == 0, name
            moved += q.layout.kmin < keys.min()
            if graph.dense:  # sized lazily, at the first materialization (no window here)
                assert q.store.sized[0] == q.layout.n_buckets and q.store.cap.sum() == 0
            else:
                assert q.store.cap.sum() - q.layout.n_buckets == w.shape[0]  # each edge once, + spares
    assert moved == 7  # every dense shape, and sparse clusters and pendant


def test_top_pad_is_the_highest_placement_of_kmax_the_bins_allow():
    # cutqueue_build._top_pad against a search: of the pads below a bucket that are
    # multiples of the window's bin width (2**fine_shift keys), the one that puts kmax
    # (offset K - 1 from kmin) highest in its bucket
    for K in range(1, 70):
        for bshift in range(6):
            for fine_shift in range(-1, 8):
                binw = 1 << max(fine_shift, 0)
                pads = [p for p in range(1 << bshift) if p % binw == 0]
                best = max(pads, key=lambda p: (K - 1 + p) % (1 << bshift))
                assert cutqueue_build._top_pad(K, bshift, fine_shift) == best, (K, bshift, fine_shift)


@pytest.mark.parametrize("sparse, layered", [(False, False), (False, True), (True, False)],
                         ids=["dense", "dense-layered", "sparse"])
def test_compressed_ranks_match_a_sort(sparse, layered, no_wide, monkeypatch):
    # edges in buckets of their own or nearly (thousands of occupied buckets: the hash
    # set grows many times): each edge's rank (stored, sparse; found through the hash
    # set, dense) is the rank of its aligned bucket among the occupied ones, and each
    # bucket's count its edges
    if layered:
        monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_BUCKETS", 64)
        monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_LAZY", 64)
    ranked = sparse
    spread = 1e12
    rng = np.random.default_rng(4)
    n = 70
    if sparse:
        A = sp.triu(bench.sparse_topology(n, 6, seed=2), 1).tocoo()
        w = np.floor(rng.random(A.data.shape[0]) * spread) + 1.0
        upper = sp.coo_matrix((w, (A.row, A.col)), shape=(n, n))
        weights = (upper + upper.T).tocsr()
    else:
        weights = np.triu(np.floor(rng.random((n, n)) * spread), 1)
        weights = weights + weights.T
    graph = as_graph(weights)
    q = gq_build(graph, -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
    assert not q.layout.direct and q.layout.layered == layered
    assert (q.layout.hash_bits > 0) == (not ranked) == (q.keys.rank.shape[0] == 0)
    shift, kmin = int(q.layout.bucket_shift), int(q.layout.kmin)
    if sparse:
        keys = np.floor(-graph.data).astype(np.int64)
        rows = np.repeat(np.arange(n), np.diff(graph.indptr))
        upper_entry = graph.indices > rows
    else:
        keys = np.floor(-weights.ravel()).astype(np.int64)
        upper_entry = np.triu(np.ones((n, n), dtype=bool), 1).ravel()
    aligned = (keys - kmin) >> shift
    occupied = np.unique(aligned[upper_entry])
    assert np.array_equal(q.keys.key, kmin + (occupied << shift))
    want = np.searchsorted(occupied, aligned)
    if ranked:
        off_diagonal = np.ones(keys.shape[0], dtype=bool) if sparse else ~np.eye(n, dtype=bool).ravel()
        assert np.array_equal(q.keys.rank[off_diagonal], want[off_diagonal])
    else:
        # the hash set: each occupied id in one slot, mapped to its rank, the rest free
        table, slot_rank = q.keys.table, q.keys.slot_rank
        assert table.shape[0] == 1 << int(q.layout.hash_bits) >= 2 * occupied.shape[0]
        held = table >= 0
        assert np.array_equal(np.sort(table[held]), occupied)
        assert np.array_equal(slot_rank[held], np.searchsorted(occupied, table[held]))
    counts = np.bincount(want[upper_entry], minlength=occupied.shape[0])
    if ranked:
        assert np.array_equal(q.store.cap, counts + 1)
    else:
        # a dense queue sizes its buckets lazily: nothing at build (no window here),
        # then the sizing pass, through the hash set, gives each its edges + the spare
        assert q.store.sized[0] == q.layout.n_buckets and q.store.cap.sum() == 0
        _size_from(q, weights, 0)
        assert np.array_equal(q.store.cap, counts + 1)
        assert np.array_equal(q.store.start[1:], np.cumsum(counts + 1)[:-1])
    if not ranked:
        # a weight whose bucket the set does not hold (W modified during a release) raises
        # instead of probing the table forever
        lay, qk = q.layout, q.keys
        group = (int(want[1]) << shift) | ((int(keys[1]) - kmin) & ((1 << shift) - 1))
        assert _lookup(float(weights[0, 1]), lay, qk) == group  # weights[0, 1] is found
        far = -float(kmin + ((int(occupied[-1]) + 7) << shift))  # an empty bucket's key
        with pytest.raises(AssertionError, match="not in the queue's set"):
            _lookup(far, lay, qk)


@pytest.mark.parametrize("shape", ["outlier", "clusters", "integers", "pareto", "edges"])
@pytest.mark.parametrize("budget", ["default", "tight"])
@pytest.mark.parametrize("parts", [1, 2])
def test_islands_hold_every_occupied_bucket(shape, budget, parts, monkeypatch):
    # a crowded dense range takes its islands' buckets whole and keys only the entries
    # outside them: the set must hold exactly the occupied aligned buckets plus the
    # islands' (a naive reference: a count of every key). "tight": a budget of a few
    # blocks, so that islands stay apart and many entries (between and beyond them)
    # are keyed; "edges": every entry a hair from an island's bounds (the filter's
    # margins: entries just inside and just outside each bound)
    if budget == "tight":
        monkeypatch.setattr(cutqueue_build, "_COARSE_SLACK", 0)
        monkeypatch.setattr(cutqueue_build, "_COARSE_BUDGET", 200)  # 3 blocks at n = 300
        # and a buffer of 4 n ids: the many outside ids fill it, so it is deduplicated
        # and grown (6-49 times here) before the pass ends
        monkeypatch.setattr(cutqueue_build, "_BUF_MIN", 0)
    if parts == 2:  # the pass in two parts side by side, their sets merged
        monkeypatch.setattr(cutqueue_build, "_PARALLEL_MIN", 0)
        monkeypatch.setattr(cutqueue_build, "thread_count", lambda: 2)
    n = 300
    W = bench.shape_weights("clusters" if shape == "edges" else shape, n, seed=2)
    graph = as_graph(W)
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s, "exponential")
    inv = exact_inverse(s)
    assert inv != 0.0  # a power-of-two step: the keys below are exact products
    kmin, kmax = cutqueue_build._key_range(graph, -1.0, s)
    bshift = bucket_shift_for(kmax - kmin + 1, r, DEFAULT_BUCKET_WIDTH)
    ranges = cutqueue_build._island_ranges(W, -1.0, s, inv, kmin, kmax, bshift, graph.m)
    assert ranges.lo.shape[0] > 0
    if shape == "edges":
        # move every entry to a key within 3 of an island's bound, on both sides
        rng = np.random.default_rng(5)
        iu = np.triu_indices(n, 1)
        bounds = np.concatenate([kmin + (ranges.lo << bshift), kmin + (ranges.hi << bshift)])
        k = rng.choice(bounds, iu[0].shape[0]) + rng.integers(-3, 4, iu[0].shape[0])
        k = np.clip(k, kmin, kmax)
        w = -(k.astype(np.float64) + rng.random(k.shape[0]) * 0.999) * s  # floor(-w / s) = k
        W = np.zeros((n, n))
        W[iu] = w
        W.T[iu] = w
        graph = as_graph(W)
        assert cutqueue_build._key_range(graph, -1.0, s)[0] >= kmin
    table, bits, ordered, slot_rank = cutqueue_build._islands(graph, -1.0, s, inv, kmin, bshift, ranges)
    aligned = (np.floor(-W[np.triu_indices(n, 1)] * inv).astype(np.int64) - kmin) >> bshift
    ids = np.unique(np.concatenate([aligned] + [np.arange(lo, hi) for lo, hi in zip(ranges.lo, ranges.hi)]))
    held = np.sort(table[table >= 0])
    assert np.array_equal(held, ids) and np.array_equal(ordered, ids)
    assert np.array_equal(ordered[slot_rank[table >= 0]], table[table >= 0])  # each slot's rank
    assert 2 * held.shape[0] <= table.shape[0] == 1 << bits
    assert np.all(ranges.lo[1:] > ranges.hi[:-1])  # increasing and disjoint
    assert ranges.lo.shape[0] <= cutqueue_build._MAX_RANGES
    # both kinds of entries: inside the islands, and (tight budget, or the outlier's
    # far edge and Pareto's tail) outside
    inside = np.zeros(aligned.shape[0], dtype=bool)
    for lo, hi in zip(ranges.lo, ranges.hi):
        inside |= (aligned >= lo) & (aligned < hi)
    assert inside.any()
    if budget == "tight" or shape in ("outlier", "pareto", "edges"):
        assert not inside.all()
    if budget == "tight":
        assert ranges.lo.shape[0] > 1 or shape in ("outlier", "pareto")  # theirs are contiguous


@njit
def _size_from(q, W, lo):
    cutqueue_materialize._size_buckets(q.layout, q.keys, q.store, q.cut, W, lo)


@njit
def _lookup(w, lay, keys):
    return cutqueue.gq_group(w, 0, lay, keys)


# ---------------------------------------------------------------------------
# nodes visited per selection
# ---------------------------------------------------------------------------

# A node is a bucket (bucket_width = 2 noise units wide by default), a block of buckets
# or a group. The walk stops once the edges left expect fewer than theta noises above
# the best so far, about ln(m / theta) noise units below the top: some
# ln(m / theta) / bucket_width buckets, each visited once, whatever lies further down
# (an empty gap of any width is crossed by the stop test before the next bucket). The
# slack covers the first bucket, a partly filled last one and the block layer's nodes.
# The radix-sorted distinct keys this layout replaced visited groups one by one: about
# 800 a step on the dense outlier shape below, 17 on the sparse one.
NODES_SLACK = 6


def _nodes_per_step(A):
    n = A.shape[0]
    graph = as_graph(A)
    s = privacy.default_discretization(1e-5)
    _, stats = _fast_pamst_graph(graph, 0.1, 1e-5, s, 0, np.random.default_rng(0), "exponential", False,
                                 DEFAULT_THETA, DEFAULT_BUCKET_WIDTH)
    assert stats[ST_STEPS] == n - 1
    return stats[ST_NODES] / stats[ST_STEPS]


def test_groups_drawn_alone_only_where_buckets_are_single_groups():
    # ST_GROUP_DRAWS counts groups resolved by a draw of their own: a bucket of the
    # default width spans at most its noise width (direct or compressed: never split
    # into groups), single-group buckets (bucket_width < 0, a test setting) always are
    W = bench.shape_weights("outlier", 120, seed=1)
    graph = as_graph(W)
    s = privacy.default_discretization(1e-5)
    for width, alone in ((DEFAULT_BUCKET_WIDTH, False), (-1.0, True)):
        _, stats = _fast_pamst_graph(graph, 0.1, 1e-5, s, 0, np.random.default_rng(0), "exponential",
                                     False, DEFAULT_THETA, width)
        assert (stats[ST_GROUP_DRAWS] > 0) == alone, width


@pytest.mark.parametrize("shape", list(bench.SHAPES))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.slow_python
def test_nodes_per_step_stay_bounded(shape, sparse):
    A = bench.shape_weights(shape, 600 if sparse else 400, seed=1, sparse=sparse)
    m = A.nnz // 2 if sparse else 400 * 399 // 2
    bound = math.log(m / DEFAULT_THETA) / DEFAULT_BUCKET_WIDTH + NODES_SLACK
    nodes = _nodes_per_step(A)
    assert nodes <= bound, f"{nodes:.1f} nodes per step (bound {bound:.1f})"


# ---------------------------------------------------------------------------
# islands sampled before the validation (dense_scan.sample_islands): the scan lists the
# keys outside them, and the build makes no pass of its own (docs/design.rst, Islands
# sampled before the validation)
# ---------------------------------------------------------------------------

def _scanned_window(W, workers, s, r):
    """A top window filled by the validation's scan on ``workers`` threads (forced)."""
    win = topwin.top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
    assert dense_scan._scan_dense(W, win, workers=workers)[0] == 0
    return win


def test_outside_listed_and_merge_match_numpy():
    # the build's one-pass kernels against the obvious numpy: the listed keys' buckets
    # outside the islands (shift, masks, sort, distinct) and the ids in order (a stable
    # sort of the outside ids and the islands' runs, an id in both kept twice)
    rng = np.random.default_rng(5)
    for _ in range(300):
        R = int(rng.integers(0, 5))
        ends = np.sort(rng.choice(200, size=2 * R, replace=False)).astype(np.int64)
        ranges = cutqueue_build.Islands(ends[0::2].copy(), ends[1::2].copy())
        keys = np.unique(rng.integers(-50, 5000, size=int(rng.integers(0, 300)))).astype(np.int64)
        kmin, shift = int(rng.integers(-60, 1)), int(rng.integers(0, 6))
        a = (keys - kmin) >> shift
        keep = np.ones(a.shape[0], dtype=np.bool_)
        for lo, hi in zip(ranges.lo, ranges.hi):
            keep &= (a < lo) | (a >= hi)
        got = cutqueue_build._outside_listed(keys, kmin, shift, ranges)
        assert got.dtype == np.int64 and np.array_equal(got, np.unique(a[keep]))
        outside = np.sort(rng.integers(0, 220, size=int(rng.integers(0, 50)))).astype(np.int64)
        runs = [np.arange(lo, hi, dtype=np.int64) for lo, hi in zip(ranges.lo, ranges.hi)]
        want = np.sort(np.concatenate([outside] + runs), kind="stable")
        assert np.array_equal(cutqueue_build._merge_islands(outside, ranges.lo, ranges.hi), want)


@pytest.mark.parametrize("shape", ["outlier", "pareto"] + [pytest.param(name, marks=pytest.mark.slow_python)
                                                             for name in ("clusters", "integers")])
def test_listed_keys_give_every_occupied_bucket(shape, no_wide, monkeypatch):
    # the queue built from the scan's list holds exactly the occupied aligned buckets
    # plus those of the sampled islands (a naive reference: a count of every key),
    # whatever the number of threads of the scan; and so does the build's own pass when
    # the list runs out of room (the same islands: the same queue)
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    n = 300
    W = bench.shape_weights(shape, n, seed=2)
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s, "exponential")
    graph = as_graph(W)
    # where the islands would leave over 1/32 of the sample outside (the integers' and
    # Pareto's at this size), the scan lists nothing and the build keeps its own islands
    # and pass: the queue of a window that wanted no islands
    win = _scanned_window(W, 2, s, r)
    if win.state[topwin.WIN_ISLANDS] == -3:
        assert shape in ("integers", "pareto")
        plain = topwin.top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
        plain.state[topwin.WIN_ISLANDS] = -2
        assert dense_scan._scan_dense(W, plain, workers=2)[0] == 0
        q = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH, win)
        assert np.array_equal(q.keys.key, gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH, plain).keys.key)
    monkeypatch.setattr(cutqueue_build, "_OUTSIDE_SHARE_MAX", 1.0)  # below: every shape lists
    built = {}
    for workers, room in [(1, None), (2, None), (3, None), (2, 0)]:
        if room is not None:  # no room: the list is incomplete once a key is outside
            monkeypatch.setattr(topwin, "_LISTED_MIN", room)
            monkeypatch.setattr(topwin, "_LISTED_MAX", room)
        win = _scanned_window(W, workers, s, r)
        state = win.state
        assert state[topwin.WIN_ISLANDS] >= 1 and state[topwin.WIN_COMPLETE] == 1
        # (the list of the first run is not empty: no room makes it incomplete)
        assert state[topwin.WIN_LISTED_FULL] == (room is not None)
        q = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH, win)
        lay = q.layout
        assert not lay.direct and not lay.wide
        shift = int(lay.bucket_shift)
        keys = np.floor(-W[np.triu_indices(n, 1)] / s).astype(np.int64)
        ranges = cutqueue_build._window_ranges(win, int(lay.kmin), int(keys.max()), shift)
        assert ranges.lo.shape[0] >= 1
        want = np.unique(np.concatenate([(keys - lay.kmin) >> shift]
                                        + [np.arange(lo, hi) for lo, hi in zip(ranges.lo, ranges.hi)]))
        assert np.array_equal((q.keys.key - lay.kmin) >> shift, want), (workers, room)
        held = q.keys.table[q.keys.table >= 0]
        assert np.array_equal(np.sort(held), want)
        assert np.array_equal(want[q.keys.slot_rank[q.keys.table >= 0]], held)  # each slot's rank
        if room is None:
            listed = win.listed[0][:state[topwin.WIN_LISTED]]
            assert np.all(np.diff(listed) > 0)  # distinct, increasing
            # every entry the scan did not list lies in an island's keys
            inside = np.zeros(keys.shape[0], dtype=bool)
            for t in range(int(state[topwin.WIN_ISLANDS])):
                klo, khi = state[topwin.WIN_ISLAND_KEYS + 2 * t], state[topwin.WIN_ISLAND_KEYS + 2 * t + 1]
                inside |= (keys >= klo) & (keys < khi)
            assert np.all(np.isin(keys[~inside], listed))
            assert (~inside).any()
        built[(workers, room)] = (q.keys.key.copy(), None if room else listed.copy())
    ref = built[(1, None)]
    for key, (k, listed) in built.items():
        assert np.array_equal(k, ref[0]), key
        if listed is not None:
            assert np.array_equal(listed, ref[1]), key


@pytest.mark.parametrize("sgn", [-1.0, 1.0], ids=["min", "max"])
def test_far_keys_the_sample_missed_are_listed(sgn, no_wide, monkeypatch):
    # a sample whose keys span few buckets is one island, its whole range: far keys in
    # rows it did not read (the integers' weights of 10^9) are listed by the scan, and
    # the compressed queue built from the list holds exactly the occupied aligned
    # buckets plus the island's (a naive count of every key), on 1 and 2 scan threads
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    monkeypatch.setattr(cutqueue_build, "_CROWD_ROWS", 8)  # the sample: rows 0, 37, 74, ...
    monkeypatch.setattr(cutqueue_build, "_CROWD_SAMPLE", 0)
    n = 300
    W = bench.shape_weights("uniform", n, seed=2)
    for i, j in [(1, 2), (5, 9), (40, 41)]:  # rows the sample does not read
        W[i, j] = W[j, i] = 1e4
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s, "exponential")
    keys = np.floor(sgn * W[np.triu_indices(n, 1)] / s).astype(np.int64)
    far = np.unique(keys[np.abs(keys) > np.abs(keys).min() + (1 << 24)])
    assert far.shape[0] == 1
    graph = as_graph(W)
    built = []
    for workers in (1, 2):
        win = topwin.top_window(sgn, s, r, DEFAULT_BUCKET_WIDTH)
        assert dense_scan._scan_dense(W, win, workers=workers)[0] == 0
        state = win.state
        assert state[topwin.WIN_ISLANDS] == 1 and not state[topwin.WIN_LISTED_FULL]
        listed = win.listed[0][:state[topwin.WIN_LISTED]]
        assert np.isin(far, listed).all()
        q = gq_build(graph, sgn, s, r, DEFAULT_BUCKET_WIDTH, win)
        lay = q.layout
        assert not lay.direct and not lay.wide
        shift = int(lay.bucket_shift)
        ranges = cutqueue_build._window_ranges(win, int(lay.kmin), int(keys.max()), shift)
        want = np.unique(np.concatenate([(keys - lay.kmin) >> shift]
                                        + [np.arange(lo, hi) for lo, hi in zip(ranges.lo, ranges.hi)]))
        assert np.array_equal((q.keys.key - lay.kmin) >> shift, want), workers
        built.append(q.keys.key.copy())
    assert np.array_equal(built[0], built[1])


@pytest.mark.parametrize("sgn", [-1.0, 1.0], ids=["min", "max"])
def test_window_counts_a_batch_as_entry_by_entry(sgn):
    # window_add counts a batch of few fine bins whole (one bin: no key per entry; a
    # few: bins computed in floating point): the window equals the one built entry by
    # entry (a batch under _BATCH_MIN entries takes the per-entry loop), on batches of
    # one bin, of a few, across zero (keys -1 and 0, a quotient that underflows), of too
    # many bins, with keys that do not convert, raising the top past the ring, and with
    # a step that is not a power of two (one bin only)
    rng = np.random.default_rng(4)
    k = topwin._BATCH_MIN
    for s in (2.0 ** -10, 4.0, 0.3):  # 4: the quotient of 5e-324 underflows to -0.0
        cases = [
            (rng.random(k) * 0.5 + 0.25) * s * 8,  # one fine bin (8 keys wide here)
            rng.random(3 * k) * s * 128,  # sixteen bins
            np.concatenate([rng.standard_normal(k) * s * 40, [0.0, -0.0, 5e-324, -5e-324, 1e-310]]),
            rng.random(k) * s * 2 ** 12,  # over _BATCH_BINS bins: the per-entry loop
            np.concatenate([rng.random(k) * s * 64, [np.inf, 1e300, -np.inf]]),  # skipped keys
            sgn * (rng.random(k) * 0.5 + 2.0 ** 20) * s * 8,  # far above: slides past the ring
        ]
        one = topwin.top_window(sgn, s, 2.0 ** -6, 1.0)
        ref = topwin.top_window(sgn, s, 2.0 ** -6, 1.0)
        assert one.state[topwin.WIN_FINE_SHIFT] == 3
        for w in (one, ref):
            topwin.window_add(w.ring, w.state, w.scale, np.array([0.5 * s]), 1)  # seen: the batch path
        for batch in cases:
            batch = rng.permutation(batch)
            topwin.window_add(one.ring, one.state, one.scale, batch.copy(), batch.size)
            for t in range(batch.size):  # one entry a call: the per-entry loop
                topwin.window_add(ref.ring, ref.state, ref.scale, batch[t:t + 1].copy(), 1)
            assert np.array_equal(one.state, ref.state), (s, batch[:3])
            top, bins = int(ref.state[topwin.WIN_TOP]), int(ref.state[topwin.WIN_BINS])
            f = np.arange(top - bins + 1, top + 1) & (topwin._WINDOW_RING - 1)
            assert np.array_equal(one.ring[f], ref.ring[f]), (s, batch[:3])
            assert ref.ring[f].sum() > 0


def test_sampled_islands_are_safe_on_bad_weights(monkeypatch):
    # the sample reads W before it is validated: non-finite entries in the sampled rows
    # are skipped, and the scan still names the first defect, as without a window
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    n = 200
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s, "exponential")
    for value in [np.nan, np.inf, -np.inf, 1e300]:
        W = bench.shape_weights("clusters", n, seed=1)
        W[0, 5] = W[5, 0] = value
        W[7, 9] = value  # asymmetric too (the first defect is at (0, 5))
        win = topwin.top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
        got = dense_scan._scan_dense(W, win, workers=2)
        assert got[:3] == dense_scan._scan_dense(W, workers=2)[:3]
        if value == 1e300:  # finite: the scan passes W's symmetry check, not the key range
            assert got[0] == 2 and win.state[topwin.WIN_ISLANDS] >= 1
        else:
            assert got[0] == 1
            assert win.state[topwin.WIN_ISLANDS] >= 1  # the sample skipped the bad entries


@pytest.mark.parametrize("name, maximum", [("pendant", False), ("outlier", True)],
                         ids=["pendant-min", "outlier-max"])
@pytest.mark.slow_python
def test_sampled_islands_dense_law(name, maximum, no_wide, monkeypatch):
    # an island sampled before the validation (one bucket) and the other keys listed by
    # the scan, near and far: the released law is the exact one
    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    monkeypatch.setattr(cutqueue_build, "_COARSE_SHIFT", 0)
    # a budget of one block: one island (the fullest bucket), every other key listed
    # (however many: no share limit)
    monkeypatch.setattr(cutqueue_build, "_COARSE_SLACK", 1)
    monkeypatch.setattr(cutqueue_build, "_COARSE_BUDGET", 1 << 40)
    monkeypatch.setattr(cutqueue_build, "_OUTSIDE_SHARE_MAX", 1.0)
    W = 3.0 * SHAPES[name][0]
    sgn_W = -W if maximum else W
    win = topwin.top_window(1.0 if maximum else -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH)
    graph = as_graph(sgn_W, window=win)
    assert win.state[topwin.WIN_ISLANDS] >= 1 and not win.state[topwin.WIN_LISTED_FULL]
    assert win.state[topwin.WIN_LISTED] >= 1  # the far keys
    q = gq_build(graph, 1.0 if maximum else -1.0, 1.0, LAM, DEFAULT_BUCKET_WIDTH, win)
    assert not q.layout.direct and q.layout.hash_bits > 0
    rho = _rho_for_rate(LAM, 1.0, 1.0, W.shape[0], "exponential")
    counts, _, rate = released_counts(sgn_W, rho, 1.0, None, maximum=maximum, window=True)
    expected = expected_sequences(sgn_W, rate, 1.0, maximum=maximum)
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"


# Counted buckets bounded by their highest written offset (SlotStore.top; docs/design.rst,
# The selection loop on the shapes). Buckets hold 2 keys at this rate; the keys sit at the
# bottom of their buckets, a key below the bucket's top, so the walk bounds a counted one
# by that key (ST_TIGHT_TOPS): the stop test, the node's maximum and its extras' threshold
# move. The start vertex's edges lie more than 4 noise units below the top key, so the
# first step forms no counted range and the buckets are counted (materialized) at once.
# direct: every weight even, the largest too (kmin = -10: offset 0); compressed: the top
# key (weight 2) at the top of its bucket (the pad), the odd weights at the bottom of
# theirs, far keys 1e9 noise units down (p underflows to 0); offset: the direct case at
# 1e12 with s = 2**-13 (keys near -2**53).
_EVEN = {(0, 1): 8, (0, 2): 10, (0, 3): 8, (0, 4): 10, (1, 2): 2, (1, 3): 4, (2, 3): 2, (1, 4): 4,
         (2, 4): 6, (3, 4): 6}
_ODD = {(0, 1): 9, (0, 2): 11, (0, 3): 9, (0, 4): 1e9 + 1, (1, 2): 2, (1, 3): 3, (2, 3): 5, (1, 4): 3,
        (2, 4): 5, (3, 4): 1e9}
_S_OFFSET = 2.0 ** -13
TIGHT = {
    "direct": (_dense(5, _EVEN, 0), 1.0, "direct"),
    "compressed-far": (_dense(5, _ODD, 0), 1.0, "compressed"),
    "offset-1e12": (_dense(5, {e: 1e12 + w * _S_OFFSET for e, w in _EVEN.items()}, 0), _S_OFFSET, "direct"),
}


@pytest.mark.parametrize("name, maximum", [("direct", False), ("direct", True), ("compressed-far", False),
                                           ("compressed-far", True), ("offset-1e12", False)],
                         ids=["direct-min", "direct-max", "compressed-min", "compressed-max", "offset-min"])
@pytest.mark.slow_python
def test_tight_bucket_tops_dense_law(name, maximum, monkeypatch):
    W, s, layout = TIGHT[name]
    if layout == "direct":
        monkeypatch.setattr(topwin, "WIDE_MIN_FINE", 1 << 62)  # no wide buckets: direct keys
    else:
        monkeypatch.setattr(cutqueue_build, "_WIDE_FILL_MIN", 0)  # every wide bucket crowds
        monkeypatch.setattr(cutqueue_build, "_WIDE_FILL_FACTOR", 0)
    if maximum:
        W = -W  # the maximum tree of -W takes the walks of the minimum tree of W
    sgn = 1.0 if maximum else -1.0
    lam = 1.0 / s  # one key, one noise unit
    q = gq_build(as_graph(W), sgn, s, lam * s, DEFAULT_BUCKET_WIDTH)
    assert (("direct" if q.layout.direct else "compressed") == layout and not q.layout.wide
            and q.layout.lazy_counts and q.layout.bucket_shift == 1)
    n = W.shape[0]
    rho = _rho_for_rate(lam, s, s, n, "exponential")
    counts, stats, rate = released_counts(W, rho, s, None, maximum=maximum)
    assert rate == pytest.approx(lam, rel=1e-12)
    assert stats[ST_TIGHT_TOPS] > 0  # the bound was taken
    expected = expected_sequences(W, rate, s, maximum=maximum)
    assert sum(RUNS * p >= 5 for p in expected.values()) >= 3, "configuration too concentrated"
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
