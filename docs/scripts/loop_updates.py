"""How much of an exponential release's selection loop is its cut updates (docs/design.rst,
The selection loop on the shapes).

    python docs/scripts/loop_updates.py --n 4000 --sensitivity 1e-5 1e-3 --shape integers lognormal uniform

For each shape and sensitivity (rho = 0.1, the weights of ``fastpamst bench --shapes``):
the selection loop (``prim_dense_private``), then the same release's cut updates replayed
on a fresh queue whose buckets are materialized, at the first step, down to where the
release's materialization ended (so the updates read and write what the release's did by
its end, an upper bound of theirs), each as a multiple of the floor (``bench.floor_prim``)
timed in the same process; "rest" (the loop less the updates) is the walk, its draws and
its materialization passes. Process CPU time, minimum of --repeat runs.
"""
import argparse
import time

import numpy as np
from numba import njit

from fastpamst_nb import api, bench, privacy
from fastpamst_nb.core import as_generator
from fastpamst_nb.cutqueue import gq_join, gq_update
from fastpamst_nb.cutqueue_build import gq_build
from fastpamst_nb.cutqueue_materialize import gq_materialize
from fastpamst_nb.graph import as_graph
from fastpamst_nb.prim import prim_dense_private
from fastpamst_nb.sampler import N_STATS
from fastpamst_nb.window import top_window

RHO = 0.1


@njit
def replay(q, W, order, mat):
    """The cut updates of a release whose vertices joined in ``order``, buckets >= mat
    materialized at the first step."""
    visited = np.zeros(W.shape[0], np.bool_)
    first = True
    for v in order:
        gq_join(q.layout, q.cut, v, visited)
        if first:
            gq_materialize(q.layout, q.keys, q.counts, q.store, q.cut, W, mat)
            first = False
        gq_update(q, W[v], v, visited, v * W.shape[0])


def cpu(f):
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def loop_and_updates(W, sensitivity, seed):
    """(loop, replayed updates) CPU seconds of one release."""
    n = W.shape[0]
    s = privacy.default_discretization(sensitivity)
    r = privacy.fast_pamst_key_rate(RHO, sensitivity, n, s, "exponential")
    width = api.DEFAULT_BUCKET_WIDTH
    win = top_window(-1.0, s, r, width)
    g = as_graph(W, window=win)
    q = gq_build(g, -1.0, s, r, width, win)
    stats = np.zeros(N_STATS, np.int64)
    edges = np.empty((n - 1, 2), np.int64)
    visited = np.zeros(n, np.bool_)
    tl, _ = cpu(lambda: prim_dense_private(q, W, visited, edges, 0, n - 1, 0, r, api.DEFAULT_THETA, width,
                                           as_generator(seed), stats))
    order = np.concatenate([[0], edges[:, 1]])
    fresh = gq_build(g, -1.0, s, r, width, win)
    tu, _ = cpu(lambda: replay(fresh, W, order, int(q.store.materialized[0])))
    return tl, tu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--sensitivity", type=float, nargs="+", default=[1e-5, 1e-3])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shape", nargs="+", default=["integers", "lognormal", "uniform"], choices=list(bench.SHAPES))
    a = ap.parse_args()
    for shape in a.shape:
        for d in a.sensitivity:
            loop_and_updates(bench.shape_weights(shape, 120), d, 0)  # compile this shape's layout
    for shape in a.shape:
        W = bench.shape_weights(shape, a.n)
        for d in a.sensitivity:
            f = min(cpu(lambda: bench.floor_prim(W))[0] for _ in range(3))
            runs = [loop_and_updates(W, d, i) for i in range(a.repeat)]
            tl = min(x[0] for x in runs)
            tu = min(x[1] for x in runs)
            print(f"{shape} {d:g}: floor {f * 1e3:.1f} ms CPU; loop {tl / f:.2f}x, its updates at the final "
                  f"materialization {tu / f:.2f}x, rest {(tl - tu) / f:.2f}x")


if __name__ == "__main__":
    main()
