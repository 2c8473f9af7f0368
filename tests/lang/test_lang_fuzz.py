"""Fuzzing the front end: any text either parses and type-checks, or yields one located
`file:line:col: error:` message — never another exception; `tamp check` exits 0 or 2."""

from __future__ import annotations

import os
import re
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lang_examples import FAIRSQUARE, LANGUAGE_MD, markdown_programs

from lang.errors import TampError
from lang.parser import parse
from lang.printer import print_file
from lang.recursion import deep_recursion
from lang.typecheck import check_file

LOCATED = re.compile(r"f\.prob:[1-9]\d*:[1-9]\d*: error: \S")

SEEDS = (
    [src for _, src in markdown_programs(LANGUAGE_MD)]
    + [p.read_text() for p in FAIRSQUARE[:3]]
    + [
        """program rel(n: int, r: real) rate r reliability 0.99 requires n > 0
       ensures forall j in 0..n: a[j] >= 0 && sum(j in 0..=n: a[j]) >= 0 fails 1 / n {
       var t: real; for i in 0..n { a[i] ~ dlap(i, 2.0); t := t +. a[i]; }
       (u, v) ~ unif({1, 2} * {true, false}); if (v) { w := u div 2; } else if (u > 1) { w := 0; } else { skip; }
       assume(w mod 2 == 0); x ~ density(0, 1, 3 * _ * _); y ~ step([(0, 1, 0.5), (1, 2, 0.5)]); }""",
        """program fair(s: int, a: real) ensures independent(d, s in {0, 1}) { d := a > 3 ? true : s == 0; }
       program g() ensures parity h given (f) when (q) >= 0.9 { f ~ bern(0.3); q ~ bern(0.5);
       g ~ gauss(0.3 * 2 + 1, 4); h := g >= 7.5e-1 ==> !f <==> q || false; }""",
    ]
)
TOKENS = [
    "program",
    "p",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    ":",
    ":=",
    "~",
    "x",
    "n",
    "a",
    "1",
    "0.5",
    "1e-3",
    "+",
    "-",
    "*",
    "/",
    "div",
    "mod",
    "+.",
    "==",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "==>",
    "<==>",
    "?",
    "if",
    "else",
    "while",
    "for",
    "in",
    "..",
    "..=",
    "assume",
    "skip",
    "var",
    "int",
    "real",
    "bool",
    "true",
    "false",
    "forall",
    "exists",
    "sum",
    "P",
    "|",
    "independent",
    "fairness",
    "given",
    "when",
    "requires",
    "ensures",
    "fails",
    "rate",
    "reliability",
    "bern",
    "unif",
    "lap",
    "gauss",
    "step",
    "density",
    "_",
    "/*",
    "*/",
    "//",
    "\n",
    "\x00",
    "é",
]

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def check_text(text: str) -> None:
    """parse + check either succeed (and then round-trip) or raise a located TampError."""
    try:
        src = parse(text, "f.prob")
        check_file(src)
    except TampError as exc:
        assert LOCATED.match(str(exc)), str(exc)
        return
    with deep_recursion():
        assert parse(print_file(src), "f.prob") == src


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["delete", "insert", "token", "swap", "duplicate"]))
        if op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 8)) :]
        elif op == "insert":
            text = text[:i] + draw(st.characters(max_codepoint=0x2FF)) + text[i:]
        elif op == "token":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
        elif op == "swap":
            j = draw(st.integers(0, len(text) - 1))
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        else:
            j = min(len(text), i + draw(st.integers(1, 30)))
            text = text[:j] + text[i:j] + text[j:]
    return text


@FUZZ
@given(st.text(max_size=80))
def test_random_text(text):
    check_text(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup(text):
    check_text("program p(n: int) { " + text)
    check_text(text)


@FUZZ
@given(mutated())
def test_mutated_programs(text):
    check_text(text)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated() | st.binary(max_size=60).map(lambda b: b.decode("latin-1")))
def test_tamp_check_exits_0_or_2_without_traceback(text):
    import contextlib
    import io

    from tamp.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.prob")
        with open(path, "wb") as f:
            f.write(text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", path])
        assert code in (0, 2)
        assert "Traceback" not in out.getvalue() + err.getvalue()
        if code == 0:
            assert out.getvalue().startswith(f"{path}: ok (")
        else:
            assert err.getvalue().startswith(f"{path}:"), err.getvalue()


def test_invalid_utf8_file_via_cli(tmp_path, capsys):
    from tamp.cli import main

    path = tmp_path / "f.prob"
    path.write_bytes(b"program p() {\xc3\x28 }")
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}:1:14: error: the file is not valid UTF-8")
