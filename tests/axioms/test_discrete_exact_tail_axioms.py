"""The exact integer tails of dexp (``discrete_exponential_exact``) and the one-sided ones of dlap
(``discrete_laplace_exact_upper`` / ``_lower``): each bad event, evaluated through the AST at every
integer, has pmf mass at most its cost, and at the claimed integer tail the cost is exact (a wrong
constant, or the strict ``>`` of the log form, would fail here)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.discrete_exponential import DiscreteExponentialExactTail
from axioms.discrete_laplace import DiscreteLaplaceOneSidedTail
from lang.evaluate import evaluate

DEXP = DiscreteExponentialExactTail()
UP = DiscreteLaplaceOneSidedTail(upper=True)
LOW = DiscreteLaplaceOneSidedTail(upper=False)
SCALES = [0.05, 0.2, 0.5, 0.7213, 1.0, 3.0, 20.0]


def dexp_pmf(j: int, s: float) -> float:
    """LANGUAGE.md's dexp(0, s) at j >= 0: Pr(j) ∝ exp(-j/s), normalised by 1/(1 - a)."""
    a = math.exp(-1 / s)
    return a**j * (1 - a) if j >= 0 else 0.0


def dlap_pmf(j: int, s: float) -> float:
    a = math.exp(-1 / s)
    return a ** abs(j) * (1 - a) / (1 + a)


def dexp_bad_mass(k: int, s: float, f, reach: int = 4000) -> float:
    bad = DEXP.numeric_instance((k, s), f).bad
    a = math.exp(-1 / s)
    assert not any(evaluate(bad, {"v": k + j}) is None for j in range(3))
    total = sum(dexp_pmf(j, s) for j in range(reach) if evaluate(bad, {"v": k + j}))
    return total + a**reach  # mass beyond reach counted as bad


def dlap_bad_mass(fam, s: float, f, reach: int = 4000) -> float:
    bad = fam.numeric_instance((0, s), f).bad
    a = math.exp(-1 / s)
    total = sum(dlap_pmf(j, s) for j in range(-reach + 1, reach) if evaluate(bad, {"v": j}))
    return total + 2 * a**reach / (1 + a)


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("K", [0, 1, 2, 3, 5, 8])
@pytest.mark.parametrize("k", [-2, 0, 1, 7])
def test_dexp_cost_is_the_exact_integer_tail(s, K, k):
    f = math.exp(-K / s)  # Pr[v >= k + K]
    if f < 1e-300:
        pytest.skip("underflow")
    exact = sum(dexp_pmf(j, s) for j in range(K, 20000))
    assert exact == pytest.approx(f, rel=1e-9, abs=1e-300)
    g = f * (1 + 1e-9)
    bad = DEXP.numeric_instance((k, s), g).bad
    assert evaluate(bad, {"v": k + K}) and evaluate(bad, {"v": k - 1})
    if K > 0:
        assert not evaluate(bad, {"v": k + K - 1})
    assert DEXP.side_holds((k, s), g)
    assert dexp_bad_mass(k, s, g) <= DEXP.cost_value((k, s), g) + 1e-12


@settings(max_examples=150, deadline=None)
@given(s=st.floats(0.05, 20), f=st.floats(1e-6, 3.0), k=st.integers(-50, 50))
def test_dexp_bad_event_mass_below_cost(s, f, k):
    assert DEXP.side_holds((k, s), f)
    cost = DEXP.cost_value((k, s), f)
    assert DEXP.exact_tail((k, s), f) <= cost + 1e-12
    assert dexp_bad_mass(k, s, f, reach=400 if s < 5 else 4000) <= cost + 1e-9


@pytest.mark.parametrize("fam,sign", [(UP, 1), (LOW, -1)])
@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("K", [0, 1, 2, 5])
def test_dlap_one_sided_cost_is_exact(fam, sign, s, K):
    a = math.exp(-1 / s)
    f = a**K / (1 + a)  # Pr[v - m >= K] (upper), Pr[m - v >= K] (lower)
    if f < 1e-300:
        pytest.skip("underflow")
    exact = sum(dlap_pmf(j, s) for j in range(K, 20000))
    assert exact == pytest.approx(f, rel=1e-9)
    g = f * (1 + 1e-9)
    bad = fam.numeric_instance((0, s), g).bad
    assert evaluate(bad, {"v": sign * K})
    assert not evaluate(bad, {"v": sign * (K - 1)}) or K == 0
    assert not evaluate(bad, {"v": -sign}) and not evaluate(bad, {"v": -sign * (K + 1)})
    assert dlap_bad_mass(fam, s, g) <= fam.cost_value((0, s), g) + 1e-12


@settings(max_examples=150, deadline=None)
@given(s=st.floats(0.05, 20), f=st.floats(1e-6, 3.0), upper=st.booleans())
def test_dlap_one_sided_bad_event_mass_below_cost(s, f, upper):
    fam = UP if upper else LOW
    assert fam.side_holds((0, s), f)
    cost = fam.cost_value((0, s), f)
    assert fam.exact_tail((0, s), f) <= cost + 1e-12
    assert dlap_bad_mass(fam, s, f, reach=400 if s < 5 else 4000) <= cost + 1e-9


def test_dlap_one_sided_needs_its_side_conjunct():
    """Without ``v >= m`` a large f (K <= -1) would put the mass below m in the event: at s = 1,
    f = 3 the threshold is K = -log(3(1 + 1/e)) < -1, and Pr[v - m >= K] > 1/(1 + a) ... the
    conjunct keeps the mass at Pr[v >= m] = 1/(1 + a) <= f."""
    bad = UP.numeric_instance((0, 1.0), 3.0).bad
    assert not evaluate(bad, {"v": -1})
    assert evaluate(bad, {"v": 0})


def test_side_conditions_refuse_bad_scale_and_f():
    for fam in (DEXP, UP, LOW):
        assert not fam.side_holds((0, 0), 0.5)
        assert not fam.side_holds((0, 1), 0)
