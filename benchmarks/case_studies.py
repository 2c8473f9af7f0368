#!/usr/bin/env python3
"""The seven case studies against a baseline tree, the way `tamp bench` runs them.

    python benchmarks/case_studies.py --base /tmp/wt-base [--runs 5] [--python PY]

(``git worktree add /tmp/wt-base 6585b2d`` gives the 2026-11-23 baseline.) Each run proves
each case study once per tree in a fresh process (``tamp prove FILE --json``, the call `tamp
bench` makes), the trees alternating file by file, because this machine's speed drifts by tens
of percent within minutes. Each tree keeps its own parser-table cache (``XDG_CACHE_HOME``):
the two grammars differ, and a shared cache would be rebuilt on every call. Prints the median
proof time (the JSON's ``time_s``, what `tamp bench` reports) and wall time per file and tree,
and their ratios; exit status 1 when a case study is not proved in this tree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASE_STUDIES = [
    "dp/randResp.prob",
    "dp/noisySum.prob",
    "dp/noisyMax.prob",
    "dp/expMech.prob",
    "dp/aboveT.prob",
    "dp/sparseVec.prob",
    "reliability/searchRef.prob",
]


def prove_once(tree: Path, rel: str, python: str, cache: str) -> tuple:
    """(proof time, wall time, verdicts) of one fresh `tamp prove` in ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), XDG_CACHE_HOME=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode caches
    t0 = time.perf_counter()
    out = subprocess.run(
        [python, "-m", "tamp", "prove", f"benchmarks/{rel}", "--json"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.perf_counter() - t0
    try:
        programs = json.loads(out.stdout)["programs"]
    except (ValueError, KeyError):
        return float("nan"), wall, "error: " + out.stderr.strip()[-200:]
    return sum(p["time_s"] for p in programs), wall, ",".join(p["verdict"] for p in programs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, type=Path, help="the baseline tree (a git worktree)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter (with tamp's dependencies)")
    args = ap.parse_args(argv)
    trees = {"base": args.base.resolve(), "this": HERE.parent}
    caches = {name: tempfile.mkdtemp(prefix=f"tamp-cache-{name}-") for name in trees}
    runs: dict = {}
    for _ in range(args.runs):
        for rel in CASE_STUDIES:
            for name, tree in trees.items():
                runs.setdefault((rel, name), []).append(prove_once(tree, rel, args.python, caches[name]))
    print(
        f"{'case study':12s} {'base proof':>10s} {'this proof':>10s} {'ratio':>6s}  {'base wall':>9s} {'this wall':>9s} {'ratio':>6s}"
    )
    ok = True
    for rel in CASE_STUDIES:
        med = {n: [statistics.median(r[i] for r in runs[(rel, n)]) for i in (0, 1)] for n in trees}
        verdicts = {r[2] for r in runs[(rel, "this")]}
        ok &= verdicts == {"proved"}
        b, t = med["base"], med["this"]
        print(
            f"{Path(rel).stem:12s} {b[0]:10.3f} {t[0]:10.3f} {t[0] / b[0]:6.2f}  {b[1]:9.2f} {t[1]:9.2f} {t[1] / b[1]:6.2f}"
            + ("" if verdicts == {"proved"} else f"  {sorted(verdicts)}")
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
