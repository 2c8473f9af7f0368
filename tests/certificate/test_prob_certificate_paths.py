"""Probability certificates, second round: branches that draw discrete values (followed, with a
decision-tree COVER), Gaussian groups rewritten into independent coordinates (one oblique
half-space = a 1-D mass), and partial witness leaves integrated along an inner variable. Each new
kind of evidence is tampered with and must be rejected."""

from __future__ import annotations

import copy
import math
import random
from fractions import Fraction

import pytest
from cert_testlib import BENCH, check
from test_prob_certificate import certify, rejected

BRANCH = """program br()
  ensures P(k | x < 0) / P(k | !(x < 0)) < 0.5
{
  x ~ gauss(0, 1);
  if (x < 0) { k ~ bern(0.3); } else { k ~ bern(0.8); }
}
"""

# x + 2y ~ N(1, 9): P(x + 2y < 2) = Φ(1/3) ≈ 0.6306
OBLIQUE = """program ob()
  ensures P(x + 2 * y < 2) > 0.62 && P(x + 2 * y < 2) < 0.64
{
  x ~ gauss(0, 1);
  y ~ gauss(0.5, 2);
}
"""

WEDGE = """program wedge()
  ensures P(x + 2 * y < 2 && x - y < 1) > 0.3
{
  x ~ gauss(0, 1);
  y ~ gauss(0.5, 2);
}
"""


def _write(tmp_path, name, text):
    p = tmp_path / f"{name}.prob"
    p.write_text(text)
    return p


def _traces(cert, term=0):
    return cert["probability"][0]["terms"][term]["traces"]


@pytest.fixture(scope="module")
def branch(tmp_path_factory):
    p = _write(tmp_path_factory.mktemp("br"), "br", BRANCH)
    return p, certify(p, "proved")


@pytest.fixture(scope="module")
def oblique(tmp_path_factory):
    p = _write(tmp_path_factory.mktemp("ob"), "ob", OBLIQUE)
    return p, certify(p, "proved")


# ---------------------------------------------------------------- positive


def test_branch_program_checks_ok(branch, tmp_path, capsys):
    path, cert = branch
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    keys = sorted((tuple(t["choices"]), tuple(t["branches"])) for t in _traces(cert))
    assert keys == [((0,), (0,)), ((0,), (1,)), ((1,), (0,)), ((1,), (1,))]
    assert _traces(cert)[0]["cells"] is not None and cert["probability"][0]["terms"][0]["uncovered"] == "0"


def test_branch_program_agrees_with_simulation(branch):
    simulate = pytest.importorskip("tamp.simulation").simulate
    sim = simulate(BRANCH, {}, runs=20000, seed=3)
    (_, _, lo1, hi1), (_, _, lo2, hi2) = [t[:4] for t in sim.prob_terms[:2]]
    assert lo1 <= 0.3 <= hi1 and lo2 <= 0.8 <= hi2
    assert hi1 / lo2 < 0.5


def test_oblique_half_space_is_one_dimensional(oblique, tmp_path, capsys):
    path, cert = oblique
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    cs = _traces(cert)[0]["cells"]
    assert all(c["witness"] == {"ldl": None} for c in cs)
    hit = next(c for c in cs if c["class"] == "hit")
    lo, hi = (Fraction(x) for x in hit["mass"])
    exact = 0.5 * math.erfc(-(1 / 3) / math.sqrt(2))
    assert float(lo) <= exact + 1e-12 and exact - 1e-12 <= float(hi) and hi - lo < Fraction(1, 10**12)


def test_two_half_spaces_check_ok(tmp_path, capsys):
    p = _write(tmp_path, "wedge", WEDGE)
    cert = certify(p, "proved")
    code, out = check(cert, p, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("rel", ["fairness/BN1_DT16.prob", "fairness/ind_SVM5.prob", "fairness/BN2_SVM4a.prob"])
def test_formerly_uncertified_benchmarks_check_ok(rel, tmp_path, capsys):
    path = BENCH / rel
    cert = certify(path)
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


# ---------------------------------------------------------------- tampering


def test_half_space_mass_raised_is_rejected(oblique, tmp_path, capsys):
    path, cert = oblique
    t = copy.deepcopy(cert)
    hit = next(c for c in _traces(t)[0]["cells"] if c["class"] == "hit")
    lo, hi = (Fraction(x) for x in hit["mass"])
    hit["mass"] = [str(lo + Fraction(1, 100)), str(hi + Fraction(1, 100))]
    rejected(t, path, tmp_path, capsys, "MASS")


def test_half_space_rhs_moved_is_rejected(oblique, tmp_path, capsys):
    path, cert = oblique
    t = copy.deepcopy(cert)
    hit = next(c for c in _traces(t)[0]["cells"] if c["class"] == "hit")
    key = "cons" if hit["cons"] else "box"
    if key == "cons":
        hit["cons"][0]["rhs"] = str(Fraction(hit["cons"][0]["rhs"]) + 1)
    else:
        var, (lo, hi) = next(iter(hit["box"].items()))
        hit["box"][var] = [lo, str(Fraction(hi) + 1)] if hi is not None else [str(Fraction(lo) - 1), hi]
    rejected(t, path, tmp_path, capsys, "CLASS")


def test_ldl_witness_split_outside_box_is_rejected(tmp_path, capsys):
    p = _write(tmp_path, "wedge", WEDGE)
    cert = certify(p, "proved")
    t = copy.deepcopy(cert)
    cell = next(c for tr in _traces(t) for c in tr["cells"] if isinstance(c["witness"], dict) and "ldl" in c["witness"])
    if cell["witness"]["ldl"]:
        cell["witness"]["ldl"]["at"] = "1000000"
    else:  # the second-order leaf bound decides the wedge without a split: add one
        cell["witness"]["ldl"] = {"split": "ldl0.0", "at": "1000000", "below": None, "above": None}
    rejected(t, p, tmp_path, capsys, "MASS")


def test_wrong_branch_is_rejected(branch, tmp_path, capsys):
    path, cert = branch
    t = copy.deepcopy(cert)
    for tr in _traces(t):  # swap the branch bits of every trace: each cell is now on the wrong side
        tr["branches"] = [1 - b for b in tr["branches"]]
    rejected(t, path, tmp_path, capsys, "CLASS")


def test_missing_branch_side_is_rejected(branch, tmp_path, capsys):
    path, cert = branch
    t = copy.deepcopy(cert)
    for term in t["probability"][0]["terms"]:
        term["traces"] = [tr for tr in term["traces"] if tr["branches"] != [0]]
    rejected(t, path, tmp_path, capsys, "COVER", "followed branch")


def test_missing_outcome_under_branch_is_rejected(branch, tmp_path, capsys):
    path, cert = branch
    t = copy.deepcopy(cert)
    for term in t["probability"][0]["terms"]:
        term["traces"] = [tr for tr in term["traces"] if (tr["choices"], tr["branches"]) != ([1], [1])]
    rejected(t, path, tmp_path, capsys, "COVER", "uncovered")


def test_extra_branch_is_rejected(branch, tmp_path, capsys):
    path, cert = branch
    t = copy.deepcopy(cert)
    _traces(t)[0]["branches"] = _traces(t)[0]["branches"] + [1]
    rejected(t, path, tmp_path, capsys, "TRACE")


def test_malformed_branch_exits_2(branch, tmp_path, capsys):
    path, cert = branch
    t = copy.deepcopy(cert)
    _traces(t)[0]["branches"] = [2]
    code, out = check(t, path, tmp_path, capsys)
    assert code == 2 and "branches" in out and "Traceback" not in out, out


# ---------------------------------------------------------------- the mass functions


def test_gauss_transform_matches_direct_1d_mass():
    from tamp.certificate.cellmass import Region, region_mass
    from tamp.probability.dists import Gauss

    d = {
        "a": Gauss(Fraction(1), Fraction(2)),
        "b": Gauss(Fraction(-1), Fraction(3)),
        "c": Gauss(Fraction(0), Fraction(1, 2)),
    }
    reg = Region({}, [({"a": Fraction(2), "b": Fraction(-1), "c": Fraction(3)}, Fraction(4))])
    m = region_mass(reg, d, {"ldl": None})
    # 2a - b + 3c ~ N(3, 8 + 3 + 9/2)
    direct = Gauss(Fraction(3), Fraction(31, 2)).mass(None, Fraction(4))
    assert m.lo <= direct.hi and direct.lo <= m.hi and m.hi - m.lo < Fraction(1, 10**12)
    # without the rewriting (and no witness) the root leaf's bound is sound but much wider
    root = region_mass(reg, d, None)
    assert root.lo <= direct.hi and direct.lo <= root.hi and root.hi - root.lo > Fraction(1, 100)


def test_leaf_enclosure_contains_exact_polytope_mass():
    """Random boxes and constraints over uniforms: the inner-variable bounds always contain the
    exact integral (tamp.wmi) and are never wider than [0, box mass]."""
    from tamp.certificate.cellmass import Region, leaf_enclosure, region_mass
    from tamp.probability.dists import PolyDensity

    rng = random.Random(7)
    names = ["u", "v", "w"]
    dists = {n: PolyDensity.uniform(Fraction(0), Fraction(1)) for n in names}
    for _ in range(60):
        box = {}
        for n in names:
            a, b = sorted(Fraction(rng.randint(0, 8), 8) for _ in range(2))
            box[n] = (a, b if b > a else a + Fraction(1, 8))
        cons = []
        for _ in range(rng.randint(1, 3)):
            coef = {n: Fraction(rng.choice([-3, -2, -1, 1, 2, 3])) for n in rng.sample(names, rng.randint(2, 3))}
            cons.append((coef, Fraction(rng.randint(-4, 8), 4)))
        exact = region_mass(Region(box, cons), dists)
        assert exact.lo == exact.hi
        lo, hi = leaf_enclosure(box, cons, dists, names)
        assert lo <= exact.lo <= hi
        whole = region_mass(Region(box, []), dists)
        assert hi <= whole.hi


def test_decision_tree_without_branches_is_one_minus_weights():
    from lang.parser import parse
    from tamp.certificate.prob_cover import decision_tree
    from tamp.certificate.replay import Replayer

    prog = parse("program c() ensures P(a + b == 7) == 1/6 { a ~ unif(1, 6); b ~ unif(1, 6); }", "<t>").programs[0]
    rp = Replayer(prog)
    trs = [rp.run((i, j)) for i in range(6) for j in range(6) if (i, j) != (2, 3)]
    missing, sides = decision_tree(trs)
    assert missing == Fraction(1, 36) and not sides
