"""The ``fastpamst`` command line: ``demo``, ``run`` and ``bench``.

``fastpamst demo`` runs every algorithm on the paper's default problem (synthetic
data), ``fastpamst run`` releases one private spanning tree of a weight matrix
saved with numpy (.npy, dense) or scipy (.npz, sparse) as CSV, and ``fastpamst
bench`` times the algorithms against each other. User errors print one line
``fastpamst: error: ...`` and exit with status 2.

A release publishes only what is private: ``fastpamst run`` writes the edges
``u,v`` and, on request, Gaussian-noised weights (``--weights private``, which
spends its own budget ``--weights-rho``). The true weights are written only
with ``--weights true``, which warns that they are not private; the summary on
stderr reports the privacy budget, never the tree's weight.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from . import api, bench, privacy
from .clustering import private_edge_weights
from .core import check_positive

PROG = "fastpamst"
DEMO_DELTA = 1e-6
RUN_DELTA = 1e-6  # delta of the (epsilon, delta) equivalent printed by `fastpamst run`
ALGORITHMS = ("fast_pamst", "fast_pamst_gumbel", "pamst", "post_processing", "exact")
WEIGHTS = ("none", "private", "true")


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

    run = sub.add_parser(
        "run", help="release a spanning tree of a saved weight matrix as CSV",
        description="Release a private spanning tree of WEIGHTS as CSV lines u,v (its edges). "
                    "Weights are added only on request: --weights private adds Gaussian-noised weights "
                    "(budget --weights-rho, on top of --rho); --weights true adds the true weights, "
                    "which are NOT private.")
    run.add_argument("matrix", metavar="WEIGHTS", help=".npy (dense matrix) or .npz (scipy.sparse matrix)")
    run.add_argument("--rho", type=float, help="zCDP budget (required unless --algorithm exact)")
    run.add_argument("--sensitivity", type=float,
                     help="l_inf sensitivity of each weight (required unless --algorithm exact)")
    run.add_argument("--algorithm", choices=ALGORITHMS, default="fast_pamst", help="default fast_pamst")
    run.add_argument("--seed", type=int, default=None,
                     help="seed of the noise (default: fresh OS entropy; a public seed reveals the noise)")
    run.add_argument("--output", help="CSV file to write (default: stdout)")
    run.add_argument("--maximum", action="store_true", help="maximum instead of minimum spanning tree")
    run.add_argument("--weights", choices=WEIGHTS, default="none",
                     help="third CSV column: none (default: u,v only), private (Gaussian-noised "
                          "weights, needs --weights-rho) or true (the true weights: NOT private)")
    run.add_argument("--weights-rho", type=float, metavar="R",
                     help="zCDP budget of --weights private, spent on top of --rho (total rho + R)")

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
    print("the weights are synthetic (made up, public), so the table shows the trees' true weights "
          "to evaluate them; a real release (fastpamst run) never prints them")
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


def _release(algorithm, W, args, rng=None):
    rng = args.seed if rng is None else rng
    kw = {"rho": args.rho, "sensitivity": args.sensitivity, "rng": rng, "maximum": args.maximum}
    if algorithm == "exact":
        return api.exact_mst(W, maximum=args.maximum)
    if algorithm == "fast_pamst":
        return api.fast_pamst(W, noise="exponential", **kw)
    if algorithm == "fast_pamst_gumbel":
        return api.fast_pamst(W, noise="gumbel", **kw)
    if algorithm == "pamst":
        return api.pamst(W, **kw)
    return api.post_processing(W, **kw)


def _write_csv(tree, out, weights=None, column=None):
    """CSV of the tree's edges ``u,v``; with ``weights``, a third column named ``column``."""
    if weights is None:
        out.write("u,v\n")
        for u, v in tree.edges.tolist():
            out.write(f"{u},{v}\n")
        return
    out.write(f"u,v,{column}\n")
    # repr keeps every float digit (true weights equal the matrix entries exactly)
    for (u, v), w in zip(tree.edges.tolist(), np.asarray(weights, dtype=np.float64).tolist()):
        out.write(f"{u},{v},{w!r}\n")


def _check_run_args(args):
    """Usage errors of ``fastpamst run`` that need no data: raised before any work."""
    if args.algorithm != "exact":
        missing = [f"--{k}" for k in ("rho", "sensitivity") if getattr(args, k) is None]
        if missing:
            raise UsageError(f"{' and '.join(missing)} required for --algorithm {args.algorithm} "
                             "(only --algorithm exact runs without a privacy budget)")
    if args.weights == "private":
        if args.weights_rho is None:
            raise UsageError("--weights private requires --weights-rho R, the zCDP budget of the noised "
                             "weights (spent on top of --rho)")
        if args.algorithm == "exact":
            raise UsageError("--weights private needs a private tree, but --algorithm exact is not private; "
                             "choose a private --algorithm, or --weights none or true")
        check_positive("--weights-rho", args.weights_rho)
    elif args.weights_rho is not None:
        raise UsageError(f"--weights-rho is only used with --weights private (got --weights {args.weights}); "
                         "add --weights private or drop --weights-rho")


def _summary(args, tree, secs):
    """The one-line stderr summary: public parameters only, never a weight."""
    head = f"fastpamst run: algorithm = {args.algorithm}, n = {tree.n_vertices}"
    if args.algorithm == "exact":
        privacy_note = "NOT private (the exact tree is computed from the true weights without noise)"
    else:
        rho = float(tree.info.get("rho", args.rho))
        if args.weights == "private":
            total = rho + args.weights_rho
            privacy_note = (f"total privacy budget rho = {total:g} zCDP (tree rho = {rho:g} + weights "
                            f"rho = {args.weights_rho:g})")
        else:
            total = rho
            privacy_note = f"privacy budget rho = {rho:g} zCDP"
        eps = privacy.zcdp_to_approx_dp(total, RUN_DELTA)
        privacy_note += f", i.e. epsilon = {eps:.4g} at delta = {RUN_DELTA:g}"
        if args.weights == "true":
            privacy_note += " (edges only: the true weights written are NOT private)"
    return f"{head}, {privacy_note}, seconds = {secs:.4f}"


def cmd_run(args):
    """``fastpamst run``: one spanning tree of a saved matrix, as CSV.

    Writes ``u,v`` per edge; with ``--weights private`` a third column of
    Gaussian-noised weights (:func:`fastpamst_nb.private_edge_weights`, budget
    ``--weights-rho``), with ``--weights true`` the true weights (not private,
    with a warning). The stderr summary reports the privacy budget, no weight.
    """
    _check_run_args(args)
    if args.output:
        # fail before a long computation, not after it
        parent = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(parent):
            raise UsageError(f"--output {args.output}: directory {parent} does not exist")
    W = _load_weights(args.matrix)
    _warm_up([args.algorithm], dense=isinstance(W, np.ndarray))
    # one generator for the tree, then the weights: same --seed, same CSV; the weights'
    # noise continues the stream, so it is independent of the tree's
    gen = np.random.default_rng(args.seed)
    tree, secs = _timed(lambda: _release(args.algorithm, W, args, rng=gen))
    weights, column = None, None
    if args.weights == "private":
        weights = private_edge_weights(tree, args.weights_rho, args.sensitivity, rng=gen)
        column = "private_weight"
    elif args.weights == "true":
        weights, column = tree.edge_weights, "true_weight"
    if args.output:
        with open(args.output, "w", newline="") as f:
            _write_csv(tree, f, weights, column)
    else:
        _write_csv(tree, sys.stdout, weights, column)
        sys.stdout.flush()
    if args.weights == "true":
        print(f"{PROG}: WARNING: the third column holds the TRUE edge weights; they are NOT private "
              "(no privacy guarantee covers them): do not publish this output; use --weights private "
              "--weights-rho R for a private release of the weights", file=sys.stderr)
    print(_summary(args, tree, secs), file=sys.stderr)
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
