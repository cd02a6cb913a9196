"""The input graph: validation and the two storage forms the kernels read.

A dense (n, n) array means the complete graph on n vertices; a scipy.sparse (n, n)
matrix means the graph whose edges are its stored entries (explicit zeros
included). Either way the matrix must be symmetric and its diagonal is ignored,
unless ``symmetric="upper"`` (or ``"lower"``) says to read one triangle only and
mirror it: for matrices that are symmetric up to rounding (``1 - np.corrcoef(X)``,
distances computed in float32), at the cost of one (n, n) copy when dense.
Two more forms people already have are read as one of those: a condensed
distance vector (``scipy.spatial.distance.pdist``) is the complete graph of its
``squareform``, and a ``networkx.Graph`` is its own edge set (a topology) with
the ``"weight"`` attributes. A masked array is refused: its mask would be
silently dropped by numpy.

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

This module decides which path an input takes and words the errors; the work is
in three modules beside it: :mod:`fastpamst_nb.input_forms` (the forms of input,
their dtype and shape checks), :mod:`fastpamst_nb.dense_scan` (the tiled pass
over a dense matrix) and :mod:`fastpamst_nb.csr_checks` (the checks of a sparse
pattern).
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from .core import require_memory
from .csr_checks import _pattern_checks, _stores_diagonal
from .dense_scan import _dense_mirror, _scan_dense
from .input_forms import (
    _check_dtype, _check_shape, _dense_array, _is_networkx_graph, _networkx_topology, _refuse_masked,
    _to_kernel_float,
)
from .window import NO_WINDOW


Graph = namedtuple("Graph", ["n", "m", "dense", "W", "indptr", "indices", "data", "wmin", "wmax"])
Graph.__doc__ = """A validated weighted graph.

n : int, number of vertices.
m : int, number of undirected edges (n(n-1)/2 when dense).
dense : bool, True for the complete graph stored in ``W``.
W : (n, n) C-contiguous read-only float32/float64 array (dense; see ``kernel_view``) or an
    empty (0, 0) array.
indptr, indices, data : symmetric CSR without diagonal (sparse) or empty arrays.
wmin, wmax : smallest and largest edge weight (0.0 when there is no edge).
"""

_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=np.float64)
_EMPTY_W = np.zeros((0, 0), dtype=np.float64)

def as_graph(weights, name="weights", topology=None, symmetric=None, window=None, alongside=None):
    """Validate ``weights`` and return a :class:`Graph` the kernels can read.

    Parameters
    ----------
    weights : array_like (n, n), array_like (n(n-1)/2,), scipy.sparse (n, n) or networkx.Graph
        Dense (n, n): the complete graph; any real dtype, C or F order, read-only
        and np.memmap allowed (not copied when it is float64, or float32 above
        2**22 entries, and C or F contiguous; see :func:`kernel_view`). Sparse:
        stored entries are the edges. 1-D: a condensed distance vector, the output of ``scipy.spatial.distance.pdist``, whose
        length must be n(n-1)/2 for some n >= 2; it is expanded with
        ``scipy.spatial.distance.squareform`` into the complete graph on n
        vertices (an (n, n) matrix is allocated, 8 n^2 bytes as float64).
        networkx.Graph: nodes 0..n-1 are the vertices, any other nodes are
        numbered in the graph's node order (see :func:`fastpamst_nb.input_forms.vertex_labels`); its edges (all
        of them, weight 0 included) are the topology and every edge needs a
        real ``"weight"`` attribute; self-loops are ignored like the diagonal.
        A numpy masked array is refused (numpy would drop its mask): express
        missing edges with ``topology=`` instead.
    name : str
        How error messages call the argument.
    topology : None, array_like (n, n) or scipy.sparse (n, n)
        The public edge set: dense, the entries that are true (non-zero); sparse,
        the stored entries whose value is non-zero. None: all pairs of a dense
        ``weights``, the stored entries of a sparse one, the edges of a
        networkx graph (which cannot be combined with ``topology=``).
    symmetric : None, "upper" or "lower"
        None (default): the matrix must be exactly symmetric (on the topology's
        entries when ``topology`` is given). ``"upper"``: read only the strict
        upper triangle, ``weights[i, j]`` for i < j, and mirror it; ``"lower"``:
        only ``weights[i, j]`` for i > j. The other triangle and the diagonal
        are never read (they may even hold NaN), and no symmetry check is made:
        for matrices that are symmetric up to rounding. A dense matrix without
        ``topology=`` then costs one (n, n) copy in its float dtype (4 or 8 n^2
        bytes; none extra when a non-float dtype or a strided view is copied
        anyway), checked against the available memory before it is allocated;
        the user's array is not modified. A sparse matrix keeps the stored
        entries of that triangle (mirrored); with ``topology=``, each edge
        {i, j} reads its weight from that triangle (no copy). No effect on a
        condensed vector or a networkx graph, symmetric by construction.

    window : window.TopWindow, optional
        Filled while a dense matrix read whole (no ``topology``, no
        ``symmetric``) is validated, and then marked complete; left untouched
        otherwise. ``fast_pamst`` sizes its top buckets from it.
    alongside : callable, optional
        ``f(W)``, called with the (n, n) array the kernels will read, on a thread of
        its own while a dense matrix read whole is validated, when there are two
        threads or more and 2**20 entries or more (not called otherwise). It runs
        before the matrix is known to be valid (a NaN, an asymmetry), so it must be
        safe on any values, and it reports through its own closure; the validation's
        errors are raised once it has returned. ``exact_mst`` runs its Prim so.

    Returns
    -------
    Graph

    Notes
    -----
    The validation reads the matrix once, O(n^2) for a dense one and O(n + m) for a
    sparse one. From 2**20 entries a dense pass splits its rows across threads (the
    scan is bound by memory bandwidth, which one core does not exhaust), and from
    2**17 stored entries a sparse one runs its symmetry and connectivity checks side
    by side; the threads are ``NUMBA_NUM_THREADS`` (numba's variable, read when
    numba is imported) capped by the CPUs the process may run on, so
    ``NUMBA_NUM_THREADS=1`` keeps everything on the calling thread. The result,
    and the defect an error names, do not depend on the number of threads.

    Raises
    ------
    TypeError
        Non-numeric or complex input, a masked array, a directed or multi
        networkx graph, a ``symmetric`` that is not None or a str.
    ValueError
        A ``symmetric`` other than None, "upper" and "lower"; not 2-D (nor a
        condensed vector of length n(n-1)/2), not square, n = 0, a NaN/inf edge
        weight (in the triangle read), not symmetric (only checked with
        ``symmetric=None``; the message gives both fixes without saying how
        large the asymmetry is), a disconnected sparse topology,
        a networkx edge without a weight, or an
        input whose conversion or copy would not fit in the available memory
        (decided from its shape, before allocating).
    """
    lower = _check_symmetric(symmetric)
    _refuse_masked(weights, name)
    _refuse_masked(topology, "topology")
    if _is_networkx_graph(weights):
        if topology is not None:
            raise ValueError(
                f"{name} is a networkx graph, whose edges already are the topology; drop "
                "topology=, or pass the weights as an (n, n) array or scipy.sparse matrix"
            )
        weights, topology = _networkx_topology(weights, name)
    if topology is not None:
        return _topology_graph(weights, topology, name, lower)
    if sp.issparse(weights):
        return _sparse_graph(weights, name, lower)
    if lower is not None:
        return _triangle_graph(weights, name, lower)
    W = _dense_array(weights, name)
    if not W.flags.c_contiguous:
        if W.flags.f_contiguous:
            # W is symmetric, so the transpose of an F-ordered array is the same matrix, C-ordered
            W = W.T
        else:  # a strided view (W[::2, ::2], np.broadcast_to, ...): the kernels need a copy
            require_memory(W.size * W.itemsize, f"a contiguous copy of the non-contiguous {name} "
                           f"of shape {W.shape} and dtype {W.dtype}")
            W = np.ascontiguousarray(W)
    W = kernel_view(W)
    status, i, j, wmin, wmax = _scan_dense(W, NO_WINDOW if window is None else window,
                                           alongside=alongside)
    if status == 1:
        _raise_not_finite(name, i, j)
    if status == 2:
        _raise_asymmetric(name, i, j)
    n = W.shape[0]
    return Graph(n, n * (n - 1) // 2, True, W, _EMPTY_I, _EMPTY_I, _EMPTY_F, wmin, wmax)


def _check_symmetric(symmetric):
    """None, or whether ``symmetric`` names the lower triangle (True) or the upper (False)."""
    if symmetric is None:
        return None
    if not isinstance(symmetric, str):
        raise TypeError(
            f"symmetric must be None (require an exactly symmetric matrix), 'upper' or 'lower' "
            f"(read that triangle only), got {type(symmetric).__name__}; e.g. symmetric='upper'"
        )
    if symmetric not in ("upper", "lower"):
        shown = repr(symmetric) if len(symmetric) <= 20 else repr(symmetric[:17] + "...")
        raise ValueError(
            f"symmetric must be None (require an exactly symmetric matrix), 'upper' or 'lower' "
            f"(read that triangle only), got {shown}"
        )
    return symmetric == "lower"


def _triangle_graph(weights, name, lower):
    """The complete graph of one triangle of a dense ``weights``, mirrored into a symmetric copy."""
    W, owned = _dense_array(weights, name, owned=True)
    n = W.shape[0]
    what = f"symmetric='{'lower' if lower else 'upper'}'"
    transposed = False
    if not W.flags.c_contiguous:
        if W.flags.f_contiguous:  # W.T is C-ordered; the triangle to read is its other one
            W, lower, transposed = W.T, not lower, True
        else:  # a strided view: its contiguous copy is ours, mirrored in place
            require_memory(W.size * W.itemsize, f"a contiguous copy of the non-contiguous {name} "
                           f"of shape {W.shape} and dtype {W.dtype}")
            W, owned = np.ascontiguousarray(W), True
    if owned:  # a fresh array (dtype conversion, strided copy, condensed vector): no second copy
        S = W
    else:  # the user's array is only read
        require_memory(n * n * W.itemsize, f"{what}: the symmetric ({n}, {n}) {W.dtype} copy "
                       f"of one triangle of {name}")
        S = np.empty((n, n), dtype=W.dtype)
    status, r, c, wmin, wmax = _dense_mirror(kernel_view(W, widen=False), S, lower)
    if status == 1:
        _raise_not_finite(name, *((c, r) if transposed else (r, c)))
    S = kernel_view(S)
    return Graph(n, n * (n - 1) // 2, True, S, _EMPTY_I, _EMPTY_I, _EMPTY_F, wmin, wmax)


# float32 matrices up to this many entries (n = 2048) are widened to float64, an exact
# 8 n^2-byte copy (32 MiB at most), so that they run float64's compiled kernels
_WIDEN_FLOAT32_MAX_ENTRIES = 1 << 22


def kernel_view(W, widen=True):
    """A dense matrix as the kernels read it: a read-only view of the same memory.

    numba compiles one machine-code version of a kernel per argument type, and it
    types a read-only array (a memmap opened ``'r'``, ``np.asarray`` of a pandas
    DataFrame, ``writeable=False``) apart from a writable one: without this view
    each kind would compile Fast-PAMST's kernels again. Every dense matrix reaches
    the kernels read-only, so one compiled version serves them all, and numba
    refuses at compile time to write through a read-only array: the kernels
    provably never modify the user's matrix. With ``widen``, a float32 matrix of
    at most ``_WIDEN_FLOAT32_MAX_ENTRIES`` entries becomes a float64 copy (exact)
    for the same reason; larger ones are read in place (their kernels compile
    once, then load from numba's cache).
    """
    if widen and W.dtype == np.float32 and W.size <= _WIDEN_FLOAT32_MAX_ENTRIES:
        W = W.astype(np.float64)
    if not W.flags.writeable:
        return W
    view = W.view(np.ndarray)
    view.setflags(write=False)
    return view


def _raise_not_finite(name, i, j):
    raise ValueError(
        f"{name}[{i}, {j}] is not finite (NaN or inf); every edge weight must be a finite "
        "number (leave edges out with a scipy.sparse matrix or topology=)"
    )


def _raise_asymmetric(name, i, j, sparse=False):
    """The not-symmetric error: where, and both fixes.

    It does not say how large the asymmetry is (at rounding level or not): that
    would be one bit derived from the weights in the message (issue 25). The
    location of the first asymmetric pair is part of any message on malformed
    input; such errors are not protected (user guide, What is not protected).
    """
    where = (f"{name}[{i}, {j}] != {name}[{j}, {i}]" if i is not None
             else "its stored entries (its edges) differ from those of its transpose")
    sym = "W.maximum(W.T)" if sparse else "np.minimum(W, W.T)"
    fix = ("if it is symmetric only up to float rounding (1 - np.corrcoef(X), distances "
           "computed in float32), pass symmetric='upper' (or 'lower') to read one triangle "
           f"only; otherwise symmetrize it deliberately, e.g. W = (W + W.T) / 2 or W = {sym}")
    raise ValueError(f"{name} is not symmetric: {where}; {fix}")


def _raise_asymmetric_csr(name, S, T):
    """The not-symmetric error of a CSR matrix ``S`` whose transpose ``T`` (sorted) differs."""
    if not (np.array_equal(S.indptr, T.indptr) and np.array_equal(S.indices, T.indices)):
        _raise_asymmetric(name, None, None, sparse=True)
    S = S.copy()
    S.sort_indices()
    k = int(np.flatnonzero(S.data != T.data)[0])
    i = int(np.searchsorted(S.indptr, k, side="right") - 1)
    j = int(S.indices[k])
    _raise_asymmetric(name, i, j, sparse=True)


def _topology_graph(weights, topology, name, lower=None):
    """The graph whose edges are the true entries of the public ``topology``.

    ``lower`` None: each entry's weight is read at that entry (and must match
    its mirror); False/True: edge {i, j} reads the upper/lower triangle."""
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
    else:  # only the topology's entries are read, so the matrix itself is not converted
        weights = _dense_array(weights, name, convert=False)
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
    if lower is None:
        wr, wc = rows, cols
    else:  # every edge {i, j} reads its one triangle: the pattern is symmetric, so is the result
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        wr, wc = (hi, lo) if lower else (lo, hi)
    if sp.issparse(weights):
        # implicit entries of a sparse matrix are zeros: exactly the edges csr_matrix(W) drops
        vals = np.asarray(sp.csr_matrix(weights)[wr, wc]).ravel()
    else:
        vals = weights[wr, wc]
    data = _to_kernel_float(np.asarray(vals), name).astype(np.float64, copy=False)
    return _csr_graph(n, rows, cols, data, name, wr, wc)


def _sparse_graph(A, name, lower=None):
    """The graph of the stored off-diagonal entries of ``A`` (of one triangle, mirrored,
    when ``lower`` is not None)."""
    _check_shape(A.shape, name)
    _check_dtype(A.dtype, name)
    n = A.shape[0]
    if lower is None and A.format == "csr" and A.has_canonical_format:
        # already sorted, without duplicates: unless a diagonal entry is stored, it is
        # the CSR the kernels read, and the COO round trip (a third of the validation
        # at m = 600,000) is skipped
        indptr = A.indptr.astype(np.int64)
        indices = A.indices.astype(np.int64)
        if not _stores_diagonal(indptr, indices):
            data = _to_kernel_float(np.asarray(A.data), name).astype(np.float64, copy=False)
            if data.size and not np.all(np.isfinite(data)):
                k = int(np.flatnonzero(~np.isfinite(data))[0])
                _raise_not_finite(name, int(np.searchsorted(indptr, k, side="right") - 1), int(indices[k]))
            return _checked_csr(sp.csr_matrix((data, indices, indptr), shape=(n, n)), name)
    coo = sp.coo_matrix(A)
    keep = coo.row != coo.col if lower is None else (coo.row > coo.col if lower else coo.row < coo.col)
    rows, cols = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    data = _to_kernel_float(np.asarray(coo.data[keep]), name).astype(np.float64, copy=False)
    if lower is not None:  # the stored entries of one triangle and their mirrors
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        data = np.concatenate([data, data])
    return _csr_graph(n, rows, cols, data, name)


def _csr_graph(n, rows, cols, data, name, wr=None, wc=None):
    """Validate off-diagonal entries (rows, cols, data) and build the CSR ``Graph``.

    (wr, wc), when given, are the entries of the weights the values were read
    at (named by the not-finite message instead of (rows, cols))."""
    if data.size and not np.all(np.isfinite(data)):
        k = int(np.flatnonzero(~np.isfinite(data))[0])
        if wr is not None:
            rows, cols = wr, wc
        _raise_not_finite(name, rows[k], cols[k])
    # coo -> csr sums duplicates (scipy's meaning of repeated entries) and keeps explicit zeros
    S = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return _checked_csr(S, name)


def _checked_csr(S, name):
    """The ``Graph`` of a canonical CSR matrix ``S`` of finite float64 off-diagonal
    entries, after checking that it is symmetric and connected."""
    n = S.shape[0]
    # no second copy when S already holds int64 copies (the canonical-CSR path)
    indptr = S.indptr.astype(np.int64, copy=False)
    indices = S.indices.astype(np.int64, copy=False)
    # a copy: S.data may be the user's array, and the graph must not alias it
    d = S.data.astype(np.float64)
    symmetric, n_comp = _pattern_checks(indptr, indices, d)
    if not symmetric:
        # the slow path only names the asymmetry (scipy's transpose, sorted)
        T = S.T.tocsr()
        T.sort_indices()
        _raise_asymmetric_csr(name, S, T)
    if n_comp > 1:
        raise ValueError(
            f"the topology of {name} is disconnected ({n_comp} components), so no spanning tree exists; "
            "add edges, or run the algorithm on each connected component "
            "(scipy.sparse.csgraph.connected_components)"
        )
    wmin = float(d.min()) if d.size else 0.0
    wmax = float(d.max()) if d.size else 0.0
    return Graph(n, S.nnz // 2, False, _EMPTY_W, indptr, indices, d, wmin, wmax)
