"""Helpers shared by the sub-commands: loading a file, picking programs, ``--input``, JSON output."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from lang import ast as A
from lang.inputs import check_inputs, check_known
from lang.loader import check_bound, load, parse_bound, select

from .jsonout import emit
from .options import add_input_argument


def add_file_arguments(p, inputs=True):
    p.add_argument("file", help="a .prob file")
    p.add_argument("--program", metavar="NAME", help="only this program of the file")
    if inputs:
        add_input_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def load_programs(args) -> tuple:
    """Read, parse and type-check ``args.file`` (:func:`lang.load`); return (SourceFile, [Program])
    with only ``args.program`` when given."""
    src = load(Path(args.file))
    return src, select(src, getattr(args, "program", None))


def checked_inputs(src: A.SourceFile, progs: List[A.Program], inputs: Dict[str, object]) -> Dict[str, object]:
    """``--input`` values checked against the selected programs: every name is a parameter of
    one of them and every value fits that parameter's type (located errors, exit 2)."""
    if not inputs:
        return {}
    check_known(progs, inputs, src.path)
    out: Dict[str, object] = {}
    for prog in progs:
        out.update(check_inputs(prog, inputs, src.path, src.text or None))
    return out


def checked_bound(progs: List[A.Program], text):
    """``--bound`` parsed and checked against every selected program (a number over its
    parameters; errors located in the option); None when the option is absent."""
    if text is None:
        return None
    bound = parse_bound(text)
    for prog in progs:
        check_bound(prog, bound, text)
    return bound


def emit_json(obj) -> None:
    """Print ``obj`` as JSON (see :mod:`tamp.commands.jsonout` for the shape every command uses)."""
    emit(obj)
