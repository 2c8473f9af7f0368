"""Random numbers keyed by (seed, run, draw number): a run's draws do not depend on the others.

The simulator first runs every run with certified floating-point balls and then re-runs the few
runs whose comparisons the balls could not decide, at higher precision. A re-run must see the
same random numbers as the first run, so the k-th uniform of run r is a pure function of
(seed, r, k): the SplitMix64 finaliser of a 64-bit counter (the generator of Steele, Lea and
Flood, 2014), vectorised with numpy's wrapping uint64 arithmetic.

Integers are drawn from whole 64-bit words by rejection (:func:`below`), never by scaling a
float, so ``unif(lo, hi)`` is exactly uniform over every range of 64-bit ints.

A draw is a random number, so it may be a float: the standard variates (uniform on (0, 1),
exponential, Laplace, normal) are floats computed from the uniform; what the simulator keeps
exact is the arithmetic of the program on them (``m + s * L`` etc.).
"""

from __future__ import annotations

import numpy as np

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_RUN = np.uint64(0xD1B54A32D192ED03)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def seed_key(seed: int) -> np.uint64:
    """A 64-bit key for a user seed (any Python int)."""
    with np.errstate(over="ignore"):
        return _mix(np.array([seed % (1 << 64)], dtype=np.uint64) + _GAMMA)[0]


def words(key: np.uint64, runs: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """The 64 random bits (uint64) number ``counters`` of each run ``runs``."""
    with np.errstate(over="ignore"):
        z = key + runs.astype(np.uint64) * _RUN + (counters.astype(np.uint64) + np.uint64(1)) * _GAMMA
        return _mix(_mix(z))


def uniforms(key: np.uint64, runs: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """The uniform on (0, 1) (53 random bits, never 0 or 1) number ``counters`` of each run ``runs``
    (the top 53 bits of :func:`words`)."""
    bits = words(key, runs, counters) >> np.uint64(11)
    return (bits.astype(np.float64) + 0.5) * 2.0**-53


def below(w: np.ndarray, k: np.ndarray) -> tuple:
    """Exact uniform integers on ``0 .. k-1`` from 64-bit words ``w`` by rejection (the method of
    OpenBSD's arc4random_uniform): ``k`` is a uint64 array with ``1 <= k``, or 0 for k = 2^64.

    Returns ``(value, accepted)``: a word is accepted when it falls below the largest multiple
    of k that is at most 2^64, so ``w mod k`` is then exactly uniform; a rejected run draws a
    fresh word (probability < 1/2 per try). Integer arithmetic only: no float rounds the range,
    so every integer of ``0 .. k-1`` is drawn with probability exactly 1/k."""
    w, k = np.asarray(w, dtype=np.uint64), np.asarray(k, dtype=np.uint64)
    if k.ndim == 0:  # one k for every word: 2^64 mod k once, in Python's exact ints
        k0 = int(k) or 2**64
        rest = 2**64 % k0
        accepted = np.ones(w.shape, dtype=bool) if rest == 0 else w <= np.uint64(2**64 - 1 - rest)
        return (w if k0 == 2**64 else w % np.uint64(k0)), accepted
    whole = k == 0  # k = 2^64: every word is a value
    kk = np.where(whole, np.uint64(1), k)
    with np.errstate(over="ignore"):
        r = (np.uint64(0) - kk) % kk  # 2^64 mod k
    accepted = whole | (w <= ~r)  # w < 2^64 - r, a multiple of k
    return np.where(whole, w, w % kk), accepted


def exponential(u: np.ndarray) -> np.ndarray:
    """Standard exponential variates (rate 1) from uniforms."""
    return -np.log(u)


def laplace(u: np.ndarray) -> np.ndarray:
    """Standard Laplace variates (density exp(-|x|)/2) from uniforms."""
    v = u - 0.5
    return -np.sign(v) * np.log1p(-2.0 * np.abs(v))


def normal(u: np.ndarray) -> np.ndarray:
    """Standard normal variates from uniforms (inverse CDF)."""
    # deferred on purpose: scipy takes ~0.5 s to load; only this step needs it
    from scipy.special import ndtri

    return ndtri(u)
