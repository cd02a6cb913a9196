"""Long jitted loops run in chunks of steps, so that Ctrl-C stops them.

A numba kernel cannot be interrupted: Python raises ``KeyboardInterrupt`` only
when control comes back to the interpreter. Every driver whose run can take long
(private Prim: n - 1 selections; PAMST: O(n^3)) is therefore written as a
resumable kernel that advances its state by k steps, and :func:`run_in_chunks`
calls it with k grown or shrunk so that one call takes about ``target`` seconds.
The state lives in arrays the kernel updates in place, so chunking changes
nothing in the output (the same random stream is consumed in the same order).
"""

import time

# seconds one chunk aims at: Ctrl-C is honoured within about a second even when a
# single step is as slow as the target, and the per-call overhead is noise beside it
TARGET_SECONDS = 0.1


def run_in_chunks(advance, n_steps, target=TARGET_SECONDS, callback=None, first=1):
    """Call ``advance(start, k)`` on consecutive chunks [start, start + k) of range(n_steps).

    Parameters
    ----------
    advance : callable (int, int) -> None
        Runs steps ``start .. start + k - 1``; it must carry the state itself.
    n_steps : int
    target : float
        Seconds a chunk aims at: the chunk size doubles while chunks are faster
        than a quarter of it and halves when one is slower.
    callback : callable (int) -> None, optional
        Called with ``k`` after each chunk of ``k`` steps has run (e.g. a progress
        bar's ``update``); the ``k`` of all calls sum to ``n_steps``. It runs
        between kernel calls, so it cannot change the output.
    first : int
        Steps of the first chunk (>= 1), for a caller that knows a bound on a step's
        cost.

    Notes
    -----
    The size starts at ``first`` = 1 by default, so a run whose every step is slow
    (dense PAMST at large n) still returns to Python after each step.
    """
    done = 0
    size = max(1, first)
    while done < n_steps:
        k = min(size, n_steps - done)
        t0 = time.perf_counter()
        advance(done, k)
        elapsed = time.perf_counter() - t0
        done += k
        if callback is not None:
            callback(k)
        if elapsed < target / 4:
            size *= 2
        elif elapsed > target:
            size = max(1, size // 2)
