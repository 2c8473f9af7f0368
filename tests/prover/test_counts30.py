"""Counts of hits (session 30, counts30): "no trial hit" written as a counter that only counts up
and is compared with its start (``up == 0``, ``hits < 1``, ``running <= 0``), and "every trial
hit" written as a counter of failures compared with the trial count (``down == L``). The
expected-failure engine proposes capped power cores for them
(:func:`tamp.prover.expectation.powers.capped_power_cores` with the counter's guards,
:func:`tamp.prover.expectation.powers.capped_hit_all_cores`); the per-iteration composition
(nesting) sums them over an outer loop. Proved, certified, tampered certificates rejected, false
siblings left unproved, and the pure functions on their own."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.prover.expectation.powers import _uncomplement, capped_hit_all_cores, capped_power_cores, raised_counters
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "counts30"
TARGET = BENCHMARKS / "prover4" / "dev" / "blind16" / "powergrid" / "substations.prob"
TRUE = ["pump_stations", "radar_sweeps", "mirror_reads", "courier_rounds", "seed_trays", "failover_links"]


def _body(src: str) -> A.Program:
    return parse(src, "t").programs[0]


# ------------------------------------------------------------------------ pure functions


def test_counters_that_only_count_up():
    p = _body(
        "program p(n: int) { for i in 0..n { x ~ bern(1/2); if (x) { a := a + 1; } else { b := b + 2; }"
        " c := c + 1; c := c - 1; d := 1 + d; for k in 0..2 { e := e + 1; } } }"
    )
    body = p.body.stmts[0].body
    # c is also lowered, the loop counter k is not raised by a literal
    assert raised_counters(body) == ["a", "b", "d", "e"]


def test_a_miss_of_a_complemented_coin_is_its_chance():
    assert show_expr(_uncomplement(parse_expr("1 - (1 - p)"))) == "p"
    assert show_expr(_uncomplement(parse_expr("1 - p"))) == "1 - p"
    assert show_expr(_uncomplement(parse_expr("p"))) == "p"


_NONE_HIT = """program p(t: int, f: real) requires t >= 2 && f >= 0 && f <= 1 ensures up != 0 fails f * f {
  up := 0; for j in 0..t { x ~ bern(f); if (!x) { up := up + 1; } } }"""


def test_a_counter_at_its_start_gets_guarded_capped_cores():
    p = _body(_NONE_HIT)
    loop = p.body.stmts[1]
    f = parse_expr("up == 0 ? 1 : 0")
    types = {"t": A.INT, "f": A.REAL, "up": A.INT, "j": A.INT}
    cores = [show_expr(c) for c in capped_power_cores(loop, f, p.fails, ["t", "f"], types, p.body)]
    guarded = (
        "up < 0 ? 1 : (up + 1 == 0 ? 1 : 0) >= 1 ? 1 : (up == 0 ? 1 : 0) * (t - j >= 2 ? f * f : t - j >= 1 ? f : 1)"
    )
    assert guarded in cores
    # without the program (no start of the counter) only the flag's cores
    assert guarded not in [show_expr(c) for c in capped_power_cores(loop, f, p.fails, ["t", "f"], types)]


def test_every_trial_left_must_hit_capped():
    p = _body(
        """program p(L: int, b: real) requires L >= 2 ensures down != L fails b * b {
        down := 0; for l in 0..L { x ~ bern(b); if (x) { down := down + 1; } } }"""
    )
    loop = p.body.stmts[1]
    f = parse_expr("down == L ? 1 : 0")
    types = {"L": A.INT, "b": A.REAL, "down": A.INT, "l": A.INT}
    cores = [show_expr(c) for c in capped_hit_all_cores(p.body, loop, f, p.fails, ["L", "b"], types)]
    assert cores and all(c.startswith("down - 0 <= l - 0 ? ") for c in cores)
    assert any("L - l >= 2 ? b * b" in c for c in cores)
    # a bound that is no power of a chance of the body: nothing proposed
    assert not list(capped_hit_all_cores(p.body, loop, f, parse_expr("b / 2"), ["L", "b"], types))


# ------------------------------------------------------------------------ target and dev claims


def _proved_and_certified(path, tmp_path, capsys):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out
    return r


def test_the_target_is_proved_and_certified(tmp_path, capsys):
    _proved_and_certified(TARGET, tmp_path, capsys)


@pytest.mark.parametrize("name", TRUE)
def test_dev_claims_are_proved_and_certified(name, tmp_path, capsys):
    _proved_and_certified(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("name", TRUE)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.slow
def test_the_targets_false_sibling_stays_unproved():
    assert _prove(TARGET.with_name("substations_false.prob")).verdict != "proved"


# ------------------------------------------------------------------------ tampered certificates


def _swap_inner_core(cert, old, new) -> bool:
    """Replace ``old`` by ``new`` in the inner proof's loop cores of the first nesting proof."""
    from support.certificates import Swap

    from lang.serialize import from_json, to_json

    changed = False
    for loop in cert["nesting"][0]["inner"]["loops"]:
        core = from_json(loop["core"])
        out = Swap(old, new).walk(core)
        changed |= show_expr(out) != show_expr(core)
        loop["core"] = to_json(out)
    return changed


def test_a_core_without_the_counters_guard_is_rejected(tmp_path, capsys):
    # a counter below its start may be raised onto it: the guard `up < 0` is what makes the step hold
    cert = proved_certificate(TARGET)
    assert _swap_inner_core(cert, parse_expr("up < 0"), A.BoolLit(False))
    code, out = check_proof(cert, TARGET, tmp_path, capsys)
    assert code != 0, out


def test_a_larger_per_station_power_is_rejected(tmp_path, capsys):
    from lang.serialize import to_json

    cert = proved_certificate(TARGET)
    cert["nesting"][0]["per_iteration"] = to_json(parse_expr("f * f * f"))
    code, out = check_proof(cert, TARGET, tmp_path, capsys)
    assert code != 0, out


def test_a_cap_below_the_power_is_rejected_for_all_failed(tmp_path, capsys):
    # every link down: b^2 claimed with only one link left to fail
    path = MINE / "failover_links.prob"
    cert = proved_certificate(path)
    assert _swap_inner_core(cert, parse_expr("L - l >= 2"), parse_expr("L - l >= 1"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out
