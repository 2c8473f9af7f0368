"""Input values fixed into a program (lang.inputs.fix_inputs) and which engine decides a clause
(lang.speckind.clause_kind)."""

from fractions import Fraction

import pytest

from lang.errors import TampError
from lang.inputs import fix_inputs, parse_inputs
from lang.parser import parse
from lang.printer import print_expr
from lang.speckind import CAUSAL, FAILURE_BOUND, PROBABILITY, clause_kind, spec_kind

PROG = parse("program p(n: int, eps: real, q: int[], b: bool) requires n >= 1 ensures x == n { x := n; }").programs[0]


def test_fixed_inputs_become_requires_clauses():
    fixed = fix_inputs(PROG, parse_inputs(["n=3", "eps=0.5", "q=[1, -2]", "b=true"]))
    assert [print_expr(r) for r in fixed.requires] == ["n >= 1", "n == 3", "eps == 0.5", "q[0] == 1", "q[1] == -2",
                                                       "b == true"]
    assert fixed.body == PROG.body and fixed.ensures == PROG.ensures


def test_fixing_an_unknown_input_or_a_non_value_is_an_error():
    with pytest.raises(TampError, match="no parameter 'm'"):
        fix_inputs(PROG, {"m": 1})
    with pytest.raises(TampError, match="only numbers and true/false"):
        fix_inputs(PROG, {"n": "three"})
    assert fix_inputs(PROG, {"eps": Fraction(1, 3)}).requires[-1].right.value == Fraction(1, 3)


def test_each_clause_goes_to_its_engine():
    src = parse("""program p(s: int, a: real) ensures x > 0 ensures P(x > 0) >= 0.5
                   ensures independent(d, s in {0, 1}) { x ~ gauss(a, 1); d := a > 3; }""").programs[0]
    assert [clause_kind(e) for e in src.ensures] == [FAILURE_BOUND, PROBABILITY, CAUSAL]
    assert spec_kind(src) == PROBABILITY
