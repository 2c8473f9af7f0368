"""Findings of the grammar fuzzer (benchmarks/fuzz/run.py) in areas other than the simulator,
kept as minimal reproducers: regression tests once fixed (a bug still open is marked
``xfail(strict=True)``, so that its fix makes this file fail until the marker is removed)."""

from __future__ import annotations

from oracle import check_program

# The loop bound grows with every iteration (a for loop re-reads its bound, LANGUAGE.md): no run
# ever leaves the loop, so the failure probability is 1 (a bound is about total correctness);
# even ignoring termination, x >= 0 fails with probability 1/2 > p/2. tamp prove says "proved":
# the loop exit is treated as unreachable and the postcondition holds vacuously there.
NON_TERMINATING = """program h(p: real)
  requires 0 < p && p <= 1
  ensures x >= 0
  fails p / 2
{
  k := 0; x ~ lap(0, 1);
  for c in 0..k + 1 { k := k + 1; }
}
"""


def test_a_loop_that_never_ends_is_not_proved():
    findings, code, _ = check_program(NON_TERMINATING, prove_timeout=30, runs=200)
    assert code != 0, "proved a claim whose runs never terminate"
    assert not findings, findings
