r"""Private Chow-Liu trees: empirical mutual information, its sensitivity, and the tree.

The Chow-Liu tree of a categorical data set is the maximum spanning tree of the
complete graph on its d attributes weighted by the empirical mutual information
(MI) of each pair (Chow & Liu 1968). Replacing one of the N rows moves *every*
MI entry at once, by at most :func:`mi_sensitivity` (about ln(N)/N nats for
binary data, the figure quoted in the introduction of Pagh & Retschmeier 2024),
so the MI matrix fits the l_inf neighbouring relation of :func:`fast_pamst`
exactly and :func:`chow_liu` is rho-zCDP with respect to replacing one row.
The number of rows N and the domain sizes of the attributes are public: the
domain sizes must be given (``n_categories``), never read from the data.

Units are nats (natural logarithms) throughout.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

from .api import fast_pamst
from .core import CACHE, check_positive, require_memory
from .input_forms import _is_dataframe

__all__ = ["chow_liu", "mi_sensitivity", "mutual_information"]

# total number of categories K = sum_j k_j up to which the (K, K) count matrix is
# filled densely by the jitted kernel; above it a sparse one-hot product is used
_DENSE_MAX_CATEGORIES = 4096


# ----------------------------------------------------------------------------- validation


def _check_data(data):
    """Return ``data`` as a new C-contiguous int64 (N, d) array, with clear errors.

    The caller's array is never modified (the result is always a copy).
    """
    if sp.issparse(data):
        raise TypeError("data must be a dense (N, d) integer array, got a scipy.sparse matrix; "
                        "use data.toarray()")
    arr = np.asarray(data)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"data must be integer-coded categories (an int or bool array), got dtype {arr.dtype}; "
            "encode each column with np.unique(column, return_inverse=True)[1], or use "
            "data.astype(np.int64) if its values are already whole numbers")
    if arr.ndim != 2:
        raise ValueError(f"data must be 2-D (N rows, d attributes), got an array of shape {arr.shape}")
    N, d = arr.shape
    if N < 2:
        raise ValueError(f"data must have at least N = 2 rows, got N = {N}")
    if d < 1:
        raise ValueError("data must have at least d = 1 attribute (column), got d = 0")
    if arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("data values are too large to be category codes")
    codes = np.array(arr, dtype=np.int64, order="C", copy=True)
    # error messages name the column and the rule, never a data value (codes are private)
    col_min = codes.min(axis=0)
    if col_min.min() < 0:
        j = int(np.argmin(col_min))
        raise ValueError(f"data must hold non-negative category codes 0, 1, ..., k-1; column {j} "
                         "has a negative code; encode it with np.unique(column, return_inverse=True)[1]")
    return codes


def _check_n_categories(n_categories, codes, *, infer=True):
    """Per-column domain sizes k_j (int64 array of length d), checked against ``codes``.

    ``n_categories=None`` reads them from the data (``column max + 1``) when
    ``infer`` is true (:func:`mutual_information`, not a release); a private
    release (``infer=False``) must be given public domain sizes.
    """
    d = codes.shape[1]
    col_max = codes.max(axis=0)
    if n_categories is None:
        if not infer:
            raise TypeError(
                "chow_liu() needs n_categories=, the public domain sizes of the attributes: "
                "sizes read from the data (column max + 1) are not private, since one row changes "
                "them and with them the sensitivity and the noise; pass n_categories=k (every "
                f"column has codes 0 .. k-1) or a sequence of d = {d} ints known in advance, "
                "e.g. from the data dictionary or schema")
        return col_max + 1
    if isinstance(n_categories, (bool, np.bool_)):
        raise TypeError("n_categories must be an int or a sequence of d ints, got a bool")
    if isinstance(n_categories, numbers.Integral):
        k = np.full(d, int(n_categories), dtype=np.int64)
    else:
        try:
            raw = np.asarray(n_categories)
        except Exception:  # pragma: no cover - exotic inputs
            raw = None
        if raw is None or raw.dtype.kind not in "iu":
            raise TypeError("n_categories must be an int or a sequence of d ints, "
                            f"got {type(n_categories).__name__}")
        if raw.shape != (d,):
            raise ValueError(f"n_categories must have one entry per column (d = {d}), "
                             f"got shape {raw.shape}")
        k = raw.astype(np.int64)
    if k.min() < 1:
        raise ValueError(f"n_categories must be >= 1 for every column, got {k.min()}")
    bad = np.nonzero(col_max >= k)[0]
    if bad.size:
        j = int(bad[0])
        # k is public (given by the user); the offending code is data and is not quoted
        raise ValueError(f"column {j} has a code >= n_categories[{j}] = {int(k[j])}, so it is "
                         f"not below n_categories; codes of column {j} must lie in "
                         f"0 .. {int(k[j]) - 1}: fix the encoding or the declared domain size")
    return k


def _check_count(name, value, low):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


# ----------------------------------------------------------------------------- counts and MI


@njit(cache=CACHE, nogil=True)
def _cl_pair_counts(codes, offsets, K):
    """Joint counts of every pair of attributes in one pass over the rows.

    C[offsets[i] + a, offsets[j] + b] (i <= j) counts the rows with X_i = a and
    X_j = b; the diagonal holds the marginal counts; blocks below the diagonal
    stay zero. O(N d^2 / 2) increments into a (K, K) table that stays in cache.
    """
    N, d = codes.shape
    C = np.zeros((K, K), dtype=np.int64)
    cols = np.empty(d, dtype=np.int64)
    for r in range(N):
        for j in range(d):
            cols[j] = offsets[j] + codes[r, j]
        for i in range(d):
            a = cols[i]
            for j in range(i, d):
                C[a, cols[j]] += 1
    return C


def _pair_counts(codes, k):
    """All pairwise contingency tables at once, as blocks of one (K, K) count matrix.

    Block (i, j), i < j, of C (rows offsets[i]:offsets[i+1], columns
    offsets[j]:offsets[j+1]) is the (k_i, k_j) contingency table of attributes i and
    j, and diag(C) holds the marginal counts; K = sum_j k_j. For K <= 4096 a
    jitted pass over the rows fills a dense table (O(N d^2) time, O(K^2) memory).
    Above that, C = X1.T @ X1 with X1 the sparse (N, K) one-hot matrix (every
    joint count from one sparse product; memory proportional to the non-empty
    cells), returned as a scipy.sparse COO matrix.
    """
    N, d = codes.shape
    offsets = np.zeros(d + 1, dtype=np.int64)
    np.cumsum(k, out=offsets[1:])
    K = int(offsets[-1])
    if K <= _DENSE_MAX_CATEGORIES:
        require_memory(8 * K * K * 3, f"mutual_information with K = {K} categories in total")
        return _cl_pair_counts(codes, offsets, K), offsets
    cols = codes + offsets[:-1]  # column of the one-hot matrix for every (row, attribute)
    X1 = sp.csr_matrix((np.ones(N * d, dtype=np.float64), cols.ravel(),
                        np.arange(0, N * d + 1, d, dtype=np.int64)), shape=(N, K))
    return (X1.T @ X1).tocoo(), offsets


def mutual_information(data, n_categories=None):
    r"""Empirical mutual information of every pair of attributes, in nats.

    .. math:: I(X_i; X_j) = \sum_{a, b} \hat p_{ab} \ln \frac{\hat p_{ab}}{\hat p_a \hat p_b}

    with the plug-in frequencies :math:`\hat p` of the N rows (0 ln 0 = 0).

    Parameters
    ----------
    data : array_like of int, shape (N, d)
        Integer-coded categorical data: column j holds codes 0 .. k_j - 1
        (bool arrays are accepted as 0/1). Never modified.
    n_categories : None, int or sequence of d ints
        Domain sizes k_j; default: ``column max + 1`` (read from the data, which
        is fine here: this matrix is not a release). Empty categories contribute
        nothing, so this only matters for validation and memory.

    Returns
    -------
    ndarray of float64, shape (d, d)
        Symmetric, non-negative, zero diagonal.

    Notes
    -----
    All d(d-1)/2 contingency tables are blocks of one (K, K) count matrix,
    K = sum_j k_j: a jitted pass over the rows (O(N d^2) time, O(K^2) memory)
    when K <= 4096, otherwise the sparse product X1.T @ X1 of the (N, K) one-hot
    matrix (memory proportional to the non-empty cells). The MI sums are then
    O(K^2) vectorized work; no Python loop runs over pairs.
    """
    codes = _check_data(data)
    k = _check_n_categories(n_categories, codes)
    return _mutual_information(codes, k)


def _mutual_information(codes, k):
    N, d = codes.shape
    C, offsets = _pair_counts(codes, k)
    attr = np.repeat(np.arange(d), k)  # attribute of each one-hot column
    logN = math.log(N)
    if sp.issparse(C):
        r, c, v = C.row, C.col, C.data
        keep = (v > 0) & (attr[r] < attr[c])  # strictly upper blocks: each pair once
        r, c, v = r[keep], c[keep], v[keep]
        m = np.zeros(offsets[-1])
        diag = C.row == C.col
        m[C.row[diag]] = C.data[diag]
        lm = np.log(np.where(m > 0, m, 1.0))
        terms = v * (np.log(v) + logN - (lm[r] + lm[c])) / N
        M = np.bincount(attr[r] * d + attr[c], weights=terms, minlength=d * d).reshape(d, d)
    else:
        C = C.astype(np.float64)
        m = np.diagonal(C).copy()
        lm = np.log(np.where(m > 0, m, 1.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            T = np.where(C > 0, C * (np.log(C) + logN - (lm[:, None] + lm[None, :])), 0.0) / N
        starts = offsets[:-1]
        M = np.add.reduceat(np.add.reduceat(T, starts, axis=0), starts, axis=1)
    M = np.triu(M, 1)
    np.maximum(M, 0.0, out=M)  # MI >= 0; clears rounding residue of independent pairs
    return M + M.T


# ----------------------------------------------------------------------------- sensitivity


def _g(c):
    """g(c) = (c+1) ln(c+1) - c ln c (0 ln 0 = 0): how much sum c ln c grows when a count c grows by one."""
    c = float(c)
    if c == 0.0:
        return 0.0
    # (c+1) ln(c+1) - c ln c = ln(c+1) + c ln(1 + 1/c), written without cancellation
    return math.log1p(c) + c * math.log1p(1.0 / c)


def mi_sensitivity(N, k=2):
    r"""l_inf sensitivity of the empirical MI matrix under replacing one of N rows, in nats.

    Parameters
    ----------
    N : int
        Number of rows (>= 2); public, and the same in both neighbouring data sets.
    k : int
        A bound on the domain size of the *smaller* attribute of every pair
        (>= 1). Any k <= 2 gives the binary bound; for a data set whose
        attributes have domain sizes k_1 >= k_2 >= ..., k_2 is the right value
        (a pair needs two attributes with >= 3 categories to exceed the binary bound).

    Returns
    -------
    float
        With g(c) = (c+1) ln(c+1) - c ln c:

        * k <= 2: ``g(N-1) / N = ln(N)/N + ((N-1)/N) ln(N/(N-1))``, about (ln N + 1)/N;
        * k >= 3: ``(g(floor((N-1)/2)) + g(ceil((N-1)/2))) / N``, at most
          ``(2/N) ln((N+1)/2) + ((N-1)/N) ln((N+1)/(N-1))``, about 2 (ln(N/2) + 1)/N.

        Both are attained (tight) for every N >= 2, so no smaller constant is valid.

    Notes
    -----
    In bits (divide by ln 2) these are exactly the two bounds of PrivBayes
    (Zhang et al., TODS 2017, Lemma 4.1) -- the k >= 3 one in its integer-rounded
    form -- under the same replace-one relation with N public. Proof:

    Write f(c) = c ln c, F(v) = sum_i f(v_i) for a count vector v, and for one pair
    (X, Y) let C be the joint counts and A, B the marginal counts. Then
    N I = F(C) - F(A) - F(B) + N ln N. Moving one unit of count from cell alpha to
    cell beta changes F by g(v_beta) - g(v_alpha - 1) (before-move counts), where
    g(c) = f(c+1) - f(c) is increasing, concave and g(0) = 0, hence g >= 0 and
    g is subadditive: g(s + t) <= g(s) + g(t).

    Replace a row (x1, y1) by (x2, y2); write c11 = C[x1, y1], c22 = C[x2, y2],
    a1 = A[x1], a2 = A[x2], b1 = B[y1], b2 = B[y2] (before the move).
    Since D and D' are each other's neighbours, bounding N * (I(D') - I(D)) from
    above for every move bounds ``|I(D') - I(D)|``.

    * x1 = x2, y1 = y2: nothing changes.
    * x1 = x2, y1 != y2 (A unchanged):
      N dI = g(c22) - g(c11 - 1) - g(b2) + g(b1 - 1)
      <= g(b1 - 1) - g(c11 - 1) <= g(b1 - c11) <= g(N - 1), using c22 <= b2,
      subadditivity and b1 - c11 <= N - 1. The case y1 = y2 is symmetric.
    * x1 != x2, y1 != y2:
      N dI = [g(c22) - g(a2)] - g(b2) + g(a1 - 1) + g(b1 - 1) - g(c11 - 1).
      Let u = c11 - 1, s = a1 - c11 (rest of row x1), t = b1 - c11 (rest of
      column y1); these cells are disjoint and exclude the moved row, so
      u + s + t <= N - 1. The bracket and -g(b2) are <= 0, and
      g(u + s) - g(u) <= g(s), so N dI <= g(s) + g(u + t) with s + (u + t) <= N - 1.
      For concave increasing g the largest g(p) + g(q) over integers p + q <= N - 1
      is at the balanced split: the k >= 3 bound.
      If X is binary, x2 is the only other row, so t = C[x2, y1] <= a2 and
      g(b1 - 1) - g(a2) <= g(u + t) - g(t) <= g(u); then
      N dI <= [g(c22) - g(b2)] + g(u) + g(u + s) - g(u) <= g(a1 - 1) <= g(N - 1).
      MI is symmetric in (X, Y), so the same holds when Y is binary: the k <= 2 bound.

    Tightness: all rows share y1 and exactly one row has x1 (with X binary);
    moving that row to (x1, y2) takes I from 0 to H(1/N) = g(N-1)/N. For k = 3:
    rows (x1, y1), p rows (x1, y3), q rows (x3, y1) with p + q = N - 1 balanced;
    moving the first row to (x2, y2) raises N I by exactly g(p) + g(q).
    The test suite checks both bounds and their tightness by enumerating every
    data set and every neighbour for small N (:ref:`design-testing`).

    The bound is for *replace-one* neighbours with N public; it is not an
    add/remove-one bound.
    """
    N = _check_count("N", N, 2)
    k = _check_count("k", k, 1)
    if k <= 2:
        return _g(N - 1) / N
    p = (N - 1) // 2
    return (_g(p) + _g(N - 1 - p)) / N


def _pair_domain(k):
    """Second-largest domain size: the k to use in :func:`mi_sensitivity` for all pairs."""
    if k.size < 2:
        return 2
    return int(np.sort(k)[-2])


# ----------------------------------------------------------------------------- the tree


def chow_liu(data, rho=None, *, rng=None, noise="gumbel", epsilon=None, delta=None,
             n_categories=None, sensitivity=None):
    """A private Chow-Liu tree: Fast-PAMST's maximum spanning tree of the MI matrix.

    Parameters
    ----------
    data : array_like of int, shape (N, d)
        Integer-coded categorical data (codes 0 .. k_j - 1 in column j; bool
        accepted). Never modified.
    rho : float
        zCDP budget (> 0); or give ``epsilon`` and ``delta`` instead.
    rng : None, int, numpy.random.SeedSequence, BitGenerator or Generator (SPEC 7)
        Same seed, same tree.
    noise : {"gumbel", "exponential"}
        Selection mechanism of :func:`fastpamst_nb.fast_pamst` (default: the
        exponential mechanism, the lower-error choice).
    epsilon, delta : float, optional
        (epsilon, delta)-DP budget, converted to rho.
    n_categories : int or sequence of d ints
        Required. Public domain sizes k_j (column j holds codes 0 .. k_j - 1),
        known in advance, e.g. from the data dictionary or schema. They select
        the sensitivity bound (see below) and are recorded in ``info``, so they
        must not be read from the data: ``None`` raises TypeError (use
        :func:`mutual_information` for a non-private look at the data).
    sensitivity : float, optional
        l_inf sensitivity of the MI entries (nats). Default
        ``mi_sensitivity(N, k2)`` with k2 the second-largest domain size, i.e.
        the binary bound about (ln N + 1)/N unless at least two attributes have
        3 or more categories, then about 2 (ln(N/2) + 1)/N.

    Returns
    -------
    SpanningTree
        Over the d attributes (vertices 0 .. d-1, the columns of ``data``;
        a DataFrame's column names are ``tree.labels``, see
        :meth:`~fastpamst_nb.SpanningTree.edge_labels`). The edges are the
        private release. ``info`` records only public
        values: ``rho``, ``sensitivity`` (the value used), the noise
        parameters, ``maximum=True``, ``n_rows`` (N, public under replace-one)
        and ``n_categories`` (the domain sizes given). ``edge_weights`` and
        ``weight`` are the TRUE MI values: NOT private, do not publish them.

    Notes
    -----
    rho-zCDP with respect to replacing one row of ``data`` (N public): every MI
    entry moves by at most ``sensitivity``, the l_inf relation under which
    Fast-PAMST is private. The released *edges* are private; the tree's
    ``weight`` and ``edge_weights`` are the true MI values, computed for the
    record, and are not covered by the guarantee. Cost: O(N d^2) for the MI
    counts plus O(d^2) for the tree.

    Examples
    --------
    >>> import numpy as np
    >>> from fastpamst_nb.chow_liu import chow_liu
    >>> X = np.random.default_rng(0).integers(0, 2, size=(1000, 5))
    >>> tree = chow_liu(X, rho=1.0, rng=0, n_categories=2)
    >>> tree.n_vertices, len(tree.edges)
    (5, 4)
    """
    # a DataFrame's column names ride along as the tree's labels (public: the schema)
    labels = tuple(data.columns) if _is_dataframe(data) else None
    codes = _check_data(data)
    k = _check_n_categories(n_categories, codes, infer=False)
    N = codes.shape[0]
    if sensitivity is None:
        sensitivity = mi_sensitivity(N, _pair_domain(k))
    else:
        sensitivity = check_positive("sensitivity", sensitivity)
    MI = _mutual_information(codes, k)
    tree = fast_pamst(MI, rho, sensitivity, rng=rng, noise=noise, maximum=True,
                      epsilon=epsilon, delta=delta)
    # info holds public values only: N is public under the replace-one relation
    # (both neighbours have N rows), and k was given by the user, not read from the data
    from .tree import SpanningTree  # trees are immutable: build the full info, then the tree

    info = {**tree.info, "n_rows": int(N), "n_categories": tuple(int(x) for x in k)}
    return SpanningTree(tree.edges, tree.edge_weights, tree.n_vertices, tree.algorithm, info, labels)
