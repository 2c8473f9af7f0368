"""Deciding probability specifications: ``decide_program`` and ``probability``.

The program is executed symbolically once (:mod:`tamp.probability.paths`); every
``P(…)`` term of the ``ensures`` clauses becomes hit/miss mass sums
(:mod:`tamp.probability.terms`) over shared, refinable cell bounds
(:mod:`tamp.probability.mass`).  The clauses are evaluated in exact interval
arithmetic with three-valued comparisons; while some clause is undecided the
cell bound with the largest weighted gap is refined, until every clause is
decided, nothing can be refined, or the time limit is reached.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Dict, List, Optional, Tuple, Union

from lang import ast as A
from lang.errors import TampError, UnsupportedError, error_at
from lang.fairness import expand_fairness  # noqa: F401 (part of this engine's API, tamp.probability.expand_fairness)
from lang.parser import parse, parse_expr
from lang.printer import print_expr
from tamp.core.interval import Interval
from tamp.core.logic3 import compare_intervals, connective, not3
from tamp.results import PROVED, UNKNOWN, VIOLATED

from .independence import independent
from .mass import Node
from .paths import MAX_TAIL_VALUES, Executor
from .result import ClauseReport, ProbResult, TermReport
from .terms import CellMasses, Term, TermCells, make_term, term_cells

DEFAULT_TIMEOUT = 60.0


# --------------------------------------------------------------------------- text of expressions


def expr_text(e: A.Expr) -> str:
    """Source-like text of an expression."""
    return print_expr(e)


# --------------------------------------------------------------------------- specification


def prob_terms(e: A.Expr) -> List[A.Prob]:
    """The distinct P-terms of an expression, in order."""
    out: List[A.Prob] = []
    for n in A.walk(e):
        if isinstance(n, A.Prob) and n not in out:
            out.append(n)
    return out


class SpecEval:
    """Three-valued evaluation of a clause with the current term intervals."""

    def __init__(
        self,
        values: Dict[A.Prob, Optional[Interval]],
        inputs: Dict[str, object],
        file,
        source,
        program: Optional[A.Program] = None,
    ):
        self.values = values
        self.program = program
        self.inputs = inputs
        self.file, self.source = file, source
        self.comparisons: List[ClauseReport] = []

    def err(self, msg, node):
        return error_at(UnsupportedError, msg, node.pos, self.file, self.source)

    def num(self, e) -> Optional[Interval]:
        if isinstance(e, A.Prob):
            return self.values[e]
        if isinstance(e, A.Num):
            return Interval.point(e.value)
        if isinstance(e, A.Var):
            v = self.inputs.get(e.name)
            if isinstance(v, (int, Fraction)) and not isinstance(v, bool):
                return Interval.point(v)
            raise self.err(
                f"outside P(...), a probability specification can use only fixed numeric "
                f"inputs ('{e.name}' is not one)",
                e,
            )
        if isinstance(e, A.Unary) and e.op == "-":
            v = self.num(e.operand)
            return None if v is None else -v
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            a, b = self.num(e.left), self.num(e.right)
            if e.op == "/" and self._equal_by_independence(e.left, e.right, a, b):
                return Interval.point(1)
            if a is None or b is None:
                return None
            if e.op == "+":
                return (a + b).tidy(200)
            if e.op == "-":
                return (a - b).tidy(200)
            if e.op == "*":
                return (a * b).tidy(200)
            r = a / b
            return None if r is None else r.tidy(200)
        raise self.err(
            "a probability specification combines P(...) terms and constants with + - * / and compares them", e
        )

    def _equal_by_independence(self, x, y, a, b) -> bool:
        """``P(E | G) / P(E | !G)`` is exactly 1 when E and G are independent (and it is defined)."""
        if self.program is None or not (isinstance(x, A.Prob) and isinstance(y, A.Prob)):
            return False
        if x.event != y.event or x.given is None or y.given is None:
            return False
        complementary = y.given == A.Unary("!", x.given) or x.given == A.Unary("!", y.given)
        if not complementary or a is None or b is None or a.lo <= 0 or b.lo <= 0:
            return False
        return independent(self.program, x.event, x.given)

    def truth(self, e) -> Optional[bool]:
        if isinstance(e, A.BoolLit):
            return e.value
        if isinstance(e, A.Unary) and e.op == "!":
            return not3(self.truth(e.operand))
        if isinstance(e, A.Binary) and e.op in ("&&", "||", "==>", "<==>"):
            return connective(e.op, self.truth(e.left), self.truth(e.right))
        if isinstance(e, A.Binary) and e.op in ("<", "<=", ">", ">=", "==", "!="):
            a, b = self.num(e.left), self.num(e.right)
            holds = compare_intervals(e.op, a, b)
            self.comparisons.append(ClauseReport(expr_text(e), a, e.op, b, holds))
            return holds
        raise self.err("a probability specification must be a comparison of probabilities", e)


# --------------------------------------------------------------------------- the engine


class Problem:
    """A program's terms, shared cell bounds, and the refinement loop."""

    def __init__(self, prog: A.Program, inputs, path, source, deadline, clauses: List[A.Expr], jobs=None):
        self.prog = prog
        self.file, self.source = path, source
        self.deadline = deadline
        self.ex = Executor(prog, inputs, path, source, deadline)
        self.paths = self.ex.run()
        self.masses = CellMasses(self.ex, deadline)
        self.clauses = clauses
        cells: Dict[A.Prob, TermCells] = {}
        for c in clauses:
            for p in prob_terms(c):
                if p not in cells:
                    cells[p] = term_cells(self.ex, self.masses, self.paths, p)
        if jobs is not None:  # the exact cell integrals as parallel jobs (tamp.executor)
            self.masses.prefetch((k for _, hit, miss in cells.values() for _, k in hit + miss), jobs)
        self.terms: Dict[A.Prob, Term] = {
            p: make_term(self.ex, self.masses, self.paths, p, expr_text(p), cs) for p, cs in cells.items()
        }
        self._nodes = self._collect_nodes()

    def _collect_nodes(self) -> List[Node]:
        seen: Dict[int, Node] = {}
        for t in self.terms.values():
            for s in (t.hit, t.miss):
                for _, n in s.entries.values():
                    if n.gap > 0:
                        seen[id(n)] = n
        return list(seen.values())

    def values(self) -> Dict[A.Prob, Optional[Interval]]:
        return {p: t.interval() for p, t in self.terms.items()}

    def evaluate(self, inputs) -> Tuple[Optional[bool], List[ClauseReport], Dict]:
        vals = self.values()
        ev = SpecEval(vals, inputs, self.file, self.source, self.prog)
        results = [ev.truth(c) for c in self.clauses]
        verdict = False if False in results else True if all(r is True for r in results) else None
        return verdict, ev.comparisons, vals

    def refine_step(self, budget: int) -> bool:
        """Refine the node with the largest weighted gap; False when nothing can be refined."""
        weights: Dict[int, Fraction] = {}
        for t in self.terms.values():
            a, b = t.hit.interval(), t.miss.interval()
            scale = max(a.hi + b.hi, Fraction(1, 10**9))
            for s in (t.hit, t.miss):
                for w, n in s.entries.values():
                    weights[id(n)] = weights.get(id(n), Fraction(0)) + w.hi / scale
        best, score = None, Fraction(0)
        for n in self._nodes:
            if getattr(n, "stuck", False) or n.gap == 0:
                continue
            sc = weights.get(id(n), Fraction(0)) * n.gap
            if sc > score:
                best, score = n, sc
        if best is None:
            return False
        if not best.refine(budget):
            best.stuck = True
        return True

    def cells(self) -> int:
        total = 0
        seen = set()
        for n in self.masses.components.values():
            if id(n) not in seen:
                seen.add(id(n))
                total += n.stats().get("cells", 1)
        return total + len(self.masses.cells)


def _stuck_message(prob: Problem) -> str:
    """Why the bounds stopped narrowing: the truncated tail of a dlap/dexp (the mass it leaves
    out is in every upper bound and no refinement removes it), or else intervals that cannot be
    separated (an exact tie, or cells the integrator cannot narrow)."""
    lost = prob.ex.lost
    tie = "the bounds cannot be refined further (the comparison may be an exact tie)"
    if lost <= 0:
        return tie
    # the width the cells leave, apart from the lost mass
    rest = max(
        (s.interval().hi - s.lost - s.interval().lo for t in prob.terms.values() for s in (t.hit, t.miss)),
        default=Fraction(0),
    )
    truncated = (
        f"a dlap/dexp tail is truncated: tamp enumerates at most {MAX_TAIL_VALUES} values on each side, and "
        f"the probability mass left beyond them (at most {float(lost):.3g}) keeps the bounds apart"
    )
    if lost >= rest:
        return truncated
    return f"{truncated}; also {tie[0].lower()}{tie[1:]}"


def decide_program(
    program: A.Program,
    inputs: Optional[Dict[str, object]] = None,
    timeout: Optional[float] = None,
    path: str = "<string>",
    source: Optional[str] = None,
    executor=None,
) -> ProbResult:
    """Decide every probability ``ensures`` clause of ``program`` (closed: no parameters, or all
    fixed by ``inputs``). ``executor`` (a :class:`tamp.executor.Executor`): where the exact cell
    integrals run as parallel jobs (default: one after the other, in this process). Verdict ``proved`` when every clause holds for all values in the
    certified intervals, ``violated`` when one fails for all of them, else ``unknown`` (time
    limit, or intervals that cannot be separated, e.g. an exact tie)."""
    t0 = time.monotonic()
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    deadline = t0 + timeout
    inputs = dict(inputs or {})
    clauses = [expand_fairness(e) for e in program.ensures if A.contains(e, (A.Prob, A.Fairness))]
    if not clauses:
        raise error_at(
            TampError,
            f"program '{program.name}' has no probability specification (an ensures clause with P(...) or fairness)",
            program.pos,
            path,
            source,
        )
    message = ""
    try:
        prob = Problem(program, inputs, path, source, deadline, clauses, executor)
    except TimeoutError:
        return ProbResult(
            program.name,
            "probability",
            UNKNOWN,
            time.monotonic() - t0,
            message=f"timeout after {timeout:g} s while enumerating paths",
        )
    budget = 32
    while True:
        verdict, comps, vals = prob.evaluate(inputs)
        if verdict is not None:
            break
        if time.monotonic() > deadline:
            message = f"timeout after {timeout:g} s: the intervals did not separate"
            break
        if not prob.refine_step(budget):
            message = _stuck_message(prob)
            break
    v = PROVED if verdict is True else VIOLATED if verdict is False else UNKNOWN
    terms = [TermReport(t.text, vals[p]) for p, t in prob.terms.items()]
    return ProbResult(
        program.name,
        "probability",
        v,
        time.monotonic() - t0,
        message=message,
        terms=terms,
        comparisons=comps,
        cells=prob.cells(),
        paths=len(prob.paths),
        solver_calls=prob.ex.solver_calls,
    )


def probability(
    program: Union[A.Program, str],
    event: Union[A.Expr, str],
    given: Union[A.Expr, str, None] = None,
    inputs: Optional[Dict[str, object]] = None,
    tolerance: float = 1e-6,
    timeout: float = 30.0,
) -> Union[Fraction, Interval]:
    """P(event | given) at the exit of ``program``: a Fraction when exact, else a certified
    Interval of width <= ``tolerance`` (or whatever was reached by ``timeout``)."""
    if isinstance(program, str):
        src = parse(program)
        program = src.programs[0]
    if isinstance(event, str):
        event = parse_expr(event)
    if isinstance(given, str):
        given = parse_expr(given)
    deadline = time.monotonic() + timeout
    pterm = A.Prob(event, given)
    prob = Problem(program, inputs, "<string>", None, deadline, [pterm])
    budget = 32
    while True:
        iv = prob.terms[pterm].interval()
        if iv is None:
            raise TampError("the condition of P(... | ...) has probability 0")
        if iv.width <= Fraction(tolerance) or time.monotonic() > deadline or not prob.refine_step(budget):
            break
    return iv.lo if iv.is_exact else iv


def probabilities(
    program: A.Program,
    events: List[A.Expr],
    inputs: Optional[Dict[str, object]] = None,
    tolerance: float = 1e-6,
    timeout: float = 30.0,
) -> List[Interval]:
    """P(event) at the exit of ``program`` for each of ``events``, from one symbolic execution
    (the paths are shared): certified intervals, each of width <= ``tolerance`` or what was
    reached by ``timeout``."""
    deadline = time.monotonic() + timeout
    terms = [A.Prob(e, None) for e in events]
    clauses: List[A.Expr] = list(terms)
    prob = Problem(program, inputs, "<string>", None, deadline, clauses)
    budget = 32
    while True:
        ivs = [prob.terms[t].interval() for t in terms]
        if any(iv is None for iv in ivs):
            raise TampError("an event has no probability")
        if all(iv.width <= Fraction(tolerance) for iv in ivs if iv is not None):
            break
        if time.monotonic() > deadline or not prob.refine_step(budget):
            break
    return [iv for iv in ivs if iv is not None]
