"""An exact enumerator for small discrete ``.prob`` programs: the reference a differential
fuzzer (tests/fuzz/differential.py) compares tamp's engines with.

It shares nothing with the prover or the probability engine except the expression evaluator
(:mod:`lang.evaluate`, exact on ints and fractions): a program's meaning is computed by
running it on a *distribution* of states, a dict from a state (its variables' values, frozen)
to a :class:`fractions.Fraction`. ``bern(p)`` splits a state in two, ``unif(lo, hi)`` and
``unif({c1, …})`` in one state per value, ``if`` splits by its condition; a ``while`` loop (a
``for`` loop is the counted ``while`` of docs/language.md: ``i := lo; while (i < hi) { body;
i := i + 1 }``, its bound read again at every test) runs until no mass is left inside it or
until :data:`CAP` iterations. ``assume`` is not supported (the fuzzer generates none).

What is left inside a loop after :data:`CAP` iterations is reported, not guessed:
:attr:`Outcome.stuck`. A failure probability is then known to lie in ``[fail, fail + stuck]``
(total correctness counts a run that never ends as a failure; a stuck run may still end, and
pass or fail). When no mass left the loop between iteration ``CAP // 2`` and ``CAP`` and some
mass is still inside, :attr:`Outcome.diverges` is set: for the fuzzer's grammar (whose loop
states only grow by at most one per iteration) such mass never leaves, so it is failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, FrozenSet, Mapping, Tuple

from lang import ast as A
from lang.evaluate import evaluate

State = FrozenSet[Tuple[str, object]]
Dist = Dict[State, Fraction]

#: iterations of one loop (per entry) before the mass still inside is reported as stuck
CAP = 120


class Unsupported(Exception):
    """A construct the enumerator does not model (a continuous draw, ``assume`` …)."""


@dataclass
class Outcome:
    """The distribution of final states, and the mass of runs that did not end within the cap."""

    final: Dist
    stuck: Fraction
    diverges: bool

    def probability(self, event: A.Expr) -> Fraction:
        """The probability that a run ends in a state satisfying ``event`` (runs that did not
        end are not counted)."""
        return sum((w for s, w in self.final.items() if _truth(event, s)), Fraction(0))

    def failure(self, ensures) -> Tuple[Fraction, Fraction]:
        """[lower, upper] for the probability that a run does not end in a state satisfying
        every clause of ``ensures`` (equal when nothing is stuck; stuck mass counted as failure
        in the lower end too when it :attr:`diverges`)."""
        bad = sum(
            (w for s, w in self.final.items() if not all(_truth(e, s) for e in ensures)),
            Fraction(0),
        )
        return (bad + self.stuck if self.diverges else bad), bad + self.stuck


def _env(s: State) -> Dict[str, object]:
    return dict(s)


def _truth(e: A.Expr, s: State) -> bool:
    v = evaluate(e, _env(s))
    if not isinstance(v, bool):
        raise Unsupported(f"a condition with the value {v!r}")
    return v


def _value(v: object) -> object:
    """Values kept exactly: ints stay ints, other numbers become fractions."""
    if isinstance(v, bool) or isinstance(v, int):
        return v
    if isinstance(v, Fraction):
        return v
    if isinstance(v, float):
        raise Unsupported(f"a float value {v!r} (an operation outside exact arithmetic)")
    raise Unsupported(f"the value {v!r}")


def _set(s: State, name: str, v: object) -> State:
    d = dict(s)
    d[name] = _value(v)
    return frozenset(d.items())


def _add(d: Dist, s: State, w: Fraction) -> None:
    if w:
        d[s] = d.get(s, Fraction(0)) + w


class Enumerator:
    """Runs statements on distributions (see the module docstring)."""

    def __init__(self, cap: int = CAP):
        self.cap = cap
        self.stuck = Fraction(0)
        self.diverges = False

    def block(self, stmts, d: Dist) -> Dist:
        for st in stmts:
            d = self.stmt(st, d)
        return d

    def stmt(self, st: A.Stmt, d: Dist) -> Dist:
        if isinstance(st, A.Block):
            return self.block(st.stmts, d)
        if isinstance(st, A.Skip):
            return d
        if isinstance(st, A.Assign):
            if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var):
                raise Unsupported("an assignment to something other than one variable")
            out: Dist = {}
            for s, w in d.items():
                _add(out, _set(s, st.targets[0].name, evaluate(st.value, _env(s))), w)
            return out
        if isinstance(st, A.Sample):
            if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var):
                raise Unsupported("a sampling into something other than one variable")
            name = st.targets[0].name
            out = {}
            for s, w in d.items():
                for v, q in self.support(st.dist, s):
                    _add(out, _set(s, name, v), w * q)
            return out
        if isinstance(st, A.If):
            yes: Dist = {}
            no: Dist = {}
            for s, w in d.items():
                _add(yes if _truth(st.cond, s) else no, s, w)
            yes = self.block(st.then.stmts, yes)
            if st.other is not None:
                no = self.block(st.other.stmts, no)
            for s, w in no.items():
                _add(yes, s, w)
            return yes
        if isinstance(st, A.While):
            return self.loop(st.cond, st.body.stmts, (), d)
        if isinstance(st, A.For):
            out = {}
            for s, w in d.items():
                _add(out, _set(s, st.var, evaluate(st.lo, _env(s))), w)
            op = "<=" if st.inclusive else "<"
            cond = A.Binary(op, A.Var(st.var), st.hi)
            step = A.Assign((A.Var(st.var),), A.Binary("+", A.Var(st.var), A.num(1)))
            return self.loop(cond, st.body.stmts, (step,), out)
        raise Unsupported(f"the statement {type(st).__name__}")

    def loop(self, cond: A.Expr, body, step, d: Dist) -> Dist:
        done: Dist = {}
        inside = d
        left_late = False
        for k in range(self.cap + 1):
            cont: Dist = {}
            for s, w in inside.items():
                if _truth(cond, s):
                    _add(cont, s, w)
                else:
                    _add(done, s, w)
                    if k > self.cap // 2:
                        left_late = True
            if not cont:
                return done
            if k == self.cap:
                mass = sum(cont.values(), Fraction(0))
                self.stuck += mass
                if not left_late:
                    self.diverges = True
                return done
            inside = self.block(tuple(body) + tuple(step), cont)
        return done

    def support(self, dist: A.Call, s: State):
        """(value, probability) pairs of ``dist`` in state ``s``."""
        env = _env(s)
        if dist.func == "bern" and len(dist.args) == 1:
            p = Fraction(evaluate(dist.args[0], env))
            if not 0 <= p <= 1:
                raise Unsupported(f"bern({p})")
            return [(True, p), (False, 1 - p)]
        if dist.func == "unif" and len(dist.args) == 1 and isinstance(dist.args[0], A.SetLit):
            vals = sorted({evaluate(x, env) for x in dist.args[0].items})
            return [(v, Fraction(1, len(vals))) for v in vals]
        if dist.func == "unif" and len(dist.args) == 2:
            lo, hi = (evaluate(a, env) for a in dist.args)
            if not (isinstance(lo, int) and isinstance(hi, int)) or hi < lo:
                raise Unsupported(f"unif({lo}, {hi})")
            return [(v, Fraction(1, hi - lo + 1)) for v in range(lo, hi + 1)]
        raise Unsupported(f"the distribution {dist.func}")


def run(program: A.Program, inputs: Mapping[str, object], cap: int = CAP) -> Outcome:
    """The outcome of ``program`` at ``inputs`` (every parameter given)."""
    start: State = frozenset((k, _value(v)) for k, v in inputs.items())
    e = Enumerator(cap)
    final = e.block(program.body.stmts, {start: Fraction(1)})
    return Outcome(final, e.stuck, e.diverges)
