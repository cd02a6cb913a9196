"""Slow, obviously-correct reference implementations for the test suite.

Every function here favours clarity over speed: plain numpy/scipy, no numba,
no clever data structures.  The fast kernels of ``fastpamst_nb`` are checked
against these, so each one is written directly from its mathematical
definition (see docs/design.rst, Calibration and How exactness is tested).

Conventions
-----------
* ``lam`` is always a RATE: Exp(lam) has density ``lam * exp(-lam * z)``.
* Scores are maximised (the private Prim picks ``argmax score + noise``);
  for a minimum spanning tree the score of an edge is ``-w``.
* A Prim edge is the tuple ``(a, b)``: ``a`` already in the tree, ``b`` new.
"""

import math

import numpy as np
from scipy import integrate, special, stats

__all__ = [
    "prim_mst",
    "rnm_exp_probs",
    "softmax_probs",
    "prim_sequence_distribution",
    "tree_set_distribution",
    "chisquare_pvalue",
    "brute_force_rnm",
    "discretized_scores",
    "post_processing_triangle_probs",
    "exp_calibration",
    "gaussian_sigma",
]

# Tolerances of the quadratures; tight enough that quadrature error is
# invisible next to any chi-square test with a few 1e5 samples.
_EPSABS = 1e-13
_EPSREL = 1e-11
_QUAD_LIMIT = 200


def _check_graph(W, adjacency):
    """Validate W / adjacency and return them as (float64 array, bool mask).

    The mask has a False diagonal: self-loops never take part in a tree.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square matrix, got shape {W.shape}")
    n = W.shape[0]
    if adjacency is None:
        mask = np.ones((n, n), dtype=bool)
    else:
        mask = np.array(adjacency, dtype=bool)  # copy: we edit the diagonal
        if mask.shape != W.shape:
            raise ValueError("adjacency must have the same shape as W")
    np.fill_diagonal(mask, False)
    if not np.array_equal(mask, mask.T):
        raise ValueError("adjacency must be symmetric")
    if not np.array_equal(W[mask], W.T[mask]):
        raise ValueError("W must be symmetric on the edges of the graph")
    return W, mask


def csr_is_symmetric(indptr, indices, data):
    """Whether the CSR triple stores (j, i) with an equal value for every stored (i, j)."""
    entries = {}
    for i in range(len(indptr) - 1):
        for p in range(indptr[i], indptr[i + 1]):
            entries[(i, int(indices[p]))] = data[p]
    return all((j, i) in entries and entries[(j, i)] == v for (i, j), v in entries.items())


# ---------------------------------------------------------------------------
# Exact (non-private) MST
# ---------------------------------------------------------------------------

def prim_mst(W, adjacency=None, start=0):
    """Exact minimum spanning tree by O(n^2) dense Prim.

    Parameters
    ----------
    W : (n, n) array_like of float
        Symmetric edge weights; any finite or infinite value, negatives allowed.
        The diagonal is ignored.
    adjacency : (n, n) array_like of bool, optional
        Which edges exist.  None means the complete graph.
    start : int
        The first vertex of the tree.

    Returns
    -------
    edges : (n-1, 2) int64 ndarray
        ``(tree vertex, new vertex)`` in the order Prim selects them.
    weight : float
        Sum of ``W[a, b]`` over the selected edges.

    Raises
    ------
    ValueError
        If the graph is disconnected.

    Notes
    -----
    Ties are broken towards the smallest new-vertex index (``np.argmin``).
    Reachability is tracked with its own boolean array rather than an
    ``inf`` key, so an edge of weight ``+inf`` is still a usable edge.
    """
    W, mask = _check_graph(W, adjacency)
    n = W.shape[0]
    if not 0 <= start < n:
        raise ValueError(f"start={start} is not a vertex of a {n}-vertex graph")

    visited = np.zeros(n, dtype=bool)
    reachable = np.zeros(n, dtype=bool)  # has at least one edge into the tree
    key = np.full(n, np.inf)  # cheapest edge weight into the tree
    parent = np.full(n, -1, dtype=np.int64)
    edges = np.empty((n - 1, 2), dtype=np.int64)

    def absorb(v):
        visited[v] = True
        # Strict '<' keeps the earliest (lowest-index) tree vertex on ties,
        # but a newly reachable vertex must take v whatever the key is.
        better = mask[v] & ~visited & (~reachable | (W[v] < key))
        key[better] = W[v][better]
        parent[better] = v
        reachable[better] = True

    absorb(start)
    for step in range(n - 1):
        candidates = np.flatnonzero(reachable & ~visited)
        if candidates.size == 0:
            raise ValueError("graph is disconnected")
        b = candidates[np.argmin(key[candidates])]
        edges[step] = (parent[b], b)
        absorb(b)
    weight = float(sum(W[a, b] for a, b in edges))
    return edges, weight


# ---------------------------------------------------------------------------
# Single-step selection probabilities
# ---------------------------------------------------------------------------

def rnm_exp_probs(scores, lam):
    """Exact law of ``argmax_i scores[i] + Z_i`` with Z_i iid Exp(rate ``lam``).

    P(i) = int_0^inf lam e^{-lam z} prod_{j != i} F(s_i + z - s_j) dz,
    F(x) = 1 - e^{-lam x} for x > 0, else 0.

    Parameters
    ----------
    scores : (k,) array_like of float
    lam : float
        Rate of the exponential noise.

    Returns
    -------
    (k,) float64 ndarray summing to 1.

    Notes
    -----
    The kinks of the integrand sit at z = s_j - s_i > 0; below the largest,
    z0 = max(0, max_j s_j - s_i), some factor is 0, so the integrand vanishes
    and only [z0, inf) contributes.  The substitution u = exp(-lam (z - z0))
    maps that half-line onto (0, 1] and removes the infinite tail exactly:

        P(i) = e^{-lam z0} int_0^1 prod_{j != i} (1 - a_j u) du,
        a_j = exp(-lam (s_i + z0 - s_j))  in (0, 1].

    The new integrand is a smooth polynomial on [0, 1] (no kink inside, all
    exponents are <= 0 so nothing overflows), which ``quad`` integrates to
    machine precision.  Equal scores give identical integrals, hence equal
    probabilities.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size == 0:
        raise ValueError("scores must be non-empty")
    if not (lam > 0 and np.isfinite(lam)):
        raise ValueError(f"lam must be a positive finite rate, got {lam}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")

    probs = np.empty(s.size)
    for i in range(s.size):
        # Sorting makes tied entries see a bitwise-identical integrand, so
        # exchangeable entries get exactly equal probabilities.
        others = np.sort(np.delete(s, i))
        z0 = max(0.0, float(others.max() - s[i])) if others.size else 0.0
        a = np.exp(-lam * (s[i] + z0 - others))

        def integrand(u, a=a):
            return float(np.prod(1.0 - a * u))

        val, _ = integrate.quad(integrand, 0.0, 1.0, epsabs=_EPSABS,
                                epsrel=_EPSREL, limit=_QUAD_LIMIT)
        probs[i] = math.exp(-lam * z0) * val
    assert abs(probs.sum() - 1.0) < 1e-9, f"probabilities sum to {probs.sum()!r}"
    return probs


def softmax_probs(scores, lam):
    """Exponential-mechanism law: P(i) proportional to exp(lam * scores[i]).

    Shifting by the maximum before exponentiating keeps every term in (0, 1],
    so neither overflow nor an all-zero denominator can happen. The shift is
    applied to the scores, before the rate: differences of scores near 2**53 are
    exact, while lam * score there has an ulp comparable to the differences.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    e = np.exp(lam * (s - s.max()))
    return e / e.sum()


def brute_force_rnm(scores, lam, rng, noise="exponential", size=None):
    """Sample ``argmax(scores + noise)`` literally, with iid noise per entry.

    Parameters
    ----------
    scores : (k,) array_like of float
    lam : float
        Rate: Exp(lam) has mean 1/lam; Gumbel has scale 1/lam.
    rng : numpy.random.Generator
    noise : {"exponential", "gumbel"}
    size : int, optional
        If given, draw ``size`` independent samples at once (vectorised, for
        Monte Carlo checks) and return an int64 array.

    Returns
    -------
    int, or (size,) int64 ndarray.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    shape = s.shape if size is None else (size, s.size)
    if noise == "exponential":
        z = rng.exponential(1.0 / lam, size=shape)
    elif noise == "gumbel":
        z = rng.gumbel(scale=1.0 / lam, size=shape)
    else:
        raise ValueError(f"unknown noise {noise!r}")
    if size is None:
        return int(np.argmax(s + z))
    return np.argmax(s + z, axis=1).astype(np.int64)


def discretized_scores(weights, s, maximum=False):
    """Scores of Fast-PAMST: ``s * floor(-w / s)`` (``s * floor(w / s)`` for max).

    Evaluated in float64 exactly as written, so the library must reproduce
    the same rounding, bit for bit.
    """
    w = np.asarray(weights, dtype=np.float64)
    s = np.float64(s)
    y = w if maximum else -w
    x = y / s
    # a negative quotient that underflows to -0.0 has exact floor -1 (the kernels' rule,
    # which the calibration's exact-key argument needs); floor(-0.0) would say 0
    return s * np.where((x == 0.0) & (y < 0.0), -1.0, np.floor(x))


# ---------------------------------------------------------------------------
# Whole-run distributions of a private Prim
# ---------------------------------------------------------------------------

def prim_sequence_distribution(W, adjacency, start, step_probs):
    """Exact law of the edge sequence released by a private Prim.

    At every step the candidates are the cut edges ``(a, b)`` (``a`` visited,
    ``b`` not) in sorted ``(a, b)`` order, and ``step_probs(weights)`` gives
    the probability of choosing each of them from their weights ``W[a, b]``.

    Parameters
    ----------
    W : (n, n) array_like of float
    adjacency : (n, n) array_like of bool or None
    start : int
    step_probs : callable
        ``step_probs(weights: ndarray) -> ndarray`` of the same length,
        non-negative, summing to 1.  E.g.
        ``lambda w: rnm_exp_probs(-w, lam)``.

    Returns
    -------
    dict
        ``{((a1, b1), ..., (a_{n-1}, b_{n-1})): probability}`` over every
        sequence of positive probability; the values sum to 1.

    Notes
    -----
    The step law depends only on the visited set, so it is computed once per
    set (memo) and the enumeration multiplies the memoised factors along each
    path.  Exponential in n: meant for n <= 6 or so.
    """
    W, mask = _check_graph(W, adjacency)
    n = W.shape[0]
    memo = {}

    def step(visited):
        if visited not in memo:
            cands = sorted((a, b) for a in visited for b in range(n)
                           if b not in visited and mask[a, b])
            if not cands:
                raise ValueError("graph is disconnected")
            weights = np.array([W[a, b] for a, b in cands])
            p = np.asarray(step_probs(weights), dtype=np.float64)
            if p.shape != weights.shape or np.any(p < 0) or abs(p.sum() - 1) > 1e-9:
                raise ValueError("step_probs must return a probability vector "
                                 "with one entry per candidate")
            memo[visited] = (cands, p)
        return memo[visited]

    dist = {}

    def walk(visited, prefix, prob):
        if len(visited) == n:
            dist[tuple(prefix)] = dist.get(tuple(prefix), 0.0) + prob
            return
        cands, p = step(visited)
        for edge, pe in zip(cands, p):
            if pe > 0:  # zero-probability branches are impossible outcomes
                walk(visited | {edge[1]}, prefix + [edge], prob * pe)

    walk(frozenset([start]), [], 1.0)
    return dist


def tree_set_distribution(seq_dist):
    """Fold a sequence law into a law over trees (sets of undirected edges).

    Keys become ``frozenset({(min(a, b), max(a, b)), ...})``; probabilities of
    sequences that build the same tree in different orders add up.
    """
    out = {}
    for seq, p in seq_dist.items():
        key = frozenset((min(a, b), max(a, b)) for a, b in seq)
        out[key] = out.get(key, 0.0) + p
    return out


# ---------------------------------------------------------------------------
# Goodness of fit
# ---------------------------------------------------------------------------

def chisquare_pvalue(observed, expected_probs, n_runs, min_expected=5.0):
    """Pearson chi-square test of observed counts against exact probabilities.

    Parameters
    ----------
    observed : dict
        ``{key: count}``; a key absent from it has count 0.
    expected_probs : dict
        ``{key: probability}``, summing to 1 within 1e-9.
    n_runs : int
        Number of samples; must equal the sum of the observed counts.
    min_expected : float
        Categories whose expected count ``n_runs * p`` is below this are
        pooled so the chi-square approximation holds.

    Returns
    -------
    pvalue : float
    statistic : float
    dof : int
        Number of final categories minus 1.

    Notes
    -----
    An observed key that is missing from ``expected_probs`` (or has
    probability 0) is an outcome the reference deems impossible: that is a
    definite failure, reported as ``(0.0, inf, 0)`` rather than raised, so
    the caller's ``pvalue > threshold`` assertion fails with a clear value.

    Pooling: every category with expected count < ``min_expected`` goes into
    one pooled category; if the pool itself is still below ``min_expected``
    it is merged into the smallest remaining category.
    """
    total_p = sum(expected_probs.values())
    if abs(total_p - 1.0) > 1e-9:
        raise ValueError(f"expected probabilities sum to {total_p!r}, not 1")
    if sum(observed.values()) != n_runs:
        raise ValueError("observed counts do not sum to n_runs")
    for key, count in observed.items():
        if count > 0 and expected_probs.get(key, 0.0) <= 0.0:
            return 0.0, math.inf, 0

    keys = [k for k, p in expected_probs.items() if p > 0]
    exp_counts = np.array([n_runs * expected_probs[k] for k in keys])
    obs_counts = np.array([observed.get(k, 0) for k in keys], dtype=np.float64)

    small = exp_counts < min_expected
    f_exp = list(exp_counts[~small])
    f_obs = list(obs_counts[~small])
    if small.any():
        pooled_exp = exp_counts[small].sum()
        pooled_obs = obs_counts[small].sum()
        if pooled_exp >= min_expected or not f_exp:
            f_exp.append(pooled_exp)
            f_obs.append(pooled_obs)
        else:
            j = int(np.argmin(f_exp))
            f_exp[j] += pooled_exp
            f_obs[j] += pooled_obs

    if len(f_exp) < 2:  # one category: nothing can be tested
        return 1.0, 0.0, 0
    f_exp = np.array(f_exp)
    # Rescale so both sides sum to exactly n_runs (scipy checks that).
    f_exp *= n_runs / f_exp.sum()
    res = stats.chisquare(np.array(f_obs), f_exp)
    return float(res.pvalue), float(res.statistic), len(f_exp) - 1


# ---------------------------------------------------------------------------
# Gaussian post-processing baseline
# ---------------------------------------------------------------------------

def post_processing_triangle_probs(w01, w02, w12, sigma):
    """Exact law of the tree from Gaussian post-processing on a triangle.

    Each of the 3 weights gets iid N(0, sigma^2) noise and the exact MST of
    the noisy triangle is kept, i.e. the edge with the largest noisy weight
    is dropped:

        P(drop i) = int phi(z) prod_{j != i} Phi((w_i + sigma z - w_j) / sigma) dz.

    Returns
    -------
    dict
        ``{frozenset of the 2 kept edges as (min, max) tuples: probability}``.

    Notes
    -----
    The integrand is bounded by phi(z), so truncating to |z| <= 12 loses
    < 4e-33.  Breakpoints at the centres of the Phi steps,
    z = (w_j - w_i) / sigma, help ``quad`` when sigma is small next to the
    weight gaps and the steps are sharp.
    """
    if not sigma > 0:
        raise ValueError("sigma must be positive")
    edges = [(0, 1), (0, 2), (1, 2)]
    w = np.array([w01, w02, w12], dtype=np.float64)
    half_width = 12.0
    out = {}
    total = 0.0
    for i in range(3):
        others = np.delete(w, i)
        shift = (w[i] - others) / sigma

        def integrand(z, shift=shift):
            phi = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
            return phi * float(np.prod(special.ndtr(z + shift)))

        pts = [p for p in -shift if -half_width < p < half_width]
        val, _ = integrate.quad(integrand, -half_width, half_width,
                                points=pts or None, epsabs=_EPSABS,
                                epsrel=_EPSREL, limit=_QUAD_LIMIT)
        kept = frozenset(e for k, e in enumerate(edges) if k != i)
        out[kept] = val
        total += val
    assert abs(total - 1.0) < 1e-9, f"probabilities sum to {total!r}"
    return out


# ---------------------------------------------------------------------------
# Privacy calibration (docs/design.rst, Calibration), restated independently
# ---------------------------------------------------------------------------

def default_step(sensitivity):
    """Fast-PAMST's default discretization: the largest power of two <= Delta / 16,
    found by halving and doubling (exact for normal floats)."""
    target = sensitivity / 16.0
    s = 1.0
    while s > target:
        s /= 2.0
    while 2.0 * s <= target:
        s *= 2.0
    return s


def exp_calibration(rho, sensitivity, n, s=None, noise="exponential",
                    algorithm="fast_pamst"):
    """Noise rate lambda of one Prim step for a rho-zCDP run on n vertices.

    The n-1 selections share rho evenly.  Exponential-noise RNM is eps-DP
    with lambda = eps / (2 * sensitivity) and eps-DP gives eps^2/2-zCDP, so
    eps = sqrt(2 rho/(n-1)).  The Gumbel / exponential mechanism is
    eps-bounded-range, giving eps^2/8-zCDP, so eps = sqrt(8 rho/(n-1)).
    Discretizing to multiples of s (default ``default_step(Delta)``) changes the
    sensitivity to D_s = s * ceil(Delta / s) when s is a power of two (w / s is
    then exact in floating point) and s * ceil(Delta / s + 1/2) otherwise (the
    rounding of w / s may move a key by up to 1/4 each side); plain ``pamst``
    does not discretize. Delta / s is evaluated exactly with fractions.
    """
    if n < 2:
        raise ValueError("need n >= 2 (at least one selection)")
    if noise == "exponential":
        eps = math.sqrt(2.0 * rho / (n - 1))
    elif noise == "gumbel":
        eps = math.sqrt(8.0 * rho / (n - 1))
    else:
        raise ValueError(f"unknown noise {noise!r}")
    if algorithm == "pamst":
        sens = sensitivity
    elif algorithm == "fast_pamst":
        from fractions import Fraction

        s = default_step(sensitivity) if s is None else s
        mantissa, _ = math.frexp(s)
        steps = Fraction(sensitivity) / Fraction(s)
        if mantissa != 0.5:  # not a power of two
            steps += Fraction(1, 2)
        sens = s * math.ceil(steps)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    return eps / (2.0 * sens)


def gaussian_sigma(rho, sensitivity, m):
    """Noise scale of Gaussian post-processing: Delta * sqrt(m / (2 rho)).

    The m weights each move by at most Delta, so the l2 sensitivity is
    Delta*sqrt(m), and the Gaussian mechanism with sigma = l2/sqrt(2 rho)
    is rho-zCDP.
    """
    return sensitivity * math.sqrt(m / (2.0 * rho))


def spanning_trees(n, edges):
    """Every spanning tree of the graph (n vertices, ``edges`` a list of pairs), by brute force.

    Returns a list of frozensets of sorted pairs: all (n - 1)-subsets of the edges
    that connect the n vertices (a union-find over each subset).
    """
    from itertools import combinations

    pairs = [tuple(sorted(e)) for e in edges]
    out = []
    for subset in combinations(pairs, n - 1):
        parent = list(range(n))

        def find(a):
            while parent[a] != a:
                a = parent[a]
            return a

        ok = True
        for a, b in subset:
            ra, rb = find(a), find(b)
            if ra == rb:
                ok = False
                break
            parent[ra] = rb
        if ok:
            out.append(frozenset(subset))
    return out


def compositions(total, parts):
    """Every vector of ``parts`` non-negative integers summing to ``total`` (stars and
    bars), as the rows of an int64 array (C(total + parts - 1, parts - 1) rows)."""
    from itertools import combinations

    out = []
    for bars in combinations(range(total + parts - 1), parts - 1):
        prev, row = -1, []
        for b in bars:
            row.append(b - prev - 1)
            prev = b
        row.append(total + parts - 2 - prev)
        out.append(row)
    return np.array(out, dtype=np.int64).reshape(-1, parts)


def ring6():
    """Six vertices: a ring plus two chords, non-integer weights (a public sparse
    topology, symmetric CSR)."""
    from scipy import sparse

    rows = [0, 1, 2, 3, 4, 5, 0, 1]
    cols = [1, 2, 3, 4, 5, 0, 3, 4]
    vals = [0.3, 1.7, 0.9, 2.2, 0.1, 1.1, 0.4, 1.3]
    A = sparse.coo_matrix((vals, (rows, cols)), shape=(6, 6))
    return (A + A.T).tocsr()


# ----------------------------------------------------------------------------
# Philox (the counter-based noise of the gumbel release)
# ----------------------------------------------------------------------------

# Salmon, Moraes, Dror, Shaw (SC'11), "Parallel random numbers: as easy as 1, 2, 3":
# the round multipliers and the Weyl key increments, per word width.
_PHILOX = {
    32: ((0xD2511F53, 0xCD9E8D57), (0x9E3779B9, 0xBB67AE85)),
    64: ((0xD2E7470EE14C6C93, 0xCA5A826395121157), (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)),
}


def philox_ref(counter, key, width=32, rounds=10):
    """Philox-4xW-R of four counter words and two key words, with Python integers.

    One round: (hi, lo) = M0 * c0, (hi', lo') = M1 * c2 (2W-bit products), then
    (c0, c1, c2, c3) = (hi' ^ c1 ^ k0, lo', hi ^ c3 ^ k1, lo); between rounds the key
    words are bumped by the Weyl increments. Width 64 is numpy's ``np.random.Philox``
    (tested against it), width 32 is the package's kernel (tested against this and
    against the published known-answer vectors).
    """
    (m0, m1), (w0, w1) = _PHILOX[width]
    mask = (1 << width) - 1
    c = [int(x) for x in counter]
    k = [int(x) for x in key]
    for _ in range(rounds):
        p0 = m0 * c[0]
        p1 = m1 * c[2]
        c = [(p1 >> width) ^ c[1] ^ k[0], p1 & mask, (p0 >> width) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + w0) & mask, (k[1] + w1) & mask]
    return c


def philox2x32_ref(counter, key, rounds=10):
    """Philox-2x32-R of two counter words and one key word, with Python integers.

    One round: (hi, lo) = 0xD256D193 * c0 (a 64-bit product), then (c0, c1) =
    (hi ^ k ^ c1, lo); between rounds the key is bumped by 0x9E3779B9 (Salmon et al.,
    SC'11; tested against Random123's published known answers).
    """
    mask = 0xFFFFFFFF
    c0, c1 = int(counter[0]), int(counter[1])
    k = int(key)
    for _ in range(rounds):
        p = 0xD256D193 * c0
        c0, c1 = (p >> 32) ^ k ^ c1, p & mask
        k = (k + 0x9E3779B9) & mask
    return [c0, c1]


def edge_uniform_ref(k0, k1, i, j):
    """The gumbel stream's uniform of edge {i, j} per the layout documented in
    ``fastpamst_nb.philox``: Philox-2x32-10 under lo(k0) of the counter
    (min + lo(k1), max + hi(k1)) mod 2**32, the first word XORed with hi(k0)."""
    k0, k1 = int(k0), int(k1)
    a, b = min(i, j), max(i, j)
    lo = 0xFFFFFFFF
    x0, x1 = philox2x32_ref([(a + (k1 & lo)) & lo, (b + (k1 >> 32)) & lo], k0 & lo)
    m = ((x0 ^ (k0 >> 32)) << 21) | (x1 >> 11)
    return 2.0 ** -54 if m == 0 else m * 2.0 ** -53


def edge_uniforms_ref(k0, k1, i, j):
    """The two post-processing uniforms of edge {i, j} (Philox-4x32-10) per the layout
    documented in ``fastpamst_nb.philox``."""
    k0, k1 = int(k0), int(k1)
    a, b = min(i, j), max(i, j)
    lo = 0xFFFFFFFF
    x = philox_ref([a, b, k1 & lo, k1 >> 32], [k0 & lo, k0 >> 32], 32)
    out = []
    for hi_w, lo_w in ((x[0], x[1]), (x[2], x[3])):
        m = (hi_w << 21) | (lo_w >> 11)
        out.append(2.0 ** -54 if m == 0 else m * 2.0 ** -53)
    return tuple(out)


# ----------------------------------------------------------------------------
# Kruskal with the exponential mechanism (the law of noise="gumbel")
# ----------------------------------------------------------------------------

def _kruskal_candidates(mask, comp):
    """Edges (a, b), a < b, of the graph whose ends lie in different components."""
    n = mask.shape[0]
    return [(a, b) for a in range(n) for b in range(a + 1, n) if mask[a, b] and comp[a] != comp[b]]


def _merge(comp, a, b):
    ca, cb = comp[a], comp[b]
    return tuple(ca if c == cb else c for c in comp)


def kruskal_em_step_probs(W, cands, lam, maximum=False):
    """One exponential mechanism over Kruskal's candidates: P(e) proportional to
    exp(-lam * w_e) (exp(lam * w_e) for a maximum tree). The weights are shifted by
    their extreme before the rate (differences of weights near 1e12 are exact)."""
    w = np.array([W[a, b] for a, b in cands], dtype=np.float64)
    score = w if maximum else -w
    return softmax_probs(score, lam)


def kruskal_em_sample(W, adjacency, lam, rng, maximum=False):
    """One release of sequential Kruskal with the exponential mechanism at every step.

    Each step draws, among the edges joining two components of the forest so far,
    e with probability proportional to exp(-lam * w_e) (``maximum``: exp(lam * w_e)),
    and adds it. Returns the tree as a frozenset of (min, max) pairs.
    """
    W, mask = _check_graph(W, adjacency)
    n = W.shape[0]
    comp = tuple(range(n))
    tree = []
    for _ in range(n - 1):
        cands = _kruskal_candidates(mask, comp)
        if not cands:
            raise ValueError("graph is disconnected")
        p = kruskal_em_step_probs(W, cands, lam, maximum)
        a, b = cands[rng.choice(len(cands), p=p)]
        tree.append((a, b))
        comp = _merge(comp, a, b)
    return frozenset(tree)


def kruskal_em_tree_distribution(W, adjacency, lam, maximum=False):
    """Exact law of the edge SET released by :func:`kruskal_em_sample`.

    The forward law over forests after t steps, with a memo per forest (a forest
    reached by several orders is expanded once, with its summed probability):
    ``{frozenset of (a, b) pairs: probability}``, summing to 1. Exponential in n:
    meant for n <= 6.
    """
    W, mask = _check_graph(W, adjacency)
    n = W.shape[0]
    layer = {frozenset(): (1.0, tuple(range(n)))}
    for _ in range(n - 1):
        nxt = {}
        for forest, (prob, comp) in layer.items():
            cands = _kruskal_candidates(mask, comp)
            if not cands:
                raise ValueError("graph is disconnected")
            p = kruskal_em_step_probs(W, cands, lam, maximum)
            for (a, b), pe in zip(cands, p):
                if pe <= 0.0:
                    continue
                f = forest | {(a, b)}
                old = nxt.get(f)
                nxt[f] = (pe * prob + (old[0] if old else 0.0), _merge(comp, a, b))
        layer = nxt
    return {f: p for f, (p, _) in layer.items()}
