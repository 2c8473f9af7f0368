"""Closed-form sum bounds (:mod:`axioms.sum_bounds`) and the checker's re-derivation of them
(:mod:`tamp.certificate.sum_bound_check`): the theorems hold numerically, each instance is
proposed for its shape and lets the solver decide the BUDGET-style query it was made for, the
checker accepts the library's instances and rejects tampered ones (a changed lower limit, a
dropped side condition, a changed coefficient, a body of another shape), and the dev claims
(blind10, dev/sums24) are proved and their certificates re-checked while the false siblings
stay unknown."""

from __future__ import annotations

import math

import pytest
import z3
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate

from axioms.lemmas import closed_form_instances, lemma_instances
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.parser import parse_expr, parse_file
from tamp.certificate.sum_bound_check import verify
from tamp.core.encode import Encoder
from tamp.prover import prove_program

SUMS = BENCHMARKS / "prover4" / "dev" / "sums24"
GEOM = BENCHMARKS / "prover4" / "dev" / "blind10" / "geometry"
TYPES = {"n": A.INT, "m": A.INT, "L": A.INT, "l": A.INT, "x": A.INT, "t": A.REAL, "c": A.REAL}


def _enc():
    enc = Encoder(TYPES)
    return enc, enc.env0


def _instances(text):
    """(encoder, the sum application of ``text``, its closed-form instances)."""
    enc, env = _enc()
    e = enc.expr(parse_expr(text), env)
    sums = [t for t in transcendental_apps(e) if enc.sum_info(t.decl()) is not None]
    assert len(sums) == 1
    return enc, sums[0], closed_form_instances(sums, enc)


def _valid(enc, hyps_text, goal_text):
    env = enc.env0
    hyps = [enc.expr(parse_expr(h), env) for h in hyps_text]
    goal = enc.expr(parse_expr(goal_text), env)
    lemmas = [lem for _n, lem in lemma_instances(transcendental_apps(z3.And(*hyps, goal)), enc)]
    s = z3.Solver()
    s.set("timeout", 5000)
    s.add(*hyps, *lemmas, z3.Not(goal))
    return s.check()


def test_the_harmonic_bounds_hold_numerically():
    for a in range(1, 12):
        for b in range(a, 40):
            h = sum(1 / i for i in range(a, b + 1))
            assert h >= math.log((b + 1) / a) - 1e-12
            assert h <= 1 / a + math.log(b / a) + 1e-12
            if a >= 2:
                assert h <= math.log(b / (a - 1)) + 1e-12


def test_the_shift_count_is_the_threshold_count_for_every_shift():
    for L in range(1, 9):
        for e in range(-3, 12):
            for w in range(-2, L + 3):
                got = sum(1 for j in range(L) if (e + j) % L >= w)
                assert got == max(0, (L - 1) - max(0, w) + 1)


@pytest.mark.parametrize(
    "text, names",
    [
        ("sum(i in 3..=n: 2 / i)", {"harmonic-upper", "harmonic-upper1", "harmonic-lower"}),
        ("sum(d in 1..=n - 1: 2 / (d + 1))", {"harmonic-upper", "harmonic-upper1", "harmonic-lower"}),
        ("sum(i in 0..n: n / (n - i))", {"harmonic-upper", "harmonic-upper1", "harmonic-lower"}),
        ("sum(i in 1..=n: 1 / (i * (i + 1)))", {"telescoping"}),
        ("sum(i in 1..=n: i / (n * n))", {"arithmetic"}),
        ("sum(i in 0..n: exp(-i))", {"geometric"}),
        ("sum(j in 0..=L - 1: (x + j) mod L >= L - l ? 1 : 0)", {"shift-count"}),
        ("sum(j in 0..=L - 1: j mod L < l ? 1 : 0)", {"shift-count"}),
    ],
)
def test_each_shape_gets_its_instances_and_the_checker_accepts_them(text, names):
    enc, t, found = _instances(text)
    assert {name for _t, name, _l, _p in found} == names
    for t1, name, lem, ps in found:
        assert verify(t1, name, lem, ps, enc), name


def test_a_body_of_another_shape_gets_no_instance():
    _enc_, _t, found = _instances("sum(i in 1..=n: 1 / (i * i))")
    assert found == []
    _enc_, _t, found = _instances("sum(j in 0..=L - 2: (x + j) mod L >= l ? 1 : 0)")
    assert {name for _t, name, _l, _p in found} == {"shift-count"}  # proposed, but its side fails


def test_the_instances_decide_the_budget_queries_and_nothing_false():
    enc, _e = _enc()
    assert _valid(enc, ["n >= 2", "t > 0"], "sum(i in 3..=n: 2 / i) / t <= 2 * log(n / 2) / t") == z3.unsat
    assert _valid(enc, ["n >= 2", "t > 0"], "sum(i in 3..=n: 2 / i) / t <= log(n / 2) / t") != z3.unsat
    assert _valid(enc, ["n >= 3"], "sum(i in 3..=n: 1 / i) >= log((n + 1) / 3)") == z3.unsat
    assert _valid(enc, ["n >= 1"], "sum(i in 0..n: n / (n - i)) <= n * (1 + log(n))") == z3.unsat
    assert _valid(enc, ["n >= 1"], "sum(i in 0..n: n / (n - i)) <= n * log(n)") != z3.unsat
    assert _valid(enc, ["n >= 1"], "sum(i in 1..=n: 1 / (i * (i + 1))) == n / (n + 1)") == z3.unsat
    assert _valid(enc, ["n >= 1"], "sum(i in 1..=n: i) == n * (n + 1) / 2") == z3.unsat
    assert _valid(enc, ["n >= 1"], "sum(i in 1..=n: i) == n * n / 2") != z3.unsat
    goal = "sum(j in 0..=L - 1: (x + j) mod L >= L - l ? 1 : 0) == l"
    assert _valid(enc, ["L >= 1", "l >= 0", "l <= L"], goal) == z3.unsat
    assert _valid(enc, ["L >= 1", "l >= 0"], goal) != z3.unsat  # l > L: the count is L, not l


def _tampered(found, name, change):
    t, _n, lem, ps = next(f for f in found if f[1] == name)
    return t, change(t, lem, ps), ps


def test_the_checker_rejects_tampered_harmonic_instances():
    # a symbolic lower limit m: the side condition a >= 2 is not true by itself (with m = 3 the
    # checker accepts the instance without it, rightly: it is then a true fact)
    enc, t, found = _instances("sum(i in m..=n: 2 / i)")
    t, lem, ps = _tampered(found, "harmonic-upper", lambda t, lem, ps: lem)
    assert verify(t, "harmonic-upper", lem, ps, enc)
    lo, hi, c = t.arg(0), t.arg(1), ps["c"]
    a, b = z3.ToReal(lo), z3.ToReal(hi - 1)
    # a changed lower limit: log(b/(a - 2)) instead of log(b/(a - 1))
    changed = z3.Implies(z3.And(hi > lo, lo >= 2, c >= 0), t <= c * enc.log(b / (a - 2)))
    assert not verify(t, "harmonic-upper", changed, ps, enc)
    # a dropped side condition: a >= 2 (at a = 1 the bound reads log(b/0))
    dropped = z3.Implies(z3.And(hi > lo, c >= 0), t <= c * enc.log(b / (a - 1)))
    assert not verify(t, "harmonic-upper", dropped, ps, enc)
    # the lower bound claimed with the upper one's ends
    wrong = z3.Implies(z3.And(hi > lo, lo >= 1, c >= 0), t >= c * enc.log(b / (a - 1)))
    assert not verify(t, "harmonic-lower", wrong, ps, enc)
    # a changed coefficient in the parameters: the body 2/i is not 3/i
    lem = next(f[2] for f in found if f[1] == "harmonic-upper")
    assert not verify(
        t, "harmonic-upper", z3.substitute(lem, (z3.RealVal(2), z3.RealVal(3))), {**ps, "c": z3.RealVal(3)}, enc
    )


def test_the_checker_rejects_tampered_shift_counts_and_foreign_shapes():
    enc, t, found = _instances("sum(j in m..=n: (x + j) mod L >= L - l ? 1 : 0)")
    t, lem, ps = _tampered(found, "shift-count", lambda t, lem, ps: lem)
    assert verify(t, "shift-count", lem, ps, enc)
    L = ps["L"]
    # the full-period side condition dropped
    body = lem.arg(1)
    assert not verify(t, "shift-count", z3.Implies(L >= 1, body), ps, enc)
    # a threshold moved by one in the parameters (the count of >= L - l + 1), with the lemma to match
    moved = {**ps, "los": [z3.IntVal(0), ps["los"][1] + 1]}
    from axioms.sum_bounds import statement

    assert not verify(t, "shift-count", statement("shift-count", t, moved, enc.log, enc.exp), moved, enc)
    # a σ that is not ±1 (not a bijection)
    assert not verify(t, "shift-count", lem, {**ps, "sigma": 2}, enc)
    # an instance under another lemma's name
    assert not verify(t, "telescoping", lem, {"c": z3.RealVal(1), "s": z3.IntVal(0), "sigma": 1}, enc)


CLAIMS = [GEOM / "lp_backwards_analysis.prob", GEOM / "random_shift_cut.prob"] + sorted(
    p for p in SUMS.glob("*.prob") if not p.stem.endswith("_false")
)


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_the_dev_claims_are_proved_and_rechecked(path, tmp_path, capsys):
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "path",
    [GEOM / "random_shift_cut_false.prob"]  # lp_backwards_analysis_false: checked by hand (its search takes ~10 s)
    + [
        SUMS / f
        for f in (
            "telescoping_faults_false.prob",
            "backoff_collisions_false.prob",
            "rotation_window_false.prob",
            "coupon_wait_false.prob",
        )
    ],
    ids=lambda p: p.stem,
)
def test_the_false_siblings_stay_unknown(path):
    src = parse_file(str(path))
    r = prove_program(src.programs[0], path=str(path), source=src.text, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved"
