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

Independence is established, not assumed: a draw joins a sum only when its distribution's
arguments are deterministic (inputs, deterministic locals, the loop counter), never another
draw; two sums merge only when their draws are disjoint; a loop's sum must be made of the
draws of its own iteration, with parameters that do not change between iterations (the
means may depend on the counter). Anything else — ``assume``, other loops — makes the
program *not applicable* (:class:`NotApplicable`, with the reason); a variable assigned in a
branch on a random value is ``Opaque``.

The deterministic facts the shapes rest on (a loop runs ``H - lo >= 0`` times, a divisor is
not zero, ``lo <= hi`` for ``unif``) are returned as *side conditions*, proved under
``requires`` by the caller.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from lang import ast as A
from lang.errors import TampError
from lang.typecheck import check_program
from lang.walk import free_vars
from lang.walk import substitute as subst

from .loops import CountedLoop, NotCounted, counted_loop

FAMILY_OF = {
    "lap": "laplace",
    "dlap": "laplace",
    "gauss": "gauss",
    "unif": "bounded",
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


@dataclass(frozen=True)
class ArrDraw:
    """An array whose element ``index`` holds ``value`` (an element sampled in this iteration)."""

    index: A.Expr
    value: object


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
    def __init__(self, params, types=None, cfa=None):
        self.params = set(params)
        self.types = types
        self.cfa = cfa
        self.ids = itertools.count(1)
        self.side: list[tuple[str, A.Expr]] = []
        self.loops: list[CountedLoop] = []

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
        if isinstance(e, A.Index) and isinstance(e.base, A.Var) and isinstance(env.get(e.base.name), ArrDraw):
            arr = env[e.base.name]
            idx = self.ev(e.index, env)
            if isinstance(idx, Det) and idx.expr == arr.index:
                return arr.value
            return Opaque("an array element other than the one just sampled")
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            return self._binary(e.op, self.ev(e.left, env), self.ev(e.right, env))
        if isinstance(e, A.Unary) and e.op == "-":
            v = self.ev(e.operand, env)
            if isinstance(v, Lin):
                return Lin(A.Unary("-", v.det), _fold(A.Unary("-", v.coef)), v.sum)
        if isinstance(e, A.Cond) and isinstance(e.cond, A.Var) and isinstance(env.get(e.cond.name), Flag):
            fl = env[e.cond.name]
            if e.then == A.num(1) and e.other == A.num(0):
                return self._indicator(fl)
        return Opaque("not a sum of independent draws")

    def _indicator(self, fl: Flag) -> Lin:
        return Lin(fl.r, ONE, NoiseSum("bernoulli", (Block(ONE, fl.r),), frozenset((fl.draw,)), (fl.line,)))

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
                if d.func == "unif":
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
        if isinstance(var, A.Var) and isinstance(env.get(var.name), Flag):
            fl = env[var.name]
            yes = Flag(fl.r, fl.draw, fl.line)
            no = Flag(A.Binary("-", A.num(1), fl.r), fl.draw, fl.line)
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
        for x in written:
            if x in counts:
                env[x] = self._binary("+", env.get(x, Opaque()), self._indicator(counts[x]))
            else:
                env[x] = Opaque("assigned in a branch")

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

    def _int(self, e: A.Expr) -> bool:
        try:
            return self.types is not None and self.types.type_of(e) == A.INT
        except Exception:  # noqa: BLE001 - an expression the type checker cannot type: not an int
            return False

    def loop_body(self, s, stmts, i, lo, hi, env) -> None:
        """One symbolic iteration with the counter ``i``; accumulators carried to the exit."""
        for st in stmts:
            if _loops_inside(st):
                raise NotApplicable(f"line {_line(s)}: nested loops are not recognised")
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
        for st in stmts:
            self.stmt(st, inner)
        # side conditions found in the body may mention the counter: they must hold at every
        # iteration; only counter-free ones are kept (others make the shape unusable)
        body_side = self.side[side_before:]
        del self.side[side_before:]
        for name, cond in body_side:
            if set(free_vars(cond)) & (written | {i}):
                raise NotApplicable(f"line {_line(s)}: a {name} condition in the loop depends on the iteration")
            self.side.append((name, cond))
        allowed = self.params
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
            mean_sum = _sum_over(d, i, lo, hi, count)
            if noise is None:
                if isinstance(before, Det):
                    env[x] = Det(_plus(before.expr, mean_sum))
                continue
            fresh = all(did >= first_id for did in noise.draws)
            invariant = all(
                not (set(free_vars(b.param)) - allowed) and not (set(free_vars(b.count)) - allowed)
                for b in noise.blocks
            )
            if not (fresh and invariant and coef == ONE):
                continue
            blocks = tuple(
                Block(count if b.count == ONE else A.Binary("*", count, b.count), b.param) for b in noise.blocks
            )
            loop_sum = NoiseSum(noise.family, blocks, noise.draws, noise.lines)
            if isinstance(before, Det):
                env[x] = Lin(_plus(before.expr, mean_sum), ONE, loop_sum)
            elif before.coef == ONE:
                merged = merge(before.sum, loop_sum)
                if merged is not None:
                    env[x] = Lin(_plus(before.det, mean_sum), ONE, merged)


def merge(a: NoiseSum, b: NoiseSum) -> NoiseSum | None:
    """The sum of two independent noise sums of one family, or None."""
    if a.family != b.family or a.draws & b.draws:
        return None
    return NoiseSum(a.family, a.blocks + b.blocks, a.draws | b.draws, tuple(sorted(set(a.lines + b.lines))))


def _split(e: A.Expr, x: str) -> A.Expr | None:
    """``rest`` with ``e = x + rest`` (``x`` once, with coefficient +1, in a sum of terms), else None."""
    if e == A.Var(x):
        return _ZERO
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
    """Σ_{i in lo..hi} d: ``count·d`` when d does not read the counter."""
    if i not in set(free_vars(d)):
        return A.Binary("*", count, d)
    j = "j$c"
    return A.Sum(j, lo, hi, False, subst(d, {i: A.Var(j)}))


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
    ex = _Exec((p.name for p in program.params), types, cfa)
    env: dict[str, object] = {p.name: Det(A.Var(p.name)) for p in program.params}
    ex.block(program.body, env)
    return Shape(env, ex.side, ex.loops)


def sums_in(env) -> list[NoiseSum]:
    out = []
    for v in env.values():
        if isinstance(v, Lin) and v.sum not in out:
            out.append(v.sum)
    return out
