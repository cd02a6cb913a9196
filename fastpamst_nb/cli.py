"""The ``fastpamst`` command line: ``demo``, ``run``, ``plan`` and ``bench``.

``fastpamst demo`` runs every algorithm on the paper's default problem (synthetic
data), ``fastpamst run`` releases one private spanning tree of a weight matrix
saved with numpy (.npy, dense, or a condensed ``pdist`` vector), scipy (.npz,
sparse) or as a CSV matrix, writing its edges as CSV, and ``fastpamst
plan`` tells, before any budget is spent, the noise of a release and a bound
on its excess weight (and, given a public stand-in matrix, a dry run against a
random spanning tree); ``fastpamst bench`` times the algorithms against each other. User errors print one line
``fastpamst: error: ...`` and exit with status 2.

A release publishes only what is private: ``fastpamst run`` writes the edges
``u,v`` and, on request, Gaussian-noised weights (``--weights private``, which
spends its own zCDP budget ``--weights-rho``). The true weights are written only
with ``--weights true``, which warns that they are not private; the summary on
stderr reports the privacy budget, never the tree's weight.

Every check that needs no data (the flags, their combinations, whether
``--output`` can be written) runs first; then the .npy header is read (shape
and dtype, without the data) and checked, and only then the kernels are warmed
up on an 8-vertex matrix of the same kind as the input and the tree computed.
"""

import argparse
import json
import os
import sys
import time
import zipfile

import numpy as np

from . import api, bench, graph, privacy, registry
from .clustering import private_edge_weights
from .core import CompileWatch, check_positive
from .input_forms import _condensed_n
from .metrics import METRICS, check_metric

PROG = "fastpamst"
DEMO_DELTA = 1e-6
RUN_DELTA = 1e-6  # delta of the (epsilon, delta) equivalent printed by `fastpamst run` without --delta
ALGORITHMS = registry.cli_names()  # fast_pamst, fast_pamst_gumbel, pamst, post_processing, exact
WEIGHTS = ("none", "private", "true")
NOISES = ("exponential", "gumbel")
SYMMETRIC = ("upper", "lower")
# which algorithms take which option of `fastpamst run` (fast_pamst_gumbel is fast_pamst --noise gumbel)
FAST = registry.names_of("api.fast_pamst")
NOISE_ALGORITHMS = (*FAST, *registry.names_of("api.pamst"))
START_ALGORITHMS = (*NOISE_ALGORITHMS, *registry.names_of("api.exact_mst"))


class UsageError(Exception):
    """A mistake of the user's (bad argument, unreadable file, invalid matrix)."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage and exits; we want one line and one exit path
    def error(self, message):
        raise UsageError(message)


def _build_parser():
    from . import __version__

    parser = _Parser(prog=PROG, description="Differentially private minimum spanning trees (Fast-PAMST).")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,run,plan,bench}")

    demo = sub.add_parser("demo", help="run every algorithm on a random complete graph",
                          description="Run every algorithm on a complete graph with Uniform(0, 1) weights.")
    demo.add_argument("--n", type=int, default=2000, help="number of vertices (default 2000)")
    demo.add_argument("--rho", type=float, default=0.1, help="zCDP budget (default 0.1)")
    demo.add_argument("--sensitivity", type=float, default=1e-5, help="l_inf sensitivity of each weight (default 1e-5)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the matrix and the noise (default 0)")

    run = sub.add_parser(
        "run", help="release a spanning tree of a saved weight matrix as CSV",
        description="Release a private spanning tree of WEIGHTS as CSV lines u,v (its edges). "
                    "The budget is --rho (zCDP) or --epsilon and --delta (converted to zCDP). "
                    "Weights are added only on request: --weights private adds Gaussian-noised weights "
                    "(zCDP budget --weights-rho, on top of the tree's); --weights true adds the true "
                    "weights, which are NOT private.")
    run.add_argument("matrix", metavar="WEIGHTS",
                     help=".npy (dense matrix, or condensed distance vector as scipy's pdist returns), "
                          ".npz (scipy.sparse matrix) or .csv (dense matrix; a header row and a first "
                          "column of names are skipped); with --metric, a .npy of points (n, d)")
    budget = run.add_argument_group(
        "privacy budget", "give --rho, or --epsilon with --delta (required unless --algorithm exact)")
    budget.add_argument("--rho", type=float, help="zCDP budget of the tree")
    budget.add_argument("--epsilon", type=float, metavar="E",
                        help="(epsilon, delta)-DP budget of the tree, with --delta; converted to the "
                             "largest rho whose (epsilon, delta) is within it (fastpamst_nb.approx_dp_to_zcdp)")
    budget.add_argument("--delta", type=float, metavar="D", help="delta of --epsilon, 0 < D < 1")
    run.add_argument("--sensitivity", type=float,
                     help="l_inf sensitivity of each weight (required unless --algorithm exact)")
    run.add_argument("--algorithm", choices=ALGORITHMS, default="fast_pamst",
                     help="default fast_pamst; fast_pamst_gumbel is fast_pamst --noise gumbel (its default)")
    run.add_argument("--noise", choices=NOISES,
                     help="noise of fast_pamst and pamst: gumbel (the exponential mechanism, the default: "
                          "lower error at the same rho) or exponential (report-noisy-max, the paper's)")
    run.add_argument("--discretization", type=float, metavar="S",
                     help="step of fast_pamst's discretized scores, in the weights' units "
                          "(default: the largest power of two <= sensitivity/16; the paper "
                          "used the sensitivity)")
    run.add_argument("--bounds", type=float, nargs=2, metavar=("LO", "HI"),
                     help="public clipping bounds of fast_pamst: every weight is clipped to "
                          "[LO, HI] before it is discretized, so that the key-range check depends "
                          "on the bounds only (choose them without looking at the data)")
    run.add_argument("--start", type=int, metavar="K",
                     help="vertex Prim's algorithm starts from, 0 <= K < n (fast_pamst, pamst, exact; default 0)")
    run.add_argument("--seed", type=int, default=None,
                     help="seed of the noise (default: fresh OS entropy; a public seed reveals the noise)")
    run.add_argument("--metric", choices=METRICS, default=None,
                     help="WEIGHTS holds points X (n, d), one per row, and edge {i, j} weighs the "
                          "distance of rows i and j (never guessed from the shape; haversine: "
                          "(lat, lon) in degrees, km); --sensitivity is then in the metric's units, "
                          "2r when each point moves by at most r (fastpamst_nb.point_sensitivity)")
    run.add_argument("--p", type=float, metavar="P", dest="p",
                     help="exponent of --metric minkowski, P >= 1")
    run.add_argument("--output", help="CSV file to write (default: stdout)")
    run.add_argument("--maximum", action="store_true", help="maximum instead of minimum spanning tree")
    run.add_argument("--symmetric", choices=SYMMETRIC, default=None,
                     help="read only this triangle of a dense matrix and mirror it, for matrices "
                          "symmetric up to rounding (default: the matrix must be exactly symmetric)")
    run.add_argument("--weights", choices=WEIGHTS, default="none",
                     help="third CSV column: none (default: u,v only), private (Gaussian-noised "
                          "weights, needs --weights-rho) or true (the true weights: NOT private)")
    run.add_argument("--weights-rho", type=float, metavar="R",
                     help="zCDP budget (a rho, also when the tree's budget is --epsilon/--delta) of "
                          "--weights private, spent on top of the tree's (total rho + R)")
    run.add_argument("--timing", action="store_true",
                     help="also print the release's time and the wall time including numba's "
                          "compilation (NOT private: timings depend on the data; do not publish them)")

    pln = sub.add_parser(
        "plan", help="before spending budget: the noise, a 95%% excess bound, a dry run on a public stand-in",
        description="Plan a release from public parameters: the selection noise of one step and a bound "
                    "on the excess weight holding with probability 0.95. Given a PUBLIC stand-in matrix "
                    "(last year's data, a simulation; never the private weights: nothing here is "
                    "private), also the median excess of releases on it and of uniformly random "
                    "spanning trees (the learned-nothing line).")
    pln.add_argument("stand_in", nargs="?", metavar="STAND_IN",
                     help=".npy (dense) or .npz (scipy.sparse) public stand-in for the weights; or give --n")
    pln.add_argument("--n", type=int, help="number of vertices (without a stand-in)")
    pln.add_argument("--sensitivity", type=float, required=True, help="l_inf sensitivity of each weight")
    pln.add_argument("--rho", type=float, nargs="+", help="zCDP budgets to plan (default 0.01 0.1 1 10)")
    pln.add_argument("--epsilon", type=float, nargs="+", metavar="E", help="(epsilon, delta) budgets, with --delta")
    pln.add_argument("--delta", type=float, metavar="D", help="delta of --epsilon")
    pln.add_argument("--noise", choices=NOISES, default="gumbel", help="gumbel (default) or exponential")
    pln.add_argument("--target", type=float, help="an excess weight to reach: prints the smallest rho meeting it")
    pln.add_argument("--releases", type=int, default=5, help="releases per median on the stand-in (default 5)")
    pln.add_argument("--seed", type=int, default=None, help="seed of the dry run's noise")
    pln.add_argument("--maximum", action="store_true", help="maximum instead of minimum spanning tree")

    bnch = sub.add_parser("bench", help="time every algorithm (rho = 0.1, sensitivity = 1e-5)",
                          description="Time every algorithm on Uniform(0, 1) complete graphs.")
    bnch.add_argument("--n", type=int, nargs="+", default=None,
                      help="sizes (default 1000 2000 4000 8000; with --shapes one size, default 4000)")
    bnch.add_argument("--repeat", type=int, default=3, help="runs per algorithm; the median is reported (default 3)")
    bnch.add_argument("--sparse", type=int, metavar="N",
                      help="also time fast_pamst on a random sparse graph of N vertices and 6N "
                           "edges against scipy's minimum_spanning_tree")
    bnch.add_argument("--json", metavar="OUT.json", help="also write {n: {case: seconds}} and the slope here")
    bnch.add_argument("--shapes", action="store_true",
                      help='instead, time fast_pamst(noise="exponential") on shapes of real weights '
                           "(an outlier, Pareto, far clusters, huge integers, log-normal): dense rows "
                           "on --n vertices against the floor, sparse rows on --sparse vertices "
                           "(default 20000, 0: none) against scipy's minimum_spanning_tree")
    bnch.add_argument("--sensitivity", type=float, nargs="+", metavar="D",
                      help="with --shapes: the noise levels to release each shape at, one ratio "
                           "column each (default 1e-5; e.g. 1e-5 1e-3 0.1 1)")
    return parser


def _warm_up_weights():
    """8 x 8 symmetric weights in [0, 100): integer dtypes (even int8) keep them distinct."""
    return bench.uniform_weights(8, seed=0) * 100.0


def _small_like(like):
    """An 8 x 8 symmetric matrix that reaches the kernels with the same numba types as ``like``.

    numba compiles one machine-code version per argument type, and it types an
    array by dtype, dimension, layout (C/F) and mutability: a read-only memmap
    of float64 is ``readonly array(float64, 2d, C)``, not the ``array(float64,
    2d, C)`` of an ordinary array. A small array of the same dtype and order
    with ``setflags(write=False)`` has exactly the memmap's type, so warming up
    on it compiles (or loads from the cache) what the real run will call; a
    dtype the API converts (integers, big-endian floats) is converted alike.
    (The API now views every matrix read-only and widens small float32 ones,
    ``graph.kernel_view``, so most kinds share one compiled version anyway.)
    """
    W = _warm_up_weights()
    W = W.astype(like.dtype)
    if like.flags.f_contiguous and not like.flags.c_contiguous:
        W = np.asfortranarray(W)
    if not like.flags.writeable:
        W.setflags(write=False)
    return W


def _small_points_like(like):
    """8 points with the numba types of the points ``like`` (dtype, read-only flag), of
    the same d; coordinates in [0, 1) degrees suit every metric, haversine included."""
    X = np.random.default_rng(0).random((8, like.shape[1])) + 0.5
    X = X.astype(like.dtype if like.dtype in (np.float32, np.float64) else np.float64)
    if not like.flags.writeable and like.dtype in (np.float32, np.float64):
        X.setflags(write=False)
    return X


def _warm_up(algorithms=ALGORITHMS, like=None, noise="gumbel", symmetric=None, metric=None,
             p=None):
    """Compile (or load from the numba cache) the kernels on a tiny graph, so timings exclude it.

    ``like``: the matrix of the real run; the tiny graph is of the same kind (a
    small csr of float64 for a sparse one, which the API turns into the same
    int64/float64 CSR arrays; see :func:`_small_like` for a dense one). None: an
    ordinary float64 array. ``symmetric``: as the run's (one triangle is read
    by kernels of its own).

    A float32 matrix too large to be widened (``graph.kernel_view``) runs kernels
    that no tiny matrix reaches (a tiny float32 one is widened to float64): it is
    not warmed up, and ``cmd_run`` subtracts the compilation its release measures.
    """
    if metric is not None:
        W = _small_points_like(like)
    elif like is None:
        W = _warm_up_weights()
    elif isinstance(like, np.ndarray) and like.dtype == np.float32 \
            and like.size > graph._WIDEN_FLOAT32_MAX_ENTRIES:
        return
    elif isinstance(like, np.ndarray):
        W = _small_like(like)
    else:
        import scipy.sparse as sp
        W = sp.csr_matrix(_warm_up_weights())
    args = argparse.Namespace(rho=1.0, epsilon=None, delta=None, sensitivity=1e-3, seed=0,
                              maximum=False, noise=noise, discretization=None, start=None,
                              symmetric=symmetric, metric=metric, p=p)
    # fast_pamst's queue addresses the buckets of a key range directly when they are few
    # (here 1e5 keys of step 1e-3) and compresses them to the occupied ones when they are
    # not (1e12 keys of step 1e-10, 1e6 buckets), with kernels of its own: real inputs
    # may take either
    fine = argparse.Namespace(**{**vars(args), "discretization": 1e-10})
    for algorithm in algorithms:
        _release(algorithm, W, args)
        if algorithm in FAST and _noise(algorithm, noise) == "exponential":  # gumbel: no steps
            _release(algorithm, W, fine)
            if isinstance(W, np.ndarray) and metric is None and symmetric is None:
                _warm_up_islands(W)


def _warm_up_islands(W):
    """Compile the islands' sample (``cutqueue_build.island_keys``), which the validation
    runs only on matrices of ``window.ISLANDS_MIN_ENTRIES`` entries or more, so that no
    tiny release reaches it: the demo's exponential row at n = 2,000 paid its compilation
    (0.2 s) inside the timing. Both of its paths: the sample's range taken as one island
    (``direct_max``), and the islands found by a pass over the sample."""
    from .cutqueue_build import island_keys
    from .keys import exact_inverse

    Wk = graph.kernel_view(W)  # the real run's matrix type (the API views it read-only)
    s = 1e-3
    island_keys(Wk, 1.0, s, exact_inverse(s), 0, 8)
    island_keys(Wk, 1.0, s, exact_inverse(s), 0, 8, 1 << 20)


def _compile_watch():
    """A :class:`~fastpamst_nb.core.CompileWatch` that says so on stderr when numba compiles."""
    return CompileWatch(lambda: print(f"{PROG}: compiling (first run only: numba caches the "
                                      "kernels for later runs) ...", file=sys.stderr, flush=True))


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
    with _compile_watch():
        _warm_up()
        _warm_up(["fast_pamst"], noise="exponential")  # the demo's exponential row
    kw = {"rho": args.rho, "sensitivity": args.sensitivity, "rng": args.seed}
    runs = [
        ("exact_mst", lambda: api.exact_mst(W)),
        ("fast_pamst", lambda: api.fast_pamst(W, noise="gumbel", **kw)),
        ("fast_pamst_exponential", lambda: api.fast_pamst(W, noise="exponential", **kw)),
        ("post_processing", lambda: api.post_processing(W, **kw)),
    ]
    if args.n <= bench.PAMST_MAX_N:
        runs.append(("pamst", lambda: api.pamst(W, noise="gumbel", **kw)))

    print(f"fastpamst demo: complete graph, n = {args.n}, weights Uniform(0, 1), seed = {args.seed}")
    print("the weights are synthetic (made up, public), so the table shows the trees' true weights "
          "to evaluate them; a real release (fastpamst run) never prints them")
    print(f"privacy: rho = {args.rho:g} zCDP, sensitivity = {args.sensitivity:g} "
          f"(equivalent to epsilon = {eps:.4g}, delta = {DEMO_DELTA:g})")
    print("noise: gumbel (the exponential mechanism, the default) unless the name says exponential "
          "(report-noisy-max, the paper's Fast-PAMST)")
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


def _not_npy(path, why):
    return UsageError(f"{path}: not a valid .npy file ({why}); save the matrix with np.save(path, W)")


def _check_matrix(path, shape, dtype):
    """Shape and dtype of the user's matrix (from the .npy header: no data read)."""
    if dtype.hasobject:
        raise UsageError(f"{path}: holds Python objects (dtype {dtype}), not numbers; save a numeric "
                         "array with np.save, e.g. np.save(path, np.asarray(W, dtype=np.float64))")
    if len(shape) == 1 and _condensed_n(shape[0]) is None:
        raise UsageError(f"{path}: a 1-D array of length {shape[0]} is not a condensed distance vector "
                         "(scipy.spatial.distance.pdist output has length n(n-1)/2: 1, 3, 6, 10, ...); "
                         "save the (n, n) matrix or pdist's vector")
    if len(shape) == 1:
        pass  # a condensed distance vector: the library expands it (an (n, n) float64 matrix)
    elif len(shape) != 2 or shape[0] != shape[1]:
        raise UsageError(f"{path}: the weight matrix must be square (n, n), got shape {tuple(shape)}")
    if shape[0] == 0:
        raise UsageError(f"{path}: the weight matrix is empty (n = 0); a spanning tree needs a vertex")
    if dtype == np.bool_ or not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise UsageError(f"{path}: holds dtype {dtype}; the weights must be real numbers (a float or "
                         "integer dtype): save W.astype(np.float64)")


def _check_npy(path, metric=None):
    """Read and check the .npy header (shape, dtype, data size) before mapping the file."""
    fmt = np.lib.format
    with open(path, "rb") as f:
        try:
            version = fmt.read_magic(f)
        except ValueError:
            why = "the file is empty" if os.path.getsize(path) == 0 else \
                "it does not start with the .npy signature \\x93NUMPY: np.save did not write it"
            raise _not_npy(path, why) from None
        if version not in ((1, 0), (2, 0)):
            return  # a newer format: np.load knows it, and reports its own problems
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        try:
            shape, _, dtype = read_header(f)
        except Exception as exc:  # a malformed or truncated header
            raise _not_npy(path, f"unreadable header: {' '.join(str(exc).split())}") from None
        offset = f.tell()
    (_check_matrix if metric is None else _check_points)(path, shape, dtype)
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = os.path.getsize(path) - offset
    if have < need:
        raise _not_npy(path, f"truncated: the header announces a {' x '.join(map(str, shape))} array of "
                             f"{dtype}, {need} bytes of data, but the file holds {have}")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _load_csv(path):
    """A dense matrix written as CSV: n rows of n comma-separated numbers, optionally with a
    header row of column names and a first column of row names (as pandas writes them)."""
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        head = [row for _, row in zip(range(2), csv.reader(f))]
    if not head or not head[0]:
        raise UsageError(f"{path}: the CSV file is empty; write the (n, n) matrix as n rows of n numbers")
    header = not all(_is_number(x) for x in head[0][1:]) or (len(head) > 1 and head[0][0] == "")
    first = head[1] if header and len(head) > 1 else head[0]
    index = bool(first) and not _is_number(first[0])
    try:
        W = np.loadtxt(path, delimiter=",", skiprows=int(header), ndmin=2, dtype=np.float64,
                       usecols=range(1, len(first)) if index else None, encoding="utf-8-sig")
    except ValueError as exc:
        raise UsageError(f"{path}: cannot read it as a CSV matrix of numbers ({' '.join(str(exc).split())}); "
                         "write n rows of n comma-separated numbers (a header row of names and a first "
                         "column of names are allowed)") from None
    return W


def _check_points(path, shape, dtype):
    """Shape and dtype of points X (n, d) (from the .npy header: no data read)."""
    if dtype.hasobject or dtype == np.bool_ or not (np.issubdtype(dtype, np.integer)
                                                     or np.issubdtype(dtype, np.floating)):
        raise UsageError(f"{path}: holds dtype {dtype}; points must be real numbers: save "
                         "X.astype(np.float64)")
    if len(shape) != 2:
        raise UsageError(f"{path}: --metric reads points X of shape (n, d), one point per row; got shape "
                         f"{tuple(shape)}")
    if shape[0] == 0 or shape[1] == 0:
        raise UsageError(f"{path}: points of shape {tuple(shape)}: need n >= 1 points of d >= 1 coordinates")


def _load_weights(path, metric=None):
    """Dense .npy as a read-only memmap (never read whole into memory), sparse .npz, or a CSV
    matrix; with ``metric``, points X (n, d) from a .npy."""
    ext = os.path.splitext(path)[1].lower()
    if metric is not None and ext != ".npy":
        raise UsageError(f"{path}: --metric {metric} reads points X (n, d) from a .npy file (np.save(path, X)); "
                         "drop --metric for a weight matrix")
    if ext not in (".npy", ".npz", ".csv"):
        raise UsageError(f"{path}: unsupported file type {ext or '(none)'!r}; give a .npy dense matrix "
                         "or condensed distance vector (np.save), a .npz scipy.sparse matrix "
                         "(scipy.sparse.save_npz) or a .csv matrix")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    if ext == ".csv":
        W = _load_csv(path)
        _check_matrix(path, W.shape, W.dtype)
        return W
    if ext == ".npy":
        _check_npy(path, metric)
    elif not zipfile.is_zipfile(path):  # else np.load would take it for a pickle
        raise UsageError(f"{path}: not a valid .npz file (not a zip archive); save the sparse matrix "
                         "with scipy.sparse.save_npz(path, A)")
    try:
        if ext == ".npy":
            W = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            import scipy.sparse as sp
            W = sp.load_npz(path)
    except Exception as exc:  # any failure to parse the user's file is a user error
        if "pickle" in str(exc):  # numpy's advice (allow_pickle=True) would run code from the file
            raise UsageError(f"{path}: holds Python objects (pickled data), not numbers; save a numeric "
                             f"matrix with {'np.save' if ext == '.npy' else 'scipy.sparse.save_npz'}") from None
        raise UsageError(f"{path}: cannot read it as a {ext} weight matrix: {exc}") from None
    (_check_matrix if metric is None else _check_points)(path, W.shape, W.dtype)
    return W


def _budget(args):
    """The tree's budget as keyword arguments of the API: rho, or epsilon and delta."""
    if args.epsilon is not None:
        return {"epsilon": args.epsilon, "delta": args.delta}
    return {"rho": args.rho}


def _noise(algorithm, noise):
    """The noise an algorithm runs with (fast_pamst_gumbel is the alias of fast_pamst --noise gumbel)."""
    return "gumbel" if algorithm == "fast_pamst_gumbel" else (noise or "gumbel")


def _release(algorithm, W, args, rng=None):
    rng = args.seed if rng is None else rng
    start = 0 if args.start is None else args.start
    points = {} if args.metric is None else {"metric": args.metric, "p": args.p}
    run = registry.function(algorithm)
    if not registry.ALGORITHMS[algorithm].private:
        return run(W, maximum=args.maximum, start=start, symmetric=args.symmetric, **points)
    kw = {"sensitivity": args.sensitivity, "rng": rng, "maximum": args.maximum,
          "symmetric": args.symmetric, **_budget(args), **points}
    if algorithm in FAST:
        return run(W, noise=_noise(algorithm, args.noise), discretization=args.discretization,
                   start=start, bounds=getattr(args, "bounds", None), **kw)
    if algorithm in NOISE_ALGORITHMS:
        return run(W, noise=_noise(algorithm, args.noise), start=start, **kw)
    return run(W, **kw)


def _in_cli_words(message):
    """The library's ``symmetric='upper' (or 'lower')`` and ``bounds=(lo, hi)`` advice as flags."""
    return (message.replace("symmetric='upper'", "--symmetric upper").replace("(or 'lower')", "(or lower)")
            .replace("bounds=(lo, hi)", "--bounds LO HI"))


def _check_writable(path, flag):
    """Fail now, not after a long computation, if ``path`` cannot be written."""
    full = os.path.abspath(path)
    if os.path.isdir(full):
        raise UsageError(f"{flag} {path} is a directory; give a file name inside it, "
                         f"e.g. {os.path.join(path, 'out' + ('.json' if flag == '--json' else '.csv'))}")
    parent = os.path.dirname(full)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: {parent} is a file, not a directory; choose another path")
    if not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: directory {parent} does not exist; create it or choose another path")
    if os.path.exists(full):
        if not os.access(full, os.W_OK):
            raise UsageError(f"{flag} {path}: the file exists and is not writable; "
                             "choose another path or make it writable")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: directory {parent} is not writable; choose another path")


def _check_run_args(args):
    """Usage errors of ``fastpamst run`` that need no data: raised before any work."""
    algorithm = args.algorithm
    # --rho, or --epsilon with --delta: exactly one way, validated (cheap) before any work
    privacy.check_budget(args.rho, args.epsilon, args.delta, required=False, flags=True)
    if algorithm != "exact":
        missing = []
        if args.rho is None and args.epsilon is None:
            missing.append("--rho R (or --epsilon E --delta D)")
        if args.sensitivity is None:
            missing.append("--sensitivity")
        if missing:
            raise UsageError(f"{' and '.join(missing)} required for --algorithm {algorithm} "
                             "(only --algorithm exact runs without a privacy budget)")
        check_positive("--sensitivity", args.sensitivity)
    if args.noise is not None:
        if algorithm not in NOISE_ALGORITHMS:
            raise UsageError(f"--noise chooses the selection noise of fast_pamst and pamst; --algorithm "
                             f"{algorithm} has no such noise: drop --noise")
        if algorithm == "fast_pamst_gumbel" and args.noise != "gumbel":
            raise UsageError(f"--algorithm fast_pamst_gumbel means fast_pamst --noise gumbel, which "
                             f"contradicts --noise {args.noise}; use --algorithm fast_pamst --noise {args.noise}")
    if args.discretization is not None:
        if algorithm not in FAST:
            raise UsageError(f"--discretization is the step of fast_pamst's discretized scores; --algorithm "
                             f"{algorithm} does not discretize: drop it or use --algorithm fast_pamst")
        if _noise(algorithm, args.noise) == "gumbel":
            raise UsageError("--discretization is the step of fast_pamst --noise exponential; --noise "
                             "gumbel releases the exact MST of the raw weights minus Gumbel noise, "
                             "with no discretization: drop --discretization")
        check_positive("--discretization", args.discretization)
    if args.bounds is not None and algorithm not in FAST:
        raise UsageError(f"--bounds clips the weights fast_pamst discretizes; --algorithm {algorithm} "
                         "does not discretize: drop it or use --algorithm fast_pamst")
    if args.start is not None:
        if algorithm not in START_ALGORITHMS:
            raise UsageError(f"--start is the first vertex of Prim's algorithm (fast_pamst, pamst, exact); "
                             f"--algorithm {algorithm} has none: drop --start")
        if args.start < 0:
            raise UsageError(f"--start must be a vertex index 0 <= K < n, got {args.start}")
    if args.weights == "private":
        if args.weights_rho is None:
            raise UsageError("--weights private requires --weights-rho R, the zCDP budget (a rho) of the "
                             "noised weights (spent on top of the tree's budget)")
        if algorithm == "exact":
            raise UsageError("--weights private needs a private tree, but --algorithm exact is not private; "
                             "choose a private --algorithm, or --weights none or true")
        check_positive("--weights-rho", args.weights_rho)
    elif args.weights_rho is not None:
        raise UsageError(f"--weights-rho is only used with --weights private (got --weights {args.weights}); "
                         "add --weights private or drop --weights-rho")
    if args.metric is not None:
        if args.symmetric is not None:
            raise UsageError(f"--symmetric reads one triangle of a weight matrix; --metric {args.metric} "
                             "reads points, whose distances are symmetric: drop --symmetric")
        try:
            check_metric(args.metric, args.p)
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc).replace("p=", "--p")) from None
        if _noise(algorithm, args.noise) == "gumbel" and algorithm in FAST and args.discretization is not None:
            raise UsageError("--discretization: the gumbel release on points is not discretized; drop it")
    elif args.p is not None:
        raise UsageError("--p is the exponent of --metric minkowski; add --metric minkowski or drop --p")
    if args.output:
        _check_writable(args.output, "--output")
        if os.path.isfile(args.matrix) and os.path.exists(args.output) \
                and os.path.samefile(args.output, args.matrix):
            raise UsageError(f"--output {args.output} is the input matrix: writing the CSV would "
                             "destroy it; choose another --output")


def _summary(args, tree):
    """The one-line stderr summary: public parameters only, never a weight nor a time
    (a release's wall time depends on the weights; ``--timing`` prints it apart)."""
    head = f"fastpamst run: algorithm = {args.algorithm}"
    if args.algorithm in NOISE_ALGORITHMS:
        head += f", noise = {_noise(args.algorithm, args.noise)}"
    if args.discretization is not None:
        head += f", discretization = {args.discretization:g}"
    if args.start is not None:
        head += f", start = {args.start}"
    if args.metric is not None:
        head += f", metric = {args.metric}" + (f" (p = {args.p:g})" if args.p is not None else "")
    head += f", n = {tree.n_vertices}"
    if args.algorithm == "exact":
        privacy_note = "NOT private (the exact tree is computed from the true weights without noise)"
    else:
        rho = float(tree.info["rho"])  # the library's, converted from --epsilon/--delta if given
        if args.epsilon is not None:  # the conversion, and epsilon reported at the user's delta
            source, delta = f"converted from epsilon = {args.epsilon:g}, delta = {args.delta:g}", args.delta
        else:
            source, delta = "", RUN_DELTA
        if args.weights == "private":
            total = rho + args.weights_rho
            privacy_note = (f"total privacy budget rho = {total:g} zCDP (tree rho = {rho:g}"
                            f"{f' [{source}]' if source else ''} + weights rho = {args.weights_rho:g})")
        else:
            total = rho
            privacy_note = f"privacy budget rho = {rho:g} zCDP{f' ({source})' if source else ''}"
        eps = privacy.zcdp_to_approx_dp(total, delta)
        privacy_note += f", i.e. epsilon = {eps:.4g} at delta = {delta:g}"
        if args.weights == "true":
            privacy_note += " (edges only: the true weights written are NOT private)"
    return f"{head}, {privacy_note}"


def cmd_run(args):
    """``fastpamst run``: one spanning tree of a saved matrix, as CSV.

    Writes ``u,v`` per edge; with ``--weights private`` a third column of
    Gaussian-noised weights (:func:`fastpamst_nb.private_edge_weights`, zCDP
    budget ``--weights-rho``), with ``--weights true`` the true weights (not
    private, with a warning). The stderr summary reports the privacy budget, no
    weight and no time (``--timing`` adds the wall time, labelled not private). Order: flags and ``--output`` (no data), the matrix's header (shape,
    dtype, ``--start`` against n), the warm-up, the tree.
    """
    wall0 = time.perf_counter()
    _check_run_args(args)
    W = _load_weights(args.matrix, args.metric)  # a memmap: shape and dtype known, no data read
    n = W.shape[0] if args.metric is not None or W.ndim == 2 else _condensed_n(W.shape[0])
    if args.metric == "haversine" and W.shape[1] != 2:
        raise UsageError(f"{args.matrix}: --metric haversine reads (latitude, longitude) in degrees, "
                         f"d = 2 columns; the points have d = {W.shape[1]}")
    if args.start is not None and args.start >= n:
        raise UsageError(f"--start {args.start} is out of range: {args.matrix} has n = {n} vertices; "
                         f"use 0 <= K < {n}")
    # one generator for the tree, then the weights: same --seed, same CSV; the weights'
    # noise continues the stream, so it is independent of the tree's
    gen = np.random.default_rng(args.seed)
    with _compile_watch() as watch:
        _warm_up([args.algorithm], like=W, noise=_noise(args.algorithm, args.noise),
                 symmetric=args.symmetric, metric=args.metric, p=args.p)
        before = watch.seconds
        try:
            tree, secs = _timed(lambda: _release(args.algorithm, W, args, rng=gen))
        except ValueError as exc:  # the library's advice, in this command's words
            raise UsageError(_in_cli_words(str(exc))) from None
        # a float32 matrix above graph.kernel_view's widening size compiles kernels of its
        # own, which the float64 warm-up could not: the release's time excludes them
        secs = max(secs - (watch.seconds - before), 0.0)
    weights = None
    if args.weights == "private":
        weights = private_edge_weights(tree, args.weights_rho, args.sensitivity, rng=gen)
    elif args.weights == "true":
        weights = tree.edge_weights  # to_csv labels them true_weight
    tree.to_csv(args.output or sys.stdout, weights, column="private_weight")
    if not args.output:
        sys.stdout.flush()
    if args.weights == "true":
        print(f"{PROG}: WARNING: the third column holds the TRUE edge weights; they are NOT private "
              "(no privacy guarantee covers them): do not publish this output; use --weights private "
              "--weights-rho R for a private release of the weights", file=sys.stderr)
    print(_summary(args, tree), file=sys.stderr)
    if args.timing:
        print(f"{PROG}: timing (NOT private: it depends on the data; do not publish it): release "
              f"{secs:.4f} s; wall time {time.perf_counter() - wall0:.2f} s, of which numba "
              f"compilation {watch.seconds:.2f} s", file=sys.stderr)
    return 0


def cmd_plan(args):
    """``fastpamst plan``: :func:`fastpamst_nb.plan` as a table on stdout."""
    from .plan import plan

    if (args.stand_in is None) == (args.n is None):
        raise UsageError("give either --n N (public parameters only) or a STAND_IN matrix file, not "
                         + ("both" if args.n is not None else "neither"))
    privacy.check_budgets(args.rho, args.epsilon, args.delta, flags=True)  # before reading the stand-in
    what = args.n if args.stand_in is None else _load_weights(args.stand_in)
    result = plan(what, sensitivity=args.sensitivity, rho=args.rho, epsilon=args.epsilon, delta=args.delta,
                  noise=args.noise, target=args.target, rng=args.seed, n_releases=args.releases,
                  maximum=args.maximum)
    print(repr(result))
    return 0


def cmd_bench(args):
    """``fastpamst bench``: timings of every algorithm (the logic is in :mod:`fastpamst_nb.bench`)."""
    if args.json:
        _check_writable(args.json, "--json")  # before minutes of timing
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.shapes:
        if args.json:
            raise UsageError("--json is not available with --shapes (the table is printed)")
        if args.n is not None and (len(args.n) != 1 or args.n[0] == 1 or args.n[0] < 0):
            raise UsageError(f"--shapes takes one size --n: 0 (no dense rows) or at least 2 vertices, "
                             f"got {args.n}")
        sparse_n = 20000 if args.sparse is None else args.sparse
        if sparse_n != 0 and sparse_n < 8:
            raise UsageError(f"--sparse must be 0 (none) or at least 8 vertices with --shapes, got {sparse_n}")
        try:
            bench.shape_levels(args.sensitivity)  # before minutes of timing
        except ValueError as exc:
            raise UsageError(f"--sensitivity: {exc}") from None
        res = bench.run_shapes_bench(4000 if args.n is None else args.n[0], sparse_n, args.repeat, log=log,
                                     sensitivities=args.sensitivity)
        print(bench.format_shapes(res))
        return 0
    if args.sensitivity is not None:
        raise UsageError("--sensitivity is only available with --shapes (the other tables use 1e-5)")
    if args.sparse is not None and args.sparse < 2:
        raise UsageError(f"--sparse must be at least 2 vertices, got {args.sparse}")
    result = bench.run_bench([1000, 2000, 4000, 8000] if args.n is None else args.n, args.repeat, log=log)
    print(bench.format_table(result))
    sparse = None
    if args.sparse is not None:
        log(f"bench: sparse, n = {args.sparse}")
        sparse = bench.run_sparse_bench(args.sparse, args.repeat)
        print(bench.format_sparse(sparse))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(bench.to_json(result, sparse), f, indent=2)
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
    commands = {"demo": cmd_demo, "run": cmd_run, "plan": cmd_plan, "bench": cmd_bench}
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
