"""Networks with decimal weights (Libra's text format: ``0.1`` is 1/10, not a binary64 number)
are bounded soundly: the batched bounds round the weights to binary64 inside their error
margin, and the pieces where every ReLU's phase is fixed are exact rationals."""

import math
import random
from fractions import Fraction
from pathlib import Path

from tamp.models import read_model
from tamp.models.spec import parse_spec
from tamp.models.table import Table
from tamp.robustness import robust
from tamp.robustness.classifier import classifier

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "libra"

TINY = """\
assume(0 <= x <= 1)
h = (0.1)*x + (-0.03)
#
ReLU(h)
y0 = (1)*h
y1 = (0.01)
"""


def test_decimal_weights_give_the_exact_share(tmp_path):
    """class 0 iff relu(x/10 - 3/100) >= 1/100 iff x >= 2/5: around 9/20 with eps 1/10 the share
    is (11/20 - 2/5)/(1/5) = 3/4 exactly (binary64 weights would move the boundary)."""
    net = tmp_path / "tiny.libra"
    net.write_text(TINY)
    pts = Table("p.csv", ["x"], [[Fraction(9, 20)]], [2])
    r = robust(str(net), pts, "0.1", width=0, timeout=None)
    (p,) = r.points
    assert p.cls == 0 and p.lower == p.upper == Fraction(3, 4)


def _wilson(k, n, z=4.0):
    c = (k / n + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(k / n * (1 - k / n) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h - 1e-12, c + h + 1e-12


def _census_points(rng, spec, feats, n):
    """Random census inputs: one member of each one-hot group set, the other features in [0, 1]."""
    groups = [list(spec.sensitive)] + [list(g) for g in spec.groups]
    grouped = {f for g in groups for f in g}
    rows = []
    for _ in range(n):
        x = {f: Fraction(rng.randint(0, 1000), 1000) for f in feats if f not in grouped}
        for g in groups:
            hot = rng.choice(g)
            x.update({f: Fraction(int(f == hot)) for f in g})
        rows.append([x[f] for f in feats])
    return rows


def test_libra_census_network_intervals_contain_monte_carlo():
    path = str(DATA / "census_10.libra")
    spec_path = str(DATA / "census_spec.txt")
    spec = parse_spec((DATA / "census_spec.txt").read_text(), spec_path)
    net, _ = read_model(path)
    clf = classifier(net, path)
    feats = clf.features
    rng = random.Random(4)
    rows = _census_points(rng, spec, feats, 3)
    table = Table("census.csv", feats, rows, list(range(2, 2 + len(rows))))
    eps = Fraction(3, 10)
    r = robust(path, table, "0.3", spec=spec_path, width=0.02, timeout=30)
    grouped = set(spec.sensitive) | {f for g in spec.groups for f in g}
    for p, row in zip(r.points, rows):
        assert 0 <= p.lower <= p.upper <= 1 and p.upper - p.lower <= Fraction(2, 100)
        x = dict(zip(feats, row))
        c0 = clf.classify(x)
        n, k = 400, 0
        for _ in range(n):
            y = dict(x)
            for f in feats:
                if f not in grouped:
                    lo, hi = max(Fraction(0), x[f] - eps), min(Fraction(1), x[f] + eps)
                    y[f] = lo + (hi - lo) * Fraction(rng.randint(0, 1 << 20), 1 << 20)
            k += clf.classify(y) == c0
        lo, hi = _wilson(k, n)
        assert p.lower <= hi and lo <= p.upper, (p, k, n)
