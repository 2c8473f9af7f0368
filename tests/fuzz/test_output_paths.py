"""Output-path fuzzer over every command (issue 31, item 5).

The commands and their output options are read from the CLI parser (``tamp.cli.COMMANDS``,
each module's ``add_arguments``; an output option is one whose argparse type is an output type
of ``tamp.commands.options``), so a new command's output option is tried here without a line
of this file: it fails until :data:`RECIPES` says how to run that command. For every output
option, the output path is the input file, a symlink to it, a hard link to it, the input given
through a symlink, a path in a missing folder, and a folder; each must be exit 2 with one
message naming the option, the input byte-for-byte unchanged and nothing written. A normal
output must be complete, with no temporary file left beside it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tamp.cli import COMMANDS, build_parser, main
from tamp.commands.common import atomic_output, output_actions, write_output
from tamp.commands.options import output_file

ROOT = Path(__file__).resolve().parents[2]
RANDRESP = ROOT / "benchmarks" / "dp" / "randResp.prob"
LIBRA = ROOT / "benchmarks" / "models" / "libra" / "example.libra"

LOAN = """program loan(income: real, debt: real, sex: int)
  requires 0 <= income && income <= 100 && 0 <= debt && debt <= 50 && (sex == 0 || sex == 1)
{
  score := income - 2 * debt + (sex == 1 ? 5 : 0);
  if (score > 20) { approve := true; } else { approve := false; }
}
"""


def _prob(tmp: Path) -> Path:
    f = tmp / "in.prob"
    shutil.copyfile(RANDRESP, f)
    return f


def _csv(tmp: Path) -> Path:
    f = tmp / "in.csv"
    f.write_text("x,y\n" + "".join(f"{i / 7:.4f},{i % 3}\n" for i in range(60)))
    return f


def _libra(tmp: Path) -> Path:
    f = tmp / "model.libra"  # "in.libra" would name the program `in`, a keyword (reported)
    shutil.copyfile(LIBRA, f)
    return f


def _loan(tmp: Path) -> Path:
    f = tmp / "loan.prob"
    f.write_text(LOAN)
    return f


def _placeable(tmp: Path) -> Path:
    f = tmp / "in.prob"
    shutil.copyfile(ROOT / "benchmarks" / "reliability" / "place" / "dot.prob", f)
    return f


def _bench(tmp: Path) -> Path:
    (tmp / "suite").mkdir()
    f = tmp / "suite" / "in.prob"
    shutil.copyfile(RANDRESP, f)
    return f


# (command, sub-command words…): (make the input file in a folder, the command line before the
# output option with {IN} for the input file, the output's extension)
RECIPES = {
    ("prove",): (_prob, ["prove", "{IN}"], ".json"),
    ("cfa",): (_prob, ["cfa", "{IN}"], ".dot"),
    ("import",): (_libra, ["import", "{IN}"], ".prob"),
    ("prior", "fit"): (_csv, ["prior", "fit", "{IN}"], ".json"),
    ("bench",): (_bench, ["bench", "{DIR}", "--timeout", "60"], ".json"),
    ("place",): (_placeable, ["place", "{IN}", "--input", "r=0.001", "--input", "n=10"], ".prob"),
    ("query",): (
        _loan,
        ["query", "{IN}", "--given", "income == 40 && debt == 10 && sex == 1", "--vary", "sex", "--would", "approve"],
        ".jsonl",
    ),
}


def _all_output_options():
    out = []
    for name in COMMANDS:
        parser = build_parser(name).commands[name]
        for words, action in output_actions(parser):
            option = max(action.option_strings, key=len)
            out.append(((name, *words), option, action.type))
    return out


OPTIONS = _all_output_options()
IDS = [" ".join(k) + " " + o for k, o, _ in OPTIONS]


def test_the_parser_has_the_known_output_options():
    """The enumeration finds what issue 31 names (so it cannot silently find nothing)."""
    found = {(k, o) for k, o, _ in OPTIONS}
    for want in [
        (("prove",), "--certificate"),
        (("prove",), "--report"),
        (("prove",), "--dot"),
        (("import",), "--output"),
        (("prior", "fit"), "--output"),
        (("bench",), "--json"),
        (("bench",), "--markdown"),
        (("cfa",), "--dot"),
        (("query",), "--log"),
    ]:
        assert want in found, want


@pytest.mark.parametrize("key", sorted({k for k, _, _ in OPTIONS}), ids=" ".join)
def test_every_command_with_an_output_has_a_recipe(key):
    assert key in RECIPES, f"add a recipe for `tamp {' '.join(key)}` (its output options are tried here)"


def _setup(tmp_path, key):
    make, argv, ext = RECIPES[key]
    inp = make(tmp_path)
    argv = [a.replace("{IN}", str(inp)).replace("{DIR}", str(inp.parent)) for a in argv]
    return inp, argv, ext


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _refused(capsys, argv, option, inp: Path, before: bytes, folder: Path):
    listing = sorted(p.name for p in folder.iterdir())
    code, _, err = _run(capsys, argv)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2, (argv, err)
    assert len(lines) == 1 and option in lines[0], err
    assert inp.read_bytes() == before  # the input is unchanged, byte for byte
    assert sorted(p.name for p in folder.iterdir()) == listing  # and nothing was written


@pytest.mark.parametrize("key,option,kind", OPTIONS, ids=IDS)
def test_output_over_an_input_is_refused(tmp_path, capsys, key, option, kind):
    inp, argv, _ = _setup(tmp_path, key)
    before = inp.read_bytes()
    link = tmp_path / ("link" + inp.suffix)
    link.symlink_to(inp)
    hard = tmp_path / ("hard" + inp.suffix)
    os.link(inp, hard)
    for out in (inp, link, hard, Path(os.path.relpath(inp))):
        _refused(capsys, [*argv, option, str(out)], option, inp, before, tmp_path)
    # the input given through a symlink, the output its real file
    via = [str(link) if a == str(inp) else a for a in argv]
    if via != argv:
        _refused(capsys, [*via, option, str(inp)], option, inp, before, tmp_path)


@pytest.mark.parametrize("key,option,kind", OPTIONS, ids=IDS)
def test_output_in_a_missing_folder_or_a_folder(tmp_path, capsys, key, option, kind):
    inp, argv, ext = _setup(tmp_path, key)
    before = inp.read_bytes()
    _refused(capsys, [*argv, option, str(tmp_path / "missing" / ("out" + ext))], option, inp, before, tmp_path)
    if kind is output_file:  # options that take a folder (--dot DIR) accept one
        (tmp_path / "a_folder").mkdir()
        _refused(capsys, [*argv, option, str(tmp_path / "a_folder")], option, inp, before, tmp_path)


def _complete(path: Path, ext: str) -> None:
    text = path.read_text()
    if ext in (".json",) and path.suffix == ".json":
        json.loads(text)
    elif ext == ".jsonl":
        assert all(json.loads(line) for line in text.splitlines())
    elif path.suffix == ".html":
        assert text.rstrip().endswith("</html>")
    elif path.suffix == ".dot":
        assert text.rstrip().endswith("}")
    elif path.suffix == ".prob":
        assert main(["check", str(path)]) == 0
    assert text


@pytest.mark.parametrize("key,option,kind", OPTIONS, ids=IDS)
def test_a_normal_output_is_complete(tmp_path, capsys, key, option, kind):
    inp, argv, ext = _setup(tmp_path, key)
    before = inp.read_bytes()
    folder = tmp_path / "out"
    folder.mkdir()
    if option == "--report":
        ext = ".html"
    elif option == "--markdown":
        ext = ".md"
    elif option == "--certificate":  # place: its --output is a program, its certificate JSON
        ext = ".json"
    out = folder / ("result" + ("" if kind is not output_file and option == "--dot" and key == ("prove",) else ext))
    code, _, err = _run(capsys, [*argv, option, str(out)])
    assert code in (0, 1, 3), err
    assert inp.read_bytes() == before
    files = [out] if out.is_file() else sorted(out.iterdir())
    assert files, f"{option} wrote nothing"
    for f in files:
        _complete(f, ext)
    leftovers = [p.name for p in folder.rglob("*") if p.name.endswith(".part")]
    assert not leftovers, leftovers


def test_two_outputs_naming_one_file(tmp_path, capsys):
    inp = _prob(tmp_path)
    out = tmp_path / "both.json"
    code, _, err = _run(capsys, ["prove", str(inp), "--certificate", str(out), "--report", str(out)])
    assert code == 2 and "--report" in err and not out.exists()


def test_query_log_appends_atomically(tmp_path, capsys):
    inp = _loan(tmp_path)
    log = tmp_path / "q.jsonl"
    argv = ["query", str(inp), "--given", "income == 40 && debt == 10 && sex == 1", "--vary", "sex"]
    for _ in range(2):
        code, _, err = _run(capsys, [*argv, "--would", "approve", "--log", str(log)])
        assert code == 0, err
    assert len(log.read_text().splitlines()) == 2


def test_an_interrupted_write_leaves_the_old_file(tmp_path):
    """The atomic writer: a failure half-way leaves the old content and no temporary file."""
    f = tmp_path / "out.json"
    f.write_text("old\n")
    os.chmod(f, 0o640)
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(str(f), "--out") as tmp:
            Path(tmp).write_text("half a fi")
            raise KeyboardInterrupt
    assert f.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    write_output(str(f), "new\n", "--out")
    assert f.read_text() == "new\n" and (os.stat(f).st_mode & 0o777) == 0o640  # its permissions kept
    # through a symlink the file it points to is replaced (the link stays a link)
    link = tmp_path / "link.json"
    link.symlink_to(f)
    write_output(str(link), "newer\n", "--out")
    assert link.is_symlink() and f.read_text() == "newer\n"


@pytest.mark.parametrize(
    "command,name", [("cfa", "randResp.dot"), ("prove", "randResp.cfa.dot"), ("prove", "randResp.automaton0.svg")]
)
def test_a_graph_written_into_a_folder_never_lands_on_the_input(tmp_path, capsys, command, name):
    """``--dot DIR`` names its files after the programs: one of them may be the input itself."""
    inp = tmp_path / name
    shutil.copyfile(RANDRESP, inp)
    before = inp.read_bytes()
    code, _, err = _run(capsys, [command, str(inp), "--dot", str(tmp_path)])
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "--dot" in lines[0], err
    assert inp.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [name]
