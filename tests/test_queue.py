"""The grouped cut queue alone, against a naive set model of Prim's cut.

Vertices join the tree in a random order; after every update the queue's counts,
top, rank selection and picks must agree with a plain Python set of the active
edges (one endpoint visited), whatever the layout: direct or compressed keys,
single-group or wide buckets, with or without the second counter layer.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit

import naive
from fastpamst_nb import cutqueue_build, cutqueue_materialize, graph, window as topwin
from fastpamst_nb.graph import as_graph
from fastpamst_nb.keys import bucket_shift_for
from fastpamst_nb.cutqueue import (
    ROOT, code_ends, gq_count, gq_join, gq_select, gq_take, gq_take_cut, gq_top, gq_update, gq_update_csr,
    slot_code,
)
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.cutqueue_materialize import gq_count_range, gq_materialize

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests


def _sym(rng, n, scale=1.0, integer=False):
    A = rng.random((n, n)) * scale
    if integer:
        A = np.floor(A)
    A = np.triu(A, 1)
    return A + A.T


def _sparse(n):
    A = sp.random(n, n, density=0.15, random_state=1)
    return (A + A.T).tocsr()


# name: (weights builder, s, r, bucket_width) -- r and bucket_width set the bucket width
LAYOUTS = {
    "direct-wide-buckets": (lambda rng: _sym(rng, 30), 1e-3, 0.01, 1.0),
    "direct-single-groups": (lambda rng: _sym(rng, 30, 20, True), 1.0, 1.0, -1.0),
    # wide buckets off (below): 500,000 noise-wide buckets for 435 edges, compressed buckets
    "compressed-groups": (lambda rng: _sym(rng, 30, 1e7), 1.0, 0.05, 1.0),
    # the same weights with wide buckets: 16,384 of them, a slot keeps its sub-bucket only
    "wide": (lambda rng: _sym(rng, 30, 1e7), 1.0, 0.05, 1.0),
    # 2**21 keys for 435 edges (far past m/4 + 2**18) but only 512 buckets: direct
    "direct-fine-step": (lambda rng: _sym(rng, 30), 2.0 ** -21, 2.0 ** -12, 1.0),
    # (n = 40: 780 occupied buckets, past the patched 256 below; n = 60 checked the same
    # block counters at twice the Python time of this test's naive cut)
    "layered": (lambda rng: _sym(rng, 40), 1e-5, 10.0, 0.0),
    "sparse": (lambda rng: _sparse(40), 1e-2, 0.5, 1.0),
}


# layouts that exist for what the queue does without wide buckets
NO_WIDE = ("compressed-groups", "layered")


def _groups_of(graph, q):
    """group index of every undirected edge {a, b}, computed independently of the kernels."""
    if graph.dense:
        W = graph.W
        pairs = [(a, b) for a in range(graph.n) for b in range(a + 1, graph.n)]
        w = np.array([W[a, b] for a, b in pairs])
    else:
        A = sp.csr_matrix((graph.data, graph.indices, graph.indptr), shape=(graph.n, graph.n)).tocoo()
        mask = A.row < A.col
        pairs = list(zip(A.row[mask].tolist(), A.col[mask].tolist()))
        w = A.data[mask]
    keys = np.floor(-w / q.layout.s).astype(np.int64)
    if q.layout.direct:  # group = key - kmin, no key is stored
        assert q.keys.key.shape[0] == 0
        assert keys.min() >= q.layout.kmin and keys.max() < q.layout.kmin + q.layout.n_groups
        return {frozenset(e): int(k - q.layout.kmin) for e, k in zip(pairs, keys)}
    # compressed: the occupied aligned buckets of 2**bucket_shift keys, in order; a
    # group is (rank of its bucket) << bucket_shift | (its key's offset in the bucket)
    shift = int(q.layout.bucket_shift)
    base = q.keys.key
    assert np.all(np.diff(base) > 0) and np.all((base - q.layout.kmin) % (1 << shift) == 0)
    assert q.layout.n_groups == base.shape[0] << shift == q.layout.n_buckets << shift
    ranks = np.searchsorted(base, keys, side="right") - 1
    offsets = keys - base[ranks]
    assert np.all(offsets >= 0) and np.all(offsets < 1 << shift)
    assert set(ranks.tolist()) == set(range(base.shape[0]))  # no empty bucket
    return {frozenset(e): int(r << shift | o) for e, r, o in zip(pairs, ranks, offsets)}


# the gq_* kernels are jit-only (core.jit_only): Python reaches them through these shims
@njit
def _join_dense(q, W, v, visited):
    gq_join(q.layout, q.cut, v, visited)
    gq_update(q, W[v], v, visited, v * W.shape[0])


@njit
def _join_csr(q, indptr, indices, data, v, visited):
    gq_join(q.layout, q.cut, v, visited)
    gq_update_csr(q, indptr, indices, data, v, visited)


@njit
def _count_and_top(q):
    lowest = q.store.materialized[0] if q.layout.lazy_counts else 0
    return gq_count(q.counts, ROOT, 0), gq_top(q.layout, q.counts, lowest)


@njit
def _materialize(q, W, b):
    gq_materialize(q.layout, q.keys, q.counts, q.store, q.cut, W, b)


@njit
def _select(q, rank):
    return gq_select(q.layout, q.counts, ROOT, 0, rank)


def _update(q, graph, v, visited):
    if graph.dense:
        _join_dense(q, graph.W, v, visited)
    else:
        _join_csr(q, graph.indptr, graph.indices, graph.data, v, visited)


def _decode(graph, code):
    if graph.dense:
        return code_ends(int(code))
    b = int(graph.indices[code])
    a = int(np.searchsorted(graph.indptr, code, side="right") - 1)
    return a, b


def _connected_order(graph, rng):
    """A random order in which every vertex (after the first) has a visited neighbour."""
    n = graph.n
    if graph.dense:
        return rng.permutation(n)
    order = [int(rng.integers(n))]
    seen = {order[0]}
    while len(order) < n:
        frontier = sorted({int(u) for v in order for u in graph.indices[graph.indptr[v]:graph.indptr[v + 1]]} - seen)
        if not frontier:
            frontier = sorted(set(range(n)) - seen)
        u = frontier[int(rng.integers(len(frontier)))]
        order.append(u)
        seen.add(u)
    return np.array(order)


def _dense_or_empty(graph):
    return graph.W if graph.dense else np.zeros((0, 0))


@njit
def _many_takes(q, W, b, lo, hi, count, visited, rng, reps):
    out = np.empty(reps, dtype=np.int64)
    if b < q.store.materialized[0]:
        gq_materialize(q.layout, q.keys, q.counts, q.store, q.cut, W, b)
    for i in range(reps):
        out[i] = gq_take(q.layout, q.store, W, b, lo, hi, count, q.counts.bucket[b], visited, rng)[1]
    return out


@njit
def _many_cut_takes(q, W, pmax, rng, reps):
    out = np.empty(reps, dtype=np.int64)
    for i in range(reps):
        # acceptance >= 1 / (the cut's size): its tries bound
        out[i] = gq_take_cut(q.layout, q.keys, q.cut, W, 0, pmax, 64 * (q.counts.total[0] + 1), rng)[1]
    return out


# layouts sized lazily, whose top buckets the validation pass can size (a TopWindow);
# and a compressed one, which the window does not size but whose first tile alone
# spans enough noise-wide buckets to make the window's default rule go wide
WINDOWED = ("direct-wide-buckets", "direct-fine-step", "layered", "wide", "compressed-groups")


@pytest.mark.parametrize("layout,window", [(k, False) for k in LAYOUTS] + [(k, True) for k in WINDOWED])
def test_queue_matches_a_naive_cut(layout, window, monkeypatch):
    build, s, r, bucket_width = LAYOUTS[layout]
    if layout in NO_WIDE:
        # wide buckets off: gq_build and top_window (Python functions) read the rule's
        # one home at each call; the window's kernels take it from its state
        monkeypatch.setattr(topwin, "WIDE_MIN_FINE", 1 << 62)
    if layout == "layered":
        # its ~780 occupied buckets get the block layer (read by gq_build at each call)
        monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_BUCKETS", 256)
        monkeypatch.setattr(cutqueue_build, "_LAYER2_MIN_LAZY", 256)
    rng = np.random.default_rng(7)
    W = build(rng)
    if window:
        W = W + 0.37  # keys off the fine bins' alignment: shared end bins
    win = topwin.top_window(-1.0, s, r, bucket_width) if window else None
    graph = as_graph(W, window=win)
    q = gq_build(graph, -1.0, s, r, bucket_width, win)
    if window:  # the top buckets are sized at build, from the pass that validated W
        # (direct: the window's 10 noise-wide buckets; compressed: those of them that
        # exist, at least the top one, the rest sized lazily like a direct queue's)
        sized_top = cutqueue_materialize._SIZE_MIN if q.layout.direct else 1
        assert win.state[topwin.WIN_COMPLETE] == 1 and int(q.store.sized[0]) <= q.layout.n_buckets - sized_top
        # the window follows the queue's wide rule: wide bins exactly when the queue
        # is wide (compressed-groups would have wide bins under the default rule)
        wide_bins = int(win.state[topwin.WIN_BINS]) == topwin._WINDOW_BINS_WIDE
        assert wide_bins == q.layout.wide
        assert int(win.state[topwin.WIN_BINS]) == (topwin._WINDOW_BINS_WIDE if wide_bins else topwin.WINDOW_BINS)
    assert q.layout.wide == (layout == "wide")
    if layout == "layered":
        assert q.layout.layered
    if layout == "compressed-groups":  # a compressed bucket never fails the span test
        assert not q.layout.direct and not q.layout.group_counts
    if layout == "layered" and not window:
        assert not q.layout.direct  # a dense range of 100,000 buckets for 780 edges
    if layout == "direct-fine-step":  # buckets, not keys, decide direct addressing
        lay = q.layout
        assert lay.direct and not lay.group_counts and lay.n_groups > 2**20
        assert lay.n_buckets <= 512 and q.keys.key.shape[0] == 0
    group = _groups_of(graph, q)
    visited = np.zeros(graph.n, dtype=np.bool_)
    active = set()
    B = q.layout.n_buckets
    width = 1 << int(q.layout.bucket_shift)
    edges_per_bucket = np.bincount([g // width for g in group.values()], minlength=B)
    edge_ends = np.array([sorted(e) for e in group])  # the edges, in group's order
    edge_bucket = np.array([g // width for g in group.values()])
    bound = edges_per_bucket + 1  # a sized bucket's capacity at most
    if window and q.layout.direct:
        # a window-sized bucket (direct keys: group g has key kmin + g) may own the
        # edges of the fine bins it shares at its ends
        fsh, kmin = int(win.state[topwin.WIN_FINE_SHIFT]), int(q.layout.kmin)
        fine = np.sort([(g + kmin) >> fsh for g in group.values()])
        first = kmin + np.arange(B) * width
        shared = (np.searchsorted(fine, (first + width - 1) >> fsh, side="right")
                  - np.searchsorted(fine, first >> fsh, side="left"))
        bound = np.maximum(bound, 1 + shared)
    gen = np.random.default_rng(0)
    for v in _connected_order(graph, rng)[:-1]:
        _update(q, graph, v, visited)
        for e in [e for e in active if v in e]:
            active.discard(e)
        nbrs = range(graph.n) if graph.dense else graph.indices[graph.indptr[v]:graph.indptr[v + 1]]
        active |= {frozenset((v, int(u))) for u in nbrs if u != v and not visited[u]}

        per_bucket = np.zeros(B, dtype=np.int64)
        for e in active:
            per_bucket[group[e] // width] += 1
        if q.layout.lazy_counts and q.store.materialized[0] > 0 and rng.random() < 0.3:
            # count more buckets now and then (a pass over the cut, as the sampler does)
            _materialize(q, graph.W, int(q.store.materialized[0]) - 1)
        count, p = _count_and_top(q)
        assert count == len(active)
        # lazy counts: exact from the lowest materialized bucket up, none below
        lowest = int(q.store.materialized[0]) if q.layout.lazy_counts else 0
        assert q.layout.lazy_counts == (layout in ("direct-wide-buckets", "wide", "direct-fine-step",
                                                   "compressed-groups", "layered"))
        assert np.array_equal(q.counts.bucket[lowest:], per_bucket[lowest:])
        assert not q.counts.bucket[:lowest].any()
        if q.layout.layered:  # each block counter sums its 2**block_shift counted buckets
            counted = per_bucket.copy()
            counted[:lowest] = 0
            per_block = np.add.reduceat(counted, np.arange(0, B, 1 << int(q.layout.block_shift)))
            # lazy counts materialize whole blocks: no block is partly counted
            assert lowest % (1 << int(q.layout.block_shift)) == 0 or lowest == B
            assert q.layout.n_blocks == per_block.shape[0]
            assert np.array_equal(q.counts.block, per_block)
        else:
            assert q.layout.n_blocks == 0 and q.counts.block.shape[0] == 0
        if q.layout.group_counts:
            per_group = np.bincount([group[e] for e in active], minlength=int(q.layout.n_groups))
            assert np.array_equal(q.counts.group, per_group)
        if not active:
            assert p == -1
            continue
        top_group = max(group[e] for e in active)
        if p == -2:  # every counted bucket is empty: count down to the top one
            assert lowest > 0 and top_group // width < lowest
            while p == -2:
                _materialize(q, graph.W, int(q.store.materialized[0]) - 1)
                count, p = _count_and_top(q)
            lowest = int(q.store.materialized[0])
            assert np.array_equal(q.counts.bucket[lowest:], per_bucket[lowest:])
        assert p >= top_group and p // width == top_group // width
        if q.layout.group_counts:
            assert p == top_group
        # rank r falls in the bucket where the prefix count first exceeds r (a rank
        # among all buckets needs them all counted)
        if lowest > 0 and rng.random() < 0.5:
            _materialize(q, graph.W, 0)
            lowest = 0
            assert np.array_equal(q.counts.bucket, per_bucket)
        prefix = np.cumsum(per_bucket)
        for rank in gen.integers(0, len(active), size=5 if lowest == 0 else 0):
            b, within = _select(q, int(rank))
            assert b == np.searchsorted(prefix, rank, side="right")
            assert within == rank - (prefix[b - 1] if b else 0)
        # a pick is an active edge of the requested bucket and group range
        b = top_group // width
        lo = top_group - b * width
        for hi in (lo, width - 1):
            count = sum(1 for e in active if group[e] // width == b and lo <= group[e] - b * width <= hi)
            for code in _many_takes(q, _dense_or_empty(graph), b, lo, hi, count, visited, gen, 3):
                e = frozenset(_decode(graph, code))
                assert e in active and group[e] // width == b and lo <= group[e] - b * width <= hi
        # a materialized bucket holds every active edge of its own (plus dead slots): one
        # with no slot holds none (a check over every bucket at once: the wide layout has
        # 16,384), the others are compared set by set
        mat = int(q.store.materialized[0])
        filled = mat + np.flatnonzero(q.store.fill[mat:])
        slotless = np.ones(B - mat, dtype=bool)
        slotless[filled - mat] = False
        assert not per_bucket[mat:][slotless].any()
        for bb in filled.tolist():
            slots = slot_code(q.store.slots[q.store.start[bb]:q.store.start[bb] + q.store.fill[bb]])
            alive = {frozenset(_decode(graph, c)) for c in slots.tolist()} & active
            assert alive == {e for e in active if group[e] // width == bb}
            if q.layout.lazy_counts and not q.layout.wide:
                # SlotStore.top, the sampler's bound of a counted bucket's keys, is at
                # least every active edge's group offset (and within the bucket)
                offs = [group[e] - bb * width for e in active if group[e] // width == bb]
                assert not offs or max(offs) <= q.store.top[bb] < width
        if graph.dense:
            for code in _many_cut_takes(q, graph.W, top_group, gen, 3):
                assert frozenset(_decode(graph, code)) in active
        # the sized buckets (every materialized one) own disjoint regions of the pool,
        # at most their edges plus the spare slot, and room for every edge still to
        # join the cut (both ends unvisited) past their fill: no append overflows
        st = q.store
        lo_sized = int(st.sized[0])
        assert lo_sized <= int(st.materialized[0])
        to_join = np.bincount(edge_bucket[~visited[edge_ends[:, 0]] & ~visited[edge_ends[:, 1]]],
                              minlength=B)
        assert np.all(st.cap[lo_sized:] <= bound[lo_sized:])
        assert np.all(st.fill[lo_sized:] + to_join[lo_sized:] < st.cap[lo_sized:])
        assert not st.cap[:lo_sized].any()
        order = np.argsort(st.start[lo_sized:], kind="stable")
        starts, ends = st.start[lo_sized:][order], (st.start + st.cap)[lo_sized:][order]
        assert np.all(ends[:-1] <= starts[1:])  # disjoint
        assert (not ends.size or ends[-1] <= st.sized[1]) and st.sized[1] <= st.slots.shape[0]


def test_buckets_sized_late_get_room_for_the_edges_left():
    # a first materialization after most vertices joined sizes every bucket from the
    # rows of the unvisited vertices: each region holds exactly the edges with an
    # unvisited end (plus the spare slot), and the pass fills them with the cut
    rng = np.random.default_rng(11)
    graph = as_graph(_sym(rng, 40))
    q = gq_build(graph, -1.0, 2.0 ** -21, 2.0 ** -12, 1.0)
    B, width = int(q.layout.n_buckets), 1 << int(q.layout.bucket_shift)
    assert q.layout.lazy_counts and int(q.store.sized[0]) == B > 100
    group = _groups_of(graph, q)
    visited = np.zeros(graph.n, dtype=np.bool_)
    for v in rng.permutation(graph.n)[:30]:  # 10 of 40 left: fewer than half
        _update(q, graph, v, visited)
    _materialize(q, graph.W, 0)
    st = q.store
    assert int(st.sized[0]) == 0 and int(st.materialized[0]) == 0
    left = [(e, g) for e, g in group.items() if not all(visited[list(e)])]
    assert np.array_equal(st.cap, np.bincount([g // width for _, g in left], minlength=B) + 1)
    active = {e for e, _ in left if any(visited[list(e)])}
    held = set()
    for b in range(B):
        codes = slot_code(st.slots[st.start[b]:st.start[b] + st.fill[b]])
        held |= {frozenset(_decode(graph, c)) for c in codes.tolist()}
    assert held == active


@pytest.mark.parametrize("crowded", [False, True])
def test_wide_buckets_only_where_no_bucket_crowds(crowded, monkeypatch):
    # weights spanning 2**20 keys, 52,429 buckets of bucket_width noise units: wide buckets,
    # unless most edges share one wide bucket (a selection would split most of the cut)
    rng = np.random.default_rng(3)
    n = 400
    W = _sym(rng, n, 2.0 ** 20)
    if crowded:  # all but a few edges within one key of 2**19
        A = np.triu(np.full((n, n), 2.0 ** 19) + rng.random((n, n)), 1)
        A[0, 1:40] = rng.random(39) * 2.0 ** 20
        W = A + A.T
    # the crowding test reads a sample of rows: the same decision from 8 of them
    monkeypatch.setattr(cutqueue_build, "_CROWD_SAMPLE", 8 * n)
    monkeypatch.setattr(cutqueue_build, "_CROWD_ROWS", 8)
    q = gq_build(as_graph(W), -1.0, 1.0, 0.05, 1.0)
    assert q.layout.wide == (not crowded)
    if crowded:  # the occupied noise-wide buckets instead, compressed: few of them
        assert not q.layout.direct and q.layout.n_buckets < 200
    else:
        assert q.layout.n_buckets == 16384


def test_wide_queue_sizes_its_walks_in_one_pass():
    # weights x 1000 (wide buckets): the first sizing covers the top buckets holding
    # ~1/32 of the sampled edges, deep enough for every walk of a uniform release
    # (they reach the MST's heaviest edges, ~log(n)/n of the range), so the release
    # reads W for sizing once (the top 8 buckets took a second pass late)
    from fastpamst_nb import privacy
    from fastpamst_nb.prim import prim_dense_private
    from fastpamst_nb.sampler import N_STATS

    n = 600
    W = _sym(np.random.default_rng(5), n, 1000.0)
    s = privacy.default_discretization(1e-5)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, n, s)
    q = gq_build(as_graph(W), -1.0, s, r, 2.0)
    lay = q.layout
    assert lay.wide and lay.n_buckets > 1000
    # about 1/32 of the edges, estimated from a sample: well above the 8 of other layouts
    assert 8 < lay.min_sized < lay.n_buckets // 16
    visited = np.zeros(n, dtype=np.bool_)
    edges = np.empty((n - 1, 2), dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    rng = np.random.default_rng(0)
    v, sized = 0, []
    for step in range(n - 1):
        v = prim_dense_private(q, W, visited, edges, step, 1, v, r, 0.03, 2.0, rng, stats)
        sized.append(int(q.store.sized[0]))
    assert len(set(sized)) == 1 and sized[0] <= lay.n_buckets - lay.min_sized
    assert int(q.store.materialized[0]) >= sized[0]


@pytest.mark.parametrize("restrict", [False, True])
def test_picks_are_uniform_over_active_members(restrict):
    # half of a bucket's slots dead, two groups in it: picks must still be uniform
    rng = np.random.default_rng(3)
    n = 24
    W = _sym(rng, n, 4, True)
    graph = as_graph(W)
    q = gq_build(graph, -1.0, 1.0, 1e-3, 10.0)  # one wide bucket holds every group
    assert q.layout.n_buckets == 1
    visited = np.zeros(n, dtype=np.bool_)
    for v in range(n // 2):
        _join_dense(q, W, v, visited)
        if v == 0:
            # materialize the bucket now, so that later joins leave dead slots in it
            top = (1 << int(q.layout.bucket_shift)) - 1
            _many_takes(q, W, 0, 0, top, q.counts.total[0], visited, np.random.default_rng(0), 1)
    assert q.store.fill[0] > q.counts.total[0]  # dead slots are present when the picks start
    active = [(a, b) for a in range(n) for b in range(n) if visited[a] and not visited[b]]
    keys = np.array([int(math.floor(-W[a, b])) for a, b in active])
    top = int(np.max(keys - q.layout.kmin))
    if restrict:
        members = [e for e, k in zip(active, keys) if k - q.layout.kmin == top]
        lo = hi = top
    else:
        members = active
        lo, hi = 0, (1 << int(q.layout.bucket_shift)) - 1
    runs = 20_000
    codes = _many_takes(q, graph.W, 0, lo, hi, len(members), visited, np.random.default_rng(1), runs)
    counts = {}
    for c in codes.tolist():
        e = code_ends(c)
        counts[e] = counts.get(e, 0) + 1
    expected = {e: 1.0 / len(members) for e in members}
    pvalue, _, _ = naive.chisquare_pvalue(counts, expected, runs)
    assert pvalue >= 1e-4


@pytest.mark.parametrize("seed", range(8))
def test_joined_window_forks_count_like_one_window(seed):
    # the validation threads each count their tile rows in a fork of the window
    # (window.window_fork); joined (window.window_join) they must hold exactly what one
    # window fed every batch holds, over its whole range. The batches wander over
    # ~3000 fine bins, so each window slides by less than its ring as often as by more
    # (stale slots above a part's top must not be read)
    rng = np.random.default_rng(seed)
    s = 2.0 ** -10
    one = topwin.top_window(-1.0, s, 2.0 ** -6, 1.0)
    main = topwin.top_window(-1.0, s, 2.0 ** -6, 1.0)
    fsh = int(one.state[topwin.WIN_FINE_SHIFT])

    def batch():
        centre = int(rng.integers(0, 3000))  # in fine bins
        keys = centre * 2 ** fsh + rng.integers(-200 * 2 ** fsh, 200 * 2 ** fsh, int(rng.integers(1, 300)))
        return -(keys + 0.5) * s  # scores -w: keys floor(-w / s)

    first = batch()
    for w in (one, main):
        topwin.window_add(w.ring, w.state, w.scale, first, first.size)
    forks = [topwin.window_fork(main) for _ in range(int(rng.integers(1, 4)))]
    parts = [main, *forks]
    for _ in range(40):
        b = batch()
        topwin.window_add(one.ring, one.state, one.scale, b, b.size)
        w = parts[int(rng.integers(len(parts)))]
        topwin.window_add(w.ring, w.state, w.scale, b, b.size)
    topwin.window_join(main, forks)
    top, length = int(one.state[topwin.WIN_TOP]), int(one.state[topwin.WIN_BINS])
    assert (int(main.state[topwin.WIN_TOP]), int(main.state[topwin.WIN_SEEN])) == (top, 1)
    mask = topwin._WINDOW_RING - 1
    f = np.arange(top - length + 1, top + 1)
    assert np.array_equal(main.ring[f & mask], one.ring[f & mask])
    assert one.ring[f & mask].sum() > 0


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("case", ["uniform", "climbing", "huge", "maximum", "float32", "wide",
                                  "wide-later", "crowded-top"])
def test_top_window_counts_the_top_bins_exactly(case, workers):
    # the validation pass's window: every fine bin in its final range counted exactly
    # (the top sliding by more than the ring included), whatever the scan order; with
    # bins of half a wide bucket where the first tile's keys would make wide buckets.
    # With 3 threads (forced: the default keeps a small matrix on one) the tile rows
    # after the first are split between forks of the window, joined at the end
    rng = np.random.default_rng(5)
    n, sgn, s, r = 150 if workers == 1 else 400, -1.0, 2.0 ** -10, 2.0 ** -6
    W = _sym(rng, n)
    if case in ("wide", "wide-later"):  # 2**22 keys: 65,536 noise-wide buckets, 16,384 wide
        W = W * 2 ** 12
    if case == "wide-later":  # the first tile's keys span 1/8 of the range: not wide there
        W[:64, :64] = W[:64, :64] / 8
    if case == "crowded-top":  # a wide range, but most keys at its top: fine bins kept
        W = W / 2 ** 20
        W[0, 1] = W[1, 0] = 2.0 ** 12
    if case == "climbing":  # scores rise along the scan: the top jumps past the ring
        i, j = np.indices((n, n))
        W = -(np.minimum(i, j) * 50.0 + W) * s * 2 ** 8
        W = np.triu(W, 1) + np.triu(W, 1).T
    if case == "huge":  # |w / s| near 2**52
        W = W * 1e12 + 2.0 ** 40
        s = 2.0 ** -2
    if case == "maximum":
        sgn = 1.0
    if case == "float32":
        W = W.astype(np.float32)
    win = topwin.top_window(sgn, s, r, 1.0)
    assert graph._scan_dense(W, win, workers=workers)[0] == 0
    top, fsh, seen, complete, length = (int(win.state[i]) for i in (
        topwin.WIN_TOP, topwin.WIN_FINE_SHIFT, topwin.WIN_SEEN, topwin.WIN_COMPLETE, topwin.WIN_BINS))
    noise_fine = bucket_shift_for(2 ** 62, r, 1.0) - 3
    keys = np.floor(sgn * W[np.triu_indices(n, 1)].astype(np.float64) / s).astype(np.int64)
    # the first tile's keys decide: bins of half a wide bucket of their range (16,384
    # buckets of 2**w keys) when they span more than 16,384 noise-wide buckets
    first = np.floor(sgn * W[:64, :64][np.triu_indices(64, 1)].astype(np.float64) / s).astype(np.int64)
    span = int(first.max() - first.min())
    wide = (span >> (noise_fine + 3)) + 1 > 2 ** 14
    if wide:
        w = next(w for w in range(63) if (span >> w) + 1 <= 2 ** 14)
        inside = np.count_nonzero((first >> (w - 1)) > (first.max() >> (w - 1)) - topwin._WINDOW_BINS_WIDE)
        wide = first.size < topwin._WINDOW_FULL_TILE or 8 * inside <= first.size
    if wide:
        assert (fsh, length) == (w - 1, topwin._WINDOW_BINS_WIDE)
        assert case in ("wide", "huge")
    else:
        assert (fsh, length) == (noise_fine, topwin.WINDOW_BINS)
        assert case not in ("wide", "huge")
    if case.startswith("wide"):
        q = gq_build(as_graph(W), sgn, s, r, 1.0, win)
        assert q.layout.wide
        if case == "wide":  # the top wide buckets are sized at build
            assert q.store.sized[0] <= q.layout.n_buckets - 8
    assert seen == complete == 1
    bins = keys >> fsh
    assert top == bins.max()
    for f in range(top - length + 1, top + 1):
        assert win.ring[f & (topwin._WINDOW_RING - 1)] == np.count_nonzero(bins == f), f


@njit
def _range_counts(q, W, order, visited, ra):
    """The counted range's count as gq_update keeps it and as gq_count_range counts the
    cut, after each vertex of ``order`` joins."""
    q.store.top_range[0] = ra
    q.store.top_range[1] = 0
    kept = np.empty(order.shape[0], dtype=np.int64)
    passed = np.empty(order.shape[0], dtype=np.int64)
    for i in range(order.shape[0]):
        _join_dense(q, W, order[i], visited)
        kept[i] = q.store.top_range[1]
        passed[i] = gq_count_range(q.layout, q.keys, q.cut, W, visited, ra)
    return kept, passed


def test_counted_range_counts_the_cut_edges_from_its_base_key_up():
    # the sampler's counted range (nothing materialized): gq_update's compare per entry
    # and gq_count_range's pass against a count of the active cut edges whose key
    # (keys.discretize) is >= the base key of bucket ra, at every ra. s = 2: single-key
    # buckets from -2 to 2, the base key 0 among them, where a negative quotient that
    # underflows to -0.0 (w = 5e-324: key -1) must stay out and w = -5e-324, 0.0, -0.0
    # (key 0) in; the rest sets every key
    from fastpamst_nb.keys import discretize
    values = np.array([-4.0, -2.0, -1.5, -0.0, 0.0, 5e-324, -5e-324, 1.0, 2.5, 4.0])
    n = 24
    rng = np.random.default_rng(39)
    W = np.triu(rng.choice(values, size=(n, n)), 1)
    W = W + W.T
    q0 = gq_build(as_graph(W), -1.0, 2.0, 3.0, 2.0)
    lay = q0.layout
    assert lay.dense and lay.lazy_counts and lay.direct and lay.bucket_shift == 0
    assert lay.kmin == -2 and lay.n_buckets == 5  # keys -2 .. 2
    key = np.array([[discretize(W[a, b], -1.0, 2.0, 0.5) for b in range(n)] for a in range(n)])
    order = rng.permutation(n)[:-1]
    for ra in range(lay.n_buckets):
        q = gq_build(as_graph(W), -1.0, 2.0, 3.0, 2.0)
        visited = np.zeros(n, dtype=np.bool_)
        kept, passed = _range_counts(q, W, order, visited, ra)
        seen = np.zeros(n, dtype=bool)
        for i, v in enumerate(order):
            seen[v] = True
            want = int(np.sum(key[np.ix_(seen, ~seen)] >= lay.kmin + ra))
            assert kept[i] == passed[i] == want, (ra, i)
        assert q.store.materialized[0] == lay.n_buckets and not q.store.fill.any()  # nothing written


def test_queue_memory_counts_the_validations_listing_buffers():
    # the validation's listing buffers (one per scan part, window.listed_capacity int64
    # keys) are allocated before gq_build's check: the dense figure counts them for
    # every matrix the scan may list in, whatever its weights (issue 25), none below
    from fastpamst_nb import cutqueue_build, threads, window as topwin

    for n in (1000, 1024, 3000):
        m = n * (n - 1) // 2
        buffers = 8 * topwin.listed_capacity(n) * threads.thread_count() if n * n >= topwin.ISLANDS_MIN_ENTRIES else 0
        assert cutqueue_build.listing_bytes(n) == buffers
        assert cutqueue_build.queue_memory_bytes(n, m, True) >= 8 * m + buffers
    assert cutqueue_build.listing_bytes(1000) == 0 and cutqueue_build.listing_bytes(1024) > 0
