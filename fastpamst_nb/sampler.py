"""The discretized, grouped Report-Noisy-Max kernel: one private Prim selection.

It returns exactly ``argmax_e (key_e + Z_e)`` over the active cut edges, with
i.i.d. noise Z_e (in key units, rate ``r = lam * s``): exponential noise
(report-noisy-max, ``kind = 0``) or Gumbel noise (the exponential mechanism,
``kind = 1``). Nothing but the noise that matters is drawn:

* **Buckets from the top down.** Starting at the best non-empty bucket and
  walking down, each step takes the largest aligned node of the queue (a bucket,
  a block of buckets, or a single group where a bucket's key span exceeds
  ``sigma / r``) and draws its maximum noise in one go, ``MaxNoise(c)`` (for a
  single group that is the paper's MaxExp). Only when ``key_top + MaxNoise`` could
  beat the best so far is the carrier of that maximum looked up (a uniformly
  random active member, found by rank selection): its value is exact. The other
  c - 1 edges, whose noise is i.i.d. conditioned on being at most the maximum,
  can only win by exceeding ``best - key_top``: their number is Binomial and those
  few get a noise drawn from the doubly truncated law.
* **Bottom trick, adaptive** (NOTES section 4). Before each block, if the
  remaining |L| edges, all with keys at most ``key_top``, expect fewer than
  ``theta`` noises above ``t = best - key_top``, stop: k ~ Binomial(|L|, P(Z > t)),
  k distinct uniformly random edges of L get noise from the law conditioned on
  ``Z > t`` (memoryless for exponential noise: t + Exp), the rest cannot win.

The stopping point and the node sizes depend only on counts and on noise
already drawn for *other* edges, never on the noise of the edges they decide
about, so the output distribution does not depend on ``theta`` or ``sigma``
(tests run the extremes). They only change the speed.

All noise laws are handled through the survival function S and its inverse in
key units: exponential S(t) = exp(-r t) (t >= 0); Gumbel S(t) = 1 - exp(-exp(-r t)).
"""

import math

import numpy as np
from numba import njit

from .core import CACHE
from .queue import ROOT, gq_count, gq_select, gq_take, gq_take_cut, gq_top, gq_width_shift

EXPONENTIAL = 0
GUMBEL = 1

# stats counters (an int64 array the caller may pass; tests read them)
ST_STEPS = 0
ST_GROUP_DRAWS = 1      # single groups resolved by one MaxNoise draw
ST_BLOCK_DRAWS = 2      # nodes whose carrier had to be looked up
ST_BLOCK_EXTRA = 3      # extra candidates drawn inside blocks
ST_BOTTOM_CALLS = 4     # times the bottom trick ended a selection
ST_BOTTOM_K = 5         # candidates (k) the bottom trick drew in total
ST_BOTTOM_WINS = 6      # selections won by a bottom candidate
ST_NODES = 7            # groups, buckets and blocks visited (empty ones included)
N_STATS = 8


@njit(cache=CACHE, nogil=True)
def _u01(rng):
    """Uniform on the open interval (0, 1)."""
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


@njit(cache=CACHE, nogil=True)
def survival(kind, t, r):
    """P(Z > t) for noise of rate r."""
    if kind == EXPONENTIAL:
        if t <= 0.0:
            return 1.0
        return math.exp(-r * t)
    return -math.expm1(-math.exp(-r * t))


@njit(cache=CACHE, nogil=True)
def survival_inv(kind, y, r):
    """The t with P(Z > t) = y, for 0 < y < 1."""
    if kind == EXPONENTIAL:
        return -math.log(y) / r
    return -math.log(-math.log1p(-y)) / r


@njit(cache=CACHE, nogil=True)
def max_noise(kind, c, r, rng):
    """The maximum of c i.i.d. noises: S^-1(1 - U^(1/c)) (NOTES erratum 1)."""
    return survival_inv(kind, -math.expm1(math.log(_u01(rng)) / c), r)


@njit(cache=CACHE, nogil=True)
def binomial(n, p, rng):
    """Binomial(n, p) by waiting times: geometric gaps between successes until they
    pass n (Devroye 1986, X.4.3), in O(1 + min(np, n(1-p))) draws.

    Every binomial here has a small mean (about theta, or the few non-carriers
    that can still win), where this is exact and cheap; numba's BTPE binomial
    alone took ~3 s of compile time per call site.
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    flip = p > 0.5
    lq = math.log1p(-(1.0 - p if flip else p))
    k = 0
    pos = 0
    while True:
        pos += np.int64(math.floor(math.log(_u01(rng)) / lq)) + 1
        if pos > n:
            break
        k += 1
    return n - k if flip else k


@njit(cache=CACHE, nogil=True)
def _take_below(q, W, level, node, count, pmax, visited, rng):
    """A uniformly random active edge of a node (level 1, 2 or ROOT = the whole cut)
    among its groups <= pmax, given their number ``count``; returns (group, code)."""
    if level == ROOT and q.dense and 2 * count >= q.total[0]:
        # most of the cut qualifies: draw from the cut itself, no bucket is touched
        return gq_take_cut(q, W, pmax, rng)
    bb, _ = gq_select(q, level, node, np.int64(rng.random() * count))
    lo = bb << q.sh1
    top = (np.int64(1) << q.sh1) - 1
    if not q.groups or pmax - lo >= top:
        # a whole bucket: without group counts, p always sits at a bucket's top
        return gq_take(q, W, bb, 0, top, q.cnt[bb], visited, rng)
    c = 0
    for g in range(lo, pmax + 1):
        c += q.cntg[g]
    return gq_take(q, W, bb, 0, pmax - lo, c, visited, rng)


@njit(cache=CACHE, nogil=True)
def _distinct_edge(q, W, level, node, count, pmax, chosen, n_chosen, visited, rng):
    """As ``_take_below``, but not among chosen[:n_chosen] (uniform over the rest)."""
    while True:
        g, code = _take_below(q, W, level, node, count, pmax, visited, rng)
        fresh = True
        for i in range(n_chosen):
            if chosen[i] == code:
                fresh = False
                break
        if fresh:
            return g, code


@njit(cache=CACHE, nogil=True)
def rnm_select(q, W, visited, kind, r, theta, sigma, rng, stats):
    """One private selection from the cut held by ``q``; returns the winning edge's code.

    Parameters
    ----------
    q : GroupQueue
        The cut (at least one active edge).
    W : (n, n) array
        The dense weights (an empty array for a sparse graph), read to materialize
        buckets and to draw bottom candidates straight from the cut.
    visited : bool array (n,)
    kind : int
        EXPONENTIAL (report-noisy-max) or GUMBEL (exponential mechanism).
    r : float
        Noise rate in key units (lam * s).
    theta : float
        Stop and run the bottom trick once the expected number of remaining
        noises above the current best is below theta (speed only).
    sigma : float
        Largest r * (key span) of a node resolved as a whole (speed only).
    rng : numpy.random.Generator
    stats : int64 array (N_STATS,)

    Complexity: O(F) per node visited; with the default theta and sigma a
    handful of buckets per selection on the paper's benchmark.
    """
    key = q.key
    stats[ST_STEPS] += 1
    p = gq_top(q)
    k0 = key[p]
    remaining = gq_count(q, ROOT, 0)
    best = -np.inf
    win_g = -1
    win_code = np.int64(-1)
    first = True
    chosen = np.empty(8, dtype=np.int64)
    while remaining > 0:
        ktop = np.float64(key[p] - k0)
        if not first:
            t = best - ktop
            pt = survival(kind, t, r)
            if remaining * pt < theta:
                stats[ST_BOTTOM_CALLS] += 1
                k = binomial(remaining, pt, rng)
                stats[ST_BOTTOM_K] += k
                if k > chosen.shape[0]:
                    chosen = np.empty(k, dtype=np.int64)
                for i in range(k):
                    g, code = _distinct_edge(q, W, ROOT, 0, remaining, p, chosen, i, visited, rng)
                    chosen[i] = code
                    val = np.float64(key[g] - k0) + survival_inv(kind, _u01(rng) * pt, r)
                    if val > best:
                        best = val
                        win_g = g
                        win_code = code
                        stats[ST_BOTTOM_WINS] += 1
                break
        # the largest node whose top is p (on the first step every node holding p
        # qualifies: nothing above p is active) that is empty, or narrow enough to
        # be resolved whole; buckets always are when groups are not tracked
        level = 0
        node = p
        lo = p
        c = np.int64(0)
        for lv in range(2 if q.layered else 1, 0, -1):
            w = gq_width_shift(q, lv)
            if not first and (p + 1) & ((np.int64(1) << w) - 1) != 0:
                continue
            nd = p >> w
            cc = gq_count(q, lv, nd)
            nlo = nd << w
            if cc == 0 or (lv == 1 and not q.groups) or r * np.float64(key[p] - key[nlo]) <= sigma:
                level = lv
                node = nd
                lo = nlo
                c = cc
                break
        if level == 0:
            c = q.cntg[p]
        first = False
        stats[ST_NODES] += 1
        if c > 0:
            zmax = max_noise(kind, c, r, rng)
            if level == 0:
                stats[ST_GROUP_DRAWS] += 1
                val = ktop + zmax
                if val > best:
                    best = val
                    win_g = p
                    win_code = -1
            elif ktop + zmax > best:
                # only now does the carrier's group matter: below best, neither it
                # nor the c - 1 smaller noises can win, so no edge is looked up
                stats[ST_BLOCK_DRAWS] += 1
                g, code = _distinct_edge(q, W, level, node, c, p, chosen, 0, visited, rng)
                val = np.float64(key[g] - k0) + zmax
                if val > best:
                    best = val
                    win_g = g
                    win_code = code
                # the other c - 1 noises are i.i.d. given that they are <= zmax;
                # they matter only above t
                t = best - ktop
                if c > 1 and t < zmax:
                    s_max = survival(kind, zmax, r)
                    s_t = survival(kind, t, r)
                    pc = (s_t - s_max) / (1.0 - s_max)
                    k = binomial(c - 1, pc, rng)
                    stats[ST_BLOCK_EXTRA] += k
                    if k + 1 > chosen.shape[0]:
                        chosen = np.empty(k + 1, dtype=np.int64)
                    chosen[0] = code
                    for i in range(k):
                        g, code2 = _distinct_edge(q, W, level, node, c, p, chosen, i + 1, visited, rng)
                        chosen[i + 1] = code2
                        z = survival_inv(kind, s_max + _u01(rng) * (s_t - s_max), r)
                        val = np.float64(key[g] - k0) + z
                        if val > best:
                            best = val
                            win_g = g
                            win_code = code2
            remaining -= c
        p = lo - 1
    if win_code < 0:
        b = win_g >> q.sh1
        goff = win_g - (b << q.sh1)
        _, win_code = gq_take(q, W, b, goff, goff, q.cntg[win_g], visited, rng)
    return win_code
