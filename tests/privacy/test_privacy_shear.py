"""The shear (issue 34): report-noisy-max releasing the gap to the runner-up (noisyMaxGap) is
proved by shifting only the winner's draw, by the change of the others' maximum (a function of
the other draws, fixed at the exit as a prophecy); the certificate records the shift and
``check-proof`` re-checks it with its own ghosts — a shift that reads anything of the winner's
draw, a shear on two coordinates, and a false variant are rejected or not proved."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from support.certificates import check_proof

from lang.parser import parse
from lang.typecheck import check_file, check_program
from tamp.api import prove
from tamp.certificate.writer import file_certificate
from tamp.core.z3context import proof_context
from tamp.privacy.engine import _Job, _proofs
from tamp.privacy.product import shear_draw
from tamp.privacy.result import PrivacyResult

ROOT = Path(__file__).resolve().parents[2]
GAP = ROOT / "benchmarks" / "privacy" / "private" / "noisyMaxGap.prob"


@pytest.fixture(scope="module")
def certified():
    res = prove(str(GAP), timeout=60)
    (r,) = res.programs
    assert r.verdict == "proved", r.message
    return json.loads(json.dumps(file_certificate(res, GAP.read_bytes(), None, None)))


def _first_steps(text: str, n: int):
    src = parse(text)
    check_file(src)
    prog = src.programs[0]
    assert prog.private is not None
    out = []
    with proof_context():  # as prove_privacy does: z3's answers do not depend on earlier tests
        steps = _proofs(_Job(prog, check_program(prog), prog.private, "eps", None, 0.0, [float("inf")]), False)
        for step in steps:
            out.append(step)
            if isinstance(step, PrivacyResult) or len(out) >= n:
                break
    return out


def test_noisy_max_with_gap_is_proved_by_the_shear_and_rechecked(certified, tmp_path, capsys):
    (entry,) = certified["privacy"]
    (step,) = entry["alignment"]
    assert step["kind"] == "shear" and step["shift"] == "others_max(v') - others_max(v)"
    assert entry["pointwise"] == "out"
    code, out = check_proof(certified, GAP, tmp_path, capsys)
    assert code == 0 and "ok" in out, out


def test_the_shear_is_the_first_attempt():
    (step,) = _first_steps(GAP.read_text(), 1)
    assert isinstance(step, PrivacyResult) and step.verdict == "proved"


def _shift(text):
    def go(e):
        e["alignment"][0]["shift"] = text

    return go


def _drop_invariant(needle):
    def go(e):
        invs = e["loops"][0]["invariants"]
        hit = [i for i in invs if needle in i]
        assert hit, needle
        invs.remove(hit[0])

    return go


@pytest.mark.parametrize(
    "change, message",
    [
        # the shift reads the program's state, which depends on the winner's own draw
        (_shift("best' - best"), "reads best"),
        (_shift("second' - second"), "reads second"),
        (_shift("v' - v"), "reads v"),
        (_shift("winner(v') - winner(v)"), "may not read winner"),
        (_shift("others_max(best) - others_max(v)"), "others_max takes the draw"),
        # a shift that reads nothing of the winner but is not the runner-up's change
        (_shift("others_max(v') - others_max(v) + 1"), "cannot prove"),
        (_shift("0"), "cannot prove"),
        (lambda e: e["alignment"][0].update(c=2), "c = 1"),
        (lambda e: e.update(pointwise=None), "pointwise proof on an int output"),
        (lambda e: e["alignment"][0].pop("shift"), "shift"),
        (lambda e: e["alignment"][0].update(kind="at_k"), "shift"),
        (_drop_invariant("best == winner(v)"), "cannot prove"),
        (_drop_invariant("second' == others_max(v')"), "cannot prove"),
    ],
)
def test_tampered_shear_certificates_are_rejected(certified, tmp_path, capsys, change, message):
    bad = copy.deepcopy(certified)
    change(bad["privacy"][0])
    assert bad != certified
    code, out = check_proof(bad, GAP, tmp_path, capsys)
    assert code in (2, 3) and message in out, out


TWO_DRAWS = GAP.read_text().replace(
    "    v ~ lap(q[i], 2 / eps);\n", "    v ~ lap(q[i], 2 / eps);\n    u ~ lap(q[i], 2 / eps);\n"
)


def test_a_shear_that_moves_two_coordinates_is_rejected(certified, tmp_path, capsys):
    # two draws per iteration, both claimed as shears: the rule moves one coordinate only
    path = tmp_path / "twoDraws.prob"
    path.write_text(TWO_DRAWS)
    assert shear_draw(parse(TWO_DRAWS).programs[0]) is None
    bad = copy.deepcopy(certified)
    bad["file"] = str(path)
    (step,) = bad["privacy"][0]["alignment"]
    bad["privacy"][0]["alignment"].append(dict(step, line=step["line"] + 1, target="u", shift=step["shift"]))
    bad["source_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    code, out = check_proof(bad, path, tmp_path, capsys)
    assert code in (2, 3) and "the shear needs the program's only draw" in out, out


SMALL_NOISE = GAP.read_text().replace("lap(q[i], 2 / eps)", "lap(q[i], 1 / eps)")


def test_the_gap_with_too_little_noise_is_not_proved(tmp_path):
    # Lap(1/eps) with the gap costs 2 eps (the runner-up's change and the winner's): the shear
    # attempt fails on the cost, and no other alignment proves it
    first = _first_steps(SMALL_NOISE, 1)[0]
    assert isinstance(first, tuple) and "privacy cost" in first[1].what
    path = tmp_path / "noisyMaxGapSmallNoise.prob"
    path.write_text(SMALL_NOISE)
    (r,) = prove(str(path), timeout=8).programs
    assert r.verdict != "proved", r.message


def test_the_gap_certificate_does_not_certify_too_little_noise(certified, tmp_path, capsys):
    path = tmp_path / "small.prob"
    path.write_text(SMALL_NOISE)
    bad = copy.deepcopy(certified)
    step = bad["privacy"][0]["alignment"][0]
    step["dist"] = "lap(q[i], 1 / eps)"
    step["cost"] = "|shift - (q[i]' - q[i])| / (1 / eps)"
    bad["source_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    code, out = check_proof(bad, path, tmp_path, capsys)
    assert code in (2, 3) and "the privacy cost is at most eps" in out, out


def test_releasing_the_winners_value_is_not_proved_by_the_shear():
    # noisyMaxValue releases best, which the shear moves: its first attempt (the shear) fails
    text = (ROOT / "benchmarks" / "privacy" / "broken" / "noisyMaxValue.prob").read_text()
    assert shear_draw(parse(text).programs[0]) is not None
    first = _first_steps(text, 1)[0]
    assert isinstance(first, tuple) and "best" in first[1].what


def test_the_shear_needs_a_mean_that_reads_no_drawn_value():
    # a mean reading a local (here the running maximum) may depend on the winner's draw
    text = GAP.read_text().replace("lap(q[i], 2 / eps)", "lap(q[i] + best, 2 / eps)")
    assert shear_draw(parse(text).programs[0]) is None


@pytest.mark.parametrize("scale, want", [("2 / eps", "eps"), ("1 / eps", "2 * eps")])
def test_private_hole_with_the_gap_infers_the_shears_budget(tmp_path, capsys, scale, want):
    # `private ?`: the smallest candidate the shear's cost is proved below — eps with Lap(2/eps),
    # 2 eps (not eps) with Lap(1/eps); the certificate proves exactly that budget
    text = GAP.read_text().replace("private    eps on out, gap", "private    ? on out, gap")
    text = text.replace("lap(q[i], 2 / eps)", f"lap(q[i], {scale})")
    path = tmp_path / "gapHole.prob"
    path.write_text(text)
    res = prove(str(path), timeout=60)
    (r,) = res.programs
    assert r.verdict == "proved" and r.epsilon == want, r.message
    cert = json.loads(json.dumps(file_certificate(res, path.read_bytes(), None, None)))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0 and "ok" in out, out
