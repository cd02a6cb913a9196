"""The one list of the algorithms (fastpamst_nb.registry) and the places that read it."""

import numpy as np
import pytest

import fastpamst_nb as fp
from fastpamst_nb import bench, cli, experiments, registry
from fastpamst_nb.experiments import post_processing_paper

RHO, DELTA = 0.5, 0.01


def _direct(name, W, seed):
    """Each series as its API call, written out (what the registry must reproduce)."""
    calls = {
        "fast_pamst": lambda: fp.fast_pamst(W, RHO, DELTA, rng=seed, noise="exponential", discretization=DELTA),
        "fast_pamst_gumbel": lambda: fp.fast_pamst(W, RHO, DELTA, rng=seed, noise="gumbel"),
        "fast_pamst_default": lambda: fp.fast_pamst(W, RHO, DELTA, rng=seed, noise="exponential"),
        "fast_pamst_gumbel_default": lambda: fp.fast_pamst(W, RHO, DELTA, rng=seed, noise="gumbel"),
        "pamst": lambda: fp.pamst(W, RHO, DELTA, rng=seed, noise="exponential"),
        "post_processing": lambda: fp.post_processing(W, RHO, DELTA, rng=seed),
        "post_processing_paper": lambda: post_processing_paper(W, RHO, DELTA, seed),
        "exact": lambda: fp.exact_mst(W),
    }
    return calls[name]()


@pytest.mark.parametrize("name", list(registry.SERIES))
def test_release_is_the_series_api_call(name):
    W = bench.uniform_weights(7, seed=2)
    for seed in range(3):
        got = registry.release(name, W, rho=RHO, sensitivity=DELTA, rng=seed)
        want = _direct(name, W, seed)
        assert np.array_equal(got.edges, want.edges)



def test_release_passes_every_option():
    # release and bench_release are one function (registry._run): an option the
    # algorithm does not take is refused, never dropped (post_processing_paper included)
    W = bench.uniform_weights(7, seed=2)
    for name in ("post_processing_paper", "post_processing", "fast_pamst"):
        with pytest.raises(TypeError, match="no_such_option"):
            registry.release(name, W, rho=RHO, sensitivity=DELTA, rng=0, no_such_option=1)
    a = registry.release("post_processing_paper", W, rho=RHO, sensitivity=DELTA, rng=3)
    b = post_processing_paper(W, RHO, DELTA, 3)
    assert np.array_equal(a.edges, b.edges) and a.info["sigma"] == b.info["sigma"]
    # a sensitivity among a case's options replaces the argument
    gum = registry.bench_release("fast_pamst_gumbel D=0.1", W, RHO, DELTA, 4)
    assert gum.info["sensitivity"] == 0.1
    assert np.array_equal(gum.edges, fp.fast_pamst(W, RHO, 0.1, rng=4, noise="gumbel").edges)


def test_every_reader_takes_its_names_from_the_registry():
    assert cli.ALGORITHMS == ("fast_pamst", "fast_pamst_gumbel", "pamst", "post_processing", "exact")
    assert experiments.ALGORITHMS == tuple(registry.SERIES)
    assert set(experiments.LABELS) == set(experiments.STYLES) == set(registry.SERIES)
    assert bench.ALGORITHMS == ("floor", *registry.BENCH_CASES, "numpy+scipy")
    assert list(bench.runners()) == list(bench.ALGORITHMS)
    for case in registry.BENCH_CASES.values():
        assert case.algorithm in registry.ALGORITHMS
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        registry.release("nope", np.zeros((2, 2)))
