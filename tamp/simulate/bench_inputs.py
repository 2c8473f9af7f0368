"""Reading ``benchmarks/inputs.json``: concrete inputs for every benchmark program.

The file maps a path relative to ``benchmarks/`` to a list of entries
``{"inputs": {name: value}, "expect": "consistent" | "refuted"}``. JSON numbers are read
exactly (``0.1`` is 1/10), strings with the ``--input`` syntax (``"0.25"``), lists are arrays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from .exact import as_exact

BENCHMARKS_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


@dataclass
class BenchInput:
    """One input set of one benchmark file, with the simulator's expected verdict."""

    file: Path
    inputs: Dict[str, object]
    expect: str
    note: str = ""


def _value(v):
    if isinstance(v, str):
        from lang.inputs import parse_value

        return parse_value(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    return as_exact(v)


def load_inputs(path: Optional[Path] = None) -> List[BenchInput]:
    """Every input set of ``benchmarks/inputs.json`` (or ``path``), exact values."""
    path = Path(path) if path is not None else BENCHMARKS_DIR / "inputs.json"
    data = json.loads(path.read_text())
    out = []
    for rel, entries in data.items():
        for ent in entries:
            out.append(
                BenchInput(
                    path.parent / rel,
                    {k: _value(v) for k, v in ent["inputs"].items()},
                    ent.get("expect", "consistent"),
                    ent.get("note", ""),
                )
            )
    return out


def inputs_for(file, path: Optional[Path] = None) -> List[Dict[str, object]]:
    """The input sets recorded for one benchmark file (matched by its path's final parts)."""
    target = Path(file).resolve()
    return [b.inputs for b in load_inputs(path) if b.file.resolve() == target]
