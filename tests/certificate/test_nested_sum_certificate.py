"""Certificates of sums over nested loops (tamp.cfa.sums, session 22): the checker derives the
number of terms (m·n for fresh inner draws; m terms of width n for a cluster's shared draw) from
the program again, so a certificate that states another count or width is rejected, and the
cluster claim's certificate does not carry over to its false sibling (the m·n-terms trap)."""

import json
from pathlib import Path

from support.certificates import certify, check_in_process

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "nested"


def _copy(c):
    return json.loads(json.dumps(c))


def test_nested_term_count_and_cluster_width_cannot_be_tampered_with():
    for name, field in (("grid_defects", "count"), ("cluster_shared", "param")):
        path = DEV / f"{name}.prob"
        res, cert, raw = certify(path)
        assert res.programs[0].verdict == "proved"
        assert check_in_process(cert, path, raw).ok
        bad = _copy(cert)
        # m·n terms -> m·n·4 terms (a tighter Hoeffding), or width n -> width 1 per cluster
        block = bad["concentration"][0]["sums"][0]["blocks"][0]
        block[field] = (
            {
                "node": "Binary",
                "op": "*",
                "left": block["count"],
                "right": {"node": "Num", "value": "4", "is_int": True},
            }
            if field == "count"
            else {"node": "Num", "value": "1", "is_int": True}
        )
        report = check_in_process(bad, path, raw)
        assert not report.ok, name


def test_cluster_certificate_does_not_carry_over_to_the_false_sibling():
    path = DEV / "cluster_shared.prob"
    _res, cert, _raw = certify(path)
    false = DEV / "cluster_shared_false.prob"
    report = check_in_process(cert, false, false.read_bytes())
    assert not report.ok
