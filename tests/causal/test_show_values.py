"""Values in the causal engine's text are short (issue 36): a witness computed from an imported
model's exact weights can have fractions of hundreds of digits; the text shows their rounded
decimal (``~x``), short fractions stay exact (``n/d (~x)``), and no value makes the text fail
(Python refuses str() of an integer past 4300 digits)."""

from fractions import Fraction

from tamp.causal.result import LONG_FRACTION, CausalResult, show


def test_short_values_stay_exact():
    assert show(Fraction(3)) == "3"
    assert show(Fraction(1, 2)) == "0.5"
    assert show(Fraction(23429663, 33554432)) == "23429663/33554432 (~0.698258)"
    assert show(Fraction(-7, 3)) == "-7/3 (~-2.33333)"
    assert show(True) == "true"


def test_long_fractions_are_printed_short():
    weight = Fraction(3**300, 2**500)  # the size of a value computed from float32 weights
    assert show(weight) == "~4.18195e-08"
    assert show(Fraction(10**30)) == "~1e+30"
    assert show(Fraction(10**5000, 3)) == "~inf" and show(Fraction(-(10**5000), 3)) == "~-inf"
    for v in (weight, Fraction(10**5000 + 1, 10**5000)):
        assert len(show(v)) <= LONG_FRACTION


def test_a_witness_line_is_short():
    x = Fraction(3**200 + 1, 2**330)
    w = {"inputs": {"x1": x}, "pair": ({"sex": 0, "out": 1}, {"sex": 1, "out": 0})}
    r = CausalResult("m", "causal", "violated", details={"witness": w})
    line = next(ln for ln in r.render_text().splitlines() if "witness" in ln)
    assert len(line) < 80 and f"x1=~{float(x):.6g}" in line, line
