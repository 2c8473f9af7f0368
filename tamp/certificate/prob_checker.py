"""Re-checking a probability certificate: no search, a fresh z3 solver per query.

For one certified program, against the claim rebuilt from the source file (the first failure
rejects, naming its place):

1. CLAIM   the certificate's clauses equal the program's probability ``ensures`` clauses, and
           its terms are exactly the distinct ``P(e | c)`` of the expanded clauses;
2. TRACE   every trace replays (:mod:`.replay`: the checker's own semantics) using all its
           outcomes and followed branches; the trace weights (exact, or certified for
           dlap/dexp) are recomputed;
3. COVER   per term: the traces form a decision tree (:mod:`.prob_cover`: no trace twice, a
           branch side no trace takes is z3-impossible), and the mass it misses is at most the
           declared ``uncovered`` mass (it goes to the unknown side); within a trace, cells of one
           class are pairwise disjoint (boxes apart, else z3 ``unsat``), and every point of the
           support inside the trace's guard outside the closures of the listed cells lies outside
           ``assume``s ∧ c (z3 ``unsat``);
4. CLASS   each hit cell lies inside guard ∧ ``c ∧ e`` and each miss cell inside guard ∧ ``c ∧ ¬e``
           (cell ∧ support ∧ ¬side is z3 ``unsat``; ``sat``/``unknown``/timeout reject);
5. MASS    each cell's mass is recomputed (:mod:`.cellmass`: exact polytope integration,
           rigorous one-dimensional CDFs, bisection witnesses), times the trace weight, and
           must lie inside the claimed [lo, hi];
6. VERDICT with hit mass A, miss mass B, and boundary + uncovered mass U (either side),
           P(e | c) ∈ [A.lo/(A.lo + B.hi + U), (A.hi + U)/(A.hi + U + B.lo)]; the clauses are
           evaluated in exact interval arithmetic and must give the certified verdict.

Hit and miss cells cannot overlap on positive mass (no point is in both c ∧ e and c ∧ ¬e), and
boundary cells only enlarge U, so only same-class pairs are checked for overlap. Boundaries of
cells are null sets (every base variable has a density and every constraint a non-zero normal).
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Dict, List, Optional

import z3

from lang import ast as A
from lang.printer import print_expr
from tamp.core.interval import Interval
from tamp.core.validity import check_sat

from .cellmass import MassError, boxes_disjoint, region_mass
from .format import ProgramCheck, Rejected, judging
from .prob_cover import CoverError, decision_tree
from .prob_reader import ProbCert, TermCert
from .prob_spec import SpecError, prob_program, term_interval, terms_of, verdict_of
from .replay import Replayer, ReplayError, Trace, as_formula, evaluate


def _show(e) -> str:
    return print_expr(e)


def _frac(x: Fraction) -> str:
    return f"{float(x):.6g}"


class _Queries:
    """Fresh-solver validity queries with the time limits; counts them."""

    def __init__(self, timeout_ms: int, deadline: Optional[float], log: List[str]):
        self.timeout_ms = timeout_ms
        self.deadline = deadline
        self.log = log
        self.count = 0

    def unsat(self, rule: str, where: str, parts) -> None:
        ms = self.timeout_ms
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Rejected(f"{rule} at {where}: time limit reached before it was checked")
            ms = min(ms, int(left * 1000))
        t0 = time.monotonic()
        r = check_sat(parts, timeout_ms=ms)
        self.log.append(f"{rule} {where}: {r} ({time.monotonic() - t0:.3f} s)")
        self.count += 1
        if r != z3.unsat:
            return_reason = "the solver answered unknown or timed out" if r == z3.unknown else None
            raise Rejected(rule + "|" + (return_reason or ""))


def check_prob(
    pc: ProbCert,
    prog: A.Program,
    inputs: Optional[Dict[str, object]],
    timeout_ms: int = 10000,
    deadline: Optional[float] = None,
) -> ProgramCheck:
    """Re-check one program's probability certificate (never raises :class:`Rejected`)."""
    t0 = time.monotonic()
    out = ProgramCheck(pc.name, False)
    with judging(out, t0):
        out.obligations = _check(pc, prog, dict(inputs or {}), _Queries(timeout_ms, deadline, out.log))
        out.ok = True
    return out


def _check(pc: ProbCert, prog: A.Program, inputs, qs: _Queries) -> int:
    sub = prob_program(prog)
    clauses = list(sub.ensures)
    if not clauses:
        raise Rejected("CLAIM: the program has no probability specification")
    if len(pc.clauses) != len(clauses) or any(a != b for a, b in zip(pc.clauses, clauses)):
        for a, b in zip(pc.clauses + [None] * len(clauses), clauses + [None] * len(pc.clauses)):
            if a != b:
                raise Rejected(
                    f"CLAIM: the certificate certifies `{_show(a) if a is not None else 'nothing'}` "
                    f"but the file says `{_show(b) if b is not None else 'nothing'}`"
                )
    terms = terms_of(clauses)
    if [t.term for t in pc.terms] != terms:
        raise Rejected(
            "CLAIM: the certificate's P-terms are not those of the clauses (" + ", ".join(_show(t) for t in terms) + ")"
        )
    replayer = Replayer(sub, inputs)
    traces: Dict[tuple, Trace] = {}
    has_assume = any(isinstance(n, A.Assume) for n in A.walk(sub.body))
    values = {}
    checks = 1
    for prob, tc in zip(terms, pc.terms):
        iv, n = _check_term(prob, tc, replayer, traces, has_assume, qs)
        values[prob] = iv
        checks += n
    try:
        got = verdict_of(clauses, values, inputs)
    except SpecError as exc:
        raise Rejected(f"VERDICT: {exc}") from None
    want = pc.verdict == "proved"
    if got is not want:
        shown = "; ".join(f"{_show(p)} in {_iv(v)}" for p, v in values.items())
        if got is None:
            raise Rejected(f"VERDICT: the certified masses do not decide the clauses ({shown})")
        raise Rejected(
            f"VERDICT: the certified masses show the clauses "
            f"{'hold' if got else 'fail'}, not that they {'hold' if want else 'fail'} ({shown})"
        )
    return checks + qs.count


def _iv(v: Optional[Interval]) -> str:
    return "undefined" if v is None else f"[{_frac(v.lo)}, {_frac(v.hi)}]"


def _replay(replayer, traces, key, where) -> Trace:
    tr = traces.get(key)
    if tr is None:
        try:
            tr = traces[key] = replayer.run(*key)
        except ReplayError as exc:
            raise Rejected(f"TRACE at {where}: {exc}") from None
    return tr


def _check_term(prob: A.Prob, tc: TermCert, replayer, traces, has_assume, qs: _Queries):
    text = _show(prob)
    seen = set()
    replayed: List[Trace] = []
    hit, miss, unknown = Interval.point(0), Interval.point(0), Fraction(0)
    checks = 0
    for tr_c in tc.traces:
        key = (tr_c.choices, tr_c.branches)
        if key in seen:
            raise Rejected(f"COVER: {text}: trace {list(tr_c.choices)} is listed twice (its cells overlap)")
        seen.add(key)
        tr = _replay(replayer, traces, key, tr_c.where)
        replayed.append(tr)
        try:
            given = as_formula(True if prob.given is None else evaluate(replayer, prob.given, tr))
            event = as_formula(evaluate(replayer, prob.event, tr))
        except ReplayError as exc:
            raise Rejected(f"TRACE at {tr_c.where}: {exc}") from None
        inside = z3.And(as_formula(tr.ok), tr.guard_formula(), given)
        support = tr.support()
        for c in tr_c.cells:
            unknown_vars = c.region.variables() - set(tr.vars)
            if unknown_vars:
                raise Rejected(f"CLASS at {c.where}: no base variable {sorted(unknown_vars)[0]} on this trace")
        cells = tr_c.cells
        formulas = [c.region.formula(tr.symbols) for c in cells]
        # CLASS
        for c, f in zip(cells, formulas):
            if c.cls == "boundary":
                continue
            side = z3.And(inside, event) if c.cls == "hit" else z3.And(inside, z3.Not(event))
            _expect_unsat(
                qs,
                "CLASS",
                c.where,
                support + [f, z3.Not(side)],
                f"the cell is claimed {c.cls} but contains points outside "
                f"{'c ∧ e' if c.cls == 'hit' else 'c ∧ ¬e'} of {text}",
            )
        # COVER: same-class cells pairwise disjoint
        for i in range(len(cells)):
            for j in range(i + 1, len(cells)):
                a, b = cells[i], cells[j]
                if a.cls != b.cls or a.cls == "boundary" or boxes_disjoint(a.region, b.region):
                    continue
                _expect_unsat(
                    qs,
                    "COVER",
                    f"{a.where} and {b.where}",
                    support + [formulas[i], formulas[j]],
                    "two cells of one class overlap",
                )
        # COVER: the rest of the trace is outside the condition
        closed = [z3.Not(c.region.formula(tr.symbols, closed=True)) for c in cells]
        _expect_unsat(
            qs,
            "COVER",
            tr_c.where,
            support + closed + [inside],
            f"the cells do not cover the part of the trace inside the condition of {text}",
        )
        # MASS
        for c in cells:
            try:
                m = tr.weight * region_mass(c.region, tr.vars, c.witness)
            except MassError as exc:
                raise Rejected(f"MASS at {c.where}: {exc}") from None
            checks += 1
            lo, hi = c.mass
            if m.lo < lo or m.hi > hi:
                raise Rejected(
                    f"MASS at {c.where}: the claimed mass [{_frac(lo)}, {_frac(hi)}] does not contain "
                    f"the recomputed enclosure [{_frac(m.lo)}, {_frac(m.hi)}]"
                )
            claimed = Interval(lo, hi)
            if c.cls == "hit":
                hit = hit + claimed
            elif c.cls == "miss":
                miss = miss + claimed
            else:
                unknown += hi
    try:
        remainder, open_sides = decision_tree(replayed)
    except CoverError as exc:
        raise Rejected(f"COVER: {text}: {exc}") from None
    for mb in open_sides:
        _expect_unsat(
            qs,
            "COVER",
            f"{tc.where} ({mb.place})",
            mb.parts,
            f"a side of a followed branch that no trace of {text} takes is possible",
        )
    if remainder > tc.uncovered:
        raise Rejected(
            f"COVER: {text}: the listed traces leave up to {_frac(remainder)} uncovered, "
            f"more than the declared {_frac(tc.uncovered)}"
        )
    direct = prob.given is None and not has_assume
    try:
        iv = term_interval(hit, miss, unknown + max(remainder, Fraction(0)), direct)
    except SpecError as exc:
        raise Rejected(f"VERDICT: {text}: {exc}") from None
    return iv, checks


def _expect_unsat(qs: _Queries, rule: str, where: str, parts, what: str) -> None:
    try:
        qs.unsat(rule, where, parts)
    except Rejected as exc:
        if "|" not in str(exc):
            raise  # the time limit
        why = str(exc).split("|", 1)[1]
        raise Rejected(f"{rule} fails at {where}: {what}" + (f" ({why})" if why else "")) from None
