"""The HTML proof report (``tamp prove FILE --report OUT.html``) and notebook views.

>>> import tamp
>>> r = tamp.prove("program c(p: real) requires 0 < p && p <= 1 ensures !y fails p { y ~ bern(p); }")
>>> from tamp.report import render_report
>>> html = render_report(r, engine="builtin")
>>> "<svg" in html and "λ" in html
True

Public API:

* :func:`render_report` (``FileResult`` → a whole self-contained page) and :func:`write_report`;
* :func:`program_section` / :func:`fragment` — one program's part of the report;
* :func:`program_card` / :func:`file_card` / :func:`simulation_card` — the compact notebook views
  (``_repr_html_`` of results, :mod:`tamp.report.notebook`);
* :func:`automata_svg` — a failure-bound result's automata as one SVG (``_repr_svg_``);
* :func:`automaton_svg` — one :class:`~tamp.prover.trace.automaton.FailureAutomaton` drawn.

Automata are drawn with graphviz's ``dot`` when it is installed, otherwise by the built-in
layered layout (:mod:`tamp.report.layout`); ``engine="builtin"`` forces the latter.
"""

from __future__ import annotations

from typing import Any, Optional

from tamp.results import NOTEBOOK_VIEWS

#: where each public name lives; loaded on first use, so that the text renderer (every
#: command's output, :mod:`tamp.report.text`) does not load the page and notebook renderers
#: and the engines they read (the probability engine, the simulator, the drawing code)
_LAZY = {
    "render_report": "page",
    "write_report": "page",
    "fragment": "page",
    "file_fragment": "page",
    "program_section": "sections",
    "program_card": "notebook",
    "file_card": "notebook",
    "simulation_card": "notebook",
}

__all__ = [
    "render_report",
    "write_report",
    "fragment",
    "file_fragment",
    "program_section",
    "program_card",
    "file_card",
    "simulation_card",
    "automata_svg",
    "automaton_svg",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def automaton_svg(aut, engine: str = "auto") -> str:
    """One failure automaton as an ``<svg>`` element."""
    from .drawing import draw
    from .graph import automaton_graph

    return draw(automaton_graph(aut), engine)[0]


def automata_svg(result, engine: str = "auto") -> Optional[str]:
    """The first failure automaton of a result (or of its failure-bound part), or None (also
    when it has more than :data:`~tamp.report.graph.MAX_DRAWN` nodes)."""
    from tamp.prover.trace.result import ProofResult

    from .graph import MAX_DRAWN

    for part in result.parts:
        if isinstance(part, ProofResult):
            for aut in part.automata:
                return automaton_svg(aut, engine) if len(aut.nodes) <= MAX_DRAWN else None
    return None


def _notebook_view(name: str):
    """The notebook renderer ``name``, loaded when a notebook first shows a result."""

    def view(*args, **kwargs):
        from . import notebook

        return getattr(notebook, name)(*args, **kwargs)

    view.__name__ = name
    return view


NOTEBOOK_VIEWS.update(
    program_html=_notebook_view("program_card"),
    program_svg=automata_svg,
    file_html=_notebook_view("file_card"),
    simulation_html=_notebook_view("simulation_card"),
)
