"""Three-valued (Kleene) logic over certified intervals: True, False, or None (undecided).

A small neutral primitive shared by the probability engine's clause evaluator
(:mod:`tamp.probability.decide`) and the certificate checker's own evaluator
(:mod:`tamp.certificate.prob_spec`): each keeps its own walk over the clause, only the truth
tables and the interval comparison live here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # the interval module (and flint with it) loads only where intervals are compared
    from tamp.core.interval import Interval


def not3(a: Optional[bool]) -> Optional[bool]:
    """Negation; undecided stays undecided."""
    return None if a is None else not a


def connective(op: str, a: Optional[bool], b: Optional[bool]) -> Optional[bool]:
    """``a op b`` for op in ``&&``, ``||``, ``==>``, ``<==>`` (strong Kleene: decided as soon as
    the decided operands force the result)."""
    if op == "&&":
        return False if a is False or b is False else (True if a and b else None)
    if op == "||":
        return True if a is True or b is True else (False if a is False and b is False else None)
    if op == "==>":
        return True if a is False or b is True else (False if a is True and b is False else None)
    if op == "<==>":
        return None if a is None or b is None else a == b
    raise ValueError(f"not a connective: {op}")


def compare_intervals(op: str, a: Optional[Interval], b: Optional[Interval]) -> Optional[bool]:
    """True if ``a op b`` for every pair of values in the intervals, False if for none, else None; None operands are undecided."""
    if a is None or b is None:
        return None
    from tamp.core.interval import fcompare

    return fcompare(op, (a.lo, a.hi), (b.lo, b.hi))
