"""Privacy accounting: the calibration table of docs/design.rst and the zCDP conversions."""

import math
import warnings

import numpy as np
import pytest

import fastpamst_nb as fp
from fastpamst_nb import privacy

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests


def test_rates_match_the_table():
    rho, delta_, n, s = 0.3, 0.02, 11, 0.005
    # sqrt(2 rho/(n-1)) / (2 Delta) etc., written out independently
    assert privacy.pamst_rate(rho, delta_, n) == pytest.approx(math.sqrt(0.06) / 0.04, rel=1e-15)
    assert privacy.pamst_rate(rho, delta_, n, "gumbel") == pytest.approx(math.sqrt(0.24) / 0.04, rel=1e-15)
    # default step: the largest power of two <= 0.02 / 16 = 0.00125 is 2**-10, and
    # D_s = 2**-10 * ceil(20.48) = 21 * 2**-10
    assert privacy.fast_pamst_rate(rho, delta_, n) == pytest.approx(math.sqrt(0.06) / (42 * 2.0 ** -10),
                                                                    rel=1e-15)
    assert privacy.fast_pamst_rate(rho, delta_, n, delta_) == pytest.approx(math.sqrt(0.06) / 0.08, rel=1e-15)
    assert privacy.fast_pamst_rate(rho, delta_, n, s) == pytest.approx(math.sqrt(0.06) / 0.05, rel=1e-15)
    # the gumbel release: the exponential mechanism on the raw weights, whose
    # bounded-range accounting doubles PAMST's exponential rate (no step, no D_s)
    assert privacy.gumbel_rate(rho, delta_, n) == pytest.approx(math.sqrt(0.24) / 0.04, rel=1e-15)
    assert privacy.gumbel_rate(rho, delta_, n) == privacy.pamst_rate(rho, delta_, n, "gumbel")
    assert privacy.gaussian_sigma(rho, delta_, 55) == pytest.approx(0.02 * math.sqrt(55 / 0.6), rel=1e-15)
    assert privacy.paper_gaussian_sigma(rho, delta_, n) == pytest.approx(math.sqrt(121 * 0.02 / 0.6), rel=1e-15)
    with pytest.raises(ValueError, match="n must be an int with 2 <= n"):
        privacy.pamst_rate(rho, delta_, 1)  # no selection: no rate, never an inf one


def test_the_retired_discretized_gumbel_rates_warn_and_keep_their_value():
    # fast_pamst_rate(noise="gumbel") was the discretized gumbel engine's rate; the
    # gumbel release uses gumbel_rate: a DeprecationWarning names it, the value stays
    rho, delta_, n, s = 0.3, 0.02, 11, 0.005
    with pytest.warns(DeprecationWarning, match=r"privacy\.gumbel_rate"):
        assert privacy.fast_pamst_rate(rho, delta_, n, s, "gumbel") == pytest.approx(math.sqrt(0.24) / 0.05,
                                                                                     rel=1e-15)
    with pytest.warns(DeprecationWarning, match=r'fast_pamst_key_rate\(noise="gumbel"\)'):
        assert privacy.fast_pamst_key_rate(rho, delta_, n, s, noise="gumbel") == pytest.approx(
            math.sqrt(0.24) / 0.05 * s, rel=1e-15)
    with warnings.catch_warnings():  # the exponential rates (the engine's) do not warn
        warnings.simplefilter("error")
        privacy.fast_pamst_rate(rho, delta_, n, s)
        privacy.fast_pamst_key_rate(rho, delta_, n, s, "exponential")
    with pytest.raises(ValueError, match="noise must be"):  # a bad noise is refused, not warned about
        privacy.fast_pamst_rate(rho, delta_, n, s, "laplace")


@pytest.mark.parametrize("rho, delta, eps", [
    # eps = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3), by hand
    (0.1, 1e-6, 0.1 + 2 * math.sqrt(0.1 * 6 * math.log(10))),
    (1.0, 1e-5, 1.0 + 2 * math.sqrt(5 * math.log(10))),
    (0.5, math.exp(-2.0), 0.5 + 2 * math.sqrt(1.0)),
])
def test_zcdp_to_approx_dp_known_values(rho, delta, eps):
    assert fp.zcdp_to_approx_dp(rho, delta, method="bun-steinke") == pytest.approx(eps, rel=1e-14)
    assert fp.approx_dp_to_zcdp(eps, delta, method="bun-steinke") == pytest.approx(rho, rel=1e-12)


def test_conversions_are_inverse_over_a_grid():
    for rho in np.geomspace(1e-6, 1e3, 19):
        for delta in (1e-12, 1e-6, 0.01, 0.5):
            eps = fp.zcdp_to_approx_dp(rho, delta, method="bun-steinke")
            assert fp.approx_dp_to_zcdp(eps, delta, method="bun-steinke") == pytest.approx(rho, rel=1e-10)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 2.0, math.nan])
def test_delta_must_be_in_the_open_unit_interval(bad):
    with pytest.raises(ValueError, match="delta"):
        fp.zcdp_to_approx_dp(0.1, bad)
    with pytest.raises(ValueError, match="delta"):
        fp.approx_dp_to_zcdp(1.0, bad)


def test_budget_given_as_epsilon_delta_is_converted():
    W = np.random.default_rng(0).random((12, 12))
    W = W + W.T
    rho = fp.approx_dp_to_zcdp(2.0, 1e-6)
    for algorithm in (fp.pamst, fp.fast_pamst, fp.post_processing):
        a = algorithm(W, epsilon=2.0, delta=1e-6, sensitivity=0.01, rng=3)
        b = algorithm(W, rho, 0.01, rng=3)
        assert a.info["rho"] == pytest.approx(rho, rel=1e-15)
        assert np.array_equal(a.edges, b.edges)


def test_exactly_one_way_of_giving_the_budget():
    W = np.ones((4, 4))
    with pytest.raises(ValueError, match="either rho"):
        fp.fast_pamst(W, 0.1, 1.0, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="budget is required"):
        fp.fast_pamst(W, sensitivity=1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="budget is required"):
        fp.fast_pamst(W, sensitivity=1.0)



_BAD_BUDGETS = {  # (rho, epsilon, delta) given badly, and what the error must say
    "both": ((1.0, 1.0, 1e-6), "not both"),
    "rho and delta": ((1.0, None, 1e-6), "not both"),
    "epsilon alone": ((None, 1.0, None), "epsilon needs delta"),
    "delta alone": ((None, None, 1e-6), "delta needs epsilon"),
    "none": ((None, None, None), "privacy budget is required"),
}

_FLAGGED = {"both": "give either --rho R or (--epsilon E and --delta D), not both",
            "rho and delta": "not both", "epsilon alone": "--epsilon needs --delta D",
            "delta alone": "--delta needs --epsilon E", "none": "give --rho R (zCDP) or both --epsilon E"}


@pytest.mark.parametrize("case", list(_BAD_BUDGETS))
def test_budget_errors_read_the_same_everywhere(case):
    # one home (privacy.check_budget): the functions, plan's grid and the command line
    # word each error the same, the CLI with its option names
    (rho, epsilon, delta), says = _BAD_BUDGETS[case]
    with pytest.raises(ValueError, match=says) as lib:
        privacy.resolve_rho(rho, epsilon, delta)
    assert "privacy budget" in str(lib.value)
    if case != "none":  # a plan without a budget uses its default grid
        with pytest.raises(ValueError) as grid:
            privacy.check_budgets(rho, epsilon, delta)
        assert str(grid.value) == str(lib.value)
    with pytest.raises(ValueError) as cli:
        privacy.check_budget(rho, epsilon, delta, flags=True)
    assert _FLAGGED[case] in str(cli.value)
    # the same sentence, each parameter named as its option
    plain = str(cli.value)
    for flag, name in (("--rho R", "rho"), ("--epsilon E", "epsilon"), ("--delta D", "delta"),
                       ("--epsilon", "epsilon"), ("--delta", "delta")):
        plain = plain.replace(flag, name)
    assert plain == str(lib.value)


def test_budget_values_are_checked_under_the_callers_names():
    assert privacy.check_budget(None, None, None, required=False) is None
    assert privacy.check_budgets() is None
    assert privacy.check_budget(0.5) == 0.5
    assert privacy.check_budget(None, 2.0, 1e-6) == privacy.approx_dp_to_zcdp(2.0, 1e-6)
    assert privacy.check_budgets([0.1, 1.0]).tolist() == [0.1, 1.0]
    assert privacy.check_budgets(None, [1.0, 2.0], 1e-6).tolist() == [
        privacy.approx_dp_to_zcdp(e, 1e-6) for e in (1.0, 2.0)]
    with pytest.raises(ValueError, match="--rho must be a finite positive number"):
        privacy.check_budget(0.0, flags=True)
    with pytest.raises(ValueError, match="--delta must lie strictly between 0 and 1"):
        privacy.check_budget(None, 1.0, 1.5, flags=True)
    with pytest.raises(ValueError, match="^epsilon must be a finite positive number"):
        privacy.check_budgets(None, [1.0, -1.0], 1e-6)
    with pytest.raises(ValueError, match="rho is empty"):
        privacy.check_budgets([])
    with pytest.raises(TypeError, match="rho must be a real number"):
        privacy.check_budget("1")


# --- CKS (Canonne, Kamath & Steinke 2020) vs Bun & Steinke (2016) conversions --------

def _cks_grid_min(rho, delta, lo=1e-8, hi=1e8, num=200_001):
    """Brute force: min over a dense grid of alpha of the bound obtained by solving
    delta = exp((a-1)(a rho - eps)) / (a-1) * (1 - 1/a)**a (CKS 2020, Cor. 13) for eps.
    Written independently of the library (numpy, alpha itself, no log(alpha-1) tricks)."""
    a = 1.0 + np.geomspace(lo, hi, num)
    eps = a * rho + (a * np.log1p(-1.0 / a) - np.log(a - 1.0) - math.log(delta)) / (a - 1.0)
    i = int(np.argmin(eps))
    return eps[i], a[max(i - 1, 0)], a[min(i + 1, num - 1)]


def _cks_refined_min(rho, delta):
    """The grid minimum, then a second dense grid between the neighbours of the argmin."""
    _, a0, a1 = _cks_grid_min(rho, delta)
    best, _, _ = _cks_grid_min(rho, delta, a0 - 1.0, a1 - 1.0, 20_001)
    return best


def _cks_delta(alpha, rho, eps):
    """delta of CKS 2020, Cor. 13 at one alpha, evaluated literally."""
    return math.exp((alpha - 1) * (alpha * rho - eps)) / (alpha - 1) * (1 - 1 / alpha) ** alpha


def _gaussian_delta(rho, eps):
    """Exact privacy profile of the Gaussian mechanism N(0, sigma^2), sensitivity 1,
    sigma^2 = 1 / (2 rho), which is exactly rho-zCDP (Bun & Steinke 2016, Prop. 1.6):
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), mu = sqrt(2 rho)
    (Balle & Wang 2018, Thm. 8). Every valid zCDP -> DP conversion must give an eps
    with delta(eps) <= delta."""
    mu = math.sqrt(2 * rho)
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return phi(mu / 2 - eps / mu) - math.exp(eps) * phi(-mu / 2 - eps / mu)


def test_cks_known_value_from_the_issue():
    # rho = 0.1, delta = 1e-6: 2.14 with CKS instead of 2.45 with Bun-Steinke
    eps = fp.zcdp_to_approx_dp(0.1, 1e-6)
    assert eps == fp.zcdp_to_approx_dp(0.1, 1e-6, method="cks")
    assert eps == pytest.approx(2.1419389, abs=1e-6)
    assert fp.zcdp_to_approx_dp(0.1, 1e-6, method="bun-steinke") == pytest.approx(2.4507880, abs=1e-6)
    # the delta of the corollary, evaluated literally at the optimal alpha ~ 11.658
    # (where rho (alpha-1)^2 + ln(alpha) = ln(1/delta)), gives back delta
    assert _cks_delta(11.6581, 0.1, eps) == pytest.approx(1e-6, rel=1e-6)
    assert 0.1 * 10.6581 ** 2 + math.log(11.6581) == pytest.approx(6 * math.log(10), rel=1e-5)
    # and the inverse
    assert fp.approx_dp_to_zcdp(eps, 1e-6) == pytest.approx(0.1, rel=1e-12)
    assert fp.approx_dp_to_zcdp(2.0, 1e-6) == pytest.approx(0.0881527, rel=1e-6)


@pytest.mark.parametrize("rho", [1e-8, 1e-5, 1e-3, 0.1, 1.0, 30.0, 1e4])
@pytest.mark.parametrize("delta", [1e-300, 1e-50, 1e-10, 1e-6, 0.01, 0.5])
def test_cks_matches_a_brute_force_grid_over_alpha(rho, delta):
    eps = fp.zcdp_to_approx_dp(rho, delta, method="cks")
    grid, _, _ = _cks_grid_min(rho, delta)
    fine = _cks_refined_min(rho, delta)
    tol = 1e-13 * max(1.0, abs(fine))
    if fine <= 0.0:  # the bound tends to ln(1 - delta) < 0 as rho -> 0; reported as 0
        assert eps == 0.0
        return
    # never worse than any alpha of the grid, and as good as the refined grid
    assert eps <= grid + tol
    assert eps == pytest.approx(fine, rel=1e-11, abs=1e-15)


def test_cks_is_between_the_gaussian_mechanism_and_bun_steinke():
    for rho in np.geomspace(1e-3, 10.0, 13):
        for delta in (1e-10, 1e-6, 1e-3, 0.1):
            cks = fp.zcdp_to_approx_dp(rho, delta)
            bs = fp.zcdp_to_approx_dp(rho, delta, method="bun-steinke")
            assert cks <= bs
            # the Gaussian mechanism is rho-zCDP: a valid conversion cannot beat it
            assert _gaussian_delta(rho, cks) <= delta
    for rho in np.geomspace(1e-8, 1e4, 200):
        for delta in (1e-300, 1e-20, 1e-6, 0.5):
            assert fp.zcdp_to_approx_dp(rho, delta) <= fp.zcdp_to_approx_dp(rho, delta, method="bun-steinke")


def test_cks_is_clipped_at_zero_for_tiny_rho():
    # the infimum over alpha tends to ln(1 - delta) < 0 as rho -> 0
    assert fp.zcdp_to_approx_dp(1e-8, 0.5) == 0.0
    # so a tiny epsilon still allows a positive rho, which the Gaussian confirms:
    # its total variation distance 2 Phi(mu / 2) - 1 is at most delta
    rho = fp.approx_dp_to_zcdp(1e-9, 0.5)
    assert rho == pytest.approx(0.385756, rel=1e-5)
    assert _gaussian_delta(rho, 1e-9) <= 0.5


def _random_pairs(n, seed):
    rng = np.random.default_rng(seed)
    eps = 10.0 ** rng.uniform(-6, 3, n)
    delta = 10.0 ** rng.uniform(-300, math.log10(0.5), n)
    return [(float(e), float(d)) for e, d in zip(eps, delta)]


def _grid_pairs():
    return [(float(e), float(d)) for e in np.geomspace(1e-6, 1e3, 40)
            for d in (1e-300, 1e-100, 1e-20, 1e-10, 1e-6, 1e-3, 0.1, 0.5)]


@pytest.mark.parametrize("method", ["cks", "bun-steinke"])
def test_approx_dp_to_zcdp_never_overshoots_and_is_tight(method):
    for eps, delta in _random_pairs(2500, 1) + _grid_pairs():
        rho = fp.approx_dp_to_zcdp(eps, delta, method=method)
        back = fp.zcdp_to_approx_dp(rho, delta, method=method)
        assert back <= eps, (eps, delta)  # exactly, as computed
        assert back == pytest.approx(eps, rel=1e-9), (eps, delta)
        # the largest such rho up to a few ulps
        up = rho
        for _ in range(16):
            up = math.nextafter(up, math.inf)
        assert fp.zcdp_to_approx_dp(up, delta, method=method) > eps, (eps, delta)


def test_the_bun_steinke_closed_form_alone_overshoots():
    # the bug of issue 9: (sqrt(L + eps) - sqrt(L))^2 gives back eps + 1 ulp in ~20% of cases
    pairs = _random_pairs(1000, 2)
    over = 0
    for eps, delta in pairs:
        L = -math.log(delta)
        closed = (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2
        over += fp.zcdp_to_approx_dp(closed, delta, method="bun-steinke") > eps
        rho = fp.approx_dp_to_zcdp(eps, delta, method="bun-steinke")
        assert rho <= closed
        assert fp.zcdp_to_approx_dp(rho, delta, method="bun-steinke") <= eps
    assert over > 0


@pytest.mark.parametrize("method", ["cks", "bun-steinke"])
@pytest.mark.parametrize("delta", [1e-300, 1e-30, 1e-6, 0.01, 0.5])
def test_conversions_are_monotone_and_finite_over_wide_ranges(method, delta):
    rhos = np.geomspace(1e-8, 1e4, 1500)
    eps = [fp.zcdp_to_approx_dp(float(r), delta, method=method) for r in rhos]
    assert all(math.isfinite(e) and e >= 0.0 for e in eps)
    assert all(b >= a for a, b in zip(eps, eps[1:]))
    assert all(b > a for a, b in zip(eps, eps[1:]) if a > 0.0)
    epss = np.geomspace(1e-6, 1e3, 1500)
    rho = [fp.approx_dp_to_zcdp(float(e), delta, method=method) for e in epss]
    assert all(math.isfinite(r) and r > 0.0 for r in rho)
    assert all(b > a for a, b in zip(rho, rho[1:]))


@pytest.mark.parametrize("method", ["cks", "bun-steinke"])
def test_extreme_inputs_do_not_overflow(method):
    for rho in (5e-324, 1e-300, 1e300, 1.7e308):
        for delta in (5e-324, 1e-300, 0.5, 1 - 2.0 ** -53):
            eps = fp.zcdp_to_approx_dp(rho, delta, method=method)
            assert not math.isnan(eps) and eps >= 0.0
    for eps in (1e-150, 1e300, 1.7e308):
        for delta in (5e-324, 1e-300, 0.5, 1 - 2.0 ** -53):
            rho = fp.approx_dp_to_zcdp(eps, delta, method=method)
            assert 0.0 < rho < math.inf
            assert fp.zcdp_to_approx_dp(rho, delta, method=method) <= eps
    with pytest.raises(ValueError, match="too small"):
        fp.approx_dp_to_zcdp(1e-300, 1e-300, method=method)


@pytest.mark.parametrize("bad", ["CKS", "rdp", "", None, 1])
def test_unknown_conversion_method_is_rejected(bad):
    for call in (lambda: fp.zcdp_to_approx_dp(0.1, 1e-6, method=bad),
                 lambda: fp.approx_dp_to_zcdp(1.0, 1e-6, method=bad),
                 lambda: privacy.resolve_rho(epsilon=1.0, delta=1e-6, method=bad),
                 lambda: privacy.resolve_rho(0.1, method=bad)):
        with pytest.raises(ValueError, match="'cks', 'bun-steinke'"):
            call()


def test_resolve_rho_uses_cks_by_default():
    rho = privacy.resolve_rho(epsilon=2.0, delta=1e-6)
    assert rho == fp.approx_dp_to_zcdp(2.0, 1e-6, method="cks")
    bs = privacy.resolve_rho(epsilon=2.0, delta=1e-6, method="bun-steinke")
    assert bs == fp.approx_dp_to_zcdp(2.0, 1e-6, method="bun-steinke")
    assert rho > 1.3 * bs  # CKS allows about 30% more rho, hence less noise
    assert privacy.resolve_rho(0.25) == 0.25


@pytest.mark.parametrize("delta, step", [
    (1e-5, 2.0 ** -21),     # 1e-5 / 16 = 6.25e-7, between 2**-21 and 2**-20
    (1.0, 1 / 16),          # a power of two: Delta / 16 exactly
    (2.0 ** -17, 2.0 ** -21),
    (0.3, 2.0 ** -6),       # 0.01875 -> 0.015625
    (1e300, 2.0 ** 992),    # 1e300 / 16 = 6.25e298, 2**992 = 4.19e298
    (1e-310, 2.0 ** -1034),  # subnormal Delta: still a power of two below Delta / 16
])
def test_default_discretization_is_the_largest_power_of_two_below_delta_over_16(delta, step):
    s = privacy.default_discretization(delta)
    assert s == step and privacy.is_power_of_two(s)
    assert s <= delta / 16 < 2 * s
    # D_s = s ceil(Delta / s) <= Delta + s <= (17/16) Delta
    assert delta <= privacy.discretized_sensitivity(delta, s) <= delta * 17 / 16 * (1 + 1e-15)


def test_default_discretization_costs_at_most_a_sixteenth_of_the_rate():
    rng = np.random.default_rng(3)
    for delta in 10.0 ** rng.uniform(-12, 6, 200):
        pamst = privacy.pamst_rate(0.5, delta, 100)
        fast = privacy.fast_pamst_rate(0.5, delta, 100)
        assert pamst * 16 / 17 * (1 - 1e-15) <= fast <= pamst
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            privacy.default_discretization(bad)
