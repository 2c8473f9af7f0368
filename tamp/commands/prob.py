"""``tamp prob FILE``: compute every ``P(…)`` term and decide the probability specifications."""

from __future__ import annotations

import time

from lang import ast as A
from lang.errors import TampError

from ..results import FileResult
from .common import add_file_arguments, checked_inputs, emit_json, load_programs
from .jsonout import envelope
from .options import add_executor_arguments, make_executor, seconds

NAME = "prob"
HELP = "compute P(...) terms (exactly or as certified intervals) and decide probability specifications"


def add_arguments(p):
    add_file_arguments(p)
    p.add_argument(
        "--timeout", metavar="S", type=seconds, default=60.0, help="time limit per program, in seconds (default 60)"
    )
    add_executor_arguments(p, default_workers=1)


def run(args) -> int:
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.probability import decide_program

    t0 = time.monotonic()
    src, progs = load_programs(args)
    inputs = checked_inputs(src, progs, args.input)
    chosen = [p for p in progs if any(A.contains(e, (A.Prob, A.Fairness)) for e in p.ensures)]
    if not chosen:
        raise TampError(
            "no probability specification (an ensures clause with P(...) or fairness) in "
            + ("program " + args.program if args.program else "this file"),
            args.file,
        )
    with make_executor(args) as ex:  # the exact cell integrals are its jobs
        jobs = ex if ex.parallel else None
        results = [
            decide_program(
                p, inputs=inputs or None, timeout=args.timeout, path=src.path, source=src.text, executor=jobs
            )
            for p in chosen
        ]
    fr = FileResult(src.path, results)
    if args.json:
        emit_json(envelope(NAME, fr.verdict, fr.exit_code(), time.monotonic() - t0, fr.to_json()))
    else:
        for r in results:
            print(r.render_text())
        print(f"{fr.file}: {fr.verdict}")
    return fr.exit_code()
