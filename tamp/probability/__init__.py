"""The probability engine: decides ``ensures`` clauses with ``P(…)`` and fairness.

>>> from tamp.probability import probability
>>> probability("program p() { a ~ bern(0.3); b ~ bern(0.6); }", "a || b")
Fraction(18, 25)

``decide_program(program, inputs, timeout, path, source) -> ProbResult`` decides a
program's probability specifications; ``probability(...)`` computes one term.
Exact rationals where the distributions allow (discrete choices, polynomial
densities via :func:`tamp.wmi.integrate_polytope`), certified intervals
otherwise (Gaussian, Laplace, exponential); see docs/probability.md.
"""

from tamp.core.interval import Interval

from .decide import decide_program, expand_fairness, probabilities, probability
from .result import ProbResult

__all__ = ["decide_program", "probability", "probabilities", "expand_fairness", "Interval", "ProbResult"]
