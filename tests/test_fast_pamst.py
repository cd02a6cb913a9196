"""Fast-PAMST is exact: its released trees follow the discretized RNM law step by step.

Each configuration is run 20,000 times with one seeded Generator; the counts of
released edge sequences are compared with the exact probabilities of private
Prim (naive.prim_sequence_distribution with exact per-step RNM
probabilities) by a chi-square test that fails at p < 1e-4 (docs/design.rst, How exactness is tested).
The kernel's speed knobs theta and bucket_width are forced to their extremes, because
the output law must not depend on them.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb import window as topwin
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA, _fast_pamst_graph
from fastpamst_nb.graph import as_graph
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.prim import prim_csr_private, prim_dense_private
from fastpamst_nb.sampler import (
    N_STATS,
    ST_BLOCK_DRAWS,
    ST_BLOCK_EXTRA,
    ST_BOTTOM_K,
    ST_BOTTOM_WINS,
)

import naive

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

RUNS = 20_000
P_FAIL = 1e-4

# (theta, bucket_width): default knobs; never stop early and resolve every group on its
# own (bucket_width < 0); buckets of one group, stopping for the bottom trick right
# after the first; the widest buckets and blocks (everything resolved as a block)
KNOBS = {
    "default": (DEFAULT_THETA, DEFAULT_BUCKET_WIDTH),
    "groups-only": (0.0, -1.0),
    "bottom-asap": (math.inf, 0.0),
    "widest-blocks": (1.0, math.inf),
}


def _sym(upper):
    W = np.asarray(upper, dtype=np.float64)
    return np.triu(W, 1) + np.triu(W, 1).T


def _integer_graph():
    # integer weights, sensitivity 1 = s: scores are the weights themselves
    return _sym([[0, 3, 1, 4], [0, 0, 2, 2], [0, 0, 0, 5], [0, 0, 0, 0]])


def _tied_graph():
    # five vertices, weights in {0, 1}: groups of many tied edges
    rng = np.random.default_rng(3)
    return _sym(rng.integers(0, 2, size=(5, 5)).astype(float))


def _far_graph():
    # a few light edges and groups far below them: the bottom trick must draw k > 0
    # and win; the key range (1e6 with s = 1) forces wide buckets (or compressed
    # group ranks without them)
    return _sym([[0, 0, 1, 7, 1e6], [0, 0, 2, 6, 9e5], [0, 0, 0, 3, 8e5], [0, 0, 0, 0, 2], [0] * 5])


CONFIGS = {
    # name: (weights, rho, sensitivity, discretization)
    "integer": (_integer_graph(), 24.0, 1.0, None),
    "ties": (_tied_graph(), 40.0, 1.0, None),
    "far": (_far_graph(), 80.0, 1.0, None),
    "sparse": (naive.ring6(), 20.0, 0.5, 0.25),
}


def _dense_view(weights):
    """(W, adjacency) as plain arrays for the reference enumeration."""
    if sp.issparse(weights):
        A = weights.toarray()
        return A, weights.toarray() != 0
    return weights, None


def expected_sequences(weights, lam, s, noise="exponential", maximum=False, start=0):
    W, adjacency = _dense_view(weights)

    def step_probs(w):
        scores = naive.discretized_scores(w, s, maximum=maximum)
        if noise == "exponential":
            return naive.rnm_exp_probs(scores, lam)
        return naive.softmax_probs(scores, lam)

    return naive.prim_sequence_distribution(W, adjacency, start, step_probs)


def _restore(q, q0):
    """Every array of queue q set back to the pristine queue q0's (the same build)."""
    for part, part0 in zip(q, q0):
        for a, a0 in zip(part, part0):
            if isinstance(a, np.ndarray):
                a[...] = a0


def released_counts(weights, rho, sensitivity, discretization, *, noise="exponential",
                    maximum=False, theta=DEFAULT_THETA, bucket_width=DEFAULT_BUCKET_WIDTH, seed=0, runs=RUNS,
                    window=False):
    """Counts of the released edge sequences over ``runs`` releases. ``window``: validate
    with fast_pamst's top window (its top buckets then sized at build).

    The releases are ``_fast_pamst_graph``'s with one seeded generator (the same draws,
    so the same trees), each a driver call on a copy of one built queue: the build and
    the tree of a whole ``_fast_pamst_graph`` call cost more than the release itself.
    ``test_released_counts_are_the_releases`` checks the two against each other."""
    rng = np.random.default_rng(seed)
    s = sensitivity if discretization is None else discretization
    n = weights.shape[0]
    r = fp.privacy.fast_pamst_key_rate(rho, sensitivity, n, s, noise)  # as the release's
    win = None
    if window:
        win = topwin.top_window(1.0 if maximum else -1.0, s, r, bucket_width)
    graph = as_graph(weights, window=win)  # validated once; the loop runs the release itself
    sgn = 1.0 if maximum else -1.0
    q0 = gq_build(graph, sgn, s, r, bucket_width, win)
    q = gq_build(graph, sgn, s, r, bucket_width, win)
    out = np.empty((runs, n - 1, 2), dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    for i in range(runs):
        # the release _fast_pamst_graph would make with the same generator: a fresh
        # queue (q0's copy), the whole release from vertex 0 in one driver call (a
        # compiled loop around the drivers compiled their walk again: 30 s)
        _restore(q, q0)
        visited[:] = False
        if graph.dense:
            prim_dense_private(q, graph.W, visited, out[i], 0, n - 1, 0, r, theta, bucket_width, rng, stats)
        else:
            prim_csr_private(q, graph, visited, out[i], 0, n - 1, 0, r, theta, bucket_width, rng, stats)
    rows, counts = np.unique(out.reshape(runs, -1), axis=0, return_counts=True)
    counts = {tuple(map(tuple, row.reshape(-1, 2).tolist())): int(c) for row, c in zip(rows, counts)}
    return counts, stats, fp.privacy.fast_pamst_rate(rho, sensitivity, n, s, noise)


def _check(weights, rho, sensitivity, discretization, noise="exponential", maximum=False, **knobs):
    counts, stats, lam = released_counts(weights, rho, sensitivity, discretization,
                                         noise=noise, maximum=maximum, **knobs)
    s = sensitivity if discretization is None else discretization
    expected = expected_sequences(weights, lam, s, noise=noise, maximum=maximum)
    # the test must be informative: several sequences carry real mass
    assert sum(RUNS * p >= 5 for p in expected.values()) >= 3
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
    return stats


@pytest.mark.parametrize("knobs", list(KNOBS), ids=list(KNOBS))
@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
@pytest.mark.slow_python
def test_exponential_noise_matches_exact_rnm(config, knobs):
    weights, rho, sensitivity, disc = CONFIGS[config]
    theta, bucket_width = KNOBS[knobs]
    stats = _check(weights, rho, sensitivity, disc, theta=theta, bucket_width=bucket_width)
    if knobs == "groups-only":
        assert stats[ST_BLOCK_DRAWS] == 0 and stats[ST_BOTTOM_K] == 0
    if knobs == "bottom-asap":
        assert stats[ST_BOTTOM_K] > 0
    if knobs == "widest-blocks":
        assert stats[ST_BLOCK_DRAWS] > 0


@pytest.mark.parametrize("config, maximum", [("far", False), ("sparse", False), ("integer", True)])
def test_released_counts_are_the_releases(config, maximum):
    # released_counts runs the releases in a compiled loop: the same trees, in the same
    # order of draws, as _fast_pamst_graph's one by one with the same generator
    weights, rho, sensitivity, disc = CONFIGS[config]
    s = sensitivity if disc is None else disc
    rng = np.random.default_rng(0)
    graph = as_graph(weights)
    want = {}
    for _ in range(200):
        tree, _ = _fast_pamst_graph(graph, rho, sensitivity, s, 0, rng, "exponential", maximum,
                                    DEFAULT_THETA, DEFAULT_BUCKET_WIDTH)
        key = tuple(map(tuple, tree.edges.tolist()))
        want[key] = want.get(key, 0) + 1
    got, _, _ = released_counts(weights, rho, sensitivity, disc, maximum=maximum, runs=200)
    assert got == want and len(got) >= 3


@pytest.mark.parametrize("wide", [True, False], ids=["wide", "compressed"])
def test_far_groups_use_the_bottom_trick_and_it_wins(wide, monkeypatch):
    if not wide:
        monkeypatch.setattr(topwin, "WIDE_MIN_FINE", 1 << 62)
    weights, rho, sensitivity, disc = CONFIGS["far"]
    q = gq_build(as_graph(weights), -1.0, 1.0, 1.0, 1.0)
    # the key range (1e6 keys) makes wide buckets, or without them compressed group ranks
    assert q.layout.wide == wide and q.layout.direct == wide
    _, stats, _ = released_counts(weights, rho, sensitivity, disc, runs=2000)
    assert stats[ST_BOTTOM_K] > 0 and stats[ST_BOTTOM_WINS] > 0


def test_far_law_without_wide_buckets(monkeypatch):
    # CONFIGS["far"] runs wide at bucket_width >= 0; its compressed layout keeps a law test
    monkeypatch.setattr(topwin, "WIDE_MIN_FINE", 1 << 62)
    _check(*CONFIGS["far"])


def test_blocks_draw_extra_candidates():
    # one wide bucket: the c - 1 non-carriers must sometimes compete with the carrier
    weights, rho, sensitivity, disc = CONFIGS["integer"]
    _, stats, _ = released_counts(weights, rho, sensitivity, disc, theta=0.0, bucket_width=math.inf, runs=2000)
    assert stats[ST_BLOCK_DRAWS] > 0 and stats[ST_BLOCK_EXTRA] > 0


@pytest.mark.slow_python
def test_maximum_tree_matches_exact_rnm():
    weights, rho, sensitivity, disc = CONFIGS["integer"]
    _check(weights, rho, sensitivity, disc, maximum=True)


@pytest.mark.slow_python
def test_non_default_discretization_on_dense_weights():
    rng = np.random.default_rng(11)
    W = _sym(rng.random((5, 5)) * 3)
    _check(W, 30.0, 0.4, 0.7)


@pytest.mark.slow_python
def test_the_chi_square_test_detects_a_wrong_lambda():
    # the same counts judged against lambda computed with n instead of n - 1 must fail:
    # the test has the power to see a calibration error of that size
    weights, rho, sensitivity, disc = CONFIGS["integer"]
    counts, _, lam = released_counts(weights, rho, sensitivity, disc)
    n = weights.shape[0]
    wrong = lam * math.sqrt((n - 1) / n)
    expected = expected_sequences(weights, wrong, sensitivity)
    pvalue, _, _ = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue < P_FAIL


def test_calibration_matches_notes():
    W = _integer_graph()
    for disc in (None, 0.3):
        tree = fp.fast_pamst(W, rho=0.7, sensitivity=0.2, rng=0, discretization=disc, noise="exponential")
        want = naive.exp_calibration(0.7, 0.2, 4, s=disc, algorithm="fast_pamst")
        assert tree.info["rate"] == pytest.approx(want, rel=1e-15)
    # gumbel: the exponential mechanism on the raw weights, no discretization
    tree = fp.fast_pamst(W, rho=0.7, sensitivity=0.2, rng=0, noise="gumbel")
    want = naive.exp_calibration(0.7, 0.2, 4, noise="gumbel", algorithm="pamst")
    assert tree.info["rate"] == pytest.approx(want, rel=1e-15) and "discretization" not in tree.info


@pytest.mark.parametrize("n", [30, 120])
@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
def test_huge_rho_releases_an_exact_mst_up_to_discretization(n, noise):
    rng = np.random.default_rng(n)
    W = _sym(rng.random((n, n)))
    s = 1e-4
    for maximum in (False, True):
        tree = fp.fast_pamst(W, rho=1e14, sensitivity=s, rng=1, noise=noise, maximum=maximum)
        # float summation order may leave -1e-14 for an exact tree
        assert -1e-9 <= fp.excess_weight(W, tree) <= (n - 1) * 2 * s


def test_sparse_and_dense_agree_on_the_complete_graph():
    # the same complete graph given densely and sparsely yields the same law; with a
    # huge rho both must return the exact MST
    rng = np.random.default_rng(5)
    W = _sym(rng.random((40, 40)) + 0.1)
    dense = fp.fast_pamst(W, rho=1e14, sensitivity=1e-6, rng=0)
    sparse = fp.fast_pamst(sp.csr_matrix(W), rho=1e14, sensitivity=1e-6, rng=0)
    exact = fp.exact_mst(W).weight
    assert dense.weight == pytest.approx(exact) and sparse.weight == pytest.approx(exact)


def test_seeds_reproduce_and_input_is_untouched():
    rng = np.random.default_rng(2)
    W = _sym(rng.random((60, 60))).astype(np.float32)
    before = W.copy()
    a = fp.fast_pamst(W, rho=0.5, sensitivity=1e-3, rng=42)
    b = fp.fast_pamst(W, rho=0.5, sensitivity=1e-3, rng=np.random.default_rng(42))
    c = fp.fast_pamst(W, rho=0.5, sensitivity=1e-3, rng=43)
    assert np.array_equal(a.edges, b.edges)
    assert not np.array_equal(a.edges, c.edges)
    assert np.array_equal(W, before)


def test_every_start_vertex_and_tree_shape():
    rng = np.random.default_rng(4)
    W = _sym(rng.random((25, 25)))
    for start in (0, 7, 24):
        tree = fp.fast_pamst(W, rho=1.0, sensitivity=1e-3, rng=start, start=start)
        seen = {start}
        for a, b in tree.edges.tolist():
            assert a in seen and b not in seen
            seen.add(b)
        assert len(seen) == 25


def test_noise_must_be_known():
    with pytest.raises(ValueError, match="noise"):
        fp.fast_pamst(_integer_graph(), rho=1.0, sensitivity=1.0, noise="laplace")


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
@pytest.mark.slow_python
def test_a_release_is_the_same_whatever_the_validation_threads(noise, monkeypatch):
    # n = 1100 makes 1.2M entries: the validation splits its tile rows across threads
    # by default. The joined window must be the one thread's window (so the same
    # buckets are sized) and the same seed must give the same tree
    from fastpamst_nb import privacy, threads

    rng = np.random.default_rng(8)
    A = np.triu(rng.random((1100, 1100)), 1)
    W = A + A.T
    s = privacy.default_discretization(1e-5)
    # the exponential queue's window (what the validation fills, whichever noise releases)
    r = privacy.fast_pamst_key_rate(0.1, 1e-5, 1100, s)
    trees, windows = [], []
    for workers in (1, 2, 3):
        monkeypatch.setattr(threads, "thread_count", lambda workers=workers: workers)
        trees.append(fp.fast_pamst(W, rho=0.1, sensitivity=1e-5, rng=4, noise=noise).edges)
        win = topwin.top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
        as_graph(W, window=win)
        top, length = int(win.state[topwin.WIN_TOP]), int(win.state[topwin.WIN_BINS])
        windows.append((win.state.tolist(), win.ring[np.arange(top - length + 1, top + 1) & 1023].tolist()))
    assert windows[0][0][topwin.WIN_COMPLETE] == 1 and sum(windows[0][1]) > 0
    assert windows[1] == windows[0] and windows[2] == windows[0]
    assert np.array_equal(trees[0], trees[1]) and np.array_equal(trees[0], trees[2])
