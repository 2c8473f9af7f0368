"""Soundness harness, issue 31 item 1: a counted loop whose body rewrites its bound (the bound
moved into a local that the body grows by one, so the loop never ends, or sets to 100·H, so it
runs about 100 times as often) is never proved unless the simulator agrees, in the concentration
benchmarks (sums over counted loops) and the loop benchmarks."""

from __future__ import annotations

import sys

import pytest
from locations import REPO

sys.path.insert(0, str(REPO / "benchmarks" / "soundness"))

from harness import check_program  # noqa: E402
from mutants import mutants  # noqa: E402

OPERATORS = {"bound+1", "bound*100"}


def _program(rel):
    from lang.parser import parse_file

    return parse_file(str(REPO / "benchmarks" / rel)).programs[0]


# benchmarks/concentration/failuresCount.prob with a `for` loop (whose bound the CFA tests at every
# iteration): the harness runs it at that benchmark's inputs (same parameters)
FAILURES_COUNT_FOR = """
program failuresCountFor(n: int, r: real, p: real)
  requires n >= 1 && 0 <= r && r <= 1 && p > 0 && p <= 1
  ensures  k <= n * r + sqrt(n * log(1 / p) / 2)
  fails    p
{
  k := 0;
  for i in 0..n {
    f ~ bern(r);
    if (f) { k := k + 1; }
  }
}
"""


def test_rewritten_bound_mutants_of_a_for_loop_are_not_proved():
    """Before issue 31 the concentration engine read a `for` loop's count off its syntax: both
    mutants were proved (bound*100 is refuted by simulation, bound+1 never ends)."""
    from lang.parser import parse

    prog = parse(FAILURES_COUNT_FOR).programs[0]
    records = check_program(
        prog, "concentration/failuresCount.prob", timeout=20, original_timeout=120, runs=2000, limit=1, only=OPERATORS
    )
    assert records[0].verdict == "proved", records[0]
    mutated = records[1:]
    assert {r.label.split(":")[-1].split("@")[0] for r in mutated} == OPERATORS
    assert all(r.verdict != "proved" for r in mutated), mutated
    assert not [r for r in records if r.problem], [r for r in records if r.problem]


@pytest.mark.parametrize(
    "rel", ["concentration/failuresCount.prob", "concentration/noisySumConc.prob", "loops/exactSum.prob"]
)
def test_rewritten_bound_mutants_are_not_proved_unless_the_simulator_agrees(rel):
    records = check_program(_program(rel), rel, timeout=20, original_timeout=120, runs=2000, limit=1, only=OPERATORS)
    assert records[0].verdict == "proved", records[0]
    mutated = records[1:]
    assert {r.label.split(":")[-1].split("@")[0] for r in mutated} == OPERATORS
    assert not [r for r in records if r.problem], [r for r in records if r.problem]
    assert all(r.verdict != "proved" for r in mutated if r.expect == "false")
    assert all(r.verdict != "proved" for r in mutated if r.refuted)


def test_the_operators_find_for_and_while_loops():
    for rel in ("concentration/failuresCount.prob", "loops/exactSum.prob"):
        assert OPERATORS <= {m.name for m in mutants(_program(rel))}, rel
