"""The result type shared by every algorithm."""

import numpy as np
import scipy.sparse as sp


class SpanningTree:
    """A released spanning tree.

    Attributes
    ----------
    edges : ndarray of int64, shape (n - 1, 2)
        Rows ``(tree vertex, new vertex)`` in the order the edges were selected.
    weight : float
        Sum of the *input* (true, un-noised) weights of the tree's edges.
    n_vertices : int
    algorithm : str
        Which algorithm released it.
    info : dict
        Parameters used (rho, sensitivity, noise rate, ...), for the record.
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
        """Input weights of ``edges``, shape (n - 1,)."""
        return self._weights

    def __len__(self):
        return len(self.edges)

    def __repr__(self):
        return (
            f"SpanningTree(n_vertices={self.n_vertices}, n_edges={len(self.edges)}, "
            f"weight={self.weight:.6g}, algorithm={self.algorithm!r})"
        )

    def to_scipy(self):
        """The tree as a symmetric ``scipy.sparse.csr_array`` (n, n) of its input weights.

        Edges whose weight is 0 are kept as explicit zeros.
        """
        u, v = self.edges[:, 0], self.edges[:, 1]
        rows = np.concatenate([u, v])
        cols = np.concatenate([v, u])
        data = np.concatenate([self._weights, self._weights])
        return sp.csr_array((data, (rows, cols)), shape=(self.n_vertices, self.n_vertices))

    def to_networkx(self):
        """The tree as a ``networkx.Graph`` with a ``weight`` attribute per edge (needs networkx)."""
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_networkx() needs networkx: python -m pip install networkx") from None
        g = nx.Graph()
        g.add_nodes_from(range(self.n_vertices))
        for (a, b), w in zip(self.edges.tolist(), self._weights.tolist()):
            g.add_edge(a, b, weight=w)
        return g
