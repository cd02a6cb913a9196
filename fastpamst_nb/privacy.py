"""Privacy calibration: the one place every noise parameter is computed.

All algorithms are rho-zCDP under the l_inf neighbouring relation (every edge
weight moves by at most ``sensitivity``). Prim makes n - 1 private selections and
the budget is split evenly, rho_step = rho / (n - 1).

Rates are RATES: Exp(lam) has density lam * exp(-lam * x), mean 1 / lam, and a
Gumbel of scale 1 / lam is added for the exponential mechanism.

* Report-Noisy-Max with exponential noise of rate eps / (2 Delta) is eps-DP
  (Dwork & Roth 2014, Thm 3.13; Ding et al. 2021), and eps-DP implies
  eps^2 / 2-zCDP (Bun & Steinke 2016, Prop. 1.4), so eps = sqrt(2 rho_step).
* The exponential mechanism is eps-bounded-range, which implies eps^2 / 8-zCDP
  (Cesar & Rogers 2021, Lemma 3.2), so eps = sqrt(8 rho_step): twice the rate.
* ``fast_pamst(noise="gumbel")`` draws one Gumbel of scale 1 / lam per edge and
  releases the exact MST of w - G / lam: Kruskal with the exponential mechanism at
  each of its n - 1 steps (docs/design.rst, "The gumbel release"), so the same
  eps = sqrt(8 rho_step), on the raw weights (no discretization):
  :func:`gumbel_rate`.
* Rounding scores down to multiples of s raises the sensitivity to D_s, see
  :func:`discretized_sensitivity`: s * ceil(Delta / s) when s is a power of two
  (the key floor(w / s) is then computed exactly), s * ceil(Delta / s + 1/2)
  otherwise. Both are at most Delta + s when Delta / s is an integer (the paper's
  Cor. Discretized-RNM uses Delta + s, which doubles the noise at s = Delta).
* Gaussian post-processing: m weights that each move by at most Delta have l2
  sensitivity Delta * sqrt(m), and N(0, sigma^2) with sigma = Delta_2 / sqrt(2 rho)
  is rho-zCDP (Bun & Steinke 2016, Prop. 1.6). The paper's experiments used
  sigma^2 = n^2 Delta / (2 rho) instead (:ref:`erratum-2`); see
  :func:`paper_gaussian_sigma`.

Every rate and scale a release uses comes from this module, and each is checked
to lie in [2**-1000, 2**1000] (finite, positive, with a finite inverse), or the
call raises ValueError: an overflowed rate (a subnormal sensitivity) would add no
noise, an underflowed one infinite noise. Products that could overflow on the way
(2 rho, eps / (2 D_s)) are computed factor by factor, and the rate the kernels use
is computed in key units directly (:func:`fast_pamst_key_rate`).
"""

import functools
import math
import numbers
import warnings
from fractions import Fraction

import numpy as np

from .core import check_positive

__all__ = [
    "CONVERSIONS",
    "NOISES",
    "approx_dp_to_zcdp",
    "check_budget",
    "check_budgets",
    "check_noise",
    "default_discretization",
    "discretized_sensitivity",
    "fast_pamst_key_rate",
    "fast_pamst_rate",
    "gaussian_sigma",
    "gumbel_rate",
    "is_power_of_two",
    "key_limit",
    "pamst_rate",
    "paper_gaussian_sigma",
    "resolve_rho",
    "zcdp_to_approx_dp",
]

NOISES = ("exponential", "gumbel")


def check_noise(noise):
    """Validate the ``noise`` argument of the private selections.

    Parameters
    ----------
    noise : str
        ``"exponential"`` (report-noisy-max) or ``"gumbel"`` (the exponential
        mechanism).

    Returns
    -------
    str
        ``noise``, unchanged.

    Raises
    ------
    ValueError
        For any other value.
    """
    if noise not in NOISES:
        raise ValueError(f"noise must be 'exponential' (report-noisy-max) or 'gumbel' "
                         f"(exponential mechanism), got {noise!r}")
    return noise


# Every rate and scale this module returns lies in [2**-1000, 2**1000]: finite and
# positive, with a finite inverse, and a noise value (at most ~45 noise units for
# 53-bit uniforms and ~2**62 candidates) stays finite in floating point. Outside
# it the release would add no noise (an overflowed rate: the exact tree) or
# infinite noise, so it is refused, from the public parameters alone.
_RATE_MIN = 2.0 ** -1000
_RATE_MAX = 2.0 ** 1000


def _checked(value, what, fix):
    """``value`` if it lies in [_RATE_MIN, _RATE_MAX], else a ValueError naming the fix."""
    if not (_RATE_MIN <= value <= _RATE_MAX):  # NaN fails too
        raise ValueError(f"{what} = {value!r} is outside [2**-1000, 2**1000] for these parameters, "
                         f"so its noise cannot be computed in floating point; {fix}")
    return value


def _positive(name, value):
    """:func:`check_positive`, with a fast path for a plain float (the chi-square
    suites compute rates ~10**6 times, where the generic checks' cost shows)."""
    if type(value) is float and 0.0 < value < math.inf:
        return value
    return check_positive(name, value)


def _check_n(n, name="n", low=2):
    """``n`` as an int, low <= n < 2**62 (n - 1 >= 1 selections, or m >= 1 edges)."""
    if type(n) is int and low <= n < 2 ** 62:  # the common case, fast
        return n
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    n = int(n)
    if not low <= n < 2 ** 62:
        raise ValueError(f"{name} must be an int with {low} <= {name} < 2**62, got {n} (a noise "
                         f"parameter is needed only when something is selected)")
    return n


_RESCALE = ("rescale the weights and the sensitivity by the same power of two (the tree "
            "does not change), or use a budget rho in a sane range")


def _eps_step(rho, n, noise):
    # zCDP of one selection: rho_step = eps^2/2 (RNM, pure DP) or eps^2/8 (bounded range);
    # each factor under its own root, so that no product overflows or underflows
    _positive("rho", rho)
    factor = 2.0 if noise == "exponential" else 8.0
    return math.sqrt(factor) * (math.sqrt(rho) / math.sqrt(_check_n(n) - 1))


def pamst_rate(rho, sensitivity, n, noise="exponential"):
    """Noise rate of PAMST's per-step selection on raw scores -w.

    Parameters
    ----------
    rho : float
        Total zCDP budget (dimensionless, > 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight, in the weights' units.
    n : int
        Number of vertices; n - 1 selections share rho.
    noise : {"exponential", "gumbel"}

    Returns
    -------
    float
        lam = sqrt(2 rho / (n-1)) / (2 Delta), or sqrt(8 rho / (n-1)) / (2 Delta)
        for the exponential mechanism, in inverse weight units.

    Raises
    ------
    ValueError
        n < 2 (nothing is selected), a rho or sensitivity that is not finite and
        positive, or a rate outside [2**-1000, 2**1000] (e.g. a subnormal
        sensitivity, whose rate overflows to inf and would add no noise).
    """
    check_noise(noise)
    eps = _eps_step(rho, n, noise)
    lam = 0.5 * eps / _positive("sensitivity", sensitivity)
    return _checked(lam, "the noise rate eps / (2 sensitivity)", _RESCALE)


def is_power_of_two(x):
    """Whether ``x`` is an exact power of two, 2**k for an integer k (negative k too).

    Parameters
    ----------
    x : float

    Returns
    -------
    bool
        True for 2**k as a float (e.g. 2**-21); False for 0, negatives, inf and
        NaN. A power-of-two discretization makes w / s exact, which is what the
        tighter bound of :func:`discretized_sensitivity` needs.
    """
    return x > 0.0 and math.isfinite(x) and math.frexp(x)[0] == 0.5


def default_discretization(sensitivity):
    """Fast-PAMST's default step: the largest power of two at most ``sensitivity / 16``.

    Parameters
    ----------
    sensitivity : float
        Delta (> 0), in the weights' units.

    Returns
    -------
    float
        s = 2**k <= Delta / 16 < 2**(k + 1), in the weights' units (2**-21 for
        Delta = 1e-5; Delta / 16 when Delta is a power of two). It depends on
        Delta alone, never on the data, so it is public.

    Notes
    -----
    A power of two makes w / s exact, so :func:`discretized_sensitivity` is
    D_s = s * ceil(Delta / s) <= Delta + s <= (17/16) Delta: the discretization
    costs at most 6% of the rate, where the paper's s = Delta costs half of it
    (D_s = 2 Delta). The finer keys cost the queue nothing extra in range: it
    addresses buckets of one or two noise units, not keys (:ref:`design-queue`). Measured
    (``docs/scripts/error_table.py``, n = 600, rho = 0.1, Delta = 1e-5): excess
    weight 0.23 against 0.73 at s = Delta and PAMST's 0.20 (exponential noise);
    0.052 against 0.22 and PAMST's 0.056 (gumbel).
    """
    check_positive("sensitivity", sensitivity)
    _, e = math.frexp(sensitivity)  # sensitivity = f * 2**e with 1/2 <= f < 1
    # 2**(e - 1) <= Delta < 2**e, so 2**(e - 5) <= Delta / 16 < 2**(e - 4); kept
    # above 0 (2**-1074, the smallest subnormal) for an absurdly small Delta
    return math.ldexp(1.0, max(e - 5, -1074))


def key_limit(discretization):
    """Largest ``|w / s|`` that Fast-PAMST accepts for the discretization step ``s``.

    Parameters
    ----------
    discretization : float
        The step s (> 0), in the weights' units.

    Returns
    -------
    float
        2**62 when s is a power of two (w / s is exact and the int64 key cannot
        overflow), else 2**52 (the bound of :func:`discretized_sensitivity`
        needs the rounding error of w / s below 1/4). Larger weights are
        refused before anything is released.
    """
    return 2.0 ** 62 if is_power_of_two(discretization) else 2.0 ** 52


# cached: exact fractions are slow, and a release computes the rate twice
# (its window and its queue); the chi-square suites make ~10**6 tiny releases
@functools.lru_cache(maxsize=1024)
def discretized_sensitivity(sensitivity, discretization):
    """Sensitivity D_s of the discretized score s * floor(sgn * w / s) as computed.

    Parameters
    ----------
    sensitivity : float
        Delta: every weight moves by at most this much between neighbours.
    discretization : float
        The step s.

    Returns
    -------
    float
        s * ceil(Delta / s) when s is a power of two, s * ceil(Delta / s + 1/2)
        otherwise, rounded up to a float (never below the exact value).

    Notes
    -----
    Proof. Exact arithmetic: if ``|x' - x| <= t`` then floor(x') - floor(x) < t + 1,
    an integer, so it is at most ceil(t); with x = w / s and t = Delta / s the
    score moves by at most s * ceil(Delta / s) (:ref:`design-calibration`).

    Floating point, s a power of two: w / s only changes the exponent, so it is
    exact unless it underflows, and the kernels map an underflow of a negative
    quotient to key -1 (its exact floor); the exact bound holds as computed.

    Floating point, any other s: the kernels refuse ``|w / s| >= 2**52``, where the
    correctly rounded quotient is within 1/4 of w / s (half an ulp, ulp <= 1/2;
    an underflow errs by less). So fl(x') - fl(x) <= t + 1/2, hence
    floor(fl(x')) - floor(fl(x)) < t + 3/2, i.e. at most ceil(t + 1/2).
    Without the range limit the bound fails (seen: 1.97 (Delta + s) at
    ``|w / s| > 2**52``). Delta / s is evaluated exactly (as fractions), so a quotient
    that rounds onto an integer cannot lower the ceiling.
    """
    check_positive("sensitivity", sensitivity)
    check_positive("discretization", discretization)
    t = Fraction(sensitivity) / Fraction(discretization)
    if is_power_of_two(discretization):
        steps = math.ceil(t)
    else:
        steps = math.ceil(t + Fraction(1, 2))
    exact = Fraction(discretization) * steps
    try:
        d = float(exact)
    except OverflowError:
        raise ValueError(f"the discretized sensitivity of sensitivity = {sensitivity!r} and "
                         f"discretization = {discretization!r} exceeds the float range; {_RESCALE}") from None
    if Fraction(d) < exact:  # round up: a smaller D_s would add too little noise
        d = math.nextafter(d, math.inf)
    if not math.isfinite(d):
        raise ValueError(f"the discretized sensitivity of sensitivity = {sensitivity!r} and "
                         f"discretization = {discretization!r} exceeds the float range; {_RESCALE}")
    return d


def fast_pamst_rate(rho, sensitivity, n, discretization=None, noise="exponential"):
    """Noise rate of Fast-PAMST's per-step selection on scores s * floor(-w / s).

    Parameters
    ----------
    rho : float
        Total zCDP budget (dimensionless, > 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight, in the weights' units.
    n : int
        Number of vertices; n - 1 selections share rho.
    discretization : float, optional
        The step s, in the weights' units; default
        :func:`default_discretization` (a power of two near Delta / 16).
    noise : {"exponential", "gumbel"}
        ``"gumbel"`` is deprecated (a DeprecationWarning): it is the rate of the
        retired discretized gumbel engine, while ``fast_pamst(noise="gumbel")``
        draws one Gumbel per edge at :func:`gumbel_rate` (no discretization).

    Returns
    -------
    float
        The rate lambda, in inverse weight units: sqrt(2 rho/(n-1)) / (2 D_s)
        for exponential noise (what ``fast_pamst(noise="exponential")`` uses),
        sqrt(8 rho/(n-1)) / (2 D_s) for the deprecated gumbel, with D_s from
        :func:`discretized_sensitivity`.

    Raises
    ------
    ValueError
        As :func:`fast_pamst_key_rate`, or a rate outside [2**-1000, 2**1000].
    """
    _warn_retired_gumbel("fast_pamst_rate", noise)
    s, d_s, eps = _fast_args(rho, sensitivity, n, discretization, noise)
    return _checked(0.5 * eps / d_s, "the noise rate eps / (2 D_s)", _RESCALE)


def fast_pamst_key_rate(rho, sensitivity, n, discretization=None, noise="exponential"):
    """The rate of :func:`fast_pamst_rate` in key units (per step s): what the kernels use.

    Parameters
    ----------
    rho, sensitivity, n, discretization, noise
        As in :func:`fast_pamst_rate` (``noise="gumbel"`` deprecated there too).

    Returns
    -------
    float
        r = lambda * s = eps * (s / D_s) / 2 (dimensionless), computed without
        the weight-unit rate lambda, which overflows for a subnormal D_s (an
        inf rate adds no noise: the exact tree). s / D_s lies in (0, 1].

    Raises
    ------
    ValueError
        n < 2, a rho, sensitivity or discretization that is not finite and
        positive, or a rate outside [2**-1000, 2**1000] (e.g. a step s many
        orders of magnitude finer than Delta).
    """
    _warn_retired_gumbel("fast_pamst_key_rate", noise)
    s, d_s, eps = _fast_args(rho, sensitivity, n, discretization, noise)
    # s / D_s = 1 / ceil(Delta / s) (+ 1/2 otherwise), in (0, 1]: no overflow
    return _checked(0.5 * eps * (s / d_s), "the noise rate in key units eps s / (2 D_s)",
                    "use a coarser discretization (the default is about sensitivity / 16) "
                    "or a budget rho in a sane range")


def _warn_retired_gumbel(name, noise):
    """The DeprecationWarning of a Fast-PAMST rate asked for the retired discretized
    gumbel engine (the gumbel release's rate is :func:`gumbel_rate`)."""
    if check_noise(noise) == "gumbel":
        warnings.warn(
            f'privacy.{name}(noise="gumbel") is the rate of the retired discretized gumbel '
            'engine; fast_pamst(noise="gumbel") releases at privacy.gumbel_rate(rho, '
            "sensitivity, n) (no discretization): use that. The gumbel option of "
            f"{name} will be removed",
            DeprecationWarning, stacklevel=3)


def _fast_args(rho, sensitivity, n, discretization, noise):
    """(s, D_s, eps) of a Fast-PAMST rate, each checked."""
    check_noise(noise)
    _positive("sensitivity", sensitivity)
    s = default_discretization(sensitivity) if discretization is None else \
        _positive("discretization", discretization)
    d_s = discretized_sensitivity(float(sensitivity), float(s))  # finite, or ValueError
    return s, d_s, _eps_step(rho, n, noise)


def gumbel_rate(rho, sensitivity, n):
    """Rate of the gumbel release (one Gumbel per edge, an exact MST of w - G / lam).

    Parameters
    ----------
    rho : float
        Total zCDP budget (dimensionless, > 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight, in the weights' units (> 0).
    n : int
        Number of vertices; the n - 1 exponential mechanisms of Kruskal's steps share rho.

    Returns
    -------
    float
        lam = sqrt(8 rho / (n - 1)) / (2 Delta), in inverse weight units: each step is
        the exponential mechanism with eps = sqrt(8 rho / (n - 1)) on scores of
        sensitivity Delta (eps-bounded-range, hence eps^2 / 8-zCDP, Cesar & Rogers
        2021), composed over n - 1 steps. No discretization.

    Raises
    ------
    ValueError
        n < 2 (nothing is selected), ``rho`` or ``sensitivity`` not finite and
        positive, or a rate outside [2**-1000, 2**1000] (e.g. a subnormal
        sensitivity, whose rate would overflow and add no noise).
    """
    # the formula of PAMST's gumbel rate on raw scores, with its overflow checks
    return pamst_rate(rho, sensitivity, n, noise="gumbel")


def gaussian_sigma(rho, sensitivity, m):
    """Standard deviation of post-processing's Gaussian noise.

    Parameters
    ----------
    rho : float
        Total zCDP budget (dimensionless, > 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight, in the weights' units.
    m : int
        Number of (undirected) edges that receive noise.

    Returns
    -------
    float
        sigma = Delta * sqrt(m / (2 rho)), in the weights' units: the l2
        sensitivity Delta * sqrt(m) over sqrt(2 rho) (Gaussian mechanism,
        Bun & Steinke 2016, Prop. 1.6).

    Raises
    ------
    ValueError
        m < 1, a rho or sensitivity that is not finite and positive, or a sigma
        outside [2**-1000, 2**1000] (a sigma that underflows to 0 adds no noise).
    """
    _positive("rho", rho)
    _positive("sensitivity", sensitivity)
    # each factor on its own, so that no intermediate overflows or underflows
    sigma = sensitivity * (math.sqrt(_check_n(m, "m", 1)) / (math.sqrt(2.0) * math.sqrt(rho)))
    return _checked(sigma, "the noise scale sensitivity * sqrt(m / (2 rho))", _RESCALE)


def paper_gaussian_sigma(rho, sensitivity, n):
    """The paper's experimental noise scale for post-processing (NOT private in general).

    Kept only to reproduce the paper's plots; it is *not* a correct calibration
    (:ref:`erratum-2`).

    Parameters
    ----------
    rho : float
        zCDP budget the paper meant to spend.
    sensitivity : float
        Delta, in the weights' units.
    n : int
        Number of vertices.

    Returns
    -------
    float
        sqrt(n^2 Delta / (2 rho)), computed as n sqrt(Delta) / sqrt(2 rho).

    Raises
    ------
    ValueError
        As :func:`gaussian_sigma`: a scale outside [2**-1000, 2**1000].
    """
    _positive("rho", rho)
    _positive("sensitivity", sensitivity)
    sigma = _check_n(n, "n", 1) * (math.sqrt(sensitivity) / (math.sqrt(2.0) * math.sqrt(rho)))
    return _checked(sigma, "the paper's noise scale sqrt(n^2 sensitivity / (2 rho))", _RESCALE)


CONVERSIONS = ("cks", "bun-steinke")

# Search range for t = log(alpha - 1) in the CKS conversion. Any alpha > 1 gives a
# sound bound, so capping the range can only cost tightness, never privacy; the
# optimum lies inside it for all float inputs (|t| < 400: the optimal e**t lies
# between min(L, sqrt(L / rho)) / 3 and sqrt(L / rho)) and exp(t) cannot overflow.
_LOG_U_MIN = -700.0
_LOG_U_MAX = 700.0
_MAX_STEPS_DOWN = 100


def _check_method(method):
    if not isinstance(method, str) or method not in CONVERSIONS:
        raise ValueError(f"method must be one of {', '.join(repr(m) for m in CONVERSIONS)}, "
                         f"got {method!r}")
    return method


def _cks_offset(u, L):
    """c in eps = alpha rho + c for a fixed alpha = 1 + u (CKS 2020, Cor. 13).

    Solving delta = exp((alpha-1)(alpha rho - eps)) / (alpha-1) * (1 - 1/alpha)**alpha
    for eps with L = ln(1/delta) gives
        eps = alpha rho + [alpha ln(1 - 1/alpha) - ln(alpha - 1) + L] / (alpha - 1),
    and with alpha ln(1 - 1/alpha) = alpha (ln u - ln(1 + u)) the bracket over u is
        c = ln u - (1 + u) ln(1 + u) / u + L / u = (L - log1p(u)) / u - log1p(1 / u),
    the last form free of cancellation for u -> 0 and u -> inf.
    """
    return (L - math.log1p(u)) / u - math.log1p(1.0 / u)


def _bisect_increasing(f, lo, hi, tol=1e-12):
    """Bracket [lo, hi] of width <= tol around the sign change of an increasing f,
    clipped to the initial [lo, hi]. With t = ln(alpha - 1), tol = 1e-12 moves the
    optimum of the (flat, smooth) bounds by ~1e-24 relative: far below rounding."""
    if f(lo) >= 0.0:
        return lo, lo
    if f(hi) <= 0.0:
        return hi, hi
    for _ in range(100):  # 1400 / 2**51 < 1e-12
        mid = 0.5 * (lo + hi)
        if hi - lo <= tol or mid <= lo or mid >= hi:
            break
        if f(mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return lo, hi


def _cks_epsilon(rho, L):
    # eps(u) = (1 + u) rho + c(u) has derivative rho + (log1p(u) - L) / u**2, whose
    # sign is that of g(u) = rho u**2 + log1p(u) - L, increasing in u from -L to inf:
    # eps is unimodal with its minimum at the root of g, found by bisection over
    # t = ln u. Both ends of the final bracket give sound bounds; take the smaller.
    def g(t):
        u = math.exp(t)
        return rho * u * u + math.log1p(u) - L

    lo, hi = _bisect_increasing(g, _LOG_U_MIN, _LOG_U_MAX)
    eps = min((1.0 + u) * rho + _cks_offset(u, L) for u in (math.exp(lo), math.exp(hi)))
    # The bound tends to ln(1 - delta) < 0 as rho -> 0; (eps, delta)-DP with eps < 0
    # implies (0, delta)-DP, and epsilon is reported as a nonnegative number.
    return max(eps, 0.0)


def _cks_rho(epsilon, L, delta):
    # rho(eps) = max over u of (eps - c(u)) / (1 + u). At the optimum rho = r(u) =
    # (L - log1p(u)) / u**2 (the stationarity condition of _cks_epsilon), which
    # decreases from inf to 0 on (0, e**L - 1]; so k(u) = (1 + u) r(u) + c(u), the
    # epsilon reached there, decreases too (from inf to ln(1 - delta) < 0) and
    # crosses eps once. Bisection on t = ln u, then the best end of the bracket.
    def minus_k(t):
        u = math.exp(t)
        m = (L - math.log1p(u)) / u  # >= 0 below e**L - 1; r(u) = m / u
        return epsilon - (m / u + 2.0 * m - math.log1p(1.0 / u))

    # ln(e**L - 1) = L + ln(1 - delta), where r vanishes
    t_max = min(_LOG_U_MAX, L + math.log1p(-delta))
    lo, hi = _bisect_increasing(minus_k, min(_LOG_U_MIN, t_max), t_max)
    return max((epsilon - _cks_offset(u, L)) / (1.0 + u) for u in (math.exp(lo), math.exp(hi)))


def zcdp_to_approx_dp(rho, delta, method="cks"):
    """The epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Parameters
    ----------
    rho : float
        zCDP budget (> 0, finite).
    delta : float
        Target delta, strictly between 0 and 1.
    method : {"cks", "bun-steinke"}, default "cks"
        ``"cks"``: Canonne, Kamath & Steinke (2020), Corollary 13: rho-zCDP implies
        (eps, delta)-DP with
        delta = inf over alpha > 1 of exp((alpha-1)(alpha rho - eps)) / (alpha-1)
        * (1 - 1/alpha)**alpha. For a fixed alpha this is
        eps = alpha rho + [alpha ln(1 - 1/alpha) - ln(alpha - 1) + ln(1/delta)] / (alpha - 1),
        and the minimum over alpha is attained where
        rho (alpha - 1)**2 + ln(alpha) = ln(1/delta), found by bisection on
        ln(alpha - 1). The value returned is the bound at an alpha the search
        reached, so it is always a valid epsilon (at worst a few ulps above the
        infimum); it is clipped below at 0 (the infimum tends to
        ln(1 - delta) < 0 as rho -> 0).
        ``"bun-steinke"``: eps = rho + 2 sqrt(rho ln(1/delta)), Bun & Steinke (2016),
        Proposition 1.3; never smaller than the CKS value.

    Returns
    -------
    float
        epsilon >= 0; rho = 0.1, delta = 1e-6 give 2.1419 (CKS) and 2.4508
        (Bun-Steinke).

    Raises
    ------
    ValueError
        If rho is not finite and positive, delta is outside (0, 1) or method is
        unknown.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010, Prop. 12 and Cor. 13.
    .. [2] M. Bun, T. Steinke, "Concentrated Differential Privacy: Simplifications,
       Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065, Prop. 1.3.
    """
    rho, delta, L, method = _conversion_args("rho", rho, delta, method)
    if method == "cks":
        return _cks_epsilon(rho, L)
    return rho + 2.0 * math.sqrt(rho) * math.sqrt(L)  # rho * L could overflow


def approx_dp_to_zcdp(epsilon, delta, method="cks"):
    """The largest rho whose (epsilon, delta) conversion is at most ``epsilon``.

    Inverse of :func:`zcdp_to_approx_dp` with the same ``method``. The result is
    guaranteed, not just approximately, to satisfy
    ``zcdp_to_approx_dp(rho, delta, method) <= epsilon`` as computed in floating
    point: the analytic value is stepped down with :func:`math.nextafter` until it
    does (a few ulps at most).

    Parameters
    ----------
    epsilon : float
        Target epsilon (> 0, finite).
    delta : float
        Target delta, strictly between 0 and 1.
    method : {"cks", "bun-steinke"}, default "cks"
        ``"cks"``: rho = max over alpha > 1 of (epsilon - c(alpha)) / alpha with
        c(alpha) = [alpha ln(1 - 1/alpha) - ln(alpha - 1) + ln(1/delta)] / (alpha - 1)
        (Canonne, Kamath & Steinke 2020, Cor. 13; every alpha gives a valid rho, the
        maximizing one is found by bisection). ``"bun-steinke"``:
        rho = (sqrt(L + epsilon) - sqrt(L))**2 with L = ln(1/delta), the inverse of
        Bun & Steinke (2016), Prop. 1.3.

    Returns
    -------
    float
        rho > 0; epsilon = 2, delta = 1e-6 give rho = 0.0882 (CKS) and 0.0676
        (Bun-Steinke).

    Raises
    ------
    ValueError
        If epsilon is not finite and positive, delta is outside (0, 1) or method
        is unknown.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010, Cor. 13.
    .. [2] M. Bun, T. Steinke, "Concentrated Differential Privacy: Simplifications,
       Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065, Prop. 1.3.
    """
    epsilon, delta, L, method = _conversion_args("epsilon", epsilon, delta, method)
    if method == "cks":
        rho = _cks_rho(epsilon, L, delta)
    else:
        # written as a difference of squares over a sum to avoid cancellation
        root = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
        rho = root * root
    # Rounding may leave the forward conversion an ulp or so above epsilon.
    for _ in range(_MAX_STEPS_DOWN):
        if not rho > 0.0:
            raise ValueError(f"epsilon={epsilon!r} is too small for delta={delta!r}: "
                             f"the equivalent rho underflows to 0")
        if zcdp_to_approx_dp(rho, delta, method) <= epsilon:
            return rho
        rho = math.nextafter(rho, 0.0)
    raise ArithmeticError(f"could not convert (epsilon={epsilon!r}, delta={delta!r}) "
                          f"to zCDP with method {method!r}")


def _conversion_args(name, value, delta, method):
    """Checked (value, delta, L = ln(1/delta), method) of a conversion."""
    delta = _check_delta(delta)
    return check_positive(name, value), delta, -math.log(delta), _check_method(method)


def _check_delta(delta, name="delta"):
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(delta).__name__}")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {delta}")
    return delta


def resolve_rho(rho=None, epsilon=None, delta=None, method="cks"):
    """The zCDP budget from exactly one of ``rho`` or ``(epsilon, delta)``.

    Parameters
    ----------
    rho : float, optional
        zCDP budget, returned as is (after validation).
    epsilon, delta : float, optional
        Approximate-DP budget, converted with :func:`approx_dp_to_zcdp`.
    method : {"cks", "bun-steinke"}, default "cks"
        Conversion used for ``(epsilon, delta)``; see :func:`zcdp_to_approx_dp`.

    Returns
    -------
    float
        rho > 0.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010, Cor. 13.
    .. [2] M. Bun, T. Steinke, "Concentrated Differential Privacy: Simplifications,
       Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065, Prop. 1.3.
    """
    _check_method(method)
    return check_budget(rho, epsilon, delta, method=method)


def _budget_names(flags):
    """How the errors call the budget's parameters: keywords, or the command line's options."""
    if flags:
        return ("--rho", "--epsilon", "--delta"), ("--rho R", "--epsilon E", "--delta D")
    names = ("rho", "epsilon", "delta")
    return names, names


def _check_budget_form(rho, epsilon, delta, required, flags):
    """Refuse a budget given both ways, as half of the (epsilon, delta) pair, or (``required``)
    not at all: the one wording of these errors, shared by every function and the CLI."""
    (_, e, d), (R, E, D) = _budget_names(flags)
    if rho is not None and (epsilon is not None or delta is not None):
        raise ValueError(f"{R} and {E} {D} both give the privacy budget: give either {R} or "
                         f"({E} and {D}), not both")
    if (epsilon is None) != (delta is None):
        given, other = (e, D) if epsilon is not None else (d, E)
        raise ValueError(f"{given} needs {other}: a privacy budget is required as {R} (zCDP) or as "
                         f"the pair {E} and {D}; add {other}, or give {R} instead")
    if required and rho is None and epsilon is None:
        raise ValueError(f"a privacy budget is required: give {R} (zCDP) or both {E} and {D}")


def check_budget(rho=None, epsilon=None, delta=None, *, required=True, flags=False, method="cks"):
    """The zCDP budget from exactly one of ``rho`` or ``(epsilon, delta)``: the one check of a
    budget, so that its errors read the same in every function (:func:`resolve_rho`), in
    :func:`fastpamst_nb.plan` (:func:`check_budgets`) and on the command line (``flags``:
    the errors name ``--rho R``, ...). Returns rho > 0, or None when no budget is given
    and none is ``required``.

    Raises ValueError for both forms, half of the pair, no budget when ``required``, a rho
    or epsilon that is not finite and positive, a delta outside (0, 1), an epsilon too
    small for its delta; TypeError for a value that is not a real number.
    """
    _check_budget_form(rho, epsilon, delta, required, flags)
    (r, e, d), _ = _budget_names(flags)
    if rho is not None:
        return check_positive(r, rho)
    if epsilon is None:
        return None
    # checked under the caller's names first; the conversion checks them again
    check_positive(e, epsilon)
    _check_delta(delta, d)
    return approx_dp_to_zcdp(epsilon, delta, method)


def check_budgets(rho=None, epsilon=None, delta=None, *, flags=False):
    """:func:`check_budget` for a grid of budgets: ``rho`` or ``epsilon`` may be a sequence.

    Returns
    -------
    ndarray of float or None
        One rho per value given (epsilon values converted at ``delta``), or None
        when no budget is given.
    """
    _check_budget_form(rho, epsilon, delta, False, flags)
    if rho is None and epsilon is None:
        return None
    (r, e, _), _ = _budget_names(flags)
    name, given = (r, rho) if rho is not None else (e, epsilon)
    values = np.atleast_1d(np.asarray(given, dtype=float)).ravel()
    if values.size == 0:
        raise ValueError(f"{name} is empty: give a number or a list of numbers > 0")
    if rho is not None:
        return np.array([check_budget(float(x), flags=flags) for x in values])
    return np.array([check_budget(None, float(x), delta, flags=flags) for x in values])
