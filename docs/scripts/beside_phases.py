"""What the exponential release would gain with its build and loop beside the validation
(docs/design.rst, The paper's engine beside the validation).

    python docs/scripts/beside_phases.py --n 4000 --sensitivity 1e-5 1e-3 0.1 1
    python docs/scripts/beside_phases.py --n 4000 --sensitivity 1e-5 --shape outlier pareto

A measurement, not a release path: for each shape and noise level, wall-clock seconds
over the floor's (``bench.floor_prim``, timed in the same minute), minimum of --repeat:

- ``today``: ``fast_pamst(noise="exponential")`` as released (validation on every
  thread with the top window, then ``gq_build``, then the loop on one thread);
- ``range``: one pass over all of W (both triangles, the diagonal skipped) for the
  finite range, the pass a beside thread needs before it can size its queue (``upper``:
  over the strict upper triangle only);
- ``mirror`` (with --mirror): ``dense_scan._dense_mirror`` into a fresh (n, n) copy, the
  pass that would make the beside thread safe on an asymmetric W without touching the
  kernels;
- ``build+loop``: ``gq_build`` without a window and the loop, on the validated graph;
- ``beside``: the validation (no window) and, on a thread beside it, the range pass,
  ``gq_build`` without a window and the whole loop (``_scan_dense(alongside=)``, as the
  gumbel release: the scan runs on one thread, on both once the beside thread returns);
  the wall clock of both;
- ``beside (upper)``: the same with the range pass over the upper triangle only (half
  the reads: the design that needs the kernels to clamp every key they compute).

Then the CPU time of each phase alone over the floor's CPU time, and what they give on
two idle cores: today's validation split in two halves then build+loop, against the
one-thread validation beside range + build + loop (the wall clock the idea could reach
without memory-bandwidth contention).

The ``beside`` rows run the existing kernels on W before it is validated: safe here
only because these weights are valid. Uniform(0, 1) weights or the shapes of
``fastpamst bench --shapes``; rho = 0.1. Uses both cores for about a minute at n = 4,000.
"""
import argparse
import os
import time

import numpy as np
from numba import njit

from fastpamst_nb import api, bench, privacy, threads
from fastpamst_nb.dense_scan import _dense_mirror, _scan_dense
from fastpamst_nb.fast_release import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA, _fast_pamst_graph
from fastpamst_nb.graph import Graph, as_graph
from fastpamst_nb.window import top_window

RHO = 0.1


@njit(nogil=True, cache=True)
def _fold(row, j0, j1, lo, hi, bad):
    """Fold row[j0:j1] into the per-column lo, hi and bad (elementwise: no reduction chain,
    so it vectorizes like the floor's own loop)."""
    for j in range(j0, j1):
        w = np.float64(row[j])
        bad[j] += w - w  # NaN for a NaN or an inf entry, else 0
        lo[j] = w if w < lo[j] else lo[j]
        hi[j] = w if w > hi[j] else hi[j]


@njit(nogil=True, cache=True)
def range_pass(W, upper):
    """(finite, wmin, wmax) over every off-diagonal entry of W (``upper``: of its strict
    upper triangle only), row by row."""
    n = W.shape[0]
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    bad = np.zeros(n)
    for i in range(n):
        row = W[i]
        if not upper:
            _fold(row, 0, i, lo, hi, bad)
        _fold(row, i + 1, n, lo, hi, bad)
    wlo = lo.min() if n > 1 else 0.0
    whi = hi.max() if n > 1 else 0.0
    return bad.sum() == 0.0 and wlo > -np.inf and whi < np.inf, wlo, whi


def graph_of(W, lo, hi):
    n = W.shape[0]
    e = np.zeros(0, dtype=np.int64)
    return Graph(n, n * (n - 1) // 2, True, W, e, e, np.zeros(0), float(lo), float(hi))


def engine(g, d):
    s = privacy.default_discretization(d)
    return _fast_pamst_graph(g, RHO, d, s, 0, np.random.default_rng(1), "exponential", False,
                             DEFAULT_THETA, DEFAULT_BUCKET_WIDTH)[0]


def beside(W, d, mode):
    found = []

    def side(W):
        if mode == "mirror":
            S = np.empty_like(W)
            status, _, _, lo, hi = _dense_mirror(W, S, False)
            ok = status == 0
        else:
            S = W
            ok, lo, hi = range_pass(W, mode == "upper")
        if ok:
            found.append(engine(graph_of(S, lo, hi), d))

    # the validation's own machinery: the scan on one thread, and on both once side returns
    scan = _scan_dense(W, alongside=side)
    assert scan[0] == 0 and found
    return found[0]


def best(f, repeat, clock):
    """Minimum seconds of ``f()`` over ``repeat`` runs, read on ``clock``."""
    least = np.inf
    for _ in range(repeat):
        t = clock()
        f()
        least = min(least, clock() - t)
    return least


def cpu(f, repeat):
    """Minimum process CPU seconds of ``f()`` over ``repeat`` runs."""
    return best(f, repeat, time.process_time)


def phases(W, g, d, repeat):
    """CPU seconds of today's phases and of the beside path's, each alone: (validation
    with the window (every thread, summed), build+loop with it, validation on one thread
    without a window, range pass, range pass over the upper triangle, build+loop
    without a window)."""
    n = W.shape[0]
    s = privacy.default_discretization(d)
    r = privacy.fast_pamst_key_rate(RHO, d, n, s, "exponential")
    vw, ew = np.inf, np.inf
    for _ in range(repeat):
        win = top_window(-1.0, s, r, DEFAULT_BUCKET_WIDTH)
        t = time.process_time()
        gw = as_graph(W, window=win)
        t1 = time.process_time()
        _fast_pamst_graph(gw, RHO, d, s, 0, np.random.default_rng(1), "exponential", False,
                          DEFAULT_THETA, DEFAULT_BUCKET_WIDTH, window=win)
        vw, ew = min(vw, t1 - t), min(ew, time.process_time() - t1)
    return (vw, ew, cpu(lambda: _scan_dense(W, workers=1), repeat), cpu(lambda: range_pass(W, False), repeat),
            cpu(lambda: range_pass(W, True), repeat), cpu(lambda: engine(g, d), repeat))


def wall(f, repeat):
    """Minimum wall-clock seconds of ``f()`` over ``repeat`` runs."""
    return best(f, repeat, time.perf_counter)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--sensitivity", type=float, nargs="+", default=[1e-5, 1e-3, 0.1, 1.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shape", nargs="+", default=["uniform"], choices=list(bench.SHAPES))
    ap.add_argument("--mirror", action="store_true", help="time the mirror copy too")
    a = ap.parse_args()
    warm = bench.uniform_weights(1100, 1)  # 2**20 entries: the threaded paths compile
    bench.floor_prim(warm)
    range_pass(warm, False)
    range_pass(warm, True)
    for shape in a.shape:
        for d in a.sensitivity:
            Wc = bench.shape_weights(shape, 1100)
            api.fast_pamst(Wc, RHO, d, noise="exponential", rng=1)
            beside(Wc, d, "full")
            beside(Wc, d, "upper")
    print(f"load {os.getloadavg()[0]:.2f}, threads {threads.thread_count()}")
    for shape in a.shape:
        W = bench.shape_weights(shape, a.n)
        g = as_graph(W)
        for d in a.sensitivity:
            f = wall(lambda: bench.floor_prim(W), 3)
            today = wall(lambda: api.fast_pamst(W, RHO, d, noise="exponential", rng=1), a.repeat)
            rng_ = wall(lambda: range_pass(W, False), a.repeat)
            rngu = wall(lambda: range_pass(W, True), a.repeat)
            mir = wall(lambda: _dense_mirror(W, np.empty_like(W), False), a.repeat) if a.mirror else np.nan
            bl = wall(lambda: engine(g, d), a.repeat)
            bes = wall(lambda: beside(W, d, "full"), a.repeat)
            besu = wall(lambda: beside(W, d, "upper"), a.repeat)
            today = min(today, wall(lambda: api.fast_pamst(W, RHO, d, noise="exponential", rng=1), a.repeat))
            f = min(f, wall(lambda: bench.floor_prim(W), 3))
            fc = cpu(lambda: bench.floor_prim(W), 3)
            vw, ew, v1, ra, rau, en = (x / fc for x in phases(W, g, d, a.repeat))
            print(f"{shape:9s} {d:g}: CPU x floor: validation {vw:.2f} + build+loop {ew:.2f} (today); "
                  f"one-thread validation {v1:.2f}, range {ra:.2f} (upper {rau:.2f}), build+loop "
                  f"without a window {en:.2f}; two idle cores: today {vw / 2 + ew:.2f}, beside "
                  f"{max(v1, ra + en):.2f} (upper {max(v1, rau + en):.2f})")
            print(f"{shape:9s} {d:g}: wall x floor: today {today / f:.2f}x, range {rng_ / f:.2f}x (upper {rngu / f:.2f}x), "
                  + (f"mirror {mir / f:.2f}x, " if a.mirror else "") + f"build+loop {bl / f:.2f}x, beside {bes / f:.2f}x (upper {besu / f:.2f}x) "
                  f"(floor {f * 1e3:.1f} ms, load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    main()
