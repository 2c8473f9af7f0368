"""A population's box masses stay short rationals (tamp/causal/population.py's outward grid).

Regression: `tamp fairness --population` with truncated normals (``x ~ gauss(..); assume(..)``)
added thousands of box masses with unrelated denominators and ended in Python's "Exceeds the
limit (4300 digits) for integer string conversion" when it printed the biased mass."""

from fractions import Fraction

from lang.parser import parse
from tamp.causal.population import GRID_BITS, outward, population_measure
from tamp.causal.symexec import Context

PROGRAM = """program p(sex: int, score: real, income: real)
  requires sex == 0 || sex == 1
  requires 400 <= score && score <= 800
  requires 0 <= income && income <= 100
  ensures independent(out, sex)
{
  out := 0.01 * score + 0.1 * income + sex > 11 ? 1 : 0;
}
"""

TRUNCATED = """program population() {
  b ~ bern(0.5);
  sex := b ? 1 : 0;
  score ~ gauss(600, 2500);
  assume(score >= 400 && score <= 800);
  income ~ gauss(50, 100);
  assume(income >= 0 && income <= 100);
}
"""

INDEPENDENT = "program population() { sex ~ unif(0, 1); score ~ gauss(600, 2500); income ~ gauss(50, 100); }"


def _boxes(n):
    """n boxes over (score, income): a grid of thirds and sevenths (unrelated denominators)."""
    out = []
    for i in range(n):
        a = Fraction(400) + Fraction(400 * (i % 9), 9)
        c = Fraction(100 * (i % 7), 7)
        out.append(((a, a + Fraction(400, 9)), (c, c + Fraction(100, 7))))
    return out


def _sum_masses(pop_text, n):
    prog = parse(PROGRAM).programs[0]
    pop = parse(pop_text).programs[0]
    measure, _ = population_measure(pop, prog, prog.ensures[0], Context())
    lo = hi = Fraction(0)
    for box in _boxes(n):
        try:
            a, b = measure(box)
        except (ValueError, TypeError):  # the region's dimensions include the sensitive input
            a, b = measure(((Fraction(0), Fraction(0)),) + box)
        assert 0 <= a <= b <= 1
        lo, hi = lo + a, hi + b
    return lo, hi


def test_truncated_normal_masses_stay_short():
    lo, hi = _sum_masses(TRUNCATED, 60)
    assert lo <= hi
    assert lo.denominator <= 2**GRID_BITS and hi.denominator <= 2**GRID_BITS
    str(lo), str(hi)  # never past the int/str conversion limit


def test_independent_gaussian_masses_stay_short():
    lo, hi = _sum_masses(INDEPENDENT, 60)
    assert lo.denominator <= 2**GRID_BITS and hi.denominator <= 2**GRID_BITS


def test_outward_keeps_short_decimals_and_widens_the_rest():
    assert outward(Fraction(3, 8), Fraction(1, 5)) == (Fraction(3, 8), Fraction(1, 5))
    lo, hi = outward(Fraction(1, 3), Fraction(1, 3))
    assert lo < Fraction(1, 3) < hi and hi - lo <= Fraction(2, 2**GRID_BITS)
    assert outward(Fraction(0), Fraction(1)) == (Fraction(0), Fraction(1))
