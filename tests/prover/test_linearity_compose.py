"""Linearity of expectation composed with loops and bounds (:mod:`tamp.cfa.expected`, session 20):
an inner loop's total added to an outer accumulator, a flag set by a loop (its probability bounded
by the union bound, Markov only), and Markov on the pair count ``X(X-1)`` of an integer."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.methods import attempt

from lang.parser import parse, parse_file
from tamp.cfa import build_cfa
from tamp.cfa import expected as X
from tamp.prover.linearity.prove import try_linearity
from tamp.show import show_expr
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "lincomp"
B6 = BENCHMARKS / "prover4" / "dev" / "blind6"
TRUE = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false")) + [
    B6 / "sequencing" / "total_errors.prob",
    B6 / "guessing" / "credential_stuffing.prob",
]
FALSE = sorted(DEV.glob("*_false.prob")) + [
    B6 / "sequencing" / "total_errors_false.prob",
    B6 / "guessing" / "credential_stuffing_false.prob",
]


def _direct(text_or_path):
    if isinstance(text_or_path, str):
        src, path = parse(text_or_path), "<t>"
    else:
        src, path = parse_file(str(text_or_path)), str(text_or_path)
    prog = src.programs[0]
    return prog, build_cfa(prog, None, path, src.text)


def _claim(text):
    return X.claim_of(*_direct(text))


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_composed_claims_are_proved_by_linearity(path):
    result, why = try_linearity(*_direct(path), None, 0.0)
    assert result is not None, why


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_composed_claims_hold_when_simulated(path):
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_composed_false_siblings_are_not_proved(path):
    result, _why = attempt(try_linearity, *_direct(path), None, 0.0)
    assert result is None


NESTED = """program nested(N: int, L: int, e: real, t: int)
  requires N >= 1 && L >= 1 && t >= 1 && e >= 0 && e <= 1
  ensures total < t
  fails N * L * e / t
{
  total := 0;
  for r in 0..N {
    per := 0;
    for j in 0..L {
      x ~ bern(e);
      if (x) { per := per + 1; }
    }
    total := total + INC;
  }
}
"""


def test_an_inner_total_has_its_moments_in_the_outer_sum():
    c = _claim(NESTED.replace("INC", "per"))
    assert show_expr(c.base.mean) == "N * (L * e)"
    assert c.base.var is not None and show_expr(c.base.var) == "N * (L * e) - N * (L * (e * e))"
    c = _claim(NESTED.replace("INC", "2 * per + 1"))
    assert show_expr(c.base.mean) == "N * (2 * (L * e)) + N"


def test_one_inner_total_added_twice_gets_no_variance():
    c = _claim(NESTED.replace("total := total + INC;", "total := total + per;\n    total := total + per;"))
    assert c.base.var is None  # the two terms are one value: their variances do not add
    assert show_expr(c.base.mean) == "N * (L * e) + N * (L * e)"


def test_an_inner_total_and_the_loop_raising_the_same_sum_get_no_variance():
    text = NESTED.replace("per := per + 1; }", "per := per + 1; total := total + 1; }").replace("INC", "per")
    c = _claim(text)
    assert c.base.var is None


def test_a_total_of_before_the_loop_is_not_an_increment():
    text = NESTED.replace(
        "total := 0;", "total := 0;\n  s := 0;\n  for q in 0..L { z ~ bern(e); if (z) { s := s + 1; } }"
    )
    text = text.replace("INC", "s")
    with pytest.raises(X.NotApplicable):
        _claim(text)


FLAGS = """program flags(m: int, k: int, p: real, t: int)
  requires m >= 1 && k >= 1 && t >= 1 && p >= 0 && p <= 1
  ensures c < t
  fails m * k * p / t
{
  c := 0;
  for a in 0..m {
    hit := false;
    for g in 0..k {
      s ~ bern(p);
      if (s) { hit := true; }
    }
    TEST
  }
}
"""


def test_a_flag_counts_with_its_union_bound_and_no_variance():
    c = _claim(FLAGS.replace("TEST", "if (hit) { c := c + 1; }"))
    assert show_expr(c.base.mean) == "m * (k * p)"
    assert c.base.var is None  # an upper bound on the mean: Markov only
    prog, cfa = _direct(FLAGS.replace("TEST", "if (hit) { c := c + 1; }"))
    assert try_linearity(prog, cfa, None, 0.0)[0].proof.rule == "markov"


@pytest.mark.parametrize(
    "test",
    [
        "if (!hit) { c := c + 1; }",  # Pr[!hit] has no upper bound from the union bound
        "if (hit) { } else { c := c + 1; }",
        "c := c + (hit ? 1 : 0);",
    ],
    ids=["negated", "else", "value"],
)
def test_a_flag_is_only_tested_for_truth(test):
    with pytest.raises(X.NotApplicable):
        _claim(FLAGS.replace("TEST", test))


def test_two_flags_of_one_loop_are_not_multiplied():
    text = FLAGS.replace("if (s) { hit := true; }", "if (s) { hit := true; } else { hit2 := true; }")
    text = text.replace("hit := false;", "hit := false;\n    hit2 := false;")
    with pytest.raises(X.NotApplicable):  # Pr[hit && hit2] is not Pr[hit] * Pr[hit2]
        _claim(text.replace("TEST", "if (hit && hit2) { c := c + 1; }"))
    c = _claim(text.replace("TEST", "if (hit) { c := c + 1; }\n    if (hit2) { c := c + 1; }"))
    assert show_expr(c.base.mean) == "m * (k * p) + m * k - m * (k * p)"


def test_a_flag_set_by_a_loop_reading_an_array_of_draws_is_not_a_flag():
    text = FLAGS.replace("c := 0;", "c := 0;\n  for q in 0..k { d[q] ~ bern(p); }").replace(
        "s ~ bern(p);\n      if (s)", "if (d[g])"
    )
    with pytest.raises(X.NotApplicable):  # one array's draws in every outer iteration
        _claim(text.replace("TEST", "if (hit) { c := c + 1; }"))


PAIRS = """program pairs(L: int, e: real)
  requires L >= 2 && e >= 0 && e <= 1
  ensures errors <= 1
  fails BOUND
{
  errors := 0;
  for j in 0..L {
    x ~ bern(e);
    if (x) { errors := errors + 1; }
  }
}
"""


def test_at_most_one_event_is_the_union_bound_over_pairs():
    prog, cfa = _direct(PAIRS.replace("BOUND", "L * (L - 1) * e * e / 2"))
    result, why = try_linearity(prog, cfa, None, 0.0)
    assert result is not None, why
    assert result.proof.rule == "pairs"
    prog, cfa = _direct(PAIRS.replace("BOUND", "L * (L - 1) * e * e / 3"))
    assert try_linearity(prog, cfa, None, 0.0)[0] is None


def test_the_pair_count_needs_an_integer_and_a_threshold_above_one():
    c = _claim(PAIRS.replace("BOUND", "1"))
    with pytest.raises(X.NotApplicable):  # a real-valued X: X(X-1) may be negative
        X.obligations(
            X.LinClaim(
                X.Moments(c.base.mean, c.base.var, c.base.nonneg, False), c.post, c.side, c.requires, c.types, c.loops
            ),
            "pairs",
            X.A.num(2),
            X.A.num(1),
        )
    obs = X.obligations(c, "pairs", X.A.num(2), X.A.num(1))
    assert [k for k, _w, _f in obs][-3:] == ["THRESHOLD", "POST", "BUDGET"]
