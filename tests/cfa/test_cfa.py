"""The control-flow automaton: shapes of the desugarings and the `tamp cfa` command."""

import json

import pytest

from lang import ast as A
from lang.errors import TampError
from lang.parser import parse
from tamp.cfa import FAILED, build_cfa
from tamp.cli import main


def cfa_of(src, **kw):
    return build_cfa(parse(src).programs[0], source=src, **kw)


def stmts(c, kind):
    return [d["stmt"] for _u, _v, _k, d in c.edges() if isinstance(d["stmt"], kind)]


def test_if_gives_two_assume_edges_and_one_exit():
    c = cfa_of("program p(q: real) { x ~ bern(0.5); if (x) { y := 1; } else { y := 2; } }")
    assert c.is_acyclic() and not c.loop_heads
    conds = stmts(c, A.Assume)
    assert A.Var("x") in [s.cond for s in conds] and A.Unary("!", A.Var("x")) in [s.cond for s in conds]
    assert c.graph.out_degree(c.exit) == 0 and c.graph.in_degree(c.entry) == 0
    # every edge carries exactly one basic statement with one target (or a tuple sampling)
    for s in stmts(c, A.Assign):
        assert len(s.targets) == 1


def test_while_is_a_cycle_through_a_marked_head():
    c = cfa_of("program p(n: int) { i := 0; while (i < n) { a ~ lap(0, 1); i := i + 1; } }")
    assert not c.is_acyclic()
    (h,) = c.loop_heads
    backs = [(u, v) for u, v, _k, d in c.edges() if d.get("back")]
    assert backs and all(v == h for _u, v in backs)


def test_for_is_a_counted_while():
    c = cfa_of("program p(n: int) { s := 0; for i in 0..n { s := s + i; } }")
    assert len(c.loop_heads) == 1
    conds = [s.cond for s in stmts(c, A.Assume)]
    assert A.Binary("<", A.Var("i"), A.Var("n")) in conds
    assert A.Assign((A.Var("i"),), A.Binary("+", A.Var("i"), A.num(1))) in stmts(c, A.Assign)
    c2 = cfa_of("program p(n: int) { s := 0; for i in 0..=n { s := s + i; } }")
    assert A.Binary("<=", A.Var("i"), A.Var("n")) in [s.cond for s in stmts(c2, A.Assume)]


def test_tuple_assignment_is_simultaneous_via_temporaries():
    c = cfa_of("program p() { u := 0; v := 1; (u, v) := (v, u); }")
    assigns = stmts(c, A.Assign)
    temps = [s for s in assigns if s.targets[0].name.startswith("$t")]
    assert len(temps) == 2 and temps[0].value == A.Var("v") and temps[1].value == A.Var("u")
    assert c.types["$t1"] == A.INT


def test_tuple_sampling_is_one_edge_with_two_targets():
    c = cfa_of("program p() { (r1, r2) ~ unif({0, 1} * {0, 1}); }")
    (s,) = stmts(c, A.Sample)
    assert len(s.targets) == 2


def test_unreliable_operators_and_reliability_sugar():
    src = "program p(a: int, b: int, r: real) rate r reliability 0.99 { x := a +. b; y := x *. x; }"
    c = cfa_of(src)
    flips = [s for s in stmts(c, A.Sample) if s.dist.func == "bern"]
    assert len(flips) == 2 and all(s.dist.args[0] == A.Var("r") for s in flips)
    assigns = stmts(c, A.Assign)
    assert assigns[0] == A.Assign((A.Var(FAILED),), A.BoolLit(False))
    assert not any(isinstance(n, A.Binary) and n.op.endswith(".") for s in assigns for n in A.walk(s.value))
    assert c.ensures[-1] == A.Unary("!", A.Var(FAILED))
    assert c.bound == A.Binary("-", A.num(1), parse("program q() reliability 0.99 { }").programs[0].reliability)


def test_bound_argument_replaces_fails():
    c = cfa_of("program p(q: real) fails q { }", bound=A.num(0))
    assert c.bound == A.num(0)
    assert cfa_of("program p(q: real) { }").bound == A.num(0)


def test_text_and_json_and_dot():
    c = cfa_of("program p(q: real) ensures x fails q { x ~ bern(q); }")
    t = c.to_text()
    assert "x ~ bern(q)" in t and "entry" in t and "line 1" in t
    j = json.loads(c.to_json_text())
    assert j["edges"][0]["kind"] == "sample"
    assert c.to_dot().startswith("digraph")


def test_command_text_json_dot(tmp_path, capsys):
    f = tmp_path / "a.prob"
    f.write_text("program p(q: real) { x ~ bern(q); if (x) { y := 1; } }\nprogram r() { z := 1; }\n")
    assert main(["cfa", str(f), "--program", "p"]) == 0
    out = capsys.readouterr().out
    assert "CFA of p" in out and "assume(x)" in out and "CFA of r" not in out
    assert main(["cfa", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["programs"]] == ["p", "r"]
    out_dir = tmp_path / "dots"
    assert main(["cfa", str(f), "--dot", str(out_dir)]) == 0
    assert (out_dir / "p.dot").read_text().startswith("digraph")
    assert "dot" in capsys.readouterr().out


def test_command_bad_input_is_located(tmp_path, capsys):
    f = tmp_path / "b.prob"
    f.write_text("program p() {\n  x := y +. 1;\n}\n")
    assert main(["cfa", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:2:" in err and "Traceback" not in err


def test_unreliable_without_rate_rejected_by_cfa_itself():
    prog = parse("program p(y: int) { x := y +. 1; }").programs[0]
    with pytest.raises(TampError) as ei:
        build_cfa(prog, source="program p(y: int) { x := y +. 1; }")
    assert "rate" in str(ei.value)
