"""Helpers shared by the sub-commands: loading a file, picking programs, ``--input``."""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from lang.errors import TampError
from lang.inputs import parse_inputs, parse_value  # noqa: F401  (the commands' --input helpers)
from lang.parser import parse_file
from lang.typecheck import check_file


def add_file_arguments(p, inputs=True):
    p.add_argument("file", help="a .prob file")
    p.add_argument("--program", metavar="NAME", help="only this program of the file")
    if inputs:
        p.add_argument("--input", metavar="NAME=VALUE", action="append", default=[],
                       help="fix an input: n=8, eps=0.5, flag=true, q=[1,2,3] (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def load_programs(args) -> tuple:
    """Parse (and type-check, when the checker exists) ``args.file``; return (SourceFile, [Program])."""
    src = parse_file(args.file)
    check_file(src)
    progs = list(src.programs)
    if getattr(args, "program", None):
        progs = [p for p in progs if p.name == args.program]
        if not progs:
            names = ", ".join(p.name for p in src.programs) or "none"
            raise TampError(f"no program named '{args.program}' (the file has: {names})", args.file)
    return src, progs


def jsonable(x):
    """Make Fractions and other exact values JSON-friendly."""
    if isinstance(x, Fraction):
        return float(x)
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def emit_json(obj) -> None:
    json.dump(jsonable(obj), sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
