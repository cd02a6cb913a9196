"""The forms an input may take, read as real arrays before they become a ``Graph``.

Besides a dense (n, n) array and a scipy.sparse matrix, :func:`fastpamst_nb.graph.as_graph`
reads the forms people already have: a condensed distance vector (the output of
``scipy.spatial.distance.pdist``, the complete graph of its ``squareform``), a
``networkx.Graph`` (its own edge set with the ``"weight"`` attributes) and a
pandas DataFrame (an array whose columns name the vertices). A masked array is
refused: numpy would silently drop its mask. Here are those adapters, the dtype
and shape checks every form goes through, and the two questions a caller asks
before the O(n^2) validation: how many vertices (:func:`vertex_count`) and what
they are called (:func:`vertex_labels`), both read off shapes and labels, never
off a weight. Neither pandas nor networkx is imported unless the input is one
of theirs.
"""

import numbers
from math import isqrt

import numpy as np
import scipy.sparse as sp

from .core import require_memory


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


