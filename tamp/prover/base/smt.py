"""The prover's validity checks over the shared z3 encoding.

The encoding of expressions is :class:`tamp.core.encode.Encoder` (log/exp/sqrt and opaque sums
uninterpreted, every application noted), the terms the lemmas are about
:func:`axioms.terms.transcendental_apps` — both shared with the certificate checker and
re-exported here under the prover's names. This module adds the prover's solver reuse, lemma
caches and statistics.

:func:`is_valid` is the only place a solver answer becomes a fact: ``unsat`` of the negation
is "valid"; ``sat`` is "invalid"; ``unknown`` (including timeouts) is "unknown" — never valid.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import List, Optional, Tuple

import z3
from z3.z3 import _to_expr_ref

from axioms.bound_facts import bound_fact_lemmas
from axioms.lemmas import lemma_instances
from axioms.terms import transcendental_apps  # noqa: F401 (re-exported: the prover's name for it)
from tamp.core import watchdog
from tamp.core.encode import Encoder  # noqa: F401 (re-exported: the prover's name for it)
from tamp.core.validity import CLOCK_SLACK, INVALID, RLIMIT_PER_MS, UNKNOWN, VALID, budget_limits, verdict  # noqa: F401 (re-exported)
from tamp.core.z3expr import Z3Translation, conj, raw_api, sort_of, to_int, to_real, unify  # noqa: F401 (re-exported)


@dataclass
class Stats:
    """Counters shared by one proof attempt."""

    solver_calls: int = 0
    solver_time: float = 0.0
    lemma_instances: int = 0
    unknowns: int = 0


def substitute_all(terms: List[z3.ExprRef], pairs) -> List[z3.ExprRef]:
    """``[z3.substitute(t, *pairs) for t in terms]``, with the (from, to) arrays built once and
    one C call per term (``z3.substitute`` re-checks every pair's sorts on every call). The
    pairs must have equal sorts, as the prover's (pre-state constant, post-state value) do."""
    if not pairs or not terms:
        return list(terms)
    n = len(pairs)
    src, dst = (z3.Ast * n)(), (z3.Ast * n)()
    for i, (a, b) in enumerate(pairs):
        src[i], dst[i] = a.as_ast(), b.as_ast()
    ctx = terms[0].ctx
    return [_to_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), n, src, dst), ctx) for t in terms]


# ---------------------------------------------------------------------------- validity


def enc_has_apps(enc) -> bool:
    """Whether formulas built by ``enc`` may contain log/exp/sqrt/sum applications (True for
    encoders that do not say)."""
    return getattr(enc, "has_apps", True)


def lemmas_for(apps: List[z3.ExprRef], enc: Encoder) -> list:
    """:func:`axioms.lemmas.lemma_instances` for ``apps``, remembered per encoder: most queries
    of one proof mention the same few log/exp terms (the lemmas are facts about the terms
    alone, so the same set of terms always gets the same lemmas). The applications are kept
    with the entry, so their ids stay theirs."""
    if not apps:
        return []
    cache = enc.__dict__.setdefault("_lemmas", {})
    key = tuple(sorted(t.get_id() for t in apps))
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (list(apps), lemma_instances(apps, enc))
    return hit[1]


def _solver_for(enc: Encoder, hyps: List[z3.BoolRef], mbqi: bool = True) -> z3.Solver:
    """One solver per set of hypotheses and encoder, with the hypotheses asserted once; each
    query runs in its own ``push``/``pop`` scope (creating a solver costs more than most of the
    prover's queries). The hypotheses are kept alive with the solver, so their ids stay theirs.
    ``mbqi=False``: a solver without model-based quantifier instantiation (see :func:`is_valid`)."""
    cache = enc.__dict__.setdefault("_solvers", {})
    key = (mbqi,) + tuple(h.get_id() for h in hyps)
    entry = cache.get(key)
    if entry is None:
        s = z3.Solver()
        if not mbqi:
            s.set("mbqi", False)
        for h in hyps:
            s.add(h)
        entry = cache[key] = (s, list(hyps))
    return entry[0]


LEMMA_FREE_MS = 200
#: the budget of the second lemma round (axioms.bound_facts) of a query that failed without it: the
#: facts it adds settle a last step quickly or not at all, and a failing search pays it per query
BOUND_FACTS_MS = 1000


def _limits(timeout_ms: float, clock_ms: Optional[float]) -> Tuple[int, int]:
    """z3's resource limit for a query with a budget of ``timeout_ms`` and its clock limit
    (:func:`tamp.core.validity.budget_limits`), at most ``clock_ms`` (the time the proof has left)."""
    rlimit, clock = budget_limits(timeout_ms)
    if clock_ms is not None:
        clock = min(clock, max(int(clock_ms), 1))
    return rlimit, clock


def _check(s: z3.Solver, lemmas, formula, timeout_ms, stats: Stats, clock_ms: Optional[float] = None, models=None):
    """z3's answer for ``lemmas ∧ ¬formula`` in a scope of ``s`` (popped afterwards); on ``sat``
    the model is appended to ``models`` when a list is given.

    The query is bounded by z3's resource limit (a count of its steps: the same answer on every
    run, however loaded the machine is; a clock limit alone made short queries "unknown" under
    load, several times more often at a 200 ms budget); the clock limit only guards against a
    query whose steps are slow, and against running past the proof's deadline. The query runs
    under :func:`tamp.core.watchdog.call`: when z3 heeds neither limit, the proof is abandoned
    (:class:`tamp.core.watchdog.SolverStuck`) instead of hanging."""
    rlimit, clock = _limits(timeout_ms, clock_ms)

    def query() -> z3.CheckSatResult:
        s.push()
        try:
            s.set("rlimit", rlimit)
            s.set("timeout", clock)
            for _name, lem in lemmas:
                s.add(lem)
            s.add(z3.Not(formula))
            r = s.check()
            if r == z3.sat and models is not None:
                models.append(s.model())
            return r
        finally:
            s.pop()

    t0 = time.monotonic()
    r = watchdog.call(query, s.ctx, clock / 1000)  # control comes back even if z3 does not stop
    stats.solver_calls += 1
    stats.solver_time += time.monotonic() - t0
    return r


def is_valid(
    formula: z3.BoolRef,
    enc: Encoder,
    stats: Stats,
    timeout_ms: int = 5000,
    hypotheses=(),
    clock_ms: Optional[float] = None,
    facts: bool = True,
) -> str:
    """Decide ``hypotheses ⇒ formula`` with lemmas about log/exp/sqrt added as hypotheses, within
    a budget of ``timeout_ms`` (z3 resource units, see :func:`_check`) and ``clock_ms`` of the
    clock where given (the time the proof has left). ``facts``: whether a query that failed is
    asked again with :mod:`axioms.bound_facts` (not for a group of obligations asked at once,
    whose members are asked one by one when the group fails).

    Returns VALID only when z3 answers ``unsat`` for the negation."""
    hyps = list(hypotheses)
    apps = transcendental_apps(conj(*hyps, formula) if hyps else formula) if enc_has_apps(enc) else []
    lemmas = lemmas_for(apps, enc)
    stats.lemma_instances += len(lemmas)
    s = _solver_for(enc, hyps)
    if lemmas:
        # most obligations do not need the lemmas (log is then an uninterpreted function): a
        # short query without them settles those; "unsat" without extra facts is "unsat" with
        # them, anything else is asked again with the lemmas
        if _check(s, [], formula, min(LEMMA_FREE_MS, timeout_ms), stats, clock_ms) == z3.unsat:
            return VALID
    models: list = []
    answer = verdict(_check(s, lemmas, formula, timeout_ms, stats, clock_ms, models if apps else None))
    if answer == UNKNOWN and _quantified(formula, hyps):
        # model-based instantiation can turn a quantified hypothesis into nonlinear facts that
        # end in "incomplete (theory arithmetic)"; pattern-based instantiation alone (as in
        # Houdini's queries) often finds the contradiction. An "unsat" is a proof either way.
        answer = verdict(_check(_solver_for(enc, hyps, mbqi=False), lemmas, formula, timeout_ms, stats, clock_ms))
    if answer != VALID and apps and facts:
        # second round (axioms.bound_facts): powers with symbolic exponents, signs of sums; only
        # for a query that failed without them, so the queries valid before are decided as before
        extra = bound_facts_for(apps, enc, [*hyps, formula])
        if extra and not (answer == INVALID and models and _satisfies(models[0], extra)):
            stats.lemma_instances += len(extra)
            again = verdict(_check(s, lemmas + extra, formula, min(timeout_ms, BOUND_FACTS_MS), stats, clock_ms))
            answer = VALID if again == VALID else answer
    if answer == UNKNOWN:
        stats.unknowns += 1
    return answer


def _satisfies(model: z3.ModelRef, facts) -> bool:
    """Whether every fact holds in ``model`` (a counterexample of the query without them): the
    query with them is then still satisfiable by the same model, so the second round is skipped
    (a fact whose value the model does not settle, a quantified one, counts as not holding)."""
    try:
        return all(z3.is_true(model.eval(fact, model_completion=True)) for _name, fact in facts)
    except z3.Z3Exception:
        return False


def bound_facts_for(apps: List[z3.ExprRef], enc: Encoder, where: List[z3.BoolRef]) -> list:
    """:func:`axioms.bound_facts.bound_fact_lemmas` for ``apps`` in the formulas ``where``,
    remembered per encoder like :func:`lemmas_for`."""
    cache = enc.__dict__.setdefault("_bound_facts", {})
    key = tuple(sorted(t.get_id() for t in apps)) + (-1,) + tuple(f.get_id() for f in where)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (list(apps), list(where), bound_fact_lemmas(apps, enc, where))
    return hit[2]


def _quantified(formula: z3.BoolRef, hyps: List[z3.BoolRef]) -> bool:
    """Whether ``formula`` or a hypothesis contains a quantifier."""
    stack, seen = [formula, *hyps], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_quantifier(t):
            return True
        if z3.is_app(t):
            stack.extend(t.children())
    return False
