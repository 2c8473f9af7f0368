"""Las Vegas loops (issue 33, :func:`tamp.cfa.nesting.lasvegas_loop`): an unbounded ``while`` whose
claim bounds an iteration counter is truncated to the iterations the claim allows and composed as a
product of per-iteration continue bounds; the rest of the postcondition must hold on every run that
stops. The blind4 rejection claims and their variants in dev/lasvegas (the test negated or written
``== false``, the counter raised before or after the draw, starting at 0 or 1, the bound written
with pow or exp) are proved and cross-checked with ``tamp simulate`` at their recorded inputs; every
false sibling stays unknown."""

from __future__ import annotations

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang.parser import parse, parse_expr
from lang.printer import print_expr
from tamp.cfa import build_cfa
from tamp.cfa.nesting import lasvegas_composition, lasvegas_loop, lasvegas_programs
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev"
TRUE = [
    DEV / "blind4" / "rejection" / "die_range_rejection.prob",
    DEV / "blind4" / "rejection" / "von_neumann_rounds.prob",
    DEV / "lasvegas" / "dice_redraw.prob",
    DEV / "lasvegas" / "coin_pairs.prob",
]
#: flag loops that stop once the flag moved, whose claim carries a rest (``acc && z >= 0``) proved
#: surely after the iteration that raised it; their per-iteration chances need the sign of a
#: normal draw, a joint uniform's diagonal, a mixture of Bernoulli chances
REST = [
    DEV / "blind4" / "rejection" / "halfnormal_rejection.prob",
    DEV / "blind4" / "rejection" / "distinct_pair_accept.prob",
    DEV / "blind4" / "rejection" / "weighted_index_accept.prob",
]
FALSE = [p.with_name(p.stem + "_false.prob") for p in TRUE + REST] + [
    DEV / "lasvegas" / "dice_fixed_start_false.prob",
    DEV / "lasvegas" / "dice_wrong_rest_false.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_rejection_loops_are_proved_by_truncation(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "lasvegas"
    given = inputs_for(str(path))
    assert given
    for g in given:
        sim = simulate(str(path), g, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_stay_unknown(path):
    assert _prove(path, timeout=FALSE_CLAIM_S).verdict != "proved"


RETRY = """\
program retry(q: real, k: int)
  requires 0 < q && q < 1 && k >= 0
  ensures  attempts <= k
  fails    pow(1 - q, k)
{
  ok := false;
  attempts := 0;
  while (!ok) {
    attempts := attempts + 1;
    ok ~ bern(q);
  }
}
"""


def _lv(text):
    prog = parse(text, "t.prob").programs[0]
    cfa = build_cfa(prog, None, "t.prob", text)
    return prog, lasvegas_loop(prog, prog.ensures, cfa.types), cfa


def test_the_counter_limit_and_rest_are_read_off_the_claim():
    prog, lv, cfa = _lv(RETRY)
    assert lv is not None and lv.counter == "attempts" and print_expr(lv.limit) == "k"
    assert print_expr(lv.start) == "0" and print_expr(lv.rest) == "true"
    # the loop is entered surely: no entry factor, k factors of 1 - q
    side = lasvegas_composition(lv, cfa.bound, parse_expr("1 - q"), False)
    assert side is not None
    parts = lasvegas_programs(prog, lv, cfa.types, parse_expr("1 - q"), False)
    assert parts is not None and set(parts) == {"iter"}
    # the iteration starts where the loop condition holds (its input copy is `!ok$in`)
    assert "ok$in" in {p.name for p in parts["iter"].params}
    assert any("ok$in" in print_expr(r) for r in parts["iter"].requires)


@pytest.mark.parametrize(
    "change",
    [
        # the counter raised under an `if`: it no longer counts the iterations
        ("    attempts := attempts + 1;\n", "    if (q > 0) { attempts := attempts + 1; }\n"),
        # the counter raised twice per iteration
        ("    attempts := attempts + 1;\n", "    attempts := attempts + 1;\n    attempts := attempts + 1;\n"),
        # a limit that reads a variable the program writes
        ("  ensures  attempts <= k\n", "  ensures  attempts <= k + (ok ? 0 : 1)\n"),
        # a loop inside the iteration: an iteration might not end
        ("    ok ~ bern(q);\n", "    ok ~ bern(q);\n    z := 0;\n    while (z < 1) { z := z + 1; }\n"),
    ],
)
def test_what_is_not_a_las_vegas_loop(change):
    old, new = change
    assert old in RETRY
    _prog, lv, _cfa = _lv(RETRY.replace(old, new))
    assert lv is None


def test_a_retry_loop_with_the_counter_first_is_proved():
    text = RETRY.replace("retry(", "retry2(")
    r = prove_program(parse(text, "t.prob").programs[0], path="t.prob", source=text, timeout=60)
    assert r.verdict == "proved", r.render_text()


@pytest.mark.parametrize("path", REST, ids=lambda p: p.stem)
def test_a_flag_loop_claim_with_a_rest_is_proved(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "product" and "exit" in r.pieces
    for g in inputs_for(str(path)):  # the claims are tight: enough runs to see it
        sim = simulate(str(path), g, runs=20000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


#: the half-normal sampler written differently: the lower half, a `while` with the counter, the flag
#: tested as `found == false`, other work in the body, the bound as exp
LOWER = """\
program lower_half(mu: real, v: real, k: int)
  requires v > 0 && k >= 0
  ensures  found && w <= mu
  fails    exp(-k * log(2))
{
  found := false;
  w := mu;
  t := 0;
  spent := 0;
  while (found == false && t < k) {
    y ~ gauss(mu, v);
    spent := spent + 1;
    if (y <= mu) {
      w := y;
      found := true;
    }
    t := t + 1;
  }
}
"""


def _prove_text(text, timeout=60):
    return prove_program(parse(text, "t.prob").programs[0], path="t.prob", source=text, timeout=timeout)


def test_the_lower_half_written_differently_is_proved():
    r = _prove_text(LOWER)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and "exit" in r.pieces


@pytest.mark.parametrize(
    "old, new",
    [
        # a rest that a stopping run does not give: y <= mu does not make w <= mu - 1
        ("ensures  found && w <= mu\n", "ensures  found && w <= mu - 1\n"),
        # one factor more than the k tries give (mu = 0, v = 1, k = 1: fails with probability 1/2)
        ("fails    exp(-k * log(2))", "fails    exp(-(k + 1) * log(2))"),
    ],
)
def test_false_variants_of_the_lower_half_stay_unknown(old, new):
    assert old in LOWER
    assert _prove_text(LOWER.replace(old, new), timeout=FALSE_CLAIM_S).verdict != "proved"
