"""Spanning trees of points: a textbook Prim whose rows are computed from X.

When vertex v joins the tree, its distances to the vertices not yet in the tree
are computed from the rows of X (:func:`fastpamst_nb.metrics.metric_row`),
so no (n, n) array ever exists: O(n d) memory for X, O(n) for the state.

One loop, three key rules, all *maximizing* a key (``sgn = -1`` for a minimum
tree, ``+1`` for a maximum one), the key of an edge being ``s + g * b`` with
``s = sgn * w``:

- ``EXACT``: g = 0 (the exact tree; ties go to the smallest vertex index);
- ``GUMBEL``: g = G_e, the standard Gumbel of the edge from the counter-based
  stream (:func:`fastpamst_nb.philox.edge_gumbel`), b = 1 / lam: the exact tree
  of w - G / lam (maximum: w + G / lam), the exponential mechanism's law
  (issue 30, docs/design.rst);
- ``GAUSS``: g = sgn * Z_e, Z_e a standard normal from the edge's two uniforms
  (Box-Muller), b = sigma: Gaussian post-processing.

A candidate with state (s1, g1) beats (s0, g0) when ``(s1 - s0) > (g0 - g1) * b``
(the difference of the weights first, so a weight offset of 1e12 cannot round the
noise away). GUMBEL takes that comparison in the dense engine's exact order
(``_pt_key_beats``): the rounded difference decides beyond its rounding bound, the
double-double keys of :func:`fastpamst_nb.gumbel.dd_key` on near-ties, so the tree
is the dense engine's on the same distances, with its noise scale b (1 / lam rounded
up, and the keys' power-of-two scale of ``gumbel._scale``, which the caller passes in
``sgn`` and b). Most edges of a noisy rule are decided without their
noise's logarithms: a Gumbel above ``t = g_best - (s - s_best) * lam`` is needed
to relax; none is when t >= ``T_SKIP`` (no 53-bit uniform gives a Gumbel so
large), and when t - ``MARGIN`` is at least ``gumbel.gumbel_upper`` of the edge's
uniform (an upper bound of its Gumbel from the uniform's bits, no logarithm) the
exact computation would not relax either (docs/design.rst, Points). A normal is
bounded by ``Z_MAX`` likewise. When the noise is wide (a minimum tree whose blocks
kept few edges at their last pass) the bounds come first: a score s = sgn w <= 0
gives t >= g_best + s_best * lam whatever the distance, so an edge whose bound is
at or below that is skipped without its distance, and only the few kept read X's
row (``NOISE_FIRST_SHARE``). That test is monotone in the edge's 53 Philox bits, so each
slot keeps its integer threshold (``mth``, ``_pt_mth``, updated when its key changes) and
the pass compares the bits with it: 12 bytes a slot (int32 vertex, int64 threshold), no
bound computed, the same decisions.

The candidates sit in ``slot`` (int32 below 2**31 points) in increasing vertex order, cut into blocks of
``BLOCK`` slots; a step relaxes every live slot with the new vertex and keeps
each block's best, then reduces the blocks in order. For the coordinate-wise
metrics (``SOA_METRICS``) the state holds a coordinate-major copy of X (d, slots),
column k the point of slot k, so that a block's distances are computed coordinate
after coordinate over contiguous slots (the loop vectorizes), each summed in the
order of ``metrics.metric_distance``: the same doubles as the reported weights.
For a minimum tree on euclidean or sqeuclidean points (``FILTER_METRICS``, EXACT and
GUMBEL) the copy is in float32 (``xf``) and filters: each slot's sum of squares in float32,
with a proven error bound (``filter_consts``), rules out most edges, and only the rest take
their float64 distance from X's row, so the decisions are the float64 kernel's. In front of
it a uint8 grid copy (``xq``, ``quant_consts``: d bytes a slot, exact integer sums against
an integer threshold a slot) rules out most edges first; a block whose grid is coarse (it
lets through clearly more than the float32 filter did) runs the float32 filter for a while.
GUMBEL on that grid (narrow noise: most edges' t below ``T_SKIP``, so the per-edge pass
hashed every slot) draws *one Poisson process per block of slots* instead of a Gumbel per
edge (``_pt_gumbel_cut``; docs/design.rst, Points, "One draw per block of slots"): each
edge is examined once, so only the event G > t and G given it matter, and those are the
events of independent Poisson counts of rates exp(-t); a slot's integer far threshold
(``qth``: t >= ``T_C``) and float32 bound (``fth``) bound the rates, so a block whose first
point lies beyond its total is decided by one draw of the block stream
(``philox.block_uniforms``). Same law, other trees for a seed than the per-edge noise
(``pt_prim(block=False)``).
A slot whose vertex joined dies (-1); the slots (and the copy) are compacted when
the dead exceed a sixteenth of the slots (O(n) in all: the slots shrink by a
sixteenth or more each time), so that few dead slots are hashed.

Threads: the serial kernel loops over a step's blocks; the shared kernel
(:func:`pt_steps_shared`) starts its threads once a call and lets them claim the
blocks one at a time, the thread that finishes a step's last block selecting the
next vertex, so no thread waits for one that holds no block (a fork/join a step
waited for a descheduled thread every step on a busy machine). The same blocks,
reduced in the same order by the same selection: the same tree for any number of
threads. :class:`_Chooser` runs whichever of the two was faster on its last call.
"""

import math
import sys
import time
from collections import namedtuple

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .core import CACHE
from .metrics import CHEBYSHEV, CITYBLOCK, EUCLIDEAN, SQEUCLIDEAN, metric_distance, metric_row
from .gumbel import T_SKIP, _dd_less, dd_key, gumbel_upper, split
# the edge's Philox block and its 53-bit uniform, as philox.edge_uniform computes them
# (inlined, so that a loop over a block's edges is vectorized: see _pt_block)
from .philox import _MASK, _S32, bits_of_words, block_uniforms, unit_of_bits
from .philox import _block as philox_block
from .philox import _unit as philox_unit
from .threads import forked_after_omp, prange_threads, thread_count

EXACT, GUMBEL, GAUSS = 0, 1, 2
# the metrics whose distance is a sum (or max) of per-coordinate terms: their kernels read a
# coordinate-major copy of X (_pt_soa_row), so the distance loop runs over contiguous
# slots and vectorizes (a row of X per slot, d = 8, does not)
SOA_METRICS = (EUCLIDEAN, SQEUCLIDEAN, CITYBLOCK, CHEBYSHEV)
# topk[blk] of a block whose top must be found by a full scan (its top slot died, or
# the slots moved); -1: a block with no live slot
RESCAN = -2
BLOCK = 1024
# when more than this share of a block's edges needed their noise at its last pass, the
# next pass draws every slot's noise in one vectorized loop rather than edge by edge
HASH_ALL_SHARE = 0.125
# GUMBEL, minimum tree, a hashed block: when at most this share of its edges had a Gumbel
# bound above gbl + sbl lam at its last pass (wide noise, past the first steps), the next
# pass draws the bounds first and computes only those edges' distances (_pt_block)
NOISE_FIRST_SHARE = 0.125
# |Z| = sqrt(-2 ln U1) |cos| <= 8.65 for the smallest uniform, 2**-54 (philox.py)
Z_MAX = 9.5
# how far above the bound of an edge's Gumbel t must lie for the edge to be skipped: far
# above the rounding of t (|t| < T_SKIP where the bound is used, so its error is ~1e-14)
MARGIN = 1e-9

# mth of a slot that no edge's bits can keep: above every 53-bit m (a dead slot's, and a
# slot whose threshold t lies at or above every bound of the stream)
NEVER = 1 << 53
_TOP_BITS = (1 << 53) - 1
_LN2 = math.log(2.0)

# The float32 filter (docs/design.rst, Points, "A float32 filter"): for a minimum tree on
# these metrics the state holds a float32 coordinate-major copy xf of X, and a step first
# computes each slot's sum of squares S32 in float32 (half the bytes of the float64 copy,
# twice the lanes); only a slot whose S32 could still give a float64 distance that relaxes
# it computes that distance, from X's row (``metrics.metric_distance``: the reported weight
# bit for bit). The bound is rigorous (``filter_consts``), so the decisions are the float64
# kernel's.
FILTER_METRICS = (EUCLIDEAN, SQEUCLIDEAN)
# the filter's range: coordinates of magnitude M in [2**-40, 2**40] (no float32 overflow of
# a sum of squares, no subnormal copy of the largest coordinate) and d <= 4096 (so that
# the float64 roundings stay below the 2**-38 the bounds allow them)
_F_MMIN, _F_MMAX, _F_DMAX = 2.0 ** -40, 2.0 ** 40, 4096
_F_U = 2.0 ** -24  # float32's unit roundoff
# fc, the filter's constants (float64): sqeuclidean flag, A = 2 sqrt(d) u M (1 + 2**-30)
# (the rounding of X to float32, in distance units), G1 = (1 + gamma_d) (1 + 2**-40),
# D = d 2**-149 (float32 underflows), 1 / (1 + gamma_d) and 1 / (1 + u) rounded down
_FC_SQ, _FC_A, _FC_G1, _FC_D, _FC_IG, _FC_IU = range(6)
# ... and the uint8 grid's (``quant_consts``, docs/design.rst, Points, "A uint8 grid in front"):
# its step h and A8 = 2 sqrt(d) E (1 + 2**-40), E the measured quantization error bound
_FC_QH, _FC_QA = 6, 7
# ... and GUMBEL's block path's far threshold T_C (``pt_prim(tc=)``; speed only)
_FC_TC = 8
_FC_LEN = 9
# the uint8 grid: 255 steps over the widest coordinate range; an integer threshold a slot
# that no sum of squares reaches (d <= 4096: S <= 4096 * 255**2 < 2**31 - 1): every edge passes
_Q_LEVELS = 255
_Q_NOBEST = 2 ** 31 - 1
# a block runs the float32 filter instead of the grid for this many passes when the grid
# let through more than _Q_EXTRA of its slots beyond the float32 filter's last share
# (a coarse grid: each such slot reads X's row, ~100 ns from memory at n = 10**6)
_Q_RETRY = 16.0
_Q_EXTRA = 1.0 / 32
# tops' columns: s, g of the block's top, then the rules' speed statistics (GUMBEL, GAUSS:
# the share of edges that needed their noise, the noise-first share; EXACT with the grid:
# the float32 filter's last share, the passes left before the grid is tried again; GUMBEL
# with the grid: the passes left before the block path is tried again, then two counts for
# tests and benchmarks: the block's passes by the block path, and those that walked)
_TOPS_COLS = 9
_T_CUTOFF, _T_CUT, _T_WALK = 6, 7, 8

# _pt_key_beats decides from the rounded difference of the keys when it exceeds this
# share of the magnitudes subtracted (8u: far above the 3u (1 + 2u) its roundings can move it)
_PT_SURE = 2.0 ** -50

# the kernels' state: flat arrays, one row per candidate slot (prefix ``pt_``); xf, fth, fc:
# the float32 filter (``filter_consts``; empty when it is off). A block's scratch (its
# distances, bounds, listed slots) is allocated once a call of ``_pt_blocks`` and shared by
# its blocks: it stays in the L1/L2 cache, where a scratch row per block (24 MiB at
# n = 10**6) was streamed from memory with the state
# xq, xqv, qth: the uint8 grid in front of it (``quant_consts``; empty when it is off)
PtState = namedtuple("PtState", ["slot", "sb", "gb", "parent", "xt", "tops", "topk",
                                 "meta", "edges", "mth", "xf", "fth", "fc", "xq", "xqv", "qth"])
_N_SLOTS, _N_DEAD, _NEXT = 0, 1, 2

# the prepared points, as the kernels take them (``metrics.prepare_points``): X (n, d),
# the metric's code, its p (float) and its auxiliary array
PtPoints = namedtuple("PtPoints", ["X", "code", "p", "aux"])

# the key rule's scalars: sgn (+1.0 maximum, -1.0 minimum: the weights' sign), rule
# (EXACT/GUMBEL/GAUSS), k0, k1 (the counter-based key, uint64), lam (the rate), b (the
# noise scale), b_hi + b_lo (Dekker's split of b, ``gumbel.split``)
PtNoise = namedtuple("PtNoise", ["sgn", "rule", "k0", "k1", "lam", "b", "b_hi", "b_lo"])


@njit(cache=CACHE, inline="always")
def _pt_beats(s1, g1, s0, g0, b):
    """Whether the key s1 + g1 * b beats s0 + g0 * b, compared without forming the keys
    (the difference of the weights, then the scaled noise: see the module's docstring)."""
    return (s1 - s0) > (g0 - g1) * b


@njit(cache=CACHE, inline="always")
def _pt_views(st, lo, hi):
    """A block's views of GUMBEL's per-slot state, slots lo..hi-1, indexed from 0 (a loop
    index known to be >= 0 needs no negative-index fix-up per access, which kept the
    hashing loops from vectorizing): (slot, sb, gb, parent, mth, qth, fth)."""
    return (st.slot[lo:hi], st.sb[lo:hi], st.gb[lo:hi], st.parent[lo:hi], st.mth[lo:hi],
            st.qth[lo:hi], st.fth[lo:hi])


@njit(cache=CACHE, inline="always")
def _pt_relax(k, s, m, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo, ts, tg, tk, qthl, fthl, fc, c):
    """GUMBEL's relaxation of slot k by the edge from v (score s, its Gumbel's bits m),
    once the bound let the edge through: the Gumbel from its two logarithms, then
    ``_pt_take``. Called only for the few edges the bound keeps (about n ln n a release),
    so its arrays' reference counts do not weigh."""
    g = -math.log(-math.log(unit_of_bits(m)))
    return _pt_take(k, s, g, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo, ts, tg, tk, qthl, fthl,
                    fc, c)


@njit(cache=CACHE, inline="always")
def _pt_take(k, s, g, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo, ts, tg, tk, qthl, fthl, fc, c):
    """GUMBEL: the edge from v (score s, Gumbel g) offered to slot k: the slot's best key,
    parent and thresholds replaced if the edge's key beats it, and the block's top
    (ts, tg, tk) returned, ties to the lower slot. The thresholds: ``mth`` (the noise-first
    pass's) and, with the grid (``qthl`` not empty), the block path's far threshold
    ``qth`` (``_pt_cut_qth``) and its float32 bound of -a in ``fth`` (``_pt_na``): every
    path writes all of them, since a block may change paths between steps."""
    if _pt_key_beats(s, g, sbl[k], gbl[k], b, b_hi, b_lo):
        sbl[k] = s
        gbl[k] = g
        pal[k] = v
        mthl[k] = _pt_mth(g + s * lam)
        if qthl.shape[0] > 0:
            qthl[k] = _pt_cut_qth(g, s, lam, c, fc)
            fthl[k] = _pt_na(g, s, lam)
        if tk < 0 or _pt_key_beats(s, g, ts, tg, b, b_hi, b_lo) or (
                k < tk and not _pt_key_beats(ts, tg, s, g, b, b_hi, b_lo)):
            return s, g, k
    return ts, tg, tk


@njit(cache=CACHE, inline="always")
def _pt_key_beats(s1, g1, s0, g0, b, b_hi, b_lo):
    """GUMBEL's exact order: whether s1 + g1 * b beats s0 + g0 * b, i.e. whether the key
    (-s1) - b * g1 is below (-s0) - b * g0, in the dense engine's double-double keys
    (``gumbel.dd_key``, b split into b_hi + b_lo) wherever rounding could decide. s0 =
    -inf (no key yet) loses to every finite s1.

    First the rounded difference D = fl(fl(s1 - s0) - fl(fl(g0 - g1) * b)): its four
    roundings move it by at most 3u (|s1 - s0| + |(g0 - g1) b|) (1 + 2u), u = 2**-53 (plus
    an underflowed product's 2**-1074), so beyond ``_PT_SURE`` times that sum (with an
    absolute 2**-1000) D has the exact difference's sign; only nearer ties (rare: the
    difference of two independent noises is that small) form the two keys.
    """
    if s0 == -np.inf:
        return s1 > s0
    ds = s1 - s0
    dg = (g0 - g1) * b
    diff = ds - dg
    if abs(diff) > (abs(ds) + abs(dg)) * _PT_SURE + 2.0 ** -1000:
        return diff > 0.0
    return _pt_dd_beats(s1, g1, s0, g0, b, b_hi, b_lo)


@njit(cache=CACHE, nogil=True)
def _pt_dd_beats(s1, g1, s0, g0, b, b_hi, b_lo):
    """The near-tie path of ``_pt_key_beats``: the two double-double keys (not inlined:
    rare, and kept out of the hot loops' code)."""
    h1, l1 = dd_key(-s1, b, b_hi, b_lo, g1)
    h0, l0 = dd_key(-s0, b, b_hi, b_lo, g0)
    return _dd_less(h1, l1, h0, l0)


@njit(cache=CACHE, inline="always")
def _pt_normal(u1, u2):
    """The standard normal of two uniforms (Box-Muller)."""
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=CACHE, inline="always")
def _pt_keep(tl, m):
    """The noise-first pass's test: whether the edge whose Philox bits are m (53 bits) may
    relax a slot whose key gives tl = g + s lam (a lower bound of the edge's threshold t):
    tl below ``T_SKIP`` and below the edge's Gumbel bound plus twice ``MARGIN`` (the
    rounding of tl; docs/design.rst, Points). Nondecreasing in m (``gumbel_upper`` is,
    and so is each rounded add), so the m it keeps are those >= ``_pt_mth(tl)``."""
    return tl < T_SKIP and tl < (gumbel_upper(m) + MARGIN) + MARGIN


@njit(cache=CACHE, nogil=True)
def _pt_mth(tl):
    """The smallest 53-bit m that ``_pt_keep(tl, m)`` keeps (``NEVER`` if none): a slot's
    integer threshold, so that the noise-first pass decides an edge by one comparison of
    its Philox bits, reading neither the slot's key nor computing the bound (the same
    decisions: ``_pt_keep`` is monotone in m). Run when a slot's key changes (about ln n
    times a slot), not per edge.

    The bound is ln(2) (52 - E - f) for q' = floor((2**53 - m) / 2) = 2**E (1 + f)
    (``gumbel_upper``), so the boundary lies near q' = 2**z', z' = 52 - tl / ln 2 read
    piecewise linearly; from that estimate a galloping search brackets the boundary
    (kept above, not kept below) and bisection closes it, each step a call of
    ``_pt_keep`` itself: the estimate's rounding changes the number of steps (about a
    dozen), never the result.
    """
    if not _pt_keep(tl, np.int64(_TOP_BITS)):
        return np.int64(NEVER)
    if _pt_keep(tl, np.int64(0)):
        return np.int64(0)
    z = min(max(52.0 - tl / _LN2, -1.0), 53.0)
    e = math.floor(z)
    m0 = np.int64(min(max(2.0 ** 53 - 2.0 * (2.0 ** e) * (1.0 + (z - e)), 1.0), float(_TOP_BITS)))
    step = np.int64(1)
    if _pt_keep(tl, m0):
        hi = m0
        while True:  # ends: m = 0 is not kept
            lo = max(hi - step, np.int64(0))
            if not _pt_keep(tl, lo):
                break
            hi = lo
            step *= 2
    else:
        lo = m0
        while True:  # ends: m = 2**53 - 1 is kept
            hi = min(lo + step, np.int64(_TOP_BITS))
            if _pt_keep(tl, hi):
                break
            lo = hi
            step *= 2
    while hi - lo > 1:  # lo not kept, hi kept
        mid = lo + (hi - lo) // 2
        if _pt_keep(tl, mid):
            hi = mid
        else:
            lo = mid
    return hi


def filter_consts(X, code):
    """The float32 filter's constants ``fc`` (float64, see ``_FC_*``) for points X (n, d) and
    the metric ``code``, or None where the filter does not apply (a metric outside
    ``FILTER_METRICS``, the largest magnitude M outside [2**-40, 2**40], d > 4096).

    The bound (docs/design.rst, Points, "A float32 filter"): with u = 2**-24, a coordinate
    rounded to float32 moves by at most u M (M >= 2**-40: also for a subnormal one); the
    float32 difference of two rounded coordinates is a + e rounded, |e| <= 2 u M, so its
    value c satisfies |a| >= |c| / (1 + u) - 2 u M; the sum S32 of the d rounded squares,
    summed in order from 0, is within gamma_d = d u / (1 - d u) of the sum of the c^2
    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (3.5)) plus d 2**-150
    for underflowed squares. By Minkowski's inequality the true distance r = ||a|| is then
    at least sqrt((S32 - d 2**-149) / (1 + gamma_d)) / (1 + u) - 2 sqrt(d) u M. The float64
    distance the kernel would compute is within (d + 3) 2**-53 < 2**-40 of r, relatively
    (for r >= 2**-500; below, it is >= 0).
    """
    if code not in FILTER_METRICS or X.shape[0] == 0:
        return None
    d = X.shape[1]
    if d > _F_DMAX:
        return None
    M = float(np.max(np.abs(X)))
    if not (_F_MMIN <= M <= _F_MMAX):
        return None
    gd = d * _F_U / (1.0 - d * _F_U)
    fc = np.zeros(_FC_LEN)  # _FC_QH = 0: no grid (``quant_consts`` sets it)
    fc[_FC_SQ] = 1.0 if code == SQEUCLIDEAN else 0.0
    fc[_FC_A] = 2.0 * math.sqrt(d) * _F_U * M * (1.0 + 2.0 ** -30)
    fc[_FC_G1] = (1.0 + gd) * (1.0 + 2.0 ** -40)
    fc[_FC_D] = d * 2.0 ** -149
    fc[_FC_IG] = (1.0 / (1.0 + gd)) * (1.0 - 2.0 ** -50)
    fc[_FC_IU] = (1.0 / (1.0 + _F_U)) * (1.0 - 2.0 ** -50)
    fc[_FC_TC] = T_C
    return fc


def quant_consts(X, fc):
    """The uint8 grid in front of the float32 filter: X's points quantized (n, d) uint8, and
    ``fc`` (``filter_consts``) completed with the grid's step h and A8 = 2 sqrt(d) E; or
    None when the grid is useless (all points equal, a non-finite step).

    The grid (docs/design.rst, Points, "A uint8 grid in front"): q = round((x - lo_j) / h)
    clipped to 0..255, lo_j the coordinate's minimum, h the widest range / 255. Whatever
    the rounding of that formula, E bounds abs(x - (lo_j + h q)) over every coordinate of
    every point: its float64 maximum (three roundings, each at most u times a magnitude
    below M + max abs(lo) + 255 h) plus 4 u times that sum. Two points' quantization
    errors then differ by at most 2 sqrt(d) E in norm, so by the triangle inequality the
    distance r >= h sqrt(S) - 2 sqrt(d) E, S the exact integer sum of the squared
    differences of their q."""
    n, d = X.shape
    lo = X.min(axis=0)
    h = float((X.max(axis=0) - lo).max()) / _Q_LEVELS
    if not (h > 0.0 and math.isfinite(h)):
        return None
    q = np.empty((n, d), dtype=np.uint8)
    err = 0.0
    for j in range(d):  # a coordinate at a time: O(n) temporaries
        qj = np.clip(np.rint((X[:, j] - lo[j]) / h), 0, _Q_LEVELS)
        err = max(err, float(np.max(np.abs(X[:, j] - (lo[j] + qj * h)))))
        q[:, j] = qj
    big = float(np.max(np.abs(X))) + float(np.max(np.abs(lo))) + _Q_LEVELS * h
    e = err * (1.0 + 2.0 ** -40) + 4.0 * 2.0 ** -53 * big
    fc[_FC_QH] = h
    fc[_FC_QA] = 2.0 * math.sqrt(d) * e * (1.0 + 2.0 ** -40)
    return q


def pt_state(X, code, start, fc=None, grid=True):
    """The state of a Prim on the n points X (n, d) from ``start``: O(n) memory, and
    for the metrics of ``SOA_METRICS`` a coordinate-major copy of X (d, n - 1) in X's
    dtype, column k the point of slot k (for the others an empty (0, 0) array). With the
    float32 filter's constants ``fc`` (``filter_consts``) the copy is in float32 instead
    (``xf``), with a float32 threshold a slot (``fth``); with ``grid`` also the uint8 grid
    (``quant_consts``): a uint8 coordinate-major copy ``xq``, the points' grid coordinates
    ``xqv`` (n, d) and an int32 threshold a slot (``qth``)."""
    n = X.shape[0]
    # int32 vertex indices below 2**31 points: half the bytes a step streams per slot
    itype = np.int32 if n < 2 ** 31 else np.int64
    slot = np.delete(np.arange(n, dtype=itype), start)
    nb = max(1, (n + BLOCK - 1) // BLOCK)
    m = max(n - 1, 0)
    meta = np.array([n - 1, 0, start], dtype=np.int64)
    xt = np.empty((0, 0), dtype=X.dtype)
    xf = np.empty((0, 0), dtype=np.float32)
    xq = np.empty((0, 0), dtype=np.uint8)
    xqv = np.empty((0, 0), dtype=np.uint8)
    qth = np.empty(0, dtype=np.int32)
    if fc is not None:
        xf = np.empty((X.shape[1], m), dtype=np.float32)
        for k in range(X.shape[1]):  # rounded to nearest: within u |x| (u M for subnormals)
            xf[k] = X[slot, k]
        # +inf: no best yet, every edge passes (a dead slot's is -inf: none passes)
        fth = np.full(m, np.inf, dtype=np.float32)
        q = quant_consts(X, fc) if grid and m > 0 else None
        if q is not None:
            xqv = q
            xq = np.empty((X.shape[1], m), dtype=np.uint8)
            for k in range(X.shape[1]):
                xq[k] = q[slot, k]
            # no best yet: every edge passes (a dead slot's is 0: none passes)
            qth = np.full(m, _Q_NOBEST, dtype=np.int32)
    else:
        fc = np.zeros(_FC_LEN)
        fth = np.empty(0, dtype=np.float32)
        if code in SOA_METRICS:
            # filled a coordinate at a time: X[slot].T would first make a row-major copy (3x X at the peak)
            xt = np.empty((X.shape[1], m), dtype=X.dtype)
            for k in range(X.shape[1]):
                xt[k] = X[slot, k]
    # mth 0: no key yet (s = -inf), every edge is kept
    return PtState(slot, np.full(m, -np.inf), np.zeros(m),
                   np.full(m, start, dtype=itype), xt, np.ones((nb, _TOPS_COLS)),
                   np.full(nb, RESCAN, dtype=np.int64), meta, np.empty((m, 2), dtype=np.int64),
                   np.zeros(m, dtype=np.int64), xf, fth, fc, xq, xqv, qth)


@njit(cache=CACHE, inline="always")
def _pt_fth(w, fc):
    """A slot's float32 threshold when its best distance (or squared distance) is w: S32 at
    or above it implies a float64 distance >= w (no relaxation: the exact rule's test is
    strict). R = w' (1 + 2**-38) + 2**-500, w' = w or sqrt(w); T = G1 ((R + A)(1 + u))**2 + D,
    then rounded up into float32 (+inf for w = +inf: no best yet). See ``filter_consts``:
    S32 >= T gives r >= R, and the float64 distance is >= R (1 - 2**-40) >= w."""
    r = math.sqrt(w) if fc[_FC_SQ] != 0.0 else w
    r = r * (1.0 + 2.0 ** -38) + 2.0 ** -500
    q = (r + fc[_FC_A]) * (1.0 + _F_U)
    t = fc[_FC_G1] * (q * q) + fc[_FC_D]
    # rounded to nearest, float32 moves t by at most 2**-24 relatively or 2**-150: both covered
    return np.float32(t * (1.0 + 2.0 ** -22) + 2.0 ** -148)


@njit(cache=CACHE, inline="always")
def _pt_qth(w, fc):
    """A slot's integer grid threshold when its best distance (or squared distance) is w:
    S (the exact integer sum of squared grid differences, ``_pt_q8_sum``) at or above it
    implies a float64 distance >= w. With R as in ``_pt_fth``, T >= ((R + A8) / h)**2
    (each rounding covered by a 2**-40 factor, then rounded up to an integer): S >= T gives
    h sqrt(S) - A8 >= R, so r >= R (``quant_consts``) and the float64 distance >= w.
    2**31 - 1 (no S reaches it) when w = +inf or T is that large."""
    r = math.sqrt(w) if fc[_FC_SQ] != 0.0 else w
    r = r * (1.0 + 2.0 ** -38) + 2.0 ** -500
    t = (r + fc[_FC_QA]) / fc[_FC_QH] * (1.0 + 2.0 ** -40)
    t = t * t * (1.0 + 2.0 ** -40)
    if not t < _Q_NOBEST:  # also +inf
        return np.int32(_Q_NOBEST)
    return np.int32(math.ceil(t))


@njit(cache=CACHE, nogil=True)
def _pt_q8_sum(xq, xqv, v, lo, hi, out):
    """out[k - lo] = the exact integer sum of squared differences of slot k's grid
    coordinates and v's (int32: at most 4096 * 255**2), coordinate after coordinate over
    contiguous slots (uint8 loads: 32 a vector on AVX2; a step reads d bytes a slot)."""
    m_k = np.uint64(hi - lo)
    lou = np.uint64(lo)
    for k in range(m_k):
        out[k] = 0
    for j in range(xq.shape[0]):  # no slice: see _pt_exact_filtered
        c = np.int32(xqv[v, j])
        for k in range(m_k):
            x = np.int32(xq[j, lou + k]) - c
            out[k] += x * x


@njit(cache=CACHE, nogil=True)
def _pt_q8_lo(qsum, fc, m_k, out):
    """out[k] = a lower bound of the float64 distance (or squared distance) from the grid
    sum S = qsum[k]: h sqrt(S) - A8 (``quant_consts``) with every rounding covered by a
    shrink factor, as ``_pt_f32_lo``."""
    h = fc[_FC_QH]
    a = fc[_FC_QA]
    sq = fc[_FC_SQ] != 0.0
    for k in range(m_k):
        x = h * math.sqrt(np.float64(qsum[k])) * (1.0 - 2.0 ** -50)  # <= h sqrt(S)
        r = max(x - a, 0.0)
        if sq:
            out[k] = max(r * r * (1.0 - 2.0 ** -38) - 2.0 ** -999, 0.0)
        else:
            out[k] = max(r * (1.0 - 2.0 ** -38) - 2.0 ** -500, 0.0)


@njit(cache=CACHE, nogil=True)
def _pt_f32_sum(xf, X, v, lo, hi, out):
    """out[k - lo] = the float32 sum of squares of slot k's rounded coordinates minus v's
    (coordinate after coordinate over contiguous slots, float32 only: 8 lanes on AVX2),
    summed from 0 in coordinate order as ``filter_consts``'s bound assumes."""
    m_k = hi - lo
    z = np.float32(0.0)
    for k in range(m_k):
        out[k] = z
    for j in range(xf.shape[0]):
        xj = xf[j, lo:hi]
        c = np.float32(X[v, j])
        for k in range(m_k):
            x = xj[k] - c
            out[k] += x * x


@njit(cache=CACHE, nogil=True)
def _pt_f32_lo(s32, fc, m_k, out):
    """out[k] = a lower bound of the float64 distance (or squared distance) from S32 = s32[k]
    (``filter_consts``): every rounding below is covered by a shrink factor, so that
    out[k] <= the distance ``metrics.metric_distance`` returns."""
    dd = fc[_FC_D]
    ig = fc[_FC_IG]
    iu = fc[_FC_IU]
    a = fc[_FC_A]
    sq = fc[_FC_SQ] != 0.0
    for k in range(m_k):
        y = max(np.float64(s32[k]) - dd, 0.0) * ig
        x = math.sqrt(y) * iu * (1.0 - 2.0 ** -40)  # <= ||c|| / (1 + u)
        r = max(x - a, 0.0)  # <= r, up to one rounding
        if sq:
            out[k] = max(r * r * (1.0 - 2.0 ** -38) - 2.0 ** -999, 0.0)
        else:
            out[k] = max(r * (1.0 - 2.0 ** -38) - 2.0 ** -500, 0.0)


@njit(cache=CACHE, inline="always")
def _pt_soa_row(xt, X, v, lo, hi, code, out):
    """out[k - lo] = distance(v, slot k) for k in lo..hi-1 from the coordinate-major copy
    ``xt`` (d, slots) (dead slots too: their values are never read). Coordinate after
    coordinate, so the inner loop runs over contiguous slots and vectorizes; each
    distance sums its terms in the order of :func:`fastpamst_nb.metrics.metric_distance`
    (coordinate 0 first, from 0.0), so it is bit for bit the distance reported."""
    m_k = hi - lo
    for k in range(m_k):
        out[k] = 0.0
    for j in range(xt.shape[0]):
        xj = xt[j, lo:hi]
        c = np.float64(X[v, j])
        if code == CHEBYSHEV:
            for k in range(m_k):
                t = abs(np.float64(xj[k]) - c)
                out[k] = t if t > out[k] else out[k]
        elif code == CITYBLOCK:
            for k in range(m_k):
                out[k] += abs(np.float64(xj[k]) - c)
        else:
            for k in range(m_k):
                x = np.float64(xj[k]) - c
                out[k] += x * x
    if code == EUCLIDEAN:
        for k in range(m_k):
            out[k] = math.sqrt(out[k])


@njit(cache=CACHE, inline="always")
def _pt_l2(X, v, u, sq):
    """``metrics.metric_distance(X, v, u)`` for euclidean (``sq`` False) and sqeuclidean
    (True): the same sum in the same order (from 0.0, coordinate 0 first), so the same
    double. Written out in the loops that take it (inlined): a call of a function of its own
    took and dropped a reference to X, atomic operations that serialised the survivors'
    rows, each a cache miss at n = 10**6, where a loop of plain loads lets them overlap."""
    acc = 0.0
    for j in range(X.shape[1]):
        t = X[v, j] - X[u, j]
        acc += t * t
    return acc if sq else math.sqrt(acc)


# The block path (GUMBEL, a minimum tree on the uint8 grid; docs/design.rst, Points, "One
# draw per block of slots"): a slot is "far" when its grid sum reaches its integer threshold
# qth (t >= T_C then), "near" otherwise; a near slot whose rate bound exceeds _L_BIG is
# decided by its own edge's Gumbel. T_C and _L_BIG change the speed only, never the law.
T_C = 8.0
_L_BIG = 1.0
_TWO40 = 2.0 ** 40
_LOG2E = 1.4426950408889634
# a block whose near slots exceed this share goes back to the per-edge pass (which measures
# the noise-first share) for _CUT_RETRY passes (wide noise: every slot is near)
_CUT_NEAR = 0.25
_CUT_RETRY = 16.0


@njit(cache=CACHE, inline="always")
def _pt_a_low(g, s, lam):
    """A lower bound of the real a = g + s lam (the part of t = a + abs(sgn) lam w that the
    distance does not move): its two roundings are below 2**-52 of the magnitudes; -inf
    for a slot without a key (s = -inf)."""
    x = s * lam
    return (g + x) - (abs(g) + abs(x)) * 2.0 ** -50


@njit(cache=CACHE, inline="always")
def _pt_na(g, s, lam):
    """The block path's float32 bound kept in ``fth``: -a rounded up (``_pt_a_low``), so
    that a near slot's rate bound reads 4 bytes, not its key's two float64 lines; +inf for
    a slot without a key (every edge may relax it: the largest rate)."""
    x = -_pt_a_low(g, s, lam)
    x = x * (1.0 + 2.0 ** -22) if x > 0.0 else x * (1.0 - 2.0 ** -22)
    # float32 rounds to nearest (2**-24 relatively, 2**-150 absolutely): both covered; a
    # magnitude beyond float32 rounds up to +inf (still a bound), never down to -inf
    return np.float32(max(x + 2.0 ** -120, -3e38))


@njit(cache=CACHE, inline="always")
def _pt_cut_qth(g, s, lam, c, fc):
    """The slot's far threshold for its key (g, s): a grid sum S at or above it gives a
    float64 distance w >= (T_C - a) / c (1 + 2**-30) (``_pt_qth``), hence t = a + c w >= T_C
    up to t's rounding, which the far rate's factor 2 covers (``_pt_gumbel_cut``); 0 (every
    slot far) when a >= T_C, 2**31 - 1 (every slot near) without a key."""
    al = _pt_a_low(g, s, lam)
    tc = fc[_FC_TC]
    if not al < tc:
        return np.int32(0)
    r = (tc - al) / c * (1.0 + 2.0 ** -30) + 2.0 ** -1000
    return _pt_qth(r, fc)


@njit(cache=CACHE, inline="always")
def _pt_lam_of(na, q, c, h, a8, sq):
    """A near slot's rate bound: exp(-t_lo) rounded up, t_lo = a + c w_lo <= t, -a <= na
    (``_pt_na``), w_lo the grid's lower bound of the float64 distance (squared for
    sqeuclidean; ``_pt_q8_lo``). No exp: y = (na - c w_lo) log2(e) plus margins far above
    its roundings, clamped to [-1020, 1020] (a total clamped up is never skipped), and
    2**y <= (1 + f) 2**n for y = n + f, f in [0, 1) (2**f <= 1 + f by convexity)."""
    x = h * math.sqrt(np.float64(q)) * (1.0 - 2.0 ** -50)
    r = max(x - a8, 0.0)
    if sq:
        w = max(r * r * (1.0 - 2.0 ** -38) - 2.0 ** -999, 0.0)
    else:
        w = max(r * (1.0 - 2.0 ** -38) - 2.0 ** -500, 0.0)
    cw = c * w
    y = (na - cw) * _LOG2E + (abs(na) + cw) * 2.0 ** -40 + 2.0 ** -28
    y = min(max(y, -1020.0), 1020.0)
    f = math.floor(y)
    return math.ldexp(1.0 + (y - f), int(f))


@njit(cache=CACHE, nogil=True, inline="always")
def _pt_exact_filtered(st, blk, lo, hi, v, P, sgn, qsl, fsl, keep, hit, row):
    """EXACT on a minimum tree with the float32 filter: S32 of every slot of the block
    (``_pt_f32_sum``), the slots whose S32 lies below their threshold ``fth`` listed (the
    others' float64 distance is at or above their best: ``_pt_fth``), then the listed
    slots' float64 distances from X's rows (``_pt_l2``, the reported weight bit for bit; a
    loop of their own, so that the rows' cache misses overlap) and the float64 test. With
    the uint8 grid (``quant_consts``) its integer sums S and thresholds ``qth`` come first
    (``_pt_qth``; the float32 filter when the block's grid proved coarse: ``_Q_EXTRA``).
    The block's top is kept across steps as GUMBEL keeps it (a best only grows;
    ``RESCAN``: a full scan), so a step reads d + 4 bytes a slot with the grid, 4 d + 4
    with the float32 filter. ``qsl``, ``fsl``, ``keep``, ``hit``, ``row``: scratch of
    ``BLOCK`` entries (the caller's: hot in the L1 cache)."""
    # no slices of the state here (nor in ``_pt_q8_sum``): each slice takes and drops a
    # reference (two atomic operations on a word the other thread writes too), which
    # cost a third of a step at n = 10**6; unsigned offsets index without the
    # negative-index fix-up, so that the loops still vectorize
    X = P.X
    slot = st.slot
    sb = st.sb
    fth = st.fth
    qth = st.qth
    tops = st.tops
    fc = st.fc
    m_k = hi - lo
    mu = np.uint64(m_k)
    lou = np.uint64(lo)
    grid = st.xq.shape[0] > 0
    on_grid = grid and tops[blk, 5] <= 0.0
    kept = 0
    # each pass writes a byte a slot (keep: the slot may relax) in a branch-free loop (it
    # vectorizes); the survivors are listed only when there are some (most blocks have
    # none past the first steps)
    if on_grid:
        # the uint8 grid: d + 4 bytes a slot (12 at d = 8: the state of 10**6 points fits
        # the L3 cache), exact integer sums against the slots' integer thresholds
        _pt_q8_sum(st.xq, st.xqv, v, lo, hi, qsl)
        for k in range(mu):
            c = qsl[k] < qth[lou + k]
            keep[k] = c
            kept += c
    else:
        _pt_f32_sum(st.xf, X, v, lo, hi, fsl)
        for k in range(mu):
            c = fsl[k] < fth[lou + k]
            keep[k] = c
            kept += c
    if kept > 0:
        kept = 0
        for k in range(m_k):
            if keep[k] != 0:
                hit[kept] = lo + k
                kept += 1
    if on_grid:
        if kept > (tops[blk, 4] + _Q_EXTRA) * m_k:
            tops[blk, 5] = _Q_RETRY  # a coarse grid here: the float32 filter for a while
    elif grid:  # speed statistics only: the decisions are the float64 test's either way
        tops[blk, 4] = kept / max(m_k, 1)
        tops[blk, 5] -= 1.0
    ts = -np.inf
    tk = -1
    topk = st.topk
    full = topk[blk] == RESCAN
    if not full and topk[blk] >= 0:
        ts = tops[blk, 0]
        tk = topk[blk]
    if kept > 0:
        parent = st.parent
        sq = fc[_FC_SQ] != 0.0
        for q in range(kept):
            row[q] = sgn * _pt_l2(X, v, slot[hit[q]], sq)
        for q in range(kept):
            k = hit[q]
            s = row[q]
            if s > sb[k]:
                sb[k] = s
                parent[k] = v
                fth[k] = _pt_fth(s / sgn, fc)  # sgn = -1: the distance
                if grid:
                    qth[k] = _pt_qth(s / sgn, fc)
                if tk < 0 or s > ts or (s == ts and k < tk):
                    ts = s
                    tk = k
    if full:  # the order of a full scan: the largest key, ties to the first slot
        ts = -np.inf
        tk = -1
        for k in range(lo, hi):
            if slot[k] >= 0 and sb[k] > ts:
                ts = sb[k]
                tk = k
    tops[blk, 0] = ts
    tops[blk, 1] = 0.0
    topk[blk] = tk


@njit(cache=CACHE, nogil=True)
def _pt_gumbel_flagged(st, lo, hi, v, P, nz, ts, tg, tk, row, hit):
    """GUMBEL's distance-first pass of a hashed block with the float32 filter (narrow noise:
    most edges below T_SKIP), once ``row`` holds the distances' lower bounds (``hit``:
    scratch): a branch-free pass (it vectorizes) draws each edge's Gumbel bound (+ ``MARGIN``)
    and flags the edges whose threshold t from the lower bound lies below T_SKIP and below
    the bound (one pass: the bounds are not stored and read back; t is monotone in the distance: an edge not flagged is one the float64 pass
    skips too); dead slots are never flagged (their keys are stale). The flagged edges take
    the bound test again, then their float64 distance and the exact path. Returns the
    block's top (ts, tg, tk) and the counts (c: t < T_SKIP, kept: what the noise-first
    pass would keep, nh: the flagged edges), which count dead slots too (speed choices only). A function of its
    own: the kernels' compile time."""
    sl, sbl, gbl, pal, mthl, qthl, fthl = _pt_views(st, lo, hi)
    sgn = nz.sgn
    lam = nz.lam
    ka = nz.k0 & _MASK
    kb = nz.k0 >> _S32
    c2 = nz.k1 & _MASK
    c3 = nz.k1 >> _S32
    m_k = hi - lo
    c = 0
    kept = 0
    for k in range(m_k):  # branch-free: it vectorizes, the Philox rounds included
        gk = gbl[k]
        sk = sbl[k]
        t = gk - (sgn * row[k] - sk) * lam
        g = gumbel_upper(bits_of_words(ka, kb, c2, c3, v, sl[k])) + MARGIN
        c += t < T_SKIP
        kept += gk + sk * lam < g + MARGIN
        row[k] = t
        hit[k] = (t < T_SKIP) & (t < g) & (sl[k] >= 0)
    nh = 0
    for k in range(m_k):  # the flagged slots listed in place (nh <= k)
        if hit[k] != 0:
            hit[nh] = k
            nh += 1
    for q in range(nh):
        k = hit[q]
        u = sl[k]
        m = bits_of_words(ka, kb, c2, c3, v, u)
        if row[k] - MARGIN < gumbel_upper(m):
            s = sgn * _pt_l2(P.X, v, u, st.fc[_FC_SQ] != 0.0)
            ts, tg, tk = _pt_relax(k, s, m, v, sbl, gbl, pal, mthl, lam, nz.b, nz.b_hi, nz.b_lo,
                                   ts, tg, tk, qthl, fthl, st.fc, abs(sgn) * lam)
    return ts, tg, tk, c, kept, nh


@njit(cache=CACHE, nogil=True)
def _pt_gumbel_cut(st, blk, lo, hi, v, P, nz, qs, hit, lamv):
    """GUMBEL's block path: the relaxations of slots lo..hi-1 by the new vertex v drawn
    with one Poisson process for the block rather than one Gumbel per edge (docs/design.rst,
    Points, "One draw per block of slots": deferred decisions, thinning).

    Each edge (v, u) is examined once (v joins once), and only the event G > t_u and, on it,
    G given G > t matter; P(G > t) = P(N >= 1) for N ~ Poisson(exp(-t)). So the block's
    slots get rates Lam_u >= exp(-t_u): far slots (grid sum at or above ``qth``: t >= T_C)
    2 exp(-T_C) each, near slots ``_pt_lam_of``; near slots whose bound exceeds ``_L_BIG``
    are decided by their own edge's Gumbel (the edge stream) instead. The points of a unit
    Poisson process on [0, sum Lam) (the block stream, ``philox.block_uniforms``, counter
    (v, blk, j)) land in slots by an exact integer partition (rates in units of 2**-40,
    rounded up); a landing slot takes its float64 distance, its t and an acceptance uniform
    (thinning by exp(-t) / Lam_u), an accepted slot draws G given G > t and is offered the
    edge (``_pt_take``); a second point on an accepted slot draws nothing. When the first
    point lies beyond the total the block is decided "no exceedance" by one draw. ``qs``,
    ``hit``, ``lamv``: scratch of ``BLOCK`` entries."""
    sl, sbl, gbl, pal, mthl, qthl, fthl = _pt_views(st, lo, hi)
    qth = st.qth
    fth = st.fth
    tops = st.tops
    topk = st.topk
    X = P.X
    fc = st.fc
    sq = fc[_FC_SQ] != 0.0
    sgn = nz.sgn
    lam = nz.lam
    c = abs(sgn) * lam
    b = nz.b
    b_hi = nz.b_hi
    b_lo = nz.b_lo
    k0 = nz.k0
    k1 = nz.k1
    m_k = hi - lo
    mu = np.uint64(m_k)
    lou = np.uint64(lo)
    ts = -np.inf
    tg = 0.0
    tk = -1
    full = topk[blk] == RESCAN
    if not full and topk[blk] >= 0:
        ts = tops[blk, 0]
        tg = tops[blk, 1]
        tk = topk[blk] - lo
    _pt_q8_sum(st.xq, st.xqv, v, lo, hi, qs)
    # the near slots listed branch-free (hit[kept] is overwritten until a near slot keeps
    # it; dead slots, qth 0, are never near)
    kept = 0
    for k in range(mu):
        hit[kept] = k
        kept += qs[k] < qth[lou + k]
    lc = 2.0 * math.exp(-fc[_FC_TC])  # the far rate: the factor 2 covers t's rounding (ln 2)
    work = 0
    if kept > 0:
        h = fc[_FC_QH]
        a8 = fc[_FC_QA]
        ka = k0 & _MASK
        kb = k0 >> _S32
        c2 = k1 & _MASK
        c3 = k1 >> _S32
        for q in range(kept):
            k = hit[q]
            lamv[q] = _pt_lam_of(np.float64(fth[lou + np.uint64(k)]), qs[k], c, h, a8, sq)
        # near slots whose bound exceeds _L_BIG (likely relaxations; every slot of a block
        # whose keys are not set yet) are decided one by one by their own edge's Gumbel:
        # the law of the event and of G is the same, and the choice uses the past only
        for q in range(kept):
            if lamv[q] > _L_BIG:
                lamv[q] = -1.0  # no rate in the process below
                k = hit[q]
                u = sl[k]
                work += 1
                s = sgn * _pt_l2(X, v, u, sq)
                m = bits_of_words(ka, kb, c2, c3, v, u)
                ts, tg, tk = _pt_relax(k, s, m, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo,
                                       ts, tg, tk, qthl, fthl, fc, c)
    S = (m_k - kept) * lc
    for q in range(kept):  # summed from the terms in order (no subtraction's rounding)
        if lamv[q] >= 0.0:
            S += lamv[q]
    u1, u2 = block_uniforms(k0, k1, v, blk, 0)
    E = -math.log(u1)
    # S's rounding is below kept 2**-53 relatively; the integer rates' + 1s add at most
    # BLOCK 2**-40 (docs/design.rst): a block skipped here is one the walk finds empty
    if E <= S * (1.0 + 2.0 ** -30) + 2.0 ** -29:
        tops[blk, _T_WALK] += 1.0
        # the points of the process in units of 2**-40: far slots lci each (runs of them
        # skipped arithmetically), near slots their own; big slots (decided above) none
        lci = np.int64(lc * _TWO40) + 1
        i = 0  # the slot whose interval starts at C
        q = 0  # the next listed near slot
        C = np.int64(0)
        j = 0
        done = -1
        while True:
            pos = np.int64(E * _TWO40)
            landed = -1
            li = lci
            while True:
                nxt = hit[q] if q < kept else m_k
                run = np.int64(nxt - i)  # far slots i .. nxt - 1
                if run > 0:
                    if pos < C + run * lci:
                        dd = (pos - C) // lci
                        i += dd
                        C += dd * lci
                        landed = i
                        li = lci
                        break
                    C += run * lci
                    i = nxt
                if i >= m_k:
                    break
                li = np.int64(0) if lamv[q] < 0.0 else np.int64(lamv[q] * _TWO40) + 1
                if pos < C + li:
                    landed = i
                    break
                C += li
                i += 1
                q += 1
            if landed < 0:
                break
            u = sl[i]
            if u >= 0 and i != done:
                work += 1
                s = sgn * _pt_l2(X, v, u, sq)
                t = gbl[i] - (s - sbl[i]) * lam
                lt = math.exp(-t)
                if u2 * li < lt * _TWO40:  # accepted (thinning): G > t
                    done = i
                    w1, _ = block_uniforms(k0, k1, v, blk, j | (1 << 31))
                    # G given G > t: F(G) uniform on (F(t), 1), e^-G = -ln(1 - w1 p)
                    p = -math.expm1(-lt)
                    g = -math.log(-math.log1p(-w1 * p))
                    ts, tg, tk = _pt_take(i, s, g, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo,
                                          ts, tg, tk, qthl, fthl, fc, c)
            j += 1
            u1, u2 = block_uniforms(k0, k1, v, blk, j)
            E += -math.log(u1)
    if full:
        ts = -np.inf
        tg = 0.0
        tk = -1
        for k in range(m_k):
            if sl[k] >= 0 and _pt_key_beats(sbl[k], gbl[k], ts, tg, b, b_hi, b_lo):
                ts = sbl[k]
                tg = gbl[k]
                tk = k
    # speed choices only: the grid's coarseness (as the per-edge pass measures it), the
    # per-edge pass again when most slots are near (wide noise; it measures the
    # noise-first share, unknown here)
    if work > (tops[blk, 4] + _Q_EXTRA) * m_k:
        tops[blk, 5] = _Q_RETRY
    if kept > _CUT_NEAR * m_k:
        tops[blk, _T_CUTOFF] = _CUT_RETRY
    tops[blk, _T_CUT] += 1.0
    tops[blk, 0] = ts
    tops[blk, 1] = tg
    tops[blk, 2] = kept / max(m_k, 1)
    tops[blk, 3] = 1.0
    topk[blk] = tk + lo if tk >= 0 else -1


@njit(cache=CACHE, nogil=True)
def _pt_blocks(st, b0, b1, m, v, P, nz):
    """``_pt_block`` on blocks b0 .. b1 - 1 of the m slots with the new vertex v, in one
    call and with one scratch (hot in the L1/L2 cache) for all of them: a call per block
    took and dropped a reference to each of the state's arrays (atomic operations: a third
    of a step at n = 10**6, measured with perf). The serial kernel passes a step's blocks,
    the shared kernel's threads one claimed block at a time."""
    rows = np.empty((3, BLOCK))
    need = np.empty(BLOCK, dtype=np.int64)
    qsl = np.empty(BLOCK, dtype=np.int32)
    fsl = np.empty(BLOCK, dtype=np.float32)
    keep = np.empty(BLOCK, dtype=np.uint8)
    for blk in range(b0, b1):
        _pt_block(st, blk, blk * BLOCK, min(m, (blk + 1) * BLOCK), v, P, nz, rows, need, qsl,
                  fsl, keep)


@njit(cache=CACHE, nogil=True, inline="always")
def _pt_block(st, blk, lo, hi, v, P, nz, rows, need, qsl, fsl, keep):
    """Relax slots lo..hi-1 with the new vertex v (rule EXACT/GUMBEL/GAUSS); write the
    block's best (s, g) to tops[blk] and its slot to topk[blk] (-1: no live slot).
    GUMBEL updates the block's top from the slots that relax (keys only grow), unless
    ``topk[blk]`` is ``RESCAN``: then a full scan finds it.

    ``rows``: the block's scratch rows (distances, then the edges' uniforms or bounds),
    ``need``: the slots of the edges that may relax; ``qsl``, ``fsl``, ``keep``: the grid's and the
    float32 filter's sums and marks (scratch of ``BLOCK`` entries, ``_pt_blocks``). The distances come
    from ``xt`` (:func:`_pt_soa_row`) for the coordinate-wise metrics (``SOA_METRICS``),
    else from X (``metrics.metric_row``). A noisy rule draws
    the whole block's noise in a loop of its own when most edges may relax (the
    Philox rounds of many edges vectorize there), else draws the noise of the edges
    that may relax one by one; ``tops[blk, 2]``, the share of the last pass, chooses.
    The choice changes the speed only: every edge's noise is a function of (key, edge).
    GUMBEL: the bound ``gumbel.gumbel_upper`` of each edge's Gumbel decides most edges
    without a logarithm (t at or above it + ``MARGIN``: the exact test would not
    relax). GUMBEL on a minimum tree with wide noise (``tops[blk, 3]``, the share of the
    slots whose bound exceeded gbl + sbl lam at the last hashed pass, below
    ``NOISE_FIRST_SHARE``): no row; the bounds first, and only the slots they keep get
    their distance (``metrics.metric_distance`` from X: the row's value bit for bit).
    ``b_hi + b_lo``: Dekker's split of b (``gumbel.split``) for the exact order.
    ``st``: the state (``PtState``); ``P``: the points (``PtPoints``); ``nz``: the rule's
    scalars (``PtNoise``).
    """
    slot = st.slot
    sb = st.sb
    gb = st.gb
    parent = st.parent
    xt = st.xt
    tops = st.tops
    topk = st.topk
    X = P.X
    code = P.code
    p = P.p
    aux = P.aux
    sgn = nz.sgn
    rule = nz.rule
    k0 = nz.k0
    k1 = nz.k1
    lam = nz.lam
    b = nz.b
    b_hi = nz.b_hi
    b_lo = nz.b_lo
    ts = -np.inf
    tg = 0.0
    tk = -1
    # the noise-first pass (GUMBEL only) computes the distances of the edges it keeps
    # itself: the block's row is not computed then
    noise_first = (rule == GUMBEL and sgn < 0.0 and tops[blk, 2] > HASH_ALL_SHARE
                   and tops[blk, 3] < NOISE_FIRST_SHARE)
    # the float32 filter (``filter_consts``): EXACT and GUMBEL on a minimum tree
    filt = st.xf.shape[0] > 0
    if filt and rule == EXACT:
        _pt_exact_filtered(st, blk, lo, hi, v, P, sgn, qsl, fsl, keep, need, rows[0])
        return
    row = rows[0]
    grid = filt and st.xq.shape[0] > 0
    on_grid = grid and tops[blk, 5] <= 0.0
    if rule == GUMBEL and on_grid and not noise_first:  # a minimum tree (the filter's)
        if tops[blk, _T_CUTOFF] <= 0.0:
            _pt_gumbel_cut(st, blk, lo, hi, v, P, nz, qsl, need, rows[1])
            return
        tops[blk, _T_CUTOFF] -= 1.0
    # the edges that took their float64 distance (or, not hashed, their Philox bits) at
    # this pass: the grid's statistic
    work = 0
    if not noise_first:
        if filt:
            # GUMBEL: a lower bound of each distance in place of the row; t is monotone
            # in the distance, so every test below that skips on the bound skips on the
            # distance too, and an edge that passes them gets its float64 distance
            # (``metrics.metric_distance``) before the exact path. The bound from the
            # uint8 grid (d bytes a slot) unless it let through too many edges lately
            # (``_Q_EXTRA``), else from the float32 copy (4 d bytes)
            if on_grid:
                _pt_q8_sum(st.xq, st.xqv, v, lo, hi, qsl)
                _pt_q8_lo(qsl, st.fc, hi - lo, row)
            else:
                _pt_f32_sum(st.xf, X, v, lo, hi, fsl)
                _pt_f32_lo(fsl, st.fc, hi - lo, row)
        elif xt.shape[0] > 0:
            _pt_soa_row(xt, X, v, lo, hi, code, row)
        else:
            metric_row(X, v, slot, lo, hi, code, p, aux, row)
    if rule == EXACT:
        sl = slot[lo:hi]
        sbl = sb[lo:hi]
        pal = parent[lo:hi]
        for k in range(hi - lo):
            if sl[k] < 0:
                continue
            s = sgn * row[k]
            if s > sbl[k]:
                sbl[k] = s
                pal[k] = v
            if sbl[k] > ts:
                ts = sbl[k]
                tk = k
        tops[blk, 0] = ts
        tops[blk, 1] = tg
        topk[blk] = tk + lo if tk >= 0 else -1
        return
    if rule == GUMBEL:
        ka = k0 & _MASK
        kb = k0 >> _S32
        c2 = k1 & _MASK
        c3 = k1 >> _S32
        sl, sbl, gbl, pal, mthl, qthl, fthl = _pt_views(st, lo, hi)
        gu = rows[1]
        m_k = hi - lo
        hashed = tops[blk, 2] > HASH_ALL_SHARE
        if hashed and not noise_first and not filt:
            # most edges needed their noise last time: every slot's bound in a loop of
            # its own (branch-free: it vectorizes; a dead slot's value is never read;
            # with the filter, ``_pt_gumbel_flagged`` draws them in its own pass)
            for k in range(m_k):
                gu[k] = gumbel_upper(bits_of_words(ka, kb, c2, c3, v, sl[k])) + MARGIN
        # the block's top: kept from the last step unless it must be rescanned (between
        # two steps a slot's key only grows, and only the joined vertex's slot dies); the
        # top of the keys in the order (key, then the smaller slot), as a full scan finds
        full = topk[blk] == RESCAN
        if not full and topk[blk] >= 0:
            ts = tops[blk, 0]
            tg = tops[blk, 1]
            tk = topk[blk] - lo
        c = 0
        kept = 0
        if noise_first:
            # a minimum tree's scores are s = sgn w <= 0, so t >= tl = gbl + sbl lam
            # whatever the distance: an edge that ``_pt_keep`` rejects (its Gumbel bound,
            # with MARGIN for the rounding of tl, at or below tl) cannot relax and its
            # distance is never computed. That test is m >= mth (the slot's integer
            # threshold, ``_pt_mth``, kept beside its key), so this loop reads 12 bytes a
            # slot (its vertex, its threshold) and compares the Philox bits: branch-free,
            # it vectorizes; a dead slot's threshold is NEVER. Wide noise (the Gumbel's
            # scale far above the distances' spread) keeps about one edge in (steps so
            # far); those take the distance from X's row (``metrics.metric_distance``:
            # the reported weight bit for bit) and the exact path below.
            hit = need
            for k in range(m_k):
                mk = mthl[k]
                hit[k] = np.int64(bits_of_words(ka, kb, c2, c3, v, sl[k])) - mk
                c += mk < NEVER
            # the kept slots listed in place (hit[kept] is written after it was read) with
            # their bits (exact in a double: m < 2**53), then their distances in a loop
            # of their own: independent rows of X, whose cache misses overlap (one edge at
            # a time, each waited for its row: 1 us an edge at n = 10**6)
            for k in range(m_k):
                if hit[k] >= 0:
                    gu[kept] = np.float64(hit[k] + mthl[k])
                    hit[kept] = k
                    kept += 1
            for q in range(kept):
                row[q] = sgn * metric_distance(X, v, sl[hit[q]], code, p, aux)
            for q in range(kept):
                k = hit[q]
                s = row[q]
                t = gbl[k] - (s - sbl[k]) * lam
                m = np.uint64(gu[q])
                if t < T_SKIP and t < gumbel_upper(m) + MARGIN and t - MARGIN < gumbel_upper(m):
                    ts, tg, tk = _pt_relax(k, s, m, v, sbl, gbl, pal, mthl, lam, b, b_hi, b_lo,
                                           ts, tg, tk, qthl, fthl, st.fc, abs(sgn) * lam)
        if filt and hashed and not noise_first:
            ts, tg, tk, c, kept, work = _pt_gumbel_flagged(st, lo, hi, v, P, nz, ts, tg, tk, row, need)
        elif filt and not noise_first:
            work = -1  # c, counted below
        for k in range(m_k if not (noise_first or (filt and hashed)) else 0):
            u = sl[k]
            if u < 0:
                continue
            if hashed and sgn < 0.0 and gbl[k] + sbl[k] * lam < gu[k] + MARGIN:
                kept += 1  # what the noise-first pass would keep: its share decides it next time
            s = sgn * row[k]
            t = gbl[k] - (s - sbl[k]) * lam  # the Gumbel above which the edge relaxes
            if t < T_SKIP:
                c += 1
                if not hashed or t < gu[k]:
                    m = bits_of_words(ka, kb, c2, c3, v, u)
                    # below: G <= bound <= t - MARGIN, the exact test would not relax
                    if t - MARGIN < gumbel_upper(m):
                        if filt:  # row held a lower bound: the distance itself now
                            s = sgn * _pt_l2(X, v, u, code == SQEUCLIDEAN)
                        ts, tg, tk = _pt_relax(k, s, m, v, sbl, gbl, pal, mthl, lam, b, b_hi,
                                               b_lo, ts, tg, tk, qthl, fthl, st.fc, abs(sgn) * lam)
        if full:  # a pass of its own: a flag tested in the loop above slows it
            ts = -np.inf
            tg = 0.0
            tk = -1
            for k in range(m_k):
                if sl[k] >= 0 and _pt_key_beats(sbl[k], gbl[k], ts, tg, b, b_hi, b_lo):
                    ts = sbl[k]
                    tg = gbl[k]
                    tk = k
        if grid and not noise_first:  # speed statistics only, as _pt_exact_filtered's
            share = (c if work < 0 else work) / max(m_k, 1)
            if on_grid:
                if share > tops[blk, 4] + _Q_EXTRA:
                    tops[blk, 5] = _Q_RETRY
            else:
                tops[blk, 4] = share
                tops[blk, 5] -= 1.0
        tops[blk, 0] = ts
        tops[blk, 1] = tg
        tops[blk, 2] = c / max(m_k, 1)
        # unknown (1.0) when the bounds were not drawn: the next hashed pass measures it
        tops[blk, 3] = kept / max(m_k, 1) if hashed and sgn < 0.0 else 1.0
        topk[blk] = tk + lo if tk >= 0 else -1
        return
    # GAUSS
    us = rows[1]
    us2 = rows[2]
    if tops[blk, 2] > HASH_ALL_SHARE:
        # most edges were needed last time: draw every slot's uniforms in one contiguous
        # loop without branches (it vectorizes, where a loop that draws one listed edge
        # at a time does not), then decide every edge and keep the top in one pass
        for k in range(lo, hi):
            x0, x1, x2, x3 = philox_block(k0, k1, v, slot[k])
            us[k - lo] = philox_unit(x0, x1)
            us2[k - lo] = philox_unit(x2, x3)
        c = 0
        for k in range(lo, hi):
            if slot[k] < 0:
                continue
            s = sgn * row[k - lo]
            if _pt_beats(s, Z_MAX, sb[k], gb[k], b):
                c += 1
                g = sgn * _pt_normal(us[k - lo], us2[k - lo])
                if _pt_beats(s, g, sb[k], gb[k], b):
                    sb[k] = s
                    gb[k] = g
                    parent[k] = v
            # kept flat: a helper returning the new top (s, g, slot) measured slower here
            if _pt_beats(sb[k], gb[k], ts, tg, b):
                ts = sb[k]
                tg = gb[k]
                tk = k
    else:
        # few edges may relax: list them, draw their uniforms one by one, decide them
        nd = need
        c = 0
        for k in range(lo, hi):
            if slot[k] >= 0:
                s = sgn * row[k - lo]
                if _pt_beats(s, Z_MAX, sb[k], gb[k], b):
                    nd[c] = k
                    c += 1
        for q in range(c):
            k = nd[q]
            x0, x1, x2, x3 = philox_block(k0, k1, v, slot[k])
            x = philox_unit(x0, x1)
            s = sgn * row[k - lo]
            g = sgn * _pt_normal(x, philox_unit(x2, x3))  # Box-Muller
            if _pt_beats(s, g, sb[k], gb[k], b):
                sb[k] = s
                gb[k] = g
                parent[k] = v
        for k in range(lo, hi):
            if slot[k] >= 0 and _pt_beats(sb[k], gb[k], ts, tg, b):
                ts = sb[k]
                tg = gb[k]
                tk = k
    # which way the next pass over this block goes: a speed choice, never the tree's
    tops[blk, 2] = c / max(hi - lo, 1)
    tops[blk, 0] = ts
    tops[blk, 1] = tg
    topk[blk] = tk


@njit(cache=CACHE, nogil=True)
def _pt_reduce(tops, topk, nb, b, b_hi, b_lo, rule):
    """The best block's slot: blocks in order, strict comparisons (ties: first); GUMBEL
    compares the exact keys (``_pt_key_beats``)."""
    ts = -np.inf
    tg = 0.0
    tk = -1
    for i in range(nb):
        k = topk[i]
        if k < 0:
            continue
        if rule == GUMBEL:
            better = tk < 0 or _pt_key_beats(tops[i, 0], tops[i, 1], ts, tg, b, b_hi, b_lo)
        else:
            better = tk < 0 or _pt_beats(tops[i, 0], tops[i, 1], ts, tg, b)
        if better:
            ts = tops[i, 0]
            tg = tops[i, 1]
            tk = k
    return tk


@njit(cache=CACHE, nogil=True)
def _pt_compact_copy(slot, m, xt):
    """The coordinate-major copy's live columns moved to the front, in order."""
    for c in range(xt.shape[0]):  # coordinate by coordinate: contiguous reads and writes
        xc = xt[c]
        j = 0
        for k in range(m):
            if slot[k] >= 0:
                xc[j] = xc[k]
                j += 1


@njit(cache=CACHE, nogil=True)
def _pt_compact(st):
    """Drop the dead slots, keeping the order (so the blocks are a function of the counts);
    the coordinate-major copy ``xt`` (or the filter's ``xf`` and ``fth``) moves with its
    slots (O(slots d))."""
    slot = st.slot
    sb = st.sb
    gb = st.gb
    parent = st.parent
    mth = st.mth
    fth = st.fth
    meta = st.meta
    m = meta[_N_SLOTS]
    _pt_compact_copy(slot, m, st.xt)
    _pt_compact_copy(slot, m, st.xf)
    _pt_compact_copy(slot, m, st.xq)
    filt = fth.shape[0] > 0
    qth = st.qth
    grid = qth.shape[0] > 0
    j = 0
    for k in range(m):
        if slot[k] >= 0:
            slot[j] = slot[k]
            sb[j] = sb[k]
            gb[j] = gb[k]
            parent[j] = parent[k]
            mth[j] = mth[k]
            if filt:
                fth[j] = fth[k]
            if grid:
                qth[j] = qth[k]
            j += 1
    meta[_N_SLOTS] = j
    meta[_N_DEAD] = 0


@njit(cache=CACHE, nogil=True)
def _pt_select(st, step, b, b_hi, b_lo, rule):
    """Step ``step``: the best live slot joins; its edge is recorded; returns the
    vertex that joined. Compacts the slots when the dead exceed a sixteenth of them."""
    m = st.meta[_N_SLOTS]
    nb = (m + BLOCK - 1) // BLOCK
    k = _pt_reduce(st.tops, st.topk, nb, b, b_hi, b_lo, rule)
    v = np.int64(st.slot[k])
    st.edges[step, 0] = st.parent[k]
    st.edges[step, 1] = v
    st.slot[k] = -1
    st.mth[k] = NEVER  # the noise-first pass keeps no edge of a dead slot
    if st.fth.shape[0] > 0:
        st.fth[k] = -np.inf  # nor the float32 filter
    if st.qth.shape[0] > 0:
        st.qth[k] = 0  # nor the grid
    st.topk[k // BLOCK] = RESCAN  # its top died
    st.meta[_N_DEAD] += 1
    if 16 * st.meta[_N_DEAD] > m:  # a dead slot is still hashed and skipped until then
        _pt_compact(st)
        st.topk[:] = RESCAN  # the slots moved
    st.meta[_NEXT] = v
    return v


@njit(cache=CACHE, nogil=True)
def pt_steps_serial(st, step0, n_steps, P, nz):
    """Run Prim steps step0 .. step0 + n_steps - 1 (step -1: the start's relaxation) on one
    thread: ``st`` the state (``PtState``), ``P`` the points (``PtPoints``), ``nz`` the
    rule's scalars (``PtNoise``)."""
    b = nz.b
    b_hi = nz.b_hi
    b_lo = nz.b_lo
    rule = nz.rule
    for step in range(step0, step0 + n_steps):
        v = st.meta[_NEXT] if step < 0 else _pt_select(st, step, b, b_hi, b_lo, rule)
        m = st.meta[_N_SLOTS]
        if step == st.edges.shape[0] - 1:
            break
        nb = (m + BLOCK - 1) // BLOCK
        _pt_blocks(st, 0, nb, m, v, P, nz)


# The shared kernel's synchronisation: int64 words of ``sync``, each on a cache line of its
# own. _CLAIM holds (phase << 32) | the next block to claim, one word so that a thread that
# read an old phase cannot claim a block of the next (its compare-and-swap fails); phase p
# relaxes step step0 + p; _DONE counts the phase's finished blocks; _V, _M, _NB: the
# phase's vertex, slot count and block count, written before the phase is published.
_CLAIM, _DONE, _V, _M, _NB = 0, 8, 16, 24, 32
_SYNC_WORDS = 40
_FINISHED = 0x7FFFFFFF  # the phase that sends the workers home
_LOW32 = 0xFFFFFFFF
# atomic loads a waiting thread makes before it yields its core (a phase's last block
# takes microseconds; a preempted holder takes a time slice: then the core is better given)
_SPINS = 256


def _sync_ptr(context, builder, aryty, ary, idx):
    arr = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, arr, [idx])


@intrinsic
def _atomic_load(typingctx, ary, idx):
    """ary[idx] (int64) with acquire ordering."""
    def codegen(context, builder, sig, args):
        return builder.load_atomic(_sync_ptr(context, builder, sig.args[0], args[0], args[1]), "acquire", 8)
    return types.int64(ary, idx), codegen


@intrinsic
def _atomic_store(typingctx, ary, idx, val):
    """ary[idx] = val (int64) with release ordering."""
    def codegen(context, builder, sig, args):
        builder.store_atomic(args[2], _sync_ptr(context, builder, sig.args[0], args[0], args[1]), "release", 8)
        return context.get_dummy_value()
    return types.void(ary, idx, val), codegen


@intrinsic
def _atomic_add(typingctx, ary, idx, val):
    """ary[idx] += val (int64), atomically; returns the old value."""
    def codegen(context, builder, sig, args):
        return builder.atomic_rmw("add", _sync_ptr(context, builder, sig.args[0], args[0], args[1]), args[2],
                                  "seq_cst")
    return types.int64(ary, idx, val), codegen


@intrinsic
def _atomic_cas(typingctx, ary, idx, old, new):
    """ary[idx] = new if it holds old (int64), atomically; whether it did."""
    def codegen(context, builder, sig, args):
        ptr = _sync_ptr(context, builder, sig.args[0], args[0], args[1])
        res = builder.cmpxchg(ptr, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(res, 1)
    return types.boolean(ary, idx, old, new), codegen


@intrinsic
def _yield_core(typingctx):
    """sched_yield(2): give the core to another runnable thread (resolved from libc)."""
    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@njit(cache=CACHE, nogil=True)
def _pt_worker(st, sync, step0, n_steps, P, nz):
    """One thread of :func:`pt_steps_shared`: claim the published phase's blocks one at a
    time and relax them; the thread that finishes a phase's last block selects the next
    step's vertex (:func:`_pt_select`, the serial kernel's) and publishes the next phase.

    No thread ever waits for a thread that holds no work: a thread that has not started, or
    was descheduled between blocks, is simply not waited for (the others claim its share);
    only a block already claimed, or the selection, can hold the others up. So the workers
    may run one after the other (one thread) and still finish, and a busy core costs at
    most what its thread holds when it is preempted, not a fork/join a step. ``st``,
    ``P``, ``nz``: as :func:`pt_steps_serial`.
    """
    meta = st.meta
    edges = st.edges
    b = nz.b
    b_hi = nz.b_hi
    b_lo = nz.b_lo
    rule = nz.rule
    last = edges.shape[0] - 1
    seen = -1
    spins = 0
    while True:
        w = _atomic_load(sync, _CLAIM)
        ph = w >> 32
        if ph == _FINISHED:
            return
        blk = w & _LOW32
        nb = _atomic_load(sync, _NB)
        if ph == seen or blk >= nb:
            seen = ph  # nothing left to claim: wait for the next phase
            spins += 1
            if spins >= _SPINS:
                _yield_core()
                spins = 0
            continue
        if not _atomic_cas(sync, _CLAIM, w, w + 1):
            continue
        spins = 0
        m = _atomic_load(sync, _M)
        _pt_blocks(st, blk, blk + 1, m, _atomic_load(sync, _V), P, nz)
        if _atomic_add(sync, _DONE, 1) + 1 == nb:
            # every block of the phase is done (each thread counts after its block's
            # writes): this thread alone selects, the others wait for the next phase
            step = step0 + ph + 1
            if step == step0 + n_steps:
                _atomic_store(sync, _CLAIM, _FINISHED << 32)
                return
            v = _pt_select(st, step, b, b_hi, b_lo, rule)
            if step == last:
                _atomic_store(sync, _CLAIM, _FINISHED << 32)
                return
            m = meta[_N_SLOTS]
            # atomic (release) stores: the words the spinning threads read are never torn or cached
            _atomic_store(sync, _V, v)
            _atomic_store(sync, _M, m)
            _atomic_store(sync, _NB, (m + BLOCK - 1) // BLOCK)
            _atomic_store(sync, _DONE, 0)
            _atomic_store(sync, _CLAIM, (ph + 1) << 32)


@njit(cache=CACHE, nogil=True, parallel=True)
def pt_steps_shared(st, step0, n_steps, n_threads, P, nz):
    """:func:`pt_steps_serial` on ``n_threads`` threads that share each step's blocks
    (:func:`_pt_worker`): one fork/join a call, not a step. The same blocks, reduced in
    the same order by the serial kernel's selection: the same tree."""
    if n_steps <= 0:  # as the serial kernel: no step, no change (the workers' stop test needs one)
        return
    step = step0
    v = st.meta[_NEXT] if step < 0 else _pt_select(st, step, nz.b, nz.b_hi, nz.b_lo, nz.rule)
    if step == st.edges.shape[0] - 1:
        return
    m = st.meta[_N_SLOTS]
    sync = np.zeros(_SYNC_WORDS, dtype=np.int64)
    sync[_V] = v
    sync[_M] = m
    sync[_NB] = (m + BLOCK - 1) // BLOCK
    for _ in prange(n_threads):
        _pt_worker(st, sync, step0, n_steps, P, nz)


# from this many points the steps' blocks are shared by the threads (with 2 or more):
# below it a step has too few blocks (n / BLOCK at the first step, half that on average)
# for the claims and the hand-off of the selection to pay (docs/design.rst, Points:
# measured). A rule of its own: the dense gumbel engine forks and joins a step.
PARALLEL_MIN_N = 16 * BLOCK


def n_threads():
    """numba's current thread count, capped by the CPUs the process may use."""
    return min(prange_threads(), thread_count())


def use_parallel(n, threads=None):
    """Whether the shared kernel runs: n >= PARALLEL_MIN_N and two threads or more
    (default: :func:`n_threads`)."""
    if threads is None:
        threads = n_threads()
    return threads >= 2 and n >= PARALLEL_MIN_N


class _Chooser:
    """The steps' kernel, chosen call by call: the shared kernel on ``workers`` threads or
    the serial one, whichever did its last call faster per slot relaxed (``adaptive``;
    else always the shared one). On a shared machine a thread that is preempted while it
    holds a block holds the others up until it runs again; when that happens often the
    shared kernel loses to one thread, and the chunks (``chunks.run_in_chunks``) go serial.
    The losing kernel is tried again after 2, 4, 8, ... calls (at most ``_PROBE_MAX``), so
    that the choice follows the machine's load while costing little. Both kernels make
    the same state transitions: the choice changes the speed only, never the tree."""

    def __init__(self, workers, adaptive=True):
        self.workers = workers
        self.adaptive = adaptive
        self.rate = {True: None, False: None}  # seconds per slot relaxed, the last call of each
        self.wait = 2
        self.since = 0
        self.calls = [0, 0]  # calls that ran the serial, the shared kernel (a log: bench scripts read it)

    def _pick(self):
        if not self.adaptive or self.rate[True] is None:
            return True
        if self.rate[False] is None:
            return False
        best = self.rate[True] <= self.rate[False]
        self.since += 1
        if self.since >= self.wait:  # try the other kernel again
            self.since = 0
            self.wait = min(2 * self.wait, _PROBE_MAX)
            return not best
        return best

    def __call__(self, st, s0, k, *args):
        shared = self._pick()
        self.calls[shared] += 1
        m0 = int(st.meta[_N_SLOTS])
        t0 = time.perf_counter()
        if shared:
            pt_steps_shared(st, s0, k, self.workers, *args)
        else:
            pt_steps_serial(st, s0, k, *args)
        took = time.perf_counter() - t0
        # slots relaxed: about k times the mean of the slot counts before and after
        work = max(1.0, k * 0.5 * (m0 + int(st.meta[_N_SLOTS])))
        before = self._winner()
        self.rate[shared] = took / work
        if before is not None and self._winner() != before:
            self.wait = 2  # the winner changed: try the other often again

    def _winner(self):
        if self.rate[True] is None or self.rate[False] is None:
            return None
        return self.rate[True] <= self.rate[False]


# the most calls between two tries of the losing kernel (a call is about 0.1 s)
_PROBE_MAX = 16
# the shared kernel's waiting threads yield through POSIX sched_yield, which Windows lacks,
# and its atomics are compiled intrinsics, which NUMBA_DISABLE_JIT=1 cannot run as Python:
# there the serial kernel runs (the same tree)
_SHARED_OK = sys.platform != "win32" and not numba.config.DISABLE_JIT


# GUMBEL's block path on the grid (``_pt_gumbel_cut``); tests that compare the trees with
# per-edge noise (the dense engine, D - G / lam) turn it off (``pt_prim(block=False)``, or
# this switch for the public functions): the law is the same, the trees for a seed are not
BLOCK_PATH = True


def pt_prim(P, start, sgn, rule=EXACT, key=(0, 0), lam=1.0, b=0.0, advance=None, parallel=None,
            filtered=True, grid=True, block=None, tc=None):
    """The tree of prepared points ``P = (X, code, p, aux)`` (see
    :func:`fastpamst_nb.metrics.prepare_points`) from ``start``: edges (n - 1, 2).

    ``rule``/``key``/``lam``/``b``: the key rule, the counter-based key (k0, k1),
    the rate and the noise scale (1 / lam for GUMBEL, sigma for GAUSS, 0 for
    EXACT). ``advance``: a ``run_in_chunks``-style runner ``(advance, n_steps)``
    or None (one call). ``parallel``: force a kernel (tests: True runs the shared
    kernel with at least two workers, even on one thread, where they run one after
    the other), None chooses. ``filtered``: False turns the float32 filter off (tests:
    the same edges either way); ``grid``: False turns the uint8 grid in front of it off
    (tests, benchmarks: the same edges either way). ``block``: False turns GUMBEL's block
    path off (None: ``BLOCK_PATH``), so that every edge's Gumbel is its own (per-edge) one:
    the same law, other trees for a seed (tests compare those with per-edge references).
    ``tc``: the block path's far threshold (None: ``T_C``; tests: small values, so that
    far, near and big slots all occur on a few points).
    """
    if tc is not None and not tc >= 0.0:
        # a negative T_C makes a walk's points O(BLOCK e^-T_C) and overflows its integer rates
        raise ValueError(f"tc, the block path's far threshold, must be >= 0 (got {tc!r}); "
                         "None uses points.T_C")
    X, code, p, aux = P
    n = X.shape[0]
    # the float32 filter: a minimum tree, EXACT or GUMBEL, on a metric it bounds
    fc = filter_consts(X, code) if filtered and (
        (rule == EXACT and sgn == -1.0) or (rule == GUMBEL and sgn < 0.0)) else None
    if fc is not None and tc is not None:
        fc[_FC_TC] = float(tc)
    st = pt_state(X, code, start, fc, grid)
    if not (BLOCK_PATH if block is None else block):
        st.tops[:, _T_CUTOFF] = np.inf  # never tried: the per-edge passes only
    if n < 2:
        return st.edges
    threads = n_threads()
    # never in a child forked after OpenMP started, where a prange kernel ends the process
    par = (use_parallel(n, threads) if parallel is None else parallel) and _SHARED_OK \
        and not forked_after_omp()
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    b_hi, b_lo = split(float(b))
    args = (PtPoints(X, code, float(p), aux),
            PtNoise(float(sgn), rule, k0, k1, float(lam), float(b), b_hi, b_lo))
    kernel = _Chooser(max(2, threads), adaptive=parallel is None) if par else pt_steps_serial
    kernel(st, -1, 1, *args)
    if advance is None:
        kernel(st, 0, n - 1, *args)
    else:
        advance(lambda s0, k: kernel(st, s0, k, *args), n - 1)
    return st.edges
