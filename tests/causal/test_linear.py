"""Symbolic linear bounds, exact volumes and exact biased shares, checked against exact evaluation
at sample points and against an independent integrator, on seeded random ReLU networks."""

import math
import random
from fractions import Fraction

import pytest

from tamp.causal import boxes as B
from tamp.causal.analyzer import Analyzer, Options
from tamp.causal.dag import evaluate
from tamp.causal.symexec import Context
from tamp.causal.volume import cut_volume, halfspace_volume

from .helpers import load


def random_net(seed, d=2, layers=(3, 2), sex_scale=0.6):
    """A random ReLU network program over x1..xd in [0, 1] and sex in {0, 1}."""
    rng = random.Random(seed)
    w = lambda: round(rng.uniform(-1.5, 1.5), 2)  # noqa: E731
    names = [f"x{i + 1}" for i in range(d)]
    prev = names + ["sex"]
    lines = []
    for li, width in enumerate(layers):
        cur = []
        for j in range(width):
            h = f"h{li}_{j}"
            terms = " + ".join(
                f"{w() if p != 'sex' else round(rng.uniform(-sex_scale, sex_scale), 2)}*{p}" for p in prev
            )
            lines.append(f"  {h} := max(0, {terms} + {round(rng.uniform(-0.5, 0.5), 2)});")
            cur.append(h)
        prev = cur
    score = " + ".join(f"{w()}*{p}" for p in prev)
    lines.append(f"  score := {score} + {round(rng.uniform(-0.3, 0.3), 2)};")
    lines.append("  out := score > 0 ? 1 : 0;")
    head = ", ".join(f"{n}: real" for n in names)
    req = " && ".join(f"0 <= {n} && {n} <= 1" for n in names)
    return (
        f"program net({head}, sex: int)\n  requires {req} && (sex == 0 || sex == 1)\n"
        f"  ensures independent(out, sex)\n{{\n" + "\n".join(lines) + "\n}\n"
    )


def analyzer(text, **opts):
    prog, _ = load(text)
    return Analyzer(prog, prog.ensures[0], Options(**opts), Context())


def random_box(a, rng):
    box = []
    for _d in a.dims:
        x, y = sorted(Fraction(rng.randrange(0, 17), 16) for _ in range(2))
        if x == y:
            y = x + Fraction(1, 16)
        box.append((x, y))
    return tuple(box)


@pytest.mark.parametrize("seed", range(6))
def test_linear_bounds_contain_exact_values(seed):
    a = analyzer(random_net(seed, d=2 + seed % 2, layers=(3, 3) if seed % 3 else (4,)))
    rng = random.Random(seed)
    model = a.sym.model
    for _ in range(4):
        box = random_box(a, rng)
        facts = a.sym.analyse(B.float_box(a.dims, box))
        for _ in range(25):
            pt = B.random_point(a.dims, box, rng)
            vals = _node_values(a, pt)
            for r_i, r in enumerate(model.relus):
                node = a.dag.nodes[r.node]
                pre = vals[node.args[1]] - vals[node.args[0]]
                assert facts.rx.pre_lo[r_i] <= pre <= facts.rx.pre_hi[r_i]
            for key, (V, c, low) in facts.forms.items():
                if key[0] not in ("cmp", "-cmp"):
                    continue
                n = a.dag.nodes[key[1]]
                diff = vals[n.args[0]] - vals[n.args[1]]
                if key[0] == "-cmp":
                    diff = -diff
                lin = Fraction(c) + sum(Fraction(float(V[v])) * pt[name] for v, name in model.inputs.items())
                assert Fraction(low) <= lin <= diff


def _node_values(a, pt):
    """Exact values of every DAG node at ``pt``."""
    from tamp.causal.dag import Dag

    dag = a.dag
    full = Dag(dag.nodes, tuple(range(len(dag.nodes))))
    return evaluate(full, pt)


@pytest.mark.parametrize("seed", range(8))
def test_exact_share_matches_a_fine_grid(seed):
    """The exact biased share of a box equals the share of a fine grid's cell centres up to the
    grid cells the decision boundaries cross (grid evaluated in floating point)."""
    import numpy as np

    from tamp.causal.dag import evaluate_float

    a = analyzer(random_net(100 + seed, d=2, layers=(3,)), exact_unstable=4)
    rng = random.Random(seed)
    checked = 0
    for _ in range(6):
        box = random_box(a, rng)
        _, _, facts = a.bound(box)
        share = a.measure_exactly(box, facts)
        if share is None:
            continue
        n = 256
        (x0, x1), (y0, y1) = (tuple(map(float, b)) for b in box)
        c = (np.arange(n) + 0.5) / n
        gx, gy = np.meshgrid(x0 + (x1 - x0) * c, y0 + (y1 - y0) * c)
        o0, o1, v0, v1 = evaluate_float(a.dag, {"x1": gx.ravel(), "x2": gy.ravel()})
        grid = float(np.mean(v0 & v1 & (o0 != o1)))
        # the cells crossed by the decision boundaries are a small fraction of the n² cells
        assert abs(float(share) - grid) <= 0.02
        checked += 1
    assert checked > 0


def test_halfspace_volume_against_the_polytope_integrator():
    from tamp.wmi import Poly, integrate_polytope_iterated

    rng = random.Random(5)
    for _ in range(30):
        n = rng.randint(1, 4)
        box = {f"x{i}": (Fraction(rng.randint(0, 3), 4), Fraction(rng.randint(5, 8), 4)) for i in range(n)}
        f = ({k: Fraction(rng.randint(-9, 9), 7) for k in box}, Fraction(rng.randint(-9, 9), 7))
        g = ({k: Fraction(rng.randint(-9, 9), 7) for k in box}, Fraction(rng.randint(-5, 5), 7))
        names = list(box)
        for fs in ([f], [f, g], [f, ({k: -2 * c for k, c in f[0].items()}, Fraction(1, 3))]):
            cons = []
            for i, k in enumerate(names):
                e = [0] * n
                e[i] = 1
                cons.append((list(e), box[k][1], False))
                e[i] = -1
                cons.append((list(e), -box[k][0], False))
            cons += [([h[0].get(k, 0) for k in names], -h[1], False) for h in fs]
            assert cut_volume(fs, box) == integrate_polytope_iterated(Poly.one(n), cons, n)


def test_strictness_counts_on_flat_regions():
    box = {"x": (Fraction(0), Fraction(1)), "y": (Fraction(0), Fraction(2))}
    zero = ({}, Fraction(0))
    assert cut_volume([(*zero, True)], box) == 0  # 0 < 0 nowhere
    assert cut_volume([(*zero, False)], box) == 2  # 0 <= 0 everywhere
    assert halfspace_volume(({"x": Fraction(1)}, Fraction(-1, 2)), box) == 1  # x <= 1/2: 1/2 × 2


@pytest.mark.parametrize("seed", range(5))
def test_certified_answers_agree_with_sampling(seed, certify):
    text = random_net(200 + seed, d=2, layers=(3, 2), sex_scale=0.3 if seed % 2 else 0.02)
    r = certify(text, min_mass=2**-8, timeout=10)
    a = analyzer(text)
    rng = random.Random(seed)
    root = B.root_box(a.dims)
    n = 1500
    hits = sum(a.biased_at(B.random_point(a.dims, root, rng)) is not None for _ in range(n))
    if r.verdict == "proved":
        assert hits == 0
    bm = r.details["biased_mass"]
    slack = 4 * math.sqrt(0.25 / n)
    assert bm["lower"] - slack <= hits / n <= bm["upper"] + slack
    if r.verdict == "violated":
        w = r.details["witness"]
        assert a.biased_at(w["inputs"]) is not None


# sex feeds a live gate that only acts where the decision is already positive:
# out = [score > 0] for both values, although score2 depends on sex
GATED = """
program gated(x1: real, x2: real, sex: int)
  requires 0 <= x1 && x1 <= 1 && 0 <= x2 && x2 <= 1 && (sex == 0 || sex == 1)
  ensures independent(out, sex)
{
  h1 := max(0, 1.3*x1 - 0.7*x2 + 0.1);
  h2 := max(0, -0.4*x1 + 1.1*x2 - 0.3);
  score := h1 - 1.2*h2 - 0.35;
  r := max(0, score);
  g := max(0, r + 0.5*sex - 0.5);
  score2 := score + 0.8*g;
  out := score2 > 0 ? 1 : 0;
}
"""


def test_live_but_inert_gate_is_certified(certify):
    r = certify(GATED, timeout=60)
    assert r.verdict == "proved"
    assert r.details["coverage"] == 1.0
    a = analyzer(GATED)
    rng = random.Random(0)
    root = B.root_box(a.dims)
    assert all(a.biased_at(B.random_point(a.dims, root, rng)) is None for _ in range(300))
    # the sex-dependent unit is live: the score itself does depend on sex
    live = certify(GATED.replace("independent(out, sex)", "independent(score2, sex)"), timeout=60, mass_gap=0.5)
    assert live.verdict == "violated"
