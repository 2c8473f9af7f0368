"""lang/serialize.py: lossless JSON round trips of ASTs, and strict reading of untrusted JSON."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from locations import REPO

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json, from_json, stmt_from_json, to_json, type_from_json

ROOT = REPO
FILES = sorted((ROOT / "benchmarks").glob("*/*.prob"))


def _round(x):
    return from_json(json.loads(json.dumps(to_json(x))), type(x) if not isinstance(x, A.Expr) else A.Expr)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_benchmark_round_trips(path):
    from lang.parser import parse_file

    for prog in parse_file(str(path)).programs:
        assert from_json(json.loads(json.dumps(to_json(prog.body))), A.Block) == prog.body
        for e in prog.requires + prog.ensures + tuple(x for x in (prog.fails, prog.rate, prog.reliability) if x):
            assert _round(e) == e
        for p in prog.params:
            assert type_from_json(to_json(p.type)) == p.type


def test_cfa_statements_with_internal_names_round_trip():
    from lang.parser import parse
    from tamp.cfa import build_cfa

    prog = parse("program t(a: int) ensures x == a fails 0 { (x, y) := (a, 1); }").programs[0]
    cfa = build_cfa(prog)
    stmts = [d["stmt"] for _u, _v, _k, d in cfa.edges()]
    assert any(isinstance(s, A.Assign) and s.targets[0].name.startswith("$") for s in stmts)
    for s in stmts:
        assert stmt_from_json(json.loads(json.dumps(to_json(s)))) == s


def test_exact_numbers():
    e = A.Binary("+", A.Num(Fraction(1, 10), False), A.Num(Fraction(3), True))
    data = to_json(e)
    assert data["left"]["value"] == "1/10" and data["right"]["is_int"] is True
    assert expr_from_json(data) == e
    assert expr_from_json(data) != A.Binary("+", A.Num(Fraction(1, 10), False), A.Num(Fraction(3), False))


def test_positions_optional():
    from lang.parser import parse_expr

    e = parse_expr("x + 1")
    assert "pos" not in json.dumps(to_json(e))
    assert "pos" in json.dumps(to_json(e, with_pos=True))
    assert from_json(to_json(e, with_pos=True), A.Expr).pos is not None


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"node": "Nope"}, "unknown node kind"),
        ({"node": "Var"}, "needs the field 'name'"),
        ({"node": "Var", "name": "x", "extra": 1}, "unexpected field"),
        ({"node": "Var", "name": 3}, "expected a string"),
        ({"node": "Num", "value": 0.5, "is_int": False}, "rational"),
        ({"node": "Num", "value": "1/0", "is_int": False}, "rational"),
        ({"node": "Num", "value": "9" * 5000, "is_int": True}, "rational"),
        ({"node": "BoolLit", "value": 1}, "true or false"),
        ({"node": "Binary", "op": "+", "left": {"node": "Skip"}, "right": {"node": "Var", "name": "x"}}, "not allowed"),
        ({"node": "Call", "func": "abs", "args": {"node": "Var", "name": "x"}}, "expected a list"),
        ([1, 2], "syntax node"),
        ("x", "syntax node"),
    ],
)
def test_strict_reading(data, needle):
    with pytest.raises(SerializeError) as exc:
        expr_from_json(data)
    assert needle in str(exc.value)


def test_statement_is_not_an_expression():
    with pytest.raises(SerializeError):
        expr_from_json({"node": "Skip"})
    with pytest.raises(SerializeError):
        stmt_from_json({"node": "Var", "name": "x"})


def test_deep_nesting_is_an_error_not_a_crash():
    data = {"node": "Var", "name": "x"}
    for _ in range(100000):
        data = {"node": "Unary", "op": "-", "operand": data}
    with pytest.raises(SerializeError):
        expr_from_json(data)


def test_types():
    for t in (A.BOOL, A.INT, A.REAL, A.array_of(A.REAL), A.tuple_of(A.INT, A.BOOL)):
        assert type_from_json(json.loads(json.dumps(to_json(t)))) == t
    with pytest.raises(SerializeError):
        type_from_json({"type": "array", "elem": []})
    with pytest.raises(SerializeError):
        type_from_json({"type": "matrix", "elem": []})
