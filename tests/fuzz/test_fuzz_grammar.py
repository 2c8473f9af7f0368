"""Property-based fuzzing (small CI budget) of well-typed programs from the grammar
(tests/fuzz/grammar.py) and of odd option values: every command exits 0/1/2/3 without a
traceback or internal error, and ``simulate`` never refutes what ``prove`` proved.
The long run is benchmarks/fuzz/run.py."""

from __future__ import annotations

import os
import tempfile

from grammar import INPUTS, option_argv, programs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import check_program, run

CI = settings(max_examples=20, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))

SMALL = (
    "program f(p: real, n: int, eps: real)\n  requires 0 < p && p <= 1 && 0 <= n && n <= 3 && eps > 0\n"
    "  ensures x <= 1 / eps * log(1 / p)\n  fails p\n{ x ~ exp(0, 1 / eps); }\n"
)


@CI
@given(text=programs(depth=1))
def test_generated_programs_never_crash_and_proofs_survive_simulation(text):
    findings, _, _ = check_program(text, prove_timeout=2, runs=1000)
    assert not findings, "\n".join(f.render() for f in findings)


@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_odd_option_values_get_a_clear_answer(data):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "small.prob")
        with open(path, "w") as f:
            f.write(SMALL)
        argv = data.draw(option_argv(path))
        out = run(argv, SMALL, limit=60)
        assert not out.findings, "\n".join(f.render() for f in out.findings)


def test_the_small_program_is_proved_and_consistent():
    """The option fuzzer's program is a real claim: proved, and simulation agrees."""
    findings, code, sims = check_program(SMALL, prove_timeout=20, runs=2000)
    assert not findings and code == 0 and sims == [0] * len(INPUTS), (findings, code, sims)
