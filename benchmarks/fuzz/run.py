"""Long fuzzing run: well-typed programs from the grammar and odd option values through the CLI.

    PYTHONPATH=. python benchmarks/fuzz/run.py [--minutes 15] [--seed 0] [--runs 2000] [--out FILE]

The same properties as tests/fuzz (exit 0/1/2/3, no traceback or internal error, no hang, and
no claim proved by ``prove`` refuted by ``simulate``), with a larger budget. Findings are not
shrunk: each is printed with its command line and program. Prints a summary (programs tried,
prove verdicts, simulate runs, findings by kind) and exits 1 if there was a finding.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
sys.path.insert(0, str(ROOT / "tests"))  # the shared test helpers (support.cli)
sys.path.insert(0, str(ROOT))

from grammar import option_argv, programs  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from oracle import check_program, run  # noqa: E402


class OutOfTime(BaseException):
    """Ends the hypothesis loop when the budget is spent (not an Exception: not caught)."""


def _short(value: str) -> str:
    """A --timeout value, capped at 10 s when it is a number (a hang is then a finding)."""
    try:
        return "10" if float(value) > 10 else value
    except ValueError:
        return value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=15)
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (a run is reproducible)")
    ap.add_argument("--runs", type=int, default=2000, help="simulate runs per input")
    ap.add_argument("--prove-timeout", type=float, default=3)
    ap.add_argument("--out", help="also write the findings to this file")
    args = ap.parse_args(argv)
    deadline = time.monotonic() + 60 * args.minutes
    stats = collections.Counter()
    findings, every = [], []
    seen = set()

    def record(fs):
        for f in fs:
            key = (f.kind, f.argv[0], f.detail.strip().splitlines()[-1][:200] if f.detail.strip() else "")
            stats["finding: " + f.kind] += 1
            every.append(f)
            if key not in seen:
                seen.add(key)
                findings.append(f)
                print(f.render(), flush=True)

    cfg = settings(
        max_examples=10**7,
        deadline=None,
        database=None,
        derandomize=False,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )

    @cfg
    @given(text=programs(depth=2), which=st.integers(0, 4), data=st.data())
    def one(text, which, data):
        if time.monotonic() > deadline:
            raise OutOfTime
        if which == 0:  # one in five: odd option values on this program
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "fuzz.prob")
                Path(path).write_text(text)
                argv = data.draw(option_argv(path))
                argv = [_short(a) if i and argv[i - 1] == "--timeout" else a for i, a in enumerate(argv)]
                out = run(argv, text, limit=120)
                stats[f"options {argv[0]} exit {out.code}"] += 1
                record(out.findings)
            return
        fs, code, sims = check_program(text, args.prove_timeout, args.runs, limit=120)
        stats["programs"] += 1
        stats[f"prove exit {code}"] += 1
        for c in sims:
            stats[f"simulate (proved program) exit {c}"] += 1
        record(fs)

    t0 = time.monotonic()
    try:
        seed(args.seed)(one)()
    except OutOfTime:
        pass
    print(f"\n== fuzz summary ({(time.monotonic() - t0) / 60:.1f} min) ==")
    for k, v in sorted(stats.items()):
        print(f"  {k}: {v}")
    print(f"  distinct findings: {len(findings)}")
    if args.out:  # every finding, not only the first of each kind
        Path(args.out).write_text("\n".join(f.render() for f in every))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
