"""Union bounds over guarded iterations and uniform draws hitting a value (issue 33).

The sums of a union bound's composition are put in closed form and the closed form is proved
by induction (:mod:`tamp.cfa.guard_sums`); a per-iteration chance is read off the body's
deterministic guards (:func:`tamp.prover.nesting.prove.move_chance`); a tampered certificate
is rejected."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate

from lang import ast as A
from lang.parser import parse_expr, parse_file
from lang.serialize import to_json
from tamp.cfa.guard_sums import closed_sums
from tamp.core.encode import Encoder
from tamp.core.validity import VALID, check_fresh, verdict
from tamp.prover import portfolio, prove_program
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev"


def _valid(f: A.Expr, types) -> bool:
    enc = Encoder(types)
    return verdict(check_fresh(enc.expr(f, enc.initial_env()), [], timeout_ms=5000)) == VALID


def _closed(text: str, types):
    got = closed_sums(parse_expr(text))
    assert got is not None
    return got


def test_the_cells_of_row_zero_and_column_zero_are_counted_by_induction():
    types = {"rows": A.INT, "cols": A.INT}
    total, obligations = _closed("sum(i in 0..rows: sum(j in 0..cols: i == 0 || j == 0 ? 1 : 0))", types)
    assert obligations and all(_valid(f, types) for _rule, f in obligations)
    goal = A.Binary("==", total, parse_expr("rows + cols - 1"))
    hyp = parse_expr("rows >= 1 && cols >= 1")
    assert _valid(A.Binary("||", A.Unary("!", hyp), goal), types)


def test_bounds_and_complements_are_counted():
    types = {"n": A.INT, "k": A.INT}
    at = parse_expr("n == 10 && k == 5")
    for text, want in (("sum(c in 0..n: c >= 2 && c < k ? 1 : 0)", 3), ("sum(c in 0..=n: c != 2 ? 3 : 1)", 31)):
        total, obligations = _closed(text, types)
        assert all(_valid(f, types) for _rule, f in obligations)
        assert _valid(A.Binary("==>", at, A.Binary("==", total, A.num(want))), types)


def test_a_wrong_closed_form_fails_its_induction_step():
    # the STEP obligation catches a closed form that is off: the count of c == 3 in 0..n is
    # not 1 for every n >= 0
    types = {"n": A.INT}
    _total, obligations = _closed("sum(c in 0..n: c == 3 ? 1 : 0)", types)
    step = dict(obligations)["SUM_STEP"]
    assert _valid(step, types)
    wrong = A.Quant("forall", "c", A.num(0), A.Var("n"), False, parse_expr("1 + 0 == 1 + (c == 3 ? 1 : 0)"))
    assert not _valid(wrong, types)


def _prove(path):
    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=60)


def _simulated(path):
    """Every proved claim here is cross-checked at its recorded inputs."""
    given = inputs_for(str(path))
    assert given, "no recorded inputs"
    for inputs in given:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", ["border_cells", "cross_quorum", "daily_pick"])
def test_the_union_events_variants_are_proved_and_hold_when_simulated(name):
    path = DEV / "unionevents" / f"{name}.prob"
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    _simulated(path)


@pytest.mark.slow  # about 12 s
def test_the_grid_quorum_is_the_union_over_its_cross():
    r = _prove(DEV / "blind6" / "quorums" / "grid_quorum.prob")
    assert r.verdict == "proved", r.render_text()
    _simulated(DEV / "blind6" / "quorums" / "grid_quorum.prob")


def test_a_weekly_draw_matching_a_computed_ticket_is_one_in_n():
    r = _prove(DEV / "blind6" / "games" / "weekly_lottery.prob")
    assert r.verdict == "proved", r.render_text()
    _simulated(DEV / "blind6" / "games" / "weekly_lottery.prob")


def test_grid_certificate_is_rechecked_and_a_tampered_guard_rejected(tmp_path, capsys, monkeypatch):
    # linearity of expectation proves `bad == 0` first (Markov at 1 on the count); this test is
    # about the per-iteration composition's certificate, so linearity is turned off
    monkeypatch.setattr(portfolio.Linearity, "attempt", lambda self, problem: portfolio.Attempt())
    path = DEV / "unionevents" / "border_cells.prob"
    cert = proved_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"]
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out
    # half the diagonal's chance: the composition holds, the iteration's own proof does not
    cert["nesting"][0]["per_iteration"] = to_json(parse_expr("sum(j in 0..n: i == j ? q / 2 : 0)"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out
