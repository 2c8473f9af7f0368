"""``tamp import MODEL -o OUT.prob``: a trained model as a readable tamp program.

Reads ONNX (networks, scikit-learn exports via skl2onnx), Keras HDF5 (h5py, no TensorFlow) and
Libra's network text format; ``--spec`` is a Libra specification (the sensitive feature as a
one-hot group or a continuous feature with its split value, then the other one-hot groups),
which adds ``ensures independent(out, ...)``; ``--sensitive sex`` (or ``race=0,1,2``) makes one
0/1 (or integer) column the sensitive feature instead. Without ``-o`` the program is printed. The
output is parsed and type-checked before it is written. See docs/models.md.
"""

from __future__ import annotations

import sys
import time

from lang.errors import TampError
from tamp.commands.common import write_output
from tamp.commands.jsonout import emit, envelope
from tamp.commands.options import add_range_argument, input_file, names_list, output_file

NAME = "import"
HELP = "turn a trained model (ONNX, Keras .h5, Libra) into a .prob program"


def add_arguments(p) -> None:
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.models import FORMATS

    p.add_argument("model", type=input_file, help="the model file (.onnx, .h5, or a Libra network .py/.txt)")
    p.add_argument(
        "-o", "--output", metavar="OUT.prob", type=output_file, help="write the program here (default: print it)"
    )
    p.add_argument("--format", choices=FORMATS, help="the model's format when the extension does not say")
    p.add_argument(
        "--features",
        metavar="A,B,...",
        type=names_list,
        help="names of the input features by position (default x0, x1, ...)",
    )
    p.add_argument(
        "--spec", metavar="SPEC", type=input_file, help="Libra specification: sensitive feature and one-hot groups"
    )
    p.add_argument(
        "--sensitive",
        metavar="NAME[=V1,V2,...]",
        help="a 0/1 (or small integer) column that is sensitive: an int input with its values, "
        "and ensures independent(out, NAME)",
    )
    add_range_argument(p, "an input's box (repeatable; without NAME for every input; default 0..1)")
    p.add_argument("--name", metavar="NAME", help="the program's name (default: the model file's name)")
    p.add_argument(
        "--json", action="store_true", help="machine-readable output (the program's text under `text` without -o)"
    )


def run(args) -> int:
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.api import import_model

    t0 = time.monotonic()
    if args.name is not None and not args.name.isidentifier():
        raise TampError(f"--name {args.name!r} is not an identifier", "--name")
    out = args.output  # checked by options.output_file when read
    r = import_model(
        args.model,
        format=args.format,
        features=args.features,
        spec=args.spec,
        ranges=args.ranges,
        name=args.name,
        sensitive=args.sensitive,
    )
    if out is None and not args.json:
        sys.stdout.write(r.text)
        return 0
    if out is not None:
        write_output(out, r.text, "--output", [args.model, args.spec])
    prog = r.program
    if args.json:
        program = {
            "name": prog.name,
            "inputs": [p.name for p in prog.params],
            "fairness": bool(prog.ensures),  # ensures independent(...) from --spec
        }
        body = {"file": args.model, "output": out, "programs": [program]}
        emit(envelope(NAME, "ok", 0, time.monotonic() - t0, body, {} if out else {"text": r.text}))
        return 0
    print(
        f"{out}: program {prog.name} with {len(prog.params)} inputs "
        f"({', '.join(p.name for p in prog.params[:6])}{', ...' if len(prog.params) > 6 else ''})"
        + (", ensures independent(...)" if prog.ensures else "")
    )
    return 0
