"""``tamp equiv A B [--prior PRIOR]``: a certified interval of Pr[models A and B disagree].

The inputs are drawn from the prior (``tamp prior fit``) or uniformly from the models' input
box; both models must have the same features. See docs/models.md.
"""

from __future__ import annotations

import sys

from .common import emit_json
from .options import input_file
from .robust import add_model_arguments

NAME = "equiv"
HELP = "certified probability that two trained models give different classes"


def add_arguments(p) -> None:
    p.add_argument("model_a", type=input_file, help="the first model file")
    p.add_argument("model_b", type=input_file, help="the second model file")
    add_model_arguments(p)


def run(args) -> int:
    from tamp.robustness import equiv

    r = equiv(
        args.model_a,
        args.model_b,
        prior=args.prior,
        format=args.format,
        features=args.features,
        ranges=args.ranges,
        width=args.width,
        timeout=args.timeout,
        workers=args.workers,
        scheduler=args.scheduler,
    )
    if args.json:
        emit_json(r.to_json())
    else:
        sys.stdout.write(r.render_text() + "\n")
    return r.exit_code
