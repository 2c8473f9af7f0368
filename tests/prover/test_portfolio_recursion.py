"""A method that runs out of Python's recursion depth on a claim gives up on it; the methods after
it still try the claim (a 1001-term linear model is proved by the union bound after linearity of
expectation's analysis recursed too deeply: tests/prover/test_long_chains.py, slow)."""

from lang.parser import parse
from tamp.prover.portfolio import Attempt, UnionBound, prove_claim

SOURCE = """program p(eps: real, q: real)
  requires eps > 0 && q > 0 && q <= 1
  ensures abs(y) <= 1 / eps * log(1 / q)
  fails q
{
  y ~ lap(0, 1 / eps);
}
"""


class Deep:
    name = "deep method"
    method = "deep"
    applies_to = "nothing"

    def attempt(self, problem) -> Attempt:
        raise RecursionError("maximum recursion depth exceeded")


def test_a_method_out_of_recursion_depth_gives_up_and_the_next_proves():
    prog = parse(SOURCE, "p.prob").programs[0]
    result, _ = prove_claim(prog, None, 60, "p.prob", SOURCE, strategies=[Deep(), UnionBound()])
    assert result.verdict == "proved"


def test_when_no_method_is_left_the_reason_names_the_method():
    prog = parse(SOURCE, "p.prob").programs[0]
    result, _ = prove_claim(prog, None, 60, "p.prob", SOURCE, strategies=[Deep()])
    assert result.verdict == "unknown"
    assert "deep method: the program's expressions are nested too deeply" in result.message
