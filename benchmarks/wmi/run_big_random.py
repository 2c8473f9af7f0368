#!/usr/bin/env python3
"""Run tamp.wmi on the 90 "big_random" WMI problems and tabulate the results.

    python benchmarks/wmi/run_big_random.py [--max-reals N] [--min-reals N]
        [--timeout S] [--workers J] [--scheduler ADDR] [--json OUT] [--merge-json PREV] [--md PATH]

Each problem runs in its own process with a time limit (default 300 s); the
README's reference values (nr2_1 … nr6_1) are checked to 1e-9 relative.  The
table (problem, reals, Z, cells, time, status) is printed and written to
``benchmarks/wmi/results.md`` (rows of ``--merge-json`` from an earlier run are
kept for problems not run now).  Exit status 1 if a reference value is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = REPO / ".." / "shared" / "benchmarks" / "wmi-big-random"

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks/wmi")
from run_big_random import exact_digest
from tamp.wmi import wmi, WMITimeout
from tamp.wmi.jsonfmt import load_problem
path, timeout = sys.argv[2], float(sys.argv[3])
t0 = time.monotonic()
p = load_problem(path)
try:
    r = wmi(p.formula, p.weight, p.domain, timeout=timeout)
    out = {"status": "ok", "value": float(r.value), "cells": r.cells, "time_s": time.monotonic() - t0}
    out.update(exact_digest(r.value.numerator, r.value.denominator))
except WMITimeout as exc:
    out = {"status": "timeout", "cells": exc.cells, "partial": float(exc.partial),
           "time_s": time.monotonic() - t0}
print(json.dumps(out))
"""


def exact_digest(num: int, den: int) -> dict:
    """A compact fingerprint of the exact answer ``num/den`` (the full rational
    has up to millions of digits): bit sizes and a SHA-256 of ``"num/den"`` in hex."""
    import hashlib

    text = f"{num:x}/{den:x}"
    return {
        "Z_num_bits": num.bit_length(),
        "Z_den_bits": den.bit_length(),
        "Z_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def compact(res: dict) -> dict:
    """Replace an exact ``"Z": "num/den"`` entry (older runs) by its digest."""
    z = res.pop("Z", None)
    if z is not None:
        import gmpy2  # older runs stored Z in decimal, beyond int()'s digit limit; GMP has none

        num, den = z.split("/")
        res.update(exact_digest(int(gmpy2.mpz(num)), int(gmpy2.mpz(den))))
    return res


def reference_values():
    """Reference Z values from the data set's README table (problem -> float)."""
    refs = {}
    readme = DATA / "README.md"
    if readme.exists():
        for line in readme.read_text().splitlines():
            m = re.match(r"\|\s*(nr\d+_\d+)\s*\|\s*([0-9.eE+-]+)\s*\|", line)
            if m:
                refs[m.group(1)] = float(m.group(2))
    return refs


def problem_key(path: Path):
    m = re.match(r"nr(\d+)_(\d+)$", path.stem)
    return (int(m.group(1)), int(m.group(2))) if m else (99, 0)


def run_one(path: Path, timeout: float) -> dict:
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(REPO), str(path), str(timeout)],
            capture_output=True,
            text=True,
            timeout=timeout + 60,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "cells": None, "time_s": time.monotonic() - t0}
    if proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"status": "error", "error": err, "time_s": time.monotonic() - t0}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def status_text(name, res, refs):
    if res["status"] == "ok":
        ref = refs.get(name)
        if ref is None:
            return "ok"
        rel = abs(res["value"] - ref) / abs(ref)
        return "ok, matches reference" if rel <= 1e-9 else f"MISMATCH (ref {ref}, rel {rel:.2e})"
    if res["status"] == "timeout":
        cells = res.get("cells")
        got = f"{cells} cells integrated" if cells is not None else "killed"
        return f"timeout ({got})"
    return f"error: {res.get('error')}"


def work(p: Path, timeout: float) -> dict:
    """One problem (a job of tamp.executor: plain data in, plain data out)."""
    res = run_one(p, timeout)
    res["reals"] = problem_key(p)[0]
    res["timeout_s"] = timeout
    return res


def main(argv=None) -> int:
    sys.path.insert(0, str(REPO))
    from tamp.commands.options import add_executor_arguments, make_executor

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-reals", type=int, default=10)
    ap.add_argument("--min-reals", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0, help="per-problem limit in seconds")
    add_executor_arguments(ap, default_workers=1)  # problems run in parallel (tamp.executor)
    ap.add_argument("--json", metavar="OUT", help="write the raw results as JSON")
    ap.add_argument("--merge-json", metavar="PREV", help="keep rows of an earlier --json run")
    ap.add_argument("--md", metavar="PATH", default=str(HERE / "results.md"))
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"data set not found: {DATA}", file=sys.stderr)
        return 2
    refs = reference_values()
    paths = sorted(
        (p for p in DATA.glob("nr*_*.json") if args.min_reals <= problem_key(p)[0] <= args.max_reals), key=problem_key
    )
    results = {}
    if args.merge_json and Path(args.merge_json).exists():
        prev = json.loads(Path(args.merge_json).read_text())
        results.update({k: compact(v) for k, v in prev.items()})

    bad = 0
    print(f"{'problem':8} {'reals':>5} {'Z':>20} {'cells':>6} {'time s':>8}  status", flush=True)
    with make_executor(args) as ex:
        for name, res in ex.map(work, [(p.stem, (p, args.timeout)) for p in paths]):
            results[name] = res
            st = status_text(name, res, refs)
            bad += st.startswith("MISMATCH") or st.startswith("error")
            z = f"{res['value']:.12g}" if res["status"] == "ok" else "—"
            cells = res.get("cells")
            print(
                f"{name:8} {res['reals']:>5} {z:>20} {cells if cells is not None else '—':>6} "
                f"{res['time_s']:>8.1f}  {st}",
                flush=True,
            )
            # written after every problem, so an interrupted run still leaves its table
            if args.json:
                Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True))
            write_markdown(Path(args.md), results, refs, args)
    return 1 if bad else 0


def write_markdown(path: Path, results: dict, refs: dict, args):
    names = sorted(results, key=lambda s: problem_key(Path(s)))
    lines = [
        "# tamp.wmi on the big_random WMI problems",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; Python with exact rationals (gmpy2/GMP for the big sums when installed), z3 for cell feasibility.",
        "Produced by `benchmarks/wmi/run_big_random.py`; each problem in its own process with the "
        "time limit shown in its row (problems may have run two at a time, one per core).",
        "`ok, matches reference` = within 1e-9 relative of the data set README's value.",
        "",
        "## Summary by number of reals",
        "",
        "| reals | solved | timeouts | median time (solved) | max time (solved) |",
        "|---|---|---|---|---|",
    ]
    by_n = {}
    for nm in names:
        by_n.setdefault(results[nm]["reals"], []).append(results[nm])
    for n in sorted(by_n):
        rs = by_n[n]
        ok = sorted(r["time_s"] for r in rs if r["status"] == "ok")
        to = sum(r["status"] == "timeout" for r in rs)
        med = f"{ok[len(ok) // 2]:.1f} s" if ok else "—"
        mx = f"{ok[-1]:.1f} s" if ok else "—"
        lines.append(f"| {n} | {len(ok)}/{len(rs)} | {to} | {med} | {mx} |")
    lines += [
        "",
        "## All problems",
        "",
        "| problem | reals | Z | cells | time (s) | limit (s) | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for nm in names:
        r = results[nm]
        z = f"{r['value']:.12f}" if r["status"] == "ok" else "—"
        cells = r.get("cells")
        lines.append(
            f"| {nm} | {r['reals']} | {z} | {cells if cells is not None else '—'} | "
            f"{r['time_s']:.1f} | {r.get('timeout_s', '—'):g} | {status_text(nm, r, refs)} |"
        )
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
