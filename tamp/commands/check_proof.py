"""``tamp check-proof CERT FILE``: re-check a proof certificate independently of the prover."""

from __future__ import annotations

import time

from lang.errors import TampError
from lang.parser import parse, parse_expr
from lang.typecheck import check_file

from .common import emit_json, parse_inputs

NAME = "check-proof"
HELP = "re-check a proof certificate (written by `tamp prove --certificate`) against its source file"


def add_arguments(p):
    p.add_argument("certificate", help="the certificate (.json) written by `tamp prove --certificate`")
    p.add_argument("file", help="the .prob file the proof is about")
    p.add_argument("--bound", metavar="EXPR", help="the claim's bound, if the proof was made with --bound")
    p.add_argument("--input", metavar="NAME=VALUE", action="append", default=[],
                   help="a fixed input, if the proof was made with --input (repeatable)")
    p.add_argument("--timeout", metavar="S", type=float, help="time limit for the whole check, in seconds")
    p.add_argument("--solver-timeout", metavar="MS", type=int, default=10000,
                   help="time limit per obligation, in milliseconds (default 10000)")
    p.add_argument("--verbose", action="store_true", help="list every obligation with its time")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args) -> int:
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.certificate import MalformedCertificate, check_certificate, load

    inputs = parse_inputs(args.input)
    try:
        cert = load(args.certificate)
    except MalformedCertificate as exc:
        raise TampError(f"malformed certificate: {exc}") from None
    try:
        with open(args.file, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise TampError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TampError(f"{args.file}: the file is not UTF-8 text") from None
    src = parse(text, args.file)
    check_file(src)
    bound = parse_expr(args.bound, "--bound") if args.bound else None
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    import axioms

    axioms.all_families()  # load the axiom library (scipy) before the clock starts
    deadline = time.monotonic() + args.timeout if args.timeout else None
    report = check_certificate(cert, src, raw, bound, inputs, max(args.solver_timeout, 1), deadline)
    if args.json:
        emit_json({"ok": report.ok, "summary": report.summary(), "obligations": report.obligations,
                   "time_s": round(report.seconds, 4),
                   "programs": [{"name": p.name, "ok": p.ok, "obligations": p.obligations,
                                 "reason": p.reason, "notes": p.notes, "time_s": round(p.seconds, 4)}
                                for p in report.programs]})
    else:
        for p in report.programs:
            if args.verbose:
                for line in p.log:
                    print(f"  {p.name}: {line}")
            if p.ok:
                print(f"{p.name}: OK ({p.obligations} obligations, {p.seconds:.2f} s)")
                for note in p.notes:
                    print(f"  note: {note}")
        print(report.summary())
    return 0 if report.ok else 3


