"""The whole report page: one self-contained HTML file (inline CSS and SVG, nothing fetched)."""

from __future__ import annotations

import datetime
from html import escape
from typing import Optional

from tamp.version import __version__

from .sections import anchor_prefix, program_section, verdict_badge
from .source import program_ranges
from .style import CSS
from .zoom import script


def render_report(
    file_result,
    source: Optional[str] = None,
    engine: str = "auto",
    command: Optional[str] = None,
    simulate: bool = True,
) -> str:
    """The HTML page for a :class:`tamp.results.FileResult`: a summary table, then one section per
    program (see :func:`tamp.report.sections.program_section`). ``source`` is the file's text;
    ``simulate`` runs ``tamp simulate`` at a few points of each failure bound's plot."""
    ranges = program_ranges(source, file_result.file) if source else {}
    rows = []
    for r in file_result.programs:
        rows.append(
            f'<tr><td><a href="#{anchor_prefix(r.name)}">{escape(r.name)}</a></td><td>{escape(r.kind)}</td>'
            f"<td>{verdict_badge(r.verdict)}</td><td><code>{escape(r.bound or '')}</code></td>"
            f"<td>{r.time_s:.2f} s</td></tr>"
        )
    total = sum(r.time_s for r in file_result.programs)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    head = (
        f"<h1>tamp report: {escape(file_result.file)} {verdict_badge(file_result.verdict)}</h1>"
        f'<p class="meta">{len(file_result.programs)} program(s) · {total:.2f} s · tamp {__version__} · {when}'
        + (f" · <code>{escape(command)}</code>" if command else "")
        + "</p>"
        '<table class="data summary"><tr><th>program</th><th>kind</th><th>verdict</th><th>bound</th>'
        "<th>time</th></tr>" + "".join(rows) + "</table>"
    )
    sections = [program_section(r, source, engine, ranges, simulate) for r in file_result.programs]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>tamp report: {escape(file_result.file)}</title><style>{CSS}</style></head>\n"
        f'<body><div class="tamp-report">{head}\n' + "\n".join(sections) + "\n</div>" + script() + "</body></html>\n"
    )


def write_report(
    path: str,
    file_result,
    source: Optional[str] = None,
    engine: str = "auto",
    command: Optional[str] = None,
    simulate: bool = True,
) -> str:
    """Write :func:`render_report` to ``path`` (UTF-8) and return the path."""
    html = render_report(file_result, source, engine, command, simulate)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(html)
    return path


def fragment(result, source: Optional[str] = None, engine: str = "auto") -> str:
    """One program's section with its stylesheet: what a notebook shows for a result."""
    return f'<div class="tamp-report"><style>{CSS}</style>{program_section(result, source, engine)}</div>'


def file_fragment(file_result, source: Optional[str] = None, engine: str = "auto") -> str:
    """Every program's section with the stylesheet (a notebook's view of a whole file)."""
    ranges = program_ranges(source, file_result.file) if source else {}
    body = "".join(program_section(r, source, engine, ranges) for r in file_result.programs)
    return f'<div class="tamp-report"><style>{CSS}</style>{body}</div>'
