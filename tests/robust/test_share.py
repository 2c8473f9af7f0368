"""The integer-arithmetic share of a box on one side of a hyperplane (tamp.robustness.share)
equals the rational volume computation it replaces on the branch and bound's hot path."""

import random
from fractions import Fraction

import pytest

from tamp.causal.volume import cut_volume
from tamp.robustness.share import DyadicForm, positive_share


def _box_volume(box):
    v = Fraction(1)
    for lo, hi in box.values():
        if hi > lo:
            v *= hi - lo
    return v


def _reference(coef, const, box, strict):
    """vol{f > 0 (strict) / f >= 0} by tamp.causal.volume (as -f < 0 / -f <= 0), fixed
    dimensions folded into the constant."""
    var = {k: iv for k, iv in box.items() if iv[1] > iv[0]}
    k = const + sum((c * box[n][0] for n, c in coef.items() if n not in var), Fraction(0))
    co = {n: -c for n, c in coef.items() if n in var}
    return cut_volume([(co, -k, strict)], var)


@pytest.mark.parametrize("seed", range(4))
def test_share_equals_the_rational_volume(seed):
    rng = random.Random(seed)
    for _ in range(300):
        names = [f"x{i}" for i in range(rng.randint(1, 6))]
        box = {}
        for n in names:
            lo = Fraction(rng.randint(-50, 50), rng.choice([1, 3, 10, 64, 1000]))
            w = Fraction(rng.randint(0 if rng.random() < 0.1 else 1, 40), rng.choice([1, 7, 10, 128]))
            box[n] = (lo, lo + w)
        coef = {n: Fraction(rng.randint(-20, 20), rng.choice([1, 2, 5, 1024])) for n in names if rng.random() < 0.9}
        const = Fraction(rng.randint(-100, 100), rng.choice([1, 4, 10, 3]))
        strict = rng.random() < 0.5
        assert positive_share((coef, const), box, strict) * _box_volume(box) == _reference(coef, const, box, strict)


def test_dyadic_forms_agree_with_their_exact_reading():
    rng = random.Random(9)
    for _ in range(300):
        names = [f"x{i}" for i in range(rng.randint(1, 6))]
        box = {}
        for n in names:
            lo = Fraction(rng.randint(-500, 500), 1000)
            box[n] = (lo, lo + Fraction(rng.randint(1, 300), 1000))
        f = DyadicForm({n: rng.randint(-(1 << 24), 1 << 24) for n in names}, rng.randint(-(1 << 26), 1 << 26), -24)
        strict = rng.random() < 0.5
        assert positive_share(f, box, strict) == positive_share(f.exact(), box, strict)
        assert positive_share(f, box, strict) + positive_share(f.negated(), box, not strict) == 1
