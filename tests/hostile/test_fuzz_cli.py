"""Hypothesis fuzzing of the whole CLI: random programs and mutated benchmark sources through
``check``, ``cfa``, ``prove`` (short time limit), ``simulate`` (few runs) and ``prob``.

Every run must end with an exit status in {0, 1, 2, 3} and no traceback; TAMP_DEBUG=1 makes
any internal error raise here, so a crash fails the test with its reproducer (the file text
is in the falsifying example)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hostile_lib import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import REPO

ROOT = REPO
SOURCES = sorted((ROOT / "benchmarks").glob("*/*.prob"))

FUZZ = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ---------------------------------------------------------------------------- random programs

NUMS = st.sampled_from(["0", "1", "2", "0.5", "1e-3", "3/4", "-1", "1e9", "(1/0)", "0.0"])
REALS = st.sampled_from(["a", "b", "p", "n", "k"])
BOOLS = st.sampled_from(["x", "y", "true", "false"])


def real_expr(depth=2):
    base = st.one_of(NUMS, REALS)
    if depth == 0:
        return base
    sub = real_expr(depth - 1)
    return st.one_of(
        base,
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["abs", "log", "exp", "sqrt"]), sub).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(["min", "max"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    )


def bool_expr(depth=2):
    cmp = st.tuples(real_expr(1), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), real_expr(1)).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"
    )
    base = st.one_of(BOOLS, cmp)
    if depth == 0:
        return base
    sub = bool_expr(depth - 1)
    return st.one_of(
        base,
        sub.map(lambda e: f"!({e})"),
        st.tuples(sub, st.sampled_from(["&&", "||", "==>"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    )


REAL_DISTS = st.one_of(
    st.tuples(real_expr(1), real_expr(1)).map(lambda t: f"lap({t[0]}, {t[1]})"),
    st.tuples(real_expr(1), real_expr(1)).map(lambda t: f"gauss({t[0]}, {t[1]})"),
    st.tuples(real_expr(1), real_expr(1)).map(lambda t: f"exp({t[0]}, {t[1]})"),
    st.sampled_from(["uniform(0, 1)", "lap(a, 1/p)", "gauss(0, 1)"]),
)
INT_DISTS = st.sampled_from(
    ["unif(0, 3)", "unif({1, 2, 5})", "dlap(0, 1)", "dexp(0, 2)", "unif(0, n)", "unif(0, 100000)"]
)
BOOL_DISTS = real_expr(1).map(lambda e: f"bern({e})") | st.just("bern(p)")
PRELUDE = (
    "var a: real; var b: real; var x: bool; var y: bool; var k: int; a := 0; b := 1; x := false; y := true; k := 0; "
)


def stmt(depth=2):
    simple = st.one_of(
        st.tuples(st.sampled_from(["a", "b"]), real_expr()).map(lambda t: f"{t[0]} := {t[1]};"),
        st.tuples(st.sampled_from(["x", "y"]), bool_expr(1)).map(lambda t: f"{t[0]} := {t[1]};"),
        st.tuples(st.sampled_from(["a", "b"]), REAL_DISTS).map(lambda t: f"{t[0]} ~ {t[1]};"),
        st.tuples(st.sampled_from(["x", "y"]), BOOL_DISTS).map(lambda t: f"{t[0]} ~ {t[1]};"),
        INT_DISTS.map(lambda d: f"k ~ {d};"),
        bool_expr(1).map(lambda c: f"assume({c});"),
        st.just("skip;"),
    )
    if depth == 0:
        return simple
    body = st.lists(stmt(depth - 1), min_size=1, max_size=3).map(" ".join)
    return st.one_of(
        simple,
        st.tuples(bool_expr(1), body, body).map(lambda t: f"if ({t[0]}) {{ {t[1]} }} else {{ {t[2]} }}"),
        st.tuples(st.sampled_from(["0..3", "0..n", "1..=2"]), body).map(lambda t: f"for i in {t[0]} {{ {t[1]} }}"),
    )


PROGRAMS = st.tuples(
    st.lists(stmt(), min_size=1, max_size=4).map(" ".join), bool_expr(), real_expr(1), st.booleans()
).map(
    lambda t: (
        "program f(p: real, n: int)\n  requires 0 < p && p <= 1 && n >= 0\n"
        f"  ensures {t[1]}\n" + (f"  fails {t[2]}\n" if t[3] else "") + f"{{ {PRELUDE}{t[0]} }}\n"
    )
)


def _write(tmp_path, text):
    f = tmp_path / "fuzz.prob"
    f.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    return str(f)


@FUZZ
@given(text=PROGRAMS)
def test_random_programs_check_cfa_prove(tmp_path, capsys, text):
    f = _write(tmp_path, text)
    run_cli(capsys, ["check", f])
    run_cli(capsys, ["cfa", f])
    run_cli(capsys, ["prove", f, "--timeout", "1"], limit=90)


@FUZZ
@given(text=PROGRAMS)
def test_random_programs_simulate_and_prob(tmp_path, capsys, text):
    f = _write(tmp_path, text)
    run_cli(capsys, ["simulate", f, "--runs", "30", "--input", "p=0.5", "--input", "n=2"], limit=90)
    run_cli(capsys, ["prob", f, "--timeout", "2"], limit=90)


# ---------------------------------------------------------------------------- mutated sources

EDITS = st.lists(
    st.tuples(
        st.sampled_from(["delete", "duplicate", "insert"]),
        st.floats(0, 1),
        st.floats(0, 1),
        st.sampled_from(
            [
                "(",
                ")",
                "{",
                "}",
                ";",
                "~",
                ":=",
                "1e999",
                "0",
                "-",
                "..",
                ",",
                "forall j in 0..n:",
                "P(",
                "\u00e9",
                "//",
                "/*",
                '"',
                "\x00",
                "sum(",
                "requires",
                "fails",
                "program q()",
            ]
        ),
    ),
    min_size=1,
    max_size=4,
)


def mutate(text: str, edits) -> str:
    for kind, a, b, tok in edits:
        i = int(a * len(text))
        j = min(len(text), i + 1 + int(b * 12))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + " " + tok + " " + text[i:]
    return text


@FUZZ
@given(which=st.integers(0, len(SOURCES) - 1), edits=EDITS)
def test_mutated_benchmarks_check_and_cfa(tmp_path, capsys, which, edits):
    f = _write(tmp_path, mutate(SOURCES[which].read_text(), edits))
    run_cli(capsys, ["check", f])
    run_cli(capsys, ["cfa", f])


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(which=st.integers(0, len(SOURCES) - 1), edits=EDITS)
def test_mutated_benchmarks_prove_and_prob(tmp_path, capsys, which, edits):
    f = _write(tmp_path, mutate(SOURCES[which].read_text(), edits))
    run_cli(capsys, ["prove", f, "--timeout", "1"], limit=90)
    run_cli(capsys, ["prob", f, "--timeout", "2"], limit=90)


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes(tmp_path, capsys, data):
    f = tmp_path / "bytes.prob"
    f.write_bytes(data)
    run_cli(capsys, ["check", str(f)])


# ---------------------------------------------------------------------------- real processes


@pytest.mark.parametrize(
    "argv",
    [
        ["prove", "{dir}/deep.prob", "--timeout", "5"],
        ["check-proof", "{dir}/deep.prob", "{dir}/deep.prob"],
        ["frobnicate"],
    ],
)
def test_subprocess_runs_never_show_a_traceback(tmp_path, argv):
    (tmp_path / "deep.prob").write_text(
        "program h() ensures x == " + "(" * 3000 + "1" + ")" * 3000 + " fails 0 { x := 1; }"
    )
    argv = [a.format(dir=tmp_path) for a in argv]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}  # no TAMP_DEBUG: what a user sees
    r = subprocess.run(
        [sys.executable, "-m", "tamp", *argv], capture_output=True, text=True, timeout=300, env=env, cwd=str(ROOT)
    )
    assert r.returncode in (0, 1, 2, 3), r
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
