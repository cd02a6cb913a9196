"""Shared helpers: the numba caching switch, random generators and memory checks.

Every ``@njit`` in the package uses ``cache=CACHE`` so that one switch decides
whether compiled kernels are written to (and loaded from) ``__pycache__`` (the
style of fast_hdbscan). Caching matters: the first compile of all kernels takes
tens of seconds, a warm cache loads them in well under a second.

``CACHE`` is read once, when the package is imported, from the environment
variable ``FASTPAMST_NB_CACHE``:

- unset or empty: on (the default);
- ``1``, ``true``, ``yes`` or ``on`` (any case): on;
- ``0``, ``false``, ``no`` or ``off`` (any case): off, e.g. for a read-only
  install, a shared network file system or a profiling run that must compile;
- anything else: the import raises a ValueError naming the variable.

Changing the variable (or ``CACHE``) after the import has no effect on kernels
already decorated.

numba checks a cached kernel against the source of *its own* file only, but a
driver inlines kernels from other modules (``prim.prim_dense_private`` carries
``cutqueue`` and ``sampler`` code). After an edit or an upgrade that leaves
``prim.py`` unchanged, numba would load a driver compiled from the old queue: it
happened here (a stale driver ran much slower, and could as well have been
wrong). So the import fingerprints every module of the package and, when the
fingerprint differs from the one stored beside the cache, deletes the package's
cached kernels first (``purge_stale_kernels``).

``NUMBA_DISABLE_JIT=1`` (numba's own switch) runs every kernel as plain Python
instead, which only tests and coverage runs want.
"""

import hashlib
import numbers
import os
import warnings

import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher

_CACHE_ON = ("1", "true", "yes", "on")
_CACHE_OFF = ("0", "false", "no", "off")


def cache_from_env(environ=None):
    """The numba cache switch read from ``FASTPAMST_NB_CACHE`` (see the module docstring).

    Parameters
    ----------
    environ : mapping, optional
        Where to read the variable; ``os.environ`` by default.

    Returns
    -------
    bool
        True (cache compiled kernels) unless the variable says off.

    Raises
    ------
    ValueError
        A value that is neither an on nor an off spelling.
    """
    raw = (os.environ if environ is None else environ).get("FASTPAMST_NB_CACHE")
    if raw is None or raw.strip() == "":
        return True
    value = raw.strip().lower()
    if value in _CACHE_ON:
        return True
    if value in _CACHE_OFF:
        return False
    shown = repr(raw) if len(raw) <= 40 else repr(raw[:37] + "...")
    raise ValueError(
        f"environment variable FASTPAMST_NB_CACHE = {shown} is not understood; set it to "
        f"{', '.join(_CACHE_OFF)} (any case) to turn numba's on-disk cache off, or to "
        f"{', '.join(_CACHE_ON)} or unset it to keep the cache on (the default)"
    )


def source_fingerprint(package_dir):
    """SHA-256 (hex) of every ``*.py`` file of the package (names and bytes, sorted)
    and of numba's version: what all cached kernels were compiled from."""
    import numba

    h = hashlib.sha256(numba.__version__.encode())
    for name in sorted(os.listdir(package_dir)):
        if name.endswith(".py"):
            h.update(name.encode() + b"\0")
            with open(os.path.join(package_dir, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()


STAMP_NAME = "fastpamst_nb-sources.sha256"


def purge_stale_kernels(cache_dir, fingerprint, modules):
    """Delete the cached kernels of ``modules`` in ``cache_dir`` unless the stamp there
    records ``fingerprint``; then record it. Returns the number of files deleted.

    Only numba's files (``<module>.<function>-<line>.py*.nbi`` / ``.nbc``) of the
    package's own modules are touched, never ``.pyc`` files or other packages' kernels.
    """
    stamp = os.path.join(cache_dir, STAMP_NAME)
    try:
        with open(stamp) as f:
            if f.read().strip() == fingerprint:
                return 0
    except OSError:
        pass
    prefixes = tuple(m + "." for m in modules)
    deleted = 0
    for name in os.listdir(cache_dir):
        if name.startswith(prefixes) and name.endswith((".nbi", ".nbc")):
            try:
                os.remove(os.path.join(cache_dir, name))
                deleted += 1
            except FileNotFoundError:  # another process purged it first
                pass
    with open(stamp, "w") as f:
        f.write(fingerprint + "\n")
    return deleted


def _numba_cache_dir():
    """The directory numba caches this package's kernels in, found by numba's own
    locators (the package's ``__pycache__``, ``NUMBA_CACHE_DIR`` or the user-wide cache)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    for cls in impl._locator_classes:
        locator = cls.from_function(_numba_cache_dir, __file__)
        if locator is not None:
            return locator.get_cache_path()
    raise OSError("numba found no writable cache directory")


def _guarded_cache():
    """``cache_from_env()``, after purging kernels compiled from other sources; when
    the cache cannot be checked the cache is turned off (with a warning) rather
    than risk loading stale kernels."""
    if not cache_from_env():
        return False
    package_dir = os.path.dirname(os.path.abspath(__file__))
    modules = [name[:-3] for name in os.listdir(package_dir) if name.endswith(".py")]
    try:
        purge_stale_kernels(_numba_cache_dir(), source_fingerprint(package_dir), modules)
    except (OSError, AttributeError) as exc:
        warnings.warn(f"fastpamst_nb: numba's cache is off for this process, its directory "
                      f"could not be checked for stale kernels ({exc}); kernels compile on "
                      f"first use", RuntimeWarning, stacklevel=2)
        return False
    return True


CACHE = _guarded_cache()


class JitOnlyDispatcher(CPUDispatcher):
    """A numba dispatcher compiled without a Python entry point (see ``jit_only``).

    numba would call the missing entry point and crash the interpreter; this
    class turns a call from Python into a TypeError.
    """

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a jit-only kernel: call it from an "
                        "@njit function (tests do so through small @njit shims)")


def jit_only(func=None, *, inline="never"):
    """``@njit(cache=CACHE, nogil=True)`` for a kernel called only by other kernels.

    numba compiles a CPython wrapper (and a C wrapper) beside every kernel, code
    that unboxes each argument from Python objects; for a kernel that takes the
    whole queue (five role tuples of arrays) that wrapper costs about as much to compile as the kernel.
    The sampler's and the queue's inner kernels are never entered from Python,
    so they skip both wrappers: with the literal specializations gone too, a cold
    first ``fast_pamst`` compiles in about half the time (docs/design.rst, Compile
    time). Calling such a kernel from Python raises TypeError
    (``JitOnlyDispatcher``). Under ``NUMBA_DISABLE_JIT=1`` it stays the plain
    Python function.

    ``inline="always"`` (numba's IR-level inlining) is for the small kernels a
    selection calls once per node (``gq_key``, ``gq_count``, ``_rank_group``,
    ...): a call that passes the queue's arrays pays for their reference counts, and
    inlining them halved a large sparse release (docs/design.rst, Compile time). It
    also compiles faster: the kernel has no library of its own.
    """
    if func is None:  # @jit_only(inline="always")
        return lambda f: jit_only(f, inline=inline)
    kernel = njit(cache=CACHE, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True,
                  inline=inline)(func)
    if isinstance(kernel, CPUDispatcher):
        kernel.__class__ = JitOnlyDispatcher
    return kernel


_RNG_KINDS = ("None, an int seed >= 0, a numpy.random.SeedSequence, a numpy.random.BitGenerator "
              "or a numpy.random.Generator")


def as_generator(rng):
    """Return a ``numpy.random.Generator`` from ``rng`` (SPEC 7).

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        What ``numpy.random.default_rng`` accepts (SPEC 7): ``None`` draws fresh
        OS entropy, an int >= 0 or a SeedSequence seeds a new PCG64 generator,
        a BitGenerator is wrapped (it is shared, so its state advances), a
        Generator is used as it is (its state advances). ``rng=5``,
        ``rng=SeedSequence(5)`` and ``rng=PCG64(5)`` give the same stream.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        A bool, float, str, legacy ``numpy.random.RandomState`` or any other type.
    ValueError
        A negative int seed.
    """
    if rng is None or isinstance(rng, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"rng must be {_RNG_KINDS} (SPEC 7), got a bool")
    if isinstance(rng, numbers.Integral):
        if rng < 0:
            raise ValueError(f"rng seed must be non-negative, got {rng}; pass a seed >= 0")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            f"rng must be {_RNG_KINDS} (SPEC 7), got the legacy numpy.random.RandomState; "
            "use a Generator instead, e.g. rng=np.random.default_rng(seed)"
        )
    raise TypeError(
        f"rng must be {_RNG_KINDS} (SPEC 7), got {type(rng).__name__}; "
        "e.g. rng=np.random.default_rng(0)"
    )


def check_positive(name, value):
    """Return ``value`` as a float after checking that it is finite and > 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite positive number, got {value}")
    return value


def available_memory_bytes():
    """Best estimate of the bytes this process may still allocate."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


# below this a check costs more than it can save (it reads /proc/meminfo)
_SMALL = 64 * 2**20


def memory_fits(n_bytes):
    """Whether ``n_bytes`` more fit in the available memory (the test of :func:`require_memory`)."""
    if n_bytes < _SMALL:
        return True
    avail = available_memory_bytes()
    return avail is None or n_bytes <= 0.9 * avail


def require_memory(n_bytes, what):
    """Raise a clear ValueError before allocating ``n_bytes`` that cannot fit.

    Numba allocations that exceed memory kill the process (the OOM killer) rather
    than raising, so every large working set is checked here first. ``n_bytes``
    must be computed from public quantities (shapes, dtypes, parameters), never
    from the weights: a refusal is then the same for every input of that shape.
    """
    if memory_fits(n_bytes):
        return
    avail = available_memory_bytes()
    if avail is not None:
        raise ValueError(
            f"{what} needs about {n_bytes / 2**30:.2f} GiB of working memory but only "
            f"{avail / 2**30:.2f} GiB is available (MemoryError avoided). Use a smaller "
            "graph, a scipy.sparse topology, float32 weights, or a machine with more memory."
        )


class CompileWatch:
    """Notices numba compiling this package's kernels (a cache miss, not a cache load).

    Use it as a context manager: inside it, the first compilation of a kernel of
    ``fastpamst_nb`` calls ``on_compile()`` (once), and ``seconds`` adds up the
    wall time of the outermost compilations. numba signals a compilation with its
    ``"numba:compile"`` event only when neither the process nor the on-disk cache
    holds the kernel for these argument types, so the CLI says "compiling (first
    run only)" exactly when it compiles, and reports the time it took apart.

    Attributes
    ----------
    compiled : bool
        Whether any kernel of the package compiled inside the block.
    seconds : float
        Wall time spent compiling them (nested compilations counted once).
    """

    def __init__(self, on_compile=None):
        self.on_compile = on_compile
        self.compiled = False
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0
        self._scope = None

    def __enter__(self):
        from numba.core import event

        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                watch._start(ev)

            def on_end(self, ev):
                watch._end(ev)

        self._scope = event.install_listener("numba:compile", _Listener())
        self._scope.__enter__()
        return self

    def __exit__(self, *exc):
        return self._scope.__exit__(*exc)

    @staticmethod
    def _ours(ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        return getattr(func, "__module__", "").partition(".")[0] == __name__.partition(".")[0]

    def _start(self, ev):
        import time

        if not self._ours(ev):
            return
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1
        if not self.compiled:
            self.compiled = True
            if self.on_compile is not None:
                self.on_compile()

    def _end(self, ev):
        import time

        if not self._ours(ev) or self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0
