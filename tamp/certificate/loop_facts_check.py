"""Re-checking the loop facts of a per-iteration composition certificate (``"facts"``).

A nesting certificate may list *loop facts* ``F_1 … F_m`` (formulas over the parameters, the loop
counter ``c`` and the variables the iteration reads; never the flag) that its iteration program
assumes as ``requires`` (:func:`tamp.cfa.nesting.iteration_program`). They are accepted only when
their conjunction ``F`` is inductive, decided here by z3 over this module's own encoding — weakest
preconditions over the syntax tree, a draw ``x ~ unif(a, b)`` read as "for every fresh ``x'``
with ``a <= x' <= b``", any other draw as "for every ``x'``" — sharing nothing with the search
(:mod:`tamp.prover.nesting.loop_facts`, which executes paths forward):

- INIT   ``requires ⇒ wp(prefix, lo < hi ⇒ F[c := lo])`` (``<=`` for an inclusive range);
- STEP   ``requires ∧ lo <= c ∧ c (<|<=) hi ∧ F ∧ K ⇒ wp(body, (c + 1 (<|<=) hi ∧ K) ⇒
  F[c := c + 1])``, where ``K`` is ``v == b0`` (the flag unmoved) in the product form with an
  early exit and ``true`` otherwise (every path: the union form, and a product whose iterations
  still run after the flag moved). Why the flag-kept paths suffice for an early-exit product, and
  not elsewhere, is argued in :mod:`tamp.prover.nesting.loop_facts`;
- with ``"always": [AST, …]`` (a product without an early exit only): ``always`` passes INIT and
  STEP with ``K = true``, ``facts`` passes them with ``K = (v == b0)``, and DEFINED: ``requires ∧
  lo <= c ∧ c (<|<=) hi ∧ always ⇒ wp_d(body, true)``, where ``wp_d`` also asks ``a <= b`` of
  every ``unif(a, b)`` and ``0 <= q <= 1`` of every ``bern(q)`` where it runs, and rejects any
  operator but ``+ - * ! && || == != < <= > >=`` and any other draw: every iteration, before or
  after a success, is well-defined.

Statements other than assignments and draws to one variable, ``if`` and ``skip`` in the prefix or
the body reject the facts; a fact that reads the flag rejects them.
"""

from __future__ import annotations

from typing import Dict, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute
from tamp.cfa.nesting import FlagLoop
from tamp.core.encode import Encoder

from .format import Rejected
from .solver import VALID, decide

__all__ = ["check_facts"]


def _imp(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary("||", A.Unary("!", a), b)


def _and(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary("&&", a, b)


#: the operators defined on every value (DEFINED)
_TOTAL = frozenset({"+", "-", "*", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "!"})


def _total(e: A.Expr) -> None:
    for n in A.walk(e):
        if isinstance(n, (A.Unary, A.Binary)) and n.op not in _TOTAL:
            raise Rejected(f"DEFINED: the operator '{n.op}' may be undefined")
        if not isinstance(n, (A.Var, A.Num, A.BoolLit, A.Cond, A.Unary, A.Binary)):
            raise Rejected(f"DEFINED: a {type(n).__name__} expression may be undefined")


def _wp(stmts, post: A.Expr, types: Dict[str, A.Type], counter: list, defined: bool = False) -> A.Expr:
    for st in reversed(tuple(stmts)):
        post = _wp1(st, post, types, counter, defined)
    return post


def _wp1(st: A.Stmt, post: A.Expr, types: Dict[str, A.Type], counter: list, defined: bool) -> A.Expr:
    """The weakest precondition of ``post``; with ``defined`` also that ``st`` is well-defined
    (total operators only, ``unif(a, b)`` with ``a <= b``, ``bern(q)`` with ``0 <= q <= 1``)."""
    if isinstance(st, A.Skip):
        return post
    if isinstance(st, A.Block):
        return _wp(st.stmts, post, types, counter, defined)
    if isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
        if defined:
            _total(st.value)
        return substitute(post, {st.targets[0].name: st.value})
    if isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
        x = st.targets[0].name
        counter[0] += 1
        fresh = f"{x}$draw{counter[0]}"
        types[fresh] = types[x]
        got = substitute(post, {x: A.Var(fresh)})
        d = st.dist
        if defined:
            for a in d.args:
                _total(a)
        if d.func == "unif" and len(d.args) == 2:
            lo, hi = d.args
            got = _imp(_and(A.Binary("<=", lo, A.Var(fresh)), A.Binary("<=", A.Var(fresh), hi)), got)
            return _and(A.Binary("<=", lo, hi), got) if defined else got
        if defined:
            if not (d.func == "bern" and len(d.args) == 1):
                raise Rejected(f"DEFINED: a draw from {d.func} is not checked well-defined")
            q = d.args[0]
            return _and(_and(A.Binary("<=", A.num(0), q), A.Binary("<=", q, A.num(1))), got)
        return got
    if isinstance(st, A.If):
        if defined:
            _total(st.cond)
        yes = _wp(st.then.stmts, post, types, counter, defined)
        no = _wp(st.other.stmts, post, types, counter, defined) if st.other is not None else post
        return _and(_imp(st.cond, yes), _imp(A.Unary("!", st.cond), no))
    raise Rejected(f"FACTS: a {type(st).__name__} statement is outside what the loop facts are checked over")


def check_facts(prog: A.Program, fl: FlagLoop, types, facts: Tuple[A.Expr, ...], always, timeout_ms: int) -> int:
    """Rules INIT, STEP (and, with ``always``, DEFINED) for ``facts`` (the number of obligations
    decided); raises :class:`Rejected` when a fact reads the flag or is not inductive."""
    types = dict(types)
    types.setdefault(fl.flag, A.BOOL)  # a counter's flag (k$pos) is not declared in the source
    for f in tuple(facts) + tuple(always or ()):
        unknown = free_vars(f) - set(types)
        if unknown:
            raise Rejected(f"FACTS: a fact reads the unknown name(s) {sorted(unknown)}")
    if always is None:
        return _inductive(prog, fl, types, facts, fl.form == "product" and fl.early_exit, timeout_ms)
    if fl.form != "product" or fl.early_exit:
        raise Rejected('FACTS: "always" facts belong to a product without an early exit')
    n = _inductive(prog, fl, types, tuple(always), False, timeout_ms)
    n += _inductive(prog, fl, types, facts, True, timeout_ms)
    loop = fl.loop
    c = A.Var(loop.var)
    head: A.Expr = _and(A.Binary("<=", loop.lo, c), A.Binary("<=" if loop.inclusive else "<", c, loop.hi))
    for f in always:
        head = _and(head, f)
    tys: Dict[str, A.Type] = dict(types)
    goal = _imp(head, _wp(loop.body.stmts, A.BoolLit(True), tys, [0], defined=True))
    enc = Encoder(tys)
    env = enc.initial_env()
    if decide(enc.expr(goal, env), enc, [enc.expr(r, env) for r in prog.requires], timeout_ms)[0] != VALID:
        raise Rejected("FACTS DEFINED: an iteration is not well-defined from every head the always-facts allow")
    return n + 1


def _inductive(prog: A.Program, fl: FlagLoop, types, facts: Tuple[A.Expr, ...], only_kept: bool, timeout_ms) -> int:
    if not facts:
        return 0
    loop = fl.loop
    c = A.Var(loop.var)
    for f in facts:
        if fl.flag in free_vars(f):
            raise Rejected(f"FACTS: the fact `{f}` reads the flag '{fl.flag}'")
    whole = facts[0]
    for f in facts[1:]:
        whole = _and(whole, f)
    cmp = "<=" if loop.inclusive else "<"
    tys: Dict[str, A.Type] = dict(types)
    counter = [0]
    init = _wp(fl.prefix, _imp(A.Binary(cmp, loop.lo, loop.hi), substitute(whole, {loop.var: loop.lo})), tys, counter)
    kept = A.Binary("==", A.Var(fl.flag), A.BoolLit(fl.start))
    nxt = A.Binary("+", c, A.num(1))
    after: A.Expr = A.Binary(cmp, nxt, loop.hi)
    if only_kept:
        after = _and(after, kept)
    step_post = _imp(after, substitute(whole, {loop.var: nxt}))
    step = _wp(loop.body.stmts, step_post, tys, counter)
    head = _and(_and(A.Binary("<=", loop.lo, c), A.Binary(cmp, c, loop.hi)), whole)
    if only_kept:
        head = _and(head, kept)
    enc = Encoder(tys)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in prog.requires]
    for rule, goal in (("INIT", init), ("STEP", _imp(head, step))):
        if decide(enc.expr(goal, env), enc, hyps, timeout_ms)[0] != VALID:
            raise Rejected(f"FACTS {rule}: the loop facts are not {'initiated' if rule == 'INIT' else 'inductive'}")
    return 2
