"""The exact integer tail of the discrete Laplace (``discrete_laplace_exact``): its bad event,
evaluated through the AST at every integer, has pmf mass at most its cost, and the cost is
the exact tail ``2 a^K/(1 + a)`` at an integer ``K`` (a wrong constant would fail here)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.discrete_laplace import DiscreteLaplaceExactTail
from lang.evaluate import evaluate

EXACT = DiscreteLaplaceExactTail()
SCALES = [0.05, 0.2, 0.5, 0.7213, 1.0, 3.0, 20.0]


def pmf(j: int, s: float) -> float:
    """LANGUAGE.md's dlap(0, s): Pr(j) ∝ exp(-|j|/s), normalised by Σ_j a^|j| = (1 + a)/(1 - a)."""
    a = math.exp(-1 / s)
    return a ** abs(j) * (1 - a) / (1 + a)


def bad_mass(s: float, f, reach: int = 4000) -> float:
    """Σ pmf(j) over the integers |j| < reach at which the family's bad event (its AST) holds,
    plus the mass beyond ``reach`` (counted as bad: an upper bound)."""
    bad = EXACT.numeric_instance((0, s), f).bad
    a = math.exp(-1 / s)
    total = sum(pmf(j, s) for j in range(-reach + 1, reach) if evaluate(bad, {"v": j}))
    return total + 2 * a**reach / (1 + a)


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_cost_is_the_exact_integer_tail(s, k):
    a = math.exp(-1 / s)
    f = 2 * a**k / (1 + a)  # the geometric mechanism's Pr[|x - c| >= k]
    if f < 1e-300:
        pytest.skip("underflow")
    exact = sum(pmf(j, s) for j in range(-4000, 4001) if abs(j) >= k)
    assert exact == pytest.approx(f, rel=1e-9)
    g = f * (1 + 1e-9)  # just above, so rounding cannot hide |j| = k from the bad event
    bad = EXACT.numeric_instance((0, s), g).bad
    assert evaluate(bad, {"v": k}) and evaluate(bad, {"v": -k})
    assert not evaluate(bad, {"v": k - 1}) and not evaluate(bad, {"v": 1 - k})
    assert EXACT.side_holds((0, s), g)
    assert bad_mass(s, g) <= EXACT.cost_value((0, s), g) + 1e-12
    assert exact <= EXACT.cost_value((0, s), g)


def test_continuous_laplace_constant_would_be_wrong():
    """The continuous tail exp(-k/s) is below the discrete one (s = 1, k = 1): a family with that
    cost would be unsound, and the pmf sum above would catch it."""
    s, k = 1.0, 1
    exact = sum(pmf(j, s) for j in range(-4000, 4001) if abs(j) >= k)
    assert exact == pytest.approx(2 * math.exp(-1) / (1 + math.exp(-1)))
    assert exact > math.exp(-k / s) + 0.1


@settings(max_examples=150, deadline=None)
@given(s=st.floats(0.05, 20), f=st.floats(1e-6, 1.0), m=st.integers(-50, 50))
def test_bad_event_mass_below_cost(s, f, m):
    assert EXACT.side_holds((m, s), f)
    cost = EXACT.cost_value((m, s), f)
    assert EXACT.exact_tail((m, s), f) <= cost + 1e-12
    assert bad_mass(s, f, reach=400 if s < 5 else 4000) <= cost + 1e-9


@pytest.mark.parametrize("f", [1.0, 1.5, 7.0])
def test_f_at_least_one_is_trivial(f):
    assert EXACT.side_holds((0, 0.5), f)  # no f <= 1 side condition: Pr <= 1 <= f
    assert EXACT.exact_tail((0, 0.5), f) <= EXACT.cost_value((0, 0.5), f)


def test_side_conditions_refuse_bad_scale_and_f():
    assert not EXACT.side_holds((0, 0), 0.5)
    assert not EXACT.side_holds((0, 1), 0)
