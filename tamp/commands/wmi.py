"""``tamp wmi PROBLEM.json``: exact weighted model integration of a problem in the WMI JSON format."""

from __future__ import annotations

from .options import add_executor_arguments, make_executor, seconds

NAME = "wmi"
HELP = "compute the exact weighted model integral Z of a WMI problem (JSON format)"


def add_arguments(p):
    p.add_argument("file", help="a WMI problem in the community's JSON format")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--timeout", metavar="S", type=seconds, help="time limit in seconds")
    add_executor_arguments(p, default_workers=1)


def run(args) -> int:
    # deferred on purpose: loaded only when this command runs (CLI start-up)
    from ..wmi.cli import run as run_wmi

    with make_executor(args) as ex:  # the cells' exact integrals are its jobs
        return run_wmi(args.file, args.json, args.timeout, ex if ex.parallel else None)
