"""The library API at the top level: every command is a function of ``tamp`` that returns a
result object (``tamp.check``, ``tamp.simulate``, ``tamp.prob``, ``tamp.certify`` with
``tamp.check_proof``), with a one-line ``repr`` and a notebook view."""

from __future__ import annotations

import json

import pytest

import tamp
from lang.errors import TampError

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures  !y
  fails    p
{ y ~ bern(p); }
"""

TWO = (
    COIN
    + """
program twice(p: real)
  requires 0 < p && p <= 1
  ensures  !y && !z
  fails    2 * p
{ y ~ bern(p); z ~ bern(p); }
"""
)


def test_submodule_imports_do_not_hide_the_functions():
    import tamp.probability  # noqa: F401  (the engine packages no longer share the functions' names)
    import tamp.simulation  # noqa: F401

    assert callable(tamp.simulate) and callable(tamp.prob) and callable(tamp.check)
    assert tamp.simulate.__module__ == "tamp.api" and tamp.prob.__module__ == "tamp.api"
    for name in tamp.__all__:
        assert getattr(tamp, name) is not None


def test_check_lists_programs_types_and_kinds(tmp_path):
    f = tmp_path / "two.prob"
    f.write_text(TWO)
    c = tamp.check(str(f))
    assert repr(c) == f"<CheckedFile {f}: ok (2 programs: coin, twice)>"
    assert [p.name for p in c.programs] == ["coin", "twice"]
    assert c.programs[1].params == {"p": "real"} and c.programs[1].locals == {"y": "bool", "z": "bool"}
    assert {p.kind for p in c.programs} == {"failure-bound"}
    assert c.to_json()["programs"][0]["name"] == "coin"
    html = c._repr_html_()
    assert "<table" in html and "twice" in html and "z: bool" in html


def test_check_raises_a_located_error():
    with pytest.raises(TampError) as e:
        tamp.check(COIN.replace("!y", "!w"))
    assert e.value.line == 3 and "w" in str(e.value)


def test_simulate_one_program_and_its_errors():
    r = tamp.simulate(COIN, {"p": 0.2}, runs=20000, seed=3)
    assert r.verdict == "consistent" and r.runs == 20000
    assert r.ci[0] <= 0.2 <= r.ci[1]
    assert repr(r).startswith("<SimResult coin: consistent")
    # a false claim (bound half the real rate) is refuted
    bad = tamp.simulate(COIN, {"p": 0.2}, runs=20000, seed=3, bound="p / 2")
    assert bad.verdict == "refuted"
    with pytest.raises(TampError, match="choose one with program="):
        tamp.simulate(TWO, {"p": 0.2})
    assert tamp.simulate(TWO, {"p": 0.2}, runs=2000, program="twice").program == "twice"
    with pytest.raises(TampError, match="did you mean 'p'"):
        tamp.simulate(COIN, {"pp": 0.2})
    with pytest.raises(TampError):
        tamp.simulate(COIN, {"p": True})  # a bool for a real parameter


def test_prob_decides_probability_specifications():
    src = "program c(q: real) requires 0 <= q && q <= 1 ensures P(x) >= 0.2 { x ~ bern(q); }"
    r = tamp.prob(src, {"q": 0.25})
    assert r.verdict == "proved" and r.programs[0].kind == "probability"
    assert r.programs[0].to_json()["terms"][0]["value"] == "1/4"
    assert tamp.prob(src, {"q": 0.1}).verdict == "violated"
    assert "<" in r._repr_html_()
    with pytest.raises(TampError, match="no probability specification"):
        tamp.prob(COIN)


def test_certify_and_check_proof_round_trip(tmp_path):
    res = tamp.prove(COIN)
    cert = tamp.certify(res)
    report = tamp.check_proof(cert, COIN)
    assert report.ok and report.obligations > 0 and report.verdict == "ok"
    assert repr(report).startswith("<CheckReport ok:")
    assert "coin" in report._repr_html_()
    # the same through files
    src, out = tmp_path / "coin.prob", tmp_path / "coin.json"
    src.write_text(COIN)
    out.write_text(json.dumps(tamp.certify(tamp.prove(str(src)))))
    assert tamp.check_proof(str(out), str(src)).ok


def test_check_proof_rejects_other_source_and_a_tampered_certificate():
    cert = tamp.certify(tamp.prove(COIN))
    other = tamp.check_proof(cert, COIN.replace("fails    p", "fails    p / 2"))
    assert not other.ok and "different source" in other.reason
    tampered = json.loads(json.dumps(cert))
    tampered["claim"]["bound"] = "p / 2"
    assert not tamp.check_proof(tampered, COIN, bound="p / 2").ok
    with pytest.raises(TampError, match="malformed certificate"):
        tamp.check_proof({"format": "nonsense"}, COIN)


def test_certify_needs_a_result_from_prove():
    res = tamp.prove(COIN)
    res.source = None
    with pytest.raises(TampError, match="no source text"):
        tamp.certify(res)


def test_an_imported_model_shows_as_a_compact_card():
    from pathlib import Path

    mlp = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "mlp.onnx"
    m = tamp.import_model(str(mlp))
    assert repr(m).startswith("<ImportedModel mlp (onnx): 6 inputs")
    card = m._repr_html_()
    assert len(card) < 30_000 and "6 inputs" in card and "2 classes" in card
    assert "more lines (the whole program is `.text`)" in card and len(m.text) > len(card)
