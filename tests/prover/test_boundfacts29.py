"""Bound facts (session 29, boundfacts29): the last step of a bound proof needs a fact about powers
with a symbolic exponent (Bernoulli: q^r >= q·r; b^k <= b^m for b in [0, 1]) or about a sum over a
symbolic range (positive when its terms are) that z3 does not know. :mod:`axioms.bound_facts` gives
those as a second lemma round, in the prover and in ``check-proof`` alike; the expected-failure
engine proposes the cores that need them (:func:`tamp.prover.expectation.powers.hit_all_cores`,
:func:`tamp.prover.expectation.powers.capped_power_cores`). Proved, certified, tampered
certificates rejected, false siblings left unproved, and the pure functions on their own."""

from __future__ import annotations

import pytest
import z3
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate, swap_in_cores
from support.proving import prove_path as _prove

import tamp.certificate.solver as cert_solver
from axioms.bound_facts import bound_fact_lemmas, power_form
from lang import ast as A
from lang.parser import parse_expr
from tamp.core.encode import Encoder
from tamp.core.validity import check_fresh
from tamp.prover.expectation.powers import _capped, _copies, exact_base
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "boundfacts29"
BLIND = BENCHMARKS / "prover4" / "dev" / "blind15"
TARGETS = [
    BLIND / "stringmatching" / "repeated_fingerprints.prob",
    BLIND / "archival" / "replicated_objects.prob",
    BLIND / "discrepancy" / "weighted_signs.prob",
]
TRUE = [
    "all_checks_miss",
    "quorum_rows",
    "weighted_votes",
    "no_success_yet",
    "zero_fingerprints",
    "three_fingerprints",
    "mirrored_shards",
    "third_chances",
]
# the false siblings the prover settles within seconds; the others take the full minute
FALSE_FAST = ["all_checks_miss", "weighted_votes", "no_success_yet", "zero_fingerprints", "third_chances"]
FALSE_SLOW = ["quorum_rows", "three_fingerprints", "mirrored_shards"]


# ------------------------------------------------------------------------ pure functions


def _LOG(x):  # in the current default context (a prove installs a new one: tamp.core.z3context)
    return z3.Function("log", z3.RealSort(), z3.RealSort())(x)


def _EXP(x):
    return z3.Function("exp", z3.RealSort(), z3.RealSort())(x)


def test_a_power_is_read_off_its_exponent():
    q, r = z3.Real("q"), z3.Int("r")
    b, k = power_form(_EXP(-(_LOG(q) * z3.ToReal(r - 1))))
    assert b.eq(q)
    assert z3.simplify(k + z3.ToReal(r - 1)).eq(z3.RealVal(0)) or check_fresh(k == -z3.ToReal(r - 1)) == z3.unsat
    # two logs, or a log times a log: no power of one base
    assert power_form(_EXP(_LOG(q) + _LOG(q + 1))) is None
    assert power_form(_EXP(_LOG(q) * _LOG(q))) is None
    assert power_form(_EXP(q)) is None


def _valid(goal, hyps, apps):
    enc = Encoder({})
    lems = [lem for _n, lem in bound_fact_lemmas(apps, enc)]
    return check_fresh(goal, hyps, lems, timeout_ms=5000) == z3.unsat


def test_bernoulli_gives_q_to_the_r_at_least_q_r():
    q, r = z3.Int("q"), z3.Int("r")
    t = _EXP(-(_LOG(z3.ToReal(q)) * z3.ToReal(r)))  # q^-r
    hyps = [q >= 2, r >= 1]
    assert _valid(t <= 1 / (z3.ToReal(q) * z3.ToReal(r)), hyps, [t])
    # the side condition matters: a base that may be 1 gives 1^-2 = 1 > 1/2
    assert not _valid(t <= 1 / (z3.ToReal(q) * z3.ToReal(r)), [q >= 1, r >= 1], [t])


def test_a_base_above_one_is_not_taken_for_one_below():
    k = z3.Int("k")
    up = _EXP(z3.ToReal(k) * _LOG(z3.RealVal(2)))  # 2^k
    down = _EXP(z3.ToReal(k) * _LOG(z3.RealVal(1) / 2))  # (1/2)^k
    assert _valid(down <= 1, [k >= 1], [down])
    assert not _valid(up <= 1, [k >= 1], [up])  # pow-unit's premise b <= 1 fails for b = 2
    assert _valid(up >= 1 + z3.ToReal(k), [k >= 0], [up])


def test_the_second_round_in_the_prover_and_when_it_is_skipped(monkeypatch):
    """The prover asks a failed query again with the facts (``facts=True``, the default), not a
    group of obligations asked at once (``facts=False``), and not a query whose counterexample
    already satisfies every fact (it would be a counterexample again)."""
    from tamp.prover.base import smt

    enc = Encoder({"q": A.INT, "r": A.INT})
    env = enc.initial_env()
    hyps = [enc.expr(parse_expr("q >= 2 && r >= 1"), env)]
    goal = enc.expr(parse_expr("exp(-r * log(q)) <= 1 / (q * r)"), env)
    assert smt.is_valid(goal, enc, smt.Stats(), 5000, hyps) == smt.VALID
    assert smt.is_valid(goal, enc, smt.Stats(), 5000, hyps, facts=False) != smt.VALID
    seen = []
    real = smt._satisfies
    monkeypatch.setattr(smt, "_satisfies", lambda m, f: seen.append(real(m, f)) or seen[-1])
    bad = enc.expr(parse_expr("exp(-r * log(q)) <= 1 / (2 * q * r)"), env)  # 1/2 > 1/4 at q=2, r=1
    assert smt.is_valid(bad, enc, smt.Stats(), 5000, hyps) == smt.INVALID
    assert seen == [True]  # the counterexample met every fact: no second round


def test_a_non_integer_exponent_gets_no_bernoulli():
    x = z3.Real("x")
    t = _EXP(x * _LOG(z3.RealVal(4)))
    # 4^x >= 1 + 3x is false at x = 1/2 (2 < 2.5): the IsInt premise keeps it out
    assert not _valid(t >= 1 + 3 * x, [x >= 0], [t])


def test_powers_of_one_base_are_ordered_by_their_exponents():
    p, c = z3.Real("p"), z3.Int("c")
    big, two = _EXP(z3.ToReal(c) * _LOG(p)), _EXP(2 * _LOG(p))
    assert _valid(big <= two, [p > 0, p <= 1, c >= 2], [big, two])
    assert not _valid(big <= two, [p > 1, c >= 3], [big, two])  # b > 1: the order turns round


def test_the_copies_of_a_chance_in_a_bound():
    p = parse_expr("p")
    assert _copies(parse_expr("p * p * p"), p) == 3
    assert _copies(parse_expr("p * (p * p)"), p) == 3
    assert _copies(parse_expr("n * p * p"), p) == 0  # n is no copy of p
    assert show_expr(_capped(p, parse_expr("m - i"), 2)) == "m - i >= 2 ? p * p : m - i >= 1 ? p : 1"


def test_the_exact_base_of_a_symbolic_chance():
    assert show_expr(exact_base(parse_expr("1 - 1 / q"))) == "q"
    assert show_expr(exact_base(parse_expr("p"))) == "1 / (1 - p)"
    assert exact_base(parse_expr("1 / 2")) is None  # literals: the earlier proposals


# ------------------------------------------------------------------------ targets and dev claims


def _proved_and_certified(path, tmp_path, capsys):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out
    return r


@pytest.mark.parametrize("path", TARGETS, ids=lambda p: p.stem)
def test_the_targets_are_proved_and_certified(path, tmp_path, capsys):
    _proved_and_certified(path, tmp_path, capsys)


@pytest.mark.parametrize("name", TRUE)
def test_dev_claims_are_proved_and_certified(name, tmp_path, capsys):
    _proved_and_certified(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.parametrize("name", FALSE_FAST)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize("name", FALSE_SLOW)
def test_false_siblings_stay_unproved_slow(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.parametrize("path", [TARGETS[0], TARGETS[2]], ids=lambda p: p.stem)
def test_the_targets_false_siblings_stay_unproved(path):
    assert _prove(path.with_name(path.stem + "_false.prob")).verdict != "proved"


# ------------------------------------------------------------------------ tampered certificates


def test_a_base_below_one_in_the_core_is_rejected(tmp_path, capsys):
    # 2^-k turned into (1/2)^-k = 2^k: Bernoulli's reciprocal fact needs the base >= 1
    path = MINE / "all_checks_miss.prob"
    cert = proved_certificate(path)
    assert swap_in_cores(cert, A.Call("log", (A.num(2),)), A.Call("log", (parse_expr("1 / 2"),)))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def _swap_inner_core(cert, old, new) -> bool:
    """Replace ``old`` by ``new`` in the inner proof's loop cores of the first nesting proof."""
    from support.certificates import Swap

    from lang.serialize import from_json, to_json

    changed = False
    for loop in cert["nesting"][0]["inner"]["loops"]:
        core = from_json(loop["core"])
        out = Swap(old, new).walk(core)
        changed |= show_expr(out) != show_expr(core)
        loop["core"] = to_json(out)
    return changed


def test_a_larger_per_object_power_is_rejected(tmp_path, capsys):
    # each object claimed lost w.p. <= p^3 where its replicas (c[j] >= 2) give only p^2
    from lang.serialize import to_json

    path = TARGETS[1]
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    cert["nesting"][0]["per_iteration"] = to_json(parse_expr("p * p * p"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_a_cap_below_the_power_is_rejected(tmp_path, capsys):
    # p^2 claimed already after one replica left: one more loss (p <= 1) does not fit
    path = TARGETS[1]
    cert = proved_certificate(path)
    assert _swap_inner_core(cert, parse_expr("c[j] - r >= 2"), parse_expr("c[j] - r >= 1"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_the_checker_needs_the_bound_facts(monkeypatch, tmp_path, capsys):
    # the checker re-derives the facts from each obligation's terms: without them the weighted
    # Hoeffding proof (its sum of squares must be positive) is rejected
    path = MINE / "weighted_votes.prob"
    cert = proved_certificate(path)
    monkeypatch.setattr(cert_solver, "bound_fact_lemmas", lambda apps, enc, where=None: [])
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out
