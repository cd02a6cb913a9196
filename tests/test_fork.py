"""Releases in a child process forked after the parent ran releases (multiprocessing's
default start method on Linux): the parent's validation pool has no threads there, and
numba's OpenMP layer, once started, ends a child that launches a ``prange`` kernel.
Both used to leave ``Pool.map`` waiting forever; the child must give the parent's trees."""

import multiprocessing
import os

import numba
import numpy as np
import pytest
from numba import njit, prange

import fastpamst_nb as fp
from fastpamst_nb import points, threads

pytestmark = pytest.mark.skipif(
    not hasattr(os, "register_at_fork") or "fork" not in multiprocessing.get_all_start_methods(),
    reason="no fork on this platform")

# dense: past dense_scan's threaded size (2**20 entries), so the parent's pool exists;
# points: past points.PARALLEL_MIN_N, so with two threads the parent runs the shared
# (prange) kernel
N_DENSE = 1100
N_POINTS = points.PARALLEL_MIN_N + 100


@njit(parallel=True)
def _prange_sum(a):  # starts numba's threading layer in the parent
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i]
    return s


def _inputs():
    rng = np.random.default_rng(5)
    W = rng.random((N_DENSE, N_DENSE))
    return W + W.T, rng.random((N_POINTS, 2))


def _releases():
    W, X = _inputs()
    return [fp.exact_mst(W).edges,
            fp.fast_pamst(W, 0.1, 0.01, rng=1).edges,
            fp.exact_mst(X, metric="euclidean").edges,
            fp.fast_pamst(X, 0.1, 0.01, rng=1, metric="euclidean").edges]


def _child(_):
    return threads.forked_after_omp(), _releases()


def test_a_forked_child_releases_what_the_parent_does():
    _prange_sum(np.ones(64))
    parent = _releases()
    omp = numba.threading_layer() == "omp"
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        # a wait that cannot end would hang the suite: fail after two minutes instead
        [(flagged, child)] = pool.map_async(_child, [0]).get(timeout=120)
    assert flagged == omp  # the child knows whether its prange kernels are off
    assert len(child) == len(parent)
    for a, b in zip(parent, child):
        np.testing.assert_array_equal(a, b)
    assert not threads.forked_after_omp()  # the parent keeps its threads
