"""Linear forms, half-spaces and boxes over the rationals, with their exact ranges and volumes.

One representation for the linear constraints of every engine (plain tuples and dicts, so
they are cheap to build, hash and compare):

* a *coefficient map* ``{variable: Fraction}`` (variables are names or indices);
* :data:`Constraint` ``(coef, rhs)``: the half-space ``Σ coef·x <= rhs`` (``<`` where a
  region is open: the boundary has measure zero);
* :class:`Affine` ``(coef, const)``: the affine form ``Σ coef·x + const`` (a pair, so any
  ``(coef, const)`` tuple is read the same way), with exact arithmetic on forms
  (:meth:`~Affine.add`, :meth:`~Affine.scale`, … and :func:`affine_add`, :func:`affine_scale`
  on plain pairs); as a region the half-space where it is ``<= 0`` — the constraint
  ``(coef, rhs)`` is the form ``(coef, -rhs)``. The causal engine's symbolic bounds and the
  probability engine's path conditions both build their forms with it;
* a box ``{variable: (lo, hi)}`` (:data:`Box`) with rational ends, ``None`` for an unbounded
  end (:data:`Bound`); :data:`RealBox` when every end is finite.

Helpers: :func:`affine_range` (exact min/max over a box), :func:`linked_groups` (variables
linked through constraints), :func:`box_volume`, :func:`below_share` and
:func:`halfspace_volume` (the exact volume of a box cut by one half-space, by the
inclusion–exclusion formula for the unit cube cut by a hyperplane, :func:`cube_share`).
Polytopes with several half-spaces are integrated by :func:`tamp.wmi.integrate_polytope`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Dict, Hashable, Iterable, List, Mapping, Optional, Tuple, TypeVar, Union

K = TypeVar("K", bound=Hashable)
End = Optional[Fraction]
Bound = Tuple[End, End]
Box = Mapping[K, Bound]
RealBox = Mapping[K, Tuple[Fraction, Fraction]]
Constraint = Tuple[Dict[K, Fraction], Fraction]
ZERO = Fraction(0)
ONE = Fraction(1)
Pair = Tuple[Mapping[K, Fraction], Fraction]


class Affine(Tuple[Dict[K, Fraction], Fraction]):
    """The affine form ``Σ coef[k]·x_k + const`` with exact coefficients: the pair
    ``(coef, const)``, with arithmetic. Forms built by :meth:`make`, :meth:`add` and
    :func:`affine_add` have no zero coefficients.

    >>> F = Fraction
    >>> f = Affine.var(0).scale(F(2)).add(Affine.var(1)).shift(F(-1))
    >>> f.terms, f.const, str(f)
    (((0, Fraction(2, 1)), (1, Fraction(1, 1))), Fraction(-1, 1), '2*x0 + 1*x1 + -1')
    >>> coef, const = f.add(f, F(-1)); (coef, const)
    ({}, Fraction(0, 1))
    """

    __slots__ = ()

    def __new__(cls, coef: Mapping[K, Fraction], const: Fraction = ZERO) -> "Affine[K]":
        return super().__new__(cls, (dict(coef), Fraction(const)))

    def __getnewargs__(self) -> Tuple[Dict[K, Fraction], Fraction]:
        """What :func:`pickle` and :func:`copy.copy` pass to ``__new__`` (the forms travel to
        executor workers)."""
        return self[0], self[1]

    @staticmethod
    def var(v: K) -> "Affine[K]":
        """The form ``x_v``."""
        return Affine({v: ONE}, ZERO)

    @staticmethod
    def constant(c: Union[Fraction, int]) -> "Affine[Any]":
        """The constant form ``c``."""
        return Affine({}, Fraction(c))

    @staticmethod
    def make(const: Union[Fraction, int], coef: Mapping[K, Fraction]) -> "Affine[K]":
        """``const + Σ coef·x`` without the zero coefficients."""
        return Affine({k: c for k, c in coef.items() if c != 0}, Fraction(const))

    @property
    def coef(self) -> Dict[K, Fraction]:
        return self[0]

    @property
    def const(self) -> Fraction:
        return self[1]

    @property
    def terms(self) -> Tuple[Tuple[K, Fraction], ...]:
        """The nonzero ``(variable, coefficient)`` pairs, sorted by variable."""
        return tuple(sorted((k, c) for k, c in self[0].items() if c))

    @property
    def is_const(self) -> bool:
        return not any(self[0].values())

    def vars(self) -> List[K]:
        return [k for k, _ in self.terms]

    def add(self, other: Pair[K], k: Fraction = ONE) -> "Affine[K]":
        """``self + k·other``."""
        return affine_add(self, other, k)

    def scale(self, k: Fraction) -> "Affine[K]":
        return affine_scale(self, k)

    def shift(self, k: Fraction) -> "Affine[K]":
        """``self + k``."""
        return Affine(self[0], self[1] + k)

    def neg(self) -> "Affine[K]":
        return affine_scale(self, Fraction(-1))

    def __str__(self) -> str:
        parts = [f"{c}*x{v}" for v, c in self.terms]
        if self[1] or not parts:
            parts.append(str(self[1]))
        return " + ".join(parts)

    def __repr__(self) -> str:
        return f"Affine({self[0]!r}, {self[1]!r})"


def affine_add(a: Pair[K], b: Pair[K], k: Fraction = ONE) -> Affine[K]:
    """``a + k·b`` for forms given as pairs ``(coef, const)``; coefficients that cancel are
    dropped.

    >>> affine_add(({"x": Fraction(1)}, Fraction(2)), ({"x": Fraction(1), "y": Fraction(3)}, Fraction(1)), Fraction(-1))
    Affine({'y': Fraction(-3, 1)}, Fraction(1, 1))
    """
    co = dict(a[0])
    for v, c in b[0].items():
        x = co.get(v, ZERO) + k * c
        if x:
            co[v] = x
        else:
            co.pop(v, None)
    return Affine(co, a[1] + k * b[1])


def affine_scale(a: Pair[K], k: Fraction) -> Affine[K]:
    """``k·a`` for a form given as a pair (``k = 0`` gives the zero form)."""
    if k == 0:
        return Affine({}, ZERO)
    return Affine({v: c * k for v, c in a[0].items()}, a[1] * k)


def affine_range(
    coef: Mapping[K, Fraction], box: Mapping[K, Tuple[End, End]], const: Fraction = ZERO
) -> Tuple[End, End]:
    """The exact range ``(min, max)`` of ``Σ coef[k]·x_k + const`` over the box (``None`` for
    an unbounded end, in the box and in the result).

    >>> F = Fraction
    >>> affine_range({"x": F(2), "y": F(-1)}, {"x": (F(0), F(1)), "y": (F(0), F(3))}, F(1))
    (Fraction(-2, 1), Fraction(3, 1))
    >>> affine_range({"x": F(1)}, {"x": (None, F(1))})
    (None, Fraction(1, 1))
    """
    lo: End = const
    hi: End = const
    for k, c in coef.items():
        a, b = box[k]
        if c < 0:
            a, b = b, a
        lo = None if lo is None or a is None else lo + c * a
        hi = None if hi is None or b is None else hi + c * b
    return lo, hi


def linked_groups(coefs: Iterable[Mapping[K, Fraction]]) -> List[List[K]]:
    """The groups of variables linked through the given constraints' coefficient maps
    (connected components), each sorted; the groups in the order of their lists of variables
    as first met (variables sorted within each constraint).

    >>> linked_groups([{"a": 1, "b": 1}, {"c": 1, "d": 2}, {"b": 1, "e": 1}])
    [['a', 'b', 'e'], ['c', 'd']]
    """
    parent: Dict[K, K] = {}

    def find(a: K) -> K:
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for coef in coefs:
        vs = sorted(coef)  # type: ignore[type-var]
        for v in vs:
            find(v)
        for v in vs[1:]:
            parent[find(v)] = find(vs[0])
    groups: Dict[K, List[K]] = {}
    for v in parent:
        groups.setdefault(find(v), []).append(v)
    return [sorted(g) for g in sorted(groups.values())]  # type: ignore[type-var]


def box_volume(box: Mapping[K, Tuple[Fraction, Fraction]]) -> Fraction:
    """The volume of a bounded box.

    >>> box_volume({"x": (Fraction(0), Fraction(2)), "y": (Fraction(1), Fraction(4))})
    Fraction(6, 1)
    """
    v = Fraction(1)
    for lo, hi in box.values():
        v *= hi - lo
    return v


def cube_share(cs: List[Fraction], beta: Fraction) -> Fraction:
    """vol{t ∈ [0,1]^n : c·t <= β} for positive ``cs`` and 0 < β < Σ c:
    Σ_S (-1)^|S| (β - Σ_S c)^n / (n! Π c) over the subsets S with Σ_S c < β (larger sums
    contribute 0), in integer arithmetic after scaling every c and β by a common denominator
    (the share does not change under common scaling).

    >>> cube_share([Fraction(1), Fraction(1)], Fraction(1))
    Fraction(1, 2)
    """
    den = math.lcm(beta.denominator, *(c.denominator for c in cs))
    B = beta.numerator * (den // beta.denominator)
    C = sorted((c.numerator * (den // c.denominator) for c in cs), reverse=True)
    n = len(C)
    acc = 0
    stack = [(0, 0, 0)]  # depth-first over the subsets
    while stack:
        k, sm, size = stack.pop()
        if k == n:
            term = (B - sm) ** n
            acc += -term if size % 2 else term
            continue
        stack.append((k + 1, sm, size))
        if sm + C[k] < B:
            stack.append((k + 1, sm + C[k], size + 1))
    return Fraction(acc, math.factorial(n) * math.prod(C))


def below_share(f: Tuple[Mapping[K, Fraction], Fraction], box: Mapping[K, Tuple[Fraction, Fraction]]) -> Fraction:
    """The exact share of the bounded ``box`` where the affine form ``f = (coef, const)`` is
    <= 0 (a form that is constant 0 on the box counts the whole box).

    >>> F = Fraction
    >>> below_share(({"x": F(1), "y": F(1)}, F(-1)), {"x": (F(0), F(1)), "y": (F(0), F(1))})
    Fraction(1, 2)
    >>> below_share(({}, F(0)), {"x": (F(0), F(1))})
    Fraction(1, 1)
    """
    coef, const = f
    beta = -const
    cs: List[Fraction] = []
    for name, c in coef.items():
        lo, hi = box[name]
        w = hi - lo
        beta -= c * lo
        if c == 0 or w == 0:
            continue
        c = c * w
        if c < 0:  # t -> 1 - t
            beta -= c
            c = -c
        cs.append(c)
    if beta < 0 or (beta == 0 and cs):
        return Fraction(0)
    total = sum(cs, ZERO)
    if beta >= total:
        return Fraction(1)
    return cube_share(cs, beta)


def halfspace_volume(f: Tuple[Mapping[K, Fraction], Fraction], box: Mapping[K, Tuple[Fraction, Fraction]]) -> Fraction:
    """vol{x ∈ box : f(x) <= 0} exactly, for a form ``f = (coef, const)`` that is not
    constant on the box.

    >>> F = Fraction
    >>> halfspace_volume(({"x": F(1)}, F(-1, 2)), {"x": (F(0), F(1)), "y": (F(0), F(2))})
    Fraction(1, 1)
    """
    return box_volume(box) * below_share(f, box)
