"""``tamp query FILE``: counterfactual questions about a program (would / might / probably)."""

from __future__ import annotations

import os
import shutil
import time

from lang.errors import TampError
from tamp.results import CHANGED, SAME, exit_code_of

from .common import atomic_output, emit_json, load_programs
from .jsonout import envelope
from .options import output_file, seconds

NAME = "query"
HELP = "ask whether a behaviour would/might happen had some inputs been different"


def add_arguments(p):
    p.add_argument("file", nargs="?", help="a .prob file")
    p.add_argument("--program", metavar="NAME", help="the program to ask about (default: the file's only one)")
    p.add_argument("--given", metavar="EXPR", help="the factual inputs: 'x1 == 0.3 && sex == 1 && …'")
    p.add_argument(
        "--vary",
        metavar="SPEC",
        action="append",
        default=[],
        help="an input to vary: NAME (over its requires range) or 'NAME in LO..HI' (repeatable)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--would", metavar="EXPR", help="does every varied execution satisfy EXPR?")
    g.add_argument("--might", metavar="EXPR", help="does some varied execution satisfy EXPR?")
    p.add_argument("--probably", metavar="THETA", help="(sampling programs) ask about P(EXPR) >= THETA")
    p.add_argument("--timeout", metavar="S", type=seconds, default=60.0, help="time limit in seconds")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--log", metavar="FILE", type=output_file, help="append the query and its answer to this JSON-lines log"
    )
    p.add_argument("--replay", metavar="FILE", help="re-ask every query of a log and report changed answers")


class _Args:
    def __init__(self, file, program):
        self.file, self.program = file, program


def ask_query(q: dict):
    """Answer a query given as a dict (the log's format); returns the QueryResult."""
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.causal.counterfactual import ask

    src, progs = load_programs(_Args(q["file"], q.get("program")))
    if len(progs) != 1:
        names = ", ".join(p.name for p in progs)
        raise TampError(f"the file has several programs ({names}): pick one with --program", q["file"])
    return ask(
        progs[0],
        q.get("given"),
        q.get("vary") or [],
        would=q.get("would"),
        might=q.get("might"),
        probably=q.get("probably"),
        path=src.path,
        source=src.text,
        timeout=q.get("timeout") or 60.0,
    )


def _replay(args) -> int:
    t0 = time.monotonic()
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.causal import querylog

    records = querylog.replay(args.replay, lambda q: ask_query(q).answer)
    changed = [r for r in records if r["changed"]]
    if args.json:
        verdict = CHANGED if changed else SAME
        code = exit_code_of(verdict)
        body = {"file": args.replay, "queries": len(records), "changed": len(changed), "records": records}
        emit_json(envelope(NAME, verdict, code, time.monotonic() - t0, body))
        return code
    else:
        for r in records:
            q = r["query"]
            what = f"--would '{q['would']}'" if q.get("would") else f"--might '{q.get('might')}'"
            mark = CHANGED if r["changed"] else SAME
            print(f"{mark}: {q['file']} --given '{q.get('given')}' {what}: was {r['old']}, now {r['new']}")
        print(f"{len(records)} queries replayed, {len(changed)} changed")
    return exit_code_of(CHANGED if changed else SAME)


def run(args) -> int:
    if args.replay:
        return _replay(args)
    if not args.file:
        raise TampError("tamp query: give a FILE (or --replay LOG)")
    if args.would is None and args.might is None:
        raise TampError("tamp query: ask --would EXPR or --might EXPR")
    q = {
        "file": args.file,
        "program": args.program,
        "given": args.given,
        "vary": args.vary,
        "would": args.would,
        "might": args.might,
        "probably": args.probably,
        "timeout": args.timeout,
    }
    res = ask_query(q)
    if args.log:
        # deferred on purpose: loaded only when this command runs (CLI start-up)
        from tamp.causal import querylog

        logged = dict(q, file=os.path.abspath(args.file))
        # appended atomically: the log so far and the new line go to a temporary file that
        # replaces the log, so an interrupted run leaves the old log whole
        with atomic_output(args.log, "--log", [args.file, args.replay]) as tmp:
            if os.path.exists(args.log):
                shutil.copyfile(args.log, tmp)
            try:
                querylog.append(tmp, logged, res.answer, res.time_s)
            except TampError as exc:
                raise TampError(f"cannot write the query log {args.log}: {exc.message}", "--log") from None
    code = res.exit_code  # yes, no: 0; unknown, or vacuous (the scenario has no execution): 1
    if args.json:
        body = dict(res.to_json(), file=args.file)
        emit_json(envelope(NAME, res.verdict, code, res.time_s, body))
    else:
        print(res.render_text())
    return code
