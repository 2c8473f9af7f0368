"""The first and second moments of what a program accumulates, by linearity of expectation.

A program analysis below the engines (like :mod:`.sums`): the linearity prover
(:mod:`tamp.prover.linearity`) and its certificate checker (:mod:`tamp.certificate.lin_checker`)
both derive the moments from the program with it, the checker never from the prover's result.

A small abstract interpretation of the program's AST gives every variable at exit one of

* ``Det(e)``: a deterministic value, ``e`` over the inputs;
* ``Lin(coef, const, base)``: ``coef·X + const`` with ``coef``, ``const`` deterministic and ``X``
  an accumulated random value with known :class:`Moments` (``base``);
* ``Opaque``: anything else (nothing is claimed about it).

An *accumulator* ``x`` is a variable raised by ``x := x + e`` (or ``x := e + x``, or lowered by
``x := x - e``, which adds ``-e``) in counted loops
(``for i in lo..hi``, or ``while (i < H) { …; i := i + 1; }``; the trip counts are the CFA's,
:func:`tamp.cfa.loops.counted_loop`), possibly nested, possibly under ``if`` tests on
deterministic values or on this iteration's fresh draws, and read nowhere else in the loop. One
iteration adds ``T = Σ_k [G_k]·e_k`` (one term per increment statement, ``G_k`` the tests that
lead to it). ``E[T]`` is computed exactly when every atom of ``G_k`` and every factor of ``e_k``
(a product is split into its factors) reads at most one *draw*: a value sampled in this
iteration (``y ~ bern(r)`` or ``y ~ unif(lo, hi)`` with deterministic parameters), or an element
``a[e]`` of an array of draws filled by an earlier loop ``for k in lo..hi { a[k] ~ D; }`` and not
written since (its marginal is D; the side condition ``lo <= e < hi``). The factors are grouped
by draw; distinct draws are independent, so the expectation of the product is the product of
each group's expectation:

* ``bern(r)``: ``r·F(true) + (1 - r)·F(false)``;
* ``unif(lo, hi)``: one comparison ``d < k`` (``<=``, ``>``, ``>=``, ``==``, ``!=``) with ``k``
  deterministic has probability ``(k - lo)/(hi - lo + 1)`` (and its variants) under the side
  condition ``lo <= k <= hi + 1``; anything else is the average ``sum(j in lo..hi+1: F(j)) /
  (hi - lo + 1)`` (``cost[pg]`` under ``!cached[pg]``).

* a product of factors affine in a draw (no test reads it) is a polynomial in the draw: its
  mean is the sum of its coefficients times the draw's raw moments ``E[d^k]`` (:data:`RAW`:
  ``unif`` (k <= 2), ``gauss`` (k <= 4), ``lap``, ``exp``, ``uniform``, ``dexp``, ``dlap``
  (k <= 2), each with the parameter conditions of :func:`dist_side` as side conditions);
  ``unif({c1, …, ck})`` with distinct constants is averaged over its values (any function, tests
  too). A test on a real-valued draw is not computed.

Two array-of-draws elements in one term could be one element: such a term is not computed.
An increment is ``e`` of ``x := x + e``, or of any ``+``/``-`` chain reading ``x`` once with a
plus sign (``x := x + a + b``).
Linearity needs no independence between iterations: ``E[x] = x0 + Σ_i E[T_i]``. The sum over a
loop's counter is closed when its summand allows (:func:`sum_over`): a summand that does not read
the counter is multiplied by the trip count, one affine in it (its syntactic degree is at most
1) is the trip count times the mean of the first and last, a test ``i != v``/``i == v`` of the
counter is counted exactly; otherwise the ``sum`` stays (the solver's sum functions and lemmas).

*Second moment.* When the increments of different iterations are independent — each reads only
its own iteration's fresh draws, deterministic values and elements ``a[i]`` of an array of draws
at the counter of a loop that is not nested — ``Var[x] = Σ_i Var[T_i]``, with ``Var[T] =
E[T²] - E[T]²`` and ``E[T²] = Σ_k Σ_l E[[G_k ∧ G_l]·e_k·e_l]`` computed as above (exact); an
inner loop's increments are independent of each other and of the enclosing iteration's own
(they may not read the enclosing iteration's draws). Otherwise the variance is unknown (None).

*Totals of inner loops.* A variable set deterministically in a loop body and raised by an inner
loop there (a counter reset at the start of each outer iteration) is, after the inner loop, a
total ``coef·X + const`` of this iteration; an increment ``a·v + b`` of an outer accumulator reading
it (``a``, ``b`` deterministic, under deterministic tests) is an aggregate term with ``E = a·E[v] +
b`` and ``Var = a²·Var[v]`` (it reads only the inner loop's draws, independent of the enclosing
iteration's own), never negative when ``X`` is not and ``a·coef >= 0``, ``a·const + b >= 0``. Every
total and aggregate records the loops whose draws it reads (``origin``): two aggregates of one
iteration from the same loop (one total added twice, or a total and that loop's own raises of the
same sum) are dependent, and the sum gets no variance. A total of before the loop is the same
value at every iteration: reading it in the loop is ``Opaque``.

*Flags (union bound).* A Boolean set deterministically before a loop and only ever set to
``true`` in it (under any tests) is, after the loop, a :class:`Flag`: true only if it was before
or some set ran, so ``1[flag] <= 1[before] + #sets`` and ``Pr[flag] <= [before] + E[#sets]``, the
mean of the sets' count (computed as an accumulator's). In a later loop's iteration a flag is a
draw of its own, independent of that iteration's fresh draws (the flag's loop read none of them,
and no array of draws: a loop that reads one makes no flag), and may only be tested for truth:
``E[[flag]·R] = Pr[flag]·E[R] <= bound·E[R]`` when ``R >= 0`` (which Markov's NONNEG proves of
every increment). Two flags of one term must come from different loops (else they are not
independent). A mean that reads a flag is an upper bound: it gets no variance, so only Markov
applies (Markov needs only ``E[X] <= bound``, for ``X >= 0``).

*Non-negativity* (Markov): ``x >= 0`` surely when its start is, and every increment ``e_k`` is at
every value of the draws it reads (the guards are dropped: a stronger condition), at every
iteration (``forall`` over the counters): the condition :attr:`Moments.nonneg`, proved under
``requires`` by the caller.

*Integers.* The accumulated value is an integer (:attr:`Moments.integral`) when its variable has
type ``int`` (the type checker's) and the constant taken off it does too: the obligations then
read ``X$`` as an integer, so ``X <= c`` below Markov's threshold ``c + 1`` is decided exactly.

*Linear forms of several accumulators* (:func:`claim_of`, :func:`_one_form`). A postcondition
may read several accumulated values ``x_j`` (``H - F``, ``2·A - B``, ``A + B``) when it reads
them only through one linear form ``L = Σ v_j·x_j``: every maximal subterm affine in the ``x_j``
(a comparison ``l op r`` is read as ``l - r op 0``) is ``λ·L + b`` with ``λ`` a constant and ``b``
not reading them, so the rewritten postcondition over ``X$`` (``L = X$ + c``) is the original one
by an identity of the reals. ``L`` is one accumulated value (:meth:`_Exec.combination`): the parts
of one loop are merged into one increment ``T = Σ_j v_j·T_j`` per iteration, and ``Var[T] =
E[T²] - E[T]²`` is computed over every pair of terms, so two increments that read the same draw
(``H += h; F += h``) have their covariance in it (``Var[h - h] = 0``, ``Var[2h] = 4·Var[h]``);
parts of different loops read different fresh draws and their variances add; anything the
analysis cannot show independent (arrays of draws in two loops, an inner total added twice,
flags) has no variance (Markov only, or Popoviciu's ``var_ub``). **Theorem**: for the form's
value ``X = Σ_j v_j·x_j``, ``E[X] = Σ_j v_j·E[x_j]`` (linearity) and, the iterations' merged
increments being independent, ``Var[X] = Σ_i Var[T_i]``; Markov and Chebyshev then apply to ``X``
as to one accumulator. One accumulated value is one :class:`Moments` object (copies and affine
images share it): two accumulators with equal moments are two random values, never one ``X$``.

Sound: the analysis claims nothing it does not compute; every deterministic fact it rests on
(loops run ``lo <= hi`` times, distribution parameters in range, array indices inside the range
of draws) is a side condition the caller proves under ``requires``. Anything outside these
shapes is ``Opaque``, and a claim that reads an ``Opaque`` value is not applicable.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from lang import ast as A
from lang.errors import TampError
from lang.typecheck import check_program
from lang.walk import free_vars, rebuild, replace_all
from lang.walk import substitute as subst

from .loops import CountedLoop, NotCounted, counted_loop
from .sum_linear import linear_sums


class NotApplicable(Exception):
    """The claim is not about a value whose moments this analysis computes (message: why)."""


ONE = A.num(1)
ZERO = A.num(0)
TRUE = A.BoolLit(True)
FALSE = A.BoolLit(False)


@dataclass(frozen=True)
class Moments:
    """An accumulated random value: its mean, its variance (None: not shown to be a sum of
    independent increments) and a deterministic condition under which it is never negative."""

    mean: A.Expr  #: exact when ``var`` is given; else possibly an upper bound (a flag's, Markov only)
    var: A.Expr | None
    nonneg: A.Expr
    integral: bool = False  #: the value is always an integer (its variable has type int)
    #: an upper bound of ``var`` (Popoviciu, per iteration: see :meth:`_Exec._moments`), or None
    var_ub: A.Expr | None = None
    #: ``var`` itself written with one ``sum`` per part (when ``var`` keeps them in one sum, see
    #: :func:`sum_over`): the same value, which the solver bounds more easily by parts (``Σ q[i]
    #: - Σ q[i]²`` against ``Σ q[i]``); None when the two forms are the same
    var_split: A.Expr | None = None
    #: Hoeffding's denominator ``Σ_i w_i²`` with a tighter width per iteration than Popoviciu's
    #: (see :meth:`_Exec._moments`), valid when ``width_side`` holds; None when not computed
    width2: A.Expr | None = None
    #: the condition (deterministic, every draw's support substituted) under which every
    #: iteration's increment lies in its interval of width ``w_i``
    width_side: A.Expr | None = None


@dataclass(frozen=True)
class Det:
    expr: A.Expr


@dataclass(frozen=True, eq=False)
class Part:
    """One loop's contribution to an accumulated value: ``Σ_{i=lo}^{hi-1} T_i`` with ``T_i`` the
    iteration's increments ``terms`` (coefficients applied) over its draws ``draws``, ``[dg]``
    the deterministic tests the loop runs under; ``arrays``: the loop read elements of an array
    of draws (two loops that do may read the same element: they are not independent)."""

    token: frozenset
    terms: tuple[Term, ...]
    draws: object  #: the loop's :class:`_Draws`
    i: str
    lo: A.Expr
    hi: A.Expr
    nested: bool
    dg: A.Expr
    arrays: bool


@dataclass(frozen=True)
class Form:
    """``X = start + Σ parts`` (``start`` deterministic): how an accumulated value was built,
    kept so that linear combinations of accumulated values get exact moments (:func:`combine`)."""

    start: A.Expr
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Lin:
    coef: A.Expr
    const: A.Expr
    base: Moments
    origin: frozenset = frozenset()  #: the loops whose draws X reads (a token per loop)
    form: Form | None = None  #: X's parts (None: not kept, no combination)


@dataclass(frozen=True)
class Opaque:
    why: str = ""


@dataclass(frozen=True)
class Rnd:
    """A value of this iteration over its draws (placeholders ``$dK``) and deterministic values."""

    expr: A.Expr


@dataclass(frozen=True)
class Term:
    """One increment ``[guards]·value`` (``agg`` set: an inner loop's total, with its moments)."""

    guards: tuple[A.Expr, ...]
    value: A.Expr
    agg: Moments | None = None
    origin: frozenset = frozenset()  #: of an aggregate: the inner loops whose draws it reads


@dataclass(frozen=True)
class Acc:
    """An accumulator inside a loop body: its increments so far in this iteration (``flag``:
    a Boolean only ever set to ``true``, each term one place that sets it)."""

    terms: tuple[Term, ...] = ()
    flag: bool = False


@dataclass(frozen=True)
class Flag:
    """A Boolean made by a loop, true with probability at most ``bound`` (by the union bound:
    ``1[b0 ∨ ⋁_k G_k] <= 1[b0] + Σ_k 1[G_k]``, whose mean is linear); ``origin``: the loops whose
    draws it reads. Read in a later loop's iteration it is a draw of its own (kind ``flag``):
    independent of that iteration's fresh draws, and only its truth may be tested."""

    bound: A.Expr
    origin: frozenset


@dataclass(frozen=True)
class DrawArray:
    """An array filled by ``for k in lo..hi { a[k] ~ D }``: element e is a draw of D[k := e]."""

    func: str
    args: tuple[A.Expr, ...]
    counter: str
    lo: A.Expr
    hi: A.Expr


@dataclass
class Result:
    env: dict[str, object]
    side: list[tuple[str, A.Expr]] = field(default_factory=list)
    loops: list[CountedLoop] = field(default_factory=list)
    ex: object = None  #: the :class:`_Exec` that made ``env`` (its side conditions are ``side``)


# ---------------------------------------------------------------------------- expressions


def _const(e) -> Fraction | None:
    if isinstance(e, A.Num):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-":
        v = _const(e.operand)
        return None if v is None else -v
    return None


def _n(v: Fraction) -> A.Expr:
    if v < 0:
        return A.Unary("-", _n(-v))
    return A.num(int(v)) if v.denominator == 1 else A.num(v)


def fold(e: A.Expr) -> A.Expr:
    """Light constant folding (0 and 1 units, Boolean literals, ``(a - c) + c``): the moments
    stay readable and the solver's queries small. Every rewrite is an identity of the reals."""
    if isinstance(e, A.Binary):
        l, r = fold(e.left), fold(e.right)
        cl, cr = _const(l), _const(r)
        op = e.op
        if op in ("+", "-", "*") and cl is not None and cr is not None:
            return _n(cl + cr if op == "+" else cl - cr if op == "-" else cl * cr)
        if op == "/" and cl is not None and cr is not None and cr != 0:
            return _n(cl / cr)
        if op in ("+", "-", "*") and isinstance(l, A.Cond) and isinstance(r, A.Cond) and l.cond == r.cond:
            if _const(l.other) == 0 and _const(r.other) == 0:  # [c]·a op [c]·b is [c]·(a op b)
                return fold(A.Cond(l.cond, A.Binary(op, l.then, r.then), ZERO))
        if op == "+":
            if cl == 0:
                return r
            if cr == 0:
                return l
            if isinstance(l, A.Binary) and l.op == "-" and l.right == r and _const(r) is not None:
                return l.left
        if op == "-":
            if cr == 0:
                return l
            if cl == 0:
                return fold(A.Unary("-", r))
            if l == r:
                return ZERO
        if op == "*":
            if cl == 0 or cr == 0:
                return ZERO
            if cl == 1:
                return r
            if cr == 1:
                return l
        if op == "/":
            if cr == 1:
                return l
            if cl == 0:
                return ZERO
            if isinstance(r, A.Binary) and r.op == "/" and _const(r.left) == 1:
                return fold(A.Binary("*", l, r.right))
        if op in ("<", "<=", ">", ">=", "==", "!=") and cl is not None and cr is not None:
            return A.BoolLit(
                {"<": cl < cr, "<=": cl <= cr, ">": cl > cr, ">=": cl >= cr, "==": cl == cr, "!=": cl != cr}[op]
            )
        if op == "&&":
            if l == r:
                return l
            if l == TRUE:
                return r
            if r == TRUE:
                return l
            if FALSE in (l, r):
                return FALSE
        if op == "||":
            if l == FALSE:
                return r
            if r == FALSE:
                return l
            if TRUE in (l, r):
                return TRUE
        return A.Binary(op, l, r)
    if isinstance(e, A.Unary):
        o = fold(e.operand)
        if e.op == "!" and isinstance(o, A.BoolLit):
            return A.BoolLit(not o.value)
        if e.op in ("-", "!") and isinstance(o, A.Unary) and o.op == e.op:
            return o.operand
        if e.op == "-" and _const(o) is not None:
            return _n(-_const(o))  # type: ignore[operator]
        return A.Unary(e.op, o)
    if isinstance(e, A.Cond):
        c = fold(e.cond)
        if isinstance(c, A.BoolLit):
            return fold(e.then if c.value else e.other)
        if isinstance(c, A.Unary) and c.op == "!":
            return A.Cond(c.operand, fold(e.other), fold(e.then))
        return A.Cond(c, fold(e.then), fold(e.other))
    return e


def _mul(a: A.Expr, b: A.Expr) -> A.Expr:
    return fold(A.Binary("*", a, b))


def _add(a: A.Expr, b: A.Expr) -> A.Expr:
    return fold(A.Binary("+", a, b))


def _sub(a: A.Expr, b: A.Expr) -> A.Expr:
    return fold(A.Binary("-", a, b))


def _min(a: A.Expr, b: A.Expr) -> A.Expr:
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return _n(min(ca, cb))
    return a if a == b else A.Call("min", (a, b))


def _max(a: A.Expr, b: A.Expr) -> A.Expr:
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return _n(max(ca, cb))
    return a if a == b else A.Call("max", (a, b))


def _div(a: A.Expr, b: A.Expr) -> A.Expr:
    return fold(A.Binary("/", a, b))


def _and(es) -> A.Expr:
    out: A.Expr = TRUE
    for e in es:
        out = fold(A.Binary("&&", out, e))
    return out


def _factors(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e]


def _atoms(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _atoms(e.left) + _atoms(e.right)
    return [e]


def _draws_in(e: A.Expr) -> set[str]:
    return {v for v in free_vars(e) if v.startswith("$d")}


def _degree(e: A.Expr, i: str) -> int | None:
    """The degree of ``e`` as a polynomial in ``i`` (None: not a polynomial in it)."""
    if i not in free_vars(e):
        return 0
    if isinstance(e, A.Var):
        return 1
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        a, b = _degree(e.left, i), _degree(e.right, i)
        return None if a is None or b is None else max(a, b)
    if isinstance(e, A.Binary) and e.op == "*":
        a, b = _degree(e.left, i), _degree(e.right, i)
        return None if a is None or b is None else a + b
    if isinstance(e, A.Binary) and e.op == "/":
        return _degree(e.left, i) if i not in free_vars(e.right) else None
    if isinstance(e, A.Unary) and e.op == "-":
        return _degree(e.operand, i)
    return None


def _terms(e: A.Expr) -> list[tuple[int, A.Expr]]:
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        right = _terms(e.right)
        if e.op == "-":
            right = [(-s, t) for s, t in right]
        return _terms(e.left) + right
    return [(1, e)]


def sum_over(f: A.Expr, i: str, lo: A.Expr, hi: A.Expr, one_sum: bool = False) -> A.Expr:
    """``Σ_{i=lo}^{hi-1} f`` (for ``lo <= hi``), closed where the summand allows (see the module
    docstring); each ``+``/``-`` part of ``f`` separately (linearity). ``one_sum``: when the parts
    that stay open are sums of different summands, they are kept in ONE ``sum`` (a variance
    ``Σ p[i] - p[i]²`` is then compared pointwise with a claim's ``Σ p[i]·(1 - p[i])``, which two
    sums are not); open sums of one summand stay constants times that sum (``q(1-q)·Σ a[j]²``)."""
    out: A.Expr = ZERO
    n = _sub(hi, lo)
    open_body: A.Expr | None = None
    parts = [(sign, t, _sum_part(t, i, lo, hi, n)) for sign, t in _terms(fold(f))]
    bodies = {m.body for _sg, _t, s in parts for m in A.walk(s) if isinstance(m, A.Sum) and m.var == i}
    one_sum = one_sum and len(bodies) > 1  # one open sum times constants is compared as it is
    for sign, t, s in parts:
        if one_sum and any(isinstance(m, A.Sum) and m.var == i for m in A.walk(s)):
            body = t if sign > 0 else A.Unary("-", t)
            open_body = body if open_body is None else A.Binary("+", open_body, body)
            continue
        out = _add(out, s) if sign > 0 else _sub(out, s)
    if open_body is not None:
        out = _add(out, A.Sum(i, lo, hi, False, open_body))
    return out


def _sum_part(t: A.Expr, i: str, lo: A.Expr, hi: A.Expr, n: A.Expr) -> A.Expr:
    d = _degree(t, i)
    if d == 0:
        return _mul(n, t)
    if d == 1:  # affine in i: n times the mean of the first and the last summand
        first, last = subst(t, {i: lo}), subst(t, {i: _sub(hi, ONE)})
        return _div(_mul(n, _add(first, last)), A.num(2))
    if isinstance(t, A.Cond) and i not in free_vars(t.then) | free_vars(t.other):
        c = t.cond
        neg = False
        if isinstance(c, A.Binary) and c.op in ("==", "!=") and isinstance(c.right, A.Var) and c.right.name == i:
            c = A.Binary(c.op, c.right, c.left)
        if isinstance(c, A.Binary) and c.op in ("==", "!=") and c.left == A.Var(i) and i not in free_vars(c.right):
            neg = c.op == "!="
            hit = A.Cond(
                A.Binary("&&", A.Binary("<=", lo, c.right), A.Binary("<", c.right, hi)), ONE, ZERO
            )  # the number of i in [lo, hi) with i == v
            hits = _sub(n, hit) if neg else hit
            return _add(_mul(hits, t.then), _mul(_sub(n, hits), t.other))
    if isinstance(t, A.Binary) and t.op == "*":
        fs = _factors(t)
        outside = [f for f in fs if i not in free_vars(f)]
        inside = [f for f in fs if i in free_vars(f)]
        if outside:  # factors that do not read the counter come out of the sum
            out: A.Expr = ONE
            for f in outside:
                out = _mul(out, f)
            rest: A.Expr = inside[0]
            for f in inside[1:]:
                rest = A.Binary("*", rest, f)
            return _mul(out, _sum_part(rest, i, lo, hi, n))
    if isinstance(t, A.Binary) and t.op == "/" and i not in free_vars(t.right):
        out = _div(_sum_part(t.left, i, lo, hi, n), t.right)
        if isinstance(t.right, A.Num) and t.right.value != 0:
            return out
        # Σ a/d = (Σ a)/d needs d != 0 (the solver's a/0 is an unspecified function of a): where
        # d might be 0 the sum stays as it is, so the two sides are equal at every state
        return A.Cond(A.Binary("!=", t.right, ZERO), out, A.Sum(i, lo, hi, False, t))
    return A.Sum(i, lo, hi, False, t)


def _forall(i: str, lo: A.Expr, hi: A.Expr, cond: A.Expr) -> A.Expr:
    if i not in free_vars(cond):
        return cond
    return A.Quant("forall", i, lo, hi, False, cond)


# ---------------------------------------------------------------------------- expectations


class _Draws:
    """The draws of one iteration: placeholder name -> (distribution, deterministic args)."""

    def __init__(self, ids, is_int=lambda e: False):
        self.ids = ids
        self.is_int = is_int  # whether an expression over the inputs and counters is an integer
        self.dist: dict[str, tuple[str, tuple[A.Expr, ...]]] = {}
        self.arr: dict[tuple[str, A.Expr], str] = {}  # array-of-draws element -> placeholder
        self.arr_index: dict[str, A.Expr] = {}
        self.flags: dict[Flag, str] = {}  # a flag read in this iteration -> its placeholder
        self.flag_origin: dict[str, frozenset] = {}

    def flag(self, f: Flag) -> str:
        """The placeholder of a flag (one per flag, however often it is read)."""
        if f not in self.flags:
            self.flags[f] = self.fresh("flag", (f.bound,))
            self.flag_origin[self.flags[f]] = f.origin
        return self.flags[f]

    def fresh(self, func: str, args: tuple[A.Expr, ...]) -> str:
        name = f"$d{next(self.ids)}"
        self.dist[name] = (func, args)
        return name


#: The draws whose moments are known, each with its raw moments ``E[d^k]`` (k = 1, 2, …) as
#: functions of its parameters, and the conditions on the parameters they need (side conditions).
#: ``bern`` and ``set`` (``unif({c1, …, ck})``, distinct constants) are averaged over their support
#: exactly instead, for any function of the draw (tests too). Checked against sampling in
#: tests/prover/test_linearity_moments.py. ``q = exp(-1/s)`` for the discrete Laplace/exponential.
def _q(s: A.Expr) -> A.Expr:
    return A.Call("exp", (A.Unary("-", A.Binary("/", ONE, s)),))


def _raw_unif(lo, hi):  # integer uniform on lo..hi: mean (lo+hi)/2, variance ((hi-lo+1)^2 - 1)/12
    m = _div(_add(lo, hi), A.num(2))
    n = _add(_sub(hi, lo), ONE)
    var = _div(_sub(_mul(n, n), ONE), A.num(12))
    return [m, _add(var, _mul(m, m))]


def _raw_gauss(m, v):  # normal: mean m, variance v; E[d^3] = m^3 + 3mv, E[d^4] = m^4 + 6m^2 v + 3v^2
    m2 = _mul(m, m)
    return [
        m,
        _add(v, m2),
        _add(_mul(m2, m), _mul(A.num(3), _mul(m, v))),
        _add(_add(_mul(m2, m2), _mul(A.num(6), _mul(m2, v))), _mul(A.num(3), _mul(v, v))),
    ]


def _raw_lap(m, s):  # continuous Laplace: mean m, variance 2 s^2
    return [m, _add(_mul(m, m), _mul(A.num(2), _mul(s, s)))]


def _raw_exp(k, s):  # k + s·Exp(1): mean k + s, variance s^2
    m = _add(k, s)
    return [m, _add(_mul(m, m), _mul(s, s))]


def _raw_uniform(a, b):  # real uniform on [a, b]: mean (a+b)/2, E[d^2] = (a^2 + ab + b^2)/3
    return [_div(_add(a, b), A.num(2)), _div(_add(_add(_mul(a, a), _mul(a, b)), _mul(b, b)), A.num(3))]


def _raw_dexp(k, s):  # k + G, Pr(G = g) ∝ q^g: mean q/(1-q), variance q/(1-q)^2
    q = _q(s)
    mg = _div(q, _sub(ONE, q))
    vg = _div(q, _mul(_sub(ONE, q), _sub(ONE, q)))
    m = _add(k, mg)
    return [m, _add(_mul(m, m), vg)]


def _raw_dlap(m, s):  # m + D, Pr(D = c) ∝ q^|c|: mean m, variance 2q/(1-q)^2
    q = _q(s)
    v = _div(_mul(A.num(2), q), _mul(_sub(ONE, q), _sub(ONE, q)))
    return [m, _add(_mul(m, m), v)]


RAW = {
    "unif": _raw_unif,
    "gauss": _raw_gauss,
    "lap": _raw_lap,
    "exp": _raw_exp,
    "uniform": _raw_uniform,
    "dexp": _raw_dexp,
    "dlap": _raw_dlap,
}
ARITY = {"bern": 1, "unif": 2, "gauss": 2, "lap": 2, "exp": 2, "uniform": 2, "dexp": 2, "dlap": 2}


def dist_side(func: str, args: tuple[A.Expr, ...]) -> list[tuple[str, A.Expr]]:
    """The conditions on a draw's parameters its moments need."""
    if func == "bern":
        return [("probability", _and([A.Binary("<=", ZERO, args[0]), A.Binary("<=", args[0], ONE)]))]
    if func in ("unif", "uniform"):
        return [("range not empty", A.Binary("<=", args[0], args[1]))]
    if func == "gauss":
        return [("variance not negative", A.Binary(">=", args[1], ZERO))]
    if func in ("lap", "exp", "dexp", "dlap"):
        return [("scale positive", A.Binary(">", args[1], ZERO))]
    return []


def set_items(arg: A.Expr) -> tuple[A.Expr, ...] | None:
    """The items of ``unif({c1, …, ck})`` when they are distinct numeric constants, else None."""
    if not isinstance(arg, A.SetLit) or not arg.items:
        return None
    vals = [_const(x) for x in arg.items]
    if any(v is None for v in vals) or len(set(vals)) != len(vals):
        return None
    return tuple(_n(v) for v in vals)  # type: ignore[arg-type]


def _support_forall(d: str, dist, cond: A.Expr) -> A.Expr:
    """``cond`` at every value of draw ``d`` (FALSE when that is not shown: a stronger condition)."""
    func, args = dist
    if d not in free_vars(cond):
        return cond
    if func in ("bern", "flag"):
        return _and([fold(subst(cond, {d: TRUE})), fold(subst(cond, {d: FALSE}))])
    if func == "set":
        return _and([fold(subst(cond, {d: c})) for c in args])
    if func == "unif":
        lo, hi = args
        j = f"{d[1:]}$v"
        return _forall(j, lo, _add(hi, ONE), fold(subst(cond, {d: A.Var(j)})))
    # a real-valued draw: only ``e >= 0`` with e affine in the draw, a·d + b >= 0 on the support
    if not (isinstance(cond, A.Binary) and cond.op == ">=" and _const(cond.right) == 0):
        return FALSE
    lin = linear_in(cond.left, d)
    if lin is None:
        return FALSE
    a, b = lin
    if func == "uniform":  # an affine function is at least its value at one of the ends
        return _and([fold(subst(cond, {d: args[0]})), fold(subst(cond, {d: args[1]}))])
    if func in ("exp", "dexp"):  # support [k, ∞)
        return _and([A.Binary(">=", a, ZERO), fold(subst(cond, {d: args[0]}))])
    return _and([A.Binary("==", a, ZERO), A.Binary(">=", b, ZERO)])  # gauss, lap, dlap: all reals


def _poly(vals: list[A.Expr], d: str) -> list[A.Expr] | None:
    """The coefficients of ``Π vals`` as a polynomial in ``d`` (None: a factor not affine in it)."""
    coefs: list[A.Expr] = [ONE]
    for v in vals:
        lin = linear_in(v, d)
        if lin is None:
            return None
        a, b = lin
        new: list[A.Expr] = [ZERO] * (len(coefs) + 1)
        for k, c in enumerate(coefs):
            new[k] = _add(new[k], _mul(c, b))
            new[k + 1] = _add(new[k + 1], _mul(c, a))
        coefs = new
    while len(coefs) > 1 and coefs[-1] == ZERO:
        coefs.pop()
    return coefs


def _group_mean(d: str, dist, atoms: list[A.Expr], vals: list[A.Expr], side: list, draws: _Draws) -> A.Expr:
    """``E[[atoms]·Π vals]`` over draw ``d`` alone."""
    func, args = dist
    if func == "flag":  # E[[d]·R] = Pr[d]·E[R] <= bound·E[R] when R >= 0 (its term's NONNEG)
        if vals or atoms != [A.Var(d)]:
            raise NotApplicable("a flag's probability is bounded above only: only its truth may be tested")
        return args[0]
    value: A.Expr = ONE
    for v in vals:
        value = _mul(value, v)
    cond = _and(atoms)
    F = fold(A.Cond(cond, value, ZERO)) if cond != TRUE else value
    if func == "bern":
        (r,) = args
        return _add(_mul(r, fold(subst(F, {d: TRUE}))), _mul(_sub(ONE, r), fold(subst(F, {d: FALSE}))))
    if func == "set" and not atoms:  # a polynomial: the raw moments are constants (E[s] = 0 for signs)
        coefs = _poly(vals, d)
        if coefs is not None:
            vals_c = [_const(c) for c in args]
            out_s: A.Expr = coefs[0]
            for k, c in enumerate(coefs[1:], start=1):
                raw_k = sum((v**k for v in vals_c), Fraction(0)) / len(vals_c)  # type: ignore[operator]
                out_s = _add(out_s, _mul(c, _n(raw_k)))
            return out_s
    if func == "set":  # the average over the listed values
        total: A.Expr = ZERO
        for c in args:
            total = _add(total, fold(subst(F, {d: c})))
        return _div(total, A.num(len(args)))
    if not atoms:  # a polynomial in the draw: its raw moments (linearity)
        coefs = _poly(vals, d)
        raw = RAW[func](*args)
        if coefs is not None and len(coefs) - 1 <= len(raw):
            out: A.Expr = coefs[0]
            for k, c in enumerate(coefs[1:]):
                out = _add(out, _mul(c, raw[k]))
            return out
    if func != "unif":
        raise NotApplicable(f"a function of a {func} draw whose mean is not tabulated")
    lo, hi = args
    size = _add(_sub(hi, lo), ONE)
    if not vals and len(atoms) == 1:
        p = _comparison(A.Var(d), atoms[0], lo, hi, size, side, draws.is_int)
        if p is not None:
            return p
    if not vals and _equal_to_distinct_constants(A.Var(d), atoms):  # d == 1 && d == 2: never
        return ZERO
    j = f"{d[1:]}$j"
    return _div(A.Sum(j, lo, _add(hi, ONE), False, fold(subst(F, {d: A.Var(j)}))), size)


def _equal_to_distinct_constants(d: A.Var, atoms: list[A.Expr]) -> bool:
    """Whether ``atoms`` include ``d == a`` and ``d == b`` for two different numeric constants."""
    ks = set()
    for atom in atoms:
        if isinstance(atom, A.Binary) and atom.op == "==":
            other = atom.right if atom.left == d else atom.left if atom.right == d else None
            k = _const(other) if other is not None else None
            if k is not None:
                ks.add(k)
    return len(ks) > 1


def _comparison(d: A.Var, atom: A.Expr, lo, hi, size, side, is_int) -> A.Expr | None:
    """The probability of ``d op k`` for ``d ~ unif(lo, hi)`` and an integer ``k`` (None: not
    such a comparison; the caller averages over the range instead)."""
    mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
    if not (isinstance(atom, A.Binary) and atom.op in mirror):
        return None
    op, l, r = atom.op, atom.left, atom.right
    if r == d and l != d:
        op, l, r = mirror[op], r, l
    if l != d or d.name in free_vars(r) or _draws_in(r) or not is_int(r):
        return None
    if op in ("==", "!="):
        side.append(("index in range", _and([A.Binary("<=", lo, r), A.Binary("<=", r, hi)])))
        p = _div(ONE, size)
        return p if op == "==" else _sub(ONE, p)
    k = r if op in ("<", ">=") else _add(r, ONE)  # d < k, or d <= r is d < r + 1
    side.append(("threshold in range", _and([A.Binary("<=", lo, k), A.Binary("<=", k, _add(hi, ONE))])))
    below = _div(_sub(k, lo), size)
    return below if op in ("<", "<=") else _sub(ONE, below)


def term_mean(guards: tuple[A.Expr, ...], vals: list[A.Expr], draws: _Draws, side: list) -> A.Expr:
    """``E[[guards]·Π vals]``; raises NotApplicable when a factor reads two draws, unless one of
    them is a ``bern`` draw: then the mean is split on it (total expectation, the draw independent
    of the others): ``r·E[F[d := true]] + (1 - r)·E[F[d := false]]`` (an indicator of any event
    of several coin flips, e.g. two raters agreeing, ``(x && y) || (!x && !y)``); or a draw with a
    few equally likely values (:func:`_finite_values`): ``(1/k)·Σ_c E[F[d := c]]`` (two dice
    agreeing, ``d1·r1 + d2·r2 != 0`` for 0/1 draws)."""
    split = _split_draw(guards, vals, draws)
    if split is not None:
        func, args = draws.dist[split]
        if func != "bern":  # a draw with a few values, equally likely: the average over them
            total: A.Expr = ZERO
            points = _finite_values(func, args)
            assert points is not None
            for c in points:
                at = {split: c}
                total = _add(
                    total,
                    term_mean(
                        tuple(fold(subst(g, at)) for g in guards), [fold(subst(v, at)) for v in vals], draws, side
                    ),
                )
            return fold(_div(total, A.num(len(points))))
        r = args[0]
        on = {split: TRUE}
        off = {split: FALSE}
        m_on = term_mean(tuple(fold(subst(g, on)) for g in guards), [fold(subst(v, on)) for v in vals], draws, side)
        m_off = term_mean(tuple(fold(subst(g, off)) for g in guards), [fold(subst(v, off)) for v in vals], draws, side)
        return fold(_add(_mul(r, m_on), _mul(_sub(ONE, r), m_off)))
    det_atoms: list[A.Expr] = []
    det_vals: list[A.Expr] = []
    atoms: dict[str, list[A.Expr]] = {}
    vs: dict[str, list[A.Expr]] = {}
    seen: list[A.Expr] = []
    for g in guards:
        for a in _atoms(g):
            if a in seen:
                continue
            seen.append(a)
            ds = _draws_in(a)
            if len(ds) > 1:
                raise NotApplicable("a test compares two draws")
            if ds:
                atoms.setdefault(next(iter(ds)), []).append(a)
            else:
                det_atoms.append(a)
    for v in vals:
        for f in _factors(v):
            ds = _draws_in(f)
            if len(ds) > 1:
                raise NotApplicable("an increment combines two draws other than by a product")
            if ds:
                vs.setdefault(next(iter(ds)), []).append(f)
            else:
                det_vals.append(f)
    used = set(atoms) | set(vs)
    if sum(1 for d in used if d in draws.arr_index) > 1:
        raise NotApplicable("a term reads two elements of an array of draws (they may be one)")
    origins = [draws.flag_origin[d] for d in used if d in draws.flag_origin]
    if any(o1 & o2 for k, o1 in enumerate(origins) for o2 in origins[k + 1 :]):
        raise NotApplicable("a term tests two flags made from the same draws")
    out: A.Expr = ONE
    for f in det_vals:
        out = _mul(out, f)
    for d in sorted(used):
        out = _mul(out, _group_mean(d, draws.dist[d], atoms.get(d, []), vs.get(d, []), side, draws))
    dg = _and(det_atoms)
    return out if dg == TRUE else fold(A.Cond(dg, out, ZERO))


def _split_draw(guards, vals, draws: _Draws) -> str | None:
    """A ``bern`` draw to split a term's mean on: one read by a test atom or a factor that reads
    two draws or more (None: no such atom or factor, none of its draws is a coin flip, or it reads
    an array at an index chosen by draws: a walk down a random path, whose means the solver cannot
    compare, is left out rather than given a large mean to decide). Two
    elements of an array of draws (possibly one element) are refused before any split."""
    read = set().union(*[_draws_in(g) for g in guards], *[_draws_in(v) for v in vals])
    if sum(1 for d in read if d in draws.arr_index) > 1:
        raise NotApplicable("a term reads two elements of an array of draws (they may be one)")
    parts = [a for g in guards for a in _atoms(g)] + [f for v in vals for f in _factors(v)]
    for a in parts:
        ds = _draws_in(a)
        if len(ds) > 1 and any(isinstance(m, A.Index) and _draws_in(m.index) for m in A.walk(a)):
            return None  # an array read at a random place: not an event of coin flips
        if len(ds) > 1:
            coins = sorted(d for d in ds if draws.dist[d][0] == "bern" and d not in draws.flag_origin)
            if coins:
                return coins[0]
            few = sorted(d for d in ds if d not in draws.flag_origin and _finite_values(*draws.dist[d]) is not None)
            if few:
                return few[0]
    return None


#: the most values a draw is split on (total expectation over each value)
MAX_SPLIT = 8


def _finite_values(func: str, args: tuple[A.Expr, ...]) -> tuple[A.Expr, ...] | None:
    """The values of a draw with a few equally likely ones: ``unif({c1, …, ck})`` (distinct
    constants) or ``unif(lo, hi)`` with constant bounds, at most :data:`MAX_SPLIT` of them."""
    if func == "set" and len(args) <= MAX_SPLIT:
        return args
    if func == "unif":
        lo, hi = (_const(a) for a in args)
        if (
            lo is not None
            and hi is not None
            and lo.denominator == 1
            and hi.denominator == 1
            and 1 <= hi - lo + 1 <= MAX_SPLIT
        ):
            return tuple(_n(Fraction(v)) for v in range(int(lo), int(hi) + 1))
    return None


def _nonneg(value: A.Expr, draws: _Draws) -> A.Expr:
    cond: A.Expr = A.Binary(">=", value, ZERO)
    real = ("bern", "flag", "set", "unif")  # the real-valued draws first, while cond is still ``value >= 0``
    for d in sorted(_draws_in(value), key=lambda d: (draws.dist[d][0] in real, d)):
        cond = _support_forall(d, draws.dist[d], cond)
    return fold(cond)


# ---------------------------------------------------------------------------- the interpreter


def _line(s) -> int:
    return s.pos.line if s.pos is not None else 0


def _written(s) -> set[str]:
    out: set[str] = set()
    for n in A.walk(s):
        if isinstance(n, (A.Assign, A.Sample)):
            for t in n.targets:
                out.add(A.target_name(t))
        elif isinstance(n, A.For):
            out.add(n.var)
    return out


def _has_loop(s) -> bool:
    return any(isinstance(n, (A.While, A.For)) for n in A.walk(s))


def _increment(v: A.Expr, x: str) -> A.Expr | None:
    """``e`` with ``v = x + e`` as a chain of ``+``/``-`` (``x + a + b``, ``a - b + x``; ``x - e``
    adds ``-e``), ``x`` once with sign +; else None."""
    parts = _terms(v)
    mine = [k for k, (sign, t) in enumerate(parts) if t == A.Var(x)]
    if len(mine) != 1 or parts[mine[0]][0] != 1:
        return None
    inc: A.Expr | None = None
    for k, (sign, t) in enumerate(parts):
        if k == mine[0]:
            continue
        if inc is None:
            inc = t if sign > 0 else A.Unary("-", t)
        else:
            inc = A.Binary("+" if sign > 0 else "-", inc, t)
    return inc


class _Exec:
    def __init__(self, program: A.Program, cfa, types):
        self.params = {p.name for p in program.params}
        self.cfa = cfa
        self.types = types
        self.ids = itertools.count(1)
        self.arr_reads = 0  # array-of-draws elements read so far (a flag's loop reads none)
        self.tokens = itertools.count(1)  # one per loop: which totals read whose draws
        self.side: list[tuple[str, A.Expr]] = []
        self.loops: list[CountedLoop] = []

    # --- expressions: Det, Rnd (reads this iteration's draws) or Opaque
    def ev(self, e: A.Expr, env, draws: _Draws | None) -> object:
        m: dict[str, A.Expr] = {}
        rnd = False
        for n in A.walk(e):
            if isinstance(n, (A.Sum, A.Quant)):
                return Opaque("a sum or quantifier in the program")
        # array-of-draws elements first: a[e] with a a DrawArray
        e = self._arr_reads(e, env, draws)
        if isinstance(e, Opaque):
            return e
        for x in free_vars(e):
            if x.startswith("$d"):
                rnd = True
                continue
            v = env.get(x)
            if isinstance(v, Det):
                m[x] = v.expr
            elif isinstance(v, Rnd):
                m[x] = v.expr
                rnd = True
            elif isinstance(v, Flag) and draws is not None:
                m[x] = A.Var(draws.flag(v))
                rnd = True
            else:
                return Opaque(f"reads '{x}'")
        out = fold(subst(e, m))
        return Rnd(out) if rnd else Det(out)

    def _arr_reads(self, e: A.Expr, env, draws):
        for n in A.walk(e):
            if isinstance(n, A.Index) and isinstance(n.base, A.Var) and isinstance(env.get(n.base.name), DrawArray):
                if draws is None:
                    return Opaque("an array of draws read outside a loop")
                da = env[n.base.name]
                idx = self.ev(n.index, env, draws)
                if not isinstance(idx, Det):
                    return Opaque("an array of draws read at an index that is not deterministic")
                key = (n.base.name, idx.expr)
                if key not in draws.arr:
                    args = tuple(fold(subst(a, {da.counter: idx.expr})) for a in da.args)
                    name = draws.fresh(da.func, args)
                    draws.arr[key] = name
                    self.arr_reads += 1
                    draws.arr_index[name] = idx.expr
                    self.side.extend(dist_side(da.func, args))
                    self.side.append(
                        (
                            "element drawn",
                            _and([A.Binary("<=", da.lo, idx.expr), A.Binary("<", idx.expr, da.hi)]),
                        )
                    )
                new = replace_all(e, n, A.Var(draws.arr[key]))
                return self._arr_reads(new, env, draws)
        return e

    # --- statements
    def block(self, stmts, env, draws, guards) -> None:
        for s in stmts:
            self.stmt(s, env, draws, guards)

    def stmt(self, s: A.Stmt, env, draws, guards) -> None:
        if isinstance(s, A.Block):
            self.block(s.stmts, env, draws, guards)
        elif isinstance(s, (A.Skip, A.VarDecl)):
            return
        elif isinstance(s, A.Assign):
            self.assign(s, env, draws, guards)
        elif isinstance(s, A.Sample):
            self.sample(s, env, draws, guards)
        elif isinstance(s, A.If):
            self.branch(s, env, draws, guards)
        elif isinstance(s, A.For):
            self.for_loop(s, env, draws, guards)
        elif isinstance(s, A.While):
            self.while_loop(s, env, draws, guards)
        else:  # assume and anything else: conditioning is not recognised
            raise NotApplicable(f"line {_line(s)}: {type(s).__name__.lower()} is not recognised")

    def assign(self, s: A.Assign, env, draws, guards) -> None:
        if len(s.targets) != 1:
            for t in s.targets:
                env[A.target_name(t)] = Opaque("a tuple assignment")
            return
        t = s.targets[0]
        name = A.target_name(t)
        if not isinstance(t, A.Var):
            env[name] = Opaque("an array written")
            return
        cur = env.get(name)
        v = s.value
        if v == TRUE and isinstance(cur, Acc) and draws is not None and (cur.flag or not cur.terms):
            env[name] = Acc(cur.terms + (Term(guards, ONE),), True)
            return
        if isinstance(v, A.Binary) and v.op in ("+", "-") and isinstance(cur, (Acc, Lin)):
            inc = _increment(v, name)
            if inc is not None and name not in free_vars(inc):
                ie = self.ev(inc, env, draws)
                if isinstance(cur, Acc) and not cur.flag and isinstance(ie, (Det, Rnd)):
                    env[name] = Acc(cur.terms + (Term(guards, ie.expr),))  # type: ignore[union-attr]
                    return
                if isinstance(cur, Lin) and isinstance(ie, Det) and draws is None and not guards:
                    env[name] = Lin(cur.coef, _add(cur.const, ie.expr), cur.base, cur.origin, cur.form)
                    return
                if isinstance(cur, Acc) and not cur.flag and draws is not None and isinstance(ie, Opaque):
                    term = self.total_term(inc, env, guards)
                    if term is not None:
                        env[name] = Acc(cur.terms + (term,))
                        return
        if guards and draws is None:
            env[name] = Opaque("assigned under a test")
            return
        if guards and not isinstance(cur, (Acc, Lin)):
            # the value if this branch runs: the branch merges it with the other's by the test
            val = self.ev(v, env, draws)
            env[name] = val if isinstance(val, (Det, Rnd)) else Opaque("assigned under a test")
            return
        if any(_draws_in(g) for g in guards):
            env[name] = Opaque("assigned under a test on a draw")
            return
        if guards:  # a deterministic test inside a loop
            env[name] = Opaque("assigned under a test")
            return
        env[name] = self.affine(v, env, draws)

    def affine(self, e: A.Expr, env, draws) -> object:
        """A value that reads at most one accumulated value X, affinely (``s / n``)."""
        randoms = [x for x in free_vars(e) if isinstance(env.get(x), Lin)]
        if not randoms:
            return self.ev(e, env, draws)
        if draws is not None:
            return Opaque("combines accumulated values")
        if len(randoms) > 1:
            return self.combination(e, randoms, env)
        x = randoms[0]
        lx: Lin = env[x]  # type: ignore[assignment]
        X = "$X"
        inner = dict(env)
        inner[x] = Det(fold(A.Binary("+", A.Binary("*", lx.coef, A.Var(X)), lx.const)))
        inner[X] = Det(A.Var(X))
        val = self.ev(e, inner, None)
        if not isinstance(val, Det):
            return Opaque("not affine")
        parts = linear_in(val.expr, X)
        if parts is None:
            return Opaque("not affine in an accumulated value")
        coef, const = parts
        return Lin(coef, const, lx.base, lx.origin, lx.form)

    def combination(self, e: A.Expr, randoms: list[str], env) -> object:
        """A value ``Σ_j a_j·x_j + b`` of several accumulated values ``x_j = c_j·X_j + k_j``
        (``a_j``, ``b`` deterministic): one accumulated value whose parts are the ``x_j``'s parts
        scaled by ``a_j·c_j`` (:func:`combine` gives its moments: the covariances of parts of one
        loop are computed from their shared draws, parts of different loops are independent)."""
        names = {x: f"$X{k}" for k, x in enumerate(sorted(randoms))}
        inner = dict(env)
        for x, ph in names.items():
            inner[x] = Det(A.Var(ph))
            inner[ph] = Det(A.Var(ph))
        val = self.ev(e, inner, None)
        if not isinstance(val, Det):
            return Opaque("combines accumulated values")
        rest = val.expr
        coefs: dict[str, A.Expr] = {}
        for x, ph in names.items():
            parts = linear_in(rest, ph)
            if parts is None or set(names.values()) & free_vars(parts[0]):
                return Opaque("not affine in the accumulated values")
            coefs[x], rest = parts
        start: A.Expr = ZERO
        const: A.Expr = rest
        scaled: list[Part] = []
        origin: frozenset = frozenset()
        integral = True  # X = Σ k_j·X_j: an integer when every X_j is and every k_j is an integer constant
        for x in sorted(randoms):
            lx: Lin = env[x]  # type: ignore[assignment]
            if lx.form is None:
                return Opaque("combines accumulated values whose parts are not kept")
            k = fold(_mul(coefs[x], lx.coef))
            kc = _const(k)
            integral = integral and lx.base.integral and kc is not None and kc.denominator == 1
            const = _add(const, _mul(coefs[x], lx.const))
            start = _add(start, _mul(k, lx.form.start))
            scaled.extend(_scale_part(p, k) for p in lx.form.parts)
            origin |= lx.origin
        form = Form(fold(start), tuple(scaled))
        try:
            mom = self.combine(form, integral)
        except NotApplicable as exc:
            return Opaque(str(exc))
        return Lin(ONE, fold(const), mom, origin, form)

    def combine(self, form: Form, integral: bool = False) -> Moments:
        """The moments of ``X = start + Σ parts``: the parts of one loop (one token) are merged
        into one list of increments per iteration, whose mean and variance :meth:`_moments`
        computes exactly (``E[T²]`` over every pair of terms: the covariance of two values
        that read the same draws is in it, and ``x - x`` has variance 0); parts of different
        loops read different fresh draws and are independent — unless two of them read arrays
        of draws (possibly the same element), when the variance is not given. Means add
        (linearity, no independence needed); variances of independent parts add."""
        groups: dict[frozenset, list[Part]] = {}
        for p in form.parts:
            groups.setdefault(p.token, []).append(p)
        mean: A.Expr = form.start
        var: A.Expr | None = ZERO
        ub: A.Expr | None = ZERO
        width2: A.Expr | None = ZERO  # Hoeffding's Σ w²: a group's tight width, else Popoviciu's 4·ub
        tight = False
        sides: list[A.Expr] = []
        nonneg: A.Expr = A.Binary(">=", form.start, ZERO)
        for ps in groups.values():
            p0 = ps[0]
            terms = tuple(t for p in ps for t in p.terms)
            mom = self._moments(terms, p0.draws, p0.i, p0.lo, p0.hi, p0.nested)  # type: ignore[arg-type]
            m, v, u = mom.mean, mom.var, mom.var_ub
            w2, ws = mom.width2, mom.width_side
            if w2 is None or ws is None:
                w2, ws = (None if u is None else _mul(A.num(4), u)), None
            else:
                tight = True
            if p0.dg != TRUE:
                m = fold(A.Cond(p0.dg, m, ZERO))
                v = None if v is None else fold(A.Cond(p0.dg, v, ZERO))
                u = None if u is None else fold(A.Cond(p0.dg, u, ZERO))
                w2 = None if w2 is None else fold(A.Cond(p0.dg, w2, ZERO))
                ws = None if ws is None else fold(A.Binary("==>", p0.dg, ws))
            mean = _add(mean, m)
            var = None if var is None or v is None else _add(var, v)
            ub = None if ub is None or u is None else _add(ub, u)
            width2 = None if width2 is None or w2 is None else _add(width2, w2)
            if ws is not None:
                sides.append(ws)
            nonneg = _and([nonneg, mom.nonneg])
        if sum(1 for ps in groups.values() if any(p.arrays for p in ps)) > 1:
            var = None  # two loops may read one element of an array of draws
        if var is None:
            ub = None
        if ub is None or not tight:
            width2 = None
        return Moments(
            fold(mean),
            None if var is None else fold(var),
            fold(nonneg),
            integral,
            None if ub is None else fold(ub),
            None,
            None if width2 is None else fold(width2),
            None if width2 is None else _and(sides),
        )

    def total_term(self, inc: A.Expr, env, guards) -> Term | None:
        """An increment ``a·v + b`` of an accumulator in a loop body, ``v`` an inner loop's total
        made in this iteration (a :class:`Lin` ``coef·X + const``), ``a``, ``b`` deterministic, under
        deterministic tests ``G``: the term ``[G]·(a·coef·X + a·const + b)`` as an aggregate with
        ``E = [G]·(a·coef·E[X] + a·const + b)``, ``Var = [G]·(a·coef)²·Var[X]`` and never negative
        when ``X`` is not and ``a·coef >= 0``, ``a·const + b >= 0`` (None: not this shape)."""
        if any(_draws_in(g) for g in guards):
            return None
        randoms = [x for x in free_vars(inc) if isinstance(env.get(x), Lin)]
        if len(randoms) != 1:
            return None
        lx: Lin = env[randoms[0]]  # type: ignore[assignment]
        probe = dict(env)
        probe[randoms[0]] = Det(fold(A.Binary("+", A.Binary("*", lx.coef, A.Var(X)), lx.const)))
        probe[X] = Det(A.Var(X))
        val = self.ev(inc, probe, None)
        if not isinstance(val, Det):
            return None
        parts = linear_in(val.expr, X)
        if parts is None:
            return None
        a, b = parts
        g = _and(guards)
        b0 = lx.base
        mean = _add(_mul(a, b0.mean), b)
        var = None if b0.var is None else _mul(_mul(a, a), b0.var)
        if g != TRUE:
            mean = fold(A.Cond(g, mean, ZERO))
            var = None if var is None else fold(A.Cond(g, var, ZERO))
        nonneg = _and([b0.nonneg, A.Binary(">=", a, ZERO), A.Binary(">=", b, ZERO)])
        return Term((), ZERO, Moments(mean, var, nonneg), lx.origin)

    def sample(self, s: A.Sample, env, draws, guards) -> None:
        names = [A.target_name(t) for t in s.targets]
        d = s.dist
        items = set_items(d.args[0]) if d.func == "unif" and len(d.args) == 1 else None
        args = [] if items is not None else [self.ev(a, env, draws) for a in d.args]
        # a draw made under a test is taken as made always (deferred decision: it is independent of
        # the tests' draws, and only terms under the same tests read it; after the branch it is Opaque)
        ok = (
            len(s.targets) == 1
            and isinstance(s.targets[0], A.Var)
            and draws is not None
            and (items is not None or ARITY.get(d.func) == len(args))
            and all(isinstance(a, Det) for a in args)
        )
        if not ok:
            for n in names:
                env[n] = Opaque("a draw of an unrecognised kind or place")
            return
        assert draws is not None
        if items is not None:
            env[names[0]] = Rnd(A.Var(draws.fresh("set", items)))
            return
        dargs = tuple(a.expr for a in args if isinstance(a, Det))
        dg = _and([g for g in guards if not _draws_in(g)])  # needed where the draw is made
        if d.func == "unif" and not (self._int(d.args[0], env) and self._int(d.args[1], env)):
            env[names[0]] = Opaque("unif over a real range")
            return
        for name, cond in dist_side(d.func, dargs):
            self.side.append((name, cond if dg == TRUE else A.Binary("==>", dg, cond)))
        env[names[0]] = Rnd(A.Var(draws.fresh(d.func, dargs)))

    def _bool(self, e: A.Expr, env) -> bool:
        try:
            return self.types.type_of(e) == A.BOOL
        except Exception:  # noqa: BLE001 - an expression the type checker cannot type
            return False

    def _int(self, e: A.Expr, env) -> bool:
        try:
            return self.types.type_of(e) == A.INT
        except Exception:  # noqa: BLE001 - an expression the type checker cannot type: not an int
            return False

    def branch(self, s: A.If, env, draws, guards) -> None:
        c = self.ev(s.cond, env, draws)
        written = _written(s)
        if not isinstance(c, (Det, Rnd)) or (draws is None and not isinstance(c, Det)):
            for x in written:
                env[x] = Opaque("written under an unrecognised test")
            return
        if draws is None and _has_loop(s):
            for x in written:
                env[x] = Opaque("a loop under a test")
            return
        e1, e2 = dict(env), dict(env)
        self.block(s.then.stmts, e1, draws, guards + (c.expr,))  # type: ignore[union-attr]
        if s.other is not None:
            self.block(s.other.stmts, e2, draws, guards + (fold(A.Unary("!", c.expr)),))  # type: ignore[union-attr]
        for x in set(e1) | set(e2):
            a, b, before = e1.get(x), e2.get(x), env.get(x)
            if a is before and b is before:
                continue
            if isinstance(before, Acc) and isinstance(a, Acc) and isinstance(b, Acc):
                k = len(before.terms)
                kinds = {c.flag for c in (before, a, b) if c.terms}
                if len(kinds) > 1:
                    env[x] = Opaque("both raised and set to true")
                    continue
                env[x] = Acc(before.terms + a.terms[k:] + b.terms[k:], True in kinds)
            elif a == b and a is not None and not isinstance(a, (Rnd, Acc)) and draws is None:
                env[x] = a
            elif draws is not None and isinstance(a, (Det, Rnd)) and isinstance(b, (Det, Rnd)):
                # a value chosen by the test, in this iteration: c ? a : b (a function of its draws)
                val = fold(A.Cond(c.expr, a.expr, b.expr))  # type: ignore[union-attr]
                env[x] = Rnd(val) if isinstance(c, Rnd) or isinstance(a, Rnd) or isinstance(b, Rnd) else Det(val)
            else:
                env[x] = Opaque("written in a branch")

    # --- loops
    def counted(self, s: A.Stmt, counter: str) -> CountedLoop:
        line = _line(s)
        heads = [h for h in self.cfa.loop_heads if self.cfa.graph.nodes[h].get("line") == line]
        if len(heads) != 1:
            raise NotApplicable(f"line {line}: the loop is not found in the control-flow automaton")
        try:
            cl = counted_loop(self.cfa, heads[0])
        except NotCounted as exc:
            raise NotApplicable(str(exc)) from None
        if cl.counter != counter:
            raise NotApplicable(f"line {line}: the loop's counter is not '{counter}'")
        self.loops.append(cl)
        return cl

    def for_loop(self, s: A.For, env, draws, guards) -> None:
        if s.var in _written(s.body):
            raise NotApplicable(f"line {_line(s)}: the loop variable is written in the body")
        cl = self.counted(s, s.var)
        env[s.var] = self.ev(s.lo, env, draws)
        self.loop(s, list(s.body.stmts), cl, env, draws, guards)
        env[s.var] = Opaque("loop variable")

    def while_loop(self, s: A.While, env, draws, guards) -> None:
        c = s.cond
        stmts = list(s.body.stmts)
        mirror = {"<": ">", ">": "<"}
        if isinstance(c, A.Binary) and c.op in mirror and isinstance(c.right, A.Var) and not isinstance(c.left, A.Var):
            c = A.Binary(mirror[c.op], c.right, c.left)
        if not (isinstance(c, A.Binary) and c.op in ("<", "<=") and isinstance(c.left, A.Var) and stmts):
            raise NotApplicable(
                f"line {_line(s)}: only counted loops `while (i < H) {{ …; i := i + 1; }}` are recognised"
            )
        i = c.left.name
        bumps = [
            k
            for k, st in enumerate(stmts)
            if isinstance(st, A.Assign) and st.targets == (A.Var(i),) and st.value == A.Binary("+", A.Var(i), ONE)
        ]
        if len(bumps) != 1:
            raise NotApplicable(f"line {_line(s)}: the loop body must raise `{i} := {i} + 1;` once, at its top level")
        if not self._int(A.Var(i), env) or not self._int(c.right, env):
            raise NotApplicable(f"line {_line(s)}: the counter and the bound of a counted loop must be integers")
        rest = stmts[: bumps[0]] + stmts[bumps[0] + 1 :]
        if any(i in _written(st) for st in rest):
            raise NotApplicable(f"line {_line(s)}: the counter '{i}' is written elsewhere in the body")
        cl = self.counted(s, i)
        if not cl.up:
            raise NotApplicable(f"line {_line(s)}: the loop does not count up")
        # the statements after the raise read i + 1 (i: the counter's value at the loop head)
        self.loop(s, rest, cl, env, draws, guards, bumps[0])
        hi = self.ev(cl.hi, env, draws)
        env[i] = hi if isinstance(hi, Det) else Opaque("the counter")

    def loop(self, s, stmts, cl: CountedLoop, env, draws, guards, bump_at: int | None = None) -> None:
        if any(_draws_in(g) for g in guards):
            for x in _written(s):
                env[x] = Opaque("a loop under a test on a draw")
            return
        i = cl.counter
        lo, hi = self.ev(cl.lo, env, draws), self.ev(cl.hi, env, draws)
        if not (isinstance(lo, Det) and isinstance(hi, Det)):
            raise NotApplicable(f"line {_line(s)}: the range of the loop is not deterministic")
        lo_e, hi_e = lo.expr, hi.expr
        dg = _and(guards)
        self.side.append(
            ("loop runs", A.Binary("<=", lo_e, hi_e) if dg == TRUE else A.Binary("==>", dg, A.Binary("<=", lo_e, hi_e)))
        )
        written: set[str] = set()
        for st in stmts:
            written |= _written(st)
        inner: dict[str, object] = {}
        for x, v in env.items():  # the enclosing iteration's draws are not read in the loop
            inner[x] = Opaque("a draw of the enclosing iteration") if isinstance(v, Rnd) else v
            if isinstance(v, Lin):  # a total of before the loop: the same value at every iteration
                inner[x] = Opaque("an accumulated value of before the loop")
        token = frozenset({next(self.tokens)})
        inner[i] = Det(A.Var(i))
        for x in written:
            before = env.get(x)
            inner[x] = Acc() if isinstance(before, (Det, Lin, Acc, Flag)) else Opaque("set in the loop")
        fill = self._fill(stmts, i)
        mine = _Draws(self.ids, lambda e: self._int(e, inner))
        arrays_before = self.arr_reads
        side_before = len(self.side)
        if bump_at is None:
            self.block(stmts, inner, mine, ())
        else:
            self.block(stmts[:bump_at], inner, mine, ())
            inner[i] = Det(A.Binary("+", A.Var(i), ONE))
            self.block(stmts[bump_at:], inner, mine, ())
        body_side = self.side[side_before:]
        del self.side[side_before:]
        for name, cond in body_side:
            if set(free_vars(cond)) & (written - {i}):
                raise NotApplicable(f"line {_line(s)}: a {name} condition in the loop depends on the iteration's state")
            cond = _forall(i, lo_e, hi_e, cond)
            self.side.append((name, cond if dg == TRUE else A.Binary("==>", dg, cond)))
        nested = draws is not None
        for x in written:
            v, before = inner.get(x), env.get(x)
            filled = fill.get(x)
            if filled is not None:
                func, args = filled
                full = not nested and dg == TRUE  # filled whenever the program runs
                env[x] = DrawArray(func, args, i, lo_e, hi_e) if full else Opaque("drawn in a nested or guarded loop")
                continue
            if not isinstance(v, Acc) or not isinstance(before, (Det, Lin, Acc, Flag)):
                env[x] = Opaque("the value of the last iteration")
                continue
            if not v.terms:
                continue
            if isinstance(before, Flag) and not v.flag:
                env[x] = Opaque("a flag raised as a number")
                continue
            if v.flag and self.arr_reads != arrays_before:
                env[x] = Opaque("a flag set by a loop that reads an array of draws")
                continue
            try:
                mom = self._moments(v.terms, mine, i, lo_e, hi_e, nested)
            except NotApplicable as exc:
                env[x] = Opaque(str(exc))
                continue
            if dg != TRUE:  # the loop runs only when the deterministic tests hold
                mom = Moments(
                    fold(A.Cond(dg, mom.mean, ZERO)),
                    None if mom.var is None else fold(A.Cond(dg, mom.var, ZERO)),
                    mom.nonneg,
                    False,
                    None if mom.var_ub is None else fold(A.Cond(dg, mom.var_ub, ZERO)),
                    None if mom.var_split is None else fold(A.Cond(dg, mom.var_split, ZERO)),
                    None if mom.width2 is None else fold(A.Cond(dg, mom.width2, ZERO)),
                    None if mom.width_side is None else fold(A.Binary("==>", dg, mom.width_side)),
                )
            origin = token.union(*[t.origin for t in v.terms], *mine.flag_origin.values())
            if isinstance(before, Acc):
                if before.terms and before.flag != v.flag:
                    env[x] = Opaque("both raised and set to true")
                    continue
                env[x] = Acc(before.terms + (Term((), ZERO, mom, origin),), v.flag)
            elif v.flag:  # set at least once only if some set's test held: at most their count
                if isinstance(before, Flag):
                    env[x] = Flag(_add(before.bound, mom.mean), before.origin | origin)
                elif isinstance(before, Det) and self._bool(A.Var(x), env):
                    env[x] = Flag(_add(fold(A.Cond(before.expr, ONE, ZERO)), mom.mean), origin)
                else:
                    env[x] = Opaque("set to true in a loop")
            elif isinstance(before, Det):
                part = Part(token, v.terms, mine, i, lo_e, hi_e, nested, dg, self.arr_reads != arrays_before)
                env[x] = Lin(
                    ONE,
                    ZERO,
                    Moments(
                        _add(before.expr, mom.mean),
                        mom.var,
                        _and([A.Binary(">=", before.expr, ZERO), mom.nonneg]),
                        self._int(A.Var(x), env),  # X is x itself
                        mom.var_ub,
                        mom.var_split,
                        mom.width2,
                        mom.width_side,
                    ),
                    origin,
                    Form(before.expr, (part,)),
                )
            else:
                assert isinstance(before, Lin)
                if before.coef != ONE:
                    env[x] = Opaque("a scaled accumulated value raised again")
                    continue
                b = before.base
                integral = b.integral and self._int(A.Var(x), env) and self._int(before.const, env)  # x - const
                var: A.Expr | None = None  # two loops' increments may share an array of draws
                ub: A.Expr | None = None
                both = None
                form = None
                if before.form is not None and not nested:  # a second loop of x: its part is added
                    part = Part(token, v.terms, mine, i, lo_e, hi_e, nested, dg, self.arr_reads != arrays_before)
                    form = Form(before.form.start, before.form.parts + (part,))
                    try:
                        both = self.combine(form, integral)
                        var, ub = both.var, both.var_ub
                    except NotApplicable:
                        var, form, both = None, None, None
                env[x] = Lin(
                    ONE,
                    before.const,
                    Moments(
                        _add(b.mean, mom.mean),
                        var,
                        _and([b.nonneg, A.Binary(">=", before.const, ZERO), mom.nonneg]),
                        integral,
                        ub,
                        None,
                        None if both is None else both.width2,
                        None if both is None else both.width_side,
                    ),
                    before.origin | origin,
                    form,
                )

    def _fill(self, stmts, i: str) -> dict[str, tuple[str, tuple[A.Expr, ...]] | None]:
        """Arrays written in the body only by one unguarded ``a[i] ~ D`` at the top level (D's
        arguments deterministic, over the inputs and ``i``): name -> (func, args); other arrays
        written in the body -> None."""
        out: dict[str, tuple[str, tuple[A.Expr, ...]] | None] = {}
        for st in stmts:
            if (
                isinstance(st, A.Sample)
                and len(st.targets) == 1
                and isinstance(st.targets[0], A.Index)
                and st.targets[0].index == A.Var(i)
                and isinstance(st.targets[0].base, A.Var)
                and self._fill_dist(st.dist, i) is not None
            ):
                name = st.targets[0].base.name
                out[name] = None if name in out else self._fill_dist(st.dist, i)
            else:
                for n in A.walk(st):
                    if isinstance(n, (A.Assign, A.Sample)):
                        for t in n.targets:
                            if isinstance(t, A.Index):
                                out[A.target_name(t)] = None
        return out

    def _fill_dist(self, dist: A.Call, i: str) -> tuple[str, tuple[A.Expr, ...]] | None:
        """A distribution with known moments whose parameters read only the inputs and ``i``."""
        if dist.func == "unif" and len(dist.args) == 1:
            items = set_items(dist.args[0])
            return None if items is None else ("set", items)
        if ARITY.get(dist.func) != len(dist.args):
            return None
        if set().union(*[free_vars(a) for a in dist.args]) - self.params - {i}:
            return None
        if dist.func == "unif" and not all(self._int(a, {}) for a in dist.args):
            return None
        return dist.func, tuple(dist.args)

    def _moments(self, terms, draws: _Draws, i, lo, hi, nested: bool) -> Moments:
        side: list[tuple[str, A.Expr]] = []
        mean: A.Expr = ZERO
        nonneg: A.Expr = TRUE
        direct = [t for t in terms if t.agg is None]
        aggs = [t.agg for t in terms if t.agg is not None]
        for t in direct:
            mean = _add(mean, term_mean(t.guards, [t.value], draws, side))
            nonneg = _and([nonneg, _nonneg(t.value, draws)])
        for a in aggs:
            mean = _add(mean, a.mean)
            nonneg = _and([nonneg, a.nonneg])
        var: A.Expr | None
        origins = [t.origin for t in terms if t.agg is not None]
        shared = any(o1 & o2 for k, o1 in enumerate(origins) for o2 in origins[k + 1 :])  # one loop's draws twice
        independent = (
            not draws.flags  # a flag's probability is bounded above only
            and all(idx == A.Var(i) and not nested for idx in draws.arr_index.values())
            and all(a.var is not None for a in aggs)
            and not shared
        )
        if independent:
            sq: A.Expr = ZERO
            for t1 in direct:
                for t2 in direct:
                    sq = _add(sq, term_mean(t1.guards + t2.guards, [t1.value, t2.value], draws, side))
            m1: A.Expr = ZERO
            for t in direct:
                m1 = _add(m1, term_mean(t.guards, [t.value], draws, side))
            var = _sub(sq, _mul(m1, m1)) if direct else ZERO
            for a in aggs:
                var = _add(var, a.var)  # type: ignore[arg-type]
        else:
            var = None
        # Popoviciu: T = Σ_k [G_k]·v_k with deterministic v_k lies in [Σ min(0, v_k), Σ max(0, v_k)],
        # an interval of length Σ |v_k|, so Var[T] <= (Σ |v_k|)²/4 (a count's step: 1/4)
        ub: A.Expr | None = None
        if var is not None and direct and not aggs and not any(_draws_in(t.value) for t in direct):
            width: A.Expr = ZERO
            for t in direct:
                c = _const(t.value)
                width = _add(width, _n(abs(c)) if c is not None else A.Call("abs", (t.value,)))
            ub = _div(_mul(width, width), A.num(4))
        # Hoeffding's width, tighter than Popoviciu's when the increments exclude each other (one
        # branch of an if/else raises by one, the other by another): T lies in [min(0, v_1, …),
        # max(0, v_1, …)] when at most one guard holds at any value of the draws. Not assumed:
        # ``T`` itself in that interval at every value of every draw (the support substituted,
        # :func:`_support_forall`) is the condition ``width_side``, which the Hoeffding rule
        # proves; a width that fails it is simply not used.
        width2: A.Expr | None = None
        width_side: A.Expr | None = None
        if ub is not None and len(direct) >= 2:
            low: A.Expr = ZERO
            high: A.Expr = ZERO
            total: A.Expr = ZERO
            for t in direct:
                low = _min(low, t.value)
                high = _max(high, t.value)
                total = _add(total, fold(A.Cond(_and(list(t.guards)), t.value, ZERO)))
            cond: A.Expr = _and([A.Binary("<=", low, total), A.Binary("<=", total, high)])
            for d in sorted(_draws_in(cond)):
                cond = _support_forall(d, draws.dist[d], cond)
            if cond != FALSE and not _draws_in(cond):
                w = fold(_sub(high, low))
                width2 = sum_over(_mul(w, w), i, lo, hi)
                width_side = _forall(i, lo, hi, cond)
        for name, cond in side:  # at every iteration
            self.side.append((name, _forall(i, lo, hi, cond)))
        merged = None if var is None else sum_over(var, i, lo, hi, one_sum=True)
        split = None if var is None else sum_over(var, i, lo, hi)
        return Moments(
            sum_over(mean, i, lo, hi),
            merged,
            _forall(i, lo, hi, nonneg),
            False,
            None if ub is None else sum_over(ub, i, lo, hi),
            None if split == merged else split,
            width2,
            width_side,
        )


def _scale_part(p: Part, k: A.Expr) -> Part:
    """``k·P``: every increment scaled (an aggregate's mean by ``k``, its variance by ``k²``)."""
    if k == ONE:
        return p
    terms = []
    for t in p.terms:
        if t.agg is None:
            terms.append(Term(t.guards, fold(_mul(k, t.value)), None, t.origin))
        else:
            a = t.agg
            agg = Moments(
                fold(_mul(k, a.mean)),
                None if a.var is None else fold(_mul(_mul(k, k), a.var)),
                _and([A.Binary(">=", k, ZERO), a.nonneg]),
            )
            terms.append(Term(t.guards, t.value, agg, t.origin))
    return Part(p.token, tuple(terms), p.draws, p.i, p.lo, p.hi, p.nested, p.dg, p.arrays)


def linear_in(e: A.Expr, x: str) -> tuple[A.Expr, A.Expr] | None:
    """``(a, b)`` with ``e = a·x + b``, ``a`` and ``b`` not reading ``x`` (syntactically), else None."""
    if x not in free_vars(e):
        return ZERO, e
    if e == A.Var(x):
        return ONE, ZERO
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        l, r = linear_in(e.left, x), linear_in(e.right, x)
        if l is None or r is None:
            return None
        f = _add if e.op == "+" else _sub
        return f(l[0], r[0]), f(l[1], r[1])
    if isinstance(e, A.Binary) and e.op == "*":
        if x not in free_vars(e.left):
            r = linear_in(e.right, x)
            return None if r is None else (_mul(e.left, r[0]), _mul(e.left, r[1]))
        if x not in free_vars(e.right):
            l = linear_in(e.left, x)
            return None if l is None else (_mul(l[0], e.right), _mul(l[1], e.right))
        return None
    if isinstance(e, A.Binary) and e.op == "/" and x not in free_vars(e.right):
        l = linear_in(e.left, x)
        return None if l is None else (_div(l[0], e.right), _div(l[1], e.right))
    if isinstance(e, A.Unary) and e.op == "-":
        o = linear_in(e.operand, x)
        return None if o is None else (fold(A.Unary("-", o[0])), fold(A.Unary("-", o[1])))
    return None


def analyse(program: A.Program, cfa) -> Result:
    """The exit values of ``program``'s variables (see the module docstring); ``cfa`` is the
    program's control-flow automaton, whose loop analysis gives every loop's trip count."""
    if (
        program.rate is not None
        or program.reliability is not None
        or any(isinstance(n, A.Binary) and n.op.endswith(".") for n in A.walk(program.body))
    ):
        raise NotApplicable("unreliable operations are not recognised")
    try:
        types = check_program(program)
    except TampError as exc:
        raise NotApplicable(f"the program does not type-check: {exc}") from None
    for head in cfa.loop_heads:  # every loop ends: a run that does not counts as a failure
        try:
            counted_loop(cfa, head)
        except NotCounted as exc:
            raise NotApplicable(f"a loop that is not counted: {exc}") from None
    ex = _Exec(program, cfa, types)
    env: dict[str, object] = {p.name: Det(A.Var(p.name)) for p in program.params}
    ex.block(program.body.stmts, env, None, ())
    return Result(env, ex.side, ex.loops, ex)


# ---------------------------------------------------------------------------- the claim

X = "X$"  #: the accumulated value in the obligations (a free real: universally quantified)


@dataclass
class LinClaim:
    """The claim over the accumulated value ``X$``: ``post`` is the conjunction of the
    ``ensures`` with every variable it reads replaced by its exit value (``coef·X$ + const``, or
    a deterministic value)."""

    base: Moments
    post: A.Expr
    side: list[tuple[str, A.Expr]]
    requires: list[A.Expr]
    types: dict[str, A.Type]
    loops: list[CountedLoop]


def claim_of(program: A.Program, cfa) -> LinClaim:
    res = analyse(program, cfa)
    post = _and(list(cfa.ensures))
    params = {p.name for p in cfa.params}
    m: dict[str, A.Expr] = {}
    base: Moments | None = None
    read = sorted(set(free_vars(post)) - params)
    lins = [x for x in read if isinstance(res.env.get(x), Lin)]
    divisors: list[tuple[str, A.Expr]] = []  # of a linear form split apart (_one_form)
    # one accumulated value is one Moments object (copies and affine images share it); two
    # accumulators with equal moments (R, L of a walk) are two random values, never one X$
    if len({id(res.env[x].base) for x in lins}) > 1:  # type: ignore[union-attr,attr-defined]
        # several accumulated values: the postcondition must read them through one linear form
        post, lin, divisors = _one_form(post, lins, res)
        base = lin.base
        read = [x for x in read if x not in lins]
        lins = []
    for x in read:
        v = res.env.get(x)
        if isinstance(v, Det):
            m[x] = v.expr
        elif isinstance(v, Lin):
            if base is not None and v.base is not base:
                raise NotApplicable("the postcondition reads two different accumulated values")
            base = v.base
            m[x] = fold(A.Binary("+", A.Binary("*", v.coef, A.Var(X)), v.const))
        else:
            why = v.why if isinstance(v, Opaque) else "not computed"
            raise NotApplicable(f"the postcondition reads '{x}', whose moments are not computed ({why})")
    if base is None:
        raise NotApplicable("the postcondition reads no accumulated value")
    types = dict(cfa.types)
    types[X] = A.INT if base.integral else A.REAL  # an int variable's value minus an int constant
    side: list[tuple[str, A.Expr]] = []
    for name, cond in res.side + divisors:
        cond = fold(cond)
        if cond != TRUE and (name, cond) not in side:
            side.append((name, cond))
    return LinClaim(base, fold(subst(post, m)), side, list(cfa.requires), types, list(res.loops))


def _affine_coefs(e: A.Expr, phs: list[str]) -> tuple[list[A.Expr], A.Expr] | None:
    """``([a_1, …], b)`` with ``e = Σ a_j·ph_j + b`` syntactically (no ``a_j`` nor ``b`` reads a
    placeholder), else None."""
    rest = fold(e)
    coefs = []
    for ph in phs:
        parts = linear_in(rest, ph)
        if parts is None or set(phs) & free_vars(parts[0]):
            return None
        coefs.append(fold(parts[0]))
        rest = parts[1]
    rest = fold(rest)
    return None if set(phs) & free_vars(rest) else (coefs, rest)  # type: ignore[return-value]


def _ratio(a: list[A.Expr], v: list[A.Expr]) -> Fraction | None:
    """``λ`` with ``a_j = λ·v_j`` for every ``j`` (constants compared exactly; a coefficient that is
    not a constant must be the reference's itself, ``λ = 1``), else None."""
    lam: Fraction | None = None
    for aj, vj in zip(a, v):
        ca, cv = _const(aj), _const(vj)
        if cv == 0:
            if ca != 0:
                return None
            continue
        if ca is not None and cv is not None:
            r = ca / cv
        elif aj == vj:
            r = Fraction(1)
        else:
            return None
        if lam is not None and r != lam:
            return None
        lam = r
    return lam


def _one_form(post: A.Expr, lins: list[str], res: Result) -> tuple[A.Expr, Lin, list[tuple[str, A.Expr]]]:
    """The postcondition over ``X$`` when it reads the accumulated values ``x_j`` (``lins``) only
    through one linear form ``L = Σ v_j·x_j``: every maximal subterm affine in the ``x_j`` (a
    comparison ``l op r`` is read as ``l - r op 0``) must be ``λ·L + b`` with ``λ`` a constant and
    ``b`` not reading them; ``L`` is an accumulated value whose moments :meth:`_Exec.combination`
    computes (the covariances of one loop's increments from their shared draws) and the subterm
    becomes ``λ·(X$ + c) + b`` for ``L = X$ + c``: an identity of the reals where every divisor of
    the subterm is not zero (``(H - F)/n = H/n - F/n`` needs ``n != 0``: the solver's ``a/0`` is an
    unspecified function of ``a``), so the rewritten postcondition holds exactly when the original
    does; those divisors are returned as side conditions (proved under ``requires`` like the
    others). NotApplicable otherwise."""
    phs = [f"$L{k}" for k in range(len(lins))]
    body = subst(post, {x: A.Var(ph) for x, ph in zip(lins, phs)})
    ref: list[A.Expr] | None = None
    placeholder_x = A.Var("$Lform")
    divisors: list[tuple[str, A.Expr]] = []

    def rw(e: A.Expr) -> A.Expr:
        nonlocal ref
        if not (set(phs) & free_vars(e)):
            return e
        if isinstance(e, A.Binary) and e.op in ("<", "<=", ">", ">=", "==", "!="):
            d = A.Binary("-", e.left, e.right)
            if _affine_coefs(d, phs) is not None:
                return A.Binary(e.op, rw(d), ZERO)
        aff = _affine_coefs(e, phs)
        if aff is not None:
            coefs, b = aff
            for n in A.walk(e):
                if isinstance(n, A.Binary) and n.op == "/" and _const(n.right) in (None, 0):
                    cond = ("a divisor of the postcondition's linear form is not zero", A.Binary("!=", n.right, ZERO))
                    if cond not in divisors:
                        divisors.append(cond)
            if ref is None:
                if all(_const(c) == 0 for c in coefs):
                    return b
                ref = coefs
            lam = _ratio(coefs, ref)
            if lam is None:
                raise NotApplicable("the postcondition reads the accumulated values through two different linear forms")
            return fold(A.Binary("+", A.Binary("*", _n(lam), placeholder_x), b))
        if isinstance(e, (A.Sum, A.Quant)) and set(phs) & free_vars(e):
            raise NotApplicable("the postcondition reads accumulated values under a binder")
        kids = list(A.children(e))
        if not kids:
            raise NotApplicable("the postcondition reads accumulated values outside a linear form")
        return rebuild(e, [rw(k) for k in kids])  # type: ignore[arg-type,return-value]

    out = rw(body)
    if ref is None or set(phs) & free_vars(out):
        raise NotApplicable("the postcondition reads the accumulated values outside one linear form")
    used = [x for x, c in zip(lins, ref) if _const(c) != 0]
    form_e: A.Expr = ZERO
    for x, c in zip(lins, ref):
        if _const(c) != 0:
            form_e = _add(form_e, _mul(c, A.Var(x)))
    ex: _Exec = res.ex  # type: ignore[assignment]
    lin = ex.combination(fold(form_e), used, res.env) if len(used) > 1 else res.env[used[0]]
    if not isinstance(lin, Lin):
        why = lin.why if isinstance(lin, Opaque) else "not computed"
        raise NotApplicable(f"the linear form of the accumulated values has no computed moments ({why})")
    value = fold(A.Binary("+", A.Binary("*", lin.coef, A.Var(X)), lin.const))
    return fold(subst(out, {placeholder_x.name: value})), lin, divisors


RULES = (
    "markov",
    "chebyshev",
    "markov2",
    "pairs",
    "chebyshev_ub",
    "hoeffding",
    "hoeffding_lower",
    "hoeffding_upper",
    "hoeffding_p",
    "hoeffding_lower_p",
    "hoeffding_upper_p",
)

#: Hoeffding's rules: the tail they bound (both, lower, upper) and whether the width is the tight
#: one (:attr:`Moments.width2`, with its condition) or Popoviciu's (``4·var_ub``, none needed)
HOEFFDING = {
    "hoeffding": ("both", True),
    "hoeffding_lower": ("lower", True),
    "hoeffding_upper": ("upper", True),
    "hoeffding_p": ("both", False),
    "hoeffding_lower_p": ("lower", False),
    "hoeffding_upper_p": ("upper", False),
}


def _reads_exp(e: A.Expr) -> bool:
    return any(isinstance(n, A.Call) and n.func == "exp" for n in A.walk(e))


def hoeffding_candidates(claim: LinClaim, cheb: list[A.Expr], beta: A.Expr | None) -> list[tuple[str, A.Expr]]:
    """Hoeffding at Chebyshev's thresholds, both tails and each one, when the increments are
    independent and bounded (a width is known) and the claim's bound reads ``exp`` (only a
    search order: every candidate is decided like any other)."""
    b = claim.base
    if b.var is None or b.var_ub is None or beta is None or not _reads_exp(beta):
        return []
    kinds = [True, False] if b.width2 is not None else [False]
    out: list[tuple[str, A.Expr]] = []
    for tight in kinds:
        for thr in cheb:
            for tail in ("both", "lower", "upper"):
                rule = next(r for r, (t, k) in HOEFFDING.items() if t == tail and k == tight)
                if (rule, thr) not in out:
                    out.append((rule, thr))
    return out


Y = "Y$"  #: ``X$ * X$`` while candidates are read off


def _square_crossing(e: A.Expr) -> A.Expr | None:
    """``y0`` with ``e = α·(X$·X$ - y0)`` (``e`` affine in the square ``X$·X$`` and reading ``X$``
    nowhere else), else None."""
    sq = A.Binary("*", A.Var(X), A.Var(X))
    e2 = replace_all(e, sq, A.Var(Y))
    if X in free_vars(e2):
        return None
    lin = linear_in(e2, Y)
    if lin is None or lin[0] == ZERO:
        return None
    return _div(fold(A.Unary("-", lin[1])), lin[0])


def candidates(claim: LinClaim, beta: A.Expr | None = None) -> list[tuple[str, A.Expr]]:
    """Thresholds to try, read off the postcondition's comparisons (never trusted: POST decides):
    Markov's ``X$ < t`` at the crossing point ``t`` of a comparison affine in ``X$``; Chebyshev's
    ``|X$ - E| < a`` at ``a = c/|α|`` for ``abs(α·X$ + β) < c``, and at the distance from the
    mean to a crossing point."""
    out: list[tuple[str, A.Expr]] = []
    mean = claim.base.mean
    later: list[tuple[str, A.Expr]] = []  # the integer variants, after the first tries
    flipped: list[tuple[str, A.Expr]] = []  # ``c <= abs(…)`` (a folded row test ``abs(s) >= t``), last
    for n in A.walk(claim.post):
        if isinstance(n, A.Binary) and n.op == "==" and claim.base.integral:
            # ``X == c`` for a count that is never negative: Markov at c + 1 (POST decides; it holds
            # when c is 0, ``X >= 0 ∧ X < 1`` being ``X == 0``): "no event happened"
            lin = linear_in(fold(A.Binary("-", n.left, n.right)), X)
            if lin is not None and lin[0] != ZERO:
                later.append(("markov", _add(_div(fold(A.Unary("-", lin[1])), lin[0]), ONE)))
            continue
        if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=")):
            continue
        l, r = (n.left, n.right) if n.op in ("<", "<=") else (n.right, n.left)
        if isinstance(r, A.Call) and r.func == "abs" and X not in free_vars(l):
            lin = linear_in(r.args[0], X)
            if lin is not None and lin[0] != ZERO:
                a = lin[0] if _const(lin[0]) is not None and _const(lin[0]) > 0 else A.Call("abs", (lin[0],))  # type: ignore[operator]
                flipped.append(("chebyshev", _div(l, a)))
            continue
        if isinstance(l, A.Call) and l.func == "abs" and X not in free_vars(r):
            lin = linear_in(l.args[0], X)
            if lin is not None and lin[0] != ZERO:
                a = lin[0] if _const(lin[0]) is not None and _const(lin[0]) > 0 else A.Call("abs", (lin[0],))  # type: ignore[operator]
                out.append(("chebyshev", _div(r, a)))
                if claim.base.integral:
                    later.append(("chebyshev", _add(_div(r, a), ONE)))
            continue
        diff = fold(A.Binary("-", l, r))
        lin = linear_in(diff, X)
        if lin is None or lin[0] == ZERO:
            y0 = _square_crossing(diff)
            if y0 is not None:
                out.append(("markov2", y0))
            continue
        x0 = _div(fold(A.Unary("-", lin[1])), lin[0])
        out.append(("markov", x0))
        out.append(("chebyshev", _sub(x0, mean)))
        out.append(("chebyshev", _sub(mean, x0)))
        if claim.base.integral:  # X <= c fails only at X >= c + 1 (and X >= c only at X <= c - 1)
            later.append(("markov", _add(x0, ONE)))
            later.append(("pairs", x0))
            later.append(("pairs", _add(x0, ONE)))
            later.append(("chebyshev", _sub(_add(x0, ONE), mean)))
            later.append(("chebyshev", _sub(mean, _sub(x0, ONE))))
    if claim.base.var_ub is not None:  # Chebyshev with the variance's upper bound, after the rest
        later += [("chebyshev_ub", thr) for rule, thr in out + later if rule == "chebyshev"]
    # Hoeffding last (an exponential bound asked of independent bounded increments)
    later += hoeffding_candidates(claim, [thr for rule, thr in out + later if rule == "chebyshev"], beta)
    seen: list[tuple[str, A.Expr]] = []
    for c in out + later + flipped:
        if c not in seen and (c[0] == "markov" or claim.base.var is not None):  # var: the mean is exact
            seen.append(c)
    return seen


def obligations(
    claim: LinClaim, rule: str, thr: A.Expr, beta: A.Expr, sums: tuple[int, ...] = ()
) -> list[tuple[str, str, A.Expr]]:
    """SHAPE (the analysis' side conditions), then for Markov (``Pr[X >= t] <= E[X]/t`` for
    ``X >= 0``, ``t > 0``) NONNEG, THRESHOLD, POST (``0 <= X < t`` implies the postcondition: X is
    never negative by NONNEG, so a run fails only at ``X >= t``) and
    BUDGET (``E[X]/t <= β``); for Chebyshev (``Pr[|X - E[X]| >= a] <= Var[X]/a²``, ``a > 0``)
    THRESHOLD, POST (``|X - E[X]| < a`` implies it) and BUDGET (``Var[X]/a² <= β``); for the pair
    count (``Pr[X >= t] <= E[X(X-1)]/(t(t-1))`` for an integer ``X``, ``t > 1``: ``X(X-1) >= 0`` at
    every integer and ``>= t(t-1)`` at ``X >= t``, as ``x(x-1)`` grows for ``x >= 1/2``) THRESHOLD,
    POST and BUDGET (``(Var + E² - E)/(t(t-1)) <= β``). ``sums``: the indices of the obligations
    asked in the form of :func:`tamp.cfa.sum_linear.linear_sums` (array sums by linearity,
    constants out, terms apart: a valid form implies the obligation), NotApplicable when one of
    them has no sum to rewrite."""
    out = _obligations(claim, rule, thr, beta)
    for n in sums:
        if not 0 <= n < len(out):
            raise NotApplicable(f"no obligation {n} to ask with its sums by linearity")
        k, where, f = out[n]
        g = linear_sums(f)
        if g is None:
            raise NotApplicable(f"{k} ({where}) has no sum to rewrite by linearity")
        out[n] = (k, where + " (sums by linearity)", g)
    return out


def _obligations(claim: LinClaim, rule: str, thr: A.Expr, beta: A.Expr) -> list[tuple[str, str, A.Expr]]:
    b = claim.base
    out = [("SHAPE", name, cond) for name, cond in claim.side]
    x = A.Var(X)
    if rule == "markov":
        out.append(("NONNEG", "the accumulated value is never negative", b.nonneg))
        out.append(("THRESHOLD", "Markov's threshold is positive", A.Binary(">", thr, ZERO)))
        # X >= 0 on every run (NONNEG), so the runs below the threshold are those in [0, t)
        below = A.Binary("&&", A.Binary(">=", x, ZERO), A.Binary("<", x, thr))
        out.append(("POST", "from 0 up to the threshold the postcondition holds", A.Binary("==>", below, claim.post)))
        out.append(
            (
                "BUDGET",
                "the mean over the threshold is at most the bound",
                A.Binary("<=", A.Binary("/", b.mean, thr), beta),
            )
        )
    elif rule in ("chebyshev", "chebyshev_ub"):
        if b.var is None:
            raise NotApplicable("the increments are not shown independent: no variance")
        upper = rule == "chebyshev_ub"  # Chebyshev with an upper bound of the variance (Popoviciu)
        var = b.var_ub if upper else b.var
        if var is None:
            raise NotApplicable("no upper bound of the variance")
        out.append(("THRESHOLD", "Chebyshev's deviation is positive", A.Binary(">", thr, ZERO)))
        dev = A.Call("abs", (A.Binary("-", x, b.mean),))
        out.append(
            (
                "POST",
                "within the deviation of the mean the postcondition holds",
                A.Binary("==>", A.Binary("<", dev, thr), claim.post),
            )
        )
        what = "the variance's upper bound" if upper else "the variance"
        budget: A.Expr = A.Binary("<=", A.Binary("/", var, A.Binary("*", thr, thr)), beta)
        if not upper and b.var_split is not None:  # the same variance, by parts: either form
            split = A.Binary("<=", A.Binary("/", b.var_split, A.Binary("*", thr, thr)), beta)
            budget = A.Binary("||", budget, split)
        out.append(("BUDGET", f"{what} over the squared deviation is at most the bound", budget))
    elif rule == "markov2":
        if b.var is None:
            raise NotApplicable("the increments are not shown independent: no second moment")
        out.append(("THRESHOLD", "Markov's threshold on the square is positive", A.Binary(">", thr, ZERO)))
        out.append(
            (
                "POST",
                "below the threshold the square satisfies the postcondition",
                A.Binary("==>", A.Binary("<", A.Binary("*", x, x), thr), claim.post),
            )
        )
        second = A.Binary("+", b.var, A.Binary("*", b.mean, b.mean))  # E[X²] = Var[X] + E[X]²
        out.append(
            (
                "BUDGET",
                "the second moment over the threshold is at most the bound",
                A.Binary("<=", A.Binary("/", second, thr), beta),
            )
        )
    elif rule == "pairs":
        if b.var is None or not b.integral:
            raise NotApplicable("the factorial moment needs the variance of an integer value")
        out.append(("THRESHOLD", "the threshold of the pair count is above 1", A.Binary(">", thr, ONE)))
        out.append(
            ("POST", "below the threshold the postcondition holds", A.Binary("==>", A.Binary("<", x, thr), claim.post))
        )
        out.append(
            (
                "BUDGET",
                "the factorial moment over the threshold's is at most the bound",
                A.Binary("<=", A.Binary("/", _factorial2(b), A.Binary("*", thr, A.Binary("-", thr, ONE))), beta),
            )
        )
    elif rule in HOEFFDING:
        # Hoeffding: X = start + Σ_i T_i with independent T_i, each in an interval of width w_i:
        # Pr[X - E[X] >= a] <= exp(-2a²/Σ w_i²), the same for the lower tail, twice for both
        tail, tight = HOEFFDING[rule]
        if b.var is None or b.var_ub is None:
            raise NotApplicable("the increments are not shown independent and bounded")
        if tight:
            if b.width2 is None or b.width_side is None:
                raise NotApplicable("no width of the increments but Popoviciu's")
            w2 = b.width2
            out.append(("WIDTH", "each iteration's increment lies in its interval", b.width_side))
        else:
            w2 = _mul(A.num(4), b.var_ub)  # Σ (Σ_k |v_k|)²: the increment lies in [Σ min(0, v_k), Σ max(0, v_k)]
        out.append(("THRESHOLD", "Hoeffding's deviation is positive", A.Binary(">", thr, ZERO)))
        d = A.Binary("-", x, b.mean)
        good = {
            "both": A.Binary("<", A.Call("abs", (d,)), thr),
            "lower": A.Binary(">", d, A.Unary("-", thr)),
            "upper": A.Binary("<", d, thr),
        }[tail]
        out.append(
            ("POST", "inside the deviation from the mean the postcondition holds", A.Binary("==>", good, claim.post))
        )
        tail_bound = hoeffding_bound(w2, thr, tail == "both")
        budget = A.Binary(
            "||",
            A.Binary("&&", A.Binary(">", w2, ZERO), A.Binary("<=", tail_bound, beta)),
            # no width at all: X is its mean on every run, and the tail is empty
            A.Binary("&&", A.Binary("<=", w2, ZERO), A.Binary(">=", beta, ZERO)),
        )
        out.append(("BUDGET", "Hoeffding's tail at the deviation is at most the bound", budget))
    else:
        raise NotApplicable(f"unknown rule {rule}")
    return out


def hoeffding_bound(w2: A.Expr, thr: A.Expr, both: bool) -> A.Expr:
    """``exp(-2a²/W)`` (one tail) or twice it (both), ``W = Σ w_i²``."""
    e: A.Expr = A.Call("exp", (A.Unary("-", A.Binary("/", A.Binary("*", A.num(2), A.Binary("*", thr, thr)), w2)),))
    return A.Binary("*", A.num(2), e) if both else e


def _factorial2(b: Moments) -> A.Expr:
    """``E[X(X - 1)] = Var[X] + E[X]² - E[X]`` (the second factorial moment; exact moments)."""
    assert b.var is not None
    return A.Binary("-", A.Binary("+", b.var, A.Binary("*", b.mean, b.mean)), b.mean)


def bound_of(claim: LinClaim, rule: str, thr: A.Expr) -> A.Expr | None:
    """The failure bound the rule gives at a threshold (what BUDGET compares with the claim's
    bound): ``E/t`` (Markov), ``Var/a²`` (Chebyshev), ``(Var + E²)/t`` (Markov on the square);
    None without a variance. Used by ``fails ?`` inference as candidates, each then proved."""
    b = claim.base
    if rule == "markov":
        return _div(b.mean, thr)
    if b.var is None:
        return None
    if rule == "chebyshev":
        return _div(b.var, _mul(thr, thr))
    if rule == "chebyshev_ub":
        return None if b.var_ub is None else _div(b.var_ub, _mul(thr, thr))
    if rule in HOEFFDING:
        tail, tight = HOEFFDING[rule]
        w2 = b.width2 if tight else (None if b.var_ub is None else _mul(A.num(4), b.var_ub))
        return None if w2 is None else hoeffding_bound(w2, thr, tail == "both")
    if rule == "pairs":
        return _div(fold(_factorial2(b)), _mul(thr, _sub(thr, ONE))) if b.integral else None
    return _div(_add(b.var, _mul(b.mean, b.mean)), thr)
