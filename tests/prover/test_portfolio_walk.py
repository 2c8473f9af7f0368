"""How the portfolio walks its methods (tamp/prover/portfolio.py): a method that runs out of Python's
recursion depth on a claim gives up on it and the methods after it still try the claim (a 1001-term linear
model is proved by the union bound after linearity of expectation's analysis recursed too deeply:
tests/prover/test_long_chains.py, slow); and an unknown's reported time is the whole walk's, not the first
method's (a union bound's 0.4 s was reported for a 61 s attempt)."""

import time

from lang.parser import parse
from tamp.prover.portfolio import Attempt, UnionBound, prove_claim


def source(bound: str) -> str:
    """A one-draw Laplace claim the union bound proves with bound q (and not with q / 2)."""
    return f"""program p(eps: real, q: real)
  requires eps > 0 && q > 0 && q <= 1
  ensures abs(y) <= 1 / eps * log(1 / q)
  fails {bound}
{{
  y ~ lap(0, 1 / eps);
}}
"""


class Deep:
    name = "deep method"
    method = "deep"
    applies_to = "nothing"

    def attempt(self, problem) -> Attempt:
        raise RecursionError("maximum recursion depth exceeded")


class Slow:
    name = "slow method"
    method = "slow"
    applies_to = "nothing"

    def attempt(self, problem) -> Attempt:
        time.sleep(0.5)
        return Attempt(None, "it found nothing")


def _prove(bound: str, strategies):
    text = source(bound)
    prog = parse(text, "p.prob").programs[0]
    return prove_claim(prog, None, 60, "p.prob", text, strategies=strategies)[0]


def test_a_method_out_of_recursion_depth_gives_up_and_the_next_proves():
    assert _prove("q", [Deep(), UnionBound()]).verdict == "proved"


def test_when_no_method_is_left_the_reason_names_the_method():
    result = _prove("q", [Deep()])
    assert result.verdict == "unknown"
    assert "deep method: p.prob:1:9: the program's expressions are nested too deeply" in result.message


def test_an_unknown_reports_the_time_of_every_method_tried():
    assert _prove("q / 2", [UnionBound()]).verdict == "unknown"
    result = _prove("q / 2", [UnionBound(), Slow()])
    assert result.verdict == "unknown"
    assert "slow method: it found nothing" in result.message
    assert result.time_s >= 0.5
