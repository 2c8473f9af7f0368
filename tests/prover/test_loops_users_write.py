"""Loop shapes users write (issue 18, items 1-3): accumulators whose closed form is inferred,
counters of any step, `!=` guards, counters moved at the top of the body, two counters, branches
on a sample that write an array element, arrays filled by one loop and scanned by another.

Each true claim is proved and cross-checked with `tamp simulate` at two inputs; each false
variant is not proved (and `tamp simulate` refutes it at an input)."""

from __future__ import annotations

import json

import pytest
from limits import FALSE_CLAIM_S
from support.shapes import assert_proved_and_simulated, assert_unproved_and_refuted, prove_text, variant

from tamp.simulation import simulate

NOISY_AVG = """program noisyAvg(x: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(r - sum(j in 0..n: x[j]) / n) <= 1 / eps * log(1 / p) / MARGIN
  fails p
{
  s := 0;
  i := 0;
  while (i < n) {
    s := s + x[i];
    i := i + 1;
  }
  r ~ lap(s / n, 1 / eps);
}"""

COUNT_BELOW = """program countBelow(x: real[], n: int, c: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(r - sum(j in 0..n: x[j] < c ? 1 : 0)) <= 1 / eps * log(1 / p) / MARGIN
  fails p
{
  u := 0;
  i := 0;
  while (i < n) {
    if (x[i] < c) { u := u + 1; }
    i := i + 1;
  }
  r ~ lap(u, 1 / eps);
}"""

EXACT_SUM = """program exactSum(x: real[], n: int)
  requires n >= 1
  ensures s == sum(j in 0..n: x[j])
  fails 0
{
  s := 0;
  i := START;
  while (i < n) {
    s := s + x[i];
    i := i + 1;
  }
}"""

HIST_ARGMAX = """program histMax(c: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall k in 0..n: c[b] >= c[k] - MARGIN / eps * log(n / p)
  fails p
{
  i := 0;
  while (i < n) {
    h[i] ~ lap(c[i], 1 / eps);
    i := i + 1;
  }
  best := h[0];
  b := 0;
  j := 1;
  while (j < n) {
    if (h[j] > best) {
      best := h[j];
      b := j;
    }
    j := j + 1;
  }
}"""

ABOVE_BRANCH = """program above(q: real[], n: int, T: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..n: (above[j] ==> q[j] >= T - M) && (!above[j] ==> q[j] <= T + M)
  fails p
{
  i := 0;
  while (i < n) {
    a ~ lap(q[i], 1 / eps);
    if (a > T) { above[i] := true; } else { above[i] := false; }
    i := i + 1;
  }
}""".replace("M", "1 / eps * log(n / p) / MARGIN")

STEP_TWO = """program stepTwo(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..n: abs(a[2 * j] - q[2 * j]) <= 1 / eps * log(n / p) / MARGIN
  fails p
{
  i := 0;
  while (i < 2 * n) {
    a[i] ~ lap(q[i], 1 / eps);
    i := i + 2;
  }
}"""

COUNTDOWN_NEQ = """program countdown(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..n: abs(a[j] - q[j]) <= 1 / eps * log(n / p) / MARGIN
  fails p
{
  i := n;
  while (i != 0) {
    i := i - 1;
    a[i] ~ lap(q[i], 1 / eps);
  }
}"""

TOP_INCREMENT = """program top(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 1..n + 1: abs(a[j] - q[j]) <= 1 / eps * log(n / p) / MARGIN
  fails p
{
  i := 0;
  while (i < n) {
    i := i + 1;
    a[i] ~ lap(q[i], 1 / eps);
  }
}"""

TWO_COUNTERS = """program two(q: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 0 && eps > 0 && 0 < p && p <= 1
  ensures forall j in m..m + n: abs(a[j] - q[j]) <= 1 / eps * log(n / p) / MARGIN
  fails p
{
  i := 0;
  k := m;
  while (i < n) {
    a[k] ~ lap(q[k], 1 / eps);
    k := k + 1;
    i := i + 1;
  }
}"""

ARR = [3, -1, 4, 1.5, 5, 9, 2]
SHAPES = {
    # name: (source, true variant's replacements, false variant's, two inputs, an input refuting the false one)
    "noisy_average": (
        NOISY_AVG,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"x": ARR, "n": 7, "eps": 0.5, "p": 0.1}, {"x": [2.5], "n": 1, "eps": 2, "p": 0.3}],
        {"x": ARR, "n": 7, "eps": 1, "p": 0.1},
    ),
    "count_in_loop_as_noise_mean": (
        COUNT_BELOW,
        {"MARGIN": "1"},
        {"MARGIN": "4"},
        [{"x": ARR, "n": 7, "c": 2, "eps": 0.5, "p": 0.1}, {"x": [1], "n": 1, "c": 0, "eps": 1, "p": 0.5}],
        {"x": ARR, "n": 7, "c": 2, "eps": 1, "p": 0.1},
    ),
    "exact_sum": (
        EXACT_SUM,
        {"START": "0"},
        {"START": "1"},
        [{"x": ARR, "n": 7}, {"x": [1.5, 2], "n": 2}],
        {"x": ARR, "n": 7},
    ),
    "histogram_then_argmax": (
        HIST_ARGMAX,
        {"MARGIN": "2"},
        {"MARGIN": "0"},
        [{"c": ARR, "n": 7, "eps": 1, "p": 0.1}, {"c": [0, 0, 0], "n": 3, "eps": 0.5, "p": 0.2}],
        {"c": [1, 1.2, 0.9], "n": 3, "eps": 1, "p": 0.1},
    ),
    "branch_writes_array_element": (
        ABOVE_BRANCH,
        {"MARGIN": "1"},
        {"MARGIN": "8"},
        [{"q": ARR, "n": 7, "T": 2, "eps": 1, "p": 0.1}, {"q": [0, 0], "n": 2, "T": 0, "eps": 0.5, "p": 0.3}],
        {"q": [1, 1, 1, 1], "n": 4, "T": 0, "eps": 1, "p": 0.1},
    ),
    "step_two": (
        STEP_TWO,
        {"MARGIN": "1"},
        {"MARGIN": "8"},
        [{"q": ARR + ARR, "n": 7, "eps": 1, "p": 0.1}, {"q": [1, 2], "n": 1, "eps": 0.5, "p": 0.3}],
        {"q": ARR + ARR, "n": 7, "eps": 1, "p": 0.1},
    ),
    "countdown_neq": (
        COUNTDOWN_NEQ,
        {"MARGIN": "1"},
        {"MARGIN": "8"},
        [{"q": ARR, "n": 7, "eps": 1, "p": 0.1}, {"q": [1], "n": 1, "eps": 0.5, "p": 0.3}],
        {"q": ARR, "n": 7, "eps": 1, "p": 0.1},
    ),
    "increment_at_top": (
        TOP_INCREMENT,
        {"MARGIN": "1"},
        {"MARGIN": "8"},
        [{"q": ARR + [0], "n": 7, "eps": 1, "p": 0.1}, {"q": [1, 2], "n": 1, "eps": 0.5, "p": 0.3}],
        {"q": ARR + [0], "n": 7, "eps": 1, "p": 0.1},
    ),
    "two_counters": (
        TWO_COUNTERS,
        {"MARGIN": "1"},
        {"MARGIN": "8"},
        [{"q": ARR, "n": 4, "m": 2, "eps": 1, "p": 0.1}, {"q": [1, 2], "n": 1, "m": 1, "eps": 0.5, "p": 0.3}],
        {"q": ARR, "n": 4, "m": 2, "eps": 1, "p": 0.1},
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


def test_the_accumulator_closed_form_is_the_loop_head_label():
    r = prove(variant(NOISY_AVG, {"MARGIN": "1"}))
    labels = {str(c) for n in r.automata[0].nodes.values() for c in n.label}
    text = " ".join(labels)
    assert "Sum" in text and "j$" in text, text  # s == sum(j$ in 0..i: x[j$]) was inferred and kept


def test_a_polynomial_closed_form_is_summed_by_sympy():
    # z == i*(i-1)/2 and w == i: z >= 0 with no user invariant
    src = """program grow(n: int)
  requires n >= 0
  ensures z >= 0 && 2 * z == n * (n - 1)
  fails 0
{
  z := 0;
  w := 0;
  i := 0;
  while (i < n) {
    z := z + w;
    w := w + 1;
    i := i + 1;
  }
}"""
    assert prove(src).verdict == "proved"
    assert prove(src.replace("2 * z == n * (n - 1)", "2 * z == n * (n + 1)")).verdict != "proved"


def test_the_neq_ranking_and_its_invariant_are_certified_and_tampering_is_rejected(tmp_path, capsys):
    from tamp.api import prove as api_prove
    from tamp.certificate.writer import file_certificate
    from tamp.cli import main

    path = tmp_path / "countdown.prob"
    path.write_text(variant(COUNTDOWN_NEQ, {"MARGIN": "1"}))
    res = api_prove(str(path))
    assert res.verdict == "proved", res.render_text()
    cert = json.loads(json.dumps(file_certificate(res, path.read_bytes(), None, None)))
    (ranking,) = cert["programs"][0]["termination"]
    assert ranking["invariant"] is not None

    def check(c):
        out = tmp_path / "cert.json"
        out.write_text(json.dumps(c))
        capsys.readouterr()
        code = main(["check-proof", str(out), str(path)])
        return code, capsys.readouterr().out

    assert check(cert)[0] == 0
    from lang.parser import parse_expr
    from lang.serialize import to_json

    ranking["invariant"] = None  # without i >= 0 the rank i - 0 is not bounded below under i != 0
    code, out = check(cert)
    assert code != 0 and "BOUNDED" in out, out
    ranking["invariant"] = to_json(parse_expr("i >= 1"))  # false after the last iteration
    code, out = check(cert)
    assert code != 0 and ("INDUCTIVE" in out or "ENTRY" in out), out


def test_an_unknown_after_a_loop_names_the_loop_and_the_unrelated_variable():
    # w := w * w + 1 has no closed form: nothing relates z to the iterations, and the answer says so
    src = """program grow(n: int)
  requires n >= 0
  ensures z >= 0
  fails 0
{
  z := 0;
  w := 0;
  i := 0;
  while (i < n) {
    z := z + w;
    w := w * w + 1;
    i := i + 1;
  }
}"""
    r = prove(src)
    assert r.verdict == "unknown"
    assert r.failure is not None and r.failure.stuck_at == 9
    assert "no invariant relating z to the iterations of the loop" in r.failed_trace, r.failed_trace
    assert prove(src.replace("while (i < n)", "while (i < n) invariant w >= 0")).verdict == "proved"


def test_an_inner_loop_count_is_summed_into_the_outer_closed_form():
    # c after i outer iterations is sum_{t<i} (n - t - 1); the inner head starts from it
    src = """program triangle(n: int)
  requires n >= 0
  ensures 2 * c == n * (n - 1)
  fails 0
{
  c := 0;
  for i in 0..n {
    for j in i + 1..n {
      c := c + 1;
    }
  }
}"""
    assert prove(src).verdict == "proved"
    assert prove(src.replace("n * (n - 1)", "n * (n + 1)")).verdict != "proved"
    for n in (0, 5):
        assert simulate(src, {"n": n}, runs=50, seed=1).ci[0] <= 0


def test_a_triangular_nest_costs_the_sum_of_its_inner_loops():
    src = """program pairs(n: int, r: real)
  requires n >= 1 && 0 <= r && r <= 1
  ensures !bad
  fails BOUND
{
  bad := false;
  for i in 0..n {
    for j in i + 1..n {
      c ~ bern(r);
      bad := bad || c;
    }
  }
}"""
    good = src.replace("BOUND", "r * n * (n - 1) / 2")
    assert prove(good).verdict == "proved"
    for inp in ({"n": 4, "r": 0.05}, {"n": 1, "r": 0.5}):
        s = simulate(good, inp, runs=4000, seed=3)
        assert s.ci[0] <= float(s.bound_value)
    bad = src.replace("BOUND", "r * n")
    assert prove(bad, timeout=FALSE_CLAIM_S).verdict != "proved"
    s = simulate(bad, {"n": 6, "r": 0.05}, runs=4000, seed=3)
    assert s.ci[0] > float(s.bound_value)


def test_an_index_scan_of_a_noisy_histogram_proves():
    # if (h[k] > h[mode]) { mode := k; }: forall t in 0..k: h[mode] >= h[t] is inferred
    src = """program histArgmax(cnt: real[], m: int, eps: real, p: real)
  requires m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..m: cnt[mode] >= cnt[j] - MARGIN / eps * log(m / p)
  fails p
{
  i := 0;
  while (i < m) {
    h[i] ~ lap(cnt[i], 1 / eps);
    i := i + 1;
  }
  mode := 0;
  k := 1;
  while (k < m) {
    if (h[k] > h[mode]) {
      mode := k;
    }
    k := k + 1;
  }
}"""
    good = src.replace("MARGIN", "2")
    assert prove(good).verdict == "proved"
    for inp in ({"cnt": ARR, "m": 7, "eps": 1, "p": 0.1}, {"cnt": [0, 0], "m": 2, "eps": 0.5, "p": 0.3}):
        s = simulate(good, inp, runs=4000, seed=5)
        assert s.ci[0] <= float(s.bound_value)
    bad = src.replace("MARGIN", "0")
    assert prove(bad, timeout=FALSE_CLAIM_S).verdict != "proved"
    s = simulate(bad, {"cnt": [1, 1.2, 0.9], "m": 3, "eps": 1, "p": 0.1}, runs=4000, seed=5)
    assert s.ci[0] > float(s.bound_value)
