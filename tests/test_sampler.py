"""The selection kernel alone: one grouped, discretized RNM on a frozen cut, and
the two samplers it is built from (binomial counts and the maximum of c noises).

Random cuts of small dense graphs (random group structures: ties, gaps, far
groups) are built once; ``rnm_select`` is then run 20,000 times on the same cut
and the selected edges are compared with the brute-force law of
argmax(s * floor(-w / s) + exponential noise) (naive.rnm_exp_probs) by a chi-square
test, failing at p < 1e-4. (noise="gumbel" does not use this kernel: test_gumbel.py.)
"""

import math

import numpy as np
import pytest
import scipy.stats
from numba import njit

import naive
from fastpamst_nb import bench
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA
from fastpamst_nb.cutqueue import code_ends, code_pack, gq_join, gq_update, gq_update_csr
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.graph import as_graph
from fastpamst_nb.prim import prim_csr_private
from fastpamst_nb.privacy import default_discretization
from fastpamst_nb.sampler import (
    N_STATS, ST_BOTTOM_CALLS, ST_NODES, ST_RANGE_NODES, _cut_members, _seen_add, _seen_set, binomial, max_noise,
    rnm_select,
)

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

RUNS = 20_000
STRUCTURES = ["ties", "gaps", "spread", "wide", "wide-top-heavy", "wide-coarse-sub-buckets",
              "top-heavy"]


@njit
def _select_many(q, W, visited, r, theta, bucket_width, rng, runs):
    stats = np.zeros(N_STATS, dtype=np.int64)
    out = np.empty(runs, dtype=np.int64)
    for i in range(runs):
        out[i] = rnm_select(q, W, visited, r, theta, bucket_width, rng, stats)
    return out, stats


def _assert_selection_law(codes, expected):
    """Chi-square of the selected edges (codes) against ``expected`` ({(a, b): p}): RUNS
    selections, over at least 3 edges, rejected at p < 1e-4."""
    counts = {}
    for c in codes.tolist():
        e = code_ends(c)
        counts[e] = counts.get(e, 0) + 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert dof >= 2, "the configuration must spread the selection over several edges"
    assert pvalue >= 1e-4, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"


@njit
def _join_all(q, W, order, visited):
    for v in order:
        gq_join(q.layout, q.cut, v, visited)
        gq_update(q, W[v], v, visited, v * W.shape[0])


def _cut(seed, n, structure):
    """A dense symmetric W with a chosen group structure and a random visited set."""
    rng = np.random.default_rng(seed)
    if structure == "ties":
        W = rng.integers(0, 3, size=(n, n)).astype(float)
    elif structure == "gaps":
        W = rng.choice([0.0, 0.5, 4.0, 9.0, 30.0], size=(n, n))
    elif structure == "spread":  # many distinct groups, some far below the top
        W = rng.random((n, n)) * 12.0
    else:  # wide: a near cluster and far edges 1e5 keys down, so 50,000 noise-wide
        # buckets become wide ones (8 keys, four sub-buckets of 2), split by the sampler;
        # the far key puts key 0 at the top of its wide bucket, keys down to -7 in it
        W = rng.choice([0.0, 0.5, 1.5, 3.0, 6.0, 7.5, 100007.0], size=(n, n))
    if structure == "wide-coarse-sub-buckets":  # keys spanning 2**40: 2**26-key wide
        # buckets in 2**23 sub-buckets of 8 keys (10 noise units), keys 0..-7 in one of them
        W = rng.choice([0.0, 0.5, 1.5, 3.0, 6.0, 7.5, 2.0**40 - 9], size=(n, n))
    if structure == "top-heavy":  # all but under 1/n of the cut in the top group (lazy
        # counts): a bottom draw after it (theta = inf) ranks among every bucket, so all
        # get counted first (with more below the top group, it would draw from the cut)
        W = rng.choice([0.0] * 30 + [1.5, 3.0], size=(n, n))
    if structure == "wide-top-heavy":  # most of the cut in the top sub-bucket: a bottom
        # draw after it (theta = inf) picks by rank, partly inside the open wide bucket
        W = rng.choice([0.0, 0.0, 0.0, 0.0, 0.0, 1.5, 3.0, 100007.0], size=(n, n))
    W = np.triu(W, 1)
    W = W + W.T
    visited_order = rng.permutation(n)[: max(2, n // 2)]
    return W, visited_order


@pytest.mark.parametrize("structure", STRUCTURES)
# the last two knob pairs resolve every group, or never stop early: too slow as Python
@pytest.mark.parametrize("theta, bucket_width", [(0.03, 1.0), (math.inf, 0.0),
                                                 pytest.param(0.0, -1.0, marks=pytest.mark.slow_python),
                                                 pytest.param(1.0, math.inf, marks=pytest.mark.slow_python)])
def test_one_selection_matches_brute_force_rnm(structure, theta, bucket_width):
    n, s, lam = 9, 1.0, 0.8
    W, order = _cut(STRUCTURES.index(structure), n, structure)
    graph = as_graph(W)
    r = lam * s
    q = gq_build(graph, -1.0, s, r, bucket_width)
    if structure.startswith("wide"):  # what the case is for (bucket_width < 0: one group per bucket, never wide)
        if bucket_width < 0 or bucket_width < math.inf:  # bucket_width = inf: wide only past 2**20-key buckets
            assert q.layout.wide == (bucket_width >= 0), bucket_width
        if structure == "wide-coarse-sub-buckets" and 0 <= bucket_width <= 1:
            assert (q.layout.bucket_shift, q.layout.sub_shift) == (26, 3)
    visited = np.zeros(n, dtype=np.bool_)
    _join_all(q, W, np.asarray(order, dtype=np.int64), visited)
    cut = [(a, b) for a in range(n) for b in range(n) if visited[a] and not visited[b]]
    weights = np.array([W[a, b] for a, b in cut])
    scores = naive.discretized_scores(weights, s)
    probs = naive.rnm_exp_probs(scores, lam)
    expected = dict(zip(cut, probs))
    codes, stats = _select_many(q, W, visited, r, theta, bucket_width, np.random.default_rng(5), RUNS)
    _assert_selection_law(codes, expected)
    if structure == "top-heavy" and theta == math.inf:  # what the case is for
        assert q.layout.lazy_counts and q.store.materialized[0] == 0
    if structure == "spread" and theta < 1.0 and bucket_width == 1.0:
        # the top buckets are the counted range (counted, never written: its node drawn
        # from the cut in a group range), and the walks that reach the buckets not
        # counted below it stop there by the bottom trick (sampler._UNCOUNTED_THETA)
        # instead of counting them: both exact
        B = q.layout.n_buckets
        assert q.layout.lazy_counts and q.store.materialized[0] == B and 0 < q.store.top_range[0] < B
        assert stats[ST_RANGE_NODES] == RUNS and stats[ST_BOTTOM_CALLS] > 0


@njit
def _binomials(n, p, rng, runs):
    out = np.empty(runs, dtype=np.int64)
    for i in range(runs):
        out[i] = binomial(n, p, rng)
    return out


@pytest.mark.parametrize("n, p", [(10, 0.3), (7, 0.8), (1000, 0.002), (10**9, 3e-9), (50, 0.5)])
def test_binomial_matches_the_exact_pmf(n, p):
    draws = _binomials(n, p, np.random.default_rng(11), RUNS)
    ks, counts = np.unique(draws, return_counts=True)
    support = range(0, min(n, 60) + 1)
    expected = {k: float(scipy.stats.binom.pmf(k, n, p)) for k in support}
    expected[-1] = max(0.0, 1.0 - sum(expected.values()))  # the tail beyond the listed support
    observed = {int(k) if k in expected else -1: int(c) for k, c in zip(ks, counts)}
    pvalue, _, dof = naive.chisquare_pvalue(observed, expected, RUNS)
    assert dof >= 1 and pvalue >= 1e-4


@njit
def _max_noises(c, r, rng, runs):
    out = np.empty(runs)
    for i in range(runs):
        out[i] = max_noise(c, r, rng)
    return out


@pytest.mark.parametrize("c", [1, 7, 10**6])
def test_max_noise_has_the_law_of_a_maximum(c):
    # binned at the exact quantiles of the max of c noises: each of 20 bins has mass 1/20
    r = 0.7
    q = (np.arange(1, 20) / 20.0) ** (1.0 / c)  # CDF of one noise at the max's quantiles
    edges = -np.log(1.0 - q) / r
    draws = _max_noises(c, r, np.random.default_rng(c), RUNS)
    observed = dict(zip(*np.unique(np.searchsorted(edges, draws), return_counts=True)))
    pvalue, _, _ = naive.chisquare_pvalue({int(k): int(v) for k, v in observed.items()},
                                          {k: 0.05 for k in range(20)}, RUNS)
    assert pvalue >= 1e-4


# ---------------------------------------------------------------------------
# the set of codes already drawn (distinct candidates of one selection)
# ---------------------------------------------------------------------------

@njit
def _seen_set_shim(k):
    return _seen_set(k)


@njit
def _seen_add_shim(seen, code):
    return _seen_add(seen, code)


def test_seen_set_is_a_set_of_codes():
    rng = np.random.default_rng(0)
    # dense codes a << 20 | b up to 2**40 - 1, clustered codes and strided ones (which
    # collide under a plain modulo), each inserted twice
    codes = np.unique(np.concatenate([
        rng.integers(0, 2**40, 300), np.arange(2**40 - 50, 2**40), np.arange(0, 5000, 1024),
        (np.arange(200) << 20) | 7]))
    seen = _seen_set_shim(len(codes))
    assert seen.shape[0] >= 2 * len(codes) and seen.shape[0] & (seen.shape[0] - 1) == 0
    order = rng.permutation(codes)
    assert all(_seen_add_shim(seen, int(c)) for c in order)          # new: accepted
    assert not any(_seen_add_shim(seen, int(c)) for c in codes)      # again: refused
    assert sorted(seen[seen >= 0].tolist()) == sorted(codes.tolist())
    assert _seen_set_shim(0).shape[0] == 16 and _seen_set_shim(9).shape[0] == 32


@njit
def _cut_members_shim(q, W, k, pmax, count, skip, rng):
    seen = _seen_set(k + 1)
    if skip >= 0:
        _seen_add(seen, skip)
    gs = np.empty(k, dtype=np.int64)
    codes = np.empty(k, dtype=np.int64)
    _cut_members(q.layout, q.keys, q.cut, W, k, 0, pmax, count, seen, rng, gs, codes)
    return gs, codes


def test_batched_cut_members_are_every_qualifying_edge_once():
    # asked for all the cut edges of groups <= pmax but one already seen, the batched
    # rejection must return each of the others exactly once, with its group; asked for
    # one at a time, each qualifying edge comes up about equally often
    n, s = 9, 1.0
    W, order = _cut(2, n, "ties")
    q = gq_build(as_graph(W), -1.0, s, 0.8, 1.0)
    visited = np.zeros(n, dtype=np.bool_)
    _join_all(q, W, np.asarray(order, dtype=np.int64), visited)
    cut = [(a, b) for a in range(n) for b in range(n) if visited[a] and not visited[b]]
    keys = {e: int(np.floor(-W[e])) for e in cut}
    pmax = max(keys.values()) - q.layout.kmin - 1  # the top key's group left out
    members = sorted((code_pack(a, b), k - q.layout.kmin) for (a, b), k in keys.items()
                     if k - q.layout.kmin <= pmax)
    assert 3 <= len(members) < len(cut)
    gs, codes = _cut_members_shim(q, W, len(members) - 1, pmax, len(members), members[0][0],
                                  np.random.default_rng(3))
    assert sorted(zip(codes.tolist(), gs.tolist())) == members[1:]
    draws = [int(_cut_members_shim(q, W, 1, pmax, len(members), -1, np.random.default_rng(i))[1][0])
             for i in range(200 * len(members))]
    counts = {code: draws.count(code) for code, _ in members}
    expected = {code: 1.0 / len(members) for code, _ in members}
    pvalue, _, _ = naive.chisquare_pvalue(counts, expected, len(draws))
    assert pvalue >= 1e-4


# --- the sparse driver's written-out selection ------------------------------------
# prim.prim_csr_private runs rnm_select's walk (sampler.rnm_steps) written out in its
# own body. It must draw exactly what rnm_select draws, in the same order: a whole
# release through it and through the reference loop below (gq_update_csr, then
# rnm_select) gives the same edges and the same counters for the same seed.

@njit
def _csr_reference_steps(q, indptr, indices, data, visited, edges, v, r, theta, bucket_width, rng,
                         stats):
    no_dense = np.zeros((0, 0))
    for step in range(edges.shape[0]):
        gq_join(q.layout, q.cut, v, visited)
        gq_update_csr(q, indptr, indices, data, v, visited)
        p = rnm_select(q, no_dense, visited, r, theta, bucket_width, rng, stats)
        edges[step, 0] = np.searchsorted(indptr, p, side="right") - 1
        edges[step, 1] = indices[p]
        v = indices[p]


def _csr_release(graph, r, theta, bucket_width, seed, written_out):
    q = gq_build(graph, -1.0, 1.0, r, bucket_width)
    visited = np.zeros(graph.n, dtype=np.bool_)
    edges = np.empty((graph.n - 1, 2), dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    rng = np.random.default_rng(seed)
    if written_out:
        prim_csr_private(q, graph, visited, edges, 0, graph.n - 1, 0, r, theta, bucket_width, rng, stats)
    else:
        _csr_reference_steps(q, graph.indptr, graph.indices, graph.data, visited, edges, 0, r, theta,
                             bucket_width, rng, stats)
    return edges, stats, q.layout


@pytest.mark.parametrize("shape", ["uniform", "outlier", "clusters", "integers"])
@pytest.mark.parametrize("rate", [0.02, 300.0])
# (bucket_width < 0: per-group counts, nodes of single groups)
@pytest.mark.parametrize("theta, bucket_width", [(0.03, 2.0), pytest.param(1.0, -1.0, marks=pytest.mark.slow_python)])
def test_sparse_driver_draws_as_rnm_select(shape, rate, theta, bucket_width):
    A = bench.shape_weights(shape, 150, seed=3, sparse=True)
    graph = as_graph(A * 64.0)  # s = 1: keys are the weights' 64ths
    for seed in (1, 2):
        ref, ref_stats, lay = _csr_release(graph, rate, theta, bucket_width, seed, False)
        got, got_stats, _ = _csr_release(graph, rate, theta, bucket_width, seed, True)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(got_stats, ref_stats)
    assert ref_stats[ST_NODES] >= graph.n - 1
    if bucket_width == 2.0 and rate == 300.0:  # what the cases are for: the block layer, compressed keys
        assert lay.layered == (shape == "clusters")
        assert lay.direct == (shape in ("uniform", "clusters"))
    assert lay.group_counts == (bucket_width < 0)


def _sym_upper(W):
    W = np.triu(W, 1)
    return W + W.T


def _crowded_integers(n, spread=False):
    """Integers 0..9 plus three weights of 1e9 (none in vertex 0's row), at s = 1/16 and
    r = 1/16 (lambda = 1, sensitivity 1): ~5e8 noise-wide buckets of the key range, all
    but three edges in the top wide bucket (a crowded range), ~10 of them occupied. With
    ``spread`` half the edges (none in row 0) are spread over [1e5, 1e9] instead: a
    bucket each, outside every island."""
    rng = np.random.default_rng(40)
    W = np.floor(rng.random((n, n)) * 10.0)
    if spread:
        far = rng.random((n, n)) < 0.5
        far[0, :] = far[:, 0] = False
        W = np.where(far, 1e5 + rng.random((n, n)) * 1e9, W)
    W = _sym_upper(W)
    for a, b in [(5, 9), (17, 40), (60, 61)]:
        W[a, b] = W[b, a] = 1e9
    return W


def _decisions(monkeypatch, passes=None):
    """Record whether each ``cutqueue_build._counted_fits`` call admitted the compressed
    layout; with ``passes`` (a list), append 1 to it at each pass over W outside the
    islands (``_outside_pass``)."""
    from fastpamst_nb import cutqueue_build

    seen = []
    real = cutqueue_build._counted_fits

    def spy(*args):
        got = real(*args)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(cutqueue_build, "_counted_fits", spy)
    if passes is not None:
        real_pass = cutqueue_build._outside_pass

        def pass_spy(*args):
            passes.append(1)
            return real_pass(*args)

        monkeypatch.setattr(cutqueue_build, "_outside_pass", pass_spy)
    return seen


def _short_of(m, occupied):
    """A ``fits`` that admits the compressed layout with up to ``occupied`` buckets
    outside its islands, not its bound of m (the memory of a machine too small for it)."""
    from fastpamst_nb.cutqueue_build import _compressed_need

    limit = _compressed_need(m, occupied)
    assert _compressed_need(m, m) > limit  # gq_build's first figure (the bound: m buckets)
    return lambda n_bytes: n_bytes <= limit


def test_a_crowded_range_counts_its_buckets_where_their_bound_does_not_fit(monkeypatch):
    # issue 31 (integers 0..99 plus a few 1e9 at n = 16,000 took wide buckets because
    # the compressed layout's bound, m buckets, did not fit: O(n^3)). The choice is
    # gq_build's ``fits``: the bound refused, the occupied buckets are counted under a
    # cap (the most that fit) and the compressed layout taken; past the cap, or with
    # nothing fitting, the wide one; with room, the bound fits and nothing is counted
    n = 200
    m = n * (n - 1) // 2
    s, r = 1.0 / 16, 1.0 / 16
    passes = []
    seen = _decisions(monkeypatch, passes)
    q = gq_build(as_graph(_crowded_integers(n)), -1.0, s, r, DEFAULT_BUCKET_WIDTH, fits=_short_of(m, 4096))
    assert seen == [True] and not q.layout.wide and not q.layout.direct
    assert q.layout.n_buckets < 4096  # the islands' buckets and a few outside
    # the count's pass is the build's: one pass over W outside the islands, not two
    assert len(passes) == 1
    # the same queue as with room for the bound (then nothing counted): the same buckets
    roomy = gq_build(as_graph(_crowded_integers(n)), -1.0, s, r, DEFAULT_BUCKET_WIDTH, fits=lambda n_bytes: True)
    assert len(seen) == 1 and len(passes) == 2 and not roomy.layout.wide
    assert np.array_equal(q.keys.key, roomy.keys.key) and q.layout.kmin == roomy.layout.kmin
    q = gq_build(as_graph(_crowded_integers(n)), -1.0, s, r, DEFAULT_BUCKET_WIDTH, fits=lambda n_bytes: False)
    assert seen == [True, False] and q.layout.wide
    # ~10,000 buckets outside the islands, past a cap of 4096: wide
    q = gq_build(as_graph(_crowded_integers(n, spread=True)), -1.0, s, r, DEFAULT_BUCKET_WIDTH,
                 fits=_short_of(m, 4096))
    assert seen == [True, False, False] and q.layout.wide
    q = gq_build(as_graph(_crowded_integers(n, spread=True)), -1.0, s, r, DEFAULT_BUCKET_WIDTH,
                 fits=_short_of(m, 1 << 14))
    assert seen == [True, False, False, True] and not q.layout.wide
    q = gq_build(as_graph(_crowded_integers(n)), -1.0, s, r, DEFAULT_BUCKET_WIDTH)
    assert seen == [True, False, False, True] and not q.layout.wide and not q.layout.direct


def test_a_crowded_range_counts_from_the_validations_list(monkeypatch):
    # where the validation listed the keys outside its islands (complete), the count
    # reads the list, not W: no pass at all, and the build takes the count's buckets
    # (the queue the list gives with room for the bound)
    from fastpamst_nb import dense_scan, window as topwin

    monkeypatch.setattr(topwin, "ISLANDS_MIN_ENTRIES", 0)
    n = 200
    m = n * (n - 1) // 2
    s, r = 1.0 / 16, 1.0 / 16
    W = _crowded_integers(n)
    graph = as_graph(W)

    def scanned():
        win = topwin.top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
        assert dense_scan._scan_dense(W, win, workers=1)[0] == 0
        assert win.state[topwin.WIN_ISLANDS] >= 1 and win.state[topwin.WIN_COMPLETE] == 1
        assert not win.state[topwin.WIN_LISTED_FULL]
        return win

    passes = []
    seen = _decisions(monkeypatch, passes)
    q = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH, scanned(), fits=_short_of(m, 4096))
    assert seen == [True] and passes == [] and not q.layout.wide and not q.layout.direct
    roomy = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH, scanned(), fits=lambda n_bytes: True)
    assert seen == [True] and passes == []
    assert np.array_equal(q.keys.key, roomy.keys.key)


@pytest.mark.parametrize("layout", ["counted", "wide"])
@pytest.mark.slow_python
def test_first_selection_law_on_a_crowded_range_short_of_memory(layout, monkeypatch):
    # the crowded integers at n = 200 with the memory short of the compressed layout's
    # bound: compressed after a count, or (nothing fits) wide, whose top bucket holds
    # every integer edge and is split at each selection. The law of a selection on vertex
    # 0's row (199 integer weights) against naive.rnm_exp_probs, RUNS selections
    n, lam = 200, 1.0
    m = n * (n - 1) // 2
    s = default_discretization(1.0)
    r = lam * s
    W = _crowded_integers(n)
    seen = _decisions(monkeypatch)
    fits = _short_of(m, 4096) if layout == "counted" else (lambda n_bytes: False)
    q = gq_build(as_graph(W), -1.0, s, r, DEFAULT_BUCKET_WIDTH, fits=fits)
    assert seen == [layout == "counted"] and q.layout.wide == (layout == "wide")
    visited = np.zeros(n, dtype=np.bool_)
    _join_all(q, W, np.zeros(1, dtype=np.int64), visited)
    codes, stats = _select_many(q, W, visited, r, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                                np.random.default_rng(1), RUNS)
    probs = naive.rnm_exp_probs(naive.discretized_scores(W[0, 1:], s), lam)
    expected = {(0, j + 1): p for j, p in enumerate(probs)}
    _assert_selection_law(codes, expected)


# ---------------------------------------------------------------------------
# a crowded wide bucket split once into its occupied sub-buckets (issue 31): where even
# the counted compressed layout does not fit, the wide layout's top bucket holds most
# edges; partitioning its slots at every step was O(n^3) a release
# ---------------------------------------------------------------------------

def _integers_wide(n, lam=1.0):
    """bench's integers (0..99, a few of 1e9) at sensitivity 1 (lam: the noise rate, 1:
    the integers a noise unit apart): the range's ~1e9 noise-wide buckets crowd (all but
    8 edges in one wide bucket), and ``fits`` refuses both the bound and the count: the
    wide layout, ~50 occupied sub-buckets."""
    W = bench.shape_weights("integers", n, seed=3)
    s = default_discretization(1.0)
    q = gq_build(as_graph(W), -1.0, s, lam * s, DEFAULT_BUCKET_WIDTH, fits=lambda n_bytes: False)
    assert q.layout.wide
    return W, s, q


@pytest.mark.slow_python
def test_a_crowded_wide_bucket_is_split_once_and_a_step_stays_bounded():
    # a whole release on the wide layout: the top wide bucket is split once (its
    # sub-buckets counted by the update loop), after which no step reads its slots to
    # open or partition it; the slots read to open and partition wide buckets
    # (ST_WIDE_SLOTS, those of the steps before the split: under 4 n slots a step) stay
    # O(n^2) a release, not O(n^3), and the nodes a step visits few
    from fastpamst_nb.prim import prim_dense_private
    from fastpamst_nb.sampler import ST_STEPS, ST_WIDE_SLOTS, _SPLIT_MIN_FILL

    n = 200
    W, s, q = _integers_wide(n)
    visited = np.zeros(n, dtype=np.bool_)
    edges = np.empty((n - 1, 2), dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    prim_dense_private(q, W, visited, edges, 0, n - 1, 0, s, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                       np.random.default_rng(0), stats)
    assert sorted(edges[:, 1].tolist()) == list(range(1, n))  # a spanning tree
    b, S, x_lo = q.store.split[:3]
    assert b == q.layout.n_buckets - 1 and 8 <= S <= 100  # the top wide bucket, its occupied sub-buckets
    # the bucket's count is its cut edges' (the last vertex's), the filled sub-buckets' their own
    in_b = _bucket_edges(q, W, visited, b)
    assert q.counts.bucket[b] == in_b.size > 0
    assert all(q.store.subs[1, x] == np.count_nonzero(in_b == q.store.subs[0, x]) for x in range(x_lo, S))
    # the partitions before the split read under 4 n slots for each of the ~100
    # sub-buckets they pass a step, over the few steps until the cut holds 4 n of its edges
    assert stats[ST_WIDE_SLOTS] <= _SPLIT_MIN_FILL * n * n
    assert stats[ST_NODES] <= 8 * stats[ST_STEPS]
    # the same release without the split (no columns for the sub-buckets: the bucket is
    # partitioned at every step) reads O(n^3) slots, and draws the same tree's law
    W, s, q = _integers_wide(n)
    q = q._replace(store=q.store._replace(subs=np.zeros((4, 0), dtype=np.int64)))
    visited[:] = False
    unsplit = np.zeros(N_STATS, dtype=np.int64)
    prim_dense_private(q, W, visited, edges, 0, n - 1, 0, s, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                       np.random.default_rng(0), unsplit)
    assert q.store.split[0] == -1 and unsplit[ST_WIDE_SLOTS] > n ** 3 // 16 > 10 * stats[ST_WIDE_SLOTS]

def _bucket_edges(q, W, visited, b):
    """The cut edges of bucket b of a wide queue, and the sub-bucket of each (naive)."""
    lay = q.layout
    subs = []
    for a in np.flatnonzero(visited):
        for u in np.flatnonzero(~visited):
            g = math.floor(-float(W[a, u]) / lay.s) - lay.kmin
            if g >> lay.bucket_shift == b:
                subs.append((g - (b << lay.bucket_shift)) >> lay.sub_shift)
    return np.array(subs, dtype=np.int64)


@pytest.mark.slow_python
def test_a_split_buckets_row_pass_keys_its_top_sub_buckets_only():
    # issue 31: after the split, a step keyed every entry of its row in the split bucket
    # (most of the row: 44x the floor at n = 16,000). Only the sub-buckets near the top
    # are filled now; the others are counted by a compare an entry and filled by the
    # walk when it reaches them (SlotStore.split[2], at least halved a fill). At a noise
    # rate where the integers lie 40 noise units apart, a release keys (ST_SPLIT_KEYS:
    # row passes and fills) a few percent of the ~n**2 / 2 entries its steps read, and
    # the counts stay exact: the bucket's count is its cut edges'
    from fastpamst_nb.prim import prim_dense_private
    from fastpamst_nb.sampler import ST_SPLIT_KEYS, ST_STEPS

    n, lam = 200, 40.0
    W, s, q = _integers_wide(n, lam)
    visited = np.zeros(n, dtype=np.bool_)
    edges = np.empty((n - 1, 2), dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    half = n // 2
    prim_dense_private(q, W, visited, edges, 0, half, 0, s * lam, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                       np.random.default_rng(0), stats)
    b, S, x_lo = q.store.split[:3]
    assert b == q.layout.n_buckets - 1 and S >= 40 and 0 < x_lo
    # the bucket's count is its cut edges' (the unfilled sub-buckets' by the compares),
    # and each filled sub-bucket's count its own
    in_b = _bucket_edges(q, W, visited, b)
    assert q.counts.bucket[b] == in_b.size
    ids = q.store.subs[0, :S]
    for x in range(x_lo, S):
        assert q.store.subs[1, x] == np.count_nonzero(in_b == ids[x])
    prim_dense_private(q, W, visited, edges, half, n - 1 - half, int(edges[half - 1, 1]), s * lam, DEFAULT_THETA,
                       DEFAULT_BUCKET_WIDTH, np.random.default_rng(1), stats)
    assert sorted(edges[:, 1].tolist()) == list(range(1, n))  # a spanning tree
    assert stats[ST_STEPS] == n - 1
    assert 0 < stats[ST_SPLIT_KEYS] <= n * n // 16
    assert stats[ST_NODES] <= 8 * stats[ST_STEPS]


@pytest.mark.slow_python
def test_selection_law_on_a_split_wide_bucket():
    # the law of a selection from the cut of vertices 0..9 (1,900 edges, most in the top
    # wide bucket) against naive.rnm_exp_probs, RUNS selections, on the new path: the
    # split (at a selection after vertices 0..4 joined, its slots read once) leaves
    # sub-buckets unfilled, vertices 5..9 then join (their entries there counted by
    # difference only), and the selections walk the sub-buckets by their counts (the
    # integers one noise unit apart), filling lower ones as they reach them, draw
    # members from their regions, and rank bottom draws into the bucket through its
    # counts (filling down to the rank)
    from fastpamst_nb.sampler import ST_SPLIT_KEYS, ST_WIDE_SLOTS

    n, k = 200, 10
    W, s, q = _integers_wide(n)
    visited = np.zeros(n, dtype=np.bool_)
    _join_all(q, W, np.arange(5, dtype=np.int64), visited)
    _, stats = _select_many(q, W, visited, s, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, np.random.default_rng(3), 1)
    b, S, x0 = q.store.split[:3]
    assert b == q.layout.n_buckets - 1 and x0 > 0  # split, sub-buckets left unfilled
    assert stats[ST_WIDE_SLOTS] == q.counts.bucket[b]  # read once, when split
    _join_all(q, W, np.arange(5, k, dtype=np.int64), visited)
    assert q.counts.bucket[b] == _bucket_edges(q, W, visited, b).size
    codes, stats = _select_many(q, W, visited, s, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                                np.random.default_rng(2), RUNS)
    assert q.store.split[2] < x0 and stats[ST_SPLIT_KEYS] > 0  # filled by the walks
    pairs = [(a, c) for a in range(k) for c in range(k, n)]
    probs = naive.rnm_exp_probs(naive.discretized_scores(np.array([W[a, c] for a, c in pairs]), s), 1.0)
    _assert_selection_law(codes, dict(zip(pairs, probs)))
