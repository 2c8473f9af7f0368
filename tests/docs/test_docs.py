"""Every code block in README.md and docs/*.md is run.

* ```prob blocks are parsed and type-checked. A block preceded by a line
  ``<!-- file: NAME.prob -->`` is also written to NAME.prob in the working folder
  that the page's later blocks run in (it also links the repository's
  ``benchmarks/`` and ``docs/``, so pages can name them as a user would).
* ```console blocks: each ``$ command`` line is run (``tamp`` is this checkout's
  tamp) in that folder, with the repository's root as ``$REPO``; it must exit 0
  unless the block's first line is ``# exit N``. The output the page shows under
  a command is compared with what the command prints (standard output and error
  as they interleave): every shown line must be a printed line, in the same
  order, modulo blanks and times (:func:`mask`: ``0.16 s``, ``"time_s": 0.07``,
  dates and the machine's description; a time in brackets at a line's end may be
  left out). A page may show an excerpt — lines may
  be left out, and ``…`` in a shown line stands for any text (the end of a long
  line, a long formula) — but no shown line may differ from what tamp prints.
* ```python blocks run in one namespace per page, in that folder.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from locations import REPO

PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("**/*.md"))
FENCE = re.compile(r"^(?:<!-- file: (?P<file>[\w./-]+) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)^```", re.M | re.S)


def blocks(page: Path):
    return [(m.group("lang"), m.group("body"), m.group("file")) for m in FENCE.finditer(page.read_text())]


_TIME = re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\s*(?:s|ms|seconds)\b")
_JSON_TIME = re.compile(r'("(?:\w*time\w*|\w+_s|synthesis|interpolation|inclusion)":\s*)-?[\d.e-]+')
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?\b")
_MACHINE = re.compile(r"\d+ cores, .*")
_SOLVER_TIME = re.compile(r"\b(solver_time|solver time) [\d.]+")
_BARE_TIME = re.compile(r"\s*[(\[]<T>[)\]]|\s*<T>$")


def mask(line: str) -> str:
    """A line with its times, dates and machine description replaced and its blanks collapsed:
    what must agree between a page and a run."""
    line = _JSON_TIME.sub(r"\1<T>", line)
    line = _TIME.sub("<T>", line)
    line = _DATE.sub("<DATE>", line)
    line = _MACHINE.sub("<MACHINE>", line)
    line = _SOLVER_TIME.sub(r"\1 <T>", line)
    line = _BARE_TIME.sub("", line)  # a page may leave a line's time out: `half: REFUTED`
    return " ".join(line.split())


def matches(shown: str, printed: str) -> bool:
    """``…`` in a shown line stands for any text (the end of a long line, a long formula)."""
    if "…" not in shown:
        return shown == printed
    pattern = ".*".join(re.escape(part) for part in shown.split("…"))
    return re.fullmatch(pattern, printed) is not None


def check_shown(cmd: str, shown: list, got: str) -> None:
    """Every shown line is a printed line (masked), in order."""
    printed = [mask(x) for x in got.splitlines()]
    i = 0
    for line in shown:
        want = mask(line)
        if not want:
            continue
        while i < len(printed) and not matches(want, printed[i]):
            i += 1
        assert i < len(printed), (
            f"`{cmd}`: the page shows {line!r}, which tamp does not print"
            " (at that place: after the lines matched before it). tamp printed:\n" + got
        )
        i += 1


def run_console(body: str, cwd: Path):
    lines = body.splitlines()
    expect_code = 0
    if lines and lines[0].startswith("# exit "):
        expect_code = int(lines[0].split()[2])
        lines = lines[1:]
    cmds, i = [], 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd, out = lines[i][2:], []
            i += 1
            while i < len(lines) and not lines[i].startswith("$ "):
                out.append(lines[i])
                i += 1
            cmds.append((cmd, out))
        else:
            i += 1
    env = dict(os.environ, REPO=str(REPO), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    env.pop("NO_COLOR", None)
    for cmd, expected in cmds:
        words = shlex.split(cmd)
        if words and words[0] == "tamp":
            words = [sys.executable, "-m", "tamp"] + words[1:]
        words = [os.path.expandvars(w) for w in words]
        proc = subprocess.run(
            words, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600
        )
        got = proc.stdout
        assert "Traceback" not in got, got
        assert proc.returncode == expect_code, f"`{cmd}` exited {proc.returncode}:\n{got}"
        check_shown(cmd, expected, got)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_page_code_blocks(page, tmp_path, monkeypatch):
    from lang.parser import parse
    from lang.typecheck import check_file

    monkeypatch.chdir(tmp_path)
    for shared in ("benchmarks", "docs"):  # pages refer to the repository's own files
        (tmp_path / shared).symlink_to(REPO / shared, target_is_directory=True)
    namespace: dict = {}
    for lang_name, body, file_name in blocks(page):
        if file_name:
            (tmp_path / file_name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / file_name).write_text(body)
        if lang_name == "prob":
            src = parse(body, file_name or f"{page.name}:block")
            if check_file:
                check_file(src)
        elif lang_name == "console":
            run_console(body, tmp_path)
        elif lang_name == "python":
            exec(compile(body, f"{page.name}:python", "exec"), namespace)


def test_example_files_are_the_ones_the_pages_show():
    """A file a page writes (``<!-- file: NAME -->``) that is also in docs/examples is that file."""
    shown = {}
    for page in PAGES:
        for _lang, body, file_name in blocks(page):
            if file_name:
                shown.setdefault(Path(file_name).name, []).append((page.name, body))
    examples = sorted((REPO / "docs" / "examples").iterdir())
    assert examples
    for example in examples:
        assert example.name in shown, f"docs/examples/{example.name} is shown on no page"
        for page_name, body in shown[example.name]:
            assert body == example.read_text(), f"{page_name} shows a different {example.name}"


def test_the_comparison_ignores_times_and_nothing_else():
    printed = "ex1: OK (17 obligations, 0.21 s)\nOK: 17 obligations re-checked in 0.21 s\n"
    check_shown("c", ["ex1: OK (17 obligations, 0.05 s)", "OK: 17 obligations re-checked in 0.05 s"], printed)
    with pytest.raises(AssertionError):  # a count that drifted (trust.md showed 22)
        check_shown("c", ["ex1: OK (22 obligations, 0.05 s)"], printed)
    with pytest.raises(AssertionError):  # the same lines in another order
        check_shown("c", ["OK: 17 obligations re-checked in 0.05 s", "ex1: OK (17 obligations, 0.05 s)"], printed)
    check_shown("c", ["half: REFUTED"], "half: REFUTED  [7.59 s]\n  runs: 20000\n")  # the time left out
    check_shown("c", ['  "time_s": 0.08,'], '{\n  "time_s": 0.0787,\n}')
    check_shown("c", ["  axiom: Pr[…] <= 0.25"], "  axiom: Pr[!(r1 == 0 && r2 == 1)] <= 0.25\n")
    with pytest.raises(AssertionError):
        check_shown("c", ["  axiom: Pr[…] <= 0.5"], "  axiom: Pr[!(r1 == 0 && r2 == 1)] <= 0.25\n")
