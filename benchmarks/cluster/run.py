#!/usr/bin/env python3
"""One process vs a 2-worker local Dask cluster, through tamp.executor.

    python benchmarks/cluster/run.py [--workers N] [--timeout S] [--mass-gap G] [--out results.md]

Two workloads: the 39 FairSquare problems of benchmarks/fairness (each problem one job), and the
causal box tree of benchmarks/causal/net2x5_biased.prob (each box one job, mass refinement to
``--mass-gap``). Each runs once in this process (``workers=1``: plain calls, no Dask) and once on
a fresh LocalCluster of N single-threaded worker processes; the wall time of the cluster run
includes starting the cluster. The script checks that both runs give the same verdicts and the
same certified numbers (the exact biased-mass bounds; the FairSquare ratio intervals), and
writes a Markdown table (default: results.md next to this file). The machine is shared: the load
average before each run is recorded, and the times are only comparable within one run of this
script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "fairness"))

from tamp.commands.bench import machine_note  # noqa: E402
from tamp.executor import Executor  # noqa: E402


def fairsquare(ex: Executor, timeout: float) -> dict:
    import run as fair  # benchmarks/fairness/run.py

    names = sorted(
        (f"{p}_{q}" for p in fair.POPS for q in fair.PROGS), key=lambda n: ("NN3" not in n, "BN2" not in n, n)
    )  # long ones first
    res = dict(ex.map(fair.run_one, [(n, (n, timeout)) for n in names]))
    return {n: (res[n]["verdict"], tuple(res[n]["ratio"] or ())) for n in sorted(res)}


def causal(ex: Executor, gap: float) -> dict:
    from lang.parser import parse_file
    from tamp.causal import certify_program

    src = parse_file(str(ROOT / "benchmarks" / "causal" / "net2x5_biased.prob"))
    r = certify_program(
        src.programs[0], {"timeout": None, "mass_gap": gap}, path=src.path, source=src.text, executor=ex
    )
    bm = r.details["biased_mass"]
    return {"net2x5_biased": (r.verdict, bm["lower_exact"], bm["upper_exact"], r.details["boxes"])}


def measure(label, work, workers):
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    t0 = time.monotonic()
    with Executor(workers) as ex:
        out = work(ex)
    wall = time.monotonic() - t0
    print(f"{label}: {workers} worker(s): {wall:.1f} s (load before {load})", flush=True)
    return out, wall, load


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per FairSquare problem")
    ap.add_argument("--mass-gap", type=float, default=0.05, help="causal mass refinement target")
    ap.add_argument("--out", default=str(HERE / "results.md"))
    a = ap.parse_args(argv)
    jobs = [
        ("FairSquare suite (39 problems)", lambda ex: fairsquare(ex, a.timeout)),
        (f"causal net2x5_biased (mass gap {a.mass_gap:g})", lambda ex: causal(ex, a.mass_gap)),
    ]
    rows, same = [], True
    for label, work in jobs:
        one, t1, l1 = measure(label, work, 1)
        many, tn, ln = measure(label, work, a.workers)
        agree = one == many
        same &= agree
        rows.append(f"| {label} | {t1:.1f} | {l1} | {tn:.1f} | {ln} | {t1 / tn:.2f}x | {'yes' if agree else 'NO'} |")
    text = "\n".join(
        [
            "# One process vs a local Dask cluster",
            "",
            f"`python benchmarks/cluster/run.py --workers {a.workers}` on {machine_note()}. Wall times include "
            "starting the cluster (a few seconds). The machine is shared with other work: the load average "
            "(1/5/15 min) before each run is given; on 2 cores under a load of ~8 a 2-worker cluster cannot "
            "approach 2x.",
            "",
            f"| workload | 1 process (s) | load | {a.workers} workers (s) | load | speed-up | same verdicts and numbers |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    print(text)
    Path(a.out).write_text(text)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
