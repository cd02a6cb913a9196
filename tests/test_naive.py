"""Tests of the reference implementations in ``naive.py`` themselves.

The fast kernels are only as trustworthy as these references, so each one is
checked against an independent source: scipy / networkx for exact MSTs,
closed forms and literal quadratures for the selection laws, and seeded
Monte Carlo for anything stochastic.
"""

import math
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy import integrate
from scipy.sparse.csgraph import minimum_spanning_tree

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import naive
except ImportError:  # tests/ became a package, or --import-mode=importlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import naive


MC_DRAWS = 200_000
N_SE = 5.0  # Monte Carlo tolerance, in standard errors


def assert_mc_close(samples, probs, n_se=N_SE):
    """Empirical frequencies of ``samples`` match ``probs`` within n_se SEs."""
    probs = np.clip(np.asarray(probs), 0.0, 1.0)  # 1 + 1e-16 would give nan
    freq = np.bincount(samples, minlength=probs.size) / samples.size
    se = np.sqrt(probs * (1 - probs) / samples.size)
    # The 1e-12 floor keeps a probability-0 category from demanding exact 0.
    assert np.all(np.abs(freq - probs) <= n_se * se + 1e-12), (freq, probs)


def random_symmetric(rng, n, low=0.1, high=1.0):
    W = rng.uniform(low, high, size=(n, n))
    W = np.triu(W, 1)
    return W + W.T


def random_connected_mask(rng, n, p):
    """Random symmetric adjacency that contains a random spanning path."""
    mask = np.triu(rng.random((n, n)) < p, 1)
    order = rng.permutation(n)
    mask[order[:-1], order[1:]] = True
    mask = mask | mask.T
    np.fill_diagonal(mask, False)
    return mask


def assert_valid_prim_order(edges, n, start, mask=None):
    """Each edge joins the current tree to a new vertex, covering all n."""
    seen = {start}
    for a, b in edges:
        a, b = int(a), int(b)
        assert a in seen and b not in seen
        if mask is not None:
            assert mask[a, b]
        seen.add(b)
    assert len(seen) == n


def to_nx(W, mask):
    G = nx.Graph()
    G.add_nodes_from(range(W.shape[0]))
    for a, b in zip(*np.nonzero(np.triu(mask, 1))):
        G.add_edge(int(a), int(b), weight=float(W[a, b]))
    return G


# ---------------------------------------------------------------------------
# prim_mst
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 7, 20, 41])
def test_prim_mst_matches_scipy_dense(n):
    rng = np.random.default_rng(n)
    for trial in range(5):
        # Strictly positive weights: scipy reads a 0 as "no edge".
        W = random_symmetric(rng, n)
        start = int(rng.integers(n))
        edges, weight = naive.prim_mst(W, start=start)
        assert edges.shape == (n - 1, 2) and edges.dtype == np.int64
        assert_valid_prim_order(edges, n, start)
        ref = minimum_spanning_tree(W).sum()
        assert weight == pytest.approx(ref, rel=1e-12, abs=1e-12)
        assert weight == pytest.approx(W[edges[:, 0], edges[:, 1]].sum(), rel=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_prim_mst_matches_networkx_ties_negative_sparse(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 16))
    # Few distinct integer values: many ties, and negative weights.
    W = rng.integers(-3, 3, size=(n, n)).astype(float)
    W = np.triu(W, 1)
    W = W + W.T
    mask = random_connected_mask(rng, n, p=0.4) if seed % 2 else None
    full = mask if mask is not None else ~np.eye(n, dtype=bool)
    start = int(rng.integers(n))
    edges, weight = naive.prim_mst(W, adjacency=mask, start=start)
    assert_valid_prim_order(edges, n, start, full)
    T = nx.minimum_spanning_tree(to_nx(W, full))
    assert weight == T.size(weight="weight")


def test_prim_mst_small_and_errors():
    edges, weight = naive.prim_mst(np.zeros((1, 1)))
    assert edges.shape == (0, 2) and weight == 0.0
    W = np.ones((4, 4))
    mask = np.zeros((4, 4), dtype=bool)
    mask[0, 1] = mask[1, 0] = mask[2, 3] = mask[3, 2] = True
    with pytest.raises(ValueError, match="disconnected"):
        naive.prim_mst(W, adjacency=mask)
    # An existing edge of infinite weight still connects the graph.
    W = np.array([[0, np.inf], [np.inf, 0]])
    edges, weight = naive.prim_mst(W)
    assert edges.tolist() == [[0, 1]] and weight == np.inf


# ---------------------------------------------------------------------------
# rnm_exp_probs / softmax_probs / brute_force_rnm
# ---------------------------------------------------------------------------

def literal_rnm_prob(scores, lam, i):
    """The exact-probability formula of docs/design.rst integrated in z directly (no substitution).

    Independent of naive's change of variables: split at every kink
    z = s_j - s_i > 0 and stop at T = last kink + 60/lam; the integrand is
    below lam e^{-lam z}, so the dropped tail is under e^{-60} ~ 1e-26.
    """
    s = np.asarray(scores, dtype=float)
    others = np.delete(s, i)
    F = lambda x: np.where(x > 0, -np.expm1(-lam * np.maximum(x, 0)), 0.0)
    f = lambda z: lam * math.exp(-lam * z) * float(np.prod(F(s[i] + z - others)))
    kinks = sorted({float(k) for k in others - s[i] if k > 0})
    T = (kinks[-1] if kinks else 0.0) + 60.0 / lam  # tail mass e^{-60}
    grid = [0.0] + kinks + [T]
    total = 0.0
    for lo, hi in zip(grid[:-1], grid[1:]):
        total += integrate.quad(f, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
    return total


RNM_CASES = [
    ([0.0, -0.3, -1.0, -1.0, 0.2], 2.0),
    ([1.0, 1.0, 1.0], 0.7),
    ([5.0, 0.0, -0.1, 4.9, 5.0, -2.0], 3.0),
    ([0.0], 1.0),
    ([0.1, 0.2], 10.0),
]


@pytest.mark.parametrize("scores,lam", RNM_CASES)
def test_rnm_exp_probs_matches_literal_integral(scores, lam):
    p = naive.rnm_exp_probs(scores, lam)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    for i in range(len(scores)):
        assert p[i] == pytest.approx(literal_rnm_prob(scores, lam, i), abs=1e-10)


@pytest.mark.parametrize("a,b,lam", [(0.0, 0.0, 1.0), (1.0, 0.3, 2.5),
                                     (3.0, -4.0, 0.9), (-0.2, -0.2001, 50.0)])
def test_rnm_exp_probs_two_element_closed_form(a, b, lam):
    # b wins only if its noise exceeds a's by more than a-b; by memorylessness
    # that is P(Z_b > a-b) * P(Z_b - (a-b) > Z_a) = e^{-lam(a-b)} / 2.
    p = naive.rnm_exp_probs([a, b], lam)
    q = 0.5 * math.exp(-lam * (a - b))
    assert abs(p[1] - q) < 1e-10
    assert abs(p[0] - (1 - q)) < 1e-10


def test_rnm_exp_probs_ties_and_extremes():
    p = naive.rnm_exp_probs([0.3, -1.0, 0.3, 0.3, -1.0, -5.0], 1.7)
    assert p[0] == p[2] == p[3]
    assert p[1] == p[4]
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # Gaps of thousands of noise scales: no overflow (underflow to 0 is the
    # right answer there), far entries get ~0.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        p = naive.rnm_exp_probs([0.0, -1000.0, 0.0, -3000.0], 5.0)
    assert p[0] == pytest.approx(0.5, abs=1e-15) and p[2] == p[0]
    assert p[1] < 1e-300 and p[3] == 0.0


@pytest.mark.parametrize("scores,lam", [
    ([0.0, -0.3, -1.0, -1.0, 0.2], 2.0),
    ([2.0, 2.0, 1.5, 0.0], 1.0),
])
def test_rnm_exp_probs_monte_carlo(scores, lam):
    rng = np.random.default_rng(12345)
    samples = naive.brute_force_rnm(scores, lam, rng, size=MC_DRAWS)
    assert_mc_close(samples, naive.rnm_exp_probs(scores, lam))


def test_softmax_probs_monte_carlo_gumbel():
    scores, lam = np.array([0.0, -0.3, -1.0, -1.0, 0.2, 0.2]), 2.0
    p = naive.softmax_probs(scores, lam)
    assert p.sum() == pytest.approx(1.0, abs=1e-15)
    assert p[4] == p[5] and p[2] == p[3]
    rng = np.random.default_rng(777)
    samples = naive.brute_force_rnm(scores, lam, rng, noise="gumbel", size=MC_DRAWS)
    assert_mc_close(samples, p)


def test_softmax_probs_stable():
    p = naive.softmax_probs([1e6, 1e6 - 1.0, -1e6], 1.0)
    assert np.all(np.isfinite(p))
    assert p[0] / p[1] == pytest.approx(math.e, rel=1e-12)


def test_brute_force_rnm_scalar():
    rng = np.random.default_rng(0)
    out = naive.brute_force_rnm([0.0, 1.0, 0.5], 3.0, rng)
    assert isinstance(out, int) and 0 <= out < 3
    # A huge gap makes the winner deterministic in practice.
    assert naive.brute_force_rnm([0.0, 1e9], 1.0, rng, noise="gumbel") == 1
    with pytest.raises(ValueError):
        naive.brute_force_rnm([0.0], 1.0, rng, noise="laplace")


# ---------------------------------------------------------------------------
# prim_sequence_distribution / tree_set_distribution
# ---------------------------------------------------------------------------

def exp_step(lam):
    return lambda w: naive.rnm_exp_probs(-w, lam)


def soft_step(lam):
    return lambda w: naive.softmax_probs(-w, lam)


def argmin_step(w):
    p = np.zeros(w.size)
    p[np.argmin(w)] = 1.0
    return p


def sparse_5_mask():
    # A 5-cycle plus one chord: several spanning trees, not complete.
    mask = np.zeros((5, 5), dtype=bool)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)]:
        mask[a, b] = mask[b, a] = True
    return mask


@pytest.mark.parametrize("step", [exp_step(3.0), soft_step(3.0)])
@pytest.mark.parametrize("sparse", [False, True])
def test_prim_sequence_distribution_sums_to_one(step, sparse):
    rng = np.random.default_rng(5)
    W = random_symmetric(rng, 5)
    W[0, 3] = W[3, 0] = W[1, 2] = W[2, 1] = W[0, 1]  # ties
    mask = sparse_5_mask() if sparse else None
    dist = naive.prim_sequence_distribution(W, mask, 2, step)
    assert sum(dist.values()) == pytest.approx(1.0, abs=1e-12)
    full = mask if sparse else ~np.eye(5, dtype=bool)
    for seq in dist:
        assert_valid_prim_order(seq, 5, 2, full)
    if not sparse:
        # Every Prim order from a fixed start: (n-1)! vertex orders, and for
        # the k-th new vertex k possible parents -> (n-1)! * (n-1)! sequences.
        assert len(dist) == math.factorial(4) ** 2
    trees = naive.tree_set_distribution(dist)
    assert sum(trees.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(len(t) == 4 and all(a < b for a, b in t) for t in trees)
    if not sparse:
        assert len(trees) == 5 ** 3  # Cayley: n^(n-2) labelled trees


def test_prim_sequence_distribution_deterministic_is_exact_prim():
    rng = np.random.default_rng(11)
    for mask in (None, sparse_5_mask()):
        W = random_symmetric(rng, 5)  # continuous weights: no ties
        dist = naive.prim_sequence_distribution(W, mask, 0, argmin_step)
        edges, _ = naive.prim_mst(W, adjacency=mask, start=0)
        assert dist == {tuple(map(tuple, edges.tolist())): 1.0}


def test_prim_sequence_distribution_disconnected():
    mask = np.zeros((3, 3), dtype=bool)
    mask[0, 1] = mask[1, 0] = True
    with pytest.raises(ValueError, match="disconnected"):
        naive.prim_sequence_distribution(np.ones((3, 3)), mask, 0, soft_step(1.0))


def test_prim_sequence_distribution_vs_simulated_private_prim():
    """End to end: literal private Prim runs vs the enumerated law."""
    rng = np.random.default_rng(2024)
    n, lam, n_runs = 4, 4.0, 20_000
    W = random_symmetric(rng, n)
    dist = naive.prim_sequence_distribution(W, None, 0, exp_step(lam))
    counts = {}
    for _ in range(n_runs):
        visited, seq = {0}, []
        while len(visited) < n:
            cands = sorted((a, b) for a in visited for b in range(n)
                           if b not in visited)
            w = np.array([W[a, b] for a, b in cands])
            a, b = cands[naive.brute_force_rnm(-w, lam, rng)]
            seq.append((a, b))
            visited.add(b)
        counts[tuple(seq)] = counts.get(tuple(seq), 0) + 1
    pvalue, _, dof = naive.chisquare_pvalue(counts, dist, n_runs)
    assert dof > 10
    assert pvalue > 1e-4


# ---------------------------------------------------------------------------
# chisquare_pvalue
# ---------------------------------------------------------------------------

def sample_counts(rng, probs, n_runs):
    keys = list(probs)
    draws = rng.multinomial(n_runs, [probs[k] for k in keys])
    return {k: int(c) for k, c in zip(keys, draws) if c}


def geometric_probs(k=40, r=0.8):
    """Many categories, the tail well below 5 expected counts (pooling)."""
    p = r ** np.arange(k)
    p /= p.sum()
    return {f"c{i}": float(v) for i, v in enumerate(p)}


def test_chisquare_accepts_correct_distribution():
    rng = np.random.default_rng(99)
    probs = geometric_probs()
    pvalue, stat, dof = naive.chisquare_pvalue(sample_counts(rng, probs, 20_000),
                                               probs, 20_000)
    assert pvalue > 1e-4
    assert np.isfinite(stat)
    # Categories with expected count >= 5, plus one pooled tail.
    n_big = sum(20_000 * p >= 5 for p in probs.values())
    assert dof == n_big


def test_chisquare_rejects_wrong_distribution():
    rng = np.random.default_rng(99)
    probs = geometric_probs()
    wrong = geometric_probs(r=0.78)  # a visibly different decay
    pvalue, _, _ = naive.chisquare_pvalue(sample_counts(rng, wrong, 20_000),
                                          probs, 20_000)
    assert pvalue < 1e-4


def test_chisquare_impossible_key_is_zero():
    probs = {"a": 0.5, "b": 0.5}
    assert naive.chisquare_pvalue({"a": 10, "b": 9, "z": 1}, probs, 20)[0] == 0.0
    assert naive.chisquare_pvalue({"a": 10, "b": 10, "z": 0}, probs, 20)[0] > 0.0
    probs0 = {"a": 0.5, "b": 0.5, "c": 0.0}
    assert naive.chisquare_pvalue({"a": 10, "b": 9, "c": 1}, probs0, 20)[0] == 0.0


def test_chisquare_pooling_edge_cases_and_validation():
    # The small categories together stay below 5: merged into the smallest
    # remaining one, so 2 categories remain.
    probs = {"a": 0.6, "b": 0.3998, "c": 0.0001, "d": 0.0001}
    _, _, dof = naive.chisquare_pvalue({"a": 600, "b": 400}, probs, 1000)
    assert dof == 1
    with pytest.raises(ValueError):
        naive.chisquare_pvalue({"a": 1}, {"a": 0.5, "b": 0.4}, 1)
    with pytest.raises(ValueError):
        naive.chisquare_pvalue({"a": 1}, {"a": 0.5, "b": 0.5}, 2)


# ---------------------------------------------------------------------------
# post_processing_triangle_probs
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("w,sigma", [((0.2, 0.5, 0.3), 0.4),
                                     ((1.0, 1.0, 0.0), 0.7),
                                     ((0.0, 0.15, 0.1), 0.05),
                                     ((0.0, 2.0, 0.1), 0.05)])
def test_post_processing_triangle_probs(w, sigma):
    probs = naive.post_processing_triangle_probs(*w, sigma)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    edges = [(0, 1), (0, 2), (1, 2)]
    # Index by the dropped edge to compare with the simulation.
    p_drop = np.array([probs[frozenset(set(edges) - {e})] for e in edges])
    rng = np.random.default_rng(31)
    noisy = np.asarray(w) + rng.normal(0.0, sigma, size=(MC_DRAWS, 3))
    assert_mc_close(np.argmax(noisy, axis=1), p_drop)
    # The exact MST of each noisy triangle drops the same edge.
    for row in noisy[:20]:
        W = np.zeros((3, 3))
        for (a, b), x in zip(edges, row):
            W[a, b] = W[b, a] = x
        tree, _ = naive.prim_mst(W)
        kept = {tuple(sorted(map(int, e))) for e in tree}
        assert set(edges) - kept == {edges[int(np.argmax(row))]}


# ---------------------------------------------------------------------------
# discretized_scores / calibration
# ---------------------------------------------------------------------------

def test_discretized_scores():
    w = np.array([0.0, 0.25, 0.3, 1.0, -0.25])
    np.testing.assert_array_equal(naive.discretized_scores(w, 0.25),
                                  [0.0, -0.25, -0.5, -1.0, 0.25])
    np.testing.assert_array_equal(naive.discretized_scores(w, 0.25, maximum=True),
                                  [0.0, 0.25, 0.25, 1.0, -0.25])
    w = np.random.default_rng(1).random(1000)
    s = 1e-5
    out = naive.discretized_scores(w, s)
    np.testing.assert_array_equal(out, s * np.floor(-w / s))
    assert np.all(out <= -w + 1e-15) and np.all(out > -w - s - 1e-15)


def test_calibration():
    rho, d, n, m = 0.1, 1e-5, 301, 45150
    base = math.sqrt(2 * rho / (n - 1))
    assert naive.exp_calibration(rho, d, n, algorithm="pamst") == pytest.approx(base / (2 * d), rel=1e-15)
    # the paper's s = Delta (not a power of two): D_s = 2 Delta
    assert naive.exp_calibration(rho, d, n, s=d) == pytest.approx(base / (4 * d), rel=1e-15)
    # the default step 2**-21 <= Delta / 16: D_s = 21 * 2**-21
    assert naive.default_step(d) == 2.0 ** -21
    assert naive.exp_calibration(rho, d, n) == pytest.approx(base / (2 * 21 * 2.0 ** -21), rel=1e-15)
    # s not a power of two: D_s = s * ceil(Delta/s + 1/2), i.e. 3d * ceil(1/3 + 1/2) = 3d
    assert naive.exp_calibration(rho, d, n, s=3 * d) == pytest.approx(base / (6 * d), rel=1e-15)
    # s a power of two: D_s = s * ceil(Delta/s): Delta itself when s divides it ...
    d2 = 2.0 ** -10
    assert naive.exp_calibration(rho, d2, n) == pytest.approx(base / (2 * d2), rel=1e-15)
    assert naive.exp_calibration(rho, d2, n, s=d2 / 16) == pytest.approx(base / (2 * d2), rel=1e-15)
    # ... and the next multiple of s otherwise: 0.75 -> 2 * 0.5
    assert naive.exp_calibration(rho, 0.75, n, s=0.5) == pytest.approx(base / 2.0, rel=1e-15)
    # Gumbel: eps = sqrt(8 rho_step), i.e. exactly twice the exponential rate.
    assert naive.exp_calibration(rho, d, n, s=d, noise="gumbel") == pytest.approx(base / (2 * d), rel=1e-15)
    assert naive.exp_calibration(rho, d, n, noise="gumbel", algorithm="pamst") == pytest.approx(base / d, rel=1e-15)
    assert naive.gaussian_sigma(rho, d, m) == pytest.approx(d * math.sqrt(m / (2 * rho)), rel=1e-15)
    with pytest.raises(ValueError):
        naive.exp_calibration(rho, d, n, noise="laplace")


def test_softmax_reference_is_exact_for_scores_near_2_53():
    # lam * score would round the differences away at 2**53; the reference shifts first
    base = -(2.0 ** 53)
    scores = np.array([base, base - 2.0, base - 4.0, base - 6.0])
    lam = 0.2
    want = np.exp(-lam * np.array([0.0, 2.0, 4.0, 6.0]))
    np.testing.assert_allclose(naive.softmax_probs(scores, lam), want / want.sum(), rtol=1e-14)


def test_discretized_scores_use_the_exact_floor_when_the_quotient_underflows():
    # -5e-324 / 2 rounds to -0.0; its exact floor is -1, as in keys.discretize
    from fastpamst_nb.keys import discretize, exact_inverse

    w = np.array([5e-324, 0.0, 1.0])
    assert naive.discretized_scores(w, 2.0).tolist() == [-2.0, 0.0, -2.0]
    for x in w:
        for inv in (exact_inverse(2.0), 0.0):  # a product by 1/2 and the quotient by 2
            assert naive.discretized_scores([x], 2.0)[0] == 2.0 * discretize(x, -1.0, 2.0, inv)


def test_compositions_are_every_count_vector_once():
    # stars and bars: C(total + parts - 1, parts - 1) distinct rows, each summing to total
    for total, parts in ((0, 3), (4, 1), (5, 3), (6, 4)):
        K = naive.compositions(total, parts)
        assert K.shape == (math.comb(total + parts - 1, parts - 1), parts)
        assert K.dtype == np.int64 and (K >= 0).all() and (K.sum(axis=1) == total).all()
        assert len({tuple(r) for r in K}) == len(K)
