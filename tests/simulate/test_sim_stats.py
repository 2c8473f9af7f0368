"""Clopper–Pearson intervals against closed forms and published values."""

import math

import pytest

from tamp.simulation import bonferroni, clopper_pearson, failure_rate_ci


def test_zero_successes_closed_form():
    # k = 0: the upper end solves (1 - hi)^n = alpha/2
    lo, hi = clopper_pearson(0, 10, 0.95)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)


def test_all_successes_closed_form():
    lo, hi = clopper_pearson(20, 20, 0.99)
    assert hi == 1.0
    assert lo == pytest.approx(0.005 ** (1 / 20), rel=1e-9)


def test_published_values():
    # Clopper & Pearson / standard tables: 5 of 10 at 95% is [0.1871, 0.8129]
    lo, hi = clopper_pearson(5, 10, 0.95)
    assert lo == pytest.approx(0.18709, abs=1e-4)
    assert hi == pytest.approx(0.81291, abs=1e-4)
    # 1 of 20 at 95%: [0.00127, 0.24873]
    lo, hi = failure_rate_ci(1, 20, 0.95)
    assert lo == pytest.approx(0.0012650, rel=1e-3)
    assert hi == pytest.approx(0.2487328, rel=1e-4)


def test_symmetry_and_nesting():
    lo, hi = clopper_pearson(3, 40, 0.99)
    lo2, hi2 = clopper_pearson(37, 40, 0.99)
    assert lo == pytest.approx(1 - hi2) and hi == pytest.approx(1 - lo2)
    lo95, hi95 = clopper_pearson(3, 40, 0.95)
    assert lo < lo95 < 3 / 40 < hi95 < hi


def test_no_trials_is_uninformative():
    assert clopper_pearson(0, 0) == (0.0, 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError):
        clopper_pearson(5, 3)
    with pytest.raises(ValueError):
        clopper_pearson(1, 3, 1.0)


def test_bonferroni():
    assert bonferroni(0.99, 2) == pytest.approx(0.995)
    assert bonferroni(0.99, 1) == pytest.approx(0.99)


def test_coverage_of_a_known_rate():
    """Exactness: over all k for n = 30, p = 0.2, the probability that the 90% interval misses p
    is at most 10%."""
    n, p = 30, 0.2
    miss = 0.0
    for k in range(n + 1):
        lo, hi = clopper_pearson(k, n, 0.90)
        if not lo <= p <= hi:
            miss += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    assert miss <= 0.10
