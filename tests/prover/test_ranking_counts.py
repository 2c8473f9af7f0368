"""Ranking functions as iteration counts (tamp/prover/counting/rank_count.py): a loop with a decreasing
measure (``hi - lo``, ``w``, ``k`` counting down with a data-dependent exit, ``m - 1`` falling by
the work of an inner loop) is a counted loop for the failure bound, and the count is checked
(STEP on every edge of the failure automaton) and certified. Each shape has a false variant
that must stay unknown."""

import json

import pytest

from lang.parser import parse
from lang.walk import free_vars
from tamp.prover import prove_program

SEARCH = """
program searchLR(cnt: real[], s: int, W: int, t: real, eps: real, p: real)
  requires W >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  left == right
  ensures  left == s || cnt[left - 1] < t + 2 / eps * log(W / p)
  ensures  right == s + W || cnt[right] >= t - 2 / eps * log(W / p)
  fails    p
{
  left := s;
  right := s + W;
  while (right > left) {
    m := (left + right) div 2;
    c ~ lap(cnt[m], 2 / eps);
    if (c >= t) {
      right := m;
    } else {
      left := m + 1;
    }
  }
}
"""
# without the union bound over the W comparisons: each may err with probability p/2
SEARCH_FALSE = SEARCH.replace("log(W / p)", "log(1 / p)").replace("searchLR", "searchLRFalse")

SCAN_DOWN = """
program scanDown(q: real[], n: int, T: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  k == 0 || q[k - 1] >= T - 1 / eps * log(n / p)
  fails    p
{
  k := n;
  go := true;
  while (go && k > 0) {
    x ~ lap(q[k - 1], 1 / eps);
    if (x < T) {
      k := k - 1;
    } else {
      go := false;
    }
  }
}
"""
SCAN_DOWN_FALSE = SCAN_DOWN.replace("log(n / p)", "log(1 / p)").replace("scanDown", "scanDownFalse")

HALVING = """
program halveSteps(q: real[], W: int, eps: real, p: real)
  requires W >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  steps <= W
  ensures  forall j in 0..steps: abs(a[j] - q[j]) <= 1 / eps * log(W / p)
  fails    p
{
  width := W;
  steps := 0;
  while (width > 0) {
    width := width div 2;
    a[steps] ~ lap(q[steps], 1 / eps);
    steps := steps + 1;
  }
}
"""
# at W = 1 the loop runs once: steps = 1, never < 1
HALVING_FALSE = HALVING.replace("steps <= W", "steps < W").replace("halveSteps", "halveStepsFalse")

FOLD = """
program foldHalves(x: real[], n: int, r: real)
  rate        r
  requires    n >= 1 && 0 <= r && r <= 1
  reliability 1 - r * (n - 1)
{
  for i in 0..n {
    b[i] := x[i];
  }
  m := n;
  while (m > 1) {
    h := m div 2;
    for i in 0..h {
      b[i] := b[i] +. b[m - 1 - i];
    }
    m := m - h;
  }
}
"""
# n - 1 unreliable additions happen: at n = 2 one, which fails with probability r > 0 = r (n - 2)
FOLD_FALSE = FOLD.replace("r * (n - 1)", "r * (n - 2)").replace("foldHalves", "foldHalvesFalse")

SHIFT_DOWN = """
program shiftDown(a: real[], n: int, r: real)
  rate        r
  requires    n >= 1 && 0 <= r && r <= 1
  reliability 1 - r * n * (n - 1) / 2
{
  for i in 0..n {
    b[i] := a[i];
  }
  for i in 1..n {
    key := b[i];
    k := i;
    moving := true;
    while (moving && k > 0) {
      d := b[k - 1] -. key;
      if (d > 0) {
        b[k] := b[k - 1];
        k := k - 1;
      } else {
        moving := false;
      }
    }
    b[k] := key;
  }
}
"""
# a reversed array makes round i compare i times: n (n - 1) / 2 comparisons, not n - 1
SHIFT_DOWN_FALSE = SHIFT_DOWN.replace("r * n * (n - 1) / 2", "r * (n - 1)").replace("shiftDown", "shiftDownFalse")

# a lower bound by halving widths (std::lower_bound): at most 1 + log2 n comparisons, checked by
# the log count of the rank len (each iteration at least halves it)
LOWER_BOUND = """
program lowerBound(a: real[], n: int, key: real, r: real)
  rate        r
  requires    n >= 1 && 0 <= r && r <= 1
  ensures     0 <= first && first <= n
  reliability 1 - r * (1 + log(n) / log(2))
{
  first := 0;
  len := n;
  while (len > 0) {
    half := len div 2;
    d := a[first + half] -. key;
    if (d < 0) {
      first := first + half + 1;
      len := len - half - 1;
    } else {
      len := half;
    }
  }
}
"""
# a linear scan claimed logarithmic: its rank falls by 1, not by half, so the log count fails
# STEP; at n = 16, r = 0.1 and every a[j] < key it compares 16 times: 1 - 0.9^16 = 0.81 > 0.5
SCAN_LOG_FALSE = """
program scanClaimedLog(a: real[], n: int, key: real, r: real)
  rate        r
  requires    n >= 1 && 0 <= r && r <= 1
  ensures     0 <= lo && lo <= n
  reliability 1 - r * (1 + log(n) / log(2))
{
  lo := 0;
  hi := n;
  while (lo < hi) {
    d := a[lo] -. key;
    if (d < 0) {
      lo := lo + 1;
    } else {
      hi := lo;
    }
  }
}
"""

# a scan whose step depends on a sample (i := i + 2 or i + 1): no counter, the rank n - i counts
SKIP_SCAN = """
program skipScan(q: real[], n: int, T: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  abs(a - q[j]) <= 1 / eps * log(n / p)
  fails    p
{
  i := 0;
  j := 0;
  a := q[0];
  while (i < n) {
    a ~ lap(q[i], 1 / eps);
    j := i;
    if (a > T) {
      i := i + 2;
    } else {
      i := i + 1;
    }
  }
}
"""
# the last draw misses by more than (1/eps) ln(1/(4p)) with probability 4p > p
SKIP_SCAN_FALSE = SKIP_SCAN.replace("log(n / p)", "log(1 / (4 * p))").replace("skipScan", "skipScanFalse")

# `lo := mid` does not move lo when hi = lo + 1: no rank falls, the loop may run forever
STUCK = """
program stuckSearch(cdf: real[], R: int, t: real, eps: real, p: real)
  requires R >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  lo <= hi
  fails    p
{
  lo := 0;
  hi := R;
  while (lo < hi) {
    mid := (lo + hi) div 2;
    c ~ lap(cdf[mid], 1 / eps);
    if (c < t) {
      lo := mid;
    } else {
      hi := mid;
    }
  }
}
"""


def _prove(src: str):
    return prove_program(parse(src).programs[0], source=src, timeout=90)


@pytest.mark.parametrize(
    "src",
    [SEARCH, SCAN_DOWN, HALVING, FOLD, SHIFT_DOWN, LOWER_BOUND, SKIP_SCAN],
    ids=lambda s: s.split()[1].split("(")[0],
)
def test_loops_counted_by_a_rank_are_proved(src):
    r = _prove(src)
    assert r.verdict == "proved", r.render_text()
    assert any(getattr(a, "rank", None) is not None for a in r.rankings)


@pytest.mark.parametrize(
    "src",
    [
        SEARCH_FALSE,
        SCAN_DOWN_FALSE,
        HALVING_FALSE,
        FOLD_FALSE,
        SHIFT_DOWN_FALSE,
        SCAN_LOG_FALSE,
        SKIP_SCAN_FALSE,
        STUCK,
    ],
    ids=lambda s: s.split()[1].split("(")[0],
)
def test_false_variants_stay_unknown_and_name_a_line(src):
    r = _prove(src)
    assert r.verdict == "unknown"
    assert "line" in r.render_text() or ".prob:" in r.render_text() or ":" in r.message


def test_the_false_variants_are_false():
    sim = pytest.importorskip("tamp.simulation")
    s = sim.simulate(FOLD_FALSE, {"x": [1.0, 2.0], "n": 2, "r": 0.5}, runs=4000, seed=5)
    assert s.ci[0] > float(s.bound_value)
    s = sim.simulate(HALVING_FALSE, {"q": [0.0], "W": 1, "eps": 1.0, "p": 0.1}, runs=2000, seed=5)
    assert s.ci[0] > float(s.bound_value)
    s = sim.simulate(SKIP_SCAN_FALSE, {"q": [0.0], "n": 1, "T": 100.0, "eps": 1.0, "p": 0.1}, runs=4000, seed=5)
    assert s.ci[0] > float(s.bound_value)
    s = sim.simulate(SCAN_LOG_FALSE, {"a": [0.0] * 16, "n": 16, "key": 1.0, "r": 0.1}, runs=4000, seed=5)
    assert s.ci[0] > float(s.bound_value)


@pytest.mark.parametrize("src", [SEARCH, FOLD, LOWER_BOUND], ids=["search", "fold", "lower_bound"])
def test_ranked_counts_are_certified_and_a_wrong_count_is_rejected(src, tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate

    path = tmp_path / "ranked.prob"
    path.write_text(src)
    cert = proved_certificate(path)

    def check(c):
        return check_proof(c, path, tmp_path, capsys)[0]

    assert check(cert) == 0
    # the count capped from below by its entry value instead of from above (max for min): the
    # loop's κ then overspends the bound, and the re-check must say so
    changed = 0
    for aut in cert["programs"][0]["automata"]:
        for node in aut["nodes"]:
            k = json.dumps(node["kappa"])
            if '"min"' in k:
                node["kappa"] = json.loads(k.replace('"min"', '"max"'))
                changed += 1
    assert changed
    assert check(cert) != 0


def test_the_rank_count_reads_the_entry_value():
    from lang import ast as A
    from tamp.cfa import build_cfa
    from tamp.prover.counting.rank_count import rank_count

    cfa = build_cfa(parse(SEARCH).programs[0], path="s.prob", source=SEARCH)
    h = cfa.loop_heads[0]
    rank = A.Binary("-", A.Var("right"), A.Var("left"))
    rc = rank_count(cfa, h, rank, A.Binary(">", A.Var("right"), A.Var("left")))
    assert rc is not None
    assert set(free_vars(rc.start)) == {"s", "W"}
    assert set(free_vars(rc.done())) == {"s", "W", "left", "right"}
