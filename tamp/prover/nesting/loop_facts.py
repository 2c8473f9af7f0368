"""Loop facts for iteration programs: what the loop keeps, found by a Houdini search and checked by z3.

The iteration program of a flag loop (:func:`tamp.cfa.nesting.iteration_program`) takes the state
an iteration starts from as free inputs, so a chance that depends on a fact the loop keeps — a
number drawn before the loop and never written in it lies in its draw's support; while no ace has
been dealt, ``aces == A`` and ``left == N - dealt`` — is lost. A *loop fact* is a formula ``F``
over the parameters, the counter ``c`` and the variables the iteration reads, that holds at the
loop head of every iteration that matters; the facts become ``requires`` of the iteration program,
so every method proving it can use them.

Candidates (general, read off the program, never per file): for a variable the iteration reads,
the support ``a <= x``, ``x <= b`` of its last write in the prefix when that is ``x ~ unif(a, b)``
and the body does not write ``x``; when its last write in the prefix is ``x := e`` with ``e`` over
parameters, ``x == e + d·(c - lo)`` for ``d = 0`` and each literal step ``x := x ± d`` of the body
(a count-down and the counter), the bounds ``x <= e`` and ``x >= e``, and ``dy·x - dx·y == dy·e_x -
dx·e_y`` for two variables with steps ``dx``, ``dy``. The search (Houdini) keeps the largest subset
that is *initiated* — valid on every path of the prefix (its draws ranging over their supports),
under ``requires``, with ``c = lo`` and the loop running (``lo < hi``) — and *consecutive* — from a
head state in range (``lo <= c``, ``c + 1`` still in range) satisfying all kept facts, along every
*relevant* path of the body (each draw ranging over its support), the facts hold again with ``c +
1``. ``unif(a, b)`` with ``a > b`` has no value: such a run is ill-defined and stops, it never
reaches the next head.

Which paths are relevant, and why that suffices:

- **product form with an early exit** (the loop stops once the flag ``v`` moved): the relevant
  paths are those that start with ``v == b0`` and end with it (the flag kept). Every iteration that
  runs starts with the flag unmoved, and every earlier iteration kept it, so by induction over the
  iterations the facts hold at the head of every iteration that runs. The product argument
  (:mod:`tamp.cfa.nesting`) bounds ``Pr[F_i | history]`` on the histories where the earlier
  iterations all failed — exactly the histories where the loop is still running — so the iteration
  program only needs to be proved from states satisfying the facts; and since no iteration runs
  after the flag moved, none is ever run from a state outside the facts (its well-definedness, its
  ending, are all proved where it runs).
- **union form, and a product without an early exit**: every path is relevant (the facts hold at
  every head, whatever the flag). Care is needed here: in a product without an early exit the
  iterations after a success still run, and although their chance does not matter, they must be
  well-defined and end (a run that stops by an ill-defined ``unif`` counts as a failure the product
  does not count). The iteration program proves that only from states satisfying its ``requires``,
  so facts that hold only while the flag is unmoved are not used there; likewise the union bound
  sums ``Pr[iteration i starts unmoved and moves]``, which needs the facts on every head with the
  flag unmoved, here ensured on all heads.

Facts never read the flag. The facts are written into the certificate and ``check-proof``
re-checks initiation and consecution by its own encoding (:mod:`tamp.certificate.loop_facts_check`,
a weakest precondition, where this search executes paths forward).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import z3

from lang import ast as A
from lang.walk import free_vars, written_vars
from tamp.cfa.nesting import FlagLoop, live_in
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid

__all__ = ["candidates", "loop_facts", "relevant_kept"]

#: the most paths one execution follows before the search gives up (no facts)
MAX_PATHS = 64


def relevant_kept(fl: FlagLoop) -> bool:
    """Consecution along the paths that keep the flag unmoved only (see the module docstring)."""
    return fl.form == "product" and fl.early_exit


def _needed(prog: A.Program, fl: FlagLoop) -> List[str]:
    params = {p.name for p in prog.params}
    loop = fl.loop
    got = (live_in(loop.body, frozenset()) | free_vars(loop.lo) | free_vars(loop.hi)) - params - {loop.var, fl.flag}
    return sorted(got)


def _last_write(prefix, x: str) -> Optional[A.Stmt]:
    for st in reversed(prefix):
        if x in written_vars(st):
            return st if isinstance(st, (A.Assign, A.Sample)) and st.targets == (A.Var(x),) else None
    return None


def _steps(body: A.Block, x: str) -> List[int]:
    out: List[int] = []
    for n in A.walk(body):
        if isinstance(n, A.Assign) and n.targets == (A.Var(x),) and isinstance(n.value, A.Binary):
            b = n.value
            if b.op in ("+", "-") and b.left == A.Var(x) and isinstance(b.right, A.Num) and b.right.is_int:
                d = int(b.right.value) * (1 if b.op == "+" else -1)
                if d not in out:
                    out.append(d)
    return out


def _lin(e: A.Expr, d: int, c: A.Expr, lo: A.Expr) -> A.Expr:
    if d == 0:
        return e
    return A.Binary("+", e, A.Binary("*", A.num(d), A.Binary("-", c, lo)))


def candidates(prog: A.Program, fl: FlagLoop, types) -> List[A.Expr]:
    """The candidate facts of the module docstring, in a fixed order."""
    params = {p.name for p in prog.params}
    loop, c = fl.loop, A.Var(fl.loop.var)
    written = written_vars(loop.body)
    out: List[A.Expr] = []
    moving: List[Tuple[str, A.Expr, int]] = []
    for x in _needed(prog, fl):
        if types.get(x) not in (A.INT, A.REAL):
            continue
        st = _last_write(fl.prefix, x)
        if isinstance(st, A.Sample) and x not in written:
            d = st.dist
            if isinstance(d, A.Call) and d.func == "unif" and len(d.args) == 2:
                out += [A.Binary("<=", d.args[0], A.Var(x)), A.Binary("<=", A.Var(x), d.args[1])]
        elif isinstance(st, A.Assign) and free_vars(st.value) <= params:
            e = st.value
            steps = _steps(loop.body, x)
            for d in [0] + steps:
                out.append(A.Binary("==", A.Var(x), _lin(e, d, c, loop.lo)))
            out += [A.Binary("<=", A.Var(x), e), A.Binary(">=", A.Var(x), e)]
            for d in steps:
                moving.append((x, e, d))
    for i, (x, ex, dx) in enumerate(moving):
        for y, ey, dy in moving[i + 1 :]:
            if x != y:
                lhs = A.Binary("-", A.Binary("*", A.num(dy), A.Var(x)), A.Binary("*", A.num(dx), A.Var(y)))
                rhs = A.Binary("-", A.Binary("*", A.num(dy), ex), A.Binary("*", A.num(dx), ey))
                out.append(A.Binary("==", lhs, rhs))
    unique: List[A.Expr] = []
    for f in out:
        if f not in unique and fl.flag not in free_vars(f):
            unique.append(f)
    return unique


class _Unsupported(Exception):
    pass


Path = Tuple[List[z3.BoolRef], Dict[str, z3.ExprRef]]


def _run(enc: Encoder, stmts, paths: List[Path]) -> List[Path]:
    """Every path of ``stmts`` from each of ``paths`` (conditions, environment), forward."""
    for st in stmts:
        nxt: List[Path] = []
        for conds, env in paths:
            if isinstance(st, A.Skip):
                nxt.append((conds, env))
            elif isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
                nxt.append((conds, {**env, st.targets[0].name: enc.expr(st.value, env)}))
            elif isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
                x = st.targets[0].name
                t = enc.fresh(x)
                d = st.dist
                more = []
                if d.func == "unif" and len(d.args) == 2:
                    more = [enc.expr(d.args[0], env) <= t, t <= enc.expr(d.args[1], env)]
                nxt.append((conds + more, {**env, x: t}))
            elif isinstance(st, A.If):
                g = enc.expr(st.cond, env)
                nxt += _run(enc, st.then.stmts, [(conds + [g], env)])
                nxt += _run(enc, st.other.stmts if st.other is not None else (), [(conds + [z3.Not(g)], env)])
            elif isinstance(st, A.Block):
                nxt += _run(enc, st.stmts, [(conds, env)])
            else:
                raise _Unsupported(type(st).__name__)
        if len(nxt) > MAX_PATHS:
            raise _Unsupported("too many paths")
        paths = nxt
    return paths


def loop_facts(prog: A.Program, fl: FlagLoop, types, timeout_ms: int = 3000) -> Tuple[A.Expr, ...]:
    """The inductive subset of :func:`candidates` (Houdini), or ``()``."""
    cands = candidates(prog, fl, types)
    if not cands:
        return ()
    loop = fl.loop
    c = loop.var
    try:
        enc = Encoder(types)
        stats = Stats()
        env0 = enc.initial_env("0")
        req = [enc.expr(r, env0) for r in prog.requires]

        def valid(goal, hyps) -> bool:
            return is_valid(goal, enc, stats, timeout_ms, req + hyps) == VALID

        def below(env, k) -> z3.BoolRef:
            hi = enc.expr(loop.hi, env)
            return k <= hi if loop.inclusive else k < hi

        # initiation: after the prefix, c = lo and the loop runs
        start = _run(enc, fl.prefix, [([], dict(env0))])
        kept: List[A.Expr] = []
        for f in cands:
            ok = True
            for conds, env in start:
                env = {**env, c: enc.expr(loop.lo, env)}
                if not valid(enc.expr(f, env), conds + [below(env, env[c])]):
                    ok = False
                    break
            if ok:
                kept.append(f)
        # consecution, to a fixpoint
        head = {**env0, **{x: enc.const(x, "h") for x in written_vars(loop.body) | {c, fl.flag}}}
        flag0 = enc.expr(A.BoolLit(fl.start), head)
        keep = relevant_kept(fl)
        pre = [enc.expr(loop.lo, head) <= head[c], below(head, head[c])]
        if keep:
            pre.append(head[fl.flag] == flag0)
        ends = _run(enc, loop.body.stmts, [([], dict(head))])
        while kept:
            hyps = pre + [enc.expr(f, head) for f in kept]
            drop = []
            for f in kept:
                for conds, env in ends:
                    env = {**env, c: head[c] + 1}
                    more = [below(head, head[c] + 1)] + ([env[fl.flag] == flag0] if keep else [])
                    if not valid(enc.expr(f, env), hyps + conds + more):
                        drop.append(f)
                        break
            if not drop:
                break
            kept = [f for f in kept if f not in drop]
        return tuple(kept)
    except (_Unsupported, z3.Z3Exception, Exception):  # noqa: BLE001 - any failure: no facts
        return ()
