"""Soundness harness on the loop shapes of issue 18 (benchmarks/loops): mutants that change what
a loop computes (its counter's start or step, what it adds up) or its claim are never proved
unless the simulator agrees, and the inferred loop facts of the originals survive simulation."""

from __future__ import annotations

import sys

import pytest
from locations import REPO

sys.path.insert(0, str(REPO / "benchmarks" / "soundness"))

from harness import check_program  # noqa: E402
from mutants import mutants  # noqa: E402

LOOP_OPERATORS = {"init+1", "step*2", "acc*2", "bound/2", "flip"}


def _program(rel):
    from lang.parser import parse_file

    return parse_file(str(REPO / "benchmarks" / rel)).programs[0]


@pytest.mark.parametrize("rel", ["loops/exactSum.prob", "loops/noisyAvg.prob", "loops/countBelow.prob"])
def test_loop_mutants_are_not_proved_unless_the_simulator_agrees(rel):
    records = check_program(
        _program(rel), rel, timeout=20, original_timeout=120, runs=2000, limit=1, only=LOOP_OPERATORS
    )
    assert records[0].verdict == "proved", records[0]
    assert "refuted" not in records[0].simulated, records[0]
    assert not [r for r in records if r.problem], [r for r in records if r.problem]
    assert all(r.verdict != "proved" for r in records if r.expect == "false")
    loop_ones = [r for r in records if r.label.split(":")[-1].split("@")[0] in {"init+1", "step*2", "acc*2"}]
    assert loop_ones, "no loop mutant was made"
    # each loop mutant that the simulator shows false stays unproved
    assert all(r.verdict != "proved" for r in loop_ones if r.refuted)


def test_loop_operators_find_the_counter_and_the_accumulator():
    names = {m.name for m in mutants(_program("loops/noisyAvg.prob"))}
    assert {"init+1", "step*2", "acc*2"} <= names


@pytest.mark.parametrize("rel", ["loops/noisyMean.prob", "loops/noisyPrefix.prob"])
def test_accumulated_noise_mutants_are_not_proved_unless_the_simulator_agrees(rel):
    # the accumulator's deviation from its noise-free closed form is inferred (tamp.prover.concentration.deviation):
    # more noise, a doubled increment, a halved bound or a shifted start must not slip through
    ops = LOOP_OPERATORS | {"noise*4"}
    records = check_program(_program(rel), rel, timeout=20, original_timeout=120, runs=2000, limit=1, only=ops)
    assert records[0].verdict == "proved", records[0]
    assert "refuted" not in records[0].simulated, records[0]
    assert not [r for r in records if r.problem], [r for r in records if r.problem]
    assert all(r.verdict != "proved" for r in records if r.expect == "false")
    assert all(r.verdict != "proved" for r in records if r.refuted)
    assert {r.label.split(":")[-1].split("@")[0] for r in records} >= {"acc*2", "noise*4"}


def test_flag_mutants_of_the_selection_shapes_are_not_proved_unless_the_simulator_agrees():
    """`flag!` clears `found` where it was set (or sets it at the start): the release sampling
    that was charged once may run again, the answer moves — never proved unless simulation
    agrees (benchmarks/selection/firstAbove.prob)."""
    rel = "selection/firstAbove.prob"
    assert "flag!" in {m.name for m in mutants(_program(rel))}
    records = check_program(_program(rel), rel, timeout=45, original_timeout=120, runs=2000, limit=2, only={"flag!"})
    assert records[0].verdict == "proved", records[0]
    flagged = records[1:]
    assert flagged and not [r for r in records if r.problem], records
    assert all(r.verdict != "proved" for r in flagged if r.refuted)
