"""Moments of a linear combination of accumulators (:func:`tamp.cfa.expected.claim_of`, session 26):
a postcondition reading several accumulated values through one linear form ``Σ v_j·x_j`` (``H - F``,
``2A - B``, ``A + B``) gets that form's mean and variance, the covariances of increments that read
the same draw included; two accumulators with equal moments are never read as one value."""

from __future__ import annotations

from fractions import Fraction

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate

from lang.parser import parse, parse_expr, parse_file
from lang.serialize import expr_from_json, to_json
from lang.walk import free_vars
from tamp.cfa import build_cfa
from tamp.cfa import expected as X
from tamp.prover.linearity.prove import try_linearity
from tamp.show import show_expr
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "diffvar26"
TARGET = BENCHMARKS / "prover4" / "dev" / "blind12" / "psychophysics" / "yes_no_difference_chebyshev.prob"
TRUE = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false")) + [TARGET]
FALSE = sorted(DEV.glob("*_false.prob"))


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
def test_linear_forms_of_counters_are_proved_by_linearity(path):
    result, why = try_linearity(*_direct(path), None, 0.0)
    assert result is not None, why
    assert result.to_json()["method"] == "linearity"


@pytest.mark.parametrize(
    "path", sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false")), ids=lambda p: p.stem
)
def test_linear_forms_of_counters_hold_when_simulated(path):
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=2000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved_by_linearity(path):
    result, _why = try_linearity(*_direct(path), None, 0.0)
    assert result is None


TWO = """program two(n: int, p: real, q: real, t: real)
  requires n >= 1 && p >= 0 && p <= 1 && q >= 0 && q <= 1 && t > 0
  ensures POST
  fails 1
{
  H := 0;
  F := 0;
  for i in 0..n {
    h ~ bern(p);
    f ~ bern(q);
    BODY
  }
}
"""


P, Q = Fraction(1, 3), Fraction(1, 4)


def _at(e):
    """``e`` at n = 5, p = 1/3, q = 1/4 (exact)."""
    return eval(show_expr(e), {"n": 5, "p": P, "q": Q})


def _two(post, body):
    return _claim(TWO.replace("POST", post).replace("BODY", body))


def test_a_difference_of_independent_counts_has_the_sum_of_their_variances():
    c = _two("abs(H - F) < t", "if (h) { H := H + 1; }\n    if (f) { F := F + 1; }")
    assert show_expr(c.post) == "abs(X$) < t"
    assert _at(c.base.mean) == 5 * (P - Q)
    assert c.base.var is not None and _at(c.base.var) == 5 * (P * (1 - P) + Q * (1 - Q))
    assert c.base.integral


def test_one_draw_counted_twice_has_no_variance_in_the_difference():
    c = _two("abs(H - F) < t", "if (h) { H := H + 1; }\n    if (h) { F := F + 1; }")
    assert c.base.var is not None
    assert _at(c.base.var) == 0  # E[(h - h)²] - E[h - h]²: zero, not 2p(1-p)
    assert _at(c.base.mean) == 0


def test_a_sum_with_a_shared_draw_has_the_covariance():
    c = _two("H + F < t", "if (h) { H := H + 1; F := F + 1; }")
    assert _at(c.base.mean) == 5 * 2 * P
    assert _at(c.base.var) == 5 * 4 * P * (1 - P)  # Var[2h], not 2 Var[h]


def test_scaled_occurrences_of_one_form_are_one_value():
    c = _two("2 * H - 2 * F < t && F - H < t", "if (h) { H := H + 1; }\n    if (f) { F := F + 1; }")
    assert set(free_vars(c.post)) == {X.X, "t"}
    assert show_expr(c.post) == "X$ + -t < 0 && -0.5 * X$ + -t < 0"  # X$ = 2H - 2F


@pytest.mark.parametrize(
    "post",
    ["H < t && F < t", "H - F < t && H + F < t", "H * F < t", "abs(H) - F < t"],
    ids=["two-atoms", "two-forms", "product", "abs-of-one"],
)
def test_two_different_forms_are_not_applicable(post):
    with pytest.raises(X.NotApplicable):
        _two(post, "if (h) { H := H + 1; }\n    if (f) { F := F + 1; }")


def test_two_counters_with_equal_moments_are_two_values():
    body = "if (h) { H := H + 1; }\n    if (f) { F := F + 1; }"
    with pytest.raises(X.NotApplicable):  # before session 26: H <= F read as X$ <= X$
        _claim(TWO.replace("POST", "H < t && H <= F").replace("BODY", body).replace("bern(q)", "bern(p)"))


def test_a_copy_of_an_accumulator_is_the_same_value():
    body = "if (h) { H := H + 1; }"
    text = TWO.replace("POST", "H < t && G == H").replace("BODY", body).replace("  }\n}", "  }\n  G := H;\n}")
    c = _claim(text)
    assert show_expr(c.post) == "X$ < t && X$ == X$"


def test_ratio_and_affine_coefficients():
    one, two, m = parse_expr("1"), parse_expr("2"), parse_expr("-1")
    assert X._ratio([two, parse_expr("-2")], [one, m]) == Fraction(2)
    assert X._ratio([two, one], [one, m]) is None
    assert X._ratio([parse_expr("k"), parse_expr("0")], [parse_expr("k"), parse_expr("0")]) == Fraction(1)
    assert X._ratio([parse_expr("2 * k")], [parse_expr("k")]) is None  # not compared symbolically
    assert X._ratio([one, parse_expr("k")], [one, parse_expr("0")]) is None
    coefs, b = X._affine_coefs(parse_expr("2 * a - b + c"), ["a", "b"])
    assert [show_expr(e) for e in coefs] == ["2", "-1"] and show_expr(b) == "c"
    assert X._affine_coefs(parse_expr("a * b"), ["a", "b"]) is None


def test_the_target_certificate_is_rechecked_and_a_smaller_variance_is_rejected(tmp_path, capsys):
    cert = proved_certificate(TARGET)
    lin = cert["linearity"][0]
    assert lin["rule"] == "chebyshev"
    code, out = check_proof(cert, TARGET, tmp_path, capsys)
    assert code == 0, out
    lin["variance"] = to_json(parse_expr("n * ph * (1 - ph)"))  # one counter's variance only
    code, out = check_proof(cert, TARGET, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_an_independence_variance_is_rejected_where_a_draw_is_shared(tmp_path, capsys):
    path = DEV / "quiz_score.prob"
    cert = proved_certificate(path)
    lin = cert["linearity"][0]
    assert show_expr(expr_from_json(lin["mean"])) != ""
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out
    lin["variance"] = to_json(parse_expr("5 * n * p * (1 - p)"))  # Var[2A] + Var[B], as if independent
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


RATE_DIFF = """program rateDiff(n: int, ph: real, pf: real, t: real)
  requires REQ && ph >= 0 && ph <= 1 && pf >= 0 && pf <= 1 && t > 0
  ensures  abs((H - F) / n - (ph - pf)) < t
  fails    (ph * (1 - ph) + pf * (1 - pf)) / (n * t * t)
{
  H := 0;
  F := 0;
  for i in 0..n {
    h ~ bern(ph);
    f ~ bern(pf);
    if (h) { H := H + 1; }
    if (f) { F := F + 1; }
  }
}"""


def test_a_linear_form_split_across_a_divisor_needs_the_divisor_non_zero():
    claim = _claim(RATE_DIFF.replace("REQ", "n >= 1"))
    assert ("a divisor of the postcondition's linear form is not zero", parse_expr("n != 0")) in [
        (name, parse_expr(show_expr(c))) for name, c in claim.side
    ]
    result, why = try_linearity(*_direct(RATE_DIFF.replace("REQ", "n >= 1")), None, 0.0)
    assert result is not None, why
    # where n may be 0 the split (H - F)/n = H/n - F/n is not an identity: no proof by this path
    result, why = try_linearity(*_direct(RATE_DIFF.replace("REQ", "n >= 0")), None, 0.0)
    assert result is None
