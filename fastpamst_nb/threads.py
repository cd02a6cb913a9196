"""Worker threads for the validation of a large input, the one pass more cores speed up.

The validation pass (``dense_scan._scan_dense``) reads the whole (n, n) matrix once and
is bound by memory bandwidth, which one core does not exhaust: on the project's
2-core machine a numba loop summing a 128 MB matrix streamed 9.7 GB/s on one core
and 19.3 GB/s split over two (2026-11-24). The pass's kernel releases the GIL
(``nogil=True``), so plain Python threads run its parts side by side; numba's own
threading layer is not needed (and its default layer aborts the process when two
user threads launch parallel kernels at once). What runs side by side: the parts
of a dense pass, a sparse input's two checks, and ``exact_mst``'s Prim beside its
validation (``as_graph(alongside=)``). The private Prim steps stay on one thread:
a step reads one row, a few microseconds of work, less than a thread hand-off.

How many threads: numba's ``NUMBA_NUM_THREADS`` (the environment variable numba
users already set to limit a program's threads; its default is the number of
CPUs), capped by the CPUs this process may run on. ``NUMBA_NUM_THREADS=1`` runs
everything on the calling thread.

After ``fork`` (``multiprocessing``'s default start method on Linux) a child inherits
the pool object but not its threads, and a pass submitted to it would wait forever:
the child starts a pool of its own. A child forked after numba's OpenMP threading
layer started may not launch a ``prange`` kernel at all (GNU OpenMP is not fork-safe;
numba terminates the child): there :func:`prange_threads` is 1 and the releases run
their serial kernels, which give the same tree.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba

_pool = None
_pool_size = 0
_pool_lock = threading.Lock()
# this process was forked from one whose numba OpenMP layer had started
_omp_forked = False


def _omp_started():
    """Whether numba's threading layer has started, with OpenMP."""
    try:
        return numba.threading_layer() == "omp"
    except ValueError:  # not started: numba raises until a parallel kernel has run
        return False


def _after_fork_in_child():
    global _pool, _pool_size, _pool_lock, _omp_forked
    _pool = None  # the parent's pool has no threads here
    _pool_size = 0
    _pool_lock = threading.Lock()
    _omp_forked = _omp_forked or _omp_started()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def thread_count():
    """Threads a dense validation pass may use: ``numba.config.NUMBA_NUM_THREADS``
    capped by the CPUs this process may run on (at least 1)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS, Windows)
        cpus = os.cpu_count() or 1
    return max(1, min(int(numba.config.NUMBA_NUM_THREADS), cpus))


def prange_threads():
    """Threads a ``prange`` kernel may use: numba's current thread count
    (``numba.get_num_threads()``), or 1 in a child forked after numba's OpenMP layer
    started (see the module's docstring)."""
    return 1 if _omp_forked else numba.get_num_threads()


def forked_after_omp():
    """Whether this process was forked after numba's OpenMP layer started, where a
    ``prange`` kernel would terminate it (see the module's docstring)."""
    return _omp_forked


def _executor(workers):
    """A shared pool with at least ``workers`` threads, made on first use; its threads
    are idle between passes. A larger need makes a larger pool (the old one is not shut
    down: another thread may be submitting to it)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fastpamst_nb")
            _pool_size = workers
        return _pool


def run_side_by_side(calls):
    """Run the zero-argument callables ``calls`` at once, the first on this thread, and
    return their results in order.

    The calls must release the GIL (nogil kernels) to run in parallel. Ctrl-C while
    waiting interrupts the wait; a call already running in a worker finishes on its own
    in the background (the validation's parts are chunks of ~0.1 s; ``exact_mst``'s Prim,
    which was never interruptible, runs to its end).
    """
    if len(calls) == 1:
        return [calls[0]()]
    # a pool of every thread the process may use, so that a call running beside a scan
    # (``dense_scan._scan_dense(alongside=)``) leaves the scan's own parts a thread each
    pool = _executor(max(len(calls) - 1, thread_count()))
    futures = [pool.submit(call) for call in calls[1:]]
    first = calls[0]()
    return [first] + [f.result() for f in futures]
