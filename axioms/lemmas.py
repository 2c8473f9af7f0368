"""Arithmetic lemmas about ``log``, ``exp`` and ``sqrt`` for the prover's SMT queries.

The prover encodes ``log``, ``exp`` and ``sqrt`` as uninterpreted functions on the reals. A UF
knows nothing, which is sound but weak; this library adds *instances* of true facts about
the real functions for the terms that actually occur in a query (no quantifiers, so z3 stays
decidable on them). Each lemma is guarded by its domain condition, so nothing is claimed
about ``log`` of a non-positive number or ``sqrt`` of a negative one (whatever value the
program's semantics gives there, the proof holds for every value).

Facts used (each a textbook property of the natural logarithm, exponential and square root):

=====================  ===========================================================
``log-sign``           a > 0  ⇒  (log a > 0 ⇔ a > 1) ∧ (log a = 0 ⇔ a = 1) ∧ (log a < 0 ⇔ a < 1)
``log-tangent``        a > 0  ⇒  1 - 1/a <= log a <= a - 1
``log-mono``           a > 0 ∧ b > 0  ⇒  (a <= b ⇔ log a <= log b) ∧ (a < b ⇔ log a < log b)
``log-mul``            x > 0 ∧ y > 0  ⇒  log(x·y) = log x + log y
``log-div``            x > 0 ∧ y > 0  ⇒  log(x/y) = log x - log y
``log-exp``            log(exp a) = a
``exp-pos``            exp a > 0 ∧ exp a >= 1 + a
``exp-mono``           a <= b ⇔ exp a <= exp b ; a < b ⇔ exp a < exp b
``exp-zero``           a = 0 ⇒ exp a = 1
``exp-sign``           (exp a > 1 ⇔ a > 0) ∧ (exp a < 1 ⇔ a < 0)   (exp-mono against exp 0 = 1)
``exp-log``            x > 0 ⇒ exp(log x) = x
``sqrt-def``           a >= 0 ⇒ sqrt a >= 0 ∧ sqrt a · sqrt a = a
``sqrt-mono``          a >= 0 ∧ b >= 0 ⇒ (a <= b ⇔ sqrt a <= sqrt b)
``log-eq``             guards ⇒ log a = log b, when a z3 query (nonlinear real arithmetic, no
                       uninterpreted functions needed) proves ``guards ⇒ a = b``; the guards say
                       that every divisor in a and b is non-zero (so ``log(1/(p/n))`` and
                       ``log(n/p)`` become the same value for p, n ≠ 0)
``sum-base``           hi <= lo ⇒ sum(j in lo..hi: e) = 0
``sum-step``           hi > lo ⇒ sum(j in lo..hi: e) = sum(j in lo..hi-1: e) + e[hi-1/j]
``sum-first``          hi > lo ⇒ sum(j in lo..hi: e) = e[lo/j] + sum(j in lo+1..hi: e)
``sum-range``          L <= e <= H for every value of j and of what e reads (read off e's syntax:
                       a constant, a conditional between such, +, -, a constant factor) ⇒
                       (hi > lo ⇒ (hi - lo)·L <= sum(j in lo..hi: e) <= (hi - lo)·H): a sum of
                       0/1 indicators is between 0 and the length of its range
``sorted-mono``        (forall j: lo <= j < hi ⇒ a[j] <= a[j+1]) ⇒ (forall i, k: lo <= i <= k <= hi
                       ⇒ a[i] <= a[k]), also for ``<``, ``>=``, ``>`` and an offset index
                       (``a[j-1] <= a[j]``), for each closed quantifier of that shape in a query
                       (:func:`sorted_lemma`; true by induction on k - i)
``sum-mono``           lo = lo' ∧ hi = hi' ∧ (∀j. lo <= j < hi ⇒ e(j) <= e'(j)) ⇒
                       sum(j in lo..hi: e) <= sum(j in lo'..hi': e') (a finite sum is monotone in its
                       body; :func:`sum_order_lemmas`, with ``sum-sign`` the sign of a sum of squares or
                       of products of non-negatives, e.g. Σ(q - q²) <= Σq, so E[X(X-1)] <= E[X]²)
``sum-span``           lo <= h ⇒ sum(j in lo..h+c: e) = sum(j in lo..h: e) + e[h/j] + … + e[h+c-1/j],
                       and h <= hi ⇒ sum(j in h-c..hi: e) = e[h-c/j] + … + e[h-1/j] + sum(j in h..hi: e),
                       for two sums of one summand in a query whose ends differ by a literal
                       2 <= c <= ``MAX_SPAN`` (a loop whose counter moves by c)
``harmonic-*``,        closed forms of sums of known shapes (harmonic bounds by log, telescoping,
``telescoping``, …     arithmetic, geometric, shift counts mod L), guarded by their side conditions:
                       :mod:`axioms.sum_bounds` (:func:`closed_form_lemmas`); their log/exp terms
                       get the lemmas above too
=====================  ===========================================================

``log-mul``/``log-div`` introduce ``log x``/``log y``; the closure is taken once (one round),
which keeps the number of instances quadratic in the number of terms at most. ``log-mono``
is instantiated only for pairs of *distinct* log arguments (arguments proved equal by
``log-eq`` are one value), at most ``MAX_PAIR_TERMS`` of them. ``sum(…)`` terms are the
encoder's opaque sum functions (:meth:`tamp.core.encode.Encoder.sum_info`); their two
definition lemmas are instantiated once for every sum application in the query (one
unfolding step at either end, which is what a loop step ``i := i + 1`` or, counting down,
``i := i - 1`` needs). A sum inside a quantifier whose body reads the quantified variable
(``forall b in 0..m: cnt[b] == sum(j in 0..i: x[j] == b ? 1 : 0)``) gets the same lemmas
stated for every value of the arguments that read it (``forall`` over a placeholder,
:func:`sum_placeholder`): they are the sum's definition, true whatever its body reads.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import z3

from axioms.powers import power_lemmas
from lang import ast as A
from tamp.core.validity import check_sat
from tamp.core.z3context import on_new_context
from tamp.core.z3expr import to_real

from .sum_bounds import instances

MAX_PAIR_TERMS = 24
MAX_SPAN = 8


def _is(t, name):
    return z3.is_app(t) and t.decl().name() == name and t.num_args() == 1


def _arith_parts(a, kind):
    """``a`` = x*y (kind "*") or x/y (kind "/") as (x, y), else None."""
    if not z3.is_app(a) or a.num_args() != 2:
        return None
    k = a.decl().kind()
    if kind == "*" and k == z3.Z3_OP_MUL:
        return a.arg(0), a.arg(1)
    if kind == "/" and k == z3.Z3_OP_DIV:
        return a.arg(0), a.arg(1)
    return None


_real = to_real


def _divisors(t) -> List[z3.ExprRef]:
    """The divisor of every real division inside ``t``."""
    out, seen, stack = [], set(), [t]
    while stack:
        x = stack.pop()
        if x.get_id() in seen or not z3.is_app(x):
            continue
        seen.add(x.get_id())
        if x.decl().kind() == z3.Z3_OP_DIV and x.num_args() == 2:
            out.append(x.arg(1))
        stack.extend(x.children())
    return out


_EQ_CACHE: Dict[Tuple[int, int], list] = {}
on_new_context(_EQ_CACHE.clear)  # its terms belong to one z3 context


def equal_where_defined(a: z3.ExprRef, b: z3.ExprRef, timeout_ms: int = 300) -> Optional[z3.BoolRef]:
    """The guard under which ``a = b`` was *proved* by z3 (every divisor non-zero), else None.

    The proof is a z3 ``unsat`` of ``guards ∧ a ≠ b``; ``sat``/``unknown`` give None.
    Results are cached per pair of terms (structural hash, then exact comparison)."""
    bucket = _EQ_CACHE.setdefault((a.hash(), b.hash()), [])
    for a2, b2, guard in bucket:
        if a2.eq(a) and b2.eq(b):
            return guard
    if differ_at_a_point(a, b):  # most pairs asked about differ: no solver query for those
        bucket.append((a, b, None))
        return None
    guards = [d != 0 for d in _divisors(a) + _divisors(b)]
    guard = z3.And(*guards) if guards else z3.BoolVal(True)
    result = guard if check_sat([guard, a != b], budget_ms=timeout_ms) == z3.unsat else None
    if len(_EQ_CACHE) > 20000:
        _EQ_CACHE.clear()
        bucket = _EQ_CACHE.setdefault((a.hash(), b.hash()), [])
    bucket.append((a, b, result))
    return result


#: the values the variables take at the points of :func:`differ_at_a_point` (two points; the
#: k-th variable in name order gets the k-th value, cyclically)
_POINT_VALUES = (
    (Fraction(7, 3), Fraction(5, 11), Fraction(13, 2), Fraction(3, 17), Fraction(19, 5), Fraction(2, 23)),
    (Fraction(11, 7), Fraction(29, 3), Fraction(1, 13), Fraction(31, 4), Fraction(6, 37), Fraction(41, 9)),
)


def differ_at_a_point(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """Whether ``a`` and ``b`` (arithmetic terms over integer and real variables) take different
    values at one of two fixed points, both evaluated exactly: then they are not equal wherever
    both are defined, and :func:`equal_where_defined` needs no solver. False when a term reads
    anything but variables and arithmetic (a function, an array), or when no point gives both a
    rational value (a division by zero there, an irrational root).

    >>> x, n = z3.Real("x"), z3.Int("n")
    >>> differ_at_a_point(z3.ToReal(2 * n) / x, z3.RealVal(2) / x)
    True
    >>> differ_at_a_point(1 / (x / z3.ToReal(2 * n)), z3.ToReal(2 * n) / x)
    False
    """
    leaves: Dict[str, z3.ExprRef] = {}
    stack, seen = [a, b], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if not z3.is_app(t):
            return False
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if not (z3.is_int(t) or z3.is_real(t)):
                return False
            leaves[t.decl().name()] = t
        elif t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            return False  # a function application: its value is not fixed by the point
        stack.extend(t.children())
    names = sorted(leaves)
    for values in _POINT_VALUES:
        sub = []
        for k, name in enumerate(names):
            v = values[k % len(values)]
            t = leaves[name]
            sub.append((t, z3.IntVal(v.numerator + v.denominator) if z3.is_int(t) else z3.RealVal(str(v))))
        va, vb = (_exact(z3.simplify(z3.substitute(x, *sub)) if sub else z3.simplify(x)) for x in (a, b))
        if va is not None and vb is not None and va != vb:
            return True
    return False


def _exact(v: z3.ExprRef) -> Optional[Fraction]:
    """The value of a numeral (integer or rational), else None."""
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    if z3.is_rational_value(v):
        return v.as_fraction()
    return None


SUM_PLACEHOLDER = "sum$arg"


def sum_placeholder(k: int, sort) -> z3.ExprRef:
    """The stand-in for argument ``k`` of a sum application that reads a quantified variable
    (:func:`axioms.terms.transcendental_apps`): lemmas mentioning it are stated for all its
    values (:func:`_for_all_values`)."""
    return z3.Const(f"{SUM_PLACEHOLDER}{k}", sort)


def _placeholders(t) -> List[z3.ExprRef]:
    """The placeholder arguments of the sum application ``t``."""
    return [a for a in t.children() if z3.is_const(a) and a.decl().name().startswith(SUM_PLACEHOLDER)]


def _for_all_values(lems: List[Tuple[str, z3.BoolRef]], holes: List[z3.ExprRef]) -> List[Tuple[str, z3.BoolRef]]:
    """``lems`` for every value of the placeholders ``holes`` (``forall``): the sum lemmas are the
    definition of a sum, true whatever values its body reads, so each holds universally."""
    if not holes:
        return lems
    return [(name, z3.ForAll(holes, lem)) for name, lem in lems]


def _is_sum(t, enc) -> bool:
    info = getattr(enc, "sum_info", None)
    return z3.is_app(t) and info is not None and info(t.decl()) is not None


def sum_lemmas(t, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-base``, ``sum-step`` and ``sum-first`` for one application
    ``t = sumK(lo, hi, free values…)``."""
    holes = _placeholders(t)
    if holes:
        return _for_all_values(_sum_lemmas(t, enc), holes)
    return _sum_lemmas(t, enc)


def _sum_lemmas(t, enc) -> List[Tuple[str, z3.BoolRef]]:
    expr, names = enc.sum_info(t.decl())
    lo, hi, vals = t.arg(0), t.arg(1), [t.arg(k) for k in range(2, t.num_args())]
    out = [("sum-base", z3.Implies(hi <= lo, t == 0))]
    rng = summand_range(expr.body)
    if rng is not None:
        low, high = (z3.RealVal(v) for v in rng)
        n = z3.ToReal(hi - lo)
        out.append(("sum-range", z3.Implies(hi > lo, z3.And(n * low <= t, t <= n * high))))

    def term_at(k):
        env = dict(zip(names, vals))
        env[expr.var] = k
        return _real(enc.expr(expr.body, env))

    try:  # a body the encoder cannot express: no unfolding lemmas (sound: fewer facts)
        prev, nxt = z3.simplify(hi - 1), z3.simplify(lo + 1)
        last, first = term_at(prev), term_at(lo)
    except Exception:
        return out
    out.append(("sum-step", z3.Implies(hi > lo, t == t.decl()(lo, prev, *vals) + last)))
    out.append(("sum-first", z3.Implies(hi > lo, t == first + t.decl()(nxt, hi, *vals))))
    return out


def summand_range(e) -> Optional[Tuple[Fraction, Fraction]]:
    """Constants (L, H) with L <= e <= H whatever values ``e`` reads, read off its syntax alone:
    a numeric literal, ``c ? a : b`` (the hull of a's and b's), ``-a``, ``a + b``, ``a - b``,
    ``min``/``max``/``abs`` of such, and a product with a literal; None for anything else
    (a variable, an array element: no bound without more facts). ``x[j] > 0 ? 1 : 0`` is in
    [0, 1]."""
    if isinstance(e, A.Num):
        return e.value, e.value
    if isinstance(e, A.Cond):
        a, b = summand_range(e.then), summand_range(e.other)
        if a is None or b is None:
            return None
        return min(a[0], b[0]), max(a[1], b[1])
    if isinstance(e, A.Unary) and e.op == "-":
        a = summand_range(e.operand)
        return None if a is None else (-a[1], -a[0])
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
        a, b = summand_range(e.left), summand_range(e.right)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a[0] + b[0], a[1] + b[1]
        if e.op == "-":
            return a[0] - b[1], a[1] - b[0]
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if isinstance(e, A.Call) and e.func in ("min", "max") and len(e.args) == 2:
        a, b = summand_range(e.args[0]), summand_range(e.args[1])
        if a is None or b is None:
            return None
        f = min if e.func == "min" else max
        return f(a[0], b[0]), f(a[1], b[1])
    if isinstance(e, A.Call) and e.func == "abs" and len(e.args) == 1:
        a = summand_range(e.args[0])
        if a is None:
            return None
        lo = Fraction(0) if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1]))
        return lo, max(abs(a[0]), abs(a[1]))
    return None


def span_lemmas(sums, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-span`` for every pair of applications of one sum function with the same free
    values whose lower (or upper) ends are equal and whose other ends differ by a literal
    2..``MAX_SPAN``."""
    out: List[Tuple[str, z3.BoolRef]] = []
    for a in sums:
        for b in sums:
            if a.eq(b) or not a.decl().eq(b.decl()):
                continue
            if any(not a.arg(k).eq(b.arg(k)) for k in range(2, a.num_args())):
                continue
            expr, names = enc.sum_info(a.decl())
            vals = [a.arg(k) for k in range(2, a.num_args())]

            def term_at(k, expr=expr, names=names, vals=vals):
                env = dict(zip(names, vals))
                env[expr.var] = z3.simplify(k)
                return _real(enc.expr(expr.body, env))

            lo_a, hi_a, lo_b, hi_b = a.arg(0), a.arg(1), b.arg(0), b.arg(1)
            found: List[Tuple[str, z3.BoolRef]] = []
            try:
                if z3.is_int_value(z3.simplify(lo_a - lo_b)) and z3.simplify(lo_a - lo_b).as_long() == 0:
                    c = z3.simplify(hi_a - hi_b)
                    if z3.is_int_value(c) and 2 <= c.as_long() <= MAX_SPAN:  # a = b + e[hi_b] + …
                        extra = [term_at(hi_b + r) for r in range(c.as_long())]
                        found.append(("sum-span", z3.Implies(lo_b <= hi_b, a == b + z3.Sum(*extra))))
                if z3.is_int_value(z3.simplify(hi_a - hi_b)) and z3.simplify(hi_a - hi_b).as_long() == 0:
                    c = z3.simplify(lo_b - lo_a)
                    if z3.is_int_value(c) and 2 <= c.as_long() <= MAX_SPAN:  # a = e[lo_a] + … + b
                        extra = [term_at(lo_a + r) for r in range(c.as_long())]
                        found.append(("sum-span", z3.Implies(lo_b <= hi_b, a == z3.Sum(*extra) + b)))
                out.extend(_for_all_values(found, _placeholders(a)))
            except Exception:  # a body the encoder cannot express: no span lemma (sound: fewer facts)
                continue
    return out


_FLIP = {z3.Z3_OP_LE: z3.Z3_OP_GE, z3.Z3_OP_GE: z3.Z3_OP_LE, z3.Z3_OP_LT: z3.Z3_OP_GT, z3.Z3_OP_GT: z3.Z3_OP_LT}
_CMP = {
    z3.Z3_OP_LE: lambda a, b: a <= b,
    z3.Z3_OP_GE: lambda a, b: a >= b,
    z3.Z3_OP_LT: lambda a, b: a < b,
    z3.Z3_OP_GT: lambda a, b: a > b,
}


def _int_offset(t, v) -> Optional[int]:
    """c when ``t`` is ``v + c`` (c an integer literal, 0 for ``v`` itself), else None."""
    d = z3.simplify(t - v)
    return d.as_long() if z3.is_int_value(d) else None


def sorted_shape(q) -> Optional[tuple]:
    """``(array, first, last, op)`` when ``q`` is ``forall j: lo <= j < hi ==> a[j + c] op
    a[j + c + 1]`` (or ``j <= hi``; either side may come first; ``op`` one of ``<= < >= >``):
    neighbours in order over the indices ``first = lo + c`` .. ``last = hi + c`` (inclusive);
    else None. ``q`` must be closed (no variable bound outside it)."""
    if not (z3.is_quantifier(q) and q.is_forall() and q.num_vars() == 1):
        return None
    if q.var_sort(0) != z3.IntSort():
        return None
    v = z3.Int("sorted$j")
    body = z3.substitute_vars(q.body(), v)
    if not (z3.is_app_of(body, z3.Z3_OP_IMPLIES) and z3.is_app_of(body.arg(0), z3.Z3_OP_AND)):
        return None
    rng, cmp = body.arg(0), body.arg(1)
    lo = hi = None
    for part in rng.children():
        if z3.is_app_of(part, z3.Z3_OP_LE) and part.arg(1).eq(v):
            lo = part.arg(0)
        elif z3.is_app_of(part, z3.Z3_OP_LE) and part.arg(0).eq(v):
            hi = part.arg(1) + 1
        elif z3.is_app_of(part, z3.Z3_OP_LT) and part.arg(0).eq(v):
            hi = part.arg(1)
        else:
            return None
    if lo is None or hi is None or not z3.is_app(cmp) or cmp.decl().kind() not in _CMP:
        return None
    op = cmp.decl().kind()
    left, right = cmp.arg(0), cmp.arg(1)
    if not (z3.is_select(left) and z3.is_select(right) and left.arg(0).eq(right.arg(0))):
        return None
    a, t1, t2 = left.arg(0), left.arg(1), right.arg(1)
    c1, c2 = _int_offset(t1, v), _int_offset(t2, v)
    if c1 is None or c2 is None:
        return None
    if c2 - c1 == -1:  # a[j + 1] >= a[j]: the same order read from the right
        c1, c2, op = c2, c1, _FLIP[op]
    if c2 - c1 != 1:
        return None
    return a, z3.simplify(lo + c1), z3.simplify(hi + c1), op


def sorted_lemma(q) -> List[Tuple[str, z3.BoolRef]]:
    """``sorted-mono`` for a quantifier of :func:`sorted_shape`'s form: neighbours in order
    imply every pair in order, ``q ⇒ forall i, k: first <= i <= k <= last ⇒ a[i] op a[k]`` (for
    ``<``/``>``, ``i < k``). True by induction on ``k - i`` (the base is ``q`` at ``k - 1``, or
    reflexivity for ``<=``/``>=``; the step is ``q`` at ``k - 1`` and transitivity), which the
    solver cannot do itself: binary search over a sorted array needs it."""
    shape = sorted_shape(q)
    if shape is None:
        return []
    a, first, last, op = shape
    i, k = z3.Int("sorted$i"), z3.Int("sorted$k")
    strict = op in (z3.Z3_OP_LT, z3.Z3_OP_GT)
    order = i < k if strict else i <= k
    mono = z3.ForAll([i, k], z3.Implies(z3.And(first <= i, order, k <= last), _CMP[op](a[i], a[k])))
    return [("sorted-mono", z3.Implies(q, mono))]


def closed_form_instances(sums, enc) -> list:
    """``(sum application, name, lemma, parameters)`` for the closed-form bounds of
    :mod:`axioms.sum_bounds` (harmonic, telescoping, arithmetic, geometric, shift counts) of the
    sum applications ``sums`` not inside a quantifier."""
    out: list = []
    for t in sums:
        if _placeholders(t):
            continue
        expr, names = enc.sum_info(t.decl())
        env = dict(zip(names, [t.arg(k) for k in range(2, t.num_args())]))

        def term(x, env=env):
            return enc.expr(x, env)

        try:
            found = instances(t, expr.body, expr.var, term, enc.log, enc.exp)
        except Exception:  # noqa: BLE001 - a body the encoder cannot express: no instance (fewer facts)
            continue
        out.extend((t, name, lem, ps) for name, lem, ps in found)
    return out


def closed_form_lemmas(sums, enc) -> List[Tuple[str, z3.BoolRef]]:
    """The instances of :func:`closed_form_instances` as ``(name, lemma)`` pairs."""
    return [(name, lem) for _t, name, lem, _ps in closed_form_instances(sums, enc)]


def transcendental_subterms(fs) -> List[z3.ExprRef]:
    """The log/exp applications inside the formulas ``fs`` (each once)."""
    seen: Dict[int, z3.ExprRef] = {}
    visited = set()
    todo = list(fs)
    while todo:
        e = todo.pop()
        if not z3.is_app(e) or e.get_id() in visited:
            continue
        visited.add(e.get_id())
        if (_is(e, "log") or _is(e, "exp")) and e.get_id() not in seen:
            seen[e.get_id()] = e
        todo.extend(e.children())
    return list(seen.values())


def lemma_instances(apps, enc, closed=closed_form_lemmas) -> List[Tuple[str, z3.BoolRef]]:
    """Instances of the lemmas above for the applications ``apps`` (log/exp/sqrt and the
    encoder's sum functions).

    ``closed(sums, enc)`` gives the closed-form sum bounds (:func:`closed_form_lemmas`; the
    certificate checker passes its own, which re-derives each instance,
    :mod:`tamp.certificate.sum_bound_check`).

    ``enc`` supplies the uninterpreted functions (``enc.log``, ``enc.exp``, ``enc.sqrt``)."""
    out: List[Tuple[str, z3.BoolRef]] = []
    for q in apps:
        if z3.is_quantifier(q):
            out.extend(sorted_lemma(q))
    apps = [t for t in apps if not z3.is_quantifier(t)]
    sums = [t for t in apps if _is_sum(t, enc)]
    for t in sums:
        out.extend(sum_lemmas(t, enc))
    if len(sums) > 1:
        out.extend(span_lemmas(sums, enc))
    closed_found = closed(sums, enc)
    out.extend(closed_found)
    # the log/exp terms the closed forms introduce get the lemmas below too
    apps = apps + [
        a for a in transcendental_subterms([lem for _n, lem in closed_found]) if not any(a.eq(b) for b in apps)
    ]
    logs = [t for t in apps if _is(t, "log")]
    exps = [t for t in apps if _is(t, "exp")]
    sqrts = [t for t in apps if _is(t, "sqrt")]
    ids = {t.get_id() for t in logs}

    # one round of closure under log-mul / log-div
    for t in list(logs):
        a = t.arg(0)
        for kind in ("*", "/"):
            parts = _arith_parts(a, kind)
            if parts is None:
                continue
            x, y = _real(parts[0]), _real(parts[1])
            lx, ly = enc.log(x), enc.log(y)
            for n in (lx, ly):
                if n.get_id() not in ids:
                    ids.add(n.get_id())
                    logs.append(n)
            rhs = lx + ly if kind == "*" else lx - ly
            out.append((f"log-{'mul' if kind == '*' else 'div'}", z3.Implies(z3.And(x > 0, y > 0), t == rhs)))

    for t in logs:
        a = t.arg(0)
        if _is(a, "exp"):  # also for the logs the closure added: log(1/exp(a)) needs log(exp(a)) = a
            out.append(("log-exp", t == a.arg(0)))
        out.append(
            ("log-sign", z3.Implies(a > 0, z3.And((t > 0) == (a > 1), (t == 0) == (a == 1), (t < 0) == (a < 1))))
        )
        out.append(("log-tangent", z3.Implies(a > 0, z3.And(t <= a - 1, t * a >= a - 1))))
    # log-eq: one representative per class of provably equal arguments
    reps: List[z3.ExprRef] = []
    for t in logs:
        for r in reps:
            g = equal_where_defined(t.arg(0), r.arg(0))
            if g is not None:
                out.append(("log-eq", z3.Implies(g, t == r)))
                break
        else:
            reps.append(t)
    pl = reps[:MAX_PAIR_TERMS]
    for i in range(len(pl)):
        for j in range(i + 1, len(pl)):
            a, b = pl[i].arg(0), pl[j].arg(0)
            la, lb = pl[i], pl[j]
            out.append(
                (
                    "log-mono",
                    z3.Implies(
                        z3.And(a > 0, b > 0),
                        z3.And(
                            (a <= b) == (la <= lb), (a < b) == (la < lb), (b <= a) == (lb <= la), (b < a) == (lb < la)
                        ),
                    ),
                )
            )

    for t in exps:
        a = t.arg(0)
        out.append(("exp-pos", z3.And(t > 0, t >= 1 + a)))
        out.append(("exp-zero", z3.Implies(a == 0, t == 1)))
        out.append(("exp-sign", z3.And((t > 1) == (a > 0), (t < 1) == (a < 0))))
        if _is(a, "log"):
            out.append(("exp-log", z3.Implies(a.arg(0) > 0, t == a.arg(0))))
    pe = exps[:MAX_PAIR_TERMS]
    for i in range(len(pe)):
        for j in range(i + 1, len(pe)):
            a, b = pe[i].arg(0), pe[j].arg(0)
            ea, eb = pe[i], pe[j]
            out.append(
                (
                    "exp-mono",
                    z3.And((a <= b) == (ea <= eb), (a < b) == (ea < eb), (b <= a) == (eb <= ea), (b < a) == (eb < ea)),
                )
            )

    for t in sqrts:
        a = t.arg(0)
        out.append(("sqrt-def", z3.Implies(a >= 0, z3.And(t >= 0, t * t == a))))
    ps = sqrts[:MAX_PAIR_TERMS]
    for i in range(len(ps)):
        for j in range(i + 1, len(ps)):
            a, b = ps[i].arg(0), ps[j].arg(0)
            sa, sb = ps[i], ps[j]
            out.append(
                (
                    "sqrt-mono",
                    z3.Implies(z3.And(a >= 0, b >= 0), z3.And((a <= b) == (sa <= sb), (b <= a) == (sb <= sa))),
                )
            )
    return out


def product_lemmas(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """Facts for products of probabilities (:mod:`tamp.prover.expectation.prove`), instantiated for
    pairs of ``exp`` terms of a query — not part of :func:`lemma_instances`, which every prover
    query pays for; the expectation engine and its certificate checker add these themselves.

    =====================  ===========================================================
    ``exp-add``            exp a = exp b · exp(a - b)     (exp(x + y) = exp x · exp y)
    ``exp-pos``            exp(a - b) > 0 ∧ exp(a - b) >= 1 + (a - b)   (so 1 - s <= exp(-s))
    ``exp-log``            x > 0 ⇒ exp(a - b) = x, when a - b is log x

    ``sum-pointwise``      lo = lo' ∧ hi = hi' ∧ (∀j. lo <= j < hi ⇒ e(j) = e'(j)) ⇒
                           sum(j in lo..hi: e) = sum(j in lo'..hi': e')
    ``sum-const``          lo <= hi ∧ (∀j. lo <= j < hi ⇒ e(j) = v) ⇒ sum(j in lo..hi: e) = v·(hi - lo),
                           v ∈ {0, 1} (a count of a test that holds nowhere, or everywhere)
    ``sum-sign``           (∀j. lo <= j < hi ⇒ e(j) >= 0) ⇒ sum(j in lo..hi: e) >= 0 (the expected
                           increments left of a count or a sum of non-negative terms, Markov's
                           inequality in :mod:`tamp.prover.expectation.moments`)
    =====================  ===========================================================

    With them a solver sees that one more factor ``(1 - s)`` fits between ``exp(-s·m)`` and
    ``exp(-s·(m + 1))``: exp(-s·(m+1)) = exp(-s·m)·exp(-s) >= exp(-s·m)·(1 - s); and that the
    chance ``sum(u in 0..=n-1: x[u] == 1 ? 1 : 0)/n`` that a uniform index hits a marked cell is
    the ``sum(j in 0..n: x[j])`` a ``requires`` speaks of when every x[j] is 0 or 1
    (:func:`pointwise_lemmas`)."""
    exps = [t for t in apps if _is(t, "exp")][:MAX_PAIR_TERMS]
    out: List[Tuple[str, z3.BoolRef]] = pointwise_lemmas(apps, enc)
    diffs = []  # (exp(d), d) for the factors below: axioms.powers reads several misses off them
    for i in range(len(exps)):
        for j in range(len(exps)):
            if i == j:
                continue
            a, b = exps[i].arg(0), exps[j].arg(0)
            d = z3.simplify(a - b, som=True)  # a sum of monomials: -(m - 1)·L - -(m·L) is L
            ed = enc.exp(d)
            diffs.append((ed, d))
            out.append(("exp-add", exps[i] == exps[j] * ed))
            out.append(("exp-pos", z3.And(ed > 0, ed >= 1 + d)))
            if _is(d, "log"):  # exp(log x) = x: one factor 2 between 2^-(m+1) and 2^-m
                out.append(("exp-log", z3.Implies(d.arg(0) > 0, ed == d.arg(0))))
    return out + power_lemmas(exps, diffs)  # exp-prod, exp-neg, exp-pow (axioms.powers)


MAX_POINTWISE = 8  # the most sum applications of a query compared pairwise


def _query_sums(apps, enc) -> list:
    """The sum applications of a query that lemmas may compare (at most :data:`MAX_POINTWISE`):
    not inside quantifiers (placeholder arguments), encoded as sums."""
    sums = [t for t in apps if not z3.is_quantifier(t) and _is_sum(t, enc) and not _placeholders(t)]
    return sums[:MAX_POINTWISE]


def _sum_body_at(t, enc, j):
    """The summand of the sum application ``t`` at index ``j`` (a z3 real; raises when the
    encoder cannot express the body)."""
    expr, names = enc.sum_info(t.decl())
    env = dict(zip(names, [t.arg(k) for k in range(2, t.num_args())]))
    env[expr.var] = j
    return _real(enc.expr(expr.body, env))


def pointwise_lemmas(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-const`` and ``sum-sign`` for each sum application of a query, and ``sum-pointwise`` for each pair
    of them with different bodies:
    two sums over the same range whose summands agree at every index of it are equal (the
    definition of a finite sum; the premise is left for the solver to prove from the
    hypotheses, e.g. ``x[j] == 1 ? 1 : 0`` is ``x[j]`` where ``forall j: x[j] == 0 || x[j] ==
    1``). Sums inside quantifiers (placeholder arguments) and bodies the encoder cannot
    express are skipped (fewer facts, still sound)."""
    sums = _query_sums(apps, enc)
    out: List[Tuple[str, z3.BoolRef]] = []
    j = z3.Int("pointwise$j")

    def body_at(t):
        return _sum_body_at(t, enc, j)

    for t in sums:  # sum-const: a summand that is 0 (or 1) everywhere on the range
        try:
            e = body_at(t)
        except Exception:  # noqa: BLE001 - not expressible: no lemma (fewer facts)
            continue
        lo, hi = t.arg(0), t.arg(1)
        for v in (0, 1):
            every = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), e == v))
            out.append(("sum-const", z3.Implies(z3.And(lo <= hi, every), t == v * _real(hi - lo))))
        # sum-sign: a sum of summands none of which is negative is not negative
        signs = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), e >= 0))
        out.append(("sum-sign", z3.Implies(signs, t >= 0)))
    for a in range(len(sums)):
        for b in range(a + 1, len(sums)):
            s1, s2 = sums[a], sums[b]
            if s1.decl().eq(s2.decl()):
                continue  # one function: equal arguments already give equal values
            try:
                e1, e2 = body_at(s1), body_at(s2)
            except Exception:  # noqa: BLE001 - not expressible: no lemma (fewer facts)
                continue
            lo, hi = s1.arg(0), s1.arg(1)
            same = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), e1 == e2))
            premise = z3.And(lo == s2.arg(0), hi == s2.arg(1), same)
            out.append(("sum-pointwise", z3.Implies(premise, s1 == s2)))
    return out


def sum_order_lemmas(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-mono`` for each ordered pair of sum applications of a query with different bodies:
    ``lo = lo' ∧ hi = hi' ∧ (∀j. lo <= j < hi ⇒ e(j) <= e'(j)) ⇒ sum(j in lo..hi: e) <= sum(j in
    lo'..hi': e')``.

    Sound: a finite sum over one range is monotone in its summand (add the inequalities index by
    index); the premise, pointwise order on the range, is left to the solver to prove from the
    hypotheses (``requires forall`` facts, or arithmetic alone: ``q - q·q <= q`` as ``q·q >= 0``).
    With ``sum-sign`` (:func:`pointwise_lemmas`) this gives the textbook finishing step of the
    union bound over pairs, ``Σ_{i<j} p_i p_j = ((Σp)² - Σp²)/2 <= (Σp)²/2``. Sums inside
    quantifiers (placeholder arguments) and bodies the encoder cannot express are skipped
    (fewer facts, still sound). Kept apart from :func:`pointwise_lemmas` (which every
    expectation query pays for): the linearity engine and its checker add it."""
    sums = _query_sums(apps, enc)
    out: List[Tuple[str, z3.BoolRef]] = []
    j = z3.Int("pointwise$j")

    def body_at(t):
        return _sum_body_at(t, enc, j)

    bodies = {}
    for t in sums:
        try:
            bodies[t.get_id()] = body_at(t)
        except Exception:  # noqa: BLE001 - not expressible: no lemma (fewer facts)
            continue
    for s1 in sums:
        for s2 in sums:
            if s1.decl().eq(s2.decl()) or s1.get_id() not in bodies or s2.get_id() not in bodies:
                continue
            lo, hi = s1.arg(0), s1.arg(1)
            below = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), bodies[s1.get_id()] <= bodies[s2.get_id()]))
            premise = z3.And(lo == s2.arg(0), hi == s2.arg(1), below)
            out.append(("sum-mono", z3.Implies(premise, s1 <= s2)))
    return out


def cap_lemmas(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """``sum-cap`` for each sum application of a query: ``lo <= hi ∧ (∀j. lo <= j < hi ⇒ e(j) <=
    1) ⇒ sum(j in lo..hi: e) <= hi - lo``, with ``sum-sign`` (:func:`pointwise_lemmas`: a sum of
    non-negative terms is not negative, so the square root of a sum of squares is defined).

    Sound: a finite sum of ``hi - lo`` terms each at most 1 is at most ``hi - lo`` (add the
    inequalities index by index); the premise is left to the solver to prove from the hypotheses
    (``requires forall j in 0..n * m: a[j] == 0 || a[j] == 1`` gives ``a[i * m + j]² <= 1`` for
    the indices of one row). It is what Hoeffding's aggregate width ``Σ (2·a_j)²`` of a row of
    signs weighted by 0/1 (or [0, 1]) input entries needs to be at most ``4·m``. Not part of
    :func:`lemma_instances`: the concentration engine adds it (and its checker, for a certificate
    that says so) only in the pass that reads margins off the postcondition. Sums inside
    quantifiers and bodies the encoder cannot express are skipped (fewer facts, still sound)."""
    out: List[Tuple[str, z3.BoolRef]] = []
    j = z3.Int("pointwise$j")
    for t in _query_sums(apps, enc):
        try:
            e = _sum_body_at(t, enc, j)
        except Exception:  # noqa: BLE001 - not expressible: no lemma (fewer facts)
            continue
        lo, hi = t.arg(0), t.arg(1)
        every = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), e <= 1))
        out.append(("sum-cap", z3.Implies(z3.And(lo <= hi, every), t <= _real(hi - lo))))
        signs = z3.ForAll([j], z3.Implies(z3.And(lo <= j, j < hi), e >= 0))
        out.append(("sum-sign", z3.Implies(signs, t >= 0)))
    return out
