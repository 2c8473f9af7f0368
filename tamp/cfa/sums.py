"""Where a program computes a sum of independent draws: the shapes the concentration rules
(:mod:`axioms.concentration`) apply to.

A program analysis below the engines (like :mod:`.loops`, whose counted loops it uses for every
loop's trip count): the concentration prover (:mod:`tamp.prover.concentration.proof`) and the
certificate checker (:mod:`tamp.certificate.conc_checker`) both derive the sums from the
program with it, the checker never from the prover's result.

A small abstract interpretation of the program's AST gives every variable at exit one of

* ``Det(e)``: a deterministic value, ``e`` over the inputs;
* ``Lin(d, c, S)``: ``d + c·S`` with ``d``, ``c`` deterministic and ``S`` a :class:`NoiseSum`,
  the centred sum ``Σ (X - E[X])`` of independent draws of one family;
* ``Opaque``: anything else (nothing is claimed about it).

Draws of ``unif(lo, hi)`` and of the real ``uniform(a, b)`` are bounded (family ``bounded``).

Recognised: straight-line sums (``t := a + b`` of draws, shifted or scaled by deterministic
values, e.g. an average ``t / n``); counted loops ``while (i < H) { …; i := i + 1; }`` and
``for i in lo..hi { … }`` whose body accumulates ``t := t + y`` of a draw ``y`` made in the same
iteration (``y ~ D`` or ``a[i] ~ D``), or counts ``if (f) { k := k + 1; }`` of a fresh
``f ~ bern(r)`` (also ``k := k + (f ? 1 : 0)``).

The body may do other work: what the sum does not read is ignored for it (sound: it neither reads
nor writes the sum's draws; a variable it writes is at worst ``Opaque``); a draw combined with
itself is one draw times a constant (``y := 2*t; s := s + y - t`` adds ``t`` — coefficients are
added, never the draws counted twice; constant coefficients are folded, so ``3*u/3`` is ``u``);
and a count's increment ``k := k + 1`` may stand next to other statements in either branch of
``if (f)`` (the else branch counts ``!f``, probability ``1 - r``), provided ``k`` is written
once in the whole ``if`` (the test is read on entry, so ``k`` grows by one exactly when ``f``
held then).

*Bounded terms* (Hoeffding's sums of terms X_i ∈ [L, H] with data-dependent means; family
``bounded``, one block per loop of width ``H - L``): an element ``x[idx]`` of a deterministic
array at a fresh index ``idx ~ unif(a, b)`` (mean ``sum(j in a..b+1: x[j]) / (b - a + 1)``:
the b - a + 1 integers of [a, b] are equally likely), and a *coin mixture* ``y`` assigned in
both arms of ``if (f)`` on a fresh ``f ~ bern(r)`` (each arm run on its own copy of the
state), ``y`` a constant, an array element or a term of known range in each arm (mean
``r·m1 + (1 - r)·m2``: the coin is a different draw from those the arms read, so it is
independent of them; range the hull of the arms — an arm's deterministic value that is not a
constant lies in the other arm's range, a ``term range`` side condition; the side condition ``coin probability``
``0 <= r <= 1``). Both arms may instead write the same array element ``y[e]`` (``if (up) {
y[i] := 1; } else { y[i] := 0; }``): an assignment ``y[e] := v`` at a deterministic index keeps
that element's value and makes every other element unknown. The range [L, H] of array elements is a
candidate read from a ``requires`` conjunct ``forall j in lo..hi: …x[j]…`` (:func:`array_bounds`)
and is never trusted: the elements the term reads must lie in it — the side condition ``term
range`` (``forall j in a..b+1: L <= x[j] && x[j] <= H``, or ``L <= x[e] && x[e] <= H``),
proved under ``requires``. A term's draws get one fresh id more, so the term is never taken for
the draw it reads (their sums overlap and are never merged). A side condition found in a loop's
body that reads the counter must hold at every iteration: it is stated ``forall i in lo..hi: …``.
The per-iteration mean ``Σ_i m_i`` is summed term by term, factors that do not read the counter
taken out (``Σ (x[i]/2 + 1/4)`` is ``(Σ x[i])/2 + count/4``), the form claims write.

*Events* (issue 33): the test of ``if (E)``, a Boolean assignment ``b := E`` and ``E ? 1 : 0``
may be an event of fresh draws — a coin, an integer uniform compared with a deterministic integer
(``pg < k``: ``k`` of the ``n`` equally likely values), ``&&``/``||``/``==``/``!=`` of events of
disjoint draws, and, once, an event read through a fresh uniform index (``a[x]``, ``y < f[x]``:
total probability over the index, ``Σ_j P(E[x := j]) / N``). :meth:`_Exec._prob` gives
``P(E)`` with the side conditions ``event range`` (the comparison's constant lies in the draw's
range, where the count formula is exact) and ``coin probability``; the indicator is a Bernoulli
count with that probability, whose draws include the ones the event reads (never merged with
them). *Deterministic guards* (``if (j != v) { e ~ bern(p); if (e) deg := deg + 1; }``): each
arm on its own copy; a sum in one arm is counted ``G ? 1 : 0`` per iteration, and over a loop
the iterations G lets through (:func:`uniform_count`, side condition ``guard range``), so the
count has n - 1 terms, not n. A Bernoulli whose probability reads the counter (``bern(p[i])``)
is a block of ``count`` draws of the mean probability ``Σ p_i / count`` (exact for μ and for
Hoeffding's count; side condition ``forall i: 0 <= p_i <= 1``). Constant steps of an
accumulator on a coin (``if (x) s := s + 1 else s := s - 1``) are a coin mixture of the steps.

*Formulas* (session 19): a value computed from sums by an expression no rule reads term by term
(a verdict ``accept := s / n <= U - k``, ``abs(h / n - p)``, ``ga - gb`` of sums that do not
merge, ``max`` …) is a :class:`Formula`: the expression over the values ``d + c·S`` it read
then (:func:`exit_value` substitutes them). Sound: the value at exit is exactly that expression
of those S's (draws never change once made, the inputs are read-only); each S gets its own rule
and the union bound needs no independence between them. A formula never divides by, or takes
``log``/``sqrt`` of, a value of a sum (runs that stop there would be invisible), and one computed
in a loop is the last iteration's (``Opaque``). *Weighted terms*: ``unif({c1, …, ck})`` of
distinct constants is a bounded draw; a loop term ``c_i·X_i`` (or of width ``w_i``) is a term of
width ``|c_i|·w_i`` (Hoeffding holds for independent terms of any ranges), carried as ``count``
terms of the root-mean-square width, since Hoeffding reads blocks only through ``Σ count·w²``.

*Nested loops* (session 22): a counted loop may contain counted loops (not under a test). The
inner loop is analysed within one symbolic iteration of the outer one, its exit value (``k0 +
n·μ + S`` with a block of ``n`` draws) is the outer body's step, and the outer loop makes that
block ``m·n`` draws: the inner draws are fresh in every inner iteration of every outer one, so
all ``m·n`` are independent. The enclosing counters are constant during an inner loop and may
be read like inputs by its parameters and trip count; an inner count that reads the outer
counter (``for j in 0..i``) is summed over it, ``Σ_i n_i`` draws of one parameter (closed by
:func:`.expected.sum_over` when affine in ``i``: ``n (n - 1) / 2``). A draw made *before* a
loop (in the outer body: a cluster's shared draw) and added in every iteration is never taken
for ``count`` independent draws: ``x := x + c·S`` with S fixed ends as ``x0 + count·c·S`` —
one term scaled by the trip count (for a cluster draw, ``m`` terms of width ``n``, Hoeffding's
``m n²``), exact since S does not change in the loop. A draw that reads both is an event of
draws of different ages: its flag's draws are neither all fresh nor all old, and the value is
``Opaque``.

Independence is established, not assumed: a draw joins a sum only when its distribution's
arguments are deterministic (inputs, deterministic locals, the loop counter), never another
draw; two sums merge only when their draws are disjoint; a loop's sum must be made of the
draws of its own iteration (or, scaled by the trip count, of draws made before the loop), with
parameters that do not change between iterations (the means may depend on the counter).
Anything else — ``assume``, a loop under a test — makes the
program *not applicable* (:class:`NotApplicable`, with the reason); a variable assigned in a
branch on a random value is ``Opaque``.

The deterministic facts the shapes rest on (a loop runs ``H - lo >= 0`` times, a divisor is
not zero, ``lo <= hi`` for ``unif``) are returned as *side conditions*, proved under
``requires`` by the caller.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from lang import ast as A
from lang.errors import TampError
from lang.typecheck import check_program
from lang.walk import free_vars
from lang.walk import substitute as subst

from .expected import sum_over
from .loops import CountedLoop, NotCounted, counted_loop

FAMILY_OF = {
    "lap": "laplace",
    "dlap": "laplace",
    "gauss": "gauss",
    "unif": "bounded",
    "uniform": "bounded",  # real uniform on [a, b]: a bounded draw like unif's (Hoeffding needs only the range)
    "exp": "exponential",
    "dexp": "exponential",
}


class NotApplicable(Exception):
    """The program is not of a shape the concentration rules apply to (message: why)."""


@dataclass(frozen=True)
class Block:
    """``count`` independent draws with the same parameter (the blocks of
    :class:`axioms.concentration.Block`, which the rules read)."""

    count: A.Expr
    param: A.Expr


@dataclass(frozen=True)
class NoiseSum:
    """Σ over independent draws of ``family`` of (draw - its mean), as blocks of equal parameter."""

    family: str
    blocks: tuple[Block, ...]
    draws: frozenset[int]
    lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class Det:
    expr: A.Expr


@dataclass(frozen=True)
class Lin:
    det: A.Expr
    coef: A.Expr
    sum: NoiseSum


@dataclass(frozen=True)
class Flag:
    """A fresh Boolean draw ``bern(r)`` (usable as a count indicator)."""

    r: A.Expr
    draw: int
    line: int
    #: the draws an *event* flag reads (``a[x]``, ``pg < k`` …, :meth:`_Exec.event`): its
    #: indicator is not independent of them (empty for a ``bern(r)`` draw)
    deps: frozenset[int] = frozenset()
    #: the side conditions P(event) = r rests on, stated where the indicator is used
    side: tuple[tuple[str, A.Expr], ...] = ()

    @property
    def ids(self) -> frozenset[int]:
        return self.deps | {self.draw}


@dataclass(frozen=True)
class ArrDraw:
    """An array whose element ``index`` holds ``value`` (an element sampled in this iteration)."""

    index: A.Expr
    value: object


@dataclass(frozen=True)
class Formula:
    """A value computed from sums by an expression no rule reads term by term (a test
    ``accept := s / n <= U - k``, ``abs(s - m)``, ``min``…): ``expr`` over the inputs and the
    placeholders ``L$1``, ``L$2``… that stand for the values ``lins`` (``d + c·S``) the
    expression read when it was computed (see :func:`exit_value`)."""

    expr: A.Expr
    lins: tuple[Lin, ...]


@dataclass(frozen=True)
class Opaque:
    why: str = ""


ONE = A.num(1)
_ZERO = A.num(0)


def _plus(a, b):
    return A.Binary("+", a, b)


def _const(e) -> Fraction | None:
    """The value of a constant rational expression (numerals, + - * /, unary -), else None."""
    if isinstance(e, A.Num):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-":
        v = _const(e.operand)
        return None if v is None else -v
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        a, b = _const(e.left), _const(e.right)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        return a / b if b != 0 else None
    return None


def _factors(e: A.Expr) -> list[A.Expr]:
    """The factors of a product ``a * b * …`` (``e`` itself when it is no product)."""
    if isinstance(e, A.Binary) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [] if e == ONE else [e]


def _product(fs: list[A.Expr]) -> A.Expr:
    out: A.Expr = ONE
    for f in fs:
        out = _times(out, f)
    return out


#: functions defined at every real argument: a formula may apply them to values of sums
_TOTAL_CALLS = frozenset({"abs", "min", "max", "exp"})


def _num(v: Fraction) -> A.Expr:
    return A.num(int(v)) if v.denominator == 1 else A.num(v)


def _fold(e: A.Expr) -> A.Expr:
    """A constant coefficient as one numeral (``3 / 3`` is ``1``), so that a scaled-back draw is
    seen as the draw; a coefficient that is not constant is left as it is."""
    v = _const(e)
    if v is None:
        return e
    return A.num(int(v)) if v.denominator == 1 else A.num(v)


def _times(a, b):
    if a == ONE:
        return b
    if b == ONE:
        return a
    return A.Binary("*", a, b)


@dataclass
class Shape:
    """The program's exit values and the side conditions the shape rests on."""

    env: dict[str, object]
    side: list[tuple[str, A.Expr]] = field(default_factory=list)
    loops: list[CountedLoop] = field(default_factory=list)  # the counted loops, as the CFA says


class _Exec:
    def __init__(self, params, types=None, cfa=None, requires=()):
        self.params = set(params)
        self.types = types
        self.cfa = cfa
        self.ids = itertools.count(1)
        self.side: list[tuple[str, A.Expr]] = []
        self.loops: list[CountedLoop] = []
        self.arr_bounds = array_bounds(requires)
        # the range [L, H] of every single-term sum whose range is known (keyed by its draws):
        # unif draws, sampled array elements, coin mixtures (see the module docstring)
        self.ranges: dict[frozenset[int], tuple[A.Expr, A.Expr]] = {}
        self.unif: dict[int, tuple[A.Expr, A.Expr, Lin]] = {}  # draw id -> (a, b, the draw's value)
        # the variables enclosing loops write: inside a body, ``Det(Var(x))`` of such an x is
        # its value at the iteration's start, which earlier iterations' draws may have set
        self.varying: set[str] = set()
        # the counters of the enclosing loops (innermost last): constant during an inner loop,
        # so an inner loop's parameters and means may read them like inputs
        self.counters: list[str] = []

    def allowed(self) -> set[str]:
        """What a loop's draw parameters, counts and means may read besides its own counter: the
        inputs and the enclosing loops' counters (fixed while an inner loop runs)."""
        return self.params | set(self.counters)

    def counted(self, s: A.Stmt, counter: str) -> CountedLoop:
        """The CFA's counted loop for the loop statement ``s`` (:func:`tamp.cfa.loops.counted_loop`,
        what the loop does, not what its syntax suggests): its head is the CFA's loop head on
        ``s``'s line, and its counter must be ``counter``."""
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

    def range_of(self, cl: CountedLoop, s: A.Stmt, env) -> tuple[A.Expr, A.Expr]:
        """The loop's range [lo, hi) over the inputs (the CFA's, over the state on entry)."""
        lo, hi = self.ev(cl.lo, env), self.ev(cl.hi, env)
        if not (isinstance(lo, Det) and isinstance(hi, Det)):
            raise NotApplicable(f"line {_line(s)}: the range of the loop is not deterministic")
        return lo.expr, hi.expr

    # ------------------------------------------------------------------ expressions
    def ev(self, e: A.Expr, env) -> object:
        fv = set(free_vars(e))
        vals = {x: env.get(x) for x in fv}
        if all(isinstance(v, Det) for v in vals.values()):
            return Det(subst(e, {x: v.expr for x, v in vals.items()}))
        if isinstance(e, A.Var):
            v = env.get(e.name)
            return v if v is not None else Opaque(f"'{e.name}' has no value here")
        if self._bool(e):  # an event of fresh draws (``a[x]``, ``pg < k``, ``f != g`` …)
            fl = self.event(e, env)
            if fl is not None:
                return fl
            fm = self.formula(e, env)
            return fm if fm is not None else Opaque("an event that is not one of independent fresh draws")
        if isinstance(e, A.Index) and isinstance(e.base, A.Var) and env.get(e.base.name) == Det(e.base):
            return self._sampled_element(e, env)
        if isinstance(e, A.Index) and isinstance(e.base, A.Var) and isinstance(env.get(e.base.name), ArrDraw):
            arr = env[e.base.name]
            idx = self.ev(e.index, env)
            if isinstance(idx, Det) and idx.expr == arr.index:
                return arr.value
            return Opaque("an array element other than the one just sampled")
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            got = self._binary(e.op, self.ev(e.left, env), self.ev(e.right, env))
            if isinstance(got, Opaque):
                return self.formula(e, env) or got
            return got
        if isinstance(e, A.Unary) and e.op == "-":
            v = self.ev(e.operand, env)
            if isinstance(v, Lin):
                return Lin(A.Unary("-", v.det), _fold(A.Unary("-", v.coef)), v.sum)
        if isinstance(e, A.Cond) and (e.then, e.other) in ((ONE, _ZERO), (_ZERO, ONE)):
            got = self.ev(e.cond, env)
            if isinstance(got, Flag):
                return self._indicator(got if e.then == ONE else _complement(got))
        if isinstance(e, A.Cond) and _const(e.then) is not None and _const(e.other) is not None:
            # (flag ? a : b) with literals a, b is b + (a - b)·[flag]: a scaled indicator (tails, session 21)
            got = self.ev(e.cond, env)
            if isinstance(got, Flag):
                ind = self._indicator(got)
                return self._binary(
                    "+", Det(e.other), self._binary("*", Det(_fold(A.Binary("-", e.then, e.other))), ind)
                )
        fm = self.formula(e, env)
        return fm if fm is not None else Opaque("not a sum of independent draws")

    def formula(self, e: A.Expr, env) -> Formula | None:
        """``e`` as a :class:`Formula` of the sums it reads, or None: every variable ``e`` reads
        holds a deterministic value, a sum ``d + c·S`` or a formula (inlined), at least one a sum
        (so the value is a function of the S's, evaluated at this point); ``e`` reads no array
        element (an element's value is tracked otherwise) and no value earlier iterations set."""
        if any(isinstance(n, A.Index) for n in A.walk(e)):
            return None
        m: dict[str, A.Expr] = {}
        lins: list[Lin] = []

        def hole(v: Lin) -> A.Expr:
            if v not in lins:
                lins.append(v)
            return A.Var(f"L${lins.index(v) + 1}")

        for x in sorted(set(free_vars(e))):
            v = env.get(x)
            if isinstance(v, Det):
                if set(free_vars(v.expr)) & self.varying:
                    return None
                m[x] = v.expr
            elif isinstance(v, Lin):
                if set(free_vars(v.det)) & self.varying or set(free_vars(v.coef)) & self.varying:
                    return None
                m[x] = hole(v)
            elif isinstance(v, Formula):
                m[x] = subst(v.expr, {f"L${j + 1}": hole(w) for j, w in enumerate(v.lins)})
            else:
                return None
        if not lins:
            return None
        out = subst(e, m)
        holes = {f"L${j + 1}" for j in range(len(lins))}
        divisors: list[A.Expr] = []
        for n in A.walk(out):
            # an operation that is an error at some values (x / 0, log of a non-positive number)
            # must not read the sums: the proof would not see the runs that stop there; a
            # deterministic divisor gets the side condition that it is not zero
            if isinstance(n, A.Binary) and n.op in ("/", "div", "mod"):
                if set(free_vars(n.right)) & holes:
                    return None
                divisors.append(n.right)
            elif isinstance(n, A.Call) and n.func not in _TOTAL_CALLS:
                if any(set(free_vars(a)) & holes for a in n.args):
                    return None
        for d in divisors:
            self.side.append(("divisor", A.Binary("!=", d, _ZERO)))
        return Formula(out, tuple(lins))

    # ------------------------------------------------------------------ events of fresh draws
    def _unif_id(self, v: object) -> int | None:
        """The id of the integer uniform draw whose value ``v`` is (the draw itself), else None."""
        return next((k for k, (_a, _b, w) in self.unif.items() if w == v), None)

    def event(self, e: A.Expr, env) -> Flag | None:
        """The indicator of the event ``e`` of fresh draws, as a flag of probability ``P(e)``
        (:meth:`_prob`), or None. ``e`` reads deterministic values and fresh draws — coins
        (``bern`` draws and earlier events) and integer uniforms — whose draw sets are pairwise
        disjoint (so they are independent: each has deterministic parameters); the flag gets a
        fresh id and depends on those draws (``deps``: never merged with a sum of them)."""
        rv: dict[str, tuple] = {}
        ren: dict[str, A.Expr] = {}
        ids: list[frozenset[int]] = []
        for x in sorted(set(free_vars(e))):
            v = env.get(x)
            if isinstance(v, Det):
                if set(free_vars(v.expr)) & self.varying:
                    return None  # a value earlier iterations may have set: not a deterministic one
                ren[x] = v.expr
                continue
            if isinstance(v, Flag):
                rv["r$" + x] = ("coin", v)
                ids.append(v.ids)
            elif (hit := self._unif_id(v)) is not None:
                a, b, _w = self.unif[hit]
                rv["r$" + x] = ("unif", a, b)
                ids.append(frozenset((hit,)))
            else:
                return None
            ren[x] = A.Var("r$" + x)  # renamed first: a deterministic value never meets a draw's name
        allids = frozenset().union(*ids) if ids else frozenset()
        if not rv or sum(len(d) for d in ids) != len(allids):
            return None
        side0 = len(self.side)
        r = self._prob(subst(e, ren), rv, ())
        side = tuple(self.side[side0:])  # stated where the indicator is used (_indicator, mixture)
        del self.side[side0:]
        if r is None:
            return None
        return Flag(r, next(self.ids), _line(e), allids, side)

    def _prob(self, e: A.Expr, rv: dict[str, tuple], bound: tuple[str, ...]) -> A.Expr | None:
        """``P(e)`` for an event ``e`` over independent fresh draws ``rv`` (name -> ``("coin",
        flag)`` or ``("unif", a, b)``) and deterministic values; side conditions are appended.

        * no draw read: ``e ? 1 : 0``; a coin: its probability r (side condition ``coin
          probability`` 0 <= r <= 1 for a ``bern`` draw); ``!e``: 1 - P(e);
        * ``e1 && e2``, ``e1 || e2`` and (for Boolean sides) ``e1 == e2``, ``e1 != e2`` over
          disjoint draws (independent): products, ``p1 + p2 - p1·p2``, ``p1·p2 + (1-p1)(1-p2)``;
        * ``x op c`` for ``x ~ unif(a, b)`` and ``c`` a deterministic integer: the number of the
          b - a + 1 equally likely integers with ``x op c`` (:func:`uniform_count`, under its
          side condition ``event range``) over b - a + 1;
        * otherwise, once, conditioning on a uniform draw x read in ``e`` (independent of the
          others): ``Σ_{j=a}^{b} P(e[x := j]) / (b - a + 1)`` (total probability), the side
          conditions that read j stated ``forall j in a..b+1``."""
        names = set(free_vars(e)) & set(rv)
        if not names:
            return A.Cond(e, ONE, _ZERO)
        if isinstance(e, A.Var):
            kind = rv[e.name]
            if kind[0] != "coin":
                return None
            fl = kind[1]
            if not fl.deps:
                self.side.append(
                    ("coin probability", A.Binary("&&", A.Binary("<=", _ZERO, fl.r), A.Binary("<=", fl.r, ONE)))
                )
            return fl.r
        if isinstance(e, A.Unary) and e.op == "!":
            p = self._prob(e.operand, rv, bound)
            return None if p is None else A.Binary("-", ONE, p)
        if (
            isinstance(e, A.Binary)
            and e.op in ("&&", "||")
            or (isinstance(e, A.Binary) and e.op in ("==", "!=") and _boolean(e.left, rv) and _boolean(e.right, rv))
        ):
            assert isinstance(e, A.Binary)
            if set(free_vars(e.left)) & set(free_vars(e.right)) & names:
                return None  # the sides share a draw: not independent
            p1, p2 = self._prob(e.left, rv, bound), self._prob(e.right, rv, bound)
            if p1 is None or p2 is None:
                return None
            both = A.Binary("*", p1, p2)
            if e.op == "&&":
                return both
            if e.op == "||":
                return A.Binary("-", A.Binary("+", p1, p2), both)
            neither = A.Binary("*", A.Binary("-", ONE, p1), A.Binary("-", ONE, p2))
            eq = _plus(both, neither)
            return eq if e.op == "==" else A.Binary("-", ONE, eq)
        mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
        if isinstance(e, A.Binary) and e.op in mirror:
            op, x, c = e.op, e.left, e.right
            if isinstance(c, A.Var) and c.name in rv:
                op, x, c = mirror[op], c, x
            if isinstance(x, A.Var) and rv.get(x.name, ("",))[0] == "unif" and not set(free_vars(c)) & names:
                if not self._int(c, bound):
                    return None
                _k, a, b = rv[x.name]
                count, cond = uniform_count(op, c, a, b)
                self.side.append(("event range", cond))
                return A.Binary("/", count, A.Binary("+", A.Binary("-", b, a), ONE))
        unifs = sorted(n for n in names if rv[n][0] == "unif")
        if not unifs or bound:
            return None
        u = unifs[0]
        _k, a, b = rv[u]
        j = f"j$e{len(bound)}"
        side0 = len(self.side)
        inner = {k: v for k, v in rv.items() if k != u}
        p = self._prob(subst(e, {u: A.Var(j)}), inner, bound + (j,))
        if p is None or any(isinstance(n, A.Sum) for n in A.walk(p)):
            return None  # (a sum inside the sum over j: its variable could be captured)
        hi = A.Binary("+", b, ONE)
        conds = self.side[side0:]
        del self.side[side0:]
        for name, cond in conds:
            self.side.append((name, A.Quant("forall", j, a, hi, False, cond) if j in set(free_vars(cond)) else cond))
        count = A.Binary("+", A.Binary("-", b, a), ONE)
        return A.Binary("/", _sum_over(p, j, a, hi, count), count)

    def _indicator(self, fl: Flag) -> Lin:
        self.side.extend(fl.side)
        return Lin(fl.r, ONE, NoiseSum("bernoulli", (Block(ONE, fl.r),), fl.ids, (fl.line,)))

    def _binary(self, op, l, r):
        if isinstance(l, Det) and isinstance(r, Det):
            return Det(A.Binary(op, l.expr, r.expr))
        if op in ("+", "-"):
            if isinstance(l, Lin) and isinstance(r, Det):
                return Lin(A.Binary(op, l.det, r.expr), l.coef, l.sum)
            if isinstance(l, Det) and isinstance(r, Lin):
                coef = r.coef if op == "+" else A.Unary("-", r.coef)
                return Lin(A.Binary(op, l.expr, r.det), coef, r.sum)
            if isinstance(l, Lin) and isinstance(r, Lin) and l.sum == r.sum:
                # one sum S (the same draws): d1 + c1·S ± (d2 + c2·S) = (d1 ± d2) + (c1 ± c2)·S
                coef = _fold(A.Binary(op, l.coef, r.coef))
                if coef == A.num(0):
                    return Det(A.Binary(op, l.det, r.det))
                return Lin(A.Binary(op, l.det, r.det), coef, l.sum)
            if op == "+" and isinstance(l, Lin) and isinstance(r, Lin):
                merged = merge(l.sum, r.sum)
                if merged is not None and l.coef == r.coef:
                    return Lin(_plus(l.det, r.det), l.coef, merged)
            return Opaque("a sum of draws that are not independent or not of one family")
        if op == "*":
            if isinstance(l, Lin) and isinstance(r, Det):
                return Lin(A.Binary("*", l.det, r.expr), _fold(_times(l.coef, r.expr)), l.sum)
            if isinstance(l, Det) and isinstance(r, Lin):
                return Lin(A.Binary("*", l.expr, r.det), _fold(_times(l.expr, r.coef)), r.sum)
        if op == "/" and isinstance(l, Lin) and isinstance(r, Det):
            self.side.append(("divisor", A.Binary("!=", r.expr, A.num(0))))
            return Lin(A.Binary("/", l.det, r.expr), _fold(A.Binary("/", l.coef, r.expr)), l.sum)
        return Opaque("a nonlinear function of draws")

    def _sampled_element(self, e: A.Index, env) -> object:
        """``x[idx]`` of a deterministic array ``x`` at an index ``idx ~ unif(a, b)`` drawn in this
        run: one bounded term with the draws of ``idx`` and the mean
        ``sum(j in a..b+1: x[j]) / (b - a + 1)`` (idx is uniform on the b - a + 1 integers of
        [a, b]). Its range [L, H] is a bound of ``x``'s elements stated in ``requires``
        (:func:`array_bounds`), re-proved as the side condition
        ``forall j in a..b+1: L <= x[j] && x[j] <= H``. A fresh id joins the term's draws, so
        that the term is never taken for ``idx`` itself (their sums overlap: never merged)."""
        x = e.base.name if isinstance(e.base, A.Var) else ""
        idx = self.ev(e.index, env)
        hit = next((k for k, (_a, _b, v) in self.unif.items() if v == idx), None)
        if hit is None or not self.arr_bounds.get(x):
            return Opaque("an array element at an index that is not a fresh uniform draw")
        a, b, _v = self.unif[hit]
        L, H = self.arr_bounds[x][0]
        j = "j$t"
        hi = A.Binary("+", b, ONE)
        xj = A.Index(A.Var(x), A.Var(j))
        self.side.append(
            (
                "term range",
                A.Quant("forall", j, a, hi, False, A.Binary("&&", A.Binary("<=", L, xj), A.Binary("<=", xj, H))),
            )
        )
        mean = A.Binary("/", A.Sum(j, a, hi, False, xj), A.Binary("+", A.Binary("-", b, a), ONE))
        return self._term(mean, L, H, frozenset((hit,)), _line(e))

    def _term(self, mean: A.Expr, L: A.Expr, H: A.Expr, draws: frozenset[int], line: int) -> Lin:
        """One bounded term with values in [L, H] and mean ``mean`` over ``draws`` (plus a fresh id)."""
        ids = draws | {next(self.ids)}
        self.ranges[ids] = (L, H)
        return Lin(
            mean, ONE, NoiseSum("bounded", (Block(ONE, _fold(A.Binary("-", H, L))),), ids, (line,) if line else ())
        )

    def term_range(self, v: object) -> tuple[A.Expr, A.Expr] | None:
        """[L, H] for a value used as one term of a coin mixture: a deterministic value (a
        constant, or an array element bounded in ``requires``: then the side condition
        ``L <= x[e] && x[e] <= H``), or a single term whose range is known; else None."""
        if isinstance(v, Det):
            if _const(v.expr) is not None:
                return v.expr, v.expr
            e = v.expr
            if isinstance(e, A.Index) and isinstance(e.base, A.Var) and self.arr_bounds.get(e.base.name):
                L, H = self.arr_bounds[e.base.name][0]
                self.side.append(("term range", A.Binary("&&", A.Binary("<=", L, e), A.Binary("<=", e, H))))
                return L, H
            return None
        if isinstance(v, Lin) and v.coef == ONE and v.sum.draws in self.ranges:
            if v.sum.family == "bounded" and len(v.sum.blocks) == 1 and v.sum.blocks[0].count == ONE:
                return self.ranges[v.sum.draws]
        return None

    def mixture(self, fl: Flag, v1: object, v2: object) -> object:
        """``f ? v1 : v2`` for a fresh coin ``f ~ bern(r)`` and two terms of known range: one
        bounded term with range [min, max] of theirs and mean ``r·m1 + (1 - r)·m2`` (the coin is
        independent of the draws the terms read, which are other draws); else Opaque."""
        why = Opaque("assigned in a branch")
        draws: frozenset[int] = fl.ids
        ranges, means = [], []
        vals = (v1, v2)
        got = [None if _free_det(v) else self.term_range(v) for v in vals]
        for k, v in enumerate(vals):
            other = got[1 - k]
            if got[k] is None and _free_det(v) and other is not None:
                # a deterministic value inside the other arm's range: the side condition says so
                assert isinstance(v, Det)
                L0, H0 = other
                self.side.append(("term range", A.Binary("&&", A.Binary("<=", L0, v.expr), A.Binary("<=", v.expr, H0))))
                got[k] = other
        for v, rg in zip(vals, got):
            if rg is None:
                return why
            ranges.append(rg)
            if isinstance(v, Lin):
                if fl.ids & v.sum.draws:
                    return why
                draws |= v.sum.draws
                means.append(v.det)
            else:
                assert isinstance(v, Det)
                means.append(v.expr)
        L = _extreme(ranges[0][0], ranges[1][0], min)
        H = _extreme(ranges[0][1], ranges[1][1], max)
        if L is None or H is None:
            return why
        # the mean r·m1 + (1 - r)·m2 needs r to be the coin's probability
        self.side.extend(fl.side)
        self.side.append(("coin probability", A.Binary("&&", A.Binary("<=", _ZERO, fl.r), A.Binary("<=", fl.r, ONE))))
        mean = _plus(_times(fl.r, means[0]), _times(A.Binary("-", ONE, fl.r), means[1]))
        return self._term(mean, L, H, draws, fl.line)

    # ------------------------------------------------------------------ statements
    def block(self, b: A.Block, env) -> None:
        for s in b.stmts:
            self.stmt(s, env)

    def stmt(self, s: A.Stmt, env) -> None:
        if isinstance(s, (A.Skip, A.VarDecl)):
            return
        if isinstance(s, A.Block):
            self.block(s, env)
        elif isinstance(s, A.Assign):
            if len(s.targets) != 1:
                for t in s.targets:
                    env[_base(t)] = Opaque("tuple assignment")
                return
            t = s.targets[0]
            if isinstance(t, A.Var):
                env[t.name] = self.ev(s.value, env)
            elif isinstance(t, A.Index) and isinstance(t.base, A.Var) and isinstance(self.ev(t.index, env), Det):
                # element e holds the value; every other element is unknown from here on
                idx = self.ev(t.index, env)
                assert isinstance(idx, Det)
                env[t.base.name] = ArrDraw(idx.expr, self.ev(s.value, env))
            else:
                env[_base(t)] = Opaque("array element written")
        elif isinstance(s, A.Sample):
            self.sample(s, env)
        elif isinstance(s, A.If):
            self.branch(s, env)
        elif isinstance(s, A.While):
            self.while_loop(s, env)
        elif isinstance(s, A.For):
            self.for_loop(s, env)
        elif isinstance(s, A.Assume):
            raise NotApplicable(
                f"line {_line(s)}: `assume` conditions the distribution (the draws are then no longer independent)"
            )
        else:
            raise NotApplicable(f"line {_line(s)}: {type(s).__name__} statements are not supported")

    def sample(self, s: A.Sample, env) -> None:
        d = s.dist
        args = [self.ev(a, env) for a in d.args]
        targets = s.targets
        names = [_base(t) for t in targets]
        dets = [a for a in args if isinstance(a, Det)]
        ok = len(targets) == 1 and len(dets) == len(args) and all(isinstance(a, A.Expr) for a in d.args)
        val: object = Opaque(f"a draw from {d.func}(…) whose arguments are not deterministic")
        if len(targets) == 1 and d.func == "unif" and len(d.args) == 1 and isinstance(d.args[0], A.SetLit):
            val = self._set_draw(d.args[0], _line(s))
            ok = False
        if ok:
            a = [x.expr for x in dets]
            did = next(self.ids)
            line = _line(s)
            fam = FAMILY_OF.get(d.func)
            if d.func == "bern" and len(a) == 1:
                val = Flag(a[0], did, line)
            elif fam is not None and len(a) == 2:
                mean: A.Expr
                param: A.Expr
                if d.func in ("unif", "uniform"):
                    mean = A.Binary("/", A.Binary("+", a[0], a[1]), A.num(2))
                    param = A.Binary("-", a[1], a[0])
                    self.side.append(("unif bounds", A.Binary("<=", a[0], a[1])))
                elif d.func == "exp":  # shifted exponential: mean k + s
                    mean, param = A.Binary("+", a[0], a[1]), a[1]
                elif d.func == "dexp":  # shifted geometric: mean k + q/(1 - q), q = exp(-1/s)
                    mean = A.Binary(
                        "+",
                        a[0],
                        A.Binary(
                            "/", A.num(1), A.Binary("-", A.Call("exp", (A.Binary("/", A.num(1), a[1]),)), A.num(1))
                        ),
                    )
                    param = a[1]
                else:
                    mean, param = a
                val = Lin(mean, ONE, NoiseSum(fam, (Block(ONE, param),), frozenset((did,)), (line,)))
                if d.func == "unif":  # an integer uniform: usable as an index
                    self.unif[did] = (a[0], a[1], val)
                if d.func in ("unif", "uniform"):
                    self.ranges[frozenset((did,))] = (a[0], a[1])
            else:
                val = Opaque(f"draws from {d.func}(…) have no concentration rule")
        t = targets[0]
        if isinstance(t, A.Var):
            env[t.name] = val
        elif isinstance(t, A.Index) and isinstance(t.base, A.Var) and len(targets) == 1:
            idx = self.ev(t.index, env)
            env[t.base.name] = ArrDraw(idx.expr, val) if isinstance(idx, Det) else Opaque("array")
        else:
            for n in names:
                env[n] = Opaque("tuple sampling")

    def _set_draw(self, st: A.SetLit, line: int) -> object:
        """``unif({c1, …, ck})`` of distinct numeric constants: a bounded draw in [min, max]
        with mean ``Σ c / k`` (each of the k values equally likely); else Opaque."""
        got = [_const(c) for c in st.items]
        vals = [v for v in got if v is not None]
        if not vals or len(vals) != len(got) or len(set(vals)) != len(vals):
            return Opaque("a uniform draw from a set that is not of distinct numeric constants")
        lo, hi = min(vals), max(vals)
        mean = sum(vals, Fraction(0)) / len(vals)
        did = next(self.ids)
        self.ranges[frozenset((did,))] = (_num(lo), _num(hi))
        block = Block(ONE, _num(hi - lo))
        return Lin(_num(mean), ONE, NoiseSum("bounded", (block,), frozenset((did,)), (line,)))

    def branch(self, s: A.If, env) -> None:
        """``if (f) { … } else { … }`` on a fresh ``f ~ bern(r)`` (or ``!f``): a variable ``k``
        incremented ``k := k + 1`` at the top level of one branch, and written nowhere else in
        the statement, ends as ``k + [f]`` (``k + [!f]`` from the else branch) — whatever else
        the branches do (the test is read once, on entry, so the increment happens exactly when
        ``f`` held then). Every other variable written in the statement is ``Opaque``."""
        for x in _loops_inside(s):
            raise NotApplicable(f"line {_line(x)}: a loop inside a branch")
        c = s.cond
        neg = isinstance(c, A.Unary) and c.op == "!"
        var = c.operand if isinstance(c, A.Unary) and neg else c
        written = _written(s)
        counts: dict[str, Flag] = {}
        fl = env.get(var.name) if isinstance(var, A.Var) else None
        if not isinstance(fl, Flag):
            got = self.ev(c, env)  # an event of fresh draws, or a deterministic guard
            if isinstance(got, Det):
                self.guarded(s, got.expr, env)
                return
            fl, neg = (got, False) if isinstance(got, Flag) else (None, False)
        if fl is not None:
            yes, no = fl, _complement(fl)
            arms = [(s.then, no if neg else yes), (s.other, yes if neg else no)]
            for arm, flag in arms:
                if arm is None:
                    continue
                for st in arm.stmts:
                    if not (isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var)):
                        continue
                    k = st.targets[0].name
                    if st.value == A.Binary("+", A.Var(k), A.num(1)) and _writes(s, k) == 1:
                        counts[k] = flag
        mixed: dict[str, object] = {}
        if fl is not None:
            mixed = self._mix_arms(s, fl, neg, env, written - set(counts))
        for x in written:
            if x in counts:
                env[x] = self._binary("+", env.get(x, Opaque()), self._indicator(counts[x]))
            elif x in mixed:
                env[x] = mixed[x]
            else:
                env[x] = Opaque("assigned in a branch")

    def guarded(self, s: A.If, g: A.Expr, env) -> None:
        """``if (G) { … } else { … }`` with a deterministic test ``G`` (over the inputs and the
        loop counter): each arm runs on its own copy of ``env``; an arm's side conditions need
        to hold only when it runs (``G ==> c``, ``!G ==> c``). A variable the arms leave equal
        keeps that value; deterministic in both, it is ``G ? d1 : d2``; a sum ``d1 + S`` in one
        arm and a deterministic ``d2`` in the other is ``(G ? d1 : d2) + [G]·S`` — S's blocks
        counted ``G ? count : 0`` (G is not random: S is either all there or empty); the same
        sum in both arms (``d1 + c·S``, ``d2 + c·S``) is ``(G ? d1 : d2) + c·S``. The arms' side
        conditions are kept only when some variable ends as a sum (a deterministic value needs
        none); an arm the analysis cannot follow makes every variable it writes ``Opaque``."""
        if set(free_vars(g)) & self.varying:  # a test of a value earlier iterations may have set
            for x in _written(s):
                env[x] = Opaque("assigned in a branch")
            return
        arms = [dict(env), dict(env)]
        conds: list[tuple[str, A.Expr]] = []
        for k, (arm, when) in enumerate(((s.then, g), (s.other, A.Unary("!", g)))):
            if arm is None:
                continue
            side0 = len(self.side)
            try:
                self.block(arm, arms[k])
            except NotApplicable:
                del self.side[side0:]
                for x in _written(s):
                    env[x] = Opaque("assigned in a branch")
                return
            conds += [(name, A.Binary("==>", when, c)) for name, c in self.side[side0:]]
            del self.side[side0:]
        for x in _written(s):
            v1, v2 = arms[0].get(x), arms[1].get(x)
            env[x] = Opaque("assigned in a branch")
            if v1 is None or v2 is None:
                continue
            if v1 == v2:
                env[x] = v1
            elif isinstance(v1, Det) and isinstance(v2, Det):
                env[x] = Det(A.Cond(g, v1.expr, v2.expr))
            elif isinstance(v1, Lin) and isinstance(v2, Lin) and (v1.coef, v1.sum) == (v2.coef, v2.sum):
                env[x] = Lin(A.Cond(g, v1.det, v2.det), v1.coef, v1.sum)
            elif isinstance(v1, Lin) and isinstance(v2, Det) and v1.coef == ONE:
                env[x] = Lin(A.Cond(g, v1.det, v2.expr), ONE, _scaled(v1.sum, A.Cond(g, ONE, _ZERO)))
            elif isinstance(v1, Det) and isinstance(v2, Lin) and v2.coef == ONE:
                env[x] = Lin(A.Cond(g, v1.expr, v2.det), ONE, _scaled(v2.sum, A.Cond(g, _ZERO, ONE)))
        if any(not isinstance(env.get(x), (Det, Opaque)) for x in _written(s)):
            self.side.extend(conds)

    def _mix_arms(self, s: A.If, fl: Flag, neg: bool, env, names: set[str]) -> dict[str, object]:
        """The variables of ``names`` that end as a coin mixture (:meth:`mixture`) of the values
        the two arms give them (each arm run on its own copy of ``env``). The arms' side
        conditions are kept only if some mixture is used."""
        side0 = len(self.side)
        arms = [dict(env), dict(env)]
        try:
            self.block(s.then, arms[0])
            if s.other is not None:
                self.block(s.other, arms[1])
        except NotApplicable:
            del self.side[side0:]
            return {}
        when_f, when_not = (arms[1], arms[0]) if neg else (arms[0], arms[1])
        out: dict[str, object] = {}
        for x in sorted(names):
            v1, v2 = when_f.get(x), when_not.get(x)
            if v1 is None or v2 is None:
                continue
            if v1 == v2 and isinstance(v1, Det):
                out[x] = v1
                continue
            if isinstance(v1, Det) and isinstance(v2, Det) and env.get(x) == Det(A.Var(x)):
                # constant steps of an accumulator (x := x + 1 / x := x - 1 in a loop's body): x
                # plus a mixture of the two steps
                r1, r2 = _split(v1.expr, x), _split(v2.expr, x)
                if r1 is not None and r2 is not None and _const(r1) is not None and _const(r2) is not None:
                    m = self.mixture(fl, Det(_fold(r1)), Det(_fold(r2)))
                    if isinstance(m, Lin):
                        out[x] = self._binary("+", Det(A.Var(x)), m)
                    continue
            if isinstance(v1, ArrDraw) and isinstance(v2, ArrDraw) and v1.index == v2.index:
                m = self.mixture(fl, v1.value, v2.value)  # both arms write the same element
                if isinstance(m, Lin):
                    out[x] = ArrDraw(v1.index, m)
                continue
            m = self.mixture(fl, v1, v2)
            if isinstance(m, Lin):
                out[x] = m
        if not out:
            del self.side[side0:]
        return out

    def for_loop(self, s: A.For, env) -> None:
        written = _written(s.body)
        if s.var in written:
            raise NotApplicable(f"line {_line(s)}: the loop variable is written in the body")
        cl = self.counted(s, s.var)
        env[s.var] = self.ev(s.lo, env)  # the desugared `i := lo` before the loop
        lo, hi = self.range_of(cl, s, env)
        self.loop_body(s, list(s.body.stmts), s.var, lo, hi, env)
        env[s.var] = Opaque("loop variable")

    def while_loop(self, s: A.While, env) -> None:
        """``while (i < H)`` / ``(i <= H)`` with ``i := i + 1`` last in the body, or
        ``while (i > L)`` / ``(i >= L)`` with ``i := i - 1``: the counter runs over a half-open
        range [a, b) of ``b - a`` values (the side condition ``a <= b`` says the loop runs that
        many times) and ends at ``b`` counting up, ``a - 1`` counting down."""
        c = s.cond
        mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
        if isinstance(c, A.Binary) and c.op in mirror and isinstance(c.right, A.Var) and not isinstance(c.left, A.Var):
            c = A.Binary(mirror[c.op], c.right, c.left)  # H > i is i < H
        stmts = list(s.body.stmts)
        if not (isinstance(c, A.Binary) and c.op in mirror and isinstance(c.left, A.Var) and stmts):
            raise NotApplicable(
                f"line {_line(s)}: only counted loops `while (i < H) {{ …; i := i + 1; }}` "
                "(or counting down to `i > L` with `i := i - 1`) are recognised"
            )
        i = c.left.name
        up = c.op in ("<", "<=")
        step = "+" if up else "-"
        last = stmts[-1]
        if not (
            isinstance(last, A.Assign) and last.targets == (A.Var(i),) and last.value == A.Binary(step, A.Var(i), ONE)
        ):
            raise NotApplicable(f"line {_line(s)}: the loop body must end with `{i} := {i} {step} 1;`")
        if not self._int(A.Var(i)) or not self._int(c.right):
            # a real counter or bound: the loop runs ceil(H - lo) times, not H - lo
            raise NotApplicable(f"line {_line(s)}: the counter and the bound of a counted loop must be integers")
        written = set()
        for st in stmts[:-1]:
            written |= _written(st)
        if i in written:
            raise NotApplicable(f"line {_line(s)}: the counter '{i}' is written elsewhere in the body")
        if set(free_vars(c.right)) & (written | {i}):
            raise NotApplicable(f"line {_line(s)}: the loop bound changes in the loop")
        cl = self.counted(s, i)
        lo, hi = self.range_of(cl, s, env)
        self.loop_body(s, stmts[:-1], i, lo, hi, env)
        env[i] = Det(hi if cl.up else A.Binary("-", lo, ONE))

    def _bool(self, e: A.Expr) -> bool:
        try:
            return self.types is not None and self.types.type_of(e) == A.BOOL
        except Exception:  # noqa: BLE001 - an expression the type checker cannot type: not a bool
            return False

    def _int(self, e: A.Expr, bound: tuple[str, ...] = ()) -> bool:
        try:
            return self.types is not None and self.types.type_of(e, bound) == A.INT
        except Exception:  # noqa: BLE001 - an expression the type checker cannot type: not an int
            return False

    def _guard_count(self, k: A.Expr, i: str, lo: A.Expr, hi: A.Expr) -> A.Expr | None:
        """Σ_{i in lo..hi} k for ``k = G ? 1 : 0`` (or ``G ? 0 : 1``), G a comparison of the
        counter with an integer ``c`` free of it: the number of iterations the guard lets
        through (:func:`uniform_count` over [lo, hi - 1], under its side condition ``guard
        range``); else None."""
        if not (isinstance(k, A.Cond) and (k.then, k.other) in ((ONE, _ZERO), (_ZERO, ONE))):
            return None
        got = _counter_test(k.cond if k.then == ONE else A.Unary("!", k.cond), i)
        if got is None or not self._int(got[1]):
            return None
        n, cond = uniform_count(got[0], got[1], lo, A.Binary("-", hi, ONE))
        if ("guard range", cond) not in self.side:
            self.side.append(("guard range", cond))
        return n

    def _guard_total(self, d: A.Expr, i: str, lo: A.Expr, hi: A.Expr, count: A.Expr) -> A.Expr | None:
        """Σ_{i in lo..hi} (G ? e1 : e2) with e1, e2 free of the counter: n·e1 + (count - n)·e2,
        n the iterations G lets through (:meth:`_guard_count`); else None."""
        if not isinstance(d, A.Cond) or i in set(free_vars(d.then)) | set(free_vars(d.other)):
            return None
        n = self._guard_count(A.Cond(d.cond, ONE, _ZERO), i, lo, hi)
        if n is None:
            return None
        if d.other == _ZERO:
            return _times(n, d.then)
        return _plus(_times(n, d.then), _times(A.Binary("-", count, n), d.other))

    def _loop_blocks(self, noise: NoiseSum, i: str, lo, hi, count) -> tuple[Block, ...] | None:
        """The blocks of a loop's sum, from those of one iteration: a block of one draw per
        iteration becomes ``count`` draws; a block counted ``G ? 1 : 0`` by a deterministic
        guard on the counter the iterations G lets through (:meth:`_guard_count`); a Bernoulli
        block whose probability ``p_i`` reads the counter (``bern(p[i])``: independent
        Bernoulli draws with different means) ``count`` draws of the mean probability
        ``Σ_i p_i / count`` — the rules read a Bernoulli block only through ``count·r`` (μ) and
        ``count`` (Hoeffding's ranges), both then exact — under the side condition ``coin
        probability`` ``forall i: 0 <= p_i <= 1``. Parameters must read nothing but the inputs
        and the counter (never a value that changes between iterations); else None."""
        allowed = self.allowed()
        out = []
        for b in noise.blocks:
            pf, cf = set(free_vars(b.param)), set(free_vars(b.count))
            if (pf | cf) - allowed - {i}:
                return None
            if i in cf:
                n = None if i in pf else self._guard_count(b.count, i, lo, hi)
                if n is None and i not in pf and not any(isinstance(x, A.Sum) for x in A.walk(b.count)):
                    # an inner loop's count that reads the counter (``for v in 0..c``): the
                    # iterations' blocks have one parameter, so together they are Σ_i count_i draws
                    n = _count_total(b.count, i, lo, hi)
                if n is None:
                    return None
                out.append(Block(n, b.param))
            elif i in pf:
                if noise.family != "bernoulli" or b.count != ONE:
                    return None
                p = b.param
                ok = A.Binary("&&", A.Binary("<=", _ZERO, p), A.Binary("<=", p, ONE))
                self.side.append(("coin probability", A.Quant("forall", i, lo, hi, False, ok)))
                j = "j$c"
                total = A.Sum(j, lo, hi, False, subst(p, {i: A.Var(j)}))
                out.append(Block(count, A.Binary("/", total, count)))
            else:
                out.append(Block(count if b.count == ONE else A.Binary("*", count, b.count), b.param))
        return tuple(out)

    def _weighted_blocks(self, noise: NoiseSum, coef: A.Expr, i: str, lo, hi, count) -> tuple[Block, ...] | None:
        """Hoeffding's terms of different widths (the method of bounded differences for a
        weighted sum ``s := s + c[i]·e``, ``e ~ unif({-1, 1})``, or ``unif(0, h[i])``): one
        bounded (or 0/1) draw per iteration, scaled by ``c_i`` — both ``c_i`` and its width
        ``w_i`` may read the counter — is a term of width ``|c_i|·w_i``. Hoeffding reads the
        blocks only through ``D = Σ count·w²``, so the loop's terms are ``count`` terms of the
        root-mean-square width ``sqrt(Σ_i c_i²·w_i² / count)``: ``D`` is then exactly
        ``Σ_i c_i²·w_i²`` (and 0 for no iteration), and the sum is of family ``bounded``
        (Hoeffding's only). ``c_i``, ``w_i`` read only the inputs and the counter; else None."""
        if noise.family not in ("bounded", "bernoulli") or len(noise.blocks) != 1 or noise.blocks[0].count != ONE:
            return None
        w = ONE if noise.family == "bernoulli" else noise.blocks[0].param
        if isinstance(w, A.Binary) and w.op == "-" and _const(w.right) == 0:  # unif(0, h[i]): width h[i]
            w = w.left
        if (set(free_vars(coef)) | set(free_vars(w))) - self.allowed() - {i}:
            return None
        out_f: list[A.Expr] = []  # the factors that do not read the counter, taken out of Σ
        in_f: list[A.Expr] = []
        for f in _factors(coef) + _factors(w):
            (in_f if i in set(free_vars(f)) else out_f).append(f)
        k = _fold(_product(out_f))
        if not in_f:  # the same width every iteration: count terms of width |k|
            kc = _const(k)
            return (Block(count, k if kc is not None and kc >= 0 else A.Call("abs", (k,))),)
        j = "j$w"
        term = subst(_product(in_f), {i: A.Var(j)})
        total: A.Expr = A.Sum(j, lo, hi, False, A.Binary("*", term, term))  # Σ c_j², as claims write it
        if k != ONE:
            total = A.Binary("*", A.Binary("*", k, k), total)
        return (Block(count, A.Call("sqrt", (A.Binary("/", total, count),))),)

    def loop_body(self, s, stmts, i, lo, hi, env) -> None:
        """One symbolic iteration with the counter ``i``; accumulators carried to the exit."""
        written = set()
        for st in stmts:
            written |= _written(st)
        count = hi if lo == A.num(0) else A.Binary("-", hi, lo)
        self.side.append(("loop runs", A.Binary("<=", lo, hi)))
        inner = dict(env)
        inner[i] = Det(A.Var(i))
        for x in written:
            inner[x] = Det(A.Var(x)) if isinstance(env.get(x), (Det, Lin)) else Opaque("set in the loop")
        first_id = next(self.ids)
        side_before = len(self.side)
        outer_varying = set(self.varying)
        self.varying |= written
        self.counters.append(i)
        try:
            for st in stmts:
                self.stmt(st, inner)
        finally:
            self.varying = outer_varying
            self.counters.pop()
        # side conditions found in the body may mention the counter: they must hold at every
        # iteration; only counter-free ones are kept (others make the shape unusable)
        body_side = self.side[side_before:]
        del self.side[side_before:]
        for name, cond in body_side:
            if set(free_vars(cond)) & written:
                raise NotApplicable(f"line {_line(s)}: a {name} condition in the loop depends on the iteration")
            if i in set(free_vars(cond)):  # it must hold at every iteration
                cond = A.Quant("forall", i, lo, hi, False, cond)
            self.side.append((name, cond))
        allowed = self.allowed()
        for x in written:
            v, before = inner.get(x), env.get(x)
            env[x] = Opaque("the value of the last iteration")
            if before is None or not isinstance(before, (Det, Lin)):
                continue
            if isinstance(v, Det) and v.expr == A.Var(x):
                env[x] = before
                continue
            step = _step(v, x)
            if step is None:
                continue
            d, coef, noise = step
            if set(free_vars(d)) - allowed - {i}:
                continue
            if i in set(free_vars(d)) and any(isinstance(n, A.Sum) for n in A.walk(d)):
                continue  # an inner loop's sum read by this counter: Σ over it could capture its variable
            mean_sum = self._guard_total(d, i, lo, hi, count)
            if mean_sum is None:
                mean_sum = _sum_over(d, i, lo, hi, count)
            if noise is None:
                if isinstance(before, Det):
                    env[x] = Det(_plus(before.expr, mean_sum))
                continue
            fresh = all(did >= first_id for did in noise.draws)
            if not fresh and all(did < first_id for did in noise.draws):
                # the same draws every iteration (made before the loop: an outer iteration's
                # cluster draw): x ends as x0 + Σ d_i + count·c·S — one term, scaled, never
                # ``count`` independent ones
                if isinstance(before, Det) and not (set(free_vars(coef)) - allowed):
                    env[x] = Lin(_plus(before.expr, mean_sum), _fold(_times(count, coef)), noise)
                continue
            family = noise.family
            blocks = self._loop_blocks(noise, i, lo, hi, count) if fresh and coef == ONE else None
            if blocks is None and fresh:
                blocks = self._weighted_blocks(noise, coef, i, lo, hi, count)
                family = "bounded"
            if blocks is None:
                continue
            loop_sum = NoiseSum(family, blocks, noise.draws, noise.lines)
            if isinstance(before, Det):
                env[x] = Lin(_plus(before.expr, mean_sum), ONE, loop_sum)
            elif before.coef == ONE:
                merged = merge(before.sum, loop_sum)
                if merged is not None:
                    env[x] = Lin(_plus(before.det, mean_sum), ONE, merged)


def uniform_count(op: str, c: A.Expr, a: A.Expr, b: A.Expr) -> tuple[A.Expr, A.Expr]:
    """How many of the integers x in [a, b] satisfy ``x op c`` (``c`` an integer), and the side
    condition under which that count is right: ``c - a`` integers are below c when
    a <= c <= b + 1 (``<=`` is ``< c + 1``, ``>=`` and ``>`` the complements); exactly one
    equals c, and b - a differ from it, when a <= c <= b. Used for the probability of an event
    of a fresh ``unif(a, b)`` draw (the count over b - a + 1) and for the iterations of a loop
    over [a, b] a deterministic guard lets through."""
    n = A.Binary("+", A.Binary("-", b, a), ONE)
    if op in ("==", "!="):
        cond = A.Binary("&&", A.Binary("<=", a, c), A.Binary("<=", c, b))
        return (ONE if op == "==" else A.Binary("-", b, a)), cond
    t = c if op in ("<", ">=") else A.Binary("+", c, ONE)
    cond = A.Binary("&&", A.Binary("<=", a, t), A.Binary("<=", t, A.Binary("+", b, ONE)))
    below = A.Binary("-", t, a) if a != _ZERO else t
    return (below if op in ("<", "<=") else A.Binary("-", n, below)), cond


def _scaled(s: NoiseSum, k: A.Expr) -> NoiseSum:
    """``s`` with every block's count multiplied by ``k``."""
    return dataclasses.replace(s, blocks=tuple(Block(_times(b.count, k), b.param) for b in s.blocks))


def _complement(fl: Flag) -> Flag:
    """The flag of the opposite event (probability 1 - r; the same draws and side conditions)."""
    return dataclasses.replace(fl, r=A.Binary("-", ONE, fl.r))


def _boolean(e: A.Expr, rv: dict[str, tuple]) -> bool:
    """``e`` is Boolean by its form (a coin, a comparison, a connective or a literal)."""
    if isinstance(e, A.Var):
        return rv.get(e.name, ("",))[0] == "coin"
    if isinstance(e, A.Unary):
        return e.op == "!"
    if isinstance(e, A.Binary):
        return e.op in ("&&", "||", "<", "<=", ">", ">=", "==", "!=")
    return isinstance(e, A.BoolLit)


def _counter_test(g: A.Expr, i: str) -> tuple[str, A.Expr] | None:
    """``g`` as ``i op c`` with ``c`` free of the counter ``i`` (either side, ``!`` pushed in)."""
    flip = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
    if isinstance(g, A.Unary) and g.op == "!":
        got = _counter_test(g.operand, i)
        return None if got is None else (flip[got[0]], got[1])
    if not (isinstance(g, A.Binary) and g.op in flip):
        return None
    if g.left == A.Var(i) and i not in set(free_vars(g.right)):
        return g.op, g.right
    if g.right == A.Var(i) and i not in set(free_vars(g.left)):
        return mirror[g.op], g.left
    return None


def _free_det(v: object) -> bool:
    """A deterministic value that is neither a constant nor an array element (its range in a
    mixture is the other arm's, under a side condition)."""
    return (
        isinstance(v, Det)
        and _const(v.expr) is None
        and not (isinstance(v.expr, A.Index) and isinstance(v.expr.base, A.Var))
    )


def _extreme(a: A.Expr, b: A.Expr, pick) -> A.Expr | None:
    """The smaller (``min``) or larger (``max``) of two range ends: the same expression, or two
    constants; else None."""
    if a == b:
        return a
    ca, cb = _const(a), _const(b)
    if ca is None or cb is None:
        return None
    return a if pick(ca, cb) == ca else b


def _atom_bounds(e: A.Expr, xj: A.Expr) -> tuple[list[A.Expr], list[A.Expr]] | None:
    """(lower bounds, upper bounds) of ``xj`` that ``e`` states: ``xj >= L``, ``xj <= H`` (either
    side, strict or not) and ``xj == c``; a conjunction states those of its parts, a disjunction
    of equalities to constants the least and the greatest constant. None: nothing usable."""
    if isinstance(e, A.Binary) and e.op == "&&":
        a, b = _atom_bounds(e.left, xj), _atom_bounds(e.right, xj)
        if a is None or b is None:
            return a or b
        return a[0] + b[0], a[1] + b[1]
    if isinstance(e, A.Binary) and e.op == "||":
        consts = _eq_consts(e, xj)
        if not consts:
            return None
        lo, hi = min(consts), max(consts)
        return [A.num(int(lo)) if lo.denominator == 1 else A.num(lo)], [
            A.num(int(hi)) if hi.denominator == 1 else A.num(hi)
        ]
    if not (isinstance(e, A.Binary) and e.op in ("<=", "<", ">=", ">", "==")):
        return None
    left, op, right = e.left, e.op, e.right
    if right == xj and left != xj:
        left, right = right, left
        op = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "=="}[op]
    if left != xj or xj in list(A.walk(right)):
        return None
    if op == "==":
        return [right], [right]
    return ([right], []) if op in (">=", ">") else ([], [right])


def _eq_consts(e: A.Expr, xj: A.Expr) -> list[Fraction]:
    if isinstance(e, A.Binary) and e.op == "||":
        a, b = _eq_consts(e.left, xj), _eq_consts(e.right, xj)
        return a + b if a and b else []
    if isinstance(e, A.Binary) and e.op == "==":
        other = e.right if e.left == xj else e.left if e.right == xj else None
        c = _const(other) if other is not None else None
        return [c] if c is not None else []
    return []


def array_bounds(requires) -> dict[str, list[tuple[A.Expr, A.Expr]]]:
    """Candidate ranges [L, H] of the elements of each array, read from ``requires`` conjuncts
    ``forall j in lo..hi: …x[j]…`` (:func:`_atom_bounds`). Only candidates: whoever uses one
    adds the side condition that the elements it reads lie in it, proved under ``requires``."""
    out: dict[str, list[tuple[A.Expr, A.Expr]]] = {}
    todo = list(requires)
    while todo:
        r = todo.pop(0)
        if isinstance(r, A.Binary) and r.op == "&&":
            todo += [r.left, r.right]
            continue
        if not (isinstance(r, A.Quant) and r.kind == "forall"):
            continue
        for n in A.walk(r.body):
            if isinstance(n, A.Index) and isinstance(n.base, A.Var) and n.index == A.Var(r.var):
                got = _atom_bounds(r.body, n)
                if got and got[0] and got[1]:
                    rng = (got[0][0], got[1][0])
                    if not (set(free_vars(rng[0])) | set(free_vars(rng[1]))) & {r.var}:
                        out.setdefault(n.base.name, [])
                        if rng not in out[n.base.name]:
                            out[n.base.name].append(rng)
    return out


def merge(a: NoiseSum, b: NoiseSum) -> NoiseSum | None:
    """The sum of two independent noise sums of one family, or None."""
    if a.family != b.family or a.draws & b.draws:
        return None
    return NoiseSum(a.family, a.blocks + b.blocks, a.draws | b.draws, tuple(sorted(set(a.lines + b.lines))))


def _split(e: A.Expr, x: str) -> A.Expr | None:
    """``rest`` with ``e = x + rest`` (``x`` once, with coefficient +1, in a sum of terms), else None."""
    if e == A.Var(x):
        return _ZERO
    if isinstance(e, A.Cond) and x not in set(free_vars(e.cond)):  # guarded: (G ? x + d1 : x + d2)
        r1, r2 = _split(e.then, x), _split(e.other, x)
        return None if r1 is None or r2 is None else A.Cond(e.cond, r1, r2)
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        in_l, in_r = x in set(free_vars(e.left)), x in set(free_vars(e.right))
        if in_l and not in_r:
            rest = _split(e.left, x)
            if rest is None:
                return None
            if rest == _ZERO:  # x + e  (x - e): the increment as written (sum terms match the claim's)
                return e.right if e.op == "+" else A.Unary("-", e.right)
            return A.Binary(e.op, rest, e.right)
        if in_r and not in_l and e.op == "+":
            rest = _split(e.right, x)
            if rest is None:
                return None
            return e.left if rest == _ZERO else A.Binary("+", e.left, rest)
    return None


def _step(v, x):
    """``x := x + d (+ c·S)`` as (d, c, S or None), else None (``x`` read once, added, in the
    deterministic part; e.g. ``s := s + y - t`` with ``y``, ``t`` draws)."""
    if isinstance(v, Det):
        d = _split(v.expr, x)
        return None if d is None else (d, ONE, None)
    if isinstance(v, Lin) and x not in set(free_vars(v.coef)):
        d = _split(v.det, x)
        return None if d is None else (d, v.coef, v.sum)
    return None


def _sum_over(d, i, lo, hi, count):
    """Σ_{i in lo..hi} d: ``count·d`` when d does not read the counter; else summed term by term
    (:func:`_linear`), a factor that does not read the counter taken out of the sum, so that
    ``Σ (x[i]/2 + 1/4)`` is ``(Σ x[i])/2 + count/4`` — the solver reads sums as opaque
    functions, and only this form meets the claim's ``sum(j in 0..n: x[j])``."""
    if i not in set(free_vars(d)):
        return A.Binary("*", count, d)
    j = "j$c"
    out: A.Expr | None = None
    for coef, atom in _linear(d, i):
        if _affine_atom(atom, i):  # Σ i (a triangular loop's mean): closed, n (lo + hi - 1) / 2
            term = sum_over(atom, i, lo, hi)
        elif i in set(free_vars(atom)):
            term = A.Sum(j, lo, hi, False, subst(atom, {i: A.Var(j)}))
        else:
            term = A.Binary("*", count, atom)
        term = _times(coef, term)
        out = term if out is None else _plus(out, term)
    return out if out is not None else _ZERO


def _count_total(k: A.Expr, i: str, lo: A.Expr, hi: A.Expr) -> A.Expr:
    """Σ_{i in lo..hi} k for an inner loop's trip count ``k`` that reads the counter: closed
    when ``k`` is affine in ``i`` (``for j in 0..i``: the trip count times the mean of the first
    and the last, :func:`.expected.sum_over`), else the open ``sum``."""
    if _affine_atom(k, i):
        return sum_over(k, i, lo, hi)
    return A.Sum("j$n", lo, hi, False, subst(k, {i: A.Var("j$n")}))


def _affine_atom(e: A.Expr, i: str) -> bool:
    """``e`` is ``i``, or ``i`` plus or minus terms that do not read it (a triangular inner
    loop's count or mean term): Σ over ``i`` is then closed exactly."""
    if e == A.Var(i):
        return True
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        l_in, r_in = i in set(free_vars(e.left)), i in set(free_vars(e.right))
        if l_in and not r_in:
            return _affine_atom(e.left, i)
        if r_in and not l_in and e.op == "+":
            return _affine_atom(e.right, i)
    return False


def _linear(d: A.Expr, i: str) -> list[tuple[A.Expr, A.Expr]]:
    """``d`` as Σ coef·atom, the coefficients free of the counter ``i``: sums and differences
    split, factors and divisors that do not read ``i`` moved into the coefficient."""
    fv = lambda e: i in set(free_vars(e))  # noqa: E731
    if isinstance(d, A.Binary) and d.op in ("+", "-"):
        right = _linear(d.right, i)
        if d.op == "-":
            right = [(_fold(A.Unary("-", c)), a) for c, a in right]
        return _linear(d.left, i) + right
    if isinstance(d, A.Unary) and d.op == "-":
        return [(_fold(A.Unary("-", c)), a) for c, a in _linear(d.operand, i)]
    if isinstance(d, A.Binary) and d.op == "*" and not (fv(d.left) and fv(d.right)):
        k, rest = (d.left, d.right) if not fv(d.left) else (d.right, d.left)
        return [(_fold(_times(k, c)), a) for c, a in _linear(rest, i)]
    if isinstance(d, A.Binary) and d.op == "/" and not fv(d.right):
        return [(_fold(A.Binary("/", c, d.right)), a) for c, a in _linear(d.left, i)]
    return [(ONE, d)]


def _base(t) -> str:
    while isinstance(t, A.Index):
        t = t.base
    return t.name if isinstance(t, A.Var) else "?"


def _written(s) -> set:
    out = set()
    for n in A.walk(s):
        if isinstance(n, (A.Assign, A.Sample)):
            out |= {_base(t) for t in n.targets}
        elif isinstance(n, A.VarDecl):
            out.add(n.name)
    return out


def _writes(s, x: str) -> int:
    """How many statements in ``s`` write the variable ``x`` (or an element of it)."""
    n = 0
    for node in A.walk(s):
        if isinstance(node, (A.Assign, A.Sample)):
            n += sum(1 for t in node.targets if _base(t) == x)
        elif isinstance(node, A.VarDecl) and node.name == x:
            n += 1
    return n


def _loops_inside(s) -> list:
    return [n for n in A.walk(s) if isinstance(n, (A.While, A.For))]


def _line(s) -> int:
    return s.pos.line if getattr(s, "pos", None) else 0


def recognise(program: A.Program, cfa) -> Shape:
    """The exit values of ``program``'s variables (see the module docstring); ``cfa`` is the
    program's control-flow automaton, whose loop analysis gives every loop's trip count."""
    if (
        program.rate is not None
        or program.reliability is not None
        or any(isinstance(n, A.Binary) and n.op.endswith(".") for n in A.walk(program.body))
    ):
        raise NotApplicable("unreliable operations (`+.` …) are random: they are not recognised in sums")
    try:
        types = check_program(program)
    except TampError as exc:
        raise NotApplicable(f"the program does not type-check: {exc}") from None
    ex = _Exec((p.name for p in program.params), types, cfa, program.requires)
    env: dict[str, object] = {p.name: Det(A.Var(p.name)) for p in program.params}
    ex.block(program.body, env)
    return Shape(env, ex.side, ex.loops)


def exit_value(v: object, sums: list[NoiseSum], s_name) -> A.Expr | None:
    """The exit value of a variable holding ``v`` as an expression over the inputs and the
    centred sums ``s_name(k)`` of ``sums`` (a sum not yet in ``sums`` is appended): ``e`` for
    ``Det(e)``, ``d + c·S`` for a :class:`Lin`, a formula's expression with every placeholder
    replaced by its sum's value; None for anything else. The prover's claim and the certificate
    checker's are both built with it, so they agree on what the postcondition says of the S's."""
    if isinstance(v, Det):
        return v.expr
    if isinstance(v, Lin):
        if v.sum not in sums:
            sums.append(v.sum)
        S = A.Var(s_name(sums.index(v.sum)))
        return A.Binary("+", v.det, S if v.coef == ONE else A.Binary("*", v.coef, S))
    if isinstance(v, Formula):
        holes = {f"L${j + 1}": exit_value(w, sums, s_name) for j, w in enumerate(v.lins)}
        return subst(v.expr, holes)  # type: ignore[arg-type]
    return None


def sums_in(env) -> list[NoiseSum]:
    out = []
    for v in env.values():
        if isinstance(v, Lin) and v.sum not in out:
            out.append(v.sum)
    return out
