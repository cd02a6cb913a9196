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
"""

import numbers
from collections import namedtuple
from math import isqrt

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import threads
from .chunks import run_in_chunks
from .core import CACHE, require_memory
from .window import (
    NO_WINDOW, WIN_COMPLETE, WIN_FINE_SHIFT, WIN_SEEN, window_add, window_fork, window_join, window_threshold,
)

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


_TILE = 64  # rows and columns of a validation tile
_SCAN_ROWS = 8  # rows of a tile compared per pass over its columns (divides _TILE)


@njit(cache=CACHE, nogil=True)
def _dense_scan(W, t0, t1, ring, state, scale):
    """One tiled pass over the strict upper triangle of tile rows t0 .. t1 - 1 (rows
    64 t0 .. 64 t1 - 1): finiteness, symmetry, range, and the top window.

    Returns (status, i, j, wmin, wmax); status 0 ok, 1 non-finite at (i, j),
    2 W[i, j] != W[j, i]; wmin/wmax are +-inf when the range holds no edge.
    :func:`_scan_dense` runs it in chunks of tile rows so that Ctrl-C stops the
    pass over a huge matrix.

    The fast pass has no branch per entry: it folds every comparison into one
    flag and the range into min/max (a NaN fails its own comparison, an inf
    shows in the range). Off-diagonal tiles are read 8 rows at a time, so the
    transposed reads W[j, i .. i + 7] are one 32- or 64-byte run instead of 8
    strided loads (faster than an entry-by-entry scan: docs/design.rst, Measurements
    behind the code). Only when the pass finds a defect does
    :func:`_dense_locate` rescan the range to name the first one.

    ``ring, state, scale``: a ``window.TopWindow`` (``window.NO_WINDOW`` for none).
    Each entry of the upper triangle is also listed, without a branch, when its
    score reaches the window's threshold; a tile's list goes to
    ``window.window_add``, so fast_pamst's top buckets are sized by this pass.
    """
    n = W.shape[0]
    tile = _TILE
    bad = False
    wmin = np.inf
    wmax = -np.inf
    sgn = scale[0]
    thr = window_threshold(state, scale)
    hitw = np.empty(tile * tile)
    for i0 in range(t0 * tile, min(t1 * tile, n), tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            k = 0
            if j0 == i0 or i1 - i0 < tile:  # diagonal or ragged tile: entry by entry
                for i in range(i0, i1):
                    for j in range(max(j0, i + 1), j1):
                        w = np.float64(W[i, j])
                        bad |= w != np.float64(W[j, i])
                        wmin = min(wmin, w)
                        wmax = max(wmax, w)
                        hitw[k] = w
                        k += sgn * w >= thr
            else:
                for i in range(i0, i1, _SCAN_ROWS):
                    for j in range(j0, j1):
                        col = W[j]
                        lo = np.inf
                        hi = -np.inf
                        differ = False
                        for d in range(_SCAN_ROWS):
                            w = np.float64(W[i + d, j])
                            differ |= w != np.float64(col[i + d])
                            lo = min(lo, w)
                            hi = max(hi, w)
                            hitw[k] = w
                            k += sgn * w >= thr
                        bad |= differ
                        wmin = min(wmin, lo)
                        wmax = max(wmax, hi)
            if k > 0:
                window_add(ring, state, scale, hitw, k)
                thr = window_threshold(state, scale)
    if bad or wmin == -np.inf or wmax == np.inf:
        return _dense_locate(W, t0, t1)
    return 0, 0, 0, wmin, wmax


@njit(cache=CACHE, nogil=True)
def _dense_locate(W, t0, t1):
    """:func:`_dense_scan`'s result, entry by entry in the same tile order: the
    first defect's position (only run once the fast pass has found one)."""
    n = W.shape[0]
    tile = _TILE
    wmin = np.inf
    wmax = -np.inf
    for i0 in range(t0 * tile, min(t1 * tile, n), tile):
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
    return 0, 0, 0, wmin, wmax


# below this many entries a pass stays on one thread: a hand-off would cost more than it saves
_THREADED_MIN_ENTRIES = 1 << 20
# a sparse input's two checks run side by side from this many stored entries
_THREADED_MIN_STORED = 1 << 17
# the chunk after the first tile row reads about this many entries (a few ms), so that
# the hand-offs are few; later chunks grow to ~0.1 s (run_in_chunks)
_FIRST_SCAN_ENTRIES = 1 << 22


def _scan_dense(W, window=NO_WINDOW, workers=None, alongside=None):
    """:func:`_dense_scan` over all of W in chunks of about 0.1 s (interruptible), each
    chunk split by work across ``workers`` threads (default ``threads.thread_count()``,
    one thread for a matrix under 2**20 entries).

    Returns (status, i, j, wmin, wmax), with wmin = wmax = 0.0 when n < 2; a defect is
    the first in tile order, as on one thread. ``window``: a ``window.TopWindow`` to
    fill, marked complete when W passed. Each thread fills a fork of it
    (``window.window_fork``, made once the first tile row has decided its bins), joined
    into it at the end: the same counts as one thread's.

    ``alongside``: a callable ``f(W)`` (a nogil kernel's caller) run on a thread of its
    own during the scan, which then has one thread less; it is called only when there
    are two threads or more for a matrix of 2**20 entries or more, and the scan returns
    after it has returned. It must be safe on any W: it runs before W is known valid.
    """
    n = W.shape[0]
    if workers is None:
        workers = threads.thread_count() if n * n >= _THREADED_MIN_ENTRIES else 1
    if alongside is not None and workers >= 2:
        scan, _ = threads.run_side_by_side([lambda: _scan_dense(W, window, workers - 1),
                                            lambda: alongside(W)])
        return scan
    windows = [window]
    found = [(0, 0, 0, np.inf, -np.inf)]

    def part(t0, t1, w):
        return lambda: _dense_scan(W, t0, t1, *w)

    def advance(t0, k):
        status, i, j, lo, hi = found[-1]
        if status != 0:
            return
        if len(windows) < workers and (window.state[WIN_SEEN] or window.state[WIN_FINE_SHIFT] < 0):
            windows.extend(window_fork(window) for _ in range(workers - len(windows)))
        cuts = _split_tile_rows(n, t0, t0 + k, len(windows))
        results = threads.run_side_by_side(
            [part(a, b, w) for a, b, w in zip(cuts[:-1], cuts[1:], windows)])
        for s, a, b, lo2, hi2 in results:  # in tile order: the first defect wins
            if s != 0:
                found.append((s, a, b, 0.0, 0.0))
                return
            lo, hi = min(lo, lo2), max(hi, hi2)
        found.append((0, 0, 0, lo, hi))

    advance(0, 1)  # on this thread: the first tile row decides the window's bins
    rows = -(-n // _TILE) - 1
    if rows > 0:
        run_in_chunks(lambda t0, k: advance(1 + t0, k), rows,
                      first=max(1, _FIRST_SCAN_ENTRIES // (_TILE * n)))
    status, i, j, wmin, wmax = found[-1]
    if status == 0 and window is not NO_WINDOW:
        window_join(window, windows[1:])
        window.state[WIN_COMPLETE] = 1
    if n < 2:
        return status, i, j, 0.0, 0.0
    return status, i, j, wmin, wmax


def _split_tile_rows(n, t0, t1, parts):
    """Cut tile rows t0 .. t1 - 1 into at most ``parts`` consecutive runs of about equal
    work (tile row t scans the n - 64 t columns from its diagonal on); returns the
    boundaries, t0 first and t1 last, without empty runs."""
    if parts <= 1 or t1 - t0 <= 1:
        return [t0, t1]
    work = np.cumsum(np.maximum(n - _TILE * np.arange(t0, t1), 1))
    want = work[-1] * np.arange(1, parts) / parts
    inner = t0 + 1 + np.searchsorted(work[:-1], want)
    return sorted({t0, t1, *(int(t) for t in inner if t0 < t < t1)})


@njit(cache=CACHE, nogil=True)
def _dense_mirror(W, S, lower):
    """Fill ``S`` with the symmetric matrix of one triangle of ``W``; check it, get its range.

    Reads W[i, j] for i < j (``lower`` False) or W[j, i] for i < j (``lower``
    True), writes it to S[i, j] and S[j, i], and zeroes the diagonal of S. ``S``
    may be ``W`` itself (it then only overwrites the other triangle and the
    diagonal). Returns (status, r, c, wmin, wmax); status 0 ok, 1 non-finite at
    W[r, c] (r, c the entry read). Tiles keep the transposed writes in cache.
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
                    w = W[j, i] if lower else W[i, j]
                    wf = np.float64(w)
                    if not np.isfinite(wf):
                        if lower:
                            return 1, j, i, 0.0, 0.0
                        return 1, i, j, 0.0, 0.0
                    S[i, j] = w
                    S[j, i] = w
                    if wf < wmin:
                        wmin = wf
                    if wf > wmax:
                        wmax = wf
    for i in range(n):
        S[i, i] = 0
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
    """float32/float64 pass through untouched; other real dtypes become float64 only when exact.

    The float64 result (8 bytes per entry) is checked against the available
    memory before it is allocated; the exactness check runs in row blocks, so
    it needs no second full-size array.
    """
    if a.dtype in (np.float32, np.float64):
        return a
    require_memory(8 * a.size, f"converting {name} of dtype {a.dtype} and shape {a.shape} to float64")
    b = np.empty(a.shape, dtype=np.float64)
    # a is 1-D (edge values) or 2-D (a dense matrix): blocks of whole rows
    step = max(1, _BLOCK // max(1, a.size // max(1, a.shape[0])))
    for i in range(0, a.shape[0], step):
        src, dst = a[i:i + step], b[i:i + step]
        dst[...] = src
        with np.errstate(invalid="ignore", over="ignore"):
            exact = np.array_equal(dst.astype(a.dtype), src)
        if not exact:
            raise ValueError(
                f"{name} of dtype {a.dtype} cannot be represented exactly as float64 "
                "(integers above 2**53 or extended precision); rescale or round it yourself first"
            )
    return b


_BLOCK = 2**18  # entries per block of the dtype conversion's exactness check


def _check_shape(shape, name):
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D (n, n) matrix, got {len(shape)} dimension(s)")
    if shape[0] != shape[1]:
        raise ValueError(f"{name} must be square (n, n), got shape {shape}")
    if shape[0] == 0:
        raise ValueError(f"{name} is empty (n = 0); a spanning tree needs at least one vertex")


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
        numbered in the graph's node order (see :func:`vertex_labels`); its edges (all
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


def vertex_count(weights, topology=None):
    """The number of vertices read off shapes alone (no pass over the values), or None.

    None when it cannot be told cheaply (nested lists, a malformed shape, ...):
    :func:`as_graph` then decides, and its :class:`Graph` is authoritative.
    Lets callers check vertex-indexed parameters before the O(n^2) validation.
    """
    shape = getattr(topology, "shape", None)
    if isinstance(shape, tuple) and len(shape) == 2 and shape[0] == shape[1]:
        return int(shape[0])
    if topology is None and _is_networkx_graph(weights):
        return weights.number_of_nodes()
    shape = getattr(weights, "shape", None)
    if isinstance(weights, (np.ndarray, np.generic)) or sp.issparse(weights):
        if len(shape) == 2 and shape[0] == shape[1]:
            return int(shape[0])
        if len(shape) == 1 and not sp.issparse(weights):
            return _condensed_n(shape[0])
    return None


def _refuse_masked(obj, name):
    if not isinstance(obj, np.ma.MaskedArray):
        return
    if name == "topology":
        raise TypeError(
            "topology is a numpy masked array; its mask would be ignored, so it is refused. "
            "Pass a plain boolean (n, n) array, e.g. topology.filled(False)"
        )
    raise TypeError(
        f"{name} is a numpy masked array; its mask would be ignored (masked entries would "
        "become edges), so it is refused. Express missing edges with a public mask of the "
        f"edges instead: pass topology=~{name}.mask (True where there is an edge, fixed without "
        f"looking at the weights) together with {name}.filled(0), or pass a scipy.sparse "
        "matrix whose stored entries are the edges"
    )


def _condensed_n(length):
    """n with n(n-1)/2 == length and n >= 2, or None."""
    n = (1 + isqrt(1 + 8 * int(length))) // 2
    return n if n >= 2 and n * (n - 1) // 2 == length else None


def _condensed_to_square(v, name):
    """The (n, n) matrix of a condensed distance vector (``pdist`` output)."""
    n = _condensed_n(v.shape[0])
    if n is None:
        raise ValueError(
            f"{name} is 1-D of length {v.shape[0]}: neither a 2-D (n, n) matrix nor a condensed "
            "distance vector (the output of scipy.spatial.distance.pdist, of length n(n-1)/2 "
            "for some n >= 2: 1, 3, 6, 10, ...). Pass the (n, n) matrix, e.g. "
            "scipy.spatial.distance.squareform(v) of a condensed vector v"
        )
    from scipy.spatial.distance import squareform

    v = _to_kernel_float(v, name)
    require_memory(n * n * v.itemsize, f"the ({n}, {n}) matrix of the condensed distance vector "
                   f"{name} (scipy.spatial.distance.squareform)")
    return squareform(v, force="tomatrix", checks=False)


def _dense_array(weights, name, convert=True, owned=False):
    """``weights`` as an (n, n) ndarray: float32/float64 (no copy when it already is one)
    when ``convert``, its own real dtype otherwise. A 1-D condensed vector is expanded.

    With ``owned``, returns ``(W, owned)``: ``owned`` is True when ``W`` is a fresh
    array made here (a dtype conversion or a condensed expansion) that no caller
    can see, so it may be modified in place."""
    if isinstance(weights, (str, bytes)) or weights is None:
        raise TypeError(f"{name} must be an (n, n) array or scipy.sparse matrix, got {type(weights).__name__}")
    try:
        W = np.asarray(weights)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} could not be read as a numeric (n, n) array: {exc}") from None
    _check_dtype(W.dtype, name)
    W0 = W
    if W.ndim == 1:
        W = _condensed_to_square(W, name)
    _check_shape(W.shape, name)
    if convert:
        W = _to_kernel_float(W, name)
    return (W, W is not W0) if owned else W


def _is_networkx_graph(obj):
    """True for a networkx.Graph (or subclass); never imports networkx for other objects."""
    if not any(c.__module__.partition(".")[0] == "networkx" for c in type(obj).__mro__):
        return False
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - a networkx object without networkx
        return False
    return isinstance(obj, nx.Graph)


def _integer_nodes(G):
    """Whether the nodes of the networkx graph G are exactly the integers 0..n-1."""
    n = G.number_of_nodes()
    return all(not isinstance(u, (bool, np.bool_)) and isinstance(u, numbers.Integral) and 0 <= u < n
               for u in G)


def _is_dataframe(obj):
    """True for a pandas DataFrame; never imports pandas."""
    return any(c.__module__.partition(".")[0] == "pandas" and c.__name__ == "DataFrame"
               for c in type(obj).__mro__)


def vertex_labels(weights, name="weights"):
    """The public vertex names an input carries, or None: a pandas DataFrame's
    columns, or a networkx graph's nodes when they are not the integers 0..n-1.

    O(n), from the labels alone (no weight is read). Raises ValueError for a
    DataFrame whose index names other vertices than its columns.
    """
    if _is_networkx_graph(weights):
        return None if _integer_nodes(weights) else tuple(weights)
    if not _is_dataframe(weights):
        return None
    cols, rows = list(weights.columns), list(weights.index)
    default = type(weights.index).__name__ == "RangeIndex" and rows == list(range(len(rows)))
    if rows != cols and not default:
        raise ValueError(
            f"{name} is a DataFrame whose index and columns differ, so it names each vertex "
            "twice; put the rows in the order of the columns (df.loc[df.columns, df.columns]) "
            "or drop the row names (df.reset_index(drop=True))")
    return tuple(cols)


def _networkx_topology(G, name):
    """A networkx graph as (sparse weights, sparse topology) for :func:`_topology_graph`.

    The edge list is read directly rather than through ``to_scipy_sparse_array``,
    whose handling of weight-0 edges is networkx's choice: dropping them would
    make the topology depend on the weights.
    """
    kind = type(G).__name__
    if G.is_directed():
        raise TypeError(
            f"{name} is a directed networkx graph ({kind}); spanning trees here are undirected: "
            "build a networkx.Graph with one 'weight' per undirected edge"
        )
    if G.is_multigraph():
        raise TypeError(
            f"{name} is a networkx multigraph ({kind}); merge each group of parallel edges into "
            "one edge with one 'weight' (your choice, e.g. the smallest) in a networkx.Graph"
        )
    n = G.number_of_nodes()
    _check_shape((n, n), name)
    # nodes 0..n-1 are the vertices themselves; any other nodes are numbered in G's
    # node order, and the tree carries them as its labels (vertex_labels)
    index = None if _integer_nodes(G) else {u: k for k, u in enumerate(G)}
    rows, cols, vals = [], [], []
    for a, b, w in G.edges(data="weight"):
        if a == b:
            continue  # a self-loop is a diagonal entry: ignored
        if w is None:
            raise ValueError(
                f"edge ({a}, {b}) of the networkx graph {name} has no 'weight' attribute; "
                "give every edge one, e.g. G.add_edge(u, v, weight=w)"
            )
        rows.append(int(a) if index is None else index[a])
        cols.append(int(b) if index is None else index[b])
        vals.append(w)
    try:
        data = np.asarray(vals) if vals else np.zeros(0)
    except Exception:
        data = np.asarray(vals, dtype=object)
    if data.ndim != 1 or data.dtype == np.bool_ or not (
            np.issubdtype(data.dtype, np.integer) or np.issubdtype(data.dtype, np.floating)):
        raise TypeError(
            f"the 'weight' attributes of the networkx graph {name} must be real numbers "
            f"(int or float), got dtype {data.dtype if data.ndim == 1 else 'of non-scalars'}"
        )
    data = _to_kernel_float(data, name)
    r = np.asarray(rows + cols, dtype=np.int64)
    c = np.asarray(cols + rows, dtype=np.int64)
    weights = sp.coo_matrix((np.concatenate([data, data]), (r, c)), shape=(n, n))
    topology = sp.coo_matrix((np.ones(r.size, dtype=np.int8), (r, c)), shape=(n, n))
    return weights, topology


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


@njit(cache=CACHE, nogil=True)
def _stores_diagonal(indptr, indices):
    """Whether a CSR matrix stores an entry (i, i)."""
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] == i:
                return True
    return False


@njit(cache=CACHE, nogil=True)
def _mirrors_match(indptr, indices, data):
    """Whether a canonical CSR matrix (rows sorted, no duplicates) equals its
    transpose: one pass, O(n + m) time and n cursors.

    Rows are visited in increasing order. An entry (i, j) below the diagonal
    must be the next unmatched entry (j, i) of row j's upper part, with an equal
    value: row j is sorted, so the mirrors of its upper part arrive in its own
    column order and a cursor per row finds each in O(1). At the end every upper
    entry must have been matched. A diagonal entry is its own mirror. scipy's
    transpose and sort took about half of the validation."""
    n = indptr.shape[0] - 1
    cursor = np.empty(n, dtype=np.int64)  # row j's next unmatched upper entry, set at row j
    for i in range(n):
        p = indptr[i]
        end = indptr[i + 1]
        while p < end and indices[p] < i:
            j = indices[p]
            c = cursor[j]
            if c == indptr[j + 1] or indices[c] != i or data[c] != data[p]:
                return False
            cursor[j] = c + 1
            p += 1
        if p < end and indices[p] == i:
            p += 1
        cursor[i] = p
    for j in range(n):
        if cursor[j] != indptr[j + 1]:
            return False
    return True


@njit(cache=CACHE, nogil=True)
def _n_components(indptr, indices):
    """Connected components of a symmetric CSR pattern: a depth-first search with an
    explicit stack, O(n + m). scipy's connected_components(directed=False), which
    symmetrizes first, took a third of the validation."""
    n = indptr.shape[0] - 1
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)  # each vertex is pushed once
    comps = 0
    for root in range(n):
        if seen[root]:
            continue
        comps += 1
        seen[root] = True
        stack[0] = root
        top = 1
        while top > 0:
            top -= 1
            v = stack[top]
            for p in range(indptr[v], indptr[v + 1]):
                u = indices[p]
                if not seen[u]:
                    seen[u] = True
                    stack[top] = u
                    top += 1
    return comps


def _checked_csr(S, name):
    """The ``Graph`` of a canonical CSR matrix ``S`` of finite float64 off-diagonal
    entries, after checking that it is symmetric and connected."""
    n = S.shape[0]
    # no second copy when S already holds int64 copies (the canonical-CSR path)
    indptr = S.indptr.astype(np.int64, copy=False)
    indices = S.indices.astype(np.int64, copy=False)
    # a copy: S.data may be the user's array, and the graph must not alias it
    d = S.data.astype(np.float64)
    # two independent scans of the pattern (nogil kernels), side by side when there are
    # two threads and enough entries for a hand-off to pay
    checks = [lambda: _mirrors_match(indptr, indices, d), lambda: _n_components(indptr, indices)]
    if threads.thread_count() < 2 or indices.shape[0] < _THREADED_MIN_STORED:
        symmetric, n_comp = checks[0](), checks[1]()
    else:
        symmetric, n_comp = threads.run_side_by_side(checks)
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
