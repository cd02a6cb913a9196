"""The steps every release shares, around its engine: checks, validation, chunked steps, the tree.

Each public function of :mod:`fastpamst_nb.api` (and of :mod:`fastpamst_nb.points_api`)
runs the same frame: refuse what needs no data (a missing sensitivity, a ``start``
out of range, a progress bar without tqdm), resolve the budget and the generator,
validate the input (:func:`_private_setup`, :func:`_validate`), run its engine's
n - 1 steps in interruptible chunks with an optional progress bar
(:func:`_run_steps`), and wrap the released edges in a
:class:`fastpamst_nb.tree.SpanningTree` with their true weights (:func:`_tree`,
:func:`_released`). The engines themselves are elsewhere.
"""

import numbers

import numpy as np
from numba import njit

from . import privacy
from .chunks import run_in_chunks
from .core import CACHE, as_generator, check_positive
from .graph import as_graph
from .input_forms import vertex_count
from .tree import SpanningTree


@njit(cache=CACHE, nogil=True)
def _csr_edge_weights(indptr, indices, data, edges):
    """Weights of ``edges``; the row of the first pair that is not an edge (or -1)."""
    out = np.empty(edges.shape[0])
    for i in range(edges.shape[0]):
        a = edges[i, 0]
        b = edges[i, 1]
        # a scalar binary search over row a (sorted): a slice per edge allocated an
        # array view, which cost ~0.35 us an edge (7 ms of a 20,000-vertex release)
        lo = indptr[a]
        hi = indptr[a + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < b:
                lo = mid + 1
            else:
                hi = mid
        if lo >= indptr[a + 1] or indices[lo] != b:
            return out, i
        out[i] = data[lo]
    return out, -1


def _edge_weights(graph, edges):
    """The weights of ``edges``; ValueError naming the first pair that is not an edge."""
    if graph.dense:
        loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
        if loops.size:
            _raise_not_an_edge(edges, int(loops[0]))
        return np.asarray(graph.W[edges[:, 0], edges[:, 1]], dtype=np.float64)
    out, bad = _csr_edge_weights(graph.indptr, graph.indices, graph.data, edges)
    if bad >= 0:
        _raise_not_an_edge(edges, bad)
    return out


def _raise_not_an_edge(edges, k):
    a, b = int(edges[k, 0]), int(edges[k, 1])
    raise ValueError(f"tree edge ({a}, {b}) is not an edge of the graph; pass the weights (and "
                     "topology) the tree was computed from")


def _check_start(start, n):
    if isinstance(start, (bool, np.bool_)) or not isinstance(start, numbers.Integral):
        raise TypeError(f"start must be an int vertex index, got {type(start).__name__}")
    if not 0 <= start < n:
        raise ValueError(f"start = {start} is out of range for a graph with n = {n} vertices; use 0 <= start < {n}")
    return int(start)


def _refuse_p(p):
    if p is not None:
        raise ValueError("p= is the exponent of metric='minkowski' on points; without metric= "
                         "the weights are a matrix: drop p=, or add metric='minkowski'")


def _sign(maximum):
    return 1.0 if maximum else -1.0


def _tree(graph, edges, algorithm, info):
    return SpanningTree(edges, _edge_weights(graph, edges), graph.n, algorithm, info)


def _released(tree, labels, epsilon=None, delta=None):
    """``tree`` with what the user gave beside the weights: the vertices' ``labels`` and
    the budget as given (``epsilon``, ``delta``) beside the converted ``rho``."""
    if labels is None and epsilon is None:
        return tree
    info = dict(tree.info)
    if epsilon is not None:
        info["epsilon"], info["delta"] = float(epsilon), float(delta)
    return SpanningTree(tree.edges, tree.edge_weights, tree.n_vertices, tree.algorithm, info, labels)


def _require_inputs(func, rho, epsilon, delta, sensitivity):
    """TypeError when the sensitivity is missing, naming the budget too when it is missing as well."""
    if sensitivity is not None:
        return
    if rho is None and epsilon is None and delta is None:
        raise TypeError(f"{func}() needs a privacy budget and a sensitivity: give rho= (zCDP; or "
                        "epsilon= and delta=) and sensitivity=, the l_inf sensitivity of each weight "
                        "(how far one person can move any weight, in the weights' units)")
    raise TypeError(f"{func}() needs sensitivity=, the l_inf sensitivity of each weight")


def _validate(weights, topology, start, symmetric, window_for=None, alongside=None):
    """The validated graph; ``start`` is checked against n read off the shapes first.

    ``window_for(n)``: the ``window.TopWindow`` the validation pass should fill for a
    graph of n vertices (n read off the shapes), or None. ``alongside(W, start)``: run
    by ``as_graph`` beside the validation of a dense matrix (see its ``alongside``),
    only once ``start`` has been checked against n read off the shapes.
    """
    n = vertex_count(weights, topology)
    if n:  # before the O(n^2) validation pass when the shapes tell n
        checked = _check_start(start, n)
    window = window_for(n) if window_for is not None and n and n >= 2 else None
    # a start not checked yet (n not told by the shapes) is never handed to a kernel
    beside = None if alongside is None or not n else (lambda W: alongside(W, checked))
    graph = as_graph(weights, topology=topology, symmetric=symmetric, window=window,
                     alongside=beside)
    return graph, _check_start(start, graph.n)


def _private_setup(weights, topology, rho, epsilon, delta, sensitivity, start, rng, symmetric,
                   window_for=None, alongside_for=None):
    """The resolved privacy parameters, then the validated graph. ``window_for(n, rho,
    sensitivity)``: as in :func:`_validate`, from the resolved parameters;
    ``alongside_for(rho, sensitivity, gen)``: the ``alongside`` of :func:`_validate`
    (or None), built from the resolved parameters and the generator."""
    rho = privacy.resolve_rho(rho, epsilon, delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    gen = as_generator(rng)
    alongside = None if alongside_for is None else alongside_for(rho, sensitivity, gen)
    graph, start = _validate(weights, topology, start, symmetric,
                             None if window_for is None else lambda n: window_for(n, rho, sensitivity),
                             alongside)
    return graph, rho, sensitivity, start, gen


def _progress_class(progress, func):
    """``tqdm.auto.tqdm`` when ``progress`` is True, None when False (imported lazily).

    Called before any O(n^2) work, so a missing tqdm is reported at once.
    """
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True or False, got {type(progress).__name__}")
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError(
            f"{func}(progress=True) shows a tqdm progress bar, but tqdm is not installed; "
            "install it with `python -m pip install tqdm`, or pass progress=False"
        ) from None
    return tqdm


# a Fast-PAMST step reads one row of n entries (and now and then a materialization
# pass), so its first chunk takes about this many entries' worth of steps: a tiny
# release is one kernel call, where each call pays to unbox the queue
_FIRST_CHUNK_ENTRIES = 1 << 16


def _run_steps(advance, n_steps, bar_class, desc, first=1):
    """:func:`run_in_chunks` over ``n_steps`` (``first`` steps in the first chunk), with a
    progress bar from ``bar_class`` if any (whose chunks start at one step, so that the
    bar moves from the start)."""
    if bar_class is None:
        run_in_chunks(advance, n_steps, first=first)
        return
    bar = bar_class(total=n_steps, desc=desc, unit="step")
    try:
        run_in_chunks(advance, n_steps, callback=bar.update)
    finally:
        bar.close()


def _check_tree_size(tree, n):
    if tree.n_vertices != n:
        raise ValueError(
            f"tree spans n_vertices = {tree.n_vertices} vertices but the weights have n = {n}; "
            "pass the weights (and topology) the tree was computed from"
        )
