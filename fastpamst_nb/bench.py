"""Wall-clock benchmark of every algorithm on the paper's default problem.

The problem is a complete graph whose weights are i.i.d. Uniform(0, 1), with
rho = 0.1 and sensitivity = 1e-5 (the setting of docs/user_guide.rst, Speed). All
algorithms run in one process on the same matrices, after the JIT kernels have
been compiled (or loaded from the numba cache), so the numbers are steady-state
times. ``exact_mst`` is the floor: no in-place algorithm can beat one dense Prim.
"""

import math
import statistics
import time

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree

from . import api, privacy
from .core import require_memory

RHO = 0.1
SENSITIVITY = 1e-5
# PAMST redraws noise for every cut edge at every step, O(n^3): beyond this it takes minutes
PAMST_MAX_N = 1500
ALGORITHMS = ("exact_mst", "fast_pamst", "fast_pamst_gumbel", "post_processing", "pamst", "numpy+scipy")


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


def _runners():
    """Name -> callable(W, seed) returning the released tree's weight."""
    kw = {"rho": RHO, "sensitivity": SENSITIVITY}
    return {
        "exact_mst": lambda W, seed: api.exact_mst(W).weight,
        "fast_pamst": lambda W, seed: api.fast_pamst(W, rng=seed, **kw).weight,
        "fast_pamst_gumbel": lambda W, seed: api.fast_pamst(W, rng=seed, noise="gumbel", **kw).weight,
        "post_processing": lambda W, seed: api.post_processing(W, rng=seed, **kw).weight,
        "pamst": lambda W, seed: api.pamst(W, rng=seed, **kw).weight,
        "numpy+scipy": lambda W, seed: numpy_scipy_mst(W, RHO, SENSITIVITY, seed),
    }


def warm_up():
    """Compile (or load from the numba cache) every kernel on a 16-vertex graph."""
    W = uniform_weights(16, seed=0)
    for run in _runners().values():
        run(W, 0)


def loglog_slope(ns, seconds):
    """Least-squares slope of log(seconds) against log(n); None with fewer than 2 sizes."""
    if len(ns) < 2:
        return None
    slope, _ = np.polyfit(np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(seconds, dtype=float)), 1)
    return float(slope)


def run_bench(ns=(1000, 2000, 4000, 8000), repeat=3, log=None):
    """Time every algorithm on Uniform(0, 1) complete graphs of each size.

    Parameters
    ----------
    ns : sequence of int
        Graph sizes (vertices).
    repeat : int
        Runs per algorithm and size; the median is reported.
    log : callable(str), optional
        Receives one progress line per size (the CLI prints them to stderr).

    Returns
    -------
    dict
        ``{"seconds": {n: {algorithm: median seconds}}, "fast_pamst_slope": float or None,
        "rho": ..., "sensitivity": ..., "repeat": ...}``. ``pamst`` is absent for
        n > 1500 (it is O(n^3)).
    """
    ns = [int(n) for n in ns]
    if not ns or min(ns) < 2:
        raise ValueError(f"every --n must be at least 2, got {ns}")
    repeat = int(repeat)
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    warm_up()
    runners = _runners()
    seconds = {}
    for n in ns:
        if log is not None:
            log(f"bench: n = {n} ({repeat} run(s) per algorithm)")
        W = uniform_weights(n, seed=n)
        row = {}
        for name, run in runners.items():
            if name == "pamst" and n > PAMST_MAX_N:
                continue
            times = []
            for r in range(repeat):
                t0 = time.perf_counter()
                run(W, r)
                times.append(time.perf_counter() - t0)
            row[name] = statistics.median(times)
        seconds[n] = row
        del W
    slope = loglog_slope(ns, [seconds[n]["fast_pamst"] for n in ns])
    return {"seconds": seconds, "fast_pamst_slope": slope, "rho": RHO,
            "sensitivity": SENSITIVITY, "repeat": repeat}


def to_json(result):
    """The JSON document of ``fastpamst bench --json``: ``{"n": {algorithm: seconds}}`` plus the slope."""
    doc = {str(n): dict(row) for n, row in result["seconds"].items()}
    doc["fast_pamst_slope"] = result["fast_pamst_slope"]
    return doc


def align_table(rows):
    """Join rows of strings into aligned text: first column left-aligned, the others right-aligned."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])])
                     for r in rows)


def format_table(result):
    """Render :func:`run_bench`'s result as an aligned text table.

    One row per algorithm, one column per n, each cell ``seconds (ratio to exact_mst)``,
    followed by the log-log slope of fast_pamst's time.
    """
    seconds = result["seconds"]
    ns = list(seconds)
    header = ["algorithm"] + [f"n={n}" for n in ns]
    rows = [header]
    for name in ALGORITHMS:
        cells = [name]
        for n in ns:
            t = seconds[n].get(name)
            if t is None:
                cells.append("skipped")
            else:
                cells.append(f"{t:.4f}s ({t / seconds[n]['exact_mst']:.1f}x)")
        rows.append(cells)
    lines = [f"rho = {result['rho']}, sensitivity = {result['sensitivity']}, "
             f"median of {result['repeat']} run(s); ratio = time / exact_mst time",
             align_table(rows)]
    if any("pamst" not in seconds[n] for n in ns):
        lines.append(f"pamst skipped for n > {PAMST_MAX_N}: it is O(n^3)")
    slope = result["fast_pamst_slope"]
    if slope is not None and math.isfinite(slope):
        lines.append(f"fast_pamst time ~ n^{slope:.2f} (least squares on log t vs log n, "
                     f"n = {min(ns)}..{max(ns)})")
    return "\n".join(lines)
