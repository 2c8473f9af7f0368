"""The geometric mechanism's exact integer tail (axioms.discrete_laplace_exact, issue 33):
``Pr[|x - c| >= t] = 2 exp(-eps t)/(1 + exp(-eps))`` for ``x ~ dlap(c, 1/eps)`` and integer
``t >= 1`` is proved and its certificate re-checks (a certificate that names the log-form family
instead is rejected); claims beyond the exact tail are not proved; a loop of dlap draws is not
offered the family (its search is unchanged)."""

import json
from pathlib import Path

import pytest
from support.certificates import check_in_process

from lang import ast as A
from lang.parser import parse_expr
from tamp.api import prove
from tamp.certificate.writer import file_certificate
from tamp.prover.trace.candidates import proposals
from tamp.simulation import simulate

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "blind1"
GEOM = DEV / "dpaccuracy" / "geometric_mechanism.prob"

PROGRAM = """program g(c: int, eps: real, t: int)
  requires eps > 0 && t >= 1
  ensures  {ensures}
  fails    {fails}
{{
  x ~ dlap(c, 1 / eps);
}}
"""


def _prove_src(tmp_path, ensures, fails):
    p = tmp_path / "g.prob"
    p.write_text(PROGRAM.format(ensures=ensures, fails=fails))
    return prove(str(p), timeout=20).programs[0]


def test_geometric_mechanism_proved_and_certified():
    res = prove(str(GEOM), timeout=60)
    part = res.programs[0]
    assert part.verdict == "proved", part.render_text()
    raw = GEOM.read_bytes()
    cert = json.loads(json.dumps(file_certificate(res, raw)))
    assert "discrete_laplace_exact" in json.dumps(cert)
    report = check_in_process(cert, GEOM, raw)
    assert report.ok, report.reason
    forged = json.loads(json.dumps(cert).replace('"discrete_laplace_exact"', '"discrete_laplace"'))
    assert not check_in_process(forged, GEOM, raw).ok
    sim = simulate(str(GEOM), {"c": 3, "eps": 0.7, "t": 2}, runs=4000, seed=7)
    assert sim.verdict == "consistent", sim.render_text()


def test_false_sibling_not_proved():
    assert prove(str(DEV / "dpaccuracy" / "geometric_mechanism_false.prob"), timeout=20).programs[0].verdict != "proved"


@pytest.mark.parametrize(
    "ensures,fails",
    [
        # the next integer's tail, claimed for this one
        ("abs(x - c) < t", "2 * exp(-eps * (t + 1)) / (1 + exp(-eps))"),
        # one per cent below the exact tail
        ("abs(x - c) < t", "0.99 * 2 * exp(-eps * t) / (1 + exp(-eps))"),
        # the exact tail of |x - c| >= t claimed for |x - c| > t - 1/2 (the same event): the
        # normaliser dropped
        ("abs(x - c) <= t - 0.5", "exp(-eps * t)"),
    ],
)
def test_claims_below_the_exact_tail_not_proved(tmp_path, ensures, fails):
    assert _prove_src(tmp_path, ensures, fails).verdict != "proved"


@pytest.mark.parametrize(
    "ensures,fails",
    [
        ("abs(x - c) < t", "2 * exp(-eps * t) / (1 + exp(-eps))"),
        ("abs(x - c) <= t", "2 * exp(-eps * (t + 1)) / (1 + exp(-eps))"),  # |x - c| >= t + 1
    ],
)
def test_exact_tails_proved(tmp_path, ensures, fails):
    part = _prove_src(tmp_path, ensures, fails)
    assert part.verdict == "proved", part.render_text()


def test_not_proposed_to_the_loop_engine():
    st = A.Sample((A.Var("x"),), parse_expr("dlap(c, s)"))
    beta = parse_expr("2 * exp(-t / s) / (1 + exp(-1 / s))")
    spec = [parse_expr("abs(x - c) < t"), beta]
    names = [p.family for p in proposals(st, spec, beta, 1)]
    assert "discrete_laplace_exact" in names
    assert "discrete_laplace_exact" not in [p.family for p in proposals(st, spec, beta, 1, in_loop=True)]
