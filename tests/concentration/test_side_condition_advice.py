"""A failed side condition is suggested only when adding it would give the proof (issue 36).

Regression: tamp printed "the side condition `log(2 / p) <= 1` … does not follow from
`requires`" even where `requires` makes it false (p <= 0.1: log(20) > 1), a suggestion that
leaves no input to prove anything about. Now the message says that the condition contradicts
`requires`, and says "with it added to `requires` every obligation of this rule holds" only when
the solver checked that."""

import pytest

from tamp.api import prove

NO_RANGE = """program noRange(q: int[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && p > 0 && p <= 1
  ensures  abs(s - sum(j in 0..n: q[j])) <= 2 / eps * sqrt(2 * n * log(2 / p))
  fails    p
{
  s := 0;
  for i in 0..n {
    y ~ lap(q[i], 1 / eps);
    s := s + y;
  }
}
"""
# one draw and p <= 0.1: Bernstein's range log(2 / p) / n <= 1 is false for every input
SMALL_P = NO_RANGE.replace("n >= 1 && eps > 0 && p > 0 && p <= 1", "n == 1 && eps > 0 && p > 0 && p <= 0.1")


def _concentration_line(text):
    r = prove(text, timeout=60)
    assert r.verdict == "unknown"
    lines = [ln for ln in r.render_text().splitlines() if "concentration rules:" in ln]
    assert len(lines) == 1, r.render_text()
    return lines[0]


@pytest.mark.parametrize(
    "text, said, not_said",
    [
        (NO_RANGE, "with it added to `requires` every obligation of this rule holds", "contradicts"),
        (SMALL_P, "contradicts `requires`: the rule cannot apply", "does not follow"),
    ],
    ids=["useful", "contradicts-requires"],
)
def test_side_condition_advice(text, said, not_said):
    line = _concentration_line(text)
    assert said in line and not_said not in line, line
    assert "`log(2 / p) / n <= 1`" in line, line
