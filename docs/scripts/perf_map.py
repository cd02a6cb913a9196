"""Profile the sparse Prim kernel with Linux ``perf``, JIT symbols included.

``perf`` names the machine code numba generates only if the process writes a
map file ``/tmp/perf-<pid>.map`` ("start size name" per line, hexadecimal);
otherwise every sample lands in an anonymous region. This script compiles the
kernel in memory (a cache-loaded library keeps no function list, so point
``NUMBA_CACHE_DIR`` at an empty directory), writes the map from the compiled
module, then times a few releases' Prim phase (design.rst, "Profiling the
kernels")::

    export NUMBA_CACHE_DIR=$(mktemp -d)
    perf record -F 2000 -o sparse.data python docs/scripts/perf_map.py --n 100000
    perf report -i sparse.data --no-children --sort dso,symbol

``perf record -p PID`` on a running process recorded no JIT samples here; run
the script under ``perf record`` as above.
"""
import argparse
import os
import time

import numpy as np

from fastpamst_nb import api, bench, cutqueue_build, prim, privacy, sampler
from fastpamst_nb.graph import as_graph

RHO, DELTA = 0.1, 1e-5


def write_perf_map(dispatchers):
    """Write /tmp/perf-<pid>.map for every compiled overload of `dispatchers`.

    Numba links a kernel's callees into its final module, so the top-level
    dispatcher's module names the whole call tree. A function's size is taken
    as the distance to the next symbol (at most 1 MiB).
    """
    symbols = []
    for dispatcher in dispatchers:
        for cres in dispatcher.overloads.values():
            library = cres.library
            module = getattr(library, "_final_module", None)
            if module is None:
                raise RuntimeError("no in-memory module: set NUMBA_CACHE_DIR to an empty directory")
            for function in module.functions:
                if function.is_declaration:
                    continue
                address = library.get_pointer_to_function(function.name)
                if address:
                    symbols.append((address, function.name))
    symbols.sort()
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as fh:
        for i, (address, name) in enumerate(symbols):
            size = symbols[i + 1][0] - address if i + 1 < len(symbols) else 4096
            short = name.split("fastpamst_nb")[-1] if "fastpamst_nb" in name else name
            fh.write(f"{address:x} {min(size, 1 << 20):x} {short[:100]}\n")
    return path, len(symbols)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.n
    g = as_graph(bench.sparse_topology(n))
    s = privacy.default_discretization(DELTA)
    key_rate = privacy.fast_pamst_key_rate(RHO, DELTA, n, s, "exponential")  # lam * s

    def prim_phase(seed):
        q = cutqueue_build.gq_build(g, -1, s, key_rate, api.DEFAULT_BUCKET_WIDTH)
        visited = np.zeros(n, np.bool_)
        edges = np.empty((n - 1, 2), np.int64)
        stats = np.zeros(sampler.N_STATS, np.int64)
        t0 = time.perf_counter()
        prim.prim_csr_private(q, g, visited, edges, 0, n - 1, 0,
                              key_rate, api.DEFAULT_THETA, api.DEFAULT_BUCKET_WIDTH,
                              np.random.default_rng(seed), stats)
        return time.perf_counter() - t0

    prim_phase(0)  # compile before the map is written and the timings start
    path, count = write_perf_map([prim.prim_csr_private])
    print(f"{count} JIT symbols in {path}")
    times = [prim_phase(seed) for seed in range(1, args.repeat + 1)]
    print(f"Prim phase, n = {n}, m = {g.indices.size // 2}: "
          f"median {np.median(times):.3f} s over {args.repeat} releases")


if __name__ == "__main__":
    main()
