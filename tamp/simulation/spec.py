"""Probability specifications: Monte Carlo intervals for ``P(e)`` / ``P(e | c)`` terms, and
interval evaluation of the comparison that contains them.

Each distinct ``P`` term gets an exact Clopper–Pearson interval at the Bonferroni-adjusted
confidence ``1 - (1 - conf)/k`` (k terms), so that all term intervals hold simultaneously;
the specification is then evaluated in interval arithmetic with three-valued logic:
CONFIRMED (true on the whole box), REFUTED (false on the whole box) or UNDECIDED.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from lang import ast as A
from lang.printer import print_expr

from .evaluate import Ctx, Evaluator
from .exact import ExactEvaluator, float_bounds
from .stats import bonferroni, clopper_pearson


def desugar_fairness(f: A.Fairness) -> A.Expr:
    """``fairness T given S [when Q] op c`` as a comparison of a ratio of conditional probabilities;
    ``parity`` asks the ratio and its inverse both ``op c``."""
    pos = f.pos
    s: A.Expr = f.group
    not_s: A.Expr = A.Unary("!", f.group, pos=pos)
    if f.qual is not None:
        s, not_s = A.Binary("&&", s, f.qual, pos=pos), A.Binary("&&", not_s, f.qual, pos=pos)
    p1, p2 = A.Prob(f.target, s, pos=pos), A.Prob(f.target, not_s, pos=pos)
    ratio = A.Binary(f.op, A.Binary("/", p1, p2, pos=pos), f.threshold, pos=pos)
    if f.kind == "parity":
        inverse = A.Binary(f.op, A.Binary("/", p2, p1, pos=pos), f.threshold, pos=pos)
        return A.Binary("&&", ratio, inverse, pos=pos)
    return ratio


def desugar(e: A.Expr) -> A.Expr:
    return desugar_fairness(e) if isinstance(e, A.Fairness) else e


def is_probability_spec(e: A.Expr) -> bool:
    return A.contains(e, A.Prob) or A.contains(e, A.Fairness)


def expr_text(e: A.Expr, source: Optional[str]) -> str:
    """The source text of ``e`` (the printer's, else the source slice)."""
    try:
        return print_expr(e)
    except Exception:  # noqa: BLE001 - fall back to the source slice
        pass
    pos = getattr(e, "pos", None)
    if source and pos and pos.end_line:
        lines = source.splitlines()
        if pos.line == pos.end_line:
            return lines[pos.line - 1][pos.col - 1 : pos.end_col - 1]
        chunk = (
            [lines[pos.line - 1][pos.col - 1 :]]
            + lines[pos.line : pos.end_line - 1]
            + [lines[pos.end_line - 1][: pos.end_col - 1]]
        )
        return " ".join(x.strip() for x in chunk)
    return type(e).__name__


@dataclass
class ProbTerm:
    """One ``P(event | given)`` term: ``hits`` of ``trials`` runs, estimate and interval."""

    text: str
    hits: int
    trials: int
    estimate: float
    lo: float
    hi: float

    def as_tuple(self) -> Tuple[str, float, float, float]:
        return (self.text, self.estimate, self.lo, self.hi)


def collect_terms(specs: List[A.Expr]) -> List[A.Prob]:
    """The distinct ``P`` terms of ``specs`` (structurally equal terms count once), in order."""
    terms: List[A.Prob] = []
    for spec in specs:
        for node in A.walk(spec):
            if isinstance(node, A.Prob) and node not in terms:
                terms.append(node)
    return terms


def term_masks(t: A.Prob, ev: Evaluator, ctx: Ctx) -> Tuple[np.ndarray, np.ndarray]:
    """(hit, trial) per final run of ``ctx``: trials are the runs where the condition holds
    (all runs for ``P(e)``), hits those where the event holds too."""
    trial = np.ones(ctx.n, dtype=bool) if t.given is None else ev.eval_bool(t.given, ctx)
    hit = np.zeros(ctx.n, dtype=bool)
    if trial.any():
        hit[trial] = ev.eval_bool(t.event, ctx if trial.all() else ctx.restrict(trial))
    return hit, trial


def term_intervals(
    terms: List[A.Prob], counts: List[Tuple[int, int]], conf: float, source: Optional[str], undecided: int = 0
) -> Dict[A.Prob, ProbTerm]:
    """Clopper–Pearson interval of every term at the Bonferroni-adjusted confidence.

    ``undecided`` runs may each be a trial or not and a hit or not: the interval covers every
    case (lower end: all of them trials without a hit; upper end: all of them hits)."""
    per_term = bonferroni(conf, len(terms))
    out: Dict[A.Prob, ProbTerm] = {}
    for t, (hits, trials) in zip(terms, counts):
        lo, _ = clopper_pearson(hits, trials + undecided, per_term)
        _, hi = clopper_pearson(hits + undecided, trials + undecided, per_term)
        out[t] = ProbTerm(expr_text(t, source), hits, trials, hits / trials if trials else math.nan, lo, hi)
    return out


# ---------------------------------------------------------------- interval evaluation


def _mul(a, b):
    prods = [x * y if not ((x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x))) else 0.0 for x in a for y in b]
    return min(prods), max(prods)


def _div(a, b):
    if b[0] > 0 or b[1] < 0:
        return _mul(a, (1 / b[1], 1 / b[0]))
    if b == (0.0, 0.0):
        return (-math.inf, math.inf)
    if b[0] == 0 and a[0] >= 0:
        return (a[0] / b[1] if b[1] > 0 else 0.0, math.inf)
    return (-math.inf, math.inf)


def _cmp(op: str, a, b) -> Optional[bool]:
    """Three-valued comparison of intervals: True/False when decided on the whole box, else None."""
    if op in ("<", "<="):
        return _cmp(">" if op == "<" else ">=", b, a)
    if op == ">":
        return True if a[0] > b[1] else False if a[1] <= b[0] else None
    if op == ">=":
        return True if a[0] >= b[1] else False if a[1] < b[0] else None
    if op == "==":
        return True if a[0] == a[1] == b[0] == b[1] else False if a[1] < b[0] or b[1] < a[0] else None
    if op == "!=":
        r = _cmp("==", a, b)
        return None if r is None else not r
    raise ValueError(op)


class IntervalEvaluator:
    """Evaluates a probability specification on term intervals (and on point estimates).

    Numbers are intervals ``(lo, hi)``; Booleans are True / False / None (undecided)."""

    def __init__(self, terms: Dict[A.Prob, ProbTerm], inputs: ExactEvaluator, point: bool = False):
        self.terms = terms
        self.inputs = inputs
        self.point = point

    def eval(self, e: A.Expr):
        if isinstance(e, A.Prob):
            t = self.terms[e]
            return (t.estimate, t.estimate) if self.point else (t.lo, t.hi)
        if not is_probability_spec(e):
            v = self.inputs.eval(e)
            if isinstance(v, bool):
                return v
            return float_bounds(v)
        if isinstance(e, A.Unary):
            v = self.eval(e.operand)
            if e.op == "!":
                return None if v is None else not v
            return (-v[1], -v[0])
        if isinstance(e, A.Binary):
            if e.op in ("&&", "||", "==>", "<==>"):
                return self._logic(e.op, self.eval(e.left), self.eval(e.right))
            a, b = self.eval(e.left), self.eval(e.right)
            if e.op == "+":
                return (a[0] + b[0], a[1] + b[1])
            if e.op == "-":
                return (a[0] - b[1], a[1] - b[0])
            if e.op == "*":
                return _mul(a, b)
            if e.op == "/":
                if self.point:
                    return (a[0] / b[0], a[0] / b[0]) if b[0] != 0 and not math.isnan(b[0]) else (math.nan,) * 2
                return _div(a, b)
            if any(math.isnan(x) for x in a + b):
                return None
            return _cmp(e.op, a, b)
        if isinstance(e, A.Call) and e.func in ("min", "max", "abs"):
            vs = [self.eval(x) for x in e.args]
            if e.func == "min":
                return (min(v[0] for v in vs), min(v[1] for v in vs))
            if e.func == "max":
                return (max(v[0] for v in vs), max(v[1] for v in vs))
            lo, hi = vs[0]
            return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
        raise self.inputs.error("this construct is not supported around P(…) terms", e)

    @staticmethod
    def _logic(op, a, b):
        if op == "==>":
            return IntervalEvaluator._logic("||", None if a is None else not a, b)
        if op == "<==>":
            return None if a is None or b is None else a == b
        if op == "&&":
            return False if a is False or b is False else True if a and b else None
        return True if a is True or b is True else False if a is False and b is False else None
