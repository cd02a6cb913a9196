"""The counter-based noise sources: Philox-2x32-10 (the gumbel stream), Philox-4x32-10 (the
post-processing stream), and the per-edge uniforms and Gumbels."""

import math

import numpy as np
import pytest
from scipy import stats

import naive
from fastpamst_nb import philox

pytestmark = pytest.mark.nojit_lane  # the NUMBA_DISABLE_JIT=1 lane runs this file but its slow_python tests

# Random123's tests/kat_vectors (the generator's published known answers), the three
# "philox4x32 10" lines: counter (4 words), key (2 words), output (4 words).
KAT_4X32_10 = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


# Random123's tests/kat_vectors, the three "philox2x32 10" lines: counter (2 words), key
# (1 word), output (2 words).
KAT_2X32_10 = [
    ((0x00000000, 0x00000000), 0x00000000, (0xFF1DAE59, 0x6CD10DF2)),
    ((0xFFFFFFFF, 0xFFFFFFFF), 0xFFFFFFFF, (0x2C3F628B, 0xAB4FD7AD)),
    ((0x243F6A88, 0x85A308D3), 0x13198A2E, (0xDD7CE038, 0xF62A4C12)),
]


def test_reference_philox_4x64_is_numpys():
    # numpy ships Philox-4x64-10; the reference (one code for both widths) must give its
    # raw words. numpy increments the counter before it computes the first block.
    rng = np.random.default_rng(0)
    for _ in range(20):
        key = [int(x) for x in rng.integers(0, 2 ** 64, size=2, dtype=np.uint64)]
        ctr = [int(x) for x in rng.integers(0, 2 ** 64, size=4, dtype=np.uint64)]
        ctr[0] = min(ctr[0], 2 ** 64 - 2)  # no carry into the next word
        # arrays, not lists: numpy converts a list of large ints through float64
        raw = np.random.Philox(key=np.array(key, np.uint64),
                               counter=np.array(ctr, np.uint64)).random_raw(4)
        ctr[0] += 1
        assert [int(x) for x in raw] == naive.philox_ref(ctr, key, width=64)


@pytest.mark.parametrize("ctr, key, out", KAT_4X32_10)
def test_reference_philox_4x32_known_answers(ctr, key, out):
    assert naive.philox_ref(ctr, key, width=32) == list(out)


@pytest.mark.parametrize("ctr, key, out", KAT_4X32_10)
def test_kernel_known_answers(ctr, key, out):
    u = [np.uint64(x) for x in ctr + key]
    assert [int(x) for x in philox.philox4x32_10(*u)] == list(out)


def test_kernel_matches_the_reference():
    rng = np.random.default_rng(1)
    for _ in range(200):
        w = [int(x) for x in rng.integers(0, 2 ** 32, size=6, dtype=np.uint64)]
        got = philox.philox4x32_10(*[np.uint64(x) for x in w])
        assert [int(x) for x in got] == naive.philox_ref(w[:4], w[4:], width=32)


@pytest.mark.parametrize("ctr, key, out", KAT_2X32_10)
def test_philox_2x32_known_answers(ctr, key, out):
    assert naive.philox2x32_ref(ctr, key) == list(out)
    got = philox.philox2x32_10(np.uint64(ctr[0]), np.uint64(ctr[1]), np.uint64(key))
    assert [int(x) for x in got] == list(out)


def test_philox_2x32_kernel_matches_the_reference():
    rng = np.random.default_rng(6)
    for _ in range(200):
        w = [int(x) for x in rng.integers(0, 2 ** 32, size=3, dtype=np.uint64)]
        got = philox.philox2x32_10(*[np.uint64(x) for x in w])
        assert [int(x) for x in got] == naive.philox2x32_ref(w[:2], w[2])


def test_edge_uniforms_follow_the_documented_layout():
    rng = np.random.default_rng(2)
    for t in range(200):
        k0, k1 = philox.draw_key(rng)
        i, j = (int(x) for x in rng.integers(0, 2 ** 32, size=2))
        if t < 4:  # the counter offsets wrap mod 2**32
            i, j = 2 ** 32 - 1 - t, t
        u1, u2 = philox.edge_uniform_pair(k0, k1, i, j)
        assert (u1, u2) == naive.edge_uniforms_ref(k0, k1, i, j)
        assert philox.edge_uniform_pair(k0, k1, j, i) == (u1, u2)
        u = philox.edge_uniform(k0, k1, i, j)
        assert u == naive.edge_uniform_ref(k0, k1, i, j)
        assert philox.edge_uniform(k0, k1, j, i) == u  # symmetric
        assert philox.edge_gumbel(k0, k1, i, j) == -math.log(-math.log(u))
        kw = philox.key_words(k0, k1)
        m = philox.bits_of_words(*kw, np.int64(i), np.int64(j))
        assert int(m) < 2 ** 53 and philox.unit_of_bits(m) == u
        assert philox.unit_of_words(*kw, np.int64(j), np.int64(i)) == u


def test_uniforms_are_open_and_the_gumbel_range_is_as_documented():
    one = np.uint64(0xFFFFFFFF)
    zero = np.uint64(0)
    hi = philox._unit(one, one)
    lo = philox._unit(zero, zero)
    assert hi == 1.0 - 2.0 ** -53 and lo == 2.0 ** -54
    assert philox.GUMBEL_MAX == -math.log(-math.log(hi))
    assert philox.GUMBEL_MIN == -math.log(-math.log(lo))
    assert 36.7 < philox.GUMBEL_MAX < 36.8 and -3.7 < philox.GUMBEL_MIN < -3.6


def test_draw_key_is_one_draw_of_two_words():
    a = np.random.default_rng(5)
    b = np.random.default_rng(5)
    k0, k1 = philox.draw_key(a)
    ref = b.integers(0, 2 ** 64, size=2, dtype=np.uint64)
    assert (k0, k1) == (ref[0], ref[1]) and isinstance(k0, np.uint64)
    assert a.random() == b.random()  # nothing else was consumed


def test_uniforms_and_gumbels_have_their_laws():
    # distinct edges of one key, and one edge under distinct keys: Kolmogorov-Smirnov
    rng = np.random.default_rng(3)
    k0, k1 = philox.draw_key(rng)
    u = np.array([philox.edge_uniform_pair(k0, k1, i, i + 1 + i % 7) for i in range(4000)])
    assert stats.kstest(u[:, 0], "uniform").pvalue > 1e-4
    assert stats.kstest(u[:, 1], "uniform").pvalue > 1e-4
    assert abs(stats.pearsonr(u[:, 0], u[:, 1])[0]) < 0.06
    g = np.array([philox.edge_gumbel(*philox.draw_key(rng), 3, 8) for _ in range(4000)])
    assert stats.kstest(g, "gumbel_r").pvalue > 1e-4
    # the gumbel stream along one key: a row, a column, and neighbouring edges (the counter
    # offsets shift every edge alike, so adjacent counters must not be correlated)
    v = np.array([philox.edge_uniform(k0, k1, i, i + 1 + i % 7) for i in range(4000)])
    assert stats.kstest(v, "uniform").pvalue > 1e-4
    row = np.array([philox.edge_uniform(k0, k1, 5, j) for j in range(6, 4006)])
    assert stats.kstest(row, "uniform").pvalue > 1e-4
    assert abs(stats.pearsonr(row[:-1], row[1:])[0]) < 0.06
    assert abs(stats.pearsonr(v, u[:, 0])[0]) < 0.06  # the two streams


def _unit_ref(a, b):
    m = (a << 21) | (b >> 11)
    return max(m, 0.5) * 2.0 ** -53


@pytest.mark.parametrize("ctr, key, out", KAT_4X32_10)
def test_block_uniforms_known_answers(ctr, key, out):
    # the block stream's layout (module docstring): counter (v, blk, j, hi(k1)), key
    # (lo(k0), hi(k0)); lo(k1) is not used, so any value there must give the same words
    k0 = np.uint64(key[0] | (key[1] << 32))
    for lo1 in (0, 0x9E3779B9, 0xFFFFFFFF):
        k1 = np.uint64(lo1 | (ctr[3] << 32))
        got = philox.block_uniforms(k0, k1, np.int64(ctr[0]), np.int64(ctr[1]), np.int64(ctr[2]))
        assert got == (_unit_ref(out[0], out[1]), _unit_ref(out[2], out[3]))
        assert all(0.0 < u < 1.0 for u in got)


def test_block_uniforms_match_the_reference_and_have_their_law():
    rng = np.random.default_rng(11)
    k0, k1 = philox.draw_key(rng)
    kw = [int(k0) & 0xFFFFFFFF, int(k0) >> 32]
    us = []
    for t in range(300):
        v, blk, j = (int(x) for x in rng.integers(0, 2 ** 32, size=3))
        x = naive.philox_ref([v, blk, j, int(k1) >> 32], kw, width=32)
        got = philox.block_uniforms(k0, k1, np.int64(v), np.int64(blk), np.int64(j))
        assert got == (_unit_ref(x[0], x[1]), _unit_ref(x[2], x[3]))
    # along j within one block (how the engine walks it): uniform and uncorrelated halves
    us = np.array([philox.block_uniforms(k0, k1, np.int64(7), np.int64(3), np.int64(j))
                   for j in range(3000)])
    assert stats.kstest(us[:, 0], "uniform").pvalue > 1e-4
    assert stats.kstest(us[:, 1], "uniform").pvalue > 1e-4
    assert abs(stats.pearsonr(us[:, 0], us[:, 1])[0]) < 0.07


def test_block_bits_are_the_block_streams_words():
    # the dense gumbel kernel's form of the block stream (the key already split): the two
    # 53-bit integers behind block_uniforms and the 11 bits each leaves, from the same
    # Philox-4x32-10 words (the reference, and Random123's known answers)
    rng = np.random.default_rng(13)
    cases = [(list(c), list(k), list(o)) for c, k, o in KAT_4X32_10]
    for _ in range(200):
        k0, k1 = philox.draw_key(rng)
        ctr = [int(x) for x in rng.integers(0, 2 ** 32, size=3)] + [int(k1) >> 32]
        key = [int(k0) & 0xFFFFFFFF, int(k0) >> 32]
        cases.append((ctr, key, naive.philox_ref(ctr, key, width=32)))
    for ctr, key, x in cases:
        k0 = np.uint64(key[0] | (key[1] << 32))
        k1 = np.uint64(0x12345 | (ctr[3] << 32))
        ka, kb, _, c3 = philox.key_words(k0, k1)
        m1, r1, m2, r2 = philox.block_bits(ka, kb, c3, np.int64(ctr[0]), np.int64(ctr[1]),
                                           np.int64(ctr[2]))
        assert [int(m1), int(r1), int(m2), int(r2)] == [
            (x[0] << 21) | (x[1] >> 11), x[1] & 0x7FF, (x[2] << 21) | (x[3] >> 11), x[3] & 0x7FF]
        assert (philox.unit_of_bits(m1), philox.unit_of_bits(m2)) == philox.block_uniforms(
            k0, k1, np.int64(ctr[0]), np.int64(ctr[1]), np.int64(ctr[2]))
