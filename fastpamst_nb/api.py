"""Public API: exact and private spanning trees of a dense or sparse weight matrix.

Every function takes ``weights`` as a dense (n, n) array (the complete graph), a
scipy.sparse (n, n) matrix (its stored entries are the public edges), a
condensed distance vector of length n(n-1)/2 (``scipy.spatial.distance.pdist``
output, read as its ``squareform``) or a ``networkx.Graph`` (any nodes; other
than 0..n-1 they are kept as ``tree.labels``; its edges are the public edges,
``"weight"`` attributes the weights); a matrix must
be symmetric (or ``symmetric="upper"``/``"lower"`` names the one triangle to
read), the diagonal is ignored and the input is never modified (see
:func:`fastpamst_nb.graph.as_graph`). Private algorithms are rho-zCDP under the
l_inf neighbouring relation: neighbouring inputs differ by at most
``sensitivity`` in every entry. Give the budget either
as ``rho`` or as ``epsilon`` and ``delta`` (converted with
:func:`fastpamst_nb.privacy.approx_dp_to_zcdp`).

The steps every function shares (checks, validation, chunked steps, the tree) are
:mod:`fastpamst_nb.pipeline`; ``fast_pamst``'s own, on a validated graph,
:mod:`fastpamst_nb.fast_release`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from . import privacy
from .baselines import EXPONENTIAL, GUMBEL, noisy_csr, noisy_dense, pamst_csr, pamst_dense, pamst_state
from .core import require_memory
from .fast_release import _fast_pamst
from .graph import as_graph, kernel_view
from .input_forms import vertex_count, vertex_labels
from .pipeline import (
    _check_tree_size, _edge_weights, _private_setup, _progress_class, _refuse_p, _released, _require_inputs,
    _run_steps, _sign, _tree, _validate,
)
from .prim import prim_csr_exact, prim_dense_exact
from .tree import SpanningTree

# Package-internal names that other modules and the tests import from here, kept where
# they were when the fast_pamst internals moved to fast_release.py and the shared
# steps to pipeline.py (new code imports them from those modules)
from .fast_release import DEFAULT_BUCKET_WIDTH, DEFAULT_THETA, _fast_pamst_graph, _gumbel_graph  # noqa: F401
from .pipeline import _check_start  # noqa: F401

if TYPE_CHECKING:  # annotations only: nothing here is imported at run time
    import networkx
    import scipy.sparse
    from numpy.typing import ArrayLike

    Weights = ArrayLike | scipy.sparse.sparray | scipy.sparse.spmatrix | networkx.Graph
    Topology = ArrayLike | scipy.sparse.sparray | scipy.sparse.spmatrix | None
    Seed = int | np.random.SeedSequence | np.random.BitGenerator | np.random.Generator | None
    Symmetric = Literal["upper", "lower"] | None

# numpydoc blocks shared by several public functions, substituted into their docstrings
# by @_shared_doc (as scipy._lib.doccer does): one text to keep right, not five
_DOCS = {
    "symmetric": """\
    symmetric : {None, "upper", "lower"}, default None
        None: the matrix must be exactly symmetric. ``"upper"``: read only its
        strict upper triangle (``weights[i, j]`` for i < j) and mirror it;
        ``"lower"``: only ``weights[i, j]`` for i > j. For matrices that are
        symmetric up to rounding (``1 - np.corrcoef(X)``, float32 distances).
        A dense matrix (without ``topology=``) then costs one extra (n, n)
        copy in its float dtype (4 or 8 n^2 bytes, checked against the
        available memory first; the input is not modified); a sparse one
        keeps that triangle's stored entries. See :func:`fastpamst_nb.graph.as_graph`.""",
    "metric": """\
    metric : str or None, default None
        None: ``weights`` is a weight matrix (any form above). A name of
        :data:`fastpamst_nb.metrics.METRICS` ("euclidean", "sqeuclidean",
        "cityblock", "chebyshev", "minkowski", "cosine", "haversine"):
        ``weights`` is points X of shape (n, d), float32 or float64 (any real
        dtype is converted), and the edge {i, j} weighs the distance between
        rows i and j, computed from X when needed: no (n, n) array (see the
        user guide, Points). Never guessed from the shape.
    p : float, optional
        The exponent of ``metric="minkowski"`` (p >= 1); refused otherwise.""",
    "rho": """\
    rho : float, optional
        Total zCDP budget (dimensionless, > 0); or give ``epsilon`` and ``delta`` instead.""",
    "sensitivity": """\
    sensitivity : float
        l_inf sensitivity Delta of every weight (in the weights' units, > 0):
        neighbouring inputs differ by at most Delta in every entry. Required.""",
    "epsilon": """\
    epsilon : float, optional
        (epsilon, delta)-DP target (dimensionless, > 0), converted to rho with
        :func:`fastpamst_nb.privacy.approx_dp_to_zcdp`; needs ``delta``, excludes ``rho``.""",
    "delta": """\
    delta : float, optional
        The delta of that target, 0 < delta < 1.""",
    "progress": """\
    progress : bool, default False
        Show a ``tqdm.auto`` progress bar over the n - 1 steps (a widget in
        Jupyter), updated after each chunk of steps; needs tqdm
        (``python -m pip install tqdm``). It does not change the tree.""",
    "start": """\
    start : int, default 0
        First vertex, 0 <= start < n (public).""",
    "rng": """\
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        Anything ``numpy.random.default_rng`` takes (SPEC 7). Same seed, same
        tree; None (the default) draws fresh OS entropy, which is what real
        releases should use. See :func:`fast_pamst` on seeds.""",
    "raises_private": """\
    TypeError
        ``sensitivity`` missing; non-numeric, complex or masked ``weights``; a
        directed or multi networkx graph; an ``rng`` of the wrong type (bool,
        float, str, ``numpy.random.RandomState``: use ``numpy.random.default_rng``);
        ``symmetric`` or ``progress`` of the wrong type.
    ValueError
        A budget or sensitivity that is not finite and positive, or whose noise
        rate (scale) would lie outside [2**-1000, 2**1000] (e.g. a subnormal
        sensitivity: see :mod:`fastpamst_nb.privacy`), both ``rho``
        and ``epsilon``/``delta`` or neither, ``weights`` not (n, n) (nor a
        condensed vector of length n(n-1)/2), not symmetric (with
        ``symmetric=None``), with a NaN/inf edge weight, a disconnected
        topology, or too large for the available memory; a ``symmetric``
        other than None, "upper" and "lower".""",
}


def _shared_doc(func):
    """Fill the ``%(name)s`` placeholders of ``func``'s docstring from ``_DOCS``."""
    func.__doc__ = func.__doc__ % _DOCS
    return func


def _exact_edges(graph, start, sgn):
    if graph.dense:
        return prim_dense_exact(graph.W, start, sgn)
    edges, _ = prim_csr_exact(graph.indptr, graph.indices, graph.data, start, sgn)
    return edges


def _exact_beside(sgn):
    """(beside, edges) for an exact tree computed during the validation.

    ``beside(W, start)`` is an ``as_graph(alongside=)`` call: the exact dense Prim on
    a thread of its own while W is validated (it needs nothing the validation computes
    and only compares values, so it is safe on any W; it hides most of the Prim's cost
    behind the validation's). ``edges(graph, start)`` returns its tree, or runs
    the Prim now when as_graph did not call it (sparse, one thread, a small matrix).
    """
    found = []

    def beside(W, start):
        found.append(prim_dense_exact(W, start, sgn))

    def edges(graph, start):
        return found[0] if found else _exact_edges(graph, start, sgn)

    return beside, edges


@_shared_doc
def exact_mst(weights: Weights, *, maximum: bool = False, start: int = 0,
              topology: Topology = None, symmetric: Symmetric = None, metric: str | None = None,
              p: float | None = None) -> SpanningTree:
    """The exact (non-private) minimum spanning tree.

    Parameters
    ----------
    weights : array_like (n, n), scipy.sparse (n, n), array_like (n(n-1)/2,) or networkx.Graph
        Symmetric weights; dense means the complete graph, sparse its stored
        entries. A 1-D condensed distance vector (``scipy.spatial.distance.pdist``
        output) is the complete graph of its ``squareform``; a networkx.Graph
        has its own edges and ``"weight"`` attributes (nodes other than 0..n-1
        are numbered in node order and kept in ``tree.labels``, as are a pandas
        DataFrame's columns). Never modified.
    maximum : bool, default False
        Return a maximum spanning tree instead.
    start : int, default 0
        First vertex of Prim's algorithm, 0 <= start < n.
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set (see :func:`fast_pamst`); None: every pair of a dense
        ``weights``, the stored entries of a sparse one.
%(symmetric)s
%(metric)s

    Returns
    -------
    SpanningTree
        ``edges`` in the order Prim added them; ``weight`` the total weight.

    Raises
    ------
    TypeError
        Non-numeric, complex or masked ``weights``, a directed or multi networkx
        graph, a non-int ``start``, a ``symmetric`` that is not None or a str.
    ValueError
        ``weights`` not (n, n) (nor a condensed vector of length n(n-1)/2), not
        symmetric (with ``symmetric=None``: the message gives both fixes,
        ``symmetric="upper"`` included), a ``symmetric`` other than None,
        "upper" and "lower", with a NaN/inf edge weight, a disconnected topology, a
        ``start`` out of range, or too large for the available memory.

    Notes
    -----
    Dense: O(n^2) Prim. Sparse: O(m log n) Prim with a binary heap. Points:
    O(n^2 d) Prim computing each row from X, O(n d) memory, on every core from
    32,768 points (the same tree whatever the number of threads).

    Examples
    --------
    >>> import numpy as np
    >>> import fastpamst_nb as fp
    >>> W = np.array([[0., 1., 4.], [1., 0., 2.], [4., 2., 0.]])
    >>> tree = fp.exact_mst(W)
    >>> tree.edges.tolist(), tree.weight
    ([[0, 1], [1, 2]], 3.0)

    A condensed distance vector, as ``scipy.spatial.distance.pdist`` returns it:

    >>> from scipy.spatial.distance import pdist
    >>> X = np.array([[0.0], [1.0], [3.0]])  # three points on a line
    >>> fp.exact_mst(pdist(X)).edges.tolist()
    [[0, 1], [1, 2]]

    The same tree from the points themselves, without the matrix:

    >>> fp.exact_mst(X, metric="euclidean").edges.tolist()
    [[0, 1], [1, 2]]
    """
    if metric is not None:
        from . import points_api
        return points_api.exact_mst(weights, metric, p, maximum, start, topology, symmetric)
    _refuse_p(p)
    labels = vertex_labels(weights)
    beside, exact_edges = _exact_beside(_sign(maximum))
    graph, start = _validate(weights, topology, start, symmetric, alongside=beside)
    return _released(_tree(graph, exact_edges(graph, start), "exact", {"maximum": bool(maximum)}),
                     labels)


@_shared_doc
def excess_weight(weights: Weights, tree: SpanningTree, *, maximum: bool | None = None,
                  topology: Topology = None, symmetric: Symmetric = None,
                  metric: str | None = None, p: float | None = None) -> float:
    """How much worse ``tree`` is than the optimum: tree weight minus the exact MST weight.

    For a maximum spanning tree (``maximum=True``, or the tree's own setting
    when None) it is the optimum minus the tree weight, so it is >= 0 either way.
    The tree's weight is read from ``weights`` (so a tree saved without its true
    weights can be evaluated too).

    Parameters
    ----------
    weights : array_like (n, n), scipy.sparse (n, n), array_like (n(n-1)/2,) or networkx.Graph
        The weights the tree was computed from (any form :func:`exact_mst` takes).
    tree : SpanningTree
        A spanning tree of this graph (``tree.n_vertices == n``).
    maximum : bool or None, default None
        Compare with the maximum spanning tree; None: ``tree.info["maximum"]``
        (False when absent).
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set the tree was computed on, as in :func:`fast_pamst`.
%(symmetric)s
        Pass the value the tree was computed with.
%(metric)s

    Returns
    -------
    float
        The excess, in the weights' units, >= 0 (up to rounding). It is computed
        from the true weights: NOT private, for evaluation only.

    Raises
    ------
    TypeError
        ``tree`` is not a SpanningTree, or ``weights`` is refused as in :func:`exact_mst`.
    ValueError
        ``tree.n_vertices`` differs from n (the tree belongs to another graph),
        a tree edge is out of range or not an edge of the graph, or ``weights``
        is refused as in :func:`exact_mst`.

    Examples
    --------
    >>> import numpy as np
    >>> import fastpamst_nb as fp
    >>> W = np.array([[0., 1., 4.], [1., 0., 2.], [4., 2., 0.]])
    >>> fp.excess_weight(W, fp.exact_mst(W))
    0.0
    >>> worst = fp.exact_mst(W, maximum=True)  # edges (0, 2) and (2, 1): weight 6
    >>> fp.excess_weight(W, worst, maximum=False)
    3.0
    """
    if not isinstance(tree, SpanningTree):
        raise TypeError(f"tree must be a SpanningTree (what exact_mst, fast_pamst, ... return), "
                        f"got {type(tree).__name__}")
    if maximum is None:
        maximum = bool(tree.info.get("maximum", False))
    if metric is not None:
        from . import points_api
        return points_api.excess_weight(weights, tree, metric, p, maximum, topology, symmetric)
    _refuse_p(p)
    n = vertex_count(weights, topology)
    if n:  # from the shapes, before the O(n^2) validation pass
        _check_tree_size(tree, n)
    beside, exact_edges = _exact_beside(_sign(maximum))
    graph = as_graph(weights, topology=topology, symmetric=symmetric,
                     alongside=lambda W: beside(W, 0))
    _check_tree_size(tree, graph.n)
    edges = np.asarray(tree.edges, dtype=np.int64).reshape(-1, 2)
    if edges.shape[0] != graph.n - 1:
        raise ValueError(f"tree has {edges.shape[0]} edges; a spanning tree of n = {graph.n} "
                         f"vertices has n - 1 = {graph.n - 1}")
    if edges.size and (edges.min() < 0 or edges.max() >= graph.n):
        raise ValueError(f"tree edges must index vertices 0 .. {graph.n - 1} (n = {graph.n}); "
                         "pass the weights the tree was computed from")
    weight = float(_edge_weights(graph, edges).sum())
    best = float(_edge_weights(graph, exact_edges(graph, 0)).sum())
    return best - weight if maximum else weight - best


@_shared_doc
def pamst(weights: Weights, rho: float | None = None, sensitivity: float | None = None, *,
          rng: Seed = None, start: int = 0, noise: Literal["exponential", "gumbel"] = "gumbel",
          maximum: bool = False, epsilon: float | None = None, delta: float | None = None,
          topology: Topology = None, symmetric: Symmetric = None,
          progress: bool = False, metric: str | None = None, p: float | None = None) -> SpanningTree:
    """PAMST (Pinot 2018): Prim with a report-noisy-max over all cut edges per step.

    Parameters
    ----------
    weights : array_like (n, n), scipy.sparse (n, n), array_like (n(n-1)/2,) or networkx.Graph
        Symmetric weights, in any units; dense means the complete graph, a
        condensed distance vector (``pdist`` output) its ``squareform``, a
        networkx.Graph its edges with their ``"weight"`` attributes (nodes
        other than 0..n-1 become ``tree.labels``). Never modified.
%(rho)s
%(sensitivity)s
%(rng)s
%(start)s
    noise : {"gumbel", "exponential"}, default "gumbel"
        The exponential mechanism with rate sqrt(8 rho/(n-1)) / (2 Delta) (the
        default: lower error at the same rho), or exponential noise of rate
        sqrt(2 rho/(n-1)) / (2 Delta) (report-noisy-max, Pinot's PAMST).
    maximum : bool, default False
        Private maximum spanning tree (scores +w instead of -w).
%(epsilon)s
%(delta)s
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set, as in :func:`fast_pamst`.
%(symmetric)s
%(progress)s
%(metric)s
        On points PAMST reads the (n, n) distance matrix, built when it fits
        in memory (else refused: use ``fast_pamst(noise="gumbel")``).

    Returns
    -------
    SpanningTree
        Only ``edges`` is private; ``weight``/``edge_weights`` are the true
        input weights, for evaluation only.

    Raises
    ------
%(raises_private)s
    ImportError
        ``progress=True`` without tqdm installed.

    Notes
    -----
    O(n^3) time on a dense graph (fresh noise for every cut edge at every step),
    O(n m) on a sparse one. The paper's baseline; use :func:`fast_pamst`. Noise
    is added to each score minus the step's best score, so a constant offset of
    the weights (1e12, say) cannot round it away. Interruptible with Ctrl-C.

    Examples
    --------
    >>> import numpy as np
    >>> import fastpamst_nb as fp
    >>> W = np.array([[0., 1., 4.], [1., 0., 2.], [4., 2., 0.]])
    >>> tree = fp.pamst(W, rho=100.0, sensitivity=0.01, rng=0)  # fixed seed: reproducibility only
    >>> tree.edges.tolist()
    [[0, 1], [1, 2]]

    Real releases use ``rng=None`` (fresh entropy); a fixed seed reused across
    releases reuses their noise.
    """
    _require_inputs("pamst", rho, epsilon, delta, sensitivity)
    if metric is not None:
        from . import points_api
        tree = points_api.pamst(weights, rho, sensitivity, metric=metric, p=p, rng=rng, start=start,
                                noise=noise, maximum=maximum, epsilon=epsilon, delta=delta,
                                topology=topology, symmetric=symmetric, progress=progress)
        return _released(tree, None, epsilon, delta)
    _refuse_p(p)
    labels = vertex_labels(weights)
    privacy.check_noise(noise)
    bar_class = _progress_class(progress, "pamst")
    graph, rho, sensitivity, start, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                         sensitivity, start, rng, symmetric)
    # no selection (n = 1), no noise: privacy.py refuses to compute a rate for it
    lam = privacy.pamst_rate(rho, sensitivity, graph.n, noise) if graph.n >= 2 else None
    kind = EXPONENTIAL if noise == "exponential" else GUMBEL
    sgn = _sign(maximum)
    st = pamst_state(graph.n, start)
    if graph.dense:
        def advance(_, k):
            pamst_dense(graph.W, sgn, kind, lam, gen, st, k)
    else:
        def advance(_, k):
            pamst_csr(graph.indptr, graph.indices, graph.data, sgn, kind, lam, gen, st, k)
    _run_steps(advance, graph.n - 1, bar_class, "pamst")
    edges = st.edges
    info = {"rho": rho, "sensitivity": sensitivity, "noise": noise, "rate": lam, "maximum": bool(maximum)}
    return _released(_tree(graph, edges, "pamst", info), labels, epsilon, delta)


@_shared_doc
def post_processing(weights: Weights, rho: float | None = None, sensitivity: float | None = None,
                    *, rng: Seed = None, maximum: bool = False, epsilon: float | None = None,
                    delta: float | None = None, topology: Topology = None,
                    symmetric: Symmetric = None, metric: str | None = None,
                    p: float | None = None) -> SpanningTree:
    """Gaussian post-processing (Sealfon 2016): noise every weight once, then an exact MST.

    Adds N(0, sigma^2) to each of the m undirected edges with
    sigma = sensitivity * sqrt(m / (2 rho)) (the l2 sensitivity of m weights that
    each move by at most Delta is Delta sqrt(m)); the tree's reported weight is
    its true weight.

    Parameters
    ----------
    weights : array_like (n, n), scipy.sparse (n, n), array_like (n(n-1)/2,) or networkx.Graph
        Symmetric weights, in any units; dense means the complete graph, a
        condensed distance vector (``pdist`` output) its ``squareform``, a
        networkx.Graph its edges with their ``"weight"`` attributes (nodes
        other than 0..n-1 become ``tree.labels``). Never modified.
%(rho)s
%(sensitivity)s
%(rng)s
    maximum : bool, default False
        Private maximum spanning tree (exact maximum tree of the noisy weights).
%(epsilon)s
%(delta)s
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set, as in :func:`fast_pamst`; m counts its edges.
%(symmetric)s
%(metric)s
        On points each edge's normal comes from the counter-based stream
        keyed by 128 bits drawn from ``rng`` (Box-Muller on the edge's two
        uniforms), and the exact Prim runs on the noisy distances computed
        on the fly: no matrix, m = n(n-1)/2.

    Returns
    -------
    SpanningTree
        Only ``edges`` is private; ``weight``/``edge_weights`` are the true
        (un-noised) input weights, for evaluation only. ``info["sigma"]`` is
        the noise standard deviation, in the weights' units.

    Raises
    ------
%(raises_private)s

    Notes
    -----
    O(n^2) time and one extra float64 (n, n) matrix on a dense graph; O(m log n)
    sparse; O(n^2 d) time and O(n d) memory on points.

    Examples
    --------
    >>> import numpy as np
    >>> import fastpamst_nb as fp
    >>> W = np.array([[0., 1., 4.], [1., 0., 2.], [4., 2., 0.]])
    >>> tree = fp.post_processing(W, rho=100.0, sensitivity=0.01, rng=0)  # fixed seed: reproducibility only
    >>> tree.edges.tolist()
    [[0, 1], [1, 2]]

    Real releases use ``rng=None`` (fresh entropy); a fixed seed reused across
    releases reuses their noise.
    """
    _require_inputs("post_processing", rho, epsilon, delta, sensitivity)
    if metric is not None:
        from . import points_api
        tree = points_api.post_processing(weights, rho, sensitivity, metric=metric, p=p, rng=rng,
                                          maximum=maximum, epsilon=epsilon, delta=delta,
                                          topology=topology, symmetric=symmetric)
        return _released(tree, None, epsilon, delta)
    _refuse_p(p)
    labels = vertex_labels(weights)
    graph, rho, sensitivity, _, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                     sensitivity, 0, rng, symmetric)
    sigma = privacy.gaussian_sigma(rho, sensitivity, graph.m) if graph.m >= 1 else None
    sgn = _sign(maximum)
    # a constant shift changes no tree's rank; it keeps offsets from rounding the noise
    ref = graph.wmax if maximum else graph.wmin
    if graph.n < 2:
        edges = np.zeros((0, 2), dtype=np.int64)
    elif graph.dense:
        require_memory(8 * graph.n * graph.n, f"post_processing on n = {graph.n}")
        noisy = noisy_dense(graph.W, ref, sigma, gen)
        edges = prim_dense_exact(kernel_view(noisy), 0, sgn)  # the exact tree's compiled Prim
        del noisy
    else:
        noisy = noisy_csr(graph.indptr, graph.indices, graph.data, ref, sigma, gen)
        edges, _ = prim_csr_exact(graph.indptr, graph.indices, noisy, 0, sgn)
    info = {"rho": rho, "sensitivity": sensitivity, "sigma": sigma, "maximum": bool(maximum)}
    return _released(_tree(graph, edges, "post_processing", info), labels, epsilon, delta)


@_shared_doc
def fast_pamst(weights: Weights, rho: float | None = None, sensitivity: float | None = None, *,
               rng: Seed = None, start: int = 0,
               noise: Literal["exponential", "gumbel"] = "gumbel",
               discretization: float | None = None, maximum: bool = False,
               epsilon: float | None = None, delta: float | None = None,
               topology: Topology = None, symmetric: Symmetric = None,
               progress: bool = False, bounds: tuple[float, float] | None = None,
               metric: str | None = None, p: float | None = None) -> SpanningTree:
    """Fast-PAMST (Pagh & Retschmeier 2024): private Prim with a discretized, grouped RNM.

    With ``noise="exponential"`` each of the n - 1 steps selects a cut edge with
    probability exactly that of ``argmax(s * floor(-w / s) + noise)`` over the cut,
    with fresh i.i.d. noise per edge, but draws only the few noises that matter
    (:ref:`design-sampler`). With ``noise="gumbel"`` the tree has the law of Kruskal
    with the exponential mechanism at every step (:ref:`design-gumbel`).

    Parameters
    ----------
    weights : array_like (n, n), scipy.sparse (n, n), array_like (n(n-1)/2,) or networkx.Graph
        Symmetric weights, in any units; dense means the complete graph, a
        condensed distance vector (``pdist`` output) its ``squareform``, a
        networkx.Graph its edges with their ``"weight"`` attributes (nodes
        other than 0..n-1 become ``tree.labels``, as do a pandas DataFrame's
        columns). Never modified. float64 C/F-ordered arrays (memmaps
        included) and float32 ones above 2048 vertices are read in place; a
        smaller float32 matrix is widened to float64 (one compiled release
        serves both).
%(rho)s
%(sensitivity)s
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        Anything ``numpy.random.default_rng`` takes (SPEC 7). Same seed, same
        tree; None (the default) draws fresh OS entropy, which is what real
        releases should use. See the Notes on seeds.
%(start)s
    noise : {"gumbel", "exponential"}, default "gumbel"
        "gumbel" (the default) or "exponential" (the paper's Fast-PAMST).
        "exponential": report-noisy-max, rate sqrt(2 rho/(n-1)) / (2 D_s)
        (the paper), D_s the sensitivity of the discretized score
        (:func:`fastpamst_nb.privacy.discretized_sensitivity`): s * ceil(Delta / s)
        when s is a power of two, s * ceil(Delta / s + 1/2) otherwise: at most
        (17/16) Delta at the default s. "gumbel": the exponential mechanism at each
        of Kruskal's n - 1 steps, released as the exact MST of w - G / lam with one
        standard Gumbel G per edge (:func:`fastpamst_nb.privacy.gumbel_rate`:
        lam = sqrt(8 rho/(n-1)) / (2 Delta), no discretization); same privacy
        (rho-zCDP), lower error in our measurements.
    discretization : float, optional
        Exponential noise only (refused with gumbel).
        The step s (weights' units); default: the largest power of two at most
        ``sensitivity / 16`` (:func:`fastpamst_nb.privacy.default_discretization`),
        public since it depends on Delta only. ``discretization=sensitivity`` is
        the paper's setting (D_s = 2 Delta unless Delta is a power of two: about
        twice the noise). Without ``bounds``, weights with ``|w / s| >= 2**62``
        (s a power of two) or ``2**52`` (any other s) are refused.
    maximum : bool, default False
        Private maximum spanning tree (scores s * floor(w / s)).
%(epsilon)s
%(delta)s
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set: the true entries of a mask, the non-zero stored
        entries of a sparse pattern; each edge's weight is read from ``weights``
        (dense, or sparse with unstored entries weighing 0). Default: every pair
        of a dense ``weights``, the stored entries of a sparse one. Never derive
        the topology from the weights: ``scipy.sparse.csr_matrix(W)`` and
        ``A + A.T`` drop zero weights, which makes the edge set private.
        Missing edges of a masked array ``M``: ``topology=~M.mask`` with
        ``M.filled(0)``.
%(symmetric)s
%(progress)s
    bounds : (float, float), optional
        Public clipping bounds ``(lo, hi)``, lo < hi, in the weights' units
        (the convention of DP libraries: chosen without looking at the data).
        Each weight is clipped to [lo, hi] before it is discretized; clipping
        moves no weight further than its neighbour moves it, so the privacy
        guarantee is unchanged, and the release is that of the clipped weights.
        The key range is then checked on the bounds alone, so a refusal
        depends on the bounds only, never on the data. The input is never
        modified: when some weight lies outside the bounds the queue reads a
        clipped copy (n^2 entries in the weights' dtype dense, checked against
        the available memory for every input of the shape). ``edge_weights``
        stay the true (unclipped) weights.
%(metric)s
        On points, ``noise="gumbel"`` is the exact tree of w - G_e / lam
        (G_e a standard Gumbel per edge from a counter-based stream keyed by
        128 bits drawn from ``rng``, lam = sqrt(8 rho/(n-1)) / (2 Delta), no
        discretization): O(n^2 d) time, O(n d) memory.
        ``noise="exponential"`` builds the (n, n) distance matrix when it
        fits in memory and is refused otherwise.

    Returns
    -------
    SpanningTree
        Only ``edges`` is private; ``weight``/``edge_weights`` are the true
        input weights, for evaluation only.

    Raises
    ------
%(raises_private)s
        Also a ``discretization`` that is not finite and positive, ``bounds``
        that are not two finite numbers lo < hi or too large for the
        discretized keys, or (without ``bounds``) weights too large for them:
        pass ``bounds=``, a public range, so that the refusal depends on it alone.
    ImportError
        ``progress=True`` without tqdm installed.

    Notes
    -----
    ``noise="gumbel"``: O(n^2) time (dense; O(m + n log(m) log(m / n)) sparse) and
    O(n) extra memory (sparse: plus a heap, 24 bytes per improvement): a Prim over
    the noisy keys, whose noise is a function of a 128-bit key drawn from ``rng``
    and of the edge, computed where it is compared (:ref:`design-gumbel`). The
    same seed gives the same tree whatever ``NUMBA_NUM_THREADS``.

    ``noise="exponential"``: O(m + G) to build the grouped queue (G = number of distinct discretized
    weights), O(m) for the cut updates and, per step, O(1) expected per bucket
    visited and per candidate drawn by the selection: O(m + n^1.5 log n /
    sqrt(rho)) overall. Extra memory: one
    int64 slot per edge (pages of buckets never sampled stay untouched) plus O(G). The steps run in chunks of about 0.1 s, so
    Ctrl-C (KeyboardInterrupt, also in Jupyter) stops a long release.

    Only ``edges`` is private. ``weight`` and ``edge_weights`` of the result are
    the true input weights (for evaluation), not private.

    Seeds: noise comes from 53-bit uniforms, so events of probability below
    about 1e-16 per draw are impossible rather than rare (as in most
    floating-point DP code). Reusing one integer seed across releases reuses
    their noise and correlates them: use ``rng=None`` (fresh OS entropy) for
    real releases; fixed seeds are for tests and examples.

    Examples
    --------
    >>> import numpy as np
    >>> import fastpamst_nb as fp
    >>> W = np.array([[0., 1., 4.], [1., 0., 2.], [4., 2., 0.]])
    >>> tree = fp.fast_pamst(W, rho=100.0, sensitivity=0.01, rng=0)  # fixed seed: reproducibility only
    >>> tree.edges.tolist()
    [[0, 1], [1, 2]]

    A networkx graph is read with all its edges (weight 0 included):

    >>> import networkx as nx  # doctest: +SKIP
    >>> G = nx.Graph([(0, 1, {"weight": 0.0}), (1, 2, {"weight": 2.0})])  # doctest: +SKIP
    >>> fp.fast_pamst(G, rho=1.0, sensitivity=0.1, rng=0).edges.tolist()  # doctest: +SKIP
    [[0, 1], [1, 2]]
    """
    if metric is not None:
        if bounds is not None:
            raise ValueError("bounds= clips the entries of a weight matrix; with metric= the weights "
                             "are distances computed from the points: drop bounds= (or pass the "
                             "distance matrix without metric=)")
        _require_inputs("fast_pamst", rho, epsilon, delta, sensitivity)
        from . import points_api
        tree = points_api.fast_pamst(weights, rho, sensitivity, metric=metric, p=p, rng=rng,
                                     start=start, noise=noise, discretization=discretization,
                                     maximum=maximum, epsilon=epsilon, delta=delta, topology=topology,
                                     symmetric=symmetric, progress=progress)
        return _released(tree, None, epsilon, delta)
    _refuse_p(p)
    labels = vertex_labels(weights)
    tree = _fast_pamst(weights, rho, sensitivity, rng=rng, start=start, noise=noise,
                       discretization=discretization, maximum=maximum, epsilon=epsilon,
                       delta=delta, topology=topology, symmetric=symmetric,
                       progress=progress, bounds=bounds)[0]
    return _released(tree, labels, epsilon, delta)
