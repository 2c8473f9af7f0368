"""Compilation of pysmt formulas and weight terms into the internal form used by
the cell enumerator.

Internal Boolean formulas are hash-consed tuples:

* ``True`` / ``False``;
* ``("b", i)``: Boolean variable number ``i``;
* ``("a", j)``: LRA atom number ``j`` (``a_j · x <= b_j``, see :class:`Atom`);
* ``("not", f)``, ``("and", (f, g, …))``, ``("or", (f, g, …))``.

Weights are if-then-else trees: either a :class:`Poly` leaf or
``("ite", cond, then, else)`` with ``cond`` an internal Boolean formula.

Atoms are normalised (first non-zero coefficient is +1, strictness dropped —
it is irrelevant for the measure) so the same hyperplane met twice, possibly
written the other way round, is one atom used with either polarity.  Atoms that
are constant on the domain box are replaced by their truth value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

from pysmt import operators as op

from .poly import Poly


class WMIInputError(ValueError):
    """The formula or weight is outside the supported fragment."""


@dataclass(frozen=True)
class Atom:
    coeffs: Tuple[Fraction, ...]  # a, first non-zero entry is 1
    rhs: Fraction  # b: the atom is  a·x <= b

    def constraint(self, positive: bool):
        """The half-space of the literal as ``(coeffs, rhs)`` meaning ``coeffs·x <= rhs``."""
        if positive:
            return self.coeffs, self.rhs
        return tuple(-c for c in self.coeffs), -self.rhs


# ---------------------------------------------------------------------------
# smart constructors for internal formulas


def mk_not(f):
    if f is True:
        return False
    if f is False:
        return True
    if f[0] == "not":
        return f[1]
    return ("not", f)


def _junction(op, fs, unit, absorbing):
    """The flattened ``op`` ("and" or "or") of ``fs`` without repeats: ``unit`` (True for "and")
    is dropped, ``absorbing`` (False for "and") or a literal next to its negation decides it."""
    out = []
    seen = set()
    for f in fs:
        if f is unit:
            continue
        if f is absorbing:
            return absorbing
        parts = f[1] if f[0] == op else (f,)
        for g in parts:
            if g not in seen:
                seen.add(g)
                out.append(g)
    for g in out:
        if mk_not(g) in seen:
            return absorbing
    if not out:
        return unit
    if len(out) == 1:
        return out[0]
    return (op, tuple(out))


def mk_and(fs):
    return _junction("and", fs, True, False)


def mk_or(fs):
    return _junction("or", fs, False, True)


def mk_ite_w(c, a, b):
    """Weight if-then-else with trivial cases folded."""
    if c is True:
        return a
    if c is False:
        return b
    if a == b:
        return a
    if isinstance(c, tuple) and c[0] == "not":
        return ("ite", c[1], b, a)
    return ("ite", c, a, b)


def simplify(f, assign: Dict[tuple, bool], memo=None):
    """Substitute the literal values in ``assign`` (keys ``("a", j)`` / ``("b", i)``)."""
    if f is True or f is False:
        return f
    if memo is None:
        memo = {}
    r = memo.get(f)
    if r is not None:
        return r
    tag = f[0]
    if tag == "a" or tag == "b":
        v = assign.get(f)
        r = f if v is None else v
    elif tag == "not":
        r = mk_not(simplify(f[1], assign, memo))
    elif tag == "and":
        r = mk_and([simplify(g, assign, memo) for g in f[1]])
    elif tag == "or":
        r = mk_or([simplify(g, assign, memo) for g in f[1]])
    else:
        raise AssertionError(tag)
    memo[f] = r
    return r


def simplify_w(w, assign, memo=None):
    if isinstance(w, Poly):
        return w
    if memo is None:
        memo = {}
    key = id(w)
    r = memo.get(key)
    if r is not None:
        return r[1]
    c = simplify(w[1], assign, memo)
    if c is True:
        r = simplify_w(w[2], assign, memo)
    elif c is False:
        r = simplify_w(w[3], assign, memo)
    else:
        r = mk_ite_w(c, simplify_w(w[2], assign, memo), simplify_w(w[3], assign, memo))
    memo[key] = (w, r)
    return r


def formula_vars(f, acc=None, seen=None):
    """Set of ``("a", j)`` / ``("b", i)`` leaves in f."""
    if acc is None:
        acc = set()
    if seen is None:
        seen = set()
    stack = [f]
    while stack:
        g = stack.pop()
        if g is True or g is False or g in seen:
            continue
        seen.add(g)
        tag = g[0]
        if tag in ("a", "b"):
            acc.add(g)
        elif tag == "not":
            stack.append(g[1])
        else:
            stack.extend(g[1])
    return acc


def weight_vars(w, acc=None, seen=None):
    if acc is None:
        acc = set()
    if seen is None:
        seen = set()
    stack = [w]
    seen_w = set()
    while stack:
        v = stack.pop()
        if isinstance(v, Poly) or id(v) in seen_w:
            continue
        seen_w.add(id(v))
        formula_vars(v[1], acc, seen)
        stack.append(v[2])
        stack.append(v[3])
    return acc


def weight_map(w, fn):
    """Apply ``fn`` to every leaf."""
    if isinstance(w, Poly):
        return fn(w)
    return mk_ite_w(w[1], weight_map(w[2], fn), weight_map(w[3], fn))


def weight_combine(w1, w2, fn):
    """Leafwise ``fn(l1, l2)`` of two ite trees."""
    if isinstance(w1, Poly):
        if isinstance(w2, Poly):
            return fn(w1, w2)
        return mk_ite_w(w2[1], weight_combine(w1, w2[2], fn), weight_combine(w1, w2[3], fn))
    return mk_ite_w(w1[1], weight_combine(w1[2], w2, fn), weight_combine(w1[3], w2, fn))


# ---------------------------------------------------------------------------


class Compiler:
    """Translate pysmt terms over the given real variables (with box bounds)."""

    def __init__(self, real_vars: Sequence, bounds: Sequence[Tuple[Fraction, Fraction]], bool_vars: Sequence = ()):
        self.real_vars = list(real_vars)
        self.real_index = {v: i for i, v in enumerate(self.real_vars)}
        self.n = len(self.real_vars)
        self.bounds = [(Fraction(lo), Fraction(hi)) for lo, hi in bounds]
        self.bool_vars: List = []
        self.bool_index: Dict = {}
        for b in bool_vars:
            self._bool(b)
        self.atoms: List[Atom] = []
        self.atom_index: Dict[Atom, int] = {}
        self._fmemo: Dict = {}
        self._tmemo: Dict = {}

    def _bool(self, s):
        i = self.bool_index.get(s)
        if i is None:
            i = len(self.bool_vars)
            self.bool_vars.append(s)
            self.bool_index[s] = i
        return ("b", i)

    # -- terms -------------------------------------------------------------
    def term(self, t):
        """Real term -> weight tree (ite tree with Poly leaves)."""
        r = self._tmemo.get(t)
        if r is not None:
            return r
        r = self._term(t)
        self._tmemo[t] = r
        return r

    def _term(self, t):
        n = self.n
        nt = t.node_type()
        if nt == op.REAL_CONSTANT or nt == op.INT_CONSTANT:
            return Poly.const(n, Fraction(t.constant_value()))
        if nt == op.SYMBOL:
            if not t.symbol_type().is_real_type():
                raise WMIInputError(f"variable {t} of type {t.symbol_type()} used as a real term")
            i = self.real_index.get(t)
            if i is None:
                raise WMIInputError(f"real variable {t} has no bounds in the domain")
            return Poly.var(n, i)
        if nt == op.PLUS:
            acc = None
            for a in t.args():
                w = self.term(a)
                acc = w if acc is None else weight_combine(acc, w, lambda p, q: p + q)
            return acc
        if nt == op.MINUS:
            a, b = t.args()
            return weight_combine(self.term(a), self.term(b), lambda p, q: p - q)
        if nt == op.TIMES:
            acc = None
            for a in t.args():
                w = self.term(a)
                acc = w if acc is None else weight_combine(acc, w, lambda p, q: p * q)
            return acc
        if nt == op.DIV:
            a, b = t.args()
            wb = self.term(b)
            if not (isinstance(wb, Poly) and wb.is_const() and wb.const_value() != 0):
                raise WMIInputError(f"division by a non-constant or zero term in {t}")
            inv = 1 / wb.const_value()
            return weight_map(self.term(a), lambda p: p.scale(inv))
        if nt == op.POW:
            a, b = t.args()
            wb = self.term(b)
            if not (isinstance(wb, Poly) and wb.is_const()):
                raise WMIInputError(f"non-constant exponent in {t}")
            k = wb.const_value()
            if k.denominator != 1 or k < 0:
                raise WMIInputError(f"exponent must be a non-negative integer in {t}")
            return weight_map(self.term(a), lambda p: p ** int(k))
        if nt == op.ITE:
            c, a, b = t.args()
            return mk_ite_w(self.formula(c), self.term(a), self.term(b))
        if nt == op.TOREAL:
            return self.term(t.arg(0))
        raise WMIInputError(f"unsupported real term {t} (operator {op.op_to_str(nt)})")

    def linear(self, t) -> Poly:
        w = self.term(t)
        if not isinstance(w, Poly):
            raise WMIInputError(f"if-then-else inside an arithmetic atom is not supported: {t}")
        if w.degree() > 1:
            raise WMIInputError(f"non-linear arithmetic atom: {t}")
        return w

    # -- atoms ---------------------------------------------------------------
    def atom_le(self, lhs: Poly, rhs: Poly):
        """Internal formula for ``lhs <= rhs`` (linear)."""
        d = lhs - rhs  # d <= 0
        coeffs = [Fraction(0)] * self.n
        for e, c in d.terms.items():
            if any(e):
                coeffs[e.index(1)] = c
        const = d.const_value()
        # coeffs·x + const <= 0   <=>  coeffs·x <= -const
        b = -const
        lo = hi = Fraction(0)
        for a, (l, h) in zip(coeffs, self.bounds):
            if a > 0:
                lo += a * l
                hi += a * h
            elif a < 0:
                lo += a * h
                hi += a * l
        if hi <= b:
            return True
        if lo >= b:
            return False  # holds at most on a measure-zero face of the box
        piv = next(a for a in coeffs if a)
        s = abs(piv)
        unit = tuple(c / s for c in coeffs)
        b = b / s
        if piv < 0:
            atom = Atom(tuple(-c for c in unit), -b)
            return mk_not(self._atom(atom))
        return self._atom(Atom(unit, b))

    def _atom(self, atom: Atom):
        j = self.atom_index.get(atom)
        if j is None:
            j = len(self.atoms)
            self.atoms.append(atom)
            self.atom_index[atom] = j
        return ("a", j)

    # -- formulas ------------------------------------------------------------
    def formula(self, f):
        r = self._fmemo.get(f)
        if r is not None:
            return r
        r = self._formula(f)
        self._fmemo[f] = r
        return r

    def _formula(self, f):
        nt = f.node_type()
        if nt == op.BOOL_CONSTANT:
            return bool(f.constant_value())
        if nt == op.SYMBOL:
            if not f.symbol_type().is_bool_type():
                raise WMIInputError(f"non-Boolean variable {f} used as a formula")
            return self._bool(f)
        if nt == op.NOT:
            return mk_not(self.formula(f.arg(0)))
        if nt == op.AND:
            return mk_and([self.formula(a) for a in f.args()])
        if nt == op.OR:
            return mk_or([self.formula(a) for a in f.args()])
        if nt == op.IMPLIES:
            a, b = f.args()
            return mk_or([mk_not(self.formula(a)), self.formula(b)])
        if nt == op.IFF:
            a, b = (self.formula(x) for x in f.args())
            return mk_or([mk_and([a, b]), mk_and([mk_not(a), mk_not(b)])])
        if nt == op.ITE:
            c, a, b = (self.formula(x) for x in f.args())
            return mk_or([mk_and([c, a]), mk_and([mk_not(c), b])])
        if nt in (op.LE, op.LT):
            a, b = f.args()
            return self.atom_le(self.linear(a), self.linear(b))
        if nt == op.EQUALS:
            # a = b has measure zero unless it is trivially true
            a, b = f.args()
            d = self.linear(a) - self.linear(b)
            return d.is_zero()
        raise WMIInputError(f"unsupported formula {f} (operator {op.op_to_str(nt)})")
