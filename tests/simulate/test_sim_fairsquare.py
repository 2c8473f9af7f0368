"""The simulator against FairSquare's Monte Carlo ground truth (skipped when the shared
benchmarks are not present): term intervals contain the published probabilities and a decided
verdict agrees with FAIR / UNFAIR."""

import re

import pytest
from locations import REPO

from tamp.simulation import simulate

SHARED = REPO.parent / "shared" / "benchmarks" / "fairsquare"


def ground_truth():
    if not (SHARED / "GROUND_TRUTH.md").exists():
        return {}
    out = {}
    for line in (SHARED / "GROUND_TRUTH.md").read_text().splitlines():
        m = re.match(r"\| (\w+) \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| .* \| (FAIR|UNFAIR) \|", line)
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(3)), m.group(4))
    return out


GT = ground_truth()


@pytest.mark.skipif(not GT, reason="shared FairSquare benchmarks not present")
@pytest.mark.parametrize("name", ["ind_DT4", "BN1_DT4", "BN2_NN3_2", "BN1_SVM4a"])
def test_against_ground_truth(name):
    p_s, p_not_s, verdict = GT[name]
    r = simulate(SHARED / f"{name}.prob", {}, runs=150000, seed=3)
    (_, _, lo1, hi1), (_, _, lo2, hi2) = r.prob_terms
    assert lo1 <= p_s <= hi1 and lo2 <= p_not_s <= hi2
    assert r.verdict == {"FAIR": "confirmed", "UNFAIR": "refuted"}[verdict]
