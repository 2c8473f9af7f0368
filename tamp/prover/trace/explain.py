"""Why a failure-bound proof failed, in the user's terms (issue 18, item 5).

The checker's failed obligations speak of automaton states ("EXIT at q13"); a user needs the
loop or statement (file:line), what was missing, and what to do. This module turns a failed
proof into a :class:`ProofFailure` that says so:

* :func:`loop_failure`: when the loop prover's labels do not imply the postcondition at the
  program's end, which conjuncts are missing (each asked of the solver on its own) and after
  which loop — "`forall j in 0..ans: …` does not follow at the end of the program: no invariant
  of the loop at line 17 was found that implies it when the loop ends" — with the advice to state
  the loop's invariant (checked, never trusted) or to test the claim with ``tamp simulate``;
  any other failed obligation names its statement and line (:func:`check_failure`);
* the bound a failed proof needed (a proof with a *larger* failure bound) is found by the
  inference room, :mod:`tamp.prover.infer.needed`.

Nothing here decides a verdict: it only explains an "unknown".
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import re
from typing import Iterator, List, Optional

import networkx as nx

from lang import ast as A
from lang.walk import free_vars
from tamp.core import watchdog
from tamp.prover.base.exprs import conjuncts
from tamp.prover.base.failure import NO_COMBINATION, NO_INVARIANT, TIMED_OUT, ProofFailure, check_failure
from tamp.prover.base.smt import VALID, conj
from tamp.prover.trace.synthesis import Timeout
from tamp.show import show_expr, show_stmt

HINT_INVARIANT = (
    "state what the loop at line {line} maintains as an `invariant` clause on it (checked like every proof "
    "step, never trusted); if the claim may be false, test it at concrete inputs with `tamp simulate`"
)
HINT_BOUND = (
    "prove the claim with the larger bound (`--bound`), or weaken the postcondition; "
    "`tamp prove --infer` prints the smallest bound tamp can prove"
)
HINT_GENERAL = (
    "test the claim at concrete inputs with `tamp simulate`; a larger bound (`--bound`) or a weaker "
    "postcondition may be provable (`tamp prove --infer` infers the bound)"
)

EXPLAINING: contextvars.ContextVar[bool] = contextvars.ContextVar("tamp_explaining", default=False)


def loop_failure(aut, cfa, enc, valid, bad) -> ProofFailure:
    """The explanation of the loop prover's failed check (``bad``: the obligations that were not
    valid; ``valid``: z3 goal → status under ``requires``)."""
    if not any(o.rule == "EXIT" for o in bad):
        return dataclasses.replace(check_failure(bad, aut), hint=HINT_GENERAL)
    exit_label = aut.nodes[cfa.exit].label if cfa.exit in aut.nodes else []
    missing = missing_conjuncts(exit_label, list(cfa.ensures), enc, valid)
    line = last_loop_line(cfa)
    return ProofFailure(
        NO_INVARIANT,
        missing=tuple(show_expr(c) for c in missing[:2]),
        loop_line=line,
        line=cfa.graph.nodes[cfa.exit].get("line"),
        obligations=check_failure(bad, aut).obligations,
        hint=HINT_INVARIANT.format(line=line) if line else HINT_GENERAL,
    )


#: z3 milliseconds for finding a state that violates the postcondition at the exit
STATE_MS = 2000
#: variables shown in that state at most
STATE_VARS = 6


def with_exit_state(failure: ProofFailure, aut, cfa, enc, bad) -> ProofFailure:
    """``failure`` with, when the postcondition failed at the exit (rule EXIT), the first
    conjunct of ``ensures`` that the exit's label and ``requires`` do not imply and a concrete
    state from the solver's model that satisfies both and violates it: ``alarm = true, nc = 1,
    T = 1``; and when a comparison in it has equal sides there, the boundary (``nc >= T`` tested,
    ``nc > T`` claimed). An explanation only: a state the facts allow may be unreachable."""
    if not any(o.rule == "EXIT" for o in bad) or cfa.exit not in aut.nodes:
        return failure
    try:
        found = _exit_state(aut.nodes[cfa.exit].label, cfa, enc)
    except Exception:  # noqa: BLE001 - an explanation never turns an answer into an error
        return failure
    if found is None:
        return failure
    conjunct, state, boundary = found
    return dataclasses.replace(failure, violated=conjunct, state=state, boundary=boundary)


def _exit_state(label: List[A.Expr], cfa, enc):
    import z3

    env0 = enc.env0
    facts = [enc.expr(e, env0) for e in list(cfa.requires) + list(label)]
    for e in cfa.ensures:
        for c in conjuncts(e):
            if A.contains(c, (A.Quant, A.Sum, A.Index)):
                continue
            s = z3.Solver()
            s.set("timeout", STATE_MS)
            s.add(*facts)
            s.add(z3.Not(enc.expr(c, env0)))
            if watchdog.call(s.check, s.ctx, STATE_MS / 1000) != z3.sat:
                continue
            m = s.model()
            names = sorted(set(free_vars(c)))
            if len(names) > STATE_VARS or not all(
                v in env0 and env0[v].sort().kind() != z3.Z3_ARRAY_SORT for v in names
            ):
                continue  # a state is shown in full or not at all (no arrays, no quantifiers)
            shown = [f"{v} = {_value(m.eval(env0[v], model_completion=True))}" for v in names]
            if not shown:
                continue
            return show_expr(c), ", ".join(shown), _boundary(c, m, enc, env0)
    return None


def _value(v) -> str:
    import z3

    if z3.is_true(v):
        return "true"
    if z3.is_false(v):
        return "false"
    if z3.is_rational_value(v):
        f = v.as_fraction()
        return str(f.numerator) if f.denominator == 1 else f"{f.numerator} / {f.denominator}"
    return str(v)


_STRICT = {"<": "<=", ">": ">="}


def _boundary(c: A.Expr, m, enc, env0) -> str:
    """``nc = T, where the claim needs nc > T`` for a strict comparison of ``c`` whose sides are
    equal in the model ``m`` (a test ``>=`` where the claim says ``>``), else ''."""
    import z3

    for n in A.walk(c):
        if isinstance(n, A.Binary) and n.op in _STRICT:
            try:
                same = z3.is_true(m.eval(enc.expr(n.left, env0) == enc.expr(n.right, env0), model_completion=True))
            except Exception:  # noqa: BLE001 - an unencodable side: no boundary to name
                continue
            if same:
                return (
                    f"{show_expr(n.left)} = {show_expr(n.right)} there, where the claim needs `{show_expr(n)}` "
                    f"(is a test `{_STRICT[n.op]}` in the program meant to be `{n.op}`, or the claim `{_STRICT[n.op]}`?)"
                )
    return ""


def missing_conjuncts(label: List[A.Expr], ensures: List[A.Expr], enc, valid) -> List[A.Expr]:
    """The conjuncts of ``ensures`` that ``label`` does not imply (each one solver query; a query
    that fails for another reason than "valid" counts as missing)."""

    env0 = enc.env0
    try:
        lam = conj(*[enc.expr(c, env0) for c in label])
    except Exception:  # noqa: BLE001 - an unencodable label: every conjunct is reported
        return [c for e in ensures for c in conjuncts(e)]
    import z3

    out = []
    for e in ensures:
        for c in conjuncts(e):
            try:
                if valid(z3.Implies(lam, enc.expr(c, env0))) != VALID:
                    out.append(c)
            except Exception as exc:  # noqa: BLE001 - Timeout propagates; others: missing
                if isinstance(exc, Timeout):
                    raise
                out.append(c)
    return out or [c for e in ensures for c in conjuncts(e)]


def last_loop_line(cfa) -> Optional[int]:
    """The source line of the last outermost loop (the one whose end the program's end follows)."""
    heads = list(cfa.loop_heads)
    if not heads:
        return None
    dag = nx.DiGraph()
    dag.add_nodes_from(cfa.graph.nodes)
    dag.add_edges_from((u, v) for u, v, _k, d in cfa.edges() if not d.get("back"))
    order = {n: i for i, n in enumerate(nx.topological_sort(dag))}

    def inside(h, g):  # h lies in loop g's body: g reaches h and h reaches g's latch
        latches = [u for u, v, _k, d in cfa.edges() if v == g and d.get("back")]
        return h != g and nx.has_path(dag, g, h) and any(nx.has_path(dag, h, x) for x in latches)

    outer = [h for h in heads if not any(inside(h, g) for g in heads)] or heads
    h = max(outer, key=lambda x: order.get(x, 0))
    return cfa.graph.nodes[h].get("line")


@contextlib.contextmanager
def explaining() -> Iterator[None]:
    """Within: a failed proof is not explained by the bound it needed
    (:mod:`tamp.prover.infer.needed` would infer a bound again; inference proves its candidates
    within this)."""
    token = EXPLAINING.set(True)
    try:
        yield
    finally:
        EXPLAINING.reset(token)


def no_combination(cfa, samples, loops, skipped) -> ProofFailure:
    """NO_COMBINATION naming the first sampling inside a loop (whose cost the loop multiplies;
    ``loops``: loop head → description with its ``body``, as :mod:`.loops` gives it)."""
    inside = [s for s in samples if any(s[0] in lp["body"] for lp in loops.values())] or list(samples)
    if not inside:
        return ProofFailure(NO_COMBINATION, skipped=tuple(skipped), hint=HINT_GENERAL)
    d = cfa.graph.edges[inside[0]]
    return ProofFailure(
        NO_COMBINATION,
        stmt=show_stmt(d["stmt"]),
        line=d.get("line"),
        skipped=tuple(skipped),
        hint=HINT_BOUND,
    )


HINT_TIMEOUT = "give the proof more time (`--timeout S`); `tamp simulate` tests the claim at concrete inputs in seconds"


def timed_out(cfa, during: str, line: Optional[int] = None) -> ProofFailure:
    """TIMED_OUT: the time limit ran out ``during`` (e.g. "while checking the proof of the
    postcondition"), at ``line`` — else at the postcondition's line, the claim being proved."""
    if line is None:
        pos = next((getattr(e, "pos", None) for e in cfa.ensures if getattr(e, "pos", None) is not None), None)
        line = pos.line if pos is not None else cfa.graph.nodes[cfa.exit].get("line")
    return ProofFailure(TIMED_OUT, stmt=during, line=line, hint=HINT_TIMEOUT)


HINT_TERMINATION = (
    "make the loop's condition compare a counter that every iteration moves toward a bound "
    "(`i := i + 1` with `i < n`), or a retry flag drawn afresh each iteration (`while (!ok) { ok ~ bern(q); }`)"
)


def termination_line(cfa, message: str) -> Optional[int]:
    """The line of the loop a termination message of :mod:`.termination` names, else the first
    loop's line."""
    m = re.search(r":(\d+) may not terminate", message or "")
    if m:
        return int(m.group(1))
    heads = list(cfa.loop_heads)
    return cfa.graph.nodes[heads[0]].get("line") if heads else None


#: what a failed termination obligation means (the rules of :mod:`.termination`)
TERMINATION_RULES = {
    "BOUNDED": "the measure is not positive while the loop runs",
    "DECREASE": "the measure does not drop by at least 1",
    "NONINC": "the measure may grow",
    "PROGRESS": "some path through the body does not lower the measure",
    "EXITPROB": "the retry's exit probability may be 0",
}


def termination_why(cfa, rule: str, where: str, status: str) -> str:
    """A failed termination obligation in the user's terms: "the measure does not drop by at
    least 1 at `i := i + 2` (line 7)" rather than automaton edges ("DECREASE fails at edge 4->5")."""
    text = TERMINATION_RULES.get(rule, "a termination obligation does not hold")
    m = re.match(r"edge (\d+)->(\d+)", where)
    if m:
        u, v = int(m.group(1)), int(m.group(2))
        data = next((d for _a, b, _k, d in cfa.out_edges(u) if b == v), None) if u in cfa.graph else None
        if data is not None:
            text += f" at `{show_stmt(data['stmt'])}`" + (f" (line {data['line']})" if data.get("line") else "")
    return text + (" (the solver answered unknown)" if status == "unknown" else "")
