"""The command line's option values, checked once, where argparse reads them.

Each function here is an argparse ``type=`` (or an ``action=``): a bad value becomes
``tamp CMD: error: argument --timeout: …`` and exit status 2 before any work starts, and the
commands receive values that are known to be in range. Output paths are checked here too, so a
typo in ``--certificate`` or ``--report`` does not cost a whole proof before it is noticed.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any, Callable

from lang.inputs import parse_assignment, show

MIN_MEMORY_MB = 512  # the interpreter, z3 and the parser map ~300 MB of address space before any work


def _number(text: str, kind: Callable, what: str):
    try:
        value = kind(text.strip())
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r} (not a finite number)")
    return value


class _Checked:
    """An argparse ``type=``: the text read as a ``kind`` (:func:`_number`) that must satisfy
    ``ok``, else the usage error ``complaint`` (formatted with the ``text`` given)."""

    def __init__(self, name: str, kind: Callable, what: str, ok: Callable[[Any], bool], complaint: str):
        self.__name__, self.kind, self.what, self.ok, self.complaint = name, kind, what, ok, complaint

    def __call__(self, text: str) -> Any:
        v = _number(text, self.kind, self.what)
        if not self.ok(v):
            raise argparse.ArgumentTypeError(self.complaint.format(text=text))
        return v

    def __repr__(self) -> str:
        return self.__name__


#: a time limit: a finite number of seconds > 0
seconds = _Checked(
    "seconds", float, "a number of seconds", lambda v: v > 0, "the time limit must be positive, got {text}"
)
positive_int = _Checked(
    "positive_int", int, "a positive integer", lambda v: v >= 1, "must be positive (an integer >= 1), got {text}"
)
nonneg_int = _Checked("nonneg_int", int, "an integer >= 0", lambda v: v >= 0, "expected an integer >= 0, got {text}")
#: a random seed: an integer in 0 .. 2^64 - 1
seed = _Checked(
    "seed",
    int,
    "an integer seed",
    lambda v: 0 <= v < 2**64,
    "the seed must be an integer from 0 to 2^64 - 1, got {text:.40}",
)
positive_float = _Checked(
    "positive_float", float, "a finite number > 0", lambda v: v > 0, "expected a number > 0, got {text}"
)
nonneg_float = _Checked(
    "nonneg_float", float, "a finite number >= 0", lambda v: v >= 0, "expected a number >= 0, got {text}"
)
#: a number strictly between 0 and 1 (a confidence)
open_unit = _Checked(
    "open_unit",
    float,
    "a number between 0 and 1",
    lambda v: 0 < v < 1,
    "expected a number strictly between 0 and 1, got {text}",
)
memory_mb = _Checked(
    "memory_mb",
    int,
    "a number of megabytes",
    lambda v: v >= MIN_MEMORY_MB,
    f"must be at least {MIN_MEMORY_MB} MB (the solver and the parser need that much to start), got {{text}}",
)

MAX_RUNS = 10**9  # about a quarter of an hour of the simplest program; more never finishes in practice


def runs(text: str) -> int:
    """A number of simulation runs: 1 .. MAX_RUNS."""
    v = positive_int(text)
    if v > MAX_RUNS:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_RUNS:,} runs (the confidence interval is then already narrower than 1e-4), got {text[:40]}"
        )
    return v


def _parent_exists(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    shown = os.path.dirname(path) or parent
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"cannot write {path}: the folder {shown} does not exist")
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {path}: the folder {shown} is not writable")


def input_file(path: str) -> str:
    """A file to read: it must exist (read errors later are still located messages)."""
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(
            f"cannot read {path}: " + ("it is a folder" if os.path.isdir(path) else "no such file")
        )
    return path


def output_file(path: str) -> str:
    """A file to write: its folder must exist, and it must not be a folder itself."""
    if not path:
        raise argparse.ArgumentTypeError("expected a file name")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is a folder; give a file name")
    _parent_exists(path)
    return path


def output_dir(path: str) -> str:
    """A folder to write into: an existing folder, or a new one whose parent exists."""
    if not path:
        raise argparse.ArgumentTypeError("expected a folder name")
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} exists and is not a folder")
    _parent_exists(os.path.normpath(path))
    return path


def output_file_or_dir(path: str) -> str:
    """A file (a name with an extension such as ``.dot``) or a folder (an existing one, or a
    name without an extension); the folder that would hold it must exist."""
    if os.path.isdir(path) or not os.path.splitext(os.path.normpath(path))[1]:
        return output_dir(path)
    return output_file(path)


#: The argparse types of output options: tamp.commands.common.guard_outputs checks every option
#: of these types against the command's inputs before the command runs.
OUTPUT_TYPES = (output_file, output_dir, output_file_or_dir)


class InputAction(argparse.Action):
    """``--input NAME=VALUE`` (repeatable) into ``{name: value}``; a malformed value or the same
    name twice is a usage error naming the option. Whether the value fits the parameter's type
    is checked against the program (:func:`lang.inputs.check_inputs`)."""

    def __init__(self, option_strings, dest, **kwargs):
        kwargs.setdefault("default", {})
        kwargs.setdefault("metavar", "NAME=VALUE")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            name, value = parse_assignment(values)
        except ValueError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        seen = dict(getattr(namespace, self.dest, None) or {})
        if name in seen:
            raise argparse.ArgumentError(
                self, f"'{name}' is given twice ({name}={show(seen[name])} and {values.strip()})"
            )
        seen[name] = value
        setattr(namespace, self.dest, seen)


def names_list(text: str) -> list:
    """``A,B,C``: comma-separated names, none empty (``--features``, ``--categorical``)."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def add_range_argument(p, help: str, metavar: str = "[NAME=]LO..HI") -> None:
    """``--range NAME=LO..HI``, repeatable, collected in ``args.ranges``."""
    p.add_argument("--range", metavar=metavar, action="append", default=[], dest="ranges", help=help)


def add_input_argument(p) -> None:
    p.add_argument(
        "--input",
        action=InputAction,
        help="fix an input: n=8, eps=0.5, flag=true, q=[1,2,3] (repeatable, each name once)",
    )


def scheduler_address(text: str) -> str:
    """A Dask scheduler's address: ``tcp://host:port`` (or ``host:port``)."""
    text = text.strip()
    if not text or any(c.isspace() for c in text) or ":" not in text:
        raise argparse.ArgumentTypeError(f"expected a scheduler address such as tcp://host:8786, got {text[:60]!r}")
    return text


def add_executor_arguments(p, default_workers: int, kind: Callable = positive_int) -> None:
    """``--workers N`` (alias ``--jobs``) and ``--scheduler ADDR``: where the command's parallel
    jobs run (see :mod:`tamp.executor` and docs/cluster.md)."""
    auto = " (0: this process for small jobs, then all cores)" if kind is nonneg_int else ""
    p.add_argument(
        "--workers",
        "--jobs",
        dest="workers",
        metavar="N",
        type=kind,
        default=default_workers,
        help=f"parallel worker processes on this machine{auto}; 1 runs everything in this "
        f"process (default {default_workers})",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        type=scheduler_address,
        default=None,
        help="run the jobs on an existing Dask cluster (tcp://host:8786; default: "
        "$DASK_SCHEDULER_ADDRESS when set, else this machine)",
    )


def make_executor(args):
    """The executor of ``--workers`` / ``--scheduler`` (a context manager)."""
    # deferred on purpose: the engine loads when the command runs, not at CLI start-up
    from tamp.executor import Executor

    return Executor(args.workers, args.scheduler)
