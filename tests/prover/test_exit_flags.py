"""Loops that stop early (session 25, exits25): invariant expectations read piecewise on the
exit flag, ``F[flag := stop] + T`` (:mod:`tamp.prover.expectation.exits`) — proved, certified,
tampered certificates rejected, false siblings (a bound too small, the wrong exit count) left
unproved."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import Swap, check_proof, proved_certificate_fresh
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse_expr, parse_file
from lang.serialize import from_json, to_json
from tamp.prover.expectation.exits import _power_chain, _thresholds, exit_cores, exit_flags
from tamp.prover.expectation.prove import _fold
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "exits25"
FIXED = BENCHMARKS / "prover4" / "dev" / "blind11" / "multipletesting" / "fixed_sequence.prob"
NEW = ["fixed_sequence_done", "two_rejections", "retry_attempts", "two_stage_sequence", "pvalue_two_rejections"]


def _loop(path):
    prog = parse_file(str(path)).programs[0]
    (loop,) = [n for n in A.walk(prog.body) if isinstance(n, A.While)]
    types = {p.name: p.type for p in prog.params}
    for n in A.walk(prog.body):
        if isinstance(n, A.Assign) and isinstance(n.value, A.BoolLit):
            types[n.targets[0].name] = A.BOOL
    return prog, loop, types


def test_the_exit_flag_and_its_stop_value_are_read_off_the_guard():
    _prog, loop, types = _loop(FIXED)
    assert exit_flags(loop.cond, loop.body, types) == [("go", False)]
    _prog, loop, types = _loop(MINE / "fixed_sequence_done.prob")
    assert exit_flags(loop.cond, loop.body, types) == [("stop", True)]


def test_a_flag_the_body_never_sets_to_its_stop_value_is_no_exit():
    prog = parse_file_text(
        "program p(m: int) requires m >= 1 ensures true fails 0"
        " { go := true; i := 0; while (i < m && go) { go := true; i := i + 1; } }"
    )
    (loop,) = [n for n in A.walk(prog.body) if isinstance(n, A.While)]
    assert exit_flags(loop.cond, loop.body, {"go": A.BOOL}) == []


def parse_file_text(text):
    from lang.loader import load

    return load(text).programs[0]


def test_the_first_core_is_the_settled_failure_plus_the_bound():
    prog, loop, types = _loop(FIXED)
    f = parse_expr("!(v == 0) ? 1 : 0")
    cores = [show_expr(c) for c in exit_cores(loop, f, parse_expr("a"), {"m", "a"}, types, _fold)]
    assert cores[0] == "!(v == 0) ? 1 : 0"
    assert cores[1] == "(!(v == 0) ? 1 : 0) + a"


def test_a_threshold_of_a_count_gives_a_chain_of_powers():
    assert _thresholds(parse_expr("!(v <= 1) ? 1 : 0"), {"v"}) == [("v", 2)]
    assert _thresholds(parse_expr("3 <= c ? 1 : 0"), {"c"}) == [("c", 3)]
    assert _thresholds(parse_expr("v >= 9 ? 1 : 0"), {"v"}) == []  # past MAX_LEVEL
    assert show_expr(_power_chain("v", 2, parse_expr("a"))) == "v >= 2 ? 0 : v == 1 ? a : a * a"
    assert show_expr(_power_chain("t", 3, parse_expr("q"), 1)) == "t >= 3 ? 0 : t == 2 ? 1 : t == 1 ? q : q * q"


@pytest.mark.parametrize("path", [FIXED] + [MINE / f"{n}.prob" for n in NEW], ids=["fixed_sequence"] + NEW)
def test_proved_and_certified(path, tmp_path, capsys):
    cert = proved_certificate_fresh(path, tmp_path)  # asserts "proved", in a process of its own
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "path,old,new",
    [
        (FIXED, "a", "a / 2"),  # a smaller running part: one more test rejects w.p. a
        (FIXED, "v == 0", "v == 1"),  # the wrong settled failure
        (MINE / "two_rejections.prob", "a * a", "a * a * a"),  # the wrong exit count
        (MINE / "retry_attempts.prob", "(1 - p) * (1 - p)", "(1 - p) * (1 - p) * (1 - p)"),
    ],
    ids=["level", "settled", "two_rejections_power", "retry_power"],
)
def test_a_tampered_core_is_rejected(path, old, new, tmp_path, capsys):
    cert = proved_certificate_fresh(path, tmp_path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    changed_any = False
    for loop in cert["expectation"][0]["loops"]:
        core = from_json(loop["core"])
        changed = Swap(parse_expr(old), parse_expr(new)).walk(core)
        changed_any |= show_expr(changed) != show_expr(core)
        loop["core"] = to_json(changed)
    assert changed_any
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.parametrize(
    "name",
    [
        "fixed_sequence_done",
        "two_rejections",
        "retry_attempts",
        "two_stage_sequence",
        "pvalue_sequence",
        "verified_retry",
        pytest.param("pvalue_two_rejections", marks=pytest.mark.slow),  # runs to the 60 s timeout
    ],
)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob", timeout=60).verdict != "proved"


def test_the_blind_false_sibling_stays_unproved():
    assert _prove(FIXED.with_name("fixed_sequence_false.prob"), timeout=60).verdict != "proved"
