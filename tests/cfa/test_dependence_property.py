"""Property test of the sample-dependence analysis: a variable the analysis calls independent of
every sample at the end of a program has the same final value on every run (at fixed inputs).
Programs are generated from a small grammar (assignments, samplings, branches on inputs and on
samples, counted loops) and run by the simulator."""

from hypothesis import given, settings
from hypothesis import strategies as st

from lang.errors import TampError
from lang.parser import parse
from lang.typecheck import check_file
from tamp.cfa import build_cfa
from tamp.cfa.dependence import analyse
from tamp.simulation import run_samples

INTS = ["x0", "x1", "x2"]
BOOLS = ["y0", "y1"]


def int_expr():
    return st.one_of(
        st.sampled_from(INTS + ["n"]),
        st.integers(0, 3).map(str),
        st.builds(lambda a, k: f"{a} + {k}", st.sampled_from(INTS + ["n"]), st.integers(0, 3)),
        st.builds(lambda a, b: f"{a} - {b}", st.sampled_from(INTS), st.sampled_from(INTS + ["n"])),
    )


def bool_expr():
    return st.one_of(
        st.sampled_from(BOOLS + ["b"]),
        st.builds(lambda a, k: f"{a} > {k}", st.sampled_from(INTS + ["n"]), st.integers(0, 3)),
        st.builds(lambda a, c: f"{a} && {c}", st.sampled_from(BOOLS), st.sampled_from(BOOLS + ["b"])),
    )


def simple_stmt():
    return st.one_of(
        st.builds(lambda x, e: f"{x} := {e};", st.sampled_from(INTS), int_expr()),
        st.builds(lambda y, e: f"{y} := {e};", st.sampled_from(BOOLS), bool_expr()),
        st.builds(lambda y: f"{y} ~ bern(0.5);", st.sampled_from(BOOLS)),
        st.builds(lambda x: f"{x} ~ unif(0, 2);", st.sampled_from(INTS)),
    )


def stmts(depth=2):
    if depth == 0:
        return st.lists(simple_stmt(), min_size=1, max_size=3).map(" ".join)
    inner = stmts(depth - 1)
    compound = st.one_of(
        st.builds(
            lambda c, t, e: f"if ({c}) {{ {t} }} else {{ {e} }}",
            st.one_of(st.sampled_from(BOOLS), bool_expr()),
            inner,
            inner,
        ),
        st.builds(lambda t, i: f"for i{i} in 0..2 {{ {t} }}", inner, st.integers(0, 99)),
        # the same variable assigned in both branches: its value then depends on the condition
        st.builds(
            lambda c, x, j, k: f"if ({c}) {{ {x} := {j}; }} else {{ {x} := {k}; }}",
            st.one_of(st.sampled_from(BOOLS), bool_expr()),
            st.sampled_from(INTS),
            st.integers(0, 2),
            st.integers(0, 2),
        ),
    )
    return st.lists(st.one_of(simple_stmt(), compound), min_size=1, max_size=4).map(" ".join)


def program(body):
    init = " ".join(f"{x} := 0;" for x in INTS) + " " + " ".join(f"{y} := false;" for y in BOOLS)
    return f"program g(n: int, b: bool) {{ {init} y0 ~ bern(0.5); {body} }}"


@settings(max_examples=100)
@given(stmts(), st.integers(-1, 3), st.booleans())
def test_values_independent_of_samples_are_the_same_on_every_run(body, n, b):
    src = program(body)
    try:
        parsed = parse(src)
        check_file(parsed)
    except TampError:  # a loop variable reused by nested loops: not a program of the language
        return
    cfa = build_cfa(parsed.programs[0])
    untainted = [v for v in INTS + BOOLS if v not in analyse(cfa).tainted_at(cfa.exit)]
    finals = run_samples(src, {"n": n, "b": b}, runs=64, seed=1)
    for v in untainted:
        values = finals[v]
        assert (values == values[0]).all(), (src, v, values)
