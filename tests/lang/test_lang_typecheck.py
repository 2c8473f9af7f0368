"""Type checker: accepted programs get the right types; rejected ones get one located message."""

from __future__ import annotations

import pytest

from lang import ast as A
from lang.errors import TypeCheckError, UnsupportedError
from lang.parser import parse, parse_expr
from lang.typecheck import check_file, check_program, fits, join


def types_of(text, name=None):
    src = parse(text, "t.prob")
    out = check_file(src)
    prog = out[name or src.programs[0].name]
    return {n: str(t) for n, t in prog.vars.items()}


def error_of(text):
    with pytest.raises((TypeCheckError, UnsupportedError)) as info:
        check_file(parse(text, "t.prob"))
    return info.value


# ----------------------------------------------------------------------------- accepted


def test_locals_take_the_type_of_their_definitions():
    assert types_of("program p(n: int, r: real) { x := n; y := n / 2; z := r * n; b := x < y; }") == {
        "n": "int",
        "r": "real",
        "x": "int",
        "y": "real",
        "z": "real",
        "b": "bool",
    }


def test_int_local_widens_to_real_when_a_real_is_stored():
    assert types_of("program p() { s := 0; s := s + 0.5; }")["s"] == "real"


def test_declared_local_keeps_its_type():
    assert types_of("program p() { var s: real; s := 0; }")["s"] == "real"
    assert types_of("program p() { var a: int[]; a[0] := 1; }")["a"] == "int[]"


def test_local_array_created_by_element_write():
    assert types_of("program p(n: int) { for i in 0..n { a[i] ~ lap(0, 1); } }")["a"] == "real[]"


def test_definitions_may_come_later_in_loops():
    t = types_of("program p(n: int) { i := 0; while (i < n) { if (i > 0) { y := x + 1; } x := 2 * i; i := i + 1; } }")
    assert t["x"] == "int" and t["y"] == "int"


def test_distribution_result_types():
    t = types_of("""program p(n: int) {
      b ~ bern(0.5); u ~ unif(0, n); s ~ unif({1, 2.5}); (x, y) ~ unif({1, 2} * {true, false});
      l ~ lap(0, 1); e ~ exp(0, 2); d ~ dlap(0, 1.5); g ~ dexp(1, 2); h ~ gauss(0, 1);
      v ~ uniform(0, 1); w ~ step([(0, 1, 0.2), (1, 3, 0.8)]); k ~ density(0, 1, 2 * _ + 1);
    }""")
    assert t == {
        "n": "int",
        "b": "bool",
        "u": "int",
        "s": "real",
        "x": "int",
        "y": "bool",
        "l": "real",
        "e": "real",
        "d": "int",
        "g": "int",
        "h": "real",
        "v": "real",
        "w": "real",
        "k": "real",
    }


def test_builtins_and_pairs():
    t = types_of(
        "program p(n: int) { a := abs(n); b := min(n, 2.5); c := log(2); t := (n, true); f := fst(t); g := snd(t); m := n mod 3; }"
    )
    assert t["a"] == "int" and t["b"] == "real" and t["c"] == "real" and t["t"] == "(int, bool)"
    assert t["f"] == "int" and t["g"] == "bool" and t["m"] == "int"


def test_specifications():
    t = types_of("""program p(q: int[], n: int)
      requires n >= 0 && forall j in 0..n: q[j] >= 0
      ensures s <= sum(j in 0..=n: q[j]) && exists k in 0..n: q[k] == s
      fails 1 / (n + 1)
    { s := 0; }""")
    assert t["s"] == "int"


def test_failed_is_an_implicit_local():
    t = types_of("program p(n: int, r: real) rate r ensures !failed ==> x == n + 1 { x := n +. 1; }")
    assert t["failed"] == "bool"
    assert "failed" not in types_of("program p(n: int) { x := n + 1; }")
    assert types_of("program p(n: int) reliability 0.99 { x := n; }")["failed"] == "bool"


def test_probability_and_causal_specifications():
    assert types_of("program p() ensures P(x > 0 | b) / P(x > 0 | !b) >= 0.8 { b ~ bern(0.5); x ~ gauss(0, 1); }") == {
        "b": "bool",
        "x": "real",
    }
    assert types_of(
        "program p() ensures fairness x > 0 given b when (c) >= 0.8 { b ~ bern(0.5); c ~ bern(0.5); x ~ gauss(0, 1); }"
    ) == {"b": "bool", "c": "bool", "x": "real"}
    assert types_of("program p(s: int, a: real) ensures independent(d, s in {0, 1}) { d := a > 3; }") == {
        "s": "int",
        "a": "real",
        "d": "bool",
    }


def test_program_types_api():
    prog = parse("program p(a: real[], n: int) { b[0] := true; x := n; }").programs[0]
    t = check_program(prog)
    assert t.params == {"a": A.array_of(A.REAL), "n": A.INT}
    assert t.locals == {"b": A.array_of(A.BOOL), "x": A.INT}
    assert t.arrays == {"a": A.REAL, "b": A.BOOL}
    assert t.type_of(parse_expr("a[n] + x")) == A.REAL
    assert t.type_of(parse_expr("forall j in 0..n: b[j]")) == A.BOOL
    assert t.type_of(parse_expr("x +. 1")) == A.INT
    assert t.type_of(parse_expr("P(b[0])")) == A.REAL
    assert t.sample_type(parse_expr("unif({1, 2} * {true})")) == A.tuple_of(A.INT, A.BOOL)
    dist = parse("program q() { z ~ dlap(0, 2); }").programs[0].body.stmts[0].dist
    assert t.sample_type(dist) == A.INT


def test_type_algebra():
    assert fits(A.INT, A.REAL) and not fits(A.REAL, A.INT) and not fits(A.BOOL, A.INT)
    assert join(A.tuple_of(A.INT, A.BOOL), A.tuple_of(A.REAL, A.BOOL)) == A.tuple_of(A.REAL, A.BOOL)
    assert join(A.BOOL, A.INT) is None


# ----------------------------------------------------------------------------- rejected, with positions

ERRORS = [
    # (source, line, col, message fragment)
    ("program p(n: int) {\n  n := 1;\n}", 2, 3, "cannot assign to parameter 'n'"),
    ("program p(a: int[]) { a[0] := 1; }", 1, 23, "cannot assign to parameter 'a'"),
    ("program p() { x := y + 1; }", 1, 20, "unknown variable 'y'"),
    ("program p() {\n  x := true;\n  x := 1;\n}", 3, 3, "a variable has one type"),
    ("program p() { var x: int; x := 0.5; }", 1, 32, "declared int"),
    ("program p() { x := 0; x := 0.5; a[x] := 1; }", 1, 35, "array index must be an int"),
    ("program p(n: int) { for i in 0..n { i := 2; } }", 1, 37, "read-only"),
    ("program p() { x ~ foo(1); }", 1, 19, "unknown distribution 'foo' (known: bern, unif"),
    ("program p() { x ~ abs(1); }", 1, 19, "abs is a function"),
    ("program p() { x := foo(1); }", 1, 20, "unknown function 'foo' (known: abs, min"),
    ("program p() { x := lap(1, 2); }", 1, 20, "can only be sampled"),
    ("program p() requires x > 0 { x := 1; }", 1, 22, "may only mention parameters"),
    ("program p() ensures P(P(x > 0) > 0) >= 0.5 { x ~ gauss(0, 1); }", 1, 23, "cannot be nested inside P"),
    ("program p(n: int) requires P(n > 0) > 0 { skip; }", 1, 28, "may only be used in 'ensures'"),
    ("program p(n: int) { x := sum(j in 0..n: j); }", 1, 26, "only be used in specifications"),
    ("program p(n: int) { assume(forall j in 0..n: j > 0); }", 1, 28, "only be used in specifications"),
    ("program p(n: int) { x := P(n > 0); }", 1, 26, "may only be used in 'ensures'"),
    ("program p() { x ~ dlap(0.5, 1.5); }", 1, 24, "first argument of dlap must be an int"),
    ("program p() { x ~ unif(0, 1.5); }", 1, 27, "bounds of unif(lo, hi) must be ints"),
    ("program p() { x ~ bern(0.5, 1); }", 1, 19, "bern takes 1 argument"),
    ("program p() { x ~ step([(0, 1)]); }", 1, 25, "a bin of step is a triple"),
    ("program p(n: int) { x := n +. 1; }", 1, 26, "needs a 'rate' clause"),
    ("program p() rate 0.01 { failed := true; }", 1, 25, "'failed' is maintained"),
    ("program p(n: int) { x := n div 2.0; }", 1, 32, "use '/' for real division"),
    ("program p(a: real[]) { x := a; }", 1, 29, "must be indexed"),
    ("program p(a: real[]) { if (a[0]) { skip; } }", 1, 28, "condition of if must be a bool"),
    ("program p() { x := _ + 1; }", 1, 20, "density polynomial"),
    ("program p(n: int, n: real) { skip; }", 1, 19, "duplicate parameter 'n'"),
    ("program p() { x := 1 + true; }", 1, 24, "right operand of '+' must be a number"),
    ("program p() { x := !3; }", 1, 21, "operand of '!' must be a bool"),
    ("program p() { x := true ? 1 : false; }", 1, 31, "branches of '?:' have different types"),
    ("program p() { x := (1, 2) == true; }", 1, 30, "cannot compare"),
    ("program p() { x := fst(3); }", 1, 24, "fst needs a pair"),
    ("program p() { x := min(1); }", 1, 20, "min takes 2 arguments"),
    ("program p() { (x, y) := 3; }", 1, 25, "2 targets need a 2-tuple"),
    ("program p() { x := {1, 2}; }", 1, 20, "can only be the argument of unif"),
    ("program p() { x ~ unif({}); }", 1, 24, "non-empty set"),
    ("program p() ensures x { x := 1; }", 1, 21, "'ensures' clause must be a bool"),
    ("program p() fails true { skip; }", 1, 19, "'fails' clause must be a number"),
    ("program p(x: int) ensures independent(y, z) { y := x; }", 1, 27, "'z' must be a parameter"),
    ("program p() { while (true) { x := y; y := x; } }", 1, 30, "cannot tell the type of 'x'"),
    ("program p() { x := 1; var x: real; }", 1, 23, "must come before its first assignment"),
    ("program p(x: int) { var x: real; }", 1, 21, "is a parameter"),
    ("program p() { for i in 0..2.5 { skip; } }", 1, 27, "upper end of a for range must be an int"),
    ("program p() { i := 0.5; for i in 0..2 { skip; } }", 1, 25, "for variable 'i' must be an int"),
    ("program p() ensures forall j in 0..1.5: true { skip; }", 1, 36, "upper end of a range"),
]


@pytest.mark.parametrize("source,line,col,fragment", ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_type_errors_are_located(source, line, col, fragment):
    err = error_of(source)
    assert (err.line, err.col) == (line, col), str(err)
    assert fragment in err.message
    text = str(err)
    assert text.startswith(f"t.prob:{line}:{col}: error: ")
    src_line, caret = text.splitlines()[1:3]
    assert src_line.strip() == source.split("\n")[line - 1].strip()
    assert caret.index("^") - 4 == col - 1


def test_unsupported_constructs_use_their_own_class():
    assert isinstance(error_of("program p() { x := lap(1, 2); }"), UnsupportedError)
    assert isinstance(error_of("program p() ensures P(P(true) > 0) > 0 { skip; }"), UnsupportedError)


def test_check_program_without_source_still_locates():
    prog = parse("program p() {\n x := y; }").programs[0]
    with pytest.raises(TypeCheckError) as info:
        check_program(prog, "f.prob")
    assert str(info.value) == "f.prob:2:7: error: unknown variable 'y'"
