"""Reading ``benchmarks/inputs.json``: concrete inputs for every benchmark program.

The file maps a path relative to ``benchmarks/`` to a list of entries
``{"inputs": {name: value}, "expect": "consistent" | "refuted"}``. JSON numbers are read
exactly (``0.1`` is 1/10), strings with the ``--input`` syntax (``"0.25"``), lists are arrays.

Where the file is is the caller's to say (``path``); without one, the ``benchmarks`` folder is
looked up from the current directory (:func:`benchmarks_dir`): tamp's benchmarks live in its
source checkout, not in the installed package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from lang.inputs import parse_value

from .exact import as_exact

INPUTS_FILE = "inputs.json"


class NoBenchmarks(FileNotFoundError):
    """No ``benchmarks`` folder with an ``inputs.json`` where one was looked for."""


def benchmarks_dir(start: Optional[Path] = None) -> Path:
    """The benchmarks folder: ``start`` (default: the current directory) or the nearest of its
    parents that holds an ``inputs.json``, or has a ``benchmarks`` folder that does."""
    here = Path.cwd() if start is None else Path(start)
    here = here.resolve()
    for d in (here, *here.parents):
        for cand in (d, d / "benchmarks"):
            if (cand / INPUTS_FILE).is_file():
                return cand
    raise NoBenchmarks(f"no benchmarks/{INPUTS_FILE} in {here} or above it")


@dataclass
class BenchInput:
    """One input set of one benchmark file, with the simulator's expected verdict."""

    file: Path
    inputs: Dict[str, object]
    expect: str
    note: str = ""


def _value(v):
    if isinstance(v, str):
        return parse_value(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    return as_exact(v)


def load_inputs(path: Optional[Path] = None) -> List[BenchInput]:
    """Every input set of ``path`` (default: ``inputs.json`` of :func:`benchmarks_dir`), exact
    values; the files are resolved against the folder of ``path``."""
    path = Path(path) if path is not None else benchmarks_dir() / INPUTS_FILE
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
    """The input sets recorded for one benchmark file, from ``path`` (default: the
    ``inputs.json`` of the ``benchmarks`` folder the file lies in)."""
    target = Path(file).resolve()
    if path is None:
        path = benchmarks_dir(target.parent) / INPUTS_FILE
    return [b.inputs for b in load_inputs(path) if b.file.resolve() == target]
