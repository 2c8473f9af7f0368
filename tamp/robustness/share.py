"""The exact share of a box on the positive side of one hyperplane, in integer arithmetic.

``positive_share(f, box, strict)`` is vol{x ∈ box : f(x) > 0 (strict) or >= 0} / vol(box) for an
exact affine form f. Every coefficient and box end is scaled to an integer by two common
denominators (``D_c`` for the form, ``D_x`` for the box), the box is mapped onto the unit cube
(t = (x - lo)/(hi - lo), negative coefficients flipped by t -> 1 - t), and the share below the
hyperplane is the closed formula of :func:`tamp.core.linear.cube_share`,

    vol{t ∈ [0,1]^n : c·t <= β} = Σ_S (-1)^|S| max(0, β - Σ_S c)^n / (n! Π c)   (c > 0),

summed over the subsets S with Σ_S c < β — here on Python integers only, one Fraction at the
end (the branch and bound calls it for every box it bounds; the general rational path costs
~20x more). For a non-constant form the hyperplane has measure zero, so strictness only matters
when the form is constant on the box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Mapping, Tuple, Union

ExactForm = Tuple[Mapping[str, Fraction], Fraction]
Box = Dict[str, Tuple[Fraction, Fraction]]


@dataclass(frozen=True)
class DyadicForm:
    """The affine form 2^exp·(Σ coef_f·x_f + const) with integer coefficients (the short linear
    bounds of :mod:`.netbounds`); its sign is that of the integer form."""

    coef: Dict[str, int]
    const: int
    exp: int

    def exact(self) -> Tuple[Dict[str, Fraction], Fraction]:
        q = Fraction(2) ** self.exp
        return {f: c * q for f, c in self.coef.items()}, self.const * q

    def negated(self) -> "DyadicForm":
        return DyadicForm({f: -c for f, c in self.coef.items()}, -self.const, self.exp)


AnyForm = Union[ExactForm, DyadicForm]


def _cube_below(cs: List[int], beta: int) -> Fraction:
    """vol{t ∈ [0,1]^n : c·t <= β} for positive integers c and 0 < β < Σ c."""
    cs = sorted(cs, reverse=True)
    n = len(cs)
    acc = 0
    stack = [(0, 0, 0)]  # depth-first over the subsets, pruned once the sum reaches β
    while stack:
        k, sm, size = stack.pop()
        if k == n:
            term = (beta - sm) ** n
            acc += -term if size % 2 else term
            continue
        stack.append((k + 1, sm, size))
        if sm + cs[k] < beta:
            stack.append((k + 1, sm + cs[k], size + 1))
    return Fraction(acc, math.factorial(n) * math.prod(cs))


def positive_share(f: AnyForm, box: Mapping[str, Tuple[Fraction, Fraction]], strict: bool) -> Fraction:
    """vol{x ∈ box : f(x) > 0 (``strict``) or f(x) >= 0} / vol(box), exactly (module docstring);
    a box with no width in some dimension is read as the box of its other dimensions."""
    if isinstance(f, DyadicForm):  # 2^exp > 0 does not change the sign
        iterms = [(c, box[v]) for v, c in f.coef.items() if c]
        dc, cnum, cden = 1, f.const, 1
    else:
        coef, const = f
        terms = [(c, box[v]) for v, c in coef.items() if c]
        dc = math.lcm(const.denominator, *(c.denominator for c, _ in terms))
        iterms = [(c.numerator * (dc // c.denominator), iv) for c, iv in terms]
        cnum, cden = const.numerator, const.denominator
    dx = math.lcm(1, *(e.denominator for _, (lo, hi) in iterms for e in (lo, hi)))
    m = cnum * (dc // cden) * dx  # the form scaled by dc·dx
    cs: List[int] = []
    for ci, (lo, hi) in iterms:
        li = lo.numerator * (dx // lo.denominator)
        w = hi.numerator * (dx // hi.denominator) - li
        m += ci * li
        if w:
            cs.append(ci * w)
    # f > 0  <=>  Σ c_i·t_i + m > 0 on the unit cube; below: Σ c_i·t_i <= -m
    beta = -m
    pos: List[int] = []
    for c in cs:
        if c < 0:  # t -> 1 - t
            beta -= c
            c = -c
        pos.append(c)
    if not pos:
        return Fraction(1) if (m > 0 or (m == 0 and not strict)) else Fraction(0)
    if beta <= 0:
        return Fraction(1)
    total = sum(pos)
    if beta >= total:
        return Fraction(0)
    if 2 * beta > total:  # t -> 1 - t in every coordinate: fewer subsets below the smaller β
        return _cube_below(pos, total - beta)
    return 1 - _cube_below(pos, beta)
