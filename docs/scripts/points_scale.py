"""The points kernels at scale: seconds per slot relaxed, measured on partial runs, and
the full run's time projected to n = 1,000,000 (docs/design.rst, Points: measured).

A Prim on n points relaxes sum_{m < n} m ~ n^2 / 2 candidate slots (m live slots at
the step that has m left), each costing O(d) for its distance plus the key rule. A full
run at n = 10^6 takes half an hour of both cores, so this script times *steps* instead:
it runs ``--skip`` steps untimed (the first steps relax far more often than the rest:
after t steps a slot's best is the best of t draws), then times the next ``--steps``
steps, whose slots number about n each, and reports the time per slot. The projection

    T(N) = c(N) * N^2 / 2

takes the per-slot cost c measured at n = N (all slots live, the state at its largest:
out of the L3 cache at N = 10^6) for every step; the late steps, whose live slots fit
the cache, cost less, so the projection errs on the slow side. ``--project`` sets N.

    python docs/scripts/points_scale.py --n 50000 100000 --d 8 20 --threads 1 2
    python docs/scripts/points_scale.py --n 1000000 --d 8 --dtype float32 float64 --threads 2

``--sklearn N`` times, in full on the same N points (d = 20), scikit-learn's HDBSCAN MST
step ``sklearn.cluster._hdbscan._linkage.mst_from_data_matrix`` (zero core distances: its
work does not depend on them) if scikit-learn is importable, then ``exact_mst`` and the
gumbel release if fastpamst_nb is, and prints the ratio. With scikit-learn in a venv of
its own, run it there first from a directory without this checkout, then pass its time::

    cd /tmp && /path/to/sk-venv/bin/python /path/to/points_scale.py --no-table --sklearn 100000
    python docs/scripts/points_scale.py --no-table --sklearn 100000 --sklearn-seconds 52.1
"""
import argparse
import os
import time

import numpy as np

try:
    import numba
except ImportError:  # a scikit-learn-only venv: the HDBSCAN step alone
    numba = None

RHO = 0.1
SENSITIVITIES = (1e-5, 1e-3, 1.0)


def _load():
    return os.getloadavg()[0]


def _args_of(X, rule, sensitivity):
    """(P, sgn, rule, key, lam, b) as ``points_api`` builds them for the euclidean metric."""
    from fastpamst_nb import privacy
    from fastpamst_nb.gumbel import _scale as gumbel_scale
    from fastpamst_nb.metrics import prepare_points
    from fastpamst_nb.philox import draw_key
    from fastpamst_nb.points import EXACT, GUMBEL

    P = prepare_points(X, "euclidean", None)
    if rule == "exact":
        return P, -1.0, EXACT, (0, 0), 1.0, 0.0
    lam = privacy.gumbel_rate(RHO, sensitivity, X.shape[0])
    b, _, _, inv_b, f = gumbel_scale(lam)
    return P, -f, GUMBEL, draw_key(np.random.default_rng(1)), inv_b, b


def per_slot(X, rule, sensitivity, skip, steps, filtered="on"):
    """Seconds per slot relaxed over steps skip .. skip + steps - 1 of the release: (wall
    clock, CPU time of the process) (the CPU time of one thread is what a loaded machine
    does not inflate; with two threads it sums both, spinning included), the (wall, CPU)
    seconds of the first ``skip`` steps, and the share of the timed chunks that ran the
    shared kernel (``points._Chooser``; 0 when the serial kernel ran alone). ``filtered``:
    "on" (the uint8 grid in front of the float32 filter), "f32" (the float32 filter alone)
    or "off" (the float64 kernel): the same tree."""
    from fastpamst_nb import points
    from fastpamst_nb.chunks import run_in_chunks

    P, sgn, code, key, lam, b = _args_of(X, rule, sensitivity)
    n = X.shape[0]
    took = {}
    choosers = []
    init = points._Chooser.__init__

    def counting_init(self, *args, **kw):  # the chooser of this call, to read its choices
        init(self, *args, **kw)
        choosers.append(self)

    def advance(step, n_steps):
        t0, c0 = time.perf_counter(), time.process_time()
        run_in_chunks(step, skip)
        took["skip"] = (time.perf_counter() - t0, time.process_time() - c0)
        before = list(choosers[-1].calls) if choosers else [0, 0]
        t0, c0 = time.perf_counter(), time.process_time()
        run_in_chunks(lambda s0, k: step(skip + s0, k), steps)
        took["t"], took["cpu"] = time.perf_counter() - t0, time.process_time() - c0
        calls = [a - b for a, b in zip(choosers[-1].calls, before)] if choosers else [1, 0]
        took["shared"] = calls[1] / max(1, sum(calls))

    points._Chooser.__init__ = counting_init
    try:
        points.pt_prim(P, 0, sgn, code, key, lam, b, advance=advance, filtered=filtered != "off",
                       grid=filtered == "on")
    finally:
        points._Chooser.__init__ = init
    slots = sum(n - 1 - s for s in range(skip, skip + steps))
    return took["t"] / slots, took["cpu"] / slots, took["skip"], took["shared"]


def scale_table(ns, ds, dtypes, threads, skip, steps, project, rules, filters=("on",)):
    numba.set_num_threads(1)
    X0 = np.random.default_rng(0).random((2000, 2))
    per_slot(X0, "exact", 0.0, 1, 10)  # compile
    per_slot(X0, "gumbel", 1.0, 1, 10)
    print(f"# per-slot costs from steps {skip} .. {skip + steps - 1}; projection T({project:g}) = c * N^2 / 2, "
          f"and at N = n: the measured first {skip} steps + c * (N - {skip})^2 / 2 ('+skip'); wall clock "
          f"(CPU of the process in parentheses); 'shared': the share of timed chunks on the shared kernel")
    print(f"{'n':>9} {'d':>3} {'dtype':>7} {'thr':>3} {'filter':>6} {'rule':>13} {'ns/slot':>8} {'cpu ns':>7} "
          f"{'proj. min':>9} {'+skip min (cpu)':>16} {'shared':>6} {'load':>5}")
    for n in ns:
        for d in ds:
            for dtype in dtypes:
                X = np.random.default_rng(0).random((n, d)).astype(dtype)
                for t in threads:
                    numba.set_num_threads(t)
                    for rule, s in rules:
                        for filt in filters:
                            c, cpu, (sk_t, sk_cpu), shared = per_slot(X, rule, s, skip, steps, filt)
                            name = "exact" if rule == "exact" else f"gumbel {s:g}"
                            rest = (project - skip) ** 2 / 2
                            plus = (f"{(sk_t + c * rest) / 60:7.1f} ({(sk_cpu + cpu * rest) / 60:5.1f})"
                                    if project == n else "--")
                            on = filt
                            print(f"{n:>9} {d:>3} {dtype:>7} {t:>3} {on:>6} {name:>13} {c * 1e9:8.2f} "
                                  f"{cpu * 1e9:7.2f} {c * project ** 2 / 2 / 60:9.1f} {plus:>16} {shared:6.2f} "
                                  f"{_load():5.2f}", flush=True)


def sklearn_ratio(n, d=20, sensitivities=(1e-3, 1.0), sk_seconds=None):
    """scikit-learn's HDBSCAN MST step (if importable), then ``exact_mst`` and the gumbel
    release (if fastpamst_nb is importable), each in full on the same points, and the
    ratios. ``sk_seconds``: scikit-learn's time measured elsewhere (e.g. in a venv of its
    own, run from a directory without this checkout)."""
    X = np.random.default_rng(0).random((n, d))
    try:
        from sklearn.cluster._hdbscan._linkage import mst_from_data_matrix
        from sklearn.metrics._dist_metrics import DistanceMetric
    except ImportError:
        print("# scikit-learn not importable: its time from --sklearn-seconds, if given")
    else:
        metric = DistanceMetric.get_metric("euclidean")
        t0, c0 = time.perf_counter(), time.process_time()
        mst_from_data_matrix(X, np.zeros(n), metric, 1.0)
        sk_seconds = time.perf_counter() - t0
        print(f"# sklearn HDBSCAN MST step n={n} d={d}: {sk_seconds:.1f} s "
              f"(cpu {time.process_time() - c0:.1f} s, load {_load():.2f})", flush=True)
    try:
        import fastpamst_nb as fp
    except ImportError:
        return
    runs = [("exact_mst", lambda: fp.exact_mst(X, metric="euclidean"))]
    for s in sensitivities:
        runs.append((f"gumbel {s:g}", lambda s=s: fp.fast_pamst(X, RHO, s, rng=1, metric="euclidean")))
    for name, f in runs:
        t0, c0 = time.perf_counter(), time.process_time()
        f()
        t = time.perf_counter() - t0
        ratio = f", {sk_seconds / t:.2f}x faster than sklearn" if sk_seconds else ""
        print(f"# {name} n={n} d={d} threads={numba.get_num_threads()}: {t:.1f} s "
              f"(cpu {time.process_time() - c0:.1f} s){ratio} (load {_load():.2f})", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[50000, 100000, 200000])
    ap.add_argument("--d", type=int, nargs="+", default=[8, 20])
    ap.add_argument("--dtype", nargs="+", default=["float64"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--skip", type=int, default=300)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--project", type=float, default=1e6)
    ap.add_argument("--rules", nargs="+", default=["exact"] + [f"{s:g}" for s in SENSITIVITIES],
                    help="'exact' and/or gumbel sensitivities")
    ap.add_argument("--filter", nargs="+", default=["on"], choices=["on", "f32", "off"],
                    help="on: the uint8 grid in front of the float32 filter; f32: the float32 filter "
                         "alone; off: the float64 kernel; several for an A/B")
    ap.add_argument("--sklearn", type=int, default=0, help="n of the full HDBSCAN comparison (0: none)")
    ap.add_argument("--sklearn-seconds", type=float, default=None,
                    help="scikit-learn's time for --sklearn measured elsewhere, for the ratio")
    ap.add_argument("--no-table", action="store_true", help="only the HDBSCAN comparison")
    a = ap.parse_args()
    rules = [("exact", 0.0) if r == "exact" else ("gumbel", float(r)) for r in a.rules]
    if not a.no_table:
        scale_table(a.n, a.d, a.dtype, a.threads, a.skip, a.steps, a.project, rules,
                    a.filter)
    if a.sklearn:
        if numba is not None:
            numba.set_num_threads(max(a.threads))
        sklearn_ratio(a.sklearn, sk_seconds=a.sklearn_seconds)


if __name__ == "__main__":
    main()
