"""Certificates of concentration over a linear combination of independent sums (session 21,
``tails``): the checker rebuilds the combined sum from the program's sums and the certificate's
coefficients, so a changed coefficient, a dropped combination or a changed block is rejected,
and a certificate carried over to the false sibling is rejected."""

import json
from fractions import Fraction
from pathlib import Path

from support.certificates import certify, check_in_process

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "tails"


def _copy(c):
    return json.loads(json.dumps(c))


def _proved(name):
    path = DEV / f"{name}.prob"
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    assert cert["concentration"][0].get("combination")
    assert check_in_process(cert, path, raw).ok
    return path, cert, raw


def test_combination_coefficients_cannot_be_tampered_with():
    path, cert, raw = _proved("gauss_reused_draw")
    conc = cert["concentration"][0]
    # y1 - y2 + y1 reads y1 twice: the coefficients are in the ratio 2 : -1 (variance 5v), never 1 : -1
    a1, a2 = (Fraction(x) for x in conc["combination"])
    assert a2 / a1 == Fraction(-1, 2)
    for k in range(2):
        bad = _copy(cert)
        c = bad["concentration"][0]["combination"]
        c[k] = "1/2" if c[k] not in ("1/2",) else "1/3"
        report = check_in_process(bad, path, raw)
        assert not report.ok, k
    bad = _copy(cert)
    del bad["concentration"][0]["combination"]
    assert not check_in_process(bad, path, raw).ok
    bad = _copy(cert)
    bad["concentration"][0]["sums"][0]["blocks"][0]["param"] = {"node": "Num", "value": "1/100", "is_int": False}
    report = check_in_process(bad, path, raw)
    assert not report.ok and "SHAPE" in report.reason, report.reason


def test_laplace_difference_certificate_keeps_the_sub_exponential_rule():
    path, cert, raw = _proved("laplace_difference")
    conc = cert["concentration"][0]
    assert conc["sums"][0]["family"] == "laplace"
    assert conc["applications"][0]["rule"] == "laplace-bernstein"
    bad = _copy(cert)
    bad["concentration"][0]["sums"][0]["family"] = "gauss"
    bad["concentration"][0]["applications"][0]["rule"] = "gauss-chernoff"
    assert not check_in_process(bad, path, raw).ok


def test_combined_certificate_does_not_carry_over_to_the_false_sibling():
    for name in ("gauss_reused_draw", "laplace_difference"):
        _res, cert, _raw = certify(DEV / f"{name}.prob")
        false = DEV / f"{name}_false.prob"
        assert not check_in_process(cert, false, false.read_bytes()).ok
