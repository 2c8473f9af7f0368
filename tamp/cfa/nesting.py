"""A loop as a sequence of iterations: the per-iteration program and the composition over them.

A *flag loop* is a program ``P; L; S`` whose failure-bound postcondition depends, through the
deterministic epilogue ``S``, only on whether the loop ``L`` *moved* a flag ``v``:

- ``P`` (the prefix) may sample but has no ``while`` and no ``assume`` (it ends), and sets
  ``v := b0`` (a Boolean literal) as its only write of ``v``;
- ``L`` is ``for c in lo..hi { B }`` whose body writes ``v`` only by *moving* it (``v := !b0``,
  ``v := v || e`` when ``b0`` is false, ``v := v && e`` when it is true), or an *early-exit*
  loop that stops once ``v`` has moved — ``c := lo; while (v == b0 && c < hi) { B; c := c + 1; }``
  or ``for c in lo..hi { if (v == b0) { B } }`` (the test written ``!v`` or ``v``) — whose body
  may write ``v`` in any way (every iteration that runs starts with ``v == b0``); a counted
  ``while (c < hi)`` without the flag test is a ``for``;
- ``S`` is assignments and ``if``s (no sampling, no loop): the claim ``φ`` is carried back
  through it (its weakest precondition, the prefix's literal values put in for the variables the
  loop does not write) to a formula of ``v`` alone, which must be ``v == !b0`` (the claim is that
  some iteration moved ``v``: the *product* form, a success that every iteration may miss) or
  ``v == b0`` (no iteration moved it: the *union* form), decided by z3 over the two values.

A *counter* ``k`` (an ``int`` the prefix sets ``k := 0``, the body only raises ``k := k + m``
with a literal ``m >= 1`` and reads nowhere else, the epilogue does not read) is a flag too:
``k > 0`` exactly when some raise ran, so the loop is rewritten with a Boolean ``k$pos``
(``k$pos := false`` in the prefix, ``k$pos := true`` for each raise) and the claim ``φ(k)`` must be
``k == 0`` or ``k >= 1`` for every ``k >= 0`` (z3): ``count == 0``, ``count < 1``, ``!(count >
0)`` are the union of the iterations' raising events.

The *iteration program* is ``B`` on its own, as a program whose inputs are everything ``B`` can
find in the state when an iteration starts: the program's parameters (with its ``requires``),
the counter ``c`` (with ``lo <= c < hi``), every variable ``B`` reads that ``P`` or an earlier
iteration wrote (a fresh input ``x$in`` copied into ``x`` when ``B`` also writes ``x``), and
``v := b0`` first. Its claim is the literal of the form (``v == !b0`` for a product, ``v == b0``
for a union) with a per-iteration bound ``u(c)`` that reads parameters and the counter ``c``.

Why the composition is sound. A proof of the iteration program bounds, for *every* state an
iteration can start in with the flag at ``b0`` and every ``c`` in the range, the probability
``p_c`` that the iteration moves the flag (union) or leaves it (product), a run that does not end
counting as failing. Every iteration draws its own samples, so given the whole history before
it (any state, however the prefix's draws or the earlier iterations biased it), iteration ``c``
fails with probability at most ``u(c)``: this is the independence the product needs, and it is
what the iteration program's inputs give (its proof holds for all of them). Then

- **union** (``v == b0`` claimed): the flag ends moved only if some iteration that starts
  with it at ``b0`` moves it, so Pr[moved, or no end] <= sum over the iterations of ``u(c)``
  (no independence needed: the union bound over the iterations' conditional chances). The side
  condition is ``N·u <= β`` (``u`` without ``c``) or ``sum(c in lo..hi: u) <= β``;
- **product** (``v == !b0`` claimed): the flag stays at ``b0`` only when every iteration fails,
  and Pr[F_1 ∩ … ∩ F_N] = E[1(F_1 ∩ … ∩ F_{N-1})·Pr[F_N | history]] <= u(N)·Pr[F_1 ∩ … ∩
  F_{N-1}] <= Π u(c). An iteration after a success must not run forever (that would be a failure
  the product does not count), so in a loop that does not exit early every ``while`` in ``B`` is
  one that ends surely (:func:`tamp.cfa.ending.ends_surely`: a count-down or count-up by a
  literal step towards a bound ``B`` does not write).
  With ``u = exp(e)`` (or ``1 - s <= exp(-s)``, or ``u > 0`` and ``e = log u``) the product is
  ``exp(Σ e)``, and the side condition is ``N·e <= E`` or ``sum(c in lo..hi: e) <= E`` for
  β = exp(E) (``pow(x, N)`` is ``exp(N·log x)``).

A product whose bound is not written ``exp(E)`` — a retry loop of a literal number of tries,
``while (!got && tries < 3)`` with the claim ``f * f * f`` — is written out when the trip count
is a literal ``N <= MAX_EXPANDED``: the side condition is ``u(lo)·…·u(hi-1) <= β`` with every
factor ``>= 0`` (:func:`_expanded_product`), the same product rule without logarithms.

When the loop runs no iteration (N <= 0) the union claim holds surely (β >= 0 is asked) and the
product claim fails surely (E >= 0, i.e. β >= 1, is asked). Sums are checked by z3 with ``sum``
uninterpreted (a sum over the same range of the same body, up to names, is one function), the
factors that do not read ``c`` pulled out (``Σ k·g = k·Σ g``, ``Σ -g = -Σ g``: true identities).

*Gaussian accumulators* (union form, no early exit, :func:`gaussian_accumulator`). When the
iteration reads state the loop writes, it is usually a worst case over that state; but a real
``s`` that the prefix sets to ``s0`` and every iteration raises by one top-level ``s := s +
Σ a_i·x_i + b`` of the iteration's own fresh draws ``x_i ~ gauss(m_i, w_i)`` (read nowhere
else; ``a_i``, ``b``, ``m_i``, ``w_i``, ``s0`` reading parameters only, ``Σ a_i²·w_i > 0``) is,
after its ``n = c - lo + 1``-th update, exactly ``N(s0 + n·D, n·W)`` with ``D = b + Σ a_i·m_i``
and ``W = Σ a_i²·w_i``, whatever the prefix left (independent normals sum to a normal, means
and variances adding; ``a·N(m, w) = N(a·m, a²·w)``). The iteration program then draws ``s``
from that law in place of the update and its draws, after dropping top-level assignments the
flag does not depend on (``seen := seen + 1``). This is used only when every input left is a
variable the loop does not write (so, given the prefix's state, the iteration reads the
accumulators' exact law and constants): the union form only needs each iteration's marginal
chance ``Pr[iteration c moves v] <= u(c)``, and that chance is computed under the very law the
iteration program draws. (The product form needs the chance given the history, where ``s`` is
no longer fresh, so it is not used there.)

The prover (:mod:`tamp.prover.nesting`) proves the iteration program by any method of the
portfolio; ``tamp check-proof`` rebuilds the same iteration program with this module and
re-checks that proof and the composition's inequality (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, FrozenSet, List, Optional, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from lang.typecheck import check_program
from lang.walk import Transformer, free_vars, operands, rebuild, substitute, written_vars
from tamp.core.encode import Encoder
from tamp.core.validity import VALID, check_fresh, verdict

from . import FAILED
from .ending import ends_surely
from .guard_sums import closed_sums

__all__ = [
    "FlagLoop",
    "flag_loop",
    "iteration_program",
    "exit_program",
    "trip_count",
    "live_in",
    "composition",
    "divide_out",
    "range_sum",
    "LasVegas",
    "lasvegas_loop",
    "lasvegas_programs",
    "lasvegas_composition",
    "LV_PARTS",
]

#: the suffix of the input that holds a variable's value when an iteration starts
IN = "$in"
#: the suffix of the flag that stands for ``k > 0`` of a counter ``k``
POS = "$pos"


def entry_copy(x: str, t, taken: set, params: List[A.Param], copies: List[A.Stmt], pos) -> A.Var:
    """Carry ``x``'s value into a rebuilt program: a fresh parameter ``x$in`` (numbered past the
    names in ``taken``, which it joins) appended to ``params`` and the copy ``x := x$in`` to
    ``copies``; returns the parameter, to substitute for ``x`` in the program's new ``requires``."""
    name, k = x + IN, 1
    while name in taken:
        k += 1
        name = f"{x}{IN}{k}"
    taken.add(name)
    params.append(A.Param(name, t, pos=pos))
    copies.append(A.Assign((A.Var(x),), A.Var(name), pos=pos))
    return A.Var(name)


@dataclass(frozen=True)
class FlagLoop:
    """The parts of a flag loop (see the module docstring): ``loop`` is the ``for`` loop whose
    body ``B`` is one iteration (a counter already rewritten into a flag, an early exit's flag
    test taken off), ``start`` the flag's value ``b0`` before the loop, ``ensures`` the
    iteration program's claim (``v`` or ``!v``)."""

    prefix: Tuple[A.Stmt, ...]
    loop: A.For
    flag: str
    form: str  #: "union" (no iteration moved the flag) or "product" (some iteration moved it)
    ensures: A.Expr
    start: bool = False
    early_exit: bool = False
    #: the claim's rest ``Q`` next to "the flag moved" (an early-exit product only): it must hold
    #: surely after an iteration that moves the flag (:func:`exit_program`), where the loop stops
    rest: Optional[A.Expr] = None


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


def _lit(v: str, b: bool) -> A.Expr:
    """The literal ``v`` (``b``) or ``!v``: the test that ``v`` has the value ``b``."""
    return A.Var(v) if b else A.Unary("!", A.Var(v))


def _moves(st: A.Assign, v: str, b0: bool) -> bool:
    """``st`` (a write of ``v``) can only move ``v`` away from ``b0``, never back."""
    if len(st.targets) != 1 or st.targets[0] != A.Var(v):
        return False
    val = st.value
    if val == A.BoolLit(not b0):
        return True
    op = "&&" if b0 else "||"
    return isinstance(val, A.Binary) and val.op == op and A.Var(v) in (val.left, val.right)


def _only_moved(body: A.Stmt, v: str, b0: bool) -> bool:
    """Every write of ``v`` in ``body`` moves it (no sampling into it, no other assignment)."""
    for n in A.walk(body):
        if isinstance(n, (A.Assign, A.Sample)) and v in {A.target_name(t) for t in n.targets}:
            if not (isinstance(n, A.Assign) and _moves(n, v, b0)):
                return False
        if isinstance(n, A.For) and n.var == v:
            return False
    return True


def _wp(stmts: Tuple[A.Stmt, ...], post: A.Expr) -> Optional[A.Expr]:
    """The weakest precondition of ``post`` through deterministic assignments and ``if``s, or
    None for any other statement."""
    for st in reversed(stmts):
        if isinstance(st, A.Block):
            got = _wp(tuple(st.stmts), post)
        elif isinstance(st, A.Skip):
            got = post
        elif isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
            got = substitute(post, {st.targets[0].name: st.value})
        elif isinstance(st, A.If):
            then = _wp(tuple(st.then.stmts), post)
            other = _wp(tuple(st.other.stmts), post) if st.other is not None else post
            if then is None or other is None:
                return None
            got = A.Binary("||", A.Binary("&&", st.cond, then), A.Binary("&&", A.Unary("!", st.cond), other))
        else:
            return None
        if got is None:
            return None
        post = got
    return post


def _single_init(prefix: Tuple[A.Stmt, ...], x: str) -> Optional[A.Expr]:
    """The value of the prefix's only write of ``x`` when it is a top-level ``x := literal``."""
    writes = [s for s in prefix if x in written_vars(s)]
    if len(writes) != 1:
        return None
    st = writes[0]
    if isinstance(st, A.Assign) and st.targets == (A.Var(x),) and isinstance(st.value, (A.BoolLit, A.Num)):
        return st.value
    return None


def _decides(post: A.Expr, types, target: A.Expr, domain: Optional[A.Expr]) -> bool:
    """``post`` is ``target`` for every value of its variables in ``domain`` (z3)."""
    try:
        enc = Encoder(types)
        env = enc.initial_env()
        hyps = [enc.expr(domain, env)] if domain is not None else []
        f = enc.expr(post, env) == enc.expr(target, env)
        return verdict(check_fresh(f, hyps, timeout_ms=2000)) == VALID
    except (TampError, z3.Z3Exception):
        return False


def _counter_raise(st: A.Node, k: str, exactly_one: bool = False) -> bool:
    """``st`` is ``k := k + m`` (or ``m + k``) with an integer literal ``m >= 1`` (``m == 1``)."""
    if not (isinstance(st, A.Assign) and st.targets == (A.Var(k),) and isinstance(st.value, A.Binary)):
        return False
    v = st.value
    if v.op != "+":
        return False
    m = v.right if v.left == A.Var(k) else v.left if v.right == A.Var(k) else None
    return isinstance(m, A.Num) and m.is_int and (m.value == 1 if exactly_one else m.value >= 1)


def _raised_once(body: A.Block, k: str) -> bool:
    """``body`` has one raise ``k := k + 1`` of the counter, outside its inner loops: an
    iteration raises the counter at most once, by one."""
    raises = [n for n in A.walk(body) if _counter_raise(n, k)]
    in_loops = [
        n for lp in A.walk(body) if isinstance(lp, (A.For, A.While)) for n in A.walk(lp.body) if _counter_raise(n, k)
    ]
    return len(raises) == 1 and _counter_raise(raises[0], k, exactly_one=True) and not in_loops


def _as_flag(body: A.Stmt, k: str, pos: str) -> Optional[A.Stmt]:
    """``body`` with every ``k := k + m`` replaced by ``pos := true``, or None when ``body``
    writes or reads ``k`` anywhere else."""
    if isinstance(body, A.Block):
        out = []
        for st in body.stmts:
            got = _as_flag(st, k, pos)
            if got is None:
                return None
            out.append(got)
        return dataclasses.replace(body, stmts=tuple(out))
    if _counter_raise(body, k):
        return A.Assign((A.Var(pos),), A.BoolLit(True), pos=body.pos)
    if isinstance(body, A.If):
        then = _block(_as_flag(body.then, k, pos))
        other = _block(_as_flag(body.other, k, pos)) if body.other is not None else None
        if then is None or (body.other is not None and other is None) or k in free_vars(body.cond):
            return None
        return dataclasses.replace(body, then=then, other=other)
    if isinstance(body, (A.For, A.While)):
        inner = _block(_as_flag(body.body, k, pos))
        if isinstance(body, A.While) and k in free_vars(body.cond):
            cond = _unraised_test(body.cond, k, pos)
            if cond is None:
                return None
            body = dataclasses.replace(body, cond=cond)
        heads = (body.lo, body.hi) if isinstance(body, A.For) else (body.cond,)
        if inner is None or any(k in free_vars(h) for h in heads) or k in _inv_reads(body):
            return None
        if isinstance(body, A.For) and body.var == k:
            return None
        return dataclasses.replace(body, body=inner)
    if k in written_vars(body) or k in _stmt_reads(body):
        return None
    return body


def _unraised_test(cond: A.Expr, k: str, pos: str) -> Optional[A.Expr]:
    """A loop test ``g && k == 0`` (any conjunct reading only the counter ``k`` that means
    ``k <= 0`` for ``k >= 0``: ``k == 0``, ``k < 1``, ``!(k > 0)``, z3 decides) with that conjunct
    written ``!pos``; None when ``k`` is read otherwise.

    Why this is sound: ``k`` is 0 when the loop starts and only raised by literals ``m >= 1``
    (:func:`_as_flag` refuses any other read or write), so ``k >= 0`` throughout and ``k > 0``
    exactly when ``pos`` is true: the test has the same value in every run."""
    conjs = list(operands(cond, "&&"))
    kv = A.Var(k)
    out: List[A.Expr] = []
    for c in conjs:
        if k not in free_vars(c):
            out.append(c)
            continue
        if free_vars(c) != {k} or not _decides(
            c, {k: A.INT}, A.Binary("<=", kv, A.num(0)), A.Binary(">=", kv, A.num(0))
        ):
            return None
        out.append(A.Unary("!", A.Var(pos)))
    res = out[0]
    for c in out[1:]:
        res = A.Binary("&&", res, c)
    return res


def _block(s: Optional[A.Stmt]) -> Optional[A.Block]:
    return s if isinstance(s, A.Block) else None


def _stmt_reads(s: A.Stmt) -> FrozenSet[str]:
    return live_in(s, frozenset())


def _claim_on(post: A.Expr, prefix, loop_writes: FrozenSet[str], types, params) -> Optional[A.Expr]:
    """``post`` with the prefix's literal values put in for the variables the loop does not
    write (the epilogue has been carried back already)."""
    m: Dict[str, A.Expr] = {}
    for x in free_vars(post):
        if x in loop_writes or x in params:
            continue
        val = _single_init(prefix, x)
        if val is None:
            return None
        m[x] = val
    return substitute(post, m)


def flag_loop(prog: A.Program, ensures: Tuple[A.Expr, ...], types) -> Optional[FlagLoop]:
    """The flag loop of ``prog`` with the failure-bound postconditions ``ensures``, or None.

    The loop is the last top-level loop; what follows it is carried back into the claim (see the
    module docstring)."""
    stmts = tuple(prog.body.stmts)
    loops = [i for i, st in enumerate(stmts) if isinstance(st, (A.For, A.While))]
    if not loops or len(ensures) != 1 or FAILED in types:
        # unreliable operations add `!failed` (and more) to the claim: not the flag alone
        return None
    k = loops[-1]
    prefix, suffix = stmts[:k], stmts[k + 1 :]
    if any(_has(s, (A.While, A.Assume)) for s in prefix):
        return None  # the prefix must end (it may sample: every draw's outcome is one start state)
    params = {p.name for p in prog.params}
    top = stmts[k]
    loop_writes = written_vars(top) | ({top.var} if isinstance(top, A.For) else frozenset())
    post = _wp(suffix, ensures[0])
    if post is None:
        return None
    post = _claim_on(post, prefix, loop_writes, types, params)
    if post is None:
        return None
    names = free_vars(post) - params
    rest: Optional[A.Expr] = None
    if len(names) != 1:
        split = _flag_and_rest(post, prefix, params, types, loop_writes)
        if split is None:
            return None
        post, rest = split
        names = free_vars(post) - params
    (x,) = names
    if x not in loop_writes:
        return None
    init = _single_init(prefix, x)
    if types.get(x) == A.BOOL and isinstance(init, A.BoolLit):
        v, b0 = x, init.value
        moved, unmoved = _lit(v, not b0), _lit(v, b0)
        if _decides(post, types, moved, None):
            form = "product"
        elif _decides(post, types, unmoved, None):
            form = "union"
        else:
            return None
    elif types.get(x) == A.INT and init == A.num(0):
        got_counter = _counter_flag(post, x, top, types, params)
        if got_counter is None:
            return None
        v, form, top = got_counter
        b0 = False
        prefix = tuple(
            A.Assign((A.Var(v),), A.BoolLit(False), pos=s.pos) if x in written_vars(s) else s for s in prefix
        )
    else:
        return None
    if isinstance(top, A.While):
        got = _counted(top, v, b0, prefix, prog, types)
        if got is None:
            return None
        loop, early_exit = got
    elif isinstance(top, A.For):
        loop, early_exit = _guarded(top, v, b0, types)
    else:
        return None
    if not early_exit and not _only_moved(loop.body, v, b0):
        return None
    if _has(loop.body, A.For) and any(isinstance(n, A.For) and n.var == v for n in A.walk(loop.body)):
        return None
    changed = written_vars(loop.body) | {loop.var}
    if loop.var in written_vars(loop.body) or (free_vars(loop.lo) | free_vars(loop.hi)) & changed:
        return None  # the trip count must be fixed when the loop starts
    if _has(loop.body, A.Assume):
        return None  # conditioning inside an iteration is not a failure bound
    if form == "product" and not early_exit and not ends_surely(loop.body):
        return None  # an iteration after a success must end surely (see the module docstring)
    if rest is not None and (form != "product" or not early_exit or (free_vars(rest) & {loop.var, v}) or x != v):
        return None  # the rest is read where the loop stopped: right after the iteration that moved the flag
    claim = _lit(v, not b0) if form == "product" else _lit(v, b0)
    return FlagLoop(prefix, loop, v, form, claim, b0, early_exit, rest)


def _conj(cs: List[A.Expr]) -> A.Expr:
    out = cs[0]
    for c in cs[1:]:
        out = A.Binary("&&", out, c)
    return out


def _flag_and_rest(post: A.Expr, prefix, params, types, loop_writes) -> Optional[Tuple[A.Expr, A.Expr]]:
    """``(φ(v), Q)`` when ``post`` is the conjunction of a claim ``φ`` on one Boolean flag ``v``
    (set to a literal by the prefix, written by the loop) and a rest ``Q`` that does not read it."""
    conjs = operands(post, "&&")
    for x in sorted(free_vars(post) - params):
        if types.get(x) != A.BOOL or x not in loop_writes or not isinstance(_single_init(prefix, x), A.BoolLit):
            continue
        on_x = [c for c in conjs if free_vars(c) - params == {x}]
        others = [c for c in conjs if c not in on_x]
        if on_x and others and all(x not in free_vars(c) for c in others):
            return _conj(on_x), _conj(others)
    return None


def _counter_flag(post: A.Expr, k: str, top: A.Stmt, types, params) -> Optional[Tuple[str, str, A.Stmt]]:
    """``(flag, form, loop)`` for a counter ``k`` (0 before the loop) the claim reads: the loop
    rewritten so that the flag ``k$pos`` records ``k > 0`` (every raise ``k := k + m``, ``m >= 1``,
    becomes ``k$pos := true``) when the claim is ``k == 0`` or ``k >= 1`` for ``k >= 0``; or, for a
    ``for`` loop of N iterations each raising ``k`` at most once by one (``0 <= k <= N``, ``k = N``
    exactly when every iteration raised it), the flag ``k$miss`` that an iteration which did not
    raise it moves, when the claim is ``k >= N`` or ``k < N`` there."""
    kv = A.Var(k)
    pos, miss, hit = k + POS, k + "$miss", k + "$hit"
    if {pos, miss, hit} & (set(types) | set(params)):
        return None
    t2 = {**types, k: A.INT}
    dom = A.Binary(">=", kv, A.num(0))
    form = None
    if _decides(post, t2, A.Binary(">=", kv, A.num(1)), dom):
        form = "product"
    elif _decides(post, t2, A.Binary("<=", kv, A.num(0)), dom):
        form = "union"
    if form is not None:
        body = _as_flag(top, k, pos)
        return None if body is None else (pos, form, body)
    if not isinstance(top, A.For) or not _raised_once(top.body, k):
        return None
    n = trip_count(top)
    dom = A.Binary("&&", dom, A.Binary("<=", kv, n))
    if _decides(post, t2, A.Binary("<", kv, n), dom):
        form = "product"
    elif _decides(post, t2, A.Binary(">=", kv, n), dom):
        form = "union"
    else:
        return None
    inner = _block(_as_flag(top.body, k, hit))
    if inner is None:
        return None
    pos_ = top.body.pos
    body = A.Block(
        (A.Assign((A.Var(hit),), A.BoolLit(False), pos=pos_),)
        + tuple(inner.stmts)
        + (A.If(A.Unary("!", A.Var(hit)), A.Block((A.Assign((A.Var(miss),), A.BoolLit(True), pos=pos_),)), pos=pos_),),
        pos=pos_,
    )
    return miss, form, dataclasses.replace(top, body=body)


def _tests_unmoved(cond: A.Expr, v: str, b0: bool, types) -> bool:
    """``cond`` reads only ``v`` and is ``v == b0`` (``!v``, ``v == false``, ``!(v)``: z3)."""
    if cond == _lit(v, b0):
        return True
    return free_vars(cond) == {v} and _decides(cond, {v: A.BOOL}, _lit(v, b0), None)


def _guarded(loop: A.For, v: str, b0: bool, types) -> Tuple[A.For, bool]:
    """``for c in lo..hi { if (v == b0) { B } }`` as ``(for c in lo..hi { B }, early exit)``."""
    body = loop.body.stmts
    if (
        len(body) == 1
        and isinstance(body[0], A.If)
        and body[0].other is None
        and _tests_unmoved(body[0].cond, v, b0, types)
    ):
        return dataclasses.replace(loop, body=body[0].then), True
    return loop, False


def _counted(loop: A.While, flag: str, b0: bool, prefix, prog: A.Program, types) -> Optional[Tuple[A.For, bool]]:
    """``while (v == b0 && c < hi) { B; c := c + 1; }`` after ``c := lo`` (``lo`` over
    parameters) as ``for c in lo..hi { B }`` with an early exit: it runs the same iterations
    while the flag is at ``b0`` and stops once it moved; ``while (c < hi)`` is the ``for`` loop."""
    conj = loop.cond
    early_exit = True
    if isinstance(conj, A.Binary) and conj.op == "&&" and _tests_unmoved(conj.left, flag, b0, types):
        test = conj.right
    elif isinstance(conj, A.Binary) and conj.op == "&&" and _tests_unmoved(conj.right, flag, b0, types):
        test = conj.left
    else:
        test, early_exit = conj, False
    if not (isinstance(test, A.Binary) and test.op in ("<", "<=") and isinstance(test.left, A.Var)):
        return None
    c = test.left.name
    body = tuple(loop.body.stmts)
    step = A.Assign((A.Var(c),), A.Binary("+", A.Var(c), A.num(1)))
    if early_exit and body:
        body = _hoisted_step(body, c, step, flag, b0)
    if not body or body[-1] != step or c in written_vars(A.Block(body[:-1])) or c == flag:
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
    body_block = A.Block(body[:-1], pos=loop.body.pos)
    return A.For(c, lo, test.right, test.op == "<=", body_block, pos=loop.pos), early_exit


def _ends_moved(branch: A.Block, v: str, b0: bool) -> bool:
    """Every run of ``branch`` ends with ``v == !b0``: a top-level ``v := !b0`` that no later
    statement of the branch writes over."""
    stmts = tuple(branch.stmts)
    for i in range(len(stmts) - 1, -1, -1):
        st = stmts[i]
        if isinstance(st, A.Assign) and st.targets == (A.Var(v),) and st.value == A.BoolLit(not b0):
            return not any(v in written_vars(t) for t in stmts[i + 1 :])
    return False


def _hoisted_step(body: Tuple[A.Stmt, ...], c: str, step: A.Assign, v: str, b0: bool) -> Tuple[A.Stmt, ...]:
    """An early-exit body ``…; if (g) { S; c := c + 1; } else { T }`` whose branch ``T`` surely
    moves the flag (it ends with ``v := !b0``) and writes no ``c``, rewritten as ``…; if (g) { S }
    else { T }; c := c + 1`` (the branches may be swapped); else ``body`` unchanged.

    Why the two loops run the same iterations: on a path through ``S`` both raise ``c`` last;
    on a path through ``T`` the flag has moved, so the loop test ``v == b0 && …`` stops both
    loops whatever ``c`` is. Only the counter's final value differs on that path, and the flag
    loop's claim never reads the counter (:func:`flag_loop` keeps the claim to the flag, and the
    rest ``Q`` may not read the counter)."""
    last = body[-1]
    if not (isinstance(last, A.If) and last.other is not None):
        return body
    for raising, moving, swap in ((last.then, last.other, False), (last.other, last.then, True)):
        rs = tuple(raising.stmts)
        if not rs or rs[-1] != step or c in written_vars(A.Block(rs[:-1])) or c in written_vars(moving):
            continue
        if not _ends_moved(moving, v, b0):
            continue
        kept = A.Block(rs[:-1], pos=raising.pos)
        then, els = (moving, kept) if swap else (kept, moving)
        return body[:-1] + (dataclasses.replace(last, then=then, other=els), step)
    return body


def trip_count(loop: A.For) -> A.Expr:
    """``hi - lo`` (``+ 1`` for an inclusive range): the number of iterations when positive."""
    n: A.Expr = loop.hi if loop.lo == A.num(0) else A.Binary("-", loop.hi, loop.lo)
    if loop.inclusive:
        n = A.Binary("+", n, A.num(1))
    return n


def exit_program(prog: A.Program, fl: FlagLoop, types) -> Optional[A.Program]:
    """The program that proves the rest ``Q`` of a flag loop's claim (``fl.rest``): one iteration
    from any state it can start in, claim "the flag did not move, or ``Q``", bound 0 — the loop
    stops right after the iteration that moved the flag (an early exit), so ``Q`` then holds
    surely, and the claim fails only where the flag never moved: the product's event."""
    if fl.rest is None:
        return None
    claim = A.Binary("||", _lit(fl.flag, fl.start), fl.rest)
    return iteration_program(prog, fl, types, A.num(0), claim, free_vars(fl.rest), "$exit")


#: a linear form: coefficients of the draws it reads (by name) and its constant part
Linear = Tuple[Dict[str, A.Expr], A.Expr]


def _plus(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == A.num(0):
        return b
    if b == A.num(0):
        return a
    return A.Binary("+", a, b)


def _times(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == A.num(1):
        return b
    if b == A.num(1):
        return a
    return A.Binary("*", a, b)


def _scaled(a: A.Expr, k: A.Expr, op: str) -> A.Expr:
    return A.Binary("/", a, k) if op == "/" else _times(k, a)


def _linear(e: A.Expr, draws: FrozenSet[str]) -> Optional[Linear]:
    """``e`` as ``Σ a_i·x_i + b`` over the draw names ``draws`` (``a_i``, ``b`` reading no draw),
    read off its syntax (``+``, ``-``, a draw-free factor or divisor), else None."""
    if not (free_vars(e) & draws):
        return {}, e
    if isinstance(e, A.Var):
        return {e.name: A.num(1)}, A.num(0)
    if isinstance(e, A.Unary) and e.op == "-":
        inner = _linear(e.operand, draws)
        if inner is None:
            return None
        return {x: A.Unary("-", a) for x, a in inner[0].items()}, A.Unary("-", inner[1])
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        left, right = _linear(e.left, draws), _linear(e.right, draws)
        if left is None or right is None:
            return None
        coef = dict(left[0])
        for x, a in right[0].items():
            a = a if e.op == "+" else A.Unary("-", a)
            coef[x] = _plus(coef[x], a) if x in coef else a
        const = _plus(left[1], right[1]) if e.op == "+" else A.Binary("-", left[1], right[1])
        return coef, const
    if isinstance(e, A.Binary) and e.op in ("*", "/"):
        for lin_side, k, left_k in ((e.left, e.right, False), (e.right, e.left, True)):
            if free_vars(k) & draws or (e.op == "/" and left_k):
                continue
            inner = _linear(lin_side, draws)
            if inner is None:
                return None
            return {x: _scaled(a, k, e.op) for x, a in inner[0].items()}, _scaled(inner[1], k, e.op)
    return None


def _valid(types, hyps: Tuple[A.Expr, ...], goal: A.Expr) -> bool:
    try:
        enc = Encoder(types)
        env = enc.initial_env()
        return verdict(check_fresh(enc.expr(goal, env), [enc.expr(h, env) for h in hyps], timeout_ms=2000)) == VALID
    except (TampError, z3.Z3Exception):
        return False


def gaussian_accumulator(prog: A.Program, fl: FlagLoop, body: A.Block, s: str, types) -> Optional[A.Block]:
    """``body`` with the update of the *Gaussian accumulator* ``s`` replaced by a draw of the
    value it has after that update, ``s ~ gauss(s0 + n·D, n·W)`` with ``n = c - lo + 1`` the
    updates made so far, or None when ``s`` is not one.

    ``s`` is one when: the prefix's only write of ``s`` is a top-level ``s := s0`` (``s0`` reads
    parameters only) and ``s`` is real; the body (no ``while``, no ``assume``) writes ``s`` only by
    one top-level ``s := s + Σ a_i·x_i + b`` that no earlier statement of the body reads ``s``
    before; each ``x_i`` is drawn ``x_i ~ gauss(m_i, w_i)`` at the top level before the update,
    its only write and read in the body besides the update; ``a_i``, ``b``, ``m_i``, ``w_i`` read
    parameters only; and ``W = Σ a_i²·w_i > 0`` under ``requires`` (z3). ``D = b + Σ a_i·m_i``.

    Why this is the distribution of ``s``. Every iteration draws its ``x_i`` afresh, independently
    of everything before, with the same deterministic parameters, and adds the same
    deterministic combination; a sum of independent normals is normal with the summed means and
    variances, so after ``n`` updates ``s`` is exactly ``N(s0 + n·D, n·W)`` (``a·N(m, w) =
    N(a·m, a²·w)``). The ``x_i`` are read nowhere else, so replacing the draws and the update by
    one draw of ``s`` gives the iteration the same distribution of everything it reads; the
    union form needs no more (see :func:`iteration_program`)."""
    if types.get(s) != A.REAL or s == fl.flag or s == fl.loop.var or _has(body, (A.While, A.Assume)):
        return None
    params = frozenset(p.name for p in prog.params)
    writes = [st for st in fl.prefix if s in written_vars(st)]
    if len(writes) != 1 or not isinstance(writes[0], A.Assign) or writes[0].targets != (A.Var(s),):
        return None
    s0 = writes[0].value
    if not free_vars(s0) <= params:
        return None
    stmts = list(body.stmts)
    upd = [i for i, st in enumerate(stmts) if s in written_vars(st)]
    if len(upd) != 1:
        return None
    i = upd[0]
    st = stmts[i]
    if not (isinstance(st, A.Assign) and st.targets == (A.Var(s),)) or any(s in free_vars(t) for t in stmts[:i]):
        return None
    samples = {
        t.targets[0].name: j
        for j, t in enumerate(stmts[:i])
        if isinstance(t, A.Sample) and len(t.targets) == 1 and isinstance(t.targets[0], A.Var)
    }
    samples.pop(s, None)
    lin = _linear(st.value, frozenset(samples) | {s})
    if lin is None or s not in lin[0] or len(lin[0]) < 2:
        return None
    coef, const = dict(lin[0]), lin[1]
    if not _valid(types, (), A.Binary("==", coef.pop(s), A.num(1))):  # s := s + …, as written
        return None
    mean: A.Expr = const
    var: A.Expr = A.num(0)
    drop = set()
    for x, a in coef.items():
        j = samples[x]
        draw_stmt = stmts[j]
        assert isinstance(draw_stmt, A.Sample)
        dist = draw_stmt.dist
        if dist.func != "gauss" or len(dist.args) != 2 or x in params or x == s:
            return None
        m, w = dist.args
        if not (free_vars(a) | free_vars(m) | free_vars(w)) <= params:
            return None
        if any(x in written_vars(t) or x in free_vars(t) for k, t in enumerate(stmts) if k not in (j, i)):
            return None
        if not _valid(types, tuple(prog.requires), A.Binary(">", w, A.num(0))):
            return None
        mean = _plus(mean, _times(a, m))
        var = _plus(var, _times(_times(a, a), w))
        drop.add(j)
    if not free_vars(const) <= params or not _valid(types, tuple(prog.requires), A.Binary(">", var, A.num(0))):
        return None
    c = A.Var(fl.loop.var)
    n = A.Binary("+", c if fl.loop.lo == A.num(0) else A.Binary("-", c, fl.loop.lo), A.num(1))
    draw = A.Sample((A.Var(s),), A.Call("gauss", (_plus(s0, _times(n, mean)), _times(n, var)), pos=st.pos), pos=st.pos)
    new = [draw if k == i else t for k, t in enumerate(stmts) if k not in drop]
    return A.Block(tuple(new), pos=body.pos)


def _without_dead(body: A.Block, out: FrozenSet[str]) -> A.Block:
    """``body`` without its top-level assignments of a variable nothing after reads (up to
    ``out``, read after the body): bookkeeping such as ``seen := seen + 1`` that the claim on
    ``out`` does not depend on (an assignment has no other effect, so removing it changes the
    distribution of nothing ``out`` reads)."""
    stmts = list(body.stmts)
    while True:
        live, keep = out, []
        for st in reversed(stmts):
            dead = (
                isinstance(st, A.Assign)
                and all(isinstance(t, A.Var) for t in st.targets)
                and not ({A.target_name(t) for t in st.targets} & live)
            )
            if not dead:
                keep.append(st)
                live = live_in(st, live)
        keep.reverse()
        if len(keep) == len(stmts):
            return A.Block(tuple(stmts), pos=body.pos)
        stmts = keep


def _accumulated(
    prog: A.Program, fl: FlagLoop, body: A.Block, needed: FrozenSet[str], types
) -> Optional[Tuple[A.Block, FrozenSet[str]]]:
    """``body`` with every variable of ``needed`` that the loop writes a Gaussian accumulator
    drawn from its distribution (:func:`gaussian_accumulator`), and the inputs left, when those
    are only variables the loop does not write (fixed by the prefix); else None.

    Sound for the union form: given the state the prefix leaves, the accumulators' distribution
    at iteration ``c`` is the same Gaussian whatever that state (fresh draws, parameters only),
    and the other inputs are that state's, so the iteration program's bound, proved for every
    value of those inputs, bounds the chance that iteration ``c`` moves the flag."""
    written = written_vars(body)
    body = _without_dead(body, frozenset({fl.flag}))
    accumulators = sorted(live_in(body, frozenset()) & needed & written)
    if not accumulators:
        return None
    for s in accumulators:
        new = gaussian_accumulator(prog, fl, body, s, types)
        if new is None:
            return None
        body = new
    loop = fl.loop
    left = (live_in(body, frozenset()) | free_vars(loop.lo) | free_vars(loop.hi)) - {p.name for p in prog.params}
    left = left - {loop.var, fl.flag}
    if left & written:
        return None
    return body, frozenset(left)


def iteration_program(
    prog: A.Program,
    fl: FlagLoop,
    types,
    per_iteration: A.Expr,
    claim: Optional[A.Expr] = None,
    out: FrozenSet[str] = frozenset(),
    suffix: str = "$iter",
    facts: Tuple[A.Expr, ...] = (),
) -> Optional[A.Program]:
    """The iteration program of the flag loop ``fl`` with the bound ``per_iteration`` (which may
    read parameters and the loop's counter only), or None when a variable's type is unknown
    (``claim``, ``out``: another claim on the iteration and the variables it reads after it).

    ``facts``: loop facts (:mod:`tamp.prover.nesting.loop_facts`) over the state at the loop head, proved
    inductive elsewhere (by the prover's search and again by ``check-proof``); they become
    ``requires`` of the iteration program, read over its inputs (``x$in`` for a variable the body
    writes). None when a fact reads a name that is not a parameter, the counter or an input."""
    params = {p.name for p in prog.params}
    loop, v = fl.loop, fl.flag
    if not set(free_vars(per_iteration)) <= params | {loop.var}:
        return None
    body = loop.body
    written = written_vars(body)
    needed = (live_in(body, out) | free_vars(loop.lo) | free_vars(loop.hi)) - params - {loop.var, v}
    if needed and claim is None and fl.form == "union" and not fl.early_exit:
        acc = _accumulated(prog, fl, body, needed, types)
        if acc is not None:  # the state it reads is Gaussian accumulators only: drawn instead
            body, needed = acc
            written = written_vars(body)
    new_params: List[A.Param] = [A.Param(loop.var, A.INT, pos=loop.pos)]
    copies: List[A.Stmt] = [A.Assign((A.Var(v),), A.BoolLit(fl.start), pos=loop.pos)]
    taken = params | set(types) | {loop.var}
    for x in sorted(needed):
        t = types.get(x)
        if t is None:
            return None
        if x in written:
            name, k = x + IN, 1
            while name in taken:  # a nested loop's iteration: the outer one's input is a parameter now
                k += 1
                name = f"{x}{IN}{k}"
            taken.add(name)
            new_params.append(A.Param(name, t, pos=loop.pos))
            copies.append(A.Assign((A.Var(x),), A.Var(name), pos=loop.pos))
        else:
            new_params.append(A.Param(x, t, pos=loop.pos))
    c = A.Var(loop.var)
    in_range = A.Binary("&&", A.Binary("<=", loop.lo, c), A.Binary("<=" if loop.inclusive else "<", c, loop.hi))
    inputs: Dict[str, A.Expr] = {p.name: A.Var(p.name) for p in new_params}
    for cp in copies[1:]:
        if isinstance(cp, A.Assign) and isinstance(cp.targets[0], A.Var):
            inputs[cp.targets[0].name] = cp.value
    read_facts: List[A.Expr] = []
    for f in facts:
        if not free_vars(f) <= params | set(inputs):
            return None
        read_facts.append(substitute(f, {x: e for x, e in inputs.items() if e != A.Var(x)}))
    return dataclasses.replace(
        prog,
        name=prog.name + suffix,
        params=tuple(prog.params) + tuple(new_params),
        body=A.Block(tuple(copies) + tuple(body.stmts), pos=body.pos),
        requires=tuple(prog.requires) + (in_range,) + tuple(read_facts),
        ensures=(fl.ensures if claim is None else claim,),
        fails=per_iteration,
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )


def _implies(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary("||", A.Unary("!", a), b)


def _product(factors: List[A.Expr]) -> A.Expr:
    if not factors:
        return A.num(1)
    out = factors[0]
    for f in factors[1:]:
        out = A.Binary("*", out, f)
    return out


def divide_out(e: A.Expr, n: A.Expr) -> Optional[A.Expr]:
    """``e / n`` when ``n`` is a factor of ``e`` written as such (in a product, a quotient's
    numerator or under a minus), else None."""
    if e == n:
        return A.num(1)
    if isinstance(e, A.Unary) and e.op == "-":
        inner = divide_out(e.operand, n)
        return None if inner is None else A.Unary("-", inner)
    if isinstance(e, A.Binary) and e.op == "/":
        top = divide_out(e.left, n)
        return None if top is None else A.Binary("/", top, e.right)
    if isinstance(e, A.Binary) and e.op == "*":
        factors = operands(e, "*")
        for i, f in enumerate(factors):
            rest = divide_out(f, n)
            if rest is not None:
                if rest == A.Unary("-", A.num(1)):  # -n · a / n = -a
                    return A.Unary("-", _product(factors[:i] + factors[i + 1 :]))
                kept = factors[:i] + ([] if rest == A.num(1) else [rest]) + factors[i + 1 :]
                return _product(kept)
    return None


def range_sum(loop: A.For, body: A.Expr) -> A.Expr:
    """``sum(c in lo..hi: body)`` over the loop's range, with the factors of ``body`` that do not
    read ``c`` taken out of the sum (``-g`` and ``k·g``, ``g / k``: Σ is linear)."""
    return _pulled(A.Sum(loop.var, loop.lo, loop.hi, loop.inclusive, body))


def _pulled(s: A.Sum) -> A.Expr:
    """The sum ``s`` with the factors of its body that do not read its variable taken out
    (``Σ -g = -Σ g``, ``Σ g/k = (Σ g)/k``, ``Σ k·g = k·Σ g``: identities, Σ being linear)."""
    c, body = s.var, s.body

    def again(b: A.Expr) -> A.Expr:
        return _pulled(A.Sum(c, s.lo, s.hi, s.inclusive, b))

    if isinstance(body, A.Unary) and body.op == "-":
        return A.Unary("-", again(body.operand))
    if isinstance(body, A.Binary) and body.op == "/" and c not in free_vars(body.right):
        return A.Binary("/", again(body.left), body.right)
    if isinstance(body, A.Binary) and body.op == "*":
        factors = operands(body, "*")
        outside = [f for f in factors if c not in free_vars(f)]
        inside = [f for f in factors if c in free_vars(f)]
        if outside and inside:
            return A.Binary("*", _product(outside), again(_product(inside)))
    return A.Sum(c, s.lo, s.hi, s.inclusive, body)


class _PullSums(Transformer):
    def Sum(self, node: A.Sum, kids) -> A.Expr:
        got = rebuild(node, kids)
        assert isinstance(got, A.Sum)  # a sum rebuilt from its parts
        return _pulled(got)


def pulled_sums(e: A.Expr) -> A.Expr:
    """``e`` with every sum's constant factors taken out as :func:`range_sum` does (an identity:
    a claim ``sum(r in 0..n: (r + 1) * p / t)`` is compared with the composed ``p *
    sum(r in 0..n: r + 1) / t`` in the same shape, the solver reading a sum as a function)."""
    return _PullSums().walk(e)


def exponent(per_iteration: A.Expr, per_exponent: Optional[A.Expr] = None) -> Tuple[A.Expr, Optional[A.Expr]]:
    """``(e, side)`` with ``per_iteration <= exp(e)`` whenever ``side`` holds (None: always):
    ``exp(e)`` itself, ``e = log(u)`` under ``u > 0`` when the claim's exponent per iteration
    ``per_exponent`` is written so, ``1 - s <= exp(-s)``, a product of such factors
    (:func:`_complements`), else ``e = log(u)`` under ``u > 0``."""
    u = per_iteration
    log_u = A.Call("log", (u,))
    if isinstance(u, A.Call) and u.func == "exp" and len(u.args) == 1:
        return u.args[0], None
    if per_exponent == log_u:
        return log_u, A.Binary(">", u, A.num(0))
    if isinstance(u, A.Binary) and u.op == "-" and u.left == A.num(1):
        return A.Unary("-", u.right), None
    complements = _complements(u)
    if complements is not None:
        return complements
    return log_u, A.Binary(">", u, A.num(0))


def _complements(u: A.Expr) -> Optional[Tuple[A.Expr, A.Expr]]:
    """``(-(s_1 + … + s_m), 1 - s_1 >= 0 && … && 1 - s_m >= 0)`` for a product ``u`` of ``m >= 2``
    factors ``1 - s_i`` (the chances that each of a block's draws misses): ``0 <= 1 - s <= exp(-s)``
    for every real ``s`` with ``1 - s >= 0``, and a product of non-negative factors is at most the
    product of their upper bounds, so ``u <= exp(-Σ s_i)`` under the side condition."""
    factors = operands(u, "*")
    if len(factors) < 2 or not all(isinstance(f, A.Binary) and f.op == "-" and f.left == A.num(1) for f in factors):
        return None
    total: A.Expr = factors[0].right  # type: ignore[attr-defined]
    side: A.Expr = A.Binary(">=", factors[0], A.num(0))
    for f in factors[1:]:
        total = A.Binary("+", total, f.right)  # type: ignore[attr-defined]
        side = A.Binary("&&", side, A.Binary(">=", f, A.num(0)))
    return A.Unary("-", total), side


#: the largest literal trip count whose product is written out factor by factor
MAX_EXPANDED = 12


def literal_trips(loop: A.For) -> Optional[int]:
    """The loop's trip count when it is a literal integer (``0..3``, ``1..=4``), else None."""
    lo, hi = loop.lo, loop.hi
    if not (isinstance(lo, A.Num) and isinstance(hi, A.Num)):
        return None
    n = hi.value - lo.value + (1 if loop.inclusive else 0)
    return int(n) if n.denominator == 1 else None


def _expanded_product(fl: FlagLoop, bound: A.Expr, u: A.Expr) -> Optional[List[Tuple[str, A.Expr]]]:
    """The product form for a bound not written ``exp(E)`` and a literal trip count
    ``1 <= N <= MAX_EXPANDED``: ``u(lo)·u(lo+1)·…·u(hi-1) <= β`` written out (``f·f·f <= f*f*f``),
    with every factor ``>= 0``. Sound as the product rule of the module docstring: Pr[every
    iteration fails] <= Π u(c), here a polynomial in the factors, compared with β by z3 with no
    logarithm needed."""
    n = literal_trips(fl.loop)
    if n is None or not 1 <= n <= MAX_EXPANDED or not isinstance(fl.loop.lo, A.Num):
        return None
    lo = fl.loop.lo.value
    factors = [substitute(u, {fl.loop.var: A.Num(lo + j, is_int=True)}) for j in range(n)]
    nonneg = _conj([A.Binary(">=", f, A.num(0)) for f in dict.fromkeys(factors)])
    return [("NONNEGATIVE", nonneg), ("PRODUCT", A.Binary("<=", _product(factors), bound))]


def log_lower(bound: A.Expr, terms: int = 200) -> Optional[Fraction]:
    """A rational ``L`` with ``L <= log(β)`` for a literal bound ``0 < β < 1``, proved exactly;
    None otherwise. A product bound ``β`` that is a number (``fails 0.05``) then composes as
    ``exp(L)``: Π u <= exp(N·e) <= exp(L) <= β.

    Why this is sound: with ``x = -L > 0``, the partial sums of ``exp(x) = Σ x^k/k!`` are lower
    bounds of it (every term is positive), so a partial sum ``>= 1/β``, compared in exact rational
    arithmetic, gives ``exp(x) >= 1/β``, i.e. ``L = -x <= log(β)``. A float only picks the
    candidate ``x`` (``log(1/β)`` rounded up); the comparison is exact. ``tamp check-proof``
    runs the same comparison again (it calls :func:`composition`)."""
    if not isinstance(bound, A.Num) or not 0 < bound.value < 1:
        return None
    inv = 1 / Fraction(bound.value)
    guess = math.log(float(inv))
    x = Fraction(math.ceil(guess * (1 + 1e-9) * 10**9 + 1), 10**9)
    total, term = Fraction(0), Fraction(1)
    for k in range(terms):
        total += term
        if total >= inv:
            return -x
        term = term * x / (k + 1)
    return None


def composition(fl: FlagLoop, bound: A.Expr, per_iteration: A.Expr) -> Optional[List[Tuple[str, A.Expr]]]:
    """The side conditions, as formulas over the parameters to be proved valid under
    ``requires``, under which ``per_iteration`` for each of the loop's iterations gives the
    program's ``bound`` (see the module docstring); None when ``bound`` has not the form the
    composition needs (``exp(E)`` for a product)."""
    n = trip_count(fl.loop)
    varying = fl.loop.var in free_vars(per_iteration)
    runs, none = A.Binary(">=", n, A.num(1)), A.Binary("<=", n, A.num(0))
    if fl.form == "union":
        total = range_sum(fl.loop, per_iteration) if varying else A.Binary("*", n, per_iteration)
        identities: List[Tuple[str, A.Expr]] = []
        if any(isinstance(x, A.Sum) for x in A.walk(total)) and not any(isinstance(x, A.Sum) for x in A.walk(bound)):
            closed = closed_sums(total)  # counted guards: the sums in closed form, proved by induction
            if closed is not None:
                total, identities = closed
        return identities + [
            ("UNION", _implies(runs, A.Binary("<=", total, pulled_sums(bound) if varying else bound))),
            ("EMPTY", _implies(none, A.Binary("<=", A.num(0), bound))),
        ]
    if isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1:
        big = bound.args[0]
    else:
        expanded = _expanded_product(fl, bound, per_iteration)
        low = log_lower(bound) if expanded is None else None
        if low is None:
            return expanded
        big = A.Num(low, False)  # exp(low) <= β: a product below exp(low) is below β
    e, side = exponent(per_iteration, divide_out(big, n))
    if varying and side is not None:
        return None  # u(c) > 0 for every c would be a quantified side condition
    out = [] if side is None else [("POSITIVE", side)]
    total = range_sum(fl.loop, e) if varying else A.Binary("*", n, e)
    return out + [
        ("PRODUCT", _implies(runs, A.Binary("<=", total, big))),
        ("EMPTY", _implies(none, A.Binary("<=", A.num(0), big))),
    ]


# --- Las Vegas loops: an unbounded ``while`` truncated to the iterations its claim allows --------


@dataclass(frozen=True)
class LasVegas:
    """A *Las Vegas loop* ``P; while (C) { B }`` (see :func:`lasvegas_loop`) whose claim is
    ``cnt <= T && Q``: ``cnt`` starts at ``start`` and every iteration raises it by one, so a run
    that breaks ``cnt <= T`` (or never stops) ran the first ``T - start`` iterations and each of
    them ended with ``C`` true; ``rest`` is ``Q`` (``true`` when the claim is the count alone)."""

    prefix: Tuple[A.Stmt, ...]
    loop: A.While
    counter: str
    start: A.Expr
    limit: A.Expr
    rest: A.Expr


def _is_raise(st: A.Stmt, k: str) -> bool:
    return _counter_raise(st, k, exactly_one=True)


def _limits(conj: A.Expr, k: str) -> List[A.Expr]:
    """Candidate ``T`` with ``conj`` read as ``k <= T`` (``k < T + 1``, ``T >= k``, ...)."""
    out: List[A.Expr] = []
    if isinstance(conj, A.Binary):
        kv = A.Var(k)
        if conj.left == kv and conj.op == "<=" or conj.right == kv and conj.op == ">=":
            out.append(conj.right if conj.left == kv else conj.left)
        if conj.left == kv and conj.op == "<" or conj.right == kv and conj.op == ">":
            other = conj.right if conj.left == kv else conj.left
            out.append(A.Binary("-", other, A.num(1)))
    if isinstance(conj, A.Unary) and conj.op == "!" and isinstance(conj.operand, A.Binary):
        b = conj.operand
        flip = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
        if b.op in flip:
            out += _limits(A.Binary(flip[b.op], b.left, b.right), k)
    return out


def lasvegas_loop(prog: A.Program, ensures: Tuple[A.Expr, ...], types) -> Optional[LasVegas]:
    """The Las Vegas loop of ``prog`` with the failure-bound postcondition ``ensures``, or None.

    The program is ``P; while (C) { B }; S``: ``P`` ends (no ``while``, no ``assume``) and sets the
    integer counter ``cnt := d0`` (``d0`` over parameters) as its only write of it; ``B`` has no
    ``while`` and no ``assume`` (an iteration ends surely) and raises ``cnt := cnt + 1`` once as
    one of its own statements (not under an ``if`` or a loop), with no other write of ``cnt``;
    ``S`` is deterministic and carried back into the claim. The claim is ``φ(cnt) && Q`` with
    ``cnt <= T ⇒ φ(cnt)`` (z3; ``T`` an integer over parameters) and ``Q`` not reading ``cnt``.
    No parameter is written by the program (the bounds read them as constants)."""
    stmts = tuple(prog.body.stmts)
    loops = [i for i, st in enumerate(stmts) if isinstance(st, (A.For, A.While))]
    if not loops or len(ensures) != 1 or FAILED in types:
        return None
    i = loops[-1]
    top = stmts[i]
    prefix, suffix = stmts[:i], stmts[i + 1 :]
    if not isinstance(top, A.While) or any(_has(s, (A.While, A.Assume)) for s in prefix):
        return None
    if _has(top.body, (A.While, A.Assume)):
        return None
    params = {p.name for p in prog.params}
    if written_vars(prog.body) & params:
        return None
    post = _wp(suffix, ensures[0])
    if post is None:
        return None
    conjs = operands(post, "&&")
    typed = check_program(prog)
    body = tuple(top.body.stmts)
    for k in sorted(written_vars(top.body)):
        if types.get(k) != A.INT:
            continue
        raises = [st for st in body if _is_raise(st, k)]
        others = [st for st in body if not _is_raise(st, k) and k in written_vars(st)]
        if len(raises) != 1 or others:
            continue
        inits = [s for s in prefix if k in written_vars(s)]
        if len(inits) != 1 or not (isinstance(inits[0], A.Assign) and inits[0].targets == (A.Var(k),)):
            continue
        d0 = inits[0].value
        if not free_vars(d0) <= params:
            continue
        on_k = [c for c in conjs if k in free_vars(c)]
        rest = [c for c in conjs if k not in free_vars(c)]
        if not on_k:
            continue
        phi = on_k[0]
        for c in on_k[1:]:
            phi = A.Binary("&&", phi, c)
        if not free_vars(phi) <= params | {k}:
            continue
        for t in [t for c in on_k for t in _limits(c, k)]:
            try:
                if not free_vars(t) <= params or typed.type_of(t) != A.INT or typed.type_of(d0) != A.INT:
                    continue
            except TampError:
                continue
            if _decides(_implies(A.Binary("<=", A.Var(k), t), phi), {**types, k: A.INT}, A.BoolLit(True), None):
                q: A.Expr = A.BoolLit(True)
                for c in rest:
                    q = c if q == A.BoolLit(True) else A.Binary("&&", q, c)
                return LasVegas(prefix, top, k, d0, t, q)
    return None


def _input_program(
    prog: A.Program,
    name: str,
    stmts: Tuple[A.Stmt, ...],
    out: FrozenSet[str],
    start: Optional[A.Expr],
    types,
    ensures: A.Expr,
    fails: A.Expr,
    pos,
) -> Optional[A.Program]:
    """``stmts`` as a program whose inputs are the variables it (or ``out``, read after it) can
    find in the state: a fresh input ``x$in`` copied into ``x`` when ``stmts`` writes ``x``; the
    state satisfies ``start`` (read on the inputs)."""
    params = {p.name for p in prog.params}
    block = A.Block(stmts, pos=pos)
    written = written_vars(block)
    needed = (live_in(block, out) | (free_vars(start) if start is not None else frozenset())) - params
    new_params: List[A.Param] = []
    copies: List[A.Stmt] = []
    renames: Dict[str, A.Expr] = {}
    taken = params | set(types)
    for x in sorted(needed):
        t = types.get(x)
        if t is None:
            return None
        if x in written:
            renames[x] = entry_copy(x, t, taken, new_params, copies, pos)
        else:
            new_params.append(A.Param(x, t, pos=pos))
    extra = () if start is None else (substitute(start, renames),)
    return dataclasses.replace(
        prog,
        name=prog.name + name,
        params=tuple(prog.params) + tuple(new_params),
        body=A.Block(tuple(copies) + tuple(stmts), pos=pos),
        requires=tuple(prog.requires) + extra,
        ensures=(ensures,),
        fails=fails,
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )


#: the parts of a Las Vegas proof: (role, program-name suffix); "start" only when the first
#: test of ``C`` is counted as a factor, the "exit" parts only when the claim has a ``Q``
LV_PARTS = ("iter", "exit", "start", "start_exit")


def lasvegas_programs(prog: A.Program, lv: LasVegas, types, u: A.Expr, lead: bool) -> Optional[Dict[str, A.Program]]:
    """The programs a Las Vegas proof proves, by role (see :func:`lasvegas_composition`):

    - ``iter``: one iteration ``B`` from any state where ``C`` holds, claim ``!C``, bound ``u``;
    - ``exit``: the same iteration, claim ``C || Q``, bound 0 (an iteration that ends the loop
      leaves ``Q`` true, surely);
    - ``start``: the prefix ``P``, claim ``!C``, bound ``u`` (when ``lead``: the loop is entered
      with probability at most ``u``);
    - ``start_exit``: the prefix, claim ``C || Q``, bound 0 (a run that never enters the loop
      ends with ``Q``).
    None when a variable's type is unknown or ``u`` reads more than parameters."""
    params = {p.name for p in prog.params}
    if not free_vars(u) <= params:
        return None
    c = lv.loop.cond
    stop = A.Unary("!", c)
    ok = A.Binary("||", c, lv.rest)
    out_vars = free_vars(c) | free_vars(lv.rest)
    pos = lv.loop.body.pos
    parts: Dict[str, Optional[A.Program]] = {
        "iter": _input_program(prog, "$iter", tuple(lv.loop.body.stmts), out_vars, c, types, stop, u, pos)
    }
    if lv.rest != A.BoolLit(True):
        parts["exit"] = _input_program(prog, "$exit", tuple(lv.loop.body.stmts), out_vars, c, types, ok, A.num(0), pos)
        parts["start_exit"] = _input_program(prog, "$start_exit", lv.prefix, out_vars, None, types, ok, A.num(0), pos)
    if lead:
        parts["start"] = _input_program(prog, "$start", lv.prefix, out_vars, None, types, stop, u, pos)
    if any(p is None for p in parts.values()):
        return None
    return {k: v for k, v in parts.items() if v is not None}


def lasvegas_composition(lv: LasVegas, bound: A.Expr, u: A.Expr, lead: bool) -> Optional[List[Tuple[str, A.Expr]]]:
    """The side conditions under which ``u`` per iteration gives the claim's ``bound``.

    Why this is sound. Let ``K = T - d0``. A run that breaks ``cnt <= T`` ran at least ``K + 1``
    iterations (``cnt`` is ``d0`` plus the number of iterations) or never stopped; either way the
    loop was entered (``C`` after ``P``) and each of its first ``K`` iterations ended with ``C``
    (each ends surely: no ``while`` in ``B``). Each iteration draws afresh, and the ``iter`` proof
    bounds, from *every* state where ``C`` holds, the chance that it ends with ``C`` by ``u``; so,
    conditioning on the history before each one in turn, Pr[C after P, and C after each of the
    first K iterations] <= u0 · u^K, with ``u0 = u`` when ``lead`` (the ``start`` proof) and 1
    otherwise. A run that stops ends with ``!C``, after ``P`` or after an iteration started in a
    state with ``C``: ``start_exit`` and ``exit`` prove that ``C || Q`` then holds surely, so ``Q``
    holds. Hence Pr[fail] <= u^(K + lead) when ``K >= 0``; when ``K < 0`` the claim fails surely
    and ``bound >= 1`` is asked. With ``bound = exp(E)`` and ``u <= exp(e)`` (:func:`exponent`):
    ``(K + lead)·e <= E`` when ``K >= 0``, ``0 <= E`` when ``K < 0``."""
    if not (isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1):
        return None
    big = bound.args[0]
    k = A.Binary("-", lv.limit, lv.start)
    n = A.Binary("+", k, A.num(1)) if lead else k
    log_u = A.Call("log", (u,))
    e: A.Expr
    side: Optional[A.Expr]
    if any(x == log_u for x in A.walk(big)):  # the claim written pow(u, ...): compare logarithms
        e, side = log_u, A.Binary(">", u, A.num(0))
    else:
        e, side = exponent(u, divide_out(big, n))
    out = [] if side is None else [("POSITIVE", side)]
    runs, none = A.Binary(">=", k, A.num(0)), A.Binary("<", k, A.num(0))
    return out + [
        ("PRODUCT", _implies(runs, A.Binary("<=", A.Binary("*", n, e), big))),
        ("EMPTY", _implies(none, A.Binary("<=", A.num(0), big))),
    ]
