"""Issue 25: nothing data-dependent in what a release shows.

Neighbouring inputs (every entry moved by at most the sensitivity) must give the
same visible outcome: both released, or both refused with the same message. And
every noise parameter is a finite positive number, or the call is refused.
"""

import math

import numpy as np
import pytest

import fastpamst_nb as fp
from fastpamst_nb import core, privacy
from fastpamst_nb.api import DEFAULT_BUCKET_WIDTH
from fastpamst_nb.keys import bucket_shift_for
from fastpamst_nb.cutqueue_build import _DIRECT_SLACK, queue_memory_bytes


def uniform(n, seed):
    rng = np.random.default_rng(seed)
    W = np.triu(rng.random((n, n)), 1)
    return W + W.T


def outcome(call):
    """("released", edges) or ("refused", message)."""
    try:
        return "released", call().edges.tolist()
    except ValueError as exc:
        return "refused", str(exc)


# ----------------------------------------------------------------------------- memory


def _layout_pair(n, rho, delta):
    """Two neighbouring matrices on either side of the queue's direct/compressed threshold:
    Uniform(0, 1) weights (one of them 0) and one far edge, moved by ``delta``."""
    s = privacy.default_discretization(delta)
    r = privacy.fast_pamst_key_rate(rho, delta, n, s)
    m = n * (n - 1) // 2
    T = m // 4 + _DIRECT_SLACK  # the most buckets addressed directly
    bshift = bucket_shift_for(1 << 40, r, DEFAULT_BUCKET_WIDTH)
    # the far edge's key spans (T << bshift) - 8 keys below 0: T buckets; + delta (16 keys) T + 1
    x = s * ((T << bshift) - 8.5)
    W = uniform(n, 0)
    W[2, 3] = W[3, 2] = 0.0
    W[0, 1] = W[1, 0] = x
    V = W.copy()
    V[0, 1] = V[1, 0] = x + delta
    return W, V


def test_memory_refusal_does_not_depend_on_the_weights(monkeypatch):
    # issue 25 item 3: on main, with 80 MB available, the neighbour whose key range
    # needed a sorted layout (then a radix sort, ~80 MB; now compressed buckets) was refused
    # and the other released
    n, rho, delta = 1000, 1.0, 2.0 ** -4
    W, V = _layout_pair(n, rho, delta)
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 80 * 2**20)
    out = [outcome(lambda A=A: fp.fast_pamst(A, rho, delta, rng=0)) for A in (W, V)]
    assert [o[0] for o in out] == ["released", "released"], out
    # memory for the shape's figure but not for compressed buckets: the far neighbour runs in
    # the wide layout (exact, slower) instead of being refused
    monkeypatch.setattr(core, "_SMALL", 0)
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 12 * 2**20)
    assert queue_memory_bytes(n, n * (n - 1) // 2, True) < 0.9 * 12 * 2**20
    for A in (W, V):
        edges = np.array(fp.fast_pamst(A, rho, delta, rng=0).edges)
        assert edges.shape == (n - 1, 2) and sorted(edges[:, 1]) == list(range(1, n))  # a spanning tree
    monkeypatch.setattr(core, "_SMALL", 64 * 2**20)
    # with too little memory for this shape, both are refused with the same message
    monkeypatch.setattr(core, "available_memory_bytes", lambda: 2**20)
    big = 5000  # a shape whose public need is above require_memory's 64 MiB floor
    assert queue_memory_bytes(big, big * (big - 1) // 2, True) > 64 * 2**20
    out = {outcome(lambda A=A: fp.fast_pamst(A, rho, delta, rng=0))
           for A in (np.broadcast_to(1.0, (big, big)), np.broadcast_to(1e9, (big, big)))}
    assert len(out) == 1 and next(iter(out))[0] == "refused"


def test_queue_memory_is_a_function_of_the_shape_and_bounds_the_slot_store():
    # dense: the slot store (8 bytes an edge) and O(n) more; the figure grows with m only
    for n in (10, 1000, 80000):
        m = n * (n - 1) // 2
        need = queue_memory_bytes(n, m, True)
        assert 8 * m < need < 8.2 * m + 2**21
    # sparse: the figure covers the direct layout too (and the compressed one, the larger here)
    m = 10**6
    assert queue_memory_bytes(1000, m, False) >= 8 * m + 56 * (m // 4 + _DIRECT_SLACK)


# ----------------------------------------------------------------------------- key limit


def _far_pair(delta):
    """Neighbouring matrices whose largest weight sits just below 2**62 (in steps of 1)
    and just at it, the discretization s = 1 (a power of two)."""
    W = uniform(8, 1) * 1000.0
    W[0, 5] = W[5, 0] = 2.0 ** 62 - delta
    V = W.copy()
    V[0, 5] = V[5, 0] = 2.0 ** 62
    return W, V


def test_key_limit_refusal_without_bounds_names_bounds():
    delta = 512.0
    W, V = _far_pair(delta)
    call = lambda A: fp.fast_pamst(A, 1.0, delta, discretization=1.0, rng=0, noise="exponential")  # noqa: E731
    assert outcome(lambda: call(W))[0] == "released"
    kind, msg = outcome(lambda: call(V))
    assert kind == "refused"
    assert "public range" in msg and "bounds=(lo, hi)" in msg
    assert repr(2.0 ** 62) not in msg and "4611686018427387904" not in msg  # no weight quoted


def test_key_limit_with_bounds_depends_on_the_bounds_only():
    # issue 25 item 4: with public bounds, the neighbouring pair is released alike
    delta = 512.0
    W, V = _far_pair(delta)
    W0, V0 = W.copy(), V.copy()
    call = lambda A, b: fp.fast_pamst(A, 1.0, delta, discretization=1.0, rng=0, bounds=b,  # noqa: E731
                                      noise="exponential")
    for A in (W, V):
        assert outcome(lambda A=A: call(A, (0.0, 2.0 ** 61)))[0] == "released"
    # bounds whose keys do not fit are refused for every input, with one message
    out = {outcome(lambda A=A: call(A, (0.0, 2.0 ** 62))) for A in (W, V, uniform(8, 2))}
    assert len(out) == 1 and next(iter(out))[0] == "refused"
    assert "bounds" in next(iter(out))[1]
    assert np.array_equal(W, W0) and np.array_equal(V, V0)  # the input is never modified


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
def test_bounds_clip_before_discretizing(dtype, noise):
    # the release of W with bounds is the release of the clipped W (same seed, same
    # tree), and the tree keeps the true weights
    W = (uniform(30, 3) * 10.0 - 2.0).astype(dtype)
    b = (0.5, 6.0)
    C = np.clip(W, dtype(b[0]), dtype(b[1]))
    assert (W < b[0]).any() and (W > b[1]).any()
    W0 = W.copy()
    for maximum in (False, True):
        kw = dict(rho=2.0, sensitivity=0.25, rng=5, noise=noise, bounds=b, maximum=maximum)
        got, want = fp.fast_pamst(W, **kw), fp.fast_pamst(C, **kw)
        assert np.array_equal(got.edges, want.edges)
        assert got.info["bounds"] == b
        assert np.array_equal(got.edge_weights, W[got.edges[:, 0], got.edges[:, 1]].astype(np.float64))
    assert np.array_equal(W, W0)
    import scipy.sparse as sp
    S, SC = sp.csr_matrix(W.astype(np.float64)), sp.csr_matrix(C.astype(np.float64))
    kw = dict(rho=2.0, sensitivity=0.25, rng=5, noise=noise, bounds=b)
    assert np.array_equal(fp.fast_pamst(S, **kw).edges, fp.fast_pamst(SC, **kw).edges)


@pytest.mark.parametrize("bad, err", [((1.0,), TypeError), (3.0, TypeError), ((2.0, 1.0), ValueError),
                                      ((0.0, math.inf), ValueError), ((math.nan, 1.0), ValueError),
                                      (("a", 1.0), TypeError), ((1.0, 1.0), ValueError)])
def test_bad_bounds_are_refused_before_any_work(bad, err):
    with pytest.raises(err, match="bounds"):
        fp.fast_pamst(np.broadcast_to(1.0, (10**6, 10**6)), 1.0, 0.1, bounds=bad)


# ----------------------------------------------------------------------------- extremes

EXTREMES = [5e-324, 1e-310, 1e-300, 1e300, 1.7e308, math.inf, -math.inf, math.nan, 0.0, -1.0]
RATE_RANGE = (2.0 ** -1000, 2.0 ** 1000)


def _usable(x):
    """A noise rate or scale a release may use: finite, positive, with a finite inverse."""
    return isinstance(x, float) and RATE_RANGE[0] <= x <= RATE_RANGE[1]


def _refused_clearly(exc):
    """A ValueError whose message says something (names the parameter and the fix)."""
    return isinstance(exc, ValueError) and len(str(exc)) > 30


def _check(call):
    """The call returns a usable value, or raises a clear ValueError; which one it was."""
    try:
        value = call()
    except ValueError as exc:
        assert _refused_clearly(exc), exc
        return "refused"
    return value


def test_privacy_functions_at_the_extremes():
    # issue 25 item 1: every noise parameter privacy.py returns is finite and positive
    # (with a finite inverse), whatever the parameters, or it refuses with a ValueError
    values = EXTREMES + [1.0, 0.1]
    ns = [1, 2, 3, 10**6, 2**61, 0, -3]
    seen = 0
    for rho in values:
        for d in values:
            for n in ns:
                # the engines' rates: PAMST's two noises, the gumbel release's, Fast-PAMST's
                # exponential (its gumbel option, the retired discretized engine, is deprecated)
                for f, noise in ((privacy.pamst_rate, "exponential"), (privacy.pamst_rate, "gumbel"),
                                 (privacy.gumbel_rate, None), (privacy.fast_pamst_rate, "exponential"),
                                 (privacy.fast_pamst_key_rate, "exponential")):
                    out = _check(lambda: f(rho, d, n) if noise is None else f(rho, d, n, noise=noise))
                    assert out == "refused" or _usable(out), (f.__name__, rho, d, n, out)
                    seen += out != "refused"
                for s in (None, 5e-324, 1e-300, 1.0, 1e300, math.inf, math.nan, 0.0, -1.0):
                    out = _check(lambda: privacy.fast_pamst_key_rate(rho, d, n, s))
                    assert out == "refused" or _usable(out), (rho, d, n, s, out)
                for f in (privacy.gaussian_sigma, privacy.paper_gaussian_sigma):
                    out = _check(lambda: f(rho, d, n))
                    assert out == "refused" or _usable(out), (f.__name__, rho, d, n, out)
        for s in values:  # the step and the sensitivity of discretized scores: finite and positive
            out = _check(lambda: privacy.discretized_sensitivity(rho, s))
            assert out == "refused" or (math.isfinite(out) and out >= rho > 0), (rho, s, out)
        out = _check(lambda: privacy.default_discretization(rho))
        assert out == "refused" or (0 < out <= rho and privacy.is_power_of_two(out)), (rho, out)
    assert seen > 100  # sane parameters do give rates
    # the reviewer's case: Delta below ~1e-309 gave an inf rate (no noise)
    for d in (5e-324, 1e-310):
        with pytest.raises(ValueError, match="rescale"):
            privacy.pamst_rate(1.0, d, 10)
        assert _usable(privacy.fast_pamst_key_rate(1.0, d, 10))


def test_budget_conversions_at_the_extremes():
    for eps in EXTREMES + [1.0]:
        for delta in EXTREMES + [1e-6, 0.5, 1.0]:
            try:
                rho = privacy.resolve_rho(epsilon=eps, delta=delta)
            except ValueError as exc:
                assert _refused_clearly(exc), exc
                continue
            assert math.isfinite(rho) and rho > 0.0, (eps, delta, rho)


def _releases():
    """(name, call(W, rho, sensitivity, discretization)) of every public private release."""
    def private_weights(W, rho, d, s):
        tree = fp.exact_mst(W)
        w = fp.private_edge_weights(tree, rho, d, rng=0)
        assert np.all(np.isfinite(w))
        return {"sigma": privacy.gaussian_sigma(rho, d, W.shape[0] - 1)}

    return [
        ("fast_pamst", lambda W, rho, d, s: fp.fast_pamst(W, rho, d, discretization=s, rng=0).info),
        ("fast_pamst_gumbel",
         lambda W, rho, d, s: fp.fast_pamst(W, rho, d, discretization=s, noise="gumbel", rng=0).info),
        ("pamst", lambda W, rho, d, s: fp.pamst(W, rho, d, rng=0).info),
        ("post_processing", lambda W, rho, d, s: fp.post_processing(W, rho, d, rng=0).info),
        ("private_edge_weights", private_weights),
    ]


@pytest.mark.parametrize("name, release", _releases(), ids=[r[0] for r in _releases()])
def test_releases_at_the_extremes(name, release):
    # every public release either uses a finite positive noise parameter (read back from
    # its info) or refuses the parameters with a ValueError; never an inf/0 rate
    W = uniform(5, 4)
    released = 0
    for rho in (5e-324, 1e-300, 1.0, 1e300, 1.7e308, math.inf, math.nan, 0.0, -1.0):
        for d in (5e-324, 1e-310, 1e-300, 1.0, 1e300, 1.7e308, math.inf, math.nan, 0.0, -1.0):
            for s in ((None, 5e-324, 1e300, math.inf, 0.0) if "fast" in name else (None,)):
                A = W * d if 0.0 < d < 1.0 else W  # weights on the sensitivity's scale
                info = _check(lambda: release(A, rho, d, s))
                if info == "refused":
                    continue
                released += 1
                key = "sigma" if name in ("post_processing", "private_edge_weights") else "rate"
                assert _usable(info[key]), (name, rho, d, s, info[key])
                assert not any("time" in k or "second" in k for k in info)  # no wall time
    assert released > 0


def test_no_noise_at_subnormal_sensitivity_is_impossible():
    # the reviewer's reproducer: at Delta = 1e-310 the release was the exact tree
    W = uniform(6, 0) * 1e-310
    for call in (lambda: fp.fast_pamst(W, 1.0, 1e-310, rng=0), lambda: fp.pamst(W, 1.0, 1e-310, rng=0)):
        with pytest.raises(ValueError, match="rescale the weights and the sensitivity"):
            call()


def test_chow_liu_at_the_extremes():
    data = np.random.default_rng(0).integers(0, 2, size=(50, 4))
    for rho in (5e-324, 1e300, 1.7e308, math.inf, 0.0):
        for d in (None, 5e-324, 1e-310, 1e300, math.inf, 0.0):
            out = _check(lambda: fp.chow_liu(data, rho, sensitivity=d, n_categories=2, rng=0).info)
            assert out == "refused" or _usable(out["rate"]), (rho, d, out)
