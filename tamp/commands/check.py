"""``tamp check FILE``: parse and type-check every program of a file.

Prints ``FILE: ok (2 programs: p, q)`` and exits 0, or prints the first error
(``file:line:col: error: …`` with the source line and a caret) and exits 2.
With ``--json`` the outcome is a JSON object on standard output::

    {"file": "f.prob", "ok": true,
     "programs": [{"name": "p", "params": {"n": "int"}, "locals": {"x": "real"},
                   "kind": "failure-bound"}]}

and on an error ``{"file": …, "ok": false, "error": {"message", "file", "line", "col", "text"}}``,
with the keys every command's JSON has (``schema_version``, ``command``, ``verdict``: ``ok`` or
``error``, ``exit_code``, ``time_s``; docs/json.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lang.errors import TampError
from tamp.api import check as api_check
from tamp.commands.common import emit_json
from tamp.commands.jsonout import envelope, error_envelope

NAME = "check"
HELP = "parse and type-check a .prob file"


def add_arguments(p) -> None:
    p.add_argument("file", help="a .prob file")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args) -> int:
    t0 = time.monotonic()
    try:
        checked = api_check(Path(args.file))
    except TampError as exc:
        if not args.json:
            raise  # the CLI prints it and exits 2
        print(str(exc), file=sys.stderr)
        emit_json(dict(error_envelope(NAME, exc, args.file, time.monotonic() - t0), ok=False))
        return 2
    if args.json:
        emit_json(envelope(NAME, "ok", 0, time.monotonic() - t0, checked.to_json()))
    else:
        print(checked.summary())
    return 0
