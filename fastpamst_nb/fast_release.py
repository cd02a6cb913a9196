"""fast_pamst behind its public signature: the gumbel and the exponential release on a Graph.

:func:`fastpamst_nb.fast_pamst` checks its arguments and hands them to
:func:`_fast_pamst`, which checks what needs no data (the noise, the step, the
clipping ``bounds``, the memory the queue needs for the input's shape), validates
the input while it fills what the engine can use from that pass (the gumbel
tree itself, computed beside the validation; the queue's top window), and runs
one of two releases on the validated :class:`fastpamst_nb.graph.Graph`:

- :func:`_gumbel_graph`: ``noise="gumbel"``, the exact MST of the keys w - G / lam
  (:mod:`fastpamst_nb.gumbel`);
- :func:`_fast_pamst_graph`: ``noise="exponential"``, the paper's Fast-PAMST: the
  grouped queue (:mod:`fastpamst_nb.cutqueue_build`) and the private Prim
  (:mod:`fastpamst_nb.prim`, :mod:`fastpamst_nb.sampler`).

Both take a validated graph, so the tests (thousands of tiny releases) and
:func:`fastpamst_nb.plan` (releases on a stand-in) call them without validating again.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp

from . import philox, privacy
from .core import check_positive, require_memory
from .cutqueue_build import gq_build, queue_memory_bytes
from .gumbel import gumbel_csr, gumbel_dense
from .pipeline import (
    _FIRST_CHUNK_ENTRIES, _private_setup, _progress_class, _require_inputs, _run_steps, _sign, _tree,
)
from .prim import prim_csr_private, prim_dense_private
from .sampler import N_STATS
from .window import top_window

# speed knobs of the selection kernel (see sampler.py); they never change the output law.
# A bottom candidate costs a rank selection and a pick in a cold bucket (often its
# compaction), a bucket a single max draw: stopping when 0.03 noises are expected
# above the best made selections faster than theta = 1. Buckets of up to 2 noise
# units (bucket_width) halve the nodes a walk visits against 1 unit, for a few more extra
# candidates (docs/design.rst, Measurements behind the code).
DEFAULT_THETA = 0.03
DEFAULT_BUCKET_WIDTH = 2.0


def _release_key(gen):
    """The gumbel release's 128-bit key: its only draw from the user's generator."""
    return philox.draw_key(gen)


def _graph_release(graph, rho, sensitivity, gen, noise, maximum, start=0):
    """The tree ``fast_pamst(rng=gen, noise=noise)`` releases with the default step and
    speed knobs, on a validated ``Graph`` (the same draws from ``gen``, no validation
    again): for callers that release many times on one public stand-in
    (:func:`fastpamst_nb.plan`). ``rho`` and ``sensitivity``: checked floats."""
    if noise == "gumbel":
        return _gumbel_graph(graph, rho, sensitivity, start, _release_key(gen), maximum)[0]
    s = privacy.default_discretization(sensitivity)
    return _fast_pamst_graph(graph, rho, sensitivity, s, start, gen, noise, maximum, DEFAULT_THETA,
                             DEFAULT_BUCKET_WIDTH)[0]


def _check_bounds(bounds, sensitivity, discretization, keyed=True):
    """``bounds`` as (lo, hi) floats, refused (from them alone) when their keys do not fit
    (``keyed``: the exponential path's discretized keys; the gumbel release has none)."""
    if bounds is None:
        return None
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"bounds must be a pair (lo, hi) of public clipping bounds, got {bounds!r}") from None
    lo, hi = (float(_check_real("bounds", x)) for x in (lo, hi))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be two finite numbers lo < hi, got ({lo!r}, {hi!r})")
    if not keyed:
        return lo, hi
    s = privacy.default_discretization(sensitivity) if discretization is None else float(discretization)
    limit = privacy.key_limit(s)
    if max(abs(lo), abs(hi)) / s >= limit:
        raise ValueError(f"bounds = ({lo!r}, {hi!r}) are too wide for the discretization step s = {s!r}: "
                         f"|bound / s| must stay below 2**{int(math.log2(limit))}; use narrower bounds "
                         "or a larger discretization")
    return lo, hi


def _check_real(name, x):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must hold real numbers, got {type(x).__name__}")
    return x


def _clipped(graph, bounds):
    """The graph whose weights are clipped to ``bounds`` (None: ``graph`` itself). The
    input is not modified: a clipped copy is made only when some weight lies outside."""
    if bounds is None:
        return graph
    lo, hi = bounds
    wmin, wmax = min(max(graph.wmin, lo), hi), max(min(graph.wmax, hi), lo)
    if graph.m == 0 or (graph.wmin >= lo and graph.wmax <= hi):
        return graph._replace(wmin=wmin, wmax=wmax)
    if graph.dense:
        # in the matrix's dtype, rounded inwards (a float32 bound stays within [lo, hi])
        dt = graph.W.dtype.type
        lo_t = dt(lo) if dt(lo) >= lo else np.nextafter(dt(lo), dt(np.inf))
        hi_t = dt(hi) if dt(hi) <= hi else np.nextafter(dt(hi), dt(-np.inf))
        W = np.ascontiguousarray(np.clip(graph.W, lo_t, hi_t))  # a plain array, as the kernels read
        wmin, wmax = min(max(graph.wmin, lo_t), hi_t), max(min(graph.wmax, hi_t), lo_t)
        return graph._replace(W=W, wmin=float(wmin), wmax=float(wmax))
    return graph._replace(data=np.clip(graph.data, lo, hi), wmin=wmin, wmax=wmax)


def _fast_pamst(weights, rho, sensitivity, *, rng=None, start=0, noise="gumbel",
                discretization=None, maximum=False, epsilon=None, delta=None, topology=None,
                symmetric=None, progress=False, bounds=None, theta=DEFAULT_THETA, bucket_width=DEFAULT_BUCKET_WIDTH):
    """Validate, then run :func:`_fast_pamst_graph`."""
    _require_inputs("fast_pamst", rho, epsilon, delta, sensitivity)
    privacy.check_noise(noise)
    if discretization is not None:  # checked before the O(n^2) validation pass
        if noise == "gumbel":
            raise ValueError("discretization= applies to noise='exponential' only: noise='gumbel' "
                             "releases the exact MST of the raw weights minus Gumbel noise, with "
                             "no discretization; drop discretization= (or use noise='exponential')")
        check_positive("discretization", discretization)
    bounds = _check_bounds(bounds, check_positive("sensitivity", sensitivity), discretization,
                           keyed=noise == "exponential")
    bar_class = _progress_class(progress, "fast_pamst")
    shape = getattr(weights, "shape", None)
    n = int(shape[0]) if topology is None and not sp.issparse(weights) and shape is not None \
        and len(shape) == 2 else None
    # a dense matrix's clipped copy (bounds=), reserved from the shape whether or not it is made
    clip_bytes = 0 if bounds is None or n is None else \
        n * n * max(np.dtype(getattr(weights, "dtype", np.float64)).itemsize, 4)
    if noise == "gumbel":
        if clip_bytes:
            require_memory(clip_bytes, f"fast_pamst(bounds=) on n = {n} (a clipped copy)")
        key, found = [], []

        def alongside_for(rho, sensitivity, gen):
            key.append(_release_key(gen))
            if bar_class is not None or bounds is not None:
                # a progress bar wants the chunks here; the kernel beside the validation
                # would rank unclipped weights
                return None

            def beside(W, start):
                # the serial kernel on a thread of its own while W is validated (it only
                # reads rows and compares values, so it is safe on any W; its tree is
                # dropped if the validation refuses W)
                lam = privacy.gumbel_rate(rho, sensitivity, W.shape[0])
                found.append(gumbel_dense(W, start, bool(maximum), lam, key[0], threads=1))
            return beside

        graph, rho, sensitivity, start, _ = _private_setup(weights, topology, rho, epsilon, delta,
                                                           sensitivity, start, rng, symmetric,
                                                           alongside_for=alongside_for)
        return _gumbel_graph(graph, rho, sensitivity, start, key[0], maximum, bar_class,
                             edges=found[0] if found else None, bounds=bounds)
    if n is not None:
        # the queue's need for this shape (never the weights': a release of a shape runs
        # for every input or none), before the O(n^2) validation pass; gq_build checks it again
        require_memory(queue_memory_bytes(n, n * (n - 1) // 2, True) + clip_bytes,
                       f"fast_pamst on n = {n} (its edge store)")
    windows = []

    def window_for(n, rho, sensitivity):
        if bounds is not None:  # the window would count unclipped keys (speed only)
            return None
        # public inputs only: the queue's fine key bins, from n, rho, Delta and s
        s = privacy.default_discretization(sensitivity) if discretization is None else float(discretization)
        r = privacy.fast_pamst_key_rate(rho, sensitivity, n, s, noise)
        windows.append(top_window(_sign(maximum), s, r, bucket_width))
        return windows[-1]

    graph, rho, sensitivity, start, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                         sensitivity, start, rng, symmetric,
                                                         window_for)
    s = privacy.default_discretization(sensitivity) if discretization is None else float(discretization)
    return _fast_pamst_graph(graph, rho, sensitivity, s, start, gen, noise, maximum, theta, bucket_width,
                             bar_class, windows[0] if windows else None, bounds)


def _fast_pamst_graph(graph, rho, sensitivity, s, start, gen, noise, maximum, theta, bucket_width,
                      bar_class=None, window=None, bounds=None):
    """Fast-PAMST on a validated ``Graph``; returns the tree and the kernel's counters.

    Tests call it directly to run thousands of tiny releases without re-validating,
    and force the speed knobs theta/bucket_width to their extremes. ``bar_class``: a
    tqdm-like class for a progress bar over the steps, or None. ``window``: the
    ``window.TopWindow`` the validation filled, or None (speed only). ``bounds``:
    checked (lo, hi) the weights are clipped to before they are discretized; the
    tree keeps the true weights.
    """
    keyed = _clipped(graph, bounds)
    # the weight-unit rate for the record, the key-unit rate r for the kernels (computed
    # without lam, which overflows for a subnormal D_s); none without a selection (n = 1)
    lam = privacy.fast_pamst_rate(rho, sensitivity, graph.n, s, noise) if graph.n >= 2 else None
    sgn = _sign(maximum)
    stats = np.zeros(N_STATS, dtype=np.int64)
    edges = np.empty((graph.n - 1, 2), dtype=np.int64)
    if graph.n >= 2:
        r = privacy.fast_pamst_key_rate(rho, sensitivity, graph.n, s, noise)
        q = gq_build(keyed, sgn, s, r, bucket_width, window)
        visited = np.zeros(graph.n, dtype=np.bool_)
        nxt = [start]  # the vertex that joins the tree at the next step

        if graph.dense:
            def advance(step0, k):
                nxt[0] = prim_dense_private(q, keyed.W, visited, edges, step0, k, nxt[0], r,
                                            theta, bucket_width, gen, stats)
        else:
            def advance(step0, k):
                nxt[0] = prim_csr_private(q, keyed, visited, edges, step0, k, nxt[0], r, theta,
                                          bucket_width, gen, stats)
        _run_steps(advance, graph.n - 1, bar_class, "fast_pamst",
                   first=max(1, _FIRST_CHUNK_ENTRIES // graph.n))
    info = {"rho": rho, "sensitivity": sensitivity, "noise": noise, "rate": lam,
            "discretization": s, "maximum": bool(maximum)}
    if bounds is not None:
        info["bounds"] = tuple(bounds)
    return _tree(graph, edges, "fast_pamst", info), stats


def _gumbel_graph(graph, rho, sensitivity, start, key, maximum, bar_class=None, plain=False,
                  threads=None, edges=None, bounds=None):
    """The gumbel release on a validated ``Graph``: the exact MST of the noisy keys
    (:mod:`fastpamst_nb.gumbel`); returns the tree and an empty counter array (the
    shape of :func:`_fast_pamst_graph`'s answer).

    ``key``: the release's 128-bit key (``philox.draw_key(gen)``, its only draw from the
    user's generator). ``edges``: the tree already computed beside the validation, or
    None. Tests call it directly (no re-validation) for their many tiny releases;
    ``plain`` takes the two logarithms on every edge (the reference path), ``threads``
    forces the thread count of the dense kernel. ``bounds``: as in
    :func:`_fast_pamst_graph` (the noisy keys are of the clipped weights; the tree keeps
    the true ones).
    """
    keyed = _clipped(graph, bounds)
    # none without a selection (n = 1), as the exponential path records
    lam = privacy.gumbel_rate(rho, sensitivity, graph.n) if graph.n >= 2 else None
    if edges is None and graph.n < 2:
        edges = np.empty((0, 2), dtype=np.int64)
    elif edges is None:
        def run(advance, n_steps, first):
            _run_steps(advance, n_steps, bar_class, "fast_pamst", first=first)
        if graph.dense:
            edges = gumbel_dense(keyed.W, start, bool(maximum), lam, key, threads=threads,
                                 plain=plain, run=run)
        else:
            edges = gumbel_csr(keyed.indptr, keyed.indices, keyed.data, start, bool(maximum),
                               lam, key, plain=plain, run=run)
    info = {"rho": rho, "sensitivity": sensitivity, "noise": "gumbel", "rate": lam,
            "maximum": bool(maximum)}
    if bounds is not None:
        info["bounds"] = tuple(bounds)
    return _tree(graph, edges, "fast_pamst", info), np.zeros(N_STATS, dtype=np.int64)
