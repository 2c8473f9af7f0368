"""Nested products of misses (session 24, nested24): case splits on a coin the loop only reads
(:mod:`tamp.prover.expectation.cases`), inner-loop miss chances as factors of an outer power
core guarded by the signs of summed counts (:mod:`.nested`), and one-success-pattern lower
bounds (:mod:`.patterns`) — proved, certified, tampered certificates rejected, false claims
left unproved."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import Swap, check_proof, proved_certificate_fresh
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse_expr, parse_file
from lang.serialize import from_json, to_json
from tamp.prover.expectation.cases import guarded_lefts, read_coins, specialise
from tamp.prover.expectation.nested import counts_of, sign_facts
from tamp.prover.expectation.patterns import pattern_chances
from tamp.show import show_expr

TEST = BENCHMARKS / "prover4" / "dev" / "blind11"
MINE = BENCHMARKS / "prover4" / "dev" / "nested24"
SPLIT = TEST / "searchtheory" / "split_effort.prob"
SUMMED = TEST / "profiling" / "summed_profiles.prob"
PLAY = TEST / "petroleum" / "shared_play_risk.prob"
GATED = MINE / "gated_trials.prob"


def _loops(path):
    prog = parse_file(str(path)).programs[0]
    return prog, [n for n in A.walk(prog.body) if isinstance(n, (A.For, A.While))]


def _types(prog):
    out = {p.name: p.type for p in prog.params}
    for n in A.walk(prog.body):
        if isinstance(n, A.Sample) and n.dist.func == "bern":
            out[n.targets[0].name] = A.BOOL
    return out


def test_a_coin_the_loop_only_reads_is_found_and_specialised():
    prog, (loop,) = _loops(SPLIT)
    assert read_coins(loop, _types(prog)) == ["in1"]
    yes, no = specialise(loop.body, "in1", True), specialise(loop.body, "in1", False)
    samples = lambda b: [n.targets[0].name for n in A.walk(b) if isinstance(n, A.Sample)]  # noqa: E731
    assert samples(yes) == ["x"] and samples(no) == ["y"]  # each value keeps only its own cell's look


def test_a_draw_under_a_test_of_the_counter_counts_only_its_iterations():
    prog, (loop,) = _loops(SPLIT)
    shown = [show_expr(m) for m in guarded_lefts(loop, specialise(loop.body, "in1", True), {"n", "k"})]
    assert shown == ["n - i", "k - i"]
    shown = [show_expr(m) for m in guarded_lefts(loop, specialise(loop.body, "in1", False), {"n", "k"})]
    assert shown == ["n - i", "i < k ? n - k : n - i"]


def test_summed_counts_are_counts_and_a_reset_is_no_fact_of_the_loop():
    prog, (outer, inner) = _loops(SUMMED)
    assert counts_of(prog.body) >= {"total", "c"}
    assert show_expr(sign_facts(prog.body, parse_expr("!(total >= 1) ? 1 : 0"), outer)) == "total >= 0"
    cont = parse_expr("!(total + c >= 1) ? 1 : 0")
    assert show_expr(sign_facts(prog.body, cont, inner)) == "c >= 0 && total >= 0"


def test_a_count_that_may_fall_is_no_count():
    body = parse_file_text(
        "program p(n: int) requires n >= 0 ensures t >= 1 fails 1 { t := 0; t := t - 1; c := 0; c := c + t; }"
    )
    assert counts_of(body) == set()


def parse_file_text(text):
    from lang.loader import load

    return load(text).programs[0].body


def test_the_chance_of_one_success_pattern_is_a_product():
    prog, (outer, _inner) = _loops(PLAY)
    assert [show_expr(a) for a in pattern_chances(outer.body, {"pp", "pq", "w", "m"})] == ["pp * pq"]
    prog, (outer, _inner) = _loops(MINE / "dry_basins.prob")
    assert [show_expr(a) for a in pattern_chances(outer.body, {"pd", "pq", "w", "m"})] == ["(1 - pd) * pq"]


@pytest.mark.parametrize(
    "path", [SPLIT, SUMMED, GATED, pytest.param(PLAY, marks=pytest.mark.slow, id="shared_play_risk")]
)
def test_proved_and_certified(path, tmp_path, capsys):
    cert = proved_certificate_fresh(path, tmp_path)  # asserts "proved", in a process of its own
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out


def _tampered(path, tmp_path, capsys, old: str, new: str):
    cert = proved_certificate_fresh(path, tmp_path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    changed_any = False
    for loop in cert["expectation"][0]["loops"]:
        core = from_json(loop["core"])
        changed = Swap(parse_expr(old), parse_expr(new)).walk(core)
        changed_any |= show_expr(changed) != show_expr(core)
        loop["core"] = to_json(changed)
    assert changed_any
    return check_proof(cert, path, tmp_path, capsys)


@pytest.mark.parametrize(
    "path,old,new",
    [
        (SPLIT, "k - i", "k - i + 1"),  # a changed count of the looks in cell 1
        (SPLIT, "n - k", "n - k + 1"),  # a changed count of the looks in cell 2
        (SUMMED, "total >= 0", "total >= 1"),  # a changed guard of the counts' signs
        pytest.param(
            PLAY, "1 - pq", "1 - 2 * pq", marks=pytest.mark.slow, id="play_inner_chance"
        ),  # a changed inner miss chance
        pytest.param(
            PLAY, "pp * pq", "2 * pp * pq", marks=pytest.mark.slow, id="play_pattern_chance"
        ),  # a changed pattern chance
    ],
)
def test_a_tampered_core_is_rejected(path, old, new, tmp_path, capsys):
    code, out = _tampered(path, tmp_path, capsys, old, new)
    assert code != 0, out


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [
        TEST / "searchtheory" / "split_effort_false.prob",
        TEST / "petroleum" / "shared_play_risk_false.prob",
        MINE / "gated_trials_false.prob",
        MINE / "summed_failures_false.prob",
        MINE / "dry_basins_false.prob",
    ],
    ids=[
        "split_effort_false",
        "shared_play_risk_false",
        "gated_trials_false",
        "summed_failures_false",
        "dry_basins_false",
    ],
)
def test_false_claims_stay_unproved(path):
    assert _prove(path, timeout=60).verdict != "proved"
