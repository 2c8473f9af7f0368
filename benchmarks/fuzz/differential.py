"""Long differential fuzzing run: tamp prove / tamp prob against the exact enumerator on small
discrete programs (tests/fuzz/differential.py; the CI budget is tests/fuzz/test_fuzz_differential.py).

    PYTHONPATH=. python benchmarks/fuzz/differential.py [--seconds 600] [--seed 0] [--timeout 3] [--out FILE]

Draws programs from ``--seed`` until ``--seconds`` have passed; prints each finding (kind,
claim, program, exact value against tamp's answer) when found, then a summary (programs,
verdicts, findings by kind). Exits 1 if there was a finding.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
sys.path.insert(0, str(ROOT))

import differential as D  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=0, help="the run is reproducible from its seed")
    ap.add_argument("--timeout", type=float, default=3.0, help="tamp prove's timeout per claim")
    ap.add_argument("--out", help="also write the findings to this file")
    args = ap.parse_args(argv)
    deadline = time.monotonic() + args.seconds
    stats: collections.Counter = collections.Counter()
    rng = random.Random(args.seed)
    findings = []
    t0 = time.monotonic()
    while time.monotonic() < deadline:
        body, ensures = D.program_body(rng)
        found = D.check(body, ensures, rng, args.timeout, stats)
        stats["programs"] += 1
        for f in found:
            stats["finding: " + f.kind] += 1
            findings.append(f)
            print(f.render(), flush=True)
    print(f"\n== differential fuzz summary ({(time.monotonic() - t0) / 60:.1f} min, seed {args.seed}) ==")
    for k, v in sorted(stats.items()):
        print(f"  {k}: {v}")
    print(f"  findings: {len(findings)}")
    if args.out:
        Path(args.out).write_text("\n".join(f.render() for f in findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
