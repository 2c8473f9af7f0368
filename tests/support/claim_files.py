"""A folder of claim files (benchmarks/corpus, benchmarks/heldout) and the checks that both make
of it: each file states the verdict it expects and documents its claim, each true claim has a
false sibling, inputs.json gives each file complete input sets with the right verdicts, and the
simulator agrees with those verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

from lang.parser import parse_file
from lang.typecheck import check_file
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import load_inputs

EXPECT = re.compile(r"^// expect: (proved|unknown)$", re.M)


class ClaimFolder:
    """The ``.prob`` files below ``root`` and their ``inputs.json``."""

    def __init__(self, root: Path):
        self.root = root
        self.by_file: Dict[str, list] = {}
        for b in load_inputs(root / "inputs.json"):
            self.by_file.setdefault(self.rel(b.file), []).append(b)

    def rel(self, path: Path) -> str:
        return str(Path(path).relative_to(self.root))

    def expect(self, path: Path) -> str:
        found = EXPECT.findall(path.read_text())
        assert len(found) == 1, f"{self.rel(path)}: needs exactly one `// expect: proved|unknown` line"
        return found[0]

    def header(self, path: Path) -> str:
        """The comment lines before the program."""
        text = path.read_text()
        match = re.search(r"^program ", text, re.M)
        assert match, f"{self.rel(path)}: no program"
        return text[: match.start()]

    def check_documented(self, path: Path) -> str:
        """``path`` parses and type-checks, holds one program, and only comments before it that
        cite a source and state the expected verdict; returns that comment header."""
        src = parse_file(str(path))
        check_file(src)
        assert len(src.programs) == 1, "one program per claim file"
        head = self.header(path)
        assert all(line.startswith("//") for line in head.strip().splitlines()), "only comments before the program"
        assert re.search(r"^// source: \S", head, re.M), "cite the source at the top (`// source: ...`)"
        assert "// expect:" in head
        return head

    def check_siblings(self, claims: List[Path]) -> None:
        """Every true claim has a false sibling ``NAME_false*.prob`` next to it, and back."""
        names = {f.stem: f for f in claims}
        for f in claims:
            if self.expect(f) == "proved":
                siblings = [g for g in claims if g.parent == f.parent and g.stem.startswith(f.stem + "_false")]
                assert siblings, f"{self.rel(f)} has no false sibling {f.stem}_false*.prob"
                assert all(self.expect(g) == "unknown" for g in siblings)
            else:
                base = f.stem.split("_false")[0]
                assert "_false" in f.stem and base in names, f"{self.rel(f)}: a false file is named TRUE_false*.prob"
                assert names[base].parent == f.parent, f"{self.rel(f)}: a false sibling sits next to its true claim"
                assert f"false variant of {base}" in self.header(f)

    def check_input_sets(self, files: List[Path]) -> None:
        """inputs.json names exactly ``files``, each with at least two input sets giving every
        parameter; a true claim is consistent at all of them, a false one refuted at one."""
        data = json.loads((self.root / "inputs.json").read_text())
        assert set(data) == {self.rel(f) for f in files}, "inputs.json keys = the claim files"
        for f in files:
            entries = self.by_file.get(self.rel(f), [])
            assert len(entries) >= 2, f"{self.rel(f)}: at least two input sets"
            params = {p.name for p in parse_file(str(f)).programs[0].params}
            for b in entries:
                assert set(b.inputs) == params, (
                    f"{self.rel(f)}: inputs {sorted(b.inputs)} vs parameters {sorted(params)}"
                )
                assert b.expect in ("consistent", "refuted")
            verdicts = {b.expect for b in entries}
            if self.expect(f) == "proved":
                assert verdicts == {"consistent"}, f"{self.rel(f)}: a true claim is consistent everywhere"
            else:
                assert "refuted" in verdicts, f"{self.rel(f)}: a false claim is refuted at some input"

    def check_simulated(self, name: str) -> None:
        """The simulator's verdict at each recorded input of ``name`` is the recorded one."""
        path = self.root / f"{name}.prob"
        for b in self.by_file[name + ".prob"]:
            r = simulate(path, b.inputs, runs=4000, seed=7)
            assert r.verdict == b.expect, (name, b.inputs, r.render_text())
