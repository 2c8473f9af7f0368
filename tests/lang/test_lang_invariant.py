"""Loop `invariant` clauses: parsed on while and for loops (any number), printed back, typed as
bool expressions over inputs and program variables (spec constructs allowed), located errors."""

from __future__ import annotations

import pytest

from lang import ast as A
from lang.errors import ParseError, TypeCheckError, UnsupportedError
from lang.parser import parse
from lang.printer import print_file
from lang.serialize import from_json, to_json
from lang.typecheck import check_file

SOURCE = """
program p(q: real[], n: int)
  requires n >= 0
  ensures s >= 0
{
  s := 0;
  i := 0;
  while (i < n) invariant 0 <= i && i <= n invariant s == sum(j in 0..i: j) {
    s := s + i;
    i := i + 1;
  }
  for k in 0..n invariant forall j in 0..k: q[j] == q[j] {
    s := s + 1;
  }
  while (s > 0) {
    s := s - 1;
  }
}
"""


def test_invariants_are_parsed_in_order_with_positions():
    prog = parse(SOURCE, "t.prob").programs[0]
    loop, counted, plain = prog.body.stmts[2], prog.body.stmts[3], prog.body.stmts[4]
    assert isinstance(loop, A.While) and len(loop.invariants) == 2
    assert isinstance(loop.invariants[1].right, A.Sum)
    assert (loop.invariants[0].pos.line, loop.invariants[0].pos.col) == (8, 27)
    assert isinstance(counted, A.For) and isinstance(counted.invariants[0], A.Quant)
    assert plain.invariants == ()


def test_invariants_round_trip_through_the_printer_and_json():
    src = parse(SOURCE, "t.prob")
    text = print_file(src)
    assert "while (i < n) invariant 0 <= i && i <= n invariant s == sum(j in 0..i: j) {" in text
    assert "for k in 0..n invariant forall j in 0..k: q[j] == q[j] {" in text
    assert parse(text) == src
    assert print_file(parse(text)) == text
    loop = src.programs[0].body.stmts[2]
    assert from_json(to_json(loop)) == loop


def test_invariants_type_check():
    types = check_file(parse(SOURCE, "t.prob"))["p"]
    assert str(types.vars["s"]) == "int"


def test_invariant_is_a_keyword():
    with pytest.raises(ParseError) as info:
        parse("program p() { invariant := 1; }", "t.prob")
    assert (info.value.line, info.value.col) == (1, 15)


def test_an_invariant_needs_a_loop():
    with pytest.raises(ParseError):
        parse("program p() { x := 0; invariant x >= 0; }", "t.prob")


@pytest.mark.parametrize(
    "text,line,col,fragment",
    [
        (
            "program p(n: int) { i := 0; while (i < n) invariant i + 1 { i := i + 1; } }",
            1,
            53,
            "a loop invariant must be a bool",
        ),
        ("program p(n: int) { for i in 0..n invariant y >= 0 { skip; } }", 1, 45, "unknown variable 'y'"),
        (
            "program p(n: int) { i := 0; while (i < n) invariant P(i > 0) > 0 { i := i + 1; } }",
            1,
            53,
            "may only be used in 'ensures', not in a loop invariant",
        ),
        (
            "program p(n: int) rate 0.1 { i := 0; while (i < n) invariant i +. 1 > 0 { i := i + 1; } }",
            1,
            62,
            "unreliable operator",
        ),
    ],
)
def test_invariant_type_errors_are_located(text, line, col, fragment):
    with pytest.raises((TypeCheckError, UnsupportedError)) as info:
        check_file(parse(text, "t.prob"))
    err = info.value
    assert fragment in str(err)
    assert (err.line, err.col) == (line, col)
