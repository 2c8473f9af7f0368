"""Probability clauses for certificates: which clauses, which ``P(…)`` terms, and their
three-valued evaluation in exact interval arithmetic (independent of the engine's evaluator).

Fairness and parity clauses are expanded by :func:`lang.fairness.expand_fairness` (``P(T | S∧Q) /
P(T | ¬S∧Q) op c``, and the inverse ratio for ``parity``: the language contract).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Dict, List, Optional

from lang import ast as A
from lang.fairness import expand_fairness
from tamp.core.interval import Interval
from tamp.core.logic3 import compare_intervals, connective, not3


class SpecError(ValueError):
    """A clause outside what the certificate checker evaluates."""


def prob_clauses(prog: A.Program) -> List[A.Expr]:
    """The program's probability ``ensures`` clauses, in order."""
    return [e for e in prog.ensures if A.contains(e, (A.Prob, A.Fairness))]


def prob_program(prog: A.Program) -> A.Program:
    """The program restricted to its probability clauses (as ``tamp prove`` decides them)."""
    return dataclasses.replace(prog, ensures=tuple(prob_clauses(prog)), fails=None)


def terms_of(clauses: List[A.Expr]) -> List[A.Prob]:
    """The distinct P-terms of the (expanded) clauses, in order."""
    out: List[A.Prob] = []
    for c in clauses:
        for n in A.walk(expand_fairness(c)):
            if isinstance(n, A.Prob) and n not in out:
                out.append(n)
    return out


def term_interval(hit: Interval, miss: Interval, unknown: Fraction, direct: bool) -> Optional[Interval]:
    """P(E | G) from the hit mass (G∧E), the miss mass (G∧¬E) and mass of unknown side:
    A/(A+B) increases with A and decreases with B. ``direct`` (no condition, no ``assume``):
    P(E) is the hit mass itself, intersected in. None when the condition may have mass 0."""
    a_lo, a_hi = hit.lo, hit.hi + unknown
    b_lo, b_hi = miss.lo, miss.hi + unknown
    if a_lo + b_lo <= 0 and not direct:
        return None
    lo = a_lo / (a_lo + b_hi) if a_lo + b_hi > 0 else Fraction(0)
    hi = a_hi / (a_hi + b_lo) if a_hi + b_lo > 0 else Fraction(1)
    lo, hi = min(lo, Fraction(1)), min(max(hi, lo), Fraction(1))
    if direct:
        lo, hi = max(lo, a_lo), min(hi, a_hi)
        if lo > hi:
            raise SpecError("inconsistent enclosures of one probability")
    return Interval(lo, hi)


class Evaluator:
    """Three-valued clause evaluation with term intervals (None = unknown)."""

    def __init__(self, values: Dict[A.Prob, Optional[Interval]], inputs: Dict[str, object]):
        self.values = values
        self.inputs = inputs

    def num(self, e) -> Optional[Interval]:
        if isinstance(e, A.Prob):
            if e not in self.values:
                raise SpecError("a P-term without certified masses")
            return self.values[e]
        if isinstance(e, A.Num):
            return Interval.point(e.value)
        if isinstance(e, A.Var):
            v = self.inputs.get(e.name)
            if isinstance(v, (int, Fraction)) and not isinstance(v, bool):
                return Interval.point(v)
            raise SpecError(f"'{e.name}' is not a fixed numeric input")
        if isinstance(e, A.Unary) and e.op == "-":
            v = self.num(e.operand)
            return None if v is None else -v
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            a, b = self.num(e.left), self.num(e.right)
            if a is None or b is None:
                return None
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            return a / b  # None when b contains 0
        raise SpecError("a probability clause combines P-terms and constants with + - * /")

    def truth(self, e) -> Optional[bool]:
        # the checker's own walk over the clause (same shape as tamp/probability/decide.py's, on purpose);
        # only the truth tables and the interval comparison are shared (tamp/core/logic3.py)
        if isinstance(e, A.BoolLit):
            return e.value
        if isinstance(e, A.Unary) and e.op == "!":
            return not3(self.truth(e.operand))
        if isinstance(e, A.Binary) and e.op in ("&&", "||", "==>", "<==>"):
            return connective(e.op, self.truth(e.left), self.truth(e.right))
        if isinstance(e, A.Binary) and e.op in ("<", "<=", ">", ">=", "==", "!="):
            return compare(e.op, self.num(e.left), self.num(e.right))
        raise SpecError("a probability clause must be a comparison")


def compare(op: str, a: Optional[Interval], b: Optional[Interval]) -> Optional[bool]:
    """True if ``a op b`` for all values in the intervals, False if for none, else None."""
    return compare_intervals(op, a, b)


def verdict_of(clauses: List[A.Expr], values, inputs) -> Optional[bool]:
    """True when every clause holds, False when one fails, else None."""
    ev = Evaluator(values, inputs)
    results = [ev.truth(expand_fairness(c)) for c in clauses]
    if False in results:
        return False
    return True if all(r is True for r in results) else None
