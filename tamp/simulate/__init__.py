"""The sampler: run a program many times at concrete inputs and test its claim statistically.

>>> r = simulate("program c() ensures !x fails 0.5 { x ~ bern(0.25); }", {}, runs=20000, seed=1)
>>> r.verdict, r.ci[0] < 0.5
('consistent', True)

``simulate(program_or_source, inputs, runs=100000, seed=0, bound=None, confidence=0.99)``
returns a :class:`SimResult` (``.failures``, ``.runs``, ``.rate``, ``.ci``, ``.bound_value``,
``.verdict``, ``.prob_terms``, ``to_json()``); ``failure_rate_ci(k, n, conf)`` is the exact
Clopper–Pearson interval; ``check_consistent(...)`` raises AssertionError when the samples
refute a claim (for provers' tests); ``run_samples(...)`` returns the final values themselves. A failure bound is REFUTED when the whole interval lies above it;
a probability specification is CONFIRMED / REFUTED / UNDECIDED from simultaneous intervals.
"""

from .errors import SimulationError
from .inputs import convert_inputs
from .result import CONFIRMED, CONSISTENT, REFUTED, UNDECIDED, SimResult
from .runner import check_consistent, resolve_program, run_samples, simulate
from .stats import bonferroni, clopper_pearson, failure_rate_ci

__all__ = ["simulate", "check_consistent", "SimResult", "SimulationError", "failure_rate_ci", "clopper_pearson",
           "bonferroni", "resolve_program", "run_samples", "convert_inputs", "CONSISTENT", "REFUTED", "CONFIRMED",
           "UNDECIDED"]
