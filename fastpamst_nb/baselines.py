"""The baselines Fast-PAMST is measured against: PAMST and Gaussian post-processing.

* PAMST (Pinot 2018): Prim whose every step draws fresh noise for *every* active
  cut edge and takes the argmax of ``sgn * w + noise``: O(n^3) on a dense graph,
  O(n m) on a sparse one. It is the in-place baseline of the paper.
* Post-processing (Sealfon 2016): one Gaussian draw per undirected edge, then an
  exact MST of the noisy weights; the reported weight is the true one.
"""

import math

import numpy as np
from numba import njit

from .core import CACHE
from .sampler import EXPONENTIAL


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


@njit(cache=CACHE, nogil=True)
def pamst_dense(W, start, sgn, kind, lam, rng):
    """PAMST on the complete graph of W: each step scans all t * (n - t) cut edges."""
    n = W.shape[0]
    inside = np.empty(n, dtype=np.int64)
    outside = np.empty(n, dtype=np.int64)
    k = 0
    for u in range(n):
        if u != start:
            outside[k] = u
            k += 1
    inside[0] = start
    n_in = 1
    n_out = n - 1
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    for step in range(n - 1):
        top = -np.inf
        arg_a = -1
        arg_k = -1
        for i in range(n_in):
            a = inside[i]
            row = W[a]
            for kk in range(n_out):
                val = sgn * np.float64(row[outside[kk]]) + _noise(kind, lam, rng)
                if val > top:
                    top = val
                    arg_a = a
                    arg_k = kk
        b = outside[arg_k]
        outside[arg_k] = outside[n_out - 1]
        n_out -= 1
        inside[n_in] = b
        n_in += 1
        edges[step, 0] = arg_a
        edges[step, 1] = b
    return edges


@njit(cache=CACHE, nogil=True)
def pamst_csr(indptr, indices, data, start, sgn, kind, lam, rng):
    """PAMST on a symmetric CSR topology: each step scans the visited vertices' rows."""
    n = indptr.shape[0] - 1
    visited = np.zeros(n, dtype=np.bool_)
    inside = np.empty(n, dtype=np.int64)
    inside[0] = start
    visited[start] = True
    n_in = 1
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    for step in range(n - 1):
        top = -np.inf
        arg_a = -1
        arg_b = -1
        for i in range(n_in):
            a = inside[i]
            for p in range(indptr[a], indptr[a + 1]):
                b = indices[p]
                if visited[b]:
                    continue
                val = sgn * data[p] + _noise(kind, lam, rng)
                if val > top:
                    top = val
                    arg_a = a
                    arg_b = b
        visited[arg_b] = True
        inside[n_in] = arg_b
        n_in += 1
        edges[step, 0] = arg_a
        edges[step, 1] = arg_b
    return edges


@njit(cache=CACHE, nogil=True)
def noisy_dense(W, sigma, rng):
    """W plus one N(0, sigma^2) draw per undirected edge, as a symmetric float64 matrix.

    Filled tile by tile so that the mirrored writes stay in cache.
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
                    x = np.float64(W[i, j]) + sigma * rng.standard_normal()
                    out[i, j] = x
                    out[j, i] = x
    return out


@njit(cache=CACHE, nogil=True)
def noisy_csr(indptr, indices, data, sigma, rng):
    """CSR data plus one N(0, sigma^2) draw per undirected edge (both stored copies get it).

    Rows have sorted indices, so each mirror position is found by binary search.
    """
    n = indptr.shape[0] - 1
    out = np.empty_like(data)
    for a in range(n):
        for p in range(indptr[a], indptr[a + 1]):
            b = indices[p]
            if b > a:
                x = data[p] + sigma * rng.standard_normal()
                out[p] = x
                lo = indptr[b]
                mirror = lo + np.searchsorted(indices[lo:indptr[b + 1]], a)
                out[mirror] = x
    return out
