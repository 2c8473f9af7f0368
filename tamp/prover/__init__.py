"""The failure-bound prover: trace abstraction modulo probability.

>>> from lang.parser import parse
>>> prog = parse('''program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p
...                 { y ~ bern(p); }''').programs[0]
>>> prove_program(prog).verdict
'proved'

Pipeline (see the modules): :mod:`tamp.cfa` builds the control-flow automaton; the CFA is
unfolded into a trace tree (:mod:`.automaton`); :mod:`.synthesis` chooses one axiom per
sampling so that every trace formula (:mod:`.trace`) is valid; :mod:`.labels` labels the tree
with checked interpolants λ and failure bounds κ; :mod:`.check` verifies the labelled
automaton (the only thing a "proved" rests on). If the plain tree fails, the proof is retried
under a case split on each boolean input. A loop-free program with at least :data:`DAG_TRACES`
traces (k noisy-max branches make 2^(k-1)) is first labelled on its CFA itself, joins included,
as :mod:`.loops` labels loop programs — linear in the program, not in its traces.

What a "proved" means: for every input satisfying ``requires`` and every precondition
``assume`` (one that reads inputs only, :mod:`tamp.cfa.dependence`), the probability that a run
does not end in a state satisfying ``ensures`` is at most the bound — a run that never ends
counts as failing, so every loop needs a termination argument (:mod:`.termination`). The
checker's rules read a run stopped by an ``assume`` as not failing, which is the precondition
meaning of ``assume``; a program with a *conditioning* ``assume`` (its condition depends on a
sample) asks for a bound on Pr[violation | condition], which those rules do not give, so it is
answered "unknown" with the assume's location (:func:`conditioning_refusal`).
"""

from __future__ import annotations

import time
from typing import List, Optional

import axioms
import axioms.lemmas  # noqa: F401  (the lemma library, loaded with the prover)
from lang import ast as A
from lang.errors import UnsupportedError, error_at
from tamp.cfa import build_cfa
from tamp.cfa.dependence import conditioning_assumes, describe
from tamp.core.z3context import load_in_proof, proof_context
from tamp.progress import ProgressEvent

from ..show import show_expr
from .automaton import TooLarge, unfold_tree
from .check import check_automaton
from .claim import check_claim, unreachable_exit_note
from .conc_proof import try_concentration
from .explain import timed_out, with_needed_bound
from .failure import ProofFailure, check_failure
from .labels import label_tree
from .loops import prove_loops
from .result import ProofResult, axioms_table
from .smt import VALID, Encoder, Stats
from .synthesis import OutOfProposals, Search, Timeout, synthesize

__all__ = ["prove_program", "ProofResult"]


def _load_modules() -> None:
    """Load the axiom families before the clock starts: the reported proving time is the
    proof's, not Python's module loading (which the CLI pays once per process). sympy is not
    loaded here: the closed forms that need it (:mod:`.recurrence`) load it on first use
    (0.3-1 s, inside the proof, through :func:`tamp.core.z3context.load_in_proof`), and a proof
    that needs none (most loops, with the claim's own forms) does not pay for it."""
    axioms.all_families()


def prove_program(
    program: A.Program,
    bound: Optional[A.Expr] = None,
    timeout: Optional[float] = None,
    path: str = "<string>",
    source: Optional[str] = None,
    progress=None,
) -> ProofResult:
    """Try to prove that ``program`` violates its postcondition with probability at most ``bound``
    (default: its ``fails`` clause, else 0) for every input satisfying ``requires``.

    The proof runs in a fresh z3 context (:mod:`tamp.core.z3context`): its answer does not depend
    on what the process proved before."""
    with proof_context():
        return _prove_program(program, bound, timeout, path, source, progress)


def _prove_program(program, bound, timeout, path, source, progress) -> ProofResult:
    if _has_hole(program):
        load_in_proof("sympy")  # infer's simplifier needs it (see tamp.core.z3context)
        from .infer import infer_program  # deferred: infer imports this package (it proves each candidate)

        return infer_program(program, bound, timeout, path, source, progress)
    _load_modules()
    t0 = time.monotonic()
    deadline = t0 + timeout if timeout else None
    cfa = build_cfa(program, bound, path, source)
    bound_text = show_expr(cfa.bound)

    notes = check_claim(cfa, path, source, bound_from_option=bound is not None)
    refusal = conditioning_refusal(cfa, path)
    if refusal:
        return ProofResult(
            program.name, "failure-bound", "unknown", time.monotonic() - t0, bound_text, refusal, cfa=cfa
        )
    try:
        conc, conc_why = _concentration(program, cfa, deadline, t0)
        if conc is not None:
            if notes:
                conc.message = "\n  ".join("note: " + n for n in notes)
            return conc
        if cfa.is_acyclic():
            result = None
            traces = trace_count(cfa)
            if traces >= DAG_TRACES:
                # the trace tree would be exponential (k noisy-max branches: 2^(k-1) traces): label
                # the CFA itself, its joins by Houdini (branch_copies.py), as the loop prover does;
                # while the tree is still a way out, the attempt gets half the time left
                dag = prove_loops(program, cfa, _dag_deadline(deadline, traces), t0, progress)
                result = dag if dag.verdict == "proved" else None
            if result is None:
                result = _prove_loop_free(program, cfa, deadline, t0, progress)
        else:
            result = prove_loops(program, cfa, deadline, t0, progress)
        if result.verdict == "proved" and result.automata and not any("vacuously" in n for n in notes):
            vac = unreachable_exit_note(cfa, result.automata[0])
            notes = notes + [vac] if vac else notes
        if result.verdict != "proved":  # products of probabilities over discrete samples
            result = _expectation(program, cfa, deadline, t0, result)
        if result.verdict != "proved" and conc_why:
            result.message = "\n  ".join(
                ([result.message] if result.message else []) + [f"concentration rules: {conc_why}"]
            )
        out_of_time = deadline is not None and time.monotonic() >= deadline
        if result.verdict != "proved" and not out_of_time:  # explain.py: the bound a proof exists for
            load_in_proof("sympy")  # infer's simplifier needs it (see tamp.core.z3context)
            from . import infer  # deferred: infer imports this package (it proves each candidate)

            result = with_needed_bound(result, program, cfa, path, source, deadline, infer)
        if notes:
            result.message = "\n  ".join(["note: " + n for n in notes] + ([result.message] if result.message else []))
        return result
    except UnsupportedError as exc:
        if exc.line == 0 and source is not None:
            exc = error_at(UnsupportedError, exc.message, program.pos, path, source)
        raise exc.with_source(path, source or "")  # noqa: B904 - the same error, now located
    except TooLarge as exc:
        return ProofResult(
            program.name, "failure-bound", "unknown", time.monotonic() - t0, bound_text, f"not proved: {exc}", cfa=cfa
        )


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


def trace_count(cfa) -> int:
    """The number of paths from the entry to the exit of the loop-free ``cfa`` (the traces of
    its trace tree), counted over the DAG in linear time."""
    import networkx as nx

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


def _has_hole(program: A.Program) -> bool:
    return isinstance(program.fails, A.Hole) or any(A.contains(e, A.Hole) for e in program.ensures)


def _concentration(program, cfa, deadline, t0):
    """The concentration proof hook (:mod:`.conc_proof`): tried first, since it is a handful of
    solver queries when the program sums independent draws and nothing at all otherwise."""
    return try_concentration(program, cfa, deadline, t0)


def _expectation(program, cfa, deadline, t0, result):
    """The expected-failure hook (:mod:`.expectation`): tried when the union bound did not prove
    a program whose samples are all discrete; its reason is added to an unknown's message."""
    from .expectation import try_expectation

    exp, why = try_expectation(program, cfa, deadline, t0)
    if exp is not None:
        return exp
    if why and why != "timeout":
        result.message = "\n  ".join(([result.message] if result.message else []) + [f"expected failure: {why}"])
    return result


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
