"""The portfolio: every failure-bound proof method behind one small interface, tried in order.

A proof method is a :class:`Strategy`: a name, the certificate section its proofs are written
as (``method`` in the certificate, re-checked by :mod:`tamp.certificate`), one sentence on what
it applies to, and ``attempt(problem) -> Attempt``: a proved :class:`ProofResult`, or an unknown
one, or no result with the reason the method did not prove the claim (empty when the program is
outside the method's rules). :data:`STRATEGIES` is the list the dispatcher walks; adding a
method is adding its room and one line there.

Soundness: the portfolio proves nothing itself. A claim is "proved" only when one method's
result says so, and each method's verdict rests on its own checker (the union bound's
:mod:`tamp.prover.trace.check`, the concentration and expectation obligations), re-checked from
the certificate by :mod:`tamp.certificate` with no prover code. Trying several methods is sound
because each one proves the same statement: Pr[violation] <= bound for every input.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Sequence

import networkx as nx

import axioms
import axioms.lemmas  # noqa: F401  (the lemma library, loaded with the prover)
from lang import ast as A
from lang.errors import UnsupportedError, error_at
from lang.walk import Walker, free_vars
from tamp.cfa import CFA, build_cfa
from tamp.cfa.conjuncts import splittable
from tamp.cfa.dependence import conditioning_assumes, describe
from tamp.core.watchdog import SolverStuck
from tamp.core.z3context import collect
from tamp.progress import ProgressEvent
from tamp.prover.base.claim import check_claim, unreachable_exit_note
from tamp.prover.base.failure import ProofFailure, check_failure
from tamp.prover.base.smt import VALID, Encoder, Stats
from tamp.prover.concentration.proof import try_concentration
from tamp.prover.conjuncts.prove import try_conjuncts, try_shares
from tamp.prover.expectation.prove import try_expectation
from tamp.prover.linearity.prove import try_linearity
from tamp.prover.loops.prove import prove_loops
from tamp.prover.nesting.prove import exponential_tail, try_nesting
from tamp.prover.nesting.stages import try_stages
from tamp.prover.reliability.product import try_product
from tamp.prover.trace.automaton import TooLarge, unfold_tree
from tamp.prover.trace.check import check_automaton
from tamp.prover.trace.explain import timed_out
from tamp.prover.trace.labels import label_tree
from tamp.prover.trace.result import ProofResult, axioms_table
from tamp.prover.trace.synthesis import OutOfProposals, Search, Timeout, synthesize
from tamp.show import show_expr

__all__ = ["Attempt", "Problem", "Strategy", "STRATEGIES", "prove_claim", "load_modules"]


@dataclass
class Problem:
    """One claim to prove: the program, its CFA (bound and claim included), the clock."""

    program: A.Program
    cfa: CFA
    t0: float
    deadline: Optional[float]
    progress: Any = None
    #: what one method leaves for a later one on the same claim (the conjunct split's first phase)
    memo: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Attempt:
    """What one method made of a problem: a result (proved, or an unknown with its failure), or
    none and why (``""`` when the program is outside the method's rules)."""

    result: Optional[ProofResult] = None
    why: str = ""

    @property
    def proved(self) -> bool:
        return self.result is not None and self.result.verdict == "proved"


class Strategy(Protocol):
    """A failure-bound proof method."""

    name: str  #: how an unknown's message names the method
    method: str  #: the certificate section its proofs are written as
    applies_to: str  #: one sentence: the programs the method's rules cover

    def attempt(self, problem: Problem) -> Attempt: ...


class Concentration:
    name = "concentration rules"
    method = "concentration"
    applies_to = "claims about sums and counts of independent draws"

    def attempt(self, problem: Problem) -> Attempt:
        result, why = try_concentration(problem.program, problem.cfa, problem.deadline, problem.t0)
        return Attempt(result, why)


class UnionBound:
    name = "union bound"
    method = "union-bound"
    applies_to = "every program: trace abstraction modulo probability (the trace tree, or the CFA for loops)"

    def attempt(self, problem: Problem) -> Attempt:
        program, cfa, deadline, t0 = problem.program, problem.cfa, problem.deadline, problem.t0
        if not cfa.is_acyclic():
            return Attempt(prove_loops(program, cfa, deadline, t0, problem.progress))
        traces = trace_count(cfa)
        if traces >= DAG_TRACES:
            # the trace tree would be exponential (k noisy-max branches: 2^(k-1) traces): label
            # the CFA itself, its joins by Houdini (loops/branch_copies.py), as the loop prover
            # does; while the tree is still a way out, the attempt gets half the time left
            dag = prove_loops(program, cfa, _dag_deadline(deadline, traces), t0, problem.progress)
            if dag.verdict == "proved":
                return Attempt(dag)
            return Attempt(_prove_loop_free(program, cfa, deadline, t0, problem.progress))
        # one path whatever the size (issue 33): a small tree first, with half the time left,
        # and the CFA when the tree did not prove the claim, so a program is not proved at 32
        # traces and unknown at 16 because only one of the two labellings was tried
        tree = _prove_loop_free(program, cfa, _half(deadline), t0, problem.progress)
        if tree.verdict == "proved":
            return Attempt(tree)
        dag = prove_loops(program, cfa, deadline, t0, problem.progress)
        return Attempt(dag if dag.verdict == "proved" else tree)


class Expectation:
    name = "expected failure"
    method = "expectation"
    applies_to = "programs whose samples are all discrete: products of probabilities (pre-expectations)"

    def attempt(self, problem: Problem) -> Attempt:
        result, why = try_expectation(problem.program, problem.cfa, problem.deadline, problem.t0)
        return Attempt(result, "" if why == "timeout" else why)


class Linearity:
    name = "linearity of expectation"
    method = "linearity"
    applies_to = "Markov and Chebyshev on a sum a program accumulates: its moments by linearity, no invariant search"

    def attempt(self, problem: Problem) -> Attempt:
        result, why = try_linearity(problem.program, problem.cfa, problem.deadline, problem.t0)
        return Attempt(result, "" if why == "timeout" else why)


class Product:
    name = "product rule"
    method = "product"
    applies_to = "reliability claims 1 - (1 - r)^N: the reliable execution performs at most N unreliable operations"

    def attempt(self, problem: Problem) -> Attempt:
        def counting(cfa: CFA) -> Optional[ProofResult]:
            sub = Problem(problem.program, cfa, problem.t0, problem.deadline, problem.progress)
            return UnionBound().attempt(sub).result

        result, why = try_product(problem.cfa, problem.t0, counting)
        return Attempt(result, why)


class Nesting:
    name = "per-iteration composition"
    method = "nesting"
    applies_to = (
        "a loop that raises a flag: one iteration proved by any method, summed (union bound) or "
        "multiplied (independent repetitions) over the iterations"
    )

    def attempt(self, problem: Problem) -> Attempt:
        def prove(program: A.Program, cfa: CFA) -> ProofResult:
            sub = Problem(program, cfa, problem.t0, deadline, problem.progress)
            return _walk(sub, STRATEGIES)[0]

        def quick(program: A.Program, cfa: CFA) -> ProofResult:  # the methods without a search
            sub = Problem(program, cfa, problem.t0, deadline, problem.progress)
            kinds = (Linearity, Concentration) if exponential_tail(cfa.bound) else (Linearity,)
            return _walk(sub, [s for s in STRATEGIES if isinstance(s, kinds)])[0]

        # the iterations get half the time left: expected failure, tried next, may search until
        # the deadline on a loop whose body it cannot bound
        deadline = _half(problem.deadline)
        result, why = try_nesting(problem.program, problem.cfa, problem.t0, deadline, prove, quick)
        if result is None and not why:  # no flag loop: the stage product (tamp.cfa.stages)
            result, why = try_stages(problem.program, problem.cfa, problem.t0, deadline, prove)
        return Attempt(result, why)


class Conjuncts:
    name = "conjunct split"
    method = "conjuncts"
    applies_to = (
        "a postcondition of several conjuncts: those that hold on every run proved with bound 0, "
        "the rest with the claim's bound (tried when the whole claim was not proved)"
    )

    def __init__(self, shares: bool = True) -> None:
        #: whether the second phase (each conjunct apart with a share of the bound) runs here too;
        #: the portfolio runs it as its own, later method (:class:`ConjunctShares`)
        self.shares = shares

    def attempt(self, problem: Problem) -> Attempt:
        result, why = try_conjuncts(
            problem.program, problem.cfa, problem.t0, problem.deadline, _sub_prover(problem), self.shares, problem.memo
        )
        return Attempt(result, why)


class ConjunctShares:
    name = "conjunct split with shares"
    method = "conjuncts"
    applies_to = (
        "a postcondition of several conjuncts none of which holds on every run: each proved apart "
        "with a share of the claim's bound, the shares adding up to at most the bound (tried last)"
    )

    def attempt(self, problem: Problem) -> Attempt:
        result, why = try_shares(
            problem.program, problem.cfa, problem.t0, problem.deadline, _sub_prover(problem), problem.memo
        )
        return Attempt(result, why)


def _sub_prover(problem: Problem):
    """The portfolio on a conjunct's claim: every method but the split (walked only on the
    outermost claim) and the product rule (for reliability claims, which are not split)."""
    subs = [s for s in STRATEGIES if not isinstance(s, (Conjuncts, ConjunctShares, Product))]

    def prove(program: A.Program, cfa: CFA, deadline: Optional[float]) -> tuple[ProofResult, List[str]]:
        return _walk(Problem(program, cfa, problem.t0, deadline, problem.progress), subs)

    return prove


#: the methods, in the order they are tried: concentration is a handful of queries when it
#: applies and nothing otherwise; the union bound covers every program; expected failure is
#: tried on what the union bound could not prove, after a flag loop's iterations (which re-enter the
#: portfolio on one iteration, with half the time left); the conjunct split only on the
#: outermost claim: its first phase (sure conjuncts) before expected failure (which may search
#: until the deadline), with half the time left, its second (shares of the bound, a walk of the
#: portfolio per conjunct) after it, expected failure then getting half the time left
#: (:func:`_walk`)
STRATEGIES: List[Strategy] = [
    Product(),
    Concentration(),
    UnionBound(),
    Linearity(),
    Nesting(),
    Conjuncts(shares=False),
    Expectation(),
    ConjunctShares(),
]


def load_modules() -> None:
    """Load the axiom families before the clock starts: the reported proving time is the
    proof's, not Python's module loading (which the CLI pays once per process). sympy is not
    loaded here: the closed forms that need it (:mod:`tamp.prover.counting.recurrence`) load it
    on first use (through :func:`tamp.core.z3context.load_in_proof`)."""
    axioms.all_families()


def prove_claim(
    program: A.Program,
    bound: Optional[A.Expr],
    timeout: Optional[float],
    path: str,
    source: Optional[str],
    progress=None,
    strategies: Sequence[Strategy] = STRATEGIES,
) -> tuple[ProofResult, Optional[Problem]]:
    """Walk ``strategies`` on the claim of ``program`` (its ``fails``, or ``bound``); the first
    proof wins. An unknown carries the union bound's failure and every other method's reason.
    The :class:`Problem` is returned too (None when the claim was refused before any method)."""
    load_modules()
    t0 = time.monotonic()
    deadline = t0 + timeout if timeout else None
    cfa = build_cfa(program, bound, path, source)
    bound_text = show_expr(cfa.bound)
    notes = check_claim(cfa, path, source, bound_from_option=bound is not None)
    refusal = conditioning_refusal(cfa, path)
    if refusal:
        return ProofResult(
            program.name, "failure-bound", "unknown", time.monotonic() - t0, bound_text, refusal, cfa=cfa
        ), None
    problem = Problem(program, cfa, t0, deadline, progress)
    try:
        result, reasons = _walk(problem, strategies, outer=True)
    except UnsupportedError as exc:
        if exc.line == 0 and source is not None:
            exc = error_at(UnsupportedError, exc.message, program.pos, path, source)
        raise exc.with_source(path, source or "")  # noqa: B904 - the same error, now located
    except TooLarge as exc:
        result, reasons = (
            ProofResult(
                program.name,
                "failure-bound",
                "unknown",
                time.monotonic() - t0,
                bound_text,
                f"not proved: {exc}",
                cfa=cfa,
            ),
            [],
        )
    if result.verdict == "proved":
        if result.automata and not any("vacuously" in n for n in notes):
            vac = unreachable_exit_note(cfa, result.automata[0])
            notes = notes + [vac] if vac else notes
    elif reasons:
        result.message = "\n  ".join(([result.message] if result.message else []) + reasons)
    if notes:
        result.message = "\n  ".join(["note: " + n for n in notes] + ([result.message] if result.message else []))
    return result, problem


def _walk(problem: Problem, strategies: Sequence[Strategy], outer: bool = False) -> tuple[ProofResult, List[str]]:
    """The first proved result, or the first unknown result with the others' reasons. The
    conjunct split is walked only on the ``outer`` claim (not on the sub-claims of a method),
    when it has several conjuncts; with a time limit each of its phases gets half the time left
    when a method follows it, and concentration, before it, half the time left then, as does
    expected failure before the second phase when it has work (:func:`_shares_follow`)."""
    unknown: Optional[ProofResult] = None
    reasons: List[str] = []
    split = outer and splittable(problem.program)
    strategies = _ordered(strategies, problem.cfa.bound)
    for i, strategy in enumerate(strategies):
        later = strategies[i + 1 :]
        collect()  # the previous method's garbage, at the same point in every process
        try:
            if isinstance(strategy, (Conjuncts, ConjunctShares)):
                if not split:
                    continue
                attempt = strategy.attempt(_halved(problem) if later else problem)
            elif split and isinstance(strategy, Concentration):
                # on a conjunct it has no rule for, concentration may search until the deadline:
                # the split, tried later, keeps half the time
                attempt = strategy.attempt(_halved(problem))
            elif split and isinstance(strategy, Expectation) and _shares_follow(problem, later):
                # the same for expected failure before the split's second phase
                attempt = strategy.attempt(_halved(problem))
            else:
                attempt = strategy.attempt(problem)
        except SolverStuck as stuck:  # the outermost walk's method is the one named (set last)
            stuck.method = strategy.name
            raise
        except RecursionError:
            # a method whose analysis recurses over the expressions (a 1000-term sum written out)
            # gives up on this claim; the methods after it still try it
            reasons.append(
                f"{strategy.name}: {_program_at(problem)}the program's expressions are nested too deeply for its analysis"
            )
            continue
        if attempt.proved:
            assert attempt.result is not None
            return attempt.result, []
        if attempt.result is not None and unknown is None:
            unknown = attempt.result
        elif attempt.why:
            reasons.append(f"{strategy.name}: {attempt.why}")
    if unknown is None:  # no method produced a result: say why each did not apply
        why = "; ".join(reasons) or "no proof method applies to this program"
        cfa = problem.cfa
        unknown = ProofResult(
            problem.program.name,
            "failure-bound",
            "unknown",
            time.monotonic() - problem.t0,
            show_expr(cfa.bound),
            f"not proved: {why}",
            cfa=cfa,
        )
        reasons = []
    # the unknown is the first method's result, timed when that method stopped: the user is told
    # how long the whole walk took (a union bound's 0.4 s was reported for a 61 s attempt)
    unknown.time_s = time.monotonic() - problem.t0
    return unknown, reasons


def _shares_follow(problem: Problem, later: Sequence[Strategy]) -> bool:
    """Whether the split's second phase comes later and has work: at least two conjuncts left
    that the first phase did not prove to hold on every run (or no first phase was walked)."""
    if not any(isinstance(s, ConjunctShares) for s in later):
        return False
    split = problem.memo.get("split")
    return split is None or len(split[1]) >= 2


class _Exponential(Walker[bool]):
    def Call(self, node: A.Call, kids) -> bool:
        return node.func == "exp" or any(kids)

    def default(self, node, kids) -> bool:
        return any(kids)


def _ordered(strategies: Sequence[Strategy], bound: A.Expr) -> Sequence[Strategy]:
    """``strategies`` with linearity of expectation moved before concentration when the bound is
    a symbolic expression without ``exp``: concentration's rules give exponential tails, so on a
    Markov or Chebyshev bound (``n * p / t``) they search to no avail before linearity's few
    queries prove it. Only the order changes: every method is still tried."""
    kinds = [type(s) for s in strategies]
    if Concentration not in kinds or Linearity not in kinds or not free_vars(bound):
        return strategies
    c, lin = kinds.index(Concentration), kinds.index(Linearity)
    if lin < c or _Exponential().walk(bound):
        return strategies
    moved = list(strategies)
    moved.insert(c, moved.pop(lin))
    return moved


#: a loop-free program with at least this many traces is first labelled on its CFA (a DAG)
DAG_TRACES = 32


#: time for the CFA-shaped attempt when the proof has no time limit and the tree is still small
DAG_SECONDS = 60.0
#: from this many traces on the tree is no way out: the CFA-shaped attempt gets all the time
TREE_HOPELESS = 1024


def _dag_deadline(deadline: Optional[float], traces: int) -> Optional[float]:
    if traces >= TREE_HOPELESS:
        return deadline
    now = time.monotonic()
    if deadline is None:
        return now + DAG_SECONDS
    return now + max(deadline - now, 0.0) / 2


def _halved(problem: Problem) -> Problem:
    """``problem`` with half the time left (:func:`_half`)."""
    return Problem(problem.program, problem.cfa, problem.t0, _half(problem.deadline), problem.progress, problem.memo)


def _half(deadline: Optional[float]) -> Optional[float]:
    """Half the time left before ``deadline`` (None: no limit, the tree's proposals are capped)."""
    if deadline is None:
        return None
    now = time.monotonic()
    return now + max(deadline - now, 0.0) / 2


def trace_count(cfa) -> int:
    """The number of paths from the entry to the exit of the loop-free ``cfa`` (the traces of
    its trace tree), counted over the DAG in linear time."""
    paths = {cfa.entry: 1}
    for n in nx.topological_sort(cfa.graph):
        for _u, v, _k in cfa.graph.out_edges(n, keys=True):
            paths[v] = paths.get(v, 0) + paths.get(n, 0)
    return paths.get(cfa.exit, 0)


def conditioning_refusal(cfa, path: str) -> str:
    """'' when no user ``assume`` of ``cfa`` conditions on a sampled value; else why the
    failure bound is not proved, naming each such ``assume`` (file:line:col)."""
    found = conditioning_assumes(cfa)
    if not found:
        return ""
    first = found[0]
    cond = show_expr(first.stmt.cond)
    lines = [f"not proved: {describe(c, path)}" for c in found]
    lines.append(
        f"under conditioning the claim bounds Pr[violation | {cond}] = Pr[violation and {cond}] / "
        f"Pr[{cond}], and the prover cannot bound Pr[{cond}] from below; if the runs where the "
        f"condition fails should simply pass, write `if ({cond}) {{ … }}` around the rest of the "
        "program instead (a condition on inputs only belongs in `requires`); with every input fixed "
        "(--input), `tamp prove` decides the conditional bound exactly with the probability engine "
        "when it can"
    )
    return "\n  ".join(lines)


def _prove_loop_free(program, cfa, deadline, t0, progress) -> ProofResult:
    stats = Stats()
    enc = Encoder(cfa.types)
    bound_text = show_expr(cfa.bound)
    spec = list(cfa.ensures) + [cfa.bound]
    n_real = sum(1 for e in cfa.sample_edges() if e[3]["stmt"].dist.func not in ("bern", "unif"))
    splits_tried: List[List[A.Expr]] = [[]] + [[A.Var(p.name)] for p in program.params if p.type == A.BOOL]
    times = {"synthesis": 0.0, "interpolation": 0.0, "inclusion": 0.0}
    first_failure: Optional[ProofFailure] = None
    total_props = 0
    traces = 0
    for splits in splits_tried:
        aut = unfold_tree(cfa, splits)
        search = Search(cfa, aut, enc, stats, deadline, cfa.bound, spec, n_real)
        if progress:
            progress(
                ProgressEvent(
                    program.name,
                    f"synthesising axioms for {len(aut.exits)} traces"
                    + (f", split on {show_expr(splits[0])}" if splits else ""),
                    traces=len(aut.exits),
                )
            )
        ts = time.monotonic()
        try:
            ok = synthesize(search)
        except Timeout:
            times["synthesis"] += time.monotonic() - ts
            return _result(
                program,
                cfa,
                "unknown",
                t0,
                bound_text,
                f"timeout during axiom synthesis ({search.traces_proved} of {len(aut.exits)} traces proved so far)",
                [],
                search,
                stats,
                times,
                [],
                timed_out(
                    cfa,
                    f"while choosing axioms for the samplings ({search.traces_proved} of {len(aut.exits)} "
                    "traces proved)",
                    _stuck_line(search.failure or first_failure),
                ),
            )
        except OutOfProposals:
            times["synthesis"] += time.monotonic() - ts
            return _result(
                program,
                cfa,
                "unknown",
                t0,
                bound_text,
                f"gave up after {search.proposals} axiom proposals without a combination that proves "
                f"every trace ({search.traces_proved} of {len(aut.exits)} traces proved on the way); "
                "the claim may need a larger bound or a weaker postcondition — `tamp simulate` "
                "can test it at concrete inputs",
                [],
                search,
                stats,
                times,
                [],
                search.failure or first_failure,
            )
        times["synthesis"] += time.monotonic() - ts
        total_props += search.proposals
        traces = len(aut.exits)
        if not ok:
            if first_failure is None and search.failure is not None:
                first_failure = search.failure
            continue
        ti = time.monotonic()
        try:
            label_tree(aut, cfa, enc, search.valid)
            times["interpolation"] += time.monotonic() - ti
            tc = time.monotonic()
            obligations = check_automaton(aut, cfa, enc, search.valid, cfa.bound, search.valid_quick)
            times["inclusion"] += time.monotonic() - tc
        except Timeout:
            return _result(
                program,
                cfa,
                "unknown",
                t0,
                bound_text,
                f"timeout while labelling/checking the automaton (all {traces} traces proved)",
                [aut],
                search,
                stats,
                times,
                [],
                timed_out(cfa, f"while checking the proof of the postcondition (all {traces} traces proved)"),
                total_props,
            )
        bad = [o for o in obligations if o.status != VALID]
        if not bad:
            return _result(
                program, cfa, "proved", t0, bound_text, "", [aut], search, stats, times, obligations, None, total_props
            )
        first_failure = first_failure or check_failure(bad, aut)
    msg = "not proved (a failed union-bound proof does not mean the claim is false)"
    return _result(
        program, cfa, "unknown", t0, bound_text, msg, [], search, stats, times, [], first_failure, total_props
    )


def _stuck_line(failure: Optional[ProofFailure]) -> Optional[int]:
    return failure.stuck_at if failure is not None else None


def _result(
    program, cfa, verdict, t0, bound_text, message, automata, search, stats, times, obligations, failure, proposals=None
):
    st = {
        "traces": len(search.aut.exits),
        "proposals": proposals if proposals is not None else search.proposals,
        "lemma_instances": stats.lemma_instances,
        "solver_calls": stats.solver_calls,
        "solver_time": round(stats.solver_time, 3),
        "solver_unknowns": stats.unknowns,
        "obligations": len(obligations),
        "time": {k: round(v, 4) for k, v in times.items()},
    }
    axioms = axioms_table(automata[0]) if automata else []
    return ProofResult(
        program.name,
        "failure-bound",
        verdict,
        time.monotonic() - t0,
        bound_text,
        message,
        cfa=cfa,
        automata=automata,
        axioms=axioms,
        stats=st,
        obligations=obligations,
        failure=failure,
    )


def _program_at(problem) -> str:
    """``file:line:col: `` of the program's declaration, the place a reason about the whole program points at."""
    pos = problem.program.pos
    path = getattr(problem.cfa, "path", None) or "<string>"
    return f"{path}:{pos.line}:{pos.col}: " if pos is not None and pos.line else ""
