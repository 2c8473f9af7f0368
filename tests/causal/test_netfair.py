"""The network engine (tamp.causal.netclaim/netfair/netvolume) on imported networks.

Ground truth: the imported network evaluated exactly in rational arithmetic (its weights are the
exact decimals of the file) and Monte Carlo over the uniform input distribution — every certified
biased-mass interval must contain the Monte Carlo estimate up to its confidence interval; a
witness pair must really change the class under exact evaluation.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from tamp import import_model
from tamp.causal import certify_program
from tamp.causal.volume import LASSERRE_DIMS, cut_volume
from tamp.models.ir import Affine, Relu

REALS = ["x00", "x01"]
GROUP = ["x02", "x03", "x04"]
SENS = ["x05", "x06"]


def _libra_net(rng: random.Random, inputs, hidden, outputs, fair=False):
    """Libra's network text: ``len(hidden)`` ReLU layers, ``outputs`` output units; ``fair``:
    both sensitive one-hot inputs get the same weights (exactly one of them is 1: no effect)."""
    lines = []
    prev = list(inputs)
    for layer, width in enumerate(hidden + [outputs], start=1):
        cur = [f"x{layer}{j}" for j in range(width)]
        for name in cur:
            terms = []
            w = 0.0
            for p in prev:
                if not (fair and p == SENS[1]):
                    w = rng.uniform(-1, 1)
                terms.append(f"({w:.4f})*{p}")
            terms.append(f"({rng.uniform(-0.3, 0.3):.4f})")
            lines.append(f"{name} = " + " + ".join(terms))
        if layer <= len(hidden):
            lines.append("#")
            lines += [f"ReLU({n})" for n in cur]
            lines.append("")
        prev = cur
    return "\n".join(lines) + "\n"


def _import(tmp_path, text, spec, name="net"):
    model = tmp_path / f"{name}.libra"
    model.write_text(text)
    sp = tmp_path / f"{name}_spec.txt"
    sp.write_text(spec)
    return import_model(str(model), spec=str(sp), name=name)


def _evaluate(net, x):
    """The class (argmax, first on a tie) of the network at feature values ``x``, exactly."""
    env = {k: Fraction(v) for k, v in x.items()}

    def aff(a: Affine):
        return sum((c * env[v] for v, c in a.terms), Fraction(0)) + a.const

    for asg in net.body:
        e = asg.expr
        env[asg.name] = max(Fraction(0), aff(e.arg)) if isinstance(e, Relu) else aff(e)
    scores = [aff(s) for s in net.scores]
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def _monte_carlo(net, n, rng, sample):
    """(estimate, 4-sigma half-width) of the biased mass: pairs of inputs differing only in
    the sensitive feature, drawn by ``sample(rng) -> (a, b)``."""
    hits = 0
    for _ in range(n):
        a, b = sample(rng)
        hits += _evaluate(net, a) != _evaluate(net, b)
    p = hits / n
    return p, 4 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def _onehot_sample(rng):
    x = {r: Fraction(rng.randrange(1 << 20), 1 << 20) for r in REALS}
    g = rng.randrange(len(GROUP))
    for i, m in enumerate(GROUP):
        x[m] = Fraction(int(i == g))
    a = dict(x, x05=Fraction(1), x06=Fraction(0))
    b = dict(x, x05=Fraction(0), x06=Fraction(1))
    return a, b


SPEC_ONEHOT = "2\nx05\nx06\n3\nx02\nx03\nx04\n"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_certified_interval_contains_monte_carlo(tmp_path, seed):
    rng = random.Random(seed)
    text = _libra_net(rng, REALS + GROUP + SENS, [4, 4], 2)
    imp = _import(tmp_path, text, SPEC_ONEHOT)
    r = certify_program(imp.program, {"timeout": 120, "jobs": 1})
    d = r.details
    assert d["engine"].startswith("network")
    bm = d["biased_mass"]
    assert bm["lower"] <= bm["upper"]
    p, ci = _monte_carlo(imp.network, 3000, random.Random(seed + 100), _onehot_sample)
    assert bm["lower"] - ci <= p <= bm["upper"] + ci
    if r.verdict == "proved":
        assert p == 0 and bm["upper"] == 0
    if d["coverage"] == 1.0:
        assert bm["upper"] - bm["lower"] <= 0.01


def _biased_net():
    # one hidden layer; the sensitive one-hot moves the score by ±0.3 around a plane in x00, x01
    return (
        "x10 = (1.0)*x00 + (1.0)*x01 + (0.3)*x05 + (-0.3)*x06 + (0.1)*x02 + (0.05)*x03 + (0.02)*x04 + (-1.0)\n"
        "x11 = (-1.0)*x00 + (-1.0)*x01 + (-0.3)*x05 + (0.3)*x06 + (-0.1)*x02 + (-0.05)*x03 + (-0.02)*x04 + (1.0)\n"
        "#\nReLU(x10)\nReLU(x11)\n\n"
        "x20 = (1.0)*x11\n"
        "x21 = (1.0)*x10\n"
    )


def test_known_biased_net_witness_flips_class(tmp_path):
    imp = _import(tmp_path, _biased_net(), SPEC_ONEHOT, "biased")
    r = certify_program(imp.program, {"timeout": 120, "jobs": 1})
    assert r.verdict == "violated"
    d = r.details
    assert d["coverage"] == 1.0
    bm = d["biased_mass"]
    # class 1 iff x00 + x01 + (small category term) - 1 ± 0.3 > 0: a band, measured exactly
    # exact shares, each kept as outward-rounded bounds on the 2^-64 grid
    assert 0 <= Fraction(bm["upper_exact"]) - Fraction(bm["lower_exact"]) <= Fraction(1, 2**50)
    p, ci = _monte_carlo(imp.network, 3000, random.Random(7), _onehot_sample)
    assert abs(bm["lower"] - p) <= ci
    w = d["witness"]
    classes = []
    for member in w["pair"]:
        x = member["model_inputs"]
        assert set(x) == set(imp.network.features)
        c = _evaluate(imp.network, x)
        assert c == member["class"]
        classes.append(c)
    assert classes[0] != classes[1]
    regions = d["regions"]
    assert regions["count"] >= 1 and regions["boxes"]
    top = regions["boxes"][0]
    assert set(top["features"]) >= {"x00", "x01", "x02", "x03", "x04"}
    assert 0 < top["biased_share"] <= 1


def test_fair_net_is_proved_with_full_coverage(tmp_path):
    rng = random.Random(5)
    text = _libra_net(rng, REALS + GROUP + SENS, [3, 3], 2, fair=True)
    imp = _import(tmp_path, text, SPEC_ONEHOT, "fair")
    r = certify_program(imp.program, {"timeout": 120, "jobs": 1})
    assert r.verdict == "proved"
    assert r.details["coverage"] == 1.0 and r.details["biased_mass"]["upper"] == 0


def test_continuous_sensitive_feature_split(tmp_path):
    rng = random.Random(11)
    inputs = ["x00", "x01", "x02", "x03"]
    text = _libra_net(rng, inputs, [4], 2)
    imp = _import(tmp_path, text, "1\nx01\n0.5\n2\nx02\nx03\n", "split")
    r = certify_program(imp.program, {"timeout": 120, "jobs": 1})
    d = r.details
    assert d["engine"].startswith("network")

    def sample(rng):
        x = {"x00": Fraction(rng.randrange(1 << 20), 1 << 20)}
        g = rng.randrange(2)
        x["x02"], x["x03"] = Fraction(int(g == 0)), Fraction(int(g == 1))
        below = Fraction(rng.randrange(1 << 20), 1 << 21)  # uniform on [0, 0.5)
        above = Fraction(1, 2) + Fraction(rng.randrange(1 << 20), 1 << 21)
        return dict(x, x01=below), dict(x, x01=above)

    p, ci = _monte_carlo(imp.network, 3000, random.Random(12), sample)
    bm = d["biased_mass"]
    assert bm["lower"] - ci <= p <= bm["upper"] + ci
    if r.verdict == "violated":
        a, b = d["witness"]["pair"]
        assert _evaluate(imp.network, a["model_inputs"]) != _evaluate(imp.network, b["model_inputs"])


def test_multiclass_argmax(tmp_path):
    rng = random.Random(21)
    text = _libra_net(rng, REALS + GROUP + SENS, [4], 3)
    imp = _import(tmp_path, text, SPEC_ONEHOT, "three")
    r = certify_program(imp.program, {"timeout": 120, "jobs": 1})
    d = r.details
    assert d["engine"].startswith("network")
    p, ci = _monte_carlo(imp.network, 3000, random.Random(22), _onehot_sample)
    bm = d["biased_mass"]
    assert bm["lower"] - ci <= p <= bm["upper"] + ci
    if r.verdict == "violated":
        a, b = d["witness"]["pair"]
        assert _evaluate(imp.network, a["model_inputs"]) == a["class"]
        assert _evaluate(imp.network, b["model_inputs"]) == b["class"] != a["class"]


def test_general_engine_for_other_programs():
    from lang.parser import parse

    src = parse(
        "program p(x: real, s: int) requires 0 <= x && x <= 1 requires s >= 0 && s <= 1 "
        "ensures independent(out, s) { out := x * x > s ? 1 : 0; }",
        "<t>",
    )
    r = certify_program(src.programs[0], {"timeout": 60, "jobs": 1})
    assert not r.details["engine"].startswith("network")


def test_lasserre_volumes_match_the_polytope_integrator():
    import tamp.causal.volume as V

    rng = random.Random(3)
    for _ in range(120):
        d = rng.randint(1, LASSERRE_DIMS)
        names = [f"x{i}" for i in range(d)]
        box = {}
        for n in names:
            lo = Fraction(rng.randint(-5, 5), 4)
            box[n] = (lo, lo + Fraction(rng.randint(1, 8), 4))
        fs = []
        for _ in range(rng.randint(2, 4)):
            co = {n: Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for n in names if rng.random() < 0.8}
            fs.append((co, Fraction(rng.randint(-9, 9), 7)))
        fast = cut_volume(fs, box)
        old = V.LASSERRE_DIMS
        V.LASSERRE_DIMS = 0
        try:
            slow = cut_volume(fs, box)
        finally:
            V.LASSERRE_DIMS = old
        assert fast == slow
