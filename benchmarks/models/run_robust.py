"""Probabilistic robustness benchmark: the 3x32 ReLU MLP and the 20-tree random forest of
``train.py`` at the 100 points of ``points.csv``, eps 0.01 / 0.05 / 0.1, under the prior that
``tamp prior fit`` learns from ``train.csv``.

Prints, per model and eps, the mean and max time per point (wall clock, and the process's CPU
time per point: the machine is shared), the mean and max interval width, how many points reach
``--width``, and checks every certified interval against a Monte Carlo estimate: SAMPLES inputs
drawn from the prior restricted to the point's eps-box, each classified exactly (rational
arithmetic, see ``exact_classes``); the check passes when the interval meets the estimate's
99.99% Wilson interval. The WMI paper's times (28 cores) are 0.35 / 10.3 / 71 s per point.
``--out FILE`` also writes the table as Markdown, with the load average before and after.

    python benchmarks/models/run_robust.py [--timeout S] [--width W] [--points N] [--samples N] [--out F]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import time
from fractions import Fraction
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

from tamp.models import read_model  # noqa: E402
from tamp.models.ir import Affine, Relu  # noqa: E402
from tamp.models.prior import load_prior  # noqa: E402
from tamp.models.table import Table, load_table  # noqa: E402
from tamp.robustness import robust  # noqa: E402
from tamp.robustness.classifier import classifier  # noqa: E402

FEATURES = ["radius", "texture", "smoothness", "compactness", "concavity", "symmetry"]
EPS = ["0.01", "0.05", "0.1"]
PAPER = {"0.01": 0.35, "0.05": 10.3, "0.1": 71.0}
Z = 3.89  # two-sided 99.99%


def exact_classes(clf, xs: List[Dict[str, Fraction]]) -> List[int]:
    """Exact classes of many points: a network's dyadic weights and inputs are scaled to
    integers (every value of the forward pass is an integer over a known power of two), so the
    evaluation is exact rational arithmetic at integer speed; forests use Fractions."""
    net = clf.network
    if clf.kind != "network":
        return [clf.classify(x) for x in xs]
    out = []
    for x in xs:
        # value = num / 2**e with a per-variable exponent
        env: Dict[str, tuple] = {}
        for f, v in x.items():
            env[f] = _dyadic(v)
        for a in net.body:
            e = a.expr
            if isinstance(e, Affine):
                env[a.name] = _affine(e, env)
            elif isinstance(e, Relu):
                n, k = _affine(e.arg, env)
                env[a.name] = (max(n, 0), k)
        scores = [_affine(s, env) for s in net.scores]
        vals = [Fraction(n, 1 << k) for n, k in scores]
        from tamp.robustness.classifier import class_of

        out.append(class_of(vals, net.rule))
    return out


def _dyadic(q: Fraction) -> tuple:
    d = q.denominator
    k = d.bit_length() - 1
    if d != 1 << k:
        raise ValueError("not a dyadic rational")
    return q.numerator, k


def _affine(a: Affine, env) -> tuple:
    terms = [(_dyadic(c), env[v]) for v, c in a.terms] + [(_dyadic(a.const), (1, 0))]
    k = max(c[1] + v[1] for c, v in terms)
    n = sum(c[0] * v[0] << (k - c[1] - v[1]) for c, v in terms)
    return n, k


def sample(prior, point: Dict[str, Fraction], eps: Fraction, rng, n: int) -> List[Dict[str, Fraction]]:
    box = {f: (max(Fraction(0), point[f] - eps), min(Fraction(1), point[f] + eps)) for f in FEATURES}
    pieces = prior.pieces({}, box)
    weights = []
    for p, d in pieces:
        v = Fraction(1)
        for lo, hi in p.values():
            v *= hi - lo
        weights.append(float(d * v))
    out = []
    for _ in range(n):
        p, _ = rng.choices(pieces, weights)[0]
        out.append({f: Fraction(float(lo) + rng.random() * float(hi - lo)) for f, (lo, hi) in p.items()})
    return out


def wilson(k: int, n: int):
    p = k / n
    den = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / den
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / den
    return max(0.0, c - h - 1e-12), min(1.0, c + h + 1e-12)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=10.0, help="time limit per point (s)")
    ap.add_argument("--width", type=float, default=0.01, help="stop refining a point at this interval width")
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--models", default="mlp,forest")
    ap.add_argument("--eps", default=",".join(EPS))
    ap.add_argument("--out", help="also write the table as Markdown to this file")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows_md: List[str] = []
    prior_path = os.path.join(HERE, "prior.json")
    if not os.path.exists(prior_path):
        subprocess.run(
            [sys.executable, "-m", "tamp", "prior", "fit", os.path.join(HERE, "train.csv"), "-o", prior_path],
            check=True,
            env=dict(os.environ, PYTHONPATH=ROOT),
        )
    prior = load_prior(prior_path)
    table = load_table(os.path.join(HERE, "points.csv"))
    table = Table(table.path, table.columns, table.rows[: args.points], table.lines[: args.points])
    rng = random.Random(7)
    failures = 0
    print(
        f"{'model':8} {'eps':>5} {'mean s':>8} {'max s':>8} {'cpu s':>7} {'paper s':>8} {'mean width':>11} "
        f"{'max width':>10} {'<=W':>5} {'MC ok':>7}"
    )
    for name in args.models.split(","):
        path = os.path.join(HERE, f"{name}.onnx")
        net, _ = read_model(path, features=FEATURES)
        clf = classifier(net, path)
        for eps in args.eps.split(","):
            t0 = time.monotonic()
            c0 = time.process_time()
            r = robust(path, table, eps, prior=prior, features=FEATURES, width=args.width, timeout=args.timeout)
            cpu = (time.process_time() - c0) / len(r.points)
            wall = time.monotonic() - t0
            ok = 0
            for p, row in zip(r.points, table.rows):
                x = dict(zip(table.columns, row))
                xs = sample(prior, x, Fraction(eps), rng, args.samples)
                c0 = clf.classify(x)
                k = sum(1 for c in exact_classes(clf, xs) if c == c0)
                lo, hi = wilson(k, len(xs))
                if float(p.lower) <= hi and lo <= float(p.upper):
                    ok += 1
                else:
                    failures += 1
                    print(
                        f"  MC MISMATCH {name} eps={eps} point {p.index}: [{float(p.lower)}, {float(p.upper)}] vs {k}/{len(xs)}"
                    )
            ts = [p.time_s for p in r.points]
            widths = [float(p.upper - p.lower) for p in r.points]
            narrow = sum(1 for p in r.points if p.upper - p.lower <= Fraction(args.width))
            print(
                f"{name:8} {eps:>5} {sum(ts) / len(ts):8.3f} {max(ts):8.3f} {cpu:7.3f} {PAPER[eps]:8.2f} "
                f"{sum(widths) / len(widths):11.5f} {max(widths):10.5f} {narrow:>5} {ok:>3}/{len(ts)}"
                f"   (wall {wall:.0f} s)",
                flush=True,
            )
            rows_md.append(
                f"| {name} | {eps} | {sum(ts) / len(ts):.3f} | {max(ts):.2f} | {cpu:.3f} | {PAPER[eps]} | "
                f"{sum(widths) / len(widths):.5f} | {max(widths):.5f} | {narrow}/{len(ts)} | {ok}/{len(ts)} |"
            )
    if args.out:
        load1 = os.getloadavg()
        with open(args.out, "w") as fh:
            fh.write(
                f"<!-- run_robust.py --timeout {args.timeout:g} --width {args.width:g} --points {args.points} "
                f"--samples {args.samples}; load average {load0[0]:.1f} before, {load1[0]:.1f} after -->\n"
                "| model | eps | mean s/point | max s/point | CPU s/point | WMI paper s/point (28 cores) | "
                "mean width | max width | points at width <= W | MC inside |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows_md) + "\n"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
