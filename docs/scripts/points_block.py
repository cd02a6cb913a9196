"""Throwaway prototype (issue 30, task W, 2026-11-28): the gumbel rule on points drawing
one exponential per *block of slots* of the joining vertex's row instead of one Philox
block per edge (docs/design.rst, Points, "One draw per block of slots"). Its ``cutf``
variant is built into the engine since stop 42 (``points._pt_gumbel_cut``, the state's
``qth``/``fth``, ``philox.block_uniforms``); this script keeps the other variants and the
``parts`` breakdown, on the engine's state and helpers.

When u joins, the edge (u, v) of each live slot v relaxes v exactly when its Gumbel
exceeds t_v = g_v - (s - s_v) lam; each edge's noise is examined once (u never joins
again), so by deferred decisions only the independent events {G_uv > t_v} and, for those
that happen, G_uv given G_uv > t_v matter. P(G > t) = 1 - exp(-exp(-t)) = P(N >= 1) for
N ~ Poisson(lam_v), lam_v = exp(-t_v): the events are those of independent Poisson counts,
i.e. of a Poisson process of rate Lam_v >= lam_v per slot thinned by lam_v / Lam_v. A block
is skipped when its first point E1 = -ln V lies beyond the block's total (every slot decided
"no exceedance" at once: one uniform, no distance, no Philox per edge); else the points are
walked (an exact integer partition of the total), each landing slot takes its float64
distance and an acceptance uniform, and an accepted slot draws G = -ln(-log1p(-U p)),
p = -expm1(-lam_v): G given G > t_v.

Two variants:

- ``block`` (``blk_steps``): Lam_v for every slot from the grid's lower bound of the
  distance (a power-of-two upper bound of exp, no libm, vectorized), blocks of K slots;
  blocks whose total exceeds ``S_MAX`` (the first steps) run the per-edge path of the edge
  stream instead.
- ``cut`` (``cut_steps``, the faster): the slot's integer grid threshold ``qth`` marks the
  slots whose t reaches T_C ("far": rate 2 exp(-T_C) each, runs of them skipped
  arithmetically in the walk); only the "near" slots (grid sum below qth) take a bound from
  their key, and a near slot whose bound exceeds ``L_BIG`` is decided by its own edge's
  Gumbel (the edge stream). Blocks of ``points.BLOCK`` slots.
- ``cutf``: ``cut`` with a float32 lower bound ``af`` of each slot's a = g + s lam beside
  ``qth`` (written when its key changes, compacted with the slots), so that a near slot's
  bound reads 4 bytes of a 4 MB array instead of its key's two float64 lines (16 MB).

    python docs/scripts/points_block.py speed --n 1000000 --skip 5000 --steps 200 --rounds 3 --K --tc 8 10
    CASES=cut python docs/scripts/points_block.py law

``speed``: the state of the present kernel after ``--skip`` steps (the real release, one
thread), copied; ``parts`` of a pass (the grid's sums, the near/far comparison, the listing,
the near slots' gathers and bounds) for 40 vertices; then the present kernel
(``points.pt_steps_serial``) and the prototype run the next ``--steps`` steps each on a
copy, alternated ``--rounds`` times: CPU ns a slot (one thread: what a loaded machine does
not inflate). ``law``: chi-square of the prototype's trees (K5, K6; uniform, far groups,
narrow noise, clusters) against ``naive.kruskal_em_tree_distribution``, 20,000 seeded
releases each (``--runs``), p < 1e-4 fails; ``CASES`` selects cases by substring,
``SEED`` seeds the keys (2026).
"""
import argparse
import math
import os
import sys
import time

import numba
import numpy as np
from numba import njit

from fastpamst_nb import points as pts
from fastpamst_nb.philox import _MASK, _S32, bits_of_words, philox4x32_10, unit_of_bits
from fastpamst_nb.points import (_FC_QA, _FC_QH, _N_DEAD, _N_SLOTS, _NEXT, BLOCK, RESCAN,
                                 _pt_compact, _pt_key_beats, _pt_l2, _pt_q8_sum, _pt_reduce)

LOG2E = 1.4426950408889634
TWO40 = 2.0 ** 40
S_MAX = 64.0  # a block whose bound exceeds this takes the per-edge path (variant block)
L_BIG = 1.0  # variant cut: a near slot whose bound exceeds this is decided on its own
DEAD_A = 1e300
# stats: 0 blocks, 1 skipped, 2 walked, 3 per-edge blocks, 4 points landed, 5 distances,
# 6 accepted, 7 relaxed, 8 thinning violations (lam_v > Lam_v: must stay 0)
NSTAT = 10  # 9: near slots (variant cut)


@njit(inline="always")
def _a_low(g, s, lam):
    """A lower bound of the real g + s lam (the slot's part of t; -inf: no key yet)."""
    x = s * lam
    return (g + x) - (abs(g) + abs(x)) * 2.0 ** -50


@njit(inline="always")
def _bstream(k0, k1, v, sub, j):
    """Two uniforms of the block stream: Philox-4x32-10 under (lo k0, hi k0) of the counter
    (v, sub, j, hi k1) (the edge stream is Philox-2x32-10: another generator)."""
    x0, x1, x2, x3 = philox4x32_10(np.uint64(v) & _MASK, np.uint64(sub) & _MASK,
                                   np.uint64(j) & _MASK, k1 >> _S32, k0 & _MASK, k0 >> _S32)
    m1 = (x0 << np.uint64(21)) | (x1 >> np.uint64(11))
    m2 = (x2 << np.uint64(21)) | (x3 >> np.uint64(11))
    return unit_of_bits(m1), unit_of_bits(m2)


@njit(nogil=True)
def _lam_up(qs, a, lo, m_k, h, A8, c, pw, fr):
    """Per slot, Lam = pw (a power of two, as int64 bits) * fr (in [1, 2)) >= exp(-t_lo),
    t_lo = a + c w_lo <= t (w_lo: the grid's lower bound of the float64 distance)."""
    for k in range(m_k):
        x = h * math.sqrt(np.float64(qs[k])) * (1.0 - 2.0 ** -50)
        r = max(x - A8, 0.0)
        w = max(r * (1.0 - 2.0 ** -38) - 2.0 ** -500, 0.0)
        al = a[lo + k]
        cw = c * w
        y = -(al + cw) * LOG2E + (abs(al) + cw) * 2.0 ** -40 + 2.0 ** -28
        y = min(max(y, -1020.0), 1020.0)
        f = math.floor(y)
        pw[k] = (np.int64(np.int32(f)) + 1023) << 52
        fr[k] = 1.0 + (y - f)


@njit(nogil=True, fastmath={"reassoc"})
def _total(pwv, fr, i0, i1):
    s = 0.0
    for k in range(i0, i1):
        s += pwv[k] * fr[k]
    return s


@njit(nogil=True)
def _blk_block(st, a, blk, lo, hi, v, P, nz, K, qs, pw, pwv, fr, stats):
    sl = st.slot[lo:hi]
    sbl = st.sb[lo:hi]
    gbl = st.gb[lo:hi]
    pal = st.parent[lo:hi]
    al = a[lo:hi]
    tops = st.tops
    topk = st.topk
    X = P.X
    sgn = nz.sgn
    lam = nz.lam
    b = nz.b
    b_hi = nz.b_hi
    b_lo = nz.b_lo
    k0 = nz.k0
    k1 = nz.k1
    m_k = hi - lo
    ts = -np.inf
    tg = 0.0
    tk = -1
    full = topk[blk] == RESCAN
    if not full and topk[blk] >= 0:
        ts = tops[blk, 0]
        tg = tops[blk, 1]
        tk = topk[blk] - lo
    _pt_q8_sum(st.xq, st.xqv, v, lo, hi, qs)
    _lam_up(qs, a, lo, m_k, st.fc[_FC_QH], st.fc[_FC_QA], abs(sgn) * lam, pw, fr)
    for i0 in range(0, m_k, K):
        i1 = min(i0 + K, m_k)
        stats[0] += 1
        S = _total(pwv, fr, i0, i1)
        sub = (lo + i0) // K
        u1, u2 = _bstream(k0, k1, v, sub, 0)
        E = -math.log(u1)
        if E > S * (1.0 + 2.0 ** -30) + 2.0 ** -29:
            stats[1] += 1
            continue
        if S > S_MAX:  # the per-edge path (the edge stream: each edge's own Gumbel)
            stats[3] += 1
            ka = k0 & _MASK
            kb = k0 >> _S32
            c2 = k1 & _MASK
            c3 = k1 >> _S32
            for k in range(i0, i1):
                u = sl[k]
                if u < 0:
                    continue
                stats[5] += 1
                s = sgn * _pt_l2(X, v, u, False)
                g = -math.log(-math.log(unit_of_bits(bits_of_words(ka, kb, c2, c3, v, u))))
                if _pt_key_beats(s, g, sbl[k], gbl[k], b, b_hi, b_lo):
                    stats[7] += 1
                    sbl[k] = s
                    gbl[k] = g
                    pal[k] = v
                    al[k] = _a_low(g, s, lam)
                    if tk < 0 or _pt_key_beats(s, g, ts, tg, b, b_hi, b_lo) or (
                            k < tk and not _pt_key_beats(ts, tg, s, g, b, b_hi, b_lo)):
                        ts = s
                        tg = g
                        tk = k
            continue
        stats[2] += 1
        # the Poisson process of rates Lint_i 2**-40 on [0, sum): points at E, E + E', ...
        i = i0
        C = np.int64(0)
        Li = np.int64(pwv[i] * fr[i] * TWO40) + 1
        j = 0
        done = -1
        while True:
            pos = np.int64(E * TWO40)
            while C + Li <= pos:
                C += Li
                i += 1
                if i == i1:
                    break
                Li = np.int64(pwv[i] * fr[i] * TWO40) + 1
            if i == i1:
                break
            stats[4] += 1
            u = sl[i]
            if u >= 0 and i != done:
                stats[5] += 1
                s = sgn * _pt_l2(X, v, u, False)
                t = gbl[i] - (s - sbl[i]) * lam
                lt = math.exp(-t)
                if lt * TWO40 > Li:
                    stats[8] += 1
                if u2 * Li < lt * TWO40:  # accepted: G > t
                    stats[6] += 1
                    done = i
                    w1, w2 = _bstream(k0, k1, v, sub, j | (1 << 31))
                    p = -math.expm1(-lt)
                    g = -math.log(-math.log1p(-w1 * p))
                    if _pt_key_beats(s, g, sbl[i], gbl[i], b, b_hi, b_lo):
                        stats[7] += 1
                        sbl[i] = s
                        gbl[i] = g
                        pal[i] = v
                        al[i] = _a_low(g, s, lam)
                        if tk < 0 or _pt_key_beats(s, g, ts, tg, b, b_hi, b_lo) or (
                                i < tk and not _pt_key_beats(ts, tg, s, g, b, b_hi, b_lo)):
                            ts = s
                            tg = g
                            tk = i
            j += 1
            u1, u2 = _bstream(k0, k1, v, sub, j)
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
    tops[blk, 0] = ts
    tops[blk, 1] = tg
    topk[blk] = tk + lo if tk >= 0 else -1


@njit(nogil=True)
def _blk_select(st, a, step, nz):
    m = st.meta[_N_SLOTS]
    nb = (m + BLOCK - 1) // BLOCK
    k = _pt_reduce(st.tops, st.topk, nb, nz.b, nz.b_hi, nz.b_lo, pts.GUMBEL)
    v = np.int64(st.slot[k])
    st.edges[step, 0] = st.parent[k]
    st.edges[step, 1] = v
    st.slot[k] = -1
    a[k] = DEAD_A
    st.topk[k // BLOCK] = RESCAN
    st.meta[_N_DEAD] += 1
    if 16 * st.meta[_N_DEAD] > m:
        j = 0
        for q in range(m):
            if st.slot[q] >= 0:
                a[j] = a[q]
                j += 1
        _pt_compact(st)
        st.topk[:] = RESCAN
    st.meta[_NEXT] = v
    return v


@njit(nogil=True)
def blk_steps(st, a, step0, n_steps, P, nz, K, stats):
    qs = np.empty(BLOCK, dtype=np.int32)
    pw = np.empty(BLOCK, dtype=np.int64)
    pwv = pw.view(np.float64)
    fr = np.empty(BLOCK)
    for step in range(step0, step0 + n_steps):
        v = st.meta[_NEXT] if step < 0 else _blk_select(st, a, step, nz)
        m = st.meta[_N_SLOTS]
        if step == st.edges.shape[0] - 1:
            break
        nb = (m + BLOCK - 1) // BLOCK
        for blk in range(nb):
            _blk_block(st, a, blk, blk * BLOCK, min(m, (blk + 1) * BLOCK), v, P, nz, K, qs, pw,
                       pwv, fr, stats)


# ---------------------------------------------------------------------------------------
# Variant "cut": the slot's integer grid threshold qth (unused by GUMBEL until now) marks
# the slots whose t_lo reaches T_C ("far": exp(-t) <= exp(-T_C), a constant rate LC each);
# a step computes the grid sums and one integer comparison a slot, and only the few "near"
# slots (S < qth) take the bound Lam from the distance's lower bound. A block of BLOCK slots
# is one draw's block.
# ---------------------------------------------------------------------------------------


@njit(inline="always")
def _cut_qth(g, s, lam, c, fc, tc):
    """The slot's far threshold: S >= it gives t >= tc (t from the float64 distance)."""
    al = _a_low(g, s, lam)
    if not al < tc:  # also a dead slot's (never: dead slots get 0 from _pt_select)
        return np.int32(0)
    r = (tc - al) / c * (1.0 + 2.0 ** -30) + 2.0 ** -1000
    return pts._pt_qth(r, fc)


@njit(inline="always")
def _af_of(g, s, lam):
    """a = g + s lam rounded down into float32 (-inf stays -inf)."""
    a = _a_low(g, s, lam)
    a = a * (1.0 - 2.0 ** -22) if a > 0.0 else a * (1.0 + 2.0 ** -22)
    return np.float32(max(a - 2.0 ** -120, -3e38) if a > -np.inf else a)


@njit(inline="always")
def _lam_of(al, q, c, h, A8):
    """exp(-(al + c w_lo)) rounded up (w_lo the grid's lower bound of the distance)."""
    x = h * math.sqrt(np.float64(q)) * (1.0 - 2.0 ** -50)
    r = max(x - A8, 0.0)
    w = max(r * (1.0 - 2.0 ** -38) - 2.0 ** -500, 0.0)
    cw = c * w
    y = -(al + cw) * LOG2E + (abs(al) + cw) * 2.0 ** -40 + 2.0 ** -28
    y = min(max(y, -1020.0), 1020.0)
    f = math.floor(y)
    return math.ldexp(1.0 + (y - f), int(f))


@njit(nogil=True)
def _cut_block(st, blk, lo, hi, v, P, nz, tc, lc, qs, keep, hit, lamv, stats, af):
    sl = st.slot[lo:hi]
    sbl = st.sb[lo:hi]
    gbl = st.gb[lo:hi]
    pal = st.parent[lo:hi]
    qth = st.qth
    tops = st.tops
    topk = st.topk
    X = P.X
    fc = st.fc
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
    # the near slots listed branch-free (hit[kept] is overwritten until a near slot keeps it)
    kept = 0
    for k in range(mu):
        hit[kept] = k
        kept += qs[k] < qth[lou + k]
    stats[0] += 1
    S = (m_k - kept) * lc
    if kept > 0:
        h = fc[_FC_QH]
        A8 = fc[_FC_QA]
        for q in range(kept):
            k = hit[q]
            if af.shape[0] > 0:  # the slot's float32 lower bound of a: no gather of its key
                lamv[q] = _lam_of(np.float64(af[lo + k]), qs[k], c, h, A8)
            else:
                lamv[q] = _lam_of(_a_low(gbl[k], sbl[k], lam), qs[k], c, h, A8)
            S += lamv[q]
    stats[9] += kept
    # near slots whose bound exceeds L_BIG are decided one by one, each by its own edge's
    # Gumbel (the edge stream): they would relax with probability >= 1 - e^-1 anyway
    nbig = 0
    if kept > 0:
        ka = k0 & _MASK
        kb = k0 >> _S32
        c2 = k1 & _MASK
        c3 = k1 >> _S32
        for q in range(kept):
            k = hit[q]
            if lamv[q] > L_BIG:
                S -= lamv[q]
                lamv[q] = -1.0  # no rate in the process below
                nbig += 1
                u = sl[k]
                stats[5] += 1
                s = sgn * _pt_l2(X, v, u, False)
                g = -math.log(-math.log(unit_of_bits(bits_of_words(ka, kb, c2, c3, v, u))))
                if _pt_key_beats(s, g, sbl[k], gbl[k], b, b_hi, b_lo):
                    stats[7] += 1
                    sbl[k] = s
                    gbl[k] = g
                    pal[k] = v
                    qth[lo + k] = _cut_qth(g, s, lam, c, fc, tc)
                    if af.shape[0] > 0:
                        af[lo + k] = _af_of(g, s, lam)
                    if tk < 0 or _pt_key_beats(s, g, ts, tg, b, b_hi, b_lo) or (
                            k < tk and not _pt_key_beats(ts, tg, s, g, b, b_hi, b_lo)):
                        ts = s
                        tg = g
                        tk = k
        if nbig > 0:  # S again from the terms, not by subtraction (its rounding)
            S = (m_k - kept) * lc
            for q in range(kept):
                if lamv[q] >= 0.0:
                    S += lamv[q]
    stats[3] += nbig
    u1, u2 = _bstream(k0, k1, v, blk, 0)
    E = -math.log(u1)
    if E > S * (1.0 + 2.0 ** -30) + 2.0 ** -29:
        stats[1] += 1
    else:
        # the Poisson process of integer rates (2**-40 units): far slots lci each (runs of
        # them skipped arithmetically), near slots their own; big slots (decided above) none
        stats[2] += 1
        lci = np.int64(lc * TWO40) + 1
        i = 0  # the slot whose interval starts at C
        q = 0  # the next listed near slot
        C = np.int64(0)
        j = 0
        done = -1
        while True:
            pos = np.int64(E * TWO40)
            landed = -1
            Li = lci
            while True:
                nxt = hit[q] if q < kept else m_k
                run = np.int64(nxt - i)  # far slots i .. nxt - 1
                if run > 0:
                    if pos < C + run * lci:
                        dd = (pos - C) // lci
                        i += dd
                        C += dd * lci
                        landed = i
                        Li = lci
                        break
                    C += run * lci
                    i = nxt
                if i >= m_k:
                    break
                Li = np.int64(0) if lamv[q] < 0.0 else np.int64(lamv[q] * TWO40) + 1
                if pos < C + Li:
                    landed = i
                    break
                C += Li
                i += 1
                q += 1
            if landed < 0:
                break
            stats[4] += 1
            u = sl[i]
            if u >= 0 and i != done:
                stats[5] += 1
                s = sgn * _pt_l2(X, v, u, False)
                t = gbl[i] - (s - sbl[i]) * lam
                lt = math.exp(-t)
                if lt * TWO40 > Li:
                    stats[8] += 1
                if u2 * Li < lt * TWO40:  # accepted: G > t
                    stats[6] += 1
                    done = i
                    w1, w2 = _bstream(k0, k1, v, blk, j | (1 << 31))
                    p = -math.expm1(-lt)
                    g = -math.log(-math.log1p(-w1 * p))
                    if _pt_key_beats(s, g, sbl[i], gbl[i], b, b_hi, b_lo):
                        stats[7] += 1
                        sbl[i] = s
                        gbl[i] = g
                        pal[i] = v
                        qth[lo + i] = _cut_qth(g, s, lam, c, fc, tc)
                        if af.shape[0] > 0:
                            af[lo + i] = _af_of(g, s, lam)
                        if tk < 0 or _pt_key_beats(s, g, ts, tg, b, b_hi, b_lo) or (
                                i < tk and not _pt_key_beats(ts, tg, s, g, b, b_hi, b_lo)):
                            ts = s
                            tg = g
                            tk = i
            j += 1
            u1, u2 = _bstream(k0, k1, v, blk, j)
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
    tops[blk, 0] = ts
    tops[blk, 1] = tg
    topk[blk] = tk + lo if tk >= 0 else -1


@njit(nogil=True)
def _cut_select(st, step, nz, af):
    """``points._pt_select`` that also compacts ``af`` (when it is not empty)."""
    m = st.meta[_N_SLOTS]
    nb = (m + BLOCK - 1) // BLOCK
    k = _pt_reduce(st.tops, st.topk, nb, nz.b, nz.b_hi, nz.b_lo, pts.GUMBEL)
    v = np.int64(st.slot[k])
    st.edges[step, 0] = st.parent[k]
    st.edges[step, 1] = v
    st.slot[k] = -1
    st.qth[k] = 0
    st.topk[k // BLOCK] = RESCAN
    st.meta[_N_DEAD] += 1
    if 16 * st.meta[_N_DEAD] > m:
        if af.shape[0] > 0:
            j = 0
            for q in range(m):
                if st.slot[q] >= 0:
                    af[j] = af[q]
                    j += 1
        _pt_compact(st)
        st.topk[:] = RESCAN
    st.meta[_NEXT] = v
    return v


@njit(nogil=True)
def cut_steps(st, step0, n_steps, P, nz, tc, stats, af):
    qs = np.empty(BLOCK, dtype=np.int32)
    keep = np.empty(BLOCK, dtype=np.uint8)
    hit = np.empty(BLOCK, dtype=np.int64)
    lamv = np.empty(BLOCK)
    lc = 2.0 * math.exp(-tc)  # the far slots' rate: the factor 2 covers t's rounding
    for step in range(step0, step0 + n_steps):
        v = st.meta[_NEXT] if step < 0 else _cut_select(st, step, nz, af)
        m = st.meta[_N_SLOTS]
        if step == st.edges.shape[0] - 1:
            break
        nb = (m + BLOCK - 1) // BLOCK
        for blk in range(nb):
            _cut_block(st, blk, blk * BLOCK, min(m, (blk + 1) * BLOCK), v, P, nz, tc, lc, qs,
                       keep, hit, lamv, stats, af)


@njit(nogil=True)
def af_of_state(st, nz):
    m = st.meta[_N_SLOTS]
    af = np.full(st.slot.shape[0], np.float32(3e38))
    for k in range(m):
        if st.slot[k] >= 0:
            af[k] = _af_of(st.gb[k], st.sb[k], nz.lam)
    return af


@njit(nogil=True)
def cut_init_qth(st, nz, tc):
    """qth of every live slot from its key (the state of the present kernel)."""
    m = st.meta[_N_SLOTS]
    c = abs(nz.sgn) * nz.lam
    for k in range(m):
        if st.slot[k] >= 0:
            st.qth[k] = _cut_qth(st.gb[k], st.sb[k], nz.lam, c, st.fc, tc)
        else:
            st.qth[k] = 0


@njit(nogil=True)
def parts(st, vs, nz, what):
    """Passes over every block for each vertex of vs, no decision: 0 the grid's sums,
    1 the sums and the far/near comparison, 3 that and the near slots' listing, 4 that and
    the gathers of the near slots' keys (sb, gb), 2 that and their bounds; returns a
    checksum."""
    qs = np.empty(BLOCK, dtype=np.int32)
    keep = np.empty(BLOCK, dtype=np.uint8)
    hit = np.empty(BLOCK, dtype=np.int64)
    m = st.meta[_N_SLOTS]
    nb = (m + BLOCK - 1) // BLOCK
    qth = st.qth
    tot = 0.0
    c = abs(nz.sgn) * nz.lam
    h = st.fc[_FC_QH]
    A8 = st.fc[_FC_QA]
    for v in vs:
        for blk in range(nb):
            lo = blk * BLOCK
            hi = min(m, lo + BLOCK)
            _pt_q8_sum(st.xq, st.xqv, v, lo, hi, qs)
            if what == 0:
                tot += qs[0]
                continue
            mu = np.uint64(hi - lo)
            lou = np.uint64(lo)
            kept = 0
            for k in range(mu):
                cc = qs[k] < qth[lou + k]
                keep[k] = cc
                kept += cc
            tot += kept
            if what == 1 or kept == 0:
                continue
            kept = 0
            for k in range(hi - lo):
                if keep[k] != 0:
                    hit[kept] = k
                    kept += 1
            if what == 3:
                tot += hit[kept - 1]
                continue
            if what == 4:
                for q in range(kept):
                    k = hit[q] + lo
                    tot += st.gb[k] + st.sb[k]
                continue
            for q in range(kept):
                k = hit[q] + lo
                tot += _lam_of(_a_low(st.gb[k], st.sb[k], nz.lam), qs[hit[q]], c, h, A8)
    return tot


def a_of(st, lam):
    m = st.meta[_N_SLOTS]
    a = np.full(st.slot.shape[0], DEAD_A)
    live = st.slot[:m] >= 0
    g, s = st.gb[:m], st.sb[:m]
    x = s * lam
    with np.errstate(invalid="ignore"):
        v = (g + x) - (np.abs(g) + np.abs(x)) * 2.0 ** -50
    v[np.isneginf(s)] = -np.inf
    a[:m] = np.where(live, v, DEAD_A)
    return a


def _noise(X, sensitivity, key):
    from fastpamst_nb import privacy
    from fastpamst_nb.gumbel import _scale as gumbel_scale
    from fastpamst_nb.gumbel import split
    from fastpamst_nb.metrics import prepare_points
    P = prepare_points(X, "euclidean", None)
    lam = privacy.gumbel_rate(0.1, sensitivity, X.shape[0])
    b, _, _, inv_b, f = gumbel_scale(lam)
    b_hi, b_lo = split(float(b))
    nz = pts.PtNoise(float(-f), pts.GUMBEL, np.uint64(key[0]), np.uint64(key[1]), float(inv_b),
                     float(b), b_hi, b_lo)
    return pts.PtPoints(P[0], P[1], float(P[2]), P[3]), nz


def release(X, lam, key, mode):
    """The prototype's whole tree on points X (euclidean, minimum): edges (n - 1, 2), and
    its statistics. ``mode``: ("block", K) or ("cut", T_C)."""
    from fastpamst_nb.gumbel import split
    from fastpamst_nb.metrics import prepare_points
    P = prepare_points(X, "euclidean", None)
    b_hi, b_lo = split(1.0 / lam)
    nz = pts.PtNoise(-1.0, pts.GUMBEL, np.uint64(key[0]), np.uint64(key[1]), float(lam),
                     1.0 / lam, b_hi, b_lo)
    P = pts.PtPoints(P[0], P[1], float(P[2]), P[3])
    st = pts.pt_state(P.X, P.code, 0, pts.filter_consts(P.X, P.code), True)
    assert st.xq.shape[0] > 0
    stats = np.zeros(NSTAT, dtype=np.int64)
    n = X.shape[0]
    if mode[0] == "block":
        a = np.full(st.slot.shape[0], -np.inf)
        blk_steps(st, a, -1, 1, P, nz, mode[1], stats)
        blk_steps(st, a, 0, n - 1, P, nz, mode[1], stats)
    else:
        af = np.full(st.slot.shape[0], -np.inf, dtype=np.float32) if mode[0] == "cutf" else \
            np.empty(0, dtype=np.float32)
        cut_steps(st, -1, 1, P, nz, mode[1], stats, af)
        cut_steps(st, 0, n - 1, P, nz, mode[1], stats, af)
    return st.edges, stats


def law(runs=20_000):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
    import naive
    from scipy.spatial.distance import cdist
    r = np.random.default_rng(5)
    u5, u6, n6 = r.random((5, 2)), r.random((6, 3)), r.random((6, 2))
    far = np.array([[0.0], [0.4], [50.0], [50.3], [51.0]])
    clusters = np.array([[0.0, 0], [0.05, 0], [0, 0.07], [30, 30], [30.1, 30], [30, 30.04]])
    cases = {
        "uniform K5, lam 3, block K 2": (u5, 3.0, ("block", 2)),
        "uniform K6, lam 4, block K 1024": (u6, 4.0, ("block", 1024)),
        "far groups K5, lam 1, block K 2": (far, 1.0, ("block", 2)),
        "narrow K6, lam 12, block K 1": (n6, 12.0, ("block", 1)),
        "uniform K5, lam 3, cut 1": (u5, 3.0, ("cut", 1.0)),
        "uniform K6, lam 4, cut 3": (u6, 4.0, ("cut", 3.0)),
        "far groups K5, lam 1, cut 2": (far, 1.0, ("cut", 2.0)),
        "narrow K6, lam 12, cut 0.5": (n6, 12.0, ("cut", 0.5)),
        "clusters K6, lam 2, cut 12": (clusters, 2.0, ("cut", 12.0)),
        "uniform K6, lam 4, cutf 3": (u6, 4.0, ("cutf", 3.0)),
        "far groups K5, lam 1, cutf 2": (far, 1.0, ("cutf", 2.0)),
        "narrow K6, lam 12, cutf 0.5": (n6, 12.0, ("cutf", 0.5)),
    }
    only = os.environ.get("CASES")
    if only:
        cases = {k: v for k, v in cases.items() if any(o in k for o in only.split(","))}
    gen = np.random.default_rng(int(os.environ.get("SEED", 2026)))
    for name, (X, lam, mode) in cases.items():
        W = cdist(X, X)
        expected = naive.kruskal_em_tree_distribution(W, None, lam)
        counts = {}
        tot = np.zeros(NSTAT, dtype=np.int64)
        for _ in range(runs):
            key = tuple(int(x) for x in gen.integers(0, 2 ** 64, size=2, dtype=np.uint64))
            e, stats = release(X, lam, key, mode)
            tot += stats
            t = frozenset((int(min(p, q)), int(max(p, q))) for p, q in e)
            counts[t] = counts.get(t, 0) + 1
        pv, stat, dof = naive.chisquare_pvalue(counts, expected, runs)
        print(f"{name:34s} p = {pv:.4f} chi2 = {stat:.1f} dof = {dof} "
              f"{'FAIL' if pv < 1e-4 else 'ok'}  stats {tot.tolist()}", flush=True)


def speed(n, d, sensitivity, skip, steps, rounds, Ks, tcs):
    numba.set_num_threads(1)
    X = np.random.default_rng(0).random((n, d))
    sys.path.insert(0, os.path.dirname(__file__))
    from points_scale import _args_of
    from fastpamst_nb.chunks import run_in_chunks
    P0, sgn, code, key, lam, b = _args_of(X, "gumbel", sensitivity)
    got = {}
    mk = pts.pt_state

    def capture(*args, **kw):
        st = mk(*args, **kw)
        got["st"] = st
        return st

    class Stop(Exception):
        pass

    def advance(step, n_steps):
        t0 = time.process_time()
        run_in_chunks(step, skip)
        got["skip_cpu"] = time.process_time() - t0
        raise Stop

    pts.pt_state = capture
    try:
        pts.pt_prim(P0, 0, sgn, code, key, lam, b, advance=advance)
    except Stop:
        pass
    finally:
        pts.pt_state = mk
    st0 = got["st"]
    P, nz = _noise(X, sensitivity, key)
    print(f"# n={n} d={d} sensitivity={sensitivity:g} lam={nz.lam:.4g} b={nz.b:.4g}; state after "
          f"{skip} steps ({got['skip_cpu']:.0f} s CPU); steps {skip}..{skip + steps - 1}, one thread, "
          f"CPU ns a slot", flush=True)
    slots = sum(n - 1 - s for s in range(skip, skip + steps))

    def copy():
        return pts.PtState(*[x.copy() for x in st0])

    # compile both on a copy (one step)
    pts.pt_steps_serial(copy(), skip, 1, P, nz)
    for K in Ks:
        c = copy()
        blk_steps(c, a_of(c, nz.lam), skip, 1, P, nz, K, np.zeros(NSTAT, dtype=np.int64))
    for tc in tcs:
        c = copy()
        cut_init_qth(c, nz, tc)
        cut_steps(c, skip, 1, P, nz, tc, np.zeros(NSTAT, dtype=np.int64), np.empty(0, dtype=np.float32))
        c = copy()
        cut_init_qth(c, nz, tc)
        cut_steps(c, skip, 1, P, nz, tc, np.zeros(NSTAT, dtype=np.int64), af_of_state(c, nz))
    if tcs:
        c = copy()
        cut_init_qth(c, nz, tcs[0])
        vs = c.slot[: 40 * 1024 : 1024].astype(np.int64)
        parts(c, vs[:2], nz, 0)
        for what in (0, 1, 3, 4, 2, 0, 1, 3, 4, 2):
            t0 = time.process_time()
            parts(c, vs, nz, what)
            tp = (time.process_time() - t0) / (len(vs) * c.meta[_N_SLOTS])
            print(f"parts {what} (T_C={tcs[0]:g}) {tp * 1e9:6.2f} ns  load {os.getloadavg()[0]:.2f}",
                  flush=True)
    for r in range(rounds):
        c = copy()
        t0 = time.process_time()
        pts.pt_steps_serial(c, skip, steps, P, nz)
        tp = (time.process_time() - t0) / slots
        print(f"present kernel   {tp * 1e9:6.2f} ns  load {os.getloadavg()[0]:.2f}", flush=True)
        for K in Ks:
            c = copy()
            a = a_of(c, nz.lam)
            stats = np.zeros(NSTAT, dtype=np.int64)
            t0 = time.process_time()
            blk_steps(c, a, skip, steps, P, nz, K, stats)
            tb = (time.process_time() - t0) / slots
            print(f"block K={K:<5d}     {tb * 1e9:6.2f} ns  load {os.getloadavg()[0]:.2f}  "
                  f"blocks {stats[0]} skipped {stats[1] / stats[0]:.4f} walked {stats[2]} "
                  f"per-edge {stats[3]} points {stats[4]} distances {stats[5]} accepted {stats[6]} "
                  f"relaxed {stats[7]} violations {stats[8]}", flush=True)
        for tc in tcs:
            for fa in (False, True):
                c = copy()
                cut_init_qth(c, nz, tc)
                af = af_of_state(c, nz) if fa else np.empty(0, dtype=np.float32)
                stats = np.zeros(NSTAT, dtype=np.int64)
                t0 = time.process_time()
                cut_steps(c, skip, steps, P, nz, tc, stats, af)
                tb = (time.process_time() - t0) / slots
                name = f"cut{'f' if fa else ''} T_C={tc:g}"
                print(f"{name:16s} {tb * 1e9:6.2f} ns  load {os.getloadavg()[0]:.2f}  "
                      f"blocks {stats[0]} skipped {stats[1] / stats[0]:.4f} walked {stats[2]} "
                      f"big {stats[3]} points {stats[4]} distances {stats[5]} accepted {stats[6]} "
                      f"relaxed {stats[7]} near {stats[9] / slots:.4f} violations {stats[8]}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["speed", "law"])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--sensitivity", type=float, default=1e-5)
    ap.add_argument("--skip", type=int, default=5000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--K", type=int, nargs="*", default=[1024, 256, 64])
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--tc", type=float, nargs="*", default=[8.0, 12.0, 16.0])
    a = ap.parse_args()
    if a.what == "law":
        law(a.runs)
    else:
        speed(a.n, a.d, a.sensitivity, a.skip, a.steps, a.rounds, a.K, a.tc)


if __name__ == "__main__":
    main()
