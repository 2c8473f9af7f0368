#!/usr/bin/env python3
"""Run the property specifications ``benchmarks/wmi/prop_*.prob`` with the probability engine.

    python benchmarks/wmi/properties.py [--timeout S]

Prints (and writes to ``properties.md`` next to this file) one row per property:
verdict, every P-term's exact value or certified interval, paths, cells, solver
calls and time. Exit status 0 when every property is proved.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

DESCRIPTIONS = {
    "prop_parity": "demographic parity (linear model, polynomial prior)",
    "prop_noise": "robustness to input noise (decision tree)",
    "prop_equivalence": "equivalence of two predictors (tree vs linear, Gaussian inputs)",
    "prop_local_robustness": "local robustness around x0 (linear classifier)",
    "prop_monotone": "monotonicity via two sampled inputs (ReLU scorer)",
    "prop_relu": "3-input ReLU network, 2 layers of 8 units, uniform prior",
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args(argv)
    from lang.parser import parse_file
    from tamp.probability import decide_program
    from tamp.probability.result import show_interval

    rows = [
        "# Property specifications: results",
        "",
        f"`python benchmarks/wmi/properties.py --timeout {a.timeout:g}`",
        "",
        "| property | what | verdict | P-terms | paths | cells | solver calls | time (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ok = True
    for f in sorted(HERE.glob("prop_*.prob")):
        src = parse_file(str(f))
        try:
            from lang.typecheck import check_file

            check_file(src)
        except ImportError:
            pass
        for prog in src.programs:
            t0 = time.monotonic()
            r = decide_program(prog, timeout=a.timeout, path=str(f), source=src.text)
            terms = "; ".join(f"{t.text} = {show_interval(t.interval)}" for t in r.terms)
            rows.append(
                f"| {f.stem} | {DESCRIPTIONS.get(f.stem, '')} | {r.verdict} | {terms.replace('|', chr(92) + '|')} | "
                f"{r.paths} | {r.cells} | {r.solver_calls} | {time.monotonic() - t0:.2f} |"
            )
            ok &= r.verdict == "proved"
    text = "\n".join(rows) + "\n"
    print(text)
    (HERE / "properties.md").write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
