"""Flag loops (session 23, ``flagloops``): a loop that runs until a flag is set ends almost
surely when every iteration sets the flag with a chance δ over the inputs, read off the body's
lower pre-expectation — a uniform draw's count of values passing threshold tests in closed form
(:mod:`tamp.core.counts`, exact in the z3 encoding too). True dev claims are proved with the
exit chance in the certificate; false siblings are not; a tampered exit chance or core is
rejected by ``tamp check-proof``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import z3
from support.certificates import certify, check_in_process

from lang import ast as A
from lang.parser import parse_expr
from tamp.core.counts import closed_count, interval_ends
from tamp.core.encode import Encoder
from tamp.prover.loops.exits import closed_counts, settle_extrema

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev"
TRUE = [
    DEV / "blind9" / "lottery" / "first_win_markov.prob",
    DEV / "flagloops" / "wait_in_range.prob",
    DEV / "flagloops" / "two_gates.prob",
    DEV / "flagloops" / "retry_bern_markov.prob",
]
# the lottery's false sibling searches every core after its exit chance is found (about 10 s)
FALSE = [
    pytest.param(p, marks=pytest.mark.slow) if p.stem == "first_win_markov" else p
    for p in (q.with_name(q.stem + "_false.prob") for q in TRUE)
]
INT = {"a": A.INT, "b": A.INT, "T": A.INT, "p": A.REAL}


def _count(text: str) -> A.Sum:
    e = parse_expr(text)
    assert isinstance(e, A.Sum)
    return e


def _brute(cond, lo, hi, env) -> int:
    return sum(1 for u in range(lo, hi + 1) if cond(u, env))


ATOMS = {
    "u <= a": lambda u, v: u <= v["a"],
    "u < a": lambda u, v: u < v["a"],
    "a < u": lambda u, v: v["a"] < u,
    "u >= a && u < b": lambda u, v: v["a"] <= u < v["b"],
    "u == a": lambda u, v: u == v["a"],
    "b >= u && u > a - 2": lambda u, v: v["a"] - 2 < u <= v["b"],
}


@pytest.mark.parametrize("atom", sorted(ATOMS))
def test_closed_count_is_the_count(atom):
    """The closed form equals the count on every small range and threshold, empty ranges too;
    the z3 encoding of the sum is the same number."""
    e = _count(f"sum(u in lo..=hi: {atom} ? 1 : 0)")
    closed = closed_count(e, lambda x: True)
    assert closed is not None
    types = {"a": A.INT, "b": A.INT, "lo": A.INT, "hi": A.INT, "u": A.INT}
    enc = Encoder(types)
    env = enc.initial_env()
    term, closed_t = enc.expr(e, env), enc.expr(closed, env)
    for lo, hi, a, b in itertools.product(range(-2, 3), range(-3, 4), range(-3, 5), range(-1, 4)):
        vals = {"a": a, "b": b}
        want = _brute(ATOMS[atom], lo, hi, vals)
        sub = [(env[k], z3.IntVal(v)) for k, v in (("lo", lo), ("hi", hi), ("a", a), ("b", b))]
        for t in (term, closed_t):
            got = z3.simplify(z3.substitute(t, *sub))
            assert got.eq(z3.simplify(z3.ToReal(z3.IntVal(want)))) or str(got) == str(want), (atom, lo, hi, a, b)


def test_other_bodies_stay_opaque():
    assert interval_ends(_count("sum(u in 1..=T: u * u <= a ? 1 : 0)"), lambda x: True) is None
    assert interval_ends(_count("sum(u in 1..=T: u <= a || u > b ? 1 : 0)"), lambda x: True) is None
    assert interval_ends(_count("sum(u in 1..=T: u <= a ? 2 : 0)"), lambda x: True) is None
    # a real threshold is not an integer end: the count stays a function (no closed form)
    assert closed_counts(parse_expr("sum(u in 1..=T: u <= p ? 1 : 0) / T"), INT) == parse_expr(
        "sum(u in 1..=T: u <= p ? 1 : 0) / T"
    )


def test_chance_proposal_settles_extrema():
    e = closed_counts(parse_expr("sum(u in 1..=T: u <= a ? 1 : 0) / T"), INT)
    assert e == parse_expr("max(0, min(T, a) - 1 + 1) / T")
    le = {(parse_expr("a"), parse_expr("T")), (parse_expr("0"), parse_expr("a"))}
    settled = settle_extrema(parse_expr("max(0, min(T, a))"), lambda x, y: (x, y) in le)
    assert settled == parse_expr("a")
    assert settle_extrema(parse_expr("min(T, a)"), lambda x, y: False) == parse_expr("min(T, a)")


def _copy(c):
    return json.loads(json.dumps(c))


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_flag_loops_are_proved_with_an_exit_chance(path):
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    loops = cert["expectation"][0]["loops"]
    assert [lp["termination"] for lp in loops] == ["exit"]
    assert check_in_process(cert, path, raw).ok


def test_a_tampered_exit_chance_or_core_is_rejected():
    path = TRUE[0]
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    for field, text in (("measure", "2 * a / T"), ("measure", "a / (T - 1)"), ("core", "T / (a * t + 1)")):
        bad = _copy(cert)
        bad["expectation"][0]["loops"][0][field] = json.loads(_json(parse_expr(text)))
        assert not check_in_process(bad, path, raw).ok, (field, text)


def _json(e: A.Expr) -> str:
    from lang.serialize import to_json

    return json.dumps(to_json(e))


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    res, _cert, _raw = certify(path)
    assert res.programs[0].verdict != "proved"


STREAKS = [DEV / "blind8" / "sports" / "no_three_streak.prob", DEV / "flagloops" / "streak_four_while.prob"]


@pytest.mark.parametrize("path", STREAKS, ids=lambda p: p.stem)
def test_longest_run_claims_are_proved_by_the_streak_template(path):
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    core = cert["expectation"][0]["loops"][0]["core"]
    assert "max" in json.dumps(core)  # the windows-left block
    assert check_in_process(cert, path, raw).ok


def test_a_streak_core_without_the_run_blocks_is_rejected():
    path = STREAKS[0]
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    for text in (
        "i >= 0 && run >= 0 && best < 3 ? max(n - i - 2, 0) * (h * h * h) : 1",
        "i >= 0 && run >= 0 && best < 3 ? (run >= 2 ? 1 : 0) * (n - i >= 1 ? 1 : 0) * (h * h)"
        " + (run >= 1 ? 1 : 0) * (n - i >= 2 ? 1 : 0) * (h * h) + max(n - i - 2, 0) * (h * h * h) : 1",
    ):
        bad = _copy(cert)
        bad["expectation"][0]["loops"][0]["core"] = json.loads(_json(parse_expr(text)))
        assert not check_in_process(bad, path, raw).ok, text


@pytest.mark.parametrize("path", [p.with_name(p.stem + "_false.prob") for p in STREAKS], ids=lambda p: p.stem)
def test_longest_run_false_siblings_are_not_proved(path):
    res, _cert, _raw = certify(path)
    assert res.programs[0].verdict != "proved"
