"""Rows composed by any engine, then a union; moments given an earlier draw (session 29, rows29).

- A flag loop whose rows read draws made before it (set balancing's shared sign vector): the row
  is proved as the program that makes those draws itself (:mod:`tamp.cfa.shared_rows`, the draw
  vector fused into the loop that reads it), by Hoeffding at the claim's own margin with
  ``sum-cap`` (a row of 0/1 or [0, 1] weights has ``Σ w² <= m``; a row of zeros has no tail).
- A count of later draws equal to an earlier one: linearity with the earlier draw read as an
  input in its support (:mod:`tamp.cfa.conditioned`): the moments hold given each of its values.

Proved and certified, tampered certificates rejected, false siblings left unproved, and the pure
functions on their own."""

from __future__ import annotations

import copy

import pytest
import z3
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from axioms import concentration as C
from axioms.lemmas import cap_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.parser import parse, parse_expr
from lang.printer import print_stmt
from lang.serialize import to_json
from tamp.cfa import build_cfa
from tamp.cfa.conditioned import conditioned_program, support_obligations
from tamp.cfa.nesting import flag_loop
from tamp.cfa.shared_rows import fuse_draws, shared_iteration_program, unread_dropped
from tamp.core.encode import Encoder
from tamp.prover.concentration.proof import claim_of, post_margins
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "rows29"
SET_BALANCING = BENCHMARKS / "prover4" / "dev" / "blind15" / "discrepancy" / "set_balancing.prob"
MY_BIRTHDAY = BENCHMARKS / "prover4" / "dev" / "blind14" / "birthdays" / "my_birthday_chebyshev.prob"

FAST = ["coin_rows_chebyshev", "dice_match_first", "target_hits_params", "match_first_written", "fresh_sign_rows"]
SLOW = ["shared_weights", "colouring_rows_extra"]


def _program(text: str):
    prog = parse(text, "t.prob").programs[0]
    return prog, build_cfa(prog, None, "t.prob")


ROWS = """
program rows(a: int[], n: int, m: int, t: real)
  requires n >= 0 && m >= 1 && t > 0 && (forall j in 0..n * m: a[j] == 0 || a[j] == 1)
  ensures !bad
  fails 2 * n * exp(-t * t / (2 * m))
{
  for j in 0..m { b[j] ~ unif({-1, 1}); }
  bad := false;
  for i in 0..n {
    s := 0;
    for j in 0..m { s := s + a[i * m + j] * b[j]; }
    if (abs(s) >= t) { bad := true; }
  }
}
"""


# ------------------------------------------------------------------------ pure functions


def test_the_shared_row_makes_the_prefix_draws_inside_the_loop_that_reads_them():
    prog, cfa = _program(ROWS)
    fl = flag_loop(prog, tuple(prog.ensures), cfa.types)
    it = shared_iteration_program(prog, fl, cfa.types, parse_expr("2 * exp(-t * t / (2 * m))"))
    assert it is not None
    assert [p.name for p in it.params][-1] == "i"  # the counter is an input, the signs are not
    loops = [s for s in it.body.stmts if isinstance(s, A.For)]
    assert len(loops) == 1  # the sign loop fused into the row's sum
    assert print_stmt(loops[0].body.stmts[0]).strip() == "b[j] ~ unif({-1, 1});"


def test_no_shared_row_when_the_row_reads_state_the_loop_carries():
    text = ROWS.replace("s := 0;", "s := carry;").replace("bad := false;", "bad := false; carry := 0;")
    text = text.replace("if (abs(s) >= t) { bad := true; }", "if (abs(s) >= t) { bad := true; } carry := s;")
    prog, cfa = _program(text)
    fl = flag_loop(prog, tuple(prog.ensures), cfa.types)
    assert shared_iteration_program(prog, fl, cfa.types, parse_expr("2 * exp(-t * t / (2 * m))")) is None


def test_bookkeeping_the_flag_does_not_read_is_dropped():
    body = (
        parse(
            "program p(t: real) { big := 0; ok := false; s := 1; if (s > big) { big := s; } if (s >= t) { ok := true; } }",
            "t",
        )
        .programs[0]
        .body
    )
    kept = unread_dropped(body, "ok")
    assert "big := s" not in "".join(print_stmt(s) for s in kept.stmts)
    assert len(kept.stmts) == 3  # ok := false; s := 1; the flag's test (big := 0 is dead too)


def _stmts(text: str):
    return tuple(parse(f"program p(n: int, q: int[]) {{ {text} }}", "t").programs[0].body.stmts)


def test_fusion_needs_the_same_range_and_reads_at_the_counter_only():
    fused = fuse_draws(
        _stmts("for j in 0..n { x[j] ~ bern(1/2); } s := 0; for k in 0..n { s := s + q[k] * (x[k] ? 1 : 0); }"),
        frozenset({"n", "q"}),
    )
    assert len(fused) == 2 and isinstance(fused[1], A.For)
    other_range = _stmts("for j in 0..n { x[j] ~ bern(1/2); } s := 0; for k in 1..n { s := s + (x[k] ? 1 : 0); }")
    assert fuse_draws(other_range, frozenset({"n", "q"})) == other_range
    neighbour = _stmts("for j in 0..n { x[j] ~ bern(1/2); } s := 0; for k in 1..n { s := s + (x[k - 1] ? 1 : 0); }")
    assert fuse_draws(neighbour, frozenset({"n", "q"})) == neighbour
    read_between = _stmts(
        "for j in 0..n { x[j] ~ bern(1/2); } s := x[0] ? 1 : 0; for k in 0..n { s := s + (x[k] ? 1 : 0); }"
    )
    assert fuse_draws(read_between, frozenset({"n", "q"})) == read_between


def test_the_leading_uniform_draw_becomes_an_input_in_its_support():
    prog, cfa = _program(MY_BIRTHDAY.read_text())
    got = conditioned_program(prog, cfa.types)
    assert got is not None
    cond, names = got
    assert names == ("mine",)
    assert show_expr(cond.requires[-1]) == "1 <= mine && mine <= d"
    assert [show_expr(f) for _k, _w, f in support_obligations(prog, cfa.types)] == ["1 <= d"]
    # a draw the rest writes again is not conditioned on
    prog2, cfa2 = _program("program p(d: int) requires d >= 1 ensures x < d fails 1 { x ~ unif(1, d); x := x + 1; }")
    assert conditioned_program(prog2, cfa2.types) is None


def test_the_margins_are_read_off_the_claim_either_side():
    prog, cfa = _program(
        "program p(m: int, t: real) requires m >= 1 && t > 0 ensures !(abs(s) >= t) fails 2 * exp(-t * t / (2 * m))"
        " { s := 0; for j in 0..m { y ~ unif({-1, 1}); s := s + y; } }"
    )
    assert [show_expr(u) for u in post_margins(claim_of(prog, cfa))] == ["t"]


def test_sum_cap_bounds_a_row_of_0_1_squares():
    # with sum-cap (and only with it) the solver sees that a row of 0/1 entries has Σ a² <= m
    enc = Encoder({"a": A.Type("array", (A.INT,)), "m": A.INT, "i": A.INT, "n": A.INT})
    env = enc.initial_env()
    hyps = [
        enc.expr(parse_expr(h), env)
        for h in ("m >= 1", "0 <= i && i < n", "forall j in 0..n * m: a[j] == 0 || a[j] == 1")
    ]
    goal = enc.expr(parse_expr("sum(j in 0..m: a[i * m + j] * a[i * m + j]) <= m"), env)
    lemmas = [lem for _n, lem in cap_lemmas(transcendental_apps(goal), enc)]
    assert lemmas
    s = z3.Solver()
    s.set("timeout", 10000)
    s.add(*hyps, *lemmas, z3.Not(goal))
    assert s.check() == z3.unsat
    bare = z3.Solver()
    bare.set("timeout", 10000)
    bare.add(*hyps, z3.Not(goal))
    assert bare.check() != z3.unsat  # the sum is opaque without it


def test_a_zero_width_hoeffding_row_has_no_tail():
    blocks = (C.Block(parse_expr("m"), parse_expr("0")),)
    conds = dict(C.conditions("hoeffding", "both", blocks, parse_expr("t"), parse_expr("f")))
    # K = m·0² = 0 and t > 0: positive and tail hold by the degenerate disjunct
    for name in ("positive", "tail"):
        assert "m * (0 * 0) <= 0 && t > 0" in show_expr(conds[name])


# ------------------------------------------------------------------------ the targets and the claims


def _certified(path, tmp_path, capsys, method=None):
    r = _prove(path, timeout=120)
    assert r.verdict == "proved", r.render_text()
    cert = proved_certificate(path)
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out
    return r, cert


def test_my_birthday_is_proved_given_the_first_draw(tmp_path, capsys):
    r, cert = _certified(MY_BIRTHDAY, tmp_path, capsys)
    assert r.to_json()["method"] == "linearity"
    assert cert["linearity"][0]["conditioned"] == ["mine"]


@pytest.mark.parametrize("name", FAST)
def test_proved_and_certified(name, tmp_path, capsys):
    _certified(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_proved_and_certified_slow(name, tmp_path, capsys):
    _certified(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.slow
def test_set_balancing_is_proved_over_the_shared_signs(tmp_path, capsys):
    r, cert = _certified(SET_BALANCING, tmp_path, capsys)
    prog = cert["nesting"][0]
    assert prog["method"] == "nesting" and prog["shared"] is True
    assert prog["inner"]["caps"] is True
    for tamper in ("shared", "caps", "bound"):
        bad = copy.deepcopy(cert)
        if tamper == "shared":  # the row with the signs as inputs: not what the inner proof proves
            del bad["nesting"][0]["shared"]
        elif tamper == "caps":  # without sum-cap the row's width is not bounded by 4 m
            del bad["nesting"][0]["inner"]["caps"]
        else:  # a smaller per-row bound
            bad["nesting"][0]["per_iteration"] = to_json(parse_expr("exp(-t * t / (2 * m))"))
        code, out = check_proof(bad, SET_BALANCING, tmp_path, capsys)
        assert code != 0, (tamper, out)


def test_a_tampered_conditioning_is_rejected(tmp_path, capsys):
    cert = proved_certificate(MY_BIRTHDAY)
    for tamper in ("drop", "rename", "threshold"):
        bad = copy.deepcopy(cert)
        prog = bad["linearity"][0]
        if tamper == "drop":  # the moments given mine are not the program's moments
            del prog["conditioned"]
        elif tamper == "rename":
            prog["conditioned"] = ["c"]
        else:
            prog["threshold"] = to_json(parse_expr("t / 2"))
        code, out = check_proof(bad, MY_BIRTHDAY, tmp_path, capsys)
        assert code != 0, (tamper, out)


@pytest.mark.parametrize(
    "name", ["coin_rows_chebyshev", "dice_match_first", "target_hits_params", "match_first_written"]
)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob", timeout=60).verdict != "proved"


def test_the_blind_false_sibling_of_my_birthday_stays_unproved():
    assert _prove(MY_BIRTHDAY.with_name("my_birthday_chebyshev_false.prob"), timeout=60).verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fresh_sign_rows", "shared_weights", "colouring_rows_extra"])
def test_false_siblings_stay_unproved_slow(name):
    assert _prove(MINE / f"{name}_false.prob", timeout=60).verdict != "proved"


@pytest.mark.slow
def test_the_blind_false_sibling_of_set_balancing_stays_unproved():
    assert _prove(SET_BALANCING.with_name("set_balancing_false.prob"), timeout=60).verdict != "proved"
