"""``tamp simulate FILE --input n=8 … --runs N --seed S``: Monte Carlo check of a claim.

Runs each program N times at the given inputs and prints the empirical failure rate with an
exact Clopper–Pearson interval, compared with the ``fails`` bound (or ``--bound``):
REFUTED (exit 3) when the whole interval lies above the bound, else CONSISTENT (exit 0).
Probability specifications are CONFIRMED (0) / REFUTED (3) / UNDECIDED (1).
"""

from __future__ import annotations

import time

from ..simulation import simulate
from ..simulation.errors import SimulationError
from .common import add_file_arguments, checked_bound, checked_inputs, emit_json, load_programs
from .jsonout import envelope
from .options import open_unit, runs, seed

NAME = "simulate"
HELP = "run a program many times at fixed inputs and test its claim statistically"


def add_arguments(p):
    add_file_arguments(p)
    p.add_argument(
        "--runs", metavar="N", type=runs, default=100000, help="number of runs (default 100000, at most 10^9)"
    )
    p.add_argument("--seed", metavar="S", type=seed, default=0, help="random seed (default 0)")
    p.add_argument("--bound", metavar="EXPR", help="failure bound over the inputs, replacing `fails`")
    p.add_argument(
        "--confidence", metavar="C", type=open_unit, default=0.99, help="confidence of the intervals (default 0.99)"
    )


def run(args) -> int:
    t0 = time.monotonic()
    src, progs = load_programs(args)
    if not progs:
        raise SimulationError("the file has no program to simulate", args.file)
    inputs = checked_inputs(src, progs, args.input)
    checked_bound(progs, args.bound)
    results = []
    for prog in progs:
        mine = {p.name: inputs[p.name] for p in prog.params if p.name in inputs}  # missing: named by simulate
        results.append(
            simulate(
                src,
                mine,
                runs=args.runs,
                seed=args.seed,
                bound=args.bound,
                confidence=args.confidence,
                program=prog.name,
            )
        )
    codes = [r.exit_code for r in results]
    code = 3 if 3 in codes else 1 if 1 in codes else 0
    if args.json:
        verdict = next(r.verdict for r in results if r.exit_code == code)  # the worst program's word
        programs = [dict(name=r.program, **r.to_json()) for r in results]
        emit_json(envelope(NAME, verdict, code, time.monotonic() - t0, file=args.file, programs=programs))
    else:
        print("\n".join(r.render_text() for r in results))
    return code
