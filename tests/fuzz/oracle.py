"""What every fuzzed command must do: exit 0/1/2/3 with no traceback or internal error, and
``simulate`` must not refute a claim that ``prove`` proved.

Used by the CI tests (tests/fuzz/test_fuzz_grammar.py, small budget) and the long run
(benchmarks/fuzz/run.py). Commands run in-process through ``tamp.cli.main`` with
TAMP_DEBUG=1, so an internal error surfaces as an exception with its traceback.
"""

from __future__ import annotations

import io
import os
import tempfile
import traceback
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import List, Optional

from grammar import INPUTS
from support.cli import EXIT_CODES, Hang, run_main


@dataclass
class Finding:
    """One wrong behaviour: what was run, and what went wrong."""

    kind: (
        str  # "crash" | "exit code" | "traceback" | "hang" | "proved but refuted" | "proved but runs do not terminate"
    )
    argv: List[str]
    text: str
    detail: str

    def render(self) -> str:
        return f"[{self.kind}] tamp {' '.join(self.argv)}\n--- program ---\n{self.text}--- detail ---\n{self.detail}\n"


@dataclass
class Outcome:
    code: Optional[int]
    out: str
    err: str
    findings: List[Finding] = field(default_factory=list)


def run(argv: List[str], text: str = "", limit: int = 60) -> Outcome:
    """``tamp argv`` in-process; its exit code, output and the findings it shows."""
    os.environ["TAMP_DEBUG"] = "1"
    out, err = io.StringIO(), io.StringIO()
    findings: List[Finding] = []
    code: Optional[int] = None
    try:
        with redirect_stdout(out), redirect_stderr(err):
            got = run_main(argv, limit)
        code = got if isinstance(got, int) else 2  # (a SystemExit without a number)
    except Hang as exc:
        findings.append(Finding("hang", argv, text, str(exc)))
    except Exception:  # noqa: BLE001 - an internal error is what we are looking for
        findings.append(Finding("crash", argv, text, traceback.format_exc(limit=-8)))
    o, e = out.getvalue(), err.getvalue()
    if code is not None and code not in EXIT_CODES:
        findings.append(Finding("exit code", argv, text, f"exit {code}\n{e[-2000:]}"))
    if "Traceback" in o or "Traceback" in e or "internal error" in e:
        findings.append(Finding("traceback", argv, text, e[-3000:]))
    return Outcome(code, o, e, findings)


def check_program(text: str, prove_timeout: float = 2, runs: int = 2000, limit: int = 90):
    """Run check, prove and (if proved) simulate at every input of ``INPUTS`` on ``text``.

    Returns (findings, prove exit code, simulate exit codes)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fuzz.prob")
        with open(path, "w") as f:
            f.write(text)
        findings: List[Finding] = []
        findings += run(["check", path], text, limit).findings
        pr = run(["prove", path, "--timeout", str(prove_timeout)], text, limit)
        findings += pr.findings
        sims = []
        if pr.code == 0:  # proved (or a probability specification holds): no input may refute it
            for inp in INPUTS:
                argv = ["simulate", path, "--runs", str(runs), "--seed", "7"]
                for k, v in inp.items():
                    argv += ["--input", f"{k}={v}"]
                sr = run(argv, text, limit)
                findings += sr.findings
                sims.append(sr.code)
                if sr.code == 3:
                    findings.append(Finding("proved but refuted", argv, text, pr.out + "\n" + sr.out))
                if sr.code == 2 and "still running" in sr.err:  # a failure bound is total
                    findings.append(Finding("proved but runs do not terminate", argv, text, pr.out + "\n" + sr.err))
        return findings, pr.code, sims
