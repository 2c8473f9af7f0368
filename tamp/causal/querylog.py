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


def append(log_path: str, query: Dict, answer, time_s: float) -> None:
    """Add one line ``{"query": …, "answer": …, "time_s": …, "at": …}`` to the log."""
    line = {"query": query, "answer": answer, "time_s": round(time_s, 4),
            "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    try:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    except OSError as exc:
        raise TampError(f"cannot write the query log: {exc.strerror}", log_path) from None


def read(log_path: str) -> List[Dict]:
    """The logged entries; a malformed line is an error naming its line number."""
    try:
        with open(log_path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise TampError(f"cannot read the query log: {exc.strerror}", log_path) from None
    out = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
            entry["query"]["file"]
        except (ValueError, KeyError, TypeError):
            raise TampError("not a query-log line (expected JSON with a 'query' object)", log_path, i, 1,
                            "\n".join(lines)) from None
        out.append(entry)
    return out


def replay(log_path: str, ask: Callable[[Dict], object]) -> List[Dict]:
    """Re-ask every logged query; return one record per query with old and new answers."""
    records = []
    for entry in read(log_path):
        new = ask(entry["query"])
        records.append({"query": entry["query"], "old": entry.get("answer"), "new": new,
                        "changed": new != entry.get("answer")})
    return records
