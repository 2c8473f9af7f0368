"""Exact integer tails of discrete draws (issue 33, tails25): the geometric waiting time's
``Pr[c >= k + K] = exp(-K/s)`` (axioms.discrete_exponential_exact) and the geometric mechanism's
one-sided ``Pr[x - c >= K] = a^K/(1 + a)`` (axioms.discrete_laplace_exact_upper / _lower). The dev
claims of benchmarks/prover4/dev/tails25 and blind11's sampling countdown are proved and their
certificates re-check (one naming the log-form family, or with a changed bound, is rejected);
every false sibling stays unproved."""

import json
from pathlib import Path

import pytest
from support.certificates import check_in_process

from tamp.api import prove
from tamp.certificate.writer import file_certificate

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev"
DEV = ROOT / "tails25"
TRUE = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false"))
FALSE = sorted(DEV.glob("*_false.prob"))
HALF = {"node": "Num", "value": "2", "is_int": True}
COUNTDOWN = ROOT / "blind11" / "profiling" / "sampling_countdown.prob"


@pytest.mark.parametrize("path", TRUE + [COUNTDOWN], ids=lambda p: p.stem)
def test_true_claims_proved_and_certified(path):
    res = prove(str(path), timeout=60)
    part = res.programs[0]
    assert part.verdict == "proved", part.render_text()
    raw = path.read_bytes()
    cert = json.loads(json.dumps(file_certificate(res, raw)))
    report = check_in_process(cert, path, raw)
    assert report.ok, report.reason


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_not_proved(path):
    assert prove(str(path), timeout=30).programs[0].verdict != "proved"


@pytest.mark.parametrize(
    "path,exact,log_form",
    [
        (COUNTDOWN, "discrete_exponential_exact", "discrete_exponential"),
        (DEV / "geo_overshoot.prob", "discrete_laplace_exact_upper", "discrete_laplace_exact"),
        (DEV / "geo_undershoot.prob", "discrete_laplace_exact_lower", "discrete_laplace_exact_upper"),
    ],
)
def test_tampered_certificates_rejected(path, exact, log_form):
    res = prove(str(path), timeout=60)
    raw = path.read_bytes()
    text = json.dumps(file_certificate(res, raw))
    assert f'"{exact}"' in text
    forged = json.loads(text.replace(f'"{exact}"', f'"{log_form}"'))
    assert not check_in_process(forged, path, raw).ok
    # a smaller cost written into the axiom: the checker re-derives the instance and refuses it
    cert = json.loads(text)
    halved = 0
    for prog in cert["programs"]:
        for aut in prog.get("automata", []):
            for edge in aut.get("edges", []):
                ax = edge.get("axiom")
                if ax and exact in json.dumps(ax):
                    for key in ("cost", "param"):
                        ax[key] = {"node": "Binary", "op": "/", "left": ax[key], "right": HALF}
                    halved += 1
    assert halved
    assert not check_in_process(cert, path, raw).ok
