"""Simulate every input set of a blind part's inputs.json (20,000 runs, seed 7) and compare with its expectation.

Run from the repository root, naming the part's folder:
    PYTHONPATH=$PWD python benchmarks/prover4/check_inputs.py benchmarks/prover4/test [FILTER]
    PYTHONPATH=$PWD python benchmarks/prover4/check_inputs.py benchmarks/prover4/dev/blind1 [FILTER]
It never proves anything: it only runs `tamp simulate` (Monte-Carlo) at fixed inputs.
"""

import json
import subprocess
import sys
from pathlib import Path


def arg(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(arg(v) for v in value) + "]"
    return str(value)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    here = Path(sys.argv[1]).resolve()
    table = json.loads((here / "inputs.json").read_text())
    wanted = sys.argv[2] if len(sys.argv) > 2 else ""
    bad = 0
    for rel, cases in table.items():
        if wanted not in rel:
            continue
        for case in cases:
            cmd = [sys.executable, "-m", "tamp", "simulate", str(here / rel), "--json"]
            cmd += ["--runs", "20000", "--seed", "7"]
            for name, value in case["inputs"].items():
                cmd += ["--input", f"{name}={arg(value)}"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            try:
                prog = json.loads(out.stdout)["programs"][0]
                got, rate = prog["verdict"], prog.get("rate")
                bound = prog.get("bound_value")
            except (ValueError, KeyError, IndexError):
                got, rate, bound = "error: " + out.stderr.strip()[:200], None, None
            flag = "ok " if got == case["expect"] else "BAD"
            bad += got != case["expect"]
            print(
                f"{flag} {rel} {case['inputs']} expect={case['expect']} got={got} rate={rate} bound={bound}", flush=True
            )
    print("mismatches:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
