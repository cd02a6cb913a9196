"""SpanningTree: weights, conversions, repr, immutability, equality, files, and fp.excess_weight."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb import SpanningTree

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

try:
    import networkx as nx
except ImportError:  # pragma: no cover - networkx is a test extra
    nx = None

N = 12


def random_symmetric(rng, n, low=0.1, high=1.0):
    W = np.triu(rng.uniform(low, high, size=(n, n)), 1)
    return W + W.T


def zero_edge_graph(sparse):
    """Complete graph on N vertices whose minimum spanning tree must use the 0-weight edge (2, 5)."""
    W = random_symmetric(np.random.default_rng(0), N, -1.0, 1.0)
    W[2, :] += 5.0  # every other edge at vertex 2 is expensive ...
    W[:, 2] += 5.0
    W[2, 5] = W[5, 2] = 0.0  # ... so vertex 2 joins through the zero edge
    if not sparse:
        return W
    i, j = np.nonzero(~np.eye(N, dtype=bool))
    A = sp.csr_matrix((W[i, j], (i, j)), shape=(N, N))
    assert A.nnz == N * (N - 1)  # the zero is stored explicitly
    return A


def dense(weights):
    return weights.toarray() if sp.issparse(weights) else np.asarray(weights)


ALGOS = {
    "exact": lambda W, **kw: fp.exact_mst(W, **kw),
    "pamst": lambda W, **kw: fp.pamst(W, 0.5, 0.1, **{"rng": 1, **kw}),
    "pamst-gumbel": lambda W, **kw: fp.pamst(W, 0.5, 0.1, noise="gumbel", **{"rng": 1, **kw}),
    "post_processing": lambda W, **kw: fp.post_processing(W, 0.5, 0.01, **{"rng": 1, **kw}),
    "fast_pamst": lambda W, **kw: fp.fast_pamst(W, 0.5, 0.1, **{"rng": 1, **kw}),
    "fast_pamst-gumbel": lambda W, **kw: fp.fast_pamst(W, 0.5, 0.1, noise="gumbel", **{"rng": 1, **kw}),
}


@pytest.fixture(params=[False, True], ids=["dense", "sparse"])
def graph(request):
    return zero_edge_graph(request.param)


@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("maximum", [False, True])
def test_weights_are_the_input_weights(algo, maximum, graph):
    tree = ALGOS[algo](graph, maximum=maximum)
    D = dense(graph)
    expected = D[tree.edges[:, 0], tree.edges[:, 1]]
    # true weights, never the noisy ones (post-processing noises a copy)
    np.testing.assert_array_equal(tree.edge_weights, expected)
    assert tree.edge_weights.dtype == np.float64 and tree.edge_weights.shape == (N - 1,)
    assert tree.weight == pytest.approx(expected.sum(), rel=1e-12, abs=1e-12)
    assert isinstance(tree.weight, float)
    assert len(tree) == N - 1 and tree.n_vertices == N
    assert tree.info["maximum"] is maximum


@pytest.mark.parametrize("algo", list(ALGOS))
def test_algorithm_name(algo):
    tree = ALGOS[algo](zero_edge_graph(False))
    assert tree.algorithm == algo.split("-")[0]


def test_exact_tree_uses_the_zero_edge(graph):
    tree = fp.exact_mst(graph)
    assert {(2, 5), (5, 2)} & set(map(tuple, tree.edges.tolist()))
    assert 0.0 in tree.edge_weights.tolist()


@pytest.mark.parametrize("algo", list(ALGOS))
def test_to_scipy(algo, graph):
    tree = ALGOS[algo](graph)
    S = tree.to_scipy(symmetric=True)
    assert sp.issparse(S) and S.shape == (N, N)
    assert S.nnz == 2 * (N - 1)  # every tree edge twice, explicit zeros kept
    assert abs(S - S.T).max() == 0
    D = dense(graph)
    for a, b in tree.edges.tolist():
        assert S[a, b] == D[a, b] == S[b, a]
    # the stored pattern is exactly the tree
    coo = sp.coo_matrix(S)
    stored = {(min(a, b), max(a, b)) for a, b in zip(coo.row.tolist(), coo.col.tolist())}
    assert stored == {(min(a, b), max(a, b)) for a, b in tree.edges.tolist()}
    assert S.sum() / 2 == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)
    # the default stores each edge once, in the upper triangle, as scipy's MST does
    U = tree.to_scipy()
    assert U.nnz == N - 1 and (sp.coo_matrix(U).row < sp.coo_matrix(U).col).all()
    assert abs(U + U.T - S).max() == 0
    assert U.sum() == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


def test_to_scipy_matches_scipys_convention():
    from scipy.sparse.csgraph import minimum_spanning_tree

    D = random_symmetric(np.random.default_rng(4), 12)
    ours, theirs = fp.exact_mst(D).to_scipy(), minimum_spanning_tree(D)
    assert ours.nnz == theirs.nnz == 11
    assert ours.sum() == pytest.approx(theirs.sum(), rel=1e-12)
    assert abs((ours + ours.T) - (theirs + theirs.T)).max() == 0
    with pytest.raises(TypeError, match="symmetric must be True or False"):
        fp.exact_mst(D).to_scipy(symmetric="yes")


def test_to_scipy_keeps_explicit_zero():
    tree = fp.exact_mst(zero_edge_graph(True))
    S = tree.to_scipy()
    assert S.nnz == N - 1
    assert np.count_nonzero(S.data == 0.0) == 1
    assert np.count_nonzero(tree.to_scipy(symmetric=True).data == 0.0) == 2
    # the round trip through scipy is a valid sparse input with the same tree: one
    # triangle read as such, or both
    for again in (fp.exact_mst(S, symmetric="upper"), fp.exact_mst(tree.to_scipy(symmetric=True))):
        assert again.weight == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("algo", list(ALGOS))
def test_to_networkx(algo, graph):
    nx = pytest.importorskip("networkx")
    tree = ALGOS[algo](graph)
    g = tree.to_networkx()
    assert nx.is_tree(g)
    assert g.number_of_nodes() == N and g.number_of_edges() == N - 1
    D = dense(graph)
    for a, b, data in g.edges(data=True):
        assert data["weight"] == D[a, b]
    assert g.size(weight="weight") == pytest.approx(tree.weight, rel=1e-12, abs=1e-12)


def test_conversions_on_single_vertex():
    tree = fp.exact_mst(np.zeros((1, 1)))
    assert tree.to_scipy().shape == (1, 1) and tree.to_scipy().nnz == 0
    pytest.importorskip("networkx")
    g = tree.to_networkx()
    assert g.number_of_nodes() == 1 and g.number_of_edges() == 0


# PAMST's repr case is too slow as Python (its O(n^3) steps)
@pytest.mark.parametrize("algo", [pytest.param(a, marks=pytest.mark.slow_python) if a.startswith("pamst") else a
                                  for a in ALGOS])
def test_repr(algo):
    tree = ALGOS[algo](random_symmetric(np.random.default_rng(2), 500))
    r = repr(tree)
    assert len(r) < 120 and "\n" not in r  # short, even for a big tree
    assert "n_vertices=500" in r and "n_edges=499" in r
    assert f"algorithm={algo.split('-')[0]!r}" in r
    # the repr (what Jupyter shows) publishes only public parameters: never the true weight
    assert "weight" not in r
    assert f"{tree.weight:.6g}" not in r and f"{tree.weight:.3g}" not in r
    if algo == "exact":
        assert "rho" not in r  # no budget: nothing to show
    else:
        assert f"rho={tree.info['rho']!r}" in r


def distinctive_path(n=6, w=123.456789):
    """A path graph whose every edge weighs ``w`` (a number that cannot appear by accident)."""
    W = np.zeros((n, n))
    i = np.arange(n - 1)
    W[i, i + 1] = W[i + 1, i] = w
    return sp.csr_matrix(W)


@pytest.mark.parametrize("algo", list(ALGOS))
def test_repr_and_str_show_no_weight_digits(algo):
    tree = ALGOS[algo](distinctive_path())
    assert tree.weight == pytest.approx(5 * 123.456789)
    for text in (repr(tree), str(tree), repr([tree])):
        for digits in ("123.45", "123.46", "617.28", "617.3", "617.2"):
            assert digits not in text, text


def test_true_weight_is_an_alias_documented_as_not_private():
    tree = fp.fast_pamst(distinctive_path(), 0.5, 0.1, rng=0)
    assert tree.true_weight == tree.weight == pytest.approx(5 * 123.456789)
    doc = SpanningTree.true_weight.__doc__
    assert "TRUE" in doc and "NOT private" in doc
    assert "NOT private" in SpanningTree.edge_weights.__doc__
    assert "NOT private" in SpanningTree.__doc__


def test_constructor_normalizes():
    t = SpanningTree([[0, 1], [1, 2]], [1, 2], 3, "manual")
    assert t.edges.dtype == np.int64 and t.edges.shape == (2, 2)
    assert t.weight == 3.0 and t.info == {}
    empty = SpanningTree(np.zeros((0, 2)), [], 1, "manual", {"x": 1})
    assert empty.edges.shape == (0, 2) and empty.weight == 0.0 and empty.info == {"x": 1}


# ---------------------------------------------------------------------------
# immutability and equality
# ---------------------------------------------------------------------------

def small_tree(**info):
    return SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.0], 4, "manual", {"rho": 1.0, **info})


@pytest.mark.parametrize("name", ["edges", "weight", "n_vertices", "algorithm", "info", "_weights",
                                  "edge_weights", "true_weight", "something_new"])
def test_attributes_cannot_be_set_or_deleted(name):
    tree = small_tree()
    with pytest.raises(AttributeError):
        setattr(tree, name, 0)
    with pytest.raises(AttributeError):
        delattr(tree, name)
    assert tree.weight == 2.75 and tree.n_vertices == 4 and tree.algorithm == "manual"


def test_arrays_and_info_are_read_only_private_copies():
    edges = np.array([[0, 1], [1, 2]])
    weights = np.array([0.5, 0.25])
    info = {"rho": 1.0, "n_categories": [2, 3, 2], "nested": {"a": [1]}}
    tree = SpanningTree(edges, weights, 3, "manual", info)
    # the caller's objects are copied: changing them later changes nothing
    edges[0, 0] = 2
    weights[0] = 99.0
    info["rho"] = 2.0
    info["nested"]["a"].append(2)
    assert tree.edges.tolist() == [[0, 1], [1, 2]]
    assert tree.edge_weights.tolist() == [0.5, 0.25] and tree.weight == 0.75
    assert tree.info["rho"] == 1.0 and tree.info["nested"]["a"] == (1,)
    assert tree.info["n_categories"] == (2, 3, 2)  # sequences are frozen to tuples
    # and the tree's own are read-only
    for arr in (tree.edges, tree.edge_weights):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1
        with pytest.raises(ValueError):
            arr.setflags(write=True)  # a view cannot be made writeable again: it does not own its data
    with pytest.raises(TypeError):
        tree.info["rho"] = 5.0
    with pytest.raises(TypeError):
        tree.info["nested"]["a"] = 5
    assert dict(tree.info)["rho"] == 1.0  # a mutable copy on request


@pytest.mark.parametrize("algo", list(ALGOS))
def test_released_trees_are_read_only(algo):
    tree = ALGOS[algo](zero_edge_graph(False))
    assert not tree.edges.flags.writeable and not tree.edge_weights.flags.writeable
    with pytest.raises(TypeError):
        tree.info["rho"] = 1e9
    with pytest.raises(AttributeError):
        tree.edges = np.zeros((N - 1, 2), dtype=np.int64)


def test_chow_liu_tree_is_read_only_and_keeps_its_info():
    data = np.random.default_rng(0).integers(0, 3, size=(300, 5))
    tree = fp.chow_liu(data, rho=1.0, n_categories=3, rng=0)
    assert tree.info["n_rows"] == 300 and tree.info["n_categories"] == (3,) * 5
    assert tree.info["maximum"] is True and tree.algorithm == "fast_pamst"
    with pytest.raises(TypeError):
        tree.info["n_rows"] = 1


def test_equality():
    a = small_tree()
    assert a == small_tree() and not (a != small_tree())
    assert hash(a) == hash(small_tree()) and len({a, small_tree()}) == 1
    assert a != SpanningTree([[0, 1], [1, 3], [1, 2]], [0.5, 2.0, 0.25], 4, "manual", {"rho": 1.0})  # order
    assert a != SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.0], 5, "manual", {"rho": 1.0})
    assert a != SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.0], 4, "other", {"rho": 1.0})
    assert a != small_tree(noise="gumbel")
    # what was released is compared, not the true weights (evaluation only)
    assert a == SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.5], 4, "manual", {"rho": 1.0})
    assert a == SpanningTree([[0, 1], [1, 2], [1, 3]], None, 4, "manual", {"rho": 1.0})
    assert a != SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.0], 4, "manual", {"rho": 1.0},
                             labels=list("abcd"))
    # unknown (NaN) weights equal unknown weights
    assert (SpanningTree([[0, 1]], None, 2, "manual") == SpanningTree([[0, 1]], [np.nan], 2, "manual"))
    assert a != "tree" and a != None and a != a.edges.tolist()  # noqa: E711
    # the same seed gives equal releases; another seed a different one
    W = random_symmetric(np.random.default_rng(7), 30)
    assert fp.fast_pamst(W, 0.5, 0.1, rng=3) == fp.fast_pamst(W, 0.5, 0.1, rng=3)
    assert fp.fast_pamst(W, 0.5, 0.1, rng=3) != fp.fast_pamst(W, 0.5, 0.1, rng=4)


def test_pickle_and_copy_round_trip():
    import copy
    import pickle

    tree = fp.chow_liu(np.random.default_rng(1).integers(0, 2, size=(200, 6)), rho=1.0, n_categories=2, rng=0)
    for again in (pickle.loads(pickle.dumps(tree)), copy.copy(tree), copy.deepcopy(tree)):
        assert again is not tree
        assert np.array_equal(again.edges, tree.edges) and again.info == tree.info
        assert (again.n_vertices, again.algorithm) == (tree.n_vertices, tree.algorithm)
        assert not again.edges.flags.writeable
        with pytest.raises(TypeError):
            again.info["rho"] = 2.0
    # copies within the process keep the true weights
    assert copy.copy(tree) == tree and copy.deepcopy(tree) == tree


def test_pickle_holds_the_private_release_only():
    # issue 25 item 5: pickle follows save(), never the true weights
    import pickle

    w = [0.123456789012345, 9.87654321098765]
    tree = SpanningTree([[0, 1], [1, 2]], w, 3, "fast_pamst", {"rho": 1.0})
    blob = pickle.dumps(tree)
    for x in w:
        assert np.float64(x).tobytes() not in blob
    again = pickle.loads(blob)
    assert not again.has_true_weights and np.isnan(again.edge_weights).all()
    assert np.array_equal(again.edges, tree.edges) and again.info == tree.info


def test_constructor_errors():
    with pytest.raises(ValueError, match=r"shape \(n_edges, 2\)"):
        SpanningTree([0, 1, 2], [1.0], 3, "manual")
    with pytest.raises(ValueError, match="one entry per edge"):
        SpanningTree([[0, 1], [1, 2]], [1.0], 3, "manual")
    with pytest.raises(ValueError, match="0 .. 2"):
        SpanningTree([[0, 1], [1, 3]], [1.0, 1.0], 3, "manual")
    with pytest.raises(ValueError, match="0 .. 2"):
        SpanningTree([[0, 1], [-1, 2]], [1.0, 1.0], 3, "manual")
    with pytest.raises(ValueError, match="integer vertex indices"):
        SpanningTree([[0, 0.5]], [1.0], 2, "manual")
    with pytest.raises(TypeError, match="integer vertex indices"):
        SpanningTree([["a", "b"]], [1.0], 2, "manual")
    with pytest.raises(TypeError, match="n_vertices must be an int"):
        SpanningTree([[0, 1]], [1.0], 2.0, "manual")
    with pytest.raises(ValueError, match="n_vertices must be >= 1"):
        SpanningTree(np.zeros((0, 2)), [], 0, "manual")
    with pytest.raises(TypeError, match="algorithm must be a str"):
        SpanningTree([[0, 1]], [1.0], 2, None)
    with pytest.raises(TypeError, match="info must be a mapping"):
        SpanningTree([[0, 1]], [1.0], 2, "manual", [("rho", 1.0)])
    # integral floats are fine (np.zeros is float)
    assert SpanningTree(np.array([[0.0, 1.0]]), [1.0], 2, "manual").edges.tolist() == [[0, 1]]


# ---------------------------------------------------------------------------
# save / load
# ---------------------------------------------------------------------------

DISTINCT = 123.456789


@pytest.mark.parametrize("algo", list(ALGOS))
def test_save_default_stores_only_the_release(algo, tmp_path):
    tree = ALGOS[algo](distinctive_path(w=DISTINCT))
    path = tmp_path / "release.npz"
    tree.save(path)
    with np.load(path, allow_pickle=False) as data:
        assert "edge_weights" not in data.files
        assert set(data.files) == {"format", "format_version", "edges", "n_vertices", "algorithm", "info"}
    raw = path.read_bytes()
    assert np.float64(DISTINCT).tobytes() not in raw  # no true weight anywhere in the file
    assert np.float64(tree.weight).tobytes() not in raw
    loaded = SpanningTree.load(path)
    assert np.array_equal(loaded.edges, tree.edges) and loaded.edges.dtype == np.int64
    assert loaded.n_vertices == tree.n_vertices and loaded.algorithm == tree.algorithm
    assert loaded.info == tree.info
    assert np.isnan(loaded.weight) and np.isnan(loaded.edge_weights).all()
    assert loaded.edge_weights.shape == (5,)
    assert not loaded.has_true_weights and tree.has_true_weights
    assert loaded == tree  # the release: the true weights are not part of it
    assert "has_true_weights=False" in repr(loaded) and "has_true_weights" not in repr(tree)


@pytest.mark.parametrize("algo", list(ALGOS) + ["chow_liu"])
def test_save_with_true_weights_round_trips(algo, tmp_path):
    if algo == "chow_liu":
        tree = fp.chow_liu(np.random.default_rng(2).integers(0, 3, size=(300, 7)), rho=1.0, n_categories=3, rng=0)
    else:
        tree = ALGOS[algo](zero_edge_graph(True))
    tree.save(tmp_path / "full.npz", include_true_weights=True)
    loaded = SpanningTree.load(tmp_path / "full.npz")
    assert loaded == tree
    assert np.array_equal(loaded.edge_weights, tree.edge_weights) and loaded.weight == tree.weight
    assert dict(loaded.info) == dict(tree.info)  # tuples come back as tuples, bools as bools
    assert not loaded.edges.flags.writeable


def test_save_appends_npz_and_accepts_files(tmp_path):
    tree = small_tree(n_categories=(2, 3), maximum=True, note=None, nested={"k": [1, 2.5]})
    tree.save(str(tmp_path / "plain"), include_true_weights=True)
    assert (tmp_path / "plain.npz").exists()
    assert SpanningTree.load(tmp_path / "plain.npz") == tree
    import io

    buf = io.BytesIO()
    tree.save(buf)
    buf.seek(0)
    loaded = SpanningTree.load(buf)
    assert loaded.info == tree.info and loaded.info["nested"]["k"] == (1, 2.5)


def test_single_vertex_round_trip(tmp_path):
    tree = fp.exact_mst(np.zeros((1, 1)))
    tree.save(tmp_path / "one.npz")
    loaded = SpanningTree.load(tmp_path / "one.npz")
    assert loaded == tree and loaded.edges.shape == (0, 2) and loaded.weight == 0.0


def test_save_errors(tmp_path):
    with pytest.raises(TypeError, match=r"info\['bad'\] is a object"):
        small_tree(bad=object()).save(tmp_path / "x.npz")
    with pytest.raises(TypeError, match="only str keys"):
        SpanningTree([[0, 1]], [1.0], 2, "manual", {1: "one"}).save(tmp_path / "x.npz")
    with pytest.raises(TypeError, match="include_true_weights must be True or False"):
        small_tree().save(tmp_path / "x.npz", include_true_weights="yes")
    assert not (tmp_path / "x.npz").exists()


def test_load_errors(tmp_path):
    import pickle

    with open(tmp_path / "tree.pkl", "wb") as f:
        pickle.dump(small_tree(), f)
    with pytest.raises(ValueError, match="pickle"):
        SpanningTree.load(tmp_path / "tree.pkl")  # loading never unpickles (never runs code)
    np.savez(tmp_path / "other.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="not a SpanningTree file"):
        SpanningTree.load(tmp_path / "other.npz")
    np.save(tmp_path / "edges.npy", small_tree().edges)
    with pytest.raises(ValueError, match="single array"):
        SpanningTree.load(tmp_path / "edges.npy")
    small_tree().save(tmp_path / "t.npz")
    with np.load(tmp_path / "t.npz") as data:
        arrays = dict(data)
    arrays["format_version"] = np.array(99)
    np.savez(tmp_path / "future.npz", **arrays)
    with pytest.raises(ValueError, match="newer fastpamst_nb"):
        SpanningTree.load(tmp_path / "future.npz")


def test_file_docstrings_label_true_weights_as_not_private():
    assert "NOT private" in SpanningTree.save.__doc__ and "include_true_weights" in SpanningTree.save.__doc__
    assert "NOT private" in SpanningTree.to_csv.__doc__


# ---------------------------------------------------------------------------
# to_csv
# ---------------------------------------------------------------------------

def read_csv(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    return lines[0], [line.split(",") for line in lines[1:]]


@pytest.mark.parametrize("algo", list(ALGOS))
def test_to_csv_writes_only_edges_by_default(algo, tmp_path):
    tree = ALGOS[algo](distinctive_path(w=DISTINCT))
    tree.to_csv(tmp_path / "tree.csv")
    header, rows = read_csv(tmp_path / "tree.csv")
    assert header == "u,v"
    assert [[int(u), int(v)] for u, v in rows] == tree.edges.tolist()  # release order
    assert "123.45" not in (tmp_path / "tree.csv").read_text()


def test_to_csv_with_private_weights(tmp_path):
    tree = fp.fast_pamst(distinctive_path(w=DISTINCT), 0.5, 0.1, rng=0)
    w = fp.private_edge_weights(tree, rho=0.5, sensitivity=0.1, rng=1)
    tree.to_csv(str(tmp_path / "w.csv"), weights=w)
    header, rows = read_csv(tmp_path / "w.csv")
    assert header == "u,v,weight"
    assert [[int(u), int(v)] for u, v, _ in rows] == tree.edges.tolist()
    assert [float(x) for _, _, x in rows] == w.tolist()  # every digit: read back exactly
    # an open text file works too, and writing the true weights needs them passed explicitly
    import io

    buf = io.StringIO()
    tree.to_csv(buf, weights=tree.edge_weights)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "u,v,true_weight"  # labelled as the true (non-private) weights
    assert lines[1] == f"{tree.edges[0, 0]},{tree.edges[0, 1]},{DISTINCT!r}"
    buf = io.StringIO()
    tree.to_csv(buf, weights=list(tree.edge_weights))  # a copy of them is labelled too
    assert buf.getvalue().splitlines()[0] == "u,v,true_weight"


def test_to_csv_names_the_weight_column():
    import io

    tree = fp.fast_pamst(distinctive_path(w=DISTINCT), 0.5, 0.1, rng=0)
    w = fp.private_edge_weights(tree, rho=0.5, sensitivity=0.1, rng=1)
    buf = io.StringIO()
    tree.to_csv(buf, weights=w, column="private_weight")
    assert buf.getvalue().splitlines()[0] == "u,v,private_weight"
    buf = io.StringIO()
    tree.to_csv(buf, weights=tree.edge_weights, column="private_weight")  # never for true weights
    assert buf.getvalue().splitlines()[0] == "u,v,true_weight"
    for bad in ["", "a,b", 'say "w"', "w\n", 3]:
        with pytest.raises(ValueError, match="column must be a non-empty name"):
            tree.to_csv(io.StringIO(), weights=w, column=bad)


def test_to_csv_errors(tmp_path):
    tree = small_tree()
    with pytest.raises(ValueError, match=r"one entry per tree edge, shape \(3,\)"):
        tree.to_csv(tmp_path / "x.csv", weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        tree.to_csv(tmp_path / "x.csv", weights=[1.0, np.nan, 2.0])
    with pytest.raises(TypeError, match="path or a writable text file"):
        tree.to_csv(3)
    assert not (tmp_path / "x.csv").exists()
    # a tree loaded without its true weights has none to write
    tree.save(tmp_path / "t.npz")
    loaded = SpanningTree.load(tmp_path / "t.npz")
    with pytest.raises(ValueError, match="NaN"):
        loaded.to_csv(tmp_path / "x.csv", weights=loaded.edge_weights)
    loaded.to_csv(tmp_path / "ok.csv")
    assert read_csv(tmp_path / "ok.csv")[1] == [["0", "1"], ["1", "2"], ["1", "3"]]


# ---------------------------------------------------------------------------
# packaging: typed package, public namespaces
# ---------------------------------------------------------------------------

def test_privacy_all_lists_public_names_only():
    import types

    from fastpamst_nb import privacy

    assert "math" not in privacy.__all__ and "np" not in privacy.__all__
    public = {name for name, value in vars(privacy).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)
              # the conversions are also re-exported (and documented) as fastpamst_nb.*
              and getattr(value, "__module__", privacy.__name__) in (privacy.__name__, "fastpamst_nb")}
    assert set(privacy.__all__) == public
    assert {"resolve_rho", "zcdp_to_approx_dp", "gaussian_sigma"} <= public
    ns = {}
    exec("from fastpamst_nb.privacy import *", ns)
    assert "math" not in ns and "np" not in ns and "Fraction" not in ns and "resolve_rho" in ns


def test_package_is_typed():
    import importlib.resources

    assert importlib.resources.files("fastpamst_nb").joinpath("py.typed").is_file()


# ---------------------------------------------------------------------------
# excess_weight
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("maximum", [False, True])
def test_excess_weight_zero_for_the_exact_tree(graph, maximum):
    tree = fp.exact_mst(graph, maximum=maximum)
    assert fp.excess_weight(graph, tree) == 0.0
    assert fp.excess_weight(graph, tree, maximum=maximum) == 0.0


@pytest.mark.parametrize("algo", [a for a in ALGOS if a != "exact"])
@pytest.mark.parametrize("maximum", [False, True])
def test_excess_weight_positive_for_noisy_trees(algo, maximum):
    # strong noise on 40 vertices: the private tree is never the optimum
    W = random_symmetric(np.random.default_rng(3), 40)
    f = ALGOS[algo]
    for seed in range(3):
        tree = f(W, maximum=maximum, rng=seed)
        excess = fp.excess_weight(W, tree)
        best = fp.exact_mst(W, maximum=maximum).weight
        assert excess == pytest.approx(abs(tree.weight - best), rel=1e-12)
        assert excess > 0.0


def test_excess_weight_of_a_maximum_tree_measured_as_minimum():
    W = random_symmetric(np.random.default_rng(4), 30)
    tmax = fp.exact_mst(W, maximum=True)
    tmin = fp.exact_mst(W)
    # against the minimum tree, a maximum tree is as bad as it gets
    assert fp.excess_weight(W, tmax, maximum=False) == pytest.approx(tmax.weight - tmin.weight)
    assert fp.excess_weight(W, tmax, maximum=False) > 0
    assert fp.excess_weight(W, tmin, maximum=True) == pytest.approx(tmax.weight - tmin.weight)


def test_excess_weight_never_negative_on_many_random_trees():
    rng = np.random.default_rng(5)
    for trial in range(20):
        W = random_symmetric(rng, 15, -1.0, 1.0)
        for maximum in (False, True):
            tree = fp.pamst(W, 10.0 ** rng.uniform(-2, 4), 0.1, rng=trial, maximum=maximum)
            assert fp.excess_weight(W, tree) >= 0.0


# ---------------------------------------------------------------------------
# labels and the budget as given (issue 24, item 6)
# ---------------------------------------------------------------------------

def test_labels_ride_along_and_survive_save_load_and_pickle(tmp_path):
    import pickle

    tree = SpanningTree([[0, 1], [1, 2], [1, 3]], [0.5, 0.25, 2.0], 4, "manual", {"rho": 1.0},
                        labels=np.array(["a", "b", "c", "d"]))
    assert tree.labels == ("a", "b", "c", "d") and type(tree.labels[0]) is str
    assert tree.edge_labels() == [("a", "b"), ("b", "c"), ("b", "d")]
    tree.save(tmp_path / "t.npz")
    assert SpanningTree.load(tmp_path / "t.npz") == tree
    assert SpanningTree.load(tmp_path / "t.npz").labels == tree.labels
    assert pickle.loads(pickle.dumps(tree)).labels == tree.labels
    assert small_tree().labels is None
    with pytest.raises(ValueError, match="no vertex labels"):
        small_tree().edge_labels()
    with pytest.raises(ValueError, match="n_vertices = 4 vertices once, got 3"):
        SpanningTree([[0, 1]], None, 4, "manual", labels=["a", "b", "c"])
    with pytest.raises(TypeError, match="sequence of one name per vertex"):
        SpanningTree([[0, 1]], None, 2, "manual", labels="ab")
    with pytest.raises(TypeError, match="hashable"):
        SpanningTree([[0, 1]], None, 2, "manual", labels=[{"a": 1}, {"b": 2}])


@pytest.mark.skipif(nx is None, reason="needs networkx")
def test_networkx_node_labels_ride_along_and_come_back():
    W = random_symmetric(np.random.default_rng(2), 7)
    names = ["Oslo", "Rome", "Lima", "Kyiv", "Pune", "Baku", "Nuuk"]
    G = nx.Graph()
    for i in range(7):
        for j in range(i + 1, 7):
            G.add_edge(names[i], names[j], weight=W[i, j])
    for tree in (fp.exact_mst(G), fp.fast_pamst(G, rho=1.0, sensitivity=0.1, rng=0),
                 fp.pamst(G, rho=1.0, sensitivity=0.1, rng=0),
                 fp.post_processing(G, rho=1.0, sensitivity=0.1, rng=0)):
        assert tree.labels == tuple(G.nodes)
        ref = fp.exact_mst(W) if tree.algorithm == "exact" else None
        if ref is not None:
            assert tree.edge_labels() == [(names[u], names[v]) for u, v in ref.edges.tolist()]
        back = tree.to_networkx()
        assert set(back.nodes) == set(names)
        assert {frozenset(e) for e in back.edges} == {frozenset(e) for e in tree.edge_labels()}
    # nodes 0..n-1 are the vertices themselves: no labels
    assert fp.exact_mst(nx.relabel_nodes(G, dict(zip(names, range(7))))).labels is None


def test_dataframe_labels_ride_along():
    pd = pytest.importorskip("pandas")
    W = random_symmetric(np.random.default_rng(3), 5)
    cols = ["a", "b", "c", "d", "e"]
    ref = fp.fast_pamst(W, rho=1.0, sensitivity=0.1, rng=0)
    for df in (pd.DataFrame(W, index=cols, columns=cols), pd.DataFrame(W, columns=cols)):
        tree = fp.fast_pamst(df, rho=1.0, sensitivity=0.1, rng=0)
        assert tree.labels == tuple(cols) and np.array_equal(tree.edges, ref.edges)
        assert tree.edge_labels() == [(cols[u], cols[v]) for u, v in ref.edges.tolist()]
    with pytest.raises(ValueError, match="index and columns differ"):
        fp.exact_mst(pd.DataFrame(W, index=list("vwxyz"), columns=cols))
    X = pd.DataFrame(np.random.default_rng(1).integers(0, 2, size=(200, 4)), columns=list("pqrs"))
    assert fp.chow_liu(X, rho=1.0, n_categories=2, rng=0).labels == ("p", "q", "r", "s")


def test_budget_given_as_epsilon_delta_is_kept_beside_rho():
    W = random_symmetric(np.random.default_rng(5), 8)
    rho = fp.approx_dp_to_zcdp(1.0, 1e-6)
    for f in (fp.fast_pamst, fp.pamst, fp.post_processing):
        tree = f(W, epsilon=1.0, delta=1e-6, sensitivity=0.1, rng=0)
        assert (tree.info["epsilon"], tree.info["delta"]) == (1.0, 1e-6)
        assert tree.info["rho"] == pytest.approx(rho, rel=1e-12)
        assert "epsilon" not in f(W, rho=rho, sensitivity=0.1, rng=0).info
    X = np.random.default_rng(1).integers(0, 2, size=(200, 4))
    assert fp.chow_liu(X, epsilon=1.0, delta=1e-6, n_categories=2, rng=0).info["epsilon"] == 1.0


@pytest.mark.parametrize("f", [fp.fast_pamst, fp.pamst, fp.post_processing])
def test_neither_budget_nor_sensitivity_names_both(f):
    W = random_symmetric(np.random.default_rng(5), 6)
    with pytest.raises(TypeError, match=r"needs a privacy budget and a sensitivity: give rho=.*sensitivity="):
        f(W)
    with pytest.raises(TypeError, match=r"needs sensitivity="):
        f(W, rho=1.0)
