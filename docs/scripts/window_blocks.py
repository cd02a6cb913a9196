"""The validation's window by bitmasks (docs/design.rst, The validation's window by
bitmasks): ``dense_scan._scan_dense`` with the tiles listed entry by entry
(``dense_scan.MASK_TILES`` 0, the reference) and the default (``MASK_TILES`` -1:
bitmasks everywhere below the tiles read without a list), alternated in one process
(stop 44's blocks of 8, measured here against both, were removed in stop 45); CPU time over the floor's (``bench.floor_prim``) timed in the same
process, best of --repeat rounds, with the scan without a window beside them.

    python docs/scripts/window_blocks.py --n 4000 --sensitivity 1e-5 1e-3 --threads 1
    python docs/scripts/window_blocks.py --shape pareto clusters --threads 2
"""
import argparse
import time

from fastpamst_nb import api, bench, dense_scan, privacy
from fastpamst_nb import window as topwin

RHO = 0.1
# MASK_TILES of each variant
VARIANTS = {"by entries": 0, "default": dense_scan.MASK_TILES}


def cpu(f):
    t = time.process_time()
    f()
    return time.process_time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--sensitivity", type=float, nargs="+", default=[1e-5, 1e-3])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--shape", nargs="+", default=list(bench.SHAPES), choices=list(bench.SHAPES))
    a = ap.parse_args()
    bench.floor_prim(bench.uniform_weights(64, 1))
    print(f"_scan_dense on {a.threads} thread(s), x floor CPU: without a window | per level: "
          + " / ".join(VARIANTS))
    for shape in a.shape:
        W = bench.shape_weights(shape, a.n)
        t0 = min(cpu(lambda: bench.floor_prim(W)) for _ in range(3))
        bare = min(cpu(lambda: dense_scan._scan_dense(W, workers=a.threads)) for _ in range(3))
        cells = []
        for d in a.sensitivity:
            s = privacy.default_discretization(d)
            r = privacy.fast_pamst_key_rate(RHO, d, a.n, s, "exponential")

            def scan():
                win = topwin.top_window(-1.0, s, r, api.DEFAULT_BUCKET_WIDTH)
                dense_scan._scan_dense(W, win, workers=a.threads)
            best = dict.fromkeys(VARIANTS, float("inf"))
            try:
                for _ in range(a.repeat):
                    for name, m in VARIANTS.items():
                        dense_scan.MASK_TILES = m
                        best[name] = min(best[name], cpu(scan))
            finally:
                dense_scan.MASK_TILES = VARIANTS["default"]
            cells.append(f"{d:g}: " + " / ".join(f"{best[k] / t0:.2f}" for k in VARIANTS))
        print(f"{shape:10s} floor {t0 * 1e3:.1f} ms, {bare / t0:.2f} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
