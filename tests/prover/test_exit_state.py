"""A claim that fails only on a boundary is shown as such (tamp issue 36, item 7).

A threshold test ``nc >= T`` where the claim needs ``nc > T`` was diagnosed as a missing loop
invariant, and adding one changed nothing in the message. When the postcondition fails at the
exit, the explanation now names the conjunct, a concrete state from the solver's model that the
facts found there allow and that violates it, and the comparison whose sides are equal there.
"""

from __future__ import annotations

import tamp

THRESHOLD = """program thr(n: int, T: int)
  requires n >= 1 && T >= 1
  ensures  alarm ==> nc > T
  fails    0
{
  nc := 0;
  alarm := false;
  for i in 0..n {
    x ~ bern(0.5);
    if (x) { nc := nc + 1; }
    if (nc >= T) { alarm := true; }
  }
}
"""


def test_a_boundary_failure_shows_the_conjunct_a_state_and_the_boundary():
    r = tamp.prove(THRESHOLD, path="thr.prob").programs[0]
    assert r.verdict == "unknown"  # the claim is false (alarm with nc == T), never "proved"
    why = r.failure.text()
    assert "a state where `alarm ==> nc > T` fails" in why
    assert "alarm = true" in why and "(if it is reachable, the claim is false)" in why
    assert "nc = T there, where the claim needs `nc > T`" in why
    assert r.failure.violated == "alarm ==> nc > T" and "nc = " in r.failure.state


def test_the_true_claim_with_the_boundary_fixed_is_proved():
    r = tamp.prove(THRESHOLD.replace("nc > T", "nc >= T"), path="thr.prob").programs[0]
    assert r.verdict == "proved"
