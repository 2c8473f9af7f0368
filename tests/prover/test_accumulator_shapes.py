"""Accumulators of (noisy) values in the shapes users write (issue 18, item 1): a count clamped to
its range after the noise, a sum walked by a second counter, k elements per iteration (step k,
counting up or down), values clipped by two `if`s on a local before they are added (counting up
or down, Laplace or Gaussian noise), and a sliding-window sum.

Each true claim is proved and cross-checked with `tamp simulate` at two inputs; each false
variant is not proved (and `tamp simulate` refutes it at an input). Names, loop directions and
constants differ from the corpus programs of the same shapes on purpose."""

from __future__ import annotations

import pytest
import z3
from support.certificates import check_proof, proved_certificate
from support.shapes import assert_proved_and_simulated, assert_unproved_and_refuted, prove_text, variant

from lang import ast as A
from lang.parser import parse

CLAMPED_COUNT = """program clampCount(y: real[], m: int, c: real, eps: real, p: real)
  requires m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  0 <= r && r <= m && abs(r - sum(j in 0..m: y[j] < c ? 1 : 0)) <= 1 / eps * log(1 / p) / MARGIN
  fails    p
{
  cnt := 0;
  k := 0;
  while (k < m) {
    if (y[k] < c) {
      cnt := cnt + 1;
    }
    k := k + 1;
  }
  a ~ lap(cnt, 1 / eps);
  r := max(min(a, m), 0);
}"""

SECOND_COUNTER = """program twoCtr(y: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 0 && eps > 0 && 0 < p && p <= 1
  ensures  abs(r - sum(j in m..m + n: y[j])) <= 1 / eps * log(1 / p) / MARGIN
  fails    p
{
  t := 0;
  j := m;
  k := n;
  while (k > 0) {
    t := t + y[j];
    k := k - 1;
    j := j + 1;
  }
  r ~ lap(t, 1 / eps);
}"""

STEP_THREE = """program stepThree(y: real[], m: int, eps: real, p: real)
  requires m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  abs(avg - sum(j in 0..3 * m: y[j]) / (3 * m)) <= log(1 / p) / (3 * m * eps) / MARGIN
  fails    p
{
  acc := 0;
  i := 0;
  while (i < 3 * m) {
    acc := acc + y[i] + y[i + 1] + y[i + 2];
    i := i + 3;
  }
  noisy ~ lap(acc, 1 / eps);
  avg := noisy / (3 * m);
}"""

DOWN_TWO = """program downTwo(y: real[], m: int, eps: real, p: real)
  requires m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  abs(r - sum(j in 0..2 * m: y[j])) <= 1 / eps * log(1 / p) / MARGIN
  fails    p
{
  acc := 0;
  i := 2 * m;
  while (i > 0) {
    acc := acc + y[i - 1] + y[i - 2];
    i := i - 2;
  }
  r ~ lap(acc, 1 / eps);
}"""

CLIP_RANGE = """program clipTwo(y: real[], n: int, L: real, U: real, eps: real, p: real)
  requires n >= 1 && L < U && eps > 0 && 0 < p && p <= 1
  ensures  abs(r - sum(j in 0..n: max(min(y[j], U), L))) <= (U - L) / eps * log(1 / p) / MARGIN
  fails    p
{
  tot := 0;
  for k in 0..n {
    z := y[k];
    if (z < L) {
      z := L;
    }
    if (z > U) {
      z := U;
    }
    tot := tot + z;
  }
  r ~ lap(tot, (U - L) / eps);
}"""

CLIP_GAUSS_DOWN = """program clipGauss(y: real[], n: int, C: real, v: real, p: real)
  requires n >= 1 && C > 0 && v > 0 && 0 < p && p <= 1
  ensures  abs(r - sum(j in 0..n: min(max(y[j], -C), C))) <= sqrt(2 * v * log(2 / p)) / MARGIN
  fails    p
{
  tot := 0;
  k := n;
  while (k > 0) {
    k := k - 1;
    z := y[k];
    if (z > C) {
      z := C;
    }
    if (z < -C) {
      z := -C;
    }
    tot := tot + z;
  }
  r ~ gauss(tot, v);
}"""

WINDOW = """program window(y: real[], n: int, w: int)
  requires 1 <= w && w <= n
  ensures  t == sum(j in n - w + SHIFT..n: y[j])
  fails    0
{
  t := 0;
  i := 0;
  while (i < n) {
    t := t + y[i];
    if (i >= w) {
      t := t - y[i - w];
    }
    i := i + 1;
  }
}"""

ARR = [3, -1, 4, 1.5, 5, 9, 2, -6, 0.5]
SHAPES = {
    # name: (source, true variant's replacements, false variant's, two inputs, an input refuting the false one)
    "count_clamped_to_its_range": (
        CLAMPED_COUNT,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"y": ARR, "m": 9, "c": 2, "eps": 0.5, "p": 0.1}, {"y": [1], "m": 1, "c": 0, "eps": 1, "p": 0.5}],
        {"y": ARR, "m": 9, "c": 2, "eps": 0.2, "p": 0.1},
    ),
    "sum_walked_by_a_second_counter": (
        SECOND_COUNTER,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"y": ARR, "n": 5, "m": 2, "eps": 0.5, "p": 0.1}, {"y": [2.5, 1], "n": 1, "m": 1, "eps": 2, "p": 0.3}],
        {"y": ARR, "n": 5, "m": 2, "eps": 1, "p": 0.1},
    ),
    "three_elements_per_iteration": (
        STEP_THREE,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"y": ARR, "m": 3, "eps": 0.5, "p": 0.1}, {"y": [1, 2, 3], "m": 1, "eps": 2, "p": 0.3}],
        {"y": ARR, "m": 3, "eps": 1, "p": 0.1},
    ),
    "two_elements_per_iteration_counting_down": (
        DOWN_TWO,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"y": ARR[:8], "m": 4, "eps": 0.5, "p": 0.1}, {"y": [1, -2], "m": 1, "eps": 2, "p": 0.3}],
        {"y": ARR[:8], "m": 4, "eps": 1, "p": 0.1},
    ),
    "values_clipped_by_two_ifs_on_a_local": (
        CLIP_RANGE,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [
            {"y": ARR, "n": 9, "L": -1, "U": 3, "eps": 0.5, "p": 0.1},
            {"y": [7], "n": 1, "L": 0, "U": 1, "eps": 1, "p": 0.5},
        ],
        {"y": ARR, "n": 9, "L": -1, "U": 3, "eps": 1, "p": 0.1},
    ),
    "clipped_values_counted_down_with_gaussian_noise": (
        CLIP_GAUSS_DOWN,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"y": ARR, "n": 9, "C": 2, "v": 4, "p": 0.1}, {"y": [-7], "n": 1, "C": 1, "v": 1, "p": 0.5}],
        {"y": ARR, "n": 9, "C": 2, "v": 4, "p": 0.1},
    ),
    "sliding_window_sum": (
        WINDOW,
        {"SHIFT": "0"},
        {"SHIFT": "1"},
        [{"y": ARR, "n": 9, "w": 3}, {"y": [1.5, 2], "n": 2, "w": 2}],
        {"y": ARR, "n": 9, "w": 3},
    ),
}


prove = prove_text


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_true_claim_is_proved_and_cross_checked_by_simulation(name):
    src, good, _bad, inputs, _refute = SHAPES[name]
    assert_proved_and_simulated(variant(src, good), inputs)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_false_variant_is_not_proved_and_is_refuted(name):
    src, _good, bad, _inputs, refute = SHAPES[name]
    assert_unproved_and_refuted(variant(src, bad), refute)


@pytest.mark.parametrize("name", ["values_clipped_by_two_ifs_on_a_local", "three_elements_per_iteration"])
def test_the_proof_is_certified_and_rechecked(name, tmp_path, capsys):
    path = tmp_path / "shape.prob"
    path.write_text(variant(SHAPES[name][0], SHAPES[name][1]))
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


def test_sum_span_lemma_is_instantiated_for_sums_whose_ends_differ_by_a_literal():
    from axioms.lemmas import lemma_instances
    from lang.parser import parse_expr
    from tamp.prover.base.smt import Encoder, transcendental_apps

    enc = Encoder({"x": A.array_of(A.REAL), "i": A.INT, "s": A.REAL})
    env = enc.env0
    hyp = enc.expr(parse_expr("s == sum(j in 0..i: x[j]) && i >= 0"), env)
    goal = enc.expr(parse_expr("s + x[i] + x[i + 1] + x[i + 2] == sum(j in 0..i + 3: x[j])"), env)
    lemmas = lemma_instances(transcendental_apps(z3.And(hyp, goal)), enc)
    assert "sum-span" in {name for name, _ in lemmas}
    s = z3.Solver()
    s.add(hyp, *[lem for _n, lem in lemmas], z3.Not(goal))
    assert s.check() == z3.unsat
    # the lemma says nothing false: a wrong step (x[i + 3] instead of x[i + 2]) is not proved
    bad = enc.expr(parse_expr("s + x[i] + x[i + 1] + x[i + 3] == sum(j in 0..i + 3: x[j])"), env)
    lemmas = lemma_instances(transcendental_apps(z3.And(hyp, bad)), enc)
    s = z3.Solver()
    s.add(hyp, *[lem for _n, lem in lemmas], z3.Not(bad))
    assert s.check() == z3.sat


def test_the_window_and_the_unit_step_closed_forms_are_proposed():
    from tamp.cfa import build_cfa
    from tamp.prover.counting.recurrence import closed_form_candidates
    from tamp.prover.loops.prove import _loops
    from tamp.show import show_expr

    def cands(src):
        cfa = build_cfa(parse(src, "s.prob").programs[0], None, "s.prob", src)
        loops, _dag = _loops(cfa)
        return {show_expr(c) for c in closed_form_candidates(cfa, loops)}

    assert "t == sum(j$ in max(0, i - w)..i: y[j$])" in cands(variant(WINDOW, {"SHIFT": "0"}))
    assert "acc == sum(j$ in 0..i: y[j$])" in cands(variant(STEP_THREE, {"MARGIN": "1"}))
    # three elements per iteration, but not the three the counter steps over: no unit-step sum
    skewed = variant(STEP_THREE, {"MARGIN": "1", "y[i + 2]": "y[i + 3]"})
    assert not any("sum(j$ in 0..i: y[j$])" in c for c in cands(skewed))
