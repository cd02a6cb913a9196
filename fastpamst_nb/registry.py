"""The one list of the algorithms: name -> function, label, plot style, default options.

The command line (:mod:`fastpamst_nb.cli`), the benchmark (:mod:`fastpamst_nb.bench`),
the experiments behind the paper's figures (:mod:`fastpamst_nb.experiments`), the
asv suite and the docs scripts all read this module instead of keeping lists of
their own.

Three tables, one concept each:

- :data:`ALGORITHMS`: the algorithms themselves (one entry per released mechanism;
  ``"exact"`` is :func:`fastpamst_nb.exact_mst`, the only name it has here).
- :data:`SERIES`: the lines of the paper's figures (:mod:`fastpamst_nb.experiments`),
  each an algorithm run with fixed options (``"fast_pamst"`` there is Fast-PAMST at the
  paper's step s = Delta, ``"fast_pamst_default"`` at the library's default step).
- :data:`BENCH_CASES`: the cases ``fastpamst bench`` times, each an algorithm with
  fixed options on the weights times a factor (the floor and numpy+scipy baselines
  are :mod:`fastpamst_nb.bench`'s own functions).

:func:`release` runs any name of :data:`ALGORITHMS` or :data:`SERIES` with its options.
"""

import importlib
from collections import namedtuple

# discretization options that stand for a step relative to the sensitivity Delta:
# s = Delta (the paper's step) and s = Delta / 16
STEP_IS_SENSITIVITY = "sensitivity"
STEP_IS_SENSITIVITY_16 = "sensitivity/16"

Algorithm = namedtuple("Algorithm", ["function", "label", "style", "options", "private", "cli"])
Algorithm.__doc__ = """One algorithm.

function : str, "module.attribute" inside fastpamst_nb (resolved when run, so an
    algorithm defined in a module that imports this one registers without a cycle).
label, style : str and dict, its legend text and matplotlib keywords in the figures.
options : dict, the keywords it runs with unless the caller gives them.
private : bool, whether it takes a privacy budget (rho, sensitivity, rng).
cli : bool, whether ``fastpamst run --algorithm`` offers it.
"""

ALGORITHMS = {
    "fast_pamst": Algorithm("api.fast_pamst", "Fast-PAMST", {"color": "C0", "marker": "o"},
                            {"noise": "exponential"}, True, True),
    # fast_pamst with noise="gumbel" under a name of its own (the CLI's alias, a figure line)
    "fast_pamst_gumbel": Algorithm("api.fast_pamst", "noise='gumbel' (exponential mechanism, no discretization)",
                                   {"color": "C2", "marker": "D"}, {"noise": "gumbel"}, True, True),
    "pamst": Algorithm("api.pamst", "PAMST", {"color": "C1", "marker": "s"}, {"noise": "exponential"}, True, True),
    "post_processing": Algorithm("api.post_processing", "Post-processing (correct sigma)",
                                 {"color": "C3", "marker": "^"}, {}, True, True),
    "post_processing_paper": Algorithm("experiments.post_processing_paper",
                                       "Post-processing, paper's sigma (NOT private-correct)",
                                       {"color": "C3", "marker": "v", "linestyle": "--"}, {}, True, False),
    "exact": Algorithm("api.exact_mst", "Exact MST (not private)", {"color": "0.4", "marker": ".", "linestyle": ":"},
                       {}, False, True),
}

Series = namedtuple("Series", ["algorithm", "label", "style", "options"])
Series.__doc__ = "A line of the figures: ``algorithm`` (a key of ALGORITHMS) run with ``options``."

_DASHED = {"linestyle": "--", "markerfacecolor": "none"}


def _series(algorithm, label=None, style=None, **options):
    entry = ALGORITHMS[algorithm]
    return Series(algorithm, label or entry.label, style or entry.style, {**entry.options, **options})


SERIES = {
    "fast_pamst": _series("fast_pamst", "Fast-PAMST (paper's step s = Delta)",
                          discretization=STEP_IS_SENSITIVITY),
    "fast_pamst_gumbel": _series("fast_pamst_gumbel"),
    "fast_pamst_default": _series("fast_pamst", "Fast-PAMST, library default step (Delta/16)",
                                  {**ALGORITHMS["fast_pamst"].style, **_DASHED}),
    "fast_pamst_gumbel_default": _series("fast_pamst_gumbel", "noise='gumbel' (the same release: no step)",
                                         {**ALGORITHMS["fast_pamst_gumbel"].style, **_DASHED}),
    "pamst": _series("pamst"),
    "post_processing": _series("post_processing"),
    "post_processing_paper": _series("post_processing_paper"),
    "exact": _series("exact"),
}

BenchCase = namedtuple("BenchCase", ["algorithm", "options", "scale"])
BenchCase.__doc__ = ("A case of ``fastpamst bench``: ``algorithm`` (a key of ALGORITHMS) with ``options`` "
                     "(over its own) on the weights times ``scale``.")

# "W*1000" and "W*1e6" run on the weights times that factor (the same sensitivity: 1000x and
# 10**6x more distinct keys), "s=D/16" at discretization sensitivity / 16 (gumbel has no
# discretization: its fourth case is "D=0.1", sensitivity 0.1, an honest noise level for real
# data). "exact_mst" is the bench's (user-facing) name of "exact".
BENCH_CASES = {
    "exact_mst": BenchCase("exact", {}, 1.0),
    "fast_pamst": BenchCase("fast_pamst", {}, 1.0),
    "fast_pamst_gumbel": BenchCase("fast_pamst_gumbel", {}, 1.0),
    "fast_pamst W*1000": BenchCase("fast_pamst", {}, 1e3),
    "fast_pamst_gumbel W*1000": BenchCase("fast_pamst_gumbel", {}, 1e3),
    "fast_pamst W*1e6": BenchCase("fast_pamst", {}, 1e6),
    "fast_pamst_gumbel W*1e6": BenchCase("fast_pamst_gumbel", {}, 1e6),
    "fast_pamst s=D/16": BenchCase("fast_pamst", {"discretization": STEP_IS_SENSITIVITY_16}, 1.0),
    "fast_pamst_gumbel D=0.1": BenchCase("fast_pamst_gumbel", {"sensitivity": 0.1}, 1.0),
    "post_processing": BenchCase("post_processing", {}, 1.0),
    "pamst": BenchCase("pamst", {}, 1.0),
}


def cli_names():
    """The names ``fastpamst run --algorithm`` accepts, in the registry's order."""
    return tuple(name for name, entry in ALGORITHMS.items() if entry.cli)


def names_of(function):
    """The names of ALGORITHMS that run ``function`` (e.g. ``"api.fast_pamst"``)."""
    return tuple(name for name, entry in ALGORITHMS.items() if entry.function == function)


def function(name):
    """The callable of algorithm ``name`` (a key of ALGORITHMS)."""
    module, attribute = ALGORITHMS[name].function.rsplit(".", 1)
    return getattr(importlib.import_module(f"fastpamst_nb.{module}"), attribute)


def resolved_options(options, sensitivity):
    """Options with the symbolic steps (s = Delta, s = Delta / 16) made numbers."""
    step = options.get("discretization")
    if step == STEP_IS_SENSITIVITY:
        return {**options, "discretization": sensitivity}
    if step == STEP_IS_SENSITIVITY_16:
        return {**options, "discretization": sensitivity / 16}
    return options


def release(name, W, rho=None, sensitivity=None, rng=None, **options):
    """Run algorithm or figure series ``name`` on ``W`` with its default options.

    Parameters
    ----------
    name : str
        A key of :data:`SERIES` (which covers every key of :data:`ALGORITHMS`).
    W : array_like or scipy.sparse matrix
        The weights (any form the algorithm takes).
    rho, sensitivity, rng :
        The privacy budget (zCDP), the l_inf sensitivity and the seed; ignored by an
        algorithm that is not private (``"exact"``).
    **options :
        Keywords over the series' own options (a ``sensitivity`` among them replaces
        the argument).

    Returns
    -------
    SpanningTree
    """
    if name not in SERIES:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(SERIES)}")
    series = SERIES[name]
    return _run(series.algorithm, {**series.options, **options}, W, rho, sensitivity, rng)


def bench_release(case, W, rho, sensitivity, rng):
    """Run benchmark case ``case`` (a key of :data:`BENCH_CASES`) on ``W`` (already scaled)."""
    entry = BENCH_CASES[case]
    return _run(entry.algorithm, {**ALGORITHMS[entry.algorithm].options, **entry.options}, W, rho,
                sensitivity, rng)


def _run(algorithm, options, W, rho, sensitivity, rng):
    """Algorithm ``algorithm`` (a key of ALGORITHMS) on ``W`` with all of ``options``: a
    ``sensitivity`` among them replaces the argument, symbolic steps become numbers."""
    fn = function(algorithm)
    if not ALGORITHMS[algorithm].private:
        return fn(W, **options)
    kw = dict(options)
    sensitivity = kw.pop("sensitivity", sensitivity)
    return fn(W, rho=rho, sensitivity=sensitivity, rng=rng, **resolved_options(kw, sensitivity))
