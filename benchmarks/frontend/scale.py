"""Front-end scaling: time `tamp check` on generated programs of growing size.

    PYTHONPATH=. python benchmarks/frontend/scale.py [--sizes 20000,200000] [--terms 1001,100000]

Two families: ``lines`` (N one-line assignments ``xK := xJ + K;`` in one program, 200,000 lines
is about 5 MB) and ``sum`` (one assignment whose right-hand side is a flat sum of N terms
``w0 * x[0] + w1 * x[1] + …``, a linear model with N features). Each row is the wall-clock time
and CPU time of one `tamp check` process (start-up included), so the numbers can be compared
with what a user sees; on a loaded machine the CPU time is the steadier one. Not a test: the
numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lines_program(n: int) -> str:
    body = ["  x0 := n;"] + [f"  x{k} := x{k - 1} + {k};" for k in range(1, n)]
    return "program big(n: int)\n  requires n >= 0\n  ensures x0 >= 0\n{\n" + "\n".join(body) + "\n}\n"


def sum_program(n: int) -> str:
    terms = " + ".join(f"{(k % 7) + 1} * x[{k}]" for k in range(n))
    return f"program model(x: real[])\n  ensures y == y\n{{\n  y := {terms};\n}}\n"


def run_check(text: str, timeout: float) -> tuple:
    with tempfile.NamedTemporaryFile("w", suffix=".prob", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                [sys.executable, "-m", "tamp", "check", path], env=env, capture_output=True, text=True, timeout=timeout
            )
            rc = p.returncode
            out = (p.stdout + p.stderr).strip().splitlines()[-1:] or [""]
        except subprocess.TimeoutExpired:
            rc, out = None, [f"did not finish in {timeout:.0f} s"]  # (its CPU time is not counted)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return time.monotonic() - t0, cpu, rc, out[0][:100]
    finally:
        os.unlink(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,20000,200000", help="line counts (family `lines`)")
    ap.add_argument("--terms", default="1001,10000,100000", help="term counts (family `sum`)")
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'family':8} {'size':>8} {'bytes':>10} {'wall s':>8} {'cpu s':>8}  exit  last line")
    for family, make, sizes in (("lines", lines_program, a.sizes), ("sum", sum_program, a.terms)):
        for n in (int(x) for x in sizes.split(",") if x):
            text = make(n)
            dt, cpu, rc, last = run_check(text, a.timeout)
            print(f"{family:8} {n:>8} {len(text.encode()):>10} {dt:>8.2f} {cpu:>8.2f}  {rc!s:>4}  {last}", flush=True)


if __name__ == "__main__":
    main()
