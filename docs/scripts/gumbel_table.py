"""The gumbel release against the floor: noise levels and shapes of weights, in one run.

Every cell is ``fast_pamst(noise="gumbel")``'s best time over the floor's (the faster
of ``floor.py``'s serial and parallel textbook Prim, on the same matrix, in the same
process). Run from a checkout beside ``shared/``::

    python docs/scripts/gumbel_table.py --floor ../shared/bench/floor.py --n 4000 --repeat 3

It runs with whichever fastpamst_nb is installed, so the same command measures
another version (before and after a change). ``--sparse N`` also times a random
topology with about 7 N stored edges against scipy's ``minimum_spanning_tree``.
``--count`` also counts, beside each, the edges that take the exact path (and of them
those that relax): the weights change the time only through that count; with a version
that has the block path (docs/design.rst, ninth pass) also the edges the block path lists
(``gumbel_dense(stats=)``: a listed edge joins its block's walk, the walk's draws take the
exact path).
``--kernel`` also times the dense kernel alone (``gumbel.gumbel_dense`` on one thread,
no validation) beside each full call.

``--cpu`` reads CPU time instead of the wall clock, which stays meaningful on a machine
shared with other jobs (the CPU time does not count the moments another job held the
core): the floor (serial, one thread) and the kernel alone by the process's CPU time,
and each full call by **the CPU time of the whole call** (both threads: the kernel's
and the validation's) over the floor's CPU time, the fastest of --repeat, printed as
``cpu``; beside it ``lane``, the kernel thread's CPU time inside the same call (its
``gumbel_dense`` timed by ``time.thread_time``), and ``span`` = the longer of the
kernel's lane and the rest of the call's CPU (the validation, the setup, the tree's
assembly): with both cores free the call's wall clock is about its span plus the
contention of the two threads for memory (docs/design.rst, seventh pass), while on a
loaded machine (autogroup scheduling: the threads take turns) it is about ``cpu``.
The wall clock of the full call is printed too, against the floor's wall clock.

``--levels D [D ...]`` runs every shape (Uniform(0, 1), the four shapes above and
log-normal exp(8 (U - 1/2)), ``fastpamst bench --shapes``'s) at every sensitivity D as
full calls, one line a cell (without it: Uniform(0, 1) at 1e-5, 1e-3, 0.1 and 1 and the
other shapes at 1e-3, as before); ``--shapes`` picks some of them by name
(uniform outlier pareto clusters integers lognormal)::

    python docs/scripts/gumbel_table.py --floor ../shared/bench/floor.py --n 4000 --repeat 3 \\
        --cpu --kernel --levels 1e-5 1e-3 0.1 1
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import minimum_spanning_tree

import fastpamst_nb as fp
from fastpamst_nb import fast_release, gumbel, philox, privacy

RHO = 0.1


def _load_floor(path):
    # imported by name from its folder: numba's cache of its kernels refers to the module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    return importlib.import_module(os.path.splitext(os.path.basename(path))[0])


SHAPE_NAMES = ("uniform", "outlier", "pareto", "clusters", "integers", "lognormal")


def shapes(W, seed=0, which=SHAPE_NAMES[1:5]):
    """The shapes of real weights (Uniform(0, 1) W reshaped; every one symmetric), as
    (name, matrix) pairs made one at a time (at n = 16,000 each is 2 GiB), those named
    in ``which`` (``SHAPE_NAMES``), in that order. Pareto draws from
    ``default_rng(seed)`` (as before the eleventh pass), the integers from
    ``default_rng(seed + 1)`` (they drew after Pareto before: the same law, other values)."""
    n = W.shape[0]
    for name in which:
        if name == "uniform":
            yield "Uniform(0, 1)", W
        elif name == "outlier":
            A = W.copy()
            A[0, 1] = A[1, 0] = 1e4
            yield "one outlier edge 1e4", A
            del A
        elif name == "pareto":
            P = np.triu(np.random.default_rng(seed).pareto(0.7, (n, n)), 1)
            P += P.T
            yield "Pareto alpha 0.7", P
            del P
        elif name == "clusters":
            c = np.arange(n) % 3
            C = np.abs(c[:, None] - c[None, :]).astype(np.float64)
            C *= 1000.0
            C += W
            yield "three clusters 1000 apart", C
            del C
        elif name == "integers":
            rng = np.random.default_rng(seed + 1)
            Z = np.triu(rng.integers(0, 100, (n, n)).astype(np.float64), 1)
            i, j = rng.integers(0, n, 10), rng.integers(0, n, 10)
            Z[np.minimum(i, j), np.maximum(i, j)] = 1e9
            Z = np.triu(Z, 1)
            Z += Z.T
            yield "integers 0..99, ten 1e9", Z
            del Z
        elif name == "lognormal":
            L = W - 0.5  # W symmetric with a zero diagonal: so is L off the diagonal
            L *= 8.0
            np.exp(L, out=L)
            np.fill_diagonal(L, 0.0)
            yield "log-normal exp(8 (U - 1/2))", L
            del L
        else:
            raise ValueError(f"unknown shape {name!r}; choose among {' '.join(SHAPE_NAMES)}")


@njit(cache=True)
def _count_exact_path(W, c, ka, kb, c2, c3, b, b_hi, b_lo, inv_b):
    """The dense kernels' work on W, counted: Prim over the same noisy keys (vertex
    indexed, the same skip test), returning (edges that took the exact path, of them
    the relaxations). The counts are the kernels' whatever their layout."""
    n = W.shape[0]
    hi = np.full(n, np.inf)
    lo = np.zeros(n)
    seen = np.zeros(n, np.bool_)
    cur = 0
    seen[0] = True
    listed = 0
    improved = 0
    for _ in range(n - 1):
        row = W[cur]
        for v in range(n):
            if seen[v]:
                continue
            x = c * np.float64(row[v])
            m = philox.bits_of_words(ka, kb, c2, c3, cur, v)
            if ((x - hi[v]) - lo[v]) * inv_b < gumbel.gumbel_upper_eps(m):
                listed += 1
                h, l, better = gumbel._exact(x, hi[v], lo[v], philox.unit_of_bits(m), b, b_hi, b_lo)
                if better:
                    improved += 1
                    hi[v] = h
                    lo[v] = l
        best = -1
        for v in range(n):
            if not seen[v] and (best < 0 or hi[v] < hi[best] or (hi[v] == hi[best] and lo[v] < lo[best])):
                best = v
        seen[best] = True
        cur = best
    return listed, improved


def best(repeat, f, clock=time.perf_counter):
    ts = []
    for _ in range(repeat):
        t = clock()
        f()
        ts.append(clock() - t)
    return min(ts)


def call_cpu(repeat, f):
    """A full call's readings, the fastest of ``repeat`` by its process CPU time: (wall,
    process CPU of the whole call, the kernel thread's CPU inside it); the kernel is
    ``fast_release.gumbel_dense`` (which the call runs beside the validation), timed by
    its own thread's CPU time; 0 when the call did not run it."""
    kernel = fast_release.gumbel_dense
    lane = []

    def timed(*args, **kw):
        c = time.thread_time()
        out = kernel(*args, **kw)
        lane.append(time.thread_time() - c)
        return out
    out = []
    fast_release.gumbel_dense = timed
    try:
        for _ in range(repeat):
            lane.clear()
            t, c = time.perf_counter(), time.process_time()
            f()
            out.append((time.process_time() - c, time.perf_counter() - t, sum(lane)))
    finally:
        fast_release.gumbel_dense = kernel
    cpu, wall, k = min(out)
    return wall, cpu, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floor", required=True, help="path of shared/bench/floor.py")
    ap.add_argument("--n", type=int, nargs="+", default=[4000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sparse", type=int, default=0)
    ap.add_argument("--kernel", action="store_true", help="also time the dense kernel alone")
    ap.add_argument("--count", action="store_true",
                    help="also count the edges that take the exact path (and relax)")
    ap.add_argument("--cpu", action="store_true",
                    help="CPU time: the floor and the kernel alone (one thread) and the whole "
                         "full call (both threads, with its kernel's lane and span)")
    ap.add_argument("--levels", type=float, nargs="+", default=None,
                    help="every shape at every one of these sensitivities")
    ap.add_argument("--shapes", nargs="+", default=None, choices=SHAPE_NAMES,
                    help="only these shapes (with --levels; default all)")
    a = ap.parse_args()
    one = time.process_time if a.cpu else time.perf_counter
    floor = _load_floor(a.floor)
    warm = floor.uniform(64, 1)
    floor.floor_prim(warm)
    floor.pfloor_prim(warm)
    for d in (1e-5, 1.0):
        fp.fast_pamst(warm, rho=RHO, sensitivity=d, noise="gumbel", rng=0)
    key = philox.draw_key(np.random.default_rng(1))
    gumbel.gumbel_dense(warm, 0, False, 1.0, key, threads=1)

    def kernel(M, d):
        # the serial kernel alone, as fast_pamst runs it beside the validation
        if not a.kernel:
            return ""
        lam = privacy.gumbel_rate(RHO, d, M.shape[0])
        tk = best(a.repeat, lambda: gumbel.gumbel_dense(M, 0, False, lam, key, threads=1), one)
        return f" (kernel alone {tk / t0:.2f}x)"

    def count(M, d):
        if not a.count:
            return ""
        lam = privacy.gumbel_rate(RHO, d, M.shape[0])
        b, b_hi, b_lo, inv_b, f = gumbel._scale(lam)
        listed, improved = _count_exact_path(M, f, *philox.key_words(*key), b, b_hi, b_lo, inv_b)
        n = M.shape[0]
        out = f" [exact path {listed} = {listed / (n * np.log(n)):.2f} n ln n, {improved} relaxed"
        if hasattr(gumbel, "BLOCK_PATH"):
            st = {}
            gumbel.gumbel_dense(M, 0, False, lam, key, threads=1, block=True, stats=st)
            out += (f"; block path: {st['listed']} listed = {st['listed'] / (n * np.log(n)):.2f} "
                    f"n ln n, {st['compared']} compared")
        return out + "]"

    def full(M, d):
        f = lambda: fp.fast_pamst(M, rho=RHO, sensitivity=d, noise="gumbel", rng=1)  # noqa: E731
        if not a.cpu:
            return f"{best(a.repeat, f) / tw:.2f}x"
        wall, cpu, lane = call_cpu(a.repeat, f)
        return (f"cpu {cpu / t0:.2f}x, lane {lane / t0:.2f}, span {max(lane, cpu - lane) / t0:.2f}"
                f" (wall {wall / tw:.2f}x)")

    for n in a.n:
        W = floor.uniform(n, 0)
        ts = best(a.repeat, lambda: floor.floor_prim(W), one)
        tp = best(a.repeat, lambda: floor.pfloor_prim(W))
        t0 = ts if a.cpu else min(ts, tp)
        tw = min(best(a.repeat, lambda: floor.floor_prim(W)), tp) if a.cpu else t0  # wall clock
        if a.cpu:
            te = best(a.repeat, lambda: fp.exact_mst(W), one) / t0
            ex = f"exact_mst cpu {te:.2f}x (wall {best(a.repeat, lambda: fp.exact_mst(W)) / tw:.2f}x)"
        else:
            ex = f"exact_mst {best(a.repeat, lambda: fp.exact_mst(W)) / tw:.2f}x"
        print(f"n = {n}: floor {t0:.4f} s (serial {ts:.4f}, parallel {tp:.4f}"
              + (f"; wall clock {tw:.4f}" if a.cpu else "") + f"); {ex}; load "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        if a.levels is None:
            for d in (1e-5, 1e-3, 0.1, 1.0):
                print(f"  Uniform(0, 1), sensitivity {d:g}: {full(W, d)}{kernel(W, d)}{count(W, d)}",
                      flush=True)
            todo = ((name, M, (1e-3,)) for name, M in shapes(W, which=SHAPE_NAMES[1:]))
        else:
            todo = ((name, M, a.levels) for name, M in shapes(W, which=a.shapes or SHAPE_NAMES))
        for name, M, levels in todo:
            for d in levels:
                print(f"  {name}, sensitivity {d:g}: {full(M, d)}{kernel(M, d)}{count(M, d)}",
                      flush=True)
            del M
        del W
    if a.sparse:
        n = a.sparse
        rng = np.random.default_rng(0)
        i = np.concatenate([rng.integers(0, n, 7 * n), np.arange(n - 1)])
        j = np.concatenate([rng.integers(0, n, 7 * n), np.arange(1, n)])
        keep = i != j
        S = sp.coo_matrix((rng.random(keep.sum()) + 0.01, (i[keep], j[keep])), shape=(n, n)).tocsr()
        S = sp.triu(S.maximum(S.T), 1).tocsr()
        S = (S + S.T).tocsr()
        small = S[:64, :64] + sp.eye(64, k=1) + sp.eye(64, k=-1)
        fp.fast_pamst(sp.csr_matrix(small), rho=RHO, sensitivity=1e-3, noise="gumbel", rng=0)
        minimum_spanning_tree(S)
        tsci = best(a.repeat, lambda: minimum_spanning_tree(S))
        print(f"sparse n = {n}, m = {S.nnz // 2}: scipy {tsci:.3f} s", flush=True)
        for d in (1e-5, 0.1, 1.0):
            t = best(a.repeat, lambda: fp.fast_pamst(S, rho=RHO, sensitivity=d, noise="gumbel", rng=1))
            print(f"  gumbel, sensitivity {d:g}: {t / tsci:.2f}x scipy", flush=True)


if __name__ == "__main__":
    main()
