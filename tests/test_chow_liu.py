"""Chow-Liu: the MI matrix against a slow formula, its sensitivity by brute force, the tree."""

import importlib
import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import fastpamst_nb as fp
from fastpamst_nb.chow_liu import chow_liu, mi_sensitivity, mutual_information
from fastpamst_nb.privacy import approx_dp_to_zcdp

import naive

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

# the package exports the function chow_liu under the module's name, so fetch the module itself
cl_module = importlib.import_module("fastpamst_nb.chow_liu")


# ----------------------------------------------------------------------------- slow references


def slow_mi(data):
    """Direct plug-in MI, one contingency table per pair (obviously correct, slow)."""
    data = np.asarray(data)
    N, d = data.shape
    M = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            ki, kj = data[:, i].max() + 1, data[:, j].max() + 1
            T = np.zeros((ki, kj))
            for r in range(N):
                T[data[r, i], data[r, j]] += 1
            P = T / N
            pi, pj = P.sum(axis=1), P.sum(axis=0)
            s = 0.0
            for a in range(ki):
                for b in range(kj):
                    if P[a, b] > 0:
                        s += P[a, b] * math.log(P[a, b] / (pi[a] * pj[b]))
            M[i, j] = s
    return M


def table_mi(T):
    """MI (nats) of a stack of contingency tables T, shape (..., kx, ky), all with the same N."""
    T = np.asarray(T, dtype=np.float64)
    N = T.sum(axis=(-2, -1), keepdims=True)
    a = T.sum(axis=-1, keepdims=True)
    b = T.sum(axis=-2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(T > 0, T / N * np.log(T * N / (a * b)), 0.0)
    return terms.sum(axis=(-2, -1))


def chain_data(rng, N, d, k=2, stay=0.9):
    """X0 uniform; X_{i+1} = X_i with probability ``stay``, else uniform: a Markov chain."""
    X = np.empty((N, d), dtype=np.int64)
    X[:, 0] = rng.integers(0, k, N)
    for i in range(1, d):
        keep = rng.random(N) < stay
        X[:, i] = np.where(keep, X[:, i - 1], rng.integers(0, k, N))
    return X


def edge_set(tree):
    return {tuple(sorted(e)) for e in tree.edges.tolist()}


@pytest.fixture(params=["dense", "sparse"])
def count_path(request, monkeypatch):
    """Run a test through the jitted dense counts and through the sparse one-hot product."""
    if request.param == "sparse":
        monkeypatch.setattr(cl_module, "_DENSE_MAX_CATEGORIES", 0)
    return request.param


# ----------------------------------------------------------------------------- MI matrix


@pytest.mark.parametrize("k", [2, 3])
def test_mi_matches_slow_formula(k, count_path):
    rng = np.random.default_rng(10 + k)
    X = rng.integers(0, k, size=(300, 6))
    X[:, 1] = np.where(rng.random(300) < 0.7, X[:, 0], X[:, 1])  # some real dependence
    np.testing.assert_allclose(mutual_information(X), slow_mi(X), rtol=1e-10, atol=1e-13)


def test_mi_mixed_domains_and_empty_categories(count_path):
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 2, 200), rng.integers(0, 5, 200), rng.integers(0, 3, 200)])
    X[:, 2] = (X[:, 1] + rng.integers(0, 2, 200)) % 3
    ref = slow_mi(X)
    np.testing.assert_allclose(mutual_information(X), ref, rtol=1e-10, atol=1e-13)
    # declaring bigger domains (empty categories) changes nothing
    np.testing.assert_allclose(mutual_information(X, n_categories=[4, 7, 3]), ref, rtol=1e-10, atol=1e-13)


def test_mi_properties(count_path):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(500, 8))
    X[:, 5] = X[:, 2]  # a copy: MI equals the entropy
    M = mutual_information(X)
    assert M.shape == (8, 8) and M.dtype == np.float64
    assert np.array_equal(M, M.T)
    assert np.all(M >= 0.0)
    assert np.all(np.diag(M) == 0.0)
    p = np.bincount(X[:, 2]) / 500
    assert M[2, 5] == pytest.approx(-(p * np.log(p)).sum(), rel=1e-12)
    # MI <= min(H_i, H_j)
    H = np.array([-(q * np.log(q)).sum() for q in (np.bincount(c) / 500 for c in X.T)])
    assert np.all(M <= np.minimum.outer(H, H) + 1e-12)


def test_mi_independent_and_constant_columns():
    X = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1]])  # exactly independent; column 2 constant
    M = mutual_information(X)
    assert np.all(M == 0.0)


def test_mi_bool_and_never_modifies_input():
    rng = np.random.default_rng(5)
    X = rng.random((100, 4)) < 0.5
    Xf = np.asfortranarray(rng.integers(0, 3, size=(100, 4)).astype(np.int8))
    before_b, before_f = X.copy(), Xf.copy()
    np.testing.assert_allclose(mutual_information(X), slow_mi(X.astype(int)), atol=1e-13)
    np.testing.assert_allclose(mutual_information(Xf), slow_mi(Xf.astype(int)), atol=1e-13)
    chow_liu(Xf, rho=1.0, rng=0, n_categories=3)
    assert np.array_equal(X, before_b) and np.array_equal(Xf, before_f)
    assert Xf.dtype == np.int8 and Xf.flags.f_contiguous


# ----------------------------------------------------------------------------- sensitivity


def brute_force_dataset_sensitivity(N, kx, ky):
    """max |MI(D) - MI(D')| over EVERY data set D of N rows and every replace-one neighbour D'."""
    cells = kx * ky
    n_sets = cells**N
    # all data sets as (n_sets, N) arrays of cell codes (x * ky + y)
    rows = np.array(list(itertools.product(range(cells), repeat=N)), dtype=np.int64)
    tables = np.zeros((n_sets, cells), dtype=np.int64)
    for r in range(N):
        np.add.at(tables, (np.arange(n_sets), rows[:, r]), 1)
    mi = table_mi(tables.reshape(n_sets, kx, ky))
    place = cells ** np.arange(N - 1, -1, -1)  # itertools.product: the first row is the most significant
    index = rows @ place  # data set -> its position in `mi`
    assert np.array_equal(index, np.arange(n_sets))
    worst = 0.0
    for r in range(N):
        for new in range(cells):
            nb = index + (new - rows[:, r]) * place[r]  # replace row r by `new`
            worst = max(worst, float(np.abs(mi[nb] - mi).max()))
    return worst


@pytest.mark.parametrize("N", [2, 3, 4, 5, 6])
def test_sensitivity_brute_force_binary(N):
    worst = brute_force_dataset_sensitivity(N, 2, 2)
    bound = mi_sensitivity(N, 2)
    assert worst <= bound + 1e-12
    print(f"binary N={N}: max |dMI| = {worst:.6f}, bound = {bound:.6f}, tightness = {worst / bound:.6f}")
    assert worst / bound > 1 - 1e-9  # the bound is attained


@pytest.mark.parametrize("N", [2, 3, 4])
def test_sensitivity_brute_force_ternary(N):
    worst = brute_force_dataset_sensitivity(N, 3, 3)
    bound = mi_sensitivity(N, 3)
    assert worst <= bound + 1e-12
    print(f"ternary N={N}: max |dMI| = {worst:.6f}, bound = {bound:.6f}, tightness = {worst / bound:.6f}")
    assert worst / bound > 1 - 1e-9
    # and the binary bound is too small for 3 x 3 tables: the k >= 3 case is needed
    if N >= 3:
        assert worst > mi_sensitivity(N, 2) + 1e-6


def brute_force_table_sensitivity(N, kx, ky):
    """Same maximum over larger N: MI depends only on the table, so enumerate tables and moves."""
    T = naive.compositions(N, kx * ky)
    base = table_mi(T.reshape(-1, kx, ky))
    worst = 0.0
    for src in range(kx * ky):
        has = T[:, src] > 0
        for dst in range(kx * ky):
            if dst == src:
                continue
            T2 = T[has].copy()
            T2[:, src] -= 1
            T2[:, dst] += 1
            worst = max(worst, float(np.abs(table_mi(T2.reshape(-1, kx, ky)) - base[has]).max()))
    return worst


@pytest.mark.parametrize("N,kx,ky,k", [(N, 2, 2, 2) for N in (7, 10, 16, 25)]
                         + [(N, 2, 4, 2) for N in (5, 9)]  # one binary attribute suffices
                         + [(N, 3, 3, 3) for N in (5, 6, 9)]
                         + [(6, 3, 4, 3), (5, 4, 4, 4)])
def test_sensitivity_brute_force_tables(N, kx, ky, k):
    worst = brute_force_table_sensitivity(N, kx, ky)
    bound = mi_sensitivity(N, k)
    assert worst <= bound + 1e-12
    assert worst / bound > 1 - 1e-9
    print(f"{kx}x{ky} N={N}: tightness {worst / bound:.6f}")


def test_sensitivity_formula():
    for N in (2, 3, 10, 1000, 10**6):
        b2 = mi_sensitivity(N, 2)
        # PrivBayes Lemma 4.1 (binary) converted from bits to nats
        assert b2 == pytest.approx(math.log(N) / N + (N - 1) / N * math.log(N / (N - 1)), rel=1e-12)
        b3 = mi_sensitivity(N, 3)
        assert b2 <= b3 <= 2 * b2 + 1e-15
        # never above PrivBayes' non-binary bound (its continuous relaxation)
        assert b3 <= 2 / N * math.log((N + 1) / 2) + (N - 1) / N * math.log((N + 1) / (N - 1)) + 1e-15
        assert mi_sensitivity(N, 7) == b3 and mi_sensitivity(N, 1) == b2
    # about ln(N)/N (the paper's introduction)
    assert mi_sensitivity(10**6, 2) == pytest.approx((math.log(10**6) + 1) / 10**6, rel=1e-5)


def test_sensitivity_validation():
    with pytest.raises(ValueError, match="N must be >= 2"):
        mi_sensitivity(1, 2)
    with pytest.raises(TypeError, match="N must be an int"):
        mi_sensitivity(2.5, 2)
    with pytest.raises(ValueError, match="k must be >= 1"):
        mi_sensitivity(10, 0)
    with pytest.raises(TypeError, match="k must be an int"):
        mi_sensitivity(10, True)


# ----------------------------------------------------------------------------- the tree


def test_chow_liu_huge_rho_is_exact():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 3, size=(400, 10))
    for j in range(1, 10):  # a random dependence structure
        src = rng.integers(0, j)
        X[:, j] = np.where(rng.random(400) < rng.uniform(0.2, 0.9), X[:, src], X[:, j])
    MI = mutual_information(X)
    exact = fp.exact_mst(MI, maximum=True)
    tree = chow_liu(X, rho=1e12, rng=0, sensitivity=1e-12, n_categories=3)
    assert tree.weight == pytest.approx(exact.weight, rel=1e-12)
    assert edge_set(tree) == edge_set(exact)
    # with the real sensitivity: gumbel (the default) releases the exact MST of the scores
    # plus noise of scale 1/rate, every noise in [-3.62, 36.74] / rate, so at most
    # 41 / rate is lost per edge (exponential: scores rounded to multiples of s, s per edge)
    tree = chow_liu(X, rho=1e12, rng=0, n_categories=3)
    s = tree.info["discretization"] if "discretization" in tree.info else 41.0 / tree.info["rate"]
    assert exact.weight - (len(tree) * s) <= tree.weight <= exact.weight + 1e-12


@pytest.mark.parametrize("k", [2, 3])
def test_chow_liu_recovers_chain(k):
    rng = np.random.default_rng(7)
    X = chain_data(rng, 5000, 4, k=k)
    chain = {(0, 1), (1, 2), (2, 3)}
    exact = fp.exact_mst(mutual_information(X), maximum=True)
    assert edge_set(exact) == chain
    # a shuffled column order changes nothing but the names
    perm = np.array([2, 0, 3, 1])
    exact_p = fp.exact_mst(mutual_information(X[:, perm]), maximum=True)
    assert {tuple(sorted((perm[a], perm[b]))) for a, b in exact_p.edges.tolist()} == chain
    # strong dependence and N = 5000: a moderate budget recovers it privately
    for seed in range(3):
        assert edge_set(chow_liu(X, rho=10.0, rng=seed, n_categories=k)) == chain


def test_chow_liu_seed_info_and_budget():
    rng = np.random.default_rng(8)
    X = chain_data(rng, 1000, 12)
    a = chow_liu(X, rho=0.05, rng=123, n_categories=2)
    b = chow_liu(X, rho=0.05, rng=123, n_categories=2)
    assert np.array_equal(a.edges, b.edges) and a.weight == b.weight
    assert a.n_vertices == 12 and len(a) == 11
    assert a.info["maximum"] is True and a.info["noise"] == "gumbel"
    assert a.info["sensitivity"] == mi_sensitivity(1000, 2)
    assert a.info["n_rows"] == 1000 and a.info["n_categories"] == (2,) * 12
    MI = mutual_information(X)
    assert a.weight == pytest.approx(sum(MI[u, v] for u, v in a.edges.tolist()), rel=1e-12)
    assert a.weight <= fp.exact_mst(MI, maximum=True).weight + 1e-12
    # exponential noise and (epsilon, delta) budgets pass through
    c = chow_liu(X, epsilon=1.0, delta=1e-6, noise="exponential", rng=0, n_categories=2)
    assert c.info["rho"] == pytest.approx(approx_dp_to_zcdp(1.0, 1e-6))
    assert c.info["noise"] == "exponential"


def test_chow_liu_sensitivity_choice():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 2, size=(300, 5))
    assert chow_liu(X, rho=1, rng=0, n_categories=2).info["sensitivity"] == mi_sensitivity(300, 2)
    # a single ternary attribute: every pair still has a binary side
    X[:, 3] = rng.integers(0, 3, 300)
    t = chow_liu(X, rho=1, rng=0, n_categories=[2, 2, 2, 3, 2])
    assert t.info["sensitivity"] == mi_sensitivity(300, 2)
    # two attributes with >= 3 categories (declared public domains): the k >= 3 bound
    t = chow_liu(X, rho=1, rng=0, n_categories=[2, 2, 4, 3, 2])
    assert t.info["sensitivity"] == mi_sensitivity(300, 3)
    assert t.info["n_categories"] == (2, 2, 4, 3, 2)
    assert chow_liu(X, rho=1, rng=0, sensitivity=0.25, n_categories=4).info["sensitivity"] == 0.25


def test_chow_liu_single_attribute():
    tree = chow_liu(np.array([[0], [1], [1]]), rho=1.0, rng=0, n_categories=2)
    assert tree.n_vertices == 1 and len(tree) == 0 and tree.weight == 0.0


def test_validation_errors():
    good = np.zeros((5, 3), dtype=np.int64)
    with pytest.raises(TypeError, match="integer-coded"):
        mutual_information(good.astype(float))
    with pytest.raises(TypeError, match="integer-coded"):
        chow_liu(np.array([["a", "b"], ["c", "d"]]), rho=1, n_categories=2)
    with pytest.raises(ValueError, match="2-D"):
        mutual_information(np.zeros(5, dtype=int))
    with pytest.raises(ValueError, match="at least N = 2 rows"):
        chow_liu(np.zeros((1, 3), dtype=int), rho=1, n_categories=2)
    with pytest.raises(ValueError, match="at least d = 1"):
        mutual_information(np.zeros((4, 0), dtype=int))
    with pytest.raises(ValueError, match="non-negative.*column 1"):
        mutual_information(np.array([[0, 0], [1, -1]]))
    with pytest.raises(ValueError, match="column 1 has a code >= n_categories\\[1\\] = 2"):
        mutual_information(np.array([[0, 2], [1, 1]]), n_categories=2)
    with pytest.raises(ValueError, match="one entry per column"):
        mutual_information(good, n_categories=[2, 2])
    with pytest.raises(ValueError, match="n_categories must be >= 1"):
        mutual_information(good, n_categories=0)
    with pytest.raises(TypeError, match="n_categories"):
        mutual_information(good, n_categories=2.5)
    with pytest.raises(TypeError, match="scipy.sparse"):
        mutual_information(sp.csr_matrix(good))
    with pytest.raises(ValueError, match="privacy budget"):
        chow_liu(good, n_categories=2)
    with pytest.raises(ValueError, match="sensitivity"):
        chow_liu(good, rho=1, sensitivity=-1.0, n_categories=2)
    with pytest.raises(ValueError, match="noise"):
        chow_liu(good, rho=1, noise="laplace", n_categories=2)
    with pytest.raises(TypeError, match="rng"):
        chow_liu(good, rho=1, rng="seed", n_categories=2)
    with pytest.raises(TypeError, match="n_categories must be an int or a sequence"):
        chow_liu(good, rho=1, n_categories=[2.0, 2.0, 2.0])


# ----------------------------------------------------------------------------- what a release publishes


@pytest.mark.parametrize("kwargs", [{}, {"sensitivity": 0.01}, {"n_categories": None}])
def test_chow_liu_requires_public_domain_sizes(kwargs):
    X = np.random.default_rng(11).integers(0, 3, size=(50, 4))
    with pytest.raises(TypeError) as err:
        chow_liu(X, rho=1.0, rng=0, **kwargs)
    msg = str(err.value)
    assert "n_categories" in msg and "not private" in msg  # why ...
    assert "data dictionary" in msg and "sequence of d = 4 ints" in msg  # ... and how to fix it
    # mutual_information is not a release: it may still read the domains from the data
    assert mutual_information(X).shape == (4, 4)


def test_neighbouring_data_sets_give_the_same_info():
    """info holds public values only: replacing one row never changes it."""
    rng = np.random.default_rng(12)
    X = rng.integers(0, 2, size=(200, 5))
    Y = X.copy()
    Y[17] = [2, 1, 3, 0, 2]  # a neighbour: one row replaced, by codes no other row uses
    for kwargs in ({"n_categories": 4}, {"n_categories": [3, 2, 4, 2, 3]}, {"n_categories": None},
                   {"n_categories": 4, "noise": "exponential"}, {"n_categories": 4, "sensitivity": 0.05}):
        results = []
        for data in (X, Y):
            try:
                results.append(chow_liu(data, rho=0.5, rng=3, **kwargs).info)
            except (TypeError, ValueError) as exc:
                results.append(type(exc))
        # either both neighbours are refused or both publish identical info
        assert results[0] == results[1], kwargs
    info = chow_liu(X, rho=0.5, rng=3, n_categories=4).info
    assert info["n_rows"] == 200 and info["n_categories"] == (4,) * 5
    assert info["sensitivity"] == mi_sensitivity(200, 4)


def test_error_messages_do_not_quote_data_values():
    X = np.zeros((6, 4), dtype=np.int64)
    X[:, 1] = [0, 1, 0, 1, 0, 1]
    big = X.copy()
    big[3, 2] = 987654
    with pytest.raises(ValueError) as err:
        chow_liu(big, rho=1.0, n_categories=4)
    assert "987654" not in str(err.value)
    assert "column 2 has a code >= n_categories[2] = 4" in str(err.value)
    with pytest.raises(ValueError) as err:
        mutual_information(big, n_categories=[2, 2, 5, 2])
    assert "987654" not in str(err.value) and "column 2" in str(err.value)
    neg = X.copy()
    neg[4, 3] = -987654
    for call in (lambda: chow_liu(neg, rho=1.0, n_categories=4), lambda: mutual_information(neg)):
        with pytest.raises(ValueError) as err:
            call()
        msg = str(err.value)
        assert "987654" not in msg
        assert "column 3 has a negative code" in msg
