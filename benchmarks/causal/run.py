"""Certify every network of benchmarks/causal and write results.md.

For each ``*.prob`` here: verdict, coverage (certified + biased-found share of the input box),
bounds on the biased mass under the uniform distribution, a Monte Carlo estimate of that mass
from the network's weights (``<name>.json``, 100,000 points; must fall inside the bounds up to
sampling error), the seeded region's mass, and the wall time on all cores.

Usage: python benchmarks/causal/run.py [--timeout S] [--min-mass L] [--mass-gap G] [--jobs N] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from lang.parser import parse_file  # noqa: E402
from tamp.causal import certify_program  # noqa: E402


def monte_carlo(meta: dict, n: int = 100_000, seed: int = 7) -> float:
    """Share of uniform inputs x where the network's output differs between sex = 0 and sex = 1."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, meta["features"]))
    params = [(np.array(w), np.array(b)) for w, b in meta["weights"]]

    def out(sex):
        a = np.column_stack([x, np.full(n, float(sex))])
        for i, (w, b) in enumerate(params):
            a = a @ w + b
            if i < len(params) - 1:
                a = np.maximum(a, 0)
        score = a[:, 0]
        if meta.get("gate"):
            g = np.maximum(0, np.maximum(0, score) + 0.5 * sex - 0.5)
            score = score + 0.8 * g
        return score > 0

    return float(np.mean(out(0) != out(1)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per network")
    ap.add_argument("--min-mass", type=float, default=2.0**-10, help="L: smallest box share that is split")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (0 = all cores)")
    ap.add_argument("--mass-gap", type=float, default=0.005, help="stop refining at upper - lower <= G")
    ap.add_argument("--only", help="substring of the networks to run")
    ap.add_argument("--out", default=str(HERE / "results.md"))
    args = ap.parse_args(argv)
    args.load_start = os.getloadavg()[0]
    rows = []
    for path in sorted(HERE.glob("*.prob")):
        if args.only and args.only not in path.stem:
            continue
        meta = json.loads(path.with_suffix(".json").read_text())
        src = parse_file(str(path))
        t0 = time.monotonic()
        r = certify_program(
            src.programs[0],
            {"timeout": args.timeout, "jobs": args.jobs, "min_mass": args.min_mass, "mass_gap": args.mass_gap},
            path=str(path),
            source=src.text,
        )
        wall = time.monotonic() - t0
        d = r.details
        mc = monte_carlo(meta)
        se = 4 * math.sqrt(max(mc * (1 - mc), 1e-6) / 100_000)
        bm = d["biased_mass"]
        ok = bm["lower"] - se <= mc <= bm["upper"] + se
        row = dict(
            name=path.stem,
            relus=meta["relus"],
            inputs=meta["features"] + 1,
            verdict=r.verdict,
            coverage=d["coverage"],
            certified=d["certified"],
            biased=d["biased"],
            unknown=d["unknown"],
            lower=bm["lower"],
            upper=bm["upper"],
            mc=mc,
            mc_inside=ok,
            seeded=meta["seeded_region_mass"],
            boxes=d["boxes"],
            smt=d["smt_calls"],
            time=wall,
        )
        rows.append(row)
        print(
            f"{row['name']:18} {row['verdict']:8} coverage {row['coverage']:7.2%}  biased mass "
            f"[{row['lower']:.4f}, {row['upper']:.4f}]  MC {mc:.4f}{'' if ok else ' (OUTSIDE!)'}  "
            f"seeded {row['seeded']:.2f}  {row['boxes']} boxes  {row['smt']} SMT  {wall:.1f} s",
            flush=True,
        )
    write_md(rows, args)
    return 0 if all(r["mc_inside"] for r in rows) else 1


def write_md(rows, args):
    lines = [
        "# Causal fairness benchmarks",
        "",
        f"`python benchmarks/causal/run.py --timeout {args.timeout:g}` on {os.cpu_count()} cores, "
        f"load average {args.load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end "
        f"(min box share L = {args.min_mass:g}, mass gap target {args.mass_gap:g}). Coverage = certified + biased-found share of the input box; "
        "biased mass = probability (uniform inputs) that flipping `sex` changes `out`, as certified "
        "lower/upper bounds; MC = Monte Carlo estimate of the same from the weights (100,000 points); "
        "SMT calls include the LP calls of the ReLU-phase branching.",
        "",
        "| network | ReLUs | inputs | verdict | coverage | certified | biased found | unknown | "
        "biased mass bounds | MC estimate | seeded region | boxes | SMT calls | time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['relus']} | {r['inputs']} | {r['verdict']} | {r['coverage']:.2%} | "
            f"{r['certified']:.2%} | {r['biased']:.2%} | {r['unknown']:.2%} | "
            f"[{r['lower']:.4f}, {r['upper']:.4f}] | {r['mc']:.4f}{'' if r['mc_inside'] else ' ✗'} | "
            f"{r['seeded']:.2f} | {r['boxes']} | {r['smt']} | {r['time']:.1f} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
