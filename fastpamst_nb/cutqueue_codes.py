"""The grouped cut queue's named encodings: how a slot packs an edge's group offset above
its code, how a dense code packs the edge's two ends, and the home slot of an id in the
compressed layout's hash set. Scalar-only kernels, so per-edge loops call them at no cost
(``cutqueue``, ``cutqueue_build``, ``cutqueue_materialize`` and ``sampler`` use them), and
the set's drain (``hset_items``, once a build: the compressed build's and a wide bucket's split).
"""
import numpy as np
from numba import njit

from .core import CACHE

# Named encodings. A slot of the store packs the edge's group offset in its bucket
# (a wide bucket: its sub-bucket) above its 40-bit code; a dense code packs the edge's
# ends, the one visited when it joined above the other. Shifts and masks, not a
# divmod: a 64-bit modulo per slot dominated compaction
_CODE_BITS = 40
_CODE_MASK = (1 << _CODE_BITS) - 1
_END_BITS = 20
_END_MASK = (1 << _END_BITS) - 1


@njit(cache=CACHE, nogil=True)
def slot_pack(offset, code):
    """The slot of an edge with this group offset (or sub-bucket) in its bucket and code."""
    return (offset << _CODE_BITS) | code


@njit(cache=CACHE, nogil=True)
def slot_offset(slot):
    """The group offset (a wide bucket: the sub-bucket) a slot stores."""
    return slot >> _CODE_BITS


@njit(cache=CACHE, nogil=True)
def slot_code(slot):
    """The edge code a slot stores: a dense code (``code_pack``) or a CSR position."""
    return slot & _CODE_MASK


@njit(cache=CACHE, nogil=True)
def code_pack(a, b):
    """The dense code of edge (a, b): a visited and b not when it joined (a, b < 2**20)."""
    return (a << _END_BITS) | b


@njit(cache=CACHE, nogil=True)
def code_ends(code):
    """(a, b) of a dense code: the end visited when the edge joined, and the other."""
    return code >> _END_BITS, code & _END_MASK


# the occupied buckets of a key range too wide for a table: an open-addressing hash
# set of their aligned ids, at most half full. Fibonacci hashing (Knuth, TAOCP vol. 3,
# 6.4) of the id folded to 31 bits: the top bits of a * M mod 2**31 with
# M ~ 2**31 (sqrt(5) - 1) / 2, which spreads runs of consecutive ids (the buckets of a
# dense range) evenly (an arbitrary odd M sent 257 consecutive ids to 72 slots). The
# product stays below 2**62: no overflow with or without the jit
_HSET_MUL = 1327217885
_HSET_BITS = 31
_HSET_MASK = (1 << _HSET_BITS) - 1


@njit(cache=CACHE, nogil=True, inline="always")
def _hset_home(a, bits):
    """Home slot of id a >= 0 in a table of 2**bits slots (bits <= 31)."""
    x = (a ^ (a >> _HSET_BITS)) & _HSET_MASK
    return ((x * _HSET_MUL) & _HSET_MASK) >> (_HSET_BITS - bits)


@njit(cache=CACHE, nogil=True)
def hset_items(table, counts, used):
    """The ``used`` ids of an open-addressing set (``table``: -1 where empty) and their
    counts, in table order: (ids, counts), two int64 arrays of length ``used``. Once a build."""
    ids = np.empty(used, dtype=np.int64)
    out = np.empty(used, dtype=np.int64)
    k = 0
    for h in range(table.shape[0]):
        if table[h] >= 0:
            ids[k] = table[h]
            out[k] = counts[h]
            k += 1
    return ids, out
