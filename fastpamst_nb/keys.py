"""The discretized keys: the rule that turns a weight into its integer key.

Fast-PAMST scores an edge by ``s * key`` with ``key = floor(sgn * w / s)``
(``sgn = -1``: minimum tree; s the discretization step). The validation's top
window (:mod:`fastpamst_nb.window`) and the grouped queue
(:mod:`fastpamst_nb.cutqueue`) both count keys, in noise-wide buckets of
``2**bucket_shift`` consecutive keys, so the rules they share live here, below
both: ``graph.py`` (which fills the window) then needs nothing of the queue.

``exact_inverse`` and ``discretize`` compute the key (the privacy calibration,
``privacy.discretized_sensitivity``, relies on how), ``score_floor`` bounds the
scores of the keys from a given one up (a filter: the caller still computes each
passing key), ``bucket_shift_for`` is the noise-wide bucket width.
"""

import math

import numpy as np
from numba import njit

from .core import CACHE, jit_only

_MAX_BUCKET_SHIFT = 20


def exact_inverse(s):
    """1/s when s is a power of two whose inverse is a finite float (then exactly
    a power of two too), else 0.0: ``discretize`` multiplies by it instead of
    dividing by s."""
    s = float(s)
    if not (math.isfinite(s) and s > 0.0) or math.frexp(s)[0] != 0.5:
        return 0.0
    inv = 1.0 / s
    if not math.isfinite(inv) or inv * s != 1.0 or math.frexp(inv)[0] != 0.5:
        return 0.0
    return inv


@njit(cache=CACHE, nogil=True)
def discretize(w, sgn, s, inv):
    """The integer key floor(sgn * w / s); score = s * key.

    ``inv`` is ``exact_inverse(s)``. The quotient is one correctly rounded
    operation (no fastmath): y * inv when inv != 0, else y / s. Both round the
    same real number y / s once (inv is exactly 1/s), so the key is bit-identical
    either way, and the product costs a few cycles where a division costs ~13 (it
    is on every edge event of the update loop). With a power-of-two s the quotient
    is exact but for an underflow: a negative quotient below 2**-1075 in
    magnitude rounds to -0.0, whose floor would be 0 instead of -1. The privacy
    calibration (``privacy.discretized_sensitivity``) relies on keys being exact
    there and within 1/4 otherwise (|w / s| < 2**52, checked by ``gq_build``).
    """
    y = sgn * w
    if inv != 0.0:
        x = y * inv
    else:
        x = y / s
    if x == 0.0 and y < 0.0:
        return np.int64(-1)
    return np.int64(math.floor(x))


@jit_only(inline="always")
def score_floor(kmin, first, bshift, s):
    """A score y such that every edge whose bucket is >= ``first`` has sgn * w >= y.

    Such an edge has key >= K0 = kmin + first * 2**bshift, so y / s > K0 - 1 (the
    quotient is correctly rounded and |y / s| < 2**62; exact for a power-of-two s).
    K0 * s is computed in floating point (K0 may not be representable), so the
    bound is lowered by 2 s and by 2**-40 of the operands' magnitude, far more than
    their rounding. It only filters: the caller still computes each passing key.
    """
    base = np.float64(kmin)
    span = np.float64(first) * 2.0 ** bshift  # exact: a power-of-two scaling
    return (base + span) * s - 2.0 * s - (abs(base) + span) * s * 2.0 ** -40


def bucket_shift_for(G, r, bucket_width):
    """log2 of the bucket width: the widest bucket whose key span r * (2**bshift - 1) <= bucket_width
    (noise units; the selection's speed knob, ``cutqueue_build.gq_build``'s ``sigma``), over G keys.

    Such buckets are resolved whole by the sampler (in direct mode their span is
    exactly that), so a wider one saves draws and a narrower one keeps the
    expected number of extra candidates per bucket below e**bucket_width - 1.
    """
    cap = min(_MAX_BUCKET_SHIFT, max(int(G - 1).bit_length(), 0))
    bshift = 0
    while bshift < cap and r * np.float64((1 << (bshift + 1)) - 1) <= bucket_width:
        bshift += 1
    return bshift
