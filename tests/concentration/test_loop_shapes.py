"""Loop shapes of the recognised sums: counting down (`while (i > 0) { …; i := i - 1; }`) and
inclusive bounds (`while (i <= n)`): the number of draws and the counter's final value are
exact — claims off by one iteration are not proved (and are false: refuted by simulation)."""

import pytest

from tamp.api import prove
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.simulation import simulate

TEXT = """
program noisySumDownConc(q: int[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && p > 0 && p <= 1 && log(2 / p) <= n
  ensures  abs(s - sum(j in 1..n + 1: q[j])) <= 2 / eps * sqrt(2 * n * log(2 / p)) && i == 0
  fails    p
{
  s := 0;
  i := n;
  while (i > 0) {
    a[i] ~ lap(q[i], 1 / eps);
    s := s + a[i];
    i := i - 1;
  }
}
program countLe(n: int, r: real, p: real)
  requires n >= 0 && 0 <= r && r <= 1 && p > 0 && p <= 1
  ensures  k <= (n + 1) * r + sqrt((n + 1) * log(1 / p) / 2) && i == n + 1
  fails    p
{
  k := 0;
  i := 0;
  while (i <= n) {
    f ~ bern(r);
    if (f) { k := k + 1; }
    i := i + 1;
  }
}
program countLeWrong(n: int, r: real, p: real)
  requires n >= 0 && 0 <= r && r <= 1 && p > 0 && p <= 1
  ensures  k <= n * r + sqrt(n * log(1 / p) / 2)
  fails    p
{
  k := 0;
  i := 0;
  while (i <= n) {
    f ~ bern(r);
    if (f) { k := k + 1; }
    i := i + 1;
  }
}
program noisySumDownWrong(q: int[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && p > 0 && p <= 1 && log(2 / p) <= n
  ensures  abs(s - sum(j in 0..n: q[j])) <= 2 / eps * sqrt(2 * n * log(2 / p))
  fails    p
{
  s := 0;
  i := n;
  while (i > 0) {
    a[i] ~ lap(q[i], 1 / eps);
    s := s + a[i];
    i := i - 1;
  }
}
"""

Q = [0, 10, 3, 7, 2, 8, 1, 9, 4, 6, 100]  # q[0] and q[n] far apart: an off-by-one range shows


@pytest.mark.parametrize(
    "name,inputs",
    [
        ("noisySumDownConc", {"q": Q, "n": 10, "eps": 1, "p": 0.05}),
        ("countLe", {"n": 50, "r": 0.5, "p": 0.05}),
    ],
)
def test_proved_and_consistent(name, inputs):
    r = prove(TEXT, program=name).programs[0]
    assert r.verdict == "proved" and isinstance(r, ConcentrationResult), r.render_text()
    sim = simulate(TEXT, inputs, program=name, runs=5000, seed=2)
    assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize(
    "name,inputs",
    [
        ("countLeWrong", {"n": 0, "r": 0.5, "p": 0.1}),
        ("noisySumDownWrong", {"q": Q, "n": 10, "eps": 1, "p": 0.05}),
    ],
)
def test_off_by_one_not_proved_and_refuted(name, inputs):
    r = prove(TEXT, program=name, timeout=10).programs[0]
    assert r.verdict != "proved"
    sim = simulate(TEXT, inputs, program=name, runs=5000, seed=2)
    assert sim.verdict == "refuted", sim.render_text()
