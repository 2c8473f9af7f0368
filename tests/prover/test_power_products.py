"""Products of independent misses (session 24): exact counts of uniform draws through a running
min/max, several coins' misses under one exponent (lemma ``exp-prod``), exact powers of a
literal chance (``exp-log``/``exp-pow``), unions of product events — proved, certified, and
tampered certificates (a changed base, a changed count, a dropped union part) rejected."""

from __future__ import annotations

import itertools

import pytest
import z3
from locations import BENCHMARKS
from support.certificates import Swap, check_proof
from support.proving import prove_path as _prove

from axioms.powers import power_lemmas
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr, parse_file
from lang.serialize import from_json, to_json
from tamp.certificate.exp_extrema import split_extrema as checker_split
from tamp.prover.expectation.powers import count_chances, power_cores, split_extrema, union_parts
from tamp.show import show_expr

DEV = BENCHMARKS / "prover4" / "dev"
EXTREME = DEV / "blind10" / "geometry" / "sample_extreme.prob"
TOPK = DEV / "blind10" / "auctions" / "topk_same_side.prob"
NEW = [
    EXTREME,
    TOPK,
    DEV / "powers" / "two_sensors.prob",
    DEV / "powers2" / "max_below.prob",
    DEV / "powers2" / "three_sensors.prob",
    DEV / "powers2" / "flips_equal.prob",
    DEV / "powers2" / "flips_half.prob",
]


def _loop(path):
    prog = parse_file(str(path)).programs[0]
    s = next(n for n in A.walk(prog.body) if isinstance(n, (A.For, A.While)))
    return prog, s


@pytest.mark.parametrize(
    "text",
    [
        "min(lo, x) > k",
        "k < min(x, lo)",
        "min(lo, x) <= k",
        "min(lo, x) < k",
        "max(hi, x) < k",
        "max(x, hi) <= k",
        "k <= max(hi, x)",
        "max(hi, x) > k",
    ],
)
def test_tests_of_a_running_extremum_split_into_tests_of_the_draw(text):
    e = parse_expr(text)
    mine, theirs = split_extrema(e, "x"), checker_split(e, "x")
    assert mine == theirs  # the checker's own copy builds the same expression
    assert "min(" not in show_expr(mine) and "max(" not in show_expr(mine)
    for lo, x, k in itertools.product(range(-2, 3), repeat=3):  # an identity of the order
        env = {"lo": lo, "hi": lo, "x": x, "k": k}
        assert evaluate(e, env) == evaluate(mine, env), (text, env)


def test_a_test_and_its_complement_share_one_atom_of_the_draw():
    yes, no = split_extrema(parse_expr("min(lo, x) > k"), "x"), split_extrema(parse_expr("min(lo, x) <= k"), "x")
    assert show_expr(no) == f"!({show_expr(yes)})"


def test_the_chance_of_passing_a_threshold_is_an_exact_count():
    prog, s = _loop(EXTREME)
    types = {p.name: p.type for p in prog.params}
    shown = [show_expr(c) for c in count_chances(s.body, parse_expr("!(lo <= k) ? 1 : 0"), {"n", "k", "m"}, types)]
    assert any("min(n, k)" in c and "/ (n - 1 + 1)" in c for c in shown), shown
    assert count_chances(s.body, parse_expr("!(lo <= k) ? 1 : 0"), {"n", "m"}, types) == []  # k not fixed


def test_a_union_gets_one_product_event_per_disjunct():
    parts = union_parts(parse_expr("!(!(allA || allB)) ? 1 : 0"))
    assert [show_expr(p) for p in parts] == ["allA ? 1 : 0", "allB ? 1 : 0"]
    assert union_parts(parse_expr("allA ? 1 : 0")) == []
    prog, s = _loop(TOPK)
    cores = [show_expr(c) for c in power_cores(s, parse_expr("!(!(allA || allB)) ? 1 : 0"), ["k"], {"k": A.INT})]
    assert "(allA ? 1 : 0) * exp(-(log(2) * (k - j))) + (allB ? 1 : 0) * exp(-(log(2) * (k - j)))" in cores


def _valid(facts, goal) -> bool:
    s = z3.Solver()
    s.add(*facts, z3.Not(goal))
    return s.check() == z3.unsat


def test_the_power_lemmas_are_laws_of_exp_and_give_the_product_of_misses():
    exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
    log = z3.Function("log", z3.RealSort(), z3.RealSort())
    p, q, m = z3.Reals("p q m")
    t = exp(-p - q)
    lemmas = dict((n, lem) for n, lem in power_lemmas([t], []))
    assert "exp-prod" in lemmas
    ranges = [0 <= p, p <= 1, 0 <= q, q <= 1]
    assert _valid([lemmas["exp-prod"], *ranges], t >= (1 - p) * (1 - q))
    assert not _valid([lemmas["exp-prod"]], t >= (1 - p) * (1 - q))  # not without its side condition
    two = exp(-2 * log(z3.RealVal(2)))
    pw = dict(power_lemmas([two], []))
    assert _valid([pw["exp-pow"]], two == z3.RealVal("1/4"))
    half = exp(m * log(z3.RealVal("1/2")))
    inv = dict(power_lemmas([half, exp(-m * log(z3.RealVal(2)))], []))
    assert _valid([inv["log-inv"]], log(z3.RealVal("1/2")) == -log(z3.RealVal(2)))
    a, b = exp(m), exp(-m)
    assert _valid([dict(power_lemmas([a, b], []))["exp-neg"]], a * b == 1)


@pytest.mark.parametrize("path", NEW, ids=lambda p: p.stem)
def test_products_of_misses_are_proved(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()


@pytest.mark.slow
@pytest.mark.parametrize("path", [p.with_name(p.stem + "_false.prob") for p in NEW[3:]], ids=lambda p: p.stem)
def test_their_false_siblings_are_not_proved(path):
    assert _prove(path).verdict != "proved"


def _expectation_certificate(path):
    """The certificate of the expected-failure engine's proof alone (the portfolio may prove a
    claim by another method first: topk_same_side's two flags by conjuncts with shares)."""
    import json

    from tamp.certificate.writer import file_certificate
    from tamp.prover.portfolio import Expectation, prove_claim
    from tamp.results import FileResult

    src = parse_file(str(path))
    res = prove_claim(src.programs[0], None, None, str(path), src.text, strategies=[Expectation()])[0]
    assert res.verdict == "proved", res.render_text()
    whole = FileResult(str(path), [res])
    return json.loads(json.dumps(file_certificate(whole, path.read_bytes(), None, None)))


def _tampered(path, tmp_path, capsys, old: str, new: str):
    cert = _expectation_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    loop = cert["expectation"][0]["loops"][0]
    core = from_json(loop["core"])
    changed = Swap(parse_expr(old), parse_expr(new)).walk(core)
    assert show_expr(changed) != show_expr(core), show_expr(core)
    loop["core"] = to_json(changed)
    return check_proof(cert, path, tmp_path, capsys)


def test_a_changed_base_is_rejected(tmp_path, capsys):
    code, out = _tampered(TOPK, tmp_path, capsys, "log(2)", "log(3)")
    assert code != 0, out


def test_a_changed_count_is_rejected(tmp_path, capsys):
    code, out = _tampered(EXTREME, tmp_path, capsys, "k", "k + 1")
    assert code != 0, out


def test_a_dropped_union_part_is_rejected(tmp_path, capsys):
    code, out = _tampered(TOPK, tmp_path, capsys, "allB ? 1 : 0", "0")
    assert code != 0, out
