"""Inferred bounds are written in the user's language, and diagnoses about a bound are true
(tamp issue 31).

* A bound inferred through a draw ``x ~ unif(0, n)`` was printed with the engine's sum variable
  ``u$`` (``1 - sum(u$ in 0..=n: u$ >= 2 ? 1 : 0) / (n + 1)``), which ``--bound`` rejects.
* ``reliability 1 - r * sum(j in 0..n: x[j] > 0 ? 1 : 0)`` with ``0 <= r`` got the note that its
  failure bound is negative for some inputs: a sum of 0/1 terms is never negative. The note now
  needs an input at which the bound is negative, evaluated exactly, and the solver knows the
  range of a sum of bounded terms (the ``sum-range`` lemma).
* Every bound inferred for a representative set of benchmarks parses, type-checks and is proved
  again when given back with ``--bound``.
"""

from __future__ import annotations

import pytest

from lang.parser import parse_expr
from tamp.api import prove

UNIF = """
program atLeastTwo(n: int)
  requires n >= 1
  ensures x >= 2
  fails ?
{
  x ~ unif(0, n);
}
"""

SELF = """
program never(n: int)
  requires n >= 1
  ensures x < y
  fails ?
{
  x ~ unif(0, n);
  y := x;
}
"""

RELIABLE = """
program rel(x: int[], n: int, r: real)
  rate r
  requires n >= 1 && 0 <= r && r <= 1
  reliability 1 - r * sum(j in 0..n: x[j] > 0 ? 1 : 0)
{
  s := 0;
  for i in 0..n {
    if (x[i] > 0) { s := s +. 1; }
  }
}
"""

NEGATIVE = """
program neg(p: real, n: int)
  requires 0 < p && p <= 1 && n >= 1
  ensures x
  fails p - 1 / n
{
  x ~ bern(1 - p);
}
"""


def _round_trip(text, program=None, path=None):
    r = prove(text, program=program, infer=True, timeout=60, path=path).programs[0]
    assert r.verdict == "proved", r.message
    assert "$" not in r.bound, r.bound
    parse_expr(r.bound)
    again = prove(text, bound=r.bound, program=program, timeout=60, path=path).programs[0]
    assert again.verdict == "proved", (r.bound, again.message)
    return r.bound


def test_an_inferred_bound_has_no_internal_names_and_is_taken_back():
    # the count of values passing a threshold test in closed form (unifcount28)
    assert _round_trip(UNIF) == "1 - max(0, n - 1) / (n + 1)"


def test_an_inferred_bound_is_folded_where_the_syntax_decides():
    """``x < x`` is false for every x: the sum of its indicator is 0, and the bound 1."""
    assert _round_trip(SELF) == "1"
    r = prove(SELF, timeout=60).programs[0]
    assert "inferred failure bound: 1 (" in r.message, r.message  # not "1 = 1"


def test_a_sum_of_indicators_is_not_called_negative():
    r = prove(RELIABLE, timeout=60).programs[0]
    assert "negative" not in r.message, r.message


def test_a_negative_bound_is_shown_at_an_input_where_it_is_negative():
    r = prove(NEGATIVE, timeout=60).programs[0]
    assert r.verdict != "proved"
    note = next(line for line in r.message.splitlines() if "negative" in line)
    assert "(at p = " in note and ", n = " in note and " it is -" in note, note


@pytest.mark.parametrize(
    "path",
    [
        "benchmarks/illustrative/ex1.prob",
        "benchmarks/illustrative/laplace.prob",
        "benchmarks/reliability/searchRefConcrete.prob",
        "benchmarks/concentration/failuresCount.prob",
        "benchmarks/loops/countBelow.prob",
    ],
)
def test_inferred_benchmark_bounds_are_taken_back(path):
    _round_trip(path)
