"""Products of stages (:mod:`tamp.cfa.stages`) and early exits whose counter step sits in a branch
(:func:`tamp.cfa.nesting._hoisted_step`), issue 33: the dev files blind6 traceback/farthest_seen,
blind7 blockchain/confirmation_runs_nested and benchmarks/prover4/dev/products are proved, their
false siblings are not, and the rules refuse the traps (a loop that may not run, two negative
chances, a branch that does not surely end the loop, a loop without the flag test)."""

from __future__ import annotations

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.cfa.nesting import flag_loop
from tamp.cfa.stages import stage_composition, stage_cuts, stage_programs
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult

DEV = BENCHMARKS / "prover4" / "dev"
STAGES = [
    DEV / "blind6" / "traceback" / "farthest_seen.prob",
    DEV / "products" / "first_mark_survives.prob",
    DEV / "products" / "weighted_first_router.prob",
]
EARLY = [
    DEV / "blind7" / "blockchain" / "confirmation_runs_nested.prob",
    DEV / "products" / "retry_runs_nested.prob",
    DEV / "products" / "streak_in_else.prob",
]


def _stages_in(r) -> bool:
    while isinstance(r, NestResult):
        if r.form == "stages":
            return True
        r = r.inner
    return False


@pytest.mark.parametrize("path", STAGES, ids=lambda p: p.stem)
def test_stage_products_are_proved(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert _stages_in(r)


@pytest.mark.parametrize("path", EARLY, ids=lambda p: p.stem)
def test_early_exits_with_the_step_in_a_branch_are_proved(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult)


@pytest.mark.parametrize("path", STAGES[1:2] + EARLY, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize("path", STAGES[0:1] + STAGES[2:], ids=lambda p: p.stem)
def test_false_siblings_over_packets_are_not_proved(path):
    # expected failure may search until the limit on these (their true siblings are proved fast)
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


SINGLE = """
program single(d: int, p: real)
  requires REQ
  ensures mark == 1
  fails 1 - p * (1 - (d - 1) * p)
{
  mark := 0;
  for r in 0..d {
    b ~ bern(p);
    if (b) { mark := r + 1; }
  }
}
"""


def _program(text):
    return parse(text).programs[0]


def _holds(prog, formula) -> bool:
    from tamp.prover.nesting.prove import _holds as holds

    return holds(build_cfa(prog, None, "t.prob"), [("", formula)])


def test_a_loop_that_may_not_run_is_not_cut():
    prog = _program(SINGLE.replace("REQ", "d >= 0 && p >= 0 && p <= 1"))
    (cut,) = stage_cuts(prog)
    side = stage_composition(prog, prog.fails, cut, parse_expr("p"), parse_expr("1 - (d - 1) * p"))
    assert not _holds(prog, side[0][1])  # d = 0: the claim mark == 1 fails surely
    assert _prove_text(prog).verdict != "proved"


def _prove_text(prog):
    return prove_program(prog, path="t.prob", source=None, timeout=FALSE_CLAIM_S)


def test_two_negative_chances_are_refused():
    # a = b = -1: a·b = 1 would claim a sure success; the side condition asks a >= 0 or b >= 0
    prog = _program(SINGLE.replace("REQ", "d >= 1 && p >= 0 && p <= 1"))
    side = stage_composition(prog, prog.fails, 1, parse_expr("-1"), parse_expr("-1"))
    assert not _holds(prog, side[1][1])


def test_the_second_stage_starts_anywhere_the_first_may_leave():
    prog = _program(SINGLE.replace("REQ", "d >= 1 && p >= 0 && p <= 1"))
    one, two = stage_programs(prog, build_cfa(prog, None, "t.prob").types, 1, parse_expr("p"), parse_expr("1"))
    assert [p.name for p in two.params][-1] == "mark$in"
    assert str(two.requires[-1]).count("mark$in")  # I = mark == 1, over the input


LOOP = """
program streak(z: int, q: real)
  requires z >= 1 && q >= 0 && q <= 1
  ensures lost
  fails exp(-(1 - q) * z)
{
  wins := 0;
  lost := false;
  while (COND) {
    w ~ bern(q);
    if (!w) { OTHER } else { wins := wins + 1; }
  }
}
"""


def _flag(text):
    prog = _program(text)
    return flag_loop(prog, tuple(prog.ensures), build_cfa(prog, None, "t.prob").types)


def test_the_step_is_hoisted_when_the_other_branch_ends_the_loop():
    fl = _flag(LOOP.replace("COND", "wins < z && !lost").replace("OTHER", "lost := true;"))
    assert fl is not None and fl.early_exit and fl.form == "product"


def test_a_branch_that_may_not_move_the_flag_keeps_the_loop_uncounted():
    # the other branch retries without raising `wins`: the loop may run more than z times
    fl = _flag(LOOP.replace("COND", "wins < z && !lost").replace("OTHER", "lost := q > 1;"))
    assert fl is None


def test_a_loop_without_the_flag_test_is_not_hoisted():
    fl = _flag(LOOP.replace("COND", "wins < z").replace("OTHER", "lost := true;"))
    assert fl is None
