"""Fast-PAMST against its discretization step (the user guide's step table).

Uniform(0, 1) complete graphs, rho = 0.1, Delta = 1e-5, seeds 0..2: median time
of a release (after compilation) and median excess weight over the exact MST,
for the paper's step s = Delta, a power of two below Delta and the default
(the largest power of two at most Delta/16). Run with the package installed::

    python docs/scripts/step_table.py [--n 2000 4000] [--seeds 3]
"""
import argparse
import time

import numpy as np

import fastpamst_nb as fp

RHO, DELTA = 0.1, 1e-5
STEPS = {"Delta (the paper's)": DELTA, "2**-17": 2.0 ** -17, "2**-21 (default)": None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 4000])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    fp.fast_pamst(np.ones((8, 8)), RHO, DELTA, rng=0)  # compile outside the timings
    for n in args.n:
        mats = []
        for seed in range(args.seeds):
            X = np.triu(np.random.default_rng([n, seed]).random((n, n)), 1)
            W = X + X.T
            mats.append((W, fp.exact_mst(W).weight))
        t_exact = []
        for W, _ in mats:
            t0 = time.perf_counter()
            fp.exact_mst(W)
            t_exact.append(time.perf_counter() - t0)
        print(f"n = {n}: exact_mst {np.median(t_exact):.3f} s")
        for name, s in STEPS.items():
            for noise in ("exponential", "gumbel"):
                secs, excess = [], []
                for seed, (W, best) in enumerate(mats):
                    t0 = time.perf_counter()
                    tree = fp.fast_pamst(W, RHO, DELTA, rng=seed, noise=noise, discretization=s)
                    secs.append(time.perf_counter() - t0)
                    excess.append(tree.weight - best)
                print(f"  s = {name:20s} {noise:12s} {np.median(secs):7.3f} s  excess {np.median(excess):7.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
