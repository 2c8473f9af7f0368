"""The sampler: run a program many times at concrete inputs and test its claim statistically.

>>> r = simulate("program c() ensures !x fails 0.5 { x ~ bern(0.25); }", {}, runs=20000, seed=1)
>>> r.verdict, r.ci[0] < 0.5
('consistent', True)

``simulate(program_or_source, inputs, runs=100000, seed=0, bound=None, confidence=0.99)``
returns a :class:`SimResult` (``.failures``, ``.runs``, ``.rate``, ``.ci``, ``.bound_value``,
``.verdict``, ``.prob_terms``, ``to_json()``); ``failure_rate_ci(k, n, conf)`` is the exact
Clopper–Pearson interval; ``check_consistent(...)`` raises AssertionError when the samples
refute a claim (for provers' tests); ``run_samples(...)`` returns the final values themselves.
A failure bound is REFUTED when the whole interval lies above it; a probability specification
is CONFIRMED / REFUTED / UNDECIDED from simultaneous (Bonferroni) intervals.

Semantics (where LANGUAGE.md leaves a choice):

* Arithmetic is exact (docs/getting-started.md, "What a simulation guarantees"): ints are
  int64 (an overflow is an error), reals are certified double balls (:mod:`.arith_ball`),
  and a run whose comparison the balls do not decide is re-run from the same keyed draws
  (:mod:`.draws`) with arb balls and then sympy (:mod:`.arith`); a run still undecided is
  counted as undecided (``SimResult.undecided``), as kept and passing for the verdict.
  ``requires``, ``fails``, ``rate``, ``reliability`` and ``--bound`` are evaluated exactly
  over the inputs (:mod:`.exact`: Fractions, arb balls, sympy).
* ``&&``, ``||``, ``==>``, ``?:``, ``forall``/``exists`` are short-circuit per run; several
  ``ensures`` clauses are conjoined left to right the same way. Reading a variable that has no
  value on some run (never assigned on its path) is an error, not an arbitrary value.
* ``div``/``mod`` are Euclidean (``0 <= r < |d|``), as in SMT-LIB.
* ``for i in lo..hi`` is ``i := lo; while (i < hi) { body; i := i + 1 }`` (``hi`` re-read
  each iteration, as in the CFA).
* ``assume(c)`` discards the runs where ``c`` is false (conditioning); rates and P terms are over
  the kept runs. An ``assume`` whose condition reads inputs only (:mod:`tamp.cfa.dependence`) is a
  precondition: inputs that violate it are an error, like a false ``requires``.
* ``unif({...})`` of constants removes duplicates (a set); ``S1 * S2`` gives pairs.
* ``dlap(m, s)`` is m + G1 - G2 with G1, G2 i.i.d. geometric (Pr(g) ∝ exp(-g/s)); ``dexp(k, s)``
  is k + G; ``density`` is sampled by rejection under the bound Σ|coefficients| of the
  polynomial rescaled to [0, 1] (exact in distribution); ``step`` picks a bin by weight, then
  a uniform point.
* Each unreliable operation fails independently with the program's ``rate`` (one keyed
  uniform per run) and sets the implicit ``failed``; its value stays exact. ``reliability E`` adds ``!failed`` to the
  ``ensures`` with bound ``1 - E`` (a ``fails`` clause, when also present, is the bound).
* Runs are simulated in chunks of 500,000 (bounded memory); the k-th uniform of run r is a
  function of (seed, r, k) (SplitMix64), so a seed fixes the result and a run's draws do not
  depend on the other runs. Loops get 50,000 iterations in total (nested loops share them).
"""

from .errors import SimulationError
from .inputs import convert_inputs
from .result import CONFIRMED, CONSISTENT, REFUTED, UNDECIDED, SimResult
from .runner import check_consistent, resolve_program, run_samples, simulate
from .stats import bonferroni, clopper_pearson, failure_rate_ci

__all__ = [
    "simulate",
    "check_consistent",
    "run_samples",
    "SimResult",
    "SimulationError",
    "failure_rate_ci",
    "clopper_pearson",
    "bonferroni",
    "resolve_program",
    "convert_inputs",
    "CONSISTENT",
    "REFUTED",
    "CONFIRMED",
    "UNDECIDED",
]
