"""The baselines: PAMST and Gaussian post-processing (calibration, exact laws, seeding).

The output laws are checked against exact probabilities from ``naive`` (docs/design.rst,
How exactness is tested): 20,000 seeded runs, Pearson chi-square, fail at p < 1e-4. Each law
test also checks that the same samples *reject* a mis-calibrated law, so a
test that has no power to tell the calibrations apart cannot pass silently.
"""

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb.baselines import noisy_csr, pamst_csr, pamst_state
from fastpamst_nb.graph import as_graph
from fastpamst_nb.prim import prim_csr_exact
from fastpamst_nb.baselines import EXPONENTIAL, GUMBEL

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import naive
except ImportError:  # tests/ became a package, or --import-mode=importlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import naive

N_RUNS = 20_000
P_FAIL = 1e-4


def random_symmetric(rng, n, low=0.1, high=1.0):
    W = np.triu(rng.uniform(low, high, size=(n, n)), 1)
    return W + W.T


def sparse_with_diagonal(rng, n, p):
    """Symmetric connected CSR with a stored diagonal (which must not count as edges)."""
    mask = np.triu(rng.random((n, n)) < p, 1)
    mask[np.arange(n - 1), np.arange(1, n)] = True  # spanning path
    mask = mask | mask.T
    W = np.where(mask, random_symmetric(rng, n), 0.0)
    np.fill_diagonal(W, 1.0)
    return sp.csr_matrix(W)


# ---------------------------------------------------------------------------
# calibration (docs/design.rst, Calibration): compared with naive's independent restatement
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
@pytest.mark.parametrize("n, rho, delta_w", [(2, 1.0, 1.0), (10, 0.1, 1e-5), (57, 3.7, 0.25)])
@pytest.mark.parametrize("sparse", [False, True])
def test_pamst_rate(noise, n, rho, delta_w, sparse):
    W = random_symmetric(np.random.default_rng(n), n)
    tree = fp.pamst(sp.csr_matrix(W) if sparse else W, rho, delta_w, rng=0, noise=noise)
    expected = naive.exp_calibration(rho, delta_w, n, noise=noise, algorithm="pamst")
    assert tree.info["rate"] == pytest.approx(expected, rel=1e-15, abs=0)
    assert tree.info["rho"] == rho and tree.info["sensitivity"] == delta_w
    assert tree.info["noise"] == noise


def test_gumbel_rate_is_twice_the_exponential_rate():
    W = random_symmetric(np.random.default_rng(0), 12)
    exp = fp.pamst(W, 0.5, 0.1, rng=0, noise="exponential").info["rate"]
    gum = fp.pamst(W, 0.5, 0.1, rng=0, noise="gumbel").info["rate"]
    assert gum == pytest.approx(2 * exp, rel=1e-15)


@pytest.mark.parametrize("s", [None, 1e-3, 0.3])
@pytest.mark.parametrize("n, rho, delta_w", [(2, 1.0, 1.0), (10, 0.1, 1e-5), (57, 3.7, 0.25)])
def test_fast_pamst_rate(s, n, rho, delta_w):
    W = random_symmetric(np.random.default_rng(n), n)
    tree = fp.fast_pamst(W, rho, delta_w, rng=0, discretization=s, noise="exponential")
    expected = naive.exp_calibration(rho, delta_w, n, s=s, algorithm="fast_pamst")
    assert tree.info["rate"] == pytest.approx(expected, rel=1e-15, abs=0)
    assert tree.info["discretization"] == (naive.default_step(delta_w) if s is None else s)


@pytest.mark.parametrize("n, rho, delta_w", [(2, 1.0, 1.0), (10, 0.1, 1e-5), (57, 3.7, 0.25)])
def test_fast_pamst_gumbel_rate(n, rho, delta_w):
    # the exponential mechanism on the raw weights: sqrt(8 rho / (n - 1)) / (2 Delta)
    W = random_symmetric(np.random.default_rng(n), n)
    tree = fp.fast_pamst(W, rho, delta_w, rng=0, noise="gumbel")
    expected = naive.exp_calibration(rho, delta_w, n, noise="gumbel", algorithm="pamst")
    assert tree.info["rate"] == pytest.approx(expected, rel=1e-15, abs=0)
    assert "discretization" not in tree.info


@pytest.mark.parametrize("n, rho, delta_w", [(2, 1.0, 1.0), (10, 0.1, 1e-5), (57, 3.7, 0.25)])
def test_post_processing_sigma_dense(n, rho, delta_w):
    W = random_symmetric(np.random.default_rng(n), n)
    tree = fp.post_processing(W, rho, delta_w, rng=0)
    m = n * (n - 1) // 2
    assert tree.info["sigma"] == pytest.approx(naive.gaussian_sigma(rho, delta_w, m), rel=1e-15, abs=0)
    # not the paper's sqrt(n^2 Delta / (2 rho)) (docs/errata.rst, erratum 2)
    assert tree.info["sigma"] != pytest.approx(fp.privacy.paper_gaussian_sigma(rho, delta_w, n), rel=1e-3)


@pytest.mark.parametrize("n, p", [(5, 0.5), (40, 0.1), (100, 0.03)])
def test_post_processing_sigma_sparse_counts_stored_edges(n, p):
    A = sparse_with_diagonal(np.random.default_rng(n), n, p)
    m = (A.nnz - n) // 2  # the stored diagonal is not an edge
    assert m < n * (n - 1) // 2
    tree = fp.post_processing(A, 0.7, 0.01, rng=0)
    assert tree.info["sigma"] == pytest.approx(naive.gaussian_sigma(0.7, 0.01, m), rel=1e-15, abs=0)


# ---------------------------------------------------------------------------
# PAMST: the released sequence follows the exact law
# ---------------------------------------------------------------------------

W4 = np.array([[0.0, 1.0, 2.0, 3.5],
               [1.0, 0.0, 1.5, 2.5],
               [2.0, 1.5, 0.0, 0.5],
               [3.5, 2.5, 0.5, 0.0]])
W5_TIES = np.array([[0, 1, 2, 2, 3],
                    [1, 0, 1, 3, 2],
                    [2, 1, 0, 1, 2],
                    [2, 3, 1, 0, 1],
                    [3, 2, 2, 1, 0]], dtype=np.float64)


def _sparse5():
    """A 5-cycle plus the chord (1, 3); (2, 3) is an explicit zero."""
    edges = {(0, 1): 1.0, (1, 2): 0.5, (2, 3): 0.0, (3, 4): 1.5, (0, 4): 0.75, (1, 3): 1.25}
    rows, cols, vals = [], [], []
    for (a, b), w in edges.items():
        rows += [a, b]
        cols += [b, a]
        vals += [w, w]
    return sp.csr_matrix((vals, (rows, cols)), shape=(5, 5))


# (weights, start, maximum, rho, sensitivity): rates chosen so that several
# sequences have sizable probability (checked by the test itself).
PAMST_CONFIGS = {
    "n4-distinct": (W4, 0, False, 1.0, 0.5),
    "n5-ties": (W5_TIES, 0, False, 1.0, 0.25),
    "n5-sparse": (_sparse5(), 2, False, 1.0, 0.25),
    "n4-maximum": (W4, 1, True, 1.0, 0.5),
}


def sequence_law(weights, start, maximum, lam, noise):
    """Exact law of PAMST's released sequence, from naive's enumeration of Prim."""
    if sp.issparse(weights):
        W = weights.toarray()
        coo = sp.coo_matrix(weights)
        adjacency = np.zeros(weights.shape, dtype=bool)
        adjacency[coo.row, coo.col] = True  # stored entries, explicit zeros included
    else:
        W, adjacency = weights, None
    sign = 1.0 if maximum else -1.0
    probs = naive.rnm_exp_probs if noise == "exponential" else naive.softmax_probs
    return naive.prim_sequence_distribution(W, adjacency, start, lambda w: probs(sign * w, lam))


def sample_counts(draw, n_runs=N_RUNS, seed=0):
    """Counts of released edge sequences over n_runs calls sharing one Generator."""
    gen = np.random.default_rng(seed)
    counts = Counter()
    for _ in range(n_runs):
        counts[tuple(map(tuple, draw(gen).tolist()))] += 1
    return counts


def pamst_sampler(weights, rho, delta_w, start, noise, maximum, lam):
    """draw(gen) -> edges of one PAMST run.

    Sparse validation costs ~1 ms of scipy overhead per call, so for sparse input
    the CSR kernel is called on the once-validated graph; the test first checks
    that this gives bit-identical output to the public function.
    """
    def public(gen):
        return fp.pamst(weights, rho, delta_w, rng=gen, start=start, noise=noise, maximum=maximum).edges

    if not sp.issparse(weights):
        return public
    g = as_graph(weights)
    kind = EXPONENTIAL if noise == "exponential" else GUMBEL
    sgn = 1.0 if maximum else -1.0

    def kernel(gen):
        st = pamst_state(g.n, start)
        pamst_csr(g.indptr, g.indices, g.data, sgn, kind, lam, gen, st, g.n - 1)
        return st.edges

    for seed in range(50):
        np.testing.assert_array_equal(kernel(np.random.default_rng(seed)), public(seed))
    return kernel


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
@pytest.mark.parametrize("config", list(PAMST_CONFIGS))
@pytest.mark.slow_python
def test_pamst_sequence_law(config, noise):
    weights, start, maximum, rho, delta_w = PAMST_CONFIGS[config]
    n = weights.shape[0]
    lam = naive.exp_calibration(rho, delta_w, n, noise=noise, algorithm="pamst")
    law = sequence_law(weights, start, maximum, lam, noise)
    big = sorted(law.values(), reverse=True)
    assert big[0] < 0.8 and sum(p >= 0.01 for p in big) >= 5, "config is too concentrated to test"

    counts = sample_counts(pamst_sampler(weights, rho, delta_w, start, noise, maximum, lam))
    pvalue, stat, dof = naive.chisquare_pvalue(counts, law, N_RUNS)
    assert pvalue >= P_FAIL, f"chi2 = {stat:.1f} on {dof} dof"
    # power: the same samples reject the law of half / twice the rate
    for wrong in (lam / 2, lam * 2):
        p_wrong, _, _ = naive.chisquare_pvalue(counts, sequence_law(weights, start, maximum, wrong, noise),
                                               N_RUNS)
        assert p_wrong < P_FAIL


# ---------------------------------------------------------------------------
# post-processing: the released tree of a triangle follows the exact law
# ---------------------------------------------------------------------------

TRIANGLE = (1.0, 1.3, 1.7)  # w01, w02, w12


def triangle(sparse):
    w01, w02, w12 = TRIANGLE
    W = np.array([[0.0, w01, w02], [w01, 0.0, w12], [w02, w12, 0.0]])
    return sp.csr_matrix(W) if sparse else W


def post_processing_sampler(weights, rho, delta_w, maximum, sigma):
    """draw(gen) -> edges of one post-processing run (CSR kernels for sparse input, as above)."""
    def public(gen):
        return fp.post_processing(weights, rho, delta_w, rng=gen, maximum=maximum).edges

    if not sp.issparse(weights):
        return public
    g = as_graph(weights)
    sgn = 1.0 if maximum else -1.0

    def kernel(gen):
        noisy = noisy_csr(g.indptr, g.indices, g.data, g.wmax if maximum else g.wmin, sigma, gen)
        return prim_csr_exact(g.indptr, g.indices, noisy, 0, sgn)[0]

    for seed in range(50):
        np.testing.assert_array_equal(kernel(np.random.default_rng(seed)), public(seed))
    return kernel


@pytest.mark.parametrize("maximum", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.slow_python
def test_post_processing_triangle_law(sparse, maximum):
    rho, delta_w = 1.0, 0.4
    sigma = naive.gaussian_sigma(rho, delta_w, 3)  # ~0.49: all three trees are likely
    sign = -1.0 if maximum else 1.0  # a maximum tree of w is a minimum tree of -w
    law = naive.post_processing_triangle_probs(*(sign * w for w in TRIANGLE), sigma)
    assert min(law.values()) > 0.05

    draw = post_processing_sampler(triangle(sparse), rho, delta_w, maximum, sigma)
    gen = np.random.default_rng(1)
    counts = Counter()
    for _ in range(N_RUNS):
        counts[frozenset((min(a, b), max(a, b)) for a, b in draw(gen).tolist())] += 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, law, N_RUNS)
    assert pvalue >= P_FAIL, f"chi2 = {stat:.1f} on {dof} dof"
    # power: the paper's n^2 calibration (sigma sqrt(3) larger here) is rejected
    wrong = naive.post_processing_triangle_probs(*(sign * w for w in TRIANGLE), sigma * math.sqrt(3))
    assert naive.chisquare_pvalue(counts, wrong, N_RUNS)[0] < P_FAIL


# ---------------------------------------------------------------------------
# a constant offset of every weight must not change any law (docs/errata.rst, erratum 5)
# ---------------------------------------------------------------------------

# 1e12 lies in [2**39, 2**40), where floats are spaced 2**-13: these weights are exact
OFFSET = 1e12
ULP = 2.0 ** -13


def _offset(W, scale):
    """Off-diagonal entries scale * W + 1e12, exactly (scale * W is a multiple of ULP)."""
    out = W * scale + OFFSET
    np.fill_diagonal(out, 0.0)
    assert np.array_equal(out - OFFSET + np.eye(len(W)) * OFFSET, W * scale)
    return out


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.slow_python
def test_pamst_law_ignores_a_1e12_offset(noise, sparse):
    # noise of scale ~ULP added to raw scores near 1e12 is rounded to the float grid
    # and ties fall to scan order: the old kernel failed this with p = 0
    scale = 2 * ULP  # W4's entries are multiples of 0.5
    W = _offset(W4, scale)
    rho, delta_w = 1.0, 0.5 * scale
    lam = naive.exp_calibration(rho, delta_w, 4, noise=noise, algorithm="pamst")
    law = sequence_law(W4 * scale, 0, False, lam, noise)
    weights = sp.csr_matrix(W) if sparse else W
    counts = sample_counts(pamst_sampler(weights, rho, delta_w, 0, noise, False, lam))
    pvalue, stat, dof = naive.chisquare_pvalue(counts, law, N_RUNS)
    assert dof >= 4 and pvalue >= P_FAIL, f"chi2 = {stat:.1f} on {dof} dof"


@pytest.mark.parametrize("maximum", [False, True])
@pytest.mark.slow_python
def test_post_processing_law_ignores_a_1e12_offset(maximum):
    w = (8 * ULP, 10 * ULP, 13 * ULP)
    W = _offset(np.array([[0, w[0], w[1]], [w[0], 0, w[2]], [w[1], w[2], 0]]) / ULP, ULP)
    rho, delta_w = 1.0, ULP
    sigma = naive.gaussian_sigma(rho, delta_w, 3)  # 1.2 ULP: the old sums were rounded to ULP
    sign = -1.0 if maximum else 1.0
    law = naive.post_processing_triangle_probs(*(sign * x for x in w), sigma)
    gen = np.random.default_rng(2)
    counts = Counter()
    for _ in range(N_RUNS):
        edges = fp.post_processing(W, rho, delta_w, rng=gen, maximum=maximum).edges
        counts[frozenset((min(a, b), max(a, b)) for a, b in edges.tolist())] += 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, law, N_RUNS)
    assert pvalue >= P_FAIL, f"chi2 = {stat:.1f} on {dof} dof"


# ---------------------------------------------------------------------------
# seeding (SPEC 7)
# ---------------------------------------------------------------------------

PRIVATE = {
    "pamst": lambda W, rng: fp.pamst(W, 0.05, 0.1, rng=rng),
    "pamst-gumbel": lambda W, rng: fp.pamst(W, 0.05, 0.1, rng=rng, noise="gumbel"),
    "post_processing": lambda W, rng: fp.post_processing(W, 0.05, 0.01, rng=rng),
    "fast_pamst": lambda W, rng: fp.fast_pamst(W, 0.05, 0.1, rng=rng),
}


@pytest.fixture(params=[False, True], ids=["dense", "sparse"])
def noisy_graph(request):
    W = random_symmetric(np.random.default_rng(3), 30)
    return sp.csr_matrix(W) if request.param else W


@pytest.mark.parametrize("algo", list(PRIVATE))
def test_same_seed_same_tree(algo, noisy_graph):
    f = PRIVATE[algo]
    for seed in (0, 12345):
        a, b = f(noisy_graph, seed), f(noisy_graph, seed)
        np.testing.assert_array_equal(a.edges, b.edges)
        # an int seed and a fresh Generator from that seed are the same stream
        np.testing.assert_array_equal(a.edges, f(noisy_graph, np.random.default_rng(seed)).edges)


@pytest.mark.parametrize("algo", list(PRIVATE))
def test_different_seeds_differ(algo, noisy_graph):
    f = PRIVATE[algo]
    trees = {f(noisy_graph, seed).edges.tobytes() for seed in range(10)}
    assert len(trees) >= 8  # at this noise level, collisions are rare


@pytest.mark.parametrize("algo", list(PRIVATE))
def test_generator_advances(algo, noisy_graph):
    f = PRIVATE[algo]
    gen = np.random.default_rng(7)
    state = gen.bit_generator.state
    first = f(noisy_graph, gen)
    assert gen.bit_generator.state != state, "the caller's Generator was not used"
    second = f(noisy_graph, gen)
    assert not np.array_equal(first.edges, second.edges)
    # replaying the stream reproduces both calls
    replay = np.random.default_rng(7)
    np.testing.assert_array_equal(f(noisy_graph, replay).edges, first.edges)
    np.testing.assert_array_equal(f(noisy_graph, replay).edges, second.edges)


@pytest.mark.parametrize("algo", list(PRIVATE))
def test_rng_none(algo, noisy_graph):
    tree = PRIVATE[algo](noisy_graph, None)
    assert tree.edges.shape == (29, 2)
    assert set(tree.edges.ravel().tolist()) == set(range(30))


# ---------------------------------------------------------------------------
# no noise in the limit: a huge budget gives the exact tree
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("maximum", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
def test_pamst_huge_budget_is_exact(noise, sparse, maximum):
    rng = np.random.default_rng(21)
    W = sparse_with_diagonal(rng, 50, 0.3) if sparse else random_symmetric(rng, 50)
    exact = fp.exact_mst(W, maximum=maximum)
    tree = fp.pamst(W, 1e12, 1e-9, rng=0, noise=noise, maximum=maximum)
    assert tree.weight == pytest.approx(exact.weight, rel=1e-12)
    assert fp.excess_weight(W, tree) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("maximum", [False, True])
def test_post_processing_huge_budget_is_exact(maximum):
    W = random_symmetric(np.random.default_rng(22), 50)
    tree = fp.post_processing(W, 1e12, 1e-9, rng=0, maximum=maximum)
    assert tree.weight == pytest.approx(fp.exact_mst(W, maximum=maximum).weight, rel=1e-12)


def test_pamst_small_budget_is_not_exact():
    # the counterpart: with real noise PAMST must not simply return the MST
    W = random_symmetric(np.random.default_rng(23), 50)
    excess = [fp.excess_weight(W, fp.pamst(W, 0.01, 0.1, rng=seed)) for seed in range(5)]
    assert min(excess) > 0.0


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the true weight sums to inf
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("maximum", [False, True])
def test_post_processing_overflowing_noise_never_gives_an_invalid_tree(maximum, sparse):
    # finite weights near the float64 limit: W + N(0, sigma^2) overflows to +-inf,
    # and a score of -inf must still make a vertex reachable
    W = np.full((4, 4), 1.7e308)
    np.fill_diagonal(W, 0.0)
    W = -W if maximum else W
    W = sp.csr_matrix(W) if sparse else W
    for seed in range(10):
        try:
            tree = fp.post_processing(W, 1e-3, 1e306, rng=seed, maximum=maximum)
        except ValueError:
            continue  # refusing such input would be fine too
        seen = {0}
        for a, b in tree.edges.tolist():
            assert a in seen and b not in seen, tree.edges.tolist()
            seen.add(b)
