"""The dense gumbel release on 1 or 2 threads: floor, serial kernel, forced prange kernel, full call.

One process per thread count (numba fixes it at start)::

    for T in 1 2; do NUMBA_NUM_THREADS=$T python docs/scripts/gumbel_threads.py \
        --floor ../shared/bench/floor.py --n 16000 --repeat 1; done

The ``prange`` kernel (``gumbel.gd_steps_parallel``) is called directly, so it runs at
any n (``gumbel_dense`` picks it only from ``gumbel.PARALLEL_MIN_N`` vertices); each line
also says whether its tree equals the serial kernel's. Uniform(0, 1) weights, rho = 0.1,
sensitivities 1e-5, 1e-3, 0.1 and 1; every time is also given over the floor (the faster
of ``floor.py``'s serial and ``prange`` textbook Prim, in the same process).
"""
import argparse
import os
import sys

import numba
import numpy as np

import fastpamst_nb as fp
from fastpamst_nb import gumbel, philox, privacy
from fastpamst_nb.philox import key_words

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gumbel_table import _load_floor, best  # noqa: E402

RHO = 0.1


def prange_kernel(W, lam, key, T):
    """``gumbel_dense``'s parallel branch at any n, on T threads, from vertex 0."""
    n = W.shape[0]
    edges = np.empty((n - 1, 2), dtype=np.int64)
    b, b_hi, b_lo, inv_b, f = gumbel._scale(lam)
    kw = np.array(key_words(*key), dtype=np.uint64)
    nz = gumbel.GumbelNoise(float(f), kw, b, b_hi, b_lo, inv_b, False, True)
    gumbel.gd_steps_parallel(W, nz, gumbel.gp_new(n, 0, T), edges, 0, n - 1, T)
    return edges


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floor", required=True, help="path of shared/bench/floor.py")
    ap.add_argument("--n", type=int, default=16000)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    floor = _load_floor(a.floor)
    T = numba.get_num_threads()
    warm = floor.uniform(64, 1)
    floor.floor_prim(warm)
    floor.pfloor_prim(warm)
    key = philox.draw_key(np.random.default_rng(1))
    prange_kernel(warm, 1.0, key, T)
    gumbel.gumbel_dense(warm, 0, False, 1.0, key, threads=1)
    fp.fast_pamst(warm, rho=RHO, sensitivity=0.1, noise="gumbel", rng=1)
    W = floor.uniform(a.n, 0)
    ts = best(a.repeat, lambda: floor.floor_prim(W))
    tp = best(a.repeat, lambda: floor.pfloor_prim(W))
    t0 = min(ts, tp)
    print(f"NUMBA_NUM_THREADS={T}, n = {a.n}: floor {t0:.3f} s (serial {ts:.3f}, prange {tp:.3f})",
          flush=True)
    for d in (1e-5, 1e-3, 0.1, 1.0):
        lam = privacy.gumbel_rate(RHO, d, a.n)
        out = [None, None]
        tk = best(a.repeat, lambda: out.__setitem__(0, gumbel.gumbel_dense(W, 0, False, lam, key,
                                                                          threads=1)))
        tq = best(a.repeat, lambda: out.__setitem__(1, prange_kernel(W, lam, key, T)))
        tf = best(a.repeat, lambda: fp.fast_pamst(W, rho=RHO, sensitivity=d, noise="gumbel", rng=1))
        print(f"  sensitivity {d:g}: serial kernel {tk:.3f} s {tk / t0:.2f}x; prange kernel "
              f"({T} threads) {tq:.3f} s {tq / t0:.2f}x; full call {tf:.3f} s {tf / t0:.2f}x; "
              f"same tree {np.array_equal(out[0], out[1])}", flush=True)


if __name__ == "__main__":
    main()
