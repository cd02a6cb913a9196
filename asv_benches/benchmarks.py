"""airspeed velocity benchmarks of fastpamst_nb on the paper's default problem.

Every benchmark uses a complete graph whose weights are i.i.d. Uniform(0, 1)
(:func:`fastpamst_nb.bench.uniform_weights`, fixed seed), with rho = 0.1 and
sensitivity = 1e-5 (docs/user_guide.rst, Speed). ``setup`` builds the matrix and warms the
numba JIT with a call on a 16-vertex graph, so ``time_*`` measures steady-state
runs of the algorithm alone.

Run from the repository root::

    asv run --python=same --quick        # the current environment, no build
    asv continuous main HEAD             # compare two commits

Sizes and seeds are class attributes (``params`` for the timed benchmarks,
``n``/``pamst_n`` for the tracks) so that ``tests/test_asv_benches.py`` can
run every benchmark once on tiny graphs.
"""

import statistics
import time

from fastpamst_nb import api, bench
from fastpamst_nb.bench import uniform_weights

RHO = 0.1
SENSITIVITY = 1e-5
SEED = 0
WARM_N = 16
NOISES = ("exponential", "gumbel")


def _fast_pamst(W, noise="exponential", seed=SEED):
    return api.fast_pamst(W, rho=RHO, sensitivity=SENSITIVITY, rng=seed, noise=noise)


def _pamst(W, seed=SEED):
    return api.pamst(W, rho=RHO, sensitivity=SENSITIVITY, rng=seed, noise="exponential")


def _post_processing(W, seed=SEED):
    return api.post_processing(W, rho=RHO, sensitivity=SENSITIVITY, rng=seed)


def _warm(*calls):
    """Compile (or load from the numba cache) the kernels behind each callable(W)."""
    W = uniform_weights(WARM_N, seed=SEED)
    for call in calls:
        call(W)


def _median_seconds(call, W, repeat=3):
    """Median wall-clock seconds of ``call(W)`` over ``repeat`` runs (time.perf_counter)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call(W)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class ExactMST:
    """Exact dense Prim: the floor no in-place private algorithm can beat."""

    params = [500, 2000, 5000]
    param_names = ["n"]
    timeout = 120

    def setup(self, n):
        _warm(api.exact_mst)
        self.W = uniform_weights(n, seed=SEED)

    def time_exact_mst(self, n):
        """Seconds for one exact MST of the n-vertex complete graph."""
        api.exact_mst(self.W)


class FastPAMST:
    """Fast-PAMST with the paper's exponential noise and with the Gumbel (exponential mechanism) variant."""

    params = [[500, 2000, 5000], list(NOISES)]
    param_names = ["n", "noise"]
    timeout = 300

    def setup(self, n, noise):
        _warm(lambda W: _fast_pamst(W, noise))
        self.W = uniform_weights(n, seed=SEED)

    def time_fast_pamst(self, n, noise):
        """Seconds for one private release with fast_pamst (queue build + n - 1 selections)."""
        _fast_pamst(self.W, noise)


class FastPAMSTMemory:
    """Peak memory of a fast_pamst release.

    asv reports the peak resident set size of the whole benchmark process, so the
    figure includes the interpreter, numba and its loaded kernels (~200-250 MB),
    and the 8 n^2-byte weight matrix built in ``setup``; the algorithm's own extra
    memory is the rest (O(n + G) plus int64 slots for the few buckets the sampler
    materializes, measured at 0.06x the matrix at n = 4000).
    """

    params = [2000, 5000]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        _warm(_fast_pamst)
        self.W = uniform_weights(n, seed=SEED)

    def peakmem_fast_pamst(self, n):
        """Peak process memory (bytes) while releasing one fast_pamst tree."""
        _fast_pamst(self.W)


class PostProcessing:
    """Gaussian post-processing (Sealfon): noise every edge once, then an exact MST."""

    params = [500, 2000, 5000]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        _warm(_post_processing)
        self.W = uniform_weights(n, seed=SEED)

    def time_post_processing(self, n):
        """Seconds for one post_processing release (noisy copy of the matrix + dense Prim)."""
        _post_processing(self.W)


class PAMST:
    """PAMST (Pinot): fresh noise for every cut edge at every step, O(n^3) on a dense graph."""

    params = [200, 800]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        _warm(_pamst)
        self.W = uniform_weights(n, seed=SEED)

    def time_pamst(self, n):
        """Seconds for one pamst release."""
        _pamst(self.W)


class Utility:
    """Excess weight over the exact MST (lower is better) of each private algorithm, seed 0.

    fast_pamst and post_processing run on n = 2000 vertices; pamst, which is
    O(n^3), on n = 800. The values are deterministic for a given code version,
    so a change flags a change in the released trees' distribution or seeding.
    """

    unit = "weight"
    timeout = 300
    n = 2000
    pamst_n = 800

    def setup(self):
        _warm(api.exact_mst, _fast_pamst, lambda W: _fast_pamst(W, "gumbel"), _pamst, _post_processing)
        self.W = uniform_weights(self.n, seed=SEED)
        self.W_pamst = uniform_weights(self.pamst_n, seed=SEED)

    def track_excess_fast_pamst_exponential(self):
        """Excess weight of fast_pamst(noise="exponential") at n = 2000."""
        return api.excess_weight(self.W, _fast_pamst(self.W, "exponential"))

    def track_excess_fast_pamst_gumbel(self):
        """Excess weight of fast_pamst(noise="gumbel") at n = 2000."""
        return api.excess_weight(self.W, _fast_pamst(self.W, "gumbel"))

    def track_excess_pamst(self):
        """Excess weight of pamst at n = 800."""
        return api.excess_weight(self.W_pamst, _pamst(self.W_pamst))

    def track_excess_post_processing(self):
        """Excess weight of post_processing (correct Gaussian calibration) at n = 2000."""
        return api.excess_weight(self.W, _post_processing(self.W))


class FloorRatio:
    """Each case's time divided by the floor's (:func:`fastpamst_nb.bench.floor_prim`, a
    textbook dense Prim) on the same n = 4000 matrix: the "x floor" of the README.

    Both are timed in one process with time.perf_counter (median of 3 runs each), so
    the ratio is largely independent of the machine's speed. The cases are those of
    ``fastpamst bench``: both noises at the default discretization, on the weights
    x 1000 and x 10**6 and at discretization = sensitivity / 16 (the cliffs).
    """

    unit = "x floor"
    timeout = 600
    n = 4000
    params = [[c for c in bench.ALGORITHMS if c not in ("floor", "pamst", "numpy+scipy")]]
    param_names = ["case"]

    def setup(self, case):
        self.run, scale = bench.runners()[case]
        floor = bench.runners()["floor"][0]
        W = uniform_weights(8, seed=SEED)
        floor(W, 0)
        self.run(W * scale, 0)
        self.W = uniform_weights(self.n, seed=SEED)
        self.W_case = self.W * scale if scale != 1.0 else self.W
        self.floor = floor

    def track_x_floor(self, case):
        """median time of the case / median time of the floor (dimensionless)."""
        return (_median_seconds(lambda W: self.run(W, 0), self.W_case)
                / _median_seconds(lambda W: self.floor(W, 0), self.W))


class SparseRatio:
    """fast_pamst on a random sparse graph (m ~ 6n, n = 100,000) over scipy's
    minimum_spanning_tree on the same graph (median of 3 runs each)."""

    unit = "x scipy"
    timeout = 600
    n = 100_000

    def setup(self):
        bench.run_sparse_bench(16, repeat=1)  # compile

    def track_x_scipy(self):
        """median time of fast_pamst / median time of scipy's MST (dimensionless)."""
        out = bench.run_sparse_bench(self.n, repeat=3)
        return out["fast_pamst"] / out["scipy_mst"]


class ShapeRatio:
    """fast_pamst(noise="exponential") on weights shaped like real data (issue 31:
    an outlier, Pareto, far clusters, huge integers, log-normal;
    :data:`fastpamst_nb.bench.SHAPES`): dense n = 4000 over the floor on the same
    matrix, sparse n = 20,000 (about 3 edges a vertex) over scipy's
    minimum_spanning_tree (median of 3 runs each), and the sparse rows again at
    sensitivity 0.1 (``WIDE_SENSITIVITY``: the wide-group regime, where a few groups hold
    most cut edges). ``fastpamst bench --shapes --sensitivity 1e-5 0.1`` prints the same
    table."""

    unit = "ratio"
    timeout = 900
    n = 4000
    sparse_n = 20_000
    params = [list(bench.SHAPES)]
    param_names = ["shape"]
    WIDE_SENSITIVITY = 0.1

    def setup(self, shape):
        # compile the layout this shape takes (a crowded dense range is compressed from
        # ~100 vertices on, wide below)
        _fast_pamst(bench.shape_weights(shape, 120))
        _fast_pamst(bench.shape_weights(shape, 300, sparse=True))
        self._wide(bench.shape_weights(shape, 300, sparse=True))
        bench.floor_prim(uniform_weights(8, seed=SEED))
        self.W = bench.shape_weights(shape, self.n)
        self.A = bench.shape_weights(shape, self.sparse_n, sparse=True)

    def track_x_floor(self, shape):
        """median time of the dense release / median time of the floor (dimensionless)."""
        return _median_seconds(_fast_pamst, self.W) / _median_seconds(bench.floor_prim, self.W)

    def track_x_scipy(self, shape):
        """median time of the sparse release / median time of scipy's MST (dimensionless)."""
        from scipy.sparse.csgraph import minimum_spanning_tree

        return _median_seconds(_fast_pamst, self.A) / _median_seconds(minimum_spanning_tree, self.A)

    def _wide(self, A, seed=SEED):
        return api.fast_pamst(A, rho=RHO, sensitivity=self.WIDE_SENSITIVITY, rng=seed, noise="exponential")

    def track_x_scipy_wide(self, shape):
        """the sparse ratio at sensitivity 0.1 (dimensionless)."""
        from scipy.sparse.csgraph import minimum_spanning_tree

        return _median_seconds(self._wide, self.A) / _median_seconds(minimum_spanning_tree, self.A)
