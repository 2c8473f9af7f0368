"""A failure bound is total: a run that never ends counts as failing. Every loop needs a checked
ranking function (tamp.prover.loops.termination); loops without one are answered "unknown" naming the
loop, never "proved"."""

import pytest

from lang.parser import parse
from tamp.prover import prove_program
from tamp.simulation import simulate


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
    "limit_moves": (
        """program lm(n: int)
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
}""",
        8,
    ),
    "forever": (
        """program f()
  ensures false
  fails 0
{
  x ~ bern(0.5);
  while (true) { skip; }
}""",
        6,
    ),
    "counter_skipped_on_some_path": (
        """program cs(n: int)
  requires n >= 1
  ensures false
  fails 0
{
  i := 0;
  while (i < n) {
    if (n > 100) { i := i + 1; }
  }
}""",
        7,
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_TERMINATING))
def test_loops_that_may_not_terminate_are_not_proved(name):
    src, line = NOT_TERMINATING[name]
    r = prove(src)
    assert r.verdict == "unknown", r.render_text()
    assert f"the loop at t.prob:{line} may not terminate" in r.message, r.message


# almost-surely terminating retry loops: proved when each iteration exits with a fixed positive
# probability (a geometric argument), else "unknown" — never a wrong "proved"
RETRY = """program retry(q: real)
  requires 0 < q && q <= 1
  ensures ok
  fails 0
{
  ok ~ bern(q);
  while (!ok) { ok ~ bern(q); }
}"""


def test_a_geometric_retry_loop_is_proved_almost_surely_terminating():
    r = prove(RETRY)
    assert r.verdict == "proved", r.render_text()
    assert [type(x).__name__ for x in r.rankings] == ["Geometric"]
    assert "EXITPROB" in {o.rule for o in r.obligations}
    for q in (0.5, 0.05):
        assert simulate(RETRY, {"q": q}, runs=20000, seed=5).verdict != "refuted"


NOT_ALMOST_SURE = {
    # q = 0 is allowed: then the loop never ends
    "probability_may_be_zero": RETRY.replace("0 < q", "0 <= q"),
    # the exit probability changes between iterations (it may shrink towards 0)
    "probability_not_an_input": RETRY.replace(
        "while (!ok) { ok ~ bern(q); }", "r := q; while (!ok) { ok ~ bern(r); r := r / 2; }"
    ),
    # the flag is overwritten after the sampling
    "flag_overwritten": RETRY.replace("while (!ok) { ok ~ bern(q); }", "while (!ok) { ok ~ bern(q); ok := false; }"),
    # the sampling is skipped on some iterations
    "sampling_skipped": RETRY.replace(
        "while (!ok) { ok ~ bern(q); }", "x := false; while (!ok) { if (x) { ok ~ bern(q); } }"
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_ALMOST_SURE))
def test_retry_loops_without_a_sound_exit_probability_are_unknown(name):
    r = prove(NOT_ALMOST_SURE[name])
    assert r.verdict == "unknown", r.render_text()
    assert "may not terminate" in r.message, r.message


def test_a_false_claim_about_a_retry_loop_is_not_proved_and_is_refuted():
    src = """program retry2(q: real)
  requires 0 < q && q <= 1
  ensures k <= 1
  fails 0.1
{
  ok ~ bern(q);
  k := 0;
  while (!ok) { ok ~ bern(q); k := k + 1; }
}"""
    assert prove(src).verdict == "unknown"
    assert simulate(src, {"q": 0.5}, runs=20000, seed=5).verdict == "refuted"


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


def test_a_loop_stepping_by_two_gets_a_ranking_from_its_condition():
    src = """program step2(n: int, p: real)
  requires n >= 0 && 0 < p && p <= 1
  ensures !y && i >= n
  fails p
{
  i := 0;
  while (i < n) { i := i + 2; }
  y ~ bern(p);
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    assert [show(x.rank) for x in r.rankings] == ["n - i"]
    for n in (0, 5):
        assert simulate(src, {"n": n, "p": 0.3}, runs=20000, seed=9).verdict != "refuted"


def show(e):
    from tamp.show import show_expr

    return show_expr(e)


def test_when_the_counter_ranking_fails_another_conjunct_of_the_condition_can_rank():
    # the counter i chases a moving limit n; the loop still ends because j reaches m
    src = """program two(n: int, m: int, p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{
  i := 0;
  j := 0;
  k := n;
  while (i < k && j < m) {
    i := i + 1;
    k := k + 1;
    j := j + 1;
  }
  y ~ bern(p);
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    assert [show(x.rank) for x in r.rankings] == ["m - j"]
    assert simulate(src, {"n": 2, "m": 5, "p": 0.2}, runs=20000, seed=10).verdict != "refuted"


GROWING_FOR = """program grow(n: int, p: real)
  requires n >= 1 && p > 0 && p <= 1
  ensures !bad
  fails n * p
{
  bad := false;
  k := n;
  for u in 0..k {
    x ~ bern(p);
    if (x) { bad := true; k := k + 1; }
  }
}"""


def test_a_for_loop_without_a_ranking_says_what_is_missing():
    """A `for` loop whose bound the body raises is not counted: the message says so (the loop's
    file:line, the bound's variable), not "no ranking function or retry sampling found"."""
    r = prove(GROWING_FOR)
    assert r.verdict == "unknown"
    assert "t.prob:8 may not terminate (not a counted loop: its bound reads 'k', which the loop writes" in r.message
    assert "retry" not in r.message.split("may not terminate")[1].split(";")[0]
