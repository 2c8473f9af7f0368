"""Sparse multivariate polynomials with exact rational (Fraction) coefficients.

A :class:`Poly` over ``nvars`` variables is a mapping from exponent tuples
(length ``nvars``) to non-zero :class:`fractions.Fraction` coefficients.  The
operations needed by exact integration are provided: ring operations,
substitution of an affine expression for a variable, antiderivative in one
variable, definite integration between affine bounds, evaluation.

Polys are treated as immutable values once built (operations return new
objects); the ``terms`` dict must not be mutated by callers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Iterable, Mapping, Sequence, Tuple

Exps = Tuple[int, ...]

_ZERO = Fraction(0)
_ONE = Fraction(1)


def _frac(c) -> Fraction:
    if isinstance(c, Fraction):
        return c
    if isinstance(c, float):
        return Fraction(c)  # exact binary value of the double
    return Fraction(c)


class Poly:
    """Sparse polynomial in ``nvars`` variables with Fraction coefficients."""

    __slots__ = ("nvars", "terms")

    def __init__(self, nvars: int, terms: Mapping[Exps, object] | None = None):
        self.nvars = nvars
        t: Dict[Exps, Fraction] = {}
        if terms:
            for e, c in terms.items():
                if len(e) != nvars:
                    raise ValueError(f"exponent {e} has wrong length for {nvars} variables")
                c = _frac(c)
                if c:
                    e = tuple(e)
                    t[e] = t.get(e, _ZERO) + c
                    if not t[e]:
                        del t[e]
        self.terms = t

    # -- constructors -------------------------------------------------
    @classmethod
    def _raw(cls, nvars: int, terms: Dict[Exps, Fraction]) -> "Poly":
        p = cls.__new__(cls)
        p.nvars = nvars
        p.terms = terms
        return p

    @classmethod
    def const(cls, nvars: int, c) -> "Poly":
        c = _frac(c)
        return cls._raw(nvars, {(0,) * nvars: c} if c else {})

    @classmethod
    def zero(cls, nvars: int) -> "Poly":
        return cls._raw(nvars, {})

    @classmethod
    def one(cls, nvars: int) -> "Poly":
        return cls.const(nvars, 1)

    @classmethod
    def var(cls, nvars: int, i: int) -> "Poly":
        e = [0] * nvars
        e[i] = 1
        return cls._raw(nvars, {tuple(e): _ONE})

    @classmethod
    def monomial(cls, exps: Sequence[int], coeff=1) -> "Poly":
        return cls(len(exps), {tuple(exps): coeff})

    @classmethod
    def affine(cls, coeffs: Sequence, const=0) -> "Poly":
        """The polynomial ``sum coeffs[i]*x_i + const``."""
        n = len(coeffs)
        t: Dict[Exps, Fraction] = {}
        c0 = _frac(const)
        if c0:
            t[(0,) * n] = c0
        for i, a in enumerate(coeffs):
            a = _frac(a)
            if a:
                e = [0] * n
                e[i] = 1
                t[tuple(e)] = a
        return cls._raw(n, t)

    # -- queries ------------------------------------------------------
    def is_zero(self) -> bool:
        return not self.terms

    def is_const(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and not any(next(iter(self.terms))))

    def const_value(self) -> Fraction:
        return self.terms.get((0,) * self.nvars, _ZERO)

    def degree(self) -> int:
        return max((sum(e) for e in self.terms), default=0)

    def degree_in(self, i: int) -> int:
        return max((e[i] for e in self.terms), default=0)

    def used_vars(self) -> set:
        s = set()
        for e in self.terms:
            for i, k in enumerate(e):
                if k:
                    s.add(i)
        return s

    def __len__(self):
        return len(self.terms)

    def __eq__(self, other):
        if isinstance(other, Poly):
            return self.nvars == other.nvars and self.terms == other.terms
        if isinstance(other, (int, Fraction)):
            return self == Poly.const(self.nvars, other)
        return NotImplemented

    def __hash__(self):
        return hash((self.nvars, frozenset(self.terms.items())))

    def __repr__(self):
        if not self.terms:
            return "Poly(0)"
        parts = []
        for e, c in sorted(self.terms.items(), reverse=True):
            mono = "*".join((f"x{i}" if k == 1 else f"x{i}^{k}") for i, k in enumerate(e) if k)
            parts.append(f"{c}" + (f"*{mono}" if mono else ""))
        return "Poly(" + " + ".join(parts) + ")"

    # -- arithmetic ---------------------------------------------------
    def _coerce(self, other) -> "Poly":
        if isinstance(other, Poly):
            if other.nvars != self.nvars:
                raise ValueError("polynomials over different numbers of variables")
            return other
        return Poly.const(self.nvars, other)

    def __add__(self, other):
        other = self._coerce(other)
        if len(other.terms) > len(self.terms):
            a, b = other.terms, self.terms
        else:
            a, b = self.terms, other.terms
        t = dict(a)
        for e, c in b.items():
            v = t.get(e)
            if v is None:
                t[e] = c
            else:
                v += c
                if v:
                    t[e] = v
                else:
                    del t[e]
        return Poly._raw(self.nvars, t)

    __radd__ = __add__

    def __neg__(self):
        return Poly._raw(self.nvars, {e: -c for e, c in self.terms.items()})

    def __sub__(self, other):
        return self + (-self._coerce(other))

    def __rsub__(self, other):
        return self._coerce(other) - self

    def scale(self, k) -> "Poly":
        k = _frac(k)
        if not k:
            return Poly.zero(self.nvars)
        return Poly._raw(self.nvars, {e: c * k for e, c in self.terms.items()})

    def __mul__(self, other):
        if not isinstance(other, Poly):
            return self.scale(other)
        other = self._coerce(other)
        if not self.terms or not other.terms:
            return Poly.zero(self.nvars)
        t: Dict[Exps, Fraction] = {}
        get = t.get
        for e1, c1 in self.terms.items():
            for e2, c2 in other.terms.items():
                e = tuple(a + b for a, b in zip(e1, e2))
                t[e] = get(e, _ZERO) + c1 * c2
        return Poly._raw(self.nvars, {e: c for e, c in t.items() if c})

    __rmul__ = __mul__

    def __pow__(self, k: int) -> "Poly":
        if k < 0:
            raise ValueError("negative power of a polynomial")
        result = Poly.one(self.nvars)
        base = self
        while k:
            if k & 1:
                result = result * base
            k >>= 1
            if k:
                base = base * base
        return result

    # -- evaluation / substitution --------------------------------------
    def evaluate(self, point: Sequence) -> Fraction:
        total = _ZERO
        pt = [_frac(v) for v in point]
        for e, c in self.terms.items():
            m = c
            for v, k in zip(pt, e):
                if k:
                    m *= v**k
            total += m
        return total

    def evaluate_float(self, point: Sequence[float]) -> float:
        total = 0.0
        for e, c in self.terms.items():
            m = float(c)
            for v, k in zip(point, e):
                if k:
                    m *= v**k
            total += m
        return total

    def substitute(self, i: int, expr: "Poly") -> "Poly":
        """Replace variable ``i`` by the polynomial ``expr`` (which must not use
        variable ``i`` if the result is to be free of it)."""
        groups: Dict[int, Dict[Exps, Fraction]] = {}
        for e, c in self.terms.items():
            k = e[i]
            rest = e[:i] + (0,) + e[i + 1 :]
            groups.setdefault(k, {})[rest] = c
        result: Dict[Exps, Fraction] = {}
        powers = {0: Poly.one(self.nvars)}
        maxk = max(groups, default=0)
        cur = powers[0]
        for k in range(1, maxk + 1):
            cur = cur * expr
            powers[k] = cur
        for k, g in groups.items():
            pk = powers[k].terms
            for e1, c1 in g.items():
                for e2, c2 in pk.items():
                    e = tuple(a + b for a, b in zip(e1, e2))
                    result[e] = result.get(e, _ZERO) + c1 * c2
        return Poly._raw(self.nvars, {e: c for e, c in result.items() if c})

    def antiderivative(self, i: int) -> "Poly":
        """An antiderivative with respect to variable ``i``."""
        t: Dict[Exps, Fraction] = {}
        for e, c in self.terms.items():
            k = e[i] + 1
            ne = e[:i] + (k,) + e[i + 1 :]
            t[ne] = c / k
        return Poly._raw(self.nvars, t)

    def integrate_between(self, i: int, lo: "Poly", hi: "Poly") -> "Poly":
        """``∫_{lo}^{hi} self d x_i`` where lo, hi do not involve ``x_i``."""
        F = self.antiderivative(i)
        return F.substitute(i, hi) - F.substitute(i, lo)

    def drop_var(self, i: int) -> "Poly":
        """The same polynomial over ``nvars-1`` variables; variable ``i`` must be absent."""
        t = {}
        for e, c in self.terms.items():
            if e[i]:
                raise ValueError(f"variable {i} still occurs")
            t[e[:i] + e[i + 1 :]] = c
        return Poly._raw(self.nvars - 1, t)

    def rename(self, perm: Sequence[int], nvars: int) -> "Poly":
        """Variable ``j`` of self becomes variable ``perm[j]`` of a Poly over ``nvars``."""
        t: Dict[Exps, Fraction] = {}
        for e, c in self.terms.items():
            ne = [0] * nvars
            for j, k in enumerate(e):
                if k:
                    ne[perm[j]] += k
            key = tuple(ne)
            t[key] = t.get(key, _ZERO) + c
        return Poly._raw(nvars, {e: c for e, c in t.items() if c})

    def affine_change(self, rows: Sequence[Sequence[Fraction]], shift: Sequence[Fraction]) -> "Poly":
        """Substitute ``x_j = shift[j] + sum_i rows[j][i] * t_i`` for all ``j``
        simultaneously; the result is a polynomial in the ``t`` variables
        (``len(rows[0])`` of them)."""
        m = len(rows[0]) if rows else 0
        lin = [Poly.affine(rows[j], shift[j]) if True else None for j in range(self.nvars)]
        cache: Dict[Tuple[int, int], Poly] = {}

        def power(j, k):
            key = (j, k)
            p = cache.get(key)
            if p is None:
                p = Poly.one(m) if k == 0 else power(j, k - 1) * lin[j]
                cache[key] = p
            return p

        total = Poly.zero(m)
        for e, c in self.terms.items():
            term = Poly.const(m, c)
            for j, k in enumerate(e):
                if k:
                    term = term * power(j, k)
            total = total + term
        return total


def poly_sum(polys: Iterable[Poly], nvars: int) -> Poly:
    t: Dict[Exps, Fraction] = {}
    for p in polys:
        for e, c in p.terms.items():
            t[e] = t.get(e, _ZERO) + c
    return Poly._raw(nvars, {e: c for e, c in t.items() if c})
