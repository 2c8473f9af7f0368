"""``tamp check-proof CERT FILE``: re-check a proof certificate independently of the prover."""

from __future__ import annotations

from pathlib import Path

from ..results import exit_code_of
from .common import emit_json
from .jsonout import envelope
from .options import add_executor_arguments, add_input_argument, make_executor, positive_int, seconds

NAME = "check-proof"
HELP = "re-check a proof certificate (written by `tamp prove --certificate`) against its source file"


def add_arguments(p):
    p.add_argument("certificate", help="the certificate (.json) written by `tamp prove --certificate`")
    p.add_argument("file", help="the .prob file the proof is about")
    p.add_argument("--bound", metavar="EXPR", help="the claim's bound, if the proof was made with --bound")
    add_input_argument(p)
    p.add_argument(
        "--infer",
        action="store_true",
        help="the proof was made with `tamp prove --infer`: accept the certificate's (inferred) failure bound",
    )
    p.add_argument("--timeout", metavar="S", type=seconds, help="time limit for the whole check, in seconds")
    p.add_argument(
        "--solver-timeout",
        metavar="MS",
        type=positive_int,
        default=10000,
        help="time limit per obligation, in milliseconds (default 10000)",
    )
    p.add_argument("--verbose", action="store_true", help="list every obligation with its time")
    add_executor_arguments(p, default_workers=1)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args) -> int:
    # deferred on purpose: the engines load when the command runs, not at CLI start-up
    from tamp.certificate.check_file import check_proof

    with make_executor(args) as ex:  # the programs' proofs are its jobs
        report = check_proof(
            args.certificate,
            Path(args.file),
            bound=args.bound,
            inputs=args.input or None,
            infer=args.infer,
            solver_timeout_ms=args.solver_timeout,
            timeout=args.timeout,
            executor=ex if ex.parallel else None,
        )
    if args.json:
        emit_json(
            {
                **envelope(NAME, report.verdict, exit_code_of(report.verdict), report.seconds),
                "file": args.file,
                "certificate": args.certificate,
                "ok": report.ok,
                "summary": report.summary(),
                "obligations": report.obligations,
                "programs": [
                    {
                        "name": p.name,
                        "verdict": p.verdict,
                        "ok": p.ok,
                        "obligations": p.obligations,
                        "reason": p.reason,
                        "notes": p.notes,
                        "time_s": round(p.seconds, 4),
                    }
                    for p in report.programs
                ],
            }
        )
    else:
        for p in report.programs:
            if args.verbose:
                for line in p.log:
                    print(f"  {p.name}: {line}")
            if p.ok:
                print(f"{p.name}: {p.verdict} ({p.obligations} obligations, {p.seconds:.2f} s)")
                for note in p.notes:
                    print(f"  note: {note}")
        print(report.summary())
    return exit_code_of(report.verdict)
