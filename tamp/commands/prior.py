"""``tamp prior fit data.csv -o prior.json``: a piecewise-constant density learned from data.

A density-estimation tree over the table's columns (categorical columns included), written in
tamp's prior format for ``tamp robust --prior`` and ``tamp equiv --prior``. See docs/models.md.
"""

from __future__ import annotations

import sys

from lang.errors import TampError

from .common import write_output
from .options import add_range_argument, input_file, names_list, output_file, positive_int

NAME = "prior"
HELP = "fit a piecewise-constant data prior (density-estimation tree) from a CSV table"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    f = sub.add_parser("fit", help="fit a prior to the rows of a CSV table", description=HELP)
    f.add_argument("data", type=input_file, help="a CSV table: a header of feature names, one row per sample")
    f.add_argument("-o", "--output", metavar="PRIOR.json", type=output_file, help="write the prior here")
    f.add_argument("--categorical", metavar="A,B", type=names_list, default=[], help="columns to treat as categories")
    f.add_argument("--continuous", metavar="A,B", type=names_list, default=[], help="columns to treat as continuous")
    add_range_argument(
        f, "widen a continuous column's box to LO..HI (default: the data's min..max)", metavar="NAME=LO..HI"
    )
    f.add_argument("--max-cells", metavar="N", type=positive_int, default=32, help="at most N cells (default 32)")
    f.add_argument(
        "--min-leaf", metavar="N", type=positive_int, help="at least N rows per cell (default max(5, rows/50))"
    )


def run(args) -> int:
    if getattr(args, "action", None) != "fit":
        raise TampError("expected an action: tamp prior fit DATA.csv -o PRIOR.json", "tamp prior")
    from tamp.models.prior import fit_prior, prior_text
    from tamp.models.spec import parse_range
    from tamp.models.table import load_table

    ranges = {}
    for r in args.ranges:
        name, lo, hi = parse_range(r)
        if name is None:
            raise TampError("--range needs a column name: NAME=LO..HI", "--range")
        ranges[name] = (lo, hi)
    table = load_table(args.data)
    prior = fit_prior(
        table,
        categorical=args.categorical,
        continuous=args.continuous,
        ranges=ranges,
        max_cells=args.max_cells,
        min_leaf=args.min_leaf,
    )
    if args.output is None:
        sys.stdout.write(prior_text(prior) + "\n")
        return 0
    write_output(args.output, prior_text(prior) + "\n", "--output", [args.data])
    print(
        f"{args.output}: {len(prior.cells)} cells over {len(prior.features)} features "
        f"({len(prior.categorical)} categorical) from {prior.rows} rows"
    )
    return 0
