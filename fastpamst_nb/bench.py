"""Wall-clock benchmark of every algorithm, as a ratio to the floor.

The floor (:func:`floor_prim`) is a textbook numba dense Prim kernel: each step scans
a ``best`` array for the nearest unvisited vertex and relaxes it with that vertex's
full row (contiguous reads, a visited mask, no input validation). No in-place
algorithm can read the matrix less, so "x floor" is the honest cost of everything
else: validation, discretization, the queue, the sampler. Every time is divided by
the floor's on the same matrix, in the same process.

The problem is a complete graph whose weights are i.i.d. Uniform(0, 1), with
rho = 0.1 and sensitivity = 1e-5 (the setting of docs/user_guide.rst, Speed).
Three more cases per noise look for cliffs: the same weights x 1000 and x 10**6
(that many times more distinct keys at the same sensitivity) and discretization =
sensitivity / 16 (exponential) or sensitivity 0.1 (gumbel, which does not discretize).
A sparse case compares ``fast_pamst`` on a random topology with m = 6n edges with
scipy's ``minimum_spanning_tree`` (:func:`run_sparse_bench`). All kernels are
compiled (or loaded from the numba cache) before timing.
"""

import math
import statistics
import time

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.sparse.csgraph import minimum_spanning_tree

from . import api, privacy, registry
from .core import CACHE, require_memory

RHO = 0.1
SENSITIVITY = 1e-5
# PAMST redraws noise for every cut edge at every step, O(n^3): beyond this it takes minutes
PAMST_MAX_N = 1500
# numpy's noisy copy plus scipy's MST grows as n^2 log n: beyond this it takes too long
SCIPY_MAX_N = 8000
# the cases timed: the two baselines (the floor, numpy+scipy) and registry.BENCH_CASES
ALGORITHMS = ("floor", *registry.BENCH_CASES, "numpy+scipy")
SPARSE_DEGREE = 6


@njit(cache=CACHE, nogil=True, inline="always")
def _floor_next(best, visited):
    """A floor step's scan (per step, not per edge): the nearest unvisited vertex u
    (ties: the smallest) and its distance b; marks u visited."""
    u = -1
    b = np.inf
    for v in range(best.shape[0]):
        if not visited[v] and best[v] < b:
            b = best[v]
            u = v
    visited[u] = True
    return u, b


@njit(cache=CACHE, nogil=True)
def floor_prim(W):
    """Weight of the minimum spanning tree of the complete graph of W: the floor.

    The textbook O(n^2) Prim: step t scans ``best`` for the nearest unvisited
    vertex u, then relaxes ``best`` with all of row u. W (n, n) symmetric,
    C-contiguous, finite; nothing is checked. O(n^2) time, O(n) extra memory.
    """
    n = W.shape[0]
    best = np.full(n, np.inf)
    # the textbook kernel records the tree; without this store LLVM chose a slower loop
    parent = np.zeros(n, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    best[0] = 0.0
    total = 0.0
    for _ in range(n):
        u, b = _floor_next(best, visited)
        total += b
        row = W[u]
        for v in range(n):
            if not visited[v] and row[v] < best[v]:
                best[v] = row[v]
                parent[v] = u
    return total


@njit(cache=CACHE, nogil=True)
def floor_points(X):
    """Weight of the euclidean minimum spanning tree of the rows of X: the points floor.

    The textbook O(n^2 d) Prim on points: step t scans ``best`` for the nearest
    unvisited point u, then relaxes ``best`` with u's distances to every unvisited
    point, computed from X (no (n, n) array). X (n, d) float32/float64,
    C-contiguous, finite; nothing is checked. O(n) extra memory.
    """
    n, d = X.shape
    best = np.full(n, np.inf)
    parent = np.zeros(n, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    best[0] = 0.0
    total = 0.0
    for _ in range(n):
        u, b = _floor_next(best, visited)
        total += b
        for v in range(n):
            if not visited[v]:
                s = 0.0
                for k in range(d):
                    t = np.float64(X[u, k]) - np.float64(X[v, k])
                    s += t * t
                w = math.sqrt(s)
                if w < best[v]:
                    best[v] = w
                    parent[v] = u
    return total


@njit(cache=CACHE, nogil=True, parallel=True)
def pfloor_points(X, n_chunks):
    """:func:`floor_points` with each step's scan and relaxation split over
    ``n_chunks`` contiguous ranges by ``prange`` (one fork/join per phase)."""
    n, d = X.shape
    best = np.full(n, np.inf)
    parent = np.zeros(n, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    cb = np.empty(n_chunks)
    cu = np.empty(n_chunks, dtype=np.int64)
    chunk = (n + n_chunks - 1) // n_chunks
    best[0] = 0.0
    total = 0.0
    for _ in range(n):
        for t in prange(n_chunks):
            b = np.inf
            u = -1
            for v in range(t * chunk, min(n, (t + 1) * chunk)):
                if not visited[v] and best[v] < b:
                    b = best[v]
                    u = v
            cb[t] = b
            cu[t] = u
        b = np.inf
        u = -1
        for t in range(n_chunks):
            if cb[t] < b:
                b = cb[t]
                u = cu[t]
        visited[u] = True
        total += b
        for t in prange(n_chunks):
            for v in range(t * chunk, min(n, (t + 1) * chunk)):
                if not visited[v]:
                    s = 0.0
                    for k in range(d):
                        x = np.float64(X[u, k]) - np.float64(X[v, k])
                        s += x * x
                    w = math.sqrt(s)
                    if w < best[v]:
                        best[v] = w
                        parent[v] = u
    return total


def uniform_weights(n, seed=0):
    """Symmetric (n, n) float64 matrix of i.i.d. Uniform(0, 1) edge weights.

    Parameters
    ----------
    n : int
        Number of vertices (>= 1).
    seed : int
        Seed of ``np.random.default_rng``; the strict upper triangle is drawn row
        by row (row i gets ``n - i - 1`` values) and mirrored.

    Returns
    -------
    ndarray of float64, shape (n, n)
        Zero diagonal, ``W[i, j] == W[j, i]``.

    Notes
    -----
    O(n^2) time and exactly one (n, n) array of memory: the mirror is copied
    block by block instead of ``W + W.T``, which would need a second matrix.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    require_memory(8 * n * n, f"a dense {n} x {n} weight matrix")
    rng = np.random.default_rng(seed)
    W = np.zeros((n, n))
    for i in range(n - 1):
        W[i, i + 1:] = rng.random(n - i - 1)
    block = 256
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        # rows i0:i1 left of the diagonal block mirror the columns i0:i1 above it
        W[i0:i1, :i0] = W[:i0, i0:i1].T
        D = W[i0:i1, i0:i1]
        D += np.triu(D, 1).T
    return W


def numpy_scipy_mst(W, rho, sensitivity, rng):
    """Gaussian post-processing as users write it today: numpy noise + scipy's MST.

    Parameters
    ----------
    W : ndarray (n, n)
        Symmetric dense weights (the complete graph).
    rho, sensitivity : float
        zCDP budget and l_inf sensitivity; sigma = sensitivity * sqrt(m / (2 rho)).
    rng : int or numpy.random.Generator

    Returns
    -------
    float
        True (un-noised) weight of the released tree.

    Notes
    -----
    scipy.sparse.csgraph reads 0 as "no edge", so the noisy weights are shifted to
    be >= 1 first; adding a constant to every edge does not change the MST.
    """
    rng = np.random.default_rng(rng)
    n = W.shape[0]
    sigma = privacy.gaussian_sigma(rho, sensitivity, n * (n - 1) // 2)
    noisy = np.triu(W + rng.normal(0.0, sigma, size=(n, n)), 1)  # one draw per edge
    noisy += noisy.T
    noisy += 1.0 - noisy.min()
    np.fill_diagonal(noisy, 0.0)
    tree = minimum_spanning_tree(noisy).tocoo()
    return float(W[tree.row, tree.col].sum())


def runners():
    """Name -> (callable(W, seed), the factor its weights are multiplied by), in ``ALGORITHMS``
    order: the floor, the cases of :data:`fastpamst_nb.registry.BENCH_CASES` (each run at
    ``RHO`` and ``SENSITIVITY`` unless the case says otherwise) and numpy+scipy."""
    def case(name):
        return lambda W, seed: registry.bench_release(name, W, RHO, SENSITIVITY, seed).weight

    return {"floor": (lambda W, seed: floor_prim(W), 1.0),
            **{name: (case(name), entry.scale) for name, entry in registry.BENCH_CASES.items()},
            "numpy+scipy": (lambda W, seed: numpy_scipy_mst(W, RHO, SENSITIVITY, seed), 1.0)}


def warm_up():
    """Compile (or load from the numba cache) every kernel on 16-vertex graphs."""
    W = uniform_weights(16, seed=0)
    for name, (run, scale) in runners().items():
        run(W * scale, 0)
    run_sparse_bench(16, repeat=1)


def _timings(run, repeat):
    """Seconds of ``repeat`` calls ``run(r)`` (r = 0, 1, ...: the seed)."""
    out = []
    for r in range(repeat):
        t0 = time.perf_counter()
        run(r)
        out.append(time.perf_counter() - t0)
    return out


def _median_seconds(run, W, repeat):
    return statistics.median(_timings(lambda r: run(W, r), repeat))


def _best_seconds(run, repeat):
    """The fastest of ``repeat`` calls ``run(r)``, in seconds."""
    return min(_timings(run, repeat))


def loglog_slope(ns, seconds):
    """Least-squares slope of log(seconds) against log(n); None with fewer than 2 sizes."""
    if len(ns) < 2:
        return None
    slope, _ = np.polyfit(np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(seconds, dtype=float)), 1)
    return float(slope)


def run_bench(ns=(1000, 2000, 4000, 8000), repeat=3, log=None):
    """Time every case of ``ALGORITHMS`` on Uniform(0, 1) complete graphs of each size.

    Parameters
    ----------
    ns : sequence of int
        Graph sizes (vertices).
    repeat : int
        Runs per case and size; the median is reported.
    log : callable(str), optional
        Receives one progress line per size (the CLI prints them to stderr).

    Returns
    -------
    dict
        ``{"seconds": {n: {case: median seconds}}, "fast_pamst_slope": float or None,
        "rho": ..., "sensitivity": ..., "repeat": ...}``. ``pamst`` is absent for
        n > PAMST_MAX_N (it is O(n^3)) and ``numpy+scipy`` for n > SCIPY_MAX_N.

    Notes
    -----
    Memory: two (n, n) float64 matrices (the weights and one scaled copy at a time),
    plus what the algorithms take (post_processing a noisy copy).
    """
    ns = [int(n) for n in ns]
    if not ns or min(ns) < 2:
        raise ValueError(f"every --n must be at least 2, got {ns}")
    repeat = int(repeat)
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    for n in ns:  # before minutes of timing
        require_memory(3 * 8 * n * n, f"the benchmark at n = {n} (two weight matrices and a noisy copy)")
    warm_up()
    cases = runners()
    seconds = {}
    for n in ns:
        if log is not None:
            log(f"bench: n = {n} ({repeat} run(s) per case)")
        W = uniform_weights(n, seed=n)
        row = {}
        for factor in sorted({scale for _, scale in cases.values()}):
            M = W if factor == 1.0 else W * factor  # one scaled copy at a time
            for name, (run, scale) in cases.items():
                if scale != factor:
                    continue
                if (name == "pamst" and n > PAMST_MAX_N) or (name == "numpy+scipy" and n > SCIPY_MAX_N):
                    continue
                row[name] = _median_seconds(run, M, repeat)
            del M
        seconds[n] = {name: row[name] for name in cases if name in row}
        del W
    slope = loglog_slope(ns, [seconds[n]["fast_pamst"] for n in ns])
    return {"seconds": seconds, "fast_pamst_slope": slope, "rho": RHO,
            "sensitivity": SENSITIVITY, "repeat": repeat}


def sparse_topology(n, degree=SPARSE_DEGREE, seed=0):
    """A connected random graph with about ``degree * n`` edges and Uniform(0, 1) weights.

    A random Hamiltonian path (connectivity) plus ``(degree - 1) * n`` uniformly
    random pairs (duplicates and loops dropped). Returns a symmetric
    ``scipy.sparse.csr_matrix`` (n, n) of float64, weights in (0, 1].
    """
    n = int(n)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    extra = (degree - 1) * n
    a = np.concatenate([perm[:-1], rng.integers(0, n, extra)])
    b = np.concatenate([perm[1:], rng.integers(0, n, extra)])
    keep = a != b
    a, b = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    pairs = np.unique(a * n + b)
    a, b = pairs // n, pairs % n
    w = 1.0 - rng.random(a.shape[0])  # (0, 1]: scipy reads a stored 0 as "no edge"
    upper = sp.coo_matrix((w, (a, b)), shape=(n, n))
    return (upper + upper.T).tocsr()


def run_sparse_bench(n, repeat=3, degree=SPARSE_DEGREE):
    """fast_pamst (exponential noise) on :func:`sparse_topology` against scipy's MST.

    Returns
    -------
    dict
        ``{"n": n, "m": edges, "fast_pamst": s, "scipy_mst": s}``: median seconds,
        each including its own input handling (fast_pamst validates the CSR
        matrix; scipy converts it).
    """
    A = sparse_topology(n, degree, seed=n)
    runs = {
        "fast_pamst": lambda: api.fast_pamst(A, rho=RHO, sensitivity=SENSITIVITY, rng=0, noise="exponential"),
        "scipy_mst": lambda: minimum_spanning_tree(A),
    }
    out = {"n": int(n), "m": int(A.nnz // 2)}
    for name, run in runs.items():
        out[name] = _median_seconds(lambda W, r: run(), None, repeat)
    return out


def to_json(result, sparse=None):
    """The JSON document of ``fastpamst bench --json``: ``{"n": {case: seconds}}``, the
    slope, and the sparse result under ``"sparse"`` when there is one."""
    doc = {str(n): dict(row) for n, row in result["seconds"].items()}
    doc["fast_pamst_slope"] = result["fast_pamst_slope"]
    if sparse is not None:
        doc["sparse"] = dict(sparse)
    return doc


def align_table(rows):
    """Join rows of strings into aligned text: first column left-aligned, the others right-aligned."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])])
                     for r in rows)


def floor_ratios(seconds):
    """Each case's time over the floor's: ``[(case, [ratio or None per n])]`` in
    ``ALGORITHMS`` order (None: the case was skipped at that n; the floor's own row
    holds its seconds)."""
    rows = []
    for name in ALGORITHMS:
        cells = []
        for n in seconds:
            t = seconds[n].get(name)
            if t is None or name == "floor":
                cells.append(t)
            else:
                cells.append(t / seconds[n]["floor"])
        rows.append((name, cells))
    return rows


def format_table(result):
    """Render :func:`run_bench`'s result as an aligned text table.

    One row per case, one column per n, each cell ``seconds (x floor)``, followed by
    the log-log slope of fast_pamst's time.
    """
    seconds = result["seconds"]
    ns = list(seconds)
    rows = [["case"] + [f"n={n}" for n in ns]]
    for name, ratios in floor_ratios(seconds):
        cells = [name]
        for n, x in zip(ns, ratios):
            if x is None:
                cells.append("skipped")
            elif name == "floor":
                cells.append(f"{x:.4f}s")
            else:
                cells.append(f"{seconds[n][name]:.4f}s ({x:.1f}x)")
        rows.append(cells)
    lines = [f"rho = {result['rho']}, sensitivity = {result['sensitivity']}, "
             f"median of {result['repeat']} run(s); (x floor) = time / the floor's "
             f"(a textbook dense Prim)", align_table(rows)]
    if any("pamst" not in seconds[n] for n in ns):
        lines.append(f"pamst skipped for n > {PAMST_MAX_N}: it is O(n^3)")
    if any("numpy+scipy" not in seconds[n] for n in ns):
        lines.append(f"numpy+scipy skipped for n > {SCIPY_MAX_N}: minutes per run")
    slope = result["fast_pamst_slope"]
    if slope is not None and math.isfinite(slope):
        lines.append(f"fast_pamst time ~ n^{slope:.2f} (least squares on log t vs log n, "
                     f"n = {min(ns)}..{max(ns)})")
    return "\n".join(lines)


def format_sparse(sparse):
    """One line for :func:`run_sparse_bench`'s result."""
    return (f"sparse, n = {sparse['n']}, m = {sparse['m']}: fast_pamst {sparse['fast_pamst']:.3f}s, "
            f"scipy minimum_spanning_tree {sparse['scipy_mst']:.3f}s "
            f"({sparse['fast_pamst'] / sparse['scipy_mst']:.1f}x scipy)")


# the sensitivities the points bench releases at (Uniform(0, 1)^d points, rho = RHO):
# from noise far below the distances (1e-5) to noise wider than them (1)
POINTS_SENSITIVITIES = (1e-5, 1e-3, 0.1, 1.0)


def run_points_bench(n, d=8, repeat=3, sensitivities=POINTS_SENSITIVITIES, seed=0):
    """``exact_mst`` and ``fast_pamst(noise="gumbel")`` on points against the points floor.

    Parameters
    ----------
    n, d : int
        n points drawn Uniform(0, 1)^d (float64), euclidean metric.
    repeat : int
        Runs per case; the minimum is reported (after a warm-up on 64 points).
    sensitivities : sequence of float
        The gumbel releases' sensitivities (rho = ``RHO``).

    Returns
    -------
    dict
        ``{"n", "d", "threads", "floor_serial", "floor_parallel", "exact_mst",
        "gumbel": {sensitivity: seconds}}`` in seconds; the floor is the faster
        of :func:`floor_points` and :func:`pfloor_points`.
    """
    import numba

    X = np.random.default_rng(seed).random((int(n), int(d)))
    threads = numba.get_num_threads()
    small = X[:64].copy()
    floor_points(small)
    pfloor_points(small, threads)
    api.exact_mst(small, metric="euclidean")
    api.fast_pamst(small, RHO, 0.1, rng=0, noise="gumbel", metric="euclidean")

    def best(run):
        return _best_seconds(run, repeat)

    res = {"n": int(n), "d": int(d), "threads": threads,
           "floor_serial": best(lambda r: floor_points(X)),
           "floor_parallel": best(lambda r: pfloor_points(X, threads)),
           "exact_mst": best(lambda r: api.exact_mst(X, metric="euclidean")), "gumbel": {}}
    for s in sensitivities:
        res["gumbel"][s] = best(lambda r: api.fast_pamst(X, RHO, s, rng=r, noise="gumbel", metric="euclidean"))
    return res


def format_points(res):
    """Lines for :func:`run_points_bench`'s result: seconds and x the points floor."""
    floor = min(res["floor_serial"], res["floor_parallel"])
    lines = [f"points, n = {res['n']}, d = {res['d']}, euclidean, {res['threads']} thread(s), rho = {RHO}: "
             f"floor {floor:.3f}s (serial {res['floor_serial']:.3f}s, prange {res['floor_parallel']:.3f}s)",
             f"  exact_mst {res['exact_mst']:.3f}s ({res['exact_mst'] / floor:.2f}x floor)"]
    for s, t in res["gumbel"].items():
        lines.append(f"  fast_pamst gumbel, sensitivity {s:g}: {t:.3f}s ({t / floor:.2f}x floor)")
    return "\n".join(lines)


_RSS_CHILD = """
import sys, threading, time
import numpy as np
import fastpamst_nb as fp
n, d, what = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
X = np.random.default_rng(0).random((n, d))
run = {"exact_mst": lambda A: fp.exact_mst(A, metric="euclidean"),
       "gumbel": lambda A: fp.fast_pamst(A, 0.1, 0.1, rng=0, noise="gumbel", metric="euclidean")}[what]
run(X[:64].copy())
base = rss(); peak = [base]; done = []
def sample():
    while not done:
        peak[0] = max(peak[0], rss()); time.sleep(0.01)
th = threading.Thread(target=sample); th.start()
t0 = time.perf_counter(); run(X); secs = time.perf_counter() - t0
done.append(1); th.join()
print(peak[0], base, secs)
"""


def points_peak_rss(n, d=8, what="gumbel"):
    """Peak resident memory of a release on n points, measured in a subprocess that
    samples its RSS every 10 ms during the call. Returns ``{"peak", "before", "seconds"}``
    (bytes; "before" is the RSS after import, the data and the warm-up)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(n), str(d), what], capture_output=True,
                         text=True, check=True)
    peak, before, secs = out.stdout.split()
    return {"peak": int(peak), "before": int(before), "seconds": float(secs)}


# ----------------------------------------------------------------------------
# shapes of real weights (issue 31): fast_pamst(noise="exponential") on weights
# that are not Uniform(0, 1), dense against the floor, sparse against scipy
# ----------------------------------------------------------------------------

def _shape_outlier(u, rng):
    w = u.copy()
    w[0] = 1e4  # one edge of weight 10**4
    return w


def _shape_pareto(u, rng):
    return (1.0 - u) ** (-1.0 / 0.7)  # Pareto, alpha = 0.7, support [1, inf)


def _shape_clusters(u, rng):
    return u + 1000.0 * rng.integers(0, 3, u.shape[0])  # three clusters 1000 apart


def _shape_integers(u, rng):
    w = np.floor(u * 100.0)
    w[rng.integers(0, u.shape[0], 8)] = 1e9  # integers 0..99 with a few of 10**9
    return w


def _shape_lognormal(u, rng):
    return np.exp(8.0 * (u - 0.5))


# name -> (description, transform of the m Uniform(0, 1) edge weights, seeded rng)
SHAPES = {
    "uniform": ("Uniform(0, 1)", lambda u, rng: u),
    "outlier": ("Uniform(0, 1) plus ONE edge of 10^4", _shape_outlier),
    "pareto": ("Pareto, alpha = 0.7", _shape_pareto),
    "clusters": ("three clusters 1000 apart (Uniform within)", _shape_clusters),
    "integers": ("integers 0..99 with a few weights of 10^9", _shape_integers),
    "lognormal": ("exp(8 (U - 1/2))", _shape_lognormal),
}
SHAPES_SPARSE_DEGREE = 3


def shape_weights(shape, n, seed=0, sparse=False):
    """The weights of one row of ``fastpamst bench --shapes``.

    Parameters
    ----------
    shape : str
        A key of :data:`SHAPES`.
    n : int
        Vertices.
    seed : int
    sparse : bool
        A symmetric CSR graph (:func:`sparse_topology` with about
        ``SHAPES_SPARSE_DEGREE`` edges a vertex) instead of a dense (n, n) matrix.

    Returns
    -------
    ndarray (n, n) or scipy.sparse.csr_matrix
        Each edge's weight is the shape's transform of a Uniform(0, 1) draw; every
        weight is positive on sparse graphs (scipy reads a stored 0 as no edge).
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose one of {', '.join(SHAPES)}")
    rng = np.random.default_rng(seed + 1)
    f = SHAPES[shape][1]
    if sparse:
        A = sp.triu(sparse_topology(n, SHAPES_SPARSE_DEGREE, seed=seed), 1).tocoo()
        w = f(A.data.copy(), rng) + 1.0  # > 0
        upper = sp.coo_matrix((w, (A.row, A.col)), shape=A.shape)
        return (upper + upper.T).tocsr()
    W = uniform_weights(n, seed=seed)
    iu = np.triu_indices(n, 1)
    w = f(W[iu], rng)
    W[iu] = w
    W.T[iu] = w
    np.fill_diagonal(W, 0.0)
    return W


def shape_levels(sensitivities=None):
    """The noise levels of :func:`run_shapes_bench`: ``[SENSITIVITY]`` by default.

    Raises ``ValueError`` unless there is at least one and every one is finite and
    positive (the CLI checks ``--sensitivity`` with it before any timing).
    """
    levels = [SENSITIVITY] if sensitivities is None else [float(d) for d in sensitivities]
    if not levels or not all(math.isfinite(d) and d > 0 for d in levels):
        raise ValueError(f"the noise levels must be finite positive sensitivities (at least one), got {levels}")
    return levels


def run_shapes_bench(n=4000, sparse_n=20000, repeat=1, shapes=None, log=None, sensitivities=None):
    """``fast_pamst(noise="exponential")`` on every shape of :data:`SHAPES`.

    Parameters
    ----------
    n : int
        Vertices of the dense rows (0: none), timed against :func:`floor_prim` on the
        same matrix in the same run.
    sparse_n : int
        Vertices of the sparse rows (0: none), against scipy's ``minimum_spanning_tree``.
    repeat : int
        Runs per case; the minimum is reported.
    shapes : sequence of str, optional
        Keys of :data:`SHAPES` (default: all).
    log : callable(str), optional
    sensitivities : sequence of float, optional
        The noise levels: each shape is released at every sensitivity (l_inf, in the
        weights' units; default ``(SENSITIVITY,)``, 1e-5). The weights do not change
        with it, so the floor and scipy are timed once per shape. A large sensitivity
        is the wide-group regime, where a few groups hold most cut edges.

    Returns
    -------
    dict
        ``{"dense": {shape: {sensitivity: (fast_pamst s, floor s)}}, "sparse": {shape:
        {sensitivity: (fast_pamst s, scipy s)}}, "n", "sparse_n", "rho",
        "sensitivities", "repeat"}``.
    """
    shapes = list(SHAPES) if shapes is None else list(shapes)
    for name in shapes:
        if name not in SHAPES:
            raise ValueError(f"unknown shape {name!r}; choose one of {', '.join(SHAPES)}")
    levels = shape_levels(sensitivities)
    n, sparse_n, repeat = int(n), int(sparse_n), int(repeat)
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if n:
        require_memory(3 * 8 * n * n, f"the shapes benchmark at n = {n}")

    def best(run):
        return _best_seconds(run, repeat)

    def release(A, d, r):
        return api.fast_pamst(A, rho=RHO, sensitivity=d, rng=r, noise="exponential")

    small = uniform_weights(16, seed=0)
    floor_prim(small)
    for name in shapes:  # compile every layout's kernels before timing
        for d in levels:  # (at 120 vertices, where a crowded dense range is compressed, not wide)
            if n:
                release(shape_weights(name, 120), d, 0)
            if sparse_n:
                release(shape_weights(name, 300, sparse=True), d, 0)
    res = {"dense": {}, "sparse": {}, "n": n, "sparse_n": sparse_n, "rho": RHO,
           "sensitivities": levels, "repeat": repeat}
    for name in shapes if n else ():
        if log is not None:
            log(f"bench --shapes: dense {name}, n = {n}")
        W = shape_weights(name, n)
        f = best(lambda r: floor_prim(W))
        res["dense"][name] = {d: (best(lambda r: release(W, d, r)), f) for d in levels}
        del W
    for name in shapes if sparse_n else ():
        if log is not None:
            log(f"bench --shapes: sparse {name}, n = {sparse_n}")
        A = shape_weights(name, sparse_n, sparse=True)
        f = best(lambda r: minimum_spanning_tree(A))
        res["sparse"][name] = {d: (best(lambda r: release(A, d, r)), f) for d in levels}
    return res


def format_shapes(res):
    """Render :func:`run_shapes_bench`'s result: one row per shape, seconds and the ratio.

    With one sensitivity: the release's seconds, the baseline's and the ratio; with
    several, the baseline's seconds and one ratio column per sensitivity.
    """
    levels = res["sensitivities"]
    what = (f"sensitivity = {levels[0]}" if len(levels) == 1
            else "sensitivity = " + " / ".join(f"{d:g}" for d in levels))
    lines = [f'fast_pamst(noise="exponential"), rho = {res["rho"]}, {what}, '
             f'minimum of {res["repeat"]} run(s)']
    for part, size, base, unit in (("dense", res["n"], "floor", "x floor"),
                                   ("sparse", res["sparse_n"], "scipy MST", "x scipy")):
        if not res[part]:
            continue
        if len(levels) == 1:
            rows = [[f"{part}, n = {size}", "fast_pamst", base, unit]]
            for name, by_level in res[part].items():
                t, f = by_level[levels[0]]
                rows.append([SHAPES[name][0], f"{t:.3f}s", f"{f:.3f}s", f"{t / f:.1f}x"])
        else:
            rows = [[f"{part}, n = {size}", base, *(f"{unit}, {d:g}" for d in levels)]]
            for name, by_level in res[part].items():
                f = by_level[levels[0]][1]
                rows.append([SHAPES[name][0], f"{f:.3f}s",
                             *(f"{by_level[d][0] / f:.1f}x" for d in levels)])
        lines.append(align_table(rows))
    return "\n".join(lines)
