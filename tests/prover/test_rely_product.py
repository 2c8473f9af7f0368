"""Rely's product bound (issue 35): Pr[no fault] >= (1 - r)^N when the reliable execution performs
at most N unreliable operations (:mod:`tamp.prover.reliability.product`, :mod:`tamp.cfa.reliable`),
certified and re-checked by :mod:`tamp.certificate.product_checker`. False siblings (N one too
small) are not proved; a certificate whose count or counting proof is changed is rejected."""

from __future__ import annotations

import json

import pytest

import tamp
from lang import ast as A
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.api import certify, check_proof
from tamp.certificate.format import source_digest

LOOP = """program prod(n: int, r: real)
  rate r
  requires n >= 0 && 0 <= r && r < 1
  reliability exp({k} * n * log(1 - r))
{{
  i := 0;
  s := 0;
  while (i < n) {{
    s := s +. 1;
    s := s *. 2;
    s := s -. 3;
    i := i + 1;
  }}
}}
"""

STRAIGHT = """program straight(a: real, b: real, r: real)
  rate r
  requires 0 <= r && r < 1
  fails 1 - exp(log(1 - r) * {k})
  ensures !failed
{{
  x := a *. b +. a;
  if (x > 0) {{
    y := x -. b *. 2;
  }} else {{
    y := x;
  }}
}}
"""

NESTED = """program matvec(n: int, m: int, r: real)
  rate r
  requires n >= 1 && m >= 1 && 0 <= r && r < 1
  reliability exp({k} * log(1 - r))
{{
  i := 0;
  while (i < n) {{
    acc := 0;
    j := 0;
    while (j < m) {{
      acc := acc +. i *. j;
      j := j + 1;
    }}
    i := i + 1;
  }}
}}
"""


def _part(res):
    return res.programs[0].parts[0]


@pytest.mark.parametrize("src", [LOOP.format(k=3), STRAIGHT.format(k=4), NESTED.format(k="2 * n * m")])
def test_product_claims_proved_and_certified(src):
    res = tamp.prove(src, timeout=120)
    assert res.verdict == "proved", res.render_text()
    assert "product rule" in res.render_text()
    cert = certify(res)
    assert len(cert["product"]) == 1 and not cert["programs"]
    report = check_proof(cert, src)
    assert report.ok, report.reason


@pytest.mark.parametrize("src", [LOOP.format(k=2), STRAIGHT.format(k=3), NESTED.format(k="2 * n * m - 1")])
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_false_siblings_not_proved(src):
    """One operation too few in the count: false for every 0 < r < 1 (on the path that performs
    them all: the loops run n (times m) times, x > 0 for a = 1, b = 1)."""
    assert tamp.prove(src, timeout=60).verdict != "proved"


def test_product_with_fixed_inputs():
    res = tamp.prove(LOOP.format(k=3), inputs={"r": 1e-7, "n": 1000}, timeout=120)
    assert res.verdict == "proved", res.render_text()
    cert = certify(res, inputs={"r": 1e-7, "n": 1000})
    assert check_proof(cert, LOOP.format(k=3), inputs={"r": 1e-7, "n": 1000}).ok


def test_a_claim_with_more_than_failed_is_not_a_product_claim():
    claim = "ensures !failed && i >= 0\n  fails 1 - exp(3 * n * log(1 - r))"
    src = LOOP.format(k=3).replace("reliability exp(3 * n * log(1 - r))", claim)
    res = tamp.prove(src, timeout=60)
    assert res.verdict != "proved"


def test_a_proof_of_a_larger_count_does_not_check_a_smaller_claim():
    """The certificate of the true claim (3n), bound to the source of the false one (2n) and
    naming its count: the counting claim rebuilt from that source has the bound ``ρ * (2 * n)``,
    which the counting proof does not prove."""
    true, false = LOOP.format(k=3), LOOP.format(k=2)
    cert = json.loads(json.dumps(certify(tamp.prove(true))))
    cert["source_sha256"] = source_digest(false.encode("utf-8"))
    fake = cert["product"][0]
    fake["count"] = to_json(parse_expr("2 * n"))
    fake["bound"] = to_json(parse_expr("1 - exp(2 * n * log(1 - r))"))
    report = check_proof(cert, false)
    assert not report.ok
    assert "$rho * (2 * n)" in report.reason


def test_a_changed_count_is_rejected():
    src = LOOP.format(k=3)
    cert = json.loads(json.dumps(certify(tamp.prove(src))))
    cert["product"][0]["count"] = to_json(parse_expr("2 * n"))
    report = check_proof(cert, src)
    assert not report.ok and "CLAIM" in report.reason


def test_a_counting_proof_without_its_invariants_is_rejected():
    src = LOOP.format(k=3)
    cert = json.loads(json.dumps(certify(tamp.prove(src))))
    for node in cert["product"][0]["counting"]["automata"][0]["nodes"]:
        node["lambda"] = to_json(A.BoolLit(True))
    assert not check_proof(cert, src).ok


def test_rate_must_stay_below_one():
    src = LOOP.format(k=3).replace("0 <= r && r < 1", "0 <= r && r <= 1 && r != 1")
    assert tamp.prove(src, timeout=60).verdict == "proved"  # r != 1 with r <= 1 is r < 1


def test_no_product_reason_for_programs_without_unreliable_operations():
    """A product-shaped bound on explicit coin flips is not the product rule's (no unreliable
    operation): its unknown does not mention the rule."""
    src = """program coins(m: int, r: real)
  requires m >= 0 && 0 <= r && r < 1
  ensures !bad
  fails 1 - exp(m * log(1 - r))
{
  bad := false;
  i := 0;
  while (i < m) {
    f ~ bern(r);
    bad := bad || f;
    i := i + 1;
  }
}
"""
    res = tamp.prove(src, timeout=60)
    assert "product rule" not in res.render_text()
