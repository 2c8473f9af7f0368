"""Keeps benchmarks/prover4/dev/blind1 well formed: every file parses and type-checks, carries its headers,
every true claim has a false sibling, and inputs.json covers every file (two consistent input sets per
true claim, a refuting one per false claim). A few input sets are simulated. Nothing here proves
anything: the folder is a held-out measurement of the prover, so its answers are not asserted.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lang.parser import parse_file
from lang.typecheck import check_file

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks" / "prover4" / "dev" / "blind1"
FILES = sorted(HERE.glob("*/*.prob"))
TRUE = [f for f in FILES if not f.stem.endswith("_false")]
INPUTS = json.loads((HERE / "inputs.json").read_text())


def rel(path: Path) -> str:
    return str(path.relative_to(HERE))


def test_counts() -> None:
    families = {f.parent.name for f in TRUE}
    assert len(TRUE) >= 44 and len(families) >= 5
    assert len(FILES) == 2 * len(TRUE)


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_file_checks_and_headers(path: Path) -> None:
    check_file(parse_file(str(path)))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("// source: ")
    if path.stem.endswith("_false"):
        assert lines[1].startswith(f"// false variant of {path.stem[: -len('_false')]}: ")
        assert lines[2] == "// expect: unknown"
        assert [c["expect"] for c in INPUTS[rel(path)]] == ["refuted"]
    else:
        assert lines[1].startswith("// claim: ")
        assert lines[2] == "// expect: proved"
        assert (path.parent / f"{path.stem}_false.prob").exists()
        assert [c["expect"] for c in INPUTS[rel(path)]] == ["consistent", "consistent"]


def test_inputs_name_existing_files() -> None:
    assert sorted(INPUTS) == sorted(rel(f) for f in FILES)


def arg(value: object) -> str:
    if isinstance(value, list):
        return "[" + ",".join(arg(v) for v in value) + "]"
    return str(value)


@pytest.mark.parametrize("key", ["repetition/freivalds_vector_false.prob", "dpaccuracy/geometric_mechanism.prob"])
def test_a_few_simulations(key: str) -> None:
    for case in INPUTS[key]:
        cmd = [sys.executable, "-m", "tamp", "simulate", str(HERE / key), "--json", "--runs", "20000"]
        cmd += ["--seed", "7"]
        for name, value in case["inputs"].items():
            cmd += ["--input", f"{name}={arg(value)}"]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert json.loads(out.stdout)["programs"][0]["verdict"] == case["expect"]
