"""Peak RSS growth of one fast_pamst release, by the shape of the weights (docs/design.rst,
What a release allocates).

    python docs/scripts/release_memory.py N CASE [NOISE] [SENSITIVITY]
    python docs/scripts/release_memory.py 12000 uniform exponential 1e-5 1e-3 0.1 1
    python docs/scripts/release_memory.py 12000 shape:outlier,shape:pareto exponential 1e-5 0.1
    python docs/scripts/release_memory.py 100000 sparse:uniform,sparse:integers exponential 1e-5 1

CASE is uniform, equal, ints, outlier or pareto, or ``shape:NAME`` for a row of
``fastpamst bench --shapes`` (``bench.SHAPES``: uniform, outlier, pareto, clusters,
integers, lognormal), or ``sparse:NAME`` for its sparse row (about 3 edges a vertex; the
input is then the CSR matrix's data, indices and indptr). Several sensitivities run one
after the other on the same W. The kernels are warmed up and W is built first; a thread
then samples VmRSS (Linux) every 0.5 ms during the release. CASE may list several,
separated by commas (one W at a time), each release in a process of its own. The growth
is printed in MiB and as a multiple of the input (W's bytes); a refusal is printed.
"""

import sys
import threading
import time

import numpy as np

import fastpamst_nb as fp


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmRSS in /proc/self/status")


def weights(n, case, rng):
    if case.startswith("shape:"):
        from fastpamst_nb import bench
        return bench.shape_weights(case[len("shape:"):], n)
    if case.startswith("sparse:"):
        from fastpamst_nb import bench
        return bench.shape_weights(case[len("sparse:"):], n, sparse=True)
    if case == "equal":
        return np.ones((n, n))
    if case == "ints":
        W = rng.integers(0, 3, (n, n)).astype(float)
    elif case == "pareto":
        W = rng.pareto(0.7, (n, n))
    else:
        W = rng.random((n, n))
    W = np.triu(W, 1)
    W = W + W.T
    if case == "outlier":
        W[0, 1] = W[1, 0] = 1e9
    return W


def main(argv):
    n, case = int(argv[0]), argv[1]
    noise = argv[2] if len(argv) > 2 else "exponential"
    sensitivities = [float(a) for a in argv[3:]] or [1e-5]
    cases = case.split(",")
    if len(cases) * len(sensitivities) > 1:
        # one process a release: pages a first release freed stay with the process, and a
        # second release in it reuses them without growing its RSS
        import subprocess
        for one in cases:
            for d in sensitivities:
                subprocess.run([sys.executable, __file__, str(n), one, noise, repr(d)], check=True)
        return
    fp.fast_pamst(np.ones((50, 50)), 1.0, 1.0, rng=0, noise=noise)  # compile first
    for one in case.split(","):
        measure(n, one, noise, sensitivities)


def measure(n, case, noise, sensitivities):
    W = weights(n, case, np.random.default_rng(0))
    for sensitivity in sensitivities:
        fp.fast_pamst(weights(120, case, np.random.default_rng(0)), 0.1, sensitivity, rng=0,
                      noise=noise)  # this layout's kernels
        before = rss_bytes()
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], rss_bytes())
                time.sleep(0.0005)

        thread = threading.Thread(target=sample)
        thread.start()
        try:
            fp.fast_pamst(W, 0.1, sensitivity, rng=0, noise=noise)
        except ValueError as e:  # a refusal (e.g. Pareto weights past the key limit)
            print(f"n = {n}, {case}, {noise}, sensitivity = {sensitivity:g}: refused: {e}", flush=True)
            continue
        finally:
            # a refusal must stop the sampler too: the process would wait for it forever
            peak[0] = max(peak[0], rss_bytes())
            done.set()
            thread.join()
        grow = peak[0] - before
        if case.startswith("sparse:"):
            size = W.data.nbytes + W.indices.nbytes + W.indptr.nbytes
            what = f"{W.nnz // 2} edges, CSR {size / 2**20:.1f} MiB"
        else:
            size = W.nbytes
            what = f"slot store {8 * n * (n - 1) // 2 / 2**20:.1f} MiB, W {size / 2**20:.1f} MiB"
        print(f"n = {n}, {case}, {noise}, sensitivity = {sensitivity:g}: peak RSS growth "
              f"{grow / 2**20:.1f} MiB = {grow / size:.3f}x the input ({what})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
