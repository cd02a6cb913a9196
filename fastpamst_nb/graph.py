"""The input graph: validation and the two storage forms the kernels read.

A dense (n, n) array means the complete graph on n vertices; a scipy.sparse (n, n)
matrix means the graph whose edges are its stored entries (explicit zeros
included). Either way the matrix must be symmetric and its diagonal is ignored.

The topology is public; the weights are private. A topology read off the weights
is not public: ``scipy.sparse.csr_matrix(W)``, ``A + A.T`` and ``eliminate_zeros``
drop zero-weight edges, so the edge set would depend on the data. Pass
``topology=`` (a boolean (n, n) mask or a scipy.sparse pattern, fixed before
looking at the weights) and the edges are exactly its true entries, with their
weights read from ``weights`` (a sparse entry that is not stored weighs 0).

Error messages name indices, shapes and parameters, never a weight.

Kernels never see Python objects per edge: a dense graph is the user's own array
(a C-contiguous view of it when possible, so nothing is copied), a sparse graph a
symmetric CSR triple ``(indptr, indices, data)`` with the diagonal removed.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import connected_components

from .core import CACHE

Graph = namedtuple("Graph", ["n", "m", "dense", "W", "indptr", "indices", "data", "wmin", "wmax"])
Graph.__doc__ = """A validated weighted graph.

n : int, number of vertices.
m : int, number of undirected edges (n(n-1)/2 when dense).
dense : bool, True for the complete graph stored in ``W``.
W : (n, n) C-contiguous float32/float64 array (dense) or an empty (0, 0) array.
indptr, indices, data : symmetric CSR without diagonal (sparse) or empty arrays.
wmin, wmax : smallest and largest edge weight (0.0 when there is no edge).
"""

_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=np.float64)
_EMPTY_W = np.zeros((0, 0), dtype=np.float64)


@njit(cache=CACHE, nogil=True)
def _dense_scan(W):
    """One tiled pass over the strict upper triangle: finiteness, symmetry, range.

    Returns (status, i, j, wmin, wmax); status 0 ok, 1 non-finite at (i, j),
    2 W[i, j] != W[j, i]. Tiles keep the transposed reads in cache.
    """
    n = W.shape[0]
    tile = 64
    wmin = np.inf
    wmax = -np.inf
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    w = np.float64(W[i, j])
                    if not np.isfinite(w):
                        return 1, i, j, 0.0, 0.0
                    if w != np.float64(W[j, i]):
                        return 2, i, j, 0.0, 0.0
                    if w < wmin:
                        wmin = w
                    if w > wmax:
                        wmax = w
    if n < 2:
        return 0, 0, 0, 0.0, 0.0
    return 0, 0, 0, wmin, wmax


def _check_dtype(dtype, name):
    if dtype == np.bool_ or not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise TypeError(
            f"{name} must hold real numbers (a float or integer dtype), got dtype {dtype}; "
            "convert it with weights.astype(np.float64)"
        )


def _to_kernel_float(a, name):
    """float32/float64 pass through untouched; other real dtypes become float64 only when exact."""
    if a.dtype in (np.float32, np.float64):
        return a
    b = a.astype(np.float64)
    if not np.array_equal(b.astype(a.dtype), a):
        raise ValueError(
            f"{name} of dtype {a.dtype} cannot be represented exactly as float64 "
            "(integers above 2**53 or extended precision); rescale or round it yourself first"
        )
    return b


def _check_shape(shape, name):
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D (n, n) matrix, got {len(shape)} dimension(s)")
    if shape[0] != shape[1]:
        raise ValueError(f"{name} must be square (n, n), got shape {shape}")
    if shape[0] == 0:
        raise ValueError(f"{name} is empty (n = 0); a spanning tree needs at least one vertex")


def as_graph(weights, name="weights", topology=None):
    """Validate ``weights`` and return a :class:`Graph` the kernels can read.

    Parameters
    ----------
    weights : array_like (n, n) or scipy.sparse (n, n)
        Dense: the complete graph; any real dtype, C or F order, read-only and
        np.memmap allowed (not copied when it is float32/float64 and C or F
        contiguous). Sparse: stored entries are the edges.
    name : str
        How error messages call the argument.
    topology : None, array_like (n, n) or scipy.sparse (n, n)
        The public edge set: dense, the entries that are true (non-zero); sparse,
        the stored entries whose value is non-zero. None: all pairs of a dense
        ``weights``, the stored entries of a sparse one.

    Raises
    ------
    TypeError
        Non-numeric or complex input.
    ValueError
        Not 2-D, not square, n = 0, a NaN/inf edge weight, not symmetric, or a
        disconnected sparse topology.
    """
    if topology is not None:
        return _topology_graph(weights, topology, name)
    if sp.issparse(weights):
        return _sparse_graph(weights, name)
    W = _dense_array(weights, name)
    if not W.flags.c_contiguous:
        # W is symmetric, so the transpose of an F-ordered array is the same matrix, C-ordered
        W = W.T if W.flags.f_contiguous else np.ascontiguousarray(W)
    status, i, j, wmin, wmax = _dense_scan(W)
    if status == 1:
        _raise_not_finite(name, i, j)
    if status == 2:
        _raise_asymmetric(name, i, j)
    n = W.shape[0]
    return Graph(n, n * (n - 1) // 2, True, W, _EMPTY_I, _EMPTY_I, _EMPTY_F, wmin, wmax)


def _dense_array(weights, name):
    """``weights`` as a float32/float64 ndarray (no copy when it already is one)."""
    if isinstance(weights, (str, bytes)) or weights is None:
        raise TypeError(f"{name} must be an (n, n) array or scipy.sparse matrix, got {type(weights).__name__}")
    try:
        W = np.asarray(weights)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} could not be read as a numeric (n, n) array: {exc}") from None
    _check_dtype(W.dtype, name)
    _check_shape(W.shape, name)
    return _to_kernel_float(W, name)


def _raise_not_finite(name, i, j):
    raise ValueError(
        f"{name}[{i}, {j}] is not finite (NaN or inf); every edge weight must be a finite "
        "number (leave edges out with a scipy.sparse matrix or topology=)"
    )


def _raise_asymmetric(name, i, j):
    raise ValueError(
        f"{name} is not symmetric: {name}[{i}, {j}] != {name}[{j}, {i}]; "
        "symmetrize it first, e.g. W = (W + W.T) / 2 or W = np.minimum(W, W.T)"
    )


def _topology_graph(weights, topology, name):
    """The graph whose edges are the true entries of the public ``topology``."""
    if isinstance(topology, (str, bytes)):
        raise TypeError(f"topology must be a boolean (n, n) array or a scipy.sparse pattern, "
                        f"got {type(topology).__name__}")
    if sp.issparse(topology):
        T = sp.coo_matrix(topology)
        keep = T.data != 0
        rows, cols = T.row[keep], T.col[keep]
    else:
        T = np.asarray(topology)
        if T.dtype != np.bool_ and not np.issubdtype(T.dtype, np.number):
            raise TypeError(f"topology must be a boolean (n, n) mask, got dtype {T.dtype}")
        _check_shape(T.shape, "topology")
        rows, cols = np.nonzero(T)
    _check_shape(T.shape, "topology")
    if sp.issparse(weights):
        _check_shape(weights.shape, name)
        _check_dtype(weights.dtype, name)
    else:
        weights = _dense_array(weights, name)
    if weights.shape != T.shape:
        raise ValueError(f"{name} and topology must have the same shape, got {weights.shape} "
                         f"and {T.shape}")
    n = T.shape[0]
    off = rows != cols
    rows, cols = rows[off].astype(np.int64), cols[off].astype(np.int64)
    # duplicates of a sparse pattern name the same edge once
    P = sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    P.sum_duplicates()
    PT = P.T.tocsr()
    PT.sort_indices()
    if not (np.array_equal(P.indptr, PT.indptr) and np.array_equal(P.indices, PT.indices)):
        raise ValueError("topology is not symmetric: an edge (i, j) needs its entry (j, i) too; "
                         "use topology | topology.T")
    P = P.tocoo()
    rows, cols = P.row.astype(np.int64), P.col.astype(np.int64)
    if sp.issparse(weights):
        # implicit entries of a sparse matrix are zeros: exactly the edges csr_matrix(W) drops
        vals = np.asarray(sp.csr_matrix(weights)[rows, cols]).ravel()
    else:
        vals = weights[rows, cols]
    data = _to_kernel_float(np.asarray(vals), name).astype(np.float64, copy=False)
    return _csr_graph(n, rows, cols, data, name)


def _sparse_graph(A, name):
    _check_shape(A.shape, name)
    _check_dtype(A.dtype, name)
    n = A.shape[0]
    coo = sp.coo_matrix(A)
    off = coo.row != coo.col
    data = _to_kernel_float(np.asarray(coo.data[off]), name).astype(np.float64, copy=False)
    return _csr_graph(n, coo.row[off], coo.col[off], data, name)


def _csr_graph(n, rows, cols, data, name):
    """Validate off-diagonal entries (rows, cols, data) and build the CSR ``Graph``."""
    if data.size and not np.all(np.isfinite(data)):
        k = int(np.flatnonzero(~np.isfinite(data))[0])
        _raise_not_finite(name, rows[k], cols[k])
    # coo -> csr sums duplicates (scipy's meaning of repeated entries) and keeps explicit zeros
    S = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    T = S.T.tocsr()
    T.sort_indices()
    symmetric = (
        np.array_equal(S.indptr, T.indptr)
        and np.array_equal(S.indices, T.indices)
        and np.array_equal(S.data, T.data)
    )
    if not symmetric:
        raise ValueError(
            f"{name} is not symmetric (its stored entries or their values differ from its transpose); "
            "symmetrize it first, e.g. W = (W + W.T) / 2 or W = W.maximum(W.T)"
        )
    pattern = sp.csr_matrix((np.ones(S.nnz, dtype=np.int8), S.indices, S.indptr), shape=(n, n))
    n_comp, _ = connected_components(pattern, directed=False)
    if n_comp > 1:
        raise ValueError(
            f"the topology of {name} is disconnected ({n_comp} components), so no spanning tree exists; "
            "add edges, or run the algorithm on each connected component "
            "(scipy.sparse.csgraph.connected_components)"
        )
    indptr = S.indptr.astype(np.int64)
    indices = S.indices.astype(np.int64)
    d = S.data.astype(np.float64)
    wmin = float(d.min()) if d.size else 0.0
    wmax = float(d.max()) if d.size else 0.0
    return Graph(n, S.nnz // 2, False, _EMPTY_W, indptr, indices, d, wmin, wmax)
