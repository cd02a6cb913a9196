"""Spanning trees of points X (n, d) with metric=: kernels against slow references,
the gumbel law against Kruskal's exponential mechanism, threads, errors, clustering."""

import json
import os
import subprocess
import sys
import textwrap

import naive
import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit
from scipy.cluster.hierarchy import dendrogram, fcluster, linkage
from scipy.spatial.distance import cdist, pdist

import fastpamst_nb as fp
from fastpamst_nb import metrics, philox, points, privacy
from fastpamst_nb.gumbel import split as gumbel_split

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

def _points(metric, n, d=3, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    if metric == "haversine":
        X = np.c_[rng.uniform(-80, 80, n), rng.uniform(-180, 180, n)]
    else:
        X = rng.normal(size=(n, d))
    return X.astype(dtype)


def _p(metric):
    return 3.0 if metric == "minkowski" else None


def _haversine_ref(X):
    lat, lon = np.radians(X[:, 0]), np.radians(X[:, 1])
    h = (np.sin((lat[:, None] - lat[None, :]) / 2) ** 2
         + np.cos(lat[:, None]) * np.cos(lat[None, :]) * np.sin((lon[:, None] - lon[None, :]) / 2) ** 2)
    return 2 * metrics.EARTH_RADIUS_KM * np.arcsin(np.sqrt(h))


def _matrix(P):
    n = P[0].shape[0]
    D = np.empty((n, n))
    metrics.pt_matrix(P[0], P[1], P[2], P[3], D)
    return D


@njit
def _gumbel_matrix(k0, k1, n):
    G = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                G[i, j] = philox.edge_gumbel(k0, k1, i, j)
    return G


@njit
def _normal_matrix(k0, k1, n):
    Z = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                u1, u2 = philox.edge_uniform_pair(k0, k1, i, j)
                Z[i, j] = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return Z


def _edge_set(edges):
    return frozenset((int(min(a, b)), int(max(a, b))) for a, b in np.asarray(edges))


# ---------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("metric", metrics.METRICS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_distances_match_scipy(metric, dtype):
    X = _points(metric, 12, dtype=dtype)
    P = metrics.prepare_points(X, metric, _p(metric))
    D = _matrix(P)
    X64 = X.astype(np.float64)
    if metric == "haversine":
        ref = _haversine_ref(X64)
    else:
        ref = cdist(X64, X64, metric, **({"p": 3.0} if metric == "minkowski" else {}))
    np.testing.assert_allclose(D, ref, rtol=1e-12, atol=1e-12)
    # the row kernel (what Prim reads) equals the scalar kernel bit for bit
    row = np.empty(12)
    metrics.metric_row(P[0], 5, np.arange(12, dtype=np.int64), 0, 12, P[1], P[2], P[3], row)
    assert np.array_equal(np.delete(row, 5), np.delete(D[5], 5))


def test_haversine_known_distance():
    # London (51.5074 N, 0.1278 W) to Paris (48.8566 N, 2.3522 E): ~343.6 km on the mean sphere
    X = np.array([[51.5074, -0.1278], [48.8566, 2.3522]])
    w = fp.exact_mst(X, metric="haversine").weight
    assert abs(w - 343.56) < 0.1


# ---------------------------------------------------------------------------
# the kernels against naive.prim_mst on the matrix
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("metric", metrics.METRICS)
@pytest.mark.parametrize("maximum", [False, True])
def test_exact_kernel_matches_naive_prim(metric, maximum):
    X = _points(metric, 40, seed=1)
    P = metrics.prepare_points(X, metric, _p(metric))
    D = _matrix(P)
    sgn = 1.0 if maximum else -1.0
    for parallel in (False, True):
        edges = points.pt_prim(P, 3, sgn, parallel=parallel)
        ref, _ = naive.prim_mst(-D if maximum else D, start=3)
        assert np.array_equal(edges, ref)


def test_exact_kernel_ties_go_to_the_smallest_index():
    # a 5 x 5 grid (many equal distances) and duplicated points (distance 0)
    g = np.array([(i, j) for i in range(5) for j in range(5)], dtype=np.float64)
    X = np.vstack([g, g[:7]])
    for metric in ("euclidean", "cityblock", "chebyshev"):
        P = metrics.prepare_points(X, metric, None)
        ref, _ = naive.prim_mst(_matrix(P))
        for parallel in (False, True):
            assert np.array_equal(points.pt_prim(P, 0, -1.0, parallel=parallel), ref)


@pytest.mark.parametrize("rule", ["exact", "gumbel", "gauss"])
@pytest.mark.slow_python
def test_kernels_match_naive_across_blocks(rule):
    # n > 2 * BLOCK: several blocks, compactions, and the prange kernel's block split
    n = 2 * points.BLOCK + 300
    X = _points("euclidean", n, d=2, seed=3)
    P = metrics.prepare_points(X, "euclidean", None)
    D = _matrix(P)
    k0, k1 = philox.draw_key(np.random.default_rng(5))
    if rule == "exact":
        args, W = (points.EXACT, (0, 0), 1.0, 0.0), D
    elif rule == "gumbel":
        lam = 30.0
        args, W = (points.GUMBEL, (k0, k1), lam, 1 / lam), D - _gumbel_matrix(k0, k1, n) / lam
    else:
        sigma = 0.05
        args, W = (points.GAUSS, (k0, k1), 1.0, sigma), D + sigma * _normal_matrix(k0, k1, n)
    ref, _ = naive.prim_mst(W)
    for parallel in (False, True):
        # block=False: every edge's own Gumbel, as the reference (the block path's trees
        # have the same law, tested below, not the same noise)
        edges = points.pt_prim(P, 0, -1.0, *args, parallel=parallel, block=False)
        assert _edge_set(edges) == _edge_set(ref)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski",
                                    "cosine", "haversine"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_coordinate_major_rows_are_the_metric_distances_bit_for_bit(metric, dtype):
    # the kernels' distances (a coordinate-major copy for the coordinate-wise metrics) must be
    # the reported ones exactly: the gumbel tree is the dense engine's on these distances
    X = _points(metric, 300, d=7, seed=4)
    X = (X if metric == "haversine" else X * 1e3).astype(dtype)  # (lat, lon) stay in range
    P = metrics.prepare_points(X, metric, _p(metric))
    st = points.pt_state(P[0], P[1], 5)
    m = st.slot.shape[0]
    # the kernels read float64 points (float32 widens exactly: the same distances)
    assert P[0].dtype == np.float64 and not P[0].flags.writeable
    assert (st.xt.shape == (7, m) and st.xt.dtype == np.float64) == (P[1] in points.SOA_METRICS)
    ref = np.empty(m)
    metrics.metric_row(P[0], 5, st.slot, 0, m, P[1], P[2], P[3], ref)
    if P[1] in points.SOA_METRICS:
        out = np.empty(m)
        points._pt_soa_row(st.xt, P[0], 5, 0, m, P[1], out)
        assert np.array_equal(out, ref)  # bit for bit, not approx
    edges = np.column_stack([np.full(m, 5), st.slot])
    assert np.array_equal(metrics.edge_distances(P, edges), ref)
    # the gumbel noise-first pass computes a kept edge's distance alone, as (vertex that
    # joined, slot's point): the same value bit for bit
    one = [metrics.metric_distance(P[0], 5, int(u), P[1], P[2], P[3]) for u in st.slot]
    assert np.array_equal(np.array(one), ref)


@pytest.mark.parametrize("metric,dtype", [("euclidean", np.float64), ("euclidean", np.float32),
                                          ("cityblock", np.float64), ("minkowski", np.float64)])
@pytest.mark.slow_python
def test_shared_kernel_in_chunks_is_the_serial_kernel(metric, dtype, monkeypatch):
    # the shared kernel (threads claim blocks, the last one selects) run in chunks of
    # awkward sizes, across blocks and compactions: the serial kernel's edges, in its order;
    # and the chooser switching kernels from chunk to chunk changes nothing either
    n = 3 * points.BLOCK + 77
    X = _points(metric, n, d=3, seed=6).astype(dtype)
    P = metrics.prepare_points(X, metric, _p(metric))
    key = philox.draw_key(np.random.default_rng(7))
    sizes = [1, 2, 0, 700, 5, 1, 2000, 3]  # 0: a call with no step leaves the state alone

    def chunked(advance, n_steps):
        s0, i = 0, 0
        while s0 < n_steps:
            k = min(sizes[i % len(sizes)], n_steps - s0)
            advance(s0, k)
            s0, i = s0 + k, i + 1

    for rule, lam, b in ((points.EXACT, 1.0, 0.0), (points.GUMBEL, 40.0, 1 / 40.0), (points.GAUSS, 1.0, 0.01)):
        ref = points.pt_prim(P, 2, -1.0, rule, key, lam, b, parallel=False)
        got = points.pt_prim(P, 2, -1.0, rule, key, lam, b, advance=chunked, parallel=True)
        assert np.array_equal(got, ref), rule
    flips = iter(range(10 ** 6))
    monkeypatch.setattr(points._Chooser, "_pick", lambda self: next(flips) % 3 != 1)
    for rule, lam, b in ((points.EXACT, 1.0, 0.0), (points.GUMBEL, 40.0, 1 / 40.0)):
        ref = points.pt_prim(P, 2, -1.0, rule, key, lam, b, parallel=False)
        got = points.pt_prim(P, 2, -1.0, rule, key, lam, b, advance=chunked, parallel=True)
        assert np.array_equal(got, ref), rule


@pytest.mark.slow_python
def test_gumbel_kernel_equals_the_dense_engine_on_many_keys_across_blocks():
    # the points kernel keeps each block's top from step to step (rescanning a block only
    # when its top dies or the slots move) and skips edges by the bound of their Gumbel:
    # its trees must be the dense engine's (a full argmin every step, double-double keys)
    # on the same distances and keys, serial and prange, minimum and maximum
    from fastpamst_nb import gumbel

    n = points.BLOCK + 300
    X = _points("euclidean", n, d=2, seed=6)
    P = metrics.prepare_points(X, "euclidean", None)
    D = _matrix(P)
    rng = np.random.default_rng(12)
    for i, lam in enumerate([0.05, 2.0, 300.0, 1e5] * 3):
        key = philox.draw_key(rng)
        maximum = bool(i & 1)
        dense = gumbel.gumbel_dense(D, 0, maximum, lam, key, threads=1, block=False)
        for parallel in (False, True):
            edges = points.pt_prim(P, 0, 1.0 if maximum else -1.0, points.GUMBEL, key, lam, 1 / lam,
                                   parallel=parallel, block=False)
            assert _edge_set(edges) == _edge_set(dense), (lam, maximum, parallel)


@pytest.mark.parametrize("metric,dtype", [("euclidean", np.float64), ("euclidean", np.float32),
                                          ("cityblock", np.float64), ("cosine", np.float64)])
@pytest.mark.slow_python
def test_gumbel_noise_first_pass_is_the_exact_tree(metric, dtype):
    # wide noise (scale 1 / lam far above the distances' spread): past the first steps the
    # hashed blocks draw the Gumbel bounds first and compute only the kept edges'
    # distances (from X's rows). The tree must be the exact tree of D - G / lam, serial
    # and shared, and the pass must actually have run (its kept share below the switch)
    n = 3 * points.BLOCK + 77
    X = _points(metric, n, d=3, seed=13).astype(dtype)
    P = metrics.prepare_points(X, metric, None)
    key = philox.draw_key(np.random.default_rng(14))
    lam = 0.05
    ref, _ = naive.prim_mst(_matrix(P) - _gumbel_matrix(key[0], key[1], n) / lam)
    for parallel in (False, True):
        edges = points.pt_prim(P, 0, -1.0, points.GUMBEL, key, lam, 1 / lam, parallel=parallel,
                               block=False)
        assert _edge_set(edges) == _edge_set(ref), parallel
    st = points.pt_state(P[0], P[1], 0)
    args = (points.PtPoints(P[0], P[1], float(P[2]), P[3]),
            points.PtNoise(-1.0, points.GUMBEL, np.uint64(key[0]), np.uint64(key[1]), lam, 1 / lam,
                           *gumbel_split(1 / lam)))
    points.pt_steps_serial(st, -1, 1, *args)
    points.pt_steps_serial(st, 0, 200, *args)
    assert (st.tops[:, 2] > points.HASH_ALL_SHARE).any()
    assert (st.tops[:, 3] < points.NOISE_FIRST_SHARE).any()


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "haversine", "minkowski"])
@pytest.mark.parametrize("maximum", [False, True])
@pytest.mark.parametrize("lam", [0.3, 5.0, 1e4])
def test_gumbel_kernel_is_the_exact_tree_of_w_minus_g_over_lam(metric, maximum, lam):
    n = 30
    X = _points(metric, n, seed=2)
    P = metrics.prepare_points(X, metric, _p(metric))
    D = _matrix(P)
    if metric == "haversine":
        lam = lam / 1000.0  # km
    k0, k1 = philox.draw_key(np.random.default_rng(int(lam * 7) + maximum))
    G = _gumbel_matrix(k0, k1, n)
    noisy = D + G / lam if maximum else D - G / lam
    ref, _ = naive.prim_mst(-noisy if maximum else noisy)
    edges = points.pt_prim(P, 0, 1.0 if maximum else -1.0, points.GUMBEL, (k0, k1), lam, 1 / lam,
                           block=False)
    assert _edge_set(edges) == _edge_set(ref)


def test_gumbel_kernel_keeps_the_noise_at_large_distances():
    # distances ~1e9 with noise of scale 1: the comparisons subtract the weights first
    X = np.array([[0.0], [1e9], [1e9 + 0.5], [2e9 + 0.25], [2e9 + 1.0]])
    P = metrics.prepare_points(X, "euclidean", None)
    D = _matrix(P)
    seen = set()
    for seed in range(30):
        k0, k1 = philox.draw_key(np.random.default_rng(seed))
        G = _gumbel_matrix(k0, k1, 5)
        # the reference in exact rationals would be best; in float64 D - G stays exact enough here
        ref, _ = naive.prim_mst(D - G)
        edges = points.pt_prim(P, 0, -1.0, points.GUMBEL, (k0, k1), 1.0, 1.0, block=False)
        assert _edge_set(edges) == _edge_set(ref)
        seen.add(_edge_set(edges))
    assert len(seen) > 1  # the noise is not rounded away


def test_skip_bounds_only_skip_what_the_exact_test_skips():
    # gumbel.gumbel_upper is checked against G(U) in test_gumbel.py; here the tail limits
    assert philox.GUMBEL_MAX < points.T_SKIP
    # the largest |normal| philox's uniforms give is below Z_MAX
    assert np.sqrt(-2 * np.log(2.0 ** -54)) < points.Z_MAX


# ---------------------------------------------------------------------------
# the float32 filter (euclidean and sqeuclidean minimum trees)
# ---------------------------------------------------------------------------

def _filter_sets():
    rng = np.random.default_rng(40)
    g = np.array([(i, j, k) for i in range(4) for j in range(4) for k in range(3)], dtype=np.float64)
    ang = rng.uniform(0, 2 * np.pi, 150)
    ring = np.c_[np.cos(ang), np.sin(ang)]
    ring = np.vstack([[0.0, 0.0], ring, ring[:40] * (1 + 2.0 ** -40), ring[40:80] * (1 - 2.0 ** -52)])
    return {
        "normal": rng.normal(size=(300, 8)),
        # exact ties (a lattice, duplicates) and near-ties a few float64 ulps apart
        "lattice": np.vstack([g, g[:20], g[:5] + 2.0 ** -40, g[5:10] * (1 + 2.0 ** -50)]),
        # distances from the centre equal to float32 precision, apart in float64
        "ring": ring,
        "offset 1e6": 1e6 + rng.random((300, 3)) * 1e-3,  # the rounding of X dwarfs the distances
        "top of range": rng.uniform(-1, 1, (300, 4)) * 2.0 ** 39.9,
        "bottom of range": rng.uniform(-1, 1, (300, 4)) * 2.0 ** -39,
        "d = 1": rng.random((300, 1)),
        "d = 20": rng.random((300, 20)),
        # one far point: a grid step of 40, the uint8 grid useless (blocks fall back to float32)
        "outlier": np.vstack([rng.random((299, 3)), [[1e4, 0.0, 0.0]]]),
        # pairs closer than the grid's step: equal after quantization, apart in float64
        "grid-equal": np.vstack([g, g + 1e-3, g - 2.0 ** -30]) / 3.0,
    }


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_float32_filter_bounds_are_rigorous(metric):
    # the filter's S32 (float32 copy, float32 sums) against the float64 distances the kernel
    # compares (metric_row: the reported weights bit for bit): the lower bound never exceeds
    # the distance, and a best just above the distance (one ulp) always lets the edge through;
    # a best 1e-4 below it is mostly filtered out (the bound is not vacuous); the survivors'
    # distance the kernels write out (_pt_l2) is the reported weight bit for bit
    tight = []
    for name, X in _filter_sets().items():
        P = metrics.prepare_points(X, metric, None)
        fc = points.filter_consts(P[0], P[1])
        assert fc is not None, name
        for v in (0, 7, X.shape[0] - 1):
            st = points.pt_state(P[0], P[1], v, fc)
            m = st.slot.shape[0]
            s32 = np.empty(m, dtype=np.float32)
            points._pt_f32_sum(st.xf, P[0], v, 0, m, s32)
            ref = np.empty(m)
            metrics.metric_row(P[0], v, st.slot, 0, m, P[1], P[2], P[3], ref)
            lo = np.empty(m)
            points._pt_f32_lo(s32, fc, m, lo)
            assert (lo <= ref).all(), name
            # the survivors' distance, written out in the kernels (_pt_l2): the same doubles
            l2 = [points._pt_l2(P[0], v, u, metric == "sqeuclidean") for u in st.slot[:m]]
            assert np.array_equal(np.array(l2), ref), name
            up = np.nextafter(ref, np.inf)
            assert all(s32[k] < points._pt_fth(up[k], fc) for k in range(m)), name
            if name in ("normal", "d = 20", "top of range"):
                tight += [s32[k] >= points._pt_fth(ref[k] * (1 - 1e-4), fc) for k in range(m)]
    assert np.mean(tight) > 0.99
    # out of range (overflowing float32 sums, subnormal copies), other metrics: no filter
    assert points.filter_consts(np.full((3, 2), 2.0 ** 41), metrics.EUCLIDEAN) is None
    assert points.filter_consts(np.full((3, 2), 2.0 ** -41), metrics.EUCLIDEAN) is None
    assert points.filter_consts(np.ones((3, 2)), metrics.CITYBLOCK) is None


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_uint8_grid_bounds_are_rigorous(metric):
    # the grid's integer sums S against the float64 distances the kernel compares: the lower
    # bound h sqrt(S) - A8 never exceeds the distance, a best one ulp above the distance
    # always lets the edge through (S below the slot's integer threshold), and on spread
    # data a best 10% below the distance is mostly ruled out (the grid is not vacuous)
    tight = []
    for name, X in _filter_sets().items():
        P = metrics.prepare_points(X, metric, None)
        fc = points.filter_consts(P[0], P[1])
        for v in (0, 7, X.shape[0] - 1):
            st = points.pt_state(P[0], P[1], v, fc.copy())
            assert st.xq.shape == st.xf.shape, name
            m = st.slot.shape[0]
            qs = np.empty(m, dtype=np.int32)
            points._pt_q8_sum(st.xq, st.xqv, v, 0, m, qs)
            assert (qs == ((st.xqv[st.slot].astype(np.int64) - st.xqv[v]) ** 2).sum(axis=1)).all()
            ref = np.empty(m)
            metrics.metric_row(P[0], v, st.slot, 0, m, P[1], P[2], P[3], ref)
            lo = np.empty(m)
            points._pt_q8_lo(qs, st.fc, m, lo)
            assert (lo <= ref).all(), name
            up = np.nextafter(ref, np.inf)
            assert all(qs[k] < points._pt_qth(up[k], st.fc) for k in range(m)), name
            if name in ("normal", "d = 20", "d = 1"):
                tight += [qs[k] >= points._pt_qth(ref[k] * 0.9, st.fc) for k in range(m)]
    assert np.mean(tight) > 0.9
    # no best: every edge passes; all points equal: no grid (the float32 filter alone)
    st = points.pt_state(np.eye(3), metrics.EUCLIDEAN, 0, points.filter_consts(np.eye(3), metrics.EUCLIDEAN))
    assert points._pt_qth(np.inf, st.fc) == 2 ** 31 - 1
    fc = points.filter_consts(np.ones((3, 2)), metrics.EUCLIDEAN)
    assert points.quant_consts(np.ones((3, 2)), fc) is None
    assert points.pt_state(np.ones((3, 2)), metrics.EUCLIDEAN, 0, fc).xq.shape[0] == 0


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
@pytest.mark.slow_python
def test_float32_filter_gives_the_float64_kernels_trees(metric):
    # the same edges, in the same order, with the filter (the uint8 grid in front of the
    # float32 copy, each block choosing) and without (the float64 kernel), for the exact tree
    # and the gumbel release with narrow and wide noise, on near-ties, duplicates, huge
    # offsets, both ends of the filter's range, a grid made useless by one far point and
    # points equal on the grid
    key = philox.draw_key(np.random.default_rng(41))
    for name, X in _filter_sets().items():
        P = metrics.prepare_points(X, metric, None)
        scale = float(np.median(_matrix(P)[0]))
        for rule, lam in ((points.EXACT, 1.0), (points.GUMBEL, 1e4 / scale), (points.GUMBEL, 0.05 / scale)):
            b = 0.0 if rule == points.EXACT else 1 / lam
            # block=False: the per-edge noise of the float64 kernel (the block path's law is
            # tested below; here the filter's decisions)
            got = points.pt_prim(P, 0, -1.0, rule, key, lam, b, block=False)
            ref = points.pt_prim(P, 0, -1.0, rule, key, lam, b, filtered=False)
            assert np.array_equal(got, ref), (name, rule, lam)


# ---------------------------------------------------------------------------
# the law: Kruskal with the exponential mechanism at every step
# ---------------------------------------------------------------------------

def _kruskal_em_law(W, lam, maximum=False):
    """P(tree) of Kruskal whose every step draws, among the edges joining two components,
    e with probability proportional to exp(-lam w_e) (maximum: exp(+lam w_e)); exact,
    by enumerating the sequences with a memo over forests."""
    n = W.shape[0]
    edges = [(i, j) for i in range(n) for j in range(i + 1, n)]
    sgn = 1.0 if maximum else -1.0
    memo = {}

    def comp(forest):
        label = list(range(n))

        def find(a):
            while label[a] != a:
                a = label[a]
            return a
        for a, b in forest:
            label[find(a)] = find(b)
        return find

    def law(forest):
        if len(forest) == n - 1:
            return {forest: 1.0}
        if forest in memo:
            return memo[forest]
        find = comp(forest)
        cand = [e for e in edges if find(e[0]) != find(e[1])]
        s = np.array([sgn * lam * W[e] for e in cand])
        pr = np.exp(s - s.max())
        pr /= pr.sum()
        out = {}
        for e, q in zip(cand, pr):
            for tree, r in law(forest | {e}).items():
                out[tree] = out.get(tree, 0.0) + q * r
        memo[forest] = out
        return out

    return law(frozenset())


CHI_RUNS = 20_000
_R5 = np.random.default_rng(5)
_U5, _N6 = _R5.random((5, 2)), _R5.random((6, 2))
# (points, metric, lam, maximum, the block path's far threshold T_C: None the default). The
# euclidean and sqeuclidean minimum trees take the block path on the grid (one draw per block
# of slots, each step's blocks mixing far, near and big slots and skipped blocks at these
# T_C), the others the per-edge passes
LAW_CASES = {
    "easy": (np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.1], [1.4, 1.3]]), "euclidean", 2.0, False, None),
    "ties": (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), "cityblock", 1.5, False, None),
    "far groups": (np.array([[0.0], [0.4], [50.0], [50.3], [51.0]]), "euclidean", 1.0, False, 2.0),
    "maximum": (np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.1], [1.4, 1.3]]), "chebyshev", 2.0, True, None),
    "large scale": (np.array([[0.0], [1.0], [2.5], [4.0]]) * 1e6, "euclidean", 1.5e-6, False, 1.0),
    # narrow noise (lam 12 on distances below 1.4) with a T_C that marks most slots far
    "narrow": (_N6, "euclidean", 12.0, False, 0.5),
    # two far clusters (a hard input, NOTES section 4): t ~ 80 between them, T_C 12
    "clusters": (np.array([[0.0, 0], [0.05, 0], [0, 0.07], [30, 30], [30.1, 30], [30, 30.04]]),
                 "euclidean", 2.0, False, 12.0),
    "squared": (_U5, "sqeuclidean", 3.0, False, 1.0),
}


@pytest.mark.parametrize("case", list(LAW_CASES))
@pytest.mark.slow_python
def test_gumbel_release_law_is_kruskal_exponential_mechanism(case):
    # chi-square over CHI_RUNS seeded releases against the enumerated law; fails at p < 1e-4
    X, metric, lam, maximum, tc = LAW_CASES[case]
    sgn = 1.0 if maximum else -1.0
    _assert_kruskal_law(case, 2026, lambda P, key: points.pt_prim(
        P, 0, sgn, points.GUMBEL, key, lam, 1 / lam, tc=tc))


def _assert_kruskal_law(case, seed, release):
    # chi-square of CHI_RUNS releases ``release(P, key)`` of LAW_CASES[case] (keys drawn
    # from ``seed``) against the enumerated Kruskal law; fails at p < 1e-4
    X, metric, lam, maximum, tc = LAW_CASES[case]
    P = metrics.prepare_points(X, metric, None)
    expected = _kruskal_em_law(_matrix(P), lam, maximum)
    gen = np.random.default_rng(seed)
    counts = {}
    for _ in range(CHI_RUNS):
        t = _edge_set(release(P, philox.draw_key(gen)))
        counts[t] = counts.get(t, 0) + 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, CHI_RUNS)
    assert pvalue > 1e-4, (case, stat, dof)


def _forced_block_release(P, lam, key, tc):
    # a gumbel release (minimum tree, grid on) whose every pass takes the block path: the
    # path's retry counters are cleared before each step (a choice that depends on nothing,
    # so the law must stay Kruskal's); returns the edges and the block passes taken
    X, code, p, aux = P
    fc = points.filter_consts(X, code)
    fc[points._FC_TC] = tc
    st = points.pt_state(X, code, 0, fc)
    args = (points.PtPoints(X, code, float(p), aux),
            points.PtNoise(-1.0, points.GUMBEL, np.uint64(key[0]), np.uint64(key[1]), lam, 1 / lam,
                           *gumbel_split(1 / lam)))
    for step in range(-1, X.shape[0] - 1):
        st.tops[:, 5] = 0.0  # the grid's retry count (see points._Q_RETRY)
        st.tops[:, points._T_CUTOFF] = 0.0
        points.pt_steps_serial(st, step, 1, *args)
    return st.edges, st.tops[:, points._T_CUT].sum()


@pytest.mark.parametrize("case", ["narrow", "clusters", "squared"])
@pytest.mark.slow_python
def test_block_path_at_every_pass_keeps_the_law(case):
    # pt_prim's block path goes back to the per-edge passes when a block's slots are mostly
    # near, so the cases above take it on about one pass a release (review of stop 42);
    # here every pass of every step takes it: chi-square over CHI_RUNS releases against
    # the enumerated Kruskal law, fails at p < 1e-4
    X, metric, lam, maximum, tc = LAW_CASES[case]
    passes = []

    def release(P, key):
        e, c = _forced_block_release(P, lam, key, tc)
        passes.append(c)
        return e

    _assert_kruskal_law(case, 2027, release)
    assert sum(passes) == CHI_RUNS * X.shape[0]  # one block pass a step, the start's included


def test_block_path_threshold_must_be_nonnegative():
    P = metrics.prepare_points(np.random.default_rng(3).random((5, 2)), "euclidean", None)
    with pytest.raises(ValueError, match="far threshold, must be >= 0"):
        points.pt_prim(P, 0, -1.0, points.GUMBEL, (1, 2), 2.0, 0.5, tc=-1.0)
    assert points.pt_prim(P, 0, -1.0, points.GUMBEL, (1, 2), 2.0, 0.5, tc=0.0).shape == (4, 2)


def _block_path_state(X, lam, key, steps, tc=None):
    # the state of a gumbel release (minimum, euclidean, grid on) after its first steps
    P = metrics.prepare_points(X, "euclidean", None)
    fc = points.filter_consts(P[0], P[1])
    if tc is not None:
        fc[points._FC_TC] = tc
    st = points.pt_state(P[0], P[1], 0, fc)
    args = (points.PtPoints(P[0], P[1], float(P[2]), P[3]),
            points.PtNoise(-1.0, points.GUMBEL, np.uint64(key[0]), np.uint64(key[1]), lam, 1 / lam,
                           *gumbel_split(1 / lam)))
    points.pt_steps_serial(st, -1, 1, *args)
    points.pt_steps_serial(st, 0, steps, *args)
    return st


@pytest.mark.slow_python
def test_block_path_runs_and_keeps_its_thresholds():
    # narrow noise on spread points across blocks: the block path runs (its pass counts)
    # and walks some blocks (a landing); every live slot's far threshold and float32 bound
    # are those of its key, whichever path relaxed it last
    X = np.random.default_rng(21).random((2 * points.BLOCK + 300, 8))
    lam = 60.0
    st = _block_path_state(X, lam, philox.draw_key(np.random.default_rng(22)), 300)
    assert st.tops[:, points._T_CUT].sum() > 0 and st.tops[:, points._T_WALK].sum() > 0
    m = st.meta[points._N_SLOTS]
    live = np.flatnonzero(st.slot[:m] >= 0)
    assert len(live) > 0
    for k in live[::7]:
        g, s = st.gb[k], st.sb[k]
        assert st.qth[k] == points._pt_cut_qth(g, s, lam, lam, st.fc), k
        assert st.fth[k] == points._pt_na(g, s, lam), k
    # the switch: no block pass at all
    P = metrics.prepare_points(X, "euclidean", None)
    key = philox.draw_key(np.random.default_rng(22))
    a = points.pt_prim(P, 0, -1.0, points.GUMBEL, key, lam, 1 / lam)
    b = points.pt_prim(P, 0, -1.0, points.GUMBEL, key, lam, 1 / lam, block=False)
    assert _edge_set(a) != _edge_set(b)  # other noise (the same law: tested above)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_block_path_bounds_only_skip_what_the_exact_test_would(metric):
    # A far slot (grid sum S at or above _pt_cut_qth of its key) must have exp(-t) at most
    # the far rate 2 exp(-T_C), and a near slot's rate bound (_pt_lam_of of its float32
    # bound _pt_na and S) at least exp(-t), t = g - (s - s_v) lam from the float64 distance
    # as the walk computes it: on the filter's sets (near-ties, duplicates, offsets, both
    # ends of the grid's range), keys placed so that t is T_C up to a few ulps, and tails
    # where exp(-t) is ~1e-260 or overflows
    rng = np.random.default_rng(23)
    sq = metric == "sqeuclidean"
    sets = _filter_sets()
    sets["1e12"] = rng.uniform(-1e12, 1e12, (200, 4))
    n_far = n_near = 0
    for name, X in sets.items():
        P = metrics.prepare_points(X, metric, None)
        fc = points.filter_consts(P[0], P[1])
        for v in (0, X.shape[0] - 1):
            st = points.pt_state(P[0], P[1], v, fc.copy())
            if st.xq.shape[0] == 0:
                continue
            m = st.slot.shape[0]
            qs = np.empty(m, dtype=np.int32)
            points._pt_q8_sum(st.xq, st.xqv, v, 0, m, qs)
            w = np.array([points._pt_l2(P[0], v, int(u), sq) for u in st.slot])
            scale = float(np.median(w[w > 0])) if (w > 0).any() else 1.0
            for tc in (0.5, 8.0, 600.0):
                st.fc[points._FC_TC] = tc
                lc = 2.0 * np.exp(-tc)
                for lam in (1.0 / scale, 40.0 / scale, 700.0 / scale):
                    for k in range(0, m, 5):
                        wk = w[k]
                        for eps in (0.0, 2.0 ** -52, -(2.0 ** -52), 1e-3, -1e-3, 0.5):
                            # s_v, g so that a = g + s_v lam = tc - lam wk (1 + eps): t ~ tc
                            g = float(rng.gumbel())
                            sv = (tc - lam * wk * (1 + eps) - g) / lam
                            if sv > 0:
                                continue
                            t = g - (-wk - sv) * lam
                            if qs[k] >= points._pt_cut_qth(g, sv, lam, lam, st.fc):
                                n_far += 1
                                assert np.exp(-t) <= lc, (name, k, tc, eps)
                            else:
                                n_near += 1
                                na = float(points._pt_na(g, sv, lam))
                                lb = points._pt_lam_of(na, qs[k], lam, st.fc[points._FC_QH],
                                                       st.fc[points._FC_QA], sq)
                                # above _L_BIG the slot is decided by its own Gumbel, not
                                # by the process (where exp(-t) overflows, the bound clamps)
                                assert lb > points._L_BIG or lb >= np.exp(-t), (name, k, tc, eps)
    assert n_far > 300 and n_near > 300  # both sides reached
    # a slot without a key is near with the largest rate; a dead slot (qth 0) is far
    assert points._pt_na(0.0, -np.inf, 3.0) == np.inf
    assert points._pt_lam_of(np.inf, 5, 1.0, 0.1, 0.01, False) > 1e300


@pytest.mark.slow_python
def test_post_processing_law_on_a_triangle():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.2, 0.7]])
    P = metrics.prepare_points(X, "euclidean", None)
    D = _matrix(P)
    sigma = 0.4
    expected = naive.post_processing_triangle_probs(D[0, 1], D[0, 2], D[1, 2], sigma)
    gen = np.random.default_rng(7)
    counts = {}
    for _ in range(CHI_RUNS):
        t = _edge_set(points.pt_prim(P, 0, -1.0, points.GAUSS, philox.draw_key(gen), 1.0, sigma))
        counts[t] = counts.get(t, 0) + 1
    pvalue, stat, dof = naive.chisquare_pvalue(counts, expected, CHI_RUNS)
    assert pvalue > 1e-4, (stat, dof)


# ---------------------------------------------------------------------------
# the API on points
# ---------------------------------------------------------------------------

def test_api_exact_mst_equals_the_matrix_tree():
    X = _points("euclidean", 25, seed=4)
    D = cdist(X, X)
    t = fp.exact_mst(X, metric="euclidean")
    assert t.edges.tolist() == fp.exact_mst(D).edges.tolist()
    assert t.weight == pytest.approx(fp.exact_mst(D).weight, rel=1e-12)
    assert dict(t.info) == {"maximum": False, "metric": "euclidean"}
    assert fp.excess_weight(X, t, metric="euclidean") == 0.0


def test_api_release_reads_the_user_array_in_place_and_never_modifies_it():
    X = _points("euclidean", 20, seed=5)
    X.setflags(write=False)
    before = X.copy()
    fp.fast_pamst(X, 1.0, 0.1, rng=0, metric="euclidean", noise="gumbel")
    fp.post_processing(X, 1.0, 0.1, rng=0, metric="euclidean")
    assert np.array_equal(X, before)


def test_api_gumbel_release_reproducible_and_public_info():
    X = _points("cityblock", 30, seed=6)
    a = fp.fast_pamst(X, 0.5, 0.2, rng=3, metric="cityblock", noise="gumbel")
    b = fp.fast_pamst(X, 0.5, 0.2, rng=np.random.default_rng(3), metric="cityblock", noise="gumbel")
    assert a.edges.tolist() == b.edges.tolist()
    lam = privacy.gumbel_rate(0.5, 0.2, 30)
    assert dict(a.info) == {"rho": 0.5, "sensitivity": 0.2, "noise": "gumbel", "rate": lam,
                            "maximum": False, "metric": "cityblock"}
    # the tree is the kernel's with the key drawn from the same generator
    key = philox.draw_key(np.random.default_rng(3))
    P = metrics.prepare_points(X, "cityblock", None)
    assert np.array_equal(a.edges, points.pt_prim(P, 0, -1.0, points.GUMBEL, key, lam, 1 / lam))


def test_api_points_same_tree_as_the_dense_gumbel_release(monkeypatch):
    from fastpamst_nb import gumbel

    monkeypatch.setattr(points, "BLOCK_PATH", False)  # the per-edge noise in both engines
    monkeypatch.setattr(gumbel, "BLOCK_PATH", False)
    X = _points("euclidean", 40, seed=8)
    D = _matrix(metrics.prepare_points(X, "euclidean", None))
    dense = fp.fast_pamst(D, 0.5, 0.1, rng=11, noise="gumbel")
    if "discretization" in dense.info:
        pytest.skip("fast_pamst(D, noise='gumbel') is still the grouped-queue engine (discretized, "
                    "its own noise stream); the one-draw-per-edge engine comes with branch i30")
    pts = fp.fast_pamst(X, 0.5, 0.1, rng=11, metric="euclidean", noise="gumbel")
    assert _edge_set(pts.edges) == _edge_set(dense.edges)


@pytest.mark.parametrize("func", ["fast_pamst", "pamst"])
def test_api_exponential_and_pamst_build_the_matrix(func, monkeypatch):
    # fast_pamst's default noise is gumbel: the points engine's per-edge noise is the dense
    # engine's (their block paths have the same law, other trees for a seed)
    from fastpamst_nb import gumbel

    monkeypatch.setattr(points, "BLOCK_PATH", False)
    monkeypatch.setattr(gumbel, "BLOCK_PATH", False)
    X = _points("euclidean", 15, seed=9)
    D = _matrix(metrics.prepare_points(X, "euclidean", None))
    t = getattr(fp, func)(X, 1.0, 0.1, rng=4, metric="euclidean")
    ref = getattr(fp, func)(D, 1.0, 0.1, rng=4)
    assert t.edges.tolist() == ref.edges.tolist()
    assert t.info["metric"] == "euclidean"


def test_api_exponential_refused_when_the_matrix_does_not_fit(monkeypatch):
    from fastpamst_nb import core

    monkeypatch.setattr(core, "available_memory_bytes", lambda: 2**20)
    X = np.zeros((3000, 2))  # an (n, n) float64 matrix: 72 MB; decided before any work
    with pytest.raises(ValueError, match="noise='gumbel'"):
        fp.fast_pamst(X, 1.0, 0.1, rng=0, metric="euclidean", noise="exponential")
    with pytest.raises(ValueError, match="noise='gumbel'"):
        fp.pamst(X, 1.0, 0.1, rng=0, metric="euclidean")


def test_api_post_processing_info_and_sigma():
    X = _points("euclidean", 20, seed=10)
    t = fp.post_processing(X, 2.0, 0.1, rng=0, metric="euclidean", maximum=True)
    assert t.info["sigma"] == privacy.gaussian_sigma(2.0, 0.1, 20 * 19 // 2)
    assert t.info["maximum"] is True and t.info["metric"] == "euclidean"
    assert fp.excess_weight(X, t, metric="euclidean") >= 0.0


def test_api_float32_points():
    X = np.random.default_rng(0).integers(0, 50, size=(30, 3)).astype(np.float32)
    t32 = fp.fast_pamst(X, 1.0, 0.5, rng=1, metric="euclidean", noise="gumbel")
    t64 = fp.fast_pamst(X.astype(np.float64), 1.0, 0.5, rng=1, metric="euclidean", noise="gumbel")
    assert t32.edges.tolist() == t64.edges.tolist()


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"metric": "mahalanobis"}, ValueError, "known metrics are euclidean, sqeuclidean"),
    ({"metric": 3}, TypeError, "metric must be a str"),
    ({"metric": "minkowski", "p": 0.0}, ValueError, "p >= 1"),
    ({"metric": "minkowski", "p": 0.5}, ValueError, "p >= 1"),
    ({"metric": "minkowski"}, TypeError, "needs p="),
    ({"metric": "euclidean", "p": 2.0}, ValueError, "drop p="),
    ({"p": 2.0}, ValueError, "metric='minkowski'"),
    ({"metric": "euclidean", "topology": np.ones((4, 4), bool)}, ValueError, "drop topology="),
    ({"metric": "euclidean", "symmetric": "upper"}, ValueError, "drop symmetric="),
])
def test_api_bad_parameters(kwargs, exc, match):
    X = np.zeros((4, 4)) + np.arange(4)[:, None]
    with pytest.raises(exc, match=match):
        fp.exact_mst(X, **kwargs)


@pytest.mark.parametrize("X, metric, match", [
    (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, np.inf]]), "euclidean", "row 1"),
    (np.zeros((5, 0)), "euclidean", "d = 0"),
    (np.zeros((0, 3)), "euclidean", "n = 0"),
    (np.zeros(5), "euclidean", "2-D"),
    (np.array([[91.0, 0.0], [0.0, 0.0]]), "haversine", r"\[-90, 90\]"),
    (np.zeros((3, 3)), "haversine", "d = 2"),
    (np.array([[1.0, 0.0], [0.0, 0.0]]), "cosine", "zero vector, row 1"),
])
def test_api_bad_points(X, metric, match):
    with pytest.raises(ValueError, match=match):
        fp.fast_pamst(X, 1.0, 0.1, metric=metric, noise="gumbel")


def test_api_points_type_errors():
    with pytest.raises(TypeError, match="dense"):
        fp.exact_mst(sp.csr_matrix(np.eye(3)), metric="euclidean")
    with pytest.raises(TypeError, match="real numbers"):
        fp.exact_mst(np.array([[1 + 1j], [2]]), metric="euclidean")
    with pytest.raises(TypeError, match="sensitivity="):
        fp.fast_pamst(np.zeros((3, 2)), 1.0, metric="euclidean")
    with pytest.raises(ValueError, match="drop discretization="):
        fp.fast_pamst(np.zeros((3, 2)), 1.0, 0.1, metric="euclidean", noise="gumbel", discretization=0.01)


def test_api_start_checked_against_n():
    with pytest.raises(ValueError, match="start = 5"):
        fp.fast_pamst(np.zeros((3, 2)), 1.0, 0.1, metric="euclidean", noise="gumbel", start=5)


# ---------------------------------------------------------------------------
# sensitivity and clustering
# ---------------------------------------------------------------------------

def test_point_sensitivity():
    for metric in ("euclidean", "cityblock", "chebyshev", "minkowski", "haversine"):
        assert fp.point_sensitivity(0.25, metric) == 0.5
    assert fp.point_sensitivity(0.5, "sqeuclidean", diameter=3.0) == 4 * 0.5 * 3 + 4 * 0.25
    with pytest.raises(ValueError, match="not a metric"):
        fp.point_sensitivity(0.5, "sqeuclidean")
    with pytest.raises(ValueError, match="not a metric"):
        fp.point_sensitivity(0.5, "cosine")
    with pytest.raises(ValueError, match="unknown metric"):
        fp.point_sensitivity(0.5, "hamming")
    with pytest.raises(ValueError):
        fp.point_sensitivity(-1.0, "euclidean")


def test_point_sensitivity_bounds_the_distance_moves():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    r = 0.3
    step = rng.normal(size=X.shape)
    Y = X + r * step / np.linalg.norm(step, axis=1, keepdims=True)  # every point moves by r
    for metric in ("euclidean", "cityblock", "chebyshev"):
        # a euclidean move of r is a move of at most r in cityblock only up to sqrt(d): use its own norm
        move = cdist(X, Y, metric).diagonal().max()
        assert np.abs(cdist(Y, Y, metric) - cdist(X, X, metric)).max() <= fp.point_sensitivity(move, metric) + 1e-12


def test_linkage_matrix_equals_scipy_single_linkage():
    X = _points("euclidean", 40, seed=12)
    Z = fp.linkage_matrix(fp.exact_mst(X, metric="euclidean"))
    Zs = linkage(pdist(X), "single")
    np.testing.assert_allclose(Z[:, 2], Zs[:, 2], rtol=1e-12)
    assert np.array_equal(Z[:, [0, 1, 3]], Zs[:, [0, 1, 3]])
    for k in (2, 5, 9):
        a, b = fcluster(Z, k, "maxclust"), fcluster(Zs, k, "maxclust")
        assert len(set(zip(a, b))) == len(set(a)) == len(set(b)) == k
    dendrogram(Z, no_plot=True)
    # heights from points, and private weights (negative ones raised to 0)
    t = fp.fast_pamst(X, 1.0, 0.1, rng=0, metric="euclidean", noise="gumbel")
    assert np.array_equal(fp.linkage_matrix(t, X, metric="euclidean"), fp.linkage_matrix(t))
    w = fp.private_edge_weights(t, 0.01, 0.1, rng=0)
    Zp = fp.linkage_matrix(t, w)
    assert Zp.shape == (39, 4) and Zp[:, 2].min() >= 0 and np.all(np.diff(Zp[:, 2]) >= 0)
    fcluster(Zp, 3, "maxclust")


def test_linkage_matrix_refuses_a_maximum_tree_without_distances():
    X = _points("euclidean", 6)
    t = fp.exact_mst(X, metric="euclidean", maximum=True)
    with pytest.raises(ValueError, match="distances"):
        fp.linkage_matrix(t)


def test_single_linkage_on_points():
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [9.0]])
    t = fp.exact_mst(X, metric="euclidean")
    assert fp.single_linkage(t, 3, weights=X, metric="euclidean").tolist() == [0, 0, 0, 1, 1, 2]
    with pytest.raises(ValueError, match="points"):
        fp.single_linkage(t, 3, weights=X[:4], metric="euclidean")


# ---------------------------------------------------------------------------
# threads and memory (subprocesses)
# ---------------------------------------------------------------------------

_THREADS_SCRIPT = textwrap.dedent("""
    import json, numba, numpy as np
    from fastpamst_nb import metrics, philox, points
    # two blocks and a part (one fewer than before 2026-11-28: the same kernels, a third
    # fewer steps); gumbel at lam 40 takes the block path on most blocks past the first step
    X = np.random.default_rng(1).random((2 * points.BLOCK + 77, 3))
    P = metrics.prepare_points(X, "euclidean", None)
    key = philox.draw_key(np.random.default_rng(2))
    out = {}
    for t in range(1, 5):
        numba.set_num_threads(t)
        for rule, lam, b in ((points.EXACT, 1.0, 0.0), (points.GUMBEL, 40.0, 1 / 40.0),
                             (points.GAUSS, 1.0, 0.01)):
            for par in (False, True):
                e = points.pt_prim(P, 0, -1.0, rule, key, lam, b, parallel=par)
                out[f"{t}-{rule}-{par}"] = e.tolist()
    print(json.dumps(out))
""")


@pytest.mark.slow_python
def test_same_tree_for_one_to_four_threads():
    env = {**os.environ, "NUMBA_NUM_THREADS": "4"}
    res = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    for rule in (points.EXACT, points.GUMBEL, points.GAUSS):
        trees = {json.dumps(v) for k, v in out.items() if k.split("-")[1] == str(rule)}
        assert len(trees) == 1, rule


_RSS_SCRIPT = textwrap.dedent("""
    import threading, time, numpy as np, fastpamst_nb as fp
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    X = np.random.default_rng(0).random((12000, 2))
    fp.fast_pamst(X[:50], 1.0, 0.1, rng=0, metric="euclidean", noise="gumbel")  # compile
    base = rss(); peak = [base]; done = []
    def sample():
        while not done:
            peak[0] = max(peak[0], rss()); time.sleep(0.005)
    th = threading.Thread(target=sample); th.start()
    fp.fast_pamst(X, 1.0, 0.1, rng=0, metric="euclidean", noise="gumbel")
    done.append(1); th.join()
    print(peak[0] - base)
""")


@pytest.mark.slow_python
def test_gumbel_release_on_points_allocates_no_matrix():
    res = subprocess.run([sys.executable, "-c", _RSS_SCRIPT], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    extra = int(res.stdout.split()[-1])
    # an (n, n) float64 matrix would be 1.15 GB; the state is O(n)
    assert extra < 64 * 2**20, extra


def test_points_floor_is_the_mst_weight():
    from fastpamst_nb import bench

    X = _points("euclidean", 300, d=8, seed=13)
    w = fp.exact_mst(X, metric="euclidean").weight
    assert bench.floor_points(X) == pytest.approx(w, rel=1e-12)
    assert bench.pfloor_points(X, 3) == pytest.approx(w, rel=1e-12)
    res = bench.run_points_bench(200, d=3, repeat=1, sensitivities=(0.1,))
    assert set(res) == {"n", "d", "threads", "floor_serial", "floor_parallel", "exact_mst", "gumbel"}
    assert "x floor" in bench.format_points(res)


def test_progress_bar_does_not_change_the_tree():
    pytest.importorskip("tqdm")
    X = _points("euclidean", 50, seed=14)
    a = fp.fast_pamst(X, 1.0, 0.1, rng=5, metric="euclidean", noise="gumbel", progress=True)
    b = fp.fast_pamst(X, 1.0, 0.1, rng=5, metric="euclidean", noise="gumbel")
    assert a.edges.tolist() == b.edges.tolist()


@pytest.mark.parametrize("func", ["fast_pamst", "post_processing", "pamst"])
def test_one_point_releases_the_empty_tree_without_a_rate(func):
    # nothing is selected: no noise parameter is computed (privacy.py refuses n < 2 and
    # m < 1), as for a 1 x 1 matrix
    tree = getattr(fp, func)(np.zeros((1, 3)), rho=1.0, sensitivity=1.0, rng=0, metric="euclidean")
    assert tree.edges.shape == (0, 2) and tree.n_vertices == 1
    assert tree.info.get("rate", tree.info.get("sigma")) is None


# ---------------------------------------------------------------------------
# extremes (issue 30's review): the noise scale, near-ties, overflowing distances
# ---------------------------------------------------------------------------

# three collinear points 0, 1, eps whose keys D[1, 2] - b G12 and D[0, 1] - b G01 differ by
# less than the rounding of (s1 - s0) > (g0 - g1) b, at lam = 3 (found by the review; found
# again for the Philox-2x32-10 gumbel stream of 2026-11-27: the exact keys give vertex 1 the
# parent 2, fl(d12 - b g12) < fl(1 - b g01) does not)
_NEAR_TIES = [
    ("0x1.126b62742fcafp-2", (8271161168626010388, 6249986615264632347)),
    ("0x1.4bc7889c8abdep-3", (13489009281029109994, 10117726721894452680)),
    ("0x1.a244d7c4c5bd4p-3", (14281693530571227745, 17680547508344867240)),
]


@pytest.mark.parametrize("eps, key", _NEAR_TIES)
def test_gumbel_kernel_orders_near_ties_as_the_dense_keys(eps, key):
    # the points kernel compares the double-double keys of the dense engine: on these
    # near-ties the rounded comparison gave vertex 1 the parent 0, the exact keys give 2
    from fractions import Fraction

    from fastpamst_nb import gumbel

    lam = 3.0
    b = gumbel._scale(lam)[0]
    key = (np.uint64(key[0]), np.uint64(key[1]))
    P = metrics.prepare_points(np.array([[0.0], [1.0], [float.fromhex(eps)]]), "euclidean", None)
    D = _matrix(P)
    g01 = philox.edge_gumbel(key[0], key[1], 0, 1)
    g12 = philox.edge_gumbel(key[0], key[1], 1, 2)
    assert Fraction(D[1, 2]) - Fraction(b) * Fraction(g12) < Fraction(D[0, 1]) - Fraction(b) * Fraction(g01)
    dense = gumbel.gumbel_dense(D, 0, False, lam, key, threads=1, block=False)
    assert dense.tolist() == [[0, 2], [2, 1]]
    for parallel in (False, True):
        edges = points.pt_prim(P, 0, -1.0, points.GUMBEL, key, 1.0 / b, b, parallel=parallel,
                               block=False)
        assert edges.tolist() == dense.tolist()


def test_api_points_take_the_dense_engines_noise_scale(monkeypatch):
    # fast_pamst on points used b = 1 / lam rounded to nearest, the dense engine rounds it
    # up (the effective rate 1 / b never exceeds lam): on points 0, 1, eps with eps
    # between the two b's tie points, the trees differed. Found here from public
    # parameters (rate 1 / (1/93): 1 / lam rounds down) and keys of a fixed stream.
    from fractions import Fraction as F

    from fastpamst_nb import gumbel, points_api

    rho, sens = 1.0, 1.0 / 93
    lam = privacy.gumbel_rate(rho, sens, 3)
    bd, bp = gumbel._scale(lam)[0], 1.0 / lam
    assert bd > bp
    monkeypatch.setattr(points, "BLOCK_PATH", False)  # the per-edge noise: the dense engine's
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(3000):
        key = philox.draw_key(rng)
        g01 = philox.edge_gumbel(key[0], key[1], 0, 1)
        g12 = philox.edge_gumbel(key[0], key[1], 1, 2)
        if not g12 < g01:
            continue
        eps = float((F(bp) + F(bd)) / 2 * (F(g01) - F(g12)))
        # points 0, 1, eps: d01 = 1, d02 = eps, d12 = 1 - eps (exact where eps >= 1/2 fails:
        # the decision is taken on the computed distance)
        d12 = F(abs(1.0 - eps))

        def parent_2(b):
            return d12 - F(b) * F(g12) < 1 - F(b) * F(g01)
        if eps >= 1.0 or parent_2(bp) == parent_2(bd):
            continue
        monkeypatch.setattr(points_api, "draw_key", lambda gen, key=key: key)
        X = np.array([[0.0], [1.0], [eps]])
        tree = fp.fast_pamst(X, rho, sens, metric="euclidean", noise="gumbel", rng=0)
        D = _matrix(metrics.prepare_points(X, "euclidean", None))
        assert tree.edges.tolist() == gumbel.gumbel_dense(D, 0, False, lam, key, threads=1,
                                                           block=False).tolist()
        found += 1
        if found == 3:
            break
    assert found >= 2


@pytest.mark.parametrize("metric, p", [("euclidean", None), ("sqeuclidean", None), ("cityblock", None),
                                       ("chebyshev", None), ("minkowski", 3.0), ("cosine", None)])
def test_coordinates_whose_distances_would_overflow_are_refused(metric, p):
    # distances of coordinates ~1e200 overflowed to inf: no edge relaxed and fast_pamst
    # failed on an edge from vertex -1. The largest magnitude allowed is 2**E, E a function
    # of (metric, p, d): at it every distance is finite and the release is the dense
    # engine's on the same distances (here with the largest noise scale too); above it,
    # a ValueError naming the fix
    from fastpamst_nb import gumbel

    d = 3
    E = metrics.coordinate_limit(metrics.METRICS.index(metric), p, d)
    X = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, 1.0, -1.0], [0.5, -1.0, -0.25]]) * 2.0 ** E
    P = metrics.prepare_points(X, metric, p)
    D = _matrix(P)
    assert np.isfinite(D).all() and D.max() <= 2.0 ** 1000
    for rho, sens in ((1.0, 1.0), (1.0, 2.0 ** 998)):  # rates ~0.8 and ~2**-998
        rng = np.random.default_rng(3)
        tree = fp.fast_pamst(X, rho, sens, metric=metric, p=p, noise="gumbel", rng=rng)
        lam = privacy.gumbel_rate(rho, sens, 4)
        key = philox.draw_key(np.random.default_rng(3))
        assert tree.edges.tolist() == gumbel.gumbel_dense(D, 0, False, lam, key, threads=1,
                                                           block=False).tolist()
    X[2, 1] = np.nextafter(X[2, 1], np.inf)
    for call in (lambda: fp.exact_mst(X, metric=metric, p=p),
                 lambda: fp.fast_pamst(X, 1.0, 1.0, metric=metric, p=p, noise="gumbel", rng=0),
                 lambda: fp.post_processing(X, 1.0, 1.0, metric=metric, p=p, rng=0)):
        with pytest.raises(ValueError, match=rf"above 2\*\*{E}.*rescale X and the sensitivity"):
            call()


def test_api_refuses_points_of_magnitude_1e200():
    X = np.array([[0.0], [3e200], [1e200], [2e200]])
    with pytest.raises(ValueError, match="overflow float64"):
        fp.fast_pamst(X, rho=1.0, sensitivity=1e200, noise="gumbel", rng=0, metric="euclidean")
    # rescaled as the message says: a tree (and the path 0 - 2 - 3 - 1 most of the time)
    tree = fp.fast_pamst(X * 2.0 ** -700, rho=1.0, sensitivity=1e200 * 2.0 ** -700, noise="gumbel",
                         rng=0, metric="euclidean")
    assert tree.edges.shape == (3, 2) and tree.edges.min() >= 0


def test_key_comparison_is_the_exact_order_of_the_keys():
    # points._pt_key_beats decides by the rounded difference only beyond its rounding
    # bound, else by the double-double keys: on near-ties built to a few ulps (offsets up to
    # 1e12, scales from 1e-5 to 2**990) it must give the order of the rational keys
    from fractions import Fraction as F

    from fastpamst_nb import gumbel

    rng = np.random.default_rng(17)
    ties = 0
    for i in range(3000):
        b = float(rng.choice([1e-5, 0.37, 3.0, 2.0 ** 990])) * (1.0 + rng.random())
        b_hi, b_lo = gumbel.split(b)
        g0, g1 = rng.gumbel(size=2)
        s0 = -float(rng.choice([0.0, 1.0, 1e12 * min(b, 1.0), 1e6])) - rng.random() * b
        s1 = s0 + (g0 - g1) * b
        for _ in range(int(rng.integers(0, 4))):
            s1 = np.nextafter(s1, np.inf if i & 1 else -np.inf)
        exact = F(s1) + F(b) * F(g1) - (F(s0) + F(b) * F(g0))
        got = points._pt_key_beats(s1, g1, s0, g0, b, b_hi, b_lo)
        assert got == (exact > 0), (s1, g1, s0, g0, b)
        ties += abs(exact) < F(abs(s0) + 10 * b) * F(2) ** -48
    assert ties > 1000  # most cases are near-ties


@njit
def _mth_check(tls, ms):
    # for each threshold: _pt_keep keeps m exactly when m >= _pt_mth (at the boundary,
    # its neighbours, the ends and the given m); -1 if all hold, else the failing index
    for i in range(tls.shape[0]):
        tl = tls[i]
        th = points._pt_mth(tl)
        if th < points.NEVER and not points._pt_keep(tl, th):
            return i
        if th > 0 and points._pt_keep(tl, min(th - 1, (1 << 53) - 1)):
            return i
        for m in ms:
            if points._pt_keep(tl, m) != (m >= th):
                return i
        for m in (th + 1, th + 2, th - 2, np.int64(0), np.int64((1 << 53) - 1)):
            if 0 <= m < (1 << 53) and points._pt_keep(tl, m) != (m >= th):
                return i
    return -1


@pytest.mark.slow_python
def test_noise_first_threshold_keeps_exactly_what_the_bound_keeps():
    # the noise-first pass compares an edge's Philox bits with the slot's integer threshold
    # _pt_mth(tl) in place of the bound test _pt_keep(tl, m): the same decisions only if
    # _pt_keep is monotone in m and the search finds its boundary. Thresholds across the
    # bound's range, its ends (the top bound 53 ln 2 - ..., T_SKIP) and no key yet (-inf)
    rng = np.random.default_rng(30)
    tls = np.concatenate([rng.uniform(-5.0, 40.0, 3000), np.linspace(36.0, 37.6, 200),
                          [-np.inf, -1e300, -3.7, 0.0, 1e-300, points.T_SKIP, np.nextafter(points.T_SKIP, 0),
                           np.inf, 53 * np.log(2.0), np.nextafter(53 * np.log(2.0), 0)]])
    # m near 1 - U = 2**-k (the bound's binades), and uniform
    ms = np.concatenate([(1 << 53) - (np.int64(1) << np.arange(0, 53, dtype=np.int64)),
                         (1 << 53) - (np.int64(1) << np.arange(1, 53, dtype=np.int64)) + 1,
                         rng.integers(0, 1 << 53, 2000, dtype=np.int64)]).astype(np.int64)
    assert _mth_check(tls, ms) == -1
    # monotone in m on sorted samples: the up-set the threshold describes
    srt = np.sort(ms)
    for tl in rng.uniform(-4.0, 37.0, 50):
        kept = np.array([points._pt_keep(tl, m) for m in srt])
        assert not np.any(kept[:-1] & ~kept[1:]), tl
    assert points._pt_mth(-np.inf) == 0 and points._pt_mth(points.T_SKIP) == points.NEVER
