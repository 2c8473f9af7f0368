"""A loop as a sequence of iterations: the per-iteration program and the composition over them.

A *flag loop* is a program ``P; for c in lo..hi { B }; S`` (or a retry loop ``c := lo; while (!v &&
c < hi) { B; c := c + 1; }``, which runs the same iterations until the flag is raised) whose failure-bound postcondition is
one Boolean flag ``v`` — ``ensures !v`` (the flag marks a failure: a lost segment, a bad round)
or ``ensures v`` (it marks success: a round that went through, a retry that worked), possibly
through an epilogue ``S`` of ``if (!v) { w := true; }`` that only turns ``v`` into the claim's
flag ``w`` (``ensures !w`` is then ``ensures v``: ``S`` is deterministic and ends) — where ``P``
is deterministic (no sampling, no ``while``) and sets ``v := false`` (its only write of ``v``),
and ``B`` only raises ``v`` (``v := true``, ``v := v || e``). The *iteration program* is ``B``
on its own, as a program whose inputs are everything ``B`` can find in the state when an
iteration starts: the program's parameters (with its ``requires``), the counter ``c`` (with
``lo <= c < hi``), every variable ``B`` reads that ``P`` or an earlier iteration wrote (a fresh
input ``x$in`` copied into ``x`` when ``B`` also writes ``x``), and ``v := false`` first. Its
claim is the flag's postcondition with a per-iteration bound ``u`` that reads parameters only.

Why the composition is sound. A proof of the iteration program bounds, for *every* state an
iteration can start in with the flag down, the probability that the iteration ends with the flag
raised (``!v``) or left down (``v``), a run that does not end counting as failing. Every
iteration draws its own samples, so given the whole history before it (any state, however the
earlier iterations were biased), iteration ``i`` fails with probability at most ``u``. Then

- **union** (``ensures !v``): the flag is raised only by some iteration that starts with it
  down, so Pr[v at the end, or no end] <= sum over the N = max(hi - lo, 0) iterations of ``u``
  = N·u (no independence needed: the union bound over the iterations' conditional chances);
- **product** (``ensures v``): the flag stays down only when every iteration fails, and
  Pr[F_1 ∩ … ∩ F_N] = E[1(F_1 ∩ … ∩ F_{N-1})·Pr[F_N | history]] <= u·Pr[F_1 ∩ … ∩ F_{N-1}]
  <= u^N. Here an iteration after a success must not run forever (that would be a failure the
  product does not count), so ``B`` has no ``while`` (``for`` loops end). With ``u = exp(e)``
  (or ``1 - s <= exp(-s)``, or ``u > 0`` and ``e = log u``) the product is ``exp(N·e)``.

The prover (:mod:`tamp.prover.nesting`) proves the iteration program by any method of the
portfolio; ``tamp check-proof`` rebuilds the same iteration program with this module and
re-checks that proof and the composition's inequality (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Set, Tuple

from lang import ast as A
from lang.typecheck import check_program
from lang.walk import free_vars, written_vars

from . import FAILED

__all__ = ["FlagLoop", "flag_loop", "iteration_program", "trip_count", "raised_flags", "live_in"]

#: the suffix of the input that holds a variable's value when an iteration starts
IN = "$in"


@dataclass(frozen=True)
class FlagLoop:
    """The parts of a flag loop (see the module docstring)."""

    prefix: Tuple[A.Stmt, ...]
    loop: A.For
    flag: str
    form: str  #: "union" (``ensures !v``) or "product" (``ensures v``)
    ensures: A.Expr


def raised_flags(body: A.Stmt, types) -> List[str]:
    """The Boolean variables ``body`` writes only by raising them: ``v := true`` or ``v := v ||
    e`` (never lowered, never sampled)."""
    flags: List[str] = []
    bad: Set[str] = set()
    for n in A.walk(body):
        if isinstance(n, A.Sample):
            bad.update(A.target_name(t) for t in n.targets)
        if isinstance(n, A.For):
            bad.add(n.var)
        if not isinstance(n, A.Assign):
            continue
        if len(n.targets) != 1 or not isinstance(n.targets[0], A.Var):
            bad.update(A.target_name(t) for t in n.targets)
            continue
        v = n.targets[0].name
        val = n.value
        raises = val == A.BoolLit(True) or (
            isinstance(val, A.Binary) and val.op == "||" and A.Var(v) in (val.left, val.right)
        )
        if raises and types.get(v) == A.BOOL:
            if v not in flags:
                flags.append(v)
        else:
            bad.add(v)
    return [v for v in flags if v not in bad]


def _reads(e) -> FrozenSet[str]:
    return free_vars(e) if e is not None else frozenset()


def live_in(s: A.Stmt, out: FrozenSet[str]) -> FrozenSet[str]:
    """The variables whose value before ``s`` may be read by ``s`` or, through ``out``, after it
    (backward liveness; an element write ``a[i] := e`` does not kill ``a``). Statements it does
    not know are read as reading everything they mention."""
    if isinstance(s, A.Block):
        live = out
        for st in reversed(s.stmts):
            live = live_in(st, live)
        return live
    if isinstance(s, (A.Assign, A.Sample)):
        rhs = s.value if isinstance(s, A.Assign) else s.dist
        killed = {t.name for t in s.targets if isinstance(t, A.Var)}
        reads = set(_reads(rhs))
        for t in s.targets:
            if isinstance(t, A.Index):
                reads |= _reads(t.index) | {A.target_name(t)}
        return frozenset((set(out) - killed) | reads)
    if isinstance(s, A.If):
        other = live_in(s.other, out) if s.other is not None else out
        return _reads(s.cond) | live_in(s.then, out) | other
    if isinstance(s, A.For):
        live = out
        while True:
            nxt = out | (live_in(s.body, live) - {s.var})
            if nxt == live:
                break
            live = nxt
        return live | _reads(s.lo) | _reads(s.hi) | _inv_reads(s)
    if isinstance(s, A.While):
        live = out | _reads(s.cond)
        while True:
            nxt = out | _reads(s.cond) | live_in(s.body, live)
            if nxt == live:
                break
            live = nxt
        return live | _inv_reads(s)
    if isinstance(s, A.Skip):
        return out
    return out | free_vars(s)


def _inv_reads(s) -> FrozenSet[str]:
    out: FrozenSet[str] = frozenset()
    for inv in getattr(s, "invariants", ()):
        out |= free_vars(inv)
    return out


def _has(s: A.Node, kind) -> bool:
    return any(isinstance(n, kind) for n in A.walk(s))


def _lowers_flag(s: A.Stmt, v: str) -> bool:
    """``s`` writes ``v`` other than by the single top-level ``v := false``."""
    return v in written_vars(s) and s != A.Assign((A.Var(v),), A.BoolLit(False))


def _not(e: A.Expr) -> A.Expr:
    return e.operand if isinstance(e, A.Unary) and e.op == "!" else A.Unary("!", e)


def _epilogue(suffix: Tuple[A.Stmt, ...], post: A.Expr) -> Optional[A.Expr]:
    """The postcondition before ``suffix``: each statement of it must be ``if (c) { w := true; }``
    with ``c`` a flag or its negation, and ``post`` is ``w`` or ``!w`` (``w`` false before)."""
    for st in reversed(suffix):
        if not (isinstance(st, A.If) and st.other is None and len(st.then.stmts) == 1):
            return None
        raise_w = st.then.stmts[0]
        if not (isinstance(raise_w, A.Assign) and len(raise_w.targets) == 1 and raise_w.value == A.BoolLit(True)):
            return None
        w = raise_w.targets[0]
        c = st.cond
        flag = c.operand if isinstance(c, A.Unary) and c.op == "!" else c
        if not isinstance(w, A.Var) or not isinstance(flag, A.Var) or flag == w:
            return None
        if post == w:
            post = c
        elif post == A.Unary("!", w):
            post = _not(c)
        else:
            return None
    return post


def flag_loop(prog: A.Program, ensures: Tuple[A.Expr, ...], types) -> Optional[FlagLoop]:
    """The flag loop of ``prog`` with the failure-bound postconditions ``ensures``, or None.

    The loop is the last top-level ``for``; what follows it may only turn the flag into the
    claim's flag (``if (!v) { lost := true; }`` with ``ensures !lost``: the claim is ``v``)."""
    stmts = tuple(prog.body.stmts)
    loops = [i for i, st in enumerate(stmts) if isinstance(st, (A.For, A.While))]
    if not loops or len(ensures) != 1 or FAILED in types:
        # unreliable operations add `!failed` (and more) to the claim: not the flag alone
        return None
    k = loops[-1]
    prefix, suffix = stmts[:k], stmts[k + 1 :]
    post = _epilogue(suffix, ensures[0])
    if post is None:
        return None
    if isinstance(post, A.Var):
        flag, form = post.name, "product"
    elif isinstance(post, A.Unary) and post.op == "!" and isinstance(post.operand, A.Var):
        flag, form = post.operand.name, "union"
    else:
        return None
    top = stmts[k]
    early_exit = isinstance(top, A.While)
    loop = _counted(top, flag, prefix, prog) if isinstance(top, A.While) else top
    if not isinstance(loop, A.For):
        return None
    claim_flags = {flag} | {w for st in suffix for w in written_vars(st)}  # the epilogue's flags
    for f in claim_flags:
        if types.get(f) != A.BOOL or prog.param(f) is not None:
            return None
        inits = [s for s in prefix if f in written_vars(s)]
        if len(inits) != 1 or _lowers_flag(inits[0], f):
            return None
    if (claim_flags - {flag}) & written_vars(loop.body):
        return None
    if any(_has(s, (A.Sample, A.While, A.Assume)) for s in prefix):
        return None  # the prefix must be deterministic and end
    if flag not in raised_flags(loop.body, types):
        return None
    changed = written_vars(loop.body) | {loop.var}
    if loop.var in written_vars(loop.body) or (free_vars(loop.lo) | free_vars(loop.hi)) & changed:
        return None  # the trip count must be fixed when the loop starts
    if _has(loop.body, A.Assume):
        return None  # conditioning inside an iteration is not a failure bound
    if form == "product" and not early_exit and _has(loop.body, A.While):
        return None  # an iteration after a success must end surely (see the module docstring)
    return FlagLoop(prefix, loop, flag, form, post)


def _counted(loop: A.While, flag: str, prefix, prog: A.Program) -> Optional[A.For]:
    """``while (!v && c < hi) { B; c := c + 1; }`` after ``c := lo`` (``lo`` over parameters) as
    ``for c in lo..hi { B }``: it runs the same iterations while the flag is down, and stops once
    it is raised, when the flag's final value is settled (the flag is never lowered)."""
    conj = loop.cond
    if not (isinstance(conj, A.Binary) and conj.op == "&&"):
        return None
    down = A.Unary("!", A.Var(flag))
    if conj.left == down:
        test = conj.right
    elif conj.right == down:
        test = conj.left
    else:
        return None
    if not (isinstance(test, A.Binary) and test.op in ("<", "<=") and isinstance(test.left, A.Var)):
        return None
    c = test.left.name
    body = tuple(loop.body.stmts)
    step = A.Assign((A.Var(c),), A.Binary("+", A.Var(c), A.num(1)))
    if not body or body[-1] != step or c in written_vars(A.Block(body[:-1])):
        return None
    inits = [s for s in prefix if c in written_vars(s)]
    if len(inits) != 1 or not (isinstance(inits[0], A.Assign) and inits[0].targets == (A.Var(c),)):
        return None
    lo = inits[0].value
    if not set(free_vars(lo)) <= {p.name for p in prog.params}:
        return None
    typed = check_program(prog)
    if any(typed.type_of(e) != A.INT for e in (A.Var(c), lo, test.right)):
        return None  # an integer counter and range: max(hi - lo, 0) iterations, not ceil(hi - lo)
    return A.For(c, lo, test.right, test.op == "<=", A.Block(body[:-1], pos=loop.body.pos), pos=loop.pos)


def trip_count(loop: A.For) -> A.Expr:
    """``hi - lo`` (``+ 1`` for an inclusive range): the number of iterations when positive."""
    n: A.Expr = loop.hi if loop.lo == A.num(0) else A.Binary("-", loop.hi, loop.lo)
    if loop.inclusive:
        n = A.Binary("+", n, A.num(1))
    return n


def iteration_program(prog: A.Program, fl: FlagLoop, types, per_iteration: A.Expr) -> Optional[A.Program]:
    """The iteration program of the flag loop ``fl`` with the bound ``per_iteration`` (which must
    read parameters only), or None when a variable's type is unknown."""
    params = {p.name for p in prog.params}
    if not set(free_vars(per_iteration)) <= params:
        return None
    loop, v = fl.loop, fl.flag
    body = loop.body
    written = written_vars(body)
    needed = (live_in(body, frozenset()) | free_vars(loop.lo) | free_vars(loop.hi)) - params - {loop.var, v}
    new_params: List[A.Param] = [A.Param(loop.var, A.INT, pos=loop.pos)]
    copies: List[A.Stmt] = [A.Assign((A.Var(v),), A.BoolLit(False), pos=loop.pos)]
    taken = params | set(types) | {loop.var}
    for x in sorted(needed):
        t = types.get(x)
        if t is None:
            return None
        if x in written:
            name = x + IN
            if name in taken:
                return None
            new_params.append(A.Param(name, t, pos=loop.pos))
            copies.append(A.Assign((A.Var(x),), A.Var(name), pos=loop.pos))
        else:
            new_params.append(A.Param(x, t, pos=loop.pos))
    c = A.Var(loop.var)
    in_range = A.Binary("&&", A.Binary("<=", loop.lo, c), A.Binary("<=" if loop.inclusive else "<", c, loop.hi))
    return dataclasses.replace(
        prog,
        name=prog.name + "$iter",
        params=tuple(prog.params) + tuple(new_params),
        body=A.Block(tuple(copies) + tuple(body.stmts), pos=body.pos),
        requires=tuple(prog.requires) + (in_range,),
        ensures=(fl.ensures,),
        fails=per_iteration,
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )


def _implies(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary("||", A.Unary("!", a), b)


def exponent(per_iteration: A.Expr) -> Tuple[A.Expr, Optional[A.Expr]]:
    """``(e, side)`` with ``per_iteration <= exp(e)`` whenever ``side`` holds (None: always):
    ``exp(e)`` itself, ``1 - s <= exp(-s)``, else ``e = log(u)`` under ``u > 0``."""
    u = per_iteration
    if isinstance(u, A.Call) and u.func == "exp" and len(u.args) == 1:
        return u.args[0], None
    if isinstance(u, A.Binary) and u.op == "-" and u.left == A.num(1):
        return A.Unary("-", u.right), None
    return A.Call("log", (u,)), A.Binary(">", u, A.num(0))


def composition(fl: FlagLoop, bound: A.Expr, per_iteration: A.Expr) -> Optional[List[Tuple[str, A.Expr]]]:
    """The side conditions, as formulas over the parameters to be proved valid under
    ``requires``, under which ``per_iteration`` for each of the loop's iterations gives the
    program's ``bound`` (see the module docstring); None when ``bound`` has not the form the
    composition needs (``exp(E)`` for a product)."""
    n = trip_count(fl.loop)
    runs, none = A.Binary(">=", n, A.num(1)), A.Binary("<=", n, A.num(0))
    if fl.form == "union":
        return [
            ("UNION", _implies(runs, A.Binary("<=", A.Binary("*", n, per_iteration), bound))),
            ("EMPTY", _implies(none, A.Binary("<=", A.num(0), bound))),
        ]
    if not (isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1):
        return None
    big = bound.args[0]
    e, side = exponent(per_iteration)
    out = [] if side is None else [("POSITIVE", side)]
    return out + [
        ("PRODUCT", _implies(runs, A.Binary("<=", A.Binary("*", n, e), big))),
        ("EMPTY", _implies(none, A.Binary("<=", A.num(0), big))),
    ]
