"""``tamp fairness FILE``: causal-fairness certification with the certifier's own options
(population model, cores, box sizes). ``tamp prove`` runs the same analysis with defaults.

``tamp fairness FILE --population POP --group sex`` measures group fairness instead: the
certified interval of ``P(out = 1 | sex = 1) / P(out = 1 | sex = 0)`` when the inputs are drawn
from the population (:mod:`tamp.models.group`)."""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

from lang.errors import TampError
from tamp.executor import ExecutorError
from tamp.results import PROVED, UNKNOWN, VIOLATED, FileResult, exit_code_of

from .common import emit_json, load_programs
from .jsonout import envelope
from .options import (
    add_executor_arguments,
    input_file,
    make_executor,
    nonneg_float,
    nonneg_int,
    positive_float,
    seconds,
)

NAME = "fairness"
HELP = "certify `ensures independent(out, sex)` (causal fairness) with a population model and tuning options"


def add_arguments(p):
    p.add_argument("file", help="a .prob file")
    p.add_argument("--program", metavar="NAME", help="only this program of the file")
    p.add_argument(
        "--population",
        metavar="FILE",
        type=input_file,
        help="a .prob file whose program samples the inputs (default: uniform over the requires box)",
    )
    p.add_argument("--timeout", metavar="S", type=seconds, default=600.0, help="time limit per program (s)")
    add_executor_arguments(p, default_workers=0, kind=nonneg_int)
    p.add_argument(
        "--min-mass",
        metavar="L",
        type=positive_float,
        default=2.0**-16,
        help="boxes with a smaller share of the region are not split (set aside as unknown/mixed)",
    )
    p.add_argument(
        "--max-unstable",
        metavar="U",
        type=nonneg_int,
        default=8,
        help="at most U undecided ReLUs/branches in a box before it is given to the SMT solver",
    )
    p.add_argument(
        "--mass-gap",
        metavar="G",
        type=nonneg_float,
        default=0.001,
        help="refine the biased-mass bounds until upper - lower <= G (or the time limit)",
    )
    p.add_argument(
        "--phase-lps",
        metavar="N",
        type=nonneg_int,
        default=32,
        help="LP calls per box when branching on ReLU phases (0: no phase branching)",
    )
    p.add_argument(
        "--group",
        metavar="NAME",
        help="group fairness under --population: P(out = 1 | NAME = 1) / P(out = 1 | NAME = 0) "
        "as a certified interval (NAME a 0/1 int input)",
    )
    p.add_argument(
        "--positive",
        metavar="K",
        type=int,
        default=1,
        help="with --group: the class counted as the favourable outcome (default 1)",
    )
    p.add_argument(
        "--min-ratio",
        metavar="R",
        type=_ratio,
        default=Fraction(4, 5),
        help="with --group: the claim R <= ratio <= 1/R (default 0.8, the four-fifths rule)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _ratio(text: str) -> Fraction:
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.models.exact import read_fraction

    try:
        r = read_fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0 < r <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return r


def _group(args) -> int:
    """``--group``: group fairness of every selected program under the population."""
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from lang.loader import load
    from tamp.models.group import group_fairness

    t0 = time.monotonic()
    if args.population is None:
        raise TampError("--group measures group fairness under a population: give --population POP.prob", "--group")
    src, progs = load_programs(args)
    pop_src = load(args.population)
    if not pop_src.programs:
        raise TampError("the population file contains no program", args.population)
    pop = pop_src.programs[0]
    results = [
        group_fairness(
            p,
            pop,
            args.group,
            positive=args.positive,
            min_ratio=args.min_ratio,
            timeout=args.timeout,
            path=src.path,
            pop_path=args.population,
        )
        for p in progs
    ]
    verdicts = {r.verdict for r in results}
    verdict = next(v for v in (VIOLATED, UNKNOWN, PROVED) if v in verdicts or v == PROVED)
    code = exit_code_of(verdict)
    if args.json:
        body = {"file": src.path, "population": args.population, "programs": [r.to_json() for r in results]}
        emit_json(envelope(NAME, verdict, code, time.monotonic() - t0, body))
    else:
        for r in results:
            print(r.render_text())
            print(f"  under the population of {args.population}")
        print(f"{src.path}: {verdict}")
    return code


def run(args) -> int:
    if args.group is not None:
        return _group(args)
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.causal import certify_program

    t0 = time.monotonic()
    src, progs = load_programs(args)
    opts = {
        "timeout": args.timeout,
        "jobs": args.workers,
        "scheduler": args.scheduler,
        "min_mass": args.min_mass,
        "max_unstable": args.max_unstable,
        "population": args.population,
        "mass_gap": args.mass_gap,
        "phase_lps": args.phase_lps,
    }
    try:
        with make_executor(args) as ex:
            res = FileResult(
                src.path, [certify_program(p, opts, path=src.path, source=src.text, executor=ex) for p in progs]
            )
    except ExecutorError as exc:
        print(f"tamp {NAME}: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        emit_json(envelope(NAME, res.verdict, int(res.exit_code), time.monotonic() - t0, res.to_json()))
    else:
        print(res.render_text())
        print(f"{res.file}: {res.verdict}")
    return int(res.exit_code)
