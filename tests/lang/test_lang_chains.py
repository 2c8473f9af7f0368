"""Chains of one operator are not nesting: a linear model with 1,001 or 100,000 features
parses, type-checks, prints, evaluates; real nesting keeps its limit (test_lang_parser_errors)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lang import ast as A
from lang.errors import TypeCheckError
from lang.evaluate import evaluate
from lang.parser import parse, parse_expr
from lang.printer import print_expr, print_file
from lang.recursion import deep_recursion
from lang.typecheck import check_file
from lang.walk import free_vars


def linear_model(n: int) -> str:
    terms = " + ".join(f"{k % 7 + 1} * x[{k}]" for k in range(n))
    return f"program model(x: real[], b: real)\n  ensures y >= b - b\n{{\n  y := {terms} - b;\n}}\n"


def test_a_1001_feature_model_round_trips():
    src = parse(linear_model(1001), "m.prob")
    types = check_file(src)["model"]
    assert str(types.vars["y"]) == "real"
    text = print_file(src)
    assert text == linear_model(1001)
    with deep_recursion():  # AST equality is recursive
        assert parse(text) == src


def test_a_100000_feature_model_parses_checks_prints_and_evaluates():
    n = 100_000
    src = parse(linear_model(n), "m.prob")
    check_file(src)
    value = src.programs[0].body.stmts[0].value
    assert isinstance(value, A.Binary) and value.op == "-"
    assert len(A.left_spine(value)) == n + 1  # the n - 1 "+", the "-" and the first "*"
    assert set(free_vars(value)) == {"x", "b"}
    assert print_file(src) == linear_model(n)
    env = {"x": [Fraction(1, 2)] * n, "b": 3}
    assert evaluate(value, env) == Fraction(sum(k % 7 + 1 for k in range(n)), 2) - 3


def test_mixed_chains_keep_precedence_and_associativity():
    for text in [
        "a - b - c + d",
        "a - (b - c) + d",
        "a * b / c * d - e * f",
        "p && q || r && s || t",
        "a - b - c < d + e",
    ]:
        e = parse_expr(text)
        assert print_expr(e) == text
    env = {"a": 10, "b": 4, "c": 3, "d": 1, "e": 2, "f": 5}
    assert evaluate(parse_expr("a - b - c + d"), env) == 4
    assert evaluate(parse_expr("a - (b - c) + d"), env) == 10
    assert evaluate(parse_expr("false && 1 / 0 > 1 || true"), {}) is True


def test_type_errors_in_a_long_chain_are_located():
    terms = " + ".join(["x[0]"] * 5000 + ["true"] + ["x[1]"] * 10)
    with pytest.raises(TypeCheckError, match="must be a number, but this is a bool") as info:
        check_file(parse(f"program p(x: real[]) {{ y := {terms}; }}", "p.prob"))
    assert (info.value.line, info.value.col) == (1, 29 + 5000 * 7)  # at `true`
