"""Gaussian families (sub-Gaussian / Chernoff tails)."""

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency
from hypothesis import given, settings
from hypothesis import strategies as st

from axioms.gaussian import GaussianOneSided, GaussianTail
from lang import ast as A
from lang.parser import parse_expr

TWO = GaussianTail()
UP, LOW = GaussianOneSided(True), GaussianOneSided(False)
VARS = [1e-4, 0.25, 1.0, 9.0, 24248365.5]
FS = [1e-6, 1e-3, 0.05, 0.5, 1.0]


@pytest.mark.parametrize("fam", [TWO, UP, LOW], ids=lambda f: f.name)
@pytest.mark.parametrize("var", VARS)
@pytest.mark.parametrize("f", FS)
def test_bound(fam, var, f):
    exact, cost = fam.exact_tail((3.0, var), f), fam.cost_value((3.0, var), f)
    assert exact <= cost + 1e-12
    assert exact >= 0.05 * f  # not vacuous: Chernoff loses only a factor of order sqrt(log 1/f)


@settings(max_examples=150, deadline=None)
@given(m=st.floats(-1e3, 1e3), var=st.floats(1e-3, 400), f=st.floats(1e-6, 1.0), which=st.sampled_from([TWO, UP, LOW]))
def test_hypothesis(m, var, f, which):
    assert which.side_holds((m, var), f)
    assert which.exact_tail((m, var), f) <= which.cost_value((m, var), f) + 1e-12


@pytest.mark.parametrize("fam", [TWO, UP, LOW], ids=lambda f: f.name)
def test_monte_carlo(fam):
    rng = np.random.default_rng(3)
    n = 200_000
    m, var, f = -2.0, 4.0, 0.3
    v = rng.normal(m, var**0.5, n)
    bad = fam.numeric_instance((m, var), f).bad
    assert_consistent(frequency(bad, {"v": v}), fam.exact_tail((m, var), f), n, fam.name)


def test_variance_not_sd():
    """gauss(m, v) takes the variance: at var = 100 the 2-sided threshold for f = 2e^-2 is
    sqrt(2*100*2) = 20 (it would be 2 if the argument were read as a standard deviation)."""
    import math

    f = 2 * math.exp(-2)
    assert TWO.exact_tail((0, 100.0), f) == pytest.approx(2 * 0.022750131948179, rel=1e-6)


def test_sides():
    inst = TWO.instantiate((A.Var("g"),), parse_expr("gauss(0.3 * age + 2, 1)"), A.Var("p"))
    assert len(inst.side) == 3
    assert not TWO.side_holds((0, 0.0), 0.5) and not TWO.side_holds((0, 1.0), 0.0)


# ---- bounds written as exponentials (log_ratio) and the two-sided f <= 2 --------------------


def _threshold(fam, m, var, f_text):
    """The threshold the instance's bad event compares with, evaluated at numbers."""
    from lang.evaluate import evaluate

    inst = fam.instantiate((A.Var("v"),), parse_expr(f"gauss({m}, {var})"), parse_expr(f_text))
    return float(evaluate(inst.bad.right, {})), inst


@pytest.mark.parametrize("t", [0.1, 1.0, 2.5, 4.0])
@pytest.mark.parametrize("var", [0.25, 1.0, 9.0])
def test_exp_written_parameter_is_the_same_event(t, var):
    """``f = exp(-t²/(2 var))`` (one-sided) and ``2·exp(…)`` (two-sided) give the threshold
    ``t`` exactly: the rewritten ``log(c/f)`` is the identity, not a weakening."""
    import math

    e = f"{t} * {t} / (2 * {var})"
    up, inst = _threshold(UP, 0, var, f"exp(-{e})")
    assert up == pytest.approx(t, rel=1e-9)
    assert not any(isinstance(n, A.Call) and n.func == "log" for n in A.walk(inst.bad))
    two, inst2 = _threshold(TWO, 0, var, f"2 * exp(-({e}))")
    assert two == pytest.approx(t, rel=1e-9)
    assert not any(isinstance(n, A.Call) and n.func == "log" for n in A.walk(inst2.bad))
    # the exact tails at that threshold are below the costs
    assert 1 - 0.5 * (1 + math.erf(t / math.sqrt(2 * var))) <= math.exp(-t * t / (2 * var)) + 1e-12
    assert TWO.exact_tail((0, var), 2 * math.exp(-t * t / (2 * var))) <= 2 * math.exp(-t * t / (2 * var)) + 1e-12


def test_other_written_parameters_keep_the_log():
    """Only ``exp(-E)`` (c = 1) and ``c·exp(-E)`` with the same c are rewritten."""
    _, inst = _threshold(UP, 0, 1, "2 * exp(-3)")
    assert any(isinstance(n, A.Call) and n.func == "log" for n in A.walk(inst.bad))
    _, inst = _threshold(TWO, 0, 1, "exp(-3)")
    assert any(isinstance(n, A.Call) and n.func == "log" for n in A.walk(inst.bad))


@pytest.mark.parametrize("f", [1.0, 1.3, 1.9, 2.0])
def test_two_sided_up_to_two(f):
    """Two-sided: ``log(2/f) >= 0`` for ``f <= 2``, and the tail stays below ``f``."""
    assert TWO.side_holds((0, 1.0), f)
    assert TWO.exact_tail((0, 1.0), f) <= f
    assert not TWO.side_holds((0, 1.0), 2.01)
    assert not UP.side_holds((0, 1.0), 1.3)
