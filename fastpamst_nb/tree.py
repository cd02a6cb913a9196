"""The result type shared by every algorithm."""

import json
import numbers
import os
import types
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

__all__ = ["SpanningTree"]

# identifies the .npz archives written by SpanningTree.save (and their layout version)
_FORMAT = "fastpamst_nb.SpanningTree"
_FORMAT_VERSION = 1


def _freeze(value):
    """An immutable copy of an ``info`` value: mappings become read-only, sequences tuples."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, np.ndarray):
        return _freeze(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value, where="info"):
    """The JSON-able form of a frozen ``info`` value (mappings to dicts, tuples to lists)."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has the key {k!r} of type {type(k).__name__}: only str keys can be "
                                "saved (JSON); rename it to a string")
            out[k] = _thaw(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, tuple):
        return [_thaw(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    raise TypeError(f"{where} is a {type(value).__name__}, which cannot be saved as JSON; store it as a "
                    "str, number, bool, None, sequence or str-keyed mapping of these")


def _unfrozen(value):
    """A plain (picklable) copy of a frozen value: read-only mappings become dicts."""
    if isinstance(value, Mapping):
        return {k: _unfrozen(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_unfrozen(v) for v in value)
    return value


def _as_edges(edges, n_vertices):
    arr = np.asarray(edges)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"edges must have shape (n_edges, 2), one (u, v) row per edge, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not (np.isfinite(arr).all() and (arr == np.floor(arr)).all()):
            raise ValueError("edges must hold integer vertex indices; got non-integer floats")
    elif arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"edges must hold integer vertex indices, got dtype {arr.dtype}")
    out = np.array(arr, dtype=np.int64)  # always a private copy
    if out.size and (out.min() < 0 or out.max() >= n_vertices):
        raise ValueError(f"edges must index vertices 0 .. {n_vertices - 1} (n_vertices = {n_vertices}), "
                         f"got indices from {out.min()} to {out.max()}")
    return out


def _as_labels(labels, n_vertices):
    """``labels`` as a tuple of n_vertices public names (numpy scalars as Python ones), or None."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise TypeError(f"labels must be a sequence of one name per vertex (e.g. a list of str), "
                        f"got {type(labels).__name__}")
    out = tuple(_freeze(x) for x in (labels.tolist() if isinstance(labels, np.ndarray) else labels))
    if len(out) != n_vertices:
        raise ValueError(f"labels must name each of the n_vertices = {n_vertices} vertices once, "
                         f"got {len(out)} labels")
    try:
        hash(out)
    except TypeError:
        raise TypeError("labels must be hashable names (str, int, tuples of them, ...)") from None
    return out


def _read_only(owned):
    """A read-only view of ``owned`` (which is made read-only too).

    Unlike an array that owns its data, the view cannot be made writeable again
    with ``setflags(write=True)``.
    """
    owned.setflags(write=False)
    view = owned.view()
    view.setflags(write=False)
    return view


class SpanningTree:
    """A released spanning tree (immutable).

    What a private algorithm releases is the edge set ``edges`` (and its
    public parameters in ``info``). The tree also carries the TRUE weights of
    its edges, taken from the input for evaluation only: they are NOT private,
    are not covered by any privacy guarantee, and must not be published. To
    publish weights, release them privately with
    :func:`fastpamst_nb.private_edge_weights` (which spends its own budget).
    ``repr(tree)`` (what Jupyter shows) therefore prints no weight, and
    :meth:`save` and :meth:`to_csv` write only the edges (and the public
    ``info``) unless explicitly asked for more.

    Parameters
    ----------
    edges : array_like of int, shape (n_edges, 2)
        Rows ``(u, v)`` of vertex indices in 0 .. n_vertices - 1 (copied).
    edge_weights : array_like of float, shape (n_edges,), or None
        TRUE input weights of ``edges`` (copied). ``None`` when they are not
        known (a tree loaded from a file saved without them): they are then NaN.
    n_vertices : int
        Number of vertices, >= 1.
    algorithm : str
        Name of the algorithm that produced the tree.
    info : mapping, optional
        Public parameters of the release. Copied; nested mappings become
        read-only mappings, lists and arrays become tuples, numpy scalars
        become Python scalars.
    labels : sequence of length n_vertices, optional
        A public name for each vertex (a DataFrame's columns, a networkx
        graph's nodes, chow_liu's attribute names), kept as a tuple; None
        (the default) when the vertices are just 0 .. n - 1.

    Attributes
    ----------
    edges : ndarray of int64, shape (n - 1, 2), read-only
        Rows ``(tree vertex, new vertex)`` in the order the edges were selected.
        This is the private release.
    weight : float
        Sum of the TRUE (input, un-noised) weights of the tree's edges.
        NOT private: for evaluation only, do not publish it. Same as
        :attr:`true_weight`. NaN if the true weights are unknown.
    n_vertices : int
    algorithm : str
        Which algorithm released it (``"exact"`` is not private at all).
    info : read-only mapping (types.MappingProxyType)
        Public parameters of the release (rho, sensitivity, noise rate,
        discretization, ...: functions of the budget, the sensitivity and the
        graph size only), for the record. ``info["rho"]`` is the zCDP budget
        the edges cost; it is absent for the non-private exact tree. A budget
        given as ``epsilon`` and ``delta`` is kept as given too
        (``info["epsilon"]``, ``info["delta"]``), beside the rho it converts to.
        ``dict(tree.info)`` gives a mutable copy.
    labels : tuple or None
        The vertices' names: vertex ``i`` is ``labels[i]``. See
        :meth:`edge_labels` for the edges as pairs of names.

    Notes
    -----
    *Immutability.* Attributes cannot be reassigned or deleted
    (AttributeError), ``edges`` and ``edge_weights`` are read-only arrays
    (``ValueError: assignment destination is read-only``), and ``info`` is a
    read-only mapping, so a released tree cannot drift from what was
    released. To change something, build a new ``SpanningTree``.

    *Pickling* follows :meth:`save`: ``pickle.dumps(tree)`` holds the private
    release only (``edges``, ``n_vertices``, ``algorithm``, ``info``), never
    the true weights, so a pickle (e.g. a result sent between processes) can
    be published like a saved file; the unpickled tree has NaN
    ``edge_weights`` (``has_true_weights`` False). ``copy.copy`` and
    ``copy.deepcopy`` stay in the process and keep them. To keep the true
    weights on disk for your own records, use
    ``save(path, include_true_weights=True)``.

    *Equality.* ``a == b`` compares what was released: the edges (same
    rows, same order), ``n_vertices``, ``algorithm``, the public ``info`` and
    ``labels``. The true edge weights are not part of a release and are not
    compared, so a tree saved without them and loaded again equals the tree
    it came from. Equal trees hash equally, so trees can be set members and
    dict keys.

    Examples
    --------
    >>> import numpy as np, fastpamst_nb as fp
    >>> tree = fp.SpanningTree([[0, 1], [1, 2]], [0.5, 0.25], 3, "manual", {"note": "example"})
    >>> tree
    SpanningTree(algorithm='manual', n_vertices=3, n_edges=2)
    >>> tree.edges.flags.writeable, tree.info["note"]
    (False, 'example')
    >>> tree == fp.SpanningTree([[0, 1], [1, 2]], [0.5, 0.25], 3, "manual", {"note": "example"})
    True
    """

    __slots__ = ("edges", "weight", "n_vertices", "algorithm", "info", "labels", "_weights")

    def __init__(self, edges, edge_weights, n_vertices, algorithm, info=None, labels=None):
        if isinstance(n_vertices, (bool, np.bool_)) or not isinstance(n_vertices, numbers.Integral):
            raise TypeError(f"n_vertices must be an int, got {type(n_vertices).__name__}")
        n_vertices = int(n_vertices)
        if n_vertices < 1:
            raise ValueError(f"n_vertices must be >= 1 (a spanning tree needs a vertex), got {n_vertices}")
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm must be a str naming the algorithm, got {type(algorithm).__name__}")
        if info is None:
            info = {}
        elif not isinstance(info, Mapping):
            raise TypeError(f"info must be a mapping (e.g. a dict) of public parameters, got {type(info).__name__}")
        e = _as_edges(edges, n_vertices)
        if edge_weights is None:
            w = np.full(e.shape[0], np.nan)
        else:
            w = np.array(edge_weights, dtype=np.float64)  # always a private copy
            if w.shape != (e.shape[0],):
                raise ValueError(f"edge_weights must have one entry per edge, shape ({e.shape[0]},), "
                                 f"got shape {w.shape}")
        labels = _as_labels(labels, n_vertices)
        e, w = _read_only(e), _read_only(w)
        setattr_ = object.__setattr__
        setattr_(self, "edges", e)
        setattr_(self, "_weights", w)
        setattr_(self, "weight", float(w.sum()))
        setattr_(self, "n_vertices", n_vertices)
        setattr_(self, "algorithm", algorithm)
        setattr_(self, "info", _freeze(info))
        setattr_(self, "labels", labels)

    def __setattr__(self, name, value):
        raise AttributeError(f"SpanningTree is immutable: cannot set {name!r}; build a new SpanningTree instead")

    def __delattr__(self, name):
        raise AttributeError(f"SpanningTree is immutable: cannot delete {name!r}")

    def __reduce__(self):
        # pickle follows save(): the private release only (edges, n_vertices, algorithm,
        # info, labels), never the true weights, which come back NaN. Through the constructor:
        # read-only mappings cannot be pickled as such
        return (SpanningTree, (self.edges, None, self.n_vertices, self.algorithm, _unfrozen(self.info), self.labels))

    def __copy__(self):
        # a copy within the process is not a release: it keeps the true weights
        return SpanningTree(self.edges, self._weights, self.n_vertices, self.algorithm, _unfrozen(self.info),
                            self.labels)

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __eq__(self, other):
        # what was released; the true weights are for evaluation, not part of a release
        if not isinstance(other, SpanningTree):
            return NotImplemented
        return (self.n_vertices == other.n_vertices
                and self.algorithm == other.algorithm
                and np.array_equal(self.edges, other.edges)
                and self.info == other.info
                and self.labels == other.labels)

    def __hash__(self):
        # consistent with __eq__: equal trees have equal algorithm, n_vertices and edges
        return hash((self.algorithm, self.n_vertices, self.edges.tobytes()))

    @property
    def edge_weights(self):
        """TRUE input weights of ``edges``, shape (n - 1,), read-only: NOT private, do not publish them.

        The private algorithms protect the edge set only; these are the exact
        entries of the input matrix, kept for evaluation. Publish
        :func:`fastpamst_nb.private_edge_weights` instead. NaN when unknown
        (a tree loaded from a file saved without its true weights).
        """
        return self._weights

    @property
    def true_weight(self):
        """Sum of the TRUE input weights of the tree's edges (alias of ``weight``).

        NOT private: it is computed from the un-noised input and is not covered
        by the privacy guarantee of the edges. Use it to evaluate a release
        (e.g. :func:`fastpamst_nb.excess_weight`), never publish it.
        """
        return self.weight

    @property
    def has_true_weights(self):
        """False when the true weights are unknown (NaN), e.g. after :meth:`load` of a private-only file."""
        return not bool(np.isnan(self._weights).any())

    def __len__(self):
        return len(self.edges)

    def edge_labels(self):
        """The edges as pairs of vertex labels, in the order of :attr:`edges`.

        Returns
        -------
        list of tuple
            ``(labels[u], labels[v])`` for each row ``(u, v)`` of ``edges``.

        Raises
        ------
        ValueError
            The tree has no labels (its input had none: a plain array or a
            networkx graph on the nodes 0 .. n - 1).

        Examples
        --------
        >>> import fastpamst_nb as fp
        >>> tree = fp.SpanningTree([[0, 1], [1, 2]], None, 3, "manual", labels=["a", "b", "c"])
        >>> tree.edge_labels()
        [('a', 'b'), ('b', 'c')]
        """
        if self.labels is None:
            raise ValueError("this tree has no vertex labels (its input was a plain array); its "
                             "edges are tree.edges. Labels come from a pandas DataFrame's columns, a "
                             "networkx graph's nodes or chow_liu's columns, or SpanningTree(..., labels=)")
        names = self.labels
        return [(names[u], names[v]) for u, v in self.edges.tolist()]

    def __repr__(self):
        # only public quantities: never the (true, non-private) weights
        rho = self.info.get("rho")
        budget = "" if rho is None else f", rho={float(rho)!r}"
        missing = "" if self.has_true_weights else ", has_true_weights=False"
        return (
            f"SpanningTree(algorithm={self.algorithm!r}, n_vertices={self.n_vertices}, "
            f"n_edges={len(self.edges)}{budget}{missing})"
        )

    # ------------------------------------------------------------------
    # files
    # ------------------------------------------------------------------

    def save(self, path, *, include_true_weights=False):
        """Save the tree to a NumPy ``.npz`` archive (no pickle), by default its private release only.

        Parameters
        ----------
        path : str, os.PathLike or writable binary file
            Destination. As with :func:`numpy.savez`, ``".npz"`` is appended to
            a path that does not already end with it.
        include_true_weights : bool, default False
            Also store :attr:`edge_weights`, the TRUE input weights. They are
            NOT private: a file written with ``include_true_weights=True`` is
            not a private release and must not be published. With the default
            the file holds only ``edges``, ``n_vertices``, ``algorithm`` and
            ``info``, and :meth:`load` gives a tree whose ``edge_weights`` and
            ``weight`` are NaN (``has_true_weights`` is False).

        Raises
        ------
        TypeError
            If ``info`` holds a value JSON cannot store (e.g. an object) or a
            non-str key.

        Notes
        -----
        The archive holds plain arrays: ``edges`` (int64, (n - 1, 2)),
        ``n_vertices``, ``algorithm``, ``info`` (JSON text; tuples are stored
        as lists and read back as tuples), ``format`` and ``format_version``,
        and ``edge_weights`` (float64, (n - 1,)) only with
        ``include_true_weights=True``. The edges of an ``"exact"`` tree are the
        non-private minimum spanning tree itself: only a private algorithm's
        edges are private.

        Examples
        --------
        >>> import os, tempfile, fastpamst_nb as fp
        >>> tree = fp.SpanningTree([[0, 1], [1, 2]], [0.5, 0.25], 3, "manual", {"rho": 1.0})
        >>> path = os.path.join(tempfile.mkdtemp(), "release.npz")
        >>> tree.save(path)                           # edges and info only
        >>> fp.SpanningTree.load(path)
        SpanningTree(algorithm='manual', n_vertices=3, n_edges=2, rho=1.0, has_true_weights=False)
        >>> tree.save(path, include_true_weights=True)   # NOT private: for your own records only
        >>> fp.SpanningTree.load(path) == tree
        True
        """
        if not isinstance(include_true_weights, (bool, np.bool_)):
            raise TypeError(f"include_true_weights must be True or False, got {type(include_true_weights).__name__}")
        try:
            info_json = json.dumps(_thaw(self.info))
        except ValueError as exc:  # pragma: no cover - circular structures cannot be frozen
            raise TypeError(f"info cannot be saved as JSON: {exc}") from None
        arrays = {
            "format": np.array(_FORMAT),
            "format_version": np.array(_FORMAT_VERSION, dtype=np.int64),
            "edges": self.edges,
            "n_vertices": np.array(self.n_vertices, dtype=np.int64),
            "algorithm": np.array(self.algorithm),
            "info": np.array(info_json),
        }
        if self.labels is not None:
            try:
                arrays["labels"] = np.array(json.dumps(_thaw(self.labels, "labels")))
            except ValueError as exc:  # pragma: no cover - labels are frozen: no cycles
                raise TypeError(f"labels cannot be saved as JSON: {exc}") from None
        if include_true_weights:
            arrays["edge_weights"] = self._weights
        if not hasattr(path, "write"):
            path = os.fspath(path)
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path):
        """Read a tree written by :meth:`save` (with ``allow_pickle=False``: loading runs no code).

        Parameters
        ----------
        path : str, os.PathLike or readable binary file
            A ``.npz`` file from :meth:`save`.

        Returns
        -------
        SpanningTree
            Equal to the saved tree (same edges, ``n_vertices``, ``algorithm``,
            ``info`` and ``labels``); its ``edge_weights`` and ``weight`` are
            NaN (``has_true_weights`` False) unless it was saved with
            ``include_true_weights=True``.

        Raises
        ------
        ValueError
            If the file is not a SpanningTree archive (e.g. another ``.npz`` or
            a pickle), or was written by a newer format version.
        """
        if not hasattr(path, "read"):
            path = os.fspath(path)
        data = np.load(path, allow_pickle=False)
        if not hasattr(data, "files"):  # a plain .npy array
            raise ValueError(f"{path!r} holds a single array, not a SpanningTree file; write trees with "
                             "SpanningTree.save(path) and load the .npz it writes")
        with data:
            keys = set(data.files)
            need = {"format", "format_version", "edges", "n_vertices", "algorithm", "info"}
            if not need <= keys or str(data["format"]) != _FORMAT:
                missing = sorted(need - keys) or "the SpanningTree format tag"
                raise ValueError(f"{path!r} is not a SpanningTree file (it lacks {missing}); write trees "
                                 "with SpanningTree.save(path)")
            version = int(data["format_version"])
            if version > _FORMAT_VERSION:
                raise ValueError(f"{path!r} was written by a newer fastpamst_nb (format {version} > "
                                 f"{_FORMAT_VERSION}); upgrade fastpamst_nb to read it")
            edges = data["edges"]
            weights = data["edge_weights"] if "edge_weights" in keys else None
            n_vertices = int(data["n_vertices"])
            algorithm = str(data["algorithm"])
            info = json.loads(str(data["info"]))
            labels = json.loads(str(data["labels"])) if "labels" in keys else None
        return cls(edges, weights, n_vertices, algorithm, info, labels)

    def to_csv(self, path_or_file, weights=None, *, column="weight"):
        """Write the edges as CSV: header ``u,v`` (plus a weight column if asked), one row per edge.

        Parameters
        ----------
        path_or_file : str, os.PathLike or writable text file
            Destination (overwritten), or an open text file to write to.
        weights : array_like of float, shape (n - 1,), optional
            A third column ``weight``, in the order of ``edges``. Pass
            published or privately released weights, e.g. from
            :func:`fastpamst_nb.private_edge_weights`. Default: no weights,
            only the private edge set is written. Passing
            ``tree.edge_weights`` writes the TRUE weights, which are
            NOT private: such a file is not a private release, and its
            column is then labelled ``true_weight`` (whenever ``weights``
            equals the tree's true weights).
        column : str, default "weight"
            Name of the weight column, e.g. ``"private_weight"`` (the CLI's);
            ignored for the true weights, always labelled ``true_weight``.

        Raises
        ------
        ValueError
            If ``weights`` does not have one entry per edge or contains NaN, or
            ``column`` is empty or holds a comma, quote or line break.
        TypeError
            If ``path_or_file`` is neither a path nor a writable file.

        Notes
        -----
        Rows follow the release order of ``edges``; floats are written with
        every digit (``repr``), so they read back exactly.

        Examples
        --------
        >>> import io, fastpamst_nb as fp
        >>> tree = fp.SpanningTree([[0, 1], [1, 2]], [0.5, 0.25], 3, "manual")
        >>> buf = io.StringIO(); tree.to_csv(buf); buf.getvalue()
        'u,v\\n0,1\\n1,2\\n'
        """
        if not isinstance(column, str) or not column or any(c in column for c in ',"\r\n'):
            raise ValueError(f"column must be a non-empty name without commas, quotes or line breaks, "
                             f"got {column!r}; e.g. column='private_weight'")
        rows = self.edges.tolist()
        if weights is None:
            lines = ["u,v\n"] + [f"{u},{v}\n" for u, v in rows]
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (len(rows),):
                raise ValueError(f"weights must have one entry per tree edge, shape ({len(rows)},), got shape {w.shape}")
            if np.isnan(w).any():
                raise ValueError("weights contains NaN (unknown weights, e.g. of a tree loaded without its "
                                 "true weights); pass finite released weights or weights=None")
            # the true weights are not private: never written under a neutral name
            if np.array_equal(w, self._weights):
                column = "true_weight"
            lines = [f"u,v,{column}\n"] + [f"{u},{v},{x!r}\n" for (u, v), x in zip(rows, w.tolist())]
        if hasattr(path_or_file, "write"):
            path_or_file.writelines(lines)
            return
        if not isinstance(path_or_file, (str, os.PathLike)):
            raise TypeError(f"path_or_file must be a path or a writable text file, got {type(path_or_file).__name__}")
        with open(path_or_file, "w", newline="", encoding="utf-8") as f:
            f.writelines(lines)

    # ------------------------------------------------------------------
    # conversions
    # ------------------------------------------------------------------

    def to_scipy(self, symmetric=False):
        """The tree as a ``scipy.sparse.csr_array`` (n, n) of its TRUE input weights.

        Parameters
        ----------
        symmetric : bool, default False
            False: each edge is stored once, at ``(min(u, v), max(u, v))`` (the
            upper triangle), as ``scipy.sparse.csgraph.minimum_spanning_tree``
            returns a tree. True: both triangles, a symmetric matrix.

        Returns
        -------
        scipy.sparse.csr_array
            n - 1 stored entries (2 (n - 1) with ``symmetric=True``). Edges
            whose weight is 0 are kept as explicit zeros. The stored values
            are the true weights (NOT private, see :attr:`edge_weights`; NaN
            if unknown); only the sparsity pattern is the private release.

        Notes
        -----
        It used to return both triangles (see the changelog); pass
        ``symmetric=True`` for that matrix. scipy's graph routines read one
        triangle as an undirected graph with ``directed=False``.
        """
        if not isinstance(symmetric, (bool, np.bool_)):
            raise TypeError(f"symmetric must be True or False, got {type(symmetric).__name__}")
        lo = np.minimum(self.edges[:, 0], self.edges[:, 1])
        hi = np.maximum(self.edges[:, 0], self.edges[:, 1])
        if symmetric:
            lo, hi = np.concatenate([lo, hi]), np.concatenate([hi, lo])
            data = np.concatenate([self._weights, self._weights])
        else:
            data = self._weights.copy()
        return sp.csr_array((data, (lo, hi)), shape=(self.n_vertices, self.n_vertices))

    def to_networkx(self):
        """The tree as a ``networkx.Graph`` with a ``weight`` attribute per edge (needs networkx).

        The ``weight`` attributes are the TRUE input weights (NOT private, see
        :attr:`edge_weights`; NaN if unknown); only the edge set is the
        private release. The nodes are :attr:`labels` when the tree has them
        (e.g. the nodes of the networkx graph it was released from), else
        0 .. n - 1.
        """
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_networkx() needs networkx: python -m pip install networkx") from None
        names = range(self.n_vertices) if self.labels is None else self.labels
        if len(set(names)) != self.n_vertices:
            raise ValueError("the tree's labels are not distinct, so they cannot name networkx nodes; "
                             "use tree.edges (vertex indices) instead")
        g = nx.Graph()
        g.add_nodes_from(names)
        for (a, b), w in zip(self.edges.tolist(), self._weights.tolist()):
            g.add_edge(names[a], names[b], weight=w)
        return g
