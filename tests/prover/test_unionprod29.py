"""A fresh uniform draw against a value fixed before it, and conjuncts proved apart with shares of
the bound (session 29, unionprod29).

``uniform_set_root`` / ``uniform_miss`` (:mod:`axioms.uniform_hits`) give one retry's chance that
two draws from a literal set agree (``1/k``) or differ (``1 - 1/k``), so per-iteration composition
multiplies it over the tries; the conjunct split (:mod:`tamp.prover.conjuncts.shares`) proves each
conjunct of ``A && B`` with its share of the bound, e.g. a union of two per-iteration products.
Proved, certified, tampered certificates rejected, false siblings left unproved, and the pure
functions on their own."""

from __future__ import annotations

from fractions import Fraction

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from axioms import families_for
from axioms.uniform_hits import UniformMiss, UniformSetRoot, points_of, set_size
from lang import ast as A
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.cfa.conjuncts import shares_fit
from tamp.prover.conjuncts.shares import share_proposals
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "unionprod29"
BLIND = BENCHMARKS / "prover4" / "dev" / "blind15" / "discrepancy"
RESAMPLE = BLIND / "resample_colouring.prob"
MONO = BLIND / "monochromatic_set.prob"

#: true claims that need this session's rules (unknown at the session start)
NEW = ["balanced_split", "three_hits", "two_draws", "sign_pairs"]
#: true claims proved before too (kept proved: other shapes of the same ideas)
KEPT = ["die_until_agree", "picks_collide", "recolour_triple", "six_and_even", "coins_not_constant"]
FALSE = [
    "balanced_split",
    "three_hits",
    "two_draws",
    "sign_pairs",
    "die_until_agree",
    "picks_collide",
    "recolour_triple",
    "six_and_even",
    "coins_not_constant",
    "two_phases",
]


def _set(*values) -> A.Call:
    return A.Call("unif", (A.SetLit(tuple(A.num(v) for v in values)),))


# ------------------------------------------------------------------------ pure functions


def test_the_families_apply_to_literal_sets_of_distinct_numbers():
    assert set_size(_set(-1, 1)) == 2
    assert set_size(_set(1, 1)) == 0  # a repeated element: refused
    assert set_size(A.Call("unif", (A.num(1), A.num(6)))) == 0
    assert points_of(A.Call("unif", (A.num(1), A.num(6)))) == tuple(range(1, 7))
    assert points_of(A.Call("unif", (A.num(1), A.num(100)))) == ()  # too many points to name
    names = {f.name for f in families_for(_set(0, 5, 9))}
    assert {"uniform_set_root", "uniform_miss"} <= names


def test_the_hit_costs_the_degree_over_the_size():
    inst = UniformSetRoot().instantiate((A.Var("y"),), _set(-1, 1), parse_expr("x - y"))
    assert show_expr(inst.cost) == "1 / 2"
    assert inst.side == ()
    fam = UniformSetRoot()
    # exact chance of hitting a fixed value, at or below the cost
    for x in (-1, 0, 1, 7):
        p = parse_expr(f"v - {x}") if x >= 0 else parse_expr(f"v + {-x}")
        assert fam.exact_tail(((-1, 0, 1),), p) <= fam.cost_value(((-1, 0, 1),), p)
    quad = parse_expr("v * v - 1")  # two roots among {-1, 0, 1}
    assert fam.exact_tail(((-1, 0, 1),), quad) == pytest.approx(2 / 3) == fam.cost_value(((-1, 0, 1),), quad)


def test_the_miss_needs_a_root_among_the_points():
    inst = UniformMiss().instantiate((A.Var("b"),), A.Call("unif", (A.num(1), A.num(6))), parse_expr("a - b"))
    assert inst.cost == A.num(Fraction(5, 6))
    (side,) = inst.side
    assert "b" not in {n.name for n in A.walk(side) if isinstance(n, A.Var)}
    assert show_expr(inst.bad) == "a - b != 0"
    fam = UniformMiss()
    assert fam.exact_tail(((2, 4, 8),), parse_expr("v - 4")) <= fam.cost_value(((2, 4, 8),), parse_expr("v - 4"))
    with pytest.raises(ValueError):
        fam.instantiate((A.Var("b"),), _set(1, 2), parse_expr("a - c"))  # does not read the draw


def test_share_proposals_read_the_bound():
    got = [[show_expr(s) for s in p] for p in share_proposals(parse_expr("2 * exp(-n / 2)"), 2)]
    assert got == [["exp(-n / 2)", "exp(-n / 2)"]]
    got = [[show_expr(s) for s in p] for p in share_proposals(parse_expr("a + b"), 2)]
    assert got[:2] == [["a", "b"], ["b", "a"]] and got[2] == ["(a + b) / 2", "(a + b) / 2"]
    got = [[show_expr(s) for s in p] for p in share_proposals(parse_expr("6 * q"), 3)]
    assert got == [["2 * q", "2 * q", "2 * q"]]
    assert share_proposals(parse_expr("p"), 0) == []
    assert show_expr(shares_fit([parse_expr("a"), parse_expr("b")], parse_expr("c"))) == "a + b <= c"


# ------------------------------------------------------------------------ the targets


def test_resample_colouring_is_proved_by_the_set_root(tmp_path, capsys):
    r = _prove(RESAMPLE)
    assert r.verdict == "proved", r.render_text()
    cert = proved_certificate(RESAMPLE)
    assert "uniform_set_root" in str(cert)
    code, out = check_proof(cert, RESAMPLE, tmp_path, capsys)
    assert code == 0, out


def test_monochromatic_set_is_proved_by_shares(tmp_path, capsys):
    r = _prove(MONO)
    assert r.verdict == "proved", r.render_text()
    assert r.stats["method"] == "conjuncts"
    code, out = check_proof(proved_certificate(MONO), MONO, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("name", ["resample_colouring", "monochromatic_set"])
def test_the_targets_false_siblings_stay_unproved(name):
    assert _prove(BLIND / f"{name}_false.prob").verdict != "proved"


# ------------------------------------------------------------------------ tampered certificates


def _replace_params(node, family: str, param) -> int:
    """Every leaf of ``family`` in the certificate gets the parameter ``param``."""
    hits = 0
    if isinstance(node, dict):
        if node.get("family") == family and "param" in node:
            node["param"] = param
            hits += 1
        for v in node.values():
            hits += _replace_params(v, family, param)
    elif isinstance(node, list):
        for v in node:
            hits += _replace_params(v, family, param)
    return hits


def test_a_tampered_set_root_parameter_is_rejected(tmp_path, capsys):
    cert = proved_certificate(RESAMPLE)
    assert _replace_params(cert, "uniform_set_root", {"expr": to_json(parse_expr("x + y"))}) > 0
    code, out = check_proof(cert, RESAMPLE, tmp_path, capsys)
    assert code != 0, out


def test_a_share_too_large_is_rejected(tmp_path, capsys):
    cert = proved_certificate(MONO)
    (conj,) = cert["conjuncts"]
    conj["rest_bound"] = to_json(parse_expr("2 * exp(-n / 2)"))
    code, out = check_proof(cert, MONO, tmp_path, capsys)
    assert code != 0, out


def test_a_share_dropped_to_zero_is_rejected(tmp_path, capsys):
    cert = proved_certificate(MONO)
    (conj,) = cert["conjuncts"]
    del conj["sure"][0]["bound"]  # the part then claims bound 0, which its proof does not prove
    code, out = check_proof(cert, MONO, tmp_path, capsys)
    assert code != 0, out


# ------------------------------------------------------------------------ own claims


@pytest.mark.parametrize("name", NEW)
def test_own_claims_proved_and_certified(name, tmp_path, capsys):
    path = MINE / f"{name}.prob"
    r = _prove(path, timeout=120)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("name", KEPT)
def test_own_claims_kept_proved(name):
    assert _prove(MINE / f"{name}.prob", timeout=120).verdict == "proved"


@pytest.mark.slow
@pytest.mark.parametrize("name", FALSE)
def test_own_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"
