"""Session 22 (rates2): a summed budget split into per-draw shares (trace candidates) and the
exact chance of a tail test of an exponential draw in the expected-failure rules."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lang import ast as A
from lang.parser import parse_expr
from tamp.prover.expectation.tails import exp_chance, tail_chance
from tamp.prover.trace.candidates import budget_terms, term_shares
from tamp.show import show_expr

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "rates2"


def _sample(text: str) -> A.Sample:
    return A.Sample((A.Var("x"),), parse_expr(text))


def _shows(es):
    return [show_expr(e) for e in es]


def test_budget_terms_as_written_and_expanded():
    assert _shows(budget_terms(parse_expr("a * S + b * T"))) == ["a * S", "b * T"]
    assert sorted(_shows(budget_terms(parse_expr("(a + b + c) * T")))) == ["T * a", "T * b", "T * c"]
    assert budget_terms(parse_expr("a * T")) == []
    assert budget_terms(parse_expr("n * q * exp(-beta * m)")) == []


def test_term_shares_match_the_draws_parameters():
    beta = parse_expr("a * S + b * T")
    assert _shows(term_shares(_sample("exp(0, 1 / a)"), beta, 2)) == ["a * S"]
    assert _shows(term_shares(_sample("exp(0, 1 / b)"), beta, 2)) == ["b * T"]
    # no term reads the draw's parameters: every term is a proposal
    assert _shows(term_shares(_sample("exp(0, 1 / c)"), beta, 2)) == ["a * S", "b * T"]
    # more real samplings than terms: the sum is not a split among them
    assert term_shares(_sample("exp(0, 1 / a)"), beta, 3) == []


def _value(e: A.Expr, env) -> float:
    """A small evaluator of the expressions the rule writes (numbers, variables, + - * /,
    comparisons, unary minus, exp, conditionals)."""
    if isinstance(e, A.Num):
        return float(e.value)
    if isinstance(e, A.Var):
        return env[e.name]
    if isinstance(e, A.Unary) and e.op == "-":
        return -_value(e.operand, env)
    if isinstance(e, A.Call) and e.func == "exp":
        return math.exp(_value(e.args[0], env))
    if isinstance(e, A.Cond):
        return _value(e.then if _value(e.cond, env) else e.other, env)
    assert isinstance(e, A.Binary), e
    x, y = _value(e.left, env), _value(e.right, env)
    ops = {"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else math.nan, ">=": x >= y, ">": x > y}
    return ops[e.op]


@pytest.mark.parametrize("t,k,s", [(2.0, 0.5, 1.5), (0.2, 0.5, 1.5), (3.0, -1.0, 0.25)])
def test_exp_chance_is_the_survival_function(t, k, s):
    phi_up = parse_expr("x > t")
    phi_down = parse_expr("t >= x")  # written the other way round: x < t up to a tie
    up = exp_chance(phi_up, "x", A.Var("k"), A.Var("s"))
    down = exp_chance(phi_down, "x", A.Var("k"), A.Var("s"))
    assert up is not None and down is not None
    want = math.exp(-(t - k) / s) if t >= k else 1.0
    env = {"t": t, "k": k, "s": s}
    assert _value(up, env) == pytest.approx(want, rel=1e-12)
    assert _value(down, env) == pytest.approx(1 - want, rel=1e-12, abs=1e-15)


def test_exp_chance_refuses_other_tests():
    k, s = A.Var("k"), A.Var("s")
    assert exp_chance(parse_expr("abs(x - k) > t"), "x", k, s) is None
    assert exp_chance(parse_expr("x > x / 2"), "x", k, s) is None
    assert exp_chance(parse_expr("x == t"), "x", k, s) is None
    assert exp_chance(parse_expr("x > t"), "x", A.Var("x"), s) is None
    assert tail_chance("gauss", parse_expr("x > t"), "x", k, s) is None


def _verdict(name: str) -> str:
    from tamp.api import prove

    return prove(str(DEV / f"{name}.prob"), timeout=60).programs[0].verdict


@pytest.mark.parametrize("name", ["two_deadlines", "burst_tail", "shifted_wait"])
def test_dev_variants_are_proved(name):
    assert _verdict(name) == "proved"


@pytest.mark.parametrize("name", ["burst_tail_false", "shifted_wait_false"])
def test_false_variants_are_not_proved(name):
    assert _verdict(name) != "proved"


def test_log_lower_is_below_the_log_and_only_for_literals_below_one():
    from fractions import Fraction

    from tamp.cfa.nesting import log_lower

    for b in ("0.05", "0.5", "0.001", "0.999"):
        got = log_lower(parse_expr(b))
        assert got is not None
        value = float(Fraction(b))
        assert float(got) <= math.log(value) < float(got) + 1e-6
    for b in ("1", "2", "0", "p", "exp(-3)", "1 / 20"):
        assert log_lower(parse_expr(b)) is None


def test_counter_test_in_an_early_exit_loop_is_the_flag():
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.cfa.nesting import flag_loop

    src = (DEV / "rule_of_two.prob").read_text()
    parsed = parse(src)
    prog = parsed.programs[0] if hasattr(parsed, "programs") else parsed[0]
    cfa = build_cfa(prog)
    fl = flag_loop(prog, tuple(cfa.ensures), cfa.types)
    assert fl is not None and fl.form == "product" and fl.early_exit
    # a test reading the counter other than as `k == 0` is not the flag
    odd = src.replace("hits < 1", "hits < 2")
    parsed = parse(odd)
    prog = parsed.programs[0] if hasattr(parsed, "programs") else parsed[0]
    cfa = build_cfa(prog)
    assert flag_loop(prog, tuple(cfa.ensures), cfa.types) is None


@pytest.mark.parametrize(
    "name,verdict", [("rule_of_two", True), ("search_until_found", True), ("rule_of_two_false", False)]
)
def test_early_exit_until_first_event(name, verdict):
    assert (_verdict(name) == "proved") is verdict
