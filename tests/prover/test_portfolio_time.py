"""An unknown's reported time is the whole walk's: the first method's result carries its reason,
but the methods after it ran too (a union bound's 0.4 s was reported for a 61 s attempt)."""

import time

from lang.parser import parse
from tamp.prover.portfolio import Attempt, UnionBound, prove_claim

SOURCE = """program p(eps: real, q: real)
  requires eps > 0 && q > 0 && q <= 1
  ensures abs(y) <= 1 / eps * log(1 / q)
  fails q / 2
{
  y ~ lap(0, 1 / eps);
}
"""


class Slow:
    name = "slow method"
    method = "slow"
    applies_to = "nothing"

    def attempt(self, problem) -> Attempt:
        time.sleep(0.5)
        return Attempt(None, "it found nothing")


def test_an_unknown_reports_the_time_of_every_method_tried():
    prog = parse(SOURCE, "p.prob").programs[0]
    alone, _ = prove_claim(prog, None, 60, "p.prob", SOURCE, strategies=[UnionBound()])
    assert alone.verdict == "unknown"
    result, _ = prove_claim(prog, None, 60, "p.prob", SOURCE, strategies=[UnionBound(), Slow()])
    assert result.verdict == "unknown"
    assert "slow method: it found nothing" in result.message
    assert result.time_s >= 0.5
