#!/usr/bin/env python3
"""One process vs a local Dask cluster, through tamp.executor; records the tasks' durations.

    python benchmarks/cluster/run.py [--workers 2] [--runs 3] [--timeout S] [--out DIR]

Two workloads: the 39 FairSquare problems of benchmarks/fairness (each problem one job), and the
causal networks of benchmarks/causal (each box slice one job; the mass refinement goes to a fixed
gap and the per-box time budgets are off, so every run does the same work whatever the load).
Each runs ``--runs`` times in this process (``workers=1``: plain calls, no Dask) and as often on a
fresh LocalCluster of N single-threaded worker processes, the two interleaved so that they see
the same load; the wall time of a cluster run includes starting the cluster. The script checks
that every run gives the same verdicts and certified numbers (the exact biased-mass bounds; the
FairSquare ratio intervals), and writes

* ``measured.md``: median wall times, with the load average (1 min) before each run;
* ``timings.json``: per task of the first in-process run, its batch and duration, and the
  batches' windows, for ``simulate.py`` (the model of a 64-worker cluster).
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
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "fairness"))

from tamp.commands.bench import machine_note  # noqa: E402
from tamp.executor import Executor  # noqa: E402

# (network, mass-gap target): each settles in tens of seconds in one process on this machine
NETWORKS = [
    ("net2x5_biased", 0.1),
    ("net3x8_inert", None),
    ("net4x10_inert", None),
    ("net4x10_fair", None),
]


def fairsquare(ex: Executor, timeout: float) -> dict:
    import run as fair  # benchmarks/fairness/run.py

    names = sorted(
        (f"{p}_{q}" for p in fair.POPS for q in fair.PROGS), key=lambda n: ("NN3" not in n, "BN2" not in n, n)
    )  # long ones first
    res = dict(ex.map(fair.run_one, [(n, (n, timeout)) for n in names]))
    return {n: (res[n]["verdict"], tuple(res[n]["ratio"] or ())) for n in sorted(res)}


def causal(ex: Executor) -> dict:
    from lang.parser import parse_file
    from tamp.causal import certify_program

    out = {}
    for name, gap in NETWORKS:
        src = parse_file(str(ROOT / "benchmarks" / "causal" / f"{name}.prob"))
        opts = {"timeout": None, "slice_s": 1000.0, "smt_timeout": 1000.0}
        if gap is not None:
            opts["mass_gap"] = gap
        r = certify_program(src.programs[0], opts, path=src.path, source=src.text, executor=ex)
        bm = r.details["biased_mass"]
        out[name] = (r.verdict, bm["lower_exact"], bm["upper_exact"], r.details["boxes"])
    return out


def measure(work, workers):
    load = os.getloadavg()[0]
    t0, c0 = time.monotonic(), time.process_time()
    with Executor(workers) as ex:
        out = work(ex)
    wall = time.monotonic() - t0
    ex.main_cpu = time.process_time() - c0  # this process's processor time (the tasks too, when in it)
    return out, wall, load, ex


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each (the median is reported)")
    ap.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds per FairSquare problem (default 600: every problem is decided, so every run does the same work)",
    )
    ap.add_argument("--only", choices=["fairsquare", "causal"], help="one workload only")
    ap.add_argument("--out", default=str(HERE))
    a = ap.parse_args(argv)
    jobs = {
        "fairsquare": ("FairSquare suite (39 problems)", lambda ex: fairsquare(ex, a.timeout)),
        "causal": (f"causal networks ({len(NETWORKS)})", causal),
    }
    rows, same, timings = [], True, {}
    for tag, (label, work) in jobs.items():
        if a.only and tag != a.only:
            continue
        one, many, first = [], [], None
        for i in range(a.runs):
            for workers, into in ((1, one), (a.workers, many)):
                out, wall, load, ex = measure(work, workers)
                print(f"{label}: run {i + 1}, {workers} worker(s): {wall:.1f} s (load {load:.1f})", flush=True)
                into.append((wall, load, sum(t.cpu for t in ex.timings)))
                if first is None:
                    first = out
                    t_end = ex.batches[-1][1] if ex.batches else 0.0
                    timings[tag] = {
                        "label": label,
                        "wall_s": wall,
                        "tasks": [(t.batch, f"{t.name}({t.key})", t.seconds, t.cpu) for t in ex.timings],
                        "main_cpu_s": ex.main_cpu,
                        "batches": [(b0 - ex._t0, b1 - ex._t0) for b0, b1 in ex.batches],
                        "after_s": wall - (t_end - ex._t0) if ex.batches else wall,
                    }
                elif out != first:
                    same = False
                    diff = {
                        k: (out.get(k), first.get(k)) for k in first.keys() | out.keys() if out.get(k) != first.get(k)
                    }
                    print(f"  DIFFERENT results (this run, first run): {diff}", flush=True)
        t1 = statistics.median(w for w, _l, _c in one)
        tn = statistics.median(w for w, _l, _c in many)
        c1 = statistics.median(c for _w, _l, c in one)
        cn = statistics.median(c for _w, _l, c in many)
        loads = lambda runs: ", ".join(f"{ld:.1f}" for _w, ld, _c in runs)  # noqa: E731
        rows.append(
            f"| {label} | {t1:.1f} | {c1:.1f} | {loads(one)} | {tn:.1f} | {cn:.1f} | {loads(many)} | {t1 / tn:.2f}x | "
            f"{'yes' if same else 'NO'} |"
        )
    text = "\n".join(
        [
            "# One process vs a local Dask cluster (measured)",
            "",
            f"`python benchmarks/cluster/run.py --workers {a.workers} --runs {a.runs}` on {machine_note()}. "
            f"Median wall time of {a.runs} runs each, the in-process and cluster runs interleaved; a cluster "
            "run's time includes starting the cluster. The machine is shared: the load average (1 min) "
            "before each run is listed. Tasks' CPU: the processor time of the tasks, summed (measured where they ran).",
            "",
            f"| workload | 1 process: wall (s) | tasks' CPU (s) | load | {a.workers} workers: wall (s) | tasks' CPU (s) | load | speed-up | same verdicts and numbers in every run |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    print(text)
    suffix = f"_{a.only}" if a.only else ""
    Path(a.out).mkdir(parents=True, exist_ok=True)
    Path(a.out, f"measured{suffix}.md").write_text(text)
    Path(a.out, f"timings{suffix}.json").write_text(json.dumps(timings, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
