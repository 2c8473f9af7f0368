"""``tamp cfa FILE``: show each program's control-flow automaton (text, JSON or graphviz)."""

from __future__ import annotations

import os
import shutil
import time

from lang.errors import TampError

from .common import add_file_arguments, emit_json, load_programs, refuse_inputs, render_graphviz, write_output
from .jsonout import envelope
from .options import output_file_or_dir

NAME = "cfa"
HELP = "print the control-flow automaton of each program (or write it as graphviz .dot)"

_DOT_SOURCE = (".dot", ".gv")


def add_arguments(p):
    add_file_arguments(p, inputs=False)
    p.add_argument(
        "--dot",
        metavar="OUT",
        type=output_file_or_dir,
        help="write graphviz to OUT: a file (OUT.dot; OUT.svg, .png or .pdf are rendered by graphviz's "
        "`dot` program) for one program, or a folder (one NAME.dot per program; .svg too when `dot` "
        "is installed). The folder holding OUT must exist.",
    )


def _is_file(out: str) -> bool:
    return not os.path.isdir(out) and bool(os.path.splitext(os.path.normpath(out))[1])


def _dot_targets(out: str, names):
    """Map program name → where its graph goes: OUT itself when OUT is a file name (one program
    only), OUT/NAME.dot when OUT is a folder (created when missing; its parent exists)."""
    if _is_file(out):
        if len(names) != 1:
            raise TampError(
                f"{out} is a file name, but there are {len(names)} programs "
                f"({', '.join(names)}): give a folder, or pick one with --program",
                "--dot",
            )
        fmt = os.path.splitext(out)[1].lower()
        if fmt not in _DOT_SOURCE and not shutil.which("dot"):
            raise TampError(
                f"{out}: writing a {fmt} file needs graphviz's `dot` program, which is not "
                f"installed; write a .dot file instead",
                "--dot",
            )
        return {names[0]: out}
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise TampError(f"cannot write into {out}: {exc.strerror or exc}", "--dot") from None
    return {n: os.path.join(out, f"{n}.dot") for n in names}


def _write(path: str, text: str, quiet: bool, inputs) -> None:
    """One graph to ``path`` (atomically, never over one of ``inputs``): graphviz text, or an
    image graphviz renders; a .dot file is also rendered as .svg when graphviz is installed."""
    fmt = os.path.splitext(path)[1].lower()
    if fmt not in _DOT_SOURCE:  # an image: graphviz renders it
        failure = render_graphviz(text, path, "--dot", inputs)
        if failure is not None:
            raise TampError(f"{path}: graphviz could not write it: {failure}", "--dot")
        if not quiet:
            print(f"wrote {path}")
        return
    write_output(path, text, "--dot", inputs)
    if shutil.which("dot"):
        svg = os.path.splitext(path)[0] + ".svg"
        if render_graphviz(text, svg, "--dot", inputs) is None and not quiet:
            print(f"wrote {path} and {svg}")
        elif not quiet:
            print(f"wrote {path} (graphviz could not render {svg})")
    elif not quiet:
        print(f"wrote {path} (render it with: dot -Tsvg {path} -o {os.path.splitext(path)[0]}.svg)")


def run(args) -> int:
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from tamp.cfa import build_cfa

    t0 = time.monotonic()
    src, progs = load_programs(args)
    targets = _dot_targets(args.dot, [p.name for p in progs]) if args.dot else {}
    cfas = [build_cfa(p, path=src.path, source=src.text) for p in progs]
    for target in targets.values():  # every file checked before the first is written
        refuse_inputs(target, "--dot", [args.file])
        refuse_inputs(os.path.splitext(target)[0] + ".svg", "--dot", [args.file])
    for c in cfas if args.dot else ():
        _write(targets[c.name], c.to_dot(), args.json, [args.file])
    if args.json:
        emit_json(envelope(NAME, "ok", 0, time.monotonic() - t0, file=src.path, programs=[c.to_json() for c in cfas]))
    elif not args.dot:
        print("\n\n".join(c.to_text() for c in cfas))
    return 0
