"""The public functions on points X (n, d) with ``metric=``: what :mod:`fastpamst_nb.api`
runs when it is given a metric name.

Which path each release takes (docs/user_guide.rst, Points):

- ``exact_mst``, ``excess_weight``: the exact Prim of :mod:`fastpamst_nb.points`,
  rows computed from X, O(n^2 d) time, O(n d) memory;
- ``fast_pamst(noise="gumbel")``: the same Prim with the key w - G_e / lam (the
  exponential mechanism, one Gumbel per edge from the counter-based stream keyed
  by 128 bits drawn from ``rng``), no discretization, O(n d) memory;
- ``post_processing``: the same Prim with the key w + sigma Z_e (Box-Muller from
  the edge's two uniforms of the same stream), no matrix;
- ``fast_pamst(noise="exponential")`` and ``pamst``: their engines read a matrix,
  so the (n, n) distance matrix is built (in X's float dtype) when it fits in the
  available memory, decided from n and the dtype before any work; otherwise the
  release is refused with a message naming ``noise="gumbel"``.
"""

import numpy as np

from . import privacy
from .chunks import run_in_chunks
from .core import as_generator, check_positive, require_memory
from .metrics import edge_distances, metric_info, prepare_points, pt_matrix, refuse_matrix_options
from .gumbel import _scale as gumbel_scale
from .philox import draw_key
from .points import EXACT, GAUSS, GUMBEL, pt_prim
from .tree import SpanningTree


_NO_EDGES = np.empty((0, 2), dtype=np.int64)  # the tree of one point


def _start(start, n):
    from .api import _check_start

    return _check_start(start, n)


def _tree(P, edges, n, algorithm, info):
    return SpanningTree(edges, edge_distances(P, edges), n, algorithm, info)


def _runner(bar_class, desc):
    """A ``(advance, n_steps)`` runner: chunks (Ctrl-C) and an optional progress bar."""
    from .api import _run_steps

    return lambda advance, n_steps: _run_steps(advance, n_steps, bar_class, desc)


def exact_mst(X, metric, p, maximum, start, topology, symmetric):
    refuse_matrix_options(metric, topology, symmetric)
    P = prepare_points(X, metric, p)
    n = P[0].shape[0]
    start = _start(start, n)
    sgn = 1.0 if maximum else -1.0
    edges = pt_prim(P, start, sgn, EXACT, advance=run_in_chunks)
    return _tree(P, edges, n, "exact", {"maximum": bool(maximum), **metric_info(metric, p)})


def excess_weight(X, tree, metric, p, maximum, topology, symmetric):
    from .api import _check_tree_size

    refuse_matrix_options(metric, topology, symmetric)
    P = prepare_points(X, metric, p)
    n = P[0].shape[0]
    _check_tree_size(tree, n)
    edges = np.asarray(tree.edges, dtype=np.int64).reshape(-1, 2)
    if edges.shape[0] != n - 1:
        raise ValueError(f"tree has {edges.shape[0]} edges; a spanning tree of n = {n} "
                         f"vertices has n - 1 = {n - 1}")
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"tree edges must index points 0 .. {n - 1} (n = {n}); "
                         "pass the points the tree was computed from")
    sgn = 1.0 if maximum else -1.0
    weight = float(edge_distances(P, edges).sum())
    best = float(edge_distances(P, pt_prim(P, 0, sgn, EXACT, advance=run_in_chunks)).sum())
    return best - weight if maximum else weight - best


def _private(X, metric, p, rho, epsilon, delta, sensitivity, start, rng, topology, symmetric):
    """Checks in the order of the API's (parameters, then the O(n d) points), and
    the resolved (P, n, rho, sensitivity, start, gen). A missing sensitivity was
    refused by the API before it dispatched here."""
    refuse_matrix_options(metric, topology, symmetric)
    rho = privacy.resolve_rho(rho, epsilon, delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    gen = as_generator(rng)
    P = prepare_points(X, metric, p)
    n = P[0].shape[0]
    return P, n, rho, sensitivity, _start(start, n), gen


def _float_dtype(X):
    """The user's float dtype (float32 or float64; other dtypes: float64), which the points'
    matrix keeps (the kernels read the points in float64: ``metrics.prepare_points``)."""
    dtype = getattr(X, "dtype", None)
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def matrix_of(P, what, dtype=np.float64):
    """The (n, n) distance matrix of prepared points, in ``dtype`` (the user's float dtype,
    ``_float_dtype``), after checking that it fits (from n and the dtype, before any
    work); ValueError naming gumbel."""
    X = P[0]
    n = X.shape[0]
    need = n * n * np.dtype(dtype).itemsize
    try:
        require_memory(need, f"{what} on n = {n} points (an ({n}, {n}) distance matrix)")
    except ValueError as exc:
        raise ValueError(f"{exc} The engine of {what} reads a matrix; "
                         "fast_pamst(X, ..., metric=..., noise='gumbel') computes the rows from X "
                         "and needs O(n d) memory") from None
    D = np.empty((n, n), dtype=dtype)
    pt_matrix(X, P[1], P[2], P[3], D)
    return D


def _with_metric(tree, metric, p):
    info = {**dict(tree.info), **metric_info(metric, p)}
    return SpanningTree(tree.edges, tree.edge_weights, tree.n_vertices, tree.algorithm, info)


def fast_pamst(X, rho, sensitivity, *, metric, p, rng, start, noise, discretization, maximum,
               epsilon, delta, topology, symmetric, progress):
    from . import api

    privacy.check_noise(noise)
    if noise == "gumbel" and discretization is not None:
        raise ValueError("fast_pamst on points with noise='gumbel' samples the exponential mechanism "
                         "without discretization; drop discretization=")
    if discretization is not None:
        check_positive("discretization", discretization)
    bar_class = api._progress_class(progress, "fast_pamst")
    P, n, rho, sensitivity, start, gen = _private(X, metric, p, rho, epsilon, delta, sensitivity,
                                                  start, rng, topology, symmetric)
    if noise == "exponential":
        D = matrix_of(P, "fast_pamst(noise='exponential')", _float_dtype(X))
        tree = api.fast_pamst(D, rho, sensitivity, rng=gen, start=start, noise=noise,
                              discretization=discretization, maximum=maximum, progress=progress)
        return _with_metric(tree, metric, p)
    key = draw_key(gen)  # the only draw from gen: the noise of edge {i, j} is a function of (key, i, j)
    # one point selects nothing: no noise and no rate (privacy.py computes none for it)
    lam = privacy.gumbel_rate(rho, sensitivity, n) if n >= 2 else None
    sgn = 1.0 if maximum else -1.0
    if lam is None:
        edges = _NO_EDGES
    else:
        # the dense engine's noise scale: b = 1 / lam rounded up (the effective rate 1 / b
        # never exceeds lam), and the keys' scale f (distances and b times f: no overflow)
        b, _, _, inv_b, f = gumbel_scale(lam)
        edges = pt_prim(P, start, sgn * f, GUMBEL, key, inv_b, b, advance=_runner(bar_class, "fast_pamst"))
    info = {"rho": rho, "sensitivity": sensitivity, "noise": "gumbel", "rate": lam,
            "maximum": bool(maximum), **metric_info(metric, p)}
    return _tree(P, edges, n, "fast_pamst", info)


def pamst(X, rho, sensitivity, *, metric, p, rng, start, noise, maximum, epsilon, delta, topology,
          symmetric, progress):
    from . import api

    privacy.check_noise(noise)
    api._progress_class(progress, "pamst")
    P, n, rho, sensitivity, start, gen = _private(X, metric, p, rho, epsilon, delta, sensitivity,
                                                  start, rng, topology, symmetric)
    D = matrix_of(P, "pamst", _float_dtype(X))
    tree = api.pamst(D, rho, sensitivity, rng=gen, start=start, noise=noise, maximum=maximum,
                     progress=progress)
    return _with_metric(tree, metric, p)


def post_processing(X, rho, sensitivity, *, metric, p, rng, maximum, epsilon, delta, topology,
                    symmetric):
    P, n, rho, sensitivity, _, gen = _private(X, metric, p, rho, epsilon, delta, sensitivity, 0, rng,
                                              topology, symmetric)
    m = n * (n - 1) // 2
    key = draw_key(gen)
    # no edge, no noise and no scale (privacy.py computes none for m = 0)
    sigma = privacy.gaussian_sigma(rho, sensitivity, m) if m >= 1 else None
    sgn = 1.0 if maximum else -1.0
    edges = _NO_EDGES if sigma is None else pt_prim(P, 0, sgn, GAUSS, key, 1.0, sigma, advance=run_in_chunks)
    info = {"rho": rho, "sensitivity": sensitivity, "sigma": sigma, "maximum": bool(maximum),
            **metric_info(metric, p)}
    return _tree(P, edges, n, "post_processing", info)
