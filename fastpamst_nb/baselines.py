"""The baselines Fast-PAMST is measured against: PAMST and Gaussian post-processing.

* PAMST (Pinot 2018): Prim whose every step draws fresh noise for *every* active
  cut edge and takes the argmax of ``sgn * w + noise``: O(n^3) on a dense graph,
  O(n m) on a sparse one. It is the in-place baseline of the paper.
* Post-processing (Sealfon 2016): one Gaussian draw per undirected edge, then an
  exact MST of the noisy weights; the reported weight is the true one.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .core import CACHE

# PAMST's noise kinds (its own baseline keeps both: pamst(noise="gumbel") is Pinot's
# per-step exponential mechanism over the cut)
EXPONENTIAL = 0
GUMBEL = 1


@njit(cache=CACHE, nogil=True)
def _noise(kind, lam, rng):
    """Exp(rate lam) for report-noisy-max, Gumbel(scale 1/lam) for the exponential mechanism."""
    e = rng.standard_exponential()
    if kind == EXPONENTIAL:
        return e / lam
    # -log(E) is standard Gumbel when E ~ Exp(1); E = 0 has probability 0 but costs nothing to avoid
    while e == 0.0:
        e = rng.standard_exponential()
    return -math.log(e) / lam


PamstState = namedtuple("PamstState", ["inside", "outside", "visited", "best", "edges", "sizes"])
PamstState.__doc__ = """Where a PAMST run stands between two chunks of steps.

inside : int64 (n,), the tree's vertices in joining order; ``sizes[0]`` are set.
outside : int64 (n,), the unvisited vertices (dense only; ``sizes[1]`` are set).
visited : bool (n,).
best : float64 (n,), best score sgn * w from the tree into each unvisited vertex
    (-inf until reached): its maximum is the step's reference score.
edges : int64 (n - 1, 2), the selected edges; row t is written by step t.
sizes : int64 (2,), [vertices in the tree, unvisited vertices].
"""


def pamst_state(n, start):
    """A fresh :class:`PamstState` whose tree holds ``start`` only (no row read yet)."""
    inside = np.empty(n, dtype=np.int64)
    inside[0] = start
    outside = np.empty(n, dtype=np.int64)
    outside[: n - 1] = [u for u in range(n) if u != start]
    visited = np.zeros(n, dtype=np.bool_)
    visited[start] = True
    return PamstState(inside, outside, visited, np.full(n, -np.inf),
                      np.empty((max(n - 1, 0), 2), dtype=np.int64),
                      np.array([1, n - 1], dtype=np.int64))


@njit(cache=CACHE, nogil=True)
def pamst_dense(W, sgn, kind, lam, rng, st, n_steps):
    """``n_steps`` steps of PAMST on the complete graph of W: each scans all
    t * (n - t) cut edges with fresh noise (``st``, a :class:`PamstState`, updated).

    Noise is added to ``sgn * w - ref`` with ref the step's best score (kept per
    unvisited vertex in ``best``, O(n) per step): scores near 1e12 would round the
    noise to ulp(w) and leave ties to scan order (docs/errata.rst, erratum 5), while the
    differences to ref are exact where it matters, next to the top.
    """
    inside, outside, visited, best, edges, sizes = st
    n_in, n_out = sizes[0], sizes[1]
    for _ in range(n_steps):
        row = W[inside[n_in - 1]]  # the vertex that joined last
        ref = -np.inf
        for kk in range(n_out):
            u = outside[kk]
            best[u] = max(best[u], sgn * np.float64(row[u]))
            ref = max(ref, best[u])
        top = -np.inf
        arg_a = -1
        arg_k = -1
        for i in range(n_in):
            a = inside[i]
            row = W[a]
            for kk in range(n_out):
                val = (sgn * np.float64(row[outside[kk]]) - ref) + _noise(kind, lam, rng)
                if val > top or arg_a < 0:
                    top = val
                    arg_a = a
                    arg_k = kk
        b = outside[arg_k]
        outside[arg_k] = outside[n_out - 1]
        n_out -= 1
        visited[b] = True
        inside[n_in] = b
        edges[n_in - 1, 0] = arg_a
        edges[n_in - 1, 1] = b
        n_in += 1
    sizes[0] = n_in
    sizes[1] = n_out


@njit(cache=CACHE, nogil=True)
def pamst_csr(indptr, indices, data, sgn, kind, lam, rng, st, n_steps):
    """``n_steps`` steps of PAMST on a symmetric CSR topology: each scans the tree's
    rows (``st``, a :class:`PamstState`, updated; its ``outside`` is not used).

    As in :func:`pamst_dense`, noise is added to the score minus the step's best
    score, the maximum of ``best`` over the unvisited vertices.
    """
    inside, _, visited, best, edges, sizes = st
    n = indptr.shape[0] - 1
    n_in = sizes[0]
    for _ in range(n_steps):
        v = inside[n_in - 1]
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if not visited[u]:
                best[u] = max(best[u], sgn * data[p])
        ref = -np.inf
        for u in range(n):
            if not visited[u]:
                ref = max(ref, best[u])
        top = -np.inf
        arg_a = -1
        arg_b = -1
        for i in range(n_in):
            a = inside[i]
            for p in range(indptr[a], indptr[a + 1]):
                u = indices[p]
                if visited[u]:
                    continue
                val = (sgn * data[p] - ref) + _noise(kind, lam, rng)
                if val > top or arg_a < 0:
                    top = val
                    arg_a = a
                    arg_b = u
        visited[arg_b] = True
        inside[n_in] = arg_b
        edges[n_in - 1, 0] = arg_a
        edges[n_in - 1, 1] = arg_b
        n_in += 1
    sizes[0] = n_in
    sizes[1] = n - n_in


@njit(cache=CACHE, nogil=True)
def noisy_dense(W, ref, sigma, rng):
    """W - ref plus one N(0, sigma^2) draw per undirected edge, as a symmetric float64 matrix.

    Filled tile by tile so that the mirrored writes stay in cache. Subtracting the
    constant ``ref`` (the smallest or largest weight) changes no tree's rank but
    keeps noise of a small sigma from being rounded to ulp(w) when the weights
    carry a large offset (docs/errata.rst, erratum 5).
    """
    n = W.shape[0]
    out = np.empty((n, n), dtype=np.float64)
    tile = 64
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                out[i, i] = 0.0
                for j in range(max(j0, i + 1), j1):
                    x = (np.float64(W[i, j]) - ref) + sigma * rng.standard_normal()
                    out[i, j] = x
                    out[j, i] = x
    return out


@njit(cache=CACHE, nogil=True)
def noisy_csr(indptr, indices, data, ref, sigma, rng):
    """CSR data - ref plus one N(0, sigma^2) draw per undirected edge (both stored copies
    get it); ``ref`` as in :func:`noisy_dense`.

    Rows have sorted indices, so each mirror position is found by binary search.
    """
    n = indptr.shape[0] - 1
    out = np.empty_like(data)
    for a in range(n):
        for p in range(indptr[a], indptr[a + 1]):
            b = indices[p]
            if b > a:
                x = (data[p] - ref) + sigma * rng.standard_normal()
                out[p] = x
                lo = indptr[b]
                mirror = lo + np.searchsorted(indices[lo:indptr[b + 1]], a)
                out[mirror] = x
    return out
