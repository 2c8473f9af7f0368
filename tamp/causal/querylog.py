"""An append-only JSON-lines log of counterfactual queries, and its replay.

Each line records one query (file, program, given, vary, would/might, probably),
its answer and its time, so an investigation can be re-asked later:
:func:`replay` re-runs every logged query and lists those whose answer changed.
"""

from __future__ import annotations

import json
import time
from typing import Callable, Dict, List

from lang.errors import TampError
from lang.loader import read_text

_TEXT_FIELDS = ("program", "given", "would", "might", "probably")


def append(log_path: str, query: Dict, answer, time_s: float) -> None:
    """Add one line ``{"query": …, "answer": …, "time_s": …, "at": …}`` to the log."""
    line = {"query": query, "answer": answer, "time_s": round(time_s, 4), "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    try:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    except OSError as exc:
        raise TampError(f"cannot write the query log: {exc.strerror}", log_path) from None


def read(log_path: str) -> List[Dict]:
    """The logged entries; a malformed line is an error naming its line number."""
    whole = read_text(log_path)  # unreadable or not UTF-8: a located error
    lines = whole.split("\n")
    out = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
            why = _malformed(entry)
        except (ValueError, RecursionError):
            why = "expected JSON with a 'query' object"
        if why:
            raise TampError(f"not a query-log line ({why})", log_path, i, 1, whole)
        out.append(entry)
    return out


def _malformed(entry) -> str:
    """Why a parsed line is not a logged query ("" when it is one)."""
    q = entry.get("query") if isinstance(entry, dict) else None
    if not isinstance(q, dict):
        return "expected JSON with a 'query' object"
    if not isinstance(q.get("file"), str):
        return "query.file: expected the program's file name"
    for key in _TEXT_FIELDS:
        if q.get(key) is not None and not isinstance(q[key], (str, int, float)) or isinstance(q.get(key), bool):
            return f"query.{key}: expected text"
    vary = q.get("vary") or []
    if not isinstance(vary, list) or not all(isinstance(v, str) for v in vary):
        return "query.vary: expected a list of texts"
    t = q.get("timeout")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < float("inf")):
        return "query.timeout: expected a positive number of seconds"
    return ""


def replay(log_path: str, ask: Callable[[Dict], object]) -> List[Dict]:
    """Re-ask every logged query; return one record per query with old and new answers."""
    records = []
    for entry in read(log_path):
        new = ask(entry["query"])
        records.append(
            {"query": entry["query"], "old": entry.get("answer"), "new": new, "changed": new != entry.get("answer")}
        )
    return records
