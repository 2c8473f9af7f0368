"""``tamp equiv A B [--prior PRIOR]``: a certified interval of Pr[models A and B disagree].

The inputs are drawn from the prior (``tamp prior fit``) or uniformly from the models' input
box; both models must have the same features. See docs/models.md.
"""

from __future__ import annotations

from .options import input_file
from .robust import add_model_arguments, model_options, report

NAME = "equiv"
HELP = "certified probability that two trained models give different classes"


def add_arguments(p) -> None:
    p.add_argument("model_a", type=input_file, help="the first model file")
    p.add_argument("model_b", type=input_file, help="the second model file")
    add_model_arguments(p)


def run(args) -> int:
    from tamp.robustness import equiv

    return report(equiv(args.model_a, args.model_b, **model_options(args)), args.json)
