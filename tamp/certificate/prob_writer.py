"""Writing probability certificates: the cells and masses behind a decided ``P(…)`` verdict.

One entry of the certificate file's ``"probability"`` list::

    {"program": NAME, "verdict": "proved" | "violated",
     "clauses": [AST…],                      # the probability ensures clauses, as in the source
     "terms": [{"term": AST, "text": TEXT,   # every distinct P(e | c) of the expanded clauses
                "uncovered": "p/q",          # >= 1 - Σ trace weights (truncated dlap/dexp tails)
                "traces": [{"choices": [i…], # discrete outcome indices (tamp.certificate.replay)
                            "cells": [{"class": "hit" | "miss" | "boundary",
                                       "box": {VAR: [lo | null, hi | null]},      # open bounds
                                       "cons": [{"coef": {VAR: "p/q"}, "rhs": "p/q"}],  # Σ < rhs
                                       "mass": ["p/q", "p/q"],                   # weight × mass
                                       "witness": TREE | null}]}]}]}             # tamp.certificate.cellmass

Everything in a trace outside its listed cells is claimed to lie outside ``c`` (or outside the
``assume``s). The cells come from the probability engine's own paths
(:func:`tamp.prob.export.export_cells`); their masses are computed with the checker's
functions (:func:`.cellmass.region_mass`), refining bisection witnesses until the clauses are
decided by the certificate's numbers alone.
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

from lang import ast as A
from lang.serialize import to_json

from .cellmass import Region, rational_text, region_mass
from .prob_spec import prob_clauses, term_interval, terms_of, verdict_of
from .prob_witness import WitnessBuilder
from .replay import Replayer, sample_sites, var_name
from .writer import CertificateError

DEFAULT_BUDGET_S = 60.0
MAX_LEAVES = 60_000


@dataclasses.dataclass
class _Cell:
    choices: Tuple[int, ...]
    side: str
    region: Region
    witness: Optional[WitnessBuilder] = None
    mass: Optional[Any] = None


def prob_program(prog: A.Program) -> A.Program:
    """The program restricted to its probability clauses (as ``tamp prove`` decides them)."""
    return dataclasses.replace(prog, ensures=tuple(prob_clauses(prog)), fails=None)


def program_prob_certificate(prog: A.Program, verdict: str, inputs: Optional[Dict[str, object]] = None,
                             path: str = "<string>", source: Optional[str] = None,
                             budget_s: float = DEFAULT_BUDGET_S) -> Dict[str, Any]:
    """The certificate entry for a decided (``proved``/``violated``) probability program
    (:class:`CertificateError` when it cannot be built within ``budget_s``)."""
    from lang.errors import TampError

    from .cellmass import MassError

    try:
        return _build(prog, verdict, inputs, path, source, budget_s)
    except TimeoutError:
        raise CertificateError(f"program '{prog.name}': time limit ({budget_s:g} s) reached while writing "
                               "the certificate") from None
    except (MassError, TampError) as exc:
        raise CertificateError(f"program '{prog.name}': {exc}") from None


def _build(prog, verdict, inputs, path, source, budget_s):
    from tamp.prob.export import export_cells

    if verdict not in ("proved", "violated"):
        raise CertificateError(f"program '{prog.name}' is not decided: nothing to certify")
    deadline = time.monotonic() + budget_s
    sub = prob_program(prog)
    clauses = list(sub.ensures)
    terms = terms_of(clauses)
    exp = export_cells(sub, terms, inputs, path, source, deadline)
    sites = sample_sites(sub)
    names = {v: var_name(sites[ev.stmt_id], ev.occurrence) for v, ev in exp.vars.items()}
    replayer = Replayer(sub, inputs)
    traces = {}
    for ch in sorted(set(exp.choices)):
        try:
            traces[ch] = replayer.run(ch)
        except Exception as exc:  # noqa: BLE001 - outside what the checker can replay
            raise CertificateError(f"program '{prog.name}': the checker cannot replay a trace: {exc}") from None
    uncovered = 1 - sum((t.weight.lo for t in traces.values()), Fraction(0))
    per_term: List[List[_Cell]] = []
    for t in exp.terms:
        cells = []
        for c in t.cells:
            box = {names[v]: b for v, b in c.bounds.items()}
            cons = [({names[v]: k for v, k in coef.items()}, -const) for coef, const in c.cons]
            region = Region(box, cons)
            dists = traces[c.choices].vars
            missing = region.variables() - set(dists)
            if missing:
                raise CertificateError(f"program '{prog.name}': engine variable(s) {sorted(missing)} unknown "
                                       "to the replay")
            wb = WitnessBuilder(region, dists)
            cells.append(_Cell(c.choices, c.side, region, wb if wb.active else None))
        per_term.append(cells)
    want = verdict == "proved"
    cache: Dict[tuple, Any] = {}
    while True:
        values = {}
        for prob, cells in zip(terms, per_term):
            values[prob] = _term_value(prob, cells, traces, uncovered, sub, cache, deadline)
        got = verdict_of(clauses, values, inputs or {})
        if got is want:
            break
        if got is not None:
            raise CertificateError(f"program '{prog.name}': the certificate's masses give the opposite verdict")
        if not _refine(per_term, traces, cache) or time.monotonic() > deadline:
            raise CertificateError(f"program '{prog.name}': could not make the certified masses decide the "
                                   f"clauses within the budget ({budget_s:g} s, {MAX_LEAVES} witness leaves)")
    return {
        "program": prog.name,
        "verdict": verdict,
        "clauses": [to_json(c) for c in clauses],
        "terms": [_term_json(prob, cells, traces, uncovered) for prob, cells in zip(terms, per_term)],
    }


def _cell_mass(c: _Cell, traces, cache, deadline):
    key = (c.choices, c.region.key(), id(c.witness), c.witness.leaves if c.witness else 0)
    m = cache.get(key)
    if m is None:
        tr = traces[c.choices]
        wj = c.witness.to_json() if c.witness else None
        m = cache[key] = (tr.weight * region_mass(c.region, tr.vars, wj, deadline)).tidy(120)
    c.mass = m
    return m


def _term_value(prob, cells, traces, uncovered, prog, cache, deadline):
    from tamp.prob.interval import Interval

    hit, miss = Interval.point(0), Interval.point(0)
    for c in cells:
        m = _cell_mass(c, traces, cache, deadline)
        if c.side == "hit":
            hit = hit + m
        else:
            miss = miss + m
    direct = prob.given is None and not any(isinstance(n, A.Assume) for n in A.walk(prog.body))
    return term_interval(hit, miss, uncovered, direct)


def _refine(per_term, traces, cache) -> bool:
    """Split the witness leaves of the cells with the most undecided mass."""
    cands = []
    for cells in per_term:
        for c in cells:
            if c.witness is not None and c.witness.largest() > 0:
                cands.append((traces[c.choices].weight.hi * c.witness.partial, id(c.witness), c.witness))
    if not cands:
        return False
    cands.sort(key=lambda x: -x[0])
    seen, total = set(), 0
    progressed = False
    for _, wid, wb in cands[:8]:
        if wid in seen:
            continue
        seen.add(wid)
        progressed |= wb.refine(max(16, wb.leaves // 4))
    leaves = sum(c.witness.leaves for cells in per_term for c in cells if c.witness is not None)
    return progressed and leaves <= MAX_LEAVES


def _term_json(prob, cells: List[_Cell], traces, uncovered) -> Dict[str, Any]:
    from lang.printer import print_expr

    by_trace: Dict[Tuple[int, ...], list] = {ch: [] for ch in traces}
    for c in cells:
        by_trace[c.choices].append({
            "class": c.side,
            "box": {v: [None if lo is None else rational_text(lo), None if hi is None else rational_text(hi)]
                    for v, (lo, hi) in sorted(c.region.box.items())},
            "cons": [{"coef": {v: rational_text(k) for v, k in sorted(coef.items())}, "rhs": rational_text(rhs)}
                     for coef, rhs in c.region.cons],
            "mass": [rational_text(c.mass.lo), rational_text(c.mass.hi)],
            "witness": c.witness.to_json() if c.witness else None,
        })
    return {"term": to_json(prob), "text": print_expr(prob), "uncovered": rational_text(max(uncovered, Fraction(0))),
            "traces": [{"choices": list(ch), "cells": cs} for ch, cs in by_trace.items()]}
