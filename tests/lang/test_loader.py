"""lang.load: the one way every command and tamp.api read, parse and type-check a file (issue 17)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import lang
from lang.errors import ParseError, TampError, TypeCheckError
from lang.inputs import check_inputs, check_known, parse_assignment

GOOD = "program p(n: int, q: real[]) requires n >= 1 ensures x >= 0 fails 0 { x := n; }\n"


def test_load_accepts_a_path_text_bytes_or_a_parsed_file(tmp_path):
    f = tmp_path / "p.prob"
    f.write_text(GOOD)
    for source, path in ((str(f), None), (f, None), (GOOD, None), (GOOD.encode(), str(f)), (GOOD, str(f))):
        src = lang.load(source, path)
        assert [p.name for p in src.programs] == ["p"]
    assert lang.load(str(f)).path == str(f)
    parsed = lang.load(GOOD)
    assert lang.load(parsed) is parsed


def test_load_type_checks_unless_told_not_to(tmp_path):
    bad = "program p() ensures x fails 0 { x := 1; }"
    with pytest.raises(TypeCheckError):
        lang.load(bad)
    assert lang.load(bad, check=False).programs[0].name == "p"


def test_invalid_utf8_is_located_with_the_file_name(tmp_path):
    f = tmp_path / "bad.prob"
    f.write_bytes(b"program p() {\n  x := 1; // caf\xe9\n}\n")
    with pytest.raises(ParseError) as exc:
        lang.load(str(f))
    e = exc.value
    assert (e.path, e.line, e.col) == (str(f), 2, 17) and "not valid UTF-8 (byte 0xe9)" in e.message
    with pytest.raises(ParseError) as exc:
        lang.load(f.read_bytes(), "named.prob")
    assert exc.value.path == "named.prob"


def test_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(ParseError, match="cannot read file") as exc:
        lang.load(tmp_path / "none.prob")
    assert exc.value.path == str(tmp_path / "none.prob")


def test_a_byte_order_mark_is_dropped(tmp_path):
    f = tmp_path / "bom.prob"
    f.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert lang.load(f).programs[0].name == "p"


def test_every_command_reads_through_lang_load(tmp_path, monkeypatch, capsys):
    """The commands have no reader of their own: each goes through lang.loader.decode."""
    import lang.loader as loader
    from tamp.cli import main

    f = tmp_path / "p.prob"
    f.write_text(
        "program p(x: real, s: int) requires 0 <= x && x <= 1 && (s == 0 || s == 1) "
        "ensures independent(o, s) { if (x > 0.5) { o := 1; } else { o := 0; } }\n"
    )
    calls = []
    real = loader.decode
    monkeypatch.setattr(loader, "decode", lambda data, path="<string>": calls.append(path) or real(data, path))
    for argv in (
        ["check", str(f)],
        ["cfa", str(f)],
        ["prove", str(f), "--timeout", "30"],
        ["prob", str(f)],
        ["simulate", str(f), "--runs", "10", "--input", "x=0.5", "--input", "s=1"],
        ["fairness", str(f), "--timeout", "30", "--jobs", "1"],
        ["query", str(f), "--given", "x == 0.7 && s == 0", "--vary", "s", "--would", "o == 1"],
        ["check-proof", str(tmp_path / "none.json"), str(f)],
    ):
        calls.clear()
        main(argv)
        capsys.readouterr()
        if argv[0] == "check-proof":  # the certificate is read first, and is missing
            continue
        assert calls == [str(f)], argv


def test_parse_assignment_and_check_inputs():
    prog = lang.load(GOOD).programs[0]
    name, value = parse_assignment("q=[1, 2.5, -3]")
    assert check_inputs(prog, {name: value, "n": 2}) == {"q": [1, Fraction(5, 2), -3], "n": 2}
    with pytest.raises(TypeCheckError, match=r"input 'n' \(parameter n: int\) must be an integer, got 2.5"):
        check_inputs(prog, {"n": 2.5})
    with pytest.raises(TypeCheckError, match=r"element \[0\] = true must be a number"):
        check_inputs(prog, {"q": [True]})
    with pytest.raises(TypeCheckError, match="missing: q"):
        check_inputs(prog, {"n": 1}, complete=True)
    with pytest.raises(TampError, match="unknown input"):
        check_known([prog], {"m": 1})
    assert check_inputs(prog, {"n": 3.0}) == {"n": 3}  # a float that is an integer is one
    with pytest.raises(TypeCheckError, match="finite number"):
        check_inputs(prog, {"q": [float("nan")]})


def test_bound_is_checked_in_the_option():
    from lang.loader import check_bound, parse_bound

    prog = lang.load(GOOD).programs[0]
    check_bound(prog, parse_bound("n / 10"), "n / 10")
    for text, msg in (
        ("true", "must be a number"),
        ("k", "'k', which is not a parameter"),
        ("n && true", "must be a bool"),
    ):
        with pytest.raises(TampError) as exc:
            check_bound(prog, parse_bound(text), text)
        assert exc.value.path == "--bound" and msg in exc.value.message, exc.value


def test_the_parser_reads_files_through_the_loader(tmp_path):
    from lang.parser import parse_file

    f = tmp_path / "bad.prob"
    f.write_bytes(b"\xff")
    with pytest.raises(ParseError, match="not valid UTF-8"):
        parse_file(str(f))
