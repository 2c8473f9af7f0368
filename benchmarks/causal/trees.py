"""Causal fairness of scikit-learn trees and forests: the exact tree engine, timed.

Trains (seeded) a depth-4 decision tree and random forests of 5 trees of depth 4, 10 of depth 5
and 20 of depth 6 on a synthetic data set (four uniform features and a 0/1 ``sex`` column, labels that
read ``sex``), exports them with skl2onnx, imports them with ``tamp.import_model`` (``sex``
split at 0.5) and certifies ``independent(out, sex_side)``. For each: the engine, the biased
mass (exact), why it stopped, the boxes, the time, and a Monte Carlo estimate from the model's
own ``predict`` (100,000 float32 points, sex 0 against sex 1) that must lie within sampling
error of the exact value. ``--compare S`` also runs the general engine (trees off) for S seconds.
Writes benchmarks/causal/trees.md.

Usage: python benchmarks/causal/trees.py [--timeout S] [--compare S] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from lang.parser import parse  # noqa: E402
from tamp.causal import certify_program  # noqa: E402
from tamp.models import import_model  # noqa: E402
from tamp.models.spec import parse_spec  # noqa: E402

FEATURES = ["x0", "x1", "x2", "x3", "sex"]


def data(seed: int = 0, n: int = 2000):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.uniform(0, 1, (n, 4)), rng.integers(0, 2, n)]).astype(np.float32)
    score = x[:, 0] + 0.5 * x[:, 1] - 0.3 * x[:, 2] + 0.3 * x[:, 4] * (x[:, 3] > 0.4) + rng.normal(0, 0.1, n)
    return x, (score > 0.7).astype(int)


def models():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    x, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield "tree_d4", DecisionTreeClassifier(max_depth=4, random_state=0).fit(x, y), x
        yield "forest_5x4", RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y), x
        yield "forest_10x5", RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(x, y), x
        yield "forest_20x6", RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(x, y), x


def monte_carlo(model, n: int = 100_000, seed: int = 7) -> float:
    rng = np.random.default_rng(seed)
    pts = rng.uniform(0, 1, (n, 5)).astype(np.float32)
    pts[:, 4] = 0
    a = model.predict(pts)
    pts[:, 4] = 1
    return float(np.mean(a != model.predict(pts)))


def certify(text: str, **opts):
    src = parse(text, "<bench>")
    opts.setdefault("jobs", 1)
    return certify_program(src.programs[0], opts, path=src.path, source=src.text)


def main(argv=None):
    from skl2onnx import to_onnx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", type=float, default=0.0, help="also run the general engine for S seconds")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per model for the tree engine")
    ap.add_argument("--out", default=str(HERE / "trees.md"))
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, x in models():
            path = Path(tmp) / f"{name}.onnx"
            path.write_bytes(to_onnx(model, x[:1]).SerializeToString())
            text = import_model(str(path), features=FEATURES, spec=parse_spec("1\nsex\n0.5\n")).text
            t0 = time.perf_counter()
            r = certify(text, timeout=args.timeout)
            wall = time.perf_counter() - t0
            d = r.details
            bm = d["biased_mass"]
            mc = monte_carlo(model)
            row = {
                "name": name,
                "verdict": r.verdict,
                "engine": d["engine"].split(" ")[0],
                "mass": f"{bm['lower']:.6f}"
                if bm["lower"] == bm["upper"]
                else f"[{bm['lower']:.6f}, {bm['upper']:.6f}]",
                "stopped": d["stopped"],
                "mc": f"{mc:.4f}",
                "boxes": d["boxes"],
                "time": f"{wall:.2f}",
            }
            if args.compare:
                t0 = time.perf_counter()
                g = certify(text, timeout=args.compare, trees=False).details
                row["general"] = (
                    f"[{g['biased_mass']['lower']:.4f}, {g['biased_mass']['upper']:.4f}] {g['stopped']}"
                    f" in {time.perf_counter() - t0:.0f} s"
                )
            rows.append(row)
            print(row, flush=True)
    head = ["name", "verdict", "engine", "mass", "stopped", "mc", "boxes", "time"] + (
        ["general"] if args.compare else []
    )
    titles = {
        "mass": "biased mass",
        "mc": "Monte Carlo (100k)",
        "time": "time (s)",
        "general": f"general engine ({args.compare:.0f} s)",
    }
    lines = [
        "# Causal fairness of trees and forests (benchmarks/causal/trees.py)",
        "",
        f"One process (jobs=1); load average {load:.1f} at the start. Biased mass: exact, a share of",
        "the (x0..x3, sex_below, sex_above) box; Monte Carlo: the model's own predict, sex 0 vs 1.",
        "",
        "| " + " | ".join(titles.get(h, h) for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(str(r.get(h, "")) for h in head) + " |" for r in rows]
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
