"""Pick the automaton renderer: graphviz's ``dot`` when installed, else the built-in layout."""

from __future__ import annotations

from typing import Tuple

from .dot import dot_svg
from .graph import Graph
from .layout import svg_of

ENGINES = ("auto", "dot", "builtin")


def draw(g: Graph, engine: str = "auto") -> Tuple[str, str]:
    """``(svg, renderer used)``. ``engine="builtin"`` never calls graphviz; ``"auto"`` and
    ``"dot"`` try it first and fall back to the built-in layout when it is missing."""
    if engine not in ENGINES:
        raise ValueError(f"unknown drawing engine {engine!r} (expected one of {', '.join(ENGINES)})")
    if engine != "builtin":
        svg = dot_svg(g)
        if svg is not None:
            return svg, "dot"
    return svg_of(g), "builtin"
