"""Fast-PAMST at high noise (issue 31): a few groups hold the whole cut.

At an honest sensitivity the noise spans the weights' whole range, so a dense
queue has one or two buckets and the sampler resolves the buckets it has not
counted as one node whose members are uniform pairs of the cut
(``sampler._cut_node``, docs/design.rst, Wide nodes drawn from the cut). Each
released-law test runs 20,000 seeded releases of a tiny graph and compares the
counts of released edge sequences with the exact law (tests/naive.py) by a
chi-square test that fails at p < 1e-4, with the speed knobs at the values that
send the walk through that node at the first step, after counted buckets, and
never (sparse graphs count every bucket).
"""

import math

import numpy as np
import pytest

import fastpamst_nb as fp
from fastpamst_nb import bench
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA, _fast_pamst_graph
from fastpamst_nb.graph import as_graph
from fastpamst_nb.privacy import default_discretization, discretized_sensitivity
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.sampler import (
    N_STATS, ST_BLOCK_DRAWS, ST_BLOCK_EXTRA, ST_CUT_NODES, ST_NODES, ST_RANGE_NODES, ST_STEPS,
)

import naive
from test_fast_pamst import expected_sequences
from test_hard_inputs import released_counts  # the compiled loop of releases

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

RUNS = 20_000
P_FAIL = 1e-4


def _sym(upper):
    W = np.triu(np.asarray(upper, dtype=np.float64), 1)
    return W + W.T


def _rho_for_rate(lam, sensitivity, s, n):
    """The rho whose exponential Fast-PAMST rate is lam (the calibration inverted)."""
    return (2.0 * discretized_sensitivity(sensitivity, s) * lam) ** 2 * (n - 1) / 2.0


_UNIFORM = _sym(np.random.default_rng(31).random((5, 5)) * 3.0)
# three weights only: three groups hold every edge, many ties within each
_THREE = _sym(np.random.default_rng(32).integers(0, 3, size=(6, 6)).astype(float))


def _far_edge():
    """naive.ring6 with its chord (1, 4) moved 8e5 noise units away: a compressed sparse
    queue, whose buckets are aligned at the top key (13 keys below kmin's alignment)."""
    A = naive.ring6().tolil()
    A[1, 4] = A[4, 1] = 1e6 + 0.3
    return A.tocsr()


_FAR_EDGE = _far_edge()

# name: (weights, sensitivity, rate lam, maximum, theta, bucket_width, cut nodes expected)
# sensitivity 1 on weights in [0, 3] (s = 1/16: 48 keys) at lam = 1: the noise spans
# the whole range (r * K = 3 noise units), so the first node is the whole cut; with
# bucket_width = 1 the top buckets are counted first and the rest is one node
CASES = {
    "uniform": (_UNIFORM, 1.0, 1.0, False, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, True),
    "uniform-maximum": (_UNIFORM, 1.0, 1.0, True, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, True),
    "three-groups": (_THREE, 2.0, 0.6, False, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, True),
    "three-groups-maximum": (_THREE, 2.0, 0.6, True, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, True),
    "after-counted-buckets": (_UNIFORM, 1.0, 1.0, False, DEFAULT_THETA, 1.0, True),
    "never-stop": (_UNIFORM, 1.0, 1.0, False, 0.0, 1.0, True),
    "bottom-asap": (_UNIFORM, 1.0, 1.0, False, math.inf, 1.0, None),
    "sparse-far-edge": (_FAR_EDGE, 2.0, 0.8, False, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, False),
    "sparse-maximum": (naive.ring6(), 2.0, 0.8, True, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, False),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.slow_python
def test_high_noise_law(name):
    W, sensitivity, lam, maximum, theta, bucket_width, cut_nodes = CASES[name]
    n = W.shape[0]
    s = default_discretization(sensitivity)
    rho = _rho_for_rate(lam, sensitivity, s, n)
    counts, stats, rate = released_counts(W, rho, sensitivity, s, maximum=maximum, theta=theta,
                                          bucket_width=bucket_width)
    assert rate == pytest.approx(lam, rel=1e-12)
    expected = expected_sequences(W, rate, s, maximum=maximum)
    # informative: many sequences carry real mass, none most of it
    assert sum(RUNS * p >= 5 for p in expected.values()) >= 20 and max(expected.values()) < 0.5
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
    if cut_nodes is not None:
        assert (stats[ST_CUT_NODES] > 0) == cut_nodes


def test_the_cases_reach_the_layouts_they_claim():
    # one or two buckets at the default knobs (the noise spans the range), several with
    # bucket_width = 1; sparse queues count every bucket from the start
    for name, (W, sensitivity, lam, maximum, _, bucket_width, _) in CASES.items():
        s = default_discretization(sensitivity)
        q = gq_build(as_graph(W), 1.0 if maximum else -1.0, s, lam * s, bucket_width)
        if name.startswith("sparse"):
            assert not q.layout.dense and not q.layout.lazy_counts
            lay = q.layout
            keys = np.floor((1.0 if maximum else -1.0) * W.data / s).astype(np.int64)
            if name == "sparse-far-edge":
                # compressed buckets aligned at the top key (cutqueue_build): the top one
                # ends at the largest key, 13 keys below the alignment at the lowest key
                assert not lay.direct and lay.bucket_shift == 4 and lay.kmin == keys.min() - 13
                assert q.keys.key[-1] + (1 << 4) - 1 == keys.max()
            else:
                assert lay.direct and lay.kmin == keys.min()
        elif bucket_width == DEFAULT_BUCKET_WIDTH:
            assert q.layout.lazy_counts and q.layout.n_buckets <= 2
        else:
            assert q.layout.lazy_counts and q.layout.n_buckets >= 3


# the dense graphs of the counted range (sampler.rnm_steps): near edges within a few
# noise units of the top (lam = 1, s = 1/16: a weight unit is a noise unit), far ones 6-9
# units below, more than the range's 2 bucket widths and too many for the far-edge rule
# (n / 16 < 1 at n = 6); minimum trees, and the same weights mirrored for maximum ones
_NEAR_FAR = _sym(np.where(np.random.default_rng(39).random((6, 6)) < 0.6,
                          np.random.default_rng(40).random((6, 6)) * 2.0,
                          6.0 + np.random.default_rng(41).random((6, 6)) * 3.0))
# only 0-1 and 0-2 near: from vertex 0 the range holds 2 of 5 cut edges, 1 of 8 or 2 of
# 8 at the second step, none once both are in the tree: its share falls below 1/8 and the
# walk materializes (gq_materialize ends the range) for the rest of the release
_FALLBACK = _sym(6.0 + np.random.default_rng(42).random((6, 6)) * 3.0)
_FALLBACK[0, 1] = _FALLBACK[1, 0] = 0.3
_FALLBACK[0, 2] = _FALLBACK[2, 0] = 0.9

RANGE_CASES = {
    "minimum": (_NEAR_FAR, False),
    "maximum": (10.0 - _NEAR_FAR, True),
    "share-falls": (_FALLBACK, False),
}


@pytest.mark.parametrize("name", list(RANGE_CASES))
@pytest.mark.slow_python
def test_counted_range_release_law(name):
    # the counted range: the top buckets counted by the row updates but never written,
    # their node's members uniform pairs of the cut in its group range; 20,000 releases
    # against the enumerated tree law (chi-square, p >= 1e-4)
    W, maximum = RANGE_CASES[name]
    n, sensitivity, lam = W.shape[0], 1.0, 1.0
    s = default_discretization(sensitivity)
    q = gq_build(as_graph(W), 1.0 if maximum else -1.0, s, lam * s, DEFAULT_BUCKET_WIDTH)
    assert q.layout.dense and q.layout.lazy_counts
    assert lam * s * (q.layout.n_groups - 1) > 2 * 2 * DEFAULT_BUCKET_WIDTH  # the span rule refuses
    rho = _rho_for_rate(lam, sensitivity, s, n)
    counts, stats, rate = released_counts(W, rho, sensitivity, s, maximum=maximum)
    expected = expected_sequences(W, rate, s, maximum=maximum)
    assert sum(RUNS * p >= 5 for p in expected.values()) >= 20 and max(expected.values()) < 0.5
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
    steps = stats[ST_STEPS]
    assert steps == RUNS * (n - 1)
    if name == "share-falls":
        # the first two steps (at most) walk the range, the rest materialized buckets
        # (and below them the far edges as one cut node)
        assert RUNS <= stats[ST_RANGE_NODES] <= 2 * RUNS
    else:
        assert stats[ST_RANGE_NODES] > steps // 2


@pytest.mark.parametrize("rule", ["far-edge", "counted-range"])
@pytest.mark.slow_python
def test_first_selection_law_with_far_edges(rule):
    # a dense graph whose key range far edges stretch to ~30 noise units: the span rule
    # refuses the node of the uncounted edges. One far edge: the far-edge rule takes it
    # (1 + ln 199 <= 200 / _FAR_SHARE expected draws), the far edge its carrier in 1
    # selection of 199. A third of the edges far: the rule refuses, and the counted range
    # (the near edges, within 2 bucket widths of the top) is the first node, its members
    # drawn from the cut. The first selection's law (vertex 0's row, 199 edges) against
    # the exact report-noisy-max (naive.rnm_exp_probs), RUNS seeded selections
    from fastpamst_nb.prim import prim_dense_private
    from fastpamst_nb.sampler import _FAR_SHARE

    n, sensitivity, lam = 200, 1.0, 1.0
    W = _sym(np.random.default_rng(38).random((n, n)) * 3.0)
    if rule == "far-edge":
        W[0, 7] = W[7, 0] = 33.0
    else:
        W += _sym(30.0 * (np.random.default_rng(39).random((n, n)) < 1.0 / 3.0))
    s = default_discretization(sensitivity)
    r = lam * s
    assert 1.0 + math.log(n - 1) <= n / _FAR_SHARE
    graph = as_graph(W)
    q0 = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH)
    q = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH)
    assert q.layout.dense and q.layout.lazy_counts and q.layout.direct
    assert r * (q.layout.n_groups - 1) > 4 * DEFAULT_BUCKET_WIDTH  # the span rule refuses
    rng = np.random.default_rng(0)
    stats = np.zeros(N_STATS, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    edges = np.empty((n - 1, 2), dtype=np.int64)
    got = np.zeros(n, dtype=np.int64)
    # test_fast_pamst's _restore with the array pairs listed once (57 -> ~15 us a run)
    pairs = [(a, a0) for part, part0 in zip(q, q0) for a, a0 in zip(part, part0)
             if isinstance(a, np.ndarray) and a.size]
    for _ in range(RUNS):
        for a, a0 in pairs:
            a[...] = a0
        visited[:] = False
        prim_dense_private(q, graph.W, visited, edges, 0, 1, 0, r, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                           rng, stats)
        got[edges[0, 1]] += 1
    # the walk's far-edge rule kept its count in far_edges, not in open_bucket (a wide
    # bucket's state: a count written there made the rank path take bucket 1 for an
    # open wide bucket, its slots unchecked)
    assert q.store.open_bucket[0] == -1 and q.store.open_bucket[1] == 0
    assert q.store.far_edges[0] >= 0  # counted by the rule (whether it took the node or not)
    # every selection took the rule, or the range
    assert stats[ST_CUT_NODES if rule == "far-edge" else ST_RANGE_NODES] == stats[ST_STEPS] == RUNS
    probs = naive.rnm_exp_probs(naive.discretized_scores(W[0, 1:], s), lam)
    expected = {j + 1: p for j, p in enumerate(probs)}
    counts = {j: int(c) for j, c in enumerate(got) if c}
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"


def _uniform(n, seed):
    return _sym(np.random.default_rng(seed).random((n, n)))


@pytest.mark.parametrize("sensitivity", [1e-5, 1e-3, 0.1, 1.0])
@pytest.mark.slow_python
def test_nodes_a_selection_visits_stay_few_at_every_noise_level(sensitivity):
    # a selection visits the nodes within a few noise units of the best, whatever the
    # noise: at high noise one node drawn from the cut, never a count of every bucket
    n = 300
    graph = as_graph(_uniform(n, 7))
    s = default_discretization(sensitivity)
    _, stats = _fast_pamst_graph(graph, 0.1, sensitivity, s, 0, np.random.default_rng(1), "exponential",
                                 False, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH)
    assert stats.shape == (N_STATS,) and stats[ST_STEPS] == n - 1
    # the walk stops once the edges left expect theta noises above the best, about
    # ln(m / theta) noise units below it, in nodes of bucket_width units (plus the
    # first, and a partial one on each side)
    m = n * (n - 1) // 2
    per_step = 3 + math.log(m / DEFAULT_THETA) / DEFAULT_BUCKET_WIDTH
    assert stats[ST_NODES] <= per_step * (n - 1)
    if sensitivity >= 0.1:
        # the noise spans the weights' range: every selection is one node from the cut
        assert stats[ST_CUT_NODES] == n - 1 and stats[ST_NODES] == n - 1


@pytest.mark.parametrize("sensitivity", [1e-3, 0.1, 1.0])
@pytest.mark.slow_python
def test_sparse_shapes_walk_few_nodes_and_draw_few_candidates_at_wide_noise(sensitivity):
    # issue 31's shapes on sparse graphs (bench --shapes' rows, ~3 edges a vertex) in the
    # wide-group regime: a step visits the nodes within ln(m / theta) noise units of the
    # top, bucket_width units each, plus the slack of tests/test_shapes.py (the first
    # node, a partial last one, the block layer), whatever the shape; and a carrier's
    # extra members, the others of its bucket within its span (at most bucket_width
    # noise units) of the maximum noise, expect at most e**bucket_width - 1 (the top
    # of the Exp(r) order statistics is a Poisson process of intensity e**(-r y))
    n = 600
    s = default_discretization(sensitivity)
    for shape in bench.SHAPES:
        A = bench.shape_weights(shape, n, seed=1, sparse=True)
        m = A.nnz // 2
        _, stats = _fast_pamst_graph(as_graph(A), 0.1, sensitivity, s, 0, np.random.default_rng(0),
                                     "exponential", False, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH)
        steps = stats[ST_STEPS]
        assert steps == n - 1
        nodes = stats[ST_NODES] / steps
        assert nodes <= math.log(m / DEFAULT_THETA) / DEFAULT_BUCKET_WIDTH + 6, (shape, nodes)
        assert stats[ST_BLOCK_DRAWS] <= stats[ST_NODES]
        extras = stats[ST_BLOCK_EXTRA] / stats[ST_BLOCK_DRAWS]
        assert extras <= math.expm1(DEFAULT_BUCKET_WIDTH), (shape, extras)


def test_high_noise_release_is_a_spanning_tree_and_leaves_the_input_alone():
    W = _uniform(200, 3)
    before = W.copy()
    for maximum in (False, True):
        tree = fp.fast_pamst(W, rho=0.1, sensitivity=1.0, rng=5, noise="exponential", maximum=maximum)
        seen = {0}
        for a, b in tree.edges.tolist():
            assert a in seen and b not in seen
            seen.add(b)
        assert len(seen) == 200
    assert np.array_equal(W, before)


@pytest.mark.parametrize("sensitivity", [1e-3, 0.1, 1.0])
@pytest.mark.slow_python
def test_dense_shapes_with_far_edges_walk_the_counted_range(sensitivity):
    # issue 31's dense shapes whose far edges (Pareto's tail, far clusters) refuse the cut
    # node: every selection's first node is the counted range, nothing is written to a
    # slot (the release's time no longer follows their rows' writes), and a step visits
    # few nodes
    from fastpamst_nb.prim import prim_dense_private

    n = 300
    s = default_discretization(sensitivity)
    r = fp.privacy.fast_pamst_key_rate(0.1, sensitivity, n, s, "exponential")
    # (clusters at 1e-3 and n = 300: the range, 4 noise units of the near third, holds
    # about a tenth of the cut, under 1/8: those releases materialize from the first step)
    for shape in ("pareto", "clusters") if sensitivity >= 0.1 else ("pareto",):
        graph = as_graph(bench.shape_weights(shape, n, seed=1))
        q = gq_build(graph, -1.0, s, r, DEFAULT_BUCKET_WIDTH)
        stats = np.zeros(N_STATS, dtype=np.int64)
        visited = np.zeros(n, dtype=np.bool_)
        edges = np.empty((n - 1, 2), dtype=np.int64)
        prim_dense_private(q, graph.W, visited, edges, 0, n - 1, 0, r, DEFAULT_THETA, DEFAULT_BUCKET_WIDTH,
                           np.random.default_rng(0), stats)
        # (Pareto at 1e-3: the range's share falls below 1/8 in the last few steps)
        assert stats[ST_STEPS] == n - 1 and stats[ST_RANGE_NODES] >= 0.95 * (n - 1), shape
        if stats[ST_RANGE_NODES] == n - 1:
            assert q.store.materialized[0] == q.layout.n_buckets and q.store.fill.sum() == 0, shape
        assert stats[ST_NODES] <= 3 * (n - 1), shape
