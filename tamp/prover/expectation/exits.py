"""Invariant expectations for loops that stop early: piecewise on the exit flag.

A loop ``while (C && go) B`` (or ``while (!done && C) B``) whose body sets the flag to its
*stop* value on some draw (``go := false``, ``done := true``) ends at the first such draw:
fixed-sequence testing stops at the first non-rejected hypothesis, a retry at the first
success, sequential sampling at the first defect. The failure after such a loop is often
*settled* long before the loop ends: in fixed-sequence testing ``v >= 1`` (a false rejection)
holds from the first rejecting draw on, and the loop keeps running; the union bound pays ``a``
for every test (``a·m``), while the true chance is ``a`` — a second rejection needs the first.

The proposals here read the invariant piecewise on the flag. Where the loop has stopped its
expected failure is the continuation ``F`` itself, so the part of the failure that is already
decided is ``F[flag := stop]`` — what the continuation would give if the loop stopped now;
where it runs, a template ``T`` bounds what the iterations left can still add:

    core = F[flag := stop] + T

with ``T`` one of (:func:`exit_cores`):

* ``0`` and the claimed bound ``β`` (over inputs only) — fixed-sequence testing:
  ``[v != 0] + a``;
* ``exp(-q·left)`` for a per-iteration chance ``q`` of the body
  (:func:`.powers.trial_chances`) and ``left`` the iterations left
  (:func:`.powers.iterations_left`): every iteration left must miss;
* ``q·left``: the union bound over the iterations left;
* for a count ``c`` that the body raises by 1 and an atom ``c >= K`` (``c > K - 1``) of the
  continuation with a literal ``K <= 4``: ``c >= K ? 0 : q^(K - c)`` written as a chain of
  products of ``q`` (``c == K - 1 ? q : c == K - 2 ? q·q : …``) for a ``bern(q)`` chance
  (``q`` or ``1 - q``), or the exact chance ``cnt/N`` that a ``unif`` draw passes a threshold
  test (:func:`.powers.count_chances`, its ``min``/``max`` settled under ``requires``) — the count reaches K only if the next K - c draws all come up before
  the loop stops; and ``q^(K - 1 - c)`` for a loop counter, whose last step to K is taken
  whatever the draw (K attempts need K - 1 misses first).

Session 26 (exitexpr26): a flag set by an *expression* (``good := a && b``, ``hit := u || v``,
``found := x <= c`` of a uniform draw, ``ok := !fault``, ``seen := votes >= 2`` of a count of
three coins, ``done := conf`` inside ``if (pass)``) is an exit flag too. Its stop event is read
off the body run symbolically (:func:`stop_event`: an ``if`` merged into a conditional, a draw an
atom), and its chance ``q`` over the independent draws (:func:`event_chances`: the truth table
of the atoms multiplied out by :func:`expanded`, or ``P(a)·P(b)``, ``1 - (1 - P(a))·(1 - P(b))``,
``1 - P(a)`` read off the structure) joins the templates above: ``exp(-q·left)``, ``q·left``
and the chains. For a claim ``fails β`` whose ``requires`` takes the log of β's inputs (a loop
sized ``k >= log(1/β)/q``) also ``T = exp(log β + q·c)`` for the guard's counter c: the bound
grown by one factor exp(q) per iteration done — β at the start (BUDGET), one more miss fits
``(1 - q)·exp(q) <= 1`` (INDUCT), and the last iteration needs ``1 - q <= exp(log β + q·(k -
1))``, i.e. ``q·k >= log(1/β)``, the ``requires``. The chance is a heuristic reading (two tests
of one draw, or a state-dependent event, give none; a wrongly independent reading only fails
INDUCT).

Why this is sound: these are only proposals, exactly like the other cores of
:mod:`tamp.prover.expectation.prove`. A core is accepted only when INDUCT
``g ⇒ wpe(B, g ? cap(core) : F) <= cap(core)`` is valid for every state (the solver decides,
``unknown`` is failure), TERM holds for the loop, and BUDGET compares the program's
pre-expectation with the claim. The piecewise reading is in the invariant
``g ? cap(core) : F`` the engine always uses: on exit the continuation, while running the core.
The certificate carries the core and ``tamp check-proof`` rebuilds every obligation from the
source and the core (:mod:`tamp.certificate.exp_rules`), so the rule adds no certificate
section and nothing here is trusted.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from lang import ast as A
from lang.walk import free_vars, written_vars
from tamp.core.counts import closed_count
from tamp.prover.base.exprs import conjuncts, subst

from .powers import _unit_counters, count_chances, int_of, iterations_left, trial_chances

ONE = A.num(1)
ZERO = A.num(0)
MAX_LEVEL = 4  # the largest literal threshold K whose power q^(K - c) is written as products
MAX_CORES = 24


def exit_flags(g: A.Expr, body: A.Stmt, types: Dict[str, A.Type]) -> List[Tuple[str, bool]]:
    """``(flag, stop)`` for each Boolean conjunct of the guard ``g`` that is a variable ``v``
    (stop value false) or its negation ``!v`` (stop value true) and that ``body`` sets to the
    stop value by an assignment of that literal or of an expression (``good := a && b``) that
    may have it (a sampled flag is :func:`.prove.flag_cores`')."""
    out: List[Tuple[str, bool]] = []
    for c in conjuncts(g):
        if isinstance(c, A.Var):
            name, stop = c.name, False
        elif isinstance(c, A.Unary) and c.op == "!" and isinstance(c.operand, A.Var):
            name, stop = c.operand.name, True
        else:
            continue
        if types.get(name) != A.BOOL or name not in written_vars(body):
            continue
        sets = any(  # the stop literal, or an expression that may have the stop value
            isinstance(n, A.Assign) and n.targets == (A.Var(name),) and n.value != A.BoolLit(not stop)
            for n in A.walk(body)
        )
        if sets and (name, stop) not in out:
            out.append((name, stop))
    return out


def _norm(q: A.Expr, fold: Callable[[A.Expr], A.Expr]) -> A.Expr:
    """``q`` multiplied out (:func:`expanded`): one form for two ways of writing a chance."""
    return fold(expanded(fold(q)))


def _guard_counters(s: A.While) -> List[str]:
    """The counters ``c`` of guard conjuncts ``c < e`` / ``c <= e`` that the body raises by 1."""
    steps = _unit_counters(s.body)
    out: List[str] = []
    for g in conjuncts(s.cond):
        if isinstance(g, A.Binary) and g.op in ("<", "<=") and isinstance(g.left, A.Var) and g.left.name in steps:
            if g.left.name not in out:
                out.append(g.left.name)
    return out


def _bern_chances(body: A.Stmt, fixed: Set[str]) -> List[A.Expr]:
    out: List[A.Expr] = []
    for n in A.walk(body):
        if isinstance(n, A.Sample) and n.dist.func == "bern" and len(n.dist.args) == 1:
            q = n.dist.args[0]
            for x in (q, A.Binary("-", ONE, q)):  # either outcome may be the one counted
                if set(free_vars(q)) <= fixed and x not in out:
                    out.append(x)
    return out


def _thresholds(f: A.Expr, counts: Set[str]) -> List[Tuple[str, int]]:
    """``(c, K)`` for each atom ``c >= K``, ``c > K - 1``, ``K <= c`` or ``K - 1 < c`` of ``f``
    (negations included: ``c <= K - 1`` is the same test) with ``c`` in ``counts`` and a
    literal integer ``1 <= K <= MAX_LEVEL``."""
    out: List[Tuple[str, int]] = []
    for n in A.walk(f):
        if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=")):
            continue
        a, b, op = n.left, n.right, n.op
        if isinstance(b, A.Var) and isinstance(a, A.Num):
            a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if not (isinstance(a, A.Var) and a.name in counts and isinstance(b, A.Num)):
            continue
        v = Fraction(b.value)
        if v.denominator != 1:
            continue
        k = int(v) + (1 if op in (">", "<=") else 0)  # c > v ⇔ c >= v + 1; c <= v ⇔ !(c >= v + 1)
        if 1 <= k <= MAX_LEVEL and (a.name, k) not in out:
            out.append((a.name, k))
    return out


def _power_chain(c: str, k: int, q: A.Expr, shift: int = 0) -> A.Expr:
    """``c >= K ? 0 : q^max(0, K - shift - c)`` as a chain of literal cases (``c == K - 1``,
    …, the last case for ``c <= 0``); the power written as a product of ``q``."""

    def power(j: int) -> A.Expr:
        out: A.Expr = ONE
        for _ in range(j):
            out = q if out == ONE else A.Binary("*", out, q)
        return out

    cv = A.Var(c)
    chain: A.Expr = power(k - shift)
    for d in range(1, k):  # c == d, from the bottom up so that the chain tests c == K - 1 first
        chain = A.Cond(A.Binary("==", cv, A.num(d)), power(max(0, k - shift - d)), chain)
    return A.Cond(A.Binary(">=", cv, A.num(k)), ZERO, chain)


def exit_cores(
    s: A.Stmt,
    f: A.Expr,
    beta: A.Expr,
    params: Set[str],
    types: Dict[str, A.Type],
    fold: Callable[[A.Expr], A.Expr],
    settle: Callable[[A.Expr], A.Expr] = lambda e: e,
    sized: bool = False,
) -> Iterator[A.Expr]:
    """The proposals ``F[flag := stop] + T`` of the module docstring for the loop ``s`` with
    continuation ``f`` (``fold`` simplifies an expression, ``settle`` settles the ``min``/``max``
    that ``requires`` orders: only the proposal's form; ``sized``: a ``requires`` takes the
    ``log`` of an expression over the bound's inputs, ``k >= log(1/β)/q``)."""
    if not isinstance(s, A.While):
        return
    flags = exit_flags(s.cond, s.body, types)
    if not flags:
        return
    fixed = set(params)
    tails: List[A.Expr] = [ZERO]
    if set(free_vars(beta)) <= fixed:
        tails.append(beta)
    lefts = iterations_left(s)
    for q in trial_chances(s.body, fixed):
        for left in lefts:
            tails.append(A.Call("exp", (A.Binary("*", A.Unary("-", q), left),)))
            tails.append(A.Binary("*", q, left))
    # the chance that one run of the body sets a flag to its stop value, read off the event
    # (``good := a && b``: w·w), when no chance of a single draw below is the same polynomial
    counts = _unit_counters(s.body) & written_vars(s.body)
    chain_chances = _bern_chances(s.body, fixed)
    counted: List[A.Expr] = []
    if _thresholds(f, counts):  # a uniform draw's exact chance of passing a test, settled
        counted = [fold(settle(q)) for q in count_chances(s.body, f, fixed, types)]
    known = {_norm(q, fold) for q in trial_chances(s.body, fixed) + chain_chances + counted}
    draws = _draws(s.body, fixed)
    stops: List[A.Expr] = []
    for flag, stop in flags:
        ev = stop_event(s.body, flag, stop)
        if ev is not None:
            for q in event_chances(fold(ev), draws, fixed, types, fold):
                q = fold(settle(q))  # a count's min/max settled under requires (c/n)
                if q not in stops and not isinstance(q, A.Num) and _norm(q, fold) not in known:
                    stops.append(q)
    for q in stops:
        for left in lefts:
            tails.append(A.Call("exp", (A.Binary("*", A.Unary("-", q), left),)))
            tails.append(A.Binary("*", q, left))
    for q in stops:  # the count of attempts: each one fails w.p. 1 - q
        for x in (fold(expanded(A.Binary("-", ONE, q))), q):
            if x not in chain_chances:
                chain_chances.append(x)
    for q in counted:
        if q not in chain_chances:
            chain_chances.append(q)
    for c, k in _thresholds(f, counts):
        for q in chain_chances:
            tails += [_power_chain(c, k, q), _power_chain(c, k, q, 1)]
    if sized and set(free_vars(beta)) <= fixed:
        # the claimed bound grown by one factor exp(q) per iteration done, exp(log β + q·c): a
        # bound the ``requires`` sizes (``k >= log(1/β)/q``) meets at the last step
        for q in stops + [fold(x) for x in trial_chances(s.body, fixed)]:
            for c in _guard_counters(s):
                tails.append(A.Call("exp", (A.Binary("+", A.Call("log", (beta,)), A.Binary("*", q, A.Var(c))),)))
    seen: List[A.Expr] = []
    for flag, stop in flags:
        settled = fold(subst(f, {flag: A.BoolLit(stop)}))
        for t in tails:
            core = fold(A.Binary("+", settled, t))
            if core not in seen:
                seen.append(core)
                yield core
            if len(seen) >= MAX_CORES:
                return


MAX_ATOMS = 5  # the most independent draws a stop event's chance is enumerated over (2^5 cases)


def stop_event(body: A.Stmt, flag: str, stop: bool) -> Optional[A.Expr]:
    """The event that one run of ``body`` leaves ``flag`` at its stop value, as a Boolean
    expression over the body's draws and the state at its start (the flag itself read as its
    running value ``!stop``): the body run symbolically, an ``if`` merged into a conditional
    expression, a draw a fresh atom of its own name. ``None`` for a body with a loop, a draw
    written twice, or an assignment of an array element."""
    env: Dict[str, A.Expr] = {flag: A.BoolLit(not stop)}
    drawn: Set[str] = set()

    def run(st: A.Stmt, env: Dict[str, A.Expr]) -> Optional[Dict[str, A.Expr]]:
        if isinstance(st, A.Block):
            for x in st.stmts:
                got = run(x, env)
                if got is None:
                    return None
                env = got
            return env
        if isinstance(st, A.Assign):
            if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var):
                return None
            return {**env, st.targets[0].name: subst(st.value, env)}
        if isinstance(st, A.Sample):
            if len(st.targets) != 1 or not isinstance(st.targets[0], A.Var):
                return None
            v = st.targets[0].name
            if v in drawn:
                return None
            drawn.add(v)
            out = dict(env)
            out.pop(v, None)  # the draw: the atom v itself
            return out
        if isinstance(st, A.If):
            c = subst(st.cond, env)
            a = run(st.then, dict(env))
            b = run(st.other, dict(env)) if st.other is not None else dict(env)
            if a is None or b is None:
                return None
            merged = dict(env)
            for v in set(a) | set(b):
                ea, eb = a.get(v, A.Var(v)), b.get(v, A.Var(v))
                merged[v] = ea if ea == eb else A.Cond(c, ea, eb)
            return merged
        return None  # a loop, an assume, …: no event read off

    end = run(body, env)
    if end is None:
        return None
    value = end.get(flag, A.Var(flag))
    return value if stop else A.Unary("!", value)


def _draws(body: A.Stmt, fixed: Set[str]) -> Dict[str, A.Call]:
    """The variables ``body`` draws once from ``bern(p)`` or ``unif(lo, hi)`` over ``fixed``."""
    out: Dict[str, A.Call] = {}
    twice: Set[str] = set()
    for n in A.walk(body):
        if isinstance(n, A.Sample) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            v, d = n.targets[0].name, n.dist
            if v in out:
                twice.add(v)
            ok = (d.func == "bern" and len(d.args) == 1) or (d.func == "unif" and len(d.args) == 2)
            if ok and set(free_vars(d)) <= fixed:
                out[v] = d
    return {v: d for v, d in out.items() if v not in twice}


def _atom_chance(atom: A.Expr, draws: Dict[str, A.Call], fixed: Set[str], types: Dict[str, A.Type]):
    """``(draw, chance)`` of an atom: a ``bern(p)`` draw itself (chance p), or a threshold
    test ``x op c`` of a ``unif`` draw x against c over ``fixed`` (chance cnt/N, the count of
    :func:`tamp.core.counts.closed_count`)."""
    if isinstance(atom, A.Var) and atom.name in draws and draws[atom.name].func == "bern":
        return atom.name, draws[atom.name].args[0]
    if isinstance(atom, A.Binary) and atom.op in ("<", "<=", ">", ">=", "==", "!="):
        for w, c, op in ((atom.left, atom.right, atom.op), (atom.right, atom.left, _FLIP[atom.op])):
            if isinstance(w, A.Var) and w.name in draws and draws[w.name].func == "unif":
                if not set(free_vars(c)) <= fixed:
                    return None
                lo, hi = draws[w.name].args
                u = A.Var("u$")
                cnt = closed_count(A.Sum("u$", lo, hi, True, A.Cond(A.Binary(op, u, c), ONE, ZERO)), int_of(types))
                if cnt is None:
                    return None
                return w.name, A.Binary("/", cnt, A.Binary("+", A.Binary("-", hi, lo), ONE))
    return None


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def event_chances(
    ev: A.Expr, draws: Dict[str, A.Call], fixed: Set[str], types: Dict[str, A.Type], fold: Callable[[A.Expr], A.Expr]
) -> List[A.Expr]:
    """The chance of the event ``ev`` over independent draws, in up to two forms: the sum over
    the truth table of its atoms (at most :data:`MAX_ATOMS`, each draw in one atom) of the
    products of their chances, multiplied out (:func:`expanded`: ``a + b - a·b``,
    ``3·w·w - 2·w·w·w``); and read off its structure (``!e`` → ``1 - P(e)``, ``a && b`` →
    ``P(a)·P(b)``, ``a || b`` → ``1 - (1 - P(a))·(1 - P(b))`` when a and b read different
    draws). ``[]`` when the event reads state other than ``fixed`` or a draw twice. Only
    proposals: a wrong chance fails INDUCT."""
    atoms: Dict[A.Expr, Tuple[str, A.Expr]] = {}

    def collect(e: A.Expr) -> bool:
        got = _atom_chance(e, draws, fixed, types)
        if got is not None:
            atoms.setdefault(e, got)
            return True
        if isinstance(e, A.Var):
            return e.name in fixed
        if isinstance(e, (A.Num, A.BoolLit)):
            return True
        return all(collect(k) for k in A.children(e) if isinstance(k, A.Expr))

    if not collect(ev) or not atoms or len(atoms) > MAX_ATOMS:
        return []
    if len({d for d, _q in atoms.values()}) != len(atoms):  # two tests of one draw: dependent
        return []

    def support(e: A.Expr) -> Set[str]:
        return {atoms[n][0] for n in A.walk(e) if isinstance(n, A.Expr) and n in atoms}

    def structured(e: A.Expr) -> Optional[A.Expr]:
        if e in atoms:
            return atoms[e][1]
        if isinstance(e, A.BoolLit):
            return ONE if e.value else ZERO
        if isinstance(e, A.Unary) and e.op == "!":
            p = structured(e.operand)
            return None if p is None else A.Binary("-", ONE, p)
        if isinstance(e, A.Binary) and e.op in ("&&", "||") and not support(e.left) & support(e.right):
            a, b = structured(e.left), structured(e.right)
            if a is None or b is None:
                return None
            if e.op == "&&":
                return A.Binary("*", a, b)
            return A.Binary("-", ONE, A.Binary("*", A.Binary("-", ONE, a), A.Binary("-", ONE, b)))
        return None

    s = structured(ev)
    out: List[A.Expr] = []
    keys = list(atoms)
    total: Optional[A.Expr] = None
    for values in itertools.product((True, False), repeat=len(keys)):
        val = fold(subst_exprs(ev, dict(zip(keys, values))))
        if not isinstance(val, A.BoolLit):
            return [fold(s)] if s is not None else []
        if not val.value:
            continue
        term: Optional[A.Expr] = None
        for k, v in zip(keys, values):
            q = atoms[k][1] if v else A.Binary("-", ONE, atoms[k][1])
            term = q if term is None else A.Binary("*", term, q)
        assert term is not None
        total = term if total is None else A.Binary("+", total, term)
    for form in (expanded(total if total is not None else ZERO), s):  # the normal form first
        if form is not None and fold(form) not in out:
            out.append(fold(form))
    return out


def subst_exprs(e: A.Expr, values: Dict[A.Expr, bool]) -> A.Expr:
    """``e`` with each atom of ``values`` (an expression) replaced by its truth value."""
    if e in values:
        return A.BoolLit(values[e])
    if isinstance(e, A.Unary):
        return A.Unary(e.op, subst_exprs(e.operand, values))
    if isinstance(e, A.Binary):
        return A.Binary(e.op, subst_exprs(e.left, values), subst_exprs(e.right, values))
    if isinstance(e, A.Cond):
        return A.Cond(subst_exprs(e.cond, values), subst_exprs(e.then, values), subst_exprs(e.other, values))
    if isinstance(e, A.Call):
        return A.Call(e.func, tuple(subst_exprs(a, values) for a in e.args))
    return e


Poly = Dict[Tuple[A.Expr, ...], Fraction]


def _poly(e: A.Expr) -> Poly:
    """``e`` as a polynomial: monomials (sorted tuples of opaque factors: variables, quotients,
    calls) to rational coefficients."""
    if isinstance(e, A.Num):
        return {(): Fraction(e.value)} if e.value else {}
    if isinstance(e, A.Unary) and e.op == "-":
        return {m: -c for m, c in _poly(e.operand).items()}
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        out = dict(_poly(e.left))
        for m, c in _poly(e.right).items():
            out[m] = out.get(m, Fraction(0)) + (c if e.op == "+" else -c)
        return {m: c for m, c in out.items() if c}
    if isinstance(e, A.Binary) and e.op == "*":
        a, b = _poly(e.left), _poly(e.right)
        out = {}
        for ma, ca in a.items():
            for mb, cb in b.items():
                m = tuple(sorted(ma + mb, key=repr))
                out[m] = out.get(m, Fraction(0)) + ca * cb
        return {m: c for m, c in out.items() if c}
    return {(e,): Fraction(1)}


def expanded(e: A.Expr) -> A.Expr:
    """The polynomial ``e`` multiplied out, its like monomials collected, lowest degree first
    (``w·w·w + 3·w·w·(1 - w)`` → ``3·w·w - 2·w·w·w``): the same value, in the form a claim
    usually writes."""
    poly = _poly(e)
    out: Optional[A.Expr] = None
    for m in sorted(poly, key=lambda m: (len(m), repr(m))):
        c = poly[m]
        mag = abs(c)
        term: Optional[A.Expr] = A.Num(mag, mag.denominator == 1) if mag != 1 or not m else None
        for x in m:
            term = x if term is None else A.Binary("*", term, x)
        assert term is not None
        if out is None:
            out = term if c > 0 else A.Unary("-", term)
        else:
            out = A.Binary("+" if c > 0 else "-", out, term)
    return out if out is not None else ZERO
