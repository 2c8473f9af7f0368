"""Helpers of the axiom tests: Monte Carlo agreement of a ``bad`` AST with an exact probability."""

from __future__ import annotations

import math

import numpy as np

from lang.evaluate import evaluate


def frequency(bad, env) -> float:
    """The fraction of samples (numpy arrays in ``env``) on which ``bad`` evaluates to true."""
    hits = np.asarray(evaluate(bad, env), dtype=bool)
    return float(hits.mean())


def assert_consistent(freq: float, p: float, n: int, what: str = "") -> None:
    """Fail unless the observed frequency over ``n`` samples is within 5 standard deviations
    (plus 2/n) of the exact probability ``p`` (a false failure has probability < 1e-6)."""
    sd = math.sqrt(max(p * (1 - p), 0.0) / n)
    assert abs(freq - p) <= 5 * sd + 2.0 / n, f"{what}: frequency {freq} vs exact {p} (n={n})"
