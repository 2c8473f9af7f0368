"""An undecided comparison says why (issue 31, item 6): a truncated dlap/dexp tail is reported
as truncation, with the mass it leaves out, not as "the comparison may be an exact tie"."""

import math

from lang.parser import parse
from tamp.cli import main
from tamp.probability import decide_program

TAIL = """program tail()
  ensures P(k > 5000) >= 0.005
{
  k ~ dexp(0, 1000);
}
"""


def decide(text):
    return decide_program(parse(text).programs[0], path="t.prob", source=text)


def test_truncated_tail_is_reported_as_truncation_with_its_mass():
    r = decide(TAIL)
    assert r.verdict == "unknown"
    assert "truncated" in r.message and "tie" not in r.message, r.message
    lost = math.exp(-5001 / 1000)  # P(k > 5000) = e^(-5001/1000): all of it lies past the 5000 values
    assert f"{lost:.3g}" in r.message, r.message


def test_the_command_says_it(tmp_path, capsys):
    f = tmp_path / "tail.prob"
    f.write_text(TAIL)
    assert main(["prob", str(f)]) == 1
    out = capsys.readouterr().out
    assert "dlap/dexp tail is truncated" in out and "exact tie" not in out, out


def test_a_tie_without_truncation_is_still_a_tie():
    r = decide("program tie() ensures P(x < 0) >= 0.5 { x ~ gauss(0, 1); }")
    assert r.verdict == "unknown" and "exact tie" in r.message and "truncated" not in r.message, r.message


def test_a_truncated_tail_that_does_not_matter_still_decides():
    r = decide("program t() ensures P(x < 1 && k <= 3) >= 0.1 { x ~ lap(0, 1); k ~ dexp(0, 1); }")
    assert r.verdict == "proved", r.render_text()
