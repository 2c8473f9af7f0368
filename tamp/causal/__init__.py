"""Causal fairness of decision programs and counterfactual queries.

* :func:`certify_program` decides ``ensures independent(out, sex)`` for a
  deterministic program by self-composition, interval bound propagation and SMT
  over a partition of the input box (see docs/causal.md).
* :func:`query` answers counterfactual *would* / *might* questions about a
  program around a factual input.
"""

from .analyzer import Options  # noqa: F401
from .certify import certify_program  # noqa: F401
from .counterfactual import ask
from .result import CausalResult, QueryResult  # noqa: F401


def query(program, given, vary, would=None, might=None, probably=None, **kw):
    """Ask a counterfactual question (see :func:`tamp.causal.query.ask`)."""
    return ask(program, given, vary, would=would, might=might, probably=probably, **kw)


__all__ = ["certify_program", "query", "CausalResult", "QueryResult", "Options"]
