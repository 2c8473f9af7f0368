"""One proof method called directly, as the prover's entry calls it: a query z3 would not stop
(:class:`tamp.core.watchdog.SolverStuck`, seen on a loaded machine in nonlinear arithmetic) ends
the attempt as unknown there, so it does here. Tests of false claims use it: a stuck query is
not a proof. Tests of true claims call the method itself, so that a stuck query fails them."""

from __future__ import annotations

from tamp.core.watchdog import SolverStuck


def attempt(method, *args):
    """``method(*args)`` (a ``(result, why)`` pair), or ``(None, why)`` when z3 did not stop."""
    try:
        return method(*args)
    except SolverStuck as stuck:
        return None, f"unknown: {stuck}"
