"""``tamp prove FILE``: prove every program's specification (failure bound, probability, causal)."""

from __future__ import annotations

import os
import shutil
import sys
import time

from lang.errors import TampError
from lang.inputs import show

from ..progress import for_terminal
from ..report.text import count, program_lines, summary_line
from ..results import PROVED, UNKNOWN, UNSPECIFIED, VIOLATED
from .common import atomic_output, emit_json, refuse_inputs, render_graphviz, write_output
from .console import Printer
from .jsonout import ERROR, envelope, error_object
from .options import (
    add_executor_arguments,
    add_input_argument,
    make_executor,
    nonneg_int,
    output_dir,
    output_file,
    seconds,
)

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
        help="print nothing: the exit status is the verdict (0 proved or nothing to prove, 1 unknown, 3 violated)",
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
    add_executor_arguments(p, default_workers=0, kind=nonneg_int)


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
        with atomic_output(args.report, "--report", [args.file]) as tmp:
            write_report(tmp, result, source, command=command)
    except OSError as exc:
        raise TampError(f"cannot write the report {args.report}: {exc.strerror or exc}", "--report") from None
    if not args.json and not args.quiet:
        print(f"report: written to {args.report}")


def dot_texts(results) -> dict:
    """Each failure-bound result's automata as graphviz text, by file stem."""
    return {stem: text for r in results for part in r.parts for stem, text in part.to_dot().items()}


def write_dot(results, out_dir: str, texts=None, inputs=()) -> list:
    """Write each failure-bound result's automata as ``.dot`` (and ``.svg`` when graphviz's
    ``dot`` binary is installed); ``texts``: those of :func:`dot_texts`, made elsewhere. Each
    file is written atomically and never over one of ``inputs``. Returns the files written."""
    try:
        os.makedirs(out_dir, exist_ok=True)  # its parent exists (checked by options.output_dir)
    except OSError as exc:
        raise TampError(f"cannot write into {out_dir}: {exc.strerror or exc}", "--dot") from None
    written = []
    texts = dot_texts(results) if texts is None else texts
    for stem in texts:  # every file checked before the first is written
        refuse_inputs(os.path.join(out_dir, f"{stem}.dot"), "--dot", inputs)
        refuse_inputs(os.path.join(out_dir, f"{stem}.svg"), "--dot", inputs)
    for stem, text in texts.items():
        path = os.path.join(out_dir, f"{stem}.dot")
        write_output(path, text, "--dot", inputs)
        written.append(path)
        if shutil.which("dot") and render_graphviz(text, path[:-4] + ".svg", "--dot", inputs) is None:
            written.append(path[:-4] + ".svg")
    return written


def _write_certificate(args, result, inputs) -> None:
    """``--certificate OUT``: the proofs of this run as a certificate (see tamp.certificate)."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.certificate.writer import file_certificate, write_certificate

    with open(args.file, "rb") as fh:
        source = fh.read()
    cert = file_certificate(result, source, args.bound, inputs)
    try:
        with atomic_output(args.certificate, "--certificate", [args.file]) as tmp:
            write_certificate(tmp, cert)
    except OSError as exc:
        raise TampError(
            f"cannot write the certificate {args.certificate}: {exc.strerror or exc}", "--certificate"
        ) from None
    if not args.json and not args.quiet:
        n = (
            len(cert["programs"])
            + len(cert.get("probability", []))
            + len(cert.get("concentration", []))
            + len(cert.get("expectation", []))
            + len(cert.get("product", []))
            + len(cert.get("nesting", []))
            + len(cert.get("conjuncts", []))
            + len(cert.get("linearity", []))
            + len(cert.get("privacy", []))
        )
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
    with make_executor(args) as ex:
        # --workers 0 (the default) leaves the engines their own choice; anything else is used
        jobs = ex if args.workers != 0 or ex.scheduler else None
        if len(files) == 1:
            args.file = files[0]
            return _run_one(args, Printer(), executor=jobs)
        return _run_many(args, files, jobs)


def _run_many(args, files, jobs) -> int:
    """Several files: each one a job of the executor when it runs jobs in parallel (the engines
    inside a job then run in their worker), else one after the other here; the output keeps the
    order of the files either way."""
    printer = Printer()
    t0 = time.monotonic()
    codes: list[int] = []
    verdicts: list[str] = []
    jsons: list[dict] = []
    errors = 0
    opts = {
        "bound": args.bound,
        "timeout": args.timeout,
        "program": args.program,
        "infer": getattr(args, "infer", False),
        "inputs": args.input,
        "verbose": args.verbose,
        "dot": bool(args.dot),
        "text": not args.json and not args.quiet,
        "in_worker": jobs is not None and jobs.parallel,
    }
    if opts["in_worker"]:
        outcomes = jobs.map(prove_file, [(i, (f, opts)) for i, f in enumerate(files)])
    else:
        outcomes = _one_by_one(files, opts, jobs, args.json)
    for out in in_order(outcomes, len(files)):
        if out["error"] is not None:  # this file cannot be checked: say so, go on with the others
            print(out["error"]["text"], file=sys.stderr)
            codes.append(2)
            errors += 1
            jsons.append({"file": out["file"], "verdict": ERROR, "time_s": out["time_s"], "error": out["error"]})
            continue
        codes.append(out["code"])
        verdicts.extend(out["verdicts"])
        jsons.append(out["json"])
        if args.dot:
            _report_dot(args, write_dot([], args.dot, out["dot"], inputs=files))
        printer.print(out["lines"])
    code = max(codes, key=_WORST.index)
    if args.json:
        verdict = {0: PROVED, 1: UNKNOWN, 3: VIOLATED, 2: ERROR}[code]
        if code == 0 and all(j.get("verdict") == UNSPECIFIED for j in jsons):
            verdict = UNSPECIFIED  # no file states a claim: nothing was proved
        emit_json(envelope(NAME, verdict, code, time.monotonic() - t0, files=jsons))
    elif not args.quiet:
        printer.print([summary_line(count(verdicts), len(files), errors, time.monotonic() - t0)])
    return code


def _one_by_one(files, opts, jobs, json_output):
    """The files proved here, one after the other, with the status line on a terminal."""
    for i, f in enumerate(files):
        progress = for_terminal(json_output)
        try:
            yield i, prove_file(f, opts, jobs, progress)
        finally:
            if progress is not None:
                progress.close()


def in_order(outcomes, n: int):
    """The values of ``(index, value)`` pairs that arrive in any order, in index order, each as
    soon as those before it are there."""
    waiting: dict = {}
    nxt = 0
    for i, value in outcomes:
        waiting[i] = value
        while nxt in waiting:
            yield waiting.pop(nxt)
            nxt += 1
    if nxt < n:
        raise RuntimeError(f"{n - nxt} of {n} files came back without an answer")


def prove_file(path: str, opts: dict, executor=None, progress=None) -> dict:
    """One file of a several-file ``tamp prove``, as plain data (a job of :mod:`tamp.executor`):
    its exit status, verdicts, JSON, text lines and automata, or the message of its input error.
    In a worker (``opts["in_worker"]``) the engines' own jobs run in that worker."""
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.api import prove
    from tamp.executor import in_process

    if opts["in_worker"]:
        executor = in_process()
    t0 = time.monotonic()
    try:
        result = prove(
            path,
            bound=opts["bound"],
            timeout=opts["timeout"],
            program=opts["program"],
            infer=opts["infer"],
            inputs=opts["inputs"],
            executor=executor,
            progress=progress,
        )
    except TampError as exc:
        if exc.path == "<string>":
            exc.path = path
        return {"error": error_object(exc, path), "file": path, "time_s": round(time.monotonic() - t0, 4)}
    lines = []
    if opts["text"]:
        lines = [line for r in result.programs for line in program_lines(r, result.file, opts["verbose"])]
    return {
        "error": None,
        "code": result.exit_code,
        "verdicts": [r.verdict for r in result.programs],
        "json": dict(result.file_json(), time_s=round(time.monotonic() - t0, 4)),
        "lines": lines,
        "dot": dot_texts(result.programs) if opts["dot"] else {},
    }


def _report_dot(args, files) -> None:
    if not args.json and not args.quiet:
        if files and not shutil.which("dot"):
            print(f"wrote {len(files)} .dot file(s) to {args.dot}; render with: dot -Tsvg FILE.dot -o FILE.svg")
        elif files:
            print(f"wrote {len(files)} file(s) to {args.dot}")


def _run_one(args, printer, summary=True, executor=None):
    """Prove one file and print its lines; the exit status (and, when ``summary`` is off, the
    result too: several files share one summary line)."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.api import prove

    inputs = args.input
    t0 = time.monotonic()
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
            executor=executor,
        )
    finally:
        if progress is not None:
            progress.close()
    if args.dot:
        _report_dot(args, write_dot(result.programs, args.dot, inputs=[args.file]))
    if getattr(args, "certificate", None):
        _write_certificate(args, result, inputs)
    if getattr(args, "report", None):
        _write_report(args, result)
    code = result.exit_code
    if args.json and summary:
        result.time_s = time.monotonic() - t0  # the command's time, as in every --json answer
        emit_json(result.to_json())  # the API's object itself (tests/cli/test_json_schema.py)
    elif not args.json and not args.quiet:
        for r in result.programs:
            printer.print(program_lines(r, result.file, args.verbose))
        if summary and len(result.programs) > 1:
            printer.print(
                [summary_line(count(r.verdict for r in result.programs), 1, 0, sum(r.time_s for r in result.programs))]
            )
    return code if summary else (code, result)
