"""Write tests/slow_tests.txt: the tests that take longer than a threshold in a recorded run.

    pytest -n 2 --record-durations /tmp/durations.tsv
    python scripts/slow_tests.py /tmp/durations.tsv --seconds 30

A test's time is the sum of its setup, call and teardown. Record on a quiet machine, or give
``--seconds`` scaled by the machine's load during the recording (the list says which was used).
Tests marked ``@pytest.mark.slow`` in their file need not be listed.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "slow_tests.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("durations", help="the file written by pytest --record-durations")
    ap.add_argument("--seconds", type=float, default=10.0, help="list tests taking longer than this")
    ap.add_argument("--note", default="", help="how the durations were recorded (machine, load)")
    args = ap.parse_args()
    per: dict[str, float] = collections.Counter()
    for line in Path(args.durations).read_text().splitlines():
        nodeid, _when, seconds, _outcome = line.split("\t")
        per[nodeid] += float(seconds)
    slow = sorted(n for n, s in per.items() if s > args.seconds)
    total = sum(per.values())
    kept = total - sum(per[n] for n in slow)
    header = [
        "# Tests run by .ci/run after the README's test command (marked slow by tests/conftest.py).",
        f"# Written by scripts/slow_tests.py --seconds {args.seconds:g}: every test over that in a recorded run.",
        f"# {args.note}" if args.note else "#",
        f"# Recorded: {len(per)} tests, {total:.0f} s of test time; {len(slow)} listed ({total - kept:.0f} s), "
        f"{kept:.0f} s left in the README's command.",
    ]
    OUT.write_text("\n".join(header + slow) + "\n")
    print(f"{len(slow)} slow tests listed in {OUT} ({total - kept:.0f} of {total:.0f} s)")


if __name__ == "__main__":
    main()
