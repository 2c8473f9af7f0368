"""Hoeffding by linearity (session 29, hoeff29): a count or sum whose increments are independent
across iterations and bounded (:mod:`tamp.cfa.expected`: each iteration's increment in an
interval of width w_i) has ``Pr[X - E[X] <= -a] <= exp(-2a²/Σ w_i²)`` (and the upper and two-sided
tails). The width is Popoviciu's ``Σ|v_k|`` per iteration, or the tighter ``max(0, v…) - min(0, v…)``
of increments in exclusive branches, whose range the solver proves (WIDTH). A test reading two draws
with a few values each (``a == b`` for dice, ``d1·r1 + d2·r2 != 0`` for 0/1 draws) is averaged
over one draw's values (total expectation). Proved, certified, tampered certificates rejected,
false siblings (the bound divided by 4) left unproved."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa import expected as X
from tamp.core.validity import VALID
from tamp.prover.base.simplify import numeric
from tamp.prover.linearity.prove import decide

MINE = BENCHMARKS / "prover4" / "dev" / "hoeff29"
BLIND13 = BENCHMARKS / "prover4" / "dev" / "blind13"
TARGETS = [BLIND13 / "mendelian" / "dominant_hoeffding.prob", BLIND13 / "freivalds" / "detections_hoeffding.prob"]
CLAIMS = ["low_or_mid", "nonzero_form", "two_shifts", "win_loss", "all_differ", "triage"]


def _claim(text: str) -> X.LinClaim:
    src = parse(text)
    prog = src.programs[0]
    return X.claim_of(prog, build_cfa(prog, None, "<t>", src.text))


TALLIES = """program tallies(n: int, t: real)
  requires n >= 1 && t > 0
  ensures  a + b > n / 2 - t
  fails    exp(-2 * t * t / n)
{
  a := 0;
  b := 0;
  c := 0;
  for i in 0..n {
    d ~ unif(1, 4);
    if (d == 1) { a := a + 1; } else { if (d == 2) { b := b + 1; } else { c := c + 1; } }
  }
}
"""


def test_exclusive_tallies_have_the_width_of_one_indicator():
    c = _claim(TALLIES)
    env = {"n": 7, "t": 1}
    assert numeric(c.base.mean, env) == pytest.approx(3.5)
    assert numeric(c.base.width2, env) == pytest.approx(7)  # one step of 1 per iteration
    assert numeric(c.base.var_ub, env) == pytest.approx(7)  # Popoviciu's (1 + 1)²/4 per iteration
    assert c.base.width_side is not None


def test_increments_that_add_up_in_one_iteration_keep_popoviciu_s_width_only():
    text = TALLIES.replace(
        "} else { if (d == 2) { b := b + 1; } else { c := c + 1; } }", "}\n    if (d <= 2) { b := b + 1; }"
    )
    c = _claim(text)
    # both raise when d == 1: the increment is 0, 1 or 2; the tight width's condition fails
    assert c.base.width2 is not None
    obs = X.obligations(c, "hoeffding_lower", X.ONE, A_BOUND)
    (width,) = [f for k, _w, f in obs if k == "WIDTH"]
    assert decide(width, c, 5000) != VALID
    assert not any(k == "WIDTH" for k, _w, _f in X.obligations(c, "hoeffding_lower_p", X.ONE, A_BOUND))
    (exclusive,) = [f for k, _w, f in X.obligations(_claim(TALLIES), "hoeffding_lower", X.ONE, A_BOUND) if k == "WIDTH"]
    assert decide(exclusive, _claim(TALLIES), 5000) == VALID


A_BOUND = parse("program p() ensures true fails 1 { }").programs[0].fails


def test_no_hoeffding_candidates_for_a_bound_without_exp():
    c = _claim(TALLIES.replace("exp(-2 * t * t / n)", "n / (4 * t * t)"))
    prog = parse(TALLIES.replace("exp(-2 * t * t / n)", "n / (4 * t * t)")).programs[0]
    assert not any(r.startswith("hoeffding") for r, _t in X.candidates(c, prog.fails))
    prog = parse(TALLIES).programs[0]
    assert any(r == "hoeffding_lower" for r, _t in X.candidates(_claim(TALLIES), prog.fails))


def test_the_tallies_claim_needs_the_tight_width_and_is_proved():
    r = _prove(parse_path_text(TALLIES))
    assert r.verdict == "proved", r.render_text()
    assert r.to_json()["linearity"]["rule"] == "hoeffding_lower"


def parse_path_text(text: str):
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp())
    p = d / "tallies.prob"
    p.write_text(text)
    return p


@pytest.mark.parametrize("path", TARGETS, ids=lambda p: p.stem)
def test_the_blind13_targets_are_proved_and_certified(path, tmp_path, capsys):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert r.to_json()["linearity"]["rule"].startswith("hoeffding")
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("name", CLAIMS)
def test_the_dev_claims_are_proved_and_certified(name, tmp_path, capsys):
    path = MINE / f"{name}.prob"
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


def test_a_certificate_with_popoviciu_s_width_for_exclusive_tallies_is_rejected(tmp_path, capsys):
    # Popoviciu's width is 2 per patient: exp(-2a²/(4n)) is not below exp(-2t²/n)
    path = MINE / "triage.prob"
    cert = proved_certificate(path)
    (entry,) = cert["linearity"]
    assert entry["rule"] == "hoeffding_upper"
    entry["rule"] = "hoeffding_upper_p"
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_a_certificate_claiming_both_tails_at_one_s_price_is_rejected(tmp_path, capsys):
    path = BLIND13 / "mendelian" / "dominant_hoeffding.prob"
    cert = proved_certificate(path)
    (entry,) = cert["linearity"]
    entry["rule"] = "hoeffding"  # two tails: 2·exp(...), above the claim
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.slow
@pytest.mark.parametrize("name", CLAIMS)
def test_the_false_siblings_are_not_proved(name):
    r = _prove(MINE / f"{name}_false.prob", timeout=30)
    assert r.verdict != "proved"
