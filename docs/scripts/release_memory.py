"""Peak RSS growth of one fast_pamst release, by the shape of the weights (docs/design.rst,
What a release allocates).

    python docs/scripts/release_memory.py N CASE [NOISE] [SENSITIVITY]

CASE is uniform, equal, ints, outlier or pareto. The kernels are warmed up and W is
built first; a thread then samples VmRSS (Linux) every 0.5 ms during the release.
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
    sensitivity = float(argv[3]) if len(argv) > 3 else 1e-5
    fp.fast_pamst(np.ones((50, 50)), 1.0, 1.0, rng=0, noise=noise)  # compile first
    W = weights(n, case, np.random.default_rng(0))
    before = rss_bytes()
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.0005)

    thread = threading.Thread(target=sample)
    thread.start()
    fp.fast_pamst(W, 0.1, sensitivity, rng=0, noise=noise)
    peak[0] = max(peak[0], rss_bytes())
    done.set()
    thread.join()
    slots = 8 * n * (n - 1) // 2
    print(f"n = {n}, {case}, {noise}, sensitivity = {sensitivity:g}: peak RSS growth "
          f"{(peak[0] - before) / 2**20:.1f} MiB (slot store {slots / 2**20:.1f} MiB, W {W.nbytes / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
