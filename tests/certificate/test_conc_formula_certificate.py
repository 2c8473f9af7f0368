"""Certificates of concentration through computed values and weighted terms (tamp.cfa.sums,
session 19): the checker derives a formula's sums and a weighted sum's root-mean-square width
from the program again, so a certificate that states another width, or a formula's sum of
another family, is rejected; a certificate carried over to the false sibling is rejected."""

import json
from pathlib import Path

from support.certificates import certify, check_in_process

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "conc4"


def _copy(c):
    return json.loads(json.dumps(c))


def test_weighted_width_and_formula_sum_cannot_be_tampered_with():
    for name in ("weightedSigns", "gaussVerdict", "armGap"):
        path = DEV / f"{name}.prob"
        res, cert, raw = certify(path)
        assert res.programs[0].verdict == "proved"
        assert check_in_process(cert, path, raw).ok
        bad = _copy(cert)
        # the width (or variance, or probability) of the first block set to a smaller 1/100
        bad["concentration"][0]["sums"][0]["blocks"][0]["param"] = {"node": "Num", "value": "1/100", "is_int": False}
        report = check_in_process(bad, path, raw)
        assert not report.ok and "SHAPE" in report.reason, report.reason


def test_certificate_does_not_carry_over_to_the_false_sibling():
    for name in ("weightedSigns", "proportionError"):
        _res, cert, _raw = certify(DEV / f"{name}.prob")
        false = DEV / f"{name}_false.prob"
        report = check_in_process(cert, false, false.read_bytes())
        assert not report.ok
