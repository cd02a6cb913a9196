"""The ``fastpamst`` command line: ``demo``, ``run`` and ``bench``.

``fastpamst demo`` runs every algorithm on the paper's default problem,
``fastpamst run`` releases one private spanning tree of a weight matrix saved
with numpy (.npy, dense) or scipy (.npz, sparse) as CSV, and ``fastpamst bench``
times the algorithms against each other. User errors print one line
``fastpamst: error: ...`` and exit with status 2.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from . import api, bench, privacy
from .core import check_positive

PROG = "fastpamst"
DEMO_DELTA = 1e-6
ALGORITHMS = ("fast_pamst", "fast_pamst_gumbel", "pamst", "post_processing", "exact")


class UsageError(Exception):
    """A mistake of the user's (bad argument, unreadable file, invalid matrix)."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage and exits; we want one line and one exit path
    def error(self, message):
        raise UsageError(message)


def _build_parser():
    parser = _Parser(prog=PROG, description="Differentially private minimum spanning trees (Fast-PAMST).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,run,bench}")

    demo = sub.add_parser("demo", help="run every algorithm on a random complete graph",
                          description="Run every algorithm on a complete graph with Uniform(0, 1) weights.")
    demo.add_argument("--n", type=int, default=2000, help="number of vertices (default 2000)")
    demo.add_argument("--rho", type=float, default=0.1, help="zCDP budget (default 0.1)")
    demo.add_argument("--sensitivity", type=float, default=1e-5, help="l_inf sensitivity of each weight (default 1e-5)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the matrix and the noise (default 0)")

    run = sub.add_parser("run", help="release a spanning tree of a saved weight matrix as CSV",
                         description="Release a (private) spanning tree of WEIGHTS as CSV lines u,v,weight.")
    run.add_argument("weights", metavar="WEIGHTS", help=".npy (dense matrix) or .npz (scipy.sparse matrix)")
    run.add_argument("--rho", type=float, help="zCDP budget (required unless --algorithm exact)")
    run.add_argument("--sensitivity", type=float,
                     help="l_inf sensitivity of each weight (required unless --algorithm exact)")
    run.add_argument("--algorithm", choices=ALGORITHMS, default="fast_pamst", help="default fast_pamst")
    run.add_argument("--seed", type=int, default=None,
                     help="seed of the noise (default: fresh OS entropy; a public seed reveals the noise)")
    run.add_argument("--output", help="CSV file to write (default: stdout)")
    run.add_argument("--maximum", action="store_true", help="maximum instead of minimum spanning tree")

    bnch = sub.add_parser("bench", help="time every algorithm (rho = 0.1, sensitivity = 1e-5)",
                          description="Time every algorithm on Uniform(0, 1) complete graphs.")
    bnch.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000], help="sizes (default 1000 2000 4000 8000)")
    bnch.add_argument("--repeat", type=int, default=3, help="runs per algorithm; the median is reported (default 3)")
    bnch.add_argument("--json", metavar="OUT.json", help="also write {n: {algorithm: seconds}} and the slope here")
    return parser


def _warm_up(algorithms=ALGORITHMS, dense=True):
    """Compile (or load from the numba cache) the kernels on a tiny graph, so timings exclude it."""
    W = bench.uniform_weights(8, seed=0)
    if not dense:
        import scipy.sparse as sp
        W = sp.csr_matrix(W)
    args = argparse.Namespace(rho=1.0, sensitivity=1e-3, seed=0, maximum=False)
    for algorithm in algorithms:
        _release(algorithm, W, args)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def cmd_demo(args):
    """``fastpamst demo``: every algorithm on one Uniform(0, 1) complete graph."""
    if args.n < 2:
        raise UsageError(f"--n must be at least 2, got {args.n}")
    eps = privacy.zcdp_to_approx_dp(args.rho, DEMO_DELTA)  # also validates rho
    check_positive("sensitivity", args.sensitivity)
    W = bench.uniform_weights(args.n, seed=args.seed)
    _warm_up()
    kw = {"rho": args.rho, "sensitivity": args.sensitivity, "rng": args.seed}
    runs = [
        ("exact_mst", lambda: api.exact_mst(W)),
        ("fast_pamst", lambda: api.fast_pamst(W, noise="exponential", **kw)),
        ("fast_pamst_gumbel", lambda: api.fast_pamst(W, noise="gumbel", **kw)),
        ("post_processing", lambda: api.post_processing(W, **kw)),
    ]
    if args.n <= bench.PAMST_MAX_N:
        runs.append(("pamst", lambda: api.pamst(W, **kw)))

    print(f"fastpamst demo: complete graph, n = {args.n}, weights Uniform(0, 1), seed = {args.seed}")
    print(f"privacy: rho = {args.rho:g} zCDP, sensitivity = {args.sensitivity:g} "
          f"(equivalent to epsilon = {eps:.4g}, delta = {DEMO_DELTA:g})")
    print("timings exclude JIT compilation (every kernel was warmed up on an 8-vertex graph first)")
    print()
    results = [(name, *_timed(fn)) for name, fn in runs]
    best = results[0][1].weight
    rows = [[name, f"{secs:.4f}", f"{tree.weight:.6f}", f"{tree.weight - best:.6f}"]
            for name, tree, secs in results]
    print(bench.align_table([["algorithm", "seconds", "tree weight", "excess weight"], *rows]))
    if args.n > bench.PAMST_MAX_N:
        print(f"pamst skipped: it is O(n^3) (run only for n <= {bench.PAMST_MAX_N})")
    return 0


def _load_weights(path):
    """Dense .npy as a read-only memmap (never read whole into memory) or sparse .npz."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".npy", ".npz"):
        raise UsageError(f"{path}: unsupported file type {ext or '(none)'!r}; "
                         "give a .npy dense matrix (np.save) or a .npz scipy.sparse matrix (scipy.sparse.save_npz)")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        if ext == ".npy":
            return np.load(path, mmap_mode="r", allow_pickle=False)
        import scipy.sparse as sp
        return sp.load_npz(path)
    except Exception as exc:  # any failure to parse the user's file is a user error
        raise UsageError(f"{path}: cannot read it as a {ext} weight matrix: {exc}") from None


def _release(algorithm, W, args):
    kw = {"rho": args.rho, "sensitivity": args.sensitivity, "rng": args.seed, "maximum": args.maximum}
    if algorithm == "exact":
        return api.exact_mst(W, maximum=args.maximum)
    if algorithm == "fast_pamst":
        return api.fast_pamst(W, noise="exponential", **kw)
    if algorithm == "fast_pamst_gumbel":
        return api.fast_pamst(W, noise="gumbel", **kw)
    if algorithm == "pamst":
        return api.pamst(W, **kw)
    return api.post_processing(W, **kw)


def _write_csv(tree, out):
    out.write("u,v,weight\n")
    # repr keeps every float digit, so the CSV weights equal the matrix entries exactly
    for (u, v), w in zip(tree.edges.tolist(), tree.edge_weights.tolist()):
        out.write(f"{u},{v},{w!r}\n")


def cmd_run(args):
    """``fastpamst run``: one spanning tree of a saved matrix, as CSV."""
    if args.algorithm != "exact":
        missing = [f"--{k}" for k in ("rho", "sensitivity") if getattr(args, k) is None]
        if missing:
            raise UsageError(f"{' and '.join(missing)} required for --algorithm {args.algorithm} "
                             "(only --algorithm exact runs without a privacy budget)")
    if args.output:
        # fail before a long computation, not after it
        parent = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(parent):
            raise UsageError(f"--output {args.output}: directory {parent} does not exist")
    W = _load_weights(args.weights)
    _warm_up([args.algorithm], dense=isinstance(W, np.ndarray))
    tree, secs = _timed(lambda: _release(args.algorithm, W, args))
    if args.output:
        with open(args.output, "w", newline="") as f:
            _write_csv(tree, f)
    else:
        _write_csv(tree, sys.stdout)
        sys.stdout.flush()
    print(f"fastpamst run: algorithm = {args.algorithm}, n = {tree.n_vertices}, "
          f"tree weight = {tree.weight:.6g}, seconds = {secs:.4f}", file=sys.stderr)
    return 0


def cmd_bench(args):
    """``fastpamst bench``: timings of every algorithm (the logic is in :mod:`fastpamst_nb.bench`)."""
    result = bench.run_bench(args.n, args.repeat, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(bench.format_table(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(bench.to_json(result), f, indent=2)
            f.write("\n")
    return 0


def main(argv=None):
    """Entry point of the ``fastpamst`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 2 on a user error (one line on stderr, no traceback).
    """
    commands = {"demo": cmd_demo, "run": cmd_run, "bench": cmd_bench}
    try:
        args = _build_parser().parse_args(argv)
        return commands[args.command](args)
    except BrokenPipeError:
        # `fastpamst run ... | head`: the reader left; silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (UsageError, ValueError, TypeError, OSError) as exc:
        # the library raises ValueError/TypeError with actionable messages for bad input
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
