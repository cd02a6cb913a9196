"""The exponential mechanism at the floor: one Gumbel draw per edge and an exact Prim.

Kruskal with the exponential mechanism at every step (each step draws, among the edges
joining two components of the forest so far, e with probability proportional to
exp(-lam * w_e)) has exactly the law of the minimum spanning tree of the keys

    key_e = w_e - b * G_e,    b = 1 / lam,    G_e iid standard Gumbel,

drawn once per edge (the proof is in docs/design.rst, "The gumbel release"). A maximum
spanning tree uses ``-w_e`` in place of ``w_e``. So ``noise="gumbel"`` is an exact MST of
noisy keys, and no noise is stored: G_e comes from ``philox.edge_gumbel`` (a pure
function of the release's 128-bit key and the edge), computed where Prim compares it.

Keys are double-doubles ``(hi, lo)`` (``hi = fl(hi + lo)``): ``w - b * G`` is formed with
error-free transforms (Dekker's product, Knuth's two-sum), so a weight of 1e12 keeps a
noise of b = 1e-5 (NOTES erratum 5), and the lexicographic order of the pairs is the
order of their values: a strict total order, which the argmin breaks by vertex index.
That makes the tree a function of (W, key) alone, whatever the threads do.
Weights near the largest double with a noise scale b >= 2**960 would make w - b * G
overflow (a NaN key never relaxes): there the kernels compare f * w - (f * b) * G, f a
power of two chosen from b alone (``_scale``), which has the same order.

Most edges take no logarithm. Vertex v, with best key K_v, relaxes from the joining
vertex u only if G_uv > t = (c * w_uv - K_v) / b. The kernels compute t to a relative
error of a few ulps and compare it with ``gumbel_upper(m) + EPS``, an upper bound of the
edge's Gumbel G(U) read off the bits m of its uniform with no logarithm (G(U) <=
-log(1 - U), whose logarithm the float's exponent and mantissa bound): t at or above it
means G(U) <= t - EPS, so the exact comparison would not relax v either (the margins are
in docs/design.rst). The bound overshoots G by about 0.06 where it matters, so only
slightly more than the edges that relax, about n ln n in all, take the two logarithms
and the exact comparison of the double-double keys. The sparse kernel first skips t >=
``T_SKIP`` = 37.5 before hashing (above any Gumbel a 53-bit uniform gives:
``philox.GUMBEL_MAX`` = 36.74; its hashes are not vectorized).

The dense kernels draw a step's Gumbels a block at a time by default (the block path,
``block_gumbel``; docs/design.rst, "Dense gumbel, ninth pass"): in Prim each edge is
examined once, when its first end joins, so its Gumbel only has to be a fresh standard
Gumbel, independent of the others, given the past. The ranks of the vertices still
outside (their positions once the joining vertex's is removed) are cut into blocks of
``BLOCK`` = 4; one Philox-4x32-10 block of the block stream (``philox.block_bits``,
counter (joining vertex, pair of blocks, 0)) gives each block of a pair the largest of
its 4 Gumbels, M = ln 4 + G(U), and where it sits (2 spare bits); the next largest
follow one draw each (order statistics, ``block_gumbel``), only as far as an edge of
the block could still relax. So an edge whose threshold t is at or above the bound of
its block's M (``_block_upper``, ``gumbel_upper`` with ln 4 folded in) is decided by one
compare and one hash per 8 edges; the rest (about 3 times as many as the per-edge bound
lists) join their block's walk, and the ranks it reaches take the exact comparison.
``block=False`` (``BLOCK_PATH``) keeps one Gumbel per edge: the sparse and
points engines' noise, the same law, other trees for a seed. Ranks do not depend on the
thread split, so the tree is the same for any number of threads. Where most entries
relax (the first steps, or the steps after Prim enters a far cluster) a walk costs more
than one hash an edge: a step whose relaxations exceed ``SWITCH_AT`` of its entries
sends the next ``SWITCH_HOLD`` steps to the per-edge path (docs/design.rst, "Dense gumbel,
tenth pass"), and so does one whose *uncertain* relaxations (threshold above ``T_SURE``)
exceed ``SWITCH_NEAR`` of them, which also extends a hold at its last step (eleventh
pass: narrow noise relaxes surely and leaves the per-edge path after one hold; wide
noise, where the block path lists several times what relaxes, stays while it relaxes
much). The choice is a function of the past (the relaxations are those of the
tree, the same on either path, with ``plain`` and for any thread split), and a step's
Gumbels are fresh independent standard Gumbels either way, so the law is unchanged.

A state (``GumbelDense``) is a namedtuple of flat arrays: the unvisited vertices in
increasing order (``rest``), their best keys at the same positions, the tree ends by
vertex, the smallest key of each block of ``TOP_BLOCK`` vertices, and the step
counters; ``gd_steps`` advances it by k Prim steps, so a long release runs in chunks
(Ctrl-C, progress bars) and the tree does not depend on the chunking.
"""

import math
from collections import namedtuple

import llvmlite
import numba
import numpy as np
from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .core import CACHE
from .philox import GUMBEL_MAX, bits_of_words, block_bits, key_words, unit_of_bits
from .threads import prange_threads

#: t at or above this: no Gumbel of a 53-bit uniform reaches it, the edge cannot relax.
T_SKIP = 37.5
#: Margin (Gumbel units) between the computed t and the bound of G it must reach to skip.
EPS = 2.0 ** -30
_SPLIT = 134217729.0  # 2**27 + 1, Dekker's splitter for float64
# gumbel_upper: the bit pattern of 2**52 (adding an integer 0 <= x <= 2**52 to it and
# subtracting 2**52 as doubles converts x exactly: AVX2 has no vector int64 -> double
# conversion, which left the hashing loop scalar); 2**-53; the bits of 1.0
_MAGIC_BITS = np.int64(0x4330000000000000)
_TWO_52 = 4503599627370496.0
_TWO_M53 = 2.0 ** -53
_ONE_BITS = np.int64(1023 << 52)
_S11 = np.int64(11)
_I1 = np.int64(1)
#: gumbel_upper = ln(2) (1023 - v 2**-41) = _C_UP - v * _K_UP: the constant raised by
#: 2**-40, above the rounding of the constants, the product and the difference (each at
#: most 709.8 * 2**-53: under 5e-13 in all)
_K_UP = math.log(2.0) * 2.0 ** -41
_C_UP = 1023.0 * math.log(2.0) + 2.0 ** -40
_C_UP_EPS = 1023.0 * math.log(2.0) + EPS

assert T_SKIP > GUMBEL_MAX + 0.5

#: Positions (ranks among the unvisited vertices) per block of the block path: one
#: uniform decides the largest of a block's ``BLOCK`` Gumbels (a power of two, <= 2**11)
BLOCK = 4
_BLOCK_SHIFT = 2
assert BLOCK == 1 << _BLOCK_SHIFT
_INV_BLOCK = 1.0 / BLOCK
#: the block's maximum is ln(BLOCK) + G(U): its bound is ``_upper_from(m, _C_BLK)``, the
#: margin 2**-40 raised once more for the rounding of ln(BLOCK) and of the sum
_C_BLK = 1023.0 * math.log(2.0) + EPS + _BLOCK_SHIFT * math.log(2.0) + 2.0 ** -40
_BMASK = np.int64(BLOCK - 1)
_PMASK = np.int64(2 * BLOCK - 1)


@njit(cache=CACHE, inline="always")
def dd_key(x, b, b_hi, b_lo, g):
    """The double-double (hi, lo) of x - b * g: Dekker's exact product b * g = p + e
    (b split once into b_hi + b_lo), Knuth's two-sum of x and -p, then the product's
    error, renormalized so that hi = fl(hi + lo)."""
    p = b * g
    c = _SPLIT * g
    g_hi = c - (c - g)
    g_lo = g - g_hi
    e = ((b_hi * g_hi - p) + b_hi * g_lo + b_lo * g_hi) + b_lo * g_lo
    s = x - p
    bb = s - x
    es = (x - (s - bb)) + (-p - bb)
    lo = es - e
    hi = s + lo
    bb = hi - s
    lo = (s - (hi - bb)) + (lo - bb)
    return hi, lo


@njit(cache=CACHE, inline="always")
def _small_to_float(x):
    """The int64 x, 0 <= x <= 2**52, as a float64, exactly, without a conversion
    instruction: the bits of 2**52 + x are those of 2**52 plus x (x <= 2**52 stays within
    that binade's mantissa, or reaches 2**53 exactly). Strict IEEE arithmetic only: never
    compile this (or ``gumbel_upper``) with fastmath; reassociation with nsz breaks the
    trick and the bound (tests/test_gumbel.py checks the bound inside a compiled loop)."""
    return np.int64(_MAGIC_BITS + x).view(np.float64) - _TWO_52


@njit(cache=CACHE, inline="always")
def _upper_from(m, c0):
    """``c0 - v * _K_UP`` for the bits v of m's bound (``gumbel_upper``); c0 = ``_C_UP``
    gives the bound, ``_C_UP_EPS`` the bound plus ``EPS`` (one subtraction less an edge)."""
    # p = ceil(m / 2) <= 2**52: 1 + p 2**-52 in [1, 2] from its bits, and y = 2 - that =
    # (2**52 - p) 2**-52 exactly (Sterbenz); y = 0 (m = 2**53 - 1) is taken as 2**-53 = 1 - U
    p = (np.int64(m) + _I1) >> _I1
    y = np.float64(max(2.0 - np.int64(_ONE_BITS + p).view(np.float64), _TWO_M53))
    # the bits of y, E + 1023 and f as one fixed-point number, 41 fraction bits kept
    v = _small_to_float(y.view(np.int64) >> _S11)
    return c0 - v * _K_UP


@njit(cache=CACHE, inline="always")
def gumbel_upper(m):
    """An upper bound of the standard Gumbel -log(-log U) of the uniform
    U = ``philox.unit_of_bits(m)``, from m's bits alone (no logarithm; scalar, branch-free,
    integer and float adds, one max and one multiply, so that a loop of them vectorizes on
    AVX2).

    -log U >= 1 - U, so G(U) <= -log(1 - U). With p = ceil(m / 2), y = (2**52 - p) 2**-52
    <= (2**53 - m) 2**-53 = 1 - U is formed exactly from the bits of 1 + p 2**-52 (for
    m = 0, y = 1 and the bound 0 >= G = -3.62; for m = 2**53 - 1, y = 0 is replaced by
    1 - U = 2**-53: the bound 53 ln 2 <= ``T_SKIP``). For y = 2**E (1 + f), f in [0, 1),
    f <= log2(1 + f), so -log y <= -ln(2) (E + f), and E + 1023 + f is the bit pattern of
    y over 2**52, read as a number (its low 11 bits dropped, which only raises the bound):
    the bound is ln(2) (1023 - v 2**-41), v the bits of y >> 11, converted exactly
    (``_small_to_float``), computed as ``_C_UP - v * _K_UP`` with a margin of 2**-40 over
    its rounding (below 5e-13). It exceeds G by at most 0.06 + log(-log(U) / (1 - U)) +
    log(q / (q - 1)), q = 2**53 - m: about 0.06 + (1 - U) / 2 for U near 1 (where the
    thresholds of late steps lie) until q is tiny: an edge whose threshold t lies between
    them takes the exact path, it is never skipped wrongly.
    """
    return _upper_from(m, _C_UP)


@njit(cache=CACHE, inline="always")
def gumbel_upper_eps(m):
    """``gumbel_upper(m) + EPS``, up to 5e-13 either way (the kernels' skip margin
    ``EPS`` folded into the constant: docs/design.rst, "The skip bound")."""
    return _upper_from(m, _C_UP_EPS)


def _prefetch_name(llvm_major, opaque=False):
    """The name of LLVM's prefetch intrinsic for a pointer in address space 0, which
    carries the pointer's type: ``"llvm.prefetch.p0"`` for an opaque pointer (LLVM 17 and
    later know no other; llvmlite 0.44's LLVM 15 only when it enables them, its
    ``opaque_pointers_enabled``), ``"llvm.prefetch.p0i8"`` for the typed ``i8*`` of
    LLVM 14 (numba 0.59-0.60) and of LLVM 15 as llvmlite 0.44 runs it by default."""
    return "llvm.prefetch.p0" if llvm_major >= 17 or opaque else "llvm.prefetch.p0i8"


_PREFETCH_NAME = _prefetch_name(llvm_version_info[0],
                                bool(getattr(llvmlite, "opaque_pointers_enabled", False)))

#: Positions a block of the dense kernel's hashing loop: the row's cache lines under a
#: block's positions are prefetched before it is hashed, so that the relaxation, which
#: gathers them, finds them in L2 (the hashing is arithmetic; the memory is idle during it)
_HASH_BLOCK = 64
_HASH_HALF = _HASH_BLOCK // 2

if numba.config.DISABLE_JIT:  # an intrinsic cannot run as Python: the hint is a no-op there
    def _prefetch(a, i):
        pass
else:
    @intrinsic
    def _prefetch(typingctx, a, i):
        """A hint to bring the cache line of the 1-d array element a[i] into L2
        (``llvm.prefetch``, read, locality 2): no fault, no effect on any value."""
        def codegen(context, builder, sig, args):
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, sig.args[0], arr, [args[1]],
                                           wraparound=False)
            i32 = ir.IntType(32)
            ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]),
                _PREFETCH_NAME)
            builder.call(fn, [ptr, i32(0), i32(2), i32(1)])
            return context.get_dummy_value()
        return types.void(a, i), codegen


def split(b):
    """Dekker's split of b into b_hi + b_lo (each with at most 26 significant bits)."""
    c = _SPLIT * b
    hi = c - (c - b)
    return hi, b - hi


@njit(cache=CACHE, inline="always")
def _dd_less(h, l, th, tl):
    """Whether the double-double key (h, l) is below (th, tl) (their lexicographic order)."""
    return h < th or (h == th and l < tl)


@njit(cache=CACHE, inline="always")
def _exact_g(x, h, l, g, b, b_hi, b_lo):
    """The exact comparison of the double-double key of x - b * g with (h, l). Returns
    the smaller key and whether it is the new one."""
    nh, nl = dd_key(x, b, b_hi, b_lo, g)
    if _dd_less(nh, nl, h, l):
        return nh, nl, True
    return h, l, False


@njit(cache=CACHE, inline="always")
def _exact(x, h, l, U, b, b_hi, b_lo):
    """The rare path: the two logarithms, then the exact comparison of the double-double
    key of x - b * G(U) with (h, l). Returns the smaller key and whether it is the new one."""
    return _exact_g(x, h, l, -math.log(-math.log(U)), b, b_hi, b_lo)


@njit(cache=CACHE, inline="always")
def _pick_free(mask, idx):
    """The idx-th (from 0) of the block's positions 0..BLOCK-1 whose bit in mask is 0."""
    for q in range(BLOCK):
        if (mask >> q) & 1 == 0:
            if idx == 0:
                return q
            idx -= 1
    # idx < the free count by construction ((m c) >> 53 < c for m < 2**53): never reached.
    # -1, not a raise: this is inlined into the prange kernel's loop, which numba would
    # then run serially (a second exit from the loop); the callers fail loudly outside it
    return -1


@njit(cache=CACHE, inline="always")
def _walk_draw(ka, kb, c3, cur, p, half, i, y, mask):
    """The block walk's i-th draw (i >= 1; ``block_gumbel``): the next order statistic's
    e**-G, y + E / (BLOCK - i) (E = -ln U, U the first uniform of ``block_bits(..., p,
    1 + BLOCK * half + i - 1)``), and its position, uniform among the BLOCK - i positions
    not yet drawn (the second uniform's bits m: (m (BLOCK - i)) >> 53)."""
    mu, _, mp, _ = block_bits(ka, kb, c3, cur, p, 1 + BLOCK * half + i - 1)
    c = BLOCK - i
    y = y + -math.log(unit_of_bits(mu)) / c
    q = _pick_free(mask, np.int64((mp * np.uint64(c)) >> np.uint64(53)))
    return y, q


@njit(cache=CACHE, inline="always")
def _walk_first(ka, kb, c3, cur, j):
    """The block j's largest Gumbel as y = e**-M = -ln(U) / BLOCK (exact: a power of two)
    and its position (3 spare bits): the pair j >> 1's draw 0 (``block_gumbel``)."""
    m1, a1, m2, a2 = block_bits(ka, kb, c3, cur, j >> 1, 0)
    if j & 1:
        m1 = m2
        a1 = a2
    return -math.log(unit_of_bits(m1)) * _INV_BLOCK, np.int64(a1) & _BMASK


@njit(cache=CACHE)
def block_gumbel(ka, kb, c3, cur, k):
    """The block path's standard Gumbel of the edge from ``cur`` to the unvisited vertex of
    rank k (its position among the unvisited vertices but cur, in increasing order), in
    the step where cur joined: the reference of what the kernels' walks draw.
    Scalar-only; (ka, kb, c3) = (lo(k0), hi(k0), hi(k1)) of the key.

    Rank k lies in block j = k >> 2 of ``BLOCK`` = B = 4 positions (ranks past the last
    count as phantoms), two blocks a pair p = j >> 1. With X = e**-G, the X of a block's
    B Gumbels are B independent Exp(1) variables, and their order statistics, smallest
    first (the Gumbels largest first), are (Renyi) y_1 = E_1 / B, y_i = y_{i-1} +
    E_i / (B + 1 - i), E_i independent Exp(1); the position of each is uniform among those
    not drawn yet. Draw 1 comes from the pair's ``philox.block_bits(ka, kb, c3, cur, p,
    0)`` (block j & 1's uniform U: E_1 = -ln U, 2 of its spare bits: the position among B),
    draw i >= 2 from ``block_bits(..., p, 1 + B (j & 1) + i - 2)`` (``_walk_draw``). The
    rank's Gumbel is -ln y_i for the draw i that lands on its position. Given the past,
    the Gumbels of a step's edges are independent standard Gumbels (docs/design.rst,
    "Dense gumbel, ninth pass"); the kernels stop a block's walk as soon as no listed
    rank left can relax.
    """
    j = k >> _BLOCK_SHIFT
    y, q = _walk_first(ka, kb, c3, cur, j)
    mask = np.int64(1) << q
    target = k & _BMASK
    for i in range(1, BLOCK):
        if q == target:
            break
        y, q = _walk_draw(ka, kb, c3, cur, j >> 1, j & 1, i, y, mask)
        if q < 0:
            raise RuntimeError("block walk: no free position (a bad count)")
        mask |= np.int64(1) << q
    return -math.log(y)


@njit(cache=CACHE, inline="always")
def _block_walk(ka, kb, c3, cur, ranks, ts, gs, i0, i1, plain):
    """The walk of one block over its listed ranks ``ranks[i0:i1]`` (thresholds ``ts``):
    ``gs[i]`` = the Gumbel of rank ``ranks[i]`` (``block_gumbel``'s value), or -inf where
    the walk stopped first. It stops (unless ``plain``) once every listed rank not drawn
    has t >= -ln y + EPS: their Gumbels, below that, cannot relax (the skip's margin).
    False on a bad count (never by construction), which its callers raise."""
    j = ranks[i0] >> _BLOCK_SHIFT
    y, q = _walk_first(ka, kb, c3, cur, j)
    mask = np.int64(1) << q
    # the block's views, from 0: a loop from i0 had a negative-index fix-up per access
    # (the fill below was a scatter)
    rv = ranks[i0:i1]
    tv = ts[i0:i1]
    gv = gs[i0:i1]
    gv[:] = -np.inf
    d = 1
    while True:
        g = -math.log(y)
        stop = not plain
        for i in range(i1 - i0):
            r = rv[i] & _BMASK
            if r == q:
                gv[i] = g
            elif (mask >> r) & 1 == 0 and tv[i] < g + EPS:
                stop = False
        if stop or d == BLOCK:
            break
        y, q = _walk_draw(ka, kb, c3, cur, j >> 1, j & 1, d, y, mask)
        if q < 0:
            return False  # a bad count: the caller raises (outside any prange loop)
        mask |= np.int64(1) << q
        d += 1
    return True


@njit(cache=CACHE, inline="always")
def _step_path(blk0, left):
    """This step's path and the per-edge steps left after it (tenth pass): the block path
    (with ``blk0``) unless a recent step started a hold (``left`` > 0), which counts down.
    Scalars only, so that both dense kernels decide alike."""
    return blk0 and left == 0, left - (left > 0)


@njit(cache=CACHE, inline="always")
def _hold_after(blk, blk0, left, ni, nn, r, sw_at, sw_hold, sw_near):
    """The per-edge steps left after a step of r entries with ni relaxations, nn of them
    uncertain (t > ``T_SURE``): a block step over ``sw_at`` r relaxations or ``sw_near`` r
    uncertain ones starts a hold of ``sw_hold`` steps, and the last step of a hold extends
    it by the second test (tenth and eleventh passes). A function of the past only (the
    relaxations are those of the tree, the same on either path, with ``plain`` and for any
    thread split); scalars only, shared by both dense kernels."""
    if blk:
        if ni > sw_at * r or nn > sw_near * r:
            return sw_hold
    elif blk0 and left == 0 and nn > sw_near * r:
        return sw_hold
    return left


@njit(cache=CACHE, inline="always")
def _walk_blocks(ka, kb, c3, cur, ranks, ts, gs, nc, plain):
    """``_block_walk`` of every block among the listed ranks ``ranks[:nc]`` (increasing, so
    a block's listed ranks are consecutive; thresholds ``ts``, Gumbels into ``gs``). False
    on a bad count, which the callers raise outside any ``prange`` loop."""
    ok = True
    i0 = 0
    while i0 < nc:
        i1 = i0 + 1
        while i1 < nc and ranks[i1] >> _BLOCK_SHIFT == ranks[i0] >> _BLOCK_SHIFT:
            i1 += 1
        if not _block_walk(ka, kb, c3, cur, ranks, ts, gs, i0, i1, plain):
            ok = False
        i0 = i1
    return ok


@njit(cache=CACHE, inline="always")
def _block_upper(ka, kb, c3, cur, p):
    """The bounds of the largest Gumbels M of the pair p's two blocks (``block_gumbel``):
    ``_upper_from`` of each block's bits with ``_C_BLK``: at least M + EPS / 2 for M as the
    walk computes it, -ln(-ln(U) / B) (tested over every 53-bit pattern class), so a skip
    is what the exact comparison would decide."""
    m1, _, m2, _ = block_bits(ka, kb, c3, cur, p, 0)
    return _upper_from(m1, _C_BLK), _upper_from(m2, _C_BLK)


@njit(cache=CACHE, inline="always")
def _dd_min(h, l, k, th, tl, tk):
    """The running argmin of the dense steps: (h, l, k) if (h, l) is below (th, tl), else
    (th, tl, tk) (so equal keys keep the first position)."""
    if _dd_less(h, l, th, tl):
        return h, l, k
    return th, tl, tk


#: Vertices per block of the serial kernel's argmin: the smallest key of each block of
#: ``TOP_BLOCK`` consecutive vertices is kept across steps (a power of two).
TOP_BLOCK = 64
_TOP_SHIFT = 6
assert TOP_BLOCK == 1 << _TOP_SHIFT

# rest: unvisited vertices, increasing; hi/lo: their best keys at the same positions;
# parent: each vertex's tree end (indexed by vertex: the removal shifts one array less);
# U: the bounds of one step's edges; th/tl/tv: each block of TOP_BLOCK vertices'
# smallest (key, vertex) among its unvisited vertices (tv = -1: none yet); cand: the
# positions whose edge passed the skip test in one step, then (a prefix, compacted in
# place) those the exact path improved; state: [r (unvisited count), gone (position of
# the vertex that joined last, to remove; r: none), cur (that vertex)]
# UB: the block path's bounds, one a block of BLOCK ranks; gs: the listed ranks'
# Gumbels (-inf: cannot relax); state[3] counts the listed edges of the release and
# state[4] those of them that took the exact comparison (those the block path's walks
# reached; every one on the per-edge path) (never published: functions of the weights);
# state[5] the steps left on the per-edge path (the tenth pass)
# MB: the per-edge path's uniforms' bits by position (as U before the shift), kept by the
# hashing loop for the exact path (a second scalar Philox per listed edge cost ~25% of
# a relaxation: docs/design.rst, twelfth pass)
GumbelDense = namedtuple("GumbelDense", ["rest", "hi", "lo", "parent", "U", "th", "tl", "tv",
                                         "cand", "state", "UB", "gs", "MB"])

# The noise's scalars, as the kernels take them (one argument, not seven): c: the sign of
# the weights times the keys' scale (``_scale``); kw: the key's four words
# (``philox.key_words``, uint64 array); b, b_hi, b_lo, inv_b: the noise scale, its Dekker
# split and its inverse (``_scale``); plain: the two logarithms on every edge, no skip;
# block: the dense kernels' block path (``block_gumbel``), else one Gumbel per edge
#: The block path's switch (docs/design.rst, "Dense gumbel, tenth pass"): a block step
#: whose relaxations exceed ``SWITCH_AT`` times its entries sends the next ``SWITCH_HOLD``
#: steps to the per-edge path (``inf``: never; the hold was 128 until the eleventh pass).
#: A function of the past only, the same for every thread count; each step's Gumbels are
#: fresh iid either way (the law).
SWITCH_AT = 0.05
SWITCH_HOLD = 32
#: The eleventh pass (docs/design.rst, "Dense gumbel, eleventh pass"): a step whose
#: *uncertain* relaxations (those whose threshold t was above ``T_SURE``: the Gumbel
#: decided them) exceed ``SWITCH_NEAR`` times its entries sends the next ``SWITCH_HOLD``
#: steps to the per-edge path too, and a per-edge step that ends a hold so extends it.
#: Narrow noise relaxes surely (t far below 0), so only wide noise is held per edge
#: while its relaxations stay many (the block path's listing is then several times the
#: relaxations). A function of the past only; ``inf``: the tenth pass.
SWITCH_NEAR = 0.01
#: Below this threshold t a per-edge relaxation is sure: a per-edge Gumbel is at least
#: -ln(-ln(2**-54)) = -3.62 (the smallest uniform, ``philox.unit_of_bits(0)``). A block's
#: order statistics reach lower (about -4.4), so on the block path the count of
#: "uncertain" relaxations may miss a few: it is only a statistic of the switch, a
#: function of the past that the exact comparison never reads.
T_SURE = -4.0

# sw_at, sw_hold: on the block path, a step whose relaxations exceed sw_at times its
# entries sends the next sw_hold steps to the per-edge path (docs/design.rst, "Dense
# gumbel, tenth pass"; default ``SWITCH_AT``, ``SWITCH_HOLD``); sw_near: so does a step
# (block, or per edge ending a hold) whose uncertain relaxations (t > ``T_SURE``) exceed
# sw_near times its entries (eleventh pass; default ``SWITCH_NEAR``)
GumbelNoise = namedtuple("GumbelNoise", ["c", "kw", "b", "b_hi", "b_lo", "inv_b", "plain",
                                         "block", "sw_at", "sw_hold", "sw_near"],
                         defaults=(SWITCH_AT, SWITCH_HOLD, SWITCH_NEAR))

# The parallel dense kernel's state (positions are vertices): hi/lo: each vertex's best
# key; parent: its tree end; U: one step's bounds; seen: the tree's vertices; cand: the
# vertices whose edge passed the skip test in one step, listed in their thread block's
# part (as the block's positions, from 0); state:
# [r, -1, cur (the vertex that joined last), 0]; top_hi/top_lo/top_k: each
# thread block's smallest (key, vertex), n_threads long; the block path's: live: each
# thread block's unvisited count (n_threads), then their prefix sums (n_threads); rank:
# the listed vertices' ranks (as cand); UB: the blocks' bounds, thread t's at block + 2 t;
# gs: the listed ranks' Gumbels (as cand; U holds their thresholds); nimp: each thread
# block's relaxations in the step (n_threads), then its uncertain relaxations (t >
# ``T_SURE``; n_threads); state[4]: the steps left on the per-edge path; MB: the
# per-edge path's uniforms' bits by vertex, kept for the exact path (as gd_steps)
GumbelPar = namedtuple("GumbelPar", ["hi", "lo", "parent", "U", "seen", "cand", "state",
                                     "top_hi", "top_lo", "top_k", "live", "rank", "UB", "gs",
                                     "nimp", "MB"])

# The sparse kernel's graph (a validated symmetric CSR topology, float64 data) and
# state: hi/lo: each vertex's best key; visited: the tree's vertices; H: the heap's flat
# (hi, lo, CSR position) triples; state: [heap size, the vertex that joins next]
CsrArrays = namedtuple("CsrArrays", ["indptr", "indices", "data"])
GumbelCsr = namedtuple("GumbelCsr", ["hi", "lo", "visited", "H", "state"])


def gd_new(n, start):
    """The state before the first step: every vertex but ``start`` unvisited, keys +inf."""
    rest = np.concatenate([np.arange(start, dtype=np.int64), np.arange(start + 1, n, dtype=np.int64)])
    hi = np.full(n - 1, np.inf)
    lo = np.zeros(n - 1)
    parent = np.full(n, start, dtype=np.int64)  # by vertex: not shifted
    # gone = r: no position to remove before the first step
    state = np.array([n - 1, n - 1, start, 0, 0, 0], dtype=np.int64)
    nb = (n + TOP_BLOCK - 1) // TOP_BLOCK
    return GumbelDense(rest, hi, lo, parent, np.empty(n - 1), np.full(nb, np.inf),
                       np.full(nb, np.inf), np.full(nb, -1, dtype=np.int64),
                       np.empty(n - 1, dtype=np.int64), state, np.empty(_n_bounds(n)),
                       np.empty(n - 1), np.empty(n - 1, dtype=np.uint64))


def _n_bounds(n):
    """Blocks of the block path's bounds for n vertices: whole pairs of blocks."""
    return 2 * ((n >> (_BLOCK_SHIFT + 1)) + 1)


def gp_new(n, start, T):
    """The parallel kernel's state before the first step, for ``T`` threads."""
    seen = np.zeros(n, dtype=np.bool_)
    seen[start] = True
    chunk = (n + T - 1) // T
    live = np.zeros(2 * T, dtype=np.int64)
    for t in range(T):
        live[t] = max(0, min(n, (t + 1) * chunk) - t * chunk) - (start // chunk == t)
    return GumbelPar(np.full(n, np.inf), np.zeros(n), np.full(n, start, dtype=np.int64),
                     np.empty(n), seen, np.empty(n, dtype=np.int64),
                     np.array([n - 1, -1, start, 0, 0], dtype=np.int64), np.empty(T), np.empty(T),
                     np.empty(T, dtype=np.int64), live, np.empty(n, dtype=np.int64),
                     np.empty(_n_bounds(n) + 2 * T), np.empty(n), np.zeros(2 * T, dtype=np.int64),
                     np.empty(n, dtype=np.uint64))


@njit(cache=CACHE, inline="always")
def _key_less(h, l, v, th, tl, tv):
    """Whether (key (h, l), vertex v) comes before (th, tl, tv): the key's order, then
    the smaller vertex; tv = -1 (an empty block) comes after everything."""
    return tv < 0 or h < th or (h == th and (l < tl or (l == tl and v < tv)))


@njit(cache=CACHE, nogil=True)
def gd_steps(W, nz, s, edges, step0, n_steps):
    """Prim steps ``step0 .. step0 + n_steps - 1`` on the complete graph of W, one thread.

    ``nz`` is the noise (``GumbelNoise``): ``c`` the sign (+1 minimum tree, -1
    maximum) times the keys' scale; ``kw`` the key's four words
    (``philox.key_words``). ``s`` is the state (``GumbelDense``), advanced in place.
    Each step first hashes every edge from the vertex that joined last to the
    unvisited ones (a loop of independent blocks, which the compiler vectorizes) into
    ``U[k]`` = ``gumbel_upper_eps`` of its uniform, prefetching into L2 the lines of
    that vertex's row each block of ``_HASH_BLOCK`` positions will read (the hashing
    is arithmetic, so the row's transfer overlaps it). Then it reads the row in
    address order (as ``prim.prim_dense_exact``), in place before the position of the
    vertex that joined, shifted down by one after it (so the order costs no extra
    pass): an edge whose threshold t = (c w - K) / b is at least ``U[k]`` cannot relax
    (one compare); the others (about n ln n in all) are listed in ``cand`` and, after
    the loops, take the exact path with the bits the hashing loop kept (``MB``; inside
    the loops, each cost a branch misprediction and the row loads in flight); the improved ones
    are compacted in place at the head of ``cand``. The argmin (ties: the smallest
    vertex) reads the blocks' smallest keys (``th, tl, tv``), which the
    relaxations update after the loops and of which only the joined vertex's block is
    rescanned: O(n / TOP_BLOCK + TOP_BLOCK) a step.
    O(n) per step, no noise kept across steps. ``plain``: the two logarithms on
    every edge, no skip (the reference path).

    With ``nz.block`` (the block path) the hashing loop draws one Philox-4x32-10 block
    per pair of blocks of ``BLOCK`` ranks (the positions once the joined vertex's is
    removed) and stores each block's bound of its largest Gumbel (``_block_upper``) at
    its positions; the relaxation is the same compare, and the listed edges of a block
    walk its order statistics (``_block_walk``) until none left can relax; those it
    reaches take the exact comparison (docs/design.rst, "Dense gumbel, ninth pass").
    A block step whose relaxations exceed ``nz.sw_at`` times its entries, or whose
    uncertain relaxations (t > ``T_SURE``) exceed ``nz.sw_near`` times them, sends the
    next ``nz.sw_hold`` steps to the per-edge path (``state[5]`` counts them down; tenth
    and eleventh passes); the last step of a hold extends it by the second test.
    """
    c, kw, b, b_hi, b_lo, inv_b, plain, blk0, sw_at, sw_hold, sw_near = nz  # scalars
    rest, hi, lo, parent, U, th, tl, tv, cand, state, UB, gs, MB = s  # GumbelDense's fields
    ka, kb, c2, c3 = kw[0], kw[1], kw[2], kw[3]
    r = state[0]
    gone = state[1]
    cur = state[2]
    listed = state[3]
    compared = state[4]
    left = state[5]
    for step in range(step0, step0 + n_steps):
        row = W[cur]
        # this step's path, from the past only (the tenth pass): the block path unless
        # a recent step relaxed too many entries (then per edge for sw_hold steps)
        blk, left = _step_path(blk0, left)
        if plain:  # no skip: every edge takes the exact path
            U[:r] = np.inf
        elif blk:
            # the block path: one bound per block of BLOCK ranks (the positions once cur's
            # is removed), from one Philox-4x32-10 block per pair of blocks. First the
            # row's lines, as the per-edge loop (they arrive while the pairs are hashed)
            for k0 in range(0, r, _HASH_BLOCK):
                k1 = min(k0 + _HASH_BLOCK, r)
                a = rest[k0]
                z = rest[k1 - 1]
                if z - a < 8 * _HASH_BLOCK:
                    for j in range(a, z + 1, 8):
                        _prefetch(row, j)
                    _prefetch(row, z)
                else:
                    for k in range(k0, k1):
                        _prefetch(row, rest[k])
            nr = r - 1 if gone < r else r
            cap = UB.shape[0] >> 1
            UB0 = UB[:cap]
            UB1 = UB[cap:]
            npair = (nr + 2 * BLOCK - 1) >> (_BLOCK_SHIFT + 1)
            # the pair q's two bounds at q and cap + q, stored through two views (two
            # stores into one array kept the loop scalar)
            for q in range(npair):
                UB0[q], UB1[q] = _block_upper(ka, kb, c3, cur, q)
            # U by rank (the relaxation's views read it so), a block's bound per rank:
            # fixed-length inner loops (vector stores; an index per rank was 5x slower)
            for q in range(min(npair, nr >> (_BLOCK_SHIFT + 1))):
                x0 = UB0[q]
                x1 = UB1[q]
                Uq = U[q << (_BLOCK_SHIFT + 1):(q + 1) << (_BLOCK_SHIFT + 1)]
                for i in range(BLOCK):
                    Uq[i] = x0
                for i in range(BLOCK, 2 * BLOCK):
                    Uq[i] = x1
            for k in range((nr >> (_BLOCK_SHIFT + 1)) << (_BLOCK_SHIFT + 1), nr):
                U[k] = UB[(k >> (_BLOCK_SHIFT + 1)) + ((k >> _BLOCK_SHIFT) & 1) * cap]
        else:
            for k0 in range(0, r, _HASH_BLOCK):
                k1 = min(k0 + _HASH_BLOCK, r)
                a = rest[k0]
                z = rest[k1 - 1]
                if z - a < 8 * _HASH_BLOCK:  # dense positions: every line of the span
                    for j in range(a, z + 1, 8):
                        _prefetch(row, j)
                    _prefetch(row, z)
                else:  # sparse (late steps): the line of each position
                    for k in range(k0, k1):
                        _prefetch(row, rest[k])
                # through views from 0: an index from k0 gets numba's negative-index
                # fix-up, which turned the loads and stores into gathers and scatters
                if k1 - k0 == _HASH_BLOCK:
                    # a whole block as two halves hashed side by side: each hash is a
                    # chain of 10 dependent rounds, and one vector of them per iteration
                    # left the core waiting on the chain (two independent chains an
                    # iteration fill it)
                    ra = rest[k0:k0 + _HASH_HALF]
                    rb = rest[k0 + _HASH_HALF:k1]
                    Ua = U[k0:k0 + _HASH_HALF]
                    Ub = U[k0 + _HASH_HALF:k1]
                    Ma = MB[k0:k0 + _HASH_HALF]
                    Mb = MB[k0 + _HASH_HALF:k1]
                    for i in range(_HASH_HALF):
                        m = bits_of_words(ka, kb, c2, c3, cur, ra[i])
                        m2 = bits_of_words(ka, kb, c2, c3, cur, rb[i])
                        Ma[i] = m  # for the exact path: listed edges do not hash again
                        Mb[i] = m2
                        Ua[i] = gumbel_upper_eps(m)
                        Ub[i] = gumbel_upper_eps(m2)
                else:
                    rk = rest[k0:k1]
                    Uk = U[k0:k1]
                    Mk = MB[k0:k1]
                    for i in range(k1 - k0):
                        m = bits_of_words(ka, kb, c2, c3, cur, rk[i])
                        Mk[i] = m
                        Uk[i] = gumbel_upper_eps(m)
        # t below the bound: the edge may relax. The loops only list such positions
        # and the list takes the exact path after them: taken inside the loops (about
        # n ln n times in all), each cost a misprediction and the row loads in flight
        # (a branch-free append measured slower: docs/design.rst, fourth pass)
        nc = 0
        for k in range(gone):  # before the removed position: in place
            if ((c * np.float64(row[np.uint64(rest[k])]) - hi[k]) - lo[k]) * inv_b < U[k]:
                cand[nc] = k
                nc += 1
        # after it: shifted down by one, through views that start at the position
        # (a loop index numba cannot prove >= 0 gets a negative-index fix-up per access)
        g1 = gone + 1
        rs = rest[g1:r]
        hs = hi[g1:r]
        ls = lo[g1:r]
        # the bounds: by position (per edge), by rank (block path: position - 1 here)
        Us = U[gone:r - 1] if blk and not plain else U[g1:r]
        rd = rest[gone:r]
        hd = hi[gone:r]
        ld = lo[gone:r]
        for q in range(r - g1):
            v = rs[q]
            h = hs[q]
            l = ls[q]
            if ((c * np.float64(row[np.uint64(v)]) - h) - l) * inv_b < Us[q]:
                cand[nc] = gone + q  # its position once shifted
                nc += 1
            rd[q] = v
            hd[q] = h
            ld[q] = l
        if gone < r:
            r -= 1
        listed += nc
        if blk:
            # the block path: the listed ranks' thresholds (into U, free now), then one
            # walk per block that has some: their Gumbels, -inf where none can relax
            for i in range(nc):
                k = np.uint64(cand[i])  # uint64: no negative-index fix-up (as below)
                U[i] = ((c * np.float64(row[np.uint64(rest[k])]) - hi[k]) - lo[k]) * inv_b
            if not _walk_blocks(ka, kb, c3, cur, cand, U, gs, nc, plain):
                raise RuntimeError("block walk: no free position (a bad count)")
        ni = 0
        nn = 0  # the uncertain relaxations (t > T_SURE; the eleventh pass's statistic)
        for i in range(nc):  # the exact path, at positions after the shift
            k = cand[i]
            ku = np.uint64(k)  # the indices as uint64: no negative-index fix-up
            v = rest[ku]
            vu = np.uint64(v)
            x = c * np.float64(row[vu])
            hk = hi[ku]
            lk = lo[ku]
            if blk:  # k is the rank
                if gs[i] == -np.inf:
                    continue
                compared += 1
                h, l, better = _exact_g(x, hk, lk, gs[i], b, b_hi, b_lo)
            else:
                compared += 1
                if plain:  # no hashing loop
                    m = bits_of_words(ka, kb, c2, c3, cur, v)
                else:  # the hashing loop's bits, by position before the shift
                    m = MB[np.uint64(k + (k >= gone))]
                h, l, better = _exact(x, hk, lk, unit_of_bits(m), b, b_hi, b_lo)
            # without a branch on better (about even in a start's uncertain steps, a
            # misprediction each): the stores select, the counts add the flag
            # (h, l) is the smaller key, the old one unless better)
            # t as the listing computed it (the same in plain: a function of the past)
            nn += better & (((x - hk) - lk) * inv_b > T_SURE)
            hi[ku] = h
            lo[ku] = l
            parent[vu] = cur if better else parent[vu]
            cand[ni] = k  # its block's top after the loops: compacted in place (ni <= i)
            ni += better
        # the relaxations of a block step (the same on either path and with plain: a
        # function of the past) over its r entries decide the next steps' path
        left = _hold_after(blk, blk0, left, ni, nn, r, sw_at, sw_hold, sw_near)
        # the improved vertices' blocks (kept out of the loops above, which it slowed)
        for i in range(ni):
            k = cand[i]
            v = rest[k]
            j = v >> _TOP_SHIFT
            if _key_less(hi[k], lo[k], v, th[j], tl[j], tv[j]):
                th[j] = hi[k]
                tl[j] = lo[k]
                tv[j] = v
        # the smallest block top is the smallest key (ties: the smallest vertex)
        jb = 0
        for j in range(1, th.shape[0]):
            if tv[j] >= 0 and _key_less(th[j], tl[j], tv[j], th[jb], tl[jb], tv[jb]):
                jb = j
        cur = tv[jb]
        live = rest[:r]
        arg = np.searchsorted(live, cur)
        edges[step, 0] = parent[cur]
        edges[step, 1] = cur
        gone = arg
        # cur leaves its block: the block's top among its other unvisited vertices
        k0 = np.searchsorted(live, jb << _TOP_SHIFT)
        k1 = np.searchsorted(live, (jb + 1) << _TOP_SHIFT)
        th[jb] = np.inf
        tl[jb] = np.inf
        tv[jb] = -1
        for k in range(k0, k1):
            if k != arg and _key_less(hi[k], lo[k], rest[k], th[jb], tl[jb], tv[jb]):
                th[jb] = hi[k]
                tl[jb] = lo[k]
                tv[jb] = rest[k]
    state[0] = r
    state[1] = gone
    state[2] = cur
    state[3] = listed
    state[4] = compared
    state[5] = left


@njit(cache=CACHE, nogil=True, parallel=True)
def gd_steps_parallel(W, nz, s, edges, step0, n_steps, n_threads):
    """As :func:`gd_steps`, each step's hashing, relaxation and argmin split over
    ``n_threads`` contiguous blocks of vertices by ``prange`` (one fork/join per step).

    Here the positions are the vertices themselves (``seen`` marks the tree), so no
    shifting: the blocks' minima, taken in block order with the same (key, vertex)
    order, give the serial argmin, and the tree is that of :func:`gd_steps` for every
    thread count. ``nz``: the noise (``GumbelNoise``); ``s``: the state (``GumbelPar``,
    its tops ``n_threads`` long), advanced in place.
    """
    c, kw, b, b_hi, b_lo, inv_b, plain, blk0, sw_at, sw_hold, sw_near = nz  # scalars
    hi, lo, parent, U, seen, cand, state, top_hi, top_lo, top_k, live, rank, UB, gs, nimp, MB = s
    n = W.shape[0]
    T = n_threads
    chunk = (n + T - 1) // T
    ka, kb, c2, c3 = kw[0], kw[1], kw[2], kw[3]
    cur = state[2]
    bad = np.zeros(T, dtype=np.bool_)  # a thread's walk met a bad count
    left = state[4]
    for step in range(step0, step0 + n_steps):
        row = W[cur]
        blk, left = _step_path(blk0, left)  # this step's path (as gd_steps)
        if blk:  # each thread block's first rank: the unvisited vertices before it
            acc = 0
            for t in range(T):
                live[T + t] = acc
                acc += live[t]
        for t in prange(T):
            v0 = t * chunk
            v1 = min(n, v0 + chunk)
            # the block's views, indexed from 0 (no negative-index fix-up per access)
            Ub = U[v0:v1]
            hb = hi[v0:v1]
            lb = lo[v0:v1]
            pb = parent[v0:v1]
            sb = seen[v0:v1]
            rb = row[v0:v1]
            cb = cand[v0:v1]
            kk = rank[v0:v1]
            gb = gs[v0:v1]
            th = np.inf
            tl = np.inf
            tk = -1
            nc = 0
            ni = 0
            nn = 0
            if blk:
                # the pairs of blocks that this thread's ranks touch (a pair at the border
                # is drawn by both threads, from the same counter: the same bounds), kept
                # at block + 2 t so that the threads' stores never meet
                r0 = live[T + t]
                nl = live[t]
                o = 2 * t
                if nl > 0:
                    for q in range(r0 >> (_BLOCK_SHIFT + 1), ((r0 + nl - 1) >> (_BLOCK_SHIFT + 1)) + 1):
                        if plain:
                            UB[2 * q + o] = np.inf
                            UB[2 * q + 1 + o] = np.inf
                        else:
                            UB[2 * q + o], UB[2 * q + 1 + o] = _block_upper(ka, kb, c3, cur, q)
                rk = r0
                for j in range(v1 - v0):
                    if sb[j]:
                        continue
                    h = hb[j]
                    l = lb[j]
                    th, tl, tk = _dd_min(h, l, v0 + j, th, tl, tk)
                    if ((c * np.float64(rb[j]) - h) - l) * inv_b < UB[(rk >> _BLOCK_SHIFT) + o]:
                        cb[nc] = j
                        kk[nc] = rk
                        nc += 1
                    rk += 1
                for i in range(nc):  # as gd_steps: thresholds, walks, the exact path
                    j = cb[i]
                    Ub[i] = ((c * np.float64(rb[j]) - hb[j]) - lb[j]) * inv_b
                if not _walk_blocks(ka, kb, c3, cur, kk, Ub, gb, nc, plain):
                    bad[t] = True  # raised after the loop: a raise inside it serializes it
            else:
                if plain:
                    Ub[:] = np.inf
                else:
                    Mb = MB[v0:v1]
                    for j in range(v1 - v0):
                        m = bits_of_words(ka, kb, c2, c3, cur, v0 + j)
                        Mb[j] = m  # for the exact path (as gd_steps)
                        Ub[j] = gumbel_upper_eps(m)
                for j in range(v1 - v0):
                    if sb[j]:
                        continue
                    h = hb[j]
                    l = lb[j]
                    # the argmin over the keys before this step: a listed vertex's key can
                    # only fall, and its new one joins the minimum after the exact path
                    th, tl, tk = _dd_min(h, l, v0 + j, th, tl, tk)
                    if ((c * np.float64(rb[j]) - h) - l) * inv_b < Ub[j]:
                        cb[nc] = j  # the exact path after the loop (as gd_steps)
                        nc += 1
            for i in range(nc):  # the exact path: the block's Gumbel, or the edge's uniform
                j = cb[i]
                x = c * np.float64(rb[j])
                if blk:
                    if gb[i] == -np.inf:
                        continue  # its walk stopped first: it cannot relax
                    h, l, better = _exact_g(x, hb[j], lb[j], gb[i], b, b_hi, b_lo)
                else:
                    if plain:
                        m = bits_of_words(ka, kb, c2, c3, cur, v0 + j)
                    else:
                        m = MB[v0 + j]
                    h, l, better = _exact(x, hb[j], lb[j], unit_of_bits(m), b, b_hi, b_lo)
                if better:
                    ni += 1
                    if ((x - hb[j]) - lb[j]) * inv_b > T_SURE:  # as gd_steps
                        nn += 1
                    hb[j] = h
                    lb[j] = l
                    pb[j] = cur
                    if _key_less(h, l, v0 + j, th, tl, tk):
                        th = h
                        tl = l
                        tk = v0 + j
            top_hi[t] = th
            top_lo[t] = tl
            top_k[t] = tk
            nimp[t] = ni
            nimp[T + t] = nn
        if bad.any():
            raise RuntimeError("block walk: no free position (a bad count)")
        # the step's relaxations in all (the same for every split) decide the next
        # steps' path, as in gd_steps (r = n - 1 - step entries)
        left = _hold_after(blk, blk0, left, nimp[:T].sum(), nimp[T:].sum(), n - 1 - step,
                           sw_at, sw_hold, sw_near)
        th = np.inf
        tl = np.inf
        arg = -1
        for t in range(T):
            if top_k[t] >= 0 and (arg < 0 or _dd_less(top_hi[t], top_lo[t], th, tl)):
                th = top_hi[t]
                tl = top_lo[t]
                arg = top_k[t]
        edges[step, 0] = parent[arg]
        edges[step, 1] = arg
        seen[arg] = True
        live[arg // chunk] -= 1
        cur = arg
    state[2] = cur
    state[4] = left


#: Dense releases on fewer vertices run on one thread: a fork/join per step costs more
#: than the row it splits.
PARALLEL_MIN_N = 1 << 15


#: The dense releases' default: the block path (``block_gumbel``). False: one Gumbel per
#: edge, as the sparse and points engines' per-edge passes draw it (the same trees for a
#: seed as theirs; tests compare the engines with it).
BLOCK_PATH = True


def gumbel_dense(W, start, maximum, lam, key, threads=None, plain=False, run=None, block=None,
                 stats=None, switch=None):
    """The gumbel release on the complete graph of W: Prim over noisy keys, from ``start``.

    Parameters
    ----------
    W : ndarray (n, n), float32 or float64, C-contiguous
        Validated symmetric weights (the diagonal is never read).
    start : int
        First vertex (public).
    maximum : bool
        Maximum spanning tree of w + G / lam instead of the minimum of w - G / lam.
    lam : float
        The rate (``privacy.gumbel_rate``), finite and > 0.
    key : (numpy.uint64, numpy.uint64)
        The release's key (``philox.draw_key``).
    threads : int, optional
        Threads of the parallel kernel; default numba's thread count. 1, or n below
        ``PARALLEL_MIN_N``, runs the serial kernel: the tree is the same.
    plain : bool
        Take the two logarithms for every edge (no skip test): the reference path.
    run : callable (advance, n_steps, first) -> None, optional
        Runs ``advance(step0, k)`` over the n - 1 steps in chunks (``api._run_steps``);
        default one call.
    block : bool, optional
        The block path: each step's Gumbels drawn a block of ``BLOCK`` ranks at a time
        (``block_gumbel``). False: one Gumbel per edge (``philox.edge_gumbel``), the
        points engine's per-edge trees. The same law; other trees for a key. Default
        ``BLOCK_PATH`` (True).
    switch : (float, int) or (float, int, float), optional
        (at, hold[, near]): on the block path, a step whose relaxations exceed ``at``
        times its entries, or whose uncertain relaxations (threshold above ``T_SURE``)
        exceed ``near`` times them, sends the next ``hold`` steps to the per-edge path,
        and the last of those extends the hold if its uncertain relaxations exceed
        ``near`` times its entries (docs/design.rst, "Dense gumbel, tenth pass" and
        "eleventh pass"); near omitted: inf (the tenth pass); (inf, 0): the block path
        at every step. Default (``SWITCH_AT``, ``SWITCH_HOLD``, ``SWITCH_NEAR``). The
        same law; other trees for a key.
    stats : dict, optional
        Filled with ``"listed"``, the edges that passed the skip test, and ``"compared"``,
        those that took the exact comparison (all of them per edge; those the walks
        reached on the block path). Serial kernel only; functions of the weights: for
        measurements, never to publish.

    Returns
    -------
    ndarray (n - 1, 2) int64
        (tree vertex, new vertex) in the order Prim added them.

    Notes
    -----
    O(n^2) time, O(n) extra memory. Every step hashes all its edges (a vectorized
    loop; on the block path one Philox block per 2 ``BLOCK`` ranks); the weights change
    the time only through how many edges pass the skip test and take the logarithms
    (about n ln n in all per edge: a vertex's best key improves about ln n times; on the
    block path 1.4-3.7 n ln n listed, of which 1.2-2 n ln n are drawn and compared; the
    steps after one that relaxed over ``SWITCH_AT`` of its entries, or whose relaxations
    the noise decided for over ``SWITCH_NEAR`` of them, take the per-edge path).
    """
    n = W.shape[0]
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    if n < 2:
        return edges
    b, b_hi, b_lo, inv_b, f = _scale(lam)
    c = -f if maximum else f  # the sign of the weights, times the keys' scale (_scale)
    kw = np.array(key_words(*key), dtype=np.uint64)
    block = BLOCK_PATH if block is None else block
    sw = (SWITCH_AT, SWITCH_HOLD, SWITCH_NEAR) if switch is None else tuple(switch)
    sw_at, sw_hold, sw_near = sw if len(sw) == 3 else sw + (np.inf,)
    nz = GumbelNoise(float(c), kw, b, b_hi, b_lo, inv_b, bool(plain), bool(block),
                     float(sw_at), int(sw_hold), float(sw_near))
    T = 1
    # numba's thread count is read only when the prange kernel can run (a tiny release
    # spends microseconds on it; the law tests run 160,000 of them)
    if n >= PARALLEL_MIN_N and (threads is None or int(threads) > 1):
        cap = prange_threads()  # 1 in a child forked after OpenMP started (threads.py)
        T = cap if threads is None else max(1, min(int(threads), cap))
    if T > 1:
        ps = gp_new(n, start, T)

        def advance(step0, k):
            gd_steps_parallel(W, nz, ps, edges, step0, k, T)
    else:
        s = gd_new(n, start)

        def advance(step0, k):
            gd_steps(W, nz, s, edges, step0, k)
    if run is None:
        advance(0, n - 1)
    else:
        run(advance, n - 1, max(1, (1 << 16) // n))
    if stats is not None and T == 1:
        stats["listed"] = int(s.state[3])
        stats["compared"] = int(s.state[4])
    return edges


# ----------------------------------------------------------------------------
# sparse public topologies: Prim with a lazy binary heap of double-double keys
# ----------------------------------------------------------------------------

# The heap is one flat float64 array of (hi, lo, CSR position) triples, so that a node's
# key and payload share a cache line (three separate arrays measured slower at n = 1e5).

@njit(cache=CACHE, inline="always")
def _dh_less(H, a, b):
    # heap order: key (hi, lo), then the CSR position (a total order: pops are deterministic)
    a *= 3
    b *= 3
    return H[a] < H[b] or (H[a] == H[b] and (H[a + 1] < H[b + 1] or (
        H[a + 1] == H[b + 1] and H[a + 2] < H[b + 2])))


@njit(cache=CACHE, inline="always")
def _dh_swap(H, a, b):
    a *= 3
    b *= 3
    for q in range(3):
        H[a + q], H[b + q] = H[b + q], H[a + q]


@njit(cache=CACHE, inline="always")
def dh_push(H, size, h, l, val):
    """Push (h, l, val) on the min-heap ``H`` of ``size`` triples; return the new size."""
    i = size
    H[3 * i] = h
    H[3 * i + 1] = l
    H[3 * i + 2] = val
    while i > 0:
        p = (i - 1) >> 1
        if not _dh_less(H, i, p):
            break
        _dh_swap(H, i, p)
        i = p
    return size + 1


@njit(cache=CACHE, inline="always")
def dh_pop(H, size):
    """Remove the minimum; return (hi, lo, val, new size)."""
    h = H[0]
    l = H[1]
    val = H[2]
    size -= 1
    H[0] = H[3 * size]
    H[1] = H[3 * size + 1]
    H[2] = H[3 * size + 2]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        if a + 1 < size and _dh_less(H, a + 1, a):
            a += 1
        if not _dh_less(H, a, i):
            break
        _dh_swap(H, a, i)
        i = a
    return h, l, val, size


@njit(cache=CACHE, nogil=True)
def gc_steps(g, nz, s, edges, step0, n_steps):
    """Prim steps ``step0 .. step0 + n_steps - 1`` over the noisy keys of a symmetric CSR
    topology, with a lazy min-heap of CSR positions (an entry is pushed when it improves
    its end's best key, skipped when popped stale). Each edge is looked at once, from
    its first end to join, with the dense kernels' skip test. ``state`` holds
    [heap size, the vertex that joins next]. O(m + k log m) in all for the k
    improvements (about n ln(m / n)). Writes (tree vertex, new vertex) pairs to ``edges``.
    ``g``: the graph (``CsrArrays``); ``nz``: the noise (``GumbelNoise``); ``s``: the
    state (``GumbelCsr``), advanced in place.
    """
    indptr, indices, data = g  # CsrArrays
    c, kw, b, b_hi, b_lo, inv_b, plain, _, _, _, _ = nz  # scalars for the per-edge loops
    hi, lo, visited, H, state = s  # GumbelCsr's fields
    ka, kb, c2, c3 = kw[0], kw[1], kw[2], kw[3]
    size = state[0]
    v = state[1]
    for step in range(step0, step0 + n_steps):
        visited[v] = True
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if visited[u]:
                continue
            x = c * data[p]
            h = hi[u]
            l = lo[u]
            t = ((x - h) - l) * inv_b
            if not plain and t >= T_SKIP:
                continue
            m = bits_of_words(ka, kb, c2, c3, v, u)
            if not plain and t >= gumbel_upper_eps(m):
                continue
            h, l, better = _exact(x, h, l, unit_of_bits(m), b, b_hi, b_lo)
            if better:
                hi[u] = h
                lo[u] = l
                size = dh_push(H, size, h, l, np.float64(p))  # exact: p < 2**53
        while True:
            h, l, pf, size = dh_pop(H, size)
            p = np.int64(pf)
            u = indices[p]
            if not visited[u] and h == hi[u] and l == lo[u]:
                break
        # the row of position p: the tree end
        edges[step, 0] = np.searchsorted(indptr, p, side="right") - 1
        edges[step, 1] = u
        v = u
    state[0] = size
    state[1] = v


#: Noise scales b at or above this are computed scaled down by ``_KEY_SHRINK``: below it
#: |b * G| < 37.5 * 2**960 < ulp(DBL_MAX) / 2, so x - b * G cannot overflow for any finite x.
_B_BIG = 2.0 ** 960
#: x and b multiplied by this power of two (exact for normal numbers, so the keys' order is
#: unchanged) keep |x| + 37.5 |b| <= 2**1016 + 2**998 for every b <= 2**1000
#: (``privacy.gumbel_rate`` >= 2**-1000): no overflow, and Dekker's split of b stays finite.
_KEY_SHRINK = 2.0 ** -8


def _scale(lam):
    """(b, b_hi, b_lo, 1 / b, f) for the rate lam: the kernels compare the keys
    f * x - (f * b) * G, and return f * b (split) and its inverse with f.

    b = 1 / lam is rounded up, so the effective rate 1 / b never exceeds lam. f is 1,
    or ``_KEY_SHRINK`` when b >= ``_B_BIG``: there w - b * G could overflow for weights
    near the largest double (the keys would be NaN and never relax). f is a power of two
    chosen from the public b alone, so f * x - (f * b) * G = f * (x - b * G) exactly
    (away from subnormal weights, which such a b absorbs anyway) and the tree is the
    same. Callers multiply the weights' sign c (or sgn) by f.
    """
    b = 1.0 / lam
    if b * lam < 1.0:
        b = math.nextafter(b, math.inf)
    f = _KEY_SHRINK if b >= _B_BIG else 1.0
    bs = b * f
    if not (math.isfinite(bs) and bs > 0.0 and math.isfinite(_SPLIT * bs)):
        raise ValueError(f"the noise scale 1 / rate = {b!r} is not a finite positive number "
                         "at most 2**1000; use a smaller sensitivity or a larger rho")
    b_hi, b_lo = split(bs)
    return bs, b_hi, b_lo, 1.0 / bs, f


def gumbel_csr(indptr, indices, data, start, maximum, lam, key, plain=False, run=None):
    """The gumbel release on a symmetric CSR topology (as :func:`gumbel_dense`).

    Parameters
    ----------
    indptr, indices, data : ndarray
        A validated symmetric CSR graph (both directions stored, sorted indices), connected.
    start, maximum, lam, key, plain, run
        As in :func:`gumbel_dense`.

    Returns
    -------
    ndarray (n - 1, 2) int64
        (tree vertex, new vertex) in the order Prim added them.

    Notes
    -----
    O(m + n log(m) log(m / n)) time; O(n) extra memory plus the heap, 24 bytes per
    improvement (at most one per undirected edge, about n ln(m / n) in practice).
    """
    n = indptr.shape[0] - 1
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    if n < 2:
        return edges
    b, b_hi, b_lo, inv_b, f = _scale(lam)
    kw = np.array(key_words(*key), dtype=np.uint64)
    c = -f if maximum else f  # the sign of the weights, times the keys' scale (_scale)
    data = np.asarray(data, dtype=np.float64)
    hi = np.full(n, np.inf)
    lo = np.zeros(n)
    visited = np.zeros(n, dtype=np.bool_)
    H = np.empty(3 * (indices.shape[0] // 2 + 1))  # one push at most per undirected edge
    state = np.array([0, start], dtype=np.int64)

    g = CsrArrays(indptr, indices, data)
    nz = GumbelNoise(float(c), kw, b, b_hi, b_lo, inv_b, bool(plain), False, np.inf, 0)
    s = GumbelCsr(hi, lo, visited, H, state)

    def advance(step0, k):
        gc_steps(g, nz, s, edges, step0, k)
    if run is None:
        advance(0, n - 1)
    else:
        run(advance, n - 1, max(1, (1 << 16) // max(1, indices.shape[0] // n)))
    return edges
