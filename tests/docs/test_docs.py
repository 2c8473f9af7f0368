"""Every code block in README.md and docs/*.md is run.

* ```prob blocks are parsed and type-checked. A block preceded by a line
  ``<!-- file: NAME.prob -->`` is also written to NAME.prob in the working folder
  that the page's later blocks run in (it also links the repository's
  ``benchmarks/`` and ``docs/``, so pages can name them as a user would).
* ```console blocks: each ``$ command`` line is run (``tamp`` is this checkout's
  tamp) in that folder, with the repository's root as ``$REPO``; it must exit 0
  unless the block's first line is ``# exit N``. Every expected output line
  without digits must appear in the actual output (digits are timings and
  counts that vary from run to run).
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
    env = dict(os.environ, REPO=str(REPO), PYTHONPATH=str(REPO))
    for cmd, expected in cmds:
        words = shlex.split(cmd)
        if words and words[0] == "tamp":
            words = [sys.executable, "-m", "tamp"] + words[1:]
        words = [os.path.expandvars(w) for w in words]
        proc = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        got = proc.stdout + proc.stderr
        assert "Traceback" not in got, got
        assert proc.returncode == expect_code, f"`{cmd}` exited {proc.returncode}:\n{got}"
        norm = " ".join(got.split())
        for line in expected:
            if line.strip() and not re.search(r"\d", line):
                assert " ".join(line.split()) in norm, f"`{cmd}`: expected line {line!r} not in:\n{got}"


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
