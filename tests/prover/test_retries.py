"""Retry loops: termination by a probabilistic variant and Markov cores from the ranking
supermartingale V/ε (tamp/prover/expectation/retries.py), their certificates, and the soundness
traps (a chance that may be 0, a counter raised by 2, a variant that can rise, k/(w a) needed)."""

from __future__ import annotations

import copy

from support.certificates import check_proof, proved_certificate

from lang import ast as A
from lang.parser import parse, parse_expr
from lang.serialize import from_json, to_json
from tamp.prover import prove_program
from tamp.prover.expectation.retries import variant_candidates, variants

RDD = """
program rdd(k: int, w: real, a: real)
  requires k >= 1 && w > 0 && w <= 1 && a > 0
  ensures dials < a
  fails BOUND
{
  dials := 0;
  found := 0;
  while (found < k) {
    dials := dials + STEP;
    x ~ bern(w);
    if (x) { found := found + 1; }
  }
}
"""


def prove(src: str, timeout: float = 60):
    return prove_program(parse(src, "retry.prob").programs[0], source=src, path="retry.prob", timeout=timeout)


def rdd(bound: str, step: str = "1", requires: str = "w > 0") -> str:
    return RDD.replace("BOUND", bound).replace("STEP", step).replace("w > 0", requires)


def test_variants_read_off_the_condition_and_the_chances_off_the_coins():
    g = parse_expr("found < k && !done")
    assert variants(g) == [A.num(1), parse_expr("k - found")]
    body = parse("program p(w: real) { x ~ bern(w); }").programs[0].body
    pairs = variant_candidates(g, body, {"w"})
    assert (parse_expr("k - found"), parse_expr("w")) in pairs
    assert (A.num(1), parse_expr("1 - w")) in pairs


def test_k_successes_need_k_over_w_dials_on_average():
    res = prove(rdd("k / (w * a)"))
    assert res.verdict == "proved", res.render_text()


def test_one_over_w_a_for_k_successes_is_not_proved():
    assert prove(rdd("1 / (w * a)")).verdict != "proved"


def test_a_counter_raised_by_two_needs_twice_the_bound():
    assert prove(rdd("k / (w * a)", step="2")).verdict != "proved"
    assert prove(rdd("2 * k / (w * a)", step="2")).verdict == "proved"


def test_a_chance_that_may_be_zero_gives_no_termination():
    src = rdd("k / (w * a + 1)", requires="w >= 0")  # w = 0: the loop never ends (counted as failing)
    assert prove(src).verdict != "proved"


def test_a_variant_that_can_rise_is_not_accepted():
    # a walk that loses ground on a miss: for w < 1/2 it may never reach k, so "fails 0" is false
    src = """
program walk(k: int, w: real)
  requires k >= 1 && w > 0 && w < 1
  ensures found >= k
  fails 0
{
  found := 0;
  while (found < k) {
    x ~ bern(w);
    if (x) { found := found + 1; } else { found := found - 1; }
  }
}
"""
    assert prove(src).verdict != "proved"


def _variant_loop(cert):
    (exp,) = cert["expectation"]
    loops = [lp for lp in exp["loops"] if lp["termination"] == "variant"]
    assert loops, exp["loops"]
    return loops[0]


def test_the_variant_is_certified_and_a_changed_chance_or_variant_is_rejected(tmp_path, capsys):
    path = tmp_path / "rdd.prob"
    path.write_text(rdd("k / (w * a)"))
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    lp = _variant_loop(cert)
    assert from_json(lp["chance"]) == parse_expr("w")

    doubled = copy.deepcopy(cert)  # progress with chance 2w is not true for w > 1/2
    _variant_loop(doubled)["chance"] = to_json(parse_expr("2 * w"))
    code, out = check_proof(doubled, path, tmp_path, capsys)
    assert code != 0, out

    halved = copy.deepcopy(cert)  # (k - found)/2 drops by only 1/2 per success
    _variant_loop(halved)["measure"] = to_json(parse_expr("(k - found) / 2"))
    code, out = check_proof(halved, path, tmp_path, capsys)
    assert code != 0, out

    missing = copy.deepcopy(cert)
    del _variant_loop(missing)["chance"]
    code, out = check_proof(missing, path, tmp_path, capsys)
    assert code != 0, out


def test_a_capped_retry_inside_a_counted_loop_composes(tmp_path, capsys):
    src = """
program calls(n: int, c: int, r: real, a: real)
  requires n >= 1 && c >= 1 && r > 0 && r <= 1 && a > 0
  ensures calls < a
  fails BOUND
{
  calls := 0;
  for h in 0..n {
    answered := false;
    g := 0;
    while (g < c && !answered) {
      calls := calls + 1;
      x ~ bern(r);
      if (x) { answered := true; }
      g := g + 1;
    }
  }
}
"""
    path = tmp_path / "calls.prob"
    path.write_text(src.replace("BOUND", "n / (r * a)"))
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    assert prove(src.replace("BOUND", "n * (1 - r) / (r * a)")).verdict != "proved"
