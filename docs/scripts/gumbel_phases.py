"""Where a dense release's time goes: the validation, the Prim, the full call, per shape.

For each shape of ``fastpamst bench --shapes`` (``bench.shape_weights``) at one n, in one
process, the minimum of --repeat runs of: the floor's serial Prim (``floor.py``); the
validation pass alone on one thread (``dense_scan._scan_dense(W, workers=1)``); the
exact Prim alone (``prim.prim_dense_exact``) and ``exact_mst``; and at every
sensitivity the gumbel kernel alone on one thread (``gumbel.gumbel_dense(...,
threads=1)``) and the full call ``fast_pamst(W, 0.1, D, noise="gumbel")``, which runs
that kernel beside the validation when two threads are free. Every figure is "x floor"
(wall clock); ``cpu`` is the process's CPU time (both threads) over the floor's wall
time, which tells a second core that was busy (cpu ~ wall) from one that was free.
``--ties`` also times the floor on the shape with its ties broken (W + 1e-6 U, U the
Uniform(0, 1) matrix): the floor is faster on tied weights (docs/design.rst, sixth pass)::

    python docs/scripts/gumbel_phases.py --floor ../shared/bench/floor.py --n 16000 \\
        --shapes uniform integers clusters --sensitivity 1e-5 0.1 1 --repeat 2

``--split`` times the full call from the inside instead, run after run (docs/design.rst,
seventh pass): each run prints the floor (wall, and its CPU time over its wall time: 1
when the process had a core to itself), the kernel alone and the validation alone on
one thread (wall and thread CPU time, over the floor's CPU time), the full call by
the wall clock and by the process's CPU time, and inside it: when the kernel beside
the validation started and ended, its thread's CPU time, the validation thread's CPU
time, the time after both (the tree's assembly), and the full call with one thread
(validation, then kernel: ``threads.thread_count`` set to 1), alternated with the
two-thread call so that both see the same load::

    python docs/scripts/gumbel_phases.py --floor ../shared/bench/floor.py --n 4000 \\
        --shapes uniform --sensitivity 0.1 --repeat 5 --split

``--beside`` tells what slows the kernel beside the validation (docs/design.rst, eighth
pass): the kernel's thread CPU time alone, and beside each of: the validation on one thread;
a thread that only computes (an xorshift loop as long as the validation, no memory); a
thread that streams a copy of W (memory traffic, no compute); a thread that streams W
itself. A rise beside the compute thread alone points at a shared core (a VM's vCPUs on one
physical core, or a lower clock with both busy), a rise beside the streams at memory::

    python docs/scripts/gumbel_phases.py --floor ../shared/bench/floor.py --n 4000 \\
        --shapes uniform --sensitivity 1e-5 1 --repeat 7 --beside

``--ab`` times the kernel alone on one thread with the block path (``block=True``, the
default since docs/design.rst's ninth pass) and with one Gumbel per edge (``block=False``,
the kernel before it), alternated run by run with the floor, by thread CPU time over the
floor's, and counts the edges each lists for the exact path (``gumbel_dense(stats=)``)::

    python docs/scripts/gumbel_phases.py --floor ../shared/bench/floor.py --n 4000 \\
        --shapes uniform pareto outlier --sensitivity 1e-5 1e-3 0.1 1 --repeat 5 --ab
"""
import argparse
import os
import sys
import threading
import time

import numpy as np
from numba import njit

import fastpamst_nb as fp
from fastpamst_nb import bench, dense_scan, fast_release, graph, privacy, threads
from fastpamst_nb.dense_scan import _scan_dense
from fastpamst_nb.gumbel import gumbel_dense
from fastpamst_nb.prim import prim_dense_exact

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gumbel_table import _load_floor  # noqa: E402

KEY = (np.uint64(1), np.uint64(2))


def timed(repeat, f):
    """(wall, cpu) seconds of the fastest of ``repeat`` runs."""
    out = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        f()
        out.append((time.perf_counter() - t, time.process_time() - c))
    return min(out)


def clocks():
    """(wall, process CPU, thread CPU) now."""
    return time.perf_counter(), time.process_time(), time.thread_time()


def split_runs(F, name, n, d, repeat):
    """``--split``: the full call taken apart, ``repeat`` runs (see the module's docstring)."""
    W = bench.shape_weights(name, n)
    lam = privacy.gumbel_rate(0.1, d, n)
    rec = {}
    kernel, scan, count = fast_release.gumbel_dense, dense_scan._scan_dense, threads.thread_count

    def kernel_timed(*args, **kw):  # the kernel as the full call runs it, beside the scan
        t, c = time.perf_counter(), time.thread_time()
        out = kernel(*args, **kw)
        rec["kernel"] = (t, time.perf_counter(), time.thread_time() - c)
        return out

    def scan_timed(*args, **kw):  # the validation's own part (its call beside the kernel)
        c = time.thread_time()
        out = scan(*args, **kw)
        if "freed" in kw or "scan" not in rec:  # the innermost call: the scan alone
            rec["scan"] = (time.perf_counter(), time.thread_time() - c)
        return out

    def one(f):
        a = clocks()
        f()
        b = clocks()
        return [y - x for x, y in zip(a, b)]

    print(f"{name}, n = {n}, sensitivity {d:g}: x the floor's CPU time (load: 1-minute average)")
    fast_release.gumbel_dense = kernel_timed
    graph._scan_dense = dense_scan._scan_dense = scan_timed
    try:
        for _ in range(repeat):
            fl = one(lambda: F.floor_prim(W))
            f = fl[2]
            k = one(lambda: kernel(W, 0, False, lam, KEY, threads=1))
            v = one(lambda: scan(W, workers=1))
            t0 = time.perf_counter()
            rec.clear()
            full = one(lambda: fp.fast_pamst(W, 0.1, d, rng=1, noise="gumbel"))
            ks, ke, kc = rec.pop("kernel", (t0, t0, 0.0))
            se, sc = rec.pop("scan")
            rec.clear()
            threads.thread_count = lambda: 1
            try:
                seq = one(lambda: fp.fast_pamst(W, 0.1, d, rng=1, noise="gumbel"))
            finally:
                threads.thread_count = count
            print(f"load {os.getloadavg()[0]:.1f} | floor {fl[0]:.4f} s (cpu/wall {f / fl[0]:.2f}) | "
                  f"kernel {k[0] / f:.2f} (cpu {k[2] / f:.2f}) | validation {v[0] / f:.2f} "
                  f"(cpu {v[2] / f:.2f}) | full {full[0] / f:.2f} (cpu {full[1] / f:.2f}): "
                  f"kernel from {(ks - t0) / f:.2f} to {(ke - t0) / f:.2f} (cpu {kc / f:.2f}), "
                  f"validation to {(se - t0) / f:.2f} (cpu {sc / f:.2f}), after both "
                  f"{(t0 + full[0] - max(ke, se)) / f:.2f} | one thread {seq[0] / f:.2f} "
                  f"(cpu {seq[1] / f:.2f})", flush=True)
    finally:
        fast_release.gumbel_dense = kernel
        graph._scan_dense = dense_scan._scan_dense = scan


@njit(nogil=True)
def _spin(iters):
    """An xorshift loop: compute only, no memory (``--beside``)."""
    x = np.uint64(88172645463325252)
    s = np.uint64(0)
    for _ in range(iters):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        s += x
    return s


@njit(nogil=True)
def _stream(A):
    """One pass summing A's rows: memory traffic, little compute (``--beside``)."""
    s = 0.0
    for i in range(A.shape[0]):
        r = A[i]
        for j in range(A.shape[1]):
            s += r[j]
    return s


def beside_runs(F, name, n, d, repeat):
    """``--beside``: the kernel's thread CPU time alone and beside four other threads."""
    W = bench.shape_weights(name, n)
    W2 = W.copy()
    lam = privacy.gumbel_rate(0.1, d, n)
    c = time.thread_time()
    _spin(10_000_000)
    spin = time.thread_time() - c
    c = time.thread_time()
    _scan_dense(W, workers=1)
    iters = int(10_000_000 * (time.thread_time() - c) / spin)  # as long as the validation

    def kernel(rec):
        c = time.thread_time()
        gumbel_dense(W, 0, False, lam, KEY, threads=1)
        rec.append(time.thread_time() - c)

    def with_other(other):
        rec, orec = [], []

        def run_other():
            c = time.thread_time()
            other()
            orec.append(time.thread_time() - c)
        ts = [threading.Thread(target=run_other), threading.Thread(target=kernel, args=(rec,))]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return rec[0], orec[0], time.perf_counter() - t0

    cases = {"alone": None, "validation": lambda: _scan_dense(W, workers=1),
             "compute": lambda: _spin(iters), "stream a copy": lambda: _stream(W2),
             "stream W": lambda: _stream(W)}
    out = {k: [] for k in cases}
    fl = []
    for _ in range(repeat):
        c = time.thread_time()
        F.floor_prim(W)
        fl.append(time.thread_time() - c)
        for k, other in cases.items():  # alternated, so that every case sees the same load
            if other is None:
                rec = []
                kernel(rec)
                out[k].append((rec[0], 0.0, 0.0))
            else:
                out[k].append(with_other(other))
    f = float(np.median(fl))
    print(f"{name}, n = {n}, sensitivity {d:g}, load {os.getloadavg()[0]:.1f}: the kernel's "
          f"thread CPU x the floor's CPU ({f:.4f} s, median), min / median of {repeat}")
    for k, v in out.items():
        a = np.array(v) / f
        line = f"  {k:14s} kernel {a[:, 0].min():.2f} / {np.median(a[:, 0]):.2f}"
        if cases[k] is not None:
            line += f" | the other thread's CPU {np.median(a[:, 1]):.2f}, wall {np.median(a[:, 2]):.2f}"
        print(line, flush=True)


def ab_runs(F, name, n, d, repeat):
    """``--ab``: the kernel alone, block path and per edge, alternated (module docstring)."""
    W = bench.shape_weights(name, n)
    lam = privacy.gumbel_rate(0.1, d, n)
    out = {True: [], False: []}
    fl = []
    listed = {}
    for i in range(repeat):
        c = time.thread_time()
        F.floor_prim(W)
        fl.append(time.thread_time() - c)
        for block in ((True, False) if i % 2 == 0 else (False, True)):
            st = {}
            c = time.thread_time()
            gumbel_dense(W, 0, False, lam, KEY, threads=1, block=block, stats=st)
            out[block].append(time.thread_time() - c)
            listed[block] = (st["listed"], st["compared"])
    f = float(np.median(fl))
    k = {b: np.array(v) / f for b, v in out.items()}
    nln = n * np.log(n)
    print(f"{name:8s} n = {n}, sensitivity {d:g}, load {os.getloadavg()[0]:.1f}, floor CPU "
          f"{f:.4f} s (median of {repeat}): kernel x floor min / median: block "
          f"{k[True].min():.2f} / {np.median(k[True]):.2f}, per edge {k[False].min():.2f} / "
          f"{np.median(k[False]):.2f}; paired ratio {np.median(k[True] / k[False]):.2f}; listed / "
          f"compared: block {listed[True][0]} / {listed[True][1]} ({listed[True][0] / nln:.2f} / "
          f"{listed[True][1] / nln:.2f} n ln n), per edge {listed[False][0]} "
          f"({listed[False][0] / nln:.2f} n ln n)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floor", required=True, help="path of shared/bench/floor.py")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--shapes", nargs="+", default=list(bench.SHAPES))
    ap.add_argument("--sensitivity", type=float, nargs="+", default=[1e-5, 1e-3, 0.1, 1.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ties", action="store_true", help="also the floor with the ties broken")
    ap.add_argument("--split", action="store_true", help="the full call taken apart, run by run")
    ap.add_argument("--beside", action="store_true",
                    help="the kernel alone and beside a validation, compute or stream thread")
    ap.add_argument("--ab", action="store_true",
                    help="the kernel alone: block path against one Gumbel per edge, alternated")
    a = ap.parse_args()
    F = _load_floor(a.floor)
    w = bench.shape_weights("uniform", 64)
    F.floor_prim(w)
    fp.fast_pamst(w, 0.1, 0.1, rng=0, noise="gumbel")
    fp.exact_mst(w)
    gumbel_dense(w, 0, False, 1.0, KEY, threads=1)
    _scan_dense(w, workers=1)
    if a.beside:
        _spin(10)
        _stream(w)
        for name in a.shapes:
            for d in a.sensitivity:
                beside_runs(F, name, a.n, d, a.repeat)
        return
    if a.ab:
        gumbel_dense(w, 0, False, 1.0, KEY, threads=1, block=False)
        for name in a.shapes:
            for d in a.sensitivity:
                ab_runs(F, name, a.n, d, a.repeat)
        return
    if a.split:
        for name in a.shapes:
            for d in a.sensitivity:
                split_runs(F, name, a.n, d, a.repeat)
        return
    print(f"n = {a.n}, rho = 0.1, x floor (wall clock), minimum of {a.repeat}")
    for name in a.shapes:
        W = bench.shape_weights(name, a.n)
        fl = timed(a.repeat, lambda: F.floor_prim(W))[0]
        val = timed(a.repeat, lambda: _scan_dense(W, workers=1))
        exk = timed(a.repeat, lambda: prim_dense_exact(W, 0, -1.0))
        ex = timed(a.repeat, lambda: fp.exact_mst(W))
        line = (f"{name:10s} floor {fl:.3f} s | validation {val[0] / fl:.2f} | exact Prim "
                f"{exk[0] / fl:.2f} | exact_mst {ex[0] / fl:.2f} (cpu {ex[1] / fl:.2f})")
        if a.ties:
            J = W + 1e-6 * bench.shape_weights("uniform", a.n)
            np.fill_diagonal(J, 0.0)
            line += f" | floor, ties broken {timed(a.repeat, lambda: F.floor_prim(J))[0]:.3f} s"
            del J
        for d in a.sensitivity:
            lam = privacy.gumbel_rate(0.1, d, a.n)
            k = timed(a.repeat, lambda: gumbel_dense(W, 0, False, lam, KEY, threads=1))
            r = timed(a.repeat, lambda: fp.fast_pamst(W, 0.1, d, rng=1, noise="gumbel"))
            line += f" | {d:g}: kernel {k[0] / fl:.2f}, full {r[0] / fl:.2f} (cpu {r[1] / fl:.2f})"
        print(line, flush=True)
        del W


if __name__ == "__main__":
    main()
