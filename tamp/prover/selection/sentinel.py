"""Candidate loop invariants for *sentinel* variables: a variable that keeps its entry value until
the loop finds what it searches for.

Selection mechanisms write the answer into a variable initialised before the loop to a value
meaning "nothing yet" — ``ans := n`` (AboveThreshold answering n when no query is above the
threshold), ``found := false``, ``count := 0`` — and the postcondition speaks of the final value:
``forall j in 0..ans: q[j] <= T + alpha``. At the loop head that conjunct is not yet true while
``ans`` still holds its entry value (it would talk about queries not seen yet), so the prefix
templates miss it. Split on the sentinel instead: for a conjunct C of the postcondition that reads
a variable x written in the loop body and holding ``e0`` on entry to the loop, propose

* ``x == e0 ==> W`` for W = C[x := e0] and its prefix forms (the loop's limit replaced by the
  counter: ``forall j in 0..i``), the part of C the iterations so far establish, and
* ``x != e0 ==> C``: once the answer is set, the claim about it holds as stated;
* for a Boolean flag ``f`` also written in the loop and entering it as ``b`` (``done := false``):
  ``f == b ==> x == e0`` and ``f != b ==> x != e0``, which tie the flag that guards the search
  (``if (!done) { … }`` in a ``for`` loop) to the sentinel.

A variable that every path through the body updates from its own value (a running total
``s := s + a[i]``) never keeps its entry value, so it gets none of these forms.

These are only candidates: Houdini keeps what is inductive and :mod:`.check` re-verifies it.
"""

from __future__ import annotations

from typing import Dict, List

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import entry_value
from tamp.prover.base.exprs import subst
from tamp.prover.counting.recurrence import body_paths


def _written_in(cfa, body: set) -> set:
    """Scalar variables assigned (not sampled) on an edge inside ``body``."""
    out = set()
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if u in body and v in body and isinstance(st, A.Assign):
            out |= {t.name for t in st.targets if isinstance(t, A.Var) and not t.name.startswith("$")}
    return out


def _accumulators(cfa, h: int, loops, written: set) -> set:
    """The variables of ``written`` that every path through the loop body at ``h`` moves off their
    value by an update reading it (``s := s + a[i]``): a running total never holds its entry value
    "until something is found", so it is no sentinel, and its sentinel forms are only Houdini work."""
    try:
        paths = body_paths(cfa, h, loops)
    except (RecursionError, ValueError, TypeError):
        return set()
    if not paths:
        return set()
    out = set()
    for x in written:
        vals = [p.env.get(x) for p in paths]
        if all(v is not None and v != A.Var(x) and x in set(free_vars(v)) for v in vals):
            out.add(x)
    return out


def _flag_links(cfa, head: int, body: set, written: set, x: str, is_x: A.Expr, not_x: A.Expr) -> List[A.Expr]:
    """For every other variable ``f`` of ``written`` entering the loop as a Boolean literal ``b``
    (a ``done`` flag set when the answer is found): ``f == b ==> x == e0`` and
    ``f != b ==> x != e0`` — the flag still unset means the answer is still the sentinel, so the
    postcondition's sentinel case carries over iterations that the flag makes skip the search."""
    out: List[A.Expr] = []
    for f in sorted(written - {x}):
        b = entry_value(cfa, head, body, f)
        if not isinstance(b, A.BoolLit):
            continue
        out.append(A.Binary("==>", A.Binary("==", A.Var(f), b), is_x))
        out.append(A.Binary("==>", A.Binary("!=", A.Var(f), b), not_x))
    return out


def sentinel_candidates(cfa, loops: Dict[int, dict], post: List[A.Expr], prefix_forms) -> List[A.Expr]:
    """The candidates of the module docstring for every counted loop of ``loops`` (as
    :func:`tamp.prover.loops.prove._loops` describes them) and postcondition conjunct in ``post``;
    ``prefix_forms(c, counter)`` gives the prefix forms of ``c`` for a loop's counter."""
    out: List[A.Expr] = []
    for h, lp in sorted(loops.items()):
        cnt = lp.get("counter")
        if cnt is None:
            continue
        written = _written_in(cfa, lp["body"]) - {cnt.name}
        for x in sorted(written - _accumulators(cfa, h, loops, written)):
            e0 = entry_value(cfa, h, lp["body"], x)
            if e0 is None:
                continue
            is_x, not_x = A.Binary("==", A.Var(x), e0), A.Binary("!=", A.Var(x), e0)
            out.extend(_flag_links(cfa, h, lp["body"], written, x, is_x, not_x))
            for c in post:
                if x not in set(free_vars(c)):
                    continue
                before = subst(c, {x: e0})
                for w in [before] + prefix_forms(before, cnt):
                    out.append(A.Binary("==>", is_x, w))
                out.append(A.Binary("==>", not_x, c))
    return out
