"""Sums over input arrays in a budget, by linearity of the sum: constants out, terms apart.

A failure bound over an input array (``(1 - p)·Σ v[j]² / (p·t²)``) and the moment a program's
analysis computes (``p·Σ (v[i]/p)·(v[i]/p) - p²·Σ (v[i]/p)·(v[i]/p)``) are the same number, but
the encoder (:mod:`tamp.core.encode`) reads every ``sum`` as an uninterpreted function of its
bounds and of the values its body reads: ``Σ (v[i]/p)²`` (a function of ``v`` and ``p``) and
``Σ v[j]²`` (a function of ``v``) are unrelated terms and the budget is not shown.

:func:`linear_sums` rewrites every ``sum`` of a formula by the linearity of finite sums,

    Σ_i (c_1·g_1(i) + … + c_k·g_k(i)) = c_1·Σ_i g_1(i) + … + c_k·Σ_i g_k(i),

where each ``c_m`` is the product of the factors of a monomial of the summand that do not read
``i`` (numerator factors, and ``1/d`` for a divisor ``d`` that does not read ``i``) and
``g_m`` is the product of the others, in one canonical order; monomials with the same ``g``
are collected. An ``abs`` of a single monomial is split into the ``abs`` of its factors
(``|c·x·y| = |c|·|x|·|y|``, ``|x/d| = |x|/|d|``) and a pair ``|f|·|f|`` of one monomial is
``f·f``, so that ``Σ |c·v[i]|·|-(c·v[i])|`` and ``c²·Σ v[i]²`` meet. The summands ``g`` then compare as terms: two sums over the same range with
the same ``g`` (up to the bound variable's name) are the same uninterpreted application.

The rewritten obligation is ``G ∧ (F ⇒ φ')`` for an obligation ``φ``, where

* ``G`` says every divisor taken out of a sum is not zero (``a/d = a·(1/d)`` needs ``d ≠ 0``
  in the solver's reading of division: ``a/0`` is an unspecified function of ``a``);
* ``F`` are facts true of the real sums: ``Σ_i g(i) >= 0`` when ``g`` is a product in which
  every factor that is not an ``abs`` occurs an even number of times (a sum of non-negative
  terms, 0 on an empty range);
* ``φ'`` is ``φ`` with every rewritten sum replaced by its linear form.

Theorem: if ``G ∧ (F ⇒ φ')`` is valid under ``requires``, so is ``φ``. Proof: at any state, ``G``
holds, so each identity above holds (a finite sum is linear, and ``a/d = a·(1/d)`` for ``d ≠
0``), so ``φ'`` and ``φ`` have the same truth value; ``F`` holds of the real sums, so ``φ'``
holds. Nothing is assumed about an uninterpreted sum that is not true of the sum it stands for.
"""

from __future__ import annotations

from fractions import Fraction

from lang import ast as A
from lang.walk import free_vars
from lang.walk import substitute as subst

MAX_MONOMIALS = 32  #: a summand whose expansion is larger stays one factor

# (coefficient, numerator factors, divisors that do not read the bound variable)
Mono = tuple[Fraction, tuple[A.Expr, ...], tuple[A.Expr, ...]]

ZERO, ONE = A.num(0), A.num(1)


def _expand(e: A.Expr, i: str, inv: list[A.Expr]) -> list[Mono]:
    """The summand ``e`` as a sum of monomials in its factors (an atom: any factor that is not
    ``+ - *`` or a division). A division by ``d`` free of ``i`` puts ``d``'s factors among the
    monomial's divisors; a division by ``d`` reading ``i`` multiplies by ``1/f`` for each factor
    ``f`` of ``d``, and ``f`` goes to ``inv`` (the rewrite then needs ``f != 0`` all over the range)."""
    if isinstance(e, A.Num):
        return [(e.value, (), ())]
    if isinstance(e, A.Unary) and e.op == "-":
        return [(-c, n, d) for c, n, d in _expand(e.operand, i, inv)]
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        left, right = _expand(e.left, i, inv), _expand(e.right, i, inv)
        if e.op == "-":
            right = [(-c, n, d) for c, n, d in right]
        out = left + right
        if len(out) <= MAX_MONOMIALS:
            return out
    if isinstance(e, A.Binary) and e.op == "*":
        left, right = _expand(e.left, i, inv), _expand(e.right, i, inv)
        if len(left) * len(right) <= MAX_MONOMIALS:
            return [(c1 * c2, n1 + n2, d1 + d2) for c1, n1, d1 in left for c2, n2, d2 in right]
    if isinstance(e, A.Binary) and e.op == "/" and i not in free_vars(e.right):
        return [(c, n, d + tuple(_factors(e.right))) for c, n, d in _expand(e.left, i, inv)]
    if isinstance(e, A.Binary) and e.op == "/":
        fs = _factors(e.right)
        inv.extend(f for f in fs if i in free_vars(f))
        recips = tuple(A.Binary("/", ONE, f) for f in fs if i in free_vars(f))
        outside = tuple(f for f in fs if i not in free_vars(f))
        return [(c, n + recips, d + outside) for c, n, d in _expand(e.left, i, inv)]
    if isinstance(e, A.Call) and e.func == "abs" and len(e.args) == 1:
        inner = _expand(e.args[0], i, inv)
        if len(inner) == 1:  # |c·f_1·…·f_k / (d_1·…)| = |c|·|f_1|·…·|f_k| / (|d_1|·…)
            c, n, d = inner[0]
            return [(abs(c), tuple(_abs(f) for f in n), tuple(_abs(f) for f in d))]
    return [(Fraction(1), (e,), ())]


def _abs(f: A.Expr) -> A.Expr:
    return f if isinstance(f, A.Call) and f.func == "abs" else A.Call("abs", (f,))


def _squares(num: tuple[A.Expr, ...], i: str) -> tuple[A.Expr, ...]:
    """``num`` with each pair ``|f|``, ``|f|`` replaced by ``f``, ``f`` (``|f|² = f²``)."""
    out = list(num)
    a = 0
    while a < len(out):
        f = out[a]
        if isinstance(f, A.Call) and f.func == "abs":
            b = next((b for b in range(a + 1, len(out)) if _key(out[b], i) == _key(f, i)), None)
            if b is not None:
                out[a], out[b] = f.args[0], f.args[0]
        a += 1
    return tuple(out)


def _const(e: A.Expr) -> Fraction | None:
    return e.value if isinstance(e, A.Num) else None


def _cancel(num: tuple[A.Expr, ...], i: str, guarded: set[str]) -> tuple[A.Expr, ...]:
    """``num`` without the pairs ``f``, ``1/f`` for the ``f`` in ``guarded`` (``f·(1/f) = 1``
    where ``f != 0``, which the rewrite's guard requires over the range)."""
    out = list(num)
    again = True
    while again:
        again = False
        for a, r in enumerate(out):
            if not (isinstance(r, A.Binary) and r.op == "/" and _const(r.left) == 1):
                continue
            k = _key(r.right, i)
            if k not in guarded:
                continue
            b = next((b for b, f in enumerate(out) if b != a and _key(f, i) == k), None)
            if b is not None:
                out = [f for n, f in enumerate(out) if n not in (a, b)]
                again = True
                break
    return tuple(out)


def _num(c: Fraction) -> A.Expr:
    if c < 0:
        return A.Unary("-", _num(-c))
    return A.num(int(c)) if c.denominator == 1 else A.num(c)


def _factors(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e]


def _key(e: A.Expr, i: str) -> str:
    return repr(subst(e, {i: A.Var("$i")}))


def _prod(fs) -> A.Expr:
    out: A.Expr | None = None
    for f in fs:
        out = f if out is None else A.Binary("*", out, f)
    return ONE if out is None else out


def _nonneg_product(fs: tuple[A.Expr, ...], i: str) -> bool:
    counts: dict[str, int] = {}
    for f in fs:
        if isinstance(f, A.Call) and f.func == "abs":
            continue
        counts[_key(f, i)] = counts.get(_key(f, i), 0) + 1
    return bool(fs) and all(c % 2 == 0 for c in counts.values())


class _Rewriter:
    def __init__(self) -> None:
        self.guards: list[A.Expr] = []
        self.facts: list[A.Expr] = []
        self.fact_keys: set[str] = set()
        self.changed = False

    def _add(self, xs: list[A.Expr], x: A.Expr) -> None:
        if x not in xs:
            xs.append(x)

    def expr(self, e: A.Expr) -> A.Expr:
        if isinstance(e, A.Sum):
            return self.sum(e)
        if isinstance(e, A.Binary):
            return A.Binary(e.op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, A.Unary):
            return A.Unary(e.op, self.expr(e.operand))
        if isinstance(e, A.Cond):
            return A.Cond(self.expr(e.cond), self.expr(e.then), self.expr(e.other))
        if isinstance(e, A.Call) and e.func in ("abs", "min", "max"):
            return A.Call(e.func, tuple(self.expr(a) for a in e.args))
        return e

    def sum(self, e: A.Sum) -> A.Expr:
        i = e.var
        if i in free_vars(e.lo) | free_vars(e.hi):
            return e
        body = self.expr(e.body) if not any(isinstance(n, A.Sum) for n in A.walk(e.body)) else e.body
        groups: dict[tuple[str, ...], tuple[tuple[A.Expr, ...], list[A.Expr]]] = {}
        inv: list[A.Expr] = []
        monos = _expand(body, i, inv)
        for f in inv:  # the divisors split apart inside the sum: never zero over the range
            self._add(self.guards, A.Quant("forall", i, e.lo, e.hi, e.inclusive, A.Binary("!=", f, ZERO)))
        for c, num0, den in monos:
            num = _squares(_cancel(num0, i, {_key(f, i) for f in inv}) if inv else num0, i)
            inside = tuple(sorted((f for f in num if i in free_vars(f)), key=lambda f: _key(f, i)))
            const: A.Expr = _num(c)
            for f in num:
                if i not in free_vars(f):
                    const = A.Binary("*", const, f)
            for d in den:
                const = A.Binary("/", const, d)
                self._add(self.guards, A.Binary("!=", d, ZERO))
            k = tuple(_key(f, i) for f in inside)
            if k not in groups:
                groups[k] = (inside, [])
            groups[k][1].append(const)
        out: A.Expr | None = None
        for inside, consts in groups.values():
            coef: A.Expr = consts[0]
            for more in consts[1:]:
                coef = A.Binary("+", coef, more)
            s = A.Sum(i, e.lo, e.hi, e.inclusive, _prod(inside))
            sk = f"{e.lo!r} {e.hi!r} {e.inclusive} {_key(s.body, i)}"
            if _nonneg_product(inside, i) and sk not in self.fact_keys:
                self.fact_keys.add(sk)
                self.facts.append(A.Binary(">=", s, ZERO))
            term = A.Binary("*", coef, s)
            out = term if out is None else A.Binary("+", out, term)
        res = out if out is not None else ZERO
        if res != e:
            self.changed = True
        return res


def linear_sums(phi: A.Expr) -> A.Expr | None:
    """``G ∧ (F ⇒ φ')`` of the module docstring for ``phi``, or None when ``phi`` has no sum to
    rewrite (its valid form implies ``phi``: see the theorem above)."""
    rw = _Rewriter()
    new = rw.expr(phi)
    if not rw.changed:
        return None
    for f in reversed(rw.facts):
        new = A.Binary("==>", f, new)
    for g in reversed(rw.guards):
        new = A.Binary("&&", g, new)
    return new
