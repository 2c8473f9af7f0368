"""Certificates of the conjunct split (:mod:`tamp.certificate.conj_checker`,
:mod:`tamp.prover.conjuncts`): a proof re-checks from the source; a sure conjunct whose proof is
not of it, a rest proved with a larger bound, a dropped conjunct, a conjunct moved between the
parts and a changed number are rejected."""

from __future__ import annotations

import json

import pytest
from cert_testlib import ast, check, tampered

from lang.parser import parse
from tamp.certificate.format import FORMAT, VERSION, source_digest
from tamp.certificate.writer import conj_certificate
from tamp.prover.portfolio import Concentration, Conjuncts, prove_claim

SRC = """program det(n: int, o: real, t: real, len: real)
  requires n >= 1 && o >= 0 && o <= 1 && t > 0 && len > 0
  ensures  c <= n * o + t && busy == c * len && c >= 0
  fails    exp(-2 * t * t / n)
{
  c := 0;
  busy := 0;
  for i in 0..n {
    occ ~ bern(o);
    if (occ) { c := c + 1; busy := busy + len; }
  }
}
"""


@pytest.fixture(scope="module")
def made():
    prog = parse(SRC).programs[0]
    # the direct walk limited to concentration (which has no rule for `busy`): the split proves it
    result, _ = prove_claim(prog, None, None, "det.prob", SRC, strategies=[Concentration(), Conjuncts()])
    assert result.verdict == "proved", result.message
    return conj_certificate(result)


def _cert(conj: dict) -> dict:
    return json.loads(
        json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "file": "det.prob",
                "source_sha256": source_digest(SRC.encode()),
                "claim": {"bound": None, "inputs": {}},
                "programs": [],
                "conjuncts": [conj],
            }
        )
    )


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "det.prob"
    p.write_text(SRC)
    return p


def test_the_split_is_rechecked(made, path, tmp_path, capsys):
    cert = _cert(made)
    assert [ast_ for ast_ in cert["conjuncts"][0]["rest"]] == [ast("c <= n * o + t")]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_sure_proof_of_another_conjunct_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    sure = cert["conjuncts"][0]["sure"]
    sure[0]["proof"], sure[1]["proof"] = sure[1]["proof"], sure[0]["proof"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "SURE" in out, out


def test_a_conjunct_not_sure_is_rejected(made, path, tmp_path, capsys):
    # the chance conjunct claimed sure, with the rest's proof (a bound that is not 0)
    cert = tampered(_cert(made))
    c = cert["conjuncts"][0]
    c["sure"][0] = {"conjunct": c["rest"][0], "proof": c["proof"]}
    c["rest"] = [ast("busy == c * len")]
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and ("SURE" in out or "REST" in out), out


def test_a_larger_bound_for_the_rest_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    cert["conjuncts"][0]["proof"]["bound"] = ast("exp(-t * t / n)")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "REST" in out, out


def test_a_larger_bound_for_the_claim_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    cert["conjuncts"][0]["bound"] = ast("exp(-t * t / n)")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "the claim checked is" in out, out


def test_a_changed_number_in_a_sure_proof_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    cert["conjuncts"][0]["sure"][0]["proof"]["bound"] = ast("1")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "SURE" in out, out


def test_a_dropped_conjunct_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    del cert["conjuncts"][0]["sure"][1]
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "in neither part" in out, out


def test_an_empty_sure_part_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    cert["conjuncts"][0]["sure"] = []
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "nonempty" in out, out


def test_a_conjunct_moved_to_the_rest_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    c = cert["conjuncts"][0]
    moved = c["sure"].pop()
    c["rest"].append(moved["conjunct"])
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "REST" in out, out


def test_a_conjunct_not_in_the_postcondition_is_rejected(made, path, tmp_path, capsys):
    cert = tampered(_cert(made))
    cert["conjuncts"][0]["rest"].append(ast("c <= n"))
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "not a conjunct" in out, out
