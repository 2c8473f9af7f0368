"""FairSquare's ratio is exactly 1 when the decision cannot see the sensitive attribute —
and only then (the independence test is syntactic and must never claim too much)."""

from fractions import Fraction

import pytest
from locations import REPO

from lang.parser import parse
from tamp.probability import decide_program
from tamp.probability.independence import independent

ROOT = REPO


def _ratio(src):
    prog = parse(src).programs[0]
    res = decide_program(prog, timeout=30)
    (cmp,) = res.comparisons
    return res, cmp.lhs


def test_blind_decision_gives_ratio_exactly_one():
    res, lhs = _ratio("""program blind()
      ensures P(hire | female) / P(hire | !female) >= 0.99
    {
      female ~ bern(0.3);
      gain ~ gauss(1000, 4000000);
      age ~ uniform(18, 65);
      if (age > 30) { hire := gain >= 2000; } else { hire := gain >= 3000; }
    }""")
    assert lhs.lo == lhs.hi == Fraction(1)
    assert res.verdict == "proved"


def test_fairsquare_independent_population_ratio_is_exactly_one():
    path = ROOT / "benchmarks" / "fairness" / "ind_DT4.prob"
    res, lhs = _ratio(path.read_text())
    assert lhs.lo == lhs.hi == 1 and res.verdict == "proved"


@pytest.mark.parametrize(
    "body, truth",
    [
        # control dependence: the sensitive bit chooses the distribution
        ("s ~ bern(0.5); if (s) { x ~ uniform(0, 1); } else { x ~ uniform(0, 2); } t := x < 1;", 2),
        # data dependence through a distribution argument
        ("s ~ bern(0.5); m := s ? 3 : 0; x ~ uniform(m, m + 4); t := x < 3.5;", Fraction(1, 7)),
        # dependence through an assignment after the sampling
        ("s ~ bern(0.5); x ~ uniform(0, 1); y := x + (s ? 1 : 0); t := y < 1;", 0),
    ],
)
def test_dependent_events_are_not_claimed_independent(body, truth):
    src = f"program dep() ensures P(t | s) / P(t | !s) >= 0.5 {{ {body} }}"
    prog = parse(src).programs[0]
    ev = parse("program e() ensures t { }").programs[0].ensures[0]
    given = parse("program g() ensures s { }").programs[0].ensures[0]
    assert not independent(prog, ev, given)
    if truth:  # well-defined ratio: the certified interval must contain the truth, not 1
        res, lhs = _ratio(src)
        assert lhs.lo <= truth <= lhs.hi and not (lhs.lo <= 1 <= lhs.hi)


def test_conditioning_and_loops_are_out_of_scope():
    with_assume = parse(
        "program a() ensures P(t | s) > 0 { s ~ bern(0.5); x ~ bern(0.5); assume(x || s); t := x; }"
    ).programs[0]
    with_loop = parse(
        "program l() ensures P(t | s) > 0 { s ~ bern(0.5); t := false; for i in 0..3 { x ~ bern(0.5); t := t || x; } }"
    ).programs[0]
    e = parse("program e() ensures t { }").programs[0].ensures[0]
    g = parse("program g() ensures s { }").programs[0].ensures[0]
    assert not independent(with_assume, e, g)
    assert not independent(with_loop, e, g)
