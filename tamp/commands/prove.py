"""``tamp prove FILE``: prove every program's specification (failure bound, probability, causal)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from lang.errors import TampError
from lang.inputs import show

from ..progress import for_terminal
from ..report.text import count, program_lines, summary_line
from .common import emit_json
from .console import Printer
from .options import add_input_argument, output_dir, output_file, seconds

NAME = "prove"
HELP = "prove that each program violates its postcondition with probability at most its bound"


def add_arguments(p):
    p.add_argument("file", nargs="+", metavar="FILE", help="one or more .prob files")
    p.add_argument("--program", metavar="NAME", help="only this program of the file")
    add_input_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="-v: also the synthesised axioms, an automata summary and statistics; -vv: the full failure automata",
    )
    p.add_argument("--bound", metavar="EXPR", help="failure bound over the inputs, replacing `fails` (e.g. p*n)")
    p.add_argument(
        "--infer",
        action="store_true",
        help="infer the smallest failure bound tamp can prove "
        "(as `fails ?`), printed as an expression over the inputs (and its value under --input)",
    )
    p.add_argument("--timeout", metavar="S", type=seconds, help="time limit for the whole run, in seconds")
    p.add_argument(
        "--dot", metavar="DIR", type=output_dir, help="write the failure automata as graphviz files into DIR"
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing: the exit status is the verdict (0 proved, 1 unknown, 3 violated)",
    )
    p.add_argument(
        "--certificate",
        metavar="OUT",
        type=output_file,
        help="write a proof certificate of every proved failure "
        "bound and every decided probability specification to OUT (.json); re-check it with "
        "`tamp check-proof OUT FILE`",
    )
    p.add_argument(
        "--report",
        metavar="OUT.html",
        type=output_file,
        help="write a self-contained HTML report: source, verdicts, "
        "axioms, failure automata, statistics (open it in a browser)",
    )


def _write_report(args, result) -> None:
    """``--report OUT.html``: the run as one self-contained HTML page (see tamp.report)."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.report import write_report

    source = result.source
    command = " ".join(
        ["tamp prove", args.file]
        + [f"--program {args.program}"] * bool(args.program)
        + [f"--bound '{args.bound}'"] * bool(args.bound)
        + [f"--input {k}={show(v)}" for k, v in args.input.items()]
    )
    try:
        write_report(args.report, result, source, command=command)
    except OSError as exc:
        raise TampError(f"cannot write the report: {exc.strerror or exc}", args.report) from None
    if not args.json and not args.quiet:
        print(f"report: written to {args.report}")


def write_dot(results, out_dir: str) -> list:
    """Write each failure-bound result's automata as ``.dot`` (and ``.svg`` when graphviz's
    ``dot`` binary is installed). Returns the files written."""
    os.makedirs(out_dir, exist_ok=True)  # its parent exists (checked by options.output_dir)
    written = []
    for r in results:
        for part in r.parts:
            for stem, text in part.to_dot().items():
                path = os.path.join(out_dir, f"{stem}.dot")
                with open(path, "w") as fh:
                    fh.write(text)
                written.append(path)
                if shutil.which("dot"):
                    subprocess.run(
                        ["dot", "-Tsvg", path, "-o", path[:-4] + ".svg"],
                        check=False,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    written.append(path[:-4] + ".svg")
    return written


def _write_certificate(args, result, inputs) -> None:
    """``--certificate OUT``: the proofs of this run as a certificate (see tamp.certificate)."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.certificate import file_certificate, write_certificate

    with open(args.file, "rb") as fh:
        source = fh.read()
    cert = file_certificate(result, source, args.bound, inputs)
    try:
        write_certificate(args.certificate, cert)
    except OSError as exc:
        raise TampError(f"cannot write the certificate {args.certificate}: {exc.strerror or exc}") from None
    if not args.json and not args.quiet:
        n = len(cert["programs"]) + len(cert.get("probability", [])) + len(cert.get("concentration", []))
        print(f"certificate: {n} proof(s) written to {args.certificate}")
        for miss in cert.get("not_certified", []):
            print(f"certificate: note: {miss['reason']}")


_WORST = [0, 1, 3, 2]  # exit statuses from best to worst: an input error means a file was not checked


def run(args) -> int:
    files = args.file
    if len(files) > 1:
        for opt in ("certificate", "report"):
            if getattr(args, opt, None):
                raise TampError(f"--{opt} takes one file (got {len(files)}); run tamp prove once per file", f"--{opt}")
    if len(files) == 1:
        args.file = files[0]
        return _run_one(args, Printer())
    printer = Printer()
    t0 = time.monotonic()
    codes: list[int] = []
    verdicts: list[str] = []
    jsons: list[dict] = []
    errors = 0
    for f in files:
        args.file = f
        try:
            code, result = _run_one(args, printer, summary=False)
        except TampError as exc:  # this file cannot be checked: say so, go on with the others
            if exc.path == "<string>":
                exc.path = f
            print(str(exc), file=sys.stderr)
            codes.append(2)
            errors += 1
            continue
        codes.append(code)
        verdicts.extend(r.verdict for r in result.programs)
        jsons.append(result.to_json())
    if args.json:
        emit_json(jsons)
    elif not args.quiet:
        printer.print([summary_line(count(verdicts), len(files), errors, time.monotonic() - t0)])
    return max(codes, key=_WORST.index)


def _run_one(args, printer, summary=True):
    """Prove one file and print its lines; the exit status (and, when ``summary`` is off, the
    result too: several files share one summary line)."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.api import prove

    inputs = args.input
    progress = for_terminal(args.json)  # a status line on stderr, only on a terminal
    try:
        result = prove(
            args.file,
            bound=args.bound,
            timeout=args.timeout,
            program=args.program,
            infer=getattr(args, "infer", False),
            inputs=inputs,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    if args.dot:
        files = write_dot(result.programs, args.dot)
        if not args.json and not args.quiet:
            if files and not shutil.which("dot"):
                print(f"wrote {len(files)} .dot file(s) to {args.dot}; render with: dot -Tsvg FILE.dot -o FILE.svg")
            elif files:
                print(f"wrote {len(files)} file(s) to {args.dot}")
    if getattr(args, "certificate", None):
        _write_certificate(args, result, inputs)
    if getattr(args, "report", None):
        _write_report(args, result)
    if args.json and summary:
        emit_json(result.to_json())
    elif not args.json and not args.quiet:
        for r in result.programs:
            printer.print(program_lines(r, result.file, args.verbose))
        if summary and len(result.programs) > 1:
            printer.print(
                [summary_line(count(r.verdict for r in result.programs), 1, 0, sum(r.time_s for r in result.programs))]
            )
    code = result.exit_code()
    return code if summary else (code, result)
