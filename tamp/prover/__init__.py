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
from typing import Optional

from lang import ast as A
from tamp.core.watchdog import SolverStuck
from tamp.core.z3context import in_proof, load_in_proof, new_default_context, proof_context
from tamp.prover.infer.needed import with_needed_bound
from tamp.prover.infer.search import infer_program
from tamp.prover.portfolio import prove_claim
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
    on what the process proved before. A query z3 would not stop (:mod:`tamp.core.watchdog`) ends
    the proof "unknown", saying so; its context is given up and a new one becomes the default."""
    if in_proof():  # a nested proof (a needed bound): the outermost one answers for a stuck query
        return _prove(program, bound, timeout, path, source, progress)
    t0 = time.monotonic()
    try:
        return _prove(program, bound, timeout, path, source, progress)
    except SolverStuck as stuck:
        new_default_context()
        claimed = bound if bound is not None else program.fails
        return ProofResult(
            program.name,
            "failure-bound",
            "unknown",
            time.monotonic() - t0,
            show_expr(claimed) if isinstance(claimed, A.Expr) and not isinstance(claimed, A.Hole) else "?",
            f"not proved: {stuck}",
        )


def _prove(program, bound, timeout, path, source, progress) -> ProofResult:
    with proof_context():
        if isinstance(program.fails, A.Hole) and bound is not None:
            program = dataclasses.replace(program, fails=None)  # --bound answers `fails ?`
        if _has_hole(program):
            load_in_proof("sympy")  # infer's simplifier needs it (see tamp.core.z3context)
            return infer_program(program, bound, timeout, path, source, progress)
        result, problem = prove_claim(program, bound, timeout, path, source, progress)
        if result.verdict == "proved" or problem is None:
            return result
        deadline = problem.deadline
        if deadline is not None and time.monotonic() >= deadline:
            return result
        load_in_proof("sympy")  # the needed bound is simplified by sympy (see tamp.core.z3context)
        return with_needed_bound(result, program, problem.cfa, path, source, deadline)


def _has_hole(program: A.Program) -> bool:
    return isinstance(program.fails, A.Hole) or any(A.contains(e, A.Hole) for e in program.ensures)
