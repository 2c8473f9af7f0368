"""The meaning of the group-fairness sugar, defined once (the language contract):

``fairness T given S [when Q] op c`` is ``P(T | S && Q) / P(T | !S && Q) op c``, and
``parity`` asks it both ways: also ``P(T | !S && Q) / P(T | S && Q) op c``.

>>> from lang.parser import parse
>>> from lang.printer import print_expr
>>> src = parse("program p() ensures fairness hire given (sex < 1) >= 0.85 { skip; }")
>>> print_expr(expand_fairness(src.programs[0].ensures[0]))
'P(hire | sex < 1) / P(hire | !(sex < 1)) >= 0.85'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lang import ast as A
from lang.walk import Transformer

__all__ = ["expand_fairness"]


class _Expand(Transformer):
    def Fairness(self, e: A.Fairness, kids: Sequence[Any]) -> A.Expr:
        target, s, qual, threshold = e.target, e.group, e.qual, e.threshold
        not_s = A.Unary("!", s, pos=s.pos)
        g1 = s if qual is None else A.Binary("&&", s, qual, pos=e.pos)
        g2 = not_s if qual is None else A.Binary("&&", not_s, qual, pos=e.pos)
        p1, p2 = A.Prob(target, g1, pos=e.pos), A.Prob(target, g2, pos=e.pos)
        ratio = A.Binary(e.op, A.Binary("/", p1, p2, pos=e.pos), threshold, pos=e.pos)
        if e.kind == "parity":
            inverse = A.Binary(e.op, A.Binary("/", p2, p1, pos=e.pos), threshold, pos=e.pos)
            return A.Binary("&&", ratio, inverse, pos=e.pos)
        return ratio


def expand_fairness(e: A.Expr) -> A.Expr:
    """``e`` with every fairness/parity clause replaced by its comparisons of P-term ratios
    (the rest of ``e`` unchanged, the same object where no clause is inside)."""
    out: A.Expr = _Expand().walk(e)
    return out
