"""Privacy accounting: the calibration table of NOTES section 1 and the zCDP conversions."""

import math

import numpy as np
import pytest

import fastpamst_nb as fp
from fastpamst_nb import privacy


def test_rates_match_the_table():
    rho, delta_, n, s = 0.3, 0.02, 11, 0.005
    # sqrt(2 rho/(n-1)) / (2 Delta) etc., written out independently
    assert privacy.pamst_rate(rho, delta_, n) == pytest.approx(math.sqrt(0.06) / 0.04, rel=1e-15)
    assert privacy.pamst_rate(rho, delta_, n, "gumbel") == pytest.approx(math.sqrt(0.24) / 0.04, rel=1e-15)
    assert privacy.fast_pamst_rate(rho, delta_, n) == pytest.approx(math.sqrt(0.06) / 0.08, rel=1e-15)
    assert privacy.fast_pamst_rate(rho, delta_, n, s) == pytest.approx(math.sqrt(0.06) / 0.05, rel=1e-15)
    assert privacy.fast_pamst_rate(rho, delta_, n, s, "gumbel") == pytest.approx(math.sqrt(0.24) / 0.05, rel=1e-15)
    # the exponential mechanism's bounded-range accounting doubles the rate
    assert privacy.fast_pamst_rate(rho, delta_, n, noise="gumbel") == pytest.approx(
        2 * privacy.fast_pamst_rate(rho, delta_, n), rel=1e-15)
    assert privacy.gaussian_sigma(rho, delta_, 55) == pytest.approx(0.02 * math.sqrt(55 / 0.6), rel=1e-15)
    assert privacy.paper_gaussian_sigma(rho, delta_, n) == pytest.approx(math.sqrt(121 * 0.02 / 0.6), rel=1e-15)
    assert privacy.pamst_rate(rho, delta_, 1) == math.inf


@pytest.mark.parametrize("rho, delta, eps", [
    # eps = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3), by hand
    (0.1, 1e-6, 0.1 + 2 * math.sqrt(0.1 * 6 * math.log(10))),
    (1.0, 1e-5, 1.0 + 2 * math.sqrt(5 * math.log(10))),
    (0.5, math.exp(-2.0), 0.5 + 2 * math.sqrt(1.0)),
])
def test_zcdp_to_approx_dp_known_values(rho, delta, eps):
    assert fp.zcdp_to_approx_dp(rho, delta) == pytest.approx(eps, rel=1e-14)
    assert fp.approx_dp_to_zcdp(eps, delta) == pytest.approx(rho, rel=1e-12)


def test_conversions_are_inverse_over_a_grid():
    for rho in np.geomspace(1e-6, 1e3, 19):
        for delta in (1e-12, 1e-6, 0.01, 0.5):
            eps = fp.zcdp_to_approx_dp(rho, delta)
            assert fp.approx_dp_to_zcdp(eps, delta) == pytest.approx(rho, rel=1e-10)


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
