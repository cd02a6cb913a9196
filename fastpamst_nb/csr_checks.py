"""The checks of a sparse graph's pattern: diagonal entries, symmetry, connectivity.

Three O(n + m) kernels over a canonical CSR triple (rows sorted, no duplicates),
which replaced scipy's transpose, sort and ``connected_components`` in the
validation of a sparse input (:func:`fastpamst_nb.graph.as_graph`);
:func:`_pattern_checks` runs the symmetry and connectivity checks side by side
when the pattern is large enough for a hand-off to pay. They answer yes/no or a
count; the error messages are :mod:`fastpamst_nb.graph`'s.
"""

import numpy as np
from numba import njit

from . import threads
from .core import CACHE

# a sparse input's two checks run side by side from this many stored entries
_THREADED_MIN_STORED = 1 << 17


@njit(cache=CACHE, nogil=True)
def _stores_diagonal(indptr, indices):
    """Whether a CSR matrix stores an entry (i, i)."""
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] == i:
                return True
    return False


@njit(cache=CACHE, nogil=True)
def _mirrors_match(indptr, indices, data):
    """Whether a canonical CSR matrix (rows sorted, no duplicates) equals its
    transpose: one pass, O(n + m) time and n cursors.

    Rows are visited in increasing order. An entry (i, j) below the diagonal
    must be the next unmatched entry (j, i) of row j's upper part, with an equal
    value: row j is sorted, so the mirrors of its upper part arrive in its own
    column order and a cursor per row finds each in O(1). At the end every upper
    entry must have been matched. A diagonal entry is its own mirror. scipy's
    transpose and sort took about half of the validation."""
    n = indptr.shape[0] - 1
    cursor = np.empty(n, dtype=np.int64)  # row j's next unmatched upper entry, set at row j
    for i in range(n):
        p = indptr[i]
        end = indptr[i + 1]
        while p < end and indices[p] < i:
            j = indices[p]
            c = cursor[j]
            if c == indptr[j + 1] or indices[c] != i or data[c] != data[p]:
                return False
            cursor[j] = c + 1
            p += 1
        if p < end and indices[p] == i:
            p += 1
        cursor[i] = p
    for j in range(n):
        if cursor[j] != indptr[j + 1]:
            return False
    return True


@njit(cache=CACHE, nogil=True)
def _n_components(indptr, indices):
    """Connected components of a symmetric CSR pattern: a depth-first search with an
    explicit stack, O(n + m). scipy's connected_components(directed=False), which
    symmetrizes first, took a third of the validation."""
    n = indptr.shape[0] - 1
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)  # each vertex is pushed once
    comps = 0
    for root in range(n):
        if seen[root]:
            continue
        comps += 1
        seen[root] = True
        stack[0] = root
        top = 1
        while top > 0:
            top -= 1
            v = stack[top]
            for p in range(indptr[v], indptr[v + 1]):
                u = indices[p]
                if not seen[u]:
                    seen[u] = True
                    stack[top] = u
                    top += 1
    return comps


def _pattern_checks(indptr, indices, data):
    """(whether the CSR matrix equals its transpose, its number of connected components).

    Two independent scans of the pattern (nogil kernels), side by side when there are
    two threads and enough entries for a hand-off to pay.
    """
    checks = [lambda: _mirrors_match(indptr, indices, data), lambda: _n_components(indptr, indices)]
    if threads.thread_count() < 2 or indices.shape[0] < _THREADED_MIN_STORED:
        return checks[0](), checks[1]()
    symmetric, n_comp = threads.run_side_by_side(checks)
    return symmetric, n_comp
