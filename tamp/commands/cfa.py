"""``tamp cfa FILE``: show each program's control-flow automaton (text, JSON or graphviz)."""

from __future__ import annotations

import os
import shutil
import subprocess

from .common import add_file_arguments, emit_json, load_programs

NAME = "cfa"
HELP = "print the control-flow automaton of each program (or write it as graphviz .dot)"


def add_arguments(p):
    add_file_arguments(p, inputs=False)
    p.add_argument("--dot", metavar="OUT", help="write graphviz to OUT (a .dot file, or a directory "
                   "for several programs); renders .svg when the `dot` binary is installed")


def _dot_targets(out: str, names):
    """Map program name → .dot path: OUT itself for one program, OUT/NAME.dot for several."""
    if len(names) == 1 and out.endswith(".dot"):
        return {names[0]: out}
    os.makedirs(out, exist_ok=True)
    return {n: os.path.join(out, f"{n}.dot") for n in names}


def run(args) -> int:
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.cfa import build_cfa

    src, progs = load_programs(args)
    cfas = [build_cfa(p, path=src.path, source=src.text) for p in progs]
    if args.dot:
        targets = _dot_targets(args.dot, [c.name for c in cfas])
        for c in cfas:
            path = targets[c.name]
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(path, "w") as fh:
                fh.write(c.to_dot())
            if shutil.which("dot"):
                svg = path[:-4] + ".svg" if path.endswith(".dot") else path + ".svg"
                subprocess.run(["dot", "-Tsvg", path, "-o", svg], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if not args.json:
                    print(f"wrote {path} and {svg}")
            elif not args.json:
                print(f"wrote {path} (render it with: dot -Tsvg {path} -o {path[:-4]}.svg)")
    if args.json:
        emit_json({"file": src.path, "programs": [c.to_json() for c in cfas]})
    elif not args.dot:
        print("\n\n".join(c.to_text() for c in cfas))
    return 0
