"""Export hook for probability certificates: the final cells of a program's ``P(…)`` terms.

This re-runs the engine's symbolic execution (:class:`tamp.probability.paths.Executor`) and, for each
P-term, splits every final path into the convex cells of ``given && event`` (*hit*) and
``given && !event`` (*miss*) exactly as :func:`tamp.probability.terms.make_term` does — without
computing any mass. It changes nothing in the engine; :mod:`tamp.certificate.prob_writer`
turns the cells into a certificate whose every claim is re-checked independently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from tamp.core.linear import Bound, Constraint

from .dists import Dist
from .paths import Executor, Path
from .symbolic import Formula, f_and, f_not


@dataclass
class ExportedCell:
    """One convex cell: the discrete outcomes taken (indices), the box on base variables and the
    constraints ``Σ coef·x + const < 0`` over several of them; ``side`` is "hit" or "miss"."""

    choices: Tuple[int, ...]
    bounds: Dict[int, Bound]
    cons: List[Constraint[int]]
    side: str
    path: int = -1  # index of the final path (in ``Export.paths``) the cell lies in


@dataclass
class ExportedVar:
    """A base variable: the sampling statement (object), its occurrence on the path, the step
    bin (or None) and its distribution."""

    stmt_id: int
    occurrence: int
    bin: Optional[int]
    dist: Dist


@dataclass
class ExportedTerm:
    prob: A.Prob
    cells: List[ExportedCell] = field(default_factory=list)


@dataclass
class Export:
    terms: List[ExportedTerm]
    vars: Dict[int, ExportedVar]
    choices: List[Tuple[int, ...]]  # the discrete outcome sequence of every final path (with repeats)
    lost: Fraction  # mass dropped by truncating dlap/dexp (an upper bound)
    paths: List[ExportedCell] = field(default_factory=list)  # every final path's own region (side "path")


def export_cells(
    program: A.Program,
    prob_terms: List[A.Prob],
    inputs=None,
    path: str = "<string>",
    source: Optional[str] = None,
    deadline: Optional[float] = None,
) -> Export:
    """The hit/miss cells of each term in ``prob_terms`` (see the module docstring)."""
    ex = Executor(program, inputs, path, source, deadline)
    paths = ex.run()
    terms = []
    regions = [_cell(ex, p, "path", i) for i, p in enumerate(paths)]
    for prob in prob_terms:
        t = ExportedTerm(prob)
        for i, p in enumerate(paths):
            givens: List[Tuple[Path, Formula]] = [(p, True)] if prob.given is None else ex.ev_cond(prob.given, p)
            for q, g in givens:
                for r, e in ex.ev_cond(prob.event, q):
                    for side, f in (("hit", f_and(g, e)), ("miss", f_and(g, f_not(e)))):
                        for c in ex.assume(r, f):
                            t.cells.append(_cell(ex, c, side, i))
        terms.append(t)
    out_vars = {}
    for key, v in ex.reg._ids.items():
        stmt_id, occ = key[0], key[1]
        b = key[2] if len(key) == 4 else None
        out_vars[v] = ExportedVar(stmt_id, occ, b, key[-1])
    return Export(terms, out_vars, [p.choices for p in paths], ex.lost, regions)


def _cell(ex: Executor, c, side: str, path: int) -> ExportedCell:
    return ExportedCell(
        c.choices,
        {v: b for v, b in c.bounds.items() if b != ex.reg.support(v)},
        [(dict(aff.terms), aff.const) for aff in c.cons],
        side,
        path,
    )
