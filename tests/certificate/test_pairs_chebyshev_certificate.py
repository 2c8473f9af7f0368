"""Certificates of the session-23 "pairs" rules: the union bound over pairs finished with the
sum lemmas (``sum-mono``, :func:`axioms.lemmas.sum_order_lemmas`) and the Chebyshev axiom of
one draw (:mod:`axioms.chebyshev`). ``check-proof`` re-derives the axiom instance from its
family and parameter and re-decides every obligation; a changed number is rejected."""

from __future__ import annotations

import json

from cert_testlib import BENCH, ast, check, make_certificate, tampered

import axioms
from lang.parser import parse_expr
from lang.serialize import from_json, to_json

DEV = BENCH / "prover4" / "dev"
BITS = DEV / "blind9" / "evolutionary" / "critical_bits.prob"
BEAM = DEV / "blind9" / "robotics" / "beam_max_reading.prob"
LAP = DEV / "pairs" / "lap_dropout.prob"


def _axiom_edges(cert: dict):
    for a in cert["programs"][0]["automata"]:
        for e in a.get("edges", ()):
            if isinstance(e, dict) and e.get("axiom") and e["axiom"].get("family") == "chebyshev":
                yield e


def _restate(e: dict, family: str, param: str) -> None:
    """The edge's axiom as ``family`` with ``param``, its bad event, cost and side conditions
    consistent with them (as an adversary would write it): only the obligations can reject it."""
    fam = next(f for f in axioms.all_families() if f.name == family)
    stmt = from_json(e["stmt"])
    inst = fam.instantiate(tuple(stmt.targets), stmt.dist, parse_expr(param))
    ax = e["axiom"]
    ax["family"] = ax["parts"]["family"] = family
    ax["param"] = ax["parts"]["param"] = {"expr": ast(param)}
    ax["bad"], ax["cost"] = to_json(inst.bad), to_json(inst.cost)
    ax["side"] = [to_json(x) for x in inst.side]


def test_the_pairs_proof_is_rechecked(tmp_path, capsys):
    cert = make_certificate(BITS)
    assert cert["linearity"][0]["rule"] == "pairs"
    code, out = check(cert, BITS, tmp_path, capsys)
    assert code == 0, out


def test_a_smaller_pairs_threshold_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(BITS))
    c["linearity"][0]["threshold"] = ast("3")  # a smaller bound's share, but flips < 3 is not flips <= 1
    code, out = check(c, BITS, tmp_path, capsys)
    assert code == 3 and "malformed" not in out, out


def test_a_smaller_variance_of_the_count_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(BITS))
    c["linearity"][0]["variance"] = ast("0")
    code, out = check(c, BITS, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_the_chebyshev_proofs_are_rechecked(tmp_path, capsys):
    for path in (BEAM, LAP):
        cert = make_certificate(path)
        assert list(_axiom_edges(cert)), json.dumps(cert)[:500]
        code, out = check(cert, path, tmp_path, capsys)
        assert code == 0, out


def test_a_larger_deviation_than_the_share_pays_for_is_rejected(tmp_path, capsys):
    """The parameter v/(4t²) costs less but excuses only |z - ztrue| >= 2t: the run with
    t <= |z - ztrue| < 2t fails the postcondition unexcused."""
    c = tampered(make_certificate(BEAM))
    for e in _axiom_edges(c):
        _restate(e, "chebyshev", "v / (4 * t * t)")
    code, out = check(c, BEAM, tmp_path, capsys)
    assert code == 3 and "malformed" not in out, out


def test_a_bad_event_with_a_wrong_variance_is_rejected(tmp_path, capsys):
    """The Laplace draw's variance is 2b²; a bad event written with b² (a smaller deviation
    excused at the same cost) is not the axiom's instance."""
    c = tampered(make_certificate(LAP))
    edges = list(_axiom_edges(c))
    assert edges
    for e in edges:
        e["axiom"]["bad"] = ast("(r - (x)) * (r - (x)) >= b * b / (2 * b * b / (t * t))")
    code, out = check(c, LAP, tmp_path, capsys)
    assert code == 3 and "malformed" not in out, out


def test_another_family_with_the_same_parameter_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(BEAM))
    for e in list(_axiom_edges(c)):
        _restate(e, "gaussian", "v / (t * t)")  # its threshold sqrt(2v log(2/f)) is not t for every input
    code, out = check(c, BEAM, tmp_path, capsys)
    assert code == 3 and "malformed" not in out, out
