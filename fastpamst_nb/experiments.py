"""Reproducible experiment sweeps: the paper's Figures 1 and 2 as data, plots and PNGs.

:func:`run_sweep` runs every combination algorithm x n x rho x sensitivity x seed
on complete graphs with i.i.d. Uniform(0, 1) weights and returns a *tidy* table:
a list of dicts, one per run, with the keys of :data:`COLUMNS`

======================  ===================================================================
``algorithm``           one of :data:`ALGORITHMS`
``n``                   number of vertices
``rho``                 zCDP budget
``sensitivity``         l_inf sensitivity Delta (Fast-PAMST's step: the paper's s = Delta, or the
                        library's default for the ``*_default`` algorithms)
``seed``                seed of the weight matrix (the noise seed is derived from it)
``seconds``             wall-clock time of the algorithm call alone (``time.perf_counter``)
``weight``              true (un-noised) weight of the released tree
``excess``              ``weight`` minus the exact MST weight (>= 0 up to rounding)
``bound``               the high-probability upper bound on ``excess`` (:func:`utility_bound`;
                        NaN where none is computed)
======================  ===================================================================

Every run is one task, the picklable top-level function :func:`run_task`: it
builds its own matrix from its seed with :func:`fastpamst_nb.bench.uniform_weights`,
so nothing large is shipped to a worker, and it compiles (or loads from the
numba cache) every kernel on a tiny matrix once per process before it times
anything. ``run_sweep(..., executor=ex)`` accepts any
:class:`concurrent.futures.Executor`: a ``ProcessPoolExecutor``, or a Dask
cluster through ``distributed.Client(...).get_executor()``, unchanged.

The table needs no pandas: :func:`rows_to_columns` turns it into numpy columns,
:func:`summarize` computes median / min / max per algorithm and n, and
:func:`to_dataframe` returns a ``pandas.DataFrame`` when pandas is installed.
:func:`plot_figure1` and :func:`plot_figure2` draw the paper's figures
(matplotlib is imported only when they are called), and
:func:`save_readme_figures` runs both sweeps and writes ``figure1.png`` and
``figure2.png``.

``"post_processing_paper"`` reproduces the paper's experimental calibration of
Gaussian post-processing, sigma^2 = n^2 Delta / (2 rho) (docs/errata.rst, erratum 2). It is
**not a correct privacy calibration** (for Delta < 1 it adds far *more* noise than
needed, for Delta > 1 far less) and exists only to reproduce the paper's plots;
``"post_processing"`` is the correctly calibrated mechanism.
"""

import concurrent.futures
import math
import os
import statistics
import time

import numpy as np

from . import api, privacy, registry
from .bench import loglog_slope, uniform_weights

# the figures' lines, from the one registry (registry.SERIES): Fast-PAMST as the paper ran
# it (step s = Delta) and at the library's default step (privacy.default_discretization:
# the largest power of two at most Delta / 16)
ALGORITHMS = tuple(registry.SERIES)
FAST = tuple(name for name, series in registry.SERIES.items() if series.algorithm in registry.names_of("api.fast_pamst"))
COLUMNS = ("algorithm", "n", "rho", "sensitivity", "seed", "seconds", "weight", "excess", "bound")
LABELS = {name: series.label for name, series in registry.SERIES.items()}
STYLES = {name: series.style for name, series in registry.SERIES.items()}
# the quick-mode switch every notebook honours
QUICK_ENV = "FASTPAMST_QUICK"

# sweeps behind the two figures: (algorithms, ns, seeds, max_n); PAMST is O(n^3), so it stops early
FIGURE1 = {
    "full": {"algorithms": FAST + ("pamst", "post_processing",
                            "post_processing_paper", "exact"),
             "ns": (50, 100, 200, 400, 800, 1200), "seeds": tuple(range(5)), "max_n": {"pamst": 1200}},
    "quick": {"algorithms": FAST + ("pamst", "post_processing",
                             "post_processing_paper", "exact"),
              "ns": (30, 60, 120, 200), "seeds": (0, 1), "max_n": {"pamst": 200}},
}
FIGURE2 = {
    "full": {"algorithms": FAST + ("post_processing", "post_processing_paper",
                            "exact"),
             "ns": (30, 100, 300, 1000, 2000, 3000, 4000, 5000, 6000), "seeds": tuple(range(5)), "max_n": None},
    "quick": {"algorithms": FAST + ("post_processing", "post_processing_paper",
                             "exact"),
              "ns": (30, 100, 200), "seeds": (0, 1), "max_n": None},
}

_WARM = False


def quick_mode():
    """True when the environment variable ``FASTPAMST_QUICK`` is set to a true value (1, yes, true)."""
    return os.environ.get(QUICK_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def figure_config(figure, quick=None):
    """Sweep parameters of figure 1 or 2 as keyword arguments of :func:`run_sweep`.

    ``quick=None`` follows :func:`quick_mode`. Returns a dict with ``algorithms``,
    ``ns``, ``seeds`` and ``max_n``.
    """
    table = {1: FIGURE1, 2: FIGURE2}[int(figure)]
    if quick is None:
        quick = quick_mode()
    return dict(table["quick" if quick else "full"])


# ----------------------------------------------------------------------------- bound

def utility_bound(n, rho, sensitivity, *, noise="exponential", discretization=None, mu=None):
    """High-probability upper bound on Fast-PAMST's excess weight (paper, Thm. main, utility).

    With probability at least 1 - mu, a tree released by ``fast_pamst`` satisfies
    ``w_T - w_T* <= B`` with::

        B = (n - 1) * ( s + ln( (n - 1) * floor(n^2 / 4) / mu ) / lam )

    where ``lam = fastpamst_nb.privacy.fast_pamst_rate(rho, Delta, n, s, noise)``,
    i.e. lam = sqrt(2 rho / (n-1)) / (2 (Delta + s)) for exponential noise, s defaults to
    Delta and mu defaults to 1/n (the paper's "mu polynomial in 1/n").
    ``noise="gumbel"`` (the exact MST of w - G / lam, lam = ``privacy.gumbel_rate``, no
    discretization) has ``B = (n - 1) (ln(2 m / mu) + ln ln(2 (n - 1) / mu)) / lam``,
    m = n (n - 1) / 2: every Gumbel of the graph at most ln(2 m / mu) and every one of
    the MST's edges at least -ln ln(2 (n - 1) / mu), each with probability 1 - mu / 2.

    Derivation (the paper's proof, redone with our n - 1 accounting):

    * per step, with scores s*floor(-w/s) in (-w - s, -w], the selected cut edge
      e and the lightest cut edge e* satisfy w(e) < w(e*) + s + X, where X is the
      largest of the C <= floor(n^2/4) noises of the cut (exponential noise; for the
      exponential mechanism P(score(e) <= max - x) <= C exp(-lam x) gives the same
      form), and P(X >= x) <= C exp(-lam x);
    * a union bound over the n - 1 steps with failure mu / (n - 1) each gives
      x = ln(C (n - 1) / mu) / lam per step;
    * if every Prim step is within gamma_k of the lightest cut edge, then
      w_T <= w_T* + sum_k gamma_k (Pinot 2018).

    For comparison the paper writes 4 (n-1) Delta sqrt(n / (2 rho)) log(n^2 / mu), which
    is (n - 1) log(n^2 / mu) / lam with its lam = sqrt(2 rho) / (4 sqrt(n) Delta). Ours
    uses n - 1 (the number of selections) under the square root, writes the union
    bound's logarithm out in full (ln(n^2 (n-1) / (4 mu)) instead of ln(n^2 / mu),
    about 1.3x larger) and adds the rounding term s per step. With s = Delta the
    leading term is 4 (n-1) Delta sqrt((n-1) / (2 rho)) ln(...), as in the paper.

    Returns
    -------
    float
        The bound B (weights' units); 0.0 for n < 2.
    """
    n = int(n)
    if n < 2:
        return 0.0
    mu = 1.0 / n if mu is None else float(mu)
    if noise == "gumbel":
        # the exact MST T' of w - G / lam against the MST T*: w(T') - w(T*) <= (G(T') - G(T*)) / lam
        # <= (n - 1) (x + y) / lam when every G_e <= x and every G of T* >= -y; a union bound
        # with mu / 2 each: m exp(-x) = mu / 2, (n - 1) exp(-exp(y)) = mu / 2
        if discretization is not None:
            raise ValueError("noise='gumbel' has no discretization; drop discretization=")
        lam = privacy.gumbel_rate(rho, sensitivity, n)
        m = n * (n - 1) // 2
        return (n - 1) * (math.log(2 * m / mu) + math.log(math.log(2 * (n - 1) / mu))) / lam
    s = privacy.default_discretization(sensitivity) if discretization is None else discretization
    lam = privacy.fast_pamst_rate(rho, sensitivity, n, s, noise)
    cut = (n * n) // 4
    return (n - 1) * (s + math.log((n - 1) * cut / mu) / lam)


def _fast_settings(algorithm, sensitivity):
    """(noise, discretization) of a FAST series (registry.SERIES): the paper's experiments
    ran Fast-PAMST at s = Delta, the "_default" series at the library's finer default step (None)."""
    options = registry.resolved_options(registry.SERIES[algorithm].options, sensitivity)
    return options["noise"], options.get("discretization")


def _bound(algorithm, n, rho, sensitivity):
    if algorithm not in FAST:
        return math.nan
    noise, step = _fast_settings(algorithm, sensitivity)
    return utility_bound(n, rho, sensitivity, noise=noise, discretization=step)


# ----------------------------------------------------------------------------- one run

def post_processing_paper(W, rho, sensitivity, rng=None):
    """Gaussian post-processing with the paper's experimental calibration. NOT private-correct.

    Adds N(0, sigma^2) with sigma = ``privacy.paper_gaussian_sigma(rho, sensitivity, n)``
    = sqrt(n^2 Delta / (2 rho)) to every edge once (upper triangle, mirrored), runs
    the exact MST on the noisy matrix and releases those edges. The correct sigma is
    Delta sqrt(m / (2 rho)) (``fastpamst_nb.post_processing``); this one exists only to
    reproduce the paper's Figures 1 and 2 (docs/errata.rst, erratum 2).

    Parameters
    ----------
    W : ndarray (n, n)
        Symmetric dense weights.
    rho, sensitivity : float
    rng : None, int, numpy.random.SeedSequence, BitGenerator or Generator (SPEC 7)

    Returns
    -------
    SpanningTree
        Edges chosen on the noisy matrix, with their *true* weights from ``W``.
    """
    from .tree import SpanningTree

    W = np.asarray(W, dtype=np.float64)
    n = W.shape[0]
    gen = np.random.default_rng(rng)
    sigma = privacy.paper_gaussian_sigma(rho, sensitivity, n)
    noisy = np.zeros((n, n))
    for i in range(n - 1):
        noisy[i, i + 1:] = W[i, i + 1:] + gen.normal(0.0, sigma, n - i - 1)
    noisy += noisy.T  # numpy buffers the overlapping transpose
    edges = api.exact_mst(noisy).edges
    del noisy
    info = {"rho": rho, "sensitivity": sensitivity, "sigma": sigma, "calibration": "paper (not private-correct)"}
    return SpanningTree(edges, W[edges[:, 0], edges[:, 1]], n, "post_processing_paper", info)


def _call(algorithm, W, rho, sensitivity, rng):
    return registry.release(algorithm, W, rho=rho, sensitivity=sensitivity, rng=rng)


def _weights_of(weights, n, seed):
    if weights == "uniform":
        return uniform_weights(n, seed)
    if callable(weights):
        return np.asarray(weights(n, seed), dtype=np.float64)
    raise ValueError(f"weights must be 'uniform' or a picklable callable (n, seed) -> (n, n) array, got {weights!r}")


def warm_up():
    """Compile (or load from the numba cache) every algorithm's kernels, once per process."""
    global _WARM
    if _WARM:
        return
    W = uniform_weights(16, seed=0)
    for algorithm in ALGORITHMS:
        _call(algorithm, W, 0.1, 1e-5, 0)
    _WARM = True


def noise_seed(seed, n):
    """The noise generator of run (n, seed): ``default_rng([seed, n])``.

    Independent of the matrix's stream ``default_rng(seed)`` (a different
    SeedSequence entropy), so data and noise never share random numbers, and the
    same for every algorithm (common random numbers across algorithms).
    """
    return np.random.default_rng([int(seed), int(n)])


def run_task(algorithm, n, seed, rho=0.1, sensitivity=1e-5, weights="uniform"):
    """One run of the sweep; a picklable top-level function for any executor.

    Builds the matrix ``uniform_weights(n, seed)`` (or ``weights(n, seed)``), warms
    the JIT up once per process, times only the algorithm call, and returns one
    row (a dict with the keys of :data:`COLUMNS`).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    warm_up()
    n = int(n)
    W = _weights_of(weights, n, seed)
    rng = noise_seed(seed, n)
    t0 = time.perf_counter()
    tree = _call(algorithm, W, rho, sensitivity, rng)
    seconds = time.perf_counter() - t0
    best = tree.weight if algorithm == "exact" else api.exact_mst(W).weight
    return {"algorithm": algorithm, "n": n, "rho": float(rho), "sensitivity": float(sensitivity),
            "seed": int(seed), "seconds": float(seconds), "weight": float(tree.weight),
            "excess": float(tree.weight - best), "bound": float(_bound(algorithm, n, rho, sensitivity))}


# ----------------------------------------------------------------------------- sweep

def _as_list(x):
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        return [x]
    return list(x)


def _progress_bar(total, enabled, desc):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional: no bar
        return None
    return tqdm(total=total, desc=desc)


def run_sweep(algorithms, ns, seeds, rho=0.1, sensitivity=1e-5, *, executor=None, progress=True,
              weights="uniform", max_n=None):
    """Run every algorithm x n x rho x sensitivity x seed and return the tidy table.

    Parameters
    ----------
    algorithms : str or sequence of str
        Names from :data:`ALGORITHMS`.
    ns : int or sequence of int
        Graph sizes (complete graphs on n vertices).
    seeds : int or sequence of int
        Seeds; run (n, seed) uses the matrix ``uniform_weights(n, seed)`` and the
        noise generator :func:`noise_seed` ``(seed, n)``, whatever the executor.
    rho, sensitivity : float or sequence of float
        zCDP budgets and l_inf sensitivities (sequences are swept too).
    executor : concurrent.futures.Executor, optional
        Runs the tasks (e.g. ``ProcessPoolExecutor`` or a Dask ``Client.get_executor()``);
        None runs them one after the other in this process. Each task ships only
        its parameters and builds its own matrix. Weights and excess do not
        depend on the executor; times do (tasks running side by side share the
        machine), so time comparisons are best made serially.
    progress : bool
        Show a ``tqdm.auto`` progress bar (silently off when tqdm is not installed).
    weights : "uniform" or callable
        ``"uniform"`` (i.i.d. Uniform(0, 1), the paper's setting) or a picklable
        top-level function ``(n, seed) -> (n, n)`` symmetric array.
    max_n : dict, optional
        Largest n per algorithm, e.g. ``{"pamst": 1200}`` (PAMST is O(n^3)).

    Returns
    -------
    list of dict
        One row per run with the keys of :data:`COLUMNS`, in the order
        algorithm, n, rho, sensitivity, seed (independent of completion order).
    """
    algorithms = _as_list(algorithms)
    for a in algorithms:
        if a not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {a!r}; choose from {', '.join(ALGORITHMS)}")
    max_n = dict(max_n or {})
    tasks = [(a, int(n), int(seed), float(r), float(d), weights)
             for a in algorithms
             for n in _as_list(ns) if int(n) <= max_n.get(a, math.inf)
             for r in _as_list(rho)
             for d in _as_list(sensitivity)
             for seed in _as_list(seeds)]
    bar = _progress_bar(len(tasks), progress, "fastpamst sweep")
    rows = [None] * len(tasks)
    try:
        if executor is None:
            for i, task in enumerate(tasks):
                rows[i] = run_task(*task)
                if bar is not None:
                    bar.update(1)
        else:
            futures = {executor.submit(run_task, *task): i for i, task in enumerate(tasks)}
            for fut in concurrent.futures.as_completed(futures):
                rows[futures[fut]] = fut.result()
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rows


# ----------------------------------------------------------------------------- tables

def rows_to_columns(rows):
    """The table as ``{column: numpy array}`` (strings for ``algorithm``), no pandas needed."""
    rows = list(rows)
    keys = list(COLUMNS) + [k for k in (rows[0] if rows else {}) if k not in COLUMNS]
    return {k: np.array([r[k] for r in rows]) for k in keys}


def to_dataframe(rows):
    """The table as a ``pandas.DataFrame`` (needs pandas, which is not a dependency)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_dataframe() needs pandas (python -m pip install pandas); "
                          "rows_to_columns() gives numpy columns without it") from None
    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def summarize(rows):
    """Median, min and max of seconds, weight and excess per (algorithm, n, rho, sensitivity).

    Returns
    -------
    list of dict
        Keys ``algorithm, n, rho, sensitivity, runs`` and ``seconds_median``,
        ``seconds_min``, ``seconds_max`` (likewise ``weight_*`` and ``excess_*``),
        plus ``bound`` (the bound of that n, NaN if none); sorted by algorithm
        (in :data:`ALGORITHMS` order), rho, sensitivity, n.
    """
    groups = {}
    for r in rows:
        groups.setdefault((r["algorithm"], r["n"], r["rho"], r["sensitivity"]), []).append(r)
    order = {a: i for i, a in enumerate(ALGORITHMS)}
    out = []
    for (a, n, rho, d), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][0],
                                                                     kv[0][2], kv[0][3], kv[0][1])):
        s = {"algorithm": a, "n": n, "rho": rho, "sensitivity": d, "runs": len(rs)}
        for col in ("seconds", "weight", "excess"):
            vals = [r[col] for r in rs]
            s[col + "_median"] = float(statistics.median(vals))
            s[col + "_min"] = float(min(vals))
            s[col + "_max"] = float(max(vals))
        bounds = [r["bound"] for r in rs if not math.isnan(r["bound"])]
        s["bound"] = float(statistics.median(bounds)) if bounds else math.nan
        out.append(s)
    return out


def series(summary, algorithm, column, rho=None, sensitivity=None):
    """(ns, values) of one column of :func:`summarize` for one algorithm, sorted by n.

    ``column`` is e.g. ``"excess_median"`` or ``"seconds_max"``; rho and sensitivity
    select one setting when the sweep has several (default: the first one seen).
    """
    sel = [s for s in summary if s["algorithm"] == algorithm]
    if sel:
        rho = sel[0]["rho"] if rho is None else rho
        sensitivity = sel[0]["sensitivity"] if sensitivity is None else sensitivity
        sel = [s for s in sel if s["rho"] == rho and s["sensitivity"] == sensitivity]
    sel.sort(key=lambda s: s["n"])
    return np.array([s["n"] for s in sel], dtype=float), np.array([s[column] for s in sel], dtype=float)


def slope(summary, algorithm, column="seconds_median", n_min=0):
    """Least-squares log-log slope of ``column`` against n over the sizes n >= n_min.

    Non-positive values are left out; None with fewer than two usable sizes.
    """
    ns, vals = series(summary, algorithm, column)
    keep = (ns >= n_min) & (vals > 0)
    return loglog_slope(ns[keep], vals[keep])


def format_table(summary, columns=("seconds_median", "excess_median", "excess_min", "excess_max", "bound")):
    """Aligned text table of :func:`summarize`'s output (one line per algorithm and n)."""
    header = ["algorithm", "n"] + list(columns)
    lines = [header]
    for s in summary:
        lines.append([s["algorithm"], str(s["n"])] + [f"{s[c]:.4g}" for c in columns])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join([line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:])])
                     for line in lines)


# ----------------------------------------------------------------------------- plots

def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: python -m pip install matplotlib") from None
    return plt


def _positive(values):
    v = np.asarray(values, dtype=float).copy()
    v[~(v > 0)] = np.nan  # log axes cannot show 0
    return v


def _panel(ax, summary, algorithms, column, ylabel, title, bound_for=()):
    data = []
    for a in algorithms:
        ns, med = series(summary, a, column + "_median")
        if ns.size:
            data.append((a, ns, med, series(summary, a, column + "_min")[1], series(summary, a, column + "_max")[1]))
    positive = [v for _, _, med, lo, hi in data for v in np.concatenate([med, lo, hi]) if v > 0]
    # zeros cannot be drawn on a log axis: bands are clipped a little below the smallest positive value
    floor = min(positive) / 3 if positive else 1e-12
    for a, ns, med, lo, hi in data:
        style = dict(STYLES.get(a, {}))
        ax.plot(ns, _positive(med), label=LABELS.get(a, a), markersize=4, **style)
        show = hi > 0
        if np.any(show):
            ax.fill_between(ns[show], np.maximum(lo[show], floor), hi[show], color=style.get("color"),
                            alpha=0.15, linewidth=0)
    for a in bound_for:
        ns, b = series(summary, a, "bound")
        if ns.size and np.any(np.isfinite(b)):
            ax.plot(ns, b, color=STYLES[a]["color"], linestyle="-.", linewidth=1,
                    label=f"bound, {LABELS[a]} (w.p. 1 - 1/n)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (vertices)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)


def _random_tree_line(ax, summary):
    ns = sorted({s["n"] for s in summary})
    if ns:
        ns = np.array(ns, dtype=float)
        ax.plot(ns, (ns - 1) / 2, color="0.6", linestyle=":", linewidth=1, label="(n-1)/2: a random tree")


def _figure(rows, path, time_algorithms, error_algorithms, bound_for, suptitle):
    plt = _pyplot()
    summary = summarize(rows)
    present = {s["algorithm"] for s in summary}
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(13, 6.6))
    _panel(ax_t, summary, [a for a in time_algorithms if a in present], "seconds", "seconds (algorithm call only)",
           "running time: median, min-max band")
    _panel(ax_e, summary, [a for a in error_algorithms if a in present], "excess",
           "excess weight  w(T) - w(T*)", "excess weight: median, min-max band",
           bound_for=[a for a in bound_for if a in present])
    _random_tree_line(ax_e, summary)
    for ax in (ax_t, ax_e):
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    some = summary[0] if summary else {"rho": math.nan, "sensitivity": math.nan}
    runs = max((s["runs"] for s in summary), default=0)
    fig.suptitle(f"{suptitle}: complete graph, w_e ~ Uniform(0,1), rho = {some['rho']:g}, "
                 f"sensitivity = {some['sensitivity']:g}, {runs} seeds", fontsize=11)
    fig.tight_layout()
    if path is not None:
        fig.savefig(os.fspath(path), dpi=110, bbox_inches="tight")
    return fig


# the private algorithms both figures draw, in legend order
_PLOTTED = FAST + ("pamst", "post_processing", "post_processing_paper")


def plot_figure1(rows, path=None):
    """The paper's Figure 1: runtime and excess weight vs n (log-log), median and min-max band.

    Draws every algorithm present in ``rows`` (exact only on the time panel, as
    the floor) and Fast-PAMST's high-probability bound on the error panel.
    Saves a PNG when ``path`` is given; returns the matplotlib Figure.
    """
    return _figure(rows, path, _PLOTTED + ("exact",), _PLOTTED, ("fast_pamst",), "Figure 1")


def plot_figure2(rows, path=None):
    """The paper's Figure 2: Fast-PAMST on large graphs with the theorem's upper bound.

    Same layout as :func:`plot_figure1`; the error panel shows the bound for
    both noises of Fast-PAMST and the (n-1)/2 error of a random tree.
    """
    return _figure(rows, path, _PLOTTED + ("exact",), _PLOTTED, ("fast_pamst", "fast_pamst_gumbel"),
                   "Figure 2")


def save_readme_figures(directory, quick=False, *, executor=None, progress=False):
    """Run both sweeps (:data:`FIGURE1`, :data:`FIGURE2`) and write figure1.png and figure2.png.

    Returns
    -------
    dict
        ``{"figure1": path, "figure2": path, "rows1": rows, "rows2": rows}``.
    """
    os.makedirs(directory, exist_ok=True)
    rows1 = run_sweep(executor=executor, progress=progress, **figure_config(1, quick))
    rows2 = run_sweep(executor=executor, progress=progress, **figure_config(2, quick))
    p1 = os.path.join(directory, "figure1.png")
    p2 = os.path.join(directory, "figure2.png")
    plt = _pyplot()
    plt.close(plot_figure1(rows1, p1))
    plt.close(plot_figure2(rows2, p2))
    return {"figure1": p1, "figure2": p2, "rows1": rows1, "rows2": rows2}
