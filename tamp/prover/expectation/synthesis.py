"""Invariant expectations found by synthesis: templates with unknown coefficients, by CEGIS.

The loop search of :mod:`tamp.prover.expectation.prove` *recognises* invariant expectations
whose shape it derives from the claimed bound's text. This room *synthesises* them: a
template ``core(λ) = G ? λ₁·T₁ + … + λₘ·Tₘ : 1`` over building blocks ``T`` read off the
loop and the claim, with unknown rational coefficients λ, and a counterexample-guided search
(CEGIS) for λ such that INDUCT holds:

1. guess λ (first every block with coefficient 1, the constant 0);
2. ask the solver for a state (inputs and loop variables, under ``requires``) where INDUCT
   ``g ⇒ wpe(B, E(λ)) <= cap(core(λ))`` fails; none (``unsat``): λ is the answer;
3. else keep that state's scalar values, and ask the solver for λ such that INDUCT holds at
   every state kept so far (the template's coefficients are its only unknowns there; first
   with small coefficients 0, 1/2, 1, …, 4 and no constant, then blocks' coefficients in
   [0, 64] and the constant in [-1, 1/2], since a constant 1 is inductive and useless), and
   go to 2 with them. Among the small coefficients the least sum is taken, and no vector is
   guessed twice: the search does not hang on which model the solver happens to return first,
   and a vector whose INDUCT the solver can neither refute nor prove is passed over.

Building blocks (:func:`markov_blocks` and the caller's): for a failure indicator ``[x >= a]``
(or ``x > a``) of the continuation, with ``x`` a counter the loop raises and ``a`` left alone,
the block ``x / a`` — Markov's inequality, ``[x >= a] <= x/a`` for ``x >= 0 < a``, as a
template (the expected final value of x over a); the bound with an input replaced by the
iterations left (``β[p := p - c]``), and the constant 1. The guard ``G`` is the counters'
progress (``c >= c0``, :func:`tamp.prover.expectation.prove.counter_facts`) when there is one,
so the template is read only where the counter is where the program starts it. For a claim on
the longest run, ``best < c`` with ``best := max(best, run)`` and ``run := run + 1`` / ``run := 0``
in a counted loop, the blocks are the run's indicators ``[run >= c - j]·[left >= j]·h^j`` and the
windows left ``max(left - (c - 1), 0)·h^c`` (:func:`streak_templates`), h a coin's chance over the
inputs; c is a literal at most ``MAX_STREAK`` and at most two chances are tried, so the search
stays bounded (and is skipped for every other loop).

Why this is sound: synthesis only *proposes* a core. A proposed core has rational literal
coefficients and goes through the same obligations as any other — the loop search decides
INDUCT for it again with :meth:`Checker.valid` (``unknown`` is failure), TERM and BUDGET are
decided as for every core, and the certificate carries the core, so ``tamp check-proof``
rebuilds every obligation from the source and that expression, without any search. The
counterexample states and the guessing queries influence which core is tried, never whether
it is accepted; a wrong guess costs only time.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import AbstractSet, Callable, Dict, Iterator, List, Optional, Sequence

import z3  # type: ignore[import-untyped,unused-ignore]  # z3 ships no type information

from lang import ast as A
from lang.walk import free_vars, substitute
from tamp.core import watchdog
from tamp.core.validity import budget_limits
from tamp.prover.base.smt import VALID, lemmas_for, transcendental_apps

MAX_ROUNDS = 8  # counterexample rounds per template
GUESS_MS = 2000
CEX_MS = 2000
COEFF_BOUND = 64  # a block's coefficient is searched in [0, COEFF_BOUND]
NICE = ("0", "1/2", "1", "2", "3", "4")  # the coefficients tried first
SCALARS = ("int", "real", "bool")


def lam(k: int) -> A.Var:
    """The unknown coefficient number ``k`` of a template (a name no program variable has)."""
    return A.Var(f"lam${k}")


def markov_blocks(f: A.Expr, raised: Sequence[str], changed: AbstractSet[str]) -> List[A.Expr]:
    """``x / a`` for each comparison ``x >= a``, ``x > a``, ``x < a``, ``x <= a`` (either way
    round) of the continuation ``f`` — a failure indicator such as ``[¬(x < a)]`` — with ``x``
    one of the counters the loop raises (``raised``) and ``a`` read-only in the loop."""
    out: List[A.Expr] = []
    for n in A.walk(f):
        if not isinstance(n, A.Binary) or n.op not in (">=", ">", "<=", "<"):
            continue
        for x, a in ((n.left, n.right), (n.right, n.left)):
            if not (isinstance(x, A.Var) and x.name in raised) or set(free_vars(a)) & changed:
                continue
            b = A.Binary("/", x, a)
            if b not in out:
                out.append(b)
    return out


def template(blocks: Sequence[A.Expr], guard: Optional[A.Expr]) -> A.Expr:
    """``guard ? λ₀ + λ₁·T₁ + … : 1`` (no guard: the sum alone)."""
    acc: A.Expr = lam(0)
    for k, t in enumerate(blocks, start=1):
        acc = A.Binary("+", acc, A.Binary("*", lam(k), t))
    return A.Cond(guard, acc, A.num(1)) if guard is not None else acc


def instantiate(tmpl: A.Expr, coeffs: Sequence[Fraction]) -> A.Expr:
    """The template with its coefficients in place (terms with coefficient 0 dropped, 1 not
    written), as an ordinary expression of the language."""
    values = {f"lam${k}": c for k, c in enumerate(coeffs)}

    def walk(e: A.Expr) -> Optional[A.Expr]:  # None: a zero term
        if isinstance(e, A.Var) and e.name in values:
            v = values[e.name]
            return None if v == 0 else A.Num(v, v.denominator == 1)
        if isinstance(e, A.Binary) and e.op == "*" and isinstance(e.left, A.Var) and e.left.name in values:
            v = values[e.left.name]
            if v == 0:
                return None
            return e.right if v == 1 else A.Binary("*", A.Num(v, v.denominator == 1), e.right)
        if isinstance(e, A.Binary) and e.op == "+":
            a, b = walk(e.left), walk(e.right)
            if a is None or b is None:
                return b if a is None else a
            return A.Binary("+", a, b)
        if isinstance(e, A.Cond):
            t = walk(e.then)
            return A.Cond(e.cond, t if t is not None else A.num(0), e.other)
        return e

    out = walk(tmpl)
    return out if out is not None else A.num(0)


def _value(v) -> Optional[A.Expr]:
    """A z3 model value as a literal of the language (None: not a scalar we can write)."""
    if z3.is_true(v) or z3.is_false(v):
        return A.BoolLit(z3.is_true(v))
    if z3.is_int_value(v):
        return A.Num(Fraction(v.as_long()), True)
    if z3.is_rational_value(v):
        return A.Num(Fraction(v.numerator_as_long(), v.denominator_as_long()), False)
    if z3.is_algebraic_value(v):
        r = v.approx(12)
        return A.Num(Fraction(r.numerator_as_long(), r.denominator_as_long()), False)
    return None


def _literal(e: A.Expr) -> A.Expr:
    """A negative literal as ``0 - n`` (the language's numbers are unsigned)."""
    if isinstance(e, A.Num) and e.value < 0:
        return A.Binary("-", A.num(0), A.Num(-e.value, e.is_int))
    return e


class Cegis:
    """The counterexample-guided coefficient search over one checker (its encoder, its
    ``requires`` and lemmas)."""

    def __init__(self, chk, types: Dict[str, A.Type]):
        self.chk = chk
        self.types = types

    def left_ms(self) -> Optional[float]:
        """The milliseconds the proof has left (None: no deadline)."""
        deadline = getattr(self.chk, "deadline", None)
        return None if deadline is None else (deadline - time.monotonic()) * 1000

    def _solver(self, f, ms: int, lemmas: bool = True) -> z3.Solver:
        """A solver with ``requires`` (and, with ``lemmas``, the facts the checker adds for
        ``f``), bounded by z3's resource limit for ``ms`` (the same answer under any load)."""
        return self._bounded(z3.Solver(), f, ms, lemmas)

    def _check(self, s, ms: int):
        """``s.check()`` for a solver bounded by :meth:`_bounded` for ``ms``, under the watchdog
        (:func:`tamp.core.watchdog.call`: control comes back even if z3 heeds no limit)."""
        _rlimit, clock = budget_limits(ms)
        left = self.left_ms()
        limit = max(1, int(min(clock, left))) if left is not None else clock
        return watchdog.call(s.check, s.ctx, limit / 1000)

    def _bounded(self, s, f, ms: int, lemmas: bool = True):
        """``s`` (a solver or an optimizer) limited to ``ms`` of z3's work (and the proof's time
        left), with ``requires`` and, with ``lemmas``, the facts the checker adds for ``f``."""
        rlimit, clock = budget_limits(ms)
        left = self.left_ms()
        s.set("rlimit", rlimit)
        s.set("timeout", max(1, int(min(clock, left))) if left is not None else clock)
        s.add(*self.chk.hyps)
        if lemmas:
            hyps = list(self.chk.extra_hyps(f))
            apps = transcendental_apps(z3.And(*self.chk.hyps, *hyps, f)) if self.chk.enc.has_apps else []
            s.add(*hyps, *(lem for _name, lem in lemmas_for(apps, self.chk.enc)))  # (name, lemma) pairs
        return s

    def counterexample(self, formula: A.Expr) -> Optional[Dict[str, A.Expr]]:
        """A state (scalar values) where ``formula`` fails, or None (valid, or no answer): first
        a concrete point (:mod:`tamp.prover.base.points`: the same state whatever the solver
        did before), else the solver's model."""
        point = self.chk.point_against(formula) if hasattr(self.chk, "point_against") else None
        if point is not None:
            return {
                n: _literal(A.BoolLit(v) if isinstance(v, bool) else A.Num(Fraction(v), self.types.get(n) == A.INT))
                for n, v in point.items()
                if n in free_vars(formula)
            }
        try:
            f = self.chk.enc.expr(formula, self.chk.env)
        except Exception:  # noqa: BLE001 - not encodable: no counterexample to learn from
            return None
        m = None
        for lemmas in (False, True):  # a state without the lemmas first (cheap; still a state)
            s = self._solver(f, CEX_MS, lemmas)
            s.add(z3.Not(f))
            if self._check(s, CEX_MS) == z3.sat:
                m = s.model()
                break
        if m is None:
            return None
        out: Dict[str, A.Expr] = {}
        for name in set(free_vars(formula)):
            t = self.types.get(name)
            if t is None or t.name not in SCALARS or name not in self.chk.env:
                continue
            v = _value(m.eval(self.chk.env[name], model_completion=True))
            if v is not None:
                out[name] = _literal(v)
        return out

    def _least(self, f, objective) -> Optional[z3.ModelRef]:
        """A model of ``f`` (with ``requires`` and the checker's lemmas) with the least
        ``objective``, or None (unsat, or no answer within the guess's budget)."""
        o = self._bounded(z3.Optimize(), f, GUESS_MS)
        o.add(f)
        o.minimize(objective)
        return o.model() if self._check(o, GUESS_MS) == z3.sat else None

    def guess(
        self, formula: A.Expr, states: List[Dict[str, A.Expr]], k: int, tried: Sequence[Sequence[Fraction]] = ()
    ) -> Optional[List[Fraction]]:
        """Coefficients λ₀…λ_{k-1}, none of ``tried``, under which ``formula`` (the template's
        INDUCT) holds at every state of ``states``, or None. Among the small ones, those with the
        least sum: the guess is then the same whatever model the solver would pick first."""
        env = dict(self.chk.env)
        lams = [z3.Real(f"lam${i}") for i in range(k)]
        for i, v in enumerate(lams):
            env[f"lam${i}"] = v
        parts = []
        try:
            for st in states:
                parts.append(self.chk.enc.expr(substitute(formula, st), env))
        except Exception:  # noqa: BLE001 - not encodable: no guess
            return None
        # simple coefficients first (no constant, blocks from a few small values: most
        # invariants have them, and the solver's first model is otherwise arbitrary); then
        # blocks in [0, COEFF_BOUND] (each bounds a failure chance from above) and the
        # constant in [-1, 1/2] (a constant 1 is inductive and useless)
        simple = [lams[0] == 0] + [z3.Or(*[v == z3.RealVal(c) for c in NICE]) for v in lams[1:]]
        ranges = [z3.And(-1 <= lams[0], lams[0] <= z3.RealVal("1/2"))]
        ranges += [z3.And(0 <= v, v <= COEFF_BOUND) for v in lams[1:]]
        fresh = [z3.Or(*[v != z3.RealVal(str(c)) for v, c in zip(lams, t)]) for t in tried]
        m = None
        for extra in (simple, ranges):
            f = z3.And(*parts, *extra, *fresh)
            if extra is simple:
                m = self._least(f, z3.Sum(*lams[1:]) if k > 1 else z3.RealVal(0))
                if m is not None:
                    break
                continue
            s = self._solver(f, GUESS_MS)
            s.add(f)
            if self._check(s, GUESS_MS) == z3.sat:
                m = s.model()
                break
        if m is None:
            return None
        out = []
        for v in lams:
            lit = _value(m.eval(v, model_completion=True))
            if not isinstance(lit, A.Num):
                return None
            out.append(Fraction(lit.value).limit_denominator(1000))
        return out

    def search(self, tmpl: A.Expr, k: int, induct: Callable[[A.Expr], Optional[A.Expr]]) -> Iterator[A.Expr]:
        """Cores from ``tmpl`` (``k`` coefficients) whose INDUCT had no counterexample, each
        proposed once (the caller decides INDUCT again). ``induct(core)`` is the INDUCT formula
        of a core (None: outside the rules)."""
        symbolic = induct(tmpl)
        if symbolic is None:
            return
        coeffs = [Fraction(0)] + [Fraction(1)] * (k - 1)
        states: List[Dict[str, A.Expr]] = []
        tried: set = set()
        for _round in range(MAX_ROUNDS):
            left = self.left_ms()
            if left is not None and left <= 0:
                return  # the proof's time is up (the search's next check says so)
            key = tuple(coeffs)
            if key in tried:
                return
            tried.add(key)
            core = instantiate(tmpl, coeffs)
            formula = induct(core)
            if formula is None:
                return
            cex = self.counterexample(formula)
            if cex is None:  # no counterexample: proposed only if the checker finds it valid
                if self.chk.valid(formula) == VALID:
                    yield core
                    return
                # no answer either way (nonlinear arithmetic): other coefficients, same states
            else:
                states.append(cex)
            nxt = self.guess(symbolic, states, k, sorted(tried))
            if nxt is None:
                return
            coeffs = nxt


# ---------------------------------------------------------------------------- streaks

MAX_STREAK = 5  # the largest threshold c of a longest-run claim `best < c` given a template


def _ind(c: A.Expr) -> A.Expr:
    return A.Cond(c, A.num(1), A.num(0))


def _power(h: A.Expr, j: int) -> A.Expr:
    out = h
    for _ in range(j - 1):
        out = A.Binary("*", out, h)
    return out


def _max_of(body: A.Stmt, m: str) -> Optional[str]:
    """R when the only write of ``m`` in ``body`` is ``m := max(m, R)`` (or ``max(R, m)``)."""
    writes = [n for n in A.walk(body) if isinstance(n, (A.Assign, A.Sample)) and A.Var(m) in n.targets]
    if len(writes) != 1 or not isinstance(writes[0], A.Assign):
        return None
    v = writes[0].value
    if not (isinstance(v, A.Call) and v.func == "max" and len(v.args) == 2 and A.Var(m) in v.args):
        return None
    other = v.args[1] if v.args[0] == A.Var(m) else v.args[0]
    return other.name if isinstance(other, A.Var) and other.name != m else None


def _run_var(body: A.Stmt, r: str) -> bool:
    """``r`` is written in ``body`` only by ``r := r + 1`` and ``r := 0`` (a run length)."""
    ok = (A.Binary("+", A.Var(r), A.num(1)), A.num(0))
    writes = [n for n in A.walk(body) if isinstance(n, (A.Assign, A.Sample)) and A.Var(r) in n.targets]
    return bool(writes) and all(isinstance(w, A.Assign) and w.value in ok for w in writes)


def streak_templates(
    f: A.Expr, body: A.Stmt, left: A.Expr, chances: Sequence[A.Expr], facts: Optional[A.Expr]
) -> List[A.Expr]:
    """Templates for a claim on the longest run ``best < c`` (c an integer literal, 2..MAX_STREAK)
    of a loop that tracks ``best := max(best, run)`` with ``run := run + 1`` / ``run := 0``,
    ``left`` the iterations left and h one of ``chances`` (the chance of extending the run):
    ``best < c ? λ₀ + Σ_{j=1}^{c-1} λ_j·[run >= c - j]·[left >= j]·h^j + λ_c·max(left - (c - 1),
    0)·h^c : 1`` — the union bound over the runs of c still possible: the current run (at
    least c - j long) completed by the next j iterations all extending it (chance h^j when each
    extends it with chance h), and a fresh run of c in each of the later windows. With all
    coefficients 1 (CEGIS's first guess) INDUCT holds exactly case by case (run >= c - 1: h +
    (1 - h)·rest; shorter runs shift to the next block). Only proposals: the loop search
    decides INDUCT, TERM and BUDGET for the core, and the certificate carries it."""
    out: List[A.Expr] = []
    for n in A.walk(f):
        if not (isinstance(n, A.Binary) and n.op in ("<", ">=")):
            continue
        m, c = n.left, n.right
        if not (isinstance(m, A.Var) and isinstance(c, A.Num) and c.is_int and 2 <= c.value <= MAX_STREAK):
            continue
        r = _max_of(body, m.name)
        if r is None or not _run_var(body, r):
            continue
        k = int(c.value)
        for h in chances:
            blocks: List[A.Expr] = [
                A.Binary(
                    "*",
                    A.Binary("*", _ind(A.Binary(">=", A.Var(r), A.num(k - j))), _ind(A.Binary(">=", left, A.num(j)))),
                    _power(h, j),
                )
                for j in range(1, k)
            ]
            blocks.append(A.Binary("*", A.Call("max", (A.Binary("-", left, A.num(k - 1)), A.num(0))), _power(h, k)))
            guard = A.Binary("<", m, c)
            if facts is not None:
                guard = A.Binary("&&", facts, guard)
            t = template(blocks, guard)
            if t not in out:
                out.append(t)
    return out


def tmpl_size(tmpl: A.Expr) -> int:
    """The number of coefficients λ₀, λ₁, … of a template."""
    return len({n.name for n in A.walk(tmpl) if isinstance(n, A.Var) and n.name.startswith("lam$")})
