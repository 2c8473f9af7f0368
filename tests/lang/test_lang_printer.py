"""Printer: parse(print(ast)) == ast, for hand-picked and for random well-formed ASTs."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lang import ast as A
from lang.parser import KEYWORDS, parse, parse_expr
from lang.printer import format_number, print_expr, print_file, print_program, print_stmt

# ----------------------------------------------------------------------------- hand-picked

CANONICAL = [  # already printed the way the printer prints them
    "a - (b - c)",
    "a - b - c",
    "- -x",
    "!(a == b)",
    "a ==> b ==> c",
    "(a ==> b) ==> c",
    "a ? b : c ? d : e",
    "(a ? b : c) ? d : e",
    "(forall j in 0..n: a[j] > 0) && b",
    "x + -1",
    "(a < b) == (c < d)",
    "P(x > 0 | y) / P(x > 0 | !y) >= 0.8",
    "sum(j in 0..=n: q[j]) <= 3",
    "1e-7 * 0.10",
    "a[i][j]",
    "fst((1, (2, 3)))",
    "-(a * b)",
    "-a * b",
    "a div (b mod c)",
    "x +. y *. z",
    "!!x",
    "independent(x, n in {1, 2})",
    "a <==> b <==> c",
    "a <==> (b <==> c)",
    "(a || b) && c",
    "a || b && c",
    "-a[2]",
    "exists k in 0..n: forall j in k..=n: a[j] <= a[k]",
    "(x, y) == (1, 2.5)",
]


def test_canonical_expressions_print_as_written():
    for text in CANONICAL:
        assert print_expr(parse_expr(text)) == text


def test_extra_parentheses_disappear():
    assert print_expr(parse_expr("((a) + (b * c))")) == "a + b * c"
    assert print_expr(parse_expr("(-(x))")) == "-x"


def test_numbers_print_exactly():
    assert format_number(Fraction(5, 8), False) == "0.625"
    assert format_number(Fraction(2), False) == "2.0"
    assert format_number(Fraction(2), True) == "2"
    assert format_number(Fraction(1, 3), False) == "(1.0 / 3)"
    assert format_number(Fraction(1, 10**30), False) == "0." + "0" * 29 + "1"
    assert print_expr(A.Num(Fraction(7, 2))) == "3.5"
    assert print_expr(A.Binary("*", A.num(2), A.Num(Fraction(1, 3)))) == "2 * (1.0 / 3)"
    assert print_expr(parse_expr("0.50")) == "0.50"  # source text kept


def test_statements_and_programs():
    src = parse("""program p(a: real[], n: int) rate 0.01 requires n > 0 ensures fairness b given (n < 1) when (c) >= 0.8
      fails 0.1 reliability 0.9 {
      var x: real; (u, v) ~ unif({1, 2} * {3}); if (b) { skip; } else if (c) { assume(x > 0); } else { x := 1; }
      for i in 0..=n { while (x < 3) { x := x +. 1; } } }""")
    text = print_file(src)
    assert parse(text) == src
    assert "} else if (c) {" in text
    assert "ensures fairness b given n < 1 when c >= 0.8" in text
    assert print_stmt(src.programs[0].body.stmts[1]) == "(u, v) ~ unif({1, 2} * {3});"
    assert print_program(src.programs[0]) == text


# ----------------------------------------------------------------------------- random ASTs

NAMES = st.sampled_from(["x", "y", "n", "a", "b", "q_1", "Pr", "index", "forallx", "_t"])
FUNCS = st.sampled_from(["abs", "min", "exp", "lap", "foo"])
BINOPS = st.sampled_from(
    ["+", "-", "*", "/", "div", "mod", "+.", "-.", "*.", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "==>", "<==>"]
)


@st.composite
def numbers(draw):
    if draw(st.booleans()):
        return A.Num(Fraction(draw(st.integers(0, 10**30))), True)
    mant = draw(st.integers(0, 10**12))
    return A.Num(Fraction(mant, 10 ** draw(st.integers(0, 8))), False)


def leaves():
    return st.one_of(numbers(), st.builds(A.BoolLit, st.booleans()), st.builds(A.Var, NAMES))


def tuples_of(children, lo, hi):
    return st.lists(children, min_size=lo, max_size=hi).map(tuple)


def extend(children):
    ranges = st.tuples(NAMES, children, children, st.booleans())
    return st.one_of(
        st.builds(A.Index, children, children),
        st.builds(A.Unary, st.sampled_from(["-", "!"]), children),
        st.builds(A.Binary, BINOPS, children, children),
        st.builds(A.Cond, children, children, children),
        st.builds(A.Call, FUNCS, tuples_of(children, 0, 3)),
        st.builds(A.TupleExpr, tuples_of(children, 2, 3)),
        st.builds(A.SetLit, tuples_of(children, 0, 3)),
        st.builds(A.ListLit, tuples_of(children, 0, 2)),
        st.builds(
            lambda k, r, body: A.Quant(k, r[0], r[1], r[2], r[3], body),
            st.sampled_from(["forall", "exists"]),
            ranges,
            children,
        ),
        st.builds(lambda r, body: A.Sum(r[0], r[1], r[2], r[3], body), ranges, children),
        st.builds(A.Prob, children, st.none() | children),
        st.builds(A.Independent, children, NAMES, st.none() | tuples_of(children, 0, 2)),
    )


EXPRS = st.recursive(leaves(), extend, max_leaves=12)


def lvalues():
    return st.one_of(st.builds(A.Var, NAMES), st.builds(A.Index, st.builds(A.Var, NAMES), EXPRS))


def blocks(stmts):
    return st.builds(A.Block, tuples_of(stmts, 0, 3))


def statements():
    simple = st.one_of(
        st.builds(A.Assign, tuples_of(lvalues(), 1, 1) | tuples_of(lvalues(), 2, 3), EXPRS),
        st.builds(A.Sample, tuples_of(lvalues(), 1, 2), st.builds(A.Call, FUNCS, tuples_of(EXPRS, 0, 2))),
        st.builds(A.Assume, EXPRS),
        st.builds(A.Skip),
        st.builds(A.VarDecl, NAMES, st.sampled_from([A.BOOL, A.INT, A.REAL, A.array_of(A.REAL)])),
    )
    return st.recursive(
        simple,
        lambda s: st.one_of(
            st.builds(A.If, EXPRS, blocks(s), st.none() | blocks(s)),
            st.builds(A.While, EXPRS, blocks(s)),
            st.builds(A.For, NAMES, EXPRS, EXPRS, st.booleans(), blocks(s)),
        ),
        max_leaves=6,
    )


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(EXPRS)
def test_random_expressions_round_trip(e):
    text = print_expr(e)
    assert parse_expr(text) == e, text


@FAST
@given(tuples_of(statements(), 0, 4), st.lists(EXPRS, max_size=2), st.none() | EXPRS)
def test_random_programs_round_trip(stmts, ensures, fails):
    prog = A.Program(
        "p", (A.Param("n", A.INT), A.Param("v", A.array_of(A.BOOL))), A.Block(stmts), (), tuple(ensures), fails
    )
    src = A.SourceFile((prog,))
    text = print_file(src)
    assert parse(text) == src, text


@FAST
@given(
    st.sampled_from(["fairness", "parity"]),
    EXPRS,
    EXPRS,
    st.none() | EXPRS,
    st.sampled_from(["<", "<=", ">", ">="]),
    EXPRS,
)
def test_random_fairness_clauses_round_trip(kind, target, group, qual, op, threshold):
    prog = A.Program("p", (), A.Block(()), (), (A.Fairness(kind, target, group, qual, op, threshold),))
    text = print_program(prog)
    assert parse(text).programs[0] == prog, text


def test_name_pool_avoids_keywords():
    assert not {"x", "y", "n", "a", "b", "q_1", "Pr", "index", "forallx", "_t"} & KEYWORDS
