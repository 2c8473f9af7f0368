"""Causal fairness of Libra's published networks: tamp's numbers beside Libra's logged ones.

    PYTHONPATH=. python benchmarks/models/run_libra.py [--timeout S] [--only census_10,german_...] [--markdown FILE]

Each network of ``benchmarks/models/libra`` (copied from Libra's repository, see its README) is
imported with its specification (``tamp.import_model``) and certified by ``certify_program``
(the network engine: categorical cells × real boxes, linear bounds, exact volumes). Printed per
network: coverage (share of the input space decided: certified fair, biased, or measured
exactly), the certified biased-mass interval and its width, tamp's time, and Libra's logged
run with the highest coverage (coverage, its "biased" percentage, time) and the speed-up.

Libra's numbers are not the same quantity as tamp's biased mass: Libra's "biased %" is the share
of its input partitions in which it *found* bias (whole partitions count), tamp's interval
bounds the mass of the input points whose class changes with the sensitive feature. For a
continuous sensitive feature split at a value, tamp measures pairs (one value below, one above,
uniform on each side). Libra's German networks carry a query ``assume (x05 > 0.04)`` (or
``<= 0.04``): tamp's Libra reader takes two-sided ``assume(LO <= x <= HI)`` only, so the runner
passes the query as ``--range x05=0.04..1`` (or ``0..0.04``) — the strict end is a set of measure
zero. Libra's times are from a 12-core Xeon X5650; tamp's from this machine (``--jobs``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libra")

NETWORKS = [
    ("census_10", "census_spec.txt"),
    ("census_12", "census_spec.txt"),
    ("census_20", "census_spec.txt"),
    ("census_40", "census_spec.txt"),
    ("census_45", "census_spec.txt"),
    ("german_Gtno-bias1", "german_spec.txt"),
    ("german_Gt0.20-bias1", "german_spec.txt"),
    ("german_LtEno-bias1", "german_spec.txt"),
    ("german_LtE0.20-bias1", "german_spec.txt"),
    ("japanese_20", "japanese_spec.txt"),
]

_QUERY = re.compile(r"^\s*assume\s*\(\s*([A-Za-z_]\w*)\s*(>|>=|<|<=)\s*([-\d.]+)\s*\)\s*$")


def _model_and_ranges(path: str):
    """The network file without Libra's one-sided query assumes, and those as --range boxes."""
    lines, ranges = [], []
    with open(path) as f:
        for ln in f:
            m = _QUERY.match(ln)
            if m:
                name, op, val = m.groups()
                ranges.append(f"{name}={val}..1" if op.startswith(">") else f"{name}=0..{val}")
                lines.append("\n")  # keep the line numbers
            else:
                lines.append(ln)
    if not ranges:
        return path, []
    fd, tmp = tempfile.mkstemp(suffix=".libra")
    with os.fdopen(fd, "w") as f:
        f.writelines(lines)
    return tmp, ranges


def libra_best(logged: dict, key: str):
    runs = logged["runs"].get(key, [])
    if not runs:
        return None
    return max(runs, key=lambda r: (round(r["coverage_pct"], 6), -r["time_s"]))


def run_one(key: str, spec: str, timeout: float, jobs: int, width: float = 0.0095):
    from tamp import import_model
    from tamp.causal import certify_program

    path, ranges = _model_and_ranges(os.path.join(HERE, key + ".libra"))
    try:
        imp = import_model(
            path, format="libra", spec=os.path.join(HERE, spec), ranges=ranges, name=re.sub(r"\W", "_", key)
        )
    finally:
        if path.startswith(tempfile.gettempdir()):
            os.unlink(path)
    t0 = time.monotonic()
    res = certify_program(imp.program, {"timeout": timeout, "jobs": jobs, "mass_gap": width}, path=key)
    dt = time.monotonic() - t0
    d = res.details
    bm = d["biased_mass"]
    return {
        "network": key,
        "relus": sum(1 for a in imp.network.body if type(a.expr).__name__ == "Relu"),
        "verdict": res.verdict,
        "coverage": d["coverage"],
        "lower": bm["lower"],
        "upper": bm["upper"],
        "width": bm["upper"] - bm["lower"],
        "time_s": dt,
        "boxes": d.get("boxes"),
        "engine": d.get("engine"),
        "ranges": ranges,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per network (default 600)")
    ap.add_argument("--only", default="", help="comma-separated network names")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument(
        "--width",
        type=float,
        default=0.0095,
        help="stop once the certified biased-mass interval is at most this wide (default 0.0095: within 0.01)",
    )
    ap.add_argument("--markdown", default="", help="also write the table to this file")
    ap.add_argument("--json", action="store_true", help="one JSON object per network")
    args = ap.parse_args(argv)
    with open(os.path.join(HERE, "libra_logged.json")) as f:
        logged = json.load(f)
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    head = (
        "| network | ReLUs | verdict | coverage | biased mass (certified) | width | tamp time | "
        "Libra best: coverage, biased %, time (config) | speed-up |"
    )
    rows = [head, "|" + "---|" * 9]
    print(head)
    print(rows[1])
    for key, spec in NETWORKS:
        if only and key not in only:
            continue
        r = run_one(key, spec, args.timeout, args.jobs, args.width)
        lb = libra_best(logged, key)
        if lb:
            libra = f"{lb['coverage_pct']:.2f}%, {lb['biased_pct']:.3f}%, {lb['time_s']:.0f} s ({lb['config']})"
            speed = f"{lb['time_s'] / r['time_s']:.1f}x"
        else:
            libra, speed = "-", "-"
        line = (
            f"| {key} | {r['relus']} | {r['verdict']} | {r['coverage']:.2%} | [{r['lower']:.6f}, {r['upper']:.6f}] | "
            f"{r['width']:.6f} | {r['time_s']:.1f} s | {libra} | {speed} |"
        )
        rows.append(line)
        print(line, flush=True)
        if args.json:
            print(json.dumps(r), flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
