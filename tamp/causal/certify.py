"""Causal-fairness certification of a deterministic program (``ensures independent(e, s)``).

The region is split into boxes along non-sensitive inputs; each box is an
independent job decided by :class:`~tamp.causal.analyzer.Analyzer` (interval
propagation, then SMT on the self-composition). Jobs run through :mod:`tamp.executor`
(this process, a local Dask cluster or an existing one) in rounds: a round takes the
``round_jobs`` largest boxes, a job decides ``slice_boxes`` boxes of one depth-first and
hands back its settled leaves and its unexplored frontier, and the round's results are
combined in the order of the boxes. The box tree, and so the certified numbers, do not
depend on the number of workers or on the order in which they finish.
"""

from __future__ import annotations

import heapq
import math
import time
import uuid
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

from gmpy2 import mpq

from lang import ast as A
from lang.errors import UnsupportedError, error_at
from lang.printer import print_expr
from tamp.executor import Executor

from . import boxes as B
from .analyzer import BIASED, CERTIFIED, EMPTY, MEASURED, MIXED, UNKNOWN, Analyzer, Options
from .features import feature_values, model_features
from .netclaim import NotNetwork, network_claim
from .netfair import BIASED as N_BIASED
from .netfair import BOUNDED as N_BOUNDED
from .netfair import CERTIFIED as N_CERTIFIED
from .netfair import MEASURED as N_MEASURED
from .netfair import box_share, exact_box, hunt_witness, search
from .population import population_measure
from .region import conjuncts
from .result import CausalResult
from .symexec import Context
from .treefair import NotTree, TreeClaim

#: Most settled boxes kept for the report's drawing of the biased regions.
MAX_REGIONS = 4000

M_BIASED, M_FAIR = "measured_biased", "measured_fair"

_ANALYZERS: Dict[str, Analyzer] = {}  # per process: the analyzer of the claim being decided (a cache)


def _analyzer(spec) -> Analyzer:
    """The analyzer of ``spec`` = (token, program, claim, options, path, source), built once per
    worker process (it holds z3 contexts, which are never sent over the network)."""
    token, prog, ind, options, path, source = spec
    a = _ANALYZERS.get(token)
    if a is None:
        _ANALYZERS.clear()
        a = _ANALYZERS[token] = Analyzer(prog, ind, options, Context(path, source))
    return a


def _job(spec, box, budget, refine, max_boxes):
    return _analyzer(spec).explore(box, budget, refine, max_boxes)


def _refine_job(spec, box, lower, upper, steps):
    return _analyzer(spec).refine_subtree(box, lower, upper, steps)


def independence_claims(prog: A.Program, ctx: Context) -> List[A.Independent]:
    """The ``independent(…)`` claims of ``prog``'s ensures clauses (top-level conjuncts only)."""
    claims = []
    for e in prog.ensures:
        for c in conjuncts(e):
            if isinstance(c, A.Independent):
                claims.append(c)
            elif A.contains(c, A.Independent):
                raise ctx.error("independent(…) must be a whole ensures clause (or a conjunct of one)", c)
            else:
                raise ctx.error("a program with independent(…) can only have independent(…) ensures clauses here", c)
    if not claims:
        raise error_at(
            UnsupportedError, f"program '{prog.name}' has no independent(…) clause", prog.pos, ctx.path, ctx.source
        )
    return claims


class _Tally:
    """Masses of the settled leaves per status, exact (lower and upper bounds under the measure)."""

    def __init__(self, measure):
        self.measure = measure
        self.lo: Dict[str, Fraction] = {
            s: Fraction(0) for s in (CERTIFIED, BIASED, MIXED, UNKNOWN, EMPTY, M_BIASED, M_FAIR)
        }
        self.hi: Dict[str, Fraction] = dict(self.lo)
        self.count: Dict[str, int] = {s: 0 for s in self.lo}
        self.count[MEASURED] = 0
        # the settled leaves as (box, "fair" | "biased" | "partly biased" | "unknown") for the report's drawing of
        # the biased regions (at most MAX_REGIONS; never read by the verdict)
        self.regions: List[Tuple[Any, str]] = []

    def _region(self, box, kind: str) -> None:
        if len(self.regions) < MAX_REGIONS:
            self.regions.append((box, kind))

    def add_bounded(self, box, lower: Fraction, upper: Fraction, measured: bool = False, mass=None):
        """Add a leaf of the mass refinement whose biased share lies in [lower, upper]: the parts
        known biased / fair are measured, the rest is mixed (it lies in a box with a witness).
        ``measured``: the share was measured exactly and [lower, upper] is its rounding.
        ``mass``: the box's (lower, upper) mass when the caller knows it (else measured)."""
        lo, hi = self.measure(box) if mass is None else mass
        for part, k in ((M_BIASED, lower), (M_FAIR, 1 - upper), (MIXED, upper - lower)):
            self.lo[part] += lo * k
            self.hi[part] += hi * k
        self.count[MEASURED if upper == lower or measured else MIXED] += 1
        self._region(
            box,
            "fair"
            if upper == 0
            else "biased"
            if lower == 1
            else "partly biased"
            if lower == upper or measured
            else "unknown",
        )

    def add(self, box, status, share=None, mass=None):
        """Add a leaf; a ``measured`` leaf's mass is split into its exact biased and fair parts.
        ``mass``: the box's (lower, upper) mass when the caller knows it (else measured)."""
        lo, hi = self.measure(box) if mass is None else mass
        if status == MEASURED:
            kind = "fair" if share == 0 else "biased" if share == 1 else "partly biased"
        else:
            kind = "fair" if status in (CERTIFIED, EMPTY) else "biased" if status == BIASED else "unknown"
        self._region(box, kind)
        if status == MEASURED:
            self.count[MEASURED] += 1
            for part, k in ((M_BIASED, share), (M_FAIR, 1 - share)):
                self.lo[part] += lo * k
                self.hi[part] += hi * k
            return
        self.lo[status] += lo
        self.hi[status] += hi
        self.count[status] += 1


def analyse_claim(
    prog: A.Program,
    ind: A.Independent,
    options: Options,
    ctx: Context,
    measure=None,
    deadline: Optional[float] = None,
    executor: Optional[Executor] = None,
) -> dict:
    """Split the region of one claim into boxes and decide them all (or until the deadline).

    Returns a dict of exact masses per status, the witness, counts and the unexplored mass."""
    if executor is None:
        with Executor(options.jobs, options.scheduler) as ex:
            return analyse_claim(prog, ind, options, ctx, measure, deadline, ex)
    analyzer = Analyzer(prog, ind, options, ctx)  # also validates the claim in this process
    engine_note = None
    if options.trees:
        try:
            return _tree_run(analyzer, options, measure, deadline)
        except NotTree:
            pass  # not a tree or forest: the network or the general engine
    if options.network and options.linear:
        try:
            claim = network_claim(analyzer.dag, len(analyzer.outs), analyzer.pairs, analyzer.dims)
        except NotNetwork as exc:
            engine_note = f"general (not a network over categorical cells and a real box: {exc})"
        else:
            run = _network_run(analyzer, claim, options, deadline, measure)
            t = run["tally"]
            no_bias = t.hi[BIASED] + t.hi[M_BIASED] == 0 and run["witness"] is None
            if run["abandoned"]:
                engine_note = "general (the network engine found no bias in its first boxes and left some undecided)"
            elif no_bias and (t.count[MEASURED] or t.count[UNKNOWN] or t.count[MIXED]) and not run["timed_out"]:
                # biased mass 0, but "no biased point at all" needs every box certified: a measured
                # share 0 leaves sets of measure zero open — the general engine decides those
                engine_note = "general (the network engine measured no bias but did not certify every box)"
            else:
                return run
    token = uuid.uuid4().hex
    _ANALYZERS.clear()
    _ANALYZERS[token] = analyzer  # in-process jobs use this one
    spec = (token, prog, ind, options, ctx.path, ctx.source)
    shared = {"spec": None}
    dims = analyzer.dims
    measure = measure or (lambda b: (B.uniform_mass(dims, b),) * 2)
    tally = _Tally(measure)
    root = B.root_box(dims)
    state = {"witness": None, "smt_calls": 0, "boxes": 0, "seq": 0}
    width = max(1, options.round_jobs)

    def out_of_time():
        return deadline is not None and time.monotonic() >= deadline

    def budget():
        return float("inf") if deadline is None else max(0.0, deadline - time.monotonic())

    def run_round(fn, args_list) -> dict:
        """The results of one round of jobs by index (those finished by the deadline)."""
        if executor.backend != "local" and shared["spec"] is None:
            shared["spec"] = executor.share(spec)
        handle = shared["spec"] if shared["spec"] is not None else spec
        return dict(executor.map(fn, [(i, (handle, *args)) for i, args in enumerate(args_list)], deadline))

    def push(heap, b):
        heapq.heappush(heap, (-B.uniform_mass(dims, b), state["seq"], b))
        state["seq"] += 1

    def absorb(res, heap, keep_mixed):
        leaves, frontier, w, calls, n = res
        for b, status, share in leaves:
            if status == MIXED and keep_mixed is not None:
                keep_mixed.append(b)
            else:
                tally.add(b, status, share)
        for b in frontier:
            push(heap, b)
        if w is not None and state["witness"] is None:
            state["witness"] = w
        state["smt_calls"] += calls
        state["boxes"] += n

    def run_phase(heap, refine, keep_mixed):
        """Explore the boxes of ``heap`` (largest first, a round at a time) until done or out of time."""
        while heap and not out_of_time():
            batch = [heapq.heappop(heap)[2] for _ in range(min(width, len(heap)))]
            results = run_round(_job, [(b, budget(), refine, options.slice_boxes) for b in batch])
            for i, b in enumerate(batch):
                if i in results:
                    absorb(results[i], heap, keep_mixed)
                else:  # out of time: the box stays unexplored
                    push(heap, b)

    def both_phases():
        # phase 1, coverage: every box certified, or found biased (mixed boxes are kept whole)
        heap, mixed = [], []
        push(heap, root)
        run_phase(heap, False, mixed)
        unexplored = heap
        # phase 2, mass: split the mixed boxes to tighten the bounds on the biased mass
        if options.refine and not unexplored:
            refine_mass(mixed)
        else:
            for b in mixed:
                tally.add(b, MIXED)
        return unexplored

    def refine_mass(mixed):
        """Best-first over the boxes with the largest mass gap (upper - lower biased mass): halve
        them (a round at a time, each job ``refine_batch`` times best-first within its box), classify
        the halves, until the total gap is at most ``mass_gap`` or out of time."""
        heap, gap = [], Fraction(0)
        seq = [0]

        def put(b, lo, hi):
            nonlocal gap
            g = (hi - lo) * tally.measure(b)[1]
            gap += g
            heapq.heappush(heap, (-g, seq[0], b, lo, hi))
            seq[0] += 1

        def take(res):
            children, w, calls, n = res
            if w is not None and state["witness"] is None:
                state["witness"] = w
            state["smt_calls"] += calls
            state["boxes"] += n
            for b, status, lo, hi in children:
                if status is None:  # not split further: keeps its bounds
                    tally.add_bounded(b, lo, hi)
                elif status in (CERTIFIED, EMPTY, BIASED):
                    tally.add(b, status)
                elif lo == hi:
                    tally.add(b, MEASURED, lo)
                else:
                    put(b, lo, hi)

        for b in mixed:
            put(b, Fraction(0), Fraction(1))
        tol = Fraction(options.mass_gap)
        while heap and gap > tol and not out_of_time():
            batch = []
            while heap and len(batch) < width and gap > tol:
                ng, _, b, lo, hi = heapq.heappop(heap)
                gap += ng
                if B.uniform_mass(dims, b) < options.refine_min_mass or not analyzer.splittable(b):
                    tally.add_bounded(b, lo, hi)
                    continue
                batch.append((b, lo, hi))
            if not batch:
                continue
            results = run_round(_refine_job, [(b, lo, hi, options.refine_batch) for b, lo, hi in batch])
            for i, (b, lo, hi) in enumerate(batch):
                if i in results:
                    take(results[i])
                else:  # out of time with the job under way: the box keeps its bounds
                    tally.add_bounded(b, lo, hi)
        for _, _, b, lo, hi in heap:
            tally.add_bounded(b, lo, hi)

    heap = both_phases()
    witness, smt_calls, boxes = state["witness"], state["smt_calls"], state["boxes"]
    left_lo, left_hi = Fraction(0), Fraction(0)
    for _, _, b in heap:
        lo, hi = measure(b)
        left_lo += lo
        left_hi += hi
    return {
        "analyzer": analyzer,
        "tally": tally,
        "witness": witness,
        "smt_calls": smt_calls,
        "boxes": boxes,
        "left": (left_lo, left_hi),
        "left_boxes": len(heap),
        "timed_out": bool(heap),
        "engine": engine_note or "general",
    }


def _tree_run(analyzer: Analyzer, options: Options, measure, deadline: Optional[float]) -> dict:
    """Decide the claim with the tree engine (:mod:`tamp.causal.treefair`): every box biased
    or fair as a whole, the biased mass exact (uniform) — the same result dict as
    :func:`analyse_claim`, plus the biased regions. Raises NotTree when the claim is not
    axis-aligned."""
    dims = analyzer.dims
    claim = TreeClaim(analyzer.dag, len(analyzer.outs), analyzer.pairs, dims)
    res = claim.run(analyzer.witness, deadline)
    uniform = measure is None
    measure = measure or (lambda b: (B.uniform_mass(dims, b),) * 2)
    tally = _Tally(measure)
    regions = []
    # uniform masses summed in gmpy2 (exact; tens of thousands of Fraction additions cost seconds)
    sums = {CERTIFIED: [mpq(0), mpq(0)], BIASED: [mpq(0), mpq(0)]}
    for cell, sides, kind in res.leaves:
        status = BIASED if kind == "biased" else CERTIFIED
        box = (
            claim.full_box(cell, sides)
            if (not uniform or kind == "biased" or len(tally.regions) < MAX_REGIONS)
            else None
        )
        if uniform:
            m = claim.uniform_mass(sides)
            lo_hi = (m, m)
        else:
            lo_hi = measure(box)
        sums[status][0] += lo_hi[0]
        sums[status][1] += lo_hi[1]
        tally.count[status] += 1
        if box is not None:
            tally._region(box, kind)
        if kind == "biased":
            regions.append((Fraction(lo_hi[0]), box, Fraction(1)))
    for status, (lo, hi) in sums.items():
        tally.lo[status] += Fraction(lo)
        tally.hi[status] += Fraction(hi)
    left_lo, left_hi = mpq(0), mpq(0)
    for cell, sides in res.left:
        lo, hi = (claim.uniform_mass(sides),) * 2 if uniform else measure(claim.full_box(cell, sides))
        left_lo += lo
        left_hi += hi
    left_lo, left_hi = Fraction(left_lo), Fraction(left_hi)
    return {
        "analyzer": analyzer,
        "tally": tally,
        "witness": res.witness,
        "smt_calls": 0,
        "boxes": res.boxes,
        "left": (left_lo, left_hi),
        "left_boxes": len(res.left),
        "timed_out": res.timed_out,
        "engine": "trees (boxes cut at the thresholds, exact volumes)",
        "regions": regions,
    }


def _network_run(analyzer: Analyzer, claim, options: Options, deadline: Optional[float], measure=None) -> dict:
    """Decide the claim with the network engine (:mod:`tamp.causal.netfair`): the same result
    dict as :func:`analyse_claim`, plus the biased regions. ``measure``: a population's box
    masses (:mod:`tamp.causal.population`; default uniform), see :func:`_population_tally`."""
    dims = analyzer.dims
    # under a population a share of a box's volume is no share of its mass (see
    # _population_tally): the boxes are split until each is fair or biased as a whole instead
    population = measure is not None
    search_deadline = deadline
    if population and deadline is not None:  # the rest of the time weighs the leaves
        search_deadline = time.monotonic() + 0.75 * max(0.0, deadline - time.monotonic())
    res = search(
        claim,
        analyzer.witness,
        search_deadline,
        batch=options.net_batch,
        min_depth=options.net_max_depth,
        exact_unstable=-1 if population else options.net_exact_unstable,
        exact_dims=options.exact_dims,
        probe_boxes=None if population else options.net_probe_boxes,
        gap=0.0 if population else options.mass_gap,
        share_bounds=not population,
        share_unstable=options.net_share_unstable,
        final_exact=0 if population else 64,
    )
    witness = res.witness or hunt_witness(claim, res, analyzer.witness)

    def full_box(cell, ibox):
        rb = exact_box(claim, ibox)
        out = [None] * len(dims)
        for t, k in enumerate(claim.real):
            out[k] = rb[t]
        for t, k in enumerate(claim.cat):
            v = Fraction(int(claim.cells[cell][t]))
            out[k] = (v, v)
        return tuple(out)

    status_of = {N_CERTIFIED: CERTIFIED, N_BIASED: BIASED, N_MEASURED: MEASURED}
    if measure is not None:
        roots = [full_box(c, tuple((0, 0) for _ in claim.real)) for c in range(len(claim.cells))]
        tally, regions, left, unweighed = _population_tally(res, measure, full_box, status_of, roots, deadline)
        return {
            "analyzer": analyzer,
            "tally": tally,
            "witness": witness,
            "smt_calls": 0,
            "boxes": res.boxes,
            "left": left,
            "left_boxes": len(res.left) + unweighed,
            "timed_out": bool(res.left) or unweighed > 0,
            "engine": "network (categorical cells × real boxes, linear bounds, the population's box masses)",
            "regions": regions,
            "measured_exactly": 0,
            "abandoned": res.abandoned,
        }
    tally = _Tally(lambda b: (B.uniform_mass(dims, b),) * 2)
    regions = []
    ncell = len(claim.cells)
    grid = 1 << 64

    def leaf_mass(ibox):
        m = box_share(ibox) / ncell  # as uniform_mass of full_box: every category is uniform
        return (m, m)

    # the masses are summed as integers over one denominator ncell·2^(64 + deepest): every box
    # has mass 1/(ncell·2^depth) and every share lies on the 2^-64 grid (long exact shares are
    # rounded outward to it) — thousands of Fraction additions cost seconds past the deadline
    depth_of = [sum(d for _, d in leaf.ibox) for leaf in res.leaves]
    dmax = max(depth_of + [sum(d for _, d in ib) for _, ib in res.left] + [0])
    num = {k: 0 for k in tally.lo}

    def on_grid(q: Fraction) -> Tuple[int, int]:
        """(floor, ceil) of q·2^64."""
        lo_k = math.floor(q * grid)
        return lo_k, lo_k if lo_k == q * grid else lo_k + 1

    for leaf, depth in zip(res.leaves, depth_of):
        unit = 1 << (dmax - depth)  # the box's mass / (1 / (ncell·2^dmax))
        keep = len(tally.regions) < MAX_REGIONS
        measured = False
        if leaf.status == N_BOUNDED and leaf.share is not None and leaf.upper is not None:
            lk, uk = on_grid(leaf.share)[0], on_grid(leaf.upper)[1]
        elif leaf.status == N_MEASURED and leaf.share is not None:
            lk, uk = on_grid(leaf.share)
            measured = True
        else:
            status = status_of.get(leaf.status, UNKNOWN)
            num[status] += unit * grid
            tally.count[status] += 1
            if keep:
                kind = "fair" if status == CERTIFIED else "biased" if status == BIASED else "unknown"
                tally._region(full_box(leaf.cell, leaf.ibox), kind)
            if status == BIASED:
                fb = full_box(leaf.cell, leaf.ibox)
                regions.append((Fraction(1, ncell << depth), fb, Fraction(1)))
            continue
        num[M_BIASED] += unit * lk
        num[M_FAIR] += unit * (grid - uk)
        num[MIXED] += unit * (uk - lk)
        tally.count[MEASURED if (measured or lk == uk) else MIXED] += 1
        share = leaf.share
        fb = full_box(leaf.cell, leaf.ibox) if (keep or share) else None
        if keep:
            kind = (
                "fair"
                if uk == 0
                else "biased"
                if lk == grid
                else "partly biased"
                if measured or lk == uk
                else "unknown"
            )
            tally._region(fb, kind)
        if share:
            regions.append((Fraction(1, ncell << depth) * share, fb, share))
    den = ncell * grid << dmax
    for k, v in num.items():
        if v:
            tally.lo[k] += Fraction(v, den)
            tally.hi[k] += Fraction(v, den)
    left_lo = sum((leaf_mass(ib)[0] for _, ib in res.left), Fraction(0))
    return {
        "analyzer": analyzer,
        "tally": tally,
        "witness": witness,
        "smt_calls": 0,
        "boxes": res.boxes,
        "left": (left_lo, left_lo),
        "left_boxes": len(res.left),
        "timed_out": bool(res.left),
        "engine": "network (categorical cells × real boxes, linear bounds, exact volumes)",
        "regions": regions,
        "measured_exactly": res.exact,
        "abandoned": res.abandoned,
    }


def _population_tally(res, measure, full_box, status_of, roots, deadline: Optional[float]):
    """The network engine's leaves weighed by a population's box masses: (tally, biased
    regions, (lower, upper) mass of the boxes left undecided, the number of leaves not weighed).

    Leaves not weighed by the deadline count as undecided, their mass the rest of the
    region's: the masses of ``roots`` (the whole region, one box per cell) minus the weighed
    leaves' (the leaves partition the region), lower end minus upper and upper minus lower.

    Why it is sound: a box the engine certified fair or found biased is so at every point, so
    its whole population mass (a certified interval) is fair or biased. A box whose biased share
    the engine measured or bounded is a share of its *volume* (the uniform distribution), which
    says nothing of the population's mass inside the box: such a box is mixed, its biased mass
    anywhere in [0, its mass] (as the general engine does under a population)."""
    tally = _Tally(measure)
    regions = []
    weighed = [Fraction(0), Fraction(0)]
    unweighed = 0
    # the largest boxes first: the leaves left unweighed at the deadline are then the smallest
    leaves = sorted(res.leaves, key=lambda leaf: sum(d for _, d in leaf.ibox))
    for k, leaf in enumerate(leaves):
        if deadline is not None and time.monotonic() > deadline:
            unweighed = len(leaves) - k
            break
        box = full_box(leaf.cell, leaf.ibox)
        status = status_of.get(leaf.status, UNKNOWN)
        mass = measure(box)
        weighed[0], weighed[1] = weighed[0] + mass[0], weighed[1] + mass[1]
        if status == MEASURED or leaf.share is not None:
            tally.add_bounded(box, Fraction(0), Fraction(1), mass=mass)
            continue
        tally.add(box, status, mass=mass)
        if status == BIASED:
            regions.append((Fraction(mass[0]), box, Fraction(1)))
    if unweighed or res.left:  # the undecided rest: the region's mass minus the weighed leaves'
        whole = [measure(b) for b in roots]
        left_lo = max(Fraction(0), sum((m[0] for m in whole), Fraction(0)) - weighed[1])
        left_hi = max(Fraction(0), sum((m[1] for m in whole), Fraction(0)) - weighed[0])
        return tally, regions, (left_lo, left_hi), unweighed
    return tally, regions, (Fraction(0), Fraction(0)), 0


def _summary(run: dict, dist: str) -> dict:
    """Fractions of the region (relative to its mass) and bounds on the biased mass."""
    t = run["tally"]
    left_lo, left_hi = run["left"]
    total_lo = sum(t.lo.values()) + left_lo
    total_hi = sum(t.hi.values()) + left_hi
    if total_hi == 0:
        total_lo = total_hi = Fraction(1)

    def frac(lo_mass, hi_mass):
        return (lo_mass / total_hi if total_hi else Fraction(0), min(Fraction(1), hi_mass / total_lo))

    cert = frac(t.lo[CERTIFIED] + t.lo[EMPTY] + t.lo[M_FAIR], t.hi[CERTIFIED] + t.hi[EMPTY] + t.hi[M_FAIR])
    biased_found = frac(t.lo[BIASED] + t.lo[MIXED] + t.lo[M_BIASED], t.hi[BIASED] + t.hi[MIXED] + t.hi[M_BIASED])
    unknown = frac(t.lo[UNKNOWN] + left_lo, t.hi[UNKNOWN] + left_hi)
    lower = frac(t.lo[BIASED] + t.lo[M_BIASED], t.hi[BIASED] + t.hi[M_BIASED])[0]
    upper = frac(
        t.lo[BIASED] + t.lo[M_BIASED] + t.lo[MIXED] + t.lo[UNKNOWN] + left_lo,
        t.hi[BIASED] + t.hi[M_BIASED] + t.hi[MIXED] + t.hi[UNKNOWN] + left_hi,
    )[1]
    mid = lambda p: float((p[0] + p[1]) / 2)  # noqa: E731
    return {
        "certified": mid(cert),
        "biased": mid(biased_found),
        "unknown": mid(unknown),
        "coverage": mid(cert) + mid(biased_found),
        "biased_mass": {
            "lower": float(lower),
            "upper": float(upper),
            "lower_exact": str(lower),
            "upper_exact": str(upper),
        },
        "distribution": dist,
        "leaves": {s: n for s, n in t.count.items() if n},
        "mixed_share": float(frac(t.lo[MIXED], t.hi[MIXED])[1]),
        "boxes": run["boxes"],
        "smt_calls": run["smt_calls"],
        "unexplored_boxes": run["left_boxes"],
    }


def _stopped(run: dict, bm: dict, mass_gap: float, deadline: Optional[float], population: bool) -> str:
    """Why the biased-mass interval is as wide as it is: "exact" (lower = upper), "decided" (every
    box decided; only the population's certified masses are intervals), "width" (its
    width is at most ``mass_gap``), "timeout" (the time limit stopped the search or the
    refinement first) or "limit" (boxes too small to split further, or a solver's unknown)."""
    lower, upper = Fraction(bm["lower_exact"]), Fraction(bm["upper_exact"])
    if lower == upper and not run["timed_out"]:
        return "exact"
    t = run["tally"]
    if population and not run["timed_out"] and t.count[MIXED] == t.count[UNKNOWN] == 0:
        return "decided"  # every box biased or fair: the width is the population's mass intervals
    if upper - lower <= Fraction(mass_gap) and not run["timed_out"]:
        return "width"
    if run["timed_out"] or (deadline is not None and time.monotonic() >= deadline):
        return "timeout"
    return "limit"


def certify_program(
    program: A.Program,
    options=None,
    path: str = "<string>",
    source: Optional[str] = None,
    executor: Optional[Executor] = None,
) -> CausalResult:
    """Decide every ``independent(e, s)`` clause of ``program``.

    Verdict "proved" when no biased input pair exists anywhere in the region, "violated" when a
    (checked) witness pair was found, "unknown" otherwise. ``options``: an :class:`Options`
    or a dict of its fields (``timeout``, ``jobs``, ``max_unstable``, ``min_mass``, ``population`` …).
    ``executor``: where the box jobs run (default: one made from ``jobs`` and ``scheduler``).
    """
    if executor is None:
        opts = Options.from_any(options)
        with Executor(opts.jobs, opts.scheduler) as ex:
            return certify_program(program, opts, path, source, ex)
    opts = Options.from_any(options)
    ctx = Context(path, source)
    t0 = time.monotonic()
    deadline = t0 + opts.timeout if opts.timeout else None
    claims = independence_claims(program, ctx)
    parts, runs = [], []
    for ind in claims:
        measure, dist = None, "the uniform distribution over the requires box"
        if opts.population:
            measure, dist = population_measure(opts.population, program, ind, ctx)
        run = analyse_claim(program, ind, opts, ctx, measure, deadline, executor)
        runs.append(run)
        t = run["tally"]
        summary = _summary(run, dist)
        summary["engine"] = run.get("engine", "general")
        summary["stopped"] = _stopped(run, summary["biased_mass"], opts.mass_gap, deadline, measure is not None)
        if "regions" in run:
            summary["regions"] = _regions(program, run["regions"], run["analyzer"].dims, ctx)
        if run["witness"] is not None:
            run["witness"] = _with_features(program, run["witness"], run["analyzer"].region.sensitive, ctx)
        settled_all = not run["timed_out"] and t.count[UNKNOWN] == 0
        if run["witness"] is not None:
            verdict = "violated"
        elif settled_all and t.count[BIASED] == t.count[MIXED] == t.count[MEASURED] == 0:
            verdict = "proved"
        else:
            verdict = "unknown"
        summary.update(
            claim=f"independent({_expr_text(ind.expr)}, {ind.var})",
            sensitive_values=list(run["analyzer"].region.values),
            witness=run["witness"],
            verdict=verdict,
        )
        parts.append(summary)
    verdict = (
        "violated"
        if any(p["verdict"] == "violated" for p in parts)
        else "proved"
        if all(p["verdict"] == "proved" for p in parts)
        else "unknown"
    )
    details = dict(parts[0]) if len(parts) == 1 else {"claims": parts}
    details.pop("verdict", None)
    regions = [(B.float_box(r["analyzer"].dims, b), kind) for r in runs[:1] for b, kind in r["tally"].regions]
    msg = {
        "proved": "output is independent of the sensitive input on the whole region",
        "violated": "bias found: two inputs differing only in the sensitive input give different outputs",
        "unknown": "not every box was decided (see unknown fraction)",
    }[verdict]
    if verdict == "unknown" and any(p["unexplored_boxes"] for p in parts):
        msg = "time limit reached before every box was decided"
    res = CausalResult(program.name, "causal", verdict, time.monotonic() - t0, message=msg, details=details)
    res.regions = regions
    return res


MAX_REGIONS = 200


def _regions(prog: A.Program, regions, dims, ctx: Context) -> dict:
    """The biased boxes in the model's feature names, largest biased mass first (at most
    ``MAX_REGIONS``): each with its categorical features' values, its real features' ranges and
    the share of it that is biased (exact)."""
    regions = sorted(regions, key=lambda r: -r[0])
    out = []
    for mass, box, share in regions[:MAX_REGIONS]:
        point = {d.name: lo for d, (lo, hi) in zip(dims, box) if lo == hi}
        feats = feature_values(prog, point, ctx)
        feats.update({d.name: [lo, hi] for d, (lo, hi) in zip(dims, box) if lo != hi})
        order = model_features(prog)
        ordered = {f: feats[f] for f in order if f in feats}
        ordered.update({k: v for k, v in feats.items() if k not in ordered})
        out.append({"features": ordered, "biased_share": share, "biased_mass": mass})
    total = sum((r[0] for r in regions), Fraction(0))
    return {"count": len(regions), "listed": len(out), "biased_mass": total, "boxes": out}


def _with_features(prog: A.Program, w: dict, sensitive: str, ctx: Context) -> dict:
    """The witness with each member of its pair also in the model's feature names
    (``model_inputs``) and its ``class``."""
    pair = []
    for member in w["pair"]:
        point = dict(w["inputs"], **{sensitive: member[sensitive]})
        pair.append({**member, "class": member["out"], "model_inputs": feature_values(prog, point, ctx)})
    return {**w, "pair": pair}


def _expr_text(e: A.Expr) -> str:
    try:
        return print_expr(e)
    except Exception:  # noqa: BLE001 - a name for the message, whatever the expression
        return e.name if isinstance(e, A.Var) else "…"
