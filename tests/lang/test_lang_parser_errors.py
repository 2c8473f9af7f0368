"""Parse errors: one line `file:line:col: error: …`, the source line, a caret — never a traceback."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lang.errors import ParseError
from lang.parser import parse, parse_expr, parse_file
from lang.recursion import deep_recursion

ERRORS = [
    # (source, line, col, exact message)
    ("program p() { x := 1 }", 1, 22, "unexpected '}'; expected ';'"),
    ("program p() { x := ; }", 1, 20, "unexpected ';'; expected an expression"),
    ("program p() { in := 1; }", 1, 15, "'in' is a keyword and cannot be used as a name"),
    ("program p(P: int) { skip; }", 1, 11, "'P' is a keyword and cannot be used as a name"),
    ("program p() {\n  x := 1;\n", 2, 10, "unexpected end of input; expected a statement or '}'"),
    ("program p() {\n  /* never closed\n  x := 1; }", 2, 3, "unterminated comment: '/*' has no closing '*/'"),
    ("program p() { x := 1 @ 2; }", 1, 22, "unexpected character '@'"),
    ("program p() { skip; }\nprogram p() { skip; }", 2, 9, "duplicate program name 'p' (the first is at line 1)"),
    (
        "program p() { x = 1; }",
        1,
        17,
        "unexpected character '=' ('=' alone is not an operator: write ':=' to assign or '==' to compare)",
    ),
    ("program p() fails 0.1 fails 0.2 { skip; }", 1, 29, "duplicate 'fails' clause"),
    ("progam p() { }", 1, 1, "unexpected 'progam'; expected 'program' or end of input"),
    ("program p() { x := 1e1001; }", 1, 20, "number out of range: the exponent must be within ±1000"),
    ("program p() { x := " + "7" * 1001 + "; }", 1, 20, "number too long: more than 1000 digits"),
    ("program p() { if x > 0 { skip; } }", 1, 18, "unexpected 'x'; expected '('"),
    ('program p() { x := "a"; }', 1, 20, "unexpected character '\"' (the language has no strings)"),
    ("program p() { x := 1 & 2; }", 1, 22, "unexpected character '&' (write '&&')"),
    ("program p() {\x00}", 1, 14, "unexpected character '\\x00'"),
    ("program p() { x := a < b < c; }", 1, 26, "unexpected '<'; expected ';'"),
    ("program p(x: interval) { skip; }", 1, 14, "unexpected 'interval'; expected a type (bool, int, real)"),
    (
        "program p() ensures fairness t given s { skip; }",
        1,
        21,
        "'fairness' needs a threshold: `fairness T given S >= 0.85` (parenthesise comparisons inside S)",
    ),
]


@pytest.mark.parametrize("source,line,col,message", ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_parse_errors(source, line, col, message):
    with pytest.raises(ParseError) as info:
        parse(source, "f.prob")
    err = info.value
    assert (err.line, err.col, err.message) == (line, col, message)
    head, shown, caret = str(err).split("\n")
    assert head == f"f.prob:{line}:{col}: error: {message}"
    assert caret == "    " + " " * (col - 1) + "^"


def test_enormous_nesting_is_a_clean_error():
    for text in [
        "program p() { x := " + "-" * 5000 + "1; }",
        "program p() { x := " + "(1 + " * 3000 + "1" + ")" * 3000 + "; }",
        "program p() {" + "if (true) {" * 1500 + "}" * 1501,
    ]:
        with pytest.raises(ParseError, match="nested too deeply"):
            parse(text)


def test_nesting_limit_is_located_and_exact():
    ok = "program p() { x := " + "(1 + " * 990 + "1" + ")" * 990 + "; }"
    parse(ok)
    deep = "program p() { x := " + "(1 + " * 1001 + "1" + ")" * 1001 + "; }"
    with pytest.raises(ParseError, match=r"nested too deeply \(more than 1000 levels\)") as info:
        parse(deep, "f.prob")
    assert info.value.line == 1 and info.value.col > 20


def test_deep_but_allowed_nesting_parses_and_prints():
    from lang.printer import print_file
    from lang.typecheck import check_file

    text = "program p() { x := " + "+".join(["1"] * 900) + "; y := " + "(" * 3000 + "1" + ")" * 3000 + "; }"
    src = parse(text)
    check_file(src)
    with deep_recursion():  # AST equality is recursive too
        assert parse(print_file(src)) == src


def test_large_literals_are_exact():
    e = parse_expr("123456789012345678901234567890.5e-3 + 1e1000")
    assert e.left.value == Fraction(1234567890123456789012345678905, 10**4)
    assert e.right.value == 10**1000 and not e.right.is_int


def test_parse_expr_errors_point_into_the_expression():
    with pytest.raises(ParseError) as info:
        parse_expr("n * (p +", "--bound")
    assert str(info.value).startswith("--bound:1:9: error: unexpected end of input; expected an expression")


def test_files_with_bad_bytes_or_missing(tmp_path):
    bad = tmp_path / "bad.prob"
    bad.write_bytes(b"program p() {\n  x := 1; \xff }\n")
    with pytest.raises(ParseError) as info:
        parse_file(str(bad))
    assert str(info.value).startswith(f"{bad}:2:11: error: the file is not valid UTF-8 (byte 0xff)")
    with pytest.raises(ParseError, match="cannot read file"):
        parse_file(str(tmp_path / "missing.prob"))
    with pytest.raises(ParseError, match="cannot read file"):
        parse_file(str(tmp_path))
    bom = tmp_path / "bom.prob"
    bom.write_bytes(b"\xef\xbb\xbfprogram p() { skip; }")
    assert parse_file(str(bom)).programs[0].name == "p"


def test_long_lines_are_cut_around_the_error():
    text = "program p() { x := 1" + " " * 5000 + "@; }"
    with pytest.raises(ParseError) as info:
        parse(text)
    head, shown, caret = str(info.value).split("\n")
    assert len(shown) < 300 and shown[caret.index("^")] == "@"


def test_else_if_and_keyword_prefixed_names():
    src = parse(
        "program p(index: int, interval: int) { if (index < 0) { x := 1; } else if (index > 0) "
        "{ x := 2; } else { x := 3; } iff := interval mod 2; }"
    )
    stmt = src.programs[0].body.stmts[0]
    assert len(stmt.other.stmts) == 1 and stmt.other.stmts[0].other is not None


def test_caret_accounts_for_wide_characters_before_the_error():
    import pytest

    from lang.errors import TampError
    from lang.parser import parse

    with pytest.raises(TampError) as info:
        parse("program p(x: int) /* 中文注释 */ ensures x == 1 fails 0 { y := ; }", "f.prob")
    text, caret = str(info.value).split("\n")[1:3]
    # on a terminal the four wide characters take two columns each
    assert caret.index("^") == text.index(";") + 4
