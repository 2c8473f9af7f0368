"""Piecewise-constant data priors: fitted from a CSV table, stored as JSON, restricted to a box.

A prior is a list of disjoint *cells*. A cell is a box over the continuous features and a set of
values of each categorical feature; it holds the probability ``mass`` (exact rational) spread
uniformly over it: density = mass / (volume of its box · number of its value combinations).
Outside every cell the density is 0.

Fitting (``tamp prior fit data.csv -o prior.json``) grows a *density-estimation tree* (Ram and
Gray, KDD 2011): starting from the data's bounding box it repeatedly splits the cell whose best
split most reduces the tree's integrated squared error ``-Σ n_c² / (N² V_c)`` (n_c rows in a cell
of volume V_c), at a midpoint between two consecutive data values, until there are
``max_cells`` cells or no split leaves ``min_leaf`` rows on both sides. Categorical columns are
split the same way on their sorted values, their "width" being the number of values in the
cell. Each cell's mass is its share of the rows: count / N (exact).

A column is categorical when ``categorical`` names it, or when it is not numeric, or when its
values are integers with at most ``MAX_AUTO_CATEGORIES`` distinct values (one-hot inputs are
0/1 columns) unless ``continuous`` names it.

The JSON format (``"format": "tamp-prior"``, ``"version": 1``)::

    {"format": "tamp-prior", "version": 1, "method": "density-estimation tree", "rows": 455,
     "features": [{"name": "radius", "kind": "continuous", "lo": 0, "hi": 1},
                  {"name": "sex", "kind": "categorical", "values": [0, 1]}],
     "cells": [{"box": {"radius": [0, 0.35]}, "values": {"sex": [0]}, "count": 120}, ...]}

Numbers are decimals read exactly (``0.35`` is 7/20); a cell gives ``count`` (its mass is
count / rows) or ``mass`` (a number or ``"p/q"``). A cell may omit a feature: it then spans the
feature's whole range (or all its values).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from lang.loader import read_text

from .errors import ModelError
from .exact import check_binary64, read_fraction
from .table import Table, Value

FORMAT = "tamp-prior"
VERSION = 1
MAX_AUTO_CATEGORIES = 10
DEFAULT_MAX_CELLS = 32

Interval = Tuple[Fraction, Fraction]
Cat = Union[Fraction, str]


@dataclass(frozen=True)
class PriorFeature:
    name: str
    kind: str  # "continuous" or "categorical"
    lo: Fraction = Fraction(0)
    hi: Fraction = Fraction(0)
    values: Tuple[Cat, ...] = ()


@dataclass(frozen=True)
class Cell:
    box: Tuple[Interval, ...]  # one per continuous feature, in the prior's order
    values: Tuple[frozenset, ...]  # one per categorical feature
    mass: Fraction

    def volume(self) -> Fraction:
        v = Fraction(1)
        for lo, hi in self.box:
            v *= hi - lo
        for s in self.values:
            v *= len(s)
        return v

    def density(self) -> Fraction:
        vol = self.volume()
        return self.mass / vol if vol else Fraction(0)


@dataclass
class Prior:
    features: List[PriorFeature]
    cells: List[Cell]
    method: str = ""
    rows: int = 0
    path: str = "<prior>"
    lines: Dict[str, int] = field(default_factory=dict)  # feature -> line in the JSON file

    @property
    def continuous(self) -> List[PriorFeature]:
        return [f for f in self.features if f.kind == "continuous"]

    @property
    def categorical(self) -> List[PriorFeature]:
        return [f for f in self.features if f.kind == "categorical"]

    def feature(self, name: str) -> Optional[PriorFeature]:
        return next((f for f in self.features if f.name == name), None)

    def pieces(self, fixed: Dict[str, Cat], box: Dict[str, Interval]) -> List[Tuple[Dict[str, Interval], Fraction]]:
        """The prior conditioned on ``fixed`` features and restricted to ``box`` (the other
        continuous features): ``(sub-box, density)`` pairs, disjoint, with positive volume. The
        conditional density on a sub-box is proportional to the density given (same factor for
        every piece)."""
        cont = self.continuous
        cats = self.categorical
        out: List[Tuple[Dict[str, Interval], Fraction]] = []
        for cell in self.cells:
            d = cell.density()
            if d == 0:
                continue
            ok = True
            for f, vals in zip(cats, cell.values):
                if f.name in fixed and not _has(vals, fixed[f.name]):
                    ok = False
                    break
            if not ok:
                continue
            piece: Dict[str, Interval] = {}
            for f, (lo, hi) in zip(cont, cell.box):
                if f.name in fixed:
                    v = fixed[f.name]
                    if not isinstance(v, Fraction) or not (lo <= v < hi or v == hi == f.hi):
                        ok = False
                        break
                    continue
                if f.name in box:
                    a, b = box[f.name]
                    a, b = max(a, lo), min(b, hi)
                    if a >= b and not (a == b and box[f.name][0] == box[f.name][1]):
                        ok = False
                        break
                    piece[f.name] = (a, b)
            if ok:
                out.append((piece, d))
        return out

    def __repr__(self) -> str:
        return (
            f"Prior({len(self.cells)} cells over {len(self.features)} features, "
            f"{len(self.categorical)} categorical, from {self.rows} rows)"
        )

    def _repr_html_(self) -> str:
        import html

        feats = ", ".join(
            html.escape(f.name)
            + (f" [{float(f.lo):g}, {float(f.hi):g}]" if f.kind == "continuous" else " (categorical)")
            for f in self.features
        )
        return f"<div><b>prior</b> ({html.escape(self.method or 'piecewise constant')}): {len(self.cells)} cells over {feats}</div>"

    def to_json(self) -> dict:
        feats = []
        for f in self.features:
            if f.kind == "continuous":
                feats.append({"name": f.name, "kind": f.kind, "lo": _num(f.lo), "hi": _num(f.hi)})
            else:
                feats.append({"name": f.name, "kind": f.kind, "values": [_cat(v) for v in f.values]})
        cells = []
        total = self.rows
        for c in self.cells:
            obj: Dict[str, object] = {
                "box": {f.name: [_num(lo), _num(hi)] for f, (lo, hi) in zip(self.continuous, c.box)}
            }
            if self.categorical:
                obj["values"] = {
                    f.name: [_cat(v) for v in f.values if v in s] for f, s in zip(self.categorical, c.values)
                }
            if total and (c.mass * total).denominator == 1:
                obj["count"] = int(c.mass * total)
            else:
                obj["mass"] = str(c.mass)
            cells.append(obj)
        return {
            "format": FORMAT,
            "version": VERSION,
            "method": self.method,
            "rows": total,
            "features": feats,
            "cells": cells,
        }


def _has(vals: frozenset, v: Cat) -> bool:
    return v in vals


def _num(q: Fraction):
    """A JSON number that reads back as exactly ``q`` (an int, a short decimal, or "p/q")."""
    if q.denominator == 1:
        return int(q)
    f = float(q)
    if Fraction(repr(f)) == q:
        return f  # json writes repr(f), which reads back (as a decimal) as q
    return str(q)


def _cat(v: Cat):
    if isinstance(v, Fraction):
        return _num(v)
    return v


# ---------------------------------------------------------------------------------- reading


def _exact(v: object, where: str, path: str, line: int) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, (int, str, Fraction)):
        raise ModelError(f"{where}: expected a number, got {json.dumps(v, default=str)[:40]}", path, line, 1)
    try:
        q = read_fraction(v) if isinstance(v, str) else Fraction(v)
    except (ValueError, ZeroDivisionError):
        raise ModelError(f"{where}: expected a number, got {str(v)[:40]!r}", path, line, 1) from None
    shown = (
        str(v)[:40]
        if isinstance(v, (int, str)) and len(str(v)) <= 40
        else f"of about 1e{len(str(abs(q.numerator // q.denominator))) - 1}"
    )
    return check_binary64(q, f"{where}: the number {shown}", path, line, 1)


def _line_of(text: str, needle: str) -> int:
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else 0


def read_prior(text: str, path: str = "<prior>") -> Prior:
    """Parse the JSON format (module docstring); errors name the file and the feature or line."""
    try:
        data = json.loads(text, parse_float=read_fraction)
    except json.JSONDecodeError as exc:
        raise ModelError(f"not JSON: {exc.msg}", path, exc.lineno, exc.colno) from None
    except ValueError as exc:  # a number beyond the limits of read_fraction (or of Python's int)
        raise ModelError(f"not a usable prior: {str(exc)[:120]}", path) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ModelError(f'not a tamp prior (expected "format": "{FORMAT}")', path, 1, 1)
    if data.get("version") != VERSION:
        raise ModelError(f"prior format version {data.get('version')!r} is not supported (expected {VERSION})", path)
    feats_raw = data.get("features")
    if not isinstance(feats_raw, list) or not feats_raw:
        raise ModelError('"features" must be a non-empty list', path, _line_of(text, '"features"'), 1)
    feats: List[PriorFeature] = []
    lines: Dict[str, int] = {}
    for fr in feats_raw:
        name = fr.get("name") if isinstance(fr, dict) else None
        if not isinstance(name, str) or not name:
            raise ModelError("every feature needs a name", path, _line_of(text, '"features"'), 1)
        line = _line_of(text, f'"{name}"')
        if name in lines:
            raise ModelError(f"feature '{name}' is listed twice", path, line, 1)
        lines[name] = line
        kind = fr.get("kind")
        if kind == "continuous":
            lo = _exact(fr.get("lo"), f"feature '{name}': lo", path, line)
            hi = _exact(fr.get("hi"), f"feature '{name}': hi", path, line)
            if not lo < hi:
                raise ModelError(f"feature '{name}': lo must be below hi", path, line, 1)
            feats.append(PriorFeature(name, kind, lo, hi))
        elif kind == "categorical":
            vals = fr.get("values")
            if not isinstance(vals, list) or not vals:
                raise ModelError(f"feature '{name}': a categorical feature needs its values", path, line, 1)
            feats.append(PriorFeature(name, kind, values=tuple(_cat_value(v, name, path, line) for v in vals)))
        else:
            raise ModelError(f"feature '{name}': kind must be continuous or categorical", path, line, 1)
    rows = data.get("rows", 0)
    if not isinstance(rows, int) or rows < 0:
        raise ModelError('"rows" must be a count', path, _line_of(text, '"rows"'), 1)
    cells_raw = data.get("cells")
    if not isinstance(cells_raw, list) or not cells_raw:
        raise ModelError('"cells" must be a non-empty list', path, _line_of(text, '"cells"'), 1)
    cont = [f for f in feats if f.kind == "continuous"]
    cats = [f for f in feats if f.kind == "categorical"]
    cells: List[Cell] = []
    cline = _line_of(text, '"cells"')
    for k, cr in enumerate(cells_raw):
        where = f"cell {k + 1}"
        if not isinstance(cr, dict):
            raise ModelError(f"{where}: expected an object", path, cline, 1)
        box_raw = cr.get("box", {}) or {}
        vals_raw = cr.get("values", {}) or {}
        for name in list(box_raw) + list(vals_raw):
            f = next((g for g in feats if g.name == name), None)
            if (
                f is None
                or (name in box_raw and f.kind != "continuous")
                or (name in vals_raw and f.kind != "categorical")
            ):
                raise ModelError(
                    f"{where} names '{name}', which is not a {('continuous' if name in box_raw else 'categorical')} feature of the prior",
                    path,
                    cline,
                    1,
                )
        box = []
        for f in cont:
            iv = box_raw.get(f.name, [f.lo, f.hi])
            if not isinstance(iv, list) or len(iv) != 2:
                raise ModelError(f"{where}: the box of '{f.name}' must be [lo, hi]", path, cline, 1)
            lo, hi = (_exact(x, f"{where}, '{f.name}'", path, cline) for x in iv)
            if not (f.lo <= lo <= hi <= f.hi):
                raise ModelError(f"{where}: the box of '{f.name}' is not inside {f.lo}..{f.hi}", path, cline, 1)
            box.append((lo, hi))
        values = []
        for f in cats:
            vs = vals_raw.get(f.name, list(f.values))
            s = frozenset(_cat_value(v, f.name, path, cline) for v in vs)
            if not s <= set(f.values):
                raise ModelError(f"{where}: a value of '{f.name}' is not one of its values", path, cline, 1)
            values.append(s)
        if "count" in cr:
            if not isinstance(cr["count"], int) or cr["count"] < 0 or not rows:
                raise ModelError(f'{where}: count must be a non-negative integer (and "rows" given)', path, cline, 1)
            mass = Fraction(cr["count"], rows)
        elif "mass" in cr:
            mass = _exact(cr["mass"], f"{where}: mass", path, cline)
        else:
            raise ModelError(f"{where}: give its count or its mass", path, cline, 1)
        if mass < 0:
            raise ModelError(f"{where}: negative mass", path, cline, 1)
        cells.append(Cell(tuple(box), tuple(values), mass))
    total = sum((c.mass for c in cells), Fraction(0))
    if total != 1:
        raise ModelError(f"the cells' masses add up to {total}, not 1", path, cline, 1)
    _check_disjoint(cells, path, cline)
    return Prior(feats, cells, str(data.get("method", "")), rows, path, lines)


def _cat_value(v: object, name: str, path: str, line: int) -> Cat:
    if isinstance(v, str):
        return v
    return _exact(v, f"feature '{name}': a value", path, line)


def _check_disjoint(cells: Sequence[Cell], path: str, line: int) -> None:
    """Cells must not overlap with positive volume (pairs; priors have tens of cells)."""
    for i, a in enumerate(cells):
        for j in range(i):
            b = cells[j]
            if all(max(p[0], q[0]) < min(p[1], q[1]) for p, q in zip(a.box, b.box)) and all(
                s & t for s, t in zip(a.values, b.values)
            ):
                raise ModelError(f"cells {j + 1} and {i + 1} overlap", path, line, 1)


def load_prior(path: str) -> Prior:

    return read_prior(read_text(path), path)


# ---------------------------------------------------------------------------------- fitting


def _kinds(table: Table, categorical: Sequence[str], continuous: Sequence[str]) -> Dict[str, str]:
    for name in list(categorical) + list(continuous):
        if name not in table.columns:
            raise ModelError(
                f"'{name}' is not a column of the table (its columns: {', '.join(table.columns)})",
                "--categorical" if name in categorical else "--continuous",
            )
    kinds = {}
    for name in table.columns:
        col = table.column(name)
        numeric = all(isinstance(v, Fraction) for v in col)
        if name in categorical:
            kinds[name] = "categorical"
        elif name in continuous:
            if not numeric:
                bad = next(k for k, v in enumerate(col) if not isinstance(v, Fraction))
                raise ModelError(
                    f"column '{name}' is not numeric ({col[bad]!r}); it cannot be continuous",
                    table.path,
                    table.lines[bad],
                    1,
                )
            kinds[name] = "continuous"
        elif not numeric:
            kinds[name] = "categorical"
        elif all(v.denominator == 1 for v in col) and len(set(col)) <= MAX_AUTO_CATEGORIES:  # type: ignore[union-attr]
            kinds[name] = "categorical"
        else:
            kinds[name] = "continuous"
    return kinds


def _sort_key(v: Value):
    return (0, v, "") if isinstance(v, Fraction) else (1, Fraction(0), v)


def fit_prior(
    table: Table,
    *,
    categorical: Sequence[str] = (),
    continuous: Sequence[str] = (),
    ranges: Optional[Dict[str, Interval]] = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    min_leaf: Optional[int] = None,
    columns: Optional[Sequence[str]] = None,
) -> Prior:
    """A density-estimation tree over the table's rows (module docstring). ``ranges`` widens the
    bounding box of continuous columns (e.g. to the model's input box); ``columns`` keeps only
    those columns (default all)."""
    if columns is not None:
        for c in columns:
            if c not in table.columns:
                raise ModelError(f"'{c}' is not a column of the table", "--columns")
        keep = [table.columns.index(c) for c in columns]
        table = Table(table.path, list(columns), [[r[i] for i in keep] for r in table.rows], table.lines)
    kinds = _kinds(table, categorical, continuous)
    n = len(table.rows)
    if min_leaf is None:
        min_leaf = max(5, math.ceil(n / 50))
    if max_cells < 1 or min_leaf < 1:
        raise ModelError("--max-cells and --min-leaf must be at least 1", "--max-cells")
    ranges = ranges or {}
    for name in ranges:
        if name not in table.columns or kinds[name] != "continuous":
            raise ModelError(f"--range names '{name}', which is not a continuous column of the table", "--range")
    feats: List[PriorFeature] = []
    dims: List[np.ndarray] = []  # per feature: float coordinate (continuous) or value code
    for name in table.columns:
        col = table.column(name)
        if kinds[name] == "continuous":
            qs = [v for v in col if isinstance(v, Fraction)]
            lo, hi = min(qs), max(qs)
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            if lo == hi:
                raise ModelError(
                    f"column '{name}' has one value ({lo}); a continuous feature needs a range "
                    f"(give --range {name}=LO..HI or --categorical {name})",
                    table.path,
                )
            feats.append(PriorFeature(name, "continuous", lo, hi))
            dims.append(np.array([float(v) for v in qs]))
        else:
            vals = tuple(sorted(set(col), key=_sort_key))
            feats.append(PriorFeature(name, "categorical", values=vals))
            codes = {v: i for i, v in enumerate(vals)}
            dims.append(np.array([codes[v] for v in col], dtype=float))
    X = np.stack(dims, axis=1) if dims else np.zeros((n, 0))
    # a cell: (row indices, per-feature bounds: exact (lo, hi) for continuous, (first code, last code) for categorical)
    root = [(f.lo, f.hi) if f.kind == "continuous" else (Fraction(0), Fraction(len(f.values) - 1)) for f in feats]
    leaves: List[Tuple[np.ndarray, List[Interval]]] = [(np.arange(n), root)]

    def width(f: PriorFeature, iv: Interval) -> float:
        return float(iv[1] - iv[0]) if f.kind == "continuous" else float(iv[1] - iv[0] + 1)

    def best_split(idx: np.ndarray, bounds: List[Interval]):
        m = len(idx)
        if m < 2 * min_leaf:
            return None
        widths = [width(f, b) for f, b in zip(feats, bounds)]
        vol = float(np.prod(widths))
        base = m * m / vol
        best = None
        for k, f in enumerate(feats):
            xs = np.sort(X[idx, k])
            cand = np.nonzero(xs[1:] > xs[:-1])[0]  # split after position i: left = xs[:i+1]
            cand = cand[(cand + 1 >= min_leaf) & (m - cand - 1 >= min_leaf)]
            if not len(cand):
                continue
            rest = vol / widths[k]
            lo = float(bounds[k][0])
            for i in cand:
                if f.kind == "continuous":
                    t = (xs[i] + xs[i + 1]) / 2
                    wl, wr = t - lo, widths[k] - (t - lo)
                else:
                    t = xs[i]  # left: codes <= t
                    wl, wr = t - lo + 1, widths[k] - (t - lo + 1)
                if wl <= 0 or wr <= 0:
                    continue
                nl, nr = i + 1, m - i - 1
                gain = nl * nl / (wl * rest) + nr * nr / (wr * rest) - base
                if best is None or gain > best[0]:
                    best = (gain, k, float(t))
        return best

    cands = {0: best_split(*leaves[0])}
    while len(leaves) < max_cells:
        live = [(c[0], i) for i, c in cands.items() if c is not None and c[0] > 0]
        if not live:
            break
        _, i = max(live)
        choice = cands[i]
        assert choice is not None
        _, k, t = choice
        idx, bounds = leaves[i]
        f = feats[k]
        if f.kind == "continuous":
            q = Fraction(repr(t))
            if not bounds[k][0] < q < bounds[k][1]:
                cands[i] = None
                continue
            left_b, right_b = (bounds[k][0], q), (q, bounds[k][1])
            go_left = X[idx, k] < t
        else:
            code = int(t)
            left_b, right_b = (bounds[k][0], Fraction(code)), (Fraction(code + 1), bounds[k][1])
            go_left = X[idx, k] <= code
        lb, rb = list(bounds), list(bounds)
        lb[k], rb[k] = left_b, right_b
        leaves[i] = (idx[go_left], lb)
        leaves.append((idx[~go_left], rb))
        cands[i] = best_split(*leaves[i])
        cands[len(leaves) - 1] = best_split(*leaves[-1])
    cells = []
    for idx, bounds in leaves:
        box = tuple(b for f, b in zip(feats, bounds) if f.kind == "continuous")
        values = tuple(
            frozenset(f.values[int(b[0]) : int(b[1]) + 1]) for f, b in zip(feats, bounds) if f.kind == "categorical"
        )
        cells.append(Cell(box, values, Fraction(len(idx), n)))
    return Prior(feats, cells, "density-estimation tree", n, "<fitted>")


def prior_text(prior: Prior) -> str:
    """The JSON text of a prior: one line per feature and per cell."""
    data = prior.to_json()
    head = {k: v for k, v in data.items() if k not in ("features", "cells")}
    lines = [json.dumps(head)[:-1] + ","]
    for key in ("features", "cells"):
        items = [" " + json.dumps(x) for x in data[key]]
        lines.append(f' "{key}": [')
        lines.append(",\n".join(items))
        lines.append(" ]" + ("," if key == "features" else ""))
    lines.append("}")
    return "\n".join(lines)


def save_prior(prior: Prior, path: str) -> None:
    text = prior_text(prior)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        raise ModelError(f"cannot write {path}: {exc.strerror}", "--output") from None
