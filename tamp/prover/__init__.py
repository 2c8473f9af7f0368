"""The failure-bound prover: trace abstraction modulo probability, and the methods beside it.

>>> from lang.parser import parse
>>> prog = parse('''program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p
...                 { y ~ bern(p); }''').programs[0]
>>> prove_program(prog).verdict
'proved'

The rooms, one per proof method (each package's docstring states its idea and its soundness):

- :mod:`.base` — the z3 translation, weakest preconditions, claim checks, failure data;
- :mod:`.trace` — trace abstraction modulo probability: traces, axiom synthesis, interpolants,
  the failure automaton and its checker (the union bound);
- :mod:`.counting` — closed forms and iteration counts of loops;
- :mod:`.selection` — running-maximum and sentinel shapes of selection mechanisms;
- :mod:`.concentration` — concentration rules for sums and counts of independent draws;
- :mod:`.loops` — loop programs labelled on the CFA itself, with termination arguments;
- :mod:`.expectation` — expected failure (pre-expectations) for discrete samples;
- :mod:`.infer` — inferred bounds (``fails ?``) and the bound a failed proof needed.

:mod:`.portfolio` walks the methods (:data:`.portfolio.STRATEGIES`, one small interface each);
this module adds inference around it.

What a "proved" means: for every input satisfying ``requires`` and every precondition
``assume`` (one that reads inputs only, :mod:`tamp.cfa.dependence`), the probability that a run
does not end in a state satisfying ``ensures`` is at most the bound — a run that never ends
counts as failing, so every loop needs a termination argument (:mod:`.loops.termination`). A
program with a *conditioning* ``assume`` (its condition depends on a sample) asks for a bound
on Pr[violation | condition], which the rules do not give, so it is answered "unknown" with the
assume's location (:func:`.portfolio.conditioning_refusal`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import List, Optional, Sequence

from lang import ast as A
from tamp.core.watchdog import SolverStuck
from tamp.core.z3context import in_proof, load_in_proof, proof_context
from tamp.prover.infer.needed import with_needed_bound
from tamp.prover.infer.search import infer_program
from tamp.prover.portfolio import STRATEGIES, Strategy, prove_claim
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

__all__ = ["prove_program", "ProofResult"]


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
    on what the process proved before. A query z3 would not stop (:mod:`tamp.core.watchdog`)
    abandons the method that asked it: its context is given up, a new one becomes the default, and
    the methods after it in :data:`.portfolio.STRATEGIES` are tried in a fresh proof context with
    the time left (nothing of the abandoned context is reused: the CFA and every encoding are
    built again from the program). With none left, the proof is "unknown", saying which method
    z3 stalled in."""
    if in_proof():  # a nested proof (a needed bound): the outermost one answers for a stuck query
        return _prove(program, bound, timeout, path, source, progress, STRATEGIES)
    t0 = time.monotonic()
    strategies: Sequence[Strategy] = STRATEGIES
    abandoned: List[str] = []
    while True:
        left = None if timeout is None else timeout - (time.monotonic() - t0)
        try:
            result = _prove(program, bound, left, path, source, progress, strategies)
        except SolverStuck as stuck:  # the watchdog has replaced the abandoned default context
            method = getattr(stuck, "method", None)
            abandoned.append(f"{method}: {stuck}" if method else str(stuck))
            names = [s.name for s in strategies]
            strategies = strategies[names.index(method) + 1 :] if method in names else []
            if _has_hole(program):  # inference walks the portfolio many times: no retry there
                strategies = []
            if strategies and (left is None or left > 1.0):
                continue
            claimed = bound if bound is not None else program.fails
            where = _where(program, path)
            return ProofResult(
                program.name,
                "failure-bound",
                "unknown",
                time.monotonic() - t0,
                show_expr(claimed) if isinstance(claimed, A.Expr) and not isinstance(claimed, A.Hole) else "?",
                "\n  ".join(f"{where}not proved: {a}" for a in abandoned),
            )
        if abandoned:
            result.time_s = time.monotonic() - t0
            note = "; ".join(abandoned)
            result.message = "\n  ".join(
                [
                    m
                    for m in (result.message, f"note: a method was abandoned, the ones after it were tried: {note}")
                    if m
                ]
            )
        return result


def _where(program: A.Program, path: str) -> str:
    pos = program.pos
    return f"{path}:{pos.line}:{pos.col}: " if pos is not None and pos.line else ""


def _prove(program, bound, timeout, path, source, progress, strategies) -> ProofResult:
    with proof_context():
        if isinstance(program.fails, A.Hole) and bound is not None:
            program = dataclasses.replace(program, fails=None)  # --bound answers `fails ?`
        if _has_hole(program):
            load_in_proof("sympy")  # infer's simplifier needs it (see tamp.core.z3context)
            return infer_program(program, bound, timeout, path, source, progress)
        result, problem = prove_claim(program, bound, timeout, path, source, progress, strategies)
        if result.verdict == "proved" or problem is None:
            return result
        deadline = problem.deadline
        if deadline is not None and time.monotonic() >= deadline:
            return result
        load_in_proof("sympy")  # the needed bound is simplified by sympy (see tamp.core.z3context)
        return with_needed_bound(result, program, problem.cfa, path, source, deadline)


def _has_hole(program: A.Program) -> bool:
    return isinstance(program.fails, A.Hole) or any(A.contains(e, A.Hole) for e in program.ensures)
