"""Prover II: programs with loops, labelled on the CFA itself (GENERALIZE by construction).

The automaton is the CFA with its back edges; every node gets (λ, κ) and the ordinary
checker (:mod:`.check`) verifies them — the induction on run length there covers every
iteration count, so a checked labelling is a proof for all inputs.

* One axiom per sampling statement (the same at every iteration). The combinations of the
  proposals of :mod:`.candidates` are ranked before any solver work: a combination whose
  total cost at the exit exceeds β at sampled inputs is dropped, and the rest are tried
  tightest first (the cost closest to β leaves the smallest tail thresholds, which is what
  makes the postcondition provable); at most ``MAX_COMBOS`` are labelled. Houdini's queries
  get a short time limit (a timeout only drops a candidate); the tightest combination is
  retried once with patient queries before the next one is tried.
* κ is computed (:mod:`.kappa`): costs along paths, counter-linear terms at loop heads,
  flag-conditional terms for "at most once" iterations.
* λ is found by Houdini (:mod:`.invariants`) over template candidates: counter ranges,
  prefix forms of the postcondition, the axioms' ``¬bad`` carried to copies and accumulated
  over iterations (``forall j in lo..i``), branch facts, and their weakest preconditions.
  The first combination is labelled first from the claim's own forms alone, then, if that
  labelling is not a proof, with the families for particular loop shapes as well (closed
  forms, arrays, scans, guarded forms, …; :func:`_pool_phases`): most loops need none of
  them, and Houdini over all of them costs those loops most of their proof time.
* Every loop must terminate (a failure bound counts a run that never ends as failing): a
  ranking function per loop head from its counter, or a geometric retry argument, checked
  first (:mod:`.termination`); a loop without one makes the answer "unknown" before any search.
* The checker's BUDGET obligations (κ <= β) are nonlinear (cost × counter); they get the
  monotonicity *budget hints* of :mod:`.kappa` as extra hypotheses, each one first proved
  valid under ``requires`` by its own z3 query (``ProofResult.facts`` lists them).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from typing import Dict, List, NamedTuple, Optional, Set, Tuple, Union

import networkx as nx

from lang import ast as A
from lang.evaluate import EvalError, evaluate
from lang.walk import free_vars
from tamp.cfa.loops import bound_changes, entry_value, latches, loop_body
from tamp.progress import ProgressEvent
from tamp.prover.base.exprs import conjuncts, iterations_done, subst
from tamp.prover.base.failure import NO_LOOP_FACT, NO_TERMINATION, ProofFailure, check_failure
from tamp.prover.base.liveness import live_variables
from tamp.prover.base.samples import collect_states, input_points
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.prover.counting.rank_count import count_variants, rank_counts
from tamp.prover.counting.recurrence import written
from tamp.prover.loops.invariants import (
    Batch,
    candidate_pool,
    explain_user_invariants,
    houdini,
    node_pools,
    splits_claim,
)
from tamp.prover.loops.kappa import Kappa, NoKappa, compute_kappa
from tamp.prover.loops.ranking import distinct_proposals, idle_samplings
from tamp.prover.loops.termination import prove_termination
from tamp.prover.trace.automaton import AEdge, ANode, FailureAutomaton
from tamp.prover.trace.candidates import proposals
from tamp.prover.trace.check import Obligation, check_automaton
from tamp.prover.trace.explain import (
    HINT_TERMINATION,
    loop_failure,
    no_combination,
    termination_line,
    timed_out,
    with_exit_state,
)
from tamp.prover.trace.result import ProofResult, axioms_table
from tamp.prover.trace.synthesis import Timeout, relevant_names
from tamp.show import show_expr

MAX_COMBOS = 6
MAX_RANKED = 400
HOUDINI_MS = 120  # per Houdini query: a timeout only drops a candidate (never unsound)
HOUDINI_RETRY_MS = 2500
CHECK_MS = 10000
CHECK_BATCH_MS = 1000  # a group of obligations asked at once; on failure the group is halved


# ---------------------------------------------------------------------------- loop structure


def _loops(cfa) -> Tuple[Dict[int, dict], nx.DiGraph]:
    """For each loop head: body nodes, latches, condition, counter (:class:`Counter` or None)."""
    g = cfa.graph
    dag = nx.DiGraph()
    dag.add_nodes_from(g.nodes)
    for u, v, _k, d in cfa.edges():
        if not d.get("back"):
            dag.add_edge(u, v)
    info = {}
    for h in cfa.loop_heads:
        body = loop_body(cfa, h, forward_only=True)
        cond = None
        exit_edge = None
        for u, v, _k, d in cfa.out_edges(h):
            st = d["stmt"]
            if isinstance(st, A.Assume) and v in body:
                cond = st.cond
            elif isinstance(st, A.Assume):
                exit_edge = (u, v)
        counter = _counter(cfa, h, body, cond)
        info[h] = {"body": body, "latches": latches(cfa, h), "cond": cond, "counter": counter, "exit": exit_edge}
    return info, dag


class Counter(NamedTuple):
    """A loop counter: ``name := init`` before the loop, ``name := name + step`` (step a non-zero
    integer literal; once on every path through the body) in its body, and the condition's
    conjunct ``name < limit`` / ``name <= limit`` (step > 0) or ``name > limit`` / ``name >= limit``
    (step < 0); ``strict`` for ``<`` / ``>``; ``only`` when that conjunct is the whole condition.
    ``limit`` reads nothing the loop writes (:func:`tamp.cfa.loops.bound_changes`, the check of the
    CFA's one loop analysis): the iterations are never counted off a bound the body rewrites."""

    name: str
    init: A.Expr
    limit: A.Expr
    strict: bool
    only: bool
    step: int = 1

    def final(self) -> A.Expr:
        """The counter's value when the loop ends by its bound (``limit``, ``limit ± 1``; for a
        step k > 1, ``init + k * ((limit - init + k - 1) div k)``, the first value of the
        counter's progression past the bound); it stays between ``init`` and this value."""
        k = abs(self.step)
        if k == 1:
            if self.strict:
                return self.limit
            return A.Binary("+" if self.step > 0 else "-", self.limit, A.num(1))
        span = A.Binary("-", self.limit, self.init) if self.step > 0 else A.Binary("-", self.init, self.limit)
        extra = k - 1 if self.strict else k
        count = A.Binary("div", A.Binary("+", span, A.num(extra)), A.num(k))
        return A.Binary("+" if self.step > 0 else "-", self.init, A.Binary("*", A.num(k), count))

    def done(self, i: Optional[A.Expr] = None) -> A.Expr:
        """The number of iterations completed, ``i - init`` (or ``init - i`` counting down)."""
        return iterations_done(A.Var(self.name) if i is None else i, self.init, self.step)


def _counter(cfa, h, body, cond) -> Optional[Counter]:
    """The loop's counter (see :class:`Counter`), or None."""
    if cond is None:
        return None
    steps: Dict[str, Set[int]] = {}
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if u in body and v in body and isinstance(st, A.Assign) and isinstance(st.targets[0], A.Var):
            x = st.targets[0].name
            v = st.value
            k = v.right.value if isinstance(v, A.Binary) and isinstance(v.right, A.Num) and v.right.is_int else 0
            if isinstance(v, A.Binary) and v.op in ("+", "-") and v.left == A.Var(x) and k > 0:
                steps.setdefault(x, set()).add(int(k) if v.op == "+" else -int(k))
            else:
                steps.setdefault(x, set()).add(0)  # any other write: not a counter
    atoms = conjuncts(cond)
    # a counter moved on every iteration first (``i`` of ``while (i < n && count < c)``): one moved
    # only on some paths (``count``) does not count the iterations
    for x in sorted(steps, key=lambda x: (not _every_iteration(cfa, h, body, x), x)):
        if len(steps[x]) != 1 or 0 in steps[x]:
            continue
        step = next(iter(steps[x]))
        ops: Tuple[str, ...] = ("<", "<=") if step > 0 else (">", ">=")
        limit, strict = None, True
        if abs(step) == 1:
            ops = ops + ("!=",)  # i != n: the counter stays on its side of n (termination's invariant)
        mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
        for a in atoms:
            if isinstance(a, A.Binary) and a.op in mirror and a.right == A.Var(x) and a.left != A.Var(x):
                a = A.Binary(mirror[a.op], a.right, a.left)  # hi > i is i < hi
            if isinstance(a, A.Binary) and a.op in ops and a.left == A.Var(x):
                limit, strict = a.right, a.op in ("<", ">", "!=")
        if limit is None or bound_changes(cfa, h, limit):
            continue  # a bound the loop writes (`m := 100 * n` in the body) counts no iterations
        init = entry_value(cfa, h, body, x, compose=True)  # r := n - 1; …; r := r - 1 starts at n - 1 - 1
        if init is None:
            continue
        if abs(step) > 1 and not _once_per_iteration(cfa, h, body, x):
            continue
        return Counter(x, init, limit, strict, len(atoms) == 1, step)
    return None


def _once_per_iteration(cfa, h, body, x) -> bool:
    """Whether every path through the loop body (inner loops excluded) writes ``x`` exactly once,
    so the counter's progression is init, init + k, …; a step of ±1 needs no such check (its
    iterations are counted by the failure bound's STEP obligations either way)."""
    counts: List[int] = []
    stack = [(h, 0)]
    while stack and len(counts) < 64:
        n, c = stack.pop()
        for _u, v, _k, d in cfa.out_edges(n):
            if v not in body:
                continue
            st = d["stmt"]
            c2 = c + (1 if isinstance(st, A.Assign) and st.targets[0] == A.Var(x) else 0)
            if d.get("back"):
                counts.append(c2)
            elif v != h and v not in cfa.loop_heads:
                stack.append((v, c2))
            elif v in cfa.loop_heads:
                return False
    return bool(counts) and not stack and all(c == 1 for c in counts)


def _every_iteration(cfa, h, body, x) -> bool:
    """Whether every path through the loop body from head ``h`` back to it writes ``x``."""
    g = nx.DiGraph()
    for u, v, _k, d in cfa.edges():
        if u in body and v in body and not (isinstance(d["stmt"], A.Assign) and A.Var(x) in d["stmt"].targets):
            g.add_edge(u, v if not d.get("back") else ("latch", v))
    return not (h in g and ("latch", h) in g and nx.has_path(g, h, ("latch", h)))


def automaton_of(cfa) -> FailureAutomaton:
    """The CFA as an (unlabelled) failure automaton: same nodes, same edges, back edges kept."""
    aut = FailureAutomaton(cfa.name)
    for n, d in cfa.graph.nodes(data=True):
        aut.nodes[n] = ANode(n, n, d.get("line"))
    aut.root = cfa.entry
    aut.exits = [cfa.exit]
    for u, v, k, d in cfa.edges():
        aut.edges.append(AEdge(u, v, d["stmt"], "cfa", (u, v, k), None, d.get("line"), bool(d.get("back"))))
    return aut


# ---------------------------------------------------------------------------- ranking axioms


def _sample_inputs(cfa, count: int = 12, seed: int = 7) -> List[dict]:
    """Input points satisfying ``requires`` (rejection sampling; arrays left out)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count * 40):
        env: Dict[str, Union[int, float, bool]] = {}
        for p in cfa.params:
            t = p.type.name
            if t == "int":
                env[p.name] = rng.choice([0, 1, 2, 3, 5, 10, 40])
            elif t == "real":
                env[p.name] = rng.choice([0.0, 1e-7, 0.01, 0.1, 0.5, 1.0, 2.0, 10.0])
            elif t == "bool":
                env[p.name] = rng.random() < 0.5
        try:
            if all(evaluate(r, env) is True for r in cfa.requires):
                out.append(env)
        except (EvalError, TypeError, KeyError, ZeroDivisionError, ValueError, OverflowError):
            continue
        if len(out) >= count:
            break
    return out


def _slack(cfa, kap: Kappa, points) -> Optional[float]:
    """Mean relative slack (β - κ(exit)) / β at the sample points with counters at their bounds
    and flags true; None when κ exceeds β at some point (the combination cannot work)."""
    k_exit = kap.at.get(cfa.exit)
    if k_exit is None:
        return None
    total, n = 0.0, 0
    for env in points:
        env = dict(env)
        try:
            for t in kap.terms:
                env[t.counter] = evaluate(t.bound, env)
            for name, ty in cfa.types.items():
                if ty.name == "bool" and name not in env:
                    env[name] = True
            beta = float(evaluate(cfa.bound, env))
            k = float(evaluate(k_exit, env))
        except (EvalError, TypeError, KeyError, ZeroDivisionError, ValueError, OverflowError):
            continue
        if k > beta * (1 + 1e-9) + 1e-12:
            return None
        if beta > 0:
            total += (beta - k) / beta
            n += 1
    return total / n if n else 0.0


def by_index_sum(lists):
    """Every combination (one element per list), those of earlier elements first: ordered by
    the sum of the chosen positions (so no single list's first element dominates)."""
    sizes = [len(x) for x in lists]
    if not sizes:  # no sampling at all: the one (empty) combination, κ = 0 everywhere
        yield ()
        return
    if min(sizes) == 0:
        return
    for total in range(sum(sizes) - len(sizes) + 1):

        def rec(k, left):
            if k == len(sizes) - 1:
                if left < sizes[k]:
                    yield (left,)
                return
            for i in range(min(left, sizes[k] - 1) + 1):
                for rest in rec(k + 1, left - i):
                    yield (i,) + rest

        for idx in rec(0, total):
            yield tuple(lst[i] for lst, i in zip(lists, idx))


def ranked_combinations(cfa, samples, cands, loops, dag, skipped: Optional[List[str]] = None):
    """(axioms, κ) pairs, tightest budget first (see the module docstring), generated lazily.

    Combinations are scored in enumeration order; one whose slack is 0 (κ at the exit equals
    β at every sampled input) is yielded at once — nothing can rank before it but earlier
    zero-slack ones, already yielded — so when the first combination spends exactly the
    budget, as the union-bound claims of reliability programs do, the others are only scored
    if its proof fails. The rest follow sorted by (slack, enumeration order). Why a combination
    has no κ is appended to ``skipped`` (for the message of a failed proof)."""
    points = _sample_inputs(cfa)
    variants = count_variants(loops)  # rank_count.py: other ways to count the ranked loops
    relevant = relevant_names(cfa)

    def score(combo):
        """κ of the combination and its slack, by the first way to count the loops that fits
        the bound; None when none does."""
        axioms = dict(zip(samples, combo))
        for lps in variants:
            try:
                kap = compute_kappa(cfa, axioms, lps, dag)
            except NoKappa as exc:
                if skipped is not None and str(exc) not in skipped and lps is variants[0]:
                    skipped.append(str(exc))
                continue
            sl = _slack(cfa, kap, points) if all(n in kap.at for n in cfa.graph.nodes) else None
            if sl is not None:
                return axioms, kap, sl
        return None

    # the first combination (every sampling's first proposal) before pruning the proposals:
    # when it spends exactly the budget, as a reliability claim's union bound does, it is the
    # first one yielded anyway, and the κ of every single proposal (_affordable) is not needed
    # unless its proof fails
    first = None
    if samples and all(cands):
        first = tuple(cs[0] for cs in cands)
        got = score(first)
        if (
            got is not None
            and round(got[2], 9) == 0
            and not idle_samplings(cfa, got[0], _costly(samples, cands), relevant)
        ):
            yield got[0], got[1]
        else:
            first = None
    cands = _affordable(cfa, samples, cands, variants[-1], dag, points)
    cands = distinct_proposals(cands)
    costly = _costly(samples, cands)
    scored = []
    for idx, combo in enumerate(itertools.islice(by_index_sum(cands), MAX_RANKED)):
        if first is not None and all(a is b for a, b in zip(combo, first)):
            continue  # yielded before the pruning
        got = score(combo)
        if got is None:
            continue
        axioms, kap, sl = got
        idle = idle_samplings(cfa, axioms, costly, relevant)  # ranking.py: spend on what the claim reads
        if round(sl, 9) == 0 and not idle:
            yield axioms, kap
            continue
        scored.append((round(sl, 9), idle, idx, axioms, kap))
    scored.sort(key=lambda x: (x[0], x[1], x[2]))
    for _s, _d, _i, a, k in scored:
        yield a, k


def _costly(samples, cands) -> Dict[object, bool]:
    """Per sampling, whether one of its proposals has a cost (for :func:`idle_samplings`)."""
    return {s: any(not _zero(c.cost) for c in cs) for s, cs in zip(samples, cands)}


def _affordable(cfa, samples, cands, loops, dag, points):
    """The proposals of each sampling without those that exceed the budget on their own (κ
    computed with every other sampling free): κ only grows with the costs (sums, maxima and
    counter multiples of them), so no combination containing such a proposal is within the
    budget either. One κ per proposal instead of one per combination of costly ones."""
    out = []
    for s, cs in zip(samples, cands):
        keep = []
        for c in cs:
            try:
                kap = compute_kappa(cfa, {s: c}, loops, dag)
            except NoKappa:
                keep.append(c)
                continue
            if any(n not in kap.at for n in cfa.graph.nodes) or _slack(cfa, kap, points) is not None:
                keep.append(c)
        out.append(keep)
    return out


def _pool_phases(cfa, dag, axioms, loops, lean: bool):
    """The node pools Houdini labels with, in turn until a labelling is a proof: with ``lean``,
    first the claim's own forms (``candidate_pool(lean=True)``, no guarded forms: the loops that
    need none of the shape families are labelled without paying for them); then every family;
    then, for a claim with a quantified conjunction, also its parts (they slow Houdini down
    where the whole is inductive). Each is computed only when the one before failed."""
    if lean:
        yield node_pools(cfa, dag, candidate_pool(cfa, axioms, loops, lean=True), guards=False)
    yield node_pools(cfa, dag, candidate_pool(cfa, axioms, loops))
    if splits_claim(cfa):
        yield node_pools(cfa, dag, candidate_pool(cfa, axioms, loops, split=True))


def _attempts(ranked, times):
    """The labelling attempts: the first ``MAX_COMBOS`` ranked combinations with quick Houdini
    queries, the tightest one tried a second time with patient queries right after its first
    try. The time spent ranking is added to ``times["synthesis"]``."""
    for i in range(MAX_COMBOS):
        ts = time.monotonic()
        nxt = next(ranked, None)
        times["synthesis"] += time.monotonic() - ts
        if nxt is None:
            return
        yield nxt[0], nxt[1], HOUDINI_MS
        if i == 0:
            yield nxt[0], nxt[1], HOUDINI_RETRY_MS


# ---------------------------------------------------------------------------- budget hints


def budget_hints(kap: Kappa, valid) -> List[A.Expr]:
    """Monotonicity facts for the loop terms c·(i - lo) of κ: ``i <= H ⇒ c·(i - lo) <= c·(H - lo)``
    and ``i + 1 <= H ⇒ c·(i - lo + 1) <= c·(H - lo)`` (counting down: c·(lo - i), ``i >= H``,
    ``i - 1 >= H``; a step k of more than 1 counts ``(i - lo) div k`` and uses ``i + k``). Each is
    returned only after ``valid``
    (z3 ``unsat`` under ``requires``) proved it, so it is a consequence of ``requires``, usable as a
    hypothesis by the checker (and recorded in the result, for certificates)."""
    out: List[A.Expr] = []
    for t in kap.terms:
        c, i, lo, H = t.per, A.Var(t.counter), t.init, t.bound
        up = t.step > 0

        def done(x, lo=lo, step=t.step):  # iterations completed when the counter is x
            return iterations_done(x, lo, step)

        def within(x, H=H, up=up):  # x has not passed the counter's final value
            return A.Binary("<=", x, H) if up else A.Binary(">=", x, H)

        try:
            nxt = A.Binary("+" if up else "-", i, A.num(abs(t.step)))
            if t.total is not None:  # a sum S over the iterations: S(i) <= S(H) and S(i + 1) <= S(H)
                S = lambda x, t=t: subst(t.total, {t.counter: x})  # noqa: E731
                for fact in (
                    A.Binary("==>", within(i), A.Binary("<=", S(i), S(H))),
                    A.Binary("==>", within(nxt), A.Binary("<=", S(nxt), S(H))),
                ):
                    if valid(fact) == VALID:
                        out.append(fact)
                continue
            if valid(A.Binary(">=", c, A.num(0))) != VALID:
                continue
            span = A.Binary("*", c, done(H))
            for fact in (
                A.Binary("==>", within(i), A.Binary("<=", A.Binary("*", c, done(i)), span)),
                A.Binary("==>", within(nxt), A.Binary("<=", A.Binary("*", c, A.Binary("+", done(i), A.num(1))), span)),
            ):
                if valid(fact) == VALID:
                    out.append(fact)
        except Timeout:
            raise
        except Exception:  # an inexpressible term: no hint (fewer facts is always sound)
            continue
    return out


# ---------------------------------------------------------------------------- driver


def prove_loops(program, cfa, deadline, t0, progress) -> ProofResult:
    """Try the ranked axiom combinations: κ computed, λ by Houdini, then the full check."""
    stats = Stats()
    enc = Encoder(cfa.types)
    env0 = enc.env0
    req = [enc.expr(r, env0) for r in cfa.requires]
    times = {"synthesis": 0.0, "interpolation": 0.0, "inclusion": 0.0}

    def clock_ms() -> Optional[float]:
        """The time the proof has left (ms), None without a deadline; past it, :class:`Timeout`."""
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout()
        return left * 1000

    def valid_under(hyps, ms, facts=True):
        def valid(goal):
            return is_valid(goal, enc, stats, ms, hyps, clock_ms=clock_ms(), facts=facts)

        return valid

    loops, dag = _loops(cfa)
    # termination first (cheap, and without it no labelling is a proof): an argument per loop
    try:
        rankings, term = prove_termination(cfa, loops, enc, valid_under(req, CHECK_MS))
    except Timeout:
        stuck = timed_out(cfa, "while proving the loops terminate", termination_line(cfa, ""))
        return _done(
            program, cfa, "unknown", t0, "timeout while proving the loops terminate", None, stats, times, [], stuck, 0
        )
    if rankings is None:
        stuck = ProofFailure(NO_TERMINATION, loop_line=termination_line(cfa, term), hint=HINT_TERMINATION)
        return _done(program, cfa, "unknown", t0, term, None, stats, times, [], stuck, 0)
    term_obs = [Obligation(rule, where, status) for rule, where, status, _h in term]
    for h, rc in rank_counts(cfa, loops, rankings).items():  # rank_count.py: ranked loops counted
        cnt = loops[h]["counter"]  # a counter moved on only some iterations does not count them all:
        if cnt is None:  # its loop is counted by its rank first (count_variants), then by the counter
            loops[h]["rank"] = rc
        elif not _every_iteration(cfa, h, loops[h]["body"], cnt.name):
            loops[h]["rank_alt"] = rc
    samples = [(u, v, k) for u, v, k, d in cfa.edges() if isinstance(d["stmt"], A.Sample)]
    spec = list(cfa.ensures) + [cfa.bound]
    n_real = max(1, sum(1 for s in samples if cfa.graph.edges[s]["stmt"].dist.func not in ("bern", "unif")))
    cands = [proposals(cfa.graph.edges[s]["stmt"], spec, cfa.bound, n_real, in_loop=True) for s in samples]
    # prefer costly (informative) axioms derived from the spec: pure cost-0 choices last
    cands = [[c for c in cs if not _zero(c.cost)] + [c for c in cs if _zero(c.cost)] for cs in cands]
    proposals_n = 0
    failure = no_combination(cfa, samples, loops, [])  # explain.py: names the loop's sampling
    skipped: List[str] = []  # why some combinations have no failure bound κ
    user_notes: List[str] = []  # why user invariants were dropped (the last combination tried)
    try:
        ts = time.monotonic()
        points = input_points(cfa)
        times["synthesis"] += time.monotonic() - ts
        # the tightest combination is tried again with patient Houdini queries if quick ones fail
        ranked = ranked_combinations(cfa, samples, cands, loops, dag, skipped)
        for axioms, kap, houdini_ms in _attempts(ranked, times):
            proposals_n += 1
            aut = automaton_of(cfa)
            for e in aut.edges:
                if e.cfa_edge in axioms:
                    e.axiom = axioms[e.cfa_edge]
            for n in aut.nodes.values():
                n.kappa = kap.at[n.id]
            if progress:
                exit_bounds = sorted({show_expr(aut.nodes[x].kappa) for x in aut.exits})
                progress(
                    ProgressEvent(
                        program.name, f"labelling with axioms #{proposals_n}", best_bound=", ".join(exit_bounds) or None
                    )
                )
            ti = time.monotonic()
            valid_req = valid_under(req, 2000)
            facts = budget_hints(kap, lambda e: valid_req(enc.expr(e, env0)))  # noqa: B023 - called here
            hints = [enc.expr(f, env0) for f in facts]
            states = collect_states(cfa, axioms, points)
            live = live_variables(cfa, kap.at, axioms)
            tried = None
            for pools in _pool_phases(cfa, dag, axioms, loops, lean=proposals_n == 1):
                if pools == tried:  # the families added nothing here: Houdini would repeat itself
                    continue
                tried = pools
                # each phase its own solver: what z3 kept from the lean phase's queries (its
                # heuristics' state) would make the next phase a different search
                batch = Batch(enc, stats, req, houdini_ms, deadline)
                houdini(aut, enc, batch, pools, states, live)
                times["interpolation"] += time.monotonic() - ti
                tc = time.monotonic()
                obligations = check_automaton(
                    aut,
                    cfa,
                    enc,
                    valid_under(req + hints, CHECK_MS),
                    cfa.bound,
                    valid_under(req + hints, CHECK_BATCH_MS, facts=False),
                )
                times["inclusion"] += time.monotonic() - tc
                if all(o.status == VALID for o in obligations):
                    break
                ti = time.monotonic()
            bad = [o for o in obligations if o.status != VALID]
            if not bad:
                res = _done(
                    program, cfa, "proved", t0, "", aut, stats, times, obligations + term_obs, None, proposals_n
                )
                res.facts = facts
                res.rankings = rankings
                # a ranked loop has no counter term: the derivation line then shows κ at the exits
                res.loop_terms = [] if kap.ranked else list(kap.terms)
                return res
            failure = loop_fact_failure(cfa, aut, bad) or loop_failure(
                aut, cfa, enc, valid_under(req + hints, CHECK_BATCH_MS), bad
            )  # explain.py: the conjuncts missing after the loop
            failure = with_exit_state(failure, aut, cfa, enc, bad)  # explain.py: a state violating it
            user_notes = explain_user_invariants(aut, enc, batch, cfa)
    except Timeout:
        return _done(
            program,
            cfa,
            "unknown",
            t0,
            f"timeout after {proposals_n} axiom combination(s)",
            None,
            stats,
            times,
            [],
            dataclasses.replace(
                timed_out(
                    cfa, f"after {proposals_n} axiom combination(s), before one proved the loops", failure.stuck_at
                ),
                notes=tuple(user_notes),
            ),
            proposals_n,
        )
    failure = dataclasses.replace(failure, skipped=tuple(skipped[:2]), notes=tuple(user_notes))
    return _done(
        program,
        cfa,
        "unknown",
        t0,
        "not proved (a failed union-bound proof does not mean the claim is false)",
        None,
        stats,
        times,
        [],
        failure,
        proposals_n,
    )


def loop_fact_failure(cfa, aut, bad) -> Optional[ProofFailure]:
    """When the postcondition failed at the exit (rule EXIT), the loop it depends on and what is
    missing in user terms (:data:`.failure.NO_LOOP_FACT`): of the variables the postcondition
    reads that the last such loop writes, those no label kept at its head mentions. None when
    the failure is of another kind (the CHECK failure names its obligations)."""
    if not any(o.rule == "EXIT" for o in bad):
        return None
    params = {p.name for p in cfa.params}
    post = set().union(*(set(free_vars(e)) for e in cfa.ensures)) - params if cfa.ensures else set()
    best = None
    for h in cfa.loop_heads:
        rel = sorted(post & written(cfa, loop_body(cfa, h)))
        line = cfa.graph.nodes[h].get("line") or 0
        if rel and (best is None or line >= best[1]):
            best = (h, line, rel)
    if best is None:
        return None
    h, line, rel = best
    labels = [c for n in aut.nodes.values() if n.cfa_node == h for c in n.label]
    missing = [v for v in rel if not any(v in set(free_vars(c)) for c in labels)]
    kept = tuple(f"kept at the loop head: {show_expr(c)}" for c in labels[:3]) if not missing else ()
    return ProofFailure(
        NO_LOOP_FACT,
        stmt=", ".join(missing),
        line=line or None,
        obligations=check_failure(bad).obligations,
        notes=kept,
    )


def _zero(e):
    return isinstance(e, A.Num) and e.value == 0


def _done(program, cfa, verdict, t0, message, aut, stats, times, obligations, failure, proposals_n):
    st = {
        "traces": 0,
        "proposals": proposals_n,
        "lemma_instances": stats.lemma_instances,
        "solver_calls": stats.solver_calls,
        "solver_time": round(stats.solver_time, 3),
        "solver_unknowns": stats.unknowns,
        "obligations": len(obligations),
        "time": {k: round(v, 4) for k, v in times.items()},
    }
    return ProofResult(
        program.name,
        "failure-bound",
        verdict,
        time.monotonic() - t0,
        show_expr(cfa.bound),
        message,
        cfa=cfa,
        automata=[aut] if aut is not None and verdict == "proved" else [],
        axioms=axioms_table(aut) if aut is not None and verdict == "proved" else [],
        stats=st,
        obligations=obligations,
        failure=failure,
    )
