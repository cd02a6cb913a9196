"""The result type shared by every algorithm."""

import numpy as np
import scipy.sparse as sp


class SpanningTree:
    """A released spanning tree.

    What a private algorithm releases is the edge set ``edges`` (and its
    public parameters in ``info``). The tree also carries the TRUE weights of
    its edges, taken from the input for evaluation only: they are NOT private,
    are not covered by any privacy guarantee, and must not be published. To
    publish weights, release them privately with
    :func:`fastpamst_nb.private_edge_weights` (which spends its own budget).
    ``repr(tree)`` (what Jupyter shows) therefore prints no weight.

    Attributes
    ----------
    edges : ndarray of int64, shape (n - 1, 2)
        Rows ``(tree vertex, new vertex)`` in the order the edges were selected.
        This is the private release.
    weight : float
        Sum of the TRUE (input, un-noised) weights of the tree's edges.
        NOT private: for evaluation only, do not publish it. Same as
        :attr:`true_weight`.
    n_vertices : int
    algorithm : str
        Which algorithm released it (``"exact"`` is not private at all).
    info : dict
        Public parameters of the release (rho, sensitivity, noise rate,
        discretization, ...: functions of the budget, the sensitivity and the
        graph size only), for the record. ``info["rho"]`` is the zCDP budget
        the edges cost; it is absent for the non-private exact tree.
    """

    __slots__ = ("edges", "weight", "n_vertices", "algorithm", "info", "_weights")

    def __init__(self, edges, edge_weights, n_vertices, algorithm, info=None):
        self.edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self._weights = np.asarray(edge_weights, dtype=np.float64)
        self.weight = float(self._weights.sum())
        self.n_vertices = int(n_vertices)
        self.algorithm = algorithm
        self.info = dict(info or {})

    @property
    def edge_weights(self):
        """TRUE input weights of ``edges``, shape (n - 1,): NOT private, do not publish them.

        The private algorithms protect the edge set only; these are the exact
        entries of the input matrix, kept for evaluation. Publish
        :func:`fastpamst_nb.private_edge_weights` instead.
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

    def __len__(self):
        return len(self.edges)

    def __repr__(self):
        # only public quantities: never the (true, non-private) weights
        rho = self.info.get("rho")
        budget = "" if rho is None else f", rho={float(rho)!r}"
        return (
            f"SpanningTree(algorithm={self.algorithm!r}, n_vertices={self.n_vertices}, "
            f"n_edges={len(self.edges)}{budget})"
        )

    def to_scipy(self):
        """The tree as a symmetric ``scipy.sparse.csr_array`` (n, n) of its TRUE input weights.

        Edges whose weight is 0 are kept as explicit zeros. The stored values
        are the true weights (NOT private, see :attr:`edge_weights`); only the
        sparsity pattern is the private release.
        """
        u, v = self.edges[:, 0], self.edges[:, 1]
        rows = np.concatenate([u, v])
        cols = np.concatenate([v, u])
        data = np.concatenate([self._weights, self._weights])
        return sp.csr_array((data, (rows, cols)), shape=(self.n_vertices, self.n_vertices))

    def to_networkx(self):
        """The tree as a ``networkx.Graph`` with a ``weight`` attribute per edge (needs networkx).

        The ``weight`` attributes are the TRUE input weights (NOT private, see
        :attr:`edge_weights`); only the edge set is the private release.
        """
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_networkx() needs networkx: python -m pip install networkx") from None
        g = nx.Graph()
        g.add_nodes_from(range(self.n_vertices))
        for (a, b), w in zip(self.edges.tolist(), self._weights.tolist()):
            g.add_edge(a, b, weight=w)
        return g
