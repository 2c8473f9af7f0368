"""Simulate every input set of benchmarks/heldout/inputs.json and compare with the recorded
verdict (``consistent`` / ``refuted``); exit status 1 on any disagreement.

benchmarks/corpus/run.py proves held-out files (``run.py --no-simulate benchmarks/heldout``) but
simulates against the corpus's own inputs.json; this is the held-out counterpart.

    PYTHONPATH=$PWD /work/venv/bin/python benchmarks/heldout/check_inputs.py [--runs N] [NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="only files whose path contains one of these")
    ap.add_argument("--runs", type=int, default=20000, help="simulation runs per input set (default 20000)")
    args = ap.parse_args(argv)
    from tamp.simulation import simulate
    from tamp.simulation.bench_inputs import load_inputs

    bad = 0
    for b in load_inputs(HERE / "inputs.json"):
        rel = str(b.file.relative_to(HERE))
        if args.names and not any(n in rel for n in args.names):
            continue
        try:
            verdict = simulate(b.file, b.inputs, runs=args.runs, seed=7).verdict
        except Exception as exc:  # a simulator error is a disagreement, reported with its text
            verdict = "error: " + str(exc).splitlines()[0]
        ok = verdict == b.expect
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {rel} {b.inputs}: {verdict} (recorded {b.expect})", flush=True)
    print(f"{bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))
    sys.exit(main())
