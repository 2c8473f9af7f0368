"""Body of ``tamp wmi PROBLEM.json [--json] [--timeout S]``."""

from __future__ import annotations

import json
import sys
import time
from fractions import Fraction
from typing import Optional

import gmpy2
from pysmt.shortcuts import And

from ..results import JSON_SCHEMA_VERSION
from .api import wmi
from .cells import WMITimeout
from .jsonfmt import ProblemFormatError, load_problem
from .model import WMIInputError


def _digits(k: int) -> str:
    """Decimal text of a (possibly huge) integer: exact answers routinely have
    tens of thousands of digits, beyond Python's default conversion limit, which
    GMP does not have (the process-wide limit is left alone)."""
    return gmpy2.mpz(k).digits(10)


def _ratio(v: Fraction) -> str:
    """``p/q`` (always with a denominator)."""
    return f"{_digits(v.numerator)}/{_digits(v.denominator)}"


def _exact(v: Fraction) -> str:
    return _digits(v.numerator) if v.denominator == 1 else _ratio(v)


def _common(verdict: str, exit_code: int, elapsed: float, path: str) -> dict:
    """The keys every command's JSON starts with (docs/json.md)."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "command": "wmi",
        "verdict": verdict,
        "exit_code": exit_code,
        "time_s": round(elapsed, 4),
        "file": path,
    }


def _error_json(path: str, message: str, t0: float) -> None:
    error = {"message": message, "file": path, "line": 0, "col": 0, "text": f"{path}: error: {message}"}
    print(json.dumps({**_common("error", 2, time.monotonic() - t0, path), "error": error}))


def run(path: str, as_json: bool, timeout: Optional[float], jobs=None) -> int:
    """Compute Z (and the queries' probabilities) of a JSON problem; ``jobs`` (a
    :class:`tamp.executor.Executor`) integrates the cells in parallel.

    Returns 0 on success, 1 on timeout (after saying how far it got), 2 on a
    malformed problem (one line ``PATH: error: …`` on stderr)."""
    t0 = time.monotonic()
    try:
        prob = load_problem(path)
    except ProblemFormatError as exc:
        print(f"{path}: error: {exc}", file=sys.stderr)
        if as_json:
            _error_json(path, str(exc), t0)
        return 2
    deadline = None if timeout is None else t0 + timeout

    def remaining():
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    stage = "Z"
    cells = 0
    try:
        z = wmi(prob.formula, prob.weight, prob.domain, timeout=remaining(), jobs=jobs)
        cells = z.cells
        queries = []
        for i, q in enumerate(prob.queries):
            stage = f"query {i}"
            zq = wmi(And(q, prob.formula), prob.weight, prob.domain, timeout=remaining(), jobs=jobs)
            cells += zq.cells
            p = zq.value / z.value if z.value != 0 else None
            queries.append((i, p))
    except WMIInputError as exc:
        print(f"{path}: error: {exc}", file=sys.stderr)
        if as_json:
            _error_json(path, str(exc), t0)
        return 2
    except WMITimeout as exc:
        elapsed = time.monotonic() - t0
        done = cells + exc.cells
        msg = (
            f"{path}: timeout after {elapsed:.1f} s while computing {stage}: "
            f"{done} convex cells integrated (partial sum of {stage} ≈ {float(exc.partial):.12g})"
        )
        if as_json:
            print(
                json.dumps(
                    {
                        **_common("timeout", 1, elapsed, path),
                        "status": "timeout",
                        "stage": stage,
                        "cells": done,
                        "partial": float(exc.partial),
                    }
                )
            )
        print(msg, file=sys.stderr)
        return 1
    elapsed = time.monotonic() - t0
    if as_json:
        out = {**_common("ok", 0, elapsed, path), "Z": _ratio(z.value), "value": float(z.value), "cells": cells}
        if prob.queries:
            out["queries"] = [
                {"query": i, "P": None if p is None else _ratio(p), "value": None if p is None else float(p)}
                for i, p in queries
            ]
        print(json.dumps(out))
    else:
        print(f"Z = {_exact(z.value)}  (≈ {float(z.value):.12g})  cells: {cells}  time: {elapsed:.2f} s")
        for i, p in queries:
            if p is None:
                print(f"P(query {i}) undefined: Z = 0")
            else:
                print(f"P(query {i}) = {_exact(p)}  (≈ {float(p):.12g})")
    return 0
