"""Sequential composition by products: a loop as a *stage* whose failure flag gates what follows.

A stage is a ``for c in lo..hi { B }`` loop that raises a Boolean flag ``v`` (``v := v || e``,
``if (…) { v := true; }``) and whose continuation — the expected failure F of everything after
the loop — reads the loop's state only through ``v``. Write ``T = F[v := true]`` (what follows
when the stage failed: a retry, a second pass) and ``F0 = F[v := false]``. If each iteration
raises the flag with probability at most ``p(c)`` — computed from B by whichever rule the
pre-expectation calculus has for B's samples (a union bound over B's coins, a uniform hash's
share of hits, …) — then the iterations left raise it with probability at most
``S(c) = sum(j in c..hi: p(j))`` (the union bound over iterations; ``(hi - c)·p`` when p does
not read c, a count that depends on the data when p reads inputs through c, e.g. ``x[c] > 0 ?
r : 0``), and the loop's expected failure is at most

    ``v ? T : S(c)·T + F0``                                   (the *product* core)

i.e. Pr[stage fails and then the rest fails] <= Pr[stage fails]·Pr[rest fails | stage failed]
(Pr[A and B] <= Pr[A]·Pr[B | A]) when T does not depend on how the stage failed. For a flag
that marks *success* (a repeated spot check: ``found``, failure when every try misses), the
independent repetitions multiply: ``v ? T : exp(-S(c))·F0 + T`` uses (1 - p) <= exp(-p) per
iteration.

Why this is sound: these cores are only *proposals* to the expected-failure engine
(:mod:`tamp.prover.expectation.prove`): each one is accepted only when the solver proves its
INDUCT obligation (one more iteration stays below it) and the loop's TERM obligation, and the
program's bound only when BUDGET holds — the same obligations ``tamp check-proof`` rebuilds
from the source and the certificate's core (:mod:`tamp.certificate.exp_rules`), with no code of
this module. A wrong proposal is rejected by the solver, never believed.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Set

from lang import ast as A
from lang.walk import free_vars, written_vars
from tamp.prover.base.exprs import subst

ONE = A.num(1)
ZERO = A.num(0)

#: the chance that a loop-free statement ends with a Boolean flag raised, from a state where it
#: is down (an upper pre-expectation of the flag's indicator, the flag set to false in it), or
#: None outside the calculus's rules
Chance = Callable[[A.Stmt, str], Optional[A.Expr]]


def raised_flags(body: A.Stmt, types) -> List[str]:
    """The Boolean variables ``body`` assigns only by raising them: ``v := true`` or ``v := v ||
    e`` (never lowered inside the loop)."""
    flags: List[str] = []
    bad: Set[str] = set()
    for n in A.walk(body):
        if isinstance(n, A.Sample):
            for t in n.targets:
                bad.add(A.target_name(t))
        if not isinstance(n, A.Assign) or len(n.targets) != 1 or not isinstance(n.targets[0], A.Var):
            continue
        v = n.targets[0].name
        if types.get(v) != A.BOOL:
            continue
        val = n.value
        raises = val == A.BoolLit(True) or (
            isinstance(val, A.Binary) and val.op == "||" and A.Var(v) in (val.left, val.right)
        )
        if raises:
            if v not in flags:
                flags.append(v)
        else:
            bad.add(v)
    return [v for v in flags if v not in bad]


def iterations_sum(p: A.Expr, c: str, lo_c: A.Expr, hi: A.Expr, inclusive: bool, taken: Set[str]) -> A.Expr:
    """``sum(j in c..hi: p[c := j])``, or ``(hi - c)·p`` (``+ 1`` for an inclusive range) when
    p does not read the counter ``c``: the union bound over the iterations left."""
    if c not in set(free_vars(p)):
        left: A.Expr = A.Binary("-", hi, lo_c)
        if inclusive:
            left = A.Binary("+", left, ONE)
        return A.Binary("*", left, p)
    j = c + "$s"
    while j in taken:
        j += "$"
    if isinstance(p, A.Cond) and c not in set(free_vars(p.then)) and p.other == ZERO:
        # ``test(c) ? q : 0``: q times the number of iterations left that pass the test (a
        # count of the data, as a claim writes it: r * sum(j in 0..n: x[j] > 0 ? 1 : 0))
        count = A.Sum(j, lo_c, hi, inclusive, A.Cond(subst(p.cond, {c: A.Var(j)}), ONE, ZERO))
        return A.Binary("*", p.then, count)
    return A.Sum(j, lo_c, hi, inclusive, subst(p, {c: A.Var(j)}))


def stage_cores(s, f: A.Expr, types, chance: Chance) -> List[A.Expr]:
    """The product cores of the loop ``s`` (a ``for``) with continuation ``f``, one or two per
    raised flag the continuation reads (see the module docstring); [] when ``s`` is not a stage."""
    if not isinstance(s, A.For):
        return []
    changed = written_vars(s.body) | {s.var}
    if s.var in written_vars(s.body):
        return []
    out: List[A.Expr] = []
    fv_f = set(free_vars(f))
    taken = fv_f | {n.var for n in A.walk(f) if isinstance(n, (A.Quant, A.Sum))}
    for v in raised_flags(s.body, types):
        if v not in fv_f:
            continue
        t = subst(f, {v: A.BoolLit(True)})
        f0 = subst(f, {v: A.BoolLit(False)})
        if (set(free_vars(t)) | set(free_vars(f0))) & changed:
            continue  # what follows reads more of the stage than its flag
        p = chance(s.body, v)
        if p is None:
            continue
        if set(free_vars(p)) & (changed - {s.var}):
            continue
        sums = iterations_sum(p, s.var, A.Var(s.var), s.hi, s.inclusive, taken | set(free_vars(p)))
        fails = A.Binary("+", A.Binary("*", sums, t), f0)  # the flag is the stage's failure
        misses = A.Binary("+", A.Binary("*", A.Call("exp", (A.Unary("-", sums),)), f0), t)  # success
        out += [A.Cond(A.Var(v), t, fails), A.Cond(A.Var(v), t, misses)]
    return out
