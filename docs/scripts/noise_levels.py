"""Where an exponential release's time goes at each noise level (docs/design.rst, Wide
nodes drawn from the cut).

    python docs/scripts/noise_levels.py --n 4000 --sensitivity 1e-5 1e-3 0.1 1
    python docs/scripts/noise_levels.py --n 4000 --sensitivity 1e-5 --shape outlier pareto

Uniform(0, 1) weights (or the shapes of ``fastpamst bench --shapes``), rho = 0.1. For each sensitivity: the validation (with the
top window ``fast_pamst`` passes it; beside it, the same validation without a window, as
``exact_mst`` and gumbel's release run it), ``gq_build``, the selection loop
(``prim_dense_private``) and the loop's cut updates alone replayed on a fresh
queue (nothing materialized, so an update reads no row but for the counted range's
count, where the release kept one to its end: a lower bound; ``loop_updates.py``
replays them at the release's final materialization), each as a multiple of the floor
(``bench.floor_prim``)
timed in the same process; then the layout (with how many top buckets the validation's
window sized, and where the release's sizing ended: lower means a sizing pass over the
upper triangle in the loop) and the sampler's counters per step.
Times are process CPU time (the loop is single-threaded, the validation's threads
add up), minimum of --repeat runs, so that other jobs on a shared machine distort
them less.
"""
import argparse
import time

import numpy as np
from numba import njit

from fastpamst_nb import api, bench, privacy
from fastpamst_nb.core import as_generator
from fastpamst_nb.graph import as_graph
from fastpamst_nb.prim import prim_dense_private
from fastpamst_nb.cutqueue import gq_join, gq_update
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.window import top_window
from fastpamst_nb.sampler import N_STATS

RHO = 0.1
NAMES = ["steps", "group draws", "carriers", "extras", "bottom stops", "bottom candidates",
         "bottom wins", "nodes", "cut nodes", "range nodes"]


@njit
def replay_updates(q, W, order):
    """The cut updates of a release whose vertices joined in ``order``."""
    visited = np.zeros(W.shape[0], np.bool_)
    for v in order:
        gq_join(q.layout, q.cut, v, visited)
        gq_update(q, W[v], v, visited, v * W.shape[0])


def cpu(f):
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def release(W, sensitivity):
    """(validation, build, loop, updates alone, validation without a window) CPU seconds, the
    queue and the counters."""
    n = W.shape[0]
    s = privacy.default_discretization(sensitivity)
    r = privacy.fast_pamst_key_rate(RHO, sensitivity, n, s, "exponential")
    width = api.DEFAULT_BUCKET_WIDTH
    win = top_window(-1.0, s, r, width)
    tv, g = cpu(lambda: as_graph(W, window=win))
    tv0, _ = cpu(lambda: as_graph(W))
    tb, q = cpu(lambda: gq_build(g, -1.0, s, r, width, win))
    sized0 = int(q.store.sized[0])  # below n_buckets: the validation's window sized the top buckets
    stats = np.zeros(N_STATS, np.int64)
    edges = np.empty((n - 1, 2), np.int64)
    visited = np.zeros(n, np.bool_)
    gen = as_generator(1)
    tl, _ = cpu(lambda: prim_dense_private(q, W, visited, edges, 0, n - 1, 0, r, api.DEFAULT_THETA,
                                           width, gen, stats))
    fresh = gq_build(g, -1.0, s, r, width, win)
    if 0 <= q.store.top_range[0] < q.layout.n_buckets:
        fresh.store.top_range[0] = q.store.top_range[0]  # the counted range's count, as the release's updates
    order = np.concatenate([[0], edges[:, 1]])
    tu, _ = cpu(lambda: replay_updates(fresh, W, order))
    return (tv, tb, tl, tu, tv0), q, stats, sized0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--sensitivity", type=float, nargs="+", default=[1e-5, 1e-3, 0.1, 1.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shape", nargs="+", default=["uniform"], choices=list(bench.SHAPES),
                    help="weights: keys of bench.SHAPES (default: uniform)")
    a = ap.parse_args()
    warm = bench.uniform_weights(64, 1)
    bench.floor_prim(warm)
    for d in a.sensitivity:
        release(warm, d)
    for shape in a.shape:
        for d in a.sensitivity:
            release(bench.shape_weights(shape, 120), d)  # compile this shape's layout
    for shape in a.shape:
        W = bench.shape_weights(shape, a.n)
        t0 = min(cpu(lambda: bench.floor_prim(W))[0] for _ in range(5))
        print(f"{bench.SHAPES[shape][0]}, n = {a.n}, rho = {RHO}: floor {t0:.4f} s CPU")
        levels(W, t0, a)
        del W


def levels(W, t0, a):
    for d in a.sensitivity:
        runs = [release(W, d) for _ in range(a.repeat)]
        times = [min(run[0][i] for run in runs) / t0 for i in range(5)]
        _, q, stats, _ = runs[0]
        lay, st = q.layout, q.store
        print(f"sensitivity {d:g}: validation {times[0]:.2f}x (without a window {times[4]:.2f}x), build {times[1]:.2f}x, loop {times[2]:.2f}x "
              f"(its updates alone {times[3]:.2f}x); {lay.n_buckets} buckets of 2**{lay.bucket_shift} keys"
              f"{' (wide)' if lay.wide else ''}{'' if lay.direct else ' (compressed)'}, materialized from {st.materialized[0]}; "
              f"the window sized the top {lay.n_buckets - runs[0][3]}, the release from {st.sized[0]}")
        per_step = (f"{name} {v / (a.n - 1):.2f}" for name, v in zip(NAMES[1:], stats[1:]))
        print("    per step: " + ", ".join(per_step))


if __name__ == "__main__":
    main()
