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
- **union form**: every path is relevant (the facts hold at every head, whatever the flag). The
  union bound sums ``Pr[iteration i starts unmoved and moves]``, which needs the facts on every
  head where the flag is unmoved; checked on all heads, they also cover the iterations the
  iteration program's proof must make well-defined.
- **product without an early exit**: here the iterations after a success still run. Their chance
  does not matter (the flag stays moved), but they must be well-defined and end — a run that
  stops on an ill-defined operation (``unif(a, b)`` with ``a > b``) would be a failure the product
  does not count — and the iteration program's proof shows that only from states satisfying its
  ``requires``. So the flag-kept facts are used only together with a second set, ``always``,
  inductive along *every* path, under which every iteration is checked well-defined directly (the
  body's expressions use only total operators, every draw is ``unif(a, b)`` with ``a <= b`` or
  ``bern(q)`` with ``0 <= q <= 1`` where it runs; no ``while`` in the body, by
  :func:`tamp.cfa.nesting.flag_loop`, so it ends). Then every iteration that runs — before or
  after a success — is well-defined and ends, and the facts hold at every head reached with the
  flag unmoved, the only heads whose iteration's chance the product reads. Otherwise only the
  facts inductive along every path are used.

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
    """Consecution along the paths that keep the flag unmoved only, with no further condition
    (see the module docstring; a product without an early exit needs its ``always`` facts too)."""
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
    """``e + d·(c - lo)``, written plainly (``N - dealt`` for ``d = -1``, ``lo = 0``)."""
    if d == 0:
        return e
    run = c if lo == A.num(0) else A.Binary("-", c, lo)
    step = run if abs(d) == 1 else A.Binary("*", A.num(abs(d)), run)
    return A.Binary("+" if d > 0 else "-", e, step)


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
            dist = st.dist
            if isinstance(dist, A.Call) and dist.func == "unif" and len(dist.args) == 2:
                out += [A.Binary("<=", dist.args[0], A.Var(x)), A.Binary("<=", A.Var(x), dist.args[1])]
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
            if x != y and dx in (dy, -dy):  # x - y or x + y is kept
                op = "-" if dx == dy else "+"
                out.append(A.Binary("==", A.Binary(op, A.Var(x), A.Var(y)), A.Binary(op, ex, ey)))
            elif x != y:
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


#: operators that are defined on every value (a body built of these, with ``unif``/``bern`` draws
#: whose arguments are checked, cannot stop on an ill-defined operation)
TOTAL_OPS = {"+", "-", "*", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "!"}


def _total(e: A.Expr) -> bool:
    for n in A.walk(e):
        if isinstance(n, (A.Var, A.Num, A.BoolLit, A.Cond)):
            continue
        if isinstance(n, (A.Unary, A.Binary)) and n.op in TOTAL_OPS:
            continue
        return False
    return True


def _houdini(enc, prog, fl, cands, keep: bool, timeout_ms: int) -> List[A.Expr]:
    loop, c = fl.loop, fl.loop.var
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
    head = _head(enc, fl, env0)
    flag0 = enc.expr(A.BoolLit(fl.start), head)
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
    return kept


def _head(enc, fl: FlagLoop, env0):
    return {**env0, **{x: enc.const(x, "h") for x in written_vars(fl.loop.body) | {fl.loop.var, fl.flag}}}


def _defined(enc, prog, fl: FlagLoop, always: List[A.Expr], timeout_ms: int) -> bool:
    """Every iteration from a head in range satisfying ``always`` is well-defined: the body's
    expressions use only total operators and each draw is ``unif(a, b)`` with ``a <= b`` or
    ``bern(q)`` with ``0 <= q <= 1`` where it runs (z3, path by path)."""
    loop = fl.loop
    stats = Stats()
    env0 = enc.initial_env("0")
    head = _head(enc, fl, env0)
    hi = enc.expr(loop.hi, head)
    hyps = [enc.expr(r, env0) for r in prog.requires] + [enc.expr(f, head) for f in always]
    hyps += [enc.expr(loop.lo, head) <= head[loop.var], head[loop.var] <= hi if loop.inclusive else head[loop.var] < hi]
    goals: List[Tuple[List[z3.BoolRef], z3.BoolRef]] = []

    def walk(stmts, paths):
        for st in stmts:
            if isinstance(st, A.Sample):
                d = st.dist
                if not all(_total(a) for a in d.args):
                    raise _Unsupported("a partial operation")
                if d.func == "unif" and len(d.args) == 2:
                    for conds, env in paths:
                        goals.append((conds, enc.expr(d.args[0], env) <= enc.expr(d.args[1], env)))
                elif d.func == "bern" and len(d.args) == 1:
                    for conds, env in paths:
                        q = enc.expr(d.args[0], env)
                        goals.append((conds, z3.And(q >= 0, q <= 1)))
                else:
                    raise _Unsupported("a draw whose support is not checked")
            elif isinstance(st, A.Assign):
                if not _total(st.value):
                    raise _Unsupported("a partial operation")
            elif isinstance(st, A.Block):
                walk(st.stmts, paths)
            elif isinstance(st, A.If):
                if not _total(st.cond):
                    raise _Unsupported("a partial operation")
                walk(st.then.stmts, [(cs + [enc.expr(st.cond, e)], e) for cs, e in paths])
                if st.other is not None:
                    walk(st.other.stmts, [(cs + [z3.Not(enc.expr(st.cond, e))], e) for cs, e in paths])
            paths = _run(enc, (st,), paths)

    try:
        walk(loop.body.stmts, [([], dict(head))])
    except _Unsupported:
        return False
    return all(is_valid(g, enc, stats, timeout_ms, hyps + conds) == VALID for conds, g in goals)


def loop_facts(
    prog: A.Program, fl: FlagLoop, types, timeout_ms: int = 3000
) -> Tuple[Tuple[A.Expr, ...], Optional[Tuple[A.Expr, ...]]]:
    """``(facts, always)``: the inductive subset of :func:`candidates` (Houdini) along the
    relevant paths, and ``always`` None — or, for a product without an early exit, the facts
    inductive along the flag-kept paths and ``always`` the subset inductive along every path,
    under which every iteration was checked well-defined (see the module docstring); ``((),
    None)`` when there are none."""
    cands = candidates(prog, fl, types)
    if not cands:
        return (), None
    types = dict(types)
    types.setdefault(fl.flag, A.BOOL)  # a counter's flag (k$pos) is not declared in the source
    try:
        enc = Encoder(types)
        if fl.form == "union" or relevant_kept(fl):
            return tuple(_houdini(enc, prog, fl, cands, relevant_kept(fl), timeout_ms)), None
        always = _houdini(enc, prog, fl, cands, False, timeout_ms)
        kept = _houdini(enc, prog, fl, cands, True, timeout_ms)
        if set(kept) <= set(always) or not _defined(enc, prog, fl, always, timeout_ms):
            return tuple(always), None
        return tuple(kept), tuple(always)
    except (_Unsupported, z3.Z3Exception):
        return (), None
    except Exception:  # noqa: BLE001 - a candidate the encoder cannot read: no facts
        return (), None
