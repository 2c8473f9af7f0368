"""Refuting an obligation at a concrete point, before asking the solver.

A proof search asks many obligations that are false: a candidate invariant expectation that
is not inductive, a template instance that is too small. The solver often finds their
counterexamples quickly, but not always: a false obligation of the expected-failure engine,
with ``exp`` terms and nested conditions, took z3 3 s on a quiet machine and, on a loaded one,
ran past its clock limit inside a nonlinear procedure that does not stop when asked
(:mod:`tamp.core.watchdog`), which abandoned the proof. Evaluating the formula at a few
points that satisfy ``requires`` finds most such counterexamples in microseconds (the idea of
testing before proving, as in counterexample-guided inductive synthesis and Daikon).

:func:`refute` draws points for the formula's variables — integers, reals (rationals) and
truth values, from a fixed seeded sequence mixing small values, the ends 0 and 1 of
probabilities and random rationals, points that refuted earlier formulas first — keeps those
where every ``requires`` is certainly true, and returns the first point where the formula is
certainly false (:func:`tamp.core.balls.truth`).

Why it is sound: it only ever says "not valid", and only with a point where the hypotheses
hold and the formula fails for the real ``exp``/``log``/``sqrt`` (certified by ball
arithmetic, ties undecided); a formula with such a point is valid under no reading the
solver's encoding allows. Missing a counterexample costs nothing: the solver is asked next.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional, Sequence

from lang import ast as A
from lang.walk import free_vars
from tamp.core.balls import NoValue, truth

__all__ = ["Refuter", "refute"]

#: points drawn per formula (those violating ``requires`` included)
DRAWS = 200
_INTS = (0, 1, 2, 3, 1, 2, 4, 5, 7, 10, -1, 0, 1, 20, 3, 64)
_REALS = tuple(Fraction(x) for x in ("0", "1", "1/2", "1/10", "3/4", "1/3", "2", "0", "1", "1/100", "5", "-1", "9/10"))


def _draw(rng: random.Random, t: A.Type) -> Any:
    if t == A.BOOL:
        return rng.random() < 0.5
    if t == A.INT:
        r = rng.random()
        return rng.choice(_INTS) if r < 0.6 else rng.randint(0, 12) if r < 0.85 else rng.randint(-3, 100)
    if rng.random() < 0.8:
        return rng.choice(_REALS)
    return Fraction(rng.randint(-20, 200), rng.randint(1, 50))


def _holds(fs: Sequence[A.Expr], env: Mapping[str, Any]) -> bool:
    try:
        return all(truth(f, env) is True for f in fs)
    except (NoValue, ZeroDivisionError, ValueError, TypeError):
        return False


def _fails(f: A.Expr, env: Mapping[str, Any]) -> bool:
    try:
        return truth(f, env) is False
    except (NoValue, ZeroDivisionError, ValueError, TypeError):
        return False


class Refuter:
    """Refutes formulas over variables of ``types`` under ``requires``; draws the points for a
    set of variables once (keeping those where ``requires`` holds) and tries first the points
    that refuted earlier formulas (one search asks many formulas that differ little)."""

    def __init__(self, types: Mapping[str, A.Type], requires: Sequence[A.Expr], seed: int = 0):
        self.types = types
        self.requires = list(requires)
        self.seed = seed
        self.found: List[Dict[str, Any]] = []
        self._points: Dict[frozenset, List[Dict[str, Any]]] = {}

    def points(self, names: frozenset) -> List[Dict[str, Any]]:
        """The drawn points over ``names`` (with the variables of ``requires``) where every
        ``requires`` holds."""
        hit = self._points.get(names)
        if hit is None:
            rng = random.Random(self.seed)
            order = sorted(names)
            draws = ({n: _draw(rng, self.types[n]) for n in order} for _ in range(DRAWS))
            hit = self._points[names] = [env for env in draws if _holds(self.requires, env)]
        return hit

    def refute(self, formula: A.Expr) -> Optional[Dict[str, Any]]:
        """A point (names to values) where ``requires`` holds and ``formula`` is false, or None."""
        names = set(free_vars(formula))
        for r in self.requires:
            names |= set(free_vars(r))
        if any(self.types.get(n) not in (A.BOOL, A.INT, A.REAL) for n in names):
            return None
        for old in self.found:
            if names <= old.keys() and _fails(formula, old):
                return old
        for env in self.points(frozenset(names)):
            if _fails(formula, env):
                self.found.insert(0, env)
                del self.found[8:]
                return env
        return None


def refute(
    formula: A.Expr, requires: Sequence[A.Expr], types: Mapping[str, A.Type], seed: int = 0
) -> Optional[Dict[str, Any]]:
    """A point where every ``requires`` holds and ``formula`` is false (see the module
    docstring), or None.

    >>> from lang.parser import parse_expr
    >>> point = refute(parse_expr("(1 - q) * exp(1 - k) <= exp(-k)"), [parse_expr("0 <= q && q <= 1")],
    ...                {"q": A.REAL, "k": A.INT})
    >>> point is not None and point["q"] < 1 - Fraction(1, 3)  # (1 - q)·e > 1 needs q < 1 - 1/e
    True
    >>> refute(parse_expr("q * q >= 0"), [], {"q": A.REAL}) is None
    True
    """
    return Refuter(types, requires, seed).refute(formula)
