"""Candidate loop invariants for *scans*: loops that compare the element at the counter with a
running best (argmax over a noisy histogram, noisy top-k, the first index above a threshold).

A scan ``while (k < n) { if (h[k] > h[b]) { b := k; } k := k + 1; }`` keeps two facts the
templates of :mod:`.invariants` do not propose, because neither comes from a sampling's axiom:

* the branch's comparison *accumulated* over the elements scanned so far: after the iterations
  ``lo..k`` every one of them lost (or won) the comparison — ``forall j in lo..k: h[j] <= h[b]``
  — for each atom of a branch condition in the body that reads an array at the counter, with
  both of its sides (the atom and its negation, ``<`` and ``<=`` forms), from the counter's start
  and from 0 (``b := 0; k := 1`` has compared ``h[0]`` with itself);
* the range of a *copy of the counter*: ``b := k`` in the body gives ``lo <= b``, ``b < k``
  (and ``b <= k``) and ``b < n`` (n the counter's final value) for lo the counter's start or
  ``b``'s value on entry — what an instance ``h[b]`` of a fact over the range needs (``b < n``
  also when b starts ahead of the counter, as the runner-up of a top-2 scan does).

A one-pass top-k scan keeps several *ranked* copies: ``if (b1 == -1 || a[i] > a[b1]) { b2 := b1;
b1 := i; } else { if (b2 == -1 || a[i] > a[b2]) { b2 := i; } }``. A copy is any variable assigned
the counter or another copy (``b2 := b1``). Its facts hold over the iterations *except* those the
better-ranked copies hold: ``forall j in lo..i: j != b1 ==> a[j] <= a[b2]`` (the comparison's
literals are taken apart from ``||``/``&&``, so the sentinel test ``b1 == -1`` does not hide
``a[i] > a[b1]``), guarded by every set of at most two of the better copies and by all of them.
And a copy with r better ones has left its sentinel once more than r iterations are done:
``lo + r < i ==> lo <= b2`` (:func:`ranked_candidates`; the invariants module proposes these
first, so that their forms pushed back into the body are not cut off).

A *filtered* running best compares only the elements a filter lets through, ``if (!taken[j] &&
(b == -1 || a > best)) { b := j; best := a; }`` (peeling top-k with fresh noise per round): every
element let through so far moved b off its sentinel, the accumulated facts hold for those
elements only, and the facts carried to b hold once it left its sentinel
(:func:`filtered_candidates`).

Only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies the labels.
"""

from __future__ import annotations

import itertools
from typing import Dict, List, Set

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import entry_value
from tamp.prover.base.exprs import and_all, conjuncts, not_, plus, subst
from tamp.prover.counting.recurrence import body_copies, written

_FLIP = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
_WEAK = {"<": "<=", ">": ">="}


def _sides(atom: A.Expr) -> List[A.Expr]:
    """``atom`` and its negation as comparisons, each also with ``<``/``>`` weakened."""
    out = [atom]
    if isinstance(atom, A.Binary) and atom.op in _FLIP:
        out.append(A.Binary(_FLIP[atom.op], atom.left, atom.right))
    else:
        out.append(not_(atom))
    out += [A.Binary(_WEAK[x.op], x.left, x.right) for x in list(out) if isinstance(x, A.Binary) and x.op in _WEAK]
    return out


def _reads_at(e: A.Expr, name: str) -> bool:
    """Whether ``e`` reads an array at an index mentioning ``name``."""
    return any(isinstance(x, A.Index) and name in set(free_vars(x.index)) for x in A.walk(e))


def _literals(e: A.Expr) -> List[A.Expr]:
    """The literals of a condition, taken apart through ``&&``, ``||`` and ``!`` (negations pushed
    to the comparisons: ``!(x > y)`` is ``x <= y``)."""
    if isinstance(e, A.Unary) and e.op == "!":
        inner = e.operand
        if isinstance(inner, A.Unary) and inner.op == "!":
            return _literals(inner.operand)
        if isinstance(inner, A.Binary) and inner.op in ("&&", "||"):
            return _literals(not_(inner.left)) + _literals(not_(inner.right))
        if isinstance(inner, A.Binary) and inner.op in _FLIP:
            return [A.Binary(_FLIP[inner.op], inner.left, inner.right)]
        return [e]
    if isinstance(e, A.Binary) and e.op in ("&&", "||"):
        return _literals(e.left) + _literals(e.right)
    return [e]


def _counter_copies(cfa, body, name: str) -> Dict[str, Set[str]]:
    """The variables the loop body assigns the counter or (transitively) another such copy, each
    with the copies it takes over (``b2 := b1``: b2 ranks below b1; its *better* copies)."""
    better: Dict[str, Set[str]] = {}
    grew = True
    while grew:
        grew = False
        for u, v, _k, d in cfa.edges():
            st = d["stmt"]
            if u not in body or v not in body or d.get("back") or not isinstance(st, A.Assign):
                continue
            t, val = st.targets[0], st.value
            if not (isinstance(t, A.Var) and isinstance(val, A.Var) and t.name != name):
                continue
            if val.name == name and t.name not in better:
                better[t.name] = set()
                grew = True
            elif val.name in better and val.name != t.name:
                new = better.setdefault(t.name, set()) | {val.name} | better[val.name]
                if new != better[t.name]:
                    better[t.name] = new - {t.name}
                    grew = True
    return better


def _reads_at_copy(e: A.Expr, x: str) -> bool:
    """Whether ``e`` reads an array at exactly the copy ``x`` (``a[b2]``)."""
    return any(isinstance(n, A.Index) and n.index == A.Var(x) for n in A.walk(e))


def _atoms(cfa, body, name: str, literals: bool) -> List[A.Expr]:
    """The atoms of the loop body's branch conditions that read an array at the counter: the
    conditions' conjuncts, with ``literals`` also their literals (:func:`_literals`)."""
    atoms: List[A.Expr] = []
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if u not in body or v not in body or d.get("back") or not isinstance(st, A.Assume):
            continue
        for c in conjuncts(st.cond):
            parts = [c] + ([x for x in _literals(c) if x != c] if literals else [])
            atoms += [a for a in parts if _reads_at(a, name) and a not in atoms]
    return atoms


def _starts(cnt) -> List[A.Expr]:
    return [cnt.init] + ([A.num(0)] if cnt.init != A.num(0) else [])


def _counting_up(loops: Dict[int, dict], unit: bool = False):
    """``(h, loop, counter, body, i)`` for every counted loop counting up (by one, with
    ``unit``), in order of their heads."""
    for h, lp in sorted(loops.items()):
        cnt = lp.get("counter")
        if cnt is None or cnt.step <= 0 or (unit and cnt.step != 1):
            continue
        yield h, lp, cnt, lp["body"], A.Var(cnt.name)


def _copies_of(cfa, body, name: str) -> List[str]:
    """The variables the loop body assigns the counter ``name`` to (``b := i``)."""
    return [x for x, y in body_copies(cfa, body) if y == name]


def scan_candidates(cfa, loops: Dict[int, dict]) -> List[A.Expr]:
    """The candidates of the module docstring but the ranked copies', for every counted loop
    counting up."""
    out: List[A.Expr] = []
    for h, _lp, cnt, body, i in _counting_up(loops):
        starts = _starts(cnt)
        copies = [A.Var(x) for x in _copies_of(cfa, body, cnt.name)]
        j = A.Var("j$")
        for a in _atoms(cfa, body, cnt.name, literals=False):
            for side in _sides(a):
                for lo in starts:
                    out.append(A.Quant("forall", "j$", lo, i, False, subst(side, {cnt.name: j})))
        for x in copies:
            out += _copy_ranges(cfa, h, body, cnt, x)
    return out


def _copy_ranges(cfa, h: int, body, cnt, x: A.Var) -> List[A.Expr]:
    """``lo <= x`` (lo the counter's start, 0, or x's value on entry), ``x < i``, ``x <= i`` and
    ``x < n`` for a copy x of the counter i counting up to n."""
    i, starts = A.Var(cnt.name), _starts(cnt)
    los = starts + [e for e in [entry_value(cfa, h, body, x.name)] if e is not None and e not in starts]
    out: List[A.Expr] = [A.Binary("<=", lo, x) for lo in los]
    return out + [A.Binary("<", x, i), A.Binary("<=", x, i), A.Binary("<", x, cnt.final())]


def ranked_candidates(cfa, loops: Dict[int, dict]) -> List[A.Expr]:
    """The ranked copies' candidates of the module docstring, for every counted loop counting up
    whose body keeps a copy of the counter that takes over another copy (``b2 := b1``)."""
    out: List[A.Expr] = []
    for h, _lp, cnt, body, i in _counting_up(loops):
        better = _counter_copies(cfa, body, cnt.name)
        if not any(better.values()):
            continue
        j, lo = A.Var("j$"), cnt.init
        # the comparisons' literals (the sentinel test ``b1 == -1`` taken off), from the counter's
        # start (a ranked copy starts at a sentinel, not at an element compared with itself)
        for a in [
            a for a in _atoms(cfa, body, cnt.name, literals=True) if a in _literals(a) and len(_literals(a)) == 1
        ]:
            for side in _sides(a):
                out.append(A.Quant("forall", "j$", lo, i, False, subst(side, {cnt.name: j})))
                # over the iterations other than those the better copies hold
                for x in [x for x in sorted(better) if better[x] and _reads_at_copy(side, x)]:
                    ups = sorted(better[x])
                    guards = {g for r in (1, 2) for g in itertools.combinations(ups, r)} | {tuple(ups)}
                    for guard in sorted(guards, key=lambda g: (len(g), g)):
                        cond = and_all([A.Binary("!=", j, A.Var(g)) for g in guard])
                        body_j = A.Binary("==>", cond, subst(side, {cnt.name: j}))
                        out.append(A.Quant("forall", "j$", lo, i, False, body_j))
        for x in sorted(better):  # a copy with r better ones holds an iteration once more than r are done
            out += _copy_ranges(cfa, h, body, cnt, A.Var(x))
            r = len(better[x])
            out.append(A.Binary("==>", A.Binary("<", plus(lo, A.num(r)) if r else lo, i), A.Binary("<=", lo, A.Var(x))))
    return list(dict.fromkeys(out))


def _filters(cfa, body, name: str, copies: List[str]) -> List[A.Expr]:
    """The *filter* literals of a filtered running best: a branch condition ``!taken[j] && (b ==
    -1 || a > best)`` whose other conjuncts read a copy of the counter j; its conjuncts that
    read an array at the counter and nothing the loop body writes (``!taken[j]``)."""
    changed = written(cfa, body) - {name}
    out: List[A.Expr] = []
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if u not in body or v not in body or d.get("back") or not isinstance(st, A.Assume):
            continue
        parts = conjuncts(st.cond)
        if len(parts) < 2 or not any(set(free_vars(c)) & set(copies) for c in parts):
            continue
        for c in parts:
            if _reads_at(c, name) and not (set(free_vars(c)) & changed) and c not in out:
                out.append(c)
    return out


def filtered_candidates(cfa, loops: Dict[int, dict], pool: List[A.Expr]) -> List[A.Expr]:
    """A running best over the elements a filter lets through (peeling top-k with fresh noise per
    round: ``if (!taken[j] && (b == -1 || a > best)) { b := j; best := a; }``): every element let
    through so far has been compared, so the index b has left its sentinel s, ``forall v in lo..j:
    !taken[v] ==> b != s``; the pool's facts accumulated over the iterations hold for those
    elements, ``forall v in lo..j: !taken[v] ==> q[v] - best <= M``; and the facts carried to b
    hold once it has left its sentinel, ``b != s ==> best - q[b] <= M``."""
    out: List[A.Expr] = []
    for h, _lp, cnt, body, i in _counting_up(loops, unit=True):
        copies = _copies_of(cfa, body, cnt.name)
        filters = _filters(cfa, body, cnt.name, copies) if copies else []
        if not filters:
            continue
        v = A.Var("v$")
        for f in filters:
            fv = subst(f, {cnt.name: v})
            for x in copies:
                s = entry_value(cfa, h, body, x)
                if s is not None:
                    out.append(
                        A.Quant("forall", "v$", cnt.init, i, False, A.Binary("==>", fv, A.Binary("!=", A.Var(x), s)))
                    )
            for c in pool:
                if (
                    isinstance(c, A.Quant)
                    and c.kind == "forall"
                    and c.hi == i
                    and c.lo == cnt.init
                    and not c.inclusive
                    and not (set(free_vars(c.body)) & (set(free_vars(f)) - {cnt.name}))
                ):
                    g = A.Binary("==>", subst(f, {cnt.name: A.Var(c.var)}), c.body)
                    out.append(A.Quant("forall", c.var, c.lo, c.hi, False, g))
        for x in copies:
            s = entry_value(cfa, h, body, x)
            if s is None:
                continue
            for c in pool:
                if x in set(free_vars(c)) and not isinstance(c, A.Quant) and cnt.name not in set(free_vars(c)):
                    if not (isinstance(c, A.Binary) and c.op == "==>"):
                        out.append(A.Binary("==>", A.Binary("!=", A.Var(x), s), c))
    return list(dict.fromkeys(out))
