"""Probability certificates, third round: second-order witness leaf bounds (tamp/certificate/
leaf_taylor.py). The enclosures must contain the true mass (numerical integration), be second
order (tight on small leaves, also at kinks), decide a 3-D Gaussian region that the first-order
bounds could not, and a mass raised past them must be rejected."""

from __future__ import annotations

import copy
import random
from fractions import Fraction

import pytest
from cert_testlib import check
from test_prob_certificate import certify, rejected

# three oblique constraints over three Gaussians: a 3-D region after the rewriting;
# P ≈ 0.2445 (4·10⁶ samples, standard error 2·10⁻⁴), threshold 0.243
TRI = """program tri()
  ensures P(x + y + z < 1 && x - 2 * y + z < 2 && 3 * x + y - z < 2) > 0.243
{
  x ~ gauss(0, 1);
  y ~ gauss(0, 2);
  z ~ gauss(1, 1);
}
"""


@pytest.fixture(scope="module")
def tri(tmp_path_factory):
    p = tmp_path_factory.mktemp("taylor") / "tri.prob"
    p.write_text(TRI)
    return p, certify(p, "proved")


def _cells(cert):
    return [c for t in cert["probability"][0]["terms"] for tr in t["traces"] for c in tr["cells"]]


def _exact_2d(box, cons, sd):
    """∫ over x of φ(x) · P(y in the interval the constraints leave), by adaptive quadrature."""
    integrate = pytest.importorskip("scipy.integrate")
    stats = pytest.importorskip("scipy.stats")

    def inner(x):
        lo, hi = float(box["y"][0]), float(box["y"][1])
        for coef, rhs in cons:
            cx, cy = float(coef.get("x", 0)), float(coef.get("y", 0))
            r = float(rhs) - cx * x
            if cy > 0:
                hi = min(hi, r / cy)
            elif cy < 0:
                lo = max(lo, r / cy)
            elif r <= 0:
                return 0.0
        if hi <= lo:
            return 0.0
        return stats.norm.pdf(x, 0, sd["x"]) * (stats.norm.cdf(hi, 0, sd["y"]) - stats.norm.cdf(lo, 0, sd["y"]))

    v, _ = integrate.quad(inner, float(box["x"][0]), float(box["x"][1]), epsabs=1e-15, epsrel=1e-12, limit=200)
    return v


def test_leaf_bounds_contain_the_true_mass_and_are_second_order():
    from tamp.certificate.cellmass import leaf_bounds
    from tamp.probability.dists import Gauss

    rng = random.Random(7)
    worst = 0.0
    for _ in range(40):
        vx, vy = rng.choice([1, 2, 5]), rng.choice([1, 3])
        ds = {"x": Gauss(Fraction(0), Fraction(vx)), "y": Gauss(Fraction(0), Fraction(vy))}
        h = Fraction(1, 16)
        x0, y0 = Fraction(rng.randint(-30, 30), 16), Fraction(rng.randint(-30, 30), 16)
        box = {"x": (x0, x0 + h), "y": (y0, y0 + h)}
        cons = []
        for _ in range(rng.choice([1, 2])):  # through points of the box: partial leaves, often kinks
            cx, cy = Fraction(rng.randint(-5, 5), 3) or Fraction(1), Fraction(rng.randint(-5, 5), 3) or Fraction(1)
            px, py = x0 + h * Fraction(rng.randint(0, 100), 100), y0 + h * Fraction(rng.randint(0, 100), 100)
            cons.append(({"x": cx, "y": cy}, cx * px + cy * py))
        lo, hi, _ = leaf_bounds(box, cons, ds, ["x", "y"])
        exact = _exact_2d(box, cons, {"x": vx**0.5, "y": vy**0.5})
        assert float(lo) - 1e-13 <= exact <= float(hi) + 1e-13, (box, cons, lo, hi, exact)
        whole = float((ds["x"].mass(*box["x"]) * ds["y"].mass(*box["y"])).hi)
        if whole > 1e-6:
            worst = max(worst, float(hi - lo) / whole)
    # first order would leave gaps of the order of h (≈ 6 %) of the leaf's mass
    assert worst < 1e-3


def test_three_gaussian_region_certifies_with_a_small_witness(tri, tmp_path, capsys):
    path, cert = tri
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    hit = next(c for c in _cells(cert) if c["class"] == "hit")
    lo, hi = (Fraction(x) for x in hit["mass"])
    assert lo > Fraction(243, 1000) and hi < Fraction(246, 1000)


def test_three_gaussian_region_agrees_with_simulation():
    simulate = pytest.importorskip("tamp.simulation").simulate
    sim = simulate(TRI, {}, runs=20000, seed=5)
    _, _, lo, hi = sim.prob_terms[0][:4]
    assert lo <= 0.2445 <= hi and hi > 0.243


def test_three_gaussian_mass_raised_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    hit = next(c for c in _cells(t) if c["class"] == "hit")
    lo, hi = (Fraction(x) for x in hit["mass"])
    hit["mass"] = [str(hi + Fraction(1, 10**4)), str(hi + Fraction(2, 10**4))]
    rejected(t, path, tmp_path, capsys, "MASS")


def test_three_gaussian_witness_removed_is_rejected(tri, tmp_path, capsys):
    path, cert = tri
    t = copy.deepcopy(cert)
    for c in _cells(t):
        if isinstance(c["witness"], dict) and "ldl" in c["witness"]:
            c["witness"] = None  # without the rewriting the claimed masses are out of reach
    rejected(t, path, tmp_path, capsys, "MASS")
