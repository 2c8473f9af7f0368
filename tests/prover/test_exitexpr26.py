"""Exit flags set by an expression of the iteration's draws (session 26, exitexpr26): the stop
event read off the body, its chance over independent draws, and the proposals ``exp(-q·left)``
and ``exp(log β + q·c)`` of :mod:`tamp.prover.expectation.exits` — proved, certified, tampered
certificates rejected, false siblings left unproved."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate, swap_in_cores
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse_expr, parse_file
from tamp.prover.expectation.exits import _draws, event_chances, exit_cores, exit_flags, expanded, stop_event
from tamp.prover.expectation.prove import _fold
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "exitexpr26"
TARGET = BENCHMARKS / "prover4" / "dev" / "blind12" / "ransac" / "iterations_formula.prob"
NEW = [
    "pair_sample_budget",
    "screened_confirm",
    "threshold_budget",
    "majority_budget",
    "negated_fault",
    "either_attempts",
]


def _loop(path):
    prog = parse_file(str(path)).programs[0]
    (loop,) = [n for n in A.walk(prog.body) if isinstance(n, A.While)]
    types = {p.name: p.type for p in prog.params}
    for n in A.walk(prog.body):
        if isinstance(n, A.Assign) and isinstance(n.value, A.BoolLit):
            types[n.targets[0].name] = A.BOOL
    return prog, loop, types


def _chances(path):
    prog, loop, types = _loop(path)
    fixed = {p.name for p in prog.params}
    ((flag, stop),) = exit_flags(loop.cond, loop.body, types)
    ev = stop_event(loop.body, flag, stop)
    assert ev is not None
    return show_expr(ev), [
        show_expr(q) for q in event_chances(_fold(ev), _draws(loop.body, fixed), fixed, types, _fold)
    ]


def test_a_flag_set_by_an_expression_is_an_exit_flag():
    _prog, loop, types = _loop(TARGET)
    assert exit_flags(loop.cond, loop.body, types) == [("good", True)]


def test_a_flag_set_only_to_its_running_value_is_no_exit():
    prog = parse_file_text(
        "program p(m: int) requires m >= 1 ensures true fails 0"
        " { go := true; i := 0; while (i < m && go) { go := true; i := i + 1; } }"
    )
    (loop,) = [n for n in A.walk(prog.body) if isinstance(n, A.While)]
    assert exit_flags(loop.cond, loop.body, {"go": A.BOOL}) == []


def parse_file_text(text):
    from lang.loader import load

    return load(text).programs[0]


def test_the_stop_event_and_its_chance():
    assert _chances(TARGET) == ("a && b", ["w * w"])
    assert _chances(MINE / "either_attempts.prob") == ("u || v", ["a + b - a * b", "1 - (1 - a) * (1 - b)"])
    assert _chances(MINE / "negated_fault.prob") == ("!fault", ["1 - e"])
    assert _chances(MINE / "screened_confirm.prob") == ("pass ? conf : false", ["c * s"])  # done := conf in if (pass)
    _ev, qs = _chances(MINE / "majority_of_three.prob")  # a count of three coins, votes >= 2
    assert qs == ["3 * w * w - 2 * w * w * w"]


def test_no_chance_for_an_event_of_the_state_or_of_one_draw_tested_twice():
    fixed, types = {"n", "c", "p"}, {"n": A.INT, "c": A.INT, "p": A.REAL}
    body = parse_file_text(
        "program q(n: int, c: int, p: real) requires n >= 2 ensures true fails 0 { x ~ unif(1, n); a ~ bern(p); }"
    ).body
    draws = _draws(body, fixed)
    assert event_chances(parse_expr("x > 1 && x < c"), draws, fixed, types, _fold) == []  # dependent tests
    assert event_chances(parse_expr("a && i < c"), draws, fixed, types, _fold) == []  # reads the counter i
    assert [show_expr(q) for q in event_chances(parse_expr("!a"), draws, fixed, types, _fold)] == ["1 - p"]


def test_expanded_collects_like_monomials():
    assert show_expr(expanded(parse_expr("w * w * w + 3 * (w * w * (1 - w))"))) == "3 * w * w - 2 * w * w * w"
    assert show_expr(expanded(parse_expr("1 - (1 - a) * (1 - b)"))) == "a + b - a * b"
    assert show_expr(expanded(parse_expr("(1 - a) - (1 - a)"))) == "0"


def test_the_sized_bound_is_proposed_only_for_a_requires_with_its_log():
    _prog, loop, types = _loop(TARGET)
    args = (loop, parse_expr("!good ? 1 : 0"), parse_expr("p"), {"k", "w", "p"}, types, _fold)
    plain = [show_expr(c) for c in exit_cores(*args)]
    sized = [show_expr(c) for c in exit_cores(*args, sized=True)]
    assert "exp(-(w * w) * (k - i))" in plain
    assert not any("log(p)" in c for c in plain)
    assert "exp(log(p) + w * w * i)" in sized


@pytest.mark.parametrize("path", [TARGET] + [MINE / f"{n}.prob" for n in NEW], ids=["iterations_formula"] + NEW)
def test_proved_and_certified(path, tmp_path, capsys):
    cert = proved_certificate(path)  # asserts the verdict proved
    assert cert["expectation"][0]["loops"], "an expectation proof with a loop core"
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "path,old,new",
    [
        (TARGET, "w * w", "w"),  # a larger per-iteration chance: the induction breaks
        (TARGET, "log(p)", "log(p / 2)"),  # half the bound: the last step breaks
        (MINE / "either_attempts.prob", "a * b", "0"),  # a round fails w.p. (1-a)(1-b), not 1-a-b
    ],
    ids=["chance", "budget", "or_chance"],
)
def test_a_tampered_core_is_rejected(path, old, new, tmp_path, capsys):
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    assert swap_in_cores(cert, parse_expr(old), parse_expr(new))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.parametrize(
    "name",
    [
        "iterations_formula",
        "pair_sample_budget",
        "screened_confirm",
        "threshold_budget",
        "negated_fault",
        "either_attempts",
        pytest.param("majority_budget", marks=pytest.mark.slow),
        pytest.param("majority_of_three", marks=pytest.mark.slow),
        pytest.param("either_probe", marks=pytest.mark.slow),
        pytest.param("threshold_draw", marks=pytest.mark.slow),
    ],
)
def test_false_siblings_stay_unproved(name):
    path = TARGET.with_name(f"{name}_false.prob") if name == "iterations_formula" else MINE / f"{name}_false.prob"
    assert _prove(path, timeout=60).verdict != "proved"
