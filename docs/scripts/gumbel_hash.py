"""The gumbel kernels' hashing loop alone: generator and skip bound, against the floor.

Times, by the process's CPU time on one thread, loops shaped as the dense kernel's hashing
loop (step s hashes the edges from vertex s to n - 1 - s vertices: n^2 / 2 edges in all)
with each combination of the noise source's generator (Philox-4x32-10, the former gumbel
stream and today's post-processing stream; Philox-2x32-10, today's gumbel stream) and the
skip bound (the first ``gumbel_upper``, with two int64 -> double conversions; the second,
with none, exponent and mantissa of q' taken apart (until 2026-11-27); today's
``gumbel_upper_eps``, one fixed-point conversion and EPS folded in), beside ``floor.py``'s
serial floor on a Uniform(0, 1) matrix::

    python docs/scripts/gumbel_hash.py --floor ../shared/bench/floor.py --n 4000 --repeat 7

The loops store the bound of every edge, as the kernel does; "bits only" stores the 53-bit
integers (no bound). Minimum of --repeat runs after a warm-up.
"""
import argparse
import importlib
import math
import os
import sys
import time

import numpy as np
from numba import njit

from fastpamst_nb import philox
from fastpamst_nb.gumbel import EPS, _small_to_float, gumbel_upper_eps

_MASK = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S21 = np.uint64(21)
_S11 = np.uint64(11)
# the former bound's constants (main before 2026-11-27)
_LN2_2M52 = math.log(2.0) * 2.0 ** -52 * (1.0 + 2.0 ** -40)
_ONE_BITS = np.int64(1023 << 52)
_TWO_53 = np.int64(1 << 53)


@njit(inline="always")
def _former_upper(m):
    e = np.float64(_TWO_53 - np.int64(m)) * (1.0 / 9007199254740992.0)
    return np.float64(_ONE_BITS - np.float64(e).view(np.int64)) * _LN2_2M52


_LN2_UP = math.log(2.0) * (1.0 + 2.0 ** -40)
_FRAC = np.int64((1 << 52) - 1)
_S52 = np.int64(52)


@njit(inline="always")
def _second_upper(m):
    # the second bound (2026-11-27 to the fourth pass): q' = floor((2**53 - m) / 2) as a
    # double, its exponent and mantissa taken apart
    q = _TWO_53 - np.int64(m)
    d = np.float64(max(_small_to_float(q >> np.int64(1)), 0.5))
    bits = d.view(np.int64)
    e = _small_to_float(bits >> _S52)
    mant = np.int64((bits & _FRAC) | _ONE_BITS).view(np.float64)
    return ((1076.0 - e) - mant) * _LN2_UP


@njit(inline="always")
def _first_eps(m):
    return _former_upper(m) + EPS


@njit(inline="always")
def _second_eps(m):
    return _second_upper(m) + EPS


@njit(inline="always")
def _bits4(ka, kb, c2, c3, i, j):
    # the former gumbel stream: the first uniform of the edge's Philox-4x32-10 block
    a = i if i < j else j
    b = j if i < j else i
    x0, x1, x2, x3 = philox.philox4x32_10(np.uint64(a) & _MASK, np.uint64(b) & _MASK, c2, c3,
                                          ka, kb)
    return (x0 << _S21) | (x1 >> _S11)


def _loop(bits, bound):
    @njit
    def run(n, kw, out, rest):
        ka, kb, c2, c3 = kw[0], kw[1], kw[2], kw[3]
        for s in range(n):
            for k in range(n - 1 - s):
                out[k] = bound(bits(ka, kb, c2, c3, s, rest[k]))  # EPS included
        return out[0]
    return run


def _bits_loop(bits):
    @njit
    def run(n, kw, out, rest):
        ka, kb, c2, c3 = kw[0], kw[1], kw[2], kw[3]
        for s in range(n):
            for k in range(n - 1 - s):
                out[k] = bits(ka, kb, c2, c3, s, rest[k])
        return out[0]
    return run


def _best(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        ts.append(time.process_time() - t)
    return min(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floor", required=True, help="path of shared/bench/floor.py")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.floor)))
    floor = importlib.import_module(os.path.splitext(os.path.basename(a.floor))[0])
    n = a.n
    W = np.random.default_rng(0).random((n, n))
    W = np.triu(W, 1)
    W = W + W.T
    kw = np.array(philox.key_words(*philox.draw_key(np.random.default_rng(1))), dtype=np.uint64)
    rest = np.arange(n, dtype=np.int64)
    out = np.empty(n)
    outb = np.empty(n, dtype=np.uint64)
    fl = _best(lambda: floor.floor_prim(W), a.repeat)
    print(f"n = {n}, load {os.getloadavg()[0]:.2f}, floor {fl:.4f} s (CPU)")
    rows = [("Philox-4x32-10, first bound", _loop(_bits4, _first_eps), out),
            ("Philox-4x32-10, today's bound", _loop(_bits4, gumbel_upper_eps), out),
            ("Philox-2x32-10, first bound", _loop(philox.bits_of_words, _first_eps), out),
            ("Philox-2x32-10, second bound", _loop(philox.bits_of_words, _second_eps), out),
            ("Philox-2x32-10, today's bound", _loop(philox.bits_of_words, gumbel_upper_eps), out),
            ("Philox-4x32-10, bits only", _bits_loop(_bits4), outb),
            ("Philox-2x32-10, bits only", _bits_loop(philox.bits_of_words), outb)]
    for name, run, o in rows:
        t = _best(lambda: run(n, kw, o, rest), a.repeat)
        print(f"{name:32s} {t:.4f} s  {t / fl:.2f}x floor")


if __name__ == "__main__":
    main()
