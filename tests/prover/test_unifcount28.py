"""Closed-form counts for threshold tests of a uniform draw (session 28, unifcount28).

``x ~ unif(lo, hi)`` read by the failure in one test ``x <= e`` (``<``, ``>=``, ``>``, either way
round) or a window ``a <= x && x <= b`` is weighted by ``max(0, min(hi, …) - max(lo, …) + 1)/N``
instead of ``sum(u in lo..=hi: … ? 1 : 0)/N``, so an earlier draw whose test sits inside the
threshold (cards dealt without replacement) is weighted in turn. The prover builds the count with
:func:`tamp.prover.expectation.prove.range_count`, the checker with its own
:func:`tamp.certificate.exp_counts.threshold_count`; both are compared with brute force here, the
claims are proved and re-checked, a checker whose count is one too many rejects the certificates
of tight claims, and the false siblings stay unproved."""

from __future__ import annotations

import itertools

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

import tamp.certificate.exp_rules as exp_rules
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.certificate.exp_counts import threshold_count
from tamp.prover.expectation.prove import range_count

MINE = BENCHMARKS / "prover4" / "dev" / "unifcount28"
TWO_ACES = BENCHMARKS / "prover4" / "dev" / "blind14" / "cards" / "two_aces.prob"

# unknown at the session start (the sum over the range stood inside a later draw's test)
NEW = ["late_arrival", "shifted_window", "two_stages", "three_aces"]
# proved before too (their sums stayed apart), now with closed counts; adaptive_alarm spends ~20 s
# in the union-bound engine that runs first
OLD = ["inspect_two", "window_hit"]

INTS = {"e", "a", "b", "lo", "hi"}


def _is_int(e: A.Expr) -> bool:
    return all(isinstance(n, A.Num) and n.is_int or isinstance(n, A.Var) and n.name in INTS for n in A.walk(e)) and (
        not any(isinstance(n, A.Binary) and n.op == "/" for n in A.walk(e))
    )


TESTS = [
    "u <= e",
    "u < e",
    "u >= e",
    "u > e",
    "e >= u",
    "e < u",
    "u == e",
    "!(u <= e)",
    "!(e > u)",
    "a <= u && u <= b",
    "a < u && !(u >= b)",
    "u >= a && b >= u && u != e",  # not an interval: no closed form
]


def _brute(test: A.Expr, env: dict) -> int:
    return sum(1 for t in range(env["lo"], env["hi"] + 1) if evaluate(test, {**env, "u": t}))


@pytest.mark.parametrize("text", TESTS)
def test_both_counts_agree_with_brute_force(text):
    test = parse_expr(text)
    lo, hi = A.Var("lo"), A.Var("hi")
    mine = threshold_count("u", lo, hi, test, _is_int)
    theirs = range_count("u", lo, hi, test, _is_int)
    if "!=" in text:
        assert mine is None and isinstance(theirs, A.Sum)
        return
    assert mine is not None and not A.contains(theirs, A.Sum)
    for lo_v, hi_v, e, a, b in itertools.product(range(-1, 3), range(-2, 4), range(-2, 5), range(-1, 3), range(0, 4)):
        env = {"lo": lo_v, "hi": hi_v, "e": e, "a": a, "b": b}  # empty ranges (hi < lo) included
        want = _brute(test, env)
        assert evaluate(mine, env) == want, (text, env)
        assert evaluate(theirs, env) == want, (text, env)


def test_a_real_threshold_is_not_closed():
    # u <= N/2 passes up to floor(N/2): no closed count, the sum stays (both sides)
    test = parse_expr("u <= e / 2")
    assert threshold_count("u", A.Var("lo"), A.Var("hi"), test, _is_int) is None
    assert isinstance(range_count("u", A.Var("lo"), A.Var("hi"), test, _is_int), A.Sum)
    # nor a range whose end may not be an integer
    assert threshold_count("u", A.Var("lo"), parse_expr("hi / 2"), parse_expr("u <= e"), _is_int) is None


def test_the_mirrored_and_negated_forms_give_one_count():
    lo, hi = A.Var("lo"), A.Var("hi")
    forms = [threshold_count("u", lo, hi, parse_expr(t), _is_int) for t in ("u <= e", "e >= u", "!(u > e)")]
    assert forms[0] == forms[1] == forms[2]


# ------------------------------------------------------------------------ the target and the claims


def _proved_and_certified(path, tmp_path, capsys):
    r = _prove(path, timeout=120)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out
    return r


def test_two_aces_is_proved_with_closed_counts(tmp_path, capsys):
    r = _proved_and_certified(TWO_ACES, tmp_path, capsys)
    assert r.to_json()["method"] == "expectation"
    assert "sum(" not in r.render_text()


@pytest.mark.parametrize("name", NEW + OLD)
def test_proved_and_certified(name, tmp_path, capsys):
    _proved_and_certified(MINE / f"{name}.prob", tmp_path, capsys)


@pytest.mark.slow
def test_adaptive_alarm_proved_and_certified(tmp_path, capsys):
    _proved_and_certified(MINE / "adaptive_alarm.prob", tmp_path, capsys)


@pytest.mark.parametrize("name", NEW)
def test_without_closed_counts_the_new_claims_are_not_proved(name, monkeypatch):
    import tamp.prover.expectation.prove as exp_prove

    monkeypatch.setattr(exp_prove, "closed_count", lambda *a, **k: None)
    assert _prove(MINE / f"{name}.prob").verdict != "proved"


@pytest.mark.parametrize("name", ["window_hit", "late_arrival", "two_stages"])
def test_a_checker_count_one_too_many_rejects(name, tmp_path, capsys, monkeypatch):
    """The checker relies on its own count: one more passing value than there are (a count off
    by one) breaks the budget of these tight claims, so the same certificate is rejected."""
    path = MINE / f"{name}.prob"
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    real = exp_rules.threshold_count

    def off_by_one(*args):
        c = real(*args)
        return None if c is None else A.Binary("+", c, A.num(1))

    monkeypatch.setattr(exp_rules, "threshold_count", off_by_one)
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_a_tampered_bound_is_rejected(tmp_path, capsys):
    path = MINE / "late_arrival.prob"
    cert = proved_certificate(path)
    # c·c/((w + 1)(w + 1)) becomes c·(c - 1)/((w + 1)(w + 1)), the exact chance: the source's
    # bound is no longer the certificate's (CLAIM)
    (exp,) = cert["expectation"]
    exp["bound"]["left"]["right"] = to_json(parse_expr("c - 1"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.parametrize(
    "name", ["late_arrival", "shifted_window", "two_stages", "window_hit", "inspect_two", "three_aces"]
)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["adaptive_alarm"])
def test_false_siblings_stay_unproved_slow(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


def test_the_blind_false_sibling_stays_unproved():
    assert _prove(TWO_ACES.with_name("two_aces_false.prob")).verdict != "proved"
