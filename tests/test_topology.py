"""The public edge set (``topology=``) and messages that never quote a weight.

The topology of a release must not depend on the private weights. Reading it off
the weights does: ``scipy.sparse.csr_matrix(W)`` and ``A + A.T`` drop entries that
are 0, so a zero-weight edge silently leaves the graph. ``topology=`` fixes the
edge set independently of the weights.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb.graph import as_graph

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

ALGORITHMS = {
    "exact": lambda W, **kw: fp.exact_mst(W, **kw),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, 1e6, 1e-3, rng=0, **kw),
    "fast_pamst_gumbel": lambda W, **kw: fp.fast_pamst(W, 1e6, 1e-3, rng=0, noise="gumbel", **kw),
    "pamst": lambda W, **kw: fp.pamst(W, 1e6, 1e-3, rng=0, **kw),
    "post_processing": lambda W, **kw: fp.post_processing(W, 1e9, 1e-3, rng=0, **kw),
}


def _ring_with_zero_chords(n=8):
    """A ring (public) whose weights include exact zeros, plus the mask of the ring."""
    mask = np.zeros((n, n), dtype=bool)
    W = np.zeros((n, n))
    for a in range(n):
        b = (a + 1) % n
        mask[a, b] = mask[b, a] = True
        W[a, b] = W[b, a] = 0.0 if a % 3 == 0 else 1.0 + a
    return W, mask


def test_dropping_zeros_is_the_pitfall_and_topology_keeps_them():
    W, mask = _ring_with_zero_chords()
    assert sp.csr_matrix(W).nnz < mask.sum()  # the pitfall: zero-weight edges vanish...
    with pytest.raises(ValueError, match="disconnected"):  # (here the ring even falls apart)
        fp.exact_mst(sp.csr_matrix(W))
    kept = as_graph(W, topology=mask)  # ...the mask keeps every public edge
    assert kept.m == mask.sum() // 2 and not kept.dense
    assert sorted(kept.data.tolist()).count(0.0) == 2 * 3  # three zero-weight edges, both ways


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
@pytest.mark.parametrize("form", ["bool-mask", "int-mask", "sparse-pattern", "sparse-weights"])
def test_every_algorithm_uses_exactly_the_topology(algorithm, form):
    rng = np.random.default_rng(3)
    n = 12
    W = rng.random((n, n))
    W = W + W.T
    mask = np.triu(rng.random((n, n)) < 0.4, 1)
    for a in range(n - 1):  # a path keeps it connected
        mask[a, a + 1] = True
    mask = mask | mask.T
    W[mask & (rng.random((n, n)) < 0.3)] = 0.0
    W = np.minimum(W, W.T)
    weights, topology = W, mask
    if form == "int-mask":
        topology = mask.astype(np.int8)
    elif form == "sparse-pattern":
        topology = sp.csr_matrix(mask)
    elif form == "sparse-weights":
        # a sparse weight matrix that stores only the non-zero weights: the topology
        # restores the zero-weight edges as weight 0
        weights = sp.csr_matrix(W * mask)
    before = (np.array(W), np.array(mask))
    tree = ALGORITHMS[algorithm](weights, topology=topology)
    assert len(tree.edges) == n - 1
    for a, b in tree.edges.tolist():
        assert mask[a, b], "an edge outside the public topology was released"
    # the same graph given as a sparse matrix with explicit zeros is the same problem
    rows, cols = np.nonzero(mask)
    explicit = sp.csr_matrix((W[rows, cols], (rows, cols)), shape=(n, n))
    assert explicit.nnz == mask.sum()
    if algorithm in ("exact", "fast_pamst", "fast_pamst_gumbel", "pamst"):
        assert np.array_equal(ALGORITHMS[algorithm](explicit).edges, tree.edges)
    assert np.array_equal(W, before[0]) and np.array_equal(mask, before[1])


def test_excess_weight_with_a_topology():
    W, mask = _ring_with_zero_chords()
    tree = fp.fast_pamst(W, 1e6, 1e-3, rng=0, topology=mask)
    assert fp.excess_weight(W, tree, topology=mask) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("bad, match", [
    (np.triu(np.ones((5, 5), dtype=bool), 1), "topology is not symmetric"),
    (np.ones((4, 4), dtype=bool), "same shape"),
    (np.eye(5, dtype=bool), "disconnected"),
    (np.array(["a"] * 25).reshape(5, 5), "boolean"),
    ("mask", "boolean"),
    (np.ones((5, 5, 1), dtype=bool), "2-D"),
])
def test_bad_topologies(bad, match):
    W = np.ones((5, 5))
    with pytest.raises((ValueError, TypeError), match=match):
        fp.fast_pamst(W, 1.0, 1.0, rng=0, topology=bad)


def test_weights_must_be_symmetric_on_the_topology_only():
    W, mask = _ring_with_zero_chords()
    W2 = W.copy()
    W2[0, 4] = 7.0  # not an edge of the ring: ignored
    fp.exact_mst(W2, topology=mask)
    W2[0, 1] = 123.456789  # an edge: refused
    with pytest.raises(ValueError, match="not symmetric") as info:
        fp.exact_mst(W2, topology=mask)
    assert "123.45" not in str(info.value)


# ---------------------------------------------------------------------------
# error messages name indices, shapes and parameters, never a weight
# ---------------------------------------------------------------------------

SECRET = 123.456789


def _messages(W):
    out = []
    for fn in (lambda: fp.exact_mst(W), lambda: fp.fast_pamst(W, 1.0, 0.1, rng=0),
               lambda: fp.pamst(W, 1.0, 0.1, rng=0), lambda: fp.post_processing(W, 1.0, 0.1, rng=0)):
        with pytest.raises(ValueError) as info:
            fn()
        out.append(str(info.value))
    return out


@pytest.mark.parametrize("sparse", [False, True])
def test_asymmetry_messages_quote_no_weight(sparse):
    W = np.full((4, 4), 2.0)
    W[1, 2] = SECRET
    W[2, 1] = SECRET + 1e-9
    for msg in _messages(sp.csr_matrix(W) if sparse else W):
        assert "not symmetric" in msg and "123.45" not in msg


@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_messages_quote_no_value(sparse):
    W = np.full((4, 4), SECRET)
    W[1, 2] = W[2, 1] = np.inf
    for msg in _messages(sp.csr_matrix(W) if sparse else W):
        assert "not finite" in msg and "inf," not in msg and "123.45" not in msg
