"""Shared helpers of the language tests: the example programs the tests run over."""

from __future__ import annotations

import re
from pathlib import Path

from locations import REPO

SHARED = REPO.parent / "shared"
LANGUAGE_MD = SHARED / "LANGUAGE.md"
FAIRSQUARE = sorted((SHARED / "benchmarks" / "fairsquare").glob("*.prob"))
DOCS_LANGUAGE = REPO / "docs" / "language.md"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

# The placeholders of LANGUAGE.md's schematic snippets, made concrete.
_SNIPPET_PARAMS = "e: int, e1: int, e2: int, c: bool, lo: int, hi: int, C: bool, B: real, I: bool"


def _concrete(snippet: str) -> str:
    """A schematic snippet (placeholders e, c, D, …, NAME, BODY) as real source text."""
    s = snippet.replace("{ … }", "{ skip; }").replace("…", "")
    s = re.sub(r"\(x, y\) ~ D;", "(x, y) ~ unif({0, 1} * {0, 1});", s)
    s = re.sub(r"~ D;", "~ unif(0, 1);", s)
    s = s.replace("NAME(PARAMS)", f"snippet({_SNIPPET_PARAMS})").replace("{ BODY }", "{ skip; }")
    return s


def markdown_programs(path: Path):
    """(label, source) for every fenced code block of a markdown page that is `.prob` code:
    whole programs as they are; statement snippets wrapped in a program."""
    out = []
    if not path.exists():
        return out
    for i, (lang, body) in enumerate(_FENCE.findall(path.read_text())):
        if lang not in ("", "prob"):
            continue
        code = re.sub(r"//[^\n]*", "", body).strip()
        if not code:
            continue
        label = f"{path.name}#{i}"
        if code.startswith("program"):
            out.append((label, _concrete(body)))
        elif lang == "" and re.match(r"[\w(]", code) and not code.startswith("$"):
            out.append((label, f"program snippet({_SNIPPET_PARAMS}) {{\n{_concrete(body)}\n}}\n"))
    return out
