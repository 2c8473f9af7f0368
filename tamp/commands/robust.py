"""``tamp robust MODEL --at points.csv --eps E [--prior PRIOR]``: certified probabilistic robustness.

For every row of the CSV (a header of feature names, one point per row) an interval certain to
contain Pr[the class stays the one at the point] for inputs drawn from the prior (``tamp prior
fit``; uniform without ``--prior``) restricted to the eps-box. See docs/models.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict

from .common import emit_json
from .options import add_executor_arguments, add_range_argument, input_file, names_list, nonneg_float, seconds

NAME = "robust"
HELP = "certified probability that a trained model's class is stable around given points"


def positive_decimal(text: str) -> str:
    """An exact decimal > 0 (kept as text: 0.1 is 1/10, not the nearest float)."""
    from tamp.models.exact import read_fraction  # deferred on purpose: the engine loads when the command runs

    try:
        q = read_fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text[:40]!r}") from None
    if q <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text[:40]}")
    return text.strip()


def add_model_arguments(p) -> None:
    """The options that say how to read a model (shared with ``tamp equiv``)."""
    from tamp.models import FORMATS

    p.add_argument("--format", choices=FORMATS, help="the model's format when the extension does not say")
    p.add_argument("--features", metavar="A,B,...", type=names_list, help="names of the input features by position")
    add_range_argument(p, "an input's range (repeatable; without NAME for every input; default 0..1)")
    p.add_argument("--prior", metavar="PRIOR", type=input_file, help="a prior from `tamp prior fit` (default uniform)")
    p.add_argument(
        "--width",
        metavar="W",
        type=nonneg_float,
        default=1e-3,
        help="refine until the interval is at most W wide (default 0.001)",
    )
    p.add_argument("--timeout", metavar="S", type=seconds, default=60.0, help="time limit per point (s; default 60)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_executor_arguments(p, default_workers=1)


def add_arguments(p) -> None:
    p.add_argument("model", type=input_file, help="the model file (.onnx, .h5, or a Libra network)")
    p.add_argument("--at", metavar="POINTS.csv", type=input_file, required=True, help="the points, one CSV row each")
    p.add_argument("--eps", metavar="E", type=positive_decimal, required=True, help="the box half-width (> 0)")
    p.add_argument("--spec", metavar="SPEC", type=input_file, help="Libra specification: its one-hot groups stay fixed")
    add_model_arguments(p)


def model_options(args) -> Dict[str, Any]:
    """The keyword arguments of :func:`tamp.robustness.robust` and :func:`~tamp.robustness.equiv`
    given by :func:`add_model_arguments`."""
    return dict(
        prior=args.prior,
        format=args.format,
        features=args.features,
        ranges=args.ranges,
        width=args.width,
        timeout=args.timeout,
        workers=args.workers,
        scheduler=args.scheduler,
    )


def report(result, as_json: bool) -> int:
    """Print a :class:`~tamp.robustness.RobustResult` or :class:`~tamp.robustness.EquivResult`
    (JSON or text); its exit status."""
    if as_json:
        emit_json(result.to_json())
    else:
        sys.stdout.write(result.render_text() + "\n")
    return result.exit_code


def run(args) -> int:
    from tamp.robustness import robust

    return report(robust(args.model, args.at, args.eps, spec=args.spec, **model_options(args)), args.json)
