"""Chebyshev's axiom for one draw (:mod:`axioms.chebyshev`): the exact tail of the bad event
``(v - μ)² >= V/f`` is at most f for every distribution it covers, and a wrong variance would
break that (the test is not vacuous)."""

import math

import numpy as np
import pytest
from axioms_testlib import assert_consistent, frequency

import axioms
from axioms.chebyshev import Chebyshev, moments
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr

CH = Chebyshev()
CASES = [
    ("gauss", (3.0, 0.25)),
    ("gauss", (-1.0, 9.0)),
    ("lap", (0.0, 1.0)),
    ("lap", (2.0, 0.3)),
    ("uniform", (0.0, 4.0)),
    ("uniform", (-1.0, 1.0)),
    ("exp", (0.0, 1.0)),
    ("exp", (2.0, 0.5)),
    ("unif", (1.0, 6.0)),
    ("unif", (0.0, 1.0)),
]
FS = [1e-3, 0.05, 0.2, 0.5, 0.9, 1.0, 2.0]


@pytest.mark.parametrize("func,args", CASES)
@pytest.mark.parametrize("f", FS)
def test_exact_tail_is_within_the_cost(func, args, f):
    assert CH.side_holds_for(func, args, f)
    assert CH.exact_tail(args, f, func) <= f + 1e-12


@pytest.mark.parametrize("func,args", CASES)
def test_monte_carlo_matches_the_exact_tail(func, args):
    rng = np.random.default_rng(5)
    n = 100_000
    a, b = args
    v = {
        "gauss": lambda: rng.normal(a, math.sqrt(b), n),
        "lap": lambda: rng.laplace(a, b, n),
        "uniform": lambda: rng.uniform(a, b, n),
        "exp": lambda: a + rng.exponential(b, n),
        "unif": lambda: rng.integers(int(a), int(b) + 1, n).astype(float),
    }[func]()
    f = 0.5
    bad = CH.numeric_instance(args, f, func).bad
    assert_consistent(frequency(bad, {"v": v}), CH.exact_tail(args, f, func), n, func)


def test_the_variance_matters():
    """unif(0, 1) (two points, variance 1/4) is tight for Chebyshev: at f = 1 the bad event
    ``(v - 1/2)² >= 1/4`` is certain. With the continuous uniform's ``(hi - lo)²/12`` = 1/12 as the
    variance the event would be certain at f = 1/3 too, a tail of 1 > f: a wrong moment shows."""
    assert CH.exact_tail((0.0, 1.0), 1.0, "unif") == 1.0
    assert CH.exact_tail((0.0, 1.0), 0.5, "unif") == 0.0
    assert (1 - 0.5) ** 2 >= (1 / 12) / (1 / 3)  # the wrong variance's event at f = 1/3: every draw


def test_moments_and_sides():
    mean, var, side = moments("lap", (parse_expr("q[i]"), parse_expr("1 / eps")))
    assert evaluate(var, {"eps": 2}) == pytest.approx(0.5)
    inst = CH.instantiate((A.Var("z"),), parse_expr("unif(lo, hi)"), parse_expr("f"))
    assert len(inst.side) == 3  # V > 0, f > 0, lo <= hi
    assert moments("bern", (parse_expr("p"),)) is None


def test_families_for():
    names = {f.name for f in axioms.families_for(parse_expr("gauss(m, v)"))}
    assert "chebyshev" in names
    assert "chebyshev" not in {f.name for f in axioms.families_for(parse_expr("unif(1, 6)"))}
    assert "chebyshev" not in {f.name for f in axioms.families_for(parse_expr("dlap(0, s)"))}
