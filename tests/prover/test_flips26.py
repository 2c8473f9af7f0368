"""Postconditions whose truth a rare event toggles (session 26, flips26): the invariant
expectation ``[¬post] + the budget left`` (:mod:`tamp.prover.expectation.toggles`) — a bit
through k stages that each flip it w.p. q[j] (two flips restore it, so no "bad event happened"
flag stays raised). Proved, certified, tampered certificates rejected, false siblings (the bound
halved, a stage's chance left out) left unproved, and the pure functions on their own."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate, swap_in_cores
from support.proving import prove_path as _prove

import tamp.prover.expectation.prove as exp_prove
from lang import ast as A
from lang.parser import parse_expr
from tamp.prover.expectation.prove import _fold
from tamp.prover.expectation.toggles import budget_cores, moving_reads, suffix_sums
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "flips26"
XOR = BENCHMARKS / "prover4" / "dev" / "blind12" / "stochasticcomputing" / "xor_chain_bit_flips.prob"

# proved only with the new cores (session start: unknown); the slow ones spend their time in the
# union-bound engine that runs first
FAST = ["bsc_cascade"]
SLOW = ["register_scrub", "tflipflop_glitch", "sign_of_product", "phase_variation"]


def _core(result) -> str:
    (loop,) = result.proof.loops
    return show_expr(loop.annot.core)


# ------------------------------------------------------------------------ pure functions


def test_the_suffix_of_a_summed_bound_starts_at_the_counter():
    beta = parse_expr("sum(j in 0..k: q[j])")
    assert show_expr(suffix_sums(beta, "k", A.Var("i"), {"i", "v"})) == "sum(j in i..k: q[j])"
    both = parse_expr("sum(j in 0..k: q[j]) + sum(j in 1..=k: w[j])")
    assert show_expr(suffix_sums(both, "k", A.Var("i"), {"i"})) == "sum(j in i..k: q[j]) + sum(j in i..=k: w[j])"


def test_no_suffix_where_the_input_is_read_outside_an_upper_end():
    assert suffix_sums(parse_expr("k * r"), "k", A.Var("i"), {"i"}) is None
    assert suffix_sums(parse_expr("sum(j in 0..k: q[j] * k)"), "k", A.Var("i"), {"i"}) is None
    assert suffix_sums(parse_expr("sum(j in 0..k: q[j]) + k * r"), "k", A.Var("i"), {"i"}) is None
    # a lower end the loop changes is no fixed start
    assert suffix_sums(parse_expr("sum(j in m..k: q[j])"), "k", A.Var("i"), {"i", "m"}) is None


def test_the_cores_add_the_budget_left_to_the_failure():
    f = parse_expr("!(v == v0) ? 1 : 0")
    g = parse_expr("j < k")
    cores = budget_cores(f, g, {"v", "fl", "j"}, parse_expr("sum(j in 0..k: q[j])"), [("j", 1, "k")], _fold)
    # the bound's index renamed apart from the counter j it is compared with
    assert show_expr(cores[0]) == "(!(v == v0) ? 1 : 0) + sum(j$ in j..k: q[j$])"
    assert len(cores) == 3  # d = 0, -1, 1
    rate = budget_cores(f, g, {"v", "j"}, parse_expr("k * r"), [("j", 1, "k")], _fold, parse_expr("j >= 0"))
    assert show_expr(rate[0]) == "j >= 0 ? (!(v == v0) ? 1 : 0) + (k * r - j * r) : 1"
    down = budget_cores(f, parse_expr("s > 0"), {"v", "s"}, parse_expr("k * r"), [("s", -1, "k")], _fold)
    assert show_expr(down[0]) == "(!(v == v0) ? 1 : 0) + s * r"


def test_no_cores_when_the_failure_reads_only_the_loop_progress():
    f = parse_expr("!(j == k) ? 1 : 0")
    assert moving_reads(f, parse_expr("j < k"), {"j"}) == []
    assert budget_cores(f, parse_expr("j < k"), {"j"}, parse_expr("k * r"), [("j", 1, "k")], _fold) == []
    # a counter the guard does not read is no measure of the iterations left
    f2 = parse_expr("!(v == v0) ? 1 : 0")
    assert budget_cores(f2, parse_expr("j < k"), {"v", "c", "j"}, parse_expr("k * r"), [("c", 1, "k")], _fold) == []


# ------------------------------------------------------------------------ the target and the claims


def test_the_xor_chain_is_proved_with_the_budget_core(tmp_path, capsys):
    r = _prove(XOR)
    assert r.verdict == "proved", r.render_text()
    assert r.to_json()["method"] == "expectation"
    assert _core(r) == "j >= 0 ? (!(v == v0) ? 1 : 0) + sum(j$ in j..k: q[j$]) : 1"
    code, out = check_proof(proved_certificate(XOR), XOR, tmp_path, capsys)
    assert code == 0, out


def test_without_the_budget_cores_the_xor_chain_is_not_proved(monkeypatch):
    monkeypatch.setattr(exp_prove, "toggle_cores", lambda *a, **k: [])
    assert _prove(XOR).verdict != "proved"


def _term(array: str, index: str) -> A.Expr:
    """``array[index]``, for a budget's index renamed apart (``j$``: no source text names it)."""
    return A.Index(A.Var(array), A.Var(index))


def _proved_with_budget(path, tmp_path, capsys):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert r.to_json()["method"] == "expectation"
    assert "? 1 : 0) + " in _core(r)  # [¬post] + the budget left
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("name", FAST)
def test_proved_and_certified(name, tmp_path, capsys):
    _proved_with_budget(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_proved_and_certified_slow(name, tmp_path, capsys):
    _proved_with_budget(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.parametrize("name", ["parity_of_errors", "bit_flip_channel"])
def test_the_regression_variants_stay_proved(name):
    # already proved at the session start: a constant cost per iteration (the union bound), and
    # a counter going down, whose bound for the iterations left is β[k := steps] (`b == b0 ?
    # β[k := steps] : 1`, a recognised core)
    assert _prove(MINE / f"{name}.prob").verdict == "proved"


@pytest.mark.parametrize(
    "path,old,new",
    [
        (XOR, _term("q", "j$"), A.Binary("/", _term("q", "j$"), A.num(2))),  # half of each stage's budget
        (XOR, parse_expr("!(v == v0) ? 1 : 0"), parse_expr("0")),  # the settled failure dropped
        (MINE / "bsc_cascade.prob", _term("q", "t$"), A.Binary("/", _term("q", "t$"), A.num(2))),
    ],
    ids=["stage_halved", "settled_dropped", "bsc_stage_halved"],
)
def test_a_tampered_core_is_rejected(path, old, new, tmp_path, capsys):
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    assert swap_in_cores(cert, old, new)
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.parametrize("name", ["bsc_cascade", "parity_of_errors"])
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


def test_the_blind_false_sibling_stays_unproved():
    assert _prove(XOR.with_name("xor_chain_bit_flips_false.prob")).verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["bit_flip_channel", "register_scrub", "tflipflop_glitch", "sign_of_product", "phase_variation"]
)
def test_false_siblings_stay_unproved_slow(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


def test_a_count_under_a_threshold_is_left_to_the_other_cores():
    g = parse_expr("i < m")
    # `v <= 1` on a count the body only adds to: a monotone event (levels, exits, Markov)
    assert moving_reads(parse_expr("!(v <= 1) ? 1 : 0"), g, {"v", "i"}, {"v", "i"}) == []
    # the same count's parity toggles
    assert moving_reads(parse_expr("!(v mod 2 == 0) ? 1 : 0"), g, {"v", "i"}, {"v", "i"}) == ["v"]
    # a value the body overwrites or negates
    assert moving_reads(parse_expr("!(prod > 0) ? 1 : 0"), g, {"prod", "i"}, {"i"}) == ["prod"]
