"""``tamp prob FILE``: compute every ``P(…)`` term and decide the probability specifications."""

from __future__ import annotations

import time
from pathlib import Path

from .common import add_file_arguments, emit_json
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
    # deferred on purpose: the engines load when the command runs, not at CLI start-up
    from tamp.api import prob

    t0 = time.monotonic()
    with make_executor(args) as ex:  # the exact cell integrals are its jobs
        fr = prob(
            Path(args.file),
            inputs=args.input or None,
            timeout=args.timeout,
            program=args.program,
            executor=ex if ex.parallel else None,
        )
    if args.json:
        fr.time_s = time.monotonic() - t0
        emit_json(fr.to_json())  # the API's object itself
    else:
        for r in fr.programs:
            print(r.render_text())
        print(f"{fr.file}: {fr.verdict}")
    return fr.exit_code
