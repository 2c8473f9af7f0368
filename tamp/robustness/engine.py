"""``tamp robust`` and ``tamp equiv``: certified probabilities under a piecewise-constant prior.

Robustness at a point x with class c: the inputs are drawn from the prior restricted to the
eps-box (continuous features in [x - eps, x + eps] ∩ their range; one-hot members of the spec,
categorical features of the prior and features whose range is one value stay as at x). The box
is cut along the prior's cells into pieces of constant density d_i; on each piece the volume
where the class stays c is bounded by :func:`~.agree.agreement` (a *task*; the tasks of all
points run through :mod:`tamp.executor`). Then

    Pr[class = c] ∈ [Σ d_i·lower_i / Z, Σ d_i·upper_i / Z],   Z = Σ d_i·vol_i,

exact rationals. Equivalence: the same over the whole prior (or the uniform box), with
Pr[A ≠ B] = 1 - Pr[A = B].
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, Hashable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from lang.loader import read_text
from tamp.executor import Executor
from tamp.models import read_model
from tamp.models.emit import check_spec, feature_box
from tamp.models.errors import ModelError
from tamp.models.exact import check_binary64, read_fraction
from tamp.models.prior import Prior, load_prior
from tamp.models.spec import FeatureSpec, parse_range, parse_spec
from tamp.models.table import Table, load_table

from .agree import Agreement, Box, Const, Side, agreement, volume
from .classifier import FOREST, Classifier, classifier
from .forest import Forest
from .netbounds import NetBounds
from .result import EquivResult, PointResult, RobustResult

DEFAULT_WIDTH = 1e-3
DEFAULT_TIMEOUT = 60.0


@dataclass
class Loaded:
    clf: Classifier
    side: Side
    box: Dict[str, Tuple[Fraction, Fraction]]
    onehot: Set[str]


def load(
    model: str,
    *,
    format: Optional[str] = None,
    features: Optional[Sequence[str]] = None,
    spec: Union[str, FeatureSpec, None] = None,
    ranges: Sequence[str] = (),
) -> Loaded:
    net, _ = read_model(model, format=format, features=features)
    clf = classifier(net, model)
    box = feature_box(net, [parse_range(r) for r in ranges])
    onehot: Set[str] = set()
    if spec is not None:
        if isinstance(spec, str):
            spec = parse_spec(read_text(spec), spec)
        check_spec(net, spec)
        if len(spec.sensitive) > 1:
            onehot |= set(spec.sensitive)
        for g in spec.groups:
            onehot |= set(g)
    side: Side = Forest(clf) if clf.kind == FOREST else NetBounds(clf)
    return Loaded(clf, side, box, onehot)


def _prior(prior: Union[str, Prior, None]) -> Optional[Prior]:
    return load_prior(prior) if isinstance(prior, str) else prior


def _check_prior_features(prior: Prior, feats: Sequence[str], needed: Sequence[str]) -> None:
    for f in prior.features:
        if f.name not in feats:
            raise ModelError(
                f"the prior is over feature '{f.name}', which is not a feature of the model "
                f"(its features: {', '.join(feats)})",
                prior.path,
                prior.lines.get(f.name, 0),
                1 if prior.lines.get(f.name) else 0,
            )
    names = {f.name for f in prior.features}
    for name in needed:
        if name not in names:
            raise ModelError(f"the prior has no distribution for the model's feature '{name}'", prior.path)


def agreement_task(
    a: Side, b: Side, boxes: List[Tuple[Box, Fraction]], width: float, budget: Optional[float]
) -> Agreement:
    """One independent task: a group of weighted cells (module-level, picklable arguments: runs
    on any executor)."""
    return agreement(a, b, boxes, width, budget)


def _agreements(
    workers: int,
    scheduler: Optional[str],
    jobs: List[Tuple[Hashable, Side, Side, List[Tuple[Box, Fraction]]]],
    width: float,
    timeout: Optional[float],
) -> Iterator[Tuple[Hashable, Agreement]]:
    """``(key, agreement)`` of every job ``(key, side A, side B, weighted cells)``, run as tasks of
    :mod:`tamp.executor` (each model sent to the workers once), in completion order."""
    with Executor(workers, scheduler) as ex:
        handles: Dict[int, object] = {}

        def handle(side: Side) -> object:
            if isinstance(side, Const):
                return side
            if id(side) not in handles:
                handles[id(side)] = ex.share(side)
            return handles[id(side)]

        items = [(key, (handle(a), handle(b), cells, width, timeout)) for key, a, b, cells in jobs]
        yield from ex.map(agreement_task, items)


def _mass(cells: List[Tuple[Box, Fraction]]) -> Fraction:
    return sum((d * volume(bx) for bx, d in cells), Fraction(0))


def _groups(items: List[Tuple[Box, Fraction]], k: int) -> List[List[Tuple[Box, Fraction]]]:
    """``items`` dealt into at most k groups of about equal weighted volume."""
    k = max(1, min(k, len(items)))
    order = sorted(items, key=lambda it: -(it[1] * volume(it[0])))
    groups: List[List[Tuple[Box, Fraction]]] = [[] for _ in range(k)]
    loads = [Fraction(0)] * k
    for it in order:
        j = loads.index(min(loads))
        groups[j].append(it)
        loads[j] += it[1] * volume(it[0])
    return [g for g in groups if g]


def robust(
    model: str,
    at: Union[str, Table],
    eps: Union[float, str, Fraction],
    *,
    prior: Union[str, Prior, None] = None,
    spec: Union[str, FeatureSpec, None] = None,
    format: Optional[str] = None,
    features: Optional[Sequence[str]] = None,
    ranges: Sequence[str] = (),
    width: float = DEFAULT_WIDTH,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    workers: int = 1,
    scheduler: Optional[str] = None,
) -> RobustResult:
    """Certified Pr[the class stays the one at the point] for every row of ``at`` (a CSV path or
    :class:`Table`) within ``eps`` (module docstring). ``width``: stop refining a point once its
    interval is that narrow; ``timeout``: seconds per point."""
    t_start = time.monotonic()
    try:
        eps_q = read_fraction(str(eps)) if isinstance(eps, (float, str)) else Fraction(eps)
    except (ValueError, ZeroDivisionError) as exc:
        raise ModelError(f"--eps: expected a number > 0, got {str(eps)[:40]!r} ({exc})", "--eps") from None
    if eps_q <= 0:
        raise ModelError(f"--eps must be > 0, got {eps}", "--eps")
    check_binary64(eps_q, f"--eps {str(eps)[:40]}", "--eps")
    if width < 0:
        raise ModelError("--width must be >= 0", "--width")
    ld = load(model, format=format, features=features, spec=spec, ranges=ranges)
    table = load_table(at) if isinstance(at, str) else at
    feats = ld.clf.features
    for col in table.columns:
        if col not in feats:
            raise ModelError(
                f"column '{col}' is not a feature of the model (its features: {', '.join(feats)})",
                table.path,
                1,
                table.col_number(col),
            )
    for f in feats:
        if f not in table.columns:
            raise ModelError(f"the model's feature '{f}' has no column", table.path, 1, 1)
    pr = _prior(prior)
    cats = {f.name for f in pr.categorical} if pr else set()
    fixed_names = ld.onehot | cats | {f for f, (lo, hi) in ld.box.items() if lo == hi}
    if pr:
        _check_prior_features(pr, feats, [f for f in feats if f not in fixed_names])
    jobs: List[Tuple[int, int, List[Tuple[Box, Fraction]]]] = []  # (point, class, weighted cells)
    points: List[PointResult] = []
    prep: Dict[int, float] = {}
    masses: Dict[int, Fraction] = {}
    for i, row in enumerate(table.rows):
        t0 = time.monotonic()
        line = table.lines[i]
        x: Dict[str, Fraction] = {}
        for f in feats:
            v = row[table.columns.index(f)]
            if not isinstance(v, Fraction):
                raise ModelError(f"feature '{f}': expected a number, got {v!r}", table.path, line, table.col_number(f))
            lo, hi = ld.box[f]
            if not lo <= v <= hi:
                raise ModelError(
                    f"feature '{f}' = {v} is outside its range {lo}..{hi}", table.path, line, table.col_number(f)
                )
            x[f] = v
        c0 = ld.clf.classify(x)
        varying: Dict[str, Tuple[Fraction, Fraction]] = {}
        for f in feats:
            if f not in fixed_names:
                lo, hi = ld.box[f]
                varying[f] = (max(lo, x[f] - eps_q), min(hi, x[f] + eps_q))
        fixed = {f: x[f] for f in feats if f in fixed_names}
        pieces = pr.pieces(fixed, varying) if pr else [(dict(varying), Fraction(1))]  # type: ignore[arg-type]
        pieces = [(p, d) for p, d in pieces if d > 0]
        z = _mass(pieces)
        if z == 0:
            raise ModelError(
                f"the prior has no mass in the eps-box of this point (class {ld.clf.label(c0)})", table.path, line, 1
            )
        masses[i] = z
        full = [({f: p.get(f, (x[f], x[f])) for f in feats}, d) for p, d in pieces]
        jobs.append((i, c0, full))
        points.append(PointResult(i, line, ld.clf.label(c0), Fraction(0), Fraction(0), 0.0))
        prep[i] = time.monotonic() - t0
    # one task per point (its cells in one branch and bound, the widest weighted gaps first);
    # with fewer points than workers, a point's cells are dealt into several tasks
    per_point = max(1, workers // max(len(jobs), 1)) if workers > 1 else 1
    tasks: List[Tuple[Hashable, Side, Side, List[Tuple[Box, Fraction]]]] = [
        ((i, g), Const(c0), ld.side, group) for i, c0, full in jobs for g, group in enumerate(_groups(full, per_point))
    ]
    for key, r in _agreements(workers, scheduler, tasks, width, timeout):
        i = key[0]  # type: ignore[index]
        p = points[i]
        p.lower += r.lower / masses[i]
        p.upper += r.upper / masses[i]
        p.time_s += r.time_s
        p.boxes += r.boxes
    for p in points:
        p.time_s += prep[p.index]
        p.lower, p.upper = max(p.lower, Fraction(0)), min(p.upper, Fraction(1))  # outward rounding
    return RobustResult(
        model,
        eps_q,
        width,
        points,
        prior=(pr.path if pr else "uniform"),
        time_s=time.monotonic() - t_start,
    )


def _domain(
    pr: Optional[Prior], feats: Sequence[str], box: Dict[str, Tuple[Fraction, Fraction]]
) -> List[Tuple[Box, Fraction]]:
    """The prior's cells (categorical value combinations enumerated) as full boxes with their
    densities, or the uniform box."""
    if pr is None:
        return [(dict(box), Fraction(1))]
    cont = pr.continuous
    cats = pr.categorical
    out: List[Tuple[Box, Fraction]] = []
    for cell in pr.cells:
        d = cell.density()
        if d == 0:
            continue
        base = {f.name: iv for f, iv in zip(cont, cell.box)}
        for combo in itertools.product(*[sorted(s, key=str) for s in cell.values]):
            full = dict(base)
            ok = True
            for f, v in zip(cats, combo):
                if not isinstance(v, Fraction):
                    ok = False  # a string category cannot be a model input
                    break
                full[f.name] = (v, v)
            if ok:
                out.append(({f: full.get(f, box[f]) for f in feats}, d))
    return out


def equiv(
    model_a: str,
    model_b: str,
    *,
    prior: Union[str, Prior, None] = None,
    format: Optional[str] = None,
    features: Optional[Sequence[str]] = None,
    ranges: Sequence[str] = (),
    width: float = DEFAULT_WIDTH,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    workers: int = 1,
    scheduler: Optional[str] = None,
) -> EquivResult:
    """Certified Pr[A(x) ≠ B(x)] for x drawn from ``prior`` (default: uniform over the models'
    input box). Both models must have the same features."""
    t_start = time.monotonic()
    a = load(model_a, format=format, features=features, ranges=ranges)
    b = load(model_b, format=format, features=features, ranges=ranges)
    fa, fb = a.clf.features, b.clf.features
    if sorted(fa) != sorted(fb):
        extra = sorted(set(fb) - set(fa)) or sorted(set(fa) - set(fb))
        raise ModelError(
            f"the two models have different features ({extra[0]} is a feature of only one of them)", model_b
        )
    if a.box != b.box:
        raise ModelError("the two models' input ranges differ; give --range", model_b)
    pr = _prior(prior)
    if pr:
        _check_prior_features(pr, fa, [f for f in fa if a.box[f][0] != a.box[f][1]])
    cells = _domain(pr, fa, a.box)
    z = _mass(cells)
    if z == 0:
        raise ModelError("the prior has no mass over the models' features", pr.path if pr else model_a)
    lo = hi = Fraction(0)
    boxes = 0
    tasks: List[Tuple[Hashable, Side, Side, List[Tuple[Box, Fraction]]]] = [
        (k, a.side, b.side, group) for k, group in enumerate(_groups(cells, max(workers, 1)))
    ]
    for _, r in _agreements(workers, scheduler, tasks, width, timeout):
        lo += r.lower
        hi += r.upper
        boxes += r.boxes
    return EquivResult(
        model_a,
        model_b,
        max(1 - hi / z, Fraction(0)),  # outward rounding may step past 0 or 1
        min(1 - lo / z, Fraction(1)),
        width,
        prior=(pr.path if pr else "uniform"),
        time_s=time.monotonic() - t_start,
        boxes=boxes,
    )
