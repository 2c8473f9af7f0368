"""A failure bound is total: a run that never ends counts as failing. Every loop needs a checked
ranking function (tamp.prover.termination); loops without one are answered "unknown" naming the
loop, never "proved"."""

import pytest

from lang.parser import parse
from tamp.prover import prove_program
from tamp.simulate import simulate


def prove(src, timeout=60):
    return prove_program(parse(src).programs[0], source=src, path="t.prob", timeout=timeout)


SPIN = """program spin(p: real)
  requires 0 < p && p < 1
  ensures ok
  fails 0
{
  ok ~ bern(1 - p);
  while (!ok) { skip; }
}"""

# (source, the loop's line) — each was "proved" although runs may never end
NOT_TERMINATING = {
    "spin": (SPIN, 7),
    # the exit is never reached: an empty set of exit states must not make `ensures false` proved
    "limit_moves": ("""program lm(n: int)
  requires n >= 1
  ensures false
  fails 0
{
  m := n;
  i := 0;
  while (i < m) {
    i := i + 1;
    m := m + 1;
  }
}""", 8),
    "forever": ("""program f()
  ensures false
  fails 0
{
  x ~ bern(0.5);
  while (true) { skip; }
}""", 6),
    "counter_skipped_on_some_path": ("""program cs(n: int)
  requires n >= 1
  ensures false
  fails 0
{
  i := 0;
  while (i < n) {
    if (n > 100) { i := i + 1; }
  }
}""", 7),
}


@pytest.mark.parametrize("name", sorted(NOT_TERMINATING))
def test_loops_that_may_not_terminate_are_not_proved(name):
    src, line = NOT_TERMINATING[name]
    r = prove(src)
    assert r.verdict == "unknown", r.render_text()
    assert f"the loop at t.prob:{line} may not terminate" in r.message, r.message


# almost-surely terminating retry loops: the prover makes no almost-sure termination argument,
# so these are "unknown" (never a wrong "proved"); the simulator checks what they do
RETRY = {
    "geometric_true": ("""program retry(q: real)
  requires 0 < q && q <= 1
  ensures ok
  fails 0
{
  ok ~ bern(q);
  while (!ok) { ok ~ bern(q); }
}""", {"q": 0.5}, False),
    "geometric_false": ("""program retry2(q: real)
  requires 0 < q && q <= 1
  ensures k <= 1
  fails 0.1
{
  ok ~ bern(q);
  k := 0;
  while (!ok) { ok ~ bern(q); k := k + 1; }
}""", {"q": 0.5}, True),
}


@pytest.mark.parametrize("name", sorted(RETRY))
def test_almost_surely_terminating_loops_are_unknown_and_simulated(name):
    src, inputs, false = RETRY[name]
    r = prove(src)
    assert r.verdict == "unknown", r.render_text()
    assert "may not terminate" in r.message and "t.prob:" in r.message
    s = simulate(src, inputs, runs=20000, seed=5)
    assert (s.verdict == "refuted") == false, s.render_text()


def test_counter_loops_still_prove_and_record_their_ranking():
    src = """program c(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..n: abs(a[j] - q[j]) <= 1/eps * log(n/p)
  fails p
{
  i := n - 1;
  while (i >= 0) {
    a[i] ~ lap(q[i], 1/eps);
    i := i - 1;
  }
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    assert len(r.rankings) == 1
    rules = {o.rule for o in r.obligations}
    assert {"BOUNDED", "DECREASE"} <= rules
    assert simulate(src, {"q": [1, 2, 3], "n": 3, "eps": 0.5, "p": 0.1}, runs=20000, seed=6).verdict != "refuted"


def test_nested_counter_loops_each_get_a_ranking():
    src = """program g(n: int, m: int, p: real)
  requires n >= 1 && m >= 1 && 0 < p && p <= 1
  ensures !bad
  fails p
{
  bad := false;
  for i in 0..n {
    for j in 0..m {
      skip;
    }
  }
  bad ~ bern(p);
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    assert len(r.rankings) == 2
