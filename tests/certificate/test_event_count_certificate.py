"""Certificates of counts of events and guarded counts (tamp.cfa.sums, issue 33): the checker
derives the events' probabilities and the guards' term counts from the program again, so a
certificate that states another probability or term count is rejected, and the side conditions
(``event range``, ``guard range``) are the checker's own (dropping them from the file changes
nothing); a certificate carried over to the false sibling is rejected."""

import json
from pathlib import Path

from support.certificates import certify, check_in_process

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "conc3"


def _copy(c):
    return json.loads(json.dumps(c))


def test_event_probability_and_guard_count_cannot_be_tampered_with():
    for name, field in (("eventHits", "param"), ("guardedDegree", "count")):
        path = DEV / f"{name}.prob"
        res, cert, raw = certify(path)
        assert res.programs[0].verdict == "proved"
        assert check_in_process(cert, path, raw).ok
        bad = _copy(cert)
        # one draw more likely (k/n -> 1), or n terms where the guard lets n - 1 through
        bad["concentration"][0]["sums"][0]["blocks"][0][field] = {"node": "Num", "value": "1", "is_int": True}
        report = check_in_process(bad, path, raw)
        assert not report.ok and "SHAPE" in report.reason, report.reason
        dropped = _copy(cert)
        dropped["concentration"][0]["obligations"] = [
            o for o in dropped["concentration"][0]["obligations"] if "range" not in o["where"]
        ]
        assert check_in_process(dropped, path, raw).ok  # the side conditions are rebuilt


def test_certificate_does_not_carry_over_to_the_false_sibling():
    path = DEV / "coinXor.prob"
    _res, cert, _raw = certify(path)
    false = DEV / "coinXor_false.prob"
    report = check_in_process(cert, false, false.read_bytes())
    assert not report.ok
