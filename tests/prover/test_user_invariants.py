"""User `invariant` clauses on loops: candidates for Houdini like the templates, checked and
never trusted; a dropped one is named (file:line:col, why) when the proof fails."""

from __future__ import annotations

import pytest

from lang.parser import parse
from tamp.prover import prove_program

GROW = """
program grow(n: int, eps: real, p: real)
  requires n >= 0 && eps > 0 && p > 0 && p <= 1
  ensures ENSURES && abs(a - n) <= 1 / eps * log(1 / p)
  fails p
{
  z := 0;
  w := 0;
  i := 0;
  while (i < n)INVARIANTS {
    z := z + w;
    w := w * w + 1;
    i := i + 1;
  }
  a ~ lap(n, 1 / eps);
}
"""


def prove(ensures, invariants):
    text = GROW.replace("ENSURES", ensures).replace("INVARIANTS", invariants)
    prog = parse(text, "grow.prob").programs[0]
    return text, prove_program(prog, path="grow.prob", source=text, timeout=120)


def test_the_claim_proves_only_thanks_to_the_user_invariant():
    # z >= 0 needs w >= 0, which no template proposes and no closed form gives (w := w * w + 1
    # is no sum or polynomial in the iterations, unlike w := w + 1)
    text, r = prove("z >= 0", " invariant w >= 0")
    assert r.verdict == "proved", r.render_text()
    head = [n for n in r.automata[0].nodes.values() if n.cfa_node in r.cfa.invariants][0]
    assert any(str(c) == str(r.cfa.invariants[head.cfa_node][0]) for c in head.label)
    sim = pytest.importorskip("tamp.simulation")
    for inputs in ({"n": 6, "eps": 0.5, "p": 0.1}, {"n": 0, "eps": 2, "p": 0.3}):
        s = sim.simulate(text, inputs, runs=20000, seed=5)
        assert s.ci[0] <= float(s.bound_value)
    _, without = prove("z >= 0", "")
    assert without.verdict == "unknown"


def test_an_invariant_false_on_entry_is_not_trusted():
    # z >= 1 would prove the (false: n = 0 leaves z = 0) postcondition if it were trusted
    _, r = prove("z >= 1", " invariant w >= 0 invariant z >= 1")
    assert r.verdict == "unknown"
    assert "the invariant at grow.prob:10:44 was not implied on entry to the loop" in r.failed_trace


def test_a_non_inductive_invariant_is_not_trusted():
    # w <= 3 holds on entry but not after the fourth iteration (0, 1, 2, 5); the claim is false for n > 3
    _, r = prove("z >= 0 && w <= 3", " invariant w >= 0 invariant w <= 3")
    assert r.verdict == "unknown"
    assert "the invariant at grow.prob:10:44 was not inductive" in r.failed_trace


def test_for_loop_invariants_are_at_the_loop_head():
    text = GROW.replace("ENSURES", "z >= 0").replace("INVARIANTS", "")
    text = text.replace("i := 0;\n  while (i < n) {", "for i in 0..n invariant w >= 0 {")
    text = text.replace("    i := i + 1;\n", "")
    assert "for i in 0..n invariant w >= 0 {" in text and "i := i + 1" not in text
    prog = parse(text, "grow.prob").programs[0]
    r = prove_program(prog, path="grow.prob", source=text, timeout=120)
    assert r.verdict == "proved", r.render_text()
