"""``tamp place``: Chisel's placement, solved exactly and re-proved (issue 35)."""

from __future__ import annotations

import itertools
import random
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from lang.parser import parse
from tamp import api
from tamp.cfa import placement
from tamp.cli import main

ROOT = Path(__file__).resolve().parents[2]
PLACE = ROOT / "benchmarks" / "reliability" / "place"


def _copy(tmp_path: Path, name: str) -> Path:
    f = tmp_path / name
    shutil.copyfile(PLACE / name, f)
    return f


def test_dot_places_the_best_three_of_four_and_reproves_with_a_certificate(tmp_path, capsys):
    f = _copy(tmp_path, "dot.prob")
    before = f.read_text()
    out, cert = tmp_path / "placed.prob", tmp_path / "cert.json"
    argv = ["place", str(f), "--input", "r=1e-7", "--input", "n=100", "--saving", "memory:2", "--saving", "*:3"]
    code = main(argv + ["-o", str(out), "--certificate", str(cert)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "saving: 7" in text and "re-proved: proved" in text
    placed = out.read_text()
    assert "unreliable a" in placed and "unreliable b" in placed and "unreliable?" not in placed
    assert "s := s + a[i] *. b[i];" in placed
    assert placed.startswith("// dot.prob: Chisel's question")  # comments kept
    assert f.read_text() == before  # the input is never written
    assert main(["check-proof", str(cert), str(out)]) == 0


def test_value_level_placement_puts_what_the_claim_does_not_read_on_unreliable_hardware(tmp_path):
    f = _copy(tmp_path, "split.prob")
    res = api.place(str(f), savings={">": 2}, inputs={"r": Fraction(1, 10**7), "rc": Fraction(5, 10**8), "n": 100})
    assert res.verdict == "proved"
    assert res.saving == 4
    assert [c.split(" at ")[0] for c in res.chosen] == ["'>?'", "'*?'", "'+?'"]
    assert res.reliable == ["'+?' at 17:12"]


def test_no_room_in_the_claim_places_nothing_and_still_proves(tmp_path):
    f = tmp_path / "tight.prob"
    f.write_text((PLACE / "dot.prob").read_text().replace("reliability 1 - 3 * r * n", "reliability 1 - r * n / 2"))
    res = api.place(str(f), inputs={"r": Fraction(1, 1000), "n": 10})
    assert res.chosen == [] and res.saving == 0
    assert res.verdict == "proved"
    assert "\n  unreliable? a" not in res.text and "/* not placed: unreliable? a */" in res.text
    assert "s := s + a[i] * b[i];" in res.text


@pytest.mark.parametrize(
    "argv_tail,message",
    [
        (["--saving", "%:1"], "the kinds are"),
        (["--saving", "*:x"], "expected KIND:S"),
        ([], "give them with --input"),
    ],
)
def test_bad_place_input_is_one_message_and_exit_2(tmp_path, capsys, argv_tail, message):
    f = _copy(tmp_path, "dot.prob")
    inputs = [] if not argv_tail else ["--input", "r=0.001", "--input", "n=10"]
    code = main(["place", str(f), *inputs, *argv_tail, "-o", str(tmp_path / "o.prob")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_a_program_without_candidates_is_an_error(tmp_path, capsys):
    f = tmp_path / "none.prob"
    f.write_text("program p(r: real) rate r requires 0 <= r && r <= 1 reliability 1 - r { y := 1 +. 2; }\n")
    assert main(["place", str(f), "--input", "r=0.1"]) == 2
    assert "no candidate" in capsys.readouterr().err


def test_the_output_is_never_the_input(tmp_path, capsys):
    f = _copy(tmp_path, "dot.prob")
    before = f.read_text()
    assert main(["place", str(f), "--input", "r=0.001", "--input", "n=10", "-o", str(f)]) == 2
    assert f.read_text() == before


def test_the_integer_program_is_solved_exactly():
    rng = random.Random(35)
    for _ in range(40):
        n = rng.randint(1, 6)
        costs = {i: Fraction(rng.randint(0, 9), rng.randint(1, 4)) for i in range(n)}
        save = {i: Fraction(rng.randint(0, 9)) for i in range(n)}
        base, budget = Fraction(rng.randint(0, 3)), Fraction(rng.randint(0, 15))
        best = None
        for bits in itertools.product((0, 1), repeat=n):
            chosen = {i for i in range(n) if bits[i]}
            if base + sum((costs[i] for i in chosen), Fraction(0)) <= budget:
                s = sum((save[i] for i in chosen), Fraction(0))
                best = s if best is None else max(best, s)
        sol = placement.optimise(costs, save, base, budget)
        if best is None:
            assert sol is None
        else:
            assert sol is not None and sol.saving == best and sol.used <= budget


def test_annotation_rewrites_only_the_markers():
    text = "program p(a: real[], r: real)\n  rate r\n  unreliable? a\n  reliability 1 - r\n{\n  x := a[0] <=? 1; // <=? kept in a comment\n}\n"
    prog = parse(text).programs[0]
    cands = placement.candidates(prog)
    assert [c.kind for c in cands] == ["memory", "<=."]
    assert "x := a[0] <=. 1; // <=? kept" in placement.annotate(text, cands, {1})
    assert "/* not placed: unreliable? a */" in placement.annotate(text, cands, {1})
    assert "  unreliable a\n" in placement.annotate(text, cands, {0})
    assert "x := a[0] <= 1;" in placement.annotate(text, cands, {0})
