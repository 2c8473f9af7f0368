"""Loop facts for iteration programs (session 28, iterinv28): a per-iteration composition whose
iteration's chance depends on what the loop keeps — a number drawn before the loop stays in its
draw's support; while no ace is dealt, ``aces == A`` and ``left == N - dealt``
(:mod:`tamp.prover.nesting.loop_facts`, re-checked by :mod:`tamp.certificate.loop_facts_check`).
The blind14 targets and this session's claims proved and certified, tampered facts rejected,
false siblings left unproved, and the pure functions on their own."""

from __future__ import annotations

import copy

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path

from lang.parser import parse_expr, parse_file
from lang.serialize import to_json
from lang.speckind import FAILURE_BOUND, clause_kind
from tamp.cfa import build_cfa
from tamp.cfa.nesting import flag_loop, iteration_program
from tamp.prover.nesting.loop_facts import candidates, loop_facts
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "iterinv28"
BLIND = BENCHMARKS / "prover4" / "dev" / "blind14"
TARGETS = ["birthdays/shares_my_birthday", "cards/deal_until_ace", "cards/spade_void", "cards/rounds_with_ace"]
CLAIMS = ["inspector", "lottery", "urn_countdown", "secret_guess", "red_half", "sample_clean", "batches"]


def _loop(path):
    prog = parse_file(str(path)).programs[0]
    cfa = build_cfa(prog, None, str(path))
    fl = flag_loop(prog, tuple(e for e in prog.ensures if clause_kind(e) == FAILURE_BOUND), cfa.types)
    assert fl is not None
    return prog, cfa, fl


def _shown(fs):
    return {show_expr(f) for f in fs}


# ------------------------------------------------------------------------ pure functions


def test_the_support_of_an_earlier_draw_is_a_fact():
    prog, cfa, fl = _loop(BLIND / "birthdays" / "shares_my_birthday.prob")
    assert {"1 <= mine", "mine <= d"} <= _shown(candidates(prog, fl, cfa.types))
    facts, always = loop_facts(prog, fl, cfa.types)
    assert _shown(facts) == {"1 <= mine", "mine <= d"} and always is None


def test_entry_values_and_the_count_down_hold_while_no_ace_is_dealt():
    prog, cfa, fl = _loop(BLIND / "cards" / "deal_until_ace.prob")
    facts, always = loop_facts(prog, fl, cfa.types)
    assert {"aces == A", "left == N - dealt"} <= _shown(facts)
    assert always is None  # an early exit: no iteration runs after the ace


def test_a_product_without_early_exit_keeps_every_path_facts_apart():
    prog, cfa, fl = _loop(MINE / "urn_countdown.prob")
    facts, always = loop_facts(prog, fl, cfa.types)
    assert "red == R" in _shown(facts)
    assert always is not None and "balls == B - j" in _shown(always) and "red == R" not in _shown(always)


def test_a_fact_broken_on_a_kept_path_is_dropped():
    prog, cfa, fl = _loop(BENCHMARKS / "variants" / "aceShrinksOnMiss.prob")
    facts, _always = loop_facts(prog, fl, cfa.types)
    assert "aces == A" not in _shown(facts)
    assert "left == N - dealt" in _shown(facts)


def test_the_facts_become_requires_over_the_iteration_inputs():
    prog, cfa, fl = _loop(BLIND / "cards" / "deal_until_ace.prob")
    it = iteration_program(prog, fl, cfa.types, parse_expr("1 - A / N"), facts=(parse_expr("aces == A"),))
    assert it is not None and show_expr(it.requires[-1]) == "aces$in == A"
    # a fact that reads a name the iteration does not take is refused
    assert iteration_program(prog, fl, cfa.types, parse_expr("1 - A / N"), facts=(parse_expr("found == true"),)) is None


# ------------------------------------------------------------------------ targets and claims


@pytest.mark.parametrize("name", TARGETS)
def test_the_blind14_targets_are_proved_and_certified(name, tmp_path, capsys):
    path = BLIND / f"{name}.prob"
    cert = proved_certificate(path)
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("name", CLAIMS)
def test_the_claims_are_proved_and_certified(name, tmp_path, capsys):
    path = MINE / f"{name}.prob"
    cert = proved_certificate(path)
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lottery", "inspector", "red_half", "secret_guess"])
def test_the_false_siblings_stay_unknown(name):
    assert prove_path(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.parametrize("name", ["birthdays/shares_my_birthday_false", "cards/deal_until_ace_false"])
def test_the_targets_false_siblings_stay_unknown(name):
    assert prove_path(BLIND / f"{name}.prob").verdict != "proved"


# ------------------------------------------------------------------------ tampered certificates


def _nest(cert):
    (n,) = cert["nesting"]
    return n


def _tampered(path, tmp_path, capsys, change):
    cert = proved_certificate(path)
    bad = copy.deepcopy(cert)
    change(_nest(bad))
    return check_proof(bad, path, tmp_path, capsys)


def test_a_changed_fact_is_rejected(tmp_path, capsys):
    def change(n):
        i = n["facts"].index(to_json(parse_expr("aces == A")))
        n["facts"][i] = to_json(parse_expr("aces == A + 1"))

    code, out = _tampered(BLIND / "cards" / "deal_until_ace.prob", tmp_path, capsys, change)
    assert code != 0 and "FACTS" in out, out


def test_an_added_fact_the_prefix_does_not_give_is_rejected(tmp_path, capsys):
    code, out = _tampered(
        BLIND / "birthdays" / "shares_my_birthday.prob",
        tmp_path,
        capsys,
        lambda n: n["facts"].append(to_json(parse_expr("mine == 1"))),
    )
    assert code != 0 and "FACTS INIT" in out, out


def test_an_initiated_fact_that_is_not_inductive_is_rejected(tmp_path, capsys):
    code, out = _tampered(
        BLIND / "cards" / "deal_until_ace.prob",
        tmp_path,
        capsys,
        lambda n: n["facts"].append(to_json(parse_expr("left == N"))),
    )
    assert code != 0 and "FACTS STEP" in out, out


def test_flag_kept_facts_without_their_every_path_facts_are_rejected(tmp_path, capsys):
    # spade_void's `sp == 13` holds only while no spade is dealt: read on every path it is not inductive
    code, out = _tampered(BLIND / "cards" / "spade_void.prob", tmp_path, capsys, lambda n: n.pop("always"))
    assert code != 0 and "FACTS" in out, out


def test_every_path_facts_that_do_not_make_the_iteration_defined_are_rejected(tmp_path, capsys):
    # without `left == 52 - i` nothing keeps `unif(1, left)` defined after a spade was dealt
    def change(n):
        n["always"] = [f for f in n["always"] if f != to_json(parse_expr("left == 52 - i"))]

    code, out = _tampered(BLIND / "cards" / "spade_void.prob", tmp_path, capsys, change)
    assert code != 0 and "DEFINED" in out, out
