"""Which features are sensitive, which are one-hot groups, and the input box.

The specification file is Libra's (Urban et al., OOPSLA 2020), one item per line::

    2          <- how many inputs encode the sensitive feature (k > 1: a one-hot group)
    x020
    x021
    4          <- then any number of other one-hot groups: their size, then their inputs
    x01
    ...

or, for a continuous sensitive feature, ``1``, its name and the value at which its range is
split (is the class the same for every value below and above the split?). Features left
out are continuous. Names are the model's feature names (``x0, x1, ...`` or ``--features``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from .errors import ModelError
from .exact import check_binary64, read_fraction


@dataclass
class FeatureSpec:
    sensitive: List[str] = field(default_factory=list)  # one-hot members, or one continuous feature
    split: Optional[Fraction] = None  # the continuous sensitive feature's split value
    groups: List[List[str]] = field(default_factory=list)  # the other one-hot groups
    lines: Dict[str, int] = field(default_factory=dict)  # feature -> spec line (for located errors)
    path: str = "<spec>"
    values: Optional[List[int]] = None  # a discrete sensitive column's values (``--sensitive sex=0,1``)


def parse_sensitive(text: str) -> FeatureSpec:
    """``NAME`` (a 0/1 column) or ``NAME=V1,V2,...`` (its integer values) for ``--sensitive``."""
    name, sep, vals = text.partition("=")
    name = name.strip()
    if not name.isidentifier():
        raise ModelError(f"--sensitive expects NAME or NAME=V1,V2,..., got {text!r}", "--sensitive")
    values = [0, 1]
    if sep:
        try:
            values = [int(v) for v in vals.split(",")]
        except ValueError:
            raise ModelError(
                f"--sensitive {text}: the values of a sensitive column are integers (e.g. race=0,1,2)", "--sensitive"
            ) from None
        if len(values) < 2 or len(set(values)) != len(values) or max(abs(v) for v in values) > 10**9:
            raise ModelError(
                f"--sensitive {text}: expected at least two distinct integers (at most 10^9 in size)", "--sensitive"
            )
    return FeatureSpec(sensitive=[name], values=values, lines={name: 0}, path="--sensitive")


def _number(text: str, path: str, line: int) -> Fraction:
    try:
        return read_fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ModelError(f"expected a number, got {text.strip()!r}", path, line, 1) from None


def parse_spec(text: str, path: str = "<spec>") -> FeatureSpec:
    """Read a Libra specification file (see the module docstring)."""
    lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    spec = FeatureSpec(path=path)
    pos = 0

    def count() -> Tuple[int, int]:
        nonlocal pos
        line, t = lines[pos]
        pos += 1
        if not t.isdigit() or int(t) < 1:
            raise ModelError(f"expected the number of inputs of a feature (an integer >= 1), got {t!r}", path, line, 1)
        return line, int(t)

    def names(k: int, after: int) -> List[str]:
        nonlocal pos
        out = []
        for _ in range(k):
            if pos >= len(lines):
                raise ModelError(f"the file ends before the {k} inputs announced on line {after}", path, after, 1)
            line, t = lines[pos]
            pos += 1
            if not t.isidentifier():
                raise ModelError(f"expected an input name, got {t!r}", path, line, 1)
            if t in spec.lines:
                raise ModelError(f"input '{t}' is listed twice (also on line {spec.lines[t]})", path, line, 1)
            spec.lines[t] = line
            out.append(t)
        return out

    if not lines:
        raise ModelError("the specification is empty (expected the sensitive feature first)", path)
    line, k = count()
    spec.sensitive = names(k, line)
    if k == 1:
        if pos >= len(lines):
            raise ModelError(
                "a continuous sensitive feature needs the value at which to split its range", path, line, 1
            )
        sline, t = lines[pos]
        pos += 1
        spec.split = _number(t, path, sline)
    while pos < len(lines):
        line, k = count()
        spec.groups.append(names(k, line))
    return spec


def parse_range(text: str) -> Tuple[Optional[str], Fraction, Fraction]:
    """``NAME=LO..HI`` or ``LO..HI`` (every feature) for ``--range``; exact decimals."""
    name, _, rng = text.rpartition("=")
    lo_t, sep, hi_t = rng.partition("..")
    try:
        if not sep:
            raise ValueError
        lo, hi = read_fraction(lo_t.strip()), read_fraction(hi_t.strip())
    except (ValueError, ZeroDivisionError):
        raise ModelError(f"--range expects NAME=LO..HI or LO..HI, got {text!r}", "--range") from None
    if lo > hi:
        raise ModelError(f"--range {text}: the low end is above the high end", "--range")
    for q in (lo, hi):
        check_binary64(q, f"--range {text.strip()[:60]}", "--range")
    return (name.strip() or None), lo, hi
