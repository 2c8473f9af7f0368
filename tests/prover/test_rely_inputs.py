"""Fixing an input never loses a proof (issue 35, Rely users type ``--input r=1e-7``).

A claim proved with an input free is proved with the input fixed: when the proof at the fixed
value is not found, the free claim is proved and instantiated (:func:`tamp.api.prove_fixed`),
and the certificate records it (``inputs_free``) so that ``tamp check-proof`` re-checks the
free claim. False siblings stay unproved with the input fixed or free."""

from __future__ import annotations

import json

import pytest

import tamp
import tamp.api
from lang import ast as A
from tamp.api import certify, check_proof

THREE = """program three(n: int, r: real)
  rate r
  requires n >= 0 && 0 <= r && r <= 1
  reliability 1 - {k}*r*n
{{
  i := 0;
  s := 0;
  while (i < n) {{
    s := s +. 1;
    s := s +. 2;
    s := s +. 3;
    i := i + 1;
  }}
}}
"""


@pytest.mark.parametrize("r", ["0.5", "1e-7"])
def test_fixed_rate_keeps_the_proof(r):
    src = THREE.format(k=3)
    assert tamp.prove(src).verdict == "proved"
    res = tamp.prove(src, inputs={"r": float(r)})
    assert res.verdict == "proved", res.render_text()


def test_fixed_rate_and_size():
    res = tamp.prove(THREE.format(k=3), inputs={"r": 1e-7, "n": 1000})
    assert res.verdict == "proved", res.render_text()


def test_certificate_of_an_instantiated_proof_rechecks(monkeypatch):
    src = THREE.format(k=3)
    inputs = {"r": 0.5}
    real = tamp.api.prover.prove_program
    calls = []

    def fixed_attempt_fails(prog, bound=None, **kw):
        # the attempt at the fixed values (the first call) as if its proof were not found — the
        # expected-failure engine now proves this one directly, which would skip the fallback
        calls.append(prog.name)
        return real(prog, bound=A.num(0) if len(calls) == 1 else bound, **kw)

    monkeypatch.setattr(tamp.api.prover, "prove_program", fixed_attempt_fails)
    res = tamp.prove(src, inputs=inputs)
    assert res.verdict == "proved"
    cert = certify(res, inputs=inputs)
    assert len(calls) == 2  # the fixed attempt, then the free claim
    assert res.programs[0].parts[0].inputs_free
    assert cert["inputs_free"] == ["three"]
    assert "instantiation" in res.render_text()
    report = check_proof(cert, src, inputs=inputs)
    assert report.ok, report.reason


def test_free_proof_flag_is_checked_against_the_free_claim():
    """A certificate claiming a free proof is checked against the free claim: a forged
    certificate of a false free claim does not pass because of the fixed values."""
    false = THREE.format(k=2)
    true = THREE.format(k=3)
    cert = certify(tamp.prove(true, inputs={"r": 0.5}), inputs={"r": 0.5})
    cert = json.loads(json.dumps(cert))
    cert["inputs_free"] = ["three"]
    report = check_proof(cert, false, inputs={"r": 0.5})
    assert not report.ok


@pytest.mark.parametrize("inputs", [{}, {"r": 1e-7}, {"r": 0.001, "n": 50}])
def test_false_sibling_not_proved(inputs):
    """Three faults per iteration, a claim paying for two: false wherever 2*r*n < 1 (at n=50,
    r=0.001: Pr[fault] = 1 - 0.999^150 ≈ 0.139 > 0.1)."""
    res = tamp.prove(THREE.format(k=2), inputs=inputs, timeout=60)
    assert res.verdict != "proved", res.render_text()
