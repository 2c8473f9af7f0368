#!/usr/bin/env python3
"""Run the 39 FairSquare fairness problems with the probability engine.

    python benchmarks/fairness/run.py [--timeout S] [--json OUT] [--workers N] [--scheduler ADDR] [--only NAME ...]

Prints a table in FairSquare's layout (decision program × population: verdict,
certified ratio interval, time), checks every verdict against GROUND_TRUTH.md
(FAIR must be proved, UNFAIR violated) and writes results.md next to this file.
Problems are jobs of tamp.executor (``--workers N``, alias ``--jobs``, default: all cores; or
``--scheduler ADDR``, a Dask cluster); the tables keep the order of the names.
Exit status 0 when every verdict matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tamp.commands.bench import machine_note  # noqa: E402  (after the path set-up)
from tamp.commands.options import add_executor_arguments, make_executor  # noqa: E402

POPS = ["ind", "BN1", "BN2"]
PROGS = ["DT4", "DT14", "DT16", "DT16a", "DT44", "SVM3", "SVM4", "SVM4a", "SVM5", "SVM6", "NN2_1", "NN2_2", "NN3_2"]


def ground_truth() -> dict:
    """benchmark name -> (expected verdict 'proved'/'violated', MC ratio text, published)."""
    out = {}
    for line in (HERE / "GROUND_TRUTH.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[5] in ("FAIR", "UNFAIR"):
            out[cells[0]] = ("proved" if cells[5] == "FAIR" else "violated", cells[3], cells[6])
    return out


def run_one(name: str, timeout: float) -> dict:
    from lang.parser import parse_file
    from tamp.core.interval import float_above, float_below
    from tamp.probability import decide_program

    path = HERE / f"{name}.prob"
    t0 = time.monotonic()
    c0 = 0.0
    try:
        src = parse_file(str(path))
        try:
            from lang.typecheck import check_file

            check_file(src)
        except ImportError:
            pass
        c0 = time.process_time()
        r = decide_program(src.programs[0], timeout=timeout, path=str(path), source=src.text)
        ratio = next((c.lhs for c in r.comparisons if c.lhs is not None), None)
        return {
            "name": name,
            "verdict": r.verdict,
            "time_s": r.time_s,
            "cpu_s": time.process_time() - c0,
            "ratio": None if ratio is None else [float_below(ratio.lo), float_above(ratio.hi)],
            "cells": r.cells,
            "paths": r.paths,
            "solver_calls": r.solver_calls,
            "message": r.message,
        }
    except Exception as exc:  # reported in the table, never hidden
        return {
            "name": name,
            "verdict": "error",
            "time_s": time.monotonic() - t0,
            "cpu_s": 0.0,
            "ratio": None,
            "cells": 0,
            "paths": 0,
            "solver_calls": 0,
            "message": f"{type(exc).__name__}: {exc}",
        }


def fmt_ratio(r):
    """The interval rounded outward to 4 decimals."""
    if r is None:
        return "—"
    import math
    from fractions import Fraction

    lo = math.floor(Fraction(r[0]) * 10**4)
    hi = math.ceil(Fraction(r[1]) * 10**4)
    return f"[{lo // 10**4}.{lo % 10**4:04d}, {hi // 10**4}.{hi % 10**4:04d}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per problem (default 60)")
    ap.add_argument("--json", metavar="OUT", help="also write the raw results as JSON")
    add_executor_arguments(ap, default_workers=os.cpu_count() or 1)
    ap.add_argument("--only", nargs="*", help="benchmark names, e.g. BN1_NN3_2")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite results.md")
    a = ap.parse_args(argv)
    gt = ground_truth()
    names = a.only or [f"{p}_{q}" for p in POPS for q in PROGS]
    load0 = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    t0 = time.monotonic()
    # longest-running kinds first so the workers stay busy
    order = sorted(names, key=lambda n: ("NN3" not in n, "BN2" not in n, n))
    with make_executor(a) as ex:
        res = dict(ex.map(run_one, [(n, (n, a.timeout)) for n in order]))
        where = {"local": "in this process", "cluster": "on a local Dask cluster"}.get(
            ex.backend, f"on the Dask cluster at {ex.backend}"
        )
    wall = time.monotonic() - t0
    ok = True
    for n in names:
        r = res[n]
        exp = gt.get(n, (None, "", ""))
        r["expected"] = exp[0]
        r["match"] = r["verdict"] == exp[0]
        ok &= r["match"]
    lines = [
        "# FairSquare fairness suite: results",
        "",
        f"`python benchmarks/fairness/run.py --timeout {a.timeout:g}` on {os.cpu_count()} core(s), "
        f"{'' if a.scheduler else f'{a.workers} worker(s) '}{where} "
        f"({machine_note()}); wall time {wall:.1f} s, load average before the run "
        f"{load0}. Certified bounds (CDFs on python-flint's arb balls, tamp.core.interval, outward rounding). "
        "✓ = verdict matches GROUND_TRUTH.md (FAIR → proved, UNFAIR → violated). Times are wall "
        "clock per problem; the last table also gives CPU seconds (the machine may be shared).",
        "",
        "| program | " + " | ".join(POPS) + " |",
        "|---|" + "---|" * len(POPS),
    ]
    for q in PROGS:
        cells = []
        for p in POPS:
            n = f"{p}_{q}"
            if n not in res:
                cells.append("")
                continue
            r = res[n]
            mark = "✓" if r["match"] else "✗"
            cells.append(f"{r['verdict']} {mark} {fmt_ratio(r['ratio'])} {r['time_s']:.2f} s")
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    times = [res[n]["time_s"] for n in names]
    cpus = [res[n].get("cpu_s", 0.0) for n in names]
    decided = sum(res[n]["verdict"] in ("proved", "violated") for n in names)
    matched = sum(res[n]["match"] for n in names)
    lines += [
        "",
        f"Decided {decided}/{len(names)}, matching ground truth {matched}/{len(names)}; "
        f"time median {statistics.median(times):.2f} s, max {max(times):.2f} s, "
        f"total {sum(times):.1f} s; CPU median {statistics.median(cpus):.2f} s, max {max(cpus):.2f} s, "
        f"total {sum(cpus):.1f} s.",
        "",
        "| benchmark | verdict | expected | ratio interval | MC ratio | time (s) | CPU (s) | paths | cells | solver calls |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in names:
        r = res[n]
        lines.append(
            f"| {n} | {r['verdict']} | {r['expected']} | {fmt_ratio(r['ratio'])} | {gt.get(n, ('', '', ''))[1]} | "
            f"{r['time_s']:.2f} | {r.get('cpu_s', 0.0):.2f} | {r['paths']} | {r['cells']} | {r['solver_calls']} |"
        )
    bad = [n for n in names if res[n]["message"] and not res[n]["match"]]
    for n in bad:
        lines.append(f"\n{n}: {res[n]['message']}")
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write and not a.only:
        (HERE / "results.md").write_text(text)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
