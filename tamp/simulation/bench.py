"""Timing and verdicts of the simulator on every benchmark input set.

    python -m tamp.simulation.bench [--runs N] [--seed S] [--benchmarks DIR]

Prints one line per (file, input set): verdict, expected verdict, failure rate and interval,
bound, and wall time; then the time of 100,000 runs of a 10-iteration loop (noisySum, n = 10).
Exit status 1 if some verdict differs from ``benchmarks/inputs.json``'s expectation.
"""

from __future__ import annotations

import argparse
import sys
import time

from . import simulate
from .bench_inputs import INPUTS_FILE, NoBenchmarks, benchmarks_dir, load_inputs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100000)
    ap.add_argument("--concrete-runs", type=int, default=2000, help="runs for searchRefConcrete")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--benchmarks", metavar="DIR", help="the benchmarks folder (default: found from the current directory)"
    )
    args = ap.parse_args(argv)
    try:
        bench_dir = benchmarks_dir(args.benchmarks)
    except NoBenchmarks as exc:
        ap.error(str(exc))
    bad = 0
    print(f"{'file':40s} {'verdict':10s} {'expect':10s} {'rate':>9s} {'99% interval':>22s} {'bound':>9s} {'time':>7s}")
    for b in load_inputs(bench_dir / INPUTS_FILE):
        runs = args.concrete_runs if "Concrete" in b.file.name else args.runs
        t0 = time.perf_counter()
        r = simulate(b.file, b.inputs, runs=runs, seed=args.seed)
        dt = time.perf_counter() - t0
        bad += r.verdict != b.expect
        name = str(b.file.relative_to(bench_dir))
        bv = "-" if r.bound_value is None else f"{float(r.bound_value):.5f}"
        print(
            f"{name:40s} {r.verdict:10s} {b.expect:10s} {r.rate:9.5f} "
            f"[{r.ci[0]:9.5f}, {r.ci[1]:9.5f}] {bv:>9s} {dt:6.2f}s"
            + ("" if r.verdict == b.expect else "   <-- MISMATCH")
        )
    inputs = {"q": list(range(10)), "n": 10, "eps": 1, "p": 0.1}
    for prog in ("noisySum", "noisyMax", "aboveT"):
        extra = {"T": 100} if prog == "aboveT" else {}
        t0, c0 = time.perf_counter(), time.process_time()
        simulate(bench_dir / "dp" / f"{prog}.prob", {**inputs, **extra}, runs=100000, seed=args.seed)
        print(
            f"100000 runs of {prog} (10 loop iterations): {time.perf_counter() - t0:.2f} s wall, "
            f"{time.process_time() - c0:.2f} s CPU"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
