"""The grouped cut queue: Prim's cut edges grouped by discretized score.

A ``GroupQueue`` (the state) is a namedtuple of five small tuples, one per role
(below), with the ``gq_*`` kernels that update and read it at every Prim step
beside it. They are jit-only (``core.jit_only``: no Python entry point, whose
wrapper cost as much to compile as a kernel). :mod:`fastpamst_nb.cutqueue_build`
builds a queue (``gq_build``, a Python function) and chooses its layout.

**Calling convention.** The kernels run once per Prim step (``gq_update``,
``gq_update_csr``, ``sampler.rnm_select``) take the whole queue; everything they
call per node or per draw takes only the role tuples it reads (``gq_top(lay,
counts)``). numba increments and decrements the reference count of every array
a call passes, the 18 arrays of a whole queue included, so a call passing the
queue costs measurably more than one passing its counters (docs/design.rst,
Measurements behind the code).

* **Groups** (``q.layout``, ``q.keys``). An edge's score is ``s * key`` with
  ``key = floor(sgn * w / s)`` (``sgn = -1``: minimum tree). Edges with equal keys
  form a group; groups are indexed 0..G-1 in increasing key order and
  ``gq_key(lay, keys, g)`` is its key. With ``direct`` addressing a group index
  is ``key - kmin`` (empty groups allowed, nothing stored per edge or per key);
  with *compressed* buckets only the occupied aligned buckets
  ((key - kmin) >> bucket_shift) exist, ranked in key order, each bucket's base
  key in ``q.keys.key`` and each edge's rank in ``q.keys.rank`` (sparse; a dense
  queue looks the few it needs up in the hash set ``q.keys.table``), and a group
  is rank << bucket_shift | the key's offset in its bucket (docs/design.rst,
  Compressed buckets).
* **Buckets.** Groups are gathered in buckets of ``2**bucket_shift`` consecutive
  groups, the widest whose key span r * (2**bucket_shift - 1) stays below the
  sampler's ``sigma`` (r: noise rate in key units). A bucket's maximum noise is
  one draw and its carrier is looked up only when it could win, so the sampler
  works bucket by bucket, not group by group.
* **Wide buckets** (``wide``, dense only). At most 16,384 buckets cover the key
  range (their counters stay in cache), each cut into *sub-buckets* of
  ``2**sub_shift`` groups, the noise-wide buckets above. Nothing is counted per
  sub-bucket: a slot stores its sub-bucket (instead of its group offset, which
  the edge's weight gives back when a draw needs it), and the sampler splits the
  one or two wide buckets it reaches by partitioning their compacted slots
  (``sampler.rnm_steps``, inside its walk), O(their slots) per selection.
  ``q.store.open_bucket`` = (bucket, unprocessed slots) while the sampler is
  inside one. A wide bucket opened with at least 4 n slots and half the cut (a crowded range) is
  split once instead (``cutqueue_materialize.gq_split_wide``): its occupied
  sub-buckets get their own regions and counts (``q.store.split``, ``q.store.subs``),
  kept by the update loop, so a step reads no slot of it but the members it draws.
* **Slot store** (``q.store``). Each bucket owns a region of the slot pool,
  ``slots[start[b]:start[b] + cap[b]]``: as many slots as it has edges, plus one
  spare, so the store holds each edge once. Sparse and compressed queues size
  every bucket from the histogram they build; a dense queue with direct keys sizes
  a bucket only when it materializes it (below). A slot packs the edge's
  group offset in its bucket (high bits) and its code (low 40 bits):
  ``a << 20 | b`` dense (a visited, b not, when it joined), the CSR position sparse
  (``slot_pack``, ``slot_offset``, ``slot_code``; ``code_pack``, ``code_ends``).
* **Lazy deletion.** The paper swaps an edge out of its group's interval and keeps
  a position index per edge; at n = 5000 that measured ~12x the cost of a whole
  exact Prim (random writes; docs/design.rst, Lazy deletion, and why). Here an
  edge joining the cut is *appended* to its bucket and an edge leaving it only
  decrements counters. Counts are exact at all times; dead slots (both endpoints
  visited) stay until the bucket is sampled from: a pick draws a uniformly random
  slot, rejects dead ones (and, for a pick inside one group, other groups), and
  first compacts the bucket when more than half of its slots are dead, so
  compaction costs O(1) amortized per edge. A uniformly random *active* member is
  all exactness needs, and that is what rejection gives.
* **Lazy materialization (dense).** The sampler reads slots only of the few
  buckets near the top of the cut, so a dense queue starts with no bucket
  materialized (``materialized[0] = B``): joining edges of buckets below it are
  only counted. When a pick needs a lower bucket, one pass over the current cut
  (``q.cut``: ``inside`` x ``rest``) fills it and at least as many buckets again
  (``cutqueue_materialize.gq_materialize``), so there are O(log B) passes; a bottom candidate drawn
  from at least an eighth of the cut is a uniform (visited, unvisited) pair instead
  (``gq_take_cut``). Only the top few buckets end up materialized (figures in
  docs/design.rst, Measurements behind the code).
  Sparse queues materialize everything (``materialized[0] = 0``). A bucket's
  region is sized when it is first materialized, by one pass over the upper
  triangle counting the edges of 4x the buckets needed (``_size_buckets``): a
  histogram of every key at build cost more than the sizing passes.
* **Filtered updates (dense).** Only edges of materialized buckets are written or
  counted, and they score above a bound (``_score_floor``), so the plain update
  loop compares a row with that bound (vectorized) and computes the keys of the
  few entries above it only; the cut's size change comes from its sides.
* **Lazy counting (dense).** Where a dense queue's updates run the plain loop
  (``lazy_counts``: direct keys without the block layer, or compressed ones in
  ``_update_compressed``, with it too; no per-group counts), buckets
  below ``materialized[0]`` keep no count either: an edge event there only
  changes ``total``. ``gq_materialize`` counts the buckets it adds, so a bucket
  is counted exactly when it is materialized; ``gq_top`` returns -2 when every
  counted bucket is empty, and the sampler materializes before it reads a count
  below the threshold (docs/design.rst, Lazy materialization). The counter
  increment was half of the update loop's cost.
* **Counters** (``q.counts``). ``bucket`` holds each bucket's active count; above
  16384 buckets a second layer (``block``: blocks of ``2**block_shift`` ~ sqrt(B)
  buckets) keeps the best non-empty bucket and rank selection at O(sqrt(B)) (the
  paper's layered blocks, with two layers since buckets already gather ~G/B
  groups); below it a scan of B counts is cheaper than the extra counter update
  per edge. ``group`` (per group) is kept only where buckets are single groups
  (``sigma < 0``, a test setting), and ``total[0]`` counts the whole cut.

The levels of the hierarchy are named: ``GROUP`` (0), ``BUCKET`` (1), ``BLOCK``
(2) and ``ROOT`` (the whole cut).
"""

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.extending import intrinsic

from .core import CACHE, jit_only
from .cutqueue_codes import (  # noqa: F401  (re-exported: the queue's callers import them here)
    _CODE_BITS, _CODE_MASK, _END_BITS, _END_MASK, _HSET_BITS, _HSET_MASK, _HSET_MUL, _hset_home, code_ends,
    code_pack, slot_code, slot_offset, slot_pack,
)
# (the moved rule keeps its old name here, so the code below reads as before)
from .keys import discretize, score_floor as _score_floor

QueueLayout = namedtuple(
    "QueueLayout",
    ["n", "dense", "sgn", "s", "inv", "kmin", "direct", "n_groups", "n_buckets", "n_blocks",
     "bucket_shift", "block_shift", "layered", "wide", "sub_shift", "group_counts", "lazy_counts",
     "min_sized", "hash_bits"],
)
QueueLayout.__doc__ = """The queue's fixed scalars, decided by ``gq_build`` from shapes, s and r.

n : int64
    Vertices of the graph.
dense : bool
    A complete graph read from W (True) or a CSR graph (False).
sgn, s : float64
    Sign (-1.0: minimum tree) and discretization step: key = floor(sgn * w / s).
inv : float64
    ``exact_inverse(s)``: 1/s for a power-of-two step, by which ``discretize``
    multiplies (bit-identical keys, no division), else 0.0.
kmin : int64
    The smallest key. With ``direct`` keys group g has key kmin + g.
direct : bool
    Group = key - kmin (True), or compressed buckets: group = (the bucket's rank,
    stored in ``GroupKeys.rank``) << bucket_shift | the key's offset in it (False).
n_groups, n_buckets, n_blocks : int64
    G groups, B = ceil(G / 2**bucket_shift) buckets (compressed: the occupied ones,
    G = B << bucket_shift), and the blocks of the second counter layer (0 unless
    ``layered``).
bucket_shift, block_shift : int64
    log2 of the groups per bucket and of the buckets per block.
layered : bool
    The block layer is kept (more than 16384 buckets).
wide : bool
    Wide buckets: a slot stores its sub-bucket instead of its group offset.
sub_shift : int64
    log2 of the groups per sub-bucket of a wide bucket (= bucket_shift otherwise).
group_counts : bool
    Per-group counts are kept (``QueueCounts.group``).
lazy_counts : bool
    Bucket counts are kept only for materialized buckets (dense graphs whose
    updates run the plain loop): below ``SlotStore.materialized[0]`` a bucket's
    count is 0 until ``gq_materialize`` counts it; ``total`` is always exact.
hash_bits : int64
    Compressed buckets found through the hash set ``GroupKeys.table`` (log2 of its
    size), with no rank stored per edge (dense, lazy counts); 0 otherwise.
min_sized : int64
    The fewest top buckets a lazy sizing pass covers (``gq_materialize``):
    ``_SIZE_MIN``, or with ``wide`` buckets those that hold about
    1/``cutqueue_build._WIDE_SIZE_SHARE`` of the edges in the crowding test's sample.
"""

GroupKeys = namedtuple("GroupKeys", ["key", "rank", "table", "slot_rank"])
GroupKeys.__doc__ = """Bucket of each edge and base key of each bucket, stored only for compressed buckets.

key : int64 array (B,)
    The base key of compressed bucket b, kmin + (its aligned bucket) << bucket_shift:
    group g has key key[g >> bucket_shift] + (g & (2**bucket_shift - 1)) (empty with
    direct keys: kmin + g).
rank : int32 or int64 array
    The compressed bucket of each edge: at v * n + u (dense, both orders, 0 on the
    diagonal) or at its CSR position (sparse). Empty with direct keys, and with
    ``hash_bits`` (then the few edges whose group is needed look it up below).
table, slot_rank : int64 arrays (2**hash_bits,)
    With ``hash_bits``: the hash set of the occupied aligned bucket ids (-1: a free
    slot; ``_hset_home``) and the compressed bucket of each slot's id. Else empty.
"""

QueueCounts = namedtuple("QueueCounts", ["bucket", "block", "group", "total"])
QueueCounts.__doc__ = """Exact active-edge counts, updated on every edge event.

bucket : int64 array (B,)
block : int64 array (n_blocks,)
    Sums of 2**block_shift consecutive buckets (empty unless ``layered``).
group : int64 array (G,) or (1,)
    Per group, where ``group_counts`` (else unused).
total : int64 array (1,)
    The whole cut.
"""

SlotStore = namedtuple("SlotStore", ["start", "cap", "fill", "slots", "ends", "materialized",
                                     "open_bucket", "sized", "top_range", "far_edges", "split", "subs",
                                     "top"])
SlotStore.__doc__ = """The edges of each bucket, appended as they join the cut (lazy deletion).

start, cap : int64 arrays (B,)
    Bucket b owns slots[start[b]:start[b] + cap[b]]: as many as it has edges (that
    had an unvisited end when it was sized), plus a spare one that the plain
    update loop may overwrite past ``fill[b]``. Set only for buckets >= sized[0]
    (both 0 below).
fill : int64 array (B,)
    Slots written in each bucket, dead ones included.
slots : int64 array (m + B,)
    The pool the regions are cut from.
    (group offset in the bucket, or sub-bucket if ``wide``) << 40 | edge code
    (``slot_pack``).
ends : int array
    The endpoint of each CSR position (the graph's ``indices``): a sparse edge is
    alive while it is unvisited. Unused for dense graphs, whose codes carry it.
materialized : int64 array (1,)
    Buckets >= materialized[0] hold their slots; lower ones only their counts (nothing
    with ``lazy_counts``).
open_bucket : int64 array (2,)
    (wide bucket, its unprocessed slots) while the sampler splits it, else (-1, 0).
split : int64 array (4,)
    (the wide bucket split once into its occupied sub-buckets, how many of them S, the
    lowest *filled* sub-bucket X, the entries keyed into the bucket since the sampler
    last read this field), or (-1, 0, 0, 0): a wide bucket the sampler opens with at
    least ``sampler._SPLIT_MIN_FILL`` n slots is split
    (``cutqueue_materialize.gq_split_wide``, at most one a queue), so that a step no
    longer partitions its slots (O(its edges), issue 31). Sub-buckets X .. S - 1 hold
    their slots and counts; the lower ones neither (their edges are only counted in the
    bucket's count, by a compare an entry: ``_update_split``), until the sampler fills
    them (``cutqueue_materialize.gq_split_fill``, X at least halved each time).
subs : int64 array (4, SPLIT_MAX)
    The split bucket's sub-buckets 0 .. S - 1 in increasing order: their ids (sub-bucket
    in the wide bucket), active edges, first slot and slots written (dead included);
    each owns slots[start:start + its edges with an unvisited end at the split]. The
    counts and slots of sub-buckets below X are stale (not read).
    (4, 0) for a queue that is not wide.
sized : int64 array (2,)
    (lowest bucket with a region, first free slot of the pool). A dense queue with
    direct keys starts with no region and sizes buckets as they are materialized
    (``gq_materialize``), always at or below ``materialized[0]``; others are sized
    by ``gq_build`` from the histogram they need anyway.
top_range : int64 array (2,)
    The counted range of a dense queue with lazy counts (``sampler.rnm_steps``, docs/design.rst,
    Wide nodes drawn from the cut): (its lowest bucket ra, the active cut edges of buckets
    ra .. B - 1). ra = -1 until the sampler decides, B when there is none (never formed,
    or written by ``gq_materialize``). While there is one nothing is materialized, and
    ``gq_update`` keeps its count (a compare per entry) and writes nothing.
far_edges : int64 array (1,)
    The edges of the graph far below the top of the key range (``sampler._far_edges``,
    the far-edge rule of a dense cut node), -1 until counted.
top : int64 array (B,)
    The highest group offset written to bucket b's slots since its last compaction (-1:
    none), dead slots included: an upper bound of its active members' offsets, kept by
    the lazy update loops and the materialization pass of a dense queue (not read for
    wide buckets, whose slots keep sub-buckets). The sampler bounds a counted bucket's
    keys by it instead of by its highest group (docs/design.rst, The selection loop on
    the shapes).
"""

CutSides = namedtuple("CutSides", ["inside", "rest", "where", "sizes"])
CutSides.__doc__ = """The two sides of a dense cut, for passes and draws over visited x unvisited.

inside : int64 array (n,)
    The visited vertices, in order of joining (first sizes[0] entries).
rest : int64 array (n,)
    The unvisited vertices (first sizes[1] entries, in no order).
where : int64 array (n,)
    Position of each unvisited vertex in ``rest``.
sizes : int64 array (2,)
    (visited, unvisited) counts. All four are empty for sparse graphs but ``sizes``.
"""

GroupQueue = namedtuple("GroupQueue", ["layout", "keys", "counts", "store", "cut"])
GroupQueue.__doc__ = """Prim's cut grouped by key: a ``QueueLayout``, ``GroupKeys``,
``QueueCounts``, ``SlotStore`` and ``CutSides`` (see the module docstring)."""

# the named encodings of slots and codes and the hash set's home slot live in
# cutqueue_codes.py (imported above; their names are re-exported here)


@jit_only
def gq_group(w, idx, lay, keys):
    """Group of an edge of weight ``w`` at flat position ``idx`` (v*n+u dense, CSR
    position sparse), for per-draw code (``gq_take_cut``); per-edge loops inline it."""
    if lay.direct:
        return discretize(w, lay.sgn, lay.s, lay.inv) - lay.kmin
    if lay.hash_bits > 0:
        return _hash_group(keys.table, keys.slot_rank, lay.hash_bits, w, lay.sgn, lay.s, lay.inv,
                           lay.kmin, lay.bucket_shift)
    return _rank_group(keys.rank[idx], w, lay.sgn, lay.s, lay.inv, lay.kmin, lay.bucket_shift)


@jit_only
def _end(code, dense, ends):
    """The endpoint that was unvisited when the edge joined; the edge is alive while it is."""
    if dense:
        return code_ends(code)[1]
    return ends[code]


# The levels of a node: a group, a bucket, a block of buckets, the whole cut. They
# are np.int64, not int: numba compiles a callee once per literal argument it is
# given (Literal[int](3) is a type of its own), which had tripled the compile time
# of the selection kernels (docs/design.rst, Compile time).
GROUP = np.int64(0)
BUCKET = np.int64(1)
BLOCK = np.int64(2)
ROOT = np.int64(3)  # node 0 holds the whole cut


@jit_only(inline="always")
def gq_key(lay, keys, g):
    """The integer key of group g: kmin + g with direct keys, else the base key of
    g's compressed bucket plus g's offset in it (O(1) either way)."""
    if lay.direct:
        return lay.kmin + g
    return keys.key[g >> lay.bucket_shift] + (g & ((np.int64(1) << lay.bucket_shift) - 1))


@jit_only(inline="always")
def _rank_group(rank, w, sgn, s, inv, kmin, bshift):
    """Group of an edge of weight ``w`` whose stored compressed bucket is ``rank``: the
    bucket's groups are its 2**bshift consecutive keys, so the offset is the key's
    low bits (aligned at kmin); no key is computed when buckets are single groups."""
    g = np.int64(rank) << bshift
    if bshift > 0:
        g |= (discretize(w, sgn, s, inv) - kmin) & ((np.int64(1) << bshift) - 1)
    return g


@jit_only(inline="always")
def _hash_group(table, slot_rank, bits, w, sgn, s, inv, kmin, bshift):
    """Group of an edge of weight ``w`` through the hash set of occupied buckets (no
    stored rank): its aligned bucket's slot gives the rank; per hit, not per edge."""
    k = discretize(w, sgn, s, inv) - kmin
    return (_hash_rank(table, slot_rank, bits, k >> bshift) << bshift) | (k & ((np.int64(1) << bshift) - 1))


@jit_only(inline="always")
def _hash_rank(table, slot_rank, bits, a):
    """The rank of occupied aligned bucket a (its slot's ``slot_rank``) in the hash set."""
    mask = (np.int64(1) << bits) - 1
    h = _hset_home(a, bits)
    while table[h] != a:
        if table[h] < 0:
            # the set never deletes, so a free slot proves the id absent: W changed
            # during the release (it is read in place); raise rather than probe forever
            raise AssertionError("fast_pamst: an edge's bucket is not in the queue's set; "
                                 "was the weight matrix modified during the release?")
        h = (h + 1) & mask
    return slot_rank[h]


# gq_update's loops. Each is written flat on the arrays it touches, passed as
# arguments, with scalar-only helpers (see gq_update for the measurements).

# the filtered loops list the hits of a row in chunks of this many entries
_CHUNK = 1024



if config.DISABLE_JIT:
    def _trailing_zeros(m):
        """The index of the lowest set bit of m != 0 (plain Python)."""
        x = int(m)
        return (x & -x).bit_length() - 1
else:
    # the lowest set bit's index (LLVM's cttz: one instruction, tzcnt)
    from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros


if config.DISABLE_JIT:
    def _prefetch(row, u):
        """A hint (no effect on results): nothing to do in plain Python."""
else:
    @intrinsic
    def _prefetch(typingctx, row, u):
        """Ask the processor to load the cache line of ``row[u]`` (LLVM's ``llvm.prefetch``,
        a read kept in all cache levels). A hint only: it never faults and changes no value."""
        def codegen(context, builder, signature, args):
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            stride = builder.extract_value(ary.strides, 0)
            byte = ir.IntType(8).as_pointer()
            ptr = builder.gep(builder.bitcast(ary.data, byte), [builder.mul(args[1], stride)])
            i32 = ir.IntType(32)
            fn = builder.module.declare_intrinsic(
                "llvm.prefetch", fnty=ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]))
            builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return types.void(row, types.int64), codegen


# entries of a row requested ahead of its reads (4 KiB of float64): the first ones before
# the row's first chunk, then, as the masks' listing reads each block of 64 entries, the
# block this far ahead (the dense listing: each chunk's entries this far ahead, at once).
# Requested a few KiB ahead of the reads, the row's lines arrive while the listing works
# on the ones before them; the whole row requested at once (64 KiB ahead: 8192, before
# the second pass) came in before the first compare and the listing's work added to
# the row's memory time (docs/design.rst, The selection loop at narrow noise, second pass)
_PREFETCH_AHEAD = 512
# ... and by the vectorized count of a row (_range_count), which takes no chunks: the
# first this many entries at once (64 KiB; a whole row of the shapes measured)
_PREFETCH_ROW = 8192


@jit_only(inline="always")
def _prefetch_row(row, lo, hi):
    """Request the cache lines of ``row[lo:hi]`` (a row of W, clipped to it) before they
    are read: a row that joins comes from memory, and its lines requested at once arrive
    in parallel instead of one hardware-prefetch ramp per 4 KiB page (a counting pass
    over rows in random order measured 0.70 against 0.89 floors at n = 4000;
    docs/design.rst, The selection loop on the shapes). Callers request the first
    ``_PREFETCH_AHEAD`` entries; the listing (``_chunk_hits``) then keeps requesting
    that far ahead of its reads."""
    for u in range(lo, min(hi, row.shape[0]), 8):
        _prefetch(row, np.int64(u))


@jit_only(inline="always")
def _row_hits_sparse(row, c0, c1, sgn, ythr, hit):
    """``_row_hits`` for rows where few entries pass: each block of 64 entries is
    compared into a 64-bit mask (bit j: entry j passes), and the set bits are listed by
    trailing-zero counts, lowest first. The same entries in the same order. Per entry
    (a pass over rows in random order, prefetched, CPU in floors; docs/design.rst, The
    selection loop at narrow noise): on the integers' rows 1.06 / 1.12 / 1.21 / 1.18 at
    1% / 2% / 4% / 7% of hits, against 1.11 / 1.15 / 1.29 / 1.32 for the earlier list of
    the blocks of 8 holding a hit, and about 2 for ``_row_hits`` before the prefetch.
    Each block requests the block ``_PREFETCH_AHEAD`` entries ahead (within the row), so
    that the row's lines arrive while the blocks before them are listed."""
    k = 0
    b0 = c0
    n = row.shape[0]
    while b0 + 64 <= c1:
        for j in range(0, 64, 8):
            if b0 + _PREFETCH_AHEAD + j < n:
                _prefetch(row, np.int64(b0 + _PREFETCH_AHEAD + j))
        # through a slice from 0: row[b0 + j] (b0 not known >= 0) took numba's
        # negative-index fix-up per entry and the loop compiled to gathers
        blk = row[b0:b0 + 64]
        m = np.uint64(0)
        for j in range(64):
            m |= np.uint64(sgn * np.float64(blk[j]) >= ythr) << np.uint64(j)
        while m != 0:
            hit[k] = b0 + np.int64(_trailing_zeros(m))
            k += 1
            m &= m - np.uint64(1)
        b0 += 64
    for u in range(b0, c1):
        hit[k] = u
        k += sgn * np.float64(row[u]) >= ythr
    return k


# _row_hits_sparse while a row's previous chunk listed fewer than 1 / _SPARSE_HITS of its
# entries (the two listings give the same entries: speed only)
_SPARSE_HITS = 8


@jit_only(inline="always")
def _row_hits(row, c0, c1, sgn, ythr, hit):
    """Write to ``hit`` the u in [c0, c1) with sgn * row[u] >= ythr, in order; returns
    how many. Branch-free (a store and an add per entry): the test passes for a few
    percent of the entries, where a branch per entry mispredicted on each of them."""
    k = 0
    part = row[c0:c1]  # indexed from 0: no negative-index fix-up per entry (as above)
    for j in range(c1 - c0):
        hit[k] = c0 + j
        k += sgn * np.float64(part[j]) >= ythr
    return k



@jit_only(inline="always")
def _chunk_hits(row, c0, c1, sgn, ythr, hit, sparse):
    """``_row_hits`` of row[c0:c1], by 64-bit masks (``_row_hits_sparse``) when ``sparse``
    (the row's previous chunk listed few entries), the row prefetched ``_PREFETCH_AHEAD``
    entries ahead (by the masks' blocks, or the chunk's at once before the branch-free
    listing). The caller sets the next chunk's ``sparse`` from the count:
    ``k * _SPARSE_HITS < c1 - c0``."""
    if sparse:
        return _row_hits_sparse(row, c0, c1, sgn, ythr, hit)
    _prefetch_row(row, c0 + _PREFETCH_AHEAD, c1 + _PREFETCH_AHEAD)
    return _row_hits(row, c0, c1, sgn, ythr, hit)


UpdateScalars = namedtuple(
    "UpdateScalars",
    ["sgn", "s", "inv", "kmin", "bshift", "mat", "block_shift", "sub_shift", "hash_bits", "ythr",
     "direct", "group_counts", "layered", "rank_base", "split_b", "n_subs"],
)
UpdateScalars.__doc__ = """The loop-invariant scalars of one ``gq_update``, built once per call
and passed by value to its loop kernel, which unpacks them into locals before the
loop (so the compiled loop reads plain scalars, as when they were arguments).

sgn, s, inv, kmin, bshift, block_shift, hash_bits, direct, group_counts, layered
    The ``QueueLayout`` fields of those names (bshift: ``bucket_shift``).
mat : int64
    The lowest materialized bucket (``SlotStore.materialized[0]``).
sub_shift : int64
    ``QueueLayout.sub_shift`` for a wide queue, else 0 (the slots keep group offsets).
ythr : float64
    The lazy loops' score filter: the lowest score bucket ``mat`` holds
    (``_score_floor``; +inf when no compressed bucket is materialized); 0.0 for the
    counting loops, which read every entry.
rank_base : int64
    Offset of row v's entries in ``GroupKeys.rank`` (compressed, counted buckets).
split_b, n_subs : int64
    The wide bucket split into its sub-buckets and how many (``SlotStore.split``), or -1.
"""

SplitBand = namedtuple("SplitBand", ["x_lo", "f_lo", "mul_b", "div_b", "thr_b"])
SplitBand.__doc__ = """The split wide bucket's unfilled sub-buckets, for ``_update_split``.

x_lo, f_lo : int64
    The lowest filled sub-bucket (``SlotStore.split[2]``) and its id.
mul_b, div_b, thr_b
    The test of key >= K_b, the bucket's base key, on a score without its key
    (``range_threshold``'s rule): ``(sgn * w) / s >= thr_b`` (div_b) else
    ``(sgn * w) * mul_b >= thr_b``.
"""


@jit_only(inline="always")
def _unvisited(rest, where, n_rest, y):
    """Whether vertex y is unvisited: it sits in ``rest`` (``where`` is stale for the
    visited ones)."""
    j = where[y]
    return j < n_rest and rest[j] == y


@jit_only(inline="always")
def _sub_index(ids, S, f):
    """The index of sub-bucket id f among the split bucket's S increasing ids (present):
    a binary search whose steps depend on S only, each a select, not a branch (a
    branching search mispredicted about every step: ~100 ns an edge of the bucket)."""
    base = np.int64(0)
    length = S
    while length > 1:
        half = length >> 1
        base = base + half if ids[base + half] <= f else base
        length -= half
    return base


@jit_only
def _update_plain(row, v, visited, slots, start, fill, bucket, subs, top, sc):
    """``gq_update``'s loop for direct keys, no per-group counts, no block layer (the
    benchmark's case, ``lazy_counts``); ``sc``: its ``UpdateScalars``. ``mat``: the
    lowest materialized bucket, the lowest one counted; ``sub_shift``: 0, or the
    sub-bucket shift of a wide queue, whose slots keep the sub-bucket (group offset
    >> sub_shift); a split wide bucket's edges go to their sub-bucket's region and count
    (``SlotStore.subs``; a branch, taken for that bucket only). ``top``: each bucket's
    highest offset written (``SlotStore.top``), raised by the joining edges only.

    Only edges of materialized buckets (the top few of the cut) are counted and
    stored; the cut's size changes by a number known without reading the row
    (``gq_update``). So the loop is a filter: the row is compared with the lowest
    score a materialized bucket holds (``_score_floor``), the entries above it are
    listed without a branch (``_row_hits``), and only their keys are computed.
    Computing every key (a floor and a conversion per edge) was twice the cost of
    the floor's loop; the filter streams the row (docs/design.rst, Measurements
    behind the code).
    """
    sgn, s, inv, kmin, bshift = sc.sgn, sc.s, sc.inv, sc.kmin, sc.bshift
    mat, sub_shift, ythr, split_b, n_subs = sc.mat, sc.sub_shift, sc.ythr, sc.split_b, sc.n_subs
    ids = subs[0]
    n = row.shape[0]
    hit = np.empty(min(n, _CHUNK), dtype=np.int64)
    _prefetch_row(row, np.int64(0), np.int64(_PREFETCH_AHEAD))
    sparse = True
    for c0 in range(0, n, _CHUNK):
        c1 = min(c0 + _CHUNK, n)
        k = _chunk_hits(row, c0, c1, sgn, ythr, hit, sparse)
        sparse = k * _SPARSE_HITS < c1 - c0
        for i in range(k):
            u = hit[i]
            w = np.float64(row[u])
            if u == v:
                continue
            g = discretize(w, sgn, s, inv) - kmin
            b = g >> bshift
            if b == split_b:
                # the split wide bucket: its sub-bucket's count and region (no spare
                # slot there: a leaving edge writes nothing)
                seen = np.int64(visited[u])
                x = _sub_index(ids, n_subs, (g - (b << bshift)) >> sub_shift)
                if not seen:
                    slots[subs[2, x] + subs[3, x]] = slot_pack((g - (b << bshift)) >> sub_shift, code_pack(v, u))
                    subs[3, x] += 1
                subs[1, x] += 1 - 2 * seen
                bucket[b] += 1 - 2 * seen
            elif b >= mat:
                # branch-free on visited[u], a coin flip mid-release: the slot is written
                # either way (a leaving edge's lands in the bucket's spare slot, past
                # its fill, and is overwritten by the next append)
                seen = np.int64(visited[u])
                off = (g - (b << bshift)) >> sub_shift
                slots[start[b] + fill[b]] = slot_pack(off, code_pack(v, u))
                fill[b] += 1 - seen
                bucket[b] += 1 - 2 * seen
                # a leaving edge (seen) raises nothing: -1
                top[b] = max(top[b], off - (off + 1) * seen)


@jit_only(inline="always")
def _key_at_least(y, s, mul, by_div, thr):
    """Whether score y = sgn * w has key >= K, for (mul, by_div, thr) of K (``range_threshold``)."""
    return (y / s if by_div else y * mul) >= thr


@jit_only
def _update_split(row, v, visited, slots, start, fill, bucket, subs, sc, band, d_all):
    """``_update_plain`` once a wide bucket is split (``SlotStore.split``): the entries of
    its unfilled sub-buckets (below ``band.x_lo``) are neither keyed nor written, only
    counted in the bucket's count, and that by difference: the row's change to the cut,
    ``d_all`` (+1 an unvisited partner, -1 a visited one, known from the cut's sides),
    less the entries below the bucket (one branch-free compare an entry, in the pass that
    lists the entries scoring at least sub-bucket x_lo's floor, or with lower buckets
    materialized bucket ``mat``'s, for the keyed loop) and the keyed ones above it. Where
    the split bucket holds most of a row (a crowded range: issue 31, the integers at
    n = 16,000 short of memory) keying every entry cost 44x the floor's release; now a
    step keys the entries of the filled sub-buckets near the top only. Returns the
    entries keyed (``SlotStore.split[3]``; the sampler's ``ST_SPLIT_KEYS``)."""
    sgn, s, inv, kmin, bshift = sc.sgn, sc.s, sc.inv, sc.kmin, sc.bshift
    mat, sub_shift, ythr, split_b, n_subs = sc.mat, sc.sub_shift, sc.ythr, sc.split_b, sc.n_subs
    f_lo = band.f_lo
    mul_b, div_b, thr_b = band.mul_b, band.div_b, band.thr_b
    ids = subs[0]
    n = row.shape[0]
    hit = np.empty(min(n, _CHUNK), dtype=np.int64)
    d_out = np.int64(0)  # the row's change to the cut outside the split bucket
    keyed = np.int64(0)
    for c0 in range(0, n, _CHUNK):
        c1 = min(c0 + _CHUNK, n)
        k = 0
        for u in range(c0, c1):
            y = sgn * np.float64(row[u])
            hit[k] = u
            k += y >= ythr
            below = np.int64(not _key_at_least(y, s, mul_b, div_b, thr_b))
            d_out += below - 2 * (below & np.int64(visited[u]))
        for i in range(k):
            u = hit[i]
            if u == v:
                continue
            g = discretize(np.float64(row[u]), sgn, s, inv) - kmin
            b = g >> bshift
            keyed += 1
            seen = np.int64(visited[u])
            if b == split_b:
                f = (g - (b << bshift)) >> sub_shift
                if f < f_lo:
                    continue  # an unfilled sub-bucket's: counted by difference
                x = _sub_index(ids, n_subs, f)
                if not seen:
                    slots[subs[2, x] + subs[3, x]] = slot_pack(f, code_pack(v, u))
                    subs[3, x] += 1
                subs[1, x] += 1 - 2 * seen
            else:
                if b > split_b:
                    d_out += 1 - 2 * seen
                if b >= mat:
                    slots[start[b] + fill[b]] = slot_pack((g - (b << bshift)) >> sub_shift, code_pack(v, u))
                    fill[b] += 1 - seen
                    bucket[b] += 1 - 2 * seen
    # the diagonal is no edge: v is visited, so its entry below the bucket counted -1
    if not _key_at_least(sgn * np.float64(row[v]), s, mul_b, div_b, thr_b):
        d_out += 1
    bucket[split_b] += d_all - d_out
    return keyed


@jit_only(inline="always")
def _key_test(k, inv):
    """(mul, by_div, thr) testing key >= k on a score (``range_threshold``'s rule for a key)."""
    if k == 0:
        return 1.0, False, 0.0
    return inv, inv == 0.0, np.float64(k)


@jit_only
def _update_compressed(row, v, visited, slots, start, fill, bucket, block, table, slot_rank, top, sc):
    """``_update_plain`` for compressed buckets (no per-group counts; the block layer or not):
    the same filter, with ``ythr`` the lowest score of bucket ``mat`` (from its base
    key; +inf when nothing is materialized), and each hit's group from the hash set
    of occupied buckets (``_hash_group``). With the block layer (``layered``) the
    materialized blocks are counted too: ``mat`` is then at a block's start.
    ``top``: as in ``_update_plain``. ``sc``: the call's ``UpdateScalars``."""
    sgn, s, inv, kmin, bshift = sc.sgn, sc.s, sc.inv, sc.kmin, sc.bshift
    mat, layered, block_shift, bits, ythr = sc.mat, sc.layered, sc.block_shift, sc.hash_bits, sc.ythr
    n = row.shape[0]
    hit = np.empty(min(n, _CHUNK), dtype=np.int64)
    _prefetch_row(row, np.int64(0), np.int64(_PREFETCH_AHEAD))
    sparse = True
    low = (np.int64(1) << bshift) - 1
    last_a = np.int64(-1)  # none yet (a negative id, from a W changed mid-release, is probed)
    last_rank = np.int64(0)
    for c0 in range(0, n, _CHUNK):
        c1 = min(c0 + _CHUNK, n)
        nh = _chunk_hits(row, c0, c1, sgn, ythr, hit, sparse)
        sparse = nh * _SPARSE_HITS < c1 - c0
        for i in range(nh):
            u = hit[i]
            if u == v:
                continue
            # _hash_group, the last aligned bucket's rank kept: a row's hits at narrow
            # noise fall in the few top buckets, mostly the same one in a row
            k = discretize(np.float64(row[u]), sgn, s, inv) - kmin
            a = k >> bshift
            if a != last_a or a < 0:
                last_rank = _hash_rank(table, slot_rank, bits, a)
                last_a = a
            g = (last_rank << bshift) | (k & low)
            b = g >> bshift
            if b >= mat:
                # branch-free on visited[u], as in _update_plain
                seen = np.int64(visited[u])
                off = g - (b << bshift)
                slots[start[b] + fill[b]] = slot_pack(off, code_pack(v, u))
                fill[b] += 1 - seen
                bucket[b] += 1 - 2 * seen
                top[b] = max(top[b], off - (off + 1) * seen)
                if layered:
                    block[b >> block_shift] += 1 - 2 * seen


@jit_only(inline="always")
def _compressed_floor(lay, keys, first):
    """``_score_floor`` of compressed bucket ``first`` (from its base key): every edge of
    buckets >= first scores at least it; +inf past the last bucket."""
    if first >= lay.n_buckets:
        return np.inf
    return _score_floor(keys.key[first], np.int64(0), lay.bucket_shift, lay.s)


@jit_only(inline="always")
def _filter_floor(lay, keys, first):
    """The score below which the filtered loops (``gq_update``'s, the materialization
    pass's) skip an entry before computing its key: every edge of buckets >= first
    scores at least it, direct keys or compressed (one rule for both loops)."""
    if lay.direct:
        return _score_floor(lay.kmin, first, lay.bucket_shift, lay.s)
    return _compressed_floor(lay, keys, first)


@jit_only(inline="always")
def range_threshold(lay, keys, ra):
    """How to test ``key >= K`` (K: the base key of bucket ``ra``) on a score without
    computing the key: returns (mul, by_div, thr) with key >= K exactly when
    ``(sgn * w) * mul >= thr`` (or ``(sgn * w) / s >= thr`` where ``by_div``).

    ``discretize`` takes floor(x) of the quotient x (one rounding, the same here), and
    floor(x) >= K iff x >= K for an integer K (exact in float64: |K| < 2**52). Its one
    exception, a negative quotient that underflows to -0.0 (key -1), matters only for
    K = 0, where key >= 0 iff sgn * w >= 0 (then mul = 1). A test per entry that the
    compiler vectorizes, not a floor and a conversion."""
    k = lay.kmin + (ra << lay.bucket_shift) if lay.direct else keys.key[ra]
    if k == 0:
        return 1.0, False, 0.0
    return lay.inv, lay.inv == 0.0, np.float64(k)


@jit_only
def _range_count(row, v, visited, sgn, mul, s, by_div, thr):
    """Change in the counted range's active cut edges when v joins (``gq_update``): the
    entries u != v of row v with key >= the range's base key (``range_threshold``), +1 to
    an unvisited u (joins the cut), -1 to a visited one (leaves it). One branch-free
    pass: nothing is written, no bucket is computed."""
    n = row.shape[0]
    d = np.int64(0)
    # requested whole up to _PREFETCH_ROW entries (the vectorized loops take no chunks)
    _prefetch_row(row, np.int64(0), np.int64(_PREFETCH_ROW))
    if by_div:
        for u in range(n):
            hit = np.int64((sgn * np.float64(row[u])) / s >= thr)
            d += hit - 2 * (hit & np.int64(visited[u]))
    else:
        for u in range(n):
            hit = np.int64((sgn * np.float64(row[u])) * mul >= thr)
            d += hit - 2 * (hit & np.int64(visited[u]))
    # the diagonal is no edge: v is visited, so a hit there counted -1
    y = sgn * np.float64(row[v])
    if (y / s if by_div else y * mul) >= thr:
        d += 1
    return d


@jit_only
def _update_layered(row, v, visited, slots, start, fill, bucket, block, sc):
    """As ``_update_plain`` with the block layer (more than 16384 buckets: a fine
    step or a wide weight range); ``sc``: the call's ``UpdateScalars``."""
    sgn, s, inv, kmin, bshift = sc.sgn, sc.s, sc.inv, sc.kmin, sc.bshift
    mat, block_shift = sc.mat, sc.block_shift
    delta = 0
    for u in range(row.shape[0]):
        if u == v:
            continue
        g = discretize(np.float64(row[u]), sgn, s, inv) - kmin
        b = g >> bshift
        if visited[u]:
            d = -1
        else:
            d = 1
            if b >= mat:
                slots[start[b] + fill[b]] = slot_pack(g - (b << bshift), code_pack(v, u))
                fill[b] += 1
        bucket[b] += d
        block[b >> block_shift] += d
        delta += d
    return delta


@jit_only
def _update_general(row, v, visited, slots, start, fill, bucket, block, group, rank, sc):
    """``gq_update``'s loop in general: compressed buckets with the block layer, per-group
    counts; ``sc``: the call's ``UpdateScalars``."""
    sgn, s, inv, kmin, bshift = sc.sgn, sc.s, sc.inv, sc.kmin, sc.bshift
    mat, block_shift, direct, rank_base = sc.mat, sc.block_shift, sc.direct, sc.rank_base
    group_counts, layered = sc.group_counts, sc.layered
    delta = 0
    for u in range(row.shape[0]):
        if u == v:
            continue
        if direct:
            g = discretize(np.float64(row[u]), sgn, s, inv) - kmin
        else:
            g = _rank_group(rank[rank_base + u], np.float64(row[u]), sgn, s, inv, kmin, bshift)
        b = g >> bshift
        if visited[u]:
            d = -1
        else:
            d = 1
            if b >= mat:
                slots[start[b] + fill[b]] = slot_pack(g - (b << bshift), code_pack(v, u))
                fill[b] += 1
        if group_counts:
            group[g] += d
        bucket[b] += d
        if layered:
            block[b >> block_shift] += d
        delta += d
    return delta


@jit_only
def gq_update(q, row, v, visited, rank_base):
    """Vertex v joined the tree (dense): row v of W is read once; edges to
    unvisited vertices join the cut (appended to their bucket), edges to visited
    ones leave it (counters only).

    ``v`` must already be recorded by ``gq_join``. The loop is written flat, on the
    queue's arrays passed as arguments (field reads of the namedtuple inside it,
    and per-edge helpers taking arrays, measured several times slower), in four
    kernels (plain, compressed, layered, general): the plain loop alone in its kernel measured about twice as fast as the
    same loop in one function with the others (docs/design.rst, Measurements behind
    the code), and with many buckets the layered kernel was several times faster
    than the general one.
    """
    gq_update_roles(q.layout, q.keys, q.counts, q.store, q.cut, row, v, visited, rank_base)


@jit_only
def gq_update_roles(lay, keys, cnt, st, cut, row, v, visited, rank_base):
    """``gq_update`` on the queue's role tuples (``sampler.rnm_steps`` holds them, not
    the queue)."""
    mat = st.materialized[0]
    if lay.lazy_counts and mat >= lay.n_buckets:
        # nothing materialized: no entry is written or counted per bucket, so the row
        # is not read but for the counted range's count (at high noise and on the
        # shapes with far edges a step's only pass over the row)
        ra = st.top_range[0]
        if 0 <= ra < lay.n_buckets:
            mul, by_div, thr = range_threshold(lay, keys, ra)
            st.top_range[1] += _range_count(row, v, visited, lay.sgn, mul, lay.s, by_div, thr)
        cnt.total[0] += cut.sizes[1] - (cut.sizes[0] - 1)
        return
    # the counting loops read every entry
    ythr = _filter_floor(lay, keys, mat) if lay.lazy_counts else 0.0
    sc = UpdateScalars(lay.sgn, lay.s, lay.inv, lay.kmin, lay.bucket_shift, mat, lay.block_shift,
                       lay.sub_shift if lay.wide else np.int64(0), lay.hash_bits, ythr,
                       lay.direct, lay.group_counts, lay.layered, np.int64(rank_base),
                       st.split[0] if lay.wide else np.int64(-1), st.split[1])
    if lay.lazy_counts:
        if lay.wide and st.split[0] >= 0:
            # the split wide bucket: its unfilled sub-buckets (below split[2]) counted by
            # difference, not keyed
            sb = st.split[0]
            x_lo = st.split[2]
            f_lo = st.subs[0, x_lo]
            kb = lay.kmin + (sb << lay.bucket_shift)
            kx = kb + (f_lo << lay.sub_shift)
            mul_b, div_b, thr_b = _key_test(kb, lay.inv)
            band = SplitBand(x_lo, f_lo, mul_b, div_b, thr_b)
            # nothing materialized below the split bucket: its filled sub-buckets (and the
            # buckets above it) are all the keyed loop needs
            yx = _score_floor(kx, np.int64(0), lay.bucket_shift, lay.s) if mat >= sb else ythr
            scx = UpdateScalars(lay.sgn, lay.s, lay.inv, lay.kmin, lay.bucket_shift, mat, lay.block_shift,
                                lay.sub_shift, lay.hash_bits, yx, lay.direct, lay.group_counts, lay.layered,
                                np.int64(rank_base), sb, st.split[1])
            st.split[3] += _update_split(row, v, visited, st.slots, st.start, st.fill, cnt.bucket, st.subs, scx,
                                         band, cut.sizes[1] - (cut.sizes[0] - 1))
        elif lay.direct:
            # wide queues always take this loop (at most window.WIDE_BUCKETS buckets: no block layer)
            _update_plain(row, v, visited, st.slots, st.start, st.fill, cnt.bucket, st.subs, st.top, sc)
        else:
            _update_compressed(row, v, visited, st.slots, st.start, st.fill, cnt.bucket, cnt.block,
                               keys.table, keys.slot_rank, st.top, sc)
        # every other entry of the row is an edge: to the n_rest unvisited vertices
        # it joins the cut, to the n_in - 1 visited ones other than v it leaves it
        delta = cut.sizes[1] - (cut.sizes[0] - 1)
    elif lay.direct and not lay.group_counts:
        delta = _update_layered(row, v, visited, st.slots, st.start, st.fill, cnt.bucket, cnt.block,
                                sc)
    else:
        delta = _update_general(row, v, visited, st.slots, st.start, st.fill, cnt.bucket, cnt.block,
                                cnt.group, keys.rank, sc)
    cnt.total[0] += delta


@jit_only
def gq_update_csr(q, indptr, indices, data, v, visited):
    """Vertex v joined the tree (sparse): its CSR row joins or leaves the cut.

    A sparse edge's code is its CSR position in the row of its visited end. The
    sparse driver (``prim.prim_csr_private``) runs the same loop written in its own
    body, on the queue's arrays read off once per chunk: this call, passing the queue,
    paid two atomic reference counts per array at every step (docs/design.rst, Where
    the time goes, sparse). Tests and other callers use this kernel.
    """
    lay = q.layout
    slots, start, fill = q.store.slots, q.store.start, q.store.fill
    bucket, block, group = q.counts.bucket, q.counts.block, q.counts.group
    bshift, block_shift, group_counts, layered = lay.bucket_shift, lay.block_shift, lay.group_counts, lay.layered
    direct, sgn, s, inv, kmin, rank = lay.direct, lay.sgn, lay.s, lay.inv, lay.kmin, q.keys.rank
    delta = 0
    # one flat loop (helpers taking arrays, per edge, measured several times slower
    # here; docs/design.rst, Measurements behind the code); the flags are loop-invariant
    for p in range(indptr[v], indptr[v + 1]):
        if direct:
            g = discretize(data[p], sgn, s, inv) - kmin
        else:
            g = _rank_group(rank[p], data[p], sgn, s, inv, kmin, bshift)
        b = g >> bshift
        if visited[indices[p]]:
            d = -1
        else:
            d = 1
            slots[start[b] + fill[b]] = slot_pack(g - (b << bshift), p)
            fill[b] += 1
        if group_counts:
            group[g] += d
        bucket[b] += d
        if layered:
            block[b >> block_shift] += d
        delta += d
    q.counts.total[0] += delta


@jit_only(inline="always")
def gq_count(counts, level, node):
    """Active edges in a node of ``level``: a GROUP (needs ``group_counts``), a BUCKET,
    a BLOCK of 2**block_shift buckets, or ROOT (node 0) the whole cut."""
    if level == GROUP:
        return counts.group[node]
    if level == BUCKET:
        return counts.bucket[node]
    if level == BLOCK:
        return counts.block[node]
    return counts.total[0]


@jit_only(inline="always")
def gq_width_shift(lay, level):
    """log2 of how many groups a node of ``level`` (GROUP, BUCKET or BLOCK) spans."""
    if level == GROUP:
        return np.int64(0)
    if level == BUCKET:
        return lay.bucket_shift
    return lay.bucket_shift + lay.block_shift


@jit_only
def gq_top(lay, counts, lowest):
    """A group index p such that no active edge lies above p, p within the top
    non-empty bucket (the exact top group when groups are tracked); -1 if empty.

    ``lowest`` is the lowest bucket whose count is kept (the lowest materialized
    one with ``lazy_counts``, else 0); -2 when every kept count is 0 but the cut
    is not empty: the caller materializes lower and asks again."""
    if counts.total[0] == 0:
        return -1
    bucket = counts.bucket
    B = lay.n_buckets
    b = B - 1
    if lay.layered:
        block = counts.block
        j = lay.n_blocks - 1
        while j >= 0 and block[j] == 0:
            j -= 1
        b = min((j + 1) << lay.block_shift, B) - 1
    # the guards turn inconsistent counts into an error instead of a wrapped index
    while b >= lowest and bucket[b] == 0:
        b -= 1
    if b < lowest:
        if lowest > 0:
            return -2
        raise AssertionError("gq_top: the cut is not empty but every counter is 0")
    p = min((b + 1) << lay.bucket_shift, lay.n_groups) - 1
    if lay.group_counts:
        lo = b << lay.bucket_shift
        while p >= lo and counts.group[p] == 0:
            p -= 1
        if p < lo:
            raise AssertionError("gq_top: a bucket's count disagrees with its groups'")
    return p


@jit_only
def gq_select(lay, counts, level, node, r):
    """Bucket holding the r-th (0-based, from the lowest group up) active edge of a
    node of ``level`` BUCKET, BLOCK or ROOT; returns (bucket, rank within it).

    Ranks below the count of groups 0..p select within that prefix.
    """
    bucket = counts.bucket
    B = lay.n_buckets
    j = node
    if level == ROOT:
        j = 0
        if not lay.layered:
            while j < B and r >= bucket[j]:
                r -= bucket[j]
                j += 1
            if j == B:
                raise AssertionError("gq_select: rank beyond the cut's counts")
            return j, r
        block = counts.block
        while j < lay.n_blocks and r >= block[j]:
            r -= block[j]
            j += 1
        if j == lay.n_blocks:
            raise AssertionError("gq_select: rank beyond the cut's counts")
        level = BLOCK
    if level == BLOCK:
        j = j << lay.block_shift
        end = min(j + (np.int64(1) << lay.block_shift), B)
        while j < end and r >= bucket[j]:
            r -= bucket[j]
            j += 1
        if j == end:
            raise AssertionError("gq_select: rank beyond the block's counts")
    return j, r


@jit_only
def gq_compact(lay, st, b, visited):
    """Drop the dead slots of bucket b (amortized O(1) per edge: at least half are dead);
    a dense bucket's ``SlotStore.top`` becomes its live slots' highest offset."""
    slots, ends = st.slots, st.ends
    lo = st.start[b]
    k = lo
    # per slot, so written flat (no helper taking arrays), once per layout
    if lay.dense:
        hi = np.int64(-1)
        for i in range(lo, lo + st.fill[b]):
            slot = slots[i]
            if not visited[code_ends(slot_code(slot))[1]]:
                slots[k] = slot
                k += 1
                hi = max(hi, slot_offset(slot))
        st.top[b] = hi
    else:
        for i in range(lo, lo + st.fill[b]):
            slot = slots[i]
            if not visited[ends[slot_code(slot)]]:
                slots[k] = slot
                k += 1
    st.fill[b] = k - lo


@jit_only
def gq_join(lay, cut, v, visited):
    """Vertex v joins the tree: mark it and, dense, move it from ``rest`` to ``inside``."""
    visited[v] = True
    if lay.dense:
        n_in, n_rest = cut.sizes[0], cut.sizes[1]
        cut.inside[n_in] = v
        i = cut.where[v]
        last = cut.rest[n_rest - 1]
        cut.rest[i] = last
        cut.where[last] = i
        cut.sizes[0] = n_in + 1
        cut.sizes[1] = n_rest - 1


@jit_only
def gq_take_cut(lay, keys, cut, W, pmin, pmax, tries, rng):
    """A uniformly random active edge of group pmin .. pmax of a dense cut, by rejection
    from uniform (visited, unvisited) pairs: every such pair is a cut edge of the
    complete graph. Returns (group, code); callers use it when it accepts often
    (pmin = 0: every group up to pmax; pmin > 0: the sampler's counted range).

    ``tries``: 64 / (the acceptance rate the counts promise) or more, after which
    the counts are wrong (all fail otherwise with probability below e**-64) and the
    kernel raises instead of spinning.
    """
    n, inside, rest, n_in, n_rest = lay.n, cut.inside, cut.rest, cut.sizes[0], cut.sizes[1]
    for _ in range(tries):
        a = inside[np.int64(rng.random() * n_in)]
        u = rest[np.int64(rng.random() * n_rest)]
        g = gq_group(np.float64(W[a, u]), a * n + u, lay, keys)
        if pmin <= g <= pmax:
            return g, code_pack(a, u)
    raise AssertionError("gq_take_cut: no edge of the cut lies in the counted groups")


@jit_only
def gq_slot_group(lay, W, b, slot):
    """Group of a slot of bucket b (per draw, not per edge). A wide bucket's slot
    holds only its fine sub-bucket, so there the group comes from the edge's weight."""
    if lay.wide:
        a, u = code_ends(slot_code(slot))
        w = np.float64(W[a, u])
        return discretize(w, lay.sgn, lay.s, lay.inv) - lay.kmin
    return (b << lay.bucket_shift) + slot_offset(slot)


@jit_only
def gq_take(lay, st, W, b, lo, hi, count, active, visited, rng):
    """A uniformly random active edge of bucket b whose group offset lies in [lo, hi].

    ``count`` is how many there are (> 0), ``active`` how many the bucket holds.
    Returns (group, code). The bucket must be materialized (``gq_materialize``).
    Rejection over the bucket's slots when that accepts often enough (after a
    compaction when more than half of them are dead), else one scan.
    """
    if b < st.materialized[0]:
        raise AssertionError("gq_take: the bucket is not materialized")
    if st.fill[b] > 2 * active:
        gq_compact(lay, st, b, visited)
    slots, dense, ends = st.slots, lay.dense, st.ends
    first = st.start[b]
    f = st.fill[b]
    base = b << lay.bucket_shift
    whole = lo == 0 and hi >= (np.int64(1) << lay.bucket_shift) - 1
    if whole or f <= 8 * count:
        # acceptance >= 1/8 with right counts; after 1000 misses (probability
        # < 1e-57) fall through to the scan, which fails loudly if counts are wrong
        for _ in range(1000):
            slot = slots[first + np.int64(rng.random() * f)]
            code = slot_code(slot)
            if not visited[_end(code, dense, ends)]:
                g = gq_slot_group(lay, W, b, slot)
                if whole or lo <= g - base <= hi:
                    return g, code
    j = np.int64(rng.random() * count)
    for i in range(first, first + f):
        slot = slots[i]
        code = slot_code(slot)
        if not visited[_end(code, dense, ends)]:
            g = gq_slot_group(lay, W, b, slot)
            if whole or lo <= g - base <= hi:
                if j == 0:
                    return g, code
                j -= 1
    raise AssertionError("gq_take: count exceeds the active edges of the range")
