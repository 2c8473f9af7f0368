"""The library entry point behind ``tamp prove``: usable directly from a notebook.

>>> import tamp
>>> r = tamp.prove('''
... program coin(p: real)
...   requires 0 < p && p <= 1
...   ensures !y
...   fails p
... { y ~ bern(p); }''')
>>> r.verdict
'proved'

A program's ``ensures`` clauses are split by kind — failure-bound
(the trace-abstraction prover), probability (``P(…)``, fairness) and causal
(``independent``) — and each group goes to its engine; the program's verdict
combines them (violated if any is violated, proved if all are proved).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Dict, List, Optional, Union

from lang import ast as A
from lang.errors import TampError, UnsupportedError, error_at
from lang.inputs import fix_inputs
from lang.parser import parse, parse_expr, parse_file
from lang.speckind import FAILURE_BOUND, PROBABILITY, clause_kind
from lang.typecheck import check_file

from . import causal, prob, prover
from . import report as _report  # noqa: F401  (registers the notebook views of the results)
from .certificate import CheckReport, check_certificate, decode, file_certificate
from .results import FileResult, ProgramResult, combine


def _load(source_or_path: Union[str, A.SourceFile, A.Program], path: Optional[str]) -> A.SourceFile:
    if isinstance(source_or_path, A.SourceFile):
        return source_or_path
    if isinstance(source_or_path, A.Program):
        return A.SourceFile((source_or_path,), path or "<program>", "")
    text = source_or_path
    if "\n" not in text and "{" not in text and (text.endswith(".prob") or os.path.exists(text)):
        return parse_file(text)
    return parse(text, path or "<string>")


def _typecheck(src: A.SourceFile) -> None:
    check_file(src)


def prove_program(prog: A.Program, bound: Optional[A.Expr] = None, timeout: Optional[float] = None,
                  inputs: Optional[Dict[str, object]] = None, path: str = "<string>",
                  source: Optional[str] = None, progress=None) -> ProgramResult:
    """Check every specification of one program with the right engine(s)."""
    inputs = inputs or {}
    groups: Dict[str, List[A.Expr]] = {}
    for e in prog.ensures:
        groups.setdefault(clause_kind(e), []).append(e)
    if prog.reliability is not None or not groups:
        groups.setdefault(FAILURE_BOUND, [])
    if bound is not None and FAILURE_BOUND not in groups:
        raise TampError("--bound applies to failure-bound specifications, and this program has none", path)
    parts: List[ProgramResult] = []
    deadline = time.monotonic() + timeout if timeout else None
    for kind, clauses in groups.items():
        sub = dataclasses.replace(prog, ensures=tuple(clauses))
        if kind != FAILURE_BOUND:
            sub = dataclasses.replace(sub, fails=None)
        left = max(deadline - time.monotonic(), 0.01) if deadline else None
        t0 = time.monotonic()
        res: ProgramResult
        if kind == FAILURE_BOUND:
            if inputs:
                sub = fix_inputs(sub, inputs)
            res = prover.prove_program(sub, bound=bound, timeout=left, path=path, source=source,
                                       progress=progress)
        elif kind == PROBABILITY:
            res = prob.decide_program(sub, inputs=inputs or None, timeout=left, path=path, source=source)
        else:
            res = causal.certify_program(sub, options={"timeout": left} if left else None, path=path,
                                         source=source)
        if not res.time_s:
            res.time_s = time.monotonic() - t0
        parts.append(res)
    return combine(prog.name, parts)


def prove(source_or_path, bound: Union[str, A.Expr, None] = None, timeout: Optional[float] = None,
          program: Optional[str] = None, inputs: Optional[Dict[str, object]] = None,
          path: Optional[str] = None, progress=None) -> FileResult:
    """Prove every program of a file (a path, or source text) — the ``tamp prove`` command as a function.

    ``bound`` replaces each program's ``fails`` clause (a string such as ``"p*n"`` or an expression).
    Raises :class:`lang.errors.TampError` for bad input (syntax, types, unknown program).
    """
    src = _load(source_or_path, path)
    _typecheck(src)
    progs = list(src.programs)
    if program is not None:
        progs = [p for p in progs if p.name == program]
        if not progs:
            names = ", ".join(p.name for p in src.programs) or "none"
            raise TampError(f"no program named '{program}' (the file has: {names})", src.path)
    if not progs:
        raise TampError("the file contains no program", src.path)
    bound_expr = parse_expr(bound, "--bound") if isinstance(bound, str) else bound
    results = []
    deadline = time.monotonic() + timeout if timeout else None
    for prog in progs:
        if bound_expr is not None:
            _check_bound_vars(prog, bound_expr)
        left = max(deadline - time.monotonic(), 0.01) if deadline else None
        results.append(prove_program(prog, bound_expr, left, inputs, src.path, src.text, progress))
    out = FileResult(src.path, results)
    for r in [out] + results:  # the notebook view (tamp.report) lists the source
        r.source = src.text
    return out


def _check_bound_vars(prog: A.Program, bound: A.Expr) -> None:
    params = {p.name for p in prog.params}
    for name in sorted(A.free_vars(bound)):
        if name not in params:
            raise error_at(UnsupportedError, f"--bound mentions '{name}', which is not a parameter of "
                           f"program '{prog.name}' (parameters: {', '.join(sorted(params)) or 'none'})",
                           None, "--bound")


def certify_and_check(text: str, bound: Optional[str] = None, inputs: Optional[Dict[str, object]] = None
                      ) -> CheckReport:
    """Prove ``text`` (a whole source file), write its certificate in memory, and re-check it —
    a round trip for tests and notebooks (``tamp prove --certificate``, then ``tamp check-proof``)."""
    res = prove(text, bound=bound, inputs=inputs, path="<string>")
    cert = json.loads(json.dumps(file_certificate(res, text.encode("utf-8"), bound, inputs)))
    src = parse(text, "<string>")
    b = parse_expr(bound, "--bound") if bound else None
    return check_certificate(decode(cert), src, text.encode("utf-8"), b, inputs)
