"""CSV tables of feature values (``tamp robust --at points.csv``, ``tamp prior fit data.csv``).

The first row names the columns; every other row holds one value per column. A value is an exact
rational when it reads as a number (``0.1`` is the decimal 1/10, not the nearest binary float),
else a string (a category). Errors name the file, line and column.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from fractions import Fraction
from typing import List, Optional, Union

from lang.loader import read_text

from .errors import ModelError
from .exact import read_fraction

Value = Union[Fraction, str]


@dataclass
class Table:
    path: str
    columns: List[str]
    rows: List[List[Value]]
    lines: List[int]  # the file line of each row (1-based; the header is line 1)

    def column(self, name: str) -> List[Value]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def col_number(self, name: str) -> int:
        """The 1-based character column where a column's name starts in the header line (for
        located messages; exact for unquoted headers)."""
        i = self.columns.index(name)
        return 1 + sum(len(c) + 1 for c in self.columns[:i])


def number(text: str) -> Optional[Fraction]:
    """The exact rational a decimal (``-0.25``, ``1e-3``, ``3/4``) denotes, or None."""
    try:
        return read_fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        return None


def read_table(text: str, path: str) -> Table:
    """Parse CSV text (see the module docstring)."""
    reader = csv.reader(io.StringIO(text))
    rows: List[List[Value]] = []
    lines: List[int] = []
    header: List[str] = []
    for raw in reader:
        line = reader.line_num
        if not raw or all(not c.strip() for c in raw):
            continue
        if not header:
            header = [c.strip() for c in raw]
            for k, name in enumerate(header):
                if not name:
                    raise ModelError(f"column {k + 1} of the header has no name", path, line, 1)
                if header.index(name) != k:
                    raise ModelError(f"column '{name}' is named twice in the header", path, line, 1)
            continue
        if len(raw) != len(header):
            raise ModelError(f"{len(raw)} values for the {len(header)} columns of the header", path, line, 1)
        row: List[Value] = []
        for cell in raw:
            q = number(cell)
            if q is None and not cell.strip():
                raise ModelError(f"an empty value in column '{header[len(row)]}'", path, line, 1)
            row.append(q if q is not None else cell.strip())
        rows.append(row)
        lines.append(line)
    if not header:
        raise ModelError("the file is empty (expected a header line naming the columns)", path)
    if not rows:
        raise ModelError("the file has a header but no rows", path, 1, 1)
    return Table(path, header, rows, lines)


def load_table(path: str) -> Table:

    return read_table(read_text(path), path)
