"""noise="gumbel": one Gumbel per edge and an exact MST, tested against Kruskal's exact law.

The release must follow sequential Kruskal with the exponential mechanism at every step
(naive.kruskal_em_tree_distribution, the law of the edge set enumerated with a memo over
forests): chi-square over 20,000 seeded releases, failing at p < 1e-4, on dense and
sparse graphs, ties, a maximum tree, a 1e12 offset and far-apart weights. The kernels'
skip test (an upper bound of each edge's Gumbel from its uniform's bits) must change
nothing: the trees equal those of the plain path (two logarithms for every edge) on
thousands of keys. The tree is the same for 1-4
threads (a subprocess with NUMBA_NUM_THREADS=4 runs the prange kernel on each count).

The dense kernels draw a step's Gumbels a block of ranks at a time by default (the block
path, ``gumbel.block_gumbel``; ``block=False``: one Gumbel per edge, the points engine's
trees): its law is tested by the same chi-square cases (every dense release takes the
block path at every step), plus narrow and wide noise, keys near 2**53 and a ring of 12
vertices whose ranks span three blocks; its Gumbels' joint law over 32 ranks directly; its
trees against a rational Prim over its own Gumbels; its skip against its plain path.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from numba import njit
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.sparse.csgraph import minimum_spanning_tree

import fastpamst_nb as fp
from fastpamst_nb import gumbel, philox, privacy
from fastpamst_nb.api import _gumbel_graph
from fastpamst_nb.graph import as_graph

import naive

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

RUNS = 20_000
P_FAIL = 1e-4


def _sym(upper):
    W = np.asarray(upper, dtype=np.float64)
    return np.triu(W, 1) + np.triu(W, 1).T


_U = 2.0 ** -13  # the ulp of 1e12: weights 1e12 + k * _U are exact

CASES = {
    # name: (weights, lam, maximum, start)
    "dense4": (_sym([[0, 0.5, 1.0, 2.0], [0, 0, 0.2, 0.9], [0, 0, 0, 1.5], [0] * 4]), 1.5, False, 2),
    "dense5": (_sym(np.random.default_rng(7).uniform(0, 3, (5, 5))), 1.2, False, 0),
    "sparse": (naive.ring6(), 1.5, False, 0),
    "sparse-max": (naive.ring6(), 1.5, True, 3),
    "ties": (_sym(np.random.default_rng(3).integers(0, 2, (5, 5)).astype(float)), 1.0, False, 0),
    "maximum": (_sym(np.random.default_rng(8).uniform(0, 3, (5, 5))), 1.2, True, 0),
    # differences of a few ulps of 1e12, noise of scale b = 1 / lam ~ one ulp
    "offset-1e12": (1e12 + _sym(np.random.default_rng(9).integers(0, 4, (5, 5)) * _U), 1.0 / _U,
                    False, 0),
    # edges 1e6 noise units apart: the heavy ones never win (and are skipped unhashed)
    "far": (_sym([[0, 0, 1, 7, 1e6], [0, 0, 2, 6, 9e5], [0, 0, 0, 3, 8e5], [0, 0, 0, 0, 2],
                  [0] * 5]), 1.0, False, 0),
    # narrow noise (a few trees carry the mass) and wide noise (nearly every tree)
    "narrow": (_sym(np.random.default_rng(10).uniform(0, 3, (5, 5))), 4.0, False, 1),
    "wide": (_sym(np.random.default_rng(11).uniform(0, 3, (6, 6))), 0.05, True, 0),
    # keys near 2**53 (ulp 2), noise of scale 2 ulps
    "near-2**53": (2.0 ** 53 + _sym(np.random.default_rng(12).integers(0, 4, (5, 5)) * 2.0), 0.5,
                   False, 3),
}


def _ring12():
    # a ring of 12 vertices with two chords, every other edge 1e6 noise units away: the
    # ranks of a step span three blocks of the block path (two pairs), and the law is
    # still enumerable (the far edges have probability exp(-1e6) = 0 at every step)
    rng = np.random.default_rng(13)
    n = 12
    W = np.full((n, n), 1e6)
    for a, b in [(i, (i + 1) % n) for i in range(n)] + [(0, 6), (3, 9)]:
        W[a, b] = W[b, a] = rng.uniform(0, 2)
    np.fill_diagonal(W, 0.0)
    return W


CASES["ring12"] = (_ring12(), 1.0, False, 4)


#: the block path at every step (no per-step switch to the per-edge path)
NEVER = (np.inf, 0)
#: a test-only switch: every block step sends the next one to the per-edge path, so the
#: dense steps alternate block, per edge, block, ... (docs/design.rst, tenth pass)
ALTERNATE = (-1.0, 1)
#: a test-only switch driven by the data (docs/design.rst, eleventh pass): a step with any
#: uncertain relaxation (threshold above gumbel.T_SURE) sends the next step to the per-edge
#: path, and a per-edge step with one keeps it there; a step without goes back to blocks
NEAR = (np.inf, 1, 0.0)


def _release(weights, lam, maximum, start, key, plain=False, threads=1, block=True,
             switch=NEVER):
    if sp.issparse(weights):
        return gumbel.gumbel_csr(weights.indptr, weights.indices, weights.data, start, maximum,
                                 lam, key, plain=plain)
    if block == "alternate":
        block, switch = True, ALTERNATE
    elif block == "near":
        block, switch = True, NEAR
    return gumbel.gumbel_dense(weights, start, maximum, lam, key, threads=threads, plain=plain,
                               block=block, switch=switch)


def _tree_key(edges):
    return frozenset((min(a, b), max(a, b)) for a, b in edges.tolist())


def _reference(weights):
    if sp.issparse(weights):
        return weights.toarray(), weights.toarray() != 0
    return weights, None


@pytest.mark.parametrize("case, block", [(c, True) for c in CASES]
                         + [("dense5", False), ("ties", False), ("offset-1e12", False)]
                         + [(c, "alternate") for c in ("dense5", "ties", "offset-1e12")]
                         + [(c, "near") for c in ("dense5", "offset-1e12", "wide")])
@pytest.mark.slow_python
def test_release_follows_kruskal_exponential_mechanism_chi_square(case, block):
    # dense weights take the block path at every step (block=True), one Gumbel per edge
    # (False), or the two alternately, step by step ("alternate": the per-step switch), or
    # as the past's uncertain relaxations say ("near": the eleventh pass's statistic, on
    # an easy case, a 1e12 offset and wide noise on a maximum tree)
    weights, lam, maximum, start = CASES[case]
    W, adjacency = _reference(weights)
    expected = naive.kruskal_em_tree_distribution(W, adjacency, lam, maximum)
    rng = np.random.default_rng(11)
    counts = {}
    for _ in range(RUNS):
        edges = _release(weights, lam, maximum, start, philox.draw_key(rng), block=block)
        assert edges[0, 0] == start
        k = _tree_key(edges)
        counts[k] = counts.get(k, 0) + 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"
    if case not in ("far", "ring12"):
        # the test must be informative: several trees carry real mass, and the law that
        # gumbel released before (Prim, a softmax over each step's cut) is rejected
        assert sum(RUNS * p >= 5 for p in expected.values()) >= 3
        prim = naive.tree_set_distribution(naive.prim_sequence_distribution(
            W, adjacency, start, lambda w: naive.softmax_probs(w if maximum else -w, lam)))
        assert naive.chisquare_pvalue(counts, prim, RUNS)[0] < P_FAIL


@pytest.mark.slow_python
def test_naive_sampler_follows_its_exact_law_chi_square():
    # the reference's own check: the literal sequential sampler against the enumeration
    W = CASES["dense5"][0]
    expected = naive.kruskal_em_tree_distribution(W, None, 1.2)
    rng = np.random.default_rng(12)
    counts = {}
    for _ in range(RUNS):
        k = naive.kruskal_em_sample(W, None, 1.2, rng)
        counts[k] = counts.get(k, 0) + 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, RUNS)
    assert pvalue >= P_FAIL, f"p = {pvalue:.2e} (chi2 = {stat:.1f}, dof = {dof})"


def test_kruskal_law_on_a_triangle_by_hand():
    # a triangle: the first pick is softmax(-lam w); the second is then the lighter of
    # the two others, by the same rule, so P({e, f}) = sum over the order of the two
    w = {(0, 1): 0.0, (0, 2): 1.0, (1, 2): 2.0}
    W = np.zeros((3, 3))
    for (a, b), x in w.items():
        W[a, b] = W[b, a] = x
    lam = 0.7
    law = naive.kruskal_em_tree_distribution(W, None, lam)
    z = {e: np.exp(-lam * x) for e, x in w.items()}
    tot = sum(z.values())
    for missing in w:
        e, f = [x for x in w if x != missing]
        p = z[e] / tot * z[f] / (z[f] + z[missing]) + z[f] / tot * z[e] / (z[e] + z[missing])
        assert law[frozenset([e, f])] == pytest.approx(p, rel=1e-12)


def _exact_mst_of_noisy_keys(W, adjacency, lam, key, maximum):
    """The tree by the definition: scipy's MST of w - G / lam (+w + G / lam for maximum)."""
    n = W.shape[0]
    rows, cols = np.nonzero(np.triu(np.ones((n, n), bool) if adjacency is None else adjacency, 1))
    g = np.array([philox.edge_gumbel(key[0], key[1], int(a), int(b)) for a, b in zip(rows, cols)])
    k = (-W[rows, cols] if maximum else W[rows, cols]) - g / lam
    k = k - k.min() + 1.0  # positive: scipy drops zeros
    T = minimum_spanning_tree(sp.coo_matrix((k, (rows, cols)), shape=(n, n))).tocoo()
    return frozenset(zip(T.row.tolist(), T.col.tolist()))


@pytest.mark.parametrize("maximum", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_release_is_the_mst_of_the_noisy_keys(maximum, sparse):
    rng = np.random.default_rng(4)
    n = 9
    for _ in range(3):
        W = _sym(rng.uniform(0, 1, (n, n)))
        adjacency = None
        weights = W
        if sparse:
            adjacency = _sym(rng.random((n, n)) < 0.5) != 0
            adjacency[np.arange(n - 1), np.arange(1, n)] = True  # connected: a path
            adjacency[np.arange(1, n), np.arange(n - 1)] = True
            weights = sp.csr_matrix(np.where(adjacency, W + 1.0, 0.0))
            W = W + 1.0
        key = philox.draw_key(rng)
        edges = _release(weights, 3.0, maximum, 0, key, block=False)  # one Gumbel per edge
        assert _tree_key(edges) == _exact_mst_of_noisy_keys(W, adjacency, 3.0, key, maximum)


def _random_weights(rng, n, kind):
    if kind == "uniform":
        return _sym(rng.random((n, n)))
    if kind == "integers":
        return _sym(rng.integers(0, 5, (n, n)).astype(float))
    if kind == "offset":
        return 1e12 + _sym(rng.integers(0, 40, (n, n)) * _U)
    if kind == "pareto":
        return _sym(rng.pareto(0.7, (n, n)))
    raise ValueError(kind)


@pytest.mark.parametrize("kind, lam", [("uniform", 1e3), ("uniform", 10.0), ("uniform", 0.1),
                                       ("integers", 2.0), ("offset", 1.0 / _U), ("pareto", 1.0)])
@pytest.mark.parametrize("block", [False, True, "alternate", "near"])
@pytest.mark.slow_python
def test_skip_path_equals_the_two_logarithm_path(kind, lam, block):
    # 1000 keys per kind (6000 in all): every tree of the skip path is the plain one's,
    # for one Gumbel per edge (block=False) and for the block path (its bound of each
    # block's largest Gumbel against its own logarithms; n = 24: three blocks, two pairs)
    rng = np.random.default_rng(21)
    n = 24
    W = _random_weights(rng, n, kind)
    S = sp.csr_matrix(np.where(_sym(rng.random((n, n)) < 0.3) + np.eye(n, k=1) + np.eye(n, k=-1),
                               W + 1.0, 0.0))
    for i in range(1000):
        key = philox.draw_key(rng)
        maximum = bool(i & 1)
        a = _release(W, lam, maximum, i % n, key, block=block)
        b = _release(W, lam, maximum, i % n, key, plain=True, block=block)
        np.testing.assert_array_equal(a, b)
        if i % 4 == 0 and block is False:
            a = _release(S, lam, maximum, 0, key)
            b = _release(S, lam, maximum, 0, key, plain=True)
            np.testing.assert_array_equal(a, b)


@pytest.mark.slow_python  # 60 releases at n = 150: ~15 s a case without the JIT
@pytest.mark.parametrize("kind, lam", [("uniform", 1e3), ("uniform", 0.1), ("integers", 2.0),
                                       ("offset", 1.0 / _U)])
def test_per_edge_hash_blocks_keep_the_plain_trees(kind, lam):
    # the per-edge path's hashing loop hashes whole blocks of gumbel._HASH_BLOCK positions
    # as two halves side by side and keeps each edge's bits for the exact path (twelfth
    # pass): n = 150 gives two whole blocks and a tail before the removed position and
    # after it (the bits are read by position before the shift); plain hashes every
    # listed edge itself, so the trees must be plain's, on one thread and on the prange
    # kernel's two (forced below its PARALLEL_MIN_N)
    rng = np.random.default_rng(45)
    n = 150
    assert n > 2 * gumbel._HASH_BLOCK
    W = _random_weights(rng, n, kind)
    old = gumbel.PARALLEL_MIN_N
    for i in range(60):
        key = philox.draw_key(rng)
        maximum = bool(i & 1)
        ref = gumbel.gumbel_dense(W, i % n, maximum, lam, key, threads=1, block=False, plain=True)
        a = gumbel.gumbel_dense(W, i % n, maximum, lam, key, threads=1, block=False)
        np.testing.assert_array_equal(a, ref)
        if i % 10 == 0:
            gumbel.PARALLEL_MIN_N = 0
            try:
                p = gumbel.gumbel_dense(W, i % n, maximum, lam, key, threads=2, block=False)
            finally:
                gumbel.PARALLEL_MIN_N = old
            np.testing.assert_array_equal(p, ref)


def test_gumbel_upper_bounds_the_gumbel_of_every_uniform():
    # the skip test's bound, from the uniform's 53 bits: never below G(U) (else an edge
    # that relaxes could be skipped), and within 0.07 of it where 0.99 <= U <= 1 - 2**-43
    # (the thresholds t >= 4.6 of most steps' edges; nearer 1 the halving of q = 2**53 - m
    # costs up to ln(1.5), on edges of probability < 2**-43), so few edges take the exact path
    rng = np.random.default_rng(4)
    top = 2 ** 53
    ms = np.concatenate([[0, 1, 2, 3, top // 2 - 1, top // 2, top // 2 + 1, top - 2, top - 1],
                         top - 2 ** np.arange(53), top - 2 ** np.arange(53) - 1,
                         top - 2 ** np.arange(1, 53) + 1, 2 ** np.arange(53),
                         rng.integers(0, top, 3000), top - rng.integers(1, 2 ** 20, 1000)])
    ms = np.unique(ms[(ms >= 0) & (ms < top)]).astype(np.uint64)
    for m in ms.tolist():
        u = float(philox.unit_of_bits(np.uint64(m)))
        g = -np.log(-np.log(u))
        bound = float(gumbel.gumbel_upper(np.uint64(m)))
        assert bound >= g, (m, bound, g)
        if u >= 0.99 and top - m >= 2 ** 10:
            assert bound <= g + 0.07, (m, bound, g)
        assert u < 0.99 or bound <= g + 0.41, (m, bound, g)
    assert float(gumbel.gumbel_upper(np.uint64(top - 1))) < gumbel.T_SKIP
    assert gumbel.T_SKIP > philox.GUMBEL_MAX + 0.5


@njit
def _bounds_in_a_loop(ms, out):
    # the kernels inline the bound into loops the compiler vectorizes: check it there too
    for k in range(ms.shape[0]):
        out[k] = gumbel.gumbel_upper(ms[k])


@pytest.mark.slow_python
def test_gumbel_upper_holds_inside_a_compiled_loop():
    # a vectorized loop (a different instruction selection from the scalar call) keeps the
    # bound: >= the exact path's Gumbel, with the two logarithms, for every m (fixed seed)
    rng = np.random.default_rng(11)
    top = 2 ** 53
    ms = np.concatenate([top - 2 ** np.arange(53), 2 ** np.arange(53), top - rng.integers(1, 2 ** 20, 20000),
                         rng.integers(0, top, 200000)]).astype(np.uint64)
    out = np.empty(ms.shape[0])
    _bounds_in_a_loop(ms, out)
    u = np.maximum(ms.astype(np.float64), 0.5) * 2.0 ** -53
    assert np.array_equal(u, np.array([philox.unit_of_bits(m) for m in ms[:50]] + list(u[50:])))
    assert np.all(out >= -np.log(-np.log(u)))


@njit
def _bounds_eps_in_a_loop(ms, out, out_eps):
    for k in range(ms.shape[0]):
        out[k] = gumbel.gumbel_upper(ms[k])
        out_eps[k] = gumbel.gumbel_upper_eps(ms[k])


@pytest.mark.slow_python
def test_the_kernels_bound_is_the_bound_plus_its_margin():
    # the dense kernels compare t with gumbel_upper_eps(m), EPS folded into the constant:
    # within 1e-12 of gumbel_upper(m) + EPS, so an edge is skipped only when G(U) <= t - EPS / 2
    rng = np.random.default_rng(12)
    top = 2 ** 53
    ms = np.concatenate([[0, 1, 2, 3, top - 3, top - 2, top - 1], top - 2 ** np.arange(53),
                         2 ** np.arange(53), rng.integers(0, top, 100000)]).astype(np.uint64)
    out = np.empty(ms.shape[0])
    out_eps = np.empty(ms.shape[0])
    _bounds_eps_in_a_loop(ms, out, out_eps)
    assert np.all(np.abs(out_eps - (out + gumbel.EPS)) <= 1e-12)
    u = np.maximum(ms.astype(np.float64), 0.5) * 2.0 ** -53
    assert np.all(out_eps - gumbel.EPS / 2 >= -np.log(-np.log(u)))
    assert out_eps.max() < gumbel.T_SKIP  # 53 ln 2 + EPS at m = 2**53 - 1


@pytest.mark.slow_python
def test_a_1e12_offset_keeps_the_noise():
    # the same keys on w and on w + 1e12 give the same trees (w in multiples of the ulp of
    # 1e12); forming w - b * G in one float would round the noise away and tie by index
    rng = np.random.default_rng(5)
    n = 12
    W = _sym(rng.integers(0, 8, (n, n)) * _U)
    lam = 1.0 / (2 * _U)
    differ = 0
    exact = _tree_key(gumbel.gumbel_dense(W, 0, False, 1e30, philox.draw_key(rng), threads=1))
    for _ in range(200):
        key = philox.draw_key(rng)
        a = gumbel.gumbel_dense(W, 0, False, lam, key, threads=1)
        b = gumbel.gumbel_dense(W + 1e12, 0, False, lam, key, threads=1)
        np.testing.assert_array_equal(a, b)
        differ += _tree_key(a) != exact
    assert differ > 100  # the noise matters at this rate


def test_dd_key_is_exact_where_it_must_be():
    b = 1e-5
    b_hi, b_lo = gumbel.split(b)
    for x, g in [(1e12, 3.7), (0.0, -1.25), (1e12 + 2 * _U, 36.5), (-5e11, 0.1)]:
        hi, lo = gumbel.dd_key(x, b, b_hi, b_lo, g)
        assert hi == hi + lo
        # the exact value of x - b * g, in rationals, against the pair's
        from fractions import Fraction
        exact = Fraction(x) - Fraction(b) * Fraction(g)
        assert abs(Fraction(hi) + Fraction(lo) - exact) <= abs(exact) * Fraction(2) ** -100


_THREADS_SCRIPT = textwrap.dedent("""
    import json, sys
    import numba
    import numpy as np
    from fastpamst_nb import gumbel, philox
    gumbel.PARALLEL_MIN_N = 0  # the prange kernel at any size
    SWITCHES = ((float("inf"), 0), (-1.0, 1), (0.05, 3), None, (float("inf"), 1, 0.0),
                (0.05, 3, 0.01))
    out = []
    for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
        numba.set_num_threads(threads)  # gumbel_dense splits by numba.get_num_threads()
        rng = np.random.default_rng(31)
        trees = []
        for n, lam in ((129, 30.0), (70, 0.5), (64, 1e3)):
            W = rng.random((n, n)); W = (W + W.T) / 2
            W[:, 5] = W[5, :] = 0.25  # ties
            for _ in range(3):
                key = philox.draw_key(rng)
                for sw in SWITCHES:
                    trees.append(gumbel.gumbel_dense(W, 3, bool(n & 1), lam, key,
                                                     switch=sw).tolist())
                trees.append(gumbel.gumbel_dense(W, 3, bool(n & 1), lam, key, block=False).tolist())
        out.append(trees)
    print(json.dumps(out))
""")


@pytest.mark.slow_python
def test_chunked_steps_give_the_tree_of_one_call():
    # the serial kernel's state (the unvisited list, the blocks' kept minima, the tree
    # ends by vertex) carries over between chunks of steps: the tree does not depend
    # on the chunking (progress bars, Ctrl-C), nor on the skip path (plain)
    rng = np.random.default_rng(31)
    for n in (5, 70, 200):
        W = _sym(rng.random((n, n)))
        for lam in (0.5, 50.0, 1e5):
            key = philox.draw_key(rng)
            one = gumbel.gumbel_dense(W, 1, False, lam, key, threads=1)

            def run(advance, total, first):
                s = 0
                while s < total:
                    k = min(7, total - s)
                    advance(s, k)
                    s += k
            np.testing.assert_array_equal(gumbel.gumbel_dense(W, 1, False, lam, key, threads=1,
                                                              run=run), one)
            np.testing.assert_array_equal(gumbel.gumbel_dense(W, 1, False, lam, key, threads=1,
                                                              plain=True), one)
            # the per-step switch's state (the steps left per edge) carries over too, with
            # the eleventh pass's extension of a hold
            for switch in ((0.05, 3), (0.05, 3, 0.01), NEAR):
                sw = gumbel.gumbel_dense(W, 1, False, lam, key, threads=1, switch=switch)
                np.testing.assert_array_equal(
                    gumbel.gumbel_dense(W, 1, False, lam, key, threads=1, run=run, switch=switch), sw)
                np.testing.assert_array_equal(
                    gumbel.gumbel_dense(W, 1, False, lam, key, threads=1, plain=True, switch=switch), sw)


@pytest.mark.slow_python
def test_the_prange_kernel_compiles_to_a_parallel_loop(monkeypatch):
    # a raise inlined into gd_steps_parallel's prange loop (a second exit from it) makes
    # numba run the loop serially, saying so only in a NumbaPerformanceWarning at compile
    # time (the cache hides it afterwards): compile a fresh copy of the kernel and listen
    import warnings
    import numba
    monkeypatch.setattr(gumbel, "PARALLEL_MIN_N", 0)
    W = _sym(np.random.default_rng(3).random((40, 40)))
    gumbel.gumbel_dense(W, 0, False, 1.0, philox.draw_key(np.random.default_rng(4)), threads=2)
    assert gumbel.gd_steps_parallel.signatures  # the prange kernel ran: its types are known
    fresh = numba.njit(parallel=True, nogil=True)(gumbel.gd_steps_parallel.py_func)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fresh.compile(gumbel.gd_steps_parallel.signatures[0])
    serial = [str(w.message) for w in caught if "not be executed in parallel" in str(w.message)]
    assert not serial, serial[0]


@pytest.mark.slow_python
def test_one_tree_whatever_the_number_of_threads():
    # one process with NUMBA_NUM_THREADS=4 runs the prange kernel on 1, 2, 3 and 4 threads
    # (numba.set_num_threads, which gumbel_dense reads): one start-up and compilation, not four;
    # n = 129 spans three of the serial kernel's top blocks; 129 and 70 give ragged thread blocks,
    # whose borders cut the block path's blocks of ranks (each thread draws the border's pair);
    # per key: the block path at every step, alternating with the per-edge path step by
    # step, switched by the step's relaxations (summed over the threads: (0.05, 3) takes
    # the per-edge path after many steps and back), the default switch, one Gumbel per edge
    env = {**os.environ, "NUMBA_NUM_THREADS": "4"}
    proc = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, text=True,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    trees = json.loads(proc.stdout)
    assert len(trees) == 4 and all(t == trees[0] for t in trees)
    # and the serial kernel's (here, one thread): the same trees
    rng = np.random.default_rng(31)
    for n, lam in ((129, 30.0), (70, 0.5), (64, 1e3)):
        W = rng.random((n, n))
        W = (W + W.T) / 2
        W[:, 5] = W[5, :] = 0.25
        for _ in range(3):
            key = philox.draw_key(rng)
            for sw in (NEVER, ALTERNATE, (0.05, 3), None, NEAR, (0.05, 3, 0.01)):
                assert gumbel.gumbel_dense(W, 3, bool(n & 1), lam, key, threads=1,
                                           switch=sw).tolist() == trees[0].pop(0)
            assert gumbel.gumbel_dense(W, 3, bool(n & 1), lam, key, threads=1,
                                       block=False).tolist() == trees[0].pop(0)


def test_prefetch_intrinsic_name_follows_the_llvm_version():
    # the name carries the pointer type: typed i8* ("p0i8") on LLVM 14 and on llvmlite
    # 0.44's LLVM 15 unless it enables opaque pointers; opaque ("p0") from LLVM 17 on
    assert gumbel._prefetch_name(14) == "llvm.prefetch.p0i8"
    assert gumbel._prefetch_name(15) == "llvm.prefetch.p0i8"
    assert gumbel._prefetch_name(15, opaque=True) == "llvm.prefetch.p0"
    for major in (17, 20, 22):
        assert gumbel._prefetch_name(major) == "llvm.prefetch.p0"
    import llvmlite
    from llvmlite.binding import llvm_version_info
    assert gumbel._PREFETCH_NAME == gumbel._prefetch_name(
        llvm_version_info[0], bool(getattr(llvmlite, "opaque_pointers_enabled", False)))


# ---------------------------------------------------------------------------
# the public entry point
# ---------------------------------------------------------------------------

W_SMALL = _sym(np.random.default_rng(2).random((7, 7)))


def test_fast_pamst_gumbel_is_the_engine():
    rng = np.random.default_rng(8)
    tree = fp.fast_pamst(W_SMALL, rho=0.5, sensitivity=0.1, noise="gumbel", rng=rng, start=2)
    lam = privacy.gumbel_rate(0.5, 0.1, 7)
    key = philox.draw_key(np.random.default_rng(8))
    np.testing.assert_array_equal(tree.edges, gumbel.gumbel_dense(W_SMALL, 2, False, lam, key))
    assert dict(tree.info) == {"rho": 0.5, "sensitivity": 0.1, "noise": "gumbel", "rate": lam,
                               "maximum": False}
    # the only draw from the user's generator: two 64-bit words
    ref = np.random.default_rng(8)
    ref.integers(0, 2 ** 64, size=2, dtype=np.uint64)
    assert rng.random() == ref.random()


@pytest.mark.slow_python
def test_fast_pamst_gumbel_on_a_topology_and_maximum():
    topo = _sym(np.ones((7, 7))) * 0
    topo[np.arange(6), np.arange(1, 7)] = 1
    topo[0, 3] = topo[2, 6] = 1
    topo = (topo + topo.T) != 0
    key = philox.draw_key(np.random.default_rng(4))
    tree = fp.fast_pamst(W_SMALL, rho=0.5, sensitivity=0.1, noise="gumbel", rng=4,
                         topology=topo, maximum=True)
    graph = as_graph(W_SMALL, topology=topo)
    lam = privacy.gumbel_rate(0.5, 0.1, 7)
    expected = gumbel.gumbel_csr(graph.indptr, graph.indices, graph.data, 0, True, lam, key)
    np.testing.assert_array_equal(tree.edges, expected)
    assert tree.info["maximum"] is True
    same, _ = _gumbel_graph(graph, 0.5, 0.1, 0, key, True)
    assert same == tree


def test_gumbel_refuses_a_discretization():
    with pytest.raises(ValueError, match="discretization= applies to noise='exponential' only"):
        fp.fast_pamst(W_SMALL, rho=0.5, sensitivity=0.1, noise="gumbel", discretization=0.01)


def test_gumbel_rate_is_the_calibration():
    assert privacy.gumbel_rate(0.1, 1e-3, 4001) == pytest.approx(np.sqrt(8 * 0.1 / 4000) / (2 * 1e-3), rel=1e-15)
    with pytest.raises(ValueError, match="2 <= n"):  # nothing is selected: no rate
        privacy.gumbel_rate(0.1, 1e-3, 1)
    with pytest.raises(ValueError, match=r"outside \[2\*\*-1000, 2\*\*1000\]"):
        privacy.gumbel_rate(1.0, 1e-320, 10)
    with pytest.raises(ValueError):
        privacy.gumbel_rate(0.0, 1.0, 10)


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_graphs(n):
    W = np.zeros((n, n))
    tree = fp.fast_pamst(W, rho=1.0, sensitivity=1.0, noise="gumbel", rng=0)
    assert tree.edges.shape == (n - 1, 2)


def _rational_prim(W, adjacency, start, maximum, b, key, block=False):
    """Prim over the exact rational keys c w - b G (G = philox.edge_gumbel, or with
    ``block`` the block path's ``gumbel.block_gumbel`` of the step's joining vertex and
    the vertex's rank among those still outside; with ``block="alternate"`` the block
    path's at even steps and edge_gumbel's at odd ones: the ``ALTERNATE`` switch), ties to
    the smallest vertex: the tree the engine must return whatever the magnitudes."""
    from fractions import Fraction

    ka, kb, _, c3 = philox.key_words(*key)
    n = W.shape[0]
    c = -1 if maximum else 1
    best = [None] * n
    parent = [start] * n
    seen = [False] * n
    seen[start] = True
    cur = start
    edges = []
    for step in range(n - 1):
        blk = block is True or (block == "alternate" and step % 2 == 0)
        rank = -1
        for v in range(n):
            rank += not seen[v]
            if seen[v] or (adjacency is not None and not adjacency[cur, v]):
                continue
            if blk:
                g = gumbel.block_gumbel(ka, kb, c3, np.int64(cur), np.int64(rank))
            else:
                g = philox.edge_gumbel(key[0], key[1], min(cur, v), max(cur, v))
            k = Fraction(c * float(W[cur, v])) - Fraction(b) * Fraction(float(g))
            if best[v] is None or k < best[v]:
                best[v] = k
                parent[v] = cur
        cur = min((v for v in range(n) if not seen[v] and best[v] is not None),
                  key=lambda v: (best[v], v))
        edges.append((parent[cur], cur))
        seen[cur] = True
    return np.array(edges, dtype=np.int64)


@pytest.mark.parametrize("lam", [1e-300, 2.0 ** -1000, 2.0 ** -960])
def test_weights_near_the_largest_double_with_a_huge_noise_scale(lam):
    # w - b G overflowed to inf when |w| ~ DBL_MAX and b ~ 1e300: the key was NaN and that
    # edge never relaxed (a wrong tree); and b > 2**997 was refused although the rate is
    # one privacy.gumbel_rate returns. The kernels scale w and b by a power of two chosen
    # from b: every tree is the one of the exact keys, dense and sparse, min and max.
    M = np.finfo(np.float64).max
    n = 5
    W = np.full((n, n), M)
    W[0, 1] = W[1, 0] = M / 2
    W[2, 3] = W[3, 2] = 1.0
    W[1, 4] = W[4, 1] = -M
    W[0, 4] = W[4, 0] = -M / 3
    adjacency = np.ones((n, n), bool)
    adjacency[0, 2] = adjacency[2, 0] = adjacency[3, 4] = adjacency[4, 3] = False
    S = sp.csr_matrix(np.where(adjacency, W, 0.0))
    b_true = 1.0 / lam
    if b_true * lam < 1.0:
        b_true = np.nextafter(b_true, np.inf)
    rng = np.random.default_rng(30)
    seen = set()
    for i in range(24):
        key = philox.draw_key(rng)
        maximum = bool(i & 1)
        dense = _release(W, lam, maximum, i % n, key, block=False)
        np.testing.assert_array_equal(dense, _rational_prim(W, None, i % n, maximum, b_true, key))
        dense = _release(W, lam, maximum, i % n, key)
        np.testing.assert_array_equal(dense, _rational_prim(W, None, i % n, maximum, b_true, key,
                                                            block=True))
        sparse = _release(S, lam, maximum, 0, key)
        np.testing.assert_array_equal(sparse, _rational_prim(W, adjacency, 0, maximum, b_true, key))
        seen.add(_tree_key(dense))
    assert len(seen) > 3  # the noise decides: not one tree by index order


# ---------------------------------------------------------------------------
# the block path: its Gumbels, its bound, its trees
# ---------------------------------------------------------------------------

@njit
def _block_gumbels(keys, cur, K, out):
    for i in range(keys.shape[0]):
        for k in range(K):
            out[i, k] = gumbel.block_gumbel(keys[i, 0], keys[i, 1], keys[i, 2], cur, k)


@pytest.mark.slow_python
def test_block_gumbels_are_independent_standard_gumbels():
    # the block path's Gumbels of ranks 0-31 (eight blocks of BLOCK = 4, four pairs) over
    # 20,000 keys: each rank's marginal (Kolmogorov-Smirnov), the joint law of the ranks of
    # a block and of ranks across blocks and pairs (which of them exceed a threshold: every
    # pattern has the product's probability; chi-square, fail at p < 1e-4), each block's
    # argmax (uniform over its ranks) and maximum (Gumbel shifted by ln BLOCK)
    rng = np.random.default_rng(41)
    keys = np.array([philox.key_words(*philox.draw_key(rng)) for _ in range(RUNS)],
                    dtype=np.uint64)[:, [0, 1, 3]]
    G = np.empty((RUNS, 32))
    _block_gumbels(keys, np.int64(5), 32, G)
    for k in range(32):
        assert stats.kstest(G[:, k], "gumbel_r").pvalue > P_FAIL, k

    def pattern_law(cols, q):
        # P(G > t) = q for each column: a pattern of m exceedances has q^m (1 - q)^(c - m)
        t = -np.log(-np.log1p(-q))
        bits = (G[:, cols] > t).astype(np.int64) @ (1 << np.arange(len(cols)))
        counts = {int(x): int(c) for x, c in zip(*np.unique(bits, return_counts=True))}
        expected = {p: q ** bin(p).count("1") * (1 - q) ** (len(cols) - bin(p).count("1"))
                    for p in range(1 << len(cols))}
        pvalue = naive.chisquare_pvalue(counts, expected, RUNS)[0]
        assert pvalue >= P_FAIL, (cols, q, pvalue)

    B = gumbel.BLOCK
    assert 32 % (2 * B) == 0
    for block in range(32 // B):
        pattern_law(list(range(B * block, B * block + B)), 0.5)
        pattern_law(list(range(B * block, B * block + B)), 0.2)
        top = G[:, B * block:B * block + B]
        arg = np.bincount(top.argmax(axis=1), minlength=B)
        assert naive.chisquare_pvalue(dict(enumerate(arg.tolist())), {i: 1 / B for i in range(B)},
                                      RUNS)[0] >= P_FAIL
        assert stats.kstest(top.max(axis=1) - np.log(B), "gumbel_r").pvalue > P_FAIL
    pattern_law(list(range(0, 2 * B)), 0.5)  # a pair
    pattern_law(list(range(0, 4 * B, 2)), 0.3)  # two pairs
    pattern_law(list(range(2 * B - 3, 2 * B + 3)), 0.5)  # across two pairs
    pattern_law(list(range(B - 2, B + 2)), 0.3)  # across the two blocks of a pair
    pattern_law([0, 9, 18, 27], 0.1)
    # another step's Gumbels are others: the same key and ranks at cur = 6
    H = np.empty((RUNS, 8))
    _block_gumbels(keys, np.int64(6), 8, H)
    assert all(abs(stats.pearsonr(G[:, k], H[:, k])[0]) < 0.04 for k in range(8))


@njit
def _block_bounds_in_a_loop(ms, out):
    for k in range(ms.shape[0]):
        out[k] = gumbel._upper_from(ms[k], gumbel._C_BLK)


@pytest.mark.slow_python
def test_the_block_bound_is_the_bound_of_the_blocks_maximum_plus_its_margin():
    # a block's largest Gumbel is M = ln B + G(U) (B = BLOCK): the kernels skip a rank whose
    # threshold t is at or above _upper_from(m, _C_BLK), within 1e-12 of gumbel_upper(m) +
    # ln B + EPS (+ 2**-40) and at least M + EPS / 2 for every m (so a skip is what the
    # exact path decides: its M, computed as -ln(-ln(U) / B), rounds by about 1e-14)
    rng = np.random.default_rng(14)
    top = 2 ** 53
    ms = np.concatenate([[0, 1, 2, 3, top - 3, top - 2, top - 1], top - 2 ** np.arange(53),
                         2 ** np.arange(53), rng.integers(0, top, 100000)]).astype(np.uint64)
    out = np.empty(ms.shape[0])
    plain = np.empty(ms.shape[0])
    _block_bounds_in_a_loop(ms, out)
    _bounds_in_a_loop(ms, plain)
    B = gumbel.BLOCK
    assert np.all(np.abs(out - (plain + np.log(B) + gumbel.EPS + 2.0 ** -40)) <= 1e-12)
    u = np.maximum(ms.astype(np.float64), 0.5) * 2.0 ** -53
    assert np.all(out - gumbel.EPS / 2 >= -np.log(-np.log(u) / B))
    assert B == 1 << gumbel._BLOCK_SHIFT and gumbel._C_BLK > 1023 * np.log(2.0) + np.log(B) + gumbel.EPS


@pytest.mark.slow_python
def test_block_path_is_prim_over_its_gumbels():
    # the kernel's trees (serial; ranks over several pairs of blocks, the removed
    # position before and after the blocks it shifts) against a rational Prim over the
    # same Gumbels (gumbel.block_gumbel of (joining vertex, rank)), uniform, tied and
    # 1e12-offset weights, minimum and maximum, narrow and wide noise
    rng = np.random.default_rng(42)
    for i, (n, kind, lam) in enumerate([(40, "uniform", 30.0), (40, "integers", 2.0),
                                        (37, "offset", 1.0 / _U), (70, "uniform", 0.3),
                                        (19, "pareto", 1e3), (9, "uniform", 1.0)]):
        W = _random_weights(rng, n, kind)
        b = gumbel._scale(lam)[0]
        for j in range(3):
            key = philox.draw_key(rng)
            maximum = bool((i + j) & 1)
            start = (7 * j) % n
            got = gumbel.gumbel_dense(W, start, maximum, lam, key, threads=1, switch=NEVER)
            np.testing.assert_array_equal(got, _rational_prim(W, None, start, maximum, b, key,
                                                              block=True))
            # the per-step switch forced to alternate: block steps and per-edge steps, each
            # with its own Gumbels (the past decides the path, nothing else changes)
            got = gumbel.gumbel_dense(W, start, maximum, lam, key, threads=1, switch=ALTERNATE)
            np.testing.assert_array_equal(got, _rational_prim(W, None, start, maximum, b, key,
                                                              block="alternate"))


def test_listed_edges_are_counted():
    # stats={} reports the exact-path edges of a serial release (measurements only): every
    # edge of the first step, and all of them on the plain path
    W = _sym(np.random.default_rng(3).random((30, 30)))
    key = philox.draw_key(np.random.default_rng(4))
    for block in (True, False):
        st, pl = {}, {}
        gumbel.gumbel_dense(W, 0, False, 10.0, key, threads=1, block=block, stats=st)
        gumbel.gumbel_dense(W, 0, False, 10.0, key, threads=1, block=block, stats=pl, plain=True)
        assert 29 <= st["listed"] < pl["listed"] == 29 * 30 // 2


def test_sure_relaxations_are_below_every_gumbel():
    # the switch's statistic counts a relaxation as uncertain when its threshold t was
    # above T_SURE: below it every per-edge Gumbel relaxes (the smallest is that of the
    # smallest uniform, unit_of_bits(0) = 2**-54), so the count says how many relaxations
    # the noise decided (a block's order statistics reach lower: a statistic, never read
    # by the exact comparison)
    assert -np.log(-np.log(philox.unit_of_bits(np.uint64(0)))) > gumbel.T_SURE
    assert -np.log(-np.log(2.0 ** -54)) > gumbel.T_SURE + 0.3


def test_the_switch_statistic_tells_narrow_noise_from_wide():
    # n = 400 Uniform(0, 1) weights: at narrow noise the first steps relax surely (their
    # thresholds far below 0), so the default switch is the hold alone (about the edges the
    # block path lists without the extension); at wide noise the uncertain relaxations
    # extend the per-edge run over the first steps, where the block path lists several
    # times what relaxes (stats: measurements only, never published)
    W = _sym(np.random.default_rng(5).random((400, 400)))
    key = philox.draw_key(np.random.default_rng(6))
    for lam, extended in ((1e4, False), (1.0, True)):
        base, new = {}, {}
        gumbel.gumbel_dense(W, 0, False, lam, key, threads=1, stats=base,
                            switch=(gumbel.SWITCH_AT, gumbel.SWITCH_HOLD))
        gumbel.gumbel_dense(W, 0, False, lam, key, threads=1, stats=new)
        if extended:
            assert new["listed"] < 0.8 * base["listed"]
        else:
            assert abs(new["listed"] - base["listed"]) <= 0.05 * base["listed"]
