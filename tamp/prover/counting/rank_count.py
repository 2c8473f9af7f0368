"""Ranking functions as iteration counts: the failure bound κ of a loop without a counter.

A loop whose termination argument is a rank r (:class:`tamp.prover.loops.termination.Ranking`: r > 0
while the guard g holds, and every iteration lowers r by at least 1 or makes g false) runs at
most R₀ iterations, R₀ the rank on entry (``hi - lo`` of binary search: ``R - 0``). Its κ at
the head, for a loop whose iterations cost at most c each (c reads nothing the loop writes), is

    κ(h) = κ_in + c · min(R₀ - r + (g ? 0 : 1), R₀)

— the iterations done so far, counted by how far the rank fell (an iteration that makes the
guard false without lowering the rank, insertion sort's ``go := false``, counts through the
``g ? 0 : 1``), never more than R₀. After the loop κ is ``κ_in + c · R₀``, a value over what the
loop leaves unchanged, so the code after it (an outer loop summing R₀ = i over its counter) sees
no loop variable.

The body's nodes get κ *backwards* from the head (:func:`backward_kappa`): κ at the latch is
κ(h) over the state there, pushed back through each statement (a substitution through an
assignment, the cost subtracted at a sampling) and joined at branches by ``c ? κ₁ : κ₂`` when
the branch condition reads no sampled value, else by ``min``. Nothing here is trusted: every
node's κ enters the failure automaton and :mod:`.check` verifies STEP on every edge — the entry
edge (R₀ is the rank there), the guard edge into the body (where the rank's decrease over one
whole iteration is what makes κ(h) + cost <= κ(next)), and the exit edge (κ(h) <= κ_in + c · R₀).
So a wrong rank, a wrong R₀ or a wrong c makes the proof fail, never makes it wrong; and since
the κ labels are part of the certificate, ``tamp check-proof`` re-checks all of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Set

import networkx as nx

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import entry_value, loop_body
from tamp.prover.base.exprs import ZERO, conjuncts, not_, subst
from tamp.prover.counting.recurrence import written as written_in


class NoRankKappa(Exception):
    """κ of a ranked loop cannot be written down (the message says why)."""


@dataclass(frozen=True)
class RankCount:
    """The iteration count of the loop at ``head``: ``rank`` over the state at the head, ``start``
    its value on entry (over what the loop leaves unchanged), ``guard`` the loop condition."""

    head: int
    rank: A.Expr
    start: A.Expr
    guard: A.Expr
    log: bool = False  # count by the halvings of the rank (see :meth:`measure`)

    def measure(self, x: A.Expr) -> A.Expr:
        """What a rank x still allows: x itself, or with ``log``, the iterations a rank at least
        halved by each of them allows, ``x >= 1 ? log(2 * x) / log(2) : 0`` (1 + log₂ x; the
        form whose ``log-mul`` and ``log-mono`` lemma instances give log₂ x' + 1 <= log₂ x when
        x >= 2 x')."""
        if not self.log:
            return x
        two = A.Num(Fraction(2), False)  # a real 2: ``2 * x`` a real product, as log-mul reads it
        lg = A.Binary("/", A.Call("log", (A.Binary("*", two, x),)), A.Call("log", (two,)))
        return A.Cond(A.Binary(">=", x, A.num(1)), lg, ZERO)

    def total(self) -> A.Expr:
        """The most iterations the loop runs: the measure of the entry rank."""
        return self.measure(self.start)

    def done(self) -> A.Expr:
        """The iterations done so far, at most :meth:`total`: ``min(total - measure(rank) + (g ?
        0 : 1), total)``."""
        fell = A.Binary("-", self.total(), self.measure(self.rank))
        left = A.Cond(self.guard, ZERO, A.num(1))
        return A.Call("min", (A.Binary("+", fell, left), self.total()))


def rank_count(cfa, head: int, rank: A.Expr, guard: A.Expr) -> Optional[RankCount]:
    """The :class:`RankCount` of a loop with rank ``rank`` when its entry value can be read off the
    straight-line code before the loop (each variable the loop writes replaced by the value it is
    assigned there, which must read nothing the loop writes); None otherwise."""
    body = loop_body(cfa, head)
    writes = written_in(cfa, body)
    m: Dict[str, A.Expr] = {}
    for x in sorted(set(free_vars(rank)) & writes):
        v = entry_value(cfa, head, body, x, unchanged=writes, compose=True)
        if v is None or set(free_vars(v)) & writes:
            return None
        m[x] = v
    return RankCount(head, rank, subst(rank, m), guard)


def rank_counts(cfa, loops: Dict[int, dict], arguments) -> Dict[int, RankCount]:
    """For each loop whose termination argument (``arguments``, from
    :func:`tamp.prover.loops.termination.prove_termination`) is a ranking, its :class:`RankCount`
    (when its entry value is known)."""
    out: Dict[int, RankCount] = {}
    for arg in arguments:
        h = arg.head
        lp = loops.get(h)
        rank = getattr(arg, "rank", None)
        if lp is None or rank is None or lp.get("cond") is None:
            continue
        rc = rank_count(cfa, h, rank, lp["cond"])
        if rc is not None:
            out[h] = rc
    return out


# ---------------------------------------------------------------------------- backward κ


def _wp_kappa(st, k: A.Expr, cost: A.Expr) -> A.Expr:
    """κ before ``st`` given κ ``k`` after it: κ_before + cost(st) <= κ_after, exactly."""
    if isinstance(st, (A.Assume, A.Skip)):
        return k
    names = {A.target_name(t) for t in getattr(st, "targets", ())}
    if isinstance(st, A.Sample):
        if names & set(free_vars(k)):
            raise NoRankKappa("a sampled variable occurs in the failure bound of a ranked loop")
        return A.Binary("-", k, cost) if cost != ZERO else k
    if isinstance(st, A.Assign):
        if not names & set(free_vars(k)):
            return k
        if len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
            return subst(k, {st.targets[0].name: st.value})
        raise NoRankKappa("an element write changes an array the failure bound reads")
    raise NoRankKappa("a statement the failure bound cannot be pushed back through")


def _sampled(cfa, body: Set[int]) -> Set[str]:
    out: Set[str] = set()
    for u, v, _k, d in cfa.edges():
        if u in body and v in body and isinstance(d["stmt"], A.Sample):
            out |= {A.target_name(t) for t in d["stmt"].targets}
    return out


def backward_nodes(cfa, head: int) -> Set[int]:
    """The nodes of the loop at ``head`` that get κ backwards: those not in an inner loop (nor its
    head) from which every edge leads to such a node or back to ``head``. The others (the path
    from the head into and through inner loops) keep the forward κ of :mod:`.kappa`; STEP on
    the edges from a forward node to a backward one is where the two meet."""
    body = loop_body(cfa, head)
    inner: Set[int] = set()
    for g in cfa.loop_heads:
        if g != head and g in body:
            inner |= loop_body(cfa, g)
    dag = nx.DiGraph()
    dag.add_nodes_from(body)
    for u, v, _k, d in cfa.edges():
        if u in body and v in body and not d.get("back"):
            dag.add_edge(u, v)
    out: Set[int] = set()
    for n in reversed(list(nx.topological_sort(dag))):
        if n == head or n in inner:
            continue
        nexts = [(v, d) for _u, v, _k, d in cfa.out_edges(n)]
        if nexts and all((v == head and d.get("back")) or v in out for v, d in nexts):
            out.add(n)
    return out


def unit_cost(per: A.Expr, writes: Set[str]) -> Optional[A.Expr]:
    """What one unit of the rank's fall may cost, from the cost ``per`` of one iteration: ``per``
    itself when it reads nothing the loop writes, else its loop-invariant factor (``r`` of
    ``r * (h - 0)`` when an iteration spends r per unit of a fall h, a pairwise reduction). The
    choice is only a proposal: STEP checks that every iteration's cost fits the fall."""
    if not set(free_vars(per)) & writes:
        return per
    if isinstance(per, A.Binary) and per.op == "*":
        for a, b in ((per.left, per.right), (per.right, per.left)):
            if not set(free_vars(a)) & writes and set(free_vars(b)) & writes:
                return a
    return None


def backward_kappa(cfa, rc: RankCount, k_head: A.Expr, axioms: Dict) -> Dict[int, A.Expr]:
    """κ at the :func:`backward_nodes` of ``rc``'s loop, pushed back from ``k_head`` (κ at the
    head) at the latches (see the module docstring)."""
    h = rc.head
    body = loop_body(cfa, h)
    back = backward_nodes(cfa, h)
    sampled = _sampled(cfa, body)
    dag = nx.DiGraph()
    dag.add_nodes_from(back)
    outs: Dict[int, List] = {n: [] for n in back}
    for u, v, key, d in cfa.edges():
        if u in back:
            outs[u].append((v, key, d))
            if v in back and not d.get("back"):
                dag.add_edge(u, v)
    at: Dict[int, A.Expr] = {}
    for n in reversed(list(nx.topological_sort(dag))):
        vals = []
        for v, key, d in outs[n]:
            after = k_head if v == h else at.get(v)
            if after is None:
                raise NoRankKappa("a path through the loop body does not return to its head")
            ax = axioms.get((n, v, key))
            cost = ax.cost if ax is not None and isinstance(d["stmt"], A.Sample) else ZERO
            vals.append((d["stmt"], _wp_kappa(d["stmt"], after, cost)))
        if not vals:
            raise NoRankKappa("a node of the loop body has no way on")
        at[n] = _join(vals, sampled)
    return at


def _join(vals, sampled: Set[str]) -> A.Expr:
    """κ at a node with several out-edges: it must not exceed any of theirs. A test ``c`` /
    ``!c`` that reads no sampled value picks the arm (``c ? κ₁ : κ₂``); otherwise the minimum."""
    if len(vals) == 1:
        return vals[0][1]
    if len(vals) == 2:
        (s1, k1), (s2, k2) = vals
        if k1 == k2:
            return k1
        if (
            isinstance(s1, A.Assume)
            and isinstance(s2, A.Assume)
            and s2.cond == not_(s1.cond)
            and not set(free_vars(s1.cond)) & sampled
        ):
            return A.Cond(s1.cond, k1, k2)
    out = vals[0][1]
    for _s, k in vals[1:]:
        out = out if out == k else A.Call("min", (out, k))
    return out


def head_term(rc: RankCount, per: A.Expr) -> A.Expr:
    """The loop's part of κ at its head: ``per · done`` (:meth:`RankCount.done`)."""
    return A.Binary("*", per, rc.done())


def exit_term(rc: RankCount, per: A.Expr) -> A.Expr:
    """The loop's part of κ after it: ``per · total``."""
    return A.Binary("*", per, rc.total())


def count_variants(loops: Dict[int, dict]) -> List[Dict[int, dict]]:
    """The ways to count the loops of ``loops`` (the loop prover's table), to try in order until
    one's κ can be written and fits the bound:

    * loops whose counter moves on only some iterations (``k := k - 1`` but ``go := false`` on
      the other path: the counter does not count the iterations that clear the flag) counted by
      their rank (``rank_alt``);
    * ``loops`` as they are (those loops by their counter);
    * every ranked loop counted by the halvings of its rank (binary search: 1 + log₂ R
      iterations, not R)."""
    out: List[Dict[int, dict]] = []
    alt = {h: ({**lp, "rank": lp["rank_alt"]} if lp.get("rank_alt") is not None else lp) for h, lp in loops.items()}
    if any(lp.get("rank_alt") is not None for lp in loops.values()):
        out.append(alt)
    out.append(loops)
    if any(lp.get("rank") is not None for lp in alt.values()):
        out.append(
            {
                h: (lp if lp.get("rank") is None else {**lp, "rank": dataclasses.replace(lp["rank"], log=True)})
                for h, lp in alt.items()
            }
        )
    return out


# ---------------------------------------------------------------------------- λ candidates


def _equated(post: List[A.Expr]) -> List[tuple]:
    """The variable pairs (a, b) of postcondition conjuncts ``a == b``."""
    return [
        (c.left.name, c.right.name)
        for c in post
        if isinstance(c, A.Binary) and c.op == "==" and isinstance(c.left, A.Var) and isinstance(c.right, A.Var)
    ]


def _steps(cfa, head: int, body: Set[int]) -> List[str]:
    """The variables every path through the (inner-loop-free) body raises by exactly 1
    (``k := k + 1``; no other write): they count the iterations."""
    one = A.num(1)
    counts: Dict[str, List[int]] = {}
    others: Set[str] = set()
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if not (u in body and v in body) or not isinstance(st, (A.Assign, A.Sample)):
            continue
        for t in st.targets:
            x = A.target_name(t)
            if (
                isinstance(st, A.Assign)
                and st.targets == (A.Var(x),)
                and st.value in (A.Binary("+", A.Var(x), one), A.Binary("+", one, A.Var(x)))
            ):
                counts.setdefault(x, [])
            else:
                others.add(x)
    out = []
    for x in sorted(set(counts) - others):
        g = nx.DiGraph()
        for u, v, _k, d in cfa.edges():
            st = d["stmt"]
            if u in body and v in body and not (isinstance(st, A.Assign) and st.targets == (A.Var(x),)):
                g.add_edge(u, ("latch", v) if d.get("back") else v)
        if not (head in g and ("latch", head) in g and nx.has_path(g, head, ("latch", head))):
            out.append(x)
    return out


def _subterms(e: A.Expr):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(c for c in A.children(x) if isinstance(c, A.Expr))


def _indexing(e: A.Expr) -> Set[str]:
    """The variables read in the index of an array access in ``e``."""
    return {x for t in _subterms(e) if isinstance(t, A.Index) for x in set(free_vars(t.index))}


def _transcendental(e: A.Expr) -> bool:
    return any(isinstance(t, A.Call) and t.func in ("log", "exp", "sqrt") for t in _subterms(e))


def rank_candidates(cfa, loops: Dict[int, dict], post: List[A.Expr]) -> List[A.Expr]:
    """Candidate invariants for ranked loops (Houdini keeps only inductive ones):

    * the rank never below 0 (``lo <= hi`` for ``hi - lo``) nor above its entry value;
    * ``!a ==> c`` for each flag a (``go`` or ``!found``) of the guard and conjunct c of the
      postcondition: when the loop stops because the flag changed, c already holds;
    * a variable raised by 1 on every iteration (``k := k + 1``, from k₀) counts at most the
      iterations the rank fell: ``k - k₀ + rank <= R₀`` (so ``k <= R`` after a search of width R);
    * each postcondition conjunct with a variable the loop writes shifted by the rank, ``x + r``
      (``cdf[lo + w] >= t`` kept in the loop is ``cdf[lo] >= t`` once w = 0; ``lo + (hi - lo) <= n``
      is ``lo <= n`` once the rank is 0);
    * when the postcondition equates two variables the loop drives together (``lo == hi`` after
      binary search), each other conjunct with one of them written as the other (``cdf[lo] >= t``
      at the exit is ``cdf[hi] >= t`` kept in the loop)."""
    out: List[A.Expr] = []
    ranked = [lp.get("rank") or lp["rank_alt"] for lp in loops.values() if lp.get("rank") or lp.get("rank_alt")]
    for rc in ranked:
        out.append(A.Binary(">=", rc.rank, ZERO))
        out.append(A.Binary("<=", rc.rank, rc.start))
        body = loop_body(cfa, rc.head)
        writes = written_in(cfa, body)
        for x in _steps(cfa, rc.head, body):
            x0 = entry_value(cfa, rc.head, body, x, unchanged=writes)
            if x0 is not None:
                done = A.Binary("-", A.Var(x), x0)
                out.append(A.Binary("<=", A.Binary("+", done, rc.rank), rc.start))
        for a in conjuncts(rc.guard):  # the loop left because this flag was cleared (set)
            if isinstance(a, A.Var) or (isinstance(a, A.Unary) and a.op == "!" and isinstance(a.operand, A.Var)):
                for c in post:
                    out.append(A.Binary("==>", not_(a), c))
        numeric = {x for x in writes if getattr(cfa.types.get(x), "name", None) in ("int", "real")}
        for c in post:
            # in a conjunct with log/exp only an index is shifted (a shifted bound on a log term,
            # ``k + w <= log(R)``, is rarely inductive and costs the solver lemma rounds)
            shift = set(free_vars(c)) if not _transcendental(c) else _indexing(c)
            for x in sorted(shift & numeric):
                out.append(subst(c, {x: A.Binary("+", A.Var(x), rc.rank)}))
    if not ranked:
        return out
    names = set().union(*(set(free_vars(rc.rank)) for rc in ranked))
    for a, b in _equated(post):
        if not {a, b} <= names:
            continue
        for c in post:
            for x, y in ((a, b), (b, a)):
                if x in set(free_vars(c)):
                    d = subst(c, {x: A.Var(y)})
                    if d != c and d not in out:
                        out.append(d)
    return out
