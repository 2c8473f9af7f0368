"""The ``tamp`` command line: a thin layer over the library.

Each sub-command lives in its own module under :mod:`tamp.commands` and
exports ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

Exit statuses (shared by every command):
0 all proved / holds · 1 not proved (unknown or timeout) · 3 violated or refuted ·
2 input or usage error.
"""

from __future__ import annotations

import argparse
import errno
import functools
import importlib
import os
import re
import sys
import warnings
from pathlib import Path
from typing import List, Optional

import z3

from lang.errors import TampError
from lang.loader import read_text
from lang.parser import parse
from lang.recursion import deep_recursion
from lang.suggest import closest, did_you_mean

from . import __version__
from .commands.common import guard_outputs
from .commands.jsonout import VERDICTS, emit, envelope, error_envelope
from .commands.options import MIN_MEMORY_MB, memory_mb
from .core.timelimit import CommandTimeout, time_limit
from .core.watchdog import SolverStuck
from .executor import ExecutorError

EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, EXIT_VIOLATED = 0, 1, 2, 3

# Commands whose --timeout bounds the whole run (the others' is per program or per query).
WHOLE_RUN_TIMEOUT = ("prove", "check-proof")

# {command name: its module under tamp.commands}; the order is the order of `tamp --help`.
# A command's module (and the engines it reads) is imported only when that command runs or a
# parser listing every command is built: `tamp prove` does not load the probability engine.
COMMANDS = {
    "check": "check",
    "prove": "prove",
    "prob": "prob",
    "simulate": "simulate",
    "cfa": "cfa",
    "wmi": "wmi",
    "query": "query",
    "fairness": "fairness",
    "import": "import_model",
    "robust": "robust",
    "equiv": "equiv",
    "prior": "prior",
    "place": "place",
    "bench": "bench",
    "check-proof": "check_proof",
}


def command_module(name: str):
    """The module of the command ``name`` (a key of :data:`COMMANDS`)."""
    return importlib.import_module(f"{__package__}.commands.{COMMANDS[name]}")


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one clear line (naming the option; the usage is
    one ``--help`` away)."""

    #: {command name: its parser} (set on the top-level parser by build_parser)
    commands: dict = {}
    #: the commands given ``--json`` (a flag, not bench's file) on this command line (set by _main)
    json_commands: frozenset = frozenset()

    def error(self, message):  # pragma: no cover - argparse plumbing
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:  # a misspelt command (or choice value): argparse 3.11 does not suggest one
            message += did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
        text = f"{self.prog}: error: {message} (see: {self.prog} --help)"
        print(text, file=sys.stderr)
        command = self.prog.split()[-1] if " " in self.prog else None
        if command in self.json_commands:  # `--json` was asked for: the usage error as JSON too
            emit(envelope(command, "error", EXIT_USAGE, 0.0, file=None, error=_usage_error(message, text)))
        sys.exit(EXIT_USAGE)

    def parse_args(self, args=None, namespace=None):
        """As argparse's, with a "did you mean" for each unknown option, among the options of
        the command it was given to."""
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            target = self.commands.get(getattr(ns, "command", None)) or self
            options = [o for p in {target, self} for a in p._actions for o in a.option_strings]
            pairs = [(w.split("=", 1)[0], closest(w.split("=", 1)[0], options)) for w in extras if w.startswith("-")]
            pairs = [(name, near) for name, near in pairs if near]
            hints = [f"'{near}'" if len(pairs) == 1 else f"'{near}' for '{name}'" for name, near in pairs]
            hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
            target.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return ns


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command-line parser: of every command, or with ``only`` (a command's name) of that
    one alone (what a command line that names it needs)."""
    parser = _Parser(prog="tamp", description="tamp: a verifier for probabilistic programs")
    parser.add_argument("--version", action="version", version=f"tamp {__version__} (Python {sys.version.split()[0]})")
    parser.add_argument(
        "--max-memory",
        metavar="MB",
        type=memory_mb,
        help="memory guard: stop cleanly (exit 1) when the run needs more than MB megabytes",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands = {}
    for name in [only] if only else COMMANDS:
        mod = command_module(name)
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
        commands[mod.NAME] = p
    parser.commands = commands
    return parser


def main(argv=None) -> int:
    """Run one command; every outcome is an exit status and at most a few lines on stderr.

    Standard output that goes away is not an error of the command: when the reader closes it
    (``tamp prove f.prob | head -1``) tamp stops quietly, as Unix tools do (exit status the
    command's own when it had finished, else 1); when it cannot be written (a full disk) the
    message says so and the exit status is 2."""
    code = EXIT_UNKNOWN  # when the output breaks off before the command is done
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return code
    except OSError as exc:
        if not _is_output_error(exc):
            raise
        _drop_stdout()
        print(f"tamp: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return code


def _is_output_error(exc: OSError) -> bool:
    """An error writing to a file or stream (disk full, quota, too large, I/O error)."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE)


def _drop_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of what is
    still buffered does not fail a second time (with an "Exception ignored" message)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. captured in tests)
        pass


def _usage_error(message: str, text: str) -> dict:
    """A usage error in the JSON ``error`` shape (docs/json.md): it has no place in a file."""
    return {"message": message, "file": None, "line": 0, "col": 0, "text": text}


def _command_word(words: List[str]) -> Optional[str]:
    """The command a command line names: its first word that is not a top-level option (or an
    option's value), when that is a command's name; else None."""
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--max-memory":
            i += 2
            continue
        if w.startswith("-"):
            i += 1
            continue
        return w if w in COMMANDS else None
    return None


def _main(argv) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_word(words))
    named = [w for w in words if w in getattr(parser, "commands", {})]
    if "--json" in words and named and named[0] != "bench":
        _Parser.json_commands = frozenset(named[:1])
    else:
        _Parser.json_commands = frozenset()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a usage error (already printed), or --help
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.max_memory:
            _limit_memory(args.max_memory)
        # no output option names an input file (or another output's file): before any work
        guard_outputs(getattr(parser, "commands", {})[args.command], args, command_module(args.command))
        limit = getattr(args, "timeout", None) if args.command in WHOLE_RUN_TIMEOUT else None
        stuck = functools.partial(_stuck, args)
        with (
            deep_recursion(),
            time_limit(limit, on_stuck=stuck),
            warnings.catch_warnings(),
        ):  # nesting up to lang.recursion.MAX_DEPTH
            warnings.showwarning = _show_warning
            code = args._run(args)
    except CommandTimeout as exc:  # parsing included: the engines' own deadlines start later
        _timed_out(args, exc)
        code = EXIT_UNKNOWN
    except SolverStuck as exc:  # a query z3 would not stop, outside a proof (which says unknown)
        print(f"tamp {args.command}: {exc}", file=sys.stderr)
        code = EXIT_UNKNOWN
    except TampError as exc:
        if exc.path == "<string>":  # raised without a file: the command's file, else tamp itself
            _locate_in_file(exc, getattr(args, "file", None), args.command)
        print(str(exc), file=sys.stderr)
        if getattr(args, "json", None) is True:  # --json: the error as JSON too (docs/json.md)
            emit(error_envelope(args.command, exc, _file_of(args)))
        code = EXIT_USAGE
    except ExecutorError as exc:  # the Dask cluster of --scheduler / --workers (docs/cluster.md)
        print(f"tamp {args.command}: error: {exc}", file=sys.stderr)
        code = EXIT_UNKNOWN
    except KeyboardInterrupt:
        print("tamp: interrupted", file=sys.stderr)
        code = EXIT_UNKNOWN
    except RecursionError:
        where = _file_of(args) or f"tamp {args.command}"  # no node to point at: the file it is in
        print(f"{where}: error: the input is nested too deeply for tamp's analysis", file=sys.stderr)
        code = EXIT_USAGE
    except MemoryError:
        print("tamp: error: out of memory", file=sys.stderr)
        code = EXIT_UNKNOWN
    except BrokenPipeError:
        raise  # the reader of standard output went away: main() stops quietly
    except OSError as exc:
        if not _is_output_error(exc) or args.max_memory:
            return _unexpected(exc, args)
        raise  # main(): "cannot write the output"
    except Exception as exc:  # noqa: BLE001 - the user must never see a traceback
        return _unexpected(exc, args)
    return code


_python_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning about the user's input (a category marked ``located``, such as
    tamp.models.errors.ModelWarning: ``FILE: warning: ...``) is its own text on stderr; any
    other warning as Python shows it."""
    if getattr(category, "located", False):
        print(str(message), file=sys.stderr if file is None else file)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


def _stuck(args, exc: CommandTimeout) -> int:
    """The run is stuck past ``--timeout`` inside a solver call that does not stop: report the
    timeout as :func:`_timed_out` does, flush, and give the exit status the process ends with."""
    _timed_out(args, exc)
    sys.stdout.flush()
    sys.stderr.flush()
    return EXIT_UNKNOWN


def _timed_out(args, exc: CommandTimeout) -> None:
    """The run went past ``--timeout`` (plus its grace) before an engine stopped itself: say so
    for the command's file, and with ``--json`` answer "unknown" in the command's JSON shape."""
    file = _file_of(args)
    what = f"{file}: timeout" if file else "tamp: timeout"
    hint = "what you can do: give it more time (a larger --timeout)"
    print(f"{what}: {exc}; {hint}", file=sys.stderr)
    if getattr(args, "json", None) is True and "unknown" in VERDICTS.get(args.command, {}):
        name = Path(file).stem if file else args.command
        program = {"name": name, "verdict": "unknown", "time_s": exc.seconds, "message": f"timeout: {exc}; {hint}"}
        emit(envelope(args.command, "unknown", EXIT_UNKNOWN, exc.seconds, file=file, programs=[program]))


def _file_of(args):
    """The input file a command was given (the model for ``import``), or None."""
    file = getattr(args, "file", None) or getattr(args, "model", None)
    return file if isinstance(file, str) else None


def _locate_in_file(exc: TampError, file, command: str) -> None:
    """Name the command's file in an error raised without one (and show its line, if any)."""
    exc.path = file or f"tamp {command}"
    if file and exc.line and exc.source is None:
        try:
            exc.source = read_text(file)
        except TampError:
            pass


def _unexpected(exc: BaseException, args) -> int:
    """The message for an exception that is not the user's input error."""
    if os.environ.get("TAMP_DEBUG"):
        raise exc
    solver = type(exc).__name__ == "Z3Exception"
    if args.max_memory and (solver or isinstance(exc, (SystemError, OSError))):
        # under an address-space cap, allocation failures surface as these
        print(f"tamp: error: out of memory (--max-memory {args.max_memory} MB)", file=sys.stderr)
    elif solver:
        print(f"tamp: error: the solver failed: {str(exc).strip()[:200]}", file=sys.stderr)
    else:
        print(
            f"tamp: internal error: {type(exc).__name__}: {exc} (set TAMP_DEBUG=1 to see where; please report it)",
            file=sys.stderr,
        )
    return EXIT_UNKNOWN


def _limit_memory(mb: int) -> None:
    """Cap the address space (Linux/macOS); z3 and numpy then fail cleanly instead of swapping.

    z3's context and the parser are created *before* the cap: z3 cannot create its context
    under a tight limit (it crashes instead of failing), and everything later reports an
    allocation failure as an exception, which :func:`main` turns into "out of memory"."""
    if mb < MIN_MEMORY_MB:  # the option's type (commands.options.memory_mb) refuses it already
        raise TampError(f"--max-memory must be at least {MIN_MEMORY_MB} MB", "--max-memory")
    try:
        import resource  # deferred on purpose: POSIX only (the except says so on other platforms)
    except ImportError:  # pragma: no cover - platform without rlimits
        print("tamp: warning: --max-memory is not supported on this platform", file=sys.stderr)
        return

    z3.main_ctx()
    parse("program warm_up() { skip; }")
    limit = mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as exc:  # pragma: no cover - e.g. a lower hard limit
        print(f"tamp: warning: --max-memory not applied: {exc}", file=sys.stderr)
