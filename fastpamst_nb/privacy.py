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
* Rounding scores down to multiples of s raises the sensitivity to D_s, see
  :func:`discretized_sensitivity`: s * ceil(Delta / s) when s is a power of two
  (the key floor(w / s) is then computed exactly), s * ceil(Delta / s + 1/2)
  otherwise. Both are at most Delta + s when Delta / s is an integer (the paper's
  Cor. Discretized-RNM uses Delta + s, which doubles the noise at s = Delta).
* Gaussian post-processing: m weights that each move by at most Delta have l2
  sensitivity Delta * sqrt(m), and N(0, sigma^2) with sigma = Delta_2 / sqrt(2 rho)
  is rho-zCDP (Bun & Steinke 2016, Prop. 1.6). The paper's experiments used
  sigma^2 = n^2 Delta / (2 rho) instead (NOTES erratum 2); see
  :func:`paper_gaussian_sigma`.
"""

import math
import numbers
from fractions import Fraction

import numpy as np

from .core import check_positive

NOISES = ("exponential", "gumbel")


def check_noise(noise):
    """Validate the ``noise`` argument of the private selections."""
    if noise not in NOISES:
        raise ValueError(f"noise must be 'exponential' (report-noisy-max) or 'gumbel' "
                         f"(exponential mechanism), got {noise!r}")
    return noise


def _eps_step(rho, n, noise):
    # zCDP of one selection: rho_step = eps^2/2 (RNM, pure DP) or eps^2/8 (bounded range)
    factor = 2.0 if noise == "exponential" else 8.0
    return math.sqrt(factor * rho / (n - 1))


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
        for the exponential mechanism; inf when n < 2 (nothing is selected).
    """
    check_noise(noise)
    if n < 2:
        return math.inf
    return _eps_step(rho, n, noise) / (2.0 * sensitivity)


def is_power_of_two(x):
    """True when the positive float ``x`` is an exact power of two (2**k, k any integer)."""
    return x > 0.0 and math.isfinite(x) and math.frexp(x)[0] == 0.5


def key_limit(discretization):
    """Largest |w / s| the kernels accept for the step ``s``: 2**62 for a power of two
    (w / s is exact, the int64 key cannot overflow), 2**52 otherwise (the bound of
    :func:`discretized_sensitivity` needs the rounding error of w / s below 1/4)."""
    return 2.0 ** 62 if is_power_of_two(discretization) else 2.0 ** 52


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
    Proof. Exact arithmetic: if |x' - x| <= t then floor(x') - floor(x) < t + 1,
    an integer, so it is at most ceil(t); with x = w / s and t = Delta / s the
    score moves by at most s * ceil(Delta / s) (NOTES section 1).

    Floating point, s a power of two: w / s only changes the exponent, so it is
    exact unless it underflows, and the kernels map an underflow of a negative
    quotient to key -1 (its exact floor); the exact bound holds as computed.

    Floating point, any other s: the kernels refuse |w / s| >= 2**52, where the
    correctly rounded quotient is within 1/4 of w / s (half an ulp, ulp <= 1/2;
    an underflow errs by less). So fl(x') - fl(x) <= t + 1/2, hence
    floor(fl(x')) - floor(fl(x)) < t + 3/2, i.e. at most ceil(t + 1/2).
    Without the range limit the bound fails (seen: 1.97 (Delta + s) at
    |w / s| > 2**52). Delta / s is evaluated exactly (as fractions), so a quotient
    that rounds onto an integer cannot lower the ceiling.
    """
    t = Fraction(sensitivity) / Fraction(discretization)
    if is_power_of_two(discretization):
        steps = math.ceil(t)
    else:
        steps = math.ceil(t + Fraction(1, 2))
    exact = Fraction(discretization) * steps
    d = float(exact)
    if Fraction(d) < exact:  # round up: a smaller D_s would add too little noise
        d = math.nextafter(d, math.inf)
    return d


def fast_pamst_rate(rho, sensitivity, n, discretization=None, noise="exponential"):
    """Noise rate of Fast-PAMST on scores s * floor(-w / s).

    Returns sqrt(2 rho/(n-1)) / (2 D_s) (exponential noise) or
    sqrt(8 rho/(n-1)) / (2 D_s) (gumbel), with D_s from
    :func:`discretized_sensitivity`; s defaults to Delta.
    """
    check_noise(noise)
    s = sensitivity if discretization is None else discretization
    if n < 2:
        return math.inf
    return _eps_step(rho, n, noise) / (2.0 * discretized_sensitivity(sensitivity, s))


def gaussian_sigma(rho, sensitivity, m):
    """Standard deviation of post-processing's Gaussian noise: Delta * sqrt(m / (2 rho)).

    ``m`` is the number of (undirected) edges that receive noise.
    """
    return sensitivity * math.sqrt(m / (2.0 * rho))


def paper_gaussian_sigma(rho, sensitivity, n):
    """The paper's experimental calibration, sqrt(n^2 Delta / (2 rho)) (NOTES erratum 2).

    Kept only to reproduce the paper's plots; it is *not* a correct calibration.
    """
    return math.sqrt(n * n * sensitivity / (2.0 * rho))


def zcdp_to_approx_dp(rho, delta):
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    epsilon = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3).
    """
    rho = check_positive("rho", rho)
    delta = _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def approx_dp_to_zcdp(epsilon, delta):
    """The largest rho whose (epsilon, delta) conversion is at most ``epsilon``.

    Inverse of :func:`zcdp_to_approx_dp`: with L = ln(1/delta),
    rho = (sqrt(L + epsilon) - sqrt(L))^2.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = _check_delta(delta)
    L = math.log(1.0 / delta)
    # written as a difference of squares over a sum to avoid cancellation
    root = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
    return root * root


def _check_delta(delta):
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta}")
    return delta


def resolve_rho(rho=None, epsilon=None, delta=None):
    """The zCDP budget from exactly one of ``rho`` or ``(epsilon, delta)``."""
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise ValueError("give either rho or (epsilon and delta), not both")
        return check_positive("rho", rho)
    if epsilon is None or delta is None:
        raise ValueError("a privacy budget is required: give rho (zCDP) or both epsilon and delta")
    return approx_dp_to_zcdp(epsilon, delta)
