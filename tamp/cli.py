"""The ``tamp`` command line: a thin layer over the library.

Each sub-command lives in its own module under :mod:`tamp.commands` and
exports ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

Exit statuses (shared by every command):
0 all proved / holds · 1 not proved (unknown or timeout) · 3 violated or refuted ·
2 input or usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

import z3

from lang.errors import TampError
from lang.parser import parse
from lang.recursion import deep_recursion

from .commands import bench, cfa, check, check_proof, fairness, prob, prove, query, simulate, wmi

EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, EXIT_VIOLATED = 0, 1, 2, 3

# Order is the order of `tamp --help`.
COMMANDS = [check, prove, prob, simulate, cfa, wmi, query, fairness, bench, check_proof]


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
    for mod in COMMANDS:
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
    try:
        if args.max_memory:
            _limit_memory(args.max_memory)
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
        solver = type(exc).__name__ == "Z3Exception"
        if args.max_memory and (solver or isinstance(exc, (SystemError, OSError))):
            # under an address-space cap, allocation failures surface as these
            print(f"tamp: error: out of memory (--max-memory {args.max_memory} MB)", file=sys.stderr)
        elif solver:
            print(f"tamp: error: the solver failed: {str(exc).strip()[:200]}", file=sys.stderr)
        else:
            print(f"tamp: internal error: {type(exc).__name__}: {exc} "
                  "(set TAMP_DEBUG=1 to see where; please report it)", file=sys.stderr)
        code = EXIT_UNKNOWN
    sys.stdout.flush()
    return code


MIN_MEMORY_MB = 512  # the interpreter, z3 and the parser map ~300 MB of address space before any work


def _limit_memory(mb: int) -> None:
    """Cap the address space (Linux/macOS); z3 and numpy then fail cleanly instead of swapping.

    z3's context and the parser are created *before* the cap: z3 cannot create its context
    under a tight limit (it crashes instead of failing), and everything later reports an
    allocation failure as an exception, which :func:`main` turns into "out of memory"."""
    if mb < MIN_MEMORY_MB:
        raise TampError(f"--max-memory must be at least {MIN_MEMORY_MB} MB "
                        "(the solver and the parser need that much to start)", "--max-memory")
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
