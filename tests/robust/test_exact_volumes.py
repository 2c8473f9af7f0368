"""Self-check of the certified numbers of ``tamp equiv`` and ``tamp robust`` against exact areas.

Seeded random small classifiers on [0,1]^2 (linear models and ReLU networks with dyadic
weights, two or three classes) are written in Libra's format; the exact disagreement area and
the exact area where the class stays are computed independently by convex-polygon clipping
in Fractions (:mod:`tests.robust.exact2d`). Every certified interval must contain the truth, for
both argument orders of ``equiv``. (Issue 31, item 2: a box where one side was undecided was
credited with the volume of the other side's class at the centre.)
"""

import math
import random
from fractions import Fraction

import pytest

from tamp.models.table import Table
from tamp.robustness import equiv, robust

from . import exact2d as E


def _w(rng):
    return Fraction(rng.randint(-16, 16), 8)


def _model(rng, hidden, classes=2):
    if hidden == 0:
        return [([[_w(rng), _w(rng)] for _ in range(classes)], [_w(rng) for _ in range(classes)])]
    return [
        ([[_w(rng), _w(rng)] for _ in range(hidden)], [_w(rng) for _ in range(hidden)]),
        ([[_w(rng) for _ in range(hidden)] for _ in range(classes)], [_w(rng) for _ in range(classes)]),
    ]


def _write(tmp_path, name, layers):
    p = tmp_path / f"{name}.py"
    p.write_text(E.libra_text(layers))
    return str(p)


UNIT = E.box_poly(Fraction(0), Fraction(1), Fraction(0), Fraction(1))


def test_the_oracle_agrees_with_exact_sampling():
    """The oracle itself: its areas against exactly classified random points (so a wrong oracle
    cannot make the checks below vacuous)."""
    for seed in range(6):
        rng = random.Random(seed)
        a, b = _model(rng, 0, 3), _model(rng, 3, 3)
        truth = E.disagreement(a, b, UNIT)
        pts = random.Random(100 + seed)
        n = 1500
        k = 0
        for _ in range(n):
            x, y = Fraction(pts.random()), Fraction(pts.random())
            k += E.classify(a, x, y) != E.classify(b, x, y)
        assert abs(k / n - float(truth)) <= 4.5 * math.sqrt(0.25 / n) + 1e-9
        assert sum(E.class_area(b, UNIT, c) for c in range(3)) == 1


# seed 1: the linear model first was certified [0.26859, 0.26864] where the truth is 0.29827
@pytest.mark.parametrize("seed", [1, 9, 11, 20, 37, 21, 102, 103, 104, 105])
def test_equiv_contains_the_exact_disagreement_in_both_orders(tmp_path, seed):
    rng = random.Random(seed)
    classes = 2 if seed < 100 else 3
    a = _model(rng, 0 if seed < 100 else rng.randint(0, 2), classes)
    b = _model(rng, rng.randint(1, 3), classes)
    truth = E.disagreement(a, b, UNIT)
    pa, pb = _write(tmp_path, "a", a), _write(tmp_path, "b", b)
    for x, y in ((pa, pb), (pb, pa)):
        r = equiv(x, y, width=1e-4, timeout=20)
        assert r.lower <= truth <= r.upper, (x, float(r.lower), float(r.upper), float(truth))


def _deep(rng, sizes, classes):
    """Layers 2 -> sizes... -> classes with non-zero weights (a zero weight on an input would
    drop it from the Libra file's features)."""
    dims = [2, *sizes, classes]
    nz = [i for i in range(-16, 17) if i]
    return [
        (
            [[Fraction(rng.choice(nz), 8) for _ in range(dims[i])] for _ in range(dims[i + 1])],
            [Fraction(rng.choice(nz), 8) for _ in range(dims[i + 1])],
        )
        for i in range(len(dims) - 1)
    ]


@pytest.mark.parametrize("width", [1e-4, 0.05])
def test_equiv_sweep_of_deeper_networks(tmp_path, width):
    for seed in range(2000, 2030):
        rng = random.Random(seed)
        k = rng.choice([2, 2, 3])
        a = _deep(rng, [rng.randint(1, 3) for _ in range(rng.randint(0, 2))], k)
        b = _deep(rng, [rng.randint(1, 3) for _ in range(rng.randint(1, 2))], k)
        truth = E.disagreement(a, b, UNIT)
        pa, pb = _write(tmp_path, "a", a), _write(tmp_path, "b", b)
        for x, y in ((pa, pb), (pb, pa)):
            r = equiv(x, y, width=width, timeout=20)
            assert r.lower <= truth <= r.upper, (seed, x, float(r.lower), float(r.upper), float(truth))


@pytest.mark.parametrize("seed", range(4))
def test_robust_contains_the_exact_share(tmp_path, seed):
    rng = random.Random(1000 + seed)
    m = _model(rng, rng.randint(1, 3), 2 + seed % 2)
    path = _write(tmp_path, "m", m)
    pts = [(Fraction(rng.randint(0, 16), 16), Fraction(rng.randint(0, 16), 16)) for _ in range(4)]
    eps = Fraction(rng.randint(1, 8), 16)
    table = Table(str(tmp_path / "p.csv"), ["x0", "x1"], [list(p) for p in pts], [2 + i for i in range(len(pts))])
    r = robust(path, table, eps, width=1e-4, timeout=20)
    for p, (x, y) in zip(r.points, pts):
        box = E.box_poly(max(x - eps, 0), min(x + eps, 1), max(y - eps, 0), min(y + eps, 1))
        c0 = E.classify(m, x, y)
        truth = E.class_area(m, box, c0) / E.area(box)
        assert p.lower <= truth <= p.upper, ((x, y), float(p.lower), float(p.upper), float(truth))
