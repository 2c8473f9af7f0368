"""Probability certificates: decided P(...) results are written as cells + masses and re-checked
by `tamp check-proof`; every tampering is rejected with its reason."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from cert_testlib import BENCH, ast, check

TRI = """program tri()
  ensures P(x + y <= 1) >= 0.5
{
  x ~ uniform(0, 1);
  y ~ uniform(0, 1);
}
"""

COINS = """program coins()
  ensures P(s >= 2) <= 0.5
{
  s := 0;
  for i in 0..3 { b ~ bern(0.5); if (b) { s := s + 1; } }
}
"""

SMALL = {
    "tri": TRI,
    "coins": COINS,
    "coins_violated": COINS.replace("<= 0.5", ">= 0.6"),
    "assume": """program cond() ensures P(x > 0.75) >= 0.5 { x ~ uniform(0, 1); assume(x > 0.5); }""",
    "gauss": """program g() ensures P(x <= 0) > 0.49 && P(x <= 0) < 0.51 { x ~ gauss(0, 1); }""",
    "shifted": """program e() ensures P(h | f) / P(h | !f) >= 0.85 {
         f ~ bern(0.3); x ~ gauss(0, 1);
         if (f) { y ~ gauss(x, 1); } else { y ~ gauss(0.1, 2); }
         h := y >= 0.2 && x - y <= 1; }""",
    "relu_step": """program f() ensures P(o > 0 | s < 1) > 0.2 {
         s ~ step([(0, 1, 0.4), (1, 2, 0.6)]); x ~ gauss(0, 1); y ~ gauss(1, 2);
         h := max(0, x + y); o := 2 * h - y - 0.5; }""",
    "dice": """program dice() ensures P(a + b == 7) == 1/6 { a ~ unif(1, 6); b ~ unif(1, 6); }""",
}

BENCHMARKS = [
    "wmi/prop_parity.prob",
    "wmi/prop_noise.prob",
    "wmi/prop_local_robustness.prob",
    "wmi/prop_equivalence.prob",
    "fairness/BN1_DT4.prob",
    "fairness/ind_DT4.prob",
    "fairness/BN2_DT4.prob",
]


def certify(path: Path, expect=None) -> dict:
    from tamp.api import prove
    from tamp.certificate.writer import file_certificate

    res = prove(str(path), timeout=60)
    if expect is not None:
        assert res.verdict == expect, res.render_text()
    cert = json.loads(json.dumps(file_certificate(res, path.read_bytes())))
    assert not cert["not_certified"], cert["not_certified"]
    assert cert["probability"], "no probability certificate written"
    return cert


@pytest.fixture(scope="module")
def tri(tmp_path_factory):
    p = tmp_path_factory.mktemp("tri") / "tri.prob"
    p.write_text(TRI)
    return p, certify(p, "proved")


@pytest.fixture(scope="module")
def coins(tmp_path_factory):
    p = tmp_path_factory.mktemp("coins") / "coins.prob"
    p.write_text(COINS)
    return p, certify(p, "proved")


def cells(cert, term=0, trace=0):
    return cert["probability"][0]["terms"][term]["traces"][trace]["cells"]


def rejected(cert, path, tmp_path, capsys, *words):
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 3, out
    assert "rejected: " in out, out
    for w in words:
        assert w in out, out
    return out


# ---------------------------------------------------------------- positive


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_programs_check_ok(name, tmp_path, capsys):
    p = tmp_path / f"{name}.prob"
    p.write_text(SMALL[name])
    cert = certify(p)
    code, out = check(cert, p, tmp_path, capsys)
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("ok:"), out


def test_exact_values_are_certified_exactly(tri, coins):
    assert [c["mass"] for c in cells(tri[1])] == [["1/2", "1/2"], ["1/2", "1/2"]]
    term = coins[1]["probability"][0]["terms"][0]
    hit = sum(Fraction(c["mass"][0]) for t in term["traces"] for c in t["cells"] if c["class"] == "hit")
    assert hit == Fraction(1, 2) and len(term["traces"]) == 8 and term["uncovered"] == "0"


@pytest.mark.parametrize("rel", BENCHMARKS)
def test_benchmarks_check_ok(rel, tmp_path, capsys):
    path = BENCH / rel
    cert = certify(path)
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_violated_verdict_is_certified(tmp_path, capsys):
    path = BENCH / "fairness/BN1_DT4.prob"
    cert = certify(path, "violated")
    assert cert["probability"][0]["verdict"] == "violated"
    forged = copy.deepcopy(cert)
    forged["probability"][0]["verdict"] = "proved"
    rejected(forged, path, tmp_path, capsys, "VERDICT")


def test_certified_interval_agrees_with_simulation(tri):
    simulate = pytest.importorskip("tamp.simulation").simulate
    sim = simulate(TRI, {}, runs=20000, seed=5)
    _, _, lo, hi = sim.prob_terms[0][:4]
    assert Fraction(lo) <= Fraction(1, 2) <= Fraction(hi)


# ---------------------------------------------------------------- tampering


def test_mass_raised_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    cells(t)[0]["mass"] = ["3/5", "3/5"]
    rejected(t, path, tmp_path, capsys, "MASS", "does not contain")


def test_mass_lowered_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    cells(t)[1]["mass"] = ["2/5", "2/5"]  # below the true 1/2 (a widened [2/5, 1/2] is sound, and accepted)
    rejected(t, path, tmp_path, capsys, "MASS")


def test_widened_mass_no_longer_decides(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    cells(t)[0]["mass"] = ["0", "1"]
    rejected(t, path, tmp_path, capsys, "VERDICT", "do not decide")


def test_dropped_cell_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    del cells(t)[1]
    rejected(t, path, tmp_path, capsys, "COVER", "do not cover")


def test_dropped_trace_is_rejected(coins, tmp_path, capsys):
    path, cert = coins
    t = copy.deepcopy(cert)
    del t["probability"][0]["terms"][0]["traces"][0]
    rejected(t, path, tmp_path, capsys, "COVER", "uncovered")


def test_flipped_classification_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    c = cells(t)
    c[0]["class"], c[1]["class"] = c[1]["class"], c[0]["class"]
    rejected(t, path, tmp_path, capsys, "CLASS", "claimed miss")


def test_overlapping_cells_are_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    extra = copy.deepcopy(cells(t)[0])
    extra["cons"] = [{"coef": {"s0.0": "1", "s1.0": "1"}, "rhs": "1/2"}]
    extra["mass"] = ["1/8", "1/8"]
    cells(t).append(extra)
    rejected(t, path, tmp_path, capsys, "COVER", "overlap")


def test_duplicated_trace_is_rejected(coins, tmp_path, capsys):
    path, cert = coins
    t = copy.deepcopy(cert)
    traces = t["probability"][0]["terms"][0]["traces"]
    traces.append(copy.deepcopy(traces[0]))
    rejected(t, path, tmp_path, capsys, "COVER", "listed twice")


def test_wrong_trace_outcomes_are_rejected(coins, tmp_path, capsys):
    path, cert = coins
    t = copy.deepcopy(cert)
    t["probability"][0]["terms"][0]["traces"][0]["choices"].append(0)
    rejected(t, path, tmp_path, capsys, "TRACE")


def test_threshold_changed_in_certificate_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    t["probability"][0]["clauses"][0] = ast("P(x + y <= 1) >= 0.4")
    rejected(t, path, tmp_path, capsys, "CLAIM", "0.4")


def test_threshold_changed_in_file_is_rejected(tri, tmp_path, capsys):
    _, cert = tri
    other = tmp_path / "tri2.prob"
    other.write_text(TRI.replace(">= 0.5", ">= 0.51"))
    rejected(cert, other, tmp_path, capsys, "different source text")


def test_different_program_is_rejected(tri, coins, tmp_path, capsys):
    _, cert = tri
    path, _ = coins
    rejected(cert, path, tmp_path, capsys, "different source text")
    t = copy.deepcopy(coins[1])
    t["probability"][0]["clauses"] = cert["probability"][0]["clauses"]
    rejected(t, path, tmp_path, capsys, "CLAIM")


def test_witness_split_outside_box_is_rejected(tmp_path, capsys):
    path = BENCH / "wmi/prop_equivalence.prob"
    cert = certify(path)
    t = copy.deepcopy(cert)
    cell = next(
        c for term in t["probability"][0]["terms"] for tr in term["traces"] for c in tr["cells"] if c["witness"]
    )
    w = cell["witness"]
    w["at"] = "1000000"
    w["below"] = None
    rejected(t, path, tmp_path, capsys, "MASS")
    t2 = copy.deepcopy(cert)
    cell2 = next(
        c
        for term in t2["probability"][0]["terms"]
        for tr in term["traces"]
        for c in tr["cells"]
        if c["witness"] and c["class"] != "boundary"
    )
    cell2["witness"] = None  # the trivial bound [0, box mass] no longer contains a tight claim
    rejected(t2, path, tmp_path, capsys, "MASS")


def test_malformed_mass_exits_2(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    cells(t)[0]["mass"] = [0.5, 0.5]
    code, out = check(t, path, tmp_path, capsys)
    assert code == 2, out
    assert "mass" in out and "Traceback" not in out
