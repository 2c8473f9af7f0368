"""Exact (Clopper–Pearson) binomial confidence intervals and interval arithmetic helpers."""

from __future__ import annotations

from typing import Tuple


def clopper_pearson(k: int, n: int, conf: float = 0.99) -> Tuple[float, float]:
    """The exact two-sided Clopper–Pearson interval for a binomial proportion.

    ``k`` successes out of ``n`` trials; the interval covers the true proportion with
    probability at least ``conf``. With no trials the interval is [0, 1].
    """
    if not 0 < conf < 1:
        raise ValueError(f"confidence must be in (0, 1), got {conf}")
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    alpha = 1.0 - conf
    from scipy.stats import beta  # deferred on purpose: scipy.stats costs ~1.5 s at CLI start-up

    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def failure_rate_ci(k: int, n: int, conf: float = 0.99) -> Tuple[float, float]:
    """Clopper–Pearson interval of a failure rate: ``k`` failures among ``n`` runs."""
    return clopper_pearson(k, n, conf)


def bonferroni(conf: float, terms: int) -> float:
    """Per-term confidence so that ``terms`` intervals hold simultaneously with ``conf``."""
    return 1.0 - (1.0 - conf) / max(terms, 1)
