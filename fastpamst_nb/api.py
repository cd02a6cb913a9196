"""Public API: exact and private spanning trees of a dense or sparse weight matrix.

Every function takes ``weights`` as a dense (n, n) array (the complete graph) or
a scipy.sparse (n, n) matrix (its stored entries are the public edges), must be
symmetric, ignores the diagonal and never modifies the input. Private
algorithms are rho-zCDP under the l_inf neighbouring relation: neighbouring
inputs differ by at most ``sensitivity`` in every entry. Give the budget either
as ``rho`` or as ``epsilon`` and ``delta`` (converted with
:func:`fastpamst_nb.privacy.approx_dp_to_zcdp`).
"""

import numbers

import numpy as np
from numba import njit

from . import privacy
from .baselines import noisy_csr, noisy_dense, pamst_csr, pamst_dense, pamst_state
from .chunks import run_in_chunks
from .core import CACHE, as_generator, check_positive, require_memory
from .graph import as_graph
from .prim import prim_csr_exact, prim_csr_private, prim_dense_exact, prim_dense_private
from .queue import gq_build
from .sampler import EXPONENTIAL, GUMBEL, N_STATS
from .tree import SpanningTree

# speed knobs of the selection kernel (see sampler.py); they never change the output law.
# A bottom candidate costs a rank selection and a pick in a cold bucket (often its
# compaction), a bucket a single max draw: stopping when 0.03 noises are expected
# above the best measured ~2x faster selections than theta = 1 at n = 4000.
DEFAULT_THETA = 0.03
DEFAULT_SIGMA = 1.0


@njit(cache=CACHE, nogil=True)
def _csr_edge_weights(indptr, indices, data, edges):
    out = np.empty(edges.shape[0])
    for i in range(edges.shape[0]):
        a = edges[i, 0]
        b = edges[i, 1]
        lo = indptr[a]
        out[i] = data[lo + np.searchsorted(indices[lo:indptr[a + 1]], b)]
    return out


def _edge_weights(graph, edges):
    if graph.dense:
        return np.asarray(graph.W[edges[:, 0], edges[:, 1]], dtype=np.float64)
    return _csr_edge_weights(graph.indptr, graph.indices, graph.data, edges)


def _check_start(start, n):
    if isinstance(start, (bool, np.bool_)) or not isinstance(start, numbers.Integral):
        raise TypeError(f"start must be an int vertex index, got {type(start).__name__}")
    if not 0 <= start < n:
        raise ValueError(f"start = {start} is out of range for a graph with n = {n} vertices; use 0 <= start < {n}")
    return int(start)


def _sign(maximum):
    return 1.0 if maximum else -1.0


def _tree(graph, edges, algorithm, info):
    return SpanningTree(edges, _edge_weights(graph, edges), graph.n, algorithm, info)


def _private_setup(weights, topology, rho, epsilon, delta, sensitivity, start, rng):
    rho = privacy.resolve_rho(rho, epsilon, delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    graph = as_graph(weights, topology=topology)
    start = _check_start(start, graph.n)
    return graph, rho, sensitivity, start, as_generator(rng)


def exact_mst(weights, *, maximum=False, start=0, topology=None):
    """The exact (non-private) minimum spanning tree.

    Parameters
    ----------
    weights : array_like (n, n) or scipy.sparse (n, n)
        Symmetric weights; dense means the complete graph.
    maximum : bool
        Return a maximum spanning tree instead.
    start : int
        First vertex of Prim's algorithm.
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set (see :func:`fast_pamst`); None: every pair of a dense
        ``weights``, the stored entries of a sparse one.

    Returns
    -------
    SpanningTree

    Notes
    -----
    Dense: O(n^2) Prim. Sparse: O(m log n) Prim with a binary heap.
    """
    graph = as_graph(weights, topology=topology)
    start = _check_start(start, graph.n)
    sgn = _sign(maximum)
    if graph.dense:
        edges = prim_dense_exact(graph.W, start, sgn)
    else:
        edges, _ = prim_csr_exact(graph.indptr, graph.indices, graph.data, start, sgn)
    return _tree(graph, edges, "exact", {"maximum": bool(maximum)})


def excess_weight(weights, tree, *, maximum=None, topology=None):
    """How much worse ``tree`` is than the optimum: tree weight minus the exact MST weight.

    For a maximum spanning tree (``maximum=True``, or the tree's own setting
    when None) it is the optimum minus the tree weight, so it is >= 0 either way.
    """
    if maximum is None:
        maximum = bool(tree.info.get("maximum", False))
    best = exact_mst(weights, maximum=maximum, topology=topology).weight
    return best - tree.weight if maximum else tree.weight - best


def pamst(weights, rho=None, sensitivity=None, *, rng=None, start=0, noise="exponential",
          maximum=False, epsilon=None, delta=None, topology=None):
    """PAMST (Pinot 2018): Prim with a report-noisy-max over all cut edges per step.

    Parameters
    ----------
    weights : array_like (n, n) or scipy.sparse (n, n)
    rho : float
        Total zCDP budget (> 0); or give ``epsilon`` and ``delta`` instead.
    sensitivity : float
        l_inf sensitivity Delta of every weight (weights' units, > 0).
    rng : None, int or numpy.random.Generator
        Same seed, same tree; see :func:`fast_pamst` on seeds.
    start : int
    noise : {"exponential", "gumbel"}
        Exponential noise of rate sqrt(2 rho/(n-1)) / (2 Delta) (report-noisy-max), or
        the exponential mechanism with rate sqrt(8 rho/(n-1)) / (2 Delta).
    maximum : bool
        Private maximum spanning tree (scores +w instead of -w).
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set, as in :func:`fast_pamst`.

    Returns
    -------
    SpanningTree

    Notes
    -----
    O(n^3) time on a dense graph (fresh noise for every cut edge at every step),
    O(n m) on a sparse one. The paper's baseline; use :func:`fast_pamst`. Noise
    is added to each score minus the step's best score, so a constant offset of
    the weights (1e12, say) cannot round it away. Interruptible with Ctrl-C.
    """
    if sensitivity is None:
        raise TypeError("pamst() needs sensitivity=, the l_inf sensitivity of each weight")
    privacy.check_noise(noise)
    graph, rho, sensitivity, start, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                         sensitivity, start, rng)
    lam = privacy.pamst_rate(rho, sensitivity, graph.n, noise)
    kind = EXPONENTIAL if noise == "exponential" else GUMBEL
    sgn = _sign(maximum)
    st = pamst_state(graph.n, start)
    if graph.dense:
        def advance(_, k):
            pamst_dense(graph.W, sgn, kind, lam, gen, st.inside, st.outside, st.visited, st.best,
                        st.edges, st.sizes, k)
    else:
        def advance(_, k):
            pamst_csr(graph.indptr, graph.indices, graph.data, sgn, kind, lam, gen, st.inside,
                      st.visited, st.best, st.edges, st.sizes, k)
    run_in_chunks(advance, graph.n - 1)
    edges = st.edges
    info = {"rho": rho, "sensitivity": sensitivity, "noise": noise, "rate": lam, "maximum": bool(maximum)}
    return _tree(graph, edges, "pamst", info)


def post_processing(weights, rho=None, sensitivity=None, *, rng=None, maximum=False,
                    epsilon=None, delta=None, topology=None):
    """Gaussian post-processing (Sealfon 2016): noise every weight once, then an exact MST.

    Adds N(0, sigma^2) to each of the m undirected edges with
    sigma = sensitivity * sqrt(m / (2 rho)) (the l2 sensitivity of m weights that
    each move by at most Delta is Delta sqrt(m)); the tree's reported weight is
    its true weight.

    Returns
    -------
    SpanningTree

    Notes
    -----
    O(n^2) time and one extra float64 (n, n) matrix on a dense graph; O(m log n) sparse.
    """
    if sensitivity is None:
        raise TypeError("post_processing() needs sensitivity=, the l_inf sensitivity of each weight")
    graph, rho, sensitivity, _, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                     sensitivity, 0, rng)
    sigma = privacy.gaussian_sigma(rho, sensitivity, graph.m)
    sgn = _sign(maximum)
    # a constant shift changes no tree's rank; it keeps offsets from rounding the noise
    ref = graph.wmax if maximum else graph.wmin
    if graph.n < 2:
        edges = np.zeros((0, 2), dtype=np.int64)
    elif graph.dense:
        require_memory(8 * graph.n * graph.n, f"post_processing on n = {graph.n}")
        noisy = noisy_dense(graph.W, ref, sigma, gen)
        edges = prim_dense_exact(noisy, 0, sgn)
        del noisy
    else:
        noisy = noisy_csr(graph.indptr, graph.indices, graph.data, ref, sigma, gen)
        edges, _ = prim_csr_exact(graph.indptr, graph.indices, noisy, 0, sgn)
    info = {"rho": rho, "sensitivity": sensitivity, "sigma": sigma, "maximum": bool(maximum)}
    return _tree(graph, edges, "post_processing", info)


def fast_pamst(weights, rho=None, sensitivity=None, *, rng=None, start=0, noise="exponential",
               discretization=None, maximum=False, epsilon=None, delta=None, topology=None):
    """Fast-PAMST (Pagh & Retschmeier 2024): private Prim with a discretized, grouped RNM.

    Each of the n - 1 steps selects a cut edge with probability exactly that of
    ``argmax(s * floor(-w / s) + noise)`` over the cut, with fresh i.i.d. noise per
    edge, but draws only the few noises that matter (see ``sampler.py``).

    Parameters
    ----------
    weights : array_like (n, n) or scipy.sparse (n, n)
        Symmetric weights; dense means the complete graph. float32 and float64
        C/F-ordered arrays (memmaps included) are read in place.
    rho : float
        Total zCDP budget (> 0); or give ``epsilon`` and ``delta`` instead.
    sensitivity : float
        l_inf sensitivity Delta of every weight (weights' units, > 0).
    rng : None, int or numpy.random.Generator
        Same seed, same tree. See the Notes on seeds.
    start : int
        First vertex.
    noise : {"exponential", "gumbel"}
        "exponential": report-noisy-max, rate sqrt(2 rho/(n-1)) / (2 D_s)
        (the paper). "gumbel": the exponential mechanism, rate
        sqrt(8 rho/(n-1)) / (2 D_s) by its bounded-range zCDP accounting;
        same privacy (rho-zCDP), about 3.5x lower error. D_s is the sensitivity
        of the discretized score (:func:`fastpamst_nb.privacy.discretized_sensitivity`):
        s * ceil(Delta / s) when s is a power of two, s * ceil(Delta / s + 1/2)
        otherwise (2 Delta at the default s = Delta unless Delta is a power of two).
    discretization : float, optional
        The step s (weights' units); defaults to ``sensitivity``. Weights with
        |w / s| >= 2**62 (s a power of two) or 2**52 (any other s) are refused.
    maximum : bool
        Private maximum spanning tree (scores s * floor(w / s)).
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set: the true entries of a mask, the non-zero stored
        entries of a sparse pattern; each edge's weight is read from ``weights``
        (dense, or sparse with unstored entries weighing 0). Default: every pair
        of a dense ``weights``, the stored entries of a sparse one. Never derive
        the topology from the weights: ``scipy.sparse.csr_matrix(W)`` and
        ``A + A.T`` drop zero weights, which makes the edge set private.

    Returns
    -------
    SpanningTree

    Notes
    -----
    O(m + G) to build the grouped queue (G = number of distinct discretized
    weights), O(m) for the cut updates and, per step, O(F) per block visited by
    the selection: O(m + n^1.5 log n / sqrt(rho)) overall. Extra memory: one
    int32 slot per edge plus O(G). The steps run in chunks of about 0.1 s, so
    Ctrl-C (KeyboardInterrupt, also in Jupyter) stops a long release.

    Only ``edges`` is private. ``weight`` and ``edge_weights`` of the result are
    the true input weights (for evaluation), not private.

    Seeds: noise comes from 53-bit uniforms, so events of probability below
    about 1e-16 per draw are impossible rather than rare (as in most
    floating-point DP code). Reusing one integer seed across releases reuses
    their noise and correlates them: use ``rng=None`` (fresh OS entropy) for
    real releases; fixed seeds are for tests and examples.
    """
    return _fast_pamst(weights, rho, sensitivity, rng=rng, start=start, noise=noise,
                       discretization=discretization, maximum=maximum, epsilon=epsilon,
                       delta=delta, topology=topology)[0]


def _fast_pamst(weights, rho, sensitivity, *, rng=None, start=0, noise="exponential",
                discretization=None, maximum=False, epsilon=None, delta=None, topology=None,
                theta=DEFAULT_THETA, sigma=DEFAULT_SIGMA):
    """Validate, then run :func:`_fast_pamst_graph`."""
    if sensitivity is None:
        raise TypeError("fast_pamst() needs sensitivity=, the l_inf sensitivity of each weight")
    privacy.check_noise(noise)
    if discretization is not None:  # checked before the O(n^2) validation pass
        check_positive("discretization", discretization)
    graph, rho, sensitivity, start, gen = _private_setup(weights, topology, rho, epsilon, delta,
                                                         sensitivity, start, rng)
    s = sensitivity if discretization is None else float(discretization)
    return _fast_pamst_graph(graph, rho, sensitivity, s, start, gen, noise, maximum, theta, sigma)


def _fast_pamst_graph(graph, rho, sensitivity, s, start, gen, noise, maximum, theta, sigma):
    """Fast-PAMST on a validated ``Graph``; returns the tree and the kernel's counters.

    Tests call it directly to run thousands of tiny releases without re-validating,
    and force the speed knobs theta/sigma to their extremes.
    """
    lam = privacy.fast_pamst_rate(rho, sensitivity, graph.n, s, noise)
    kind = EXPONENTIAL if noise == "exponential" else GUMBEL
    sgn = _sign(maximum)
    stats = np.zeros(N_STATS, dtype=np.int64)
    edges = np.empty((graph.n - 1, 2), dtype=np.int64)
    if graph.n >= 2:
        r = lam * s
        q = gq_build(graph, sgn, s, r, sigma)
        visited = np.zeros(graph.n, dtype=np.bool_)
        nxt = [start]  # the vertex that joins the tree at the next step

        if graph.dense:
            def advance(step0, k):
                nxt[0] = prim_dense_private(q, graph.W, visited, edges, step0, k, nxt[0], kind, r,
                                            theta, sigma, gen, stats)
        else:
            def advance(step0, k):
                nxt[0] = prim_csr_private(q, graph.indptr, graph.indices, graph.data, visited,
                                          edges, step0, k, nxt[0], kind, r, theta, sigma, gen, stats)
        run_in_chunks(advance, graph.n - 1)
    info = {"rho": rho, "sensitivity": sensitivity, "noise": noise, "rate": lam,
            "discretization": s, "maximum": bool(maximum)}
    return _tree(graph, edges, "fast_pamst", info), stats
