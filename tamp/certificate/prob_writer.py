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
(:func:`tamp.probability.export.export_cells`); their masses are computed with the checker's
functions (:func:`.cellmass.region_mass`), refining bisection witnesses until the clauses are
decided by the certificate's numbers alone.
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from lang.printer import print_expr
from lang.serialize import to_json
from tamp.core.interval import Interval
from tamp.core.validity import check_sat
from tamp.probability.export import export_cells

from .cellmass import MassError, Region, components, gauss_transform, rational_text, split_mass, witness_interval
from .format import CertificateError
from .prob_cover import decision_tree
from .prob_spec import prob_program, term_interval, terms_of, verdict_of
from .prob_witness import WitnessBuilder
from .replay import Replayer, sample_sites, var_name

DEFAULT_BUDGET_S = 60.0
MAX_LEAVES = 60_000

TraceKey = Tuple[Tuple[int, ...], Tuple[int, ...]]


@dataclasses.dataclass
class _Cell:
    choices: TraceKey  # (the discrete outcomes, the followed branches) of its trace
    side: str
    region: Region
    witness: Optional[WitnessBuilder] = None
    mass: Optional[Interval] = None  # set by _cell_mass
    ldl: bool = False  # Gaussian groups rewritten (witness {"ldl": TREE})
    fixed: Any = None  # the mass of everything outside the witness variables


def _new_cell(key, side, region: Region, dists, deadline) -> _Cell:
    """A cell with its fixed mass part and (when needed) a witness builder; linked all-Gaussian
    groups are rewritten into independent coordinates first (:func:`.cellmass.gauss_transform`)."""
    ldl = any(all(dists[v].is_gauss for v in g) for g in components(region))
    reg, ds = region, dists
    if ldl:
        moved = gauss_transform(region, dists)
        if moved is None:
            return _Cell(key, side, region, None, None, True, Interval.point(0))
        reg, ds = moved
    fixed, wnames, _, _ = split_mass(reg, ds, deadline)
    wb = WitnessBuilder(reg, ds) if wnames else None
    return _Cell(key, side, region, wb, None, ldl, fixed)


def program_prob_certificate(
    prog: A.Program,
    verdict: str,
    inputs: Optional[Dict[str, object]] = None,
    path: str = "<string>",
    source: Optional[str] = None,
    budget_s: float = DEFAULT_BUDGET_S,
) -> Dict[str, Any]:
    """The certificate entry for a decided (``proved``/``violated``) probability program
    (:class:`CertificateError` when it cannot be built within ``budget_s``)."""
    try:
        return _build(prog, verdict, inputs, path, source, budget_s)
    except TimeoutError:
        raise CertificateError(
            f"program '{prog.name}': time limit ({budget_s:g} s) reached while writing the certificate"
        ) from None
    except (MassError, TampError) as exc:
        raise CertificateError(f"program '{prog.name}': {exc}") from None


def _build(prog, verdict, inputs, path, source, budget_s):
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
    try:
        traces, keys = _replay_paths(replayer, exp.paths, names)
    except Exception as exc:  # noqa: BLE001 - outside what the checker can replay
        raise CertificateError(f"program '{prog.name}': the checker cannot replay a trace: {exc}") from None
    uncovered, open_sides = decision_tree(list(traces.values()))
    for mb in open_sides:
        if not _unsat(mb.parts):
            raise CertificateError(
                f"program '{prog.name}': a side of the branch {mb.place} is possible but no "
                "final path of the engine takes it"
            )
    per_term: List[List[_Cell]] = []
    for t in exp.terms:
        cells = []
        for c in t.cells:
            region = _region(c, names)
            key = keys[c.path]
            dists = traces[key].vars
            missing = region.variables() - set(dists)
            if missing:
                raise CertificateError(
                    f"program '{prog.name}': engine variable(s) {sorted(missing)} unknown to the replay"
                )
            cells.append(_new_cell(key, c.side, region, dists, deadline))
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
            raise CertificateError(
                f"program '{prog.name}': could not make the certified masses decide the "
                f"clauses within the budget ({budget_s:g} s, {MAX_LEAVES} witness leaves)"
            )
    return {
        "program": prog.name,
        "verdict": verdict,
        "clauses": [to_json(c) for c in clauses],
        "terms": [_term_json(prob, cells, traces, uncovered) for prob, cells in zip(terms, per_term)],
    }


def _region(c, names) -> Region:
    """An exported cell or path (engine variable ids, ``Σ coef·x + const < 0``) as a Region."""
    box = {names[v]: b for v, b in c.bounds.items()}
    cons = [({names[v]: k for v, k in coef.items()}, -const) for coef, const in c.cons]
    return Region(box, cons)


def _replay_paths(replayer: Replayer, paths, names):
    """Replay every final path of the engine; a followed branch is decided by which side of its
    condition the path's region lies on (z3). Returns ({(choices, branches): trace}, the key of
    each path)."""
    traces: Dict[tuple, Any] = {}
    keys = []
    by_choices: Dict[tuple, Any] = {}
    for p in paths:
        if not replayer.followed:
            tr = by_choices.get(p.choices)
            if tr is None:
                tr = by_choices[p.choices] = replayer.run(p.choices)
        else:
            tr = replayer.run(p.choices, oracle=_side_oracle(_region(p, names)))
        key = (tuple(p.choices), tr.branches)
        traces.setdefault(key, tr)
        keys.append(key)
    return traces, keys


def _side_oracle(region: Region):
    """The branch a path with this region takes at a condition (z3: the region, the support so
    far and the guard imply the condition or its negation)."""

    def decide(cond, rp):
        syms = dict(rp.symbols)
        for v in region.variables():
            syms.setdefault(v, z3.Real(v))
        parts = [region.formula(syms)] + rp.support_so_far() + list(rp.guard)
        if _unsat(parts + [z3.Not(cond)]):
            return 1
        if _unsat(parts + [cond]):
            return 0
        raise CertificateError("an engine path lies on both sides of a followed branch")

    return decide


def _unsat(parts, timeout_ms: int = 10000) -> bool:
    return check_sat(parts, timeout_ms=timeout_ms) == z3.unsat


def _cell_mass(c: _Cell, traces, cache, deadline):
    """weight × fixed part × witness sums: the very product the checker recomputes."""
    m = c.fixed if c.witness is None else c.fixed * witness_interval(c.witness.lo, c.witness.hi)
    c.mass = (traces[c.choices].weight * m).tidy(120)
    return c.mass


def _witness_json(c: _Cell):
    tree = c.witness.to_json() if c.witness is not None else None
    return {"ldl": tree} if c.ldl else tree


def _term_value(prob, cells, traces, uncovered, prog, cache, deadline):
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
    seen = set()
    progressed = False
    for _, wid, wb in cands[:8]:
        if wid in seen:
            continue
        seen.add(wid)
        progressed |= wb.refine(max(16, wb.leaves // 4))
    leaves = sum(c.witness.leaves for cells in per_term for c in cells if c.witness is not None)
    return progressed and leaves <= MAX_LEAVES


def _term_json(prob, cells: List[_Cell], traces, uncovered) -> Dict[str, Any]:
    by_trace: Dict[TraceKey, list] = {ch: [] for ch in traces}
    for c in cells:
        if c.mass is None:  # every cell's mass is computed while deciding the clauses
            raise CertificateError(f"a cell of {print_expr(prob)} has no mass")
        by_trace[c.choices].append(
            {
                "class": c.side,
                "box": {
                    v: [None if lo is None else rational_text(lo), None if hi is None else rational_text(hi)]
                    for v, (lo, hi) in sorted(c.region.box.items())
                },
                "cons": [
                    {"coef": {v: rational_text(k) for v, k in sorted(coef.items())}, "rhs": rational_text(rhs)}
                    for coef, rhs in c.region.cons
                ],
                "mass": [rational_text(c.mass.lo), rational_text(c.mass.hi)],
                "witness": _witness_json(c),
            }
        )
    return {
        "term": to_json(prob),
        "text": print_expr(prob),
        "uncovered": rational_text(max(uncovered, Fraction(0))),
        "traces": [{"choices": list(ch), "branches": list(br), "cells": cs} for (ch, br), cs in by_trace.items()],
    }
