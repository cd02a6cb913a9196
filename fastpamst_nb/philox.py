"""Counter-based noise, keyed by 128 bits of the user's rng: one Philox block per edge.

Two published generators of Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
easy as 1, 2, 3" (SC'11), both passing TestU01's BigCrush (the paper's table 2), both
tested against Random123's known answers:

- **The gumbel stream** (``bits_of_words``, ``edge_uniform``, ``edge_gumbel``; the dense,
  sparse and points engines of ``noise="gumbel"``): Philox-2x32-10 (multiplier
  0xD256D193, Weyl key increment 0x9E3779B9, 10 rounds), 64 output bits an edge, for the
  one 53-bit uniform an edge needs: half the multiplies of a Philox-4x32-10 block.
- **The post-processing stream** (``_block``, ``_unit``, ``edge_uniform_pair``; the Box-Muller
  pairs of ``post_processing`` on points): Philox-4x32-10 (multipliers 0xD2511F53,
  0xCD9E8D57, increments 0x9E3779B9, 0xBB67AE85, 10 rounds), two uniforms a block.

Either maps a counter and a key to pseudo-random bits, so the noise of an edge is a pure
function of (key, edge): no noise is stored, any thread can draw any edge's noise, and the
same seed gives the same release whatever the number of threads or the order of the work.

Layout (all words 32-bit; ``lo``/``hi`` are the low and high halves of a 64-bit value; the
release's 128 random bits are ``k0``, ``k1`` from ``draw_key``, and a = min(i, j), b =
max(i, j) for the unordered edge {i, j})::

    gumbel:           Philox-2x32-10, key lo(k0), counter ((a + lo(k1)) mod 2**32,
                      (b + hi(k1)) mod 2**32); output (x0 ^ hi(k0), x1)
    post-processing:  Philox-4x32-10, key (lo(k0), hi(k0)), counter (a, b, lo(k1), hi(k1));
                      output (x0, x1), (x2, x3)
    block:            Philox-4x32-10, key (lo(k0), hi(k0)), counter (v, blk, j, hi(k1));
                      output (x0, x1), (x2, x3)

**The block stream** (``block_uniforms``; the points engine's narrow gumbel pass, "One draw
per block of slots" in docs/design.rst) draws per (joining vertex v, block of slots blk,
point j) rather than per edge: j < 2**31 for the points of the block's Poisson process
(their spacing and acceptance uniforms), j | 2**31 for the Gumbel of the j-th point's
exceedance. The dense gumbel kernel (``gumbel.py``, "one draw per block of edges") draws
from it per (joining vertex v, pair of blocks blk, j) (``block_bits``): j = 0 for the
largest Gumbel of each of the pair's two blocks and where it sits, j >= 1 for the next
order statistics of a block (``gumbel.block_gumbel``). A release runs one engine, so the
two uses never share a counter. Each counter serves once in a release (v joins once, the blocks of a step are
distinct, j only grows). The block and post-processing streams share the generator and the
key but never a release (Gumbels against Gaussians), so a repeated counter could only link
two releases whose keys are independent draws.

In the gumbel stream the 64 key bits of k1 offset the counter (a bijection of the edges'
counters, so distinct edges keep distinct blocks) and hi(k0) is XORed into the first output
word (a bijection of the outputs): all 128 bits select the stream, and the law of the
outputs is the generator's (distinct keys give distinct streams, not independent ones: the
generator's key is 32 bits, and keys sharing lo(k0) give shifted copies of one stream). Vertex indices must lie in [0, 2**32) (an n beyond that is far
past any input this package can hold). Two words (x_a, x_b) give one 53-bit uniform
``m * 2**-53``, m = x_a * 2**21 + (x_b >> 11), except that m = 0 gives ``2**-54``: every
value lies in the open interval (0, 1), is exact in float64, and has probability 2**-53.
The largest is 1 - 2**-53, so no standard Gumbel drawn here exceeds
-log(-log(1 - 2**-53)) = 36.74 (``GUMBEL_MAX``), the smallest is -log(-log(2**-54)) = -3.62
(``GUMBEL_MIN``).

The kernels are scalar-only (no arrays) so that a per-edge loop calls them at no cost.
"""

import math

import numpy as np
from numba import njit

from .core import CACHE

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_M2X32 = np.uint64(0xD256D193)  # Philox-2x32's multiplier (its key increment is _W0)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S21 = np.uint64(21)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53

#: The largest standard Gumbel ``edge_gumbel`` can return: -log(-log(1 - 2**-53)).
GUMBEL_MAX = float(-np.log(-np.log1p(-2.0 ** -53)))
#: The smallest: -log(-log(2**-54)).
GUMBEL_MIN = float(-np.log(-np.log(2.0 ** -54)))


def draw_key(gen):
    """The 128-bit key of one release: the only draw a gumbel release makes from ``gen``.

    Parameters
    ----------
    gen : numpy.random.Generator
        The user's generator (see ``core.as_generator``).

    Returns
    -------
    (numpy.uint64, numpy.uint64)
        ``(k0, k1)``; pass them to ``edge_uniform``, ``edge_uniform_pair`` and ``edge_gumbel``
        (or split by ``key_words`` for ``bits_of_words``).
    """
    k = gen.integers(0, 2 ** 64, size=2, dtype=np.uint64)
    return np.uint64(k[0]), np.uint64(k[1])


@njit(cache=CACHE, inline="always")
def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox-4x32-10 of the counter (c0, c1, c2, c3) under the key (k0, k1).

    Every argument is a uint64 holding a 32-bit word; returns the four 32-bit output
    words as uint64. Each round: (hi, lo) = M0 * c0 and (hi', lo') = M1 * c2 (full
    64-bit products of 32-bit words), then (c0, c1, c2, c3) = (hi' ^ c1 ^ k0, lo',
    hi ^ c3 ^ k1, lo); the key is bumped by the Weyl increments between rounds.
    """
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _S32) ^ c1 ^ k0, p1 & _MASK,
                          (p0 >> _S32) ^ c3 ^ k1, p0 & _MASK)
        k0 = (k0 + _W0) & _MASK
        k1 = (k1 + _W1) & _MASK
    return c0, c1, c2, c3


@njit(cache=CACHE, inline="always")
def philox2x32_10(c0, c1, k):
    """Philox-2x32-10 of the counter (c0, c1) under the key k (Salmon et al., SC'11).

    Every argument is a uint64 holding a 32-bit word; returns the two 32-bit output
    words as uint64. Each round: (hi, lo) = M * c0 (the full 64-bit product of 32-bit
    words, M = 0xD256D193), then (c0, c1) = (hi ^ k ^ c1, lo); the key is bumped by the
    Weyl increment 0x9E3779B9 between rounds. Half the multiplies of Philox-4x32-10
    for the 64 bits an edge needs (it too passes BigCrush: the paper's table 2).
    """
    for _ in range(10):
        p = _M2X32 * c0
        c0, c1 = (p >> _S32) ^ k ^ c1, p & _MASK
        k = (k + _W0) & _MASK
    return c0, c1


@njit(cache=CACHE, inline="always")
def _unit(a, b):
    # 53 bits from two words; m = 0 maps to 2**-54 so the value is never 0, and 1 is never
    # reached. Branch-free (a max), so that a loop of blocks vectorizes.
    m = (a << _S21) | (b >> _S11)
    return max(np.float64(m), 0.5) * _TWO_M53


@njit(cache=CACHE, inline="always")
def unit_of_words(ka, kb, c2, c3, i, j):
    """``edge_uniform`` with the key already split into 32-bit words (ka, kb) = (lo(k0),
    hi(k0)) and (c2, c3) = (lo(k1), hi(k1)) (``key_words``), all uint64: for loops over
    many edges."""
    return unit_of_bits(bits_of_words(ka, kb, c2, c3, i, j))


@njit(cache=CACHE, inline="always")
def bits_of_words(ka, kb, c2, c3, i, j):
    """The 53-bit integer m (uint64) behind ``unit_of_words(ka, kb, c2, c3, i, j)``:
    the uniform is ``unit_of_bits(m)``. The edge stream's layout (module docstring):
    Philox-2x32-10 under the key ka of the counter (min(i, j) + c2, max(i, j) + c3)
    mod 2**32, its first output word XORed with kb."""
    a = i if i < j else j
    b = j if i < j else i
    # the low word first: a dead slot's -1, converted, is 2**64 - 1, and its sum with the
    # offset overflowed uint64 (a RuntimeWarning without the JIT; the same words either way)
    x0, x1 = philox2x32_10(((np.uint64(a) & _MASK) + c2) & _MASK,
                           ((np.uint64(b) & _MASK) + c3) & _MASK, ka)
    return ((x0 ^ kb) << _S21) | (x1 >> _S11)


@njit(cache=CACHE, inline="always")
def unit_of_bits(m):
    """The uniform m * 2**-53 of a 53-bit integer m (2**-54 for m = 0), as ``_unit``."""
    return max(np.float64(m), 0.5) * _TWO_M53


def key_words(k0, k1):
    """The four 32-bit words (lo(k0), hi(k0), lo(k1), hi(k1)) of a key, as uint64."""
    k0, k1 = np.uint64(k0), np.uint64(k1)
    return k0 & _MASK, k0 >> _S32, k1 & _MASK, k1 >> _S32


@njit(cache=CACHE, inline="always")
def _block(k0, k1, i, j):
    a = i if i < j else j
    b = j if i < j else i
    return philox4x32_10(np.uint64(a) & _MASK, np.uint64(b) & _MASK, k1 & _MASK, k1 >> _S32,
                         k0 & _MASK, k0 >> _S32)


@njit(cache=CACHE)
def edge_uniform(k0, k1, i, j):
    """The uniform in (0, 1) (53 bits) of the unordered edge {i, j} in the gumbel stream of
    the release keyed (k0, k1) (Philox-2x32-10, module docstring).

    Parameters
    ----------
    k0, k1 : uint64
        The release's key (``draw_key``).
    i, j : int64
        The edge's ends, in [0, 2**32); the value depends only on {i, j}.

    Returns
    -------
    float64
        ``unit_of_bits(bits_of_words(*key_words(k0, k1), i, j))``; not a uniform of
        ``edge_uniform_pair`` (the post-processing stream).
    """
    k0 = np.uint64(k0)
    k1 = np.uint64(k1)
    return unit_of_bits(bits_of_words(k0 & _MASK, k0 >> _S32, k1 & _MASK, k1 >> _S32, i, j))


@njit(cache=CACHE, inline="always")
def block_uniforms(k0, k1, v, blk, j):
    """The two uniforms in (0, 1) (53 bits each) of the block stream's counter (v, blk, j,
    hi(k1)) under the key (lo(k0), hi(k0)): Philox-4x32-10 (module docstring), the first
    from the output words (x0, x1), the second from (x2, x3), as ``_unit`` maps them.

    Parameters
    ----------
    k0, k1 : uint64
        The release's key (``draw_key``).
    v, blk, j : int64
        The joining vertex, the block of slots, the draw's index within it; each in
        [0, 2**32) (j's top bit selects a point's Gumbel: see the module docstring).

    Returns
    -------
    (float64, float64)
    """
    x0, x1, x2, x3 = philox4x32_10(np.uint64(v) & _MASK, np.uint64(blk) & _MASK,
                                   np.uint64(j) & _MASK, k1 >> _S32, k0 & _MASK, k0 >> _S32)
    return _unit(x0, x1), _unit(x2, x3)


_LOW11 = np.uint64(0x7FF)


@njit(cache=CACHE, inline="always")
def block_bits(ka, kb, c3, v, blk, j):
    """The block stream's Philox-4x32-10 block of the counter (v, blk, j, hi(k1)) under
    the key (lo(k0), hi(k0)), as ``block_uniforms`` draws it but with the key already split
    (``key_words``: ka = lo(k0), kb = hi(k0), c3 = hi(k1)), scalar-only for loops over
    many blocks: the two 53-bit integers and the 11 bits each leaves.

    Parameters
    ----------
    ka, kb, c3 : uint64
        The key's words (``key_words``).
    v, blk, j : int64
        The counter's first three words, each in [0, 2**32).

    Returns
    -------
    (uint64, uint64, uint64, uint64)
        ``(m1, r1, m2, r2)``: m1 = x0 2**21 + (x1 >> 11) and m2 = x2 2**21 + (x3 >> 11),
        so that ``unit_of_bits(m1), unit_of_bits(m2)`` are ``block_uniforms``' two
        uniforms; r1 = x1 & 0x7FF and r2 = x3 & 0x7FF, the output bits neither uses
        (independent of m1 and m2: where the dense gumbel kernel's block maximum sits).
    """
    x0, x1, x2, x3 = philox4x32_10(np.uint64(v) & _MASK, np.uint64(blk) & _MASK,
                                   np.uint64(j) & _MASK, c3, ka, kb)
    return (x0 << _S21) | (x1 >> _S11), x1 & _LOW11, (x2 << _S21) | (x3 >> _S11), x3 & _LOW11


@njit(cache=CACHE)
def edge_uniform_pair(k0, k1, i, j):
    """Two independent uniforms in (0, 1) from the Philox-4x32-10 block of the edge {i, j}
    (the post-processing stream: Box-Muller pairs; module docstring).

    Returns
    -------
    (float64, float64)
        ``u1`` from the block's first two words, ``u2`` from the last two.
    """
    x0, x1, x2, x3 = _block(k0, k1, i, j)
    return _unit(x0, x1), _unit(x2, x3)


@njit(cache=CACHE)
def edge_gumbel(k0, k1, i, j):
    """The standard Gumbel noise ``-log(-log(u))`` of the edge {i, j}, u = ``edge_uniform``.

    Lies in [``GUMBEL_MIN``, ``GUMBEL_MAX``] = [-3.62, 36.74].
    """
    # math.log, not np.log: compiled, both are LLVM's log; with the JIT off, np.log of a
    # numpy scalar runs numpy's SIMD loop, which on AVX-512 differs from libm by an ulp
    return -math.log(-math.log(edge_uniform(k0, k1, i, j)))
