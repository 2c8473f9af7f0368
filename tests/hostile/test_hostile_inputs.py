"""Hostile input, case by case: each gets one clear message and a clean exit status, never a
traceback or a hang. Where the behaviour is a judgement call (a bound above 1, inconsistent
``requires``) the test pins down what tamp does today, as documented in docs/trust.md."""

from __future__ import annotations

import pytest
from hostile_lib import run_cli

BERN = "program h(p: real) requires 0 < p && p <= 1 ensures !y fails {bound} {{ y ~ bern(p); }}"


def _file(tmp_path, text, name="h.prob"):
    f = tmp_path / name
    f.write_text(text)
    return str(f)


@pytest.mark.parametrize("cmd", ["check", "cfa", "prove", "simulate", "prob"])
@pytest.mark.parametrize(
    "text, needle",
    [
        ("program h() ensures x <= 1e999999 fails 0 { x := 1; }", "out of range"),
        ("program h() ensures x <= " + "9" * 5000 + " fails 0 { x := 1; }", "too long"),
        ("program ( {", "unexpected"),
        ("program h() ensures x == 1 fails 0 { x := \x00 1; }", "unexpected character"),
        ("program h(a: int[]) ensures a[0.5] == 1 fails 0 { skip; }", "array index must be an int"),
    ],
)
def test_bad_source_is_one_located_error(tmp_path, capsys, cmd, text, needle):
    code, out, err = run_cli(capsys, [cmd, _file(tmp_path, text)])
    assert code == 2 and needle in err, err
    first = err.strip().splitlines()[0]
    assert first.startswith(str(tmp_path)) and ": error: " in first


def test_deep_nesting_5000_parentheses(tmp_path, capsys):
    text = "program h() ensures x == " + "(" * 5000 + "1" + ")" * 5000 + " fails 0 { x := 1; }"
    f = _file(tmp_path, text)
    for cmd in (["check", f], ["cfa", f], ["prove", f, "--timeout", "10"], ["simulate", f, "--runs", "10"]):
        code, out, err = run_cli(capsys, cmd)
        assert code in (0, 2), (cmd, err)  # either handled, or "nested too deeply"


def test_deep_nesting_beyond_limits_is_a_clean_error(tmp_path, capsys):
    text = "program h() ensures x == " + "abs(" * 1500 + "1" + ")" * 1500 + " fails 0 { x := 1; }"
    code, out, err = run_cli(capsys, ["check", _file(tmp_path, text)])
    assert code == 2 and "nested too deeply" in err, err


def test_deep_nesting_within_limits_goes_through_every_pass(tmp_path, capsys):
    text = (
        "program h(p: real) requires 0 < p && p <= 1 ensures "
        + "abs(" * 400
        + "x"
        + ")" * 400
        + " >= 0 fails p { x ~ lap(0, 1); }"
    )
    f = _file(tmp_path, text)
    for argv in (
        ["prove", f, "--timeout", "30", "--certificate", str(tmp_path / "c.json")],
        ["simulate", f, "--runs", "5", "--input", "p=0.5"],
    ):
        code, out, err = run_cli(capsys, argv, limit=120)
        assert code in (0, 1), err
    if (tmp_path / "c.json").exists():
        code, out, err = run_cli(capsys, ["check-proof", str(tmp_path / "c.json"), f], limit=120)
        assert code == 0, out + err


def test_huge_loop_bound_does_not_hang_the_prover(tmp_path, capsys):
    text = (
        "program h(p: real) requires 0 < p && p <= 1 ensures s >= 0 fails p "
        "{ s := 0; for i in 0..1000000000 { s := s + 1; } }"
    )
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, text), "--timeout", "10"], limit=120)
    assert code in (0, 1)


@pytest.mark.parametrize("bound", ["1/0", "p/(n-n)"])
def test_division_by_zero_in_the_bound_is_a_located_input_error(tmp_path, capsys, bound):
    text = f"program h(p: real, n: int) requires 0 < p && p <= 1 ensures !y fails {bound} {{ y ~ bern(p); }}"
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, text), "--timeout", "10"])
    assert code == 2 and "proved" not in out
    assert ":1:" in err and "divides by" in err and "^" in err


def test_vacuous_and_negative_claims_are_named(tmp_path, capsys):
    text = (
        "program v(n: int, p: real) requires n > 1 && n < 0 ensures !y fails p { y ~ bern(p); }\n"
        "program g(p: real) requires 0 < p && p <= 1 ensures !y fails p - 1 { y ~ bern(p); }"
    )
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, text), "--timeout", "10"])
    assert "holds vacuously" in out and "negative for some inputs" in out
    assert "g: proved" not in out


def test_bound_above_one_is_trivially_proved(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, BERN.format(bound="2")), "--timeout", "10"])
    assert code == 0  # true: no probability exceeds 1 (docs/trust.md: tamp does not flag it)


def test_negative_bound_is_not_proved(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, BERN.format(bound="-1")), "--timeout", "10"])
    assert code == 1


def test_inconsistent_requires_holds_vacuously(tmp_path, capsys):
    text = "program h(n: int) requires n > 1 && n < 0 ensures !y fails 0 { y ~ bern(0.5); }"
    code, out, err = run_cli(capsys, ["prove", _file(tmp_path, text), "--timeout", "10"])
    assert code == 0  # vacuously true: no input satisfies requires


@pytest.mark.parametrize(
    "text",
    [
        "program h() ensures fst(t) == 1 fails 0 { t := (1, 2); }",
        "program h(p: real) requires 0 < p && p <= 1 ensures abs(x) <= 1 fails p { x := 0; x ~ lap(x, 1); }",
        "program h() ensures x >= 0 fails 0 { x ~ unif(0, 100000000); }",
        "program h(n: int) ensures sum(j in 0..100000000: j) >= 0 fails 0 { skip; }",
        "program h() ensures exp(1e300) > 0 fails 0 { skip; }",
        "program h() ensures !y fails 0.5 { y ~ bern(2); }",
        "program h() ensures false fails 1 { while (true) { skip; } }",
        "program h() ensures abs(x) <= 1 fails 0.5 { x ~ gauss(0, -1); }",
        "program h() ensures abs(x) <= 1 fails 0.5 { x ~ lap(0, 0); }",
        "program h(n: int) ensures x == 0 fails 0 { x := n mod 0; }",
        "program h() ensures P(x) >= 0.5 { x ~ bern(0.5); }",
        "",
    ],
)
@pytest.mark.parametrize("cmd", ["check", "cfa", "prove", "simulate", "prob"])
def test_odd_programs_exit_cleanly(tmp_path, capsys, text, cmd):
    argv = [cmd, _file(tmp_path, text)]
    if cmd == "prove":
        argv += ["--timeout", "5"]
    if cmd == "simulate":
        argv += ["--runs", "20", "--input", "n=3"]
    code, out, err = run_cli(capsys, argv, limit=120)
    if code == 2:
        assert err.strip(), "exit 2 needs a message"


def test_wrong_program_name_and_missing_file(tmp_path, capsys):
    f = _file(tmp_path, BERN.format(bound="p"))
    code, out, err = run_cli(capsys, ["prove", f, "--program", "nope"])
    assert code == 2 and "no program named 'nope'" in err
    code, out, err = run_cli(capsys, ["prove", str(tmp_path / "missing.prob")])
    assert code == 2 and "missing.prob" in err


def test_bad_bound_option(tmp_path, capsys):
    f = _file(tmp_path, BERN.format(bound="p"))
    for bad in ("p +", "q", "1e99999"):
        code, out, err = run_cli(capsys, ["prove", f, "--bound", bad])
        assert code == 2 and err.strip(), (bad, err)


def test_huge_counted_loop_is_refused_by_the_simulator_at_once(tmp_path, capsys):
    text = "program h(n: int) ensures s >= 0 fails 0 { s := 0; for i in 0..1000000000 { s := s + 1; } }"
    code, out, err = run_cli(capsys, ["simulate", _file(tmp_path, text), "--runs", "50", "--input", "n=1"], limit=120)
    # refused before interpreting any iteration (the message names the loop's length)
    assert code == 2 and "would run 1000000000 iterations" in err and ":1:" in err


def test_loop_whose_bound_changes_is_still_simulated(tmp_path, capsys):
    text = (
        "program h(n: int) requires n >= 1 ensures s >= 0 fails 0 "
        "{ s := 0; m := 3; for i in 0..m { s := s + 1; m := 2; } }"
    )
    code, out, err = run_cli(capsys, ["simulate", _file(tmp_path, text), "--runs", "50", "--input", "n=1"], limit=120)
    assert code == 0, out + err


def test_an_analysis_out_of_recursion_depth_names_the_file(tmp_path, capsys, monkeypatch):
    """Past the parser's own depth check, an analysis that still recurses too deeply is one error naming the
    file (there is no single node to point at), exit 2, never a traceback."""
    import tamp.commands.check as check_command

    def deep(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(check_command, "api_check", deep)
    f = _file(tmp_path, BERN.format(bound="p"))
    code, out, err = run_cli(capsys, ["check", f])
    assert code == 2 and err.strip() == f"{f}: error: the input is nested too deeply for tamp's analysis", err
