"""The interpreter's semantics: branches, loops, arrays, tuples, assume, unreliable operators,
and located errors."""

import math

import numpy as np
import pytest

from lang.errors import TampError
from tamp.simulation import run_samples, simulate


def test_branches_merge_and_short_circuit():
    src = """program b(n: int) {
      x ~ unif(0, 3);
      if (x >= 2) { y := x * 10; z := true; } else { y := 0 - x; }
      w := x >= 2 && z;
    }"""
    s = run_samples(src, {"n": 1}, runs=2000, seed=1)
    hi = s["x"] >= 2
    assert np.all(s["y"][hi] == 10 * s["x"][hi]) and np.all(s["y"][~hi] == -s["x"][~hi])
    assert np.all(s["w"] == hi)


def test_while_iterates_per_run():
    # geometric number of trials until success: mean 1/p
    src = """program g() { c := 0; go := true;
      while (go) { c := c + 1; h ~ bern(0.25); if (h) { go := false; } } }"""
    s = run_samples(src, runs=50000, seed=2)
    assert s["c"].min() == 1
    assert abs(s["c"].mean() - 4) < 5 * math.sqrt(12 / 50000)


def test_for_loop_and_arrays_with_per_run_indices():
    src = """program f(n: int)
      ensures sum(j in 0..n: a[j]) == 30 - k * k - 1 && (forall j in 0..n: j == k || a[j] == j * j)
    {
      for i in 0..n { a[i] := i * i; }
      k ~ unif(0, 4);
      a[k] := 0 - 1;
      v := a[k];
    }"""
    s = run_samples(src, {"n": 5}, runs=3000, seed=3)
    assert np.all(s["v"] == -1)
    assert np.all(s["i"] == 5)
    assert simulate(src, {"n": 5}, runs=3000, seed=3).failures == 0


def test_tuples_and_projections():
    src = """program t() { (x, y) := (1, 2); (x, y) := (y, x); p := (x, 7); z := fst(p) + snd(p); }"""
    s = run_samples(src, runs=10)
    assert np.all(s["x"] == 2) and np.all(s["y"] == 1) and np.all(s["z"] == 9)


def test_int_division_is_euclidean():
    s = run_samples(
        "program e() { a := (0 - 7) div 2; b := (0 - 7) mod 2; c := 7 div (0 - 2); d := 7 mod (0 - 2); }", runs=1
    )
    assert (s["a"][0], s["b"][0], s["c"][0], s["d"][0]) == (-4, 1, -3, 1)


def test_assume_conditions_and_reports_kept_runs():
    src = """program a() ensures x != 6 fails 0.5 { x ~ unif(1, 6); assume(x > 3); }"""
    r = simulate(src, {}, runs=60000, seed=4)
    assert abs(r.runs - 30000) < 5 * math.sqrt(60000 * 0.25)
    assert r.total_runs == 60000 and "kept" in r.message
    assert r.ci[0] < 1 / 3 < r.ci[1]


def test_assume_never_true():
    r = simulate("program a() ensures x > 0 { x ~ unif(1, 6); assume(x > 9); }", {}, runs=1000)
    assert r.runs == 0 and r.verdict == "consistent" and "no run" in r.message


def test_unreliable_operators_fail_at_the_rate():
    src = """program u(r: real) rate r reliability 1 - 3 * r {
      x := 1 +. 2; y := x *. x; z := y -. 1; }"""
    r = simulate(src, {"r": 0.1}, runs=50000, seed=5)
    exact = 1 - 0.9**3
    assert r.ci[0] < exact < r.ci[1]
    assert r.verdict == "consistent"
    s = run_samples(src, {"r": 0.1}, runs=10)
    assert np.all(s["z"] == 8)  # values stay correct
    tight = simulate(src, {"r": 0.1}, runs=50000, seed=5, bound="0.2")
    assert tight.verdict == "refuted"


def test_short_circuit_reads_only_where_defined():
    src = """program s() ensures found ==> v > 0 {
      found ~ bern(0.5); if (found) { v := 1; } }"""
    r = simulate(src, {}, runs=1000)
    assert r.failures == 0


def test_bounds_are_exact():
    r = simulate("program b(p: real, n: int) ensures true fails p * n { skip; }", {"p": 0.1, "n": 3}, runs=10)
    from fractions import Fraction

    assert r.bound_value == Fraction(3, 10)


@pytest.mark.parametrize(
    "src, inputs, msg, line, col",
    [
        ("program e(n: int) { x := 1 / n; }", {"n": 0}, "division by zero", 1, 26),
        ("program e(n: int) {\n  x := log(n - 1);\n}", {"n": 1}, "log of a non-positive", 2, 8),
        ("program e(n: int) {\n  a[0] := 1;\n  x := a[n];\n}", {"n": 1}, "unwritten element", 3, 8),
        ("program e(q: int[]) {\n  x := q[3];\n}", {"q": [1, 2]}, "out of range", 2, 8),
        ("program e(n: int) {\n  x ~ lap(0, n);\n}", {"n": 0}, "scale must be positive", 2, 14),
        ("program e(n: int) requires n > 2 { skip; }", {"n": 1}, "requires", 1, 28),
        ("program e(n: int) { skip; }", {}, "missing: n", 1, 9),
        ("program e(n: int) { skip; }", {"n": 0.5}, "must be an integer", 1, 11),
        ("program e(b: bool) { skip; }", {"b": 1}, "true or false", 1, 11),
        ("program e(n: int) ensures true fails 1 / (n - 1) { skip; }", {"n": 1}, "division by zero", 1, 38),
        ("program e(y: int) ensures independent(x, y) { x := y; }", {"y": 1}, "not a sampling property", 1, 27),
    ],
)
def test_errors_are_located(src, inputs, msg, line, col):
    with pytest.raises(TampError) as exc:
        simulate(src, inputs, runs=100)
    assert msg in str(exc.value)
    assert (exc.value.line, exc.value.col) == (line, col), str(exc.value)


def test_runaway_loop_is_stopped():
    with pytest.raises(TampError, match="still running"):
        simulate("program w() { x := 0; while (x >= 0) { x := x + 1; } }", {}, runs=10, max_iterations=1000)


def test_many_runs_are_simulated_in_chunks(monkeypatch):
    import tamp.simulation.runner as runner

    monkeypatch.setattr(runner, "CHUNK", 1000)
    src = """program c() ensures !x ensures P(y) >= 0 fails 0.5 { x ~ bern(0.2); y ~ bern(0.7); assume(!x || y); }"""
    r = simulate(src, {}, runs=10500, seed=9)
    assert r.total_runs == 10500
    kept_rate = 1 - 0.2 * 0.3
    assert abs(r.runs / 10500 - kept_rate) < 0.02
    assert r.term_counts[0][1] == r.runs
    assert abs(r.rate - 0.2 * 0.7 / kept_rate) < 0.03


def test_locals_outside_p_terms_are_rejected():
    with pytest.raises(TampError, match="outside P"):
        simulate("program c() ensures !x && P(x) >= 0 { x ~ bern(0.2); }", {}, runs=100)


def test_check_consistent_for_provers():
    from tamp.simulation import check_consistent

    src = "program c(p: real) ensures !x fails p { x ~ bern(p / 2); }"
    assert check_consistent(src, {"p": 0.5}).verdict == "consistent"
    with pytest.raises(AssertionError, match="refutes"):
        check_consistent(src, {"p": 0.5}, bound="p / 4")


def test_reading_a_variable_unassigned_on_some_runs_is_an_error():
    src = "program u() {\n  c ~ bern(0.5);\n  if (c) { v := 1; }\n  w := v + 1;\n}"
    with pytest.raises(TampError, match="'v' is read before it is assigned") as exc:
        simulate(src, {}, runs=100)
    assert (exc.value.line, exc.value.col) == (4, 8)


def test_quantifiers_with_per_run_ranges():
    src = """program q(n: int)
      ensures (exists j in 0..=k: j * j == k * k) && (forall j in k..n: a[j] == j)
      ensures sum(j in 0..=k: 1) == k + 1
    {
      for i in 0..n { a[i] := i; }
      k ~ unif(0, 4);
    }"""
    assert simulate(src, {"n": 6}, runs=2000).failures == 0
