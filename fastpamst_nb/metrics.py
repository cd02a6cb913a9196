"""Distances between points: the metric registry, scalar kernels and input checks.

Every entry point that takes points ``X`` of shape (n, d) with ``metric=`` reads
this module's registry (:data:`METRICS`), so a name means the same distance
everywhere. A distance is computed in float64 from float32 or float64
coordinates; the user's array is read in place and never modified.

================  =========================================================  ============
name              distance between rows x and y                              a metric?
================  =========================================================  ============
``euclidean``     sqrt(sum (x_k - y_k)^2)                                    yes
``sqeuclidean``   sum (x_k - y_k)^2                                          no
``cityblock``     sum abs(x_k - y_k)                                         yes
``chebyshev``     max abs(x_k - y_k)                                         yes
``minkowski``     (sum abs(x_k - y_k)^p)^(1/p), p >= 1 (``p=``)              yes
``cosine``        1 - x.y / (norm(x) norm(y)), clipped to [0, 2]             no
``haversine``     great-circle distance in km of (lat, lon) in degrees       yes
================  =========================================================  ============

Haversine (Sinnott 1984): 2 R asin(sqrt(sin^2(dphi/2) + cos phi_1 cos phi_2
sin^2(dlambda/2))), with R = :data:`EARTH_RADIUS_KM` = 6371.0088 km, the mean
Earth radius (IUGG, Moritz 2000); X has d = 2 columns, latitude in [-90, 90] and
longitude, in degrees.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

from .core import CACHE

__all__ = ["METRICS", "EARTH_RADIUS_KM", "point_sensitivity"]

#: The metric names ``metric=`` accepts, in the order of their codes.
METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine", "haversine")
EUCLIDEAN, SQEUCLIDEAN, CITYBLOCK, CHEBYSHEV, MINKOWSKI, COSINE, HAVERSINE = range(7)
#: Mean Earth radius in km (IUGG: R_1 = (2a + b) / 3; Moritz 2000), used by ``haversine``.
EARTH_RADIUS_KM = 6371.0088


@njit(cache=CACHE, nogil=True, inline="always")
def metric_distance(X, u, v, code, p, aux):
    """The distance between rows u and v of X (float64).

    ``X``: the prepared (n, d) array (radians for haversine); ``aux``: (n,) row
    norms for cosine, cos(latitude) for haversine, unused otherwise (see
    :func:`prepare_points`). Scalar in, scalar out; inlined into the callers' loops.
    """
    d = X.shape[1]
    if code == EUCLIDEAN or code == SQEUCLIDEAN:
        s = 0.0
        for k in range(d):
            t = np.float64(X[u, k]) - np.float64(X[v, k])
            s += t * t
        return math.sqrt(s) if code == EUCLIDEAN else s
    if code == CITYBLOCK:
        s = 0.0
        for k in range(d):
            s += abs(np.float64(X[u, k]) - np.float64(X[v, k]))
        return s
    if code == CHEBYSHEV:
        s = 0.0
        for k in range(d):
            t = abs(np.float64(X[u, k]) - np.float64(X[v, k]))
            if t > s:
                s = t
        return s
    if code == MINKOWSKI:
        s = 0.0
        for k in range(d):
            s += abs(np.float64(X[u, k]) - np.float64(X[v, k])) ** p
        return s ** (1.0 / p)
    if code == COSINE:
        s = 0.0
        for k in range(d):
            s += np.float64(X[u, k]) * np.float64(X[v, k])
        c = 1.0 - s / (aux[u] * aux[v])
        return min(max(c, 0.0), 2.0)
    # HAVERSINE: X holds radians (lat, lon), aux cos(lat)
    a = math.sin(0.5 * (X[v, 0] - X[u, 0]))
    b = math.sin(0.5 * (X[v, 1] - X[u, 1]))
    h = a * a + aux[u] * aux[v] * b * b
    return 2.0 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


@njit(cache=CACHE, nogil=True)
def metric_row(X, v, slot, lo, hi, code, p, aux, out):
    """out[k - lo] = distance(v, slot[k]) for the live slots k in lo..hi-1 (slot < 0: dead,
    skipped). One tight loop per metric: the metric's branch is taken once per call,
    not per pair."""
    d = X.shape[1]
    if code == EUCLIDEAN or code == SQEUCLIDEAN:
        for k in range(lo, hi):
            u = slot[k]
            if u >= 0:
                s = 0.0
                for j in range(d):
                    t = np.float64(X[u, j]) - np.float64(X[v, j])
                    s += t * t
                out[k - lo] = s
        if code == EUCLIDEAN:
            for k in range(lo, hi):
                out[k - lo] = math.sqrt(out[k - lo])
    elif code == CITYBLOCK:
        for k in range(lo, hi):
            u = slot[k]
            if u >= 0:
                s = 0.0
                for j in range(d):
                    s += abs(np.float64(X[u, j]) - np.float64(X[v, j]))
                out[k - lo] = s
    elif code == CHEBYSHEV:
        for k in range(lo, hi):
            u = slot[k]
            if u >= 0:
                s = 0.0
                for j in range(d):
                    t = abs(np.float64(X[u, j]) - np.float64(X[v, j]))
                    if t > s:
                        s = t
                out[k - lo] = s
    else:
        for k in range(lo, hi):
            u = slot[k]
            if u >= 0:
                out[k - lo] = metric_distance(X, v, u, code, p, aux)


@njit(cache=CACHE, nogil=True)
def pt_edge_distances(X, edges, code, p, aux):
    """Distances of ``edges`` (k, 2): O(k d)."""
    out = np.empty(edges.shape[0])
    for i in range(edges.shape[0]):
        out[i] = metric_distance(X, edges[i, 0], edges[i, 1], code, p, aux)
    return out


@njit(cache=CACHE, nogil=True)
def pt_matrix(X, code, p, aux, out):
    """Fill ``out`` (n, n) with all distances (zero diagonal, each pair computed once)."""
    n = X.shape[0]
    for u in range(n):
        out[u, u] = 0.0
        for v in range(u + 1, n):
            w = metric_distance(X, u, v, code, p, aux)
            out[u, v] = w
            out[v, u] = w


def check_metric(metric, p):
    """(code, p as float) of a metric name; TypeError/ValueError naming the fix."""
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a str naming a distance (one of {', '.join(METRICS)}), or None "
                        f"for a weight matrix; got {type(metric).__name__}")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; the known metrics are {', '.join(METRICS)} "
                         "(metric=None reads a weight matrix)")
    code = METRICS.index(metric)
    if code != MINKOWSKI:
        if p is not None:
            raise ValueError(f"p= is the exponent of metric='minkowski'; metric={metric!r} takes none: "
                             "drop p=, or use metric='minkowski'")
        return code, 0.0
    if p is None:
        raise TypeError("metric='minkowski' needs p=, the exponent (p >= 1; p = 2 is euclidean)")
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real):
        raise TypeError(f"p must be a real number >= 1, got {type(p).__name__}")
    p = float(p)
    if math.isnan(p) or p <= 0:
        raise ValueError(f"p = {p} is not a valid Minkowski exponent; use p >= 1")
    if p < 1:
        raise ValueError(f"p = {p} < 1 does not give a metric (no triangle inequality); use p >= 1")
    if math.isinf(p):
        return CHEBYSHEV, 0.0  # the limit p -> inf
    return code, p


def metric_info(metric, p):
    """The public parameters of a release on points, for ``tree.info``."""
    return {"metric": metric} if p is None else {"metric": metric, "p": float(p)}


def refuse_matrix_options(metric, topology=None, symmetric=None):
    """Options of a weight matrix that mean nothing for points."""
    if topology is not None:
        raise ValueError(f"metric={metric!r} reads points X (n, d), whose graph is complete; topology= "
                         "is for weight matrices: drop topology=, or pass a weight matrix with metric=None")
    if symmetric is not None:
        raise ValueError(f"metric={metric!r} reads points X (n, d), whose distances are symmetric by "
                         "construction; drop symmetric=")


def prepare_points(X, metric, p, name="X"):
    """Check points X (n, d) for ``metric``; return ``(Xk, code, p, aux)`` for the kernels.

    ``Xk`` is a read-only view of X when X is a C-contiguous float64 array (never
    modified), of a float64 copy otherwise (float32 widens exactly: the same distances),
    and of a float64 copy in radians for haversine. All checks read only X's shape, dtype and O(n d) values, before
    any O(n^2) work.
    """
    code, p = check_metric(metric, p)
    if sp.issparse(X):
        raise TypeError(f"metric={metric!r} takes points as a dense (n, d) array; {name} is a scipy.sparse "
                        "matrix: pass X.toarray(), or drop metric= to read a sparse weight matrix")
    if isinstance(X, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy masked array; its mask would be ignored: pass the rows "
                        "you mean as a plain array")
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be an (n, d) array of points, got {type(X).__name__}")
    try:
        A = np.asarray(X)
    except Exception as exc:  # ragged lists
        raise TypeError(f"{name} could not be read as a numeric (n, d) array: {exc}") from None
    if A.dtype == np.bool_ or not (np.issubdtype(A.dtype, np.integer) or np.issubdtype(A.dtype, np.floating)):
        raise TypeError(f"{name} holds dtype {A.dtype}; points must be real numbers: pass "
                        f"{name}.astype(np.float64)")
    if A.ndim != 2:
        raise ValueError(f"with metric={metric!r}, {name} must be a 2-D (n, d) array of n points in d "
                         f"dimensions, got {A.ndim} dimension(s); one point per row: X.reshape(-1, 1) "
                         "for scalars")
    n, d = A.shape
    if n < 1:
        raise ValueError(f"{name} has n = 0 points; a spanning tree needs at least one")
    if d < 1:
        raise ValueError(f"{name} has d = 0 coordinates; every point needs at least one (shape (n, d), d >= 1)")
    if code == HAVERSINE and d != 2:
        raise ValueError(f"metric='haversine' reads (latitude, longitude) in degrees: {name} must have "
                         f"d = 2 columns, got d = {d}")
    # float64 for the kernels: a float32 coordinate widens exactly, so every distance (computed
    # in float64) is the same, and the points kernels compile once (one numba type: float64,
    # read-only, C) instead of once per dtype; the float32 filter's copy is float32 anyway
    if A.dtype != np.float64:
        A = A.astype(np.float64)
    if not A.flags.c_contiguous:
        A = np.ascontiguousarray(A)
    bad = ~np.isfinite(A).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} has a NaN or infinite coordinate in row {i} ({int(bad.sum())} such "
                         "row(s)); drop or impute those points first")
    _check_magnitude(A, code, p, name)
    aux = np.zeros(0)
    if code == COSINE:
        aux = np.sqrt(np.einsum("ij,ij->i", A, A, dtype=np.float64))
        zero = np.flatnonzero(aux == 0.0)
        if zero.size:
            raise ValueError(f"metric='cosine' is undefined for the zero vector, row {int(zero[0])} of "
                             f"{name} ({zero.size} such row(s)); drop those points or use another metric")
    elif code == HAVERSINE:
        lat = A[:, 0]
        out = np.flatnonzero((lat < -90.0) | (lat > 90.0))
        if out.size:
            raise ValueError(f"metric='haversine' reads column 0 of {name} as a latitude in degrees, "
                             f"which must lie in [-90, 90]: row {int(out[0])} is out of range "
                             f"({out.size} such row(s)); are the columns (longitude, latitude)? "
                             f"pass {name}[:, ::-1]")
        A = np.radians(A.astype(np.float64))
        aux = np.cos(A[:, 0])
    # a read-only view for the kernels, whatever X's flags: one numba type per dtype (a
    # writable and a read-only X compiled every points kernel twice), and the kernels
    # cannot write to the user's array
    A = A.view()
    A.setflags(write=False)
    return A, code, p, aux


#: log2 of the largest value a distance's computation may reach (its sum of squares, of
#: p-th powers): far below the float64 limit 2**1024, so that the gumbel keys
#: w - b * G (|b * G| < 2**1006) stay finite too.
_LOG2_DISTANCE_MAX = 1000


def coordinate_limit(code, p, d):
    """The exponent E such that coordinates of magnitude at most 2**E give distances (and
    their intermediate sums) below 2**``_LOG2_DISTANCE_MAX`` for the metric ``code`` (with
    ``p``) in d dimensions; None: any finite coordinates (haversine reads angles). A
    function of public parameters only: a difference is at most 2**(E + 1)."""
    room = _LOG2_DISTANCE_MAX - math.log2(d)
    if code in (EUCLIDEAN, SQEUCLIDEAN):
        return math.floor(room / 2.0) - 1
    if code == CITYBLOCK:
        return math.floor(room) - 1
    if code == CHEBYSHEV:
        return _LOG2_DISTANCE_MAX - 1
    if code == MINKOWSKI:
        return math.floor(room / p) - 1
    if code == COSINE:  # the norms' sums of squares and the dot products
        return math.floor(room / 2.0)
    return None


def _check_magnitude(A, code, p, name):
    """Refuse coordinates so large that a distance would overflow float64 (every key
    would be NaN or inf and the tree meaningless). The bound is public; whether X
    exceeds it is a property of the data, refused like a NaN (docs: What is not protected)."""
    E = coordinate_limit(code, p, A.shape[1])
    if E is None or A.size == 0:
        return
    if float(np.max(np.abs(A))) > 2.0 ** E:
        metric = METRICS[code]
        more = "; or a smaller p" if code == MINKOWSKI else ""
        raise ValueError(f"{name} has a coordinate of magnitude above 2**{E}, the largest for "
                         f"metric={metric!r} in d = {A.shape[1]} dimensions (larger ones can make "
                         "distances overflow float64): rescale X and the sensitivity by the same "
                         "power of two, X * 2.0**-k and sensitivity * 2.0**-k with k bringing every "
                         f"coordinate within 2**{E} (the release's law is unchanged){more}")


def edge_distances(P, edges):
    """True distances of a tree's edges from prepared points ``P`` (O(n d))."""
    A, code, p, aux = P
    return pt_edge_distances(A, np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2), code, p, aux)


def point_sensitivity(r, metric, *, diameter=None):
    """The l_inf sensitivity of pairwise distances when one point moves by at most ``r``.

    Neighbouring datasets move each point by at most ``r`` (in the metric's own
    units: km for haversine). For a metric the triangle inequality gives
    abs(d(x', y') - d(x, y)) <= d(x, x') + d(y, y') <= 2 r, so every distance
    moves by at most 2 r: the l_inf sensitivity the private releases take.
    Pass the result as ``sensitivity=`` of a release on points.

    Parameters
    ----------
    r : float
        How far one individual's point may move (> 0, the metric's units).
    metric : str
        A name of :data:`METRICS`.
    diameter : float, optional
        Only for ``"sqeuclidean"``: a public bound D on every euclidean
        distance between points (e.g. from clipping to a public box). Then a
        squared distance moves by at most (D + 2 r)^2 - D^2 = 4 r D + 4 r^2.

    Returns
    -------
    float
        2 r for the metrics (euclidean, cityblock, chebyshev, minkowski with
        p >= 1, haversine); 4 r D + 4 r^2 for sqeuclidean with ``diameter``.

    Raises
    ------
    ValueError
        ``r`` (or ``diameter``) not finite and positive; an unknown metric;
        ``"cosine"`` (not a metric: the angle between two points moves without
        bound as a point nears the origin), or ``"sqeuclidean"`` without
        ``diameter``: give ``sensitivity=`` from a bound you can defend instead.

    Examples
    --------
    >>> import fastpamst_nb as fp
    >>> fp.point_sensitivity(0.5, "euclidean")
    1.0
    """
    from .core import check_positive

    r = check_positive("r", r)
    check_metric(metric, 2.0 if metric == "minkowski" else None)
    if metric == "sqeuclidean":
        if diameter is None:
            raise ValueError("sqeuclidean is not a metric: moving a point by r moves a squared distance "
                             "by up to 4 r D + 4 r^2, D the largest distance; pass diameter=D (a public "
                             "bound), or state sensitivity= yourself, or use metric='euclidean'")
        D = check_positive("diameter", diameter)
        return 4.0 * r * D + 4.0 * r * r
    if diameter is not None:
        raise ValueError(f"diameter= is only used for metric='sqeuclidean'; drop it for {metric!r}")
    if metric == "cosine":
        raise ValueError("cosine is not a metric: moving a point by r can move its cosine distances "
                         "by up to 2 however small r is (near the origin); state sensitivity= yourself "
                         "from a bound you can defend (e.g. points normalized to the unit sphere, where "
                         "the cosine distance is half the squared euclidean one), or use a metric")
    return 2.0 * r
