"""``private ?`` with a disjunctive ``neighbours`` (issue 34): the smallest ε is inferred case by
case and the answer is their maximum, proved again as the claim for every case; without the split
the monotone mechanisms get a larger ε (2·eps, 3·eps/2) than the eps they are private at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tamp.api import prove

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = ROOT / "benchmarks" / "privacy" / "private"


def _hole(name: str, tmp: Path) -> Path:
    text = (PRIVATE / f"{name}.prob").read_text()
    assert text.count("private    eps on out") == 1
    p = tmp / f"{name}.prob"
    p.write_text(text.replace("private    eps on out", "private    ? on out"))
    return p


@pytest.mark.parametrize("name", ["noisyMaxMonotone", "svtMonotone"])
def test_private_hole_by_cases_infers_the_cases_maximum(name, tmp_path):
    res = prove(str(_hole(name, tmp_path)), timeout=120)
    (part,) = [p for r in res.programs for p in r.parts if p.kind == "privacy"]
    assert part.verdict == "proved", part.render_text()
    assert part.epsilon == "eps"
    assert len(part.cases) == 2 and all(c.case for c in part.cases)
    # every case was proved with the reported ε as its claim
    assert all(c.epsilon == "eps" for c in part.cases)
