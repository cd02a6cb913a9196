"""Median excess weight over the exact MST of every algorithm (the user guide's Error table).

Uniform(0, 1) complete graphs (the paper's benchmark), rho = 0.1, Delta = 1e-5, seeds
0..6; fast_pamst at the paper's step s = Delta and at its default (2**-21 here, the
largest power of two at most Delta/16).
Run from the repository root with the package installed::

    python docs/scripts/error_table.py [--n 300 600] [--seeds 7]
"""
import argparse
import time

import numpy as np

import fastpamst_nb as fp
from fastpamst_nb.experiments import post_processing_paper

RHO, DELTA = 0.1, 1e-5

METHODS = {
    "pamst": lambda W, g: fp.pamst(W, RHO, DELTA, rng=g, noise="exponential"),
    "pamst, gumbel": lambda W, g: fp.pamst(W, RHO, DELTA, rng=g, noise="gumbel"),
    "fast_pamst, s = Delta": lambda W, g: fp.fast_pamst(W, RHO, DELTA, rng=g, noise="exponential",
                                                         discretization=DELTA),
    "fast_pamst, gumbel, s = Delta": lambda W, g: fp.fast_pamst(W, RHO, DELTA, rng=g, noise="gumbel",
                                                               discretization=DELTA),
    "fast_pamst (default s)": lambda W, g: fp.fast_pamst(W, RHO, DELTA, rng=g, noise="exponential"),
    "fast_pamst, gumbel (default s)": lambda W, g: fp.fast_pamst(W, RHO, DELTA, rng=g, noise="gumbel"),
    "post_processing": lambda W, g: fp.post_processing(W, RHO, DELTA, rng=g),
    "paper's post-processing": lambda W, g: post_processing_paper(W, RHO, DELTA, rng=g),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[300, 600])
    ap.add_argument("--seeds", type=int, default=7)
    args = ap.parse_args()
    print(f"median excess weight over {args.seeds} seeds, rho = {RHO}, Delta = {DELTA}")
    for n in args.n:
        for name, release in METHODS.items():
            excess = []
            t0 = time.perf_counter()
            for seed in range(args.seeds):
                rng = np.random.default_rng([n, seed])
                X = rng.random((n, n))
                W = np.triu(X, 1) + np.triu(X, 1).T  # Uniform(0, 1) weights, symmetric
                excess.append(fp.excess_weight(W, release(W, np.random.default_rng([n, seed, 1]))))
            print(f"n = {n:5d}  {name:32s} {np.median(excess):9.3f}   ({time.perf_counter() - t0:.1f} s)",
                  flush=True)


if __name__ == "__main__":
    main()
