"""Mutants of a proved program: changes to its claim or its noise that make the claim false
(or at least no longer provable), for the soundness harness.

Each :class:`Mutant` is a program plus an optional ``--bound`` expression and an ``expect``:

* ``"false"`` — the mutation makes the claim false for some input (a sound prover must
  never say "proved"; :func:`soundness_harness.run_one` also tries to *show* it false by
  simulation);
* ``"may-hold"`` — the mutation may keep the claim true (less noise): "proved" is allowed,
  but then it must survive the simulation cross-check.

Operators (one mutant per occurrence, at most ``limit`` per operator):

==============  ==========================================================  ========
name            change                                                      expect
==============  ==========================================================  ========
bound/2         β → β/2                                                     false
bound/10        β → β/10                                                    false
bound=0         β → 0                                                       false
droplog         ``log(E)`` in ``ensures`` → 1                               false
tighten         ``L <= R`` in ``ensures`` → ``L <= R/2`` (``>=``: ``L/2 >= R``)  false
flip            ``<= < >= > == !=`` in ``ensures`` flipped                    false
noise*4         a noise scale s (``lap``/``exp``/``dlap``/``dexp``; ``gauss``
                variance ×16) → 4s                                          false
noise/4         the same scale → s/4                                        may-hold
bern*2          ``bern(p)`` → ``bern(min(1, 2*p))``                           may-hold
bern/2          ``bern(p)`` → ``bern(p/2)`` (a retry succeeds, a replica is right
                half as often: products of probabilities change)            may-hold
init+1          ``x := c`` (an integer literal, e.g. a counter's start) → c + 1  may-hold
step*2          ``x := x ± 1`` (a counter's step) → ``x := x ± 2``             may-hold
acc*2           ``x := x + e`` (an accumulator, e not a literal) → x + 2*e    may-hold
flag!           ``f := true`` / ``f := false`` → the other literal            may-hold
bound+1         a counted loop ``for i in lo..H`` / ``while (i < H)`` tests a
                local ``B := H`` instead, and its body ends ``B := B + 1``:
                the loop never ends (a run that never ends fails)          false
bound*100       the same, the body ending ``B := 100 * H``: the loop runs
                about 100·H times, not H (issue 31)                          may-hold
count-1         Rely's product ``exp(N * log(1 - r))`` in ``reliability`` or
                ``fails`` → ``exp((N - 1) * log(1 - r))`` (false when N is exact)  may-hold
==============  ==========================================================  ========

``flag!`` tests the facts resting on Boolean flags (a sampling behind a flag the loop only sets
is charged once; a ``done`` flag tied to a sentinel answer): with the flag cleared where it was
set, the release runs again and the answer moves. The three before it change what a loop computes (where it starts, which elements it visits, what it
adds up), so the facts the prover infers about loops (closed forms of accumulators, counter
progressions) are tested against simulation: such a mutant is usually false, and when it is
proved the simulator must not refute it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

from lang import ast as A
from lang.walk import free_vars

FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "!=", "!=": "=="}
NOISY = {"lap": 1, "exp": 1, "dlap": 1, "dexp": 1, "gauss": 1}


@dataclass
class Mutant:
    name: str
    program: A.Program
    bound: Optional[A.Expr]
    expect: str  # "false" | "may-hold"
    where: str = ""

    @property
    def label(self) -> str:
        return f"{self.program.name}:{self.name}" + (f"@{self.where}" if self.where else "")


def original_bound(prog: A.Program) -> A.Expr:
    """β as the prover reads it: ``fails``, else ``1 - reliability``, else 0."""
    if prog.fails is not None:
        return prog.fails
    if prog.reliability is not None:
        return A.Binary("-", A.num(1), prog.reliability)
    return A.num(0)


# ---------------------------------------------------------------------------- rewriting


def _rewrite_each(e: A.Node, pick: Callable[[A.Node], bool], change: Callable[[A.Node], A.Node]) -> Iterator[A.Node]:
    """Every copy of ``e`` in which exactly one node satisfying ``pick`` is replaced by ``change``."""
    if pick(e):
        yield change(e)
    for f in dataclasses.fields(e):
        if f.name == "pos":
            continue
        v = getattr(e, f.name)
        if isinstance(v, A.Node):
            for nv in _rewrite_each(v, pick, change):
                yield dataclasses.replace(e, **{f.name: nv})
        elif isinstance(v, tuple):
            for i, item in enumerate(v):
                if isinstance(item, A.Node):
                    for nv in _rewrite_each(item, pick, change):
                        yield dataclasses.replace(e, **{f.name: v[:i] + (nv,) + v[i + 1 :]})


def _ensures_mutants(prog: A.Program, pick, change, limit) -> List[A.Program]:
    out = []
    for k, clause in enumerate(prog.ensures):
        for new in _rewrite_each(clause, pick, change):
            ens = prog.ensures[:k] + (new,) + prog.ensures[k + 1 :]
            out.append(dataclasses.replace(prog, ensures=ens))
            if len(out) >= limit:
                return out
    return out


def _is_log(n) -> bool:
    return isinstance(n, A.Call) and n.func == "log"


def _is_cmp(n) -> bool:
    return isinstance(n, A.Binary) and n.op in FLIP


def _tighten(n: A.Binary) -> A.Binary:
    half = A.Num(A.num(1).value / 2, False)
    if n.op in ("<=", "<"):
        return dataclasses.replace(n, right=A.Binary("*", half, n.right))
    return dataclasses.replace(n, left=A.Binary("*", half, n.left))


def _is_noisy_sample(n) -> bool:
    return isinstance(n, A.Sample) and n.dist.func in NOISY and len(n.dist.args) == 2


def _scale_noise(factor) -> Callable:
    def change(s: A.Sample) -> A.Sample:
        m, scale = s.dist.args
        f = factor * factor if s.dist.func == "gauss" else factor  # gauss takes the variance
        new = A.Binary("*", A.Num(A.num(1).value * f, False), scale)
        return dataclasses.replace(s, dist=dataclasses.replace(s.dist, args=(m, new)))

    return change


def mutants(prog: A.Program, limit: int = 3) -> List[Mutant]:
    """Every mutant of ``prog`` (see the module docstring), at most ``limit`` per operator."""
    from fractions import Fraction

    beta = original_bound(prog)
    out: List[Mutant] = []
    for name, b in (
        ("bound/2", A.Binary("/", beta, A.num(2))),
        ("bound/10", A.Binary("/", beta, A.num(10))),
        ("bound=0", A.num(0)),
    ):
        if not (isinstance(beta, A.Num) and beta.value == 0):
            out.append(Mutant(name, prog, b, "false"))
    for i, p in enumerate(_ensures_mutants(prog, _is_log, lambda n: A.num(1), limit)):
        out.append(Mutant("droplog", p, None, "false", str(i)))
    for i, p in enumerate(_ensures_mutants(prog, lambda n: _is_cmp(n) and n.op not in ("==", "!="), _tighten, limit)):
        out.append(Mutant("tighten", p, None, "false", str(i)))
    for i, p in enumerate(_ensures_mutants(prog, _is_cmp, lambda n: dataclasses.replace(n, op=FLIP[n.op]), limit)):
        out.append(Mutant("flip", p, None, "false", str(i)))
    for tag, factor, expect in (("noise*4", Fraction(4), "false"), ("noise/4", Fraction(1, 4), "may-hold")):
        bodies = list(_rewrite_each(prog.body, _is_noisy_sample, _scale_noise(factor)))[:limit]
        for i, body in enumerate(bodies):
            out.append(Mutant(tag, dataclasses.replace(prog, body=body), None, expect, str(i)))
    bodies = list(_rewrite_each(prog.body, _is_bern, _double_bern))[:limit]
    for i, body in enumerate(bodies):
        out.append(Mutant("bern*2", dataclasses.replace(prog, body=body), None, "may-hold", str(i)))
    bodies = list(_rewrite_each(prog.body, _is_bern, _halve_bern))[:limit]
    for i, body in enumerate(bodies):
        out.append(Mutant("bern/2", dataclasses.replace(prog, body=body), None, "may-hold", str(i)))
    for tag, pick, change in (
        ("init+1", _is_int_init, _init_plus_one),
        ("step*2", _is_unit_step, _double_step),
        ("acc*2", _is_accumulation, _double_increment),
        ("flag!", _is_flag_write, _flip_flag),
    ):
        bodies = list(_rewrite_each(prog.body, pick, change))[:limit]
        for i, body in enumerate(bodies):
            out.append(Mutant(tag, dataclasses.replace(prog, body=body), None, "may-hold", str(i)))
    beta_lt_1 = not (isinstance(beta, A.Num) and beta.value >= 1)
    for tag, rewrite, expect in (
        ("bound+1", lambda b, h: A.Binary("+", b, A.num(1)), "false" if beta_lt_1 else "may-hold"),
        ("bound*100", lambda b, h: A.Binary("*", A.num(100), h), "may-hold"),
    ):
        bodies = list(_rewrite_each(prog.body, _is_counted_loop, _rewrite_bound(rewrite)))[:limit]
        for i, body in enumerate(bodies):
            out.append(Mutant(tag, dataclasses.replace(prog, body=body), None, expect, str(i)))
    for i, p in enumerate(_count_mutants(prog)[:limit]):
        out.append(Mutant("count-1", p, None, "may-hold", str(i)))
    return out


def _product_count(e: A.Node) -> Optional[A.Expr]:
    """N of Rely's product ``exp(N * log(1 - r))`` (either factor order), else None."""
    if isinstance(e, A.Call) and e.func == "exp" and len(e.args) == 1 and isinstance(e.args[0], A.Binary):
        arg = e.args[0]
        if arg.op == "*":
            for log, count in ((arg.right, arg.left), (arg.left, arg.right)):
                if isinstance(log, A.Call) and log.func == "log":
                    return count
    return None


def _count_mutants(prog: A.Program) -> List[A.Program]:
    """Rely's product claim (issue 35) with one unreliable operation fewer: N → N - 1 in
    ``exp(N * log(1 - r))`` of ``reliability`` or ``fails`` (false when N is the exact count)."""

    def fewer(e: A.Node) -> A.Node:
        arg = e.args[0]
        count = _product_count(e)
        less = A.Binary("-", count, A.num(1))
        new = A.Binary("*", less, arg.right) if arg.left is count else A.Binary("*", arg.left, less)
        return dataclasses.replace(e, args=(new,))

    out = []
    for field in ("reliability", "fails"):
        e = getattr(prog, field)
        if e is None:
            continue
        for new in _rewrite_each(e, lambda n: _product_count(n) is not None, fewer):
            out.append(dataclasses.replace(prog, **{field: new}))
    return out


LOOP_BOUND = "loopBound_"  # the local that holds a mutated loop's bound


def _loop_bound(n) -> Optional[A.Expr]:
    """The bound H of ``for i in lo..H`` or ``while (i < H)`` (``<=``), else None."""
    if isinstance(n, A.For):
        return n.hi
    if isinstance(n, A.While) and isinstance(n.cond, A.Binary) and n.cond.op in ("<", "<="):
        if isinstance(n.cond.left, A.Var):
            return n.cond.right
    return None


def _is_counted_loop(n) -> bool:
    h = _loop_bound(n)
    return h is not None and LOOP_BOUND not in set(free_vars(h))


def _rewrite_bound(new_value: Callable[[A.Expr, A.Expr], A.Expr]) -> Callable:
    """``B := H; <the loop testing B, its body ending B := new_value(B, H)>``."""

    def change(n):
        h = _loop_bound(n)
        b = A.Var(LOOP_BOUND)
        stmts, write = tuple(n.body.stmts), (A.Assign((b,), new_value(b, h)),)
        # a while loop's counter step stays last (the shape the concentration rules look for)
        body = A.Block(stmts + write if isinstance(n, A.For) else stmts[:-1] + write + stmts[-1:])
        if isinstance(n, A.For):
            loop = dataclasses.replace(n, hi=b, body=body)
        else:
            loop = dataclasses.replace(n, cond=dataclasses.replace(n.cond, right=b), body=body)
        return A.Block((A.Assign((b,), h), loop))

    return change


def _var_assign(n) -> bool:
    return isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var)


def _is_flag_write(n) -> bool:
    return _var_assign(n) and isinstance(n.value, A.BoolLit)


def _flip_flag(n: A.Assign) -> A.Assign:
    return dataclasses.replace(n, value=A.BoolLit(not n.value.value))


def _is_int_init(n) -> bool:
    return _var_assign(n) and isinstance(n.value, A.Num) and n.value.is_int


def _init_plus_one(n: A.Assign) -> A.Assign:
    return dataclasses.replace(n, value=A.num(n.value.value + 1))


def _is_unit_step(n) -> bool:
    v = getattr(n, "value", None)
    return (
        _var_assign(n)
        and isinstance(v, A.Binary)
        and v.op in ("+", "-")
        and v.left == n.targets[0]
        and v.right == A.num(1)
    )


def _double_step(n: A.Assign) -> A.Assign:
    return dataclasses.replace(n, value=dataclasses.replace(n.value, right=A.num(2)))


def _is_accumulation(n) -> bool:
    v = getattr(n, "value", None)
    return (
        _var_assign(n)
        and isinstance(v, A.Binary)
        and v.op == "+"
        and v.left == n.targets[0]
        and not isinstance(v.right, A.Num)
    )


def _double_increment(n: A.Assign) -> A.Assign:
    return dataclasses.replace(n, value=dataclasses.replace(n.value, right=A.Binary("*", A.num(2), n.value.right)))


def _is_bern(n) -> bool:
    return isinstance(n, A.Sample) and n.dist.func == "bern" and len(n.dist.args) == 1


def _halve_bern(s: A.Sample) -> A.Sample:
    new = A.Binary("/", s.dist.args[0], A.num(2))
    return dataclasses.replace(s, dist=dataclasses.replace(s.dist, args=(new,)))


def _double_bern(s: A.Sample) -> A.Sample:
    p = s.dist.args[0]
    new = A.Call("min", (A.num(1), A.Binary("*", A.num(2), p)))
    return dataclasses.replace(s, dist=dataclasses.replace(s.dist, args=(new,)))
