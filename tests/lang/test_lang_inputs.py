"""Input values fixed into a program (lang.inputs.fix_inputs) and which engine decides a clause
(lang.speckind.clause_kind)."""

from fractions import Fraction

import pytest

from lang.errors import TampError
from lang.inputs import fix_inputs, parse_value
from lang.parser import parse
from lang.printer import print_expr
from lang.speckind import CAUSAL, FAILURE_BOUND, PROBABILITY, clause_kind, spec_kind

PROG = parse("program p(n: int, eps: real, q: int[], b: bool) requires n >= 1 ensures x == n { x := n; }").programs[0]


def test_fixed_inputs_become_requires_clauses():
    values = {"n": parse_value("3"), "eps": parse_value("0.5"), "q": parse_value("[1, -2]"), "b": parse_value("true")}
    fixed = fix_inputs(PROG, values)
    assert [print_expr(r) for r in fixed.requires] == [
        "n >= 1",
        "n == 3",
        "eps == 0.5",
        "q[0] == 1",
        "q[1] == -2",
        "b == true",
    ]
    assert fixed.body == PROG.body and fixed.ensures == PROG.ensures


def test_other_programs_inputs_are_skipped_and_a_non_value_is_an_error():
    assert fix_inputs(PROG, {"m": 1}).requires == PROG.requires  # another program's input
    with pytest.raises(TampError, match="only numbers and true/false"):
        fix_inputs(PROG, {"n": "three"})
    assert fix_inputs(PROG, {"eps": Fraction(1, 3)}).requires[-1].right.value == Fraction(1, 3)


def test_each_clause_goes_to_its_engine():
    src = parse("""program p(s: int, a: real) ensures x > 0 ensures P(x > 0) >= 0.5
                   ensures independent(d, s in {0, 1}) { x ~ gauss(a, 1); d := a > 3; }""").programs[0]
    assert [clause_kind(e) for e in src.ensures] == [FAILURE_BOUND, PROBABILITY, CAUSAL]
    assert spec_kind(src) == PROBABILITY
