"""Random inputs on every benchmark program: a result or a located TampError, never a crash."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import BENCHMARKS

from lang.errors import TampError
from lang.parser import parse_file
from tamp.simulation import simulate

FILES = sorted(p for d in ("illustrative", "dp", "variants") for p in (BENCHMARKS / d).glob("*.prob"))
PROGRAMS = [parse_file(str(f)) for f in FILES]

numbers = st.one_of(st.integers(-5, 12), st.fractions(-3, 3, max_denominator=8), st.floats(-1e3, 1e3), st.booleans())
values = st.one_of(numbers, st.lists(numbers, max_size=12))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROGRAMS), st.data())
def test_random_inputs_never_crash(src, data):
    prog = src.programs[0]
    inputs = {p.name: data.draw(values, label=p.name) for p in prog.params}
    try:
        r = simulate(src, inputs, runs=50, seed=0)
    except TampError as exc:
        assert str(exc).startswith(f"{src.path}:") or str(exc).startswith("--bound"), str(exc)
    else:
        assert r.verdict in ("consistent", "refuted") and 0 <= r.failures <= r.runs
