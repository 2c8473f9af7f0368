"""Hypothesis strategies for well-typed ``.prob`` programs and for command-line option values.

Unlike ``tests/hostile/test_fuzz_cli.py`` (which throws arbitrary text at the front end), every
program built here type-checks: parameters ``p: real`` (a probability), ``n: int`` (0..3) and
``eps: real`` (> 0) with a ``requires`` saying so, locals of the three base types initialised
in a prelude, assignments, samplings of every distribution the prover supports, ``if``,
counted ``while`` loops (a fresh counter each) and ``for`` loops, ``assume`` (on inputs: a
precondition; on samples: conditioning), one ``ensures`` and an optional ``fails``, or a probability specification ``P(e | c) >= c``.
Divisions, logarithms and square roots are guarded so that a program is defined on every
input satisfying its ``requires``; ``exp`` is capped so that no value overflows.

``INPUTS`` are concrete inputs satisfying the ``requires`` (for ``simulate``).
"""

from __future__ import annotations

from hypothesis import strategies as st

PARAMS = "p: real, n: int, eps: real"
REQUIRES = "0 < p && p <= 1 && 0 <= n && n <= 3 && eps > 0"
INPUTS = [{"p": "0.5", "n": "2", "eps": "1"}, {"p": "0.05", "n": "0", "eps": "0.1"}, {"p": "1", "n": "3", "eps": "2"}]

REAL_VARS = ["r0", "r1"]
INT_VARS = ["k0", "k1"]
BOOL_VARS = ["b0", "b1"]
PRELUDE = "r0 := 0; r1 := 1; k0 := 0; k1 := 1; b0 := false; b1 := true;"

REAL_LITS = ["0", "1", "2", "0.5", "0.1", "3", "1e-3", "10"]
INT_LITS = ["0", "1", "2", "3", "5"]
POS = ["p", "eps", "2", "0.5", "1 / eps", "p * eps", "1 + abs(r0)"]  # positive expressions


def int_expr(depth: int = 1):
    base = st.sampled_from(INT_VARS + INT_LITS + ["n"])
    if depth == 0:
        return base
    sub = int_expr(depth - 1)
    return st.one_of(
        base,
        st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(["div", "mod"]), st.sampled_from(["2", "3"])).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(["min", "max"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        sub.map(lambda e: f"abs({e})"),
    )


def real_expr(depth: int = 2):
    base = st.one_of(st.sampled_from(REAL_VARS + REAL_LITS + ["p", "eps", "n"]), int_expr(0))
    if depth == 0:
        return base
    sub = real_expr(depth - 1)
    return st.one_of(
        base,
        st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(POS)).map(lambda t: f"({t[0]} / ({t[1]}))"),
        sub.map(lambda e: f"(-{e})"),
        sub.map(lambda e: f"abs({e})"),
        st.tuples(st.sampled_from(["min", "max"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        sub.map(lambda e: f"log(1 + abs({e}))"),
        st.sampled_from(POS).map(lambda e: f"log({e})"),
        sub.map(lambda e: f"sqrt(abs({e}))"),
        sub.map(lambda e: f"exp(min({e}, 5))"),
    )


def bool_expr(depth: int = 1):
    cmp = st.one_of(
        st.tuples(real_expr(1), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), real_expr(1)),
        st.tuples(int_expr(1), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), int_expr(1)),
    ).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
    base = st.one_of(st.sampled_from(BOOL_VARS + ["true", "false"]), cmp)
    if depth == 0:
        return base
    sub = bool_expr(depth - 1)
    return st.one_of(
        base,
        sub.map(lambda e: f"!({e})"),
        st.tuples(sub, st.sampled_from(["&&", "||", "==>"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    )


_PROVER_DISTS = [
    st.tuples(real_expr(1), st.sampled_from(POS)).map(lambda t: f"lap({t[0]}, {t[1]})"),
    st.tuples(real_expr(1), st.sampled_from(POS)).map(lambda t: f"exp({t[0]}, {t[1]})"),
    st.tuples(real_expr(1), st.sampled_from(POS)).map(lambda t: f"gauss({t[0]}, {t[1]})"),
]
# the probability engine's distributions (the prover answers that it does not support them): rarer
_ENGINE_DISTS = st.one_of(
    st.tuples(real_expr(1), st.sampled_from(POS)).map(lambda t: f"uniform({t[0]}, {t[0]} + {t[1]})"),
    st.sampled_from(
        ["step([(0, 1, 1), (1, 3, 2)])", "step([(p, 1 + p, eps)])", "density(0, 1, 2 * _)", "density(-1, 1, 1 + _ * _)"]
    ),
)
REAL_DISTS = st.one_of(*(_PROVER_DISTS * 3), _ENGINE_DISTS)
INT_DISTS = st.one_of(
    st.sampled_from(["unif(0, 3)", "unif(0, n)", "unif({1, 2, 5})", "dlap(0, 1)", "dexp(0, 2)"]),
    st.tuples(int_expr(1), st.sampled_from(POS)).map(lambda t: f"dlap({t[0]}, {t[1]})"),
)
BOOL_DISTS = st.one_of(
    st.sampled_from(["bern(p)", "bern(0.5)", "bern(1 - p)", "bern(0.1)"]),
    real_expr(1).map(lambda e: f"bern(1 / (2 + abs({e})))"),
)


def _simple():
    return st.one_of(
        st.tuples(st.sampled_from(REAL_VARS), real_expr()).map(lambda t: f"{t[0]} := {t[1]};"),
        st.tuples(st.sampled_from(INT_VARS), int_expr()).map(lambda t: f"{t[0]} := {t[1]};"),
        st.tuples(st.sampled_from(BOOL_VARS), bool_expr()).map(lambda t: f"{t[0]} := {t[1]};"),
        st.tuples(st.sampled_from(REAL_VARS), REAL_DISTS).map(lambda t: f"{t[0]} ~ {t[1]};"),
        st.tuples(st.sampled_from(INT_VARS), INT_DISTS).map(lambda t: f"{t[0]} ~ {t[1]};"),
        st.tuples(st.sampled_from(BOOL_VARS), BOOL_DISTS).map(lambda t: f"{t[0]} ~ {t[1]};"),
        bool_expr(0).map(lambda c: f"assume({c});"),
        st.just("skip;"),
    )


@st.composite
def _block(draw, depth: int, counters: list):
    """1-3 statements; loops get fresh counter names (``counters`` numbers them)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["simple"] * 5 + (["if", "while", "for"] if depth > 0 else [])))
        if kind == "simple":
            out.append(draw(_simple()))
        elif kind == "if":
            cond = draw(bool_expr())
            then = draw(_block(depth - 1, counters))
            other = draw(st.one_of(st.none(), _block(depth - 1, counters)))
            out.append(f"if ({cond}) {{ {then} }}" + (f" else {{ {other} }}" if other else ""))
        else:
            c = f"c{len(counters)}"
            counters.append(c)
            hi = draw(st.sampled_from(["n", "2", "3", "k0 + 1"]))
            body = draw(_block(depth - 1, counters))
            if kind == "for":
                out.append(f"for {c} in 0..{hi} {{ {body} }}")
            else:
                extra = draw(st.one_of(st.just(""), bool_expr(0).map(lambda e: f" && {e}")))
                out.append(f"{c} := 0; while ({c} < {hi}{extra}) {{ {body} {c} := {c} + 1; }}")
    return " ".join(out)


PROBABILITIES = st.sampled_from(["0", "0.1", "0.5", "0.9", "1", "p"])


@st.composite
def prob_spec(draw) -> str:
    """A probability specification: ``P(e) op c`` or ``P(e | c) op c``."""
    event = draw(bool_expr(1))
    given = draw(st.one_of(st.none(), bool_expr(0)))
    term = f"P({event} | {given})" if given else f"P({event})"
    return f"{term} {draw(st.sampled_from(['>=', '<=', '>', '<']))} {draw(PROBABILITIES)}"


@st.composite
def programs(draw, depth: int = 2, probability: bool = True) -> str:
    """The text of one well-typed program (one in five with a probability specification)."""
    body = draw(_block(depth, []))
    if probability and draw(st.integers(0, 4)) == 0:
        ensures, fails = draw(prob_spec()), None
        return f"program f({PARAMS})\n  requires {REQUIRES}\n  ensures {ensures}\n{{\n  {PRELUDE}\n  {body}\n}}\n"
    ensures = draw(bool_expr(2))
    fails = draw(st.one_of(st.none(), st.sampled_from(["0", "p", "1/2", "p / 2", "0.1", "1", "p * n"])))
    return (
        f"program f({PARAMS})\n  requires {REQUIRES}\n  ensures {ensures}\n"
        + (f"  fails {fails}\n" if fails else "")
        + f"{{\n  {PRELUDE}\n  {body}\n}}\n"
    )


# ---------------------------------------------------------------------------- option values

ODD_NUMBERS = [
    "0",
    "-1",
    "1",
    "0.5",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "1e-400",
    "",
    " ",
    "abc",
    "1_000",
    "0x10",
    "+3",
    "3.",
    ".5",
    "١",
    "99999999999999999999999",
    "true",
    "[1,2]",
    "1/2",
]
VALUES = st.one_of(
    st.sampled_from(ODD_NUMBERS),
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8).filter(lambda s: "\x00" not in s),
)
INPUT_VALUES = st.one_of(VALUES, st.sampled_from(["[]", "[1, 2]", "[0.5]", "[true]", "false", "(1,2)", "p"]))


@st.composite
def option_argv(draw, path: str):
    """A command line for ``path`` with odd option values (``prove``, ``simulate``, ``prob``,
    ``check``, ``cfa``)."""
    cmd = draw(st.sampled_from(["prove", "simulate", "prob", "check", "cfa"]))
    argv = [cmd, path]
    opts = {
        "prove": ["--timeout", "--bound", "--input", "--program"],
        "simulate": ["--runs", "--seed", "--bound", "--confidence", "--input", "--program"],
        "prob": ["--timeout", "--input", "--program"],
        "check": ["--program"],
        "cfa": ["--program"],
    }[cmd]
    for opt in draw(st.lists(st.sampled_from(opts), max_size=4)):
        if opt == "--input":
            name = draw(st.sampled_from(["p", "n", "eps", "zz", "", "p=1"]))
            argv += [opt, f"{name}={draw(INPUT_VALUES)}"]
        elif opt == "--program":
            argv += [opt, draw(st.sampled_from(["f", "g", "", "F"]))]
        else:
            argv += [opt, draw(VALUES)]
    if cmd == "simulate" and "--runs" not in argv:
        argv += ["--runs", "50"]
    if cmd in ("prove", "prob") and "--timeout" not in argv:
        argv += ["--timeout", "2"]
    return argv
