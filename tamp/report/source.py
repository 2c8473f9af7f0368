"""The program's source as an HTML listing: line numbers, anchors, highlighted lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Dict, List, Optional, Tuple

from lang.parser import parse


@dataclass
class LineMark:
    """How one source line is highlighted: CSS classes and notes shown beside it."""

    classes: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def add(self, cls: str, note: str = "") -> "LineMark":
        if cls not in self.classes:
            self.classes.append(cls)
        if note and note not in self.notes:
            self.notes.append(note)
        return self


def program_ranges(source: str, path: str = "<report>") -> Dict[str, Tuple[int, int]]:
    """``{program name: (first line, last line)}`` from parsing ``source``: a program runs up to
    the line before the next one starts (the first one from line 1, so the comments that open
    the file come with it). Empty when the text does not parse (the report then shows it all)."""
    try:
        src = parse(source, path)
    except Exception:  # noqa: BLE001 - a report never fails because of the listing
        return {}
    starts = [(p.pos.line, p.name) for p in src.programs if p.pos is not None]
    starts.sort()
    total = len(source.splitlines())
    out = {}
    for k, (line, name) in enumerate(starts):
        first = 1 if k == 0 else line
        last = starts[k + 1][0] - 1 if k + 1 < len(starts) else total
        out[name] = (first, last)
    return out


def line_anchor(prefix: str, line: int) -> str:
    """The element id of source line ``line`` in the listing whose ids start with ``prefix``."""
    return f"{prefix}-L{line}"


def listing(
    source: str, prefix: str, first: int = 1, last: Optional[int] = None, marks: Optional[Dict[int, LineMark]] = None
) -> str:
    """Lines ``first..last`` of ``source`` as a table; line n has id ``{prefix}-L{n}`` and the
    classes of ``marks[n]`` (e.g. ``axiom-line``, ``failed-trace``, ``failed-at``)."""
    lines = source.splitlines()
    last = len(lines) if last is None else min(last, len(lines))
    while last > first and not lines[last - 1].strip():  # no trailing blank lines
        last -= 1
    marks = marks or {}
    rows = []
    for n in range(max(first, 1), last + 1):
        m = marks.get(n)
        cls = f' class="{" ".join(m.classes)}"' if m and m.classes else ""
        note = f'<td class="note">{escape("; ".join(m.notes))}</td>' if m and m.notes else '<td class="note"></td>'
        aid = line_anchor(prefix, n)
        rows.append(
            f'<tr id="{aid}"{cls}><td class="ln"><a href="#{aid}">{n}</a></td>'
            f'<td class="code"><code>{escape(lines[n - 1]) or " "}</code></td>{note}</tr>'
        )
    return '<table class="source">' + "".join(rows) + "</table>"
