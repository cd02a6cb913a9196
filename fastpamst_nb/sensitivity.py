"""Sensitivities users can defend: l_inf bounds for weights that are statistics over many people.

A private spanning tree pays when each weight is a statistic over many people and
one person moves it little (the excess grows like n^1.5 Delta / sqrt(rho)). Each
helper here states its neighbouring relation, returns the l_inf sensitivity Delta
to pass as ``sensitivity=``, and is checked by brute force over neighbouring data
sets on tiny data (tests/test_sensitivity.py). Derivations: docs/design.rst
(:ref:`design-sensitivities`). Beside them, :func:`fastpamst_nb.mi_sensitivity`
covers mutual information (Chow-Liu trees).

The bounds are PUBLIC: functions of N, k and the public box only. Clip the data
to the box before computing the statistic (:func:`clipped_covariance` and
:func:`clipped_correlation` do), or the bound does not hold.
"""

import math
import numbers

import numpy as np

__all__ = [
    "centroid_distance_sensitivity",
    "clipped_correlation",
    "clipped_covariance",
    "correlation_sensitivity",
    "count_sensitivity",
    "covariance_sensitivity",
]


def _check_rows(N, ddof):
    if isinstance(N, (bool, np.bool_)) or not isinstance(N, numbers.Integral):
        raise TypeError(f"N must be an integer number of rows, got {type(N).__name__}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (divide by N) or 1 (divide by N - 1, numpy.cov's default), got {ddof!r}")
    if N < 2 + ddof:
        raise ValueError(f"N must be at least {2 + ddof} rows for ddof = {ddof}, got {N}")
    return int(N)


def _widths(lower, upper, d=None):
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.ndim > 1 or hi.ndim > 1:
        raise ValueError("lower and upper must be numbers or 1-d arrays (one bound per column)")
    if d is not None:
        lo = np.broadcast_to(lo, (d,)) if lo.ndim == 0 else lo
        hi = np.broadcast_to(hi, (d,)) if hi.ndim == 0 else hi
        if lo.shape != (d,) or hi.shape != (d,):
            raise ValueError(f"lower and upper must be numbers or have one entry per column ({d}), "
                             f"got shapes {lo.shape} and {hi.shape}")
    w = hi - lo
    if not (np.all(np.isfinite(w)) and np.all(w > 0)):
        raise ValueError("the public box must have finite bounds with lower < upper in every column")
    return lo, hi, np.atleast_1d(w)


def _two_largest_product(w):
    # the largest w_j w_k over pairs j != k (a single column is its own pair)
    w = np.sort(np.atleast_1d(w))[::-1]
    return float(w[0] * (w[1] if w.size > 1 else w[0]))


def covariance_sensitivity(N, lower, upper, *, ddof=1):
    """l_inf sensitivity of the off-diagonal entries of the covariance matrix of N clipped rows.

    Neighbouring data sets: the same N (public) rows but one, replaced by any
    other row; every value of column j lies in [lower_j, upper_j]. The bound
    covers the entries j != k, the edges of a spanning tree (whose releases
    ignore the diagonal); a variance can move by more when the widths differ
    ((N - 1) / (N (N - ddof)) w_j^2).

    Parameters
    ----------
    N : int
        Number of rows (public).
    lower, upper : float or array_like (d,)
        The public box (per column, or one interval for all).
    ddof : {1, 0}, default 1
        Normalisation 1 / (N - ddof), as :func:`numpy.cov` (ddof=1 by default).

    Returns
    -------
    float
        (N - 1) / (N (N - ddof)) * max_{j != k} w_j w_k, with w = upper - lower:
        w_j w_k / N for ddof = 1, over the off-diagonal entries (a single column
        is its own pair). Attained (the bound is tight).

    Notes
    -----
    O(d log d). With the other rows' means m_x, m_y, replacing row 1 changes
    (N - ddof) cov by (N-1)/N [(x1' - m_x)(y1' - m_y) - (x1 - m_x)(y1 - m_y)],
    at most (N - 1)/N w_x w_y (docs/design.rst). Weights ``c - cov`` or
    ``-cov`` have the same sensitivity.
    """
    N = _check_rows(N, ddof)
    _, _, w = _widths(lower, upper)
    return (N - 1) / (N * (N - ddof)) * _two_largest_product(w)


def correlation_sensitivity(N, lower, upper, min_std, *, ddof=1):
    """l_inf sensitivity of :func:`clipped_correlation` (a Pearson correlation with a std floor).

    Neighbouring data sets: the same N rows but one, replaced by any other row in
    the public box. ``min_std`` is a public floor: the correlation divides by
    max(std, min_std), so it is Pearson's r wherever a column's standard
    deviation is at least ``min_std`` and stays bounded where it is not.

    Parameters
    ----------
    N : int
        Number of rows (public).
    lower, upper : float or array_like (d,)
        The public box.
    min_std : float or array_like (d,)
        The public floor sigma_j > 0 on each column's standard deviation.
    ddof : {1, 0}, default 1
        As in :func:`clipped_covariance` (the floor compares to that std).

    Returns
    -------
    float
        The largest, over pairs j != k, of
        C_jk / (s_j s_k) + e_j + e_k + e_j e_k with C_jk the covariance
        sensitivity of the pair, e_j = C_jj / (2 s_j^2) and s = min_std; at most 2
        (a correlation lies in [-1, 1]). About 2 w^2 / (N sigma^2) for equal
        widths w and floors sigma: O(1/N).

    Notes
    -----
    O(d^2). Write r = c / (u_x u_y), u = max(s, sigma). Then
    abs(r' - r) <= abs(c' - c) / (u_x' u_y') + abs(u_x u_y - u_x' u_y') / (u_x' u_y')
    (using abs(c) <= s_x s_y <= u_x u_y), abs(u^2 - u'^2) <= abs(s^2 - s'^2) <= C_xx and
    u + u' >= 2 sigma give abs(u - u') <= C_xx / (2 sigma), hence the bound
    (docs/design.rst). Weights ``1 - r``, ``1 - abs(r)`` and ``-r`` have the same
    sensitivity (abs(r) is 1-Lipschitz in r).
    """
    N = _check_rows(N, ddof)
    _, _, w = _widths(lower, upper)
    if w.size == 1:  # one interval for every column: as many columns as floors
        s = _std_floors(min_std)
        w = np.broadcast_to(w, s.shape)
    else:
        s = _std_floors(min_std, w.size)
    d = w.size
    c = (N - 1) / (N * (N - ddof))
    e = c * w * w / (2 * s * s)
    t = c * np.outer(w, w) / np.outer(s, s) + e[:, None] + e[None, :] + np.outer(e, e)
    if d > 1:
        np.fill_diagonal(t, -np.inf)
    return float(min(2.0, t.max()))


def _std_floors(min_std, d=None):
    """``min_std`` checked (its one check): finite positive floors on the columns'
    standard deviations, one for all columns or one per column; as ``d`` floors when
    ``d`` (the number of columns) is given, else 1-d as given."""
    s = np.asarray(min_std, dtype=float)
    if s.ndim > 1 or not (np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError("min_std must be a finite positive number or one per column")
    s = np.atleast_1d(s)
    if d is None or s.size == d:
        return s
    if s.size == 1:
        return np.broadcast_to(s, (d,))
    raise ValueError(f"min_std has {s.size} entries, the box {d}: give one per column or one for all")


def _clip_rows(X, lower, upper):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (N rows, d columns), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or inf; drop or impute those rows first (a public rule)")
    lo, hi, _ = _widths(lower, upper, X.shape[1])
    return np.clip(X, lo, hi)  # a new array: the user's X is never modified


def clipped_covariance(X, lower, upper, *, ddof=1):
    """Covariance matrix (d, d) of the rows of X clipped to the public box.

    Parameters
    ----------
    X : array_like (N, d)
        One row per person. Never modified.
    lower, upper : float or array_like (d,)
        The public box; values outside are clipped to it.
    ddof : {1, 0}, default 1

    Returns
    -------
    ndarray (d, d)
        ``numpy.cov(clip(X), rowvar=False, ddof=ddof)``; its l_inf sensitivity is
        :func:`covariance_sensitivity` ``(N, lower, upper, ddof=ddof)``.
    """
    Xc = _clip_rows(X, lower, upper)
    _check_rows(Xc.shape[0], ddof)
    return np.atleast_2d(np.cov(Xc, rowvar=False, ddof=ddof))


def clipped_correlation(X, lower, upper, min_std, *, ddof=1):
    """Correlation matrix (d, d) of clipped rows, dividing by max(std, min_std).

    Parameters
    ----------
    X : array_like (N, d)
        One row per person. Never modified.
    lower, upper : float or array_like (d,)
        The public box; values outside are clipped to it.
    min_std : float or array_like (d,)
        Public floor on the standard deviations (Pearson's r wherever a column's
        std is at least this; a guess from public knowledge, not from X).
    ddof : {1, 0}, default 1

    Returns
    -------
    ndarray (d, d)
        cov_jk / (max(s_j, sigma_j) max(s_k, sigma_k)), in [-1, 1]; its l_inf
        sensitivity is :func:`correlation_sensitivity` with the same arguments.
        Use ``1 - abs(R)`` as MST weights for a correlation network.
    """
    C = clipped_covariance(X, lower, upper, ddof=ddof)
    s = _std_floors(min_std, C.shape[0])
    u = np.maximum(np.sqrt(np.maximum(np.diag(C), 0.0)), s)
    return np.clip(C / np.outer(u, u), -1.0, 1.0)


def count_sensitivity(k, per_pair=None):
    """l_inf sensitivity of co-occurrence / count matrices where one person adds at most k pairs.

    Neighbouring data sets: one person added or removed. Each person contributes
    at most ``k`` pair occurrences in all (e.g. k trips between places, k items
    bought together), at most ``per_pair`` of them to any one pair (default k).
    Cap the contributions to these limits before counting (a public rule, e.g.
    keep each person's first k pairs), or the bound does not hold.

    Parameters
    ----------
    k : int
        Contributions per person (>= 1).
    per_pair : int, optional
        Contributions per person to one pair (>= 1); default ``k``.

    Returns
    -------
    float
        min(k, per_pair): a count moves by at most the person's own contributions
        to that pair. Attained by a person who puts them all on one pair. For
        weights ``c - count`` (an MST of "distances") the same; for
        ``-log(count)`` or normalised counts it is not (those are not Lipschitz).
    """
    def _positive_int(name, v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
        return int(v)

    k = _positive_int("k", k)
    per_pair = k if per_pair is None else _positive_int("per_pair", per_pair)
    return float(min(k, per_pair))


def centroid_distance_sensitivity(N, lower, upper, metric="euclidean", *, d=None):
    """l_inf sensitivity of distances between group means (centroids) of >= N members each.

    Neighbouring data sets: one member of one group replaced by any other point of
    the public box (group sizes, at least N each, are public and unchanged); each
    person belongs to one group. Points lie in the box [lower, upper]^d.

    Parameters
    ----------
    N : int
        The smallest group size (public).
    lower, upper : float or array_like (d,)
        The public box.
    metric : {"euclidean", "cityblock", "chebyshev"}, default "euclidean"
        The distance between centroids.
    d : int, optional
        The dimension, needed when ``lower`` and ``upper`` are numbers (the box
        [lower, upper]^d); else read off their length.

    Returns
    -------
    float
        norm(w) / N with w = upper - lower in the metric's norm (l2, l1, l_inf):
        the centroid moves by w / n_g coordinatewise, and a distance to any other
        centroid moves by at most that much (triangle inequality). Attained by a
        group of exactly N members with one member moved across the box's diagonal.
    """
    if isinstance(N, (bool, np.bool_)) or not isinstance(N, numbers.Integral) or N < 1:
        raise ValueError(f"N must be a positive integer (the smallest group size), got {N!r}")
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or d < 1:
            raise ValueError(f"give d= (the points' dimension) with a box given by two numbers, got d={d!r}")
    _, _, w = _widths(lower, upper, d)
    norms = {"euclidean": lambda v: math.sqrt(float(np.sum(v * v))), "cityblock": lambda v: float(np.sum(v)),
             "chebyshev": lambda v: float(np.max(v))}
    if metric not in norms:
        raise ValueError(f"metric must be one of {', '.join(norms)}, got {metric!r}")
    return norms[metric](w) / int(N)
