"""The discretized, grouped Report-Noisy-Max kernel: one private Prim selection.

It returns exactly ``argmax_e (key_e + Z_e)`` over the active cut edges, with
i.i.d. noise Z_e (in key units, rate ``r = lam * s``): exponential noise
(report-noisy-max, ``kind = 0``) or Gumbel noise (the exponential mechanism,
``kind = 1``). Nothing but the noise that matters is drawn:

* **Groups and blocks from the top down.** Starting at the best non-empty group
  and walking down, each step takes the largest aligned block of the queue's
  layers whose key span is at most ``sigma / r`` (a single group when none is).
  Its maximum noise is one draw, ``MaxNoise(c)`` (for a single group that is the
  paper's MaxExp; the carrier is a uniformly random member, drawn only when it
  matters). For a block, the carrier's group is found by a rank select, and the
  other c - 1 edges, whose noise is i.i.d. conditioned on being at most the
  maximum, can only win by exceeding ``best - key_top``: their number is
  Binomial and those few get a noise drawn from the doubly truncated law.
* **Bottom trick, adaptive** (NOTES section 4). Before each block, if the
  remaining |L| edges, all with keys at most ``key_top``, expect fewer than
  ``theta`` noises above ``t = best - key_top``, stop: k ~ Binomial(|L|, P(Z > t)),
  k distinct uniformly random edges of L get noise from the law conditioned on
  ``Z > t`` (memoryless for exponential noise: t + Exp), the rest cannot win.

The stopping point and the block sizes depend only on counts and on noise
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
from .queue import gq_count, gq_select, gq_take_edge, gq_top

EXPONENTIAL = 0
GUMBEL = 1

# stats counters (an int64 array the caller may pass; tests read them)
ST_STEPS = 0
ST_GROUP_DRAWS = 1      # single groups resolved by one MaxNoise draw
ST_BLOCK_DRAWS = 2      # multi-group blocks resolved with a carrier
ST_BLOCK_EXTRA = 3      # extra candidates drawn inside blocks
ST_BOTTOM_CALLS = 4     # times the bottom trick ended a selection
ST_BOTTOM_K = 5         # candidates (k) the bottom trick drew in total
ST_BOTTOM_WINS = 6      # selections won by a bottom candidate
N_STATS = 8


@njit(cache=CACHE, nogil=True, inline="always")
def _u01(rng):
    """Uniform on the open interval (0, 1)."""
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


@njit(cache=CACHE, nogil=True, inline="always")
def survival(kind, t, r):
    """P(Z > t) for noise of rate r."""
    if kind == EXPONENTIAL:
        if t <= 0.0:
            return 1.0
        return math.exp(-r * t)
    return -math.expm1(-math.exp(-r * t))


@njit(cache=CACHE, nogil=True, inline="always")
def survival_inv(kind, y, r):
    """The t with P(Z > t) = y, for 0 < y < 1."""
    if kind == EXPONENTIAL:
        return -math.log(y) / r
    return -math.log(-math.log1p(-y)) / r


@njit(cache=CACHE, nogil=True, inline="always")
def max_noise(kind, c, r, rng):
    """The maximum of c i.i.d. noises: S^-1(1 - U^(1/c)) (NOTES erratum 1)."""
    return survival_inv(kind, -math.expm1(math.log(_u01(rng)) / c), r)


@njit(cache=CACHE, nogil=True)
def _distinct_edge(q, level, node, count, chosen, n_chosen, visited, rng):
    """A uniformly random active edge of a block, not among chosen[:n_chosen]."""
    while True:
        g = gq_select(q, level, node, np.int64(rng.random() * count))
        code = gq_take_edge(q, g, visited, rng)
        fresh = True
        for i in range(n_chosen):
            if chosen[i] == code:
                fresh = False
                break
        if fresh:
            return g, code


@njit(cache=CACHE, nogil=True)
def rnm_select(q, visited, kind, r, theta, sigma, rng, stats):
    """One private selection from the cut held by ``q``; returns the winning edge's code.

    Parameters
    ----------
    q : GroupQueue
        The cut (at least one active edge).
    visited : bool array (n,)
    kind : int
        EXPONENTIAL (report-noisy-max) or GUMBEL (exponential mechanism).
    r : float
        Noise rate in key units (lam * s).
    theta : float
        Stop and run the bottom trick once the expected number of remaining
        noises above the current best is below theta (speed only).
    sigma : float
        Largest r * (key span) of a block resolved as a whole (speed only).
    rng : numpy.random.Generator
    stats : int64 array (N_STATS,)

    Complexity: O(F * (number of blocks visited)); with the default theta and
    sigma a few dozen blocks per selection on the paper's benchmark.
    """
    key = q.key
    sh = q.sh
    stats[ST_STEPS] += 1
    g0 = gq_top(q)
    k0 = key[g0]
    remaining = gq_count(q, 4, 0)
    best = -np.inf
    win_g = -1
    win_code = np.int64(-1)
    started = False
    p = g0
    chosen = np.empty(8, dtype=np.int64)
    while remaining > 0:
        ktop = np.float64(key[p] - k0)
        if started:
            t = best - ktop
            pt = survival(kind, t, r)
            if remaining * pt < theta:
                stats[ST_BOTTOM_CALLS] += 1
                k = rng.binomial(remaining, pt) if pt > 0.0 else 0
                stats[ST_BOTTOM_K] += k
                if k > chosen.shape[0]:
                    chosen = np.empty(k, dtype=np.int64)
                for i in range(k):
                    g, code = _distinct_edge(q, 4, 0, remaining, chosen, i, visited, rng)
                    chosen[i] = code
                    val = np.float64(key[g] - k0) + survival_inv(kind, _u01(rng) * pt, r)
                    if val > best:
                        best = val
                        win_g = g
                        win_code = code
                        stats[ST_BOTTOM_WINS] += 1
                break
        started = True
        # the largest aligned block whose top is p: empty ones are skipped whole,
        # non-empty ones are resolved whole when their key span is small enough
        level = 0
        node = p
        c = q.cnt[p]
        for lv in range(3, 0, -1):
            width = np.int64(1) << (lv * sh)
            if (p + 1) & (width - 1) != 0:
                continue
            nd = p >> (lv * sh)
            cc = gq_count(q, lv, nd)
            if cc == 0 or r * np.float64(key[p] - key[p - width + 1]) <= sigma:
                level = lv
                node = nd
                c = cc
                break
        lo = p - (np.int64(1) << (level * sh)) + 1
        if c > 0:
            zmax = max_noise(kind, c, r, rng)
            if level == 0:
                stats[ST_GROUP_DRAWS] += 1
                val = ktop + zmax
                if val > best:
                    best = val
                    win_g = p
                    win_code = -1
            else:
                stats[ST_BLOCK_DRAWS] += 1
                g, code = _distinct_edge(q, level, node, c, chosen, 0, visited, rng)
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
                    k = rng.binomial(c - 1, min(max(pc, 0.0), 1.0))
                    stats[ST_BLOCK_EXTRA] += k
                    if k + 1 > chosen.shape[0]:
                        chosen = np.empty(k + 1, dtype=np.int64)
                    chosen[0] = code
                    for i in range(k):
                        g, code2 = _distinct_edge(q, level, node, c, chosen, i + 1, visited, rng)
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
        win_code = gq_take_edge(q, win_g, visited, rng)
    return win_code
