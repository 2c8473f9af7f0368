"""Issue 31 ("one loop analysis"): the loop prover, the expected-failure engine and the
simulator take a loop's counter and trip count from the CFA's loop analysis
(:func:`tamp.cfa.loops.counted_loop`, :func:`tamp.cfa.loops.bound_changes`), never from the
loop's syntax. The adversarial shapes: the bound rewritten in the body (``m := 100 * n`` after
the draw: about 100x the iterations; ``m := m + 1``: never ends), the bound read through an
array element the body writes, a counter written twice. None is counted by its syntax, none is
proved, and the honest loops still are."""

import pytest

from lang.evaluate import evaluate
from lang.parser import parse
from tamp.certificate.exp_rules import _unrolled
from tamp.cfa import build_cfa
from tamp.cfa.loops import bound_changes, counted_loop
from tamp.prover import prove_program
from tamp.prover.expectation.prove import unroll
from tamp.prover.loops.prove import _loops
from tamp.simulation import simulate
from tamp.simulation.runner import counted_for_loops

SUM = """
program noisySum(n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(s) <= n / eps * log(n / p)
  fails p
{{
  s := 0;
  m := n;
  b[0] := n;
  i := 0;
  while (i < {bound}) {{
    a ~ lap(0, 1 / eps);
    s := s + a;
    {last}
  }}
}}
"""
SUM_HONEST = """
program noisySum(n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(s) <= n / eps * log(n / p)
  fails p
{
  s := 0;
  i := 0;
  while (i < n) {
    a ~ lap(0, 1 / eps);
    s := s + a;
    i := i + 1;
  }
}
"""
SUM_SHAPES = {
    "bound-100n": SUM.format(bound="m", last="m := 100 * n; i := i + 1;"),
    "bound-grows": SUM.format(bound="m", last="m := m + 1; i := i + 1;"),
    "bound-in-array": SUM.format(bound="b[0]", last="b[0] := 100 * n; i := i + 1;"),
    "bound-once": SUM.format(bound="m", last="if (i == 0) { m := 100 * n; } i := i + 1;"),
}

COINS = """
program coins(n: int)
  requires n >= 1
  ensures !hit
  fails n / 8
{{
  hit := false;
  m := n;
  for i in 0..m {{
    c ~ bern(1 / 8);
    if (c) {{ hit := true; }}
    {last}
  }}
}}
"""


def _prog(text):
    return parse(text).programs[0]


def _prove(text, timeout=60):
    return prove_program(_prog(text), source=text, timeout=timeout)


@pytest.mark.parametrize("name", sorted(SUM_SHAPES))
def test_loop_prover_counts_no_rewritten_bound(name):
    """The loop prover's counter (what κ, the closed forms and the counting guards read) is none
    when the bound is written in the body: before, `i < m` gave the counter i up to m."""
    cfa = build_cfa(_prog(SUM_SHAPES[name]))
    (head,) = cfa.loop_heads
    info, _dag = _loops(cfa)
    assert info[head]["counter"] is None
    assert bound_changes(cfa, head, info[head]["cond"].right)


@pytest.mark.parametrize("name", sorted(SUM_SHAPES))
def test_rewritten_bound_sum_is_not_proved(name):
    r = _prove(SUM_SHAPES[name])
    assert r.verdict != "proved", r.render_text()


def test_rewritten_bound_sum_claim_is_false():
    """Ground truth: 100 draws where the claim allows for one (n = 1) break the claim far more
    often than p, so a proof counting the loop by its syntax would have been wrong."""
    sim = simulate(SUM_SHAPES["bound-100n"], {"n": 1, "eps": 1.0, "p": 0.1}, runs=400, seed=3)
    assert sim.verdict == "refuted", sim.render_text()


def test_counter_written_twice_is_not_a_unit_counter():
    text = SUM.format(bound="n", last="i := i + 1; i := i - 1; i := i + 1;")
    cfa = build_cfa(_prog(text))
    info, _dag = _loops(cfa)
    assert info[cfa.loop_heads[0]]["counter"] is None
    assert _prove(text).verdict != "proved"


def test_honest_sum_is_still_proved_with_its_counter():
    cfa = build_cfa(_prog(SUM_HONEST))
    info, _dag = _loops(cfa)
    c = info[cfa.loop_heads[0]]["counter"]
    assert c is not None and c.name == "i"
    r = _prove(SUM_HONEST)
    assert r.verdict == "proved", r.render_text()


@pytest.mark.parametrize("last", ["m := 100 * n;", "m := m + 1;"], ids=["bound-100n", "bound-grows"])
def test_expected_failure_of_rewritten_for_bound_is_not_proved(last):
    r = _prove(COINS.format(last=last))
    assert r.verdict != "proved", r.render_text()


def test_expected_failure_rewritten_claim_is_false_and_honest_is_proved():
    sim = simulate(COINS.format(last="m := 100 * n;"), {"n": 1}, runs=400, seed=3)
    assert sim.verdict == "refuted", sim.render_text()
    r = _prove(COINS.format(last="skip;"))
    assert r.verdict == "proved", r.render_text()


def test_simulator_counts_for_loops_by_the_cfa():
    """The simulator's early refusal of a too long loop reads the trip count of the CFA's loop
    analysis: the honest `for` loop is counted, the ones whose bound the body writes are not
    (they run, and one that never ends is stopped by the iteration budget, not by a count)."""
    assert len(counted_for_loops(_prog(COINS.format(last="skip;")))) == 1
    for last in ("m := 100 * n;", "m := m + 1;"):
        assert counted_for_loops(_prog(COINS.format(last=last))) == {}
    with pytest.raises(Exception, match="still running after"):
        simulate(COINS.format(last="m := m + 1;"), {"n": 1}, runs=20, seed=3)


def test_simulator_refuses_a_long_counted_loop_before_running_it():
    text = COINS.format(last="skip;").replace("m := n;", "m := 1000000000 * n;")
    with pytest.raises(Exception, match="would run 1000000000 iterations"):
        simulate(text, {"n": 1}, runs=20, seed=3)


@pytest.mark.parametrize(
    "head,trips",
    [("for i in 0..3", 3), ("for i in 2..=5", 4), ("for i in 0..8", 8), ("for i in 1..1", 0)],
)
def test_expected_failure_unrolling_agrees_with_the_loop_analysis(head, trips):
    """The expected-failure engine (and its checker) writes out only `for` loops over literal
    bounds: the one analysis counts the same iterations (a literal bound cannot be rewritten, the
    `for` variable is read-only in its body)."""

    text = f"program u(n: int) requires n >= 1 ensures !hit fails 1 {{ hit := false; {head} {{ c ~ bern(1 / 8); if (c) {{ hit := true; }} }} }}"
    prog = _prog(text)
    loop = next(s for s in prog.body.stmts if type(s).__name__ == "For")
    cfa = build_cfa(prog)
    cl = counted_loop(cfa, cfa.loop_heads[0])
    assert evaluate(cl.hi, {}) - evaluate(cl.lo, {}) == trips
    for written_out in (unroll(loop), _unrolled(loop)):
        draws = [s for s in written_out.stmts if type(s).__name__ == "Sample"]
        assert len(draws) == trips
