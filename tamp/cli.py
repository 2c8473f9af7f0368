"""The ``tamp`` command line: a thin layer over the library.

Each sub-command lives in its own module under :mod:`tamp.commands` and
exports ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

Exit statuses (shared by every command):
0 all proved / holds · 1 not proved (unknown or timeout) · 3 violated or refuted ·
2 input or usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from lang.errors import TampError
from lang.recursion import deep_recursion

EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, EXIT_VIOLATED = 0, 1, 2, 3

# Order is the order of `tamp --help`.
COMMANDS = ["check", "prove", "prob", "simulate", "cfa", "wmi", "query", "fairness", "bench", "check_proof"]


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one clear line (its default is 2 as well)."""

    def error(self, message):  # pragma: no cover - argparse plumbing
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tamp", description="tamp: a verifier for probabilistic programs")
    parser.add_argument("--max-memory", metavar="MB", type=int,
                        help="memory guard: stop cleanly (exit 1) when the run needs more than MB megabytes")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod_name in COMMANDS:
        try:
            mod = importlib.import_module(f"tamp.commands.{mod_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tamp.commands.{mod_name}":
                continue  # command not built yet
            raise
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    if args.max_memory:
        _limit_memory(args.max_memory)
    try:
        with deep_recursion():  # the parser accepts nesting up to lang.recursion.MAX_DEPTH
            code = args._run(args)
    except TampError as exc:
        print(str(exc), file=sys.stderr)
        code = EXIT_USAGE
    except KeyboardInterrupt:
        print("tamp: interrupted", file=sys.stderr)
        code = EXIT_UNKNOWN
    except RecursionError:
        print("tamp: error: input is nested too deeply", file=sys.stderr)
        code = EXIT_USAGE
    except MemoryError:
        print("tamp: error: out of memory", file=sys.stderr)
        code = EXIT_UNKNOWN
    except Exception as exc:  # noqa: BLE001 - the user must never see a traceback
        if os.environ.get("TAMP_DEBUG"):
            raise
        if type(exc).__name__ == "Z3Exception" and "memory" in str(exc).lower():
            print("tamp: error: out of memory in the solver", file=sys.stderr)
        else:
            print(f"tamp: internal error: {type(exc).__name__}: {exc} "
                  "(set TAMP_DEBUG=1 to see where; please report it)", file=sys.stderr)
        code = EXIT_UNKNOWN
    sys.stdout.flush()
    return code


def _limit_memory(mb: int) -> None:
    """Cap the address space (Linux/macOS); z3 and numpy then fail cleanly instead of swapping."""
    try:
        import resource

        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # pragma: no cover - platform without rlimits
        print("tamp: warning: --max-memory is not supported on this platform", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
