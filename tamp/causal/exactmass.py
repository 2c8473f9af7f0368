"""The exact biased share of a box: partition along the unstable ReLU hyperplanes, then volumes.

Within a box where the symbolic bounds fixed the phase of every ReLU the decision functions
depend on, both copies' decision functions g_a, g_b are exact affine functions of the inputs,
and the biased points are the union, over the truth combinations (p_a, p_b) for which the
outputs differ, of the box cut by the half-spaces {g_a >= 0 or <= 0} ∩ {g_b >= 0 or <= 0}
(boundaries have measure zero). With a few unstable ReLUs left, each activation pattern is a
polytope (the box cut by the pre-activation half-spaces, computed exactly under the pattern so
far); the pieces are disjoint up to measure zero, so their volumes add up
(:func:`tamp.causal.volume.cut_volume`). Everything is exact rational arithmetic; the answer is
None whenever a precondition fails (opaque atoms, unfixed integer inputs, invalid points, too many
unstable ReLUs, a volume not computed in time).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from .linear import Form, LinearModel
from .threshold import bias_cases
from .tight import BoxFacts, SymbolicBounds
from .volume import Affine, box_volume, cut_volume

#: a constraint ``h < 0`` (strict) or ``h <= 0`` of :func:`.volume.cut_volume`
Cut = Tuple[Dict[str, Fraction], Fraction, bool]


class _Branch(Exception):
    def __init__(self, relu: int):
        self.relu = relu


class _Fail(Exception):
    pass


class _Substitution:
    """Exact affine forms over the real inputs under fixed ReLU phases (``pattern`` adds some)."""

    def __init__(self, model: LinearModel, facts: BoxFacts, fixed: Dict[str, Fraction], pattern: Dict[int, bool]):
        self.model, self.facts, self.fixed, self.pattern = model, facts, fixed, pattern
        self.relu_index = {r.var: i for i, r in enumerate(model.relus)}
        self.memo: Dict[int, Affine] = {}

    def phase(self, r_i: int) -> bool:
        if r_i in self.pattern:
            return self.pattern[r_i]
        rx = self.facts.rx
        if rx.pre_lo[r_i] >= 0:
            return True
        if rx.pre_hi[r_i] <= 0:
            return False
        raise _Branch(r_i)

    def var(self, v: int) -> Affine:
        if v in self.memo:
            return self.memo[v]
        m = self.model
        if v in m.inputs:
            name = m.inputs[v]
            out = Affine({}, self.fixed[name]) if name in self.fixed else Affine({name: Fraction(1)}, Fraction(0))
        elif v in m.opaque:
            raise _Fail()
        else:
            r_i = self.relu_index[v]
            out = self.form(m.relus[r_i].pre) if self.phase(r_i) else Affine({}, Fraction(0))
        self.memo[v] = out
        return out

    def form(self, f: Form) -> Affine:
        co: Dict[str, Fraction] = {}
        const = f[1]
        for v, c in f[0].items():
            g = self.var(v)
            const += c * g[1]
            for name, x in g[0].items():
                co[name] = co.get(name, Fraction(0)) + c * x
        return Affine({k: x for k, x in co.items() if x}, const)


def _neg(f: Affine) -> Affine:
    return Affine({k: -x for k, x in f[0].items()}, -f[1])


def _holds(g: Affine, truth: bool, strict: bool) -> Cut:
    """The constraint ``h (<|<=) 0`` equivalent to the predicate [g > 0] (``strict``) or [g >= 0]
    having truth value ``truth``."""
    if truth:
        return _neg(g)[0], -g[1], strict  # g > 0  ⇔  -g < 0
    return g[0], g[1], not strict  # not g > 0  ⇔  g <= 0


def exact_biased_share(
    sb: SymbolicBounds,
    facts: BoxFacts,
    dims,
    box,
    pair: Tuple[int, int],
    valid_nodes: Tuple[int, int],
    max_unstable: int = 3,
    max_dims: int = 8,
    deadline: Optional[float] = None,
) -> Optional[Fraction]:
    """The exact share (in [0, 1]) of the uniform volume of ``box`` whose points are biased for the
    pair of copies ``pair``, or None. ``valid_nodes``: the copies' validity roots (must be True on
    the box)."""
    i, j = pair
    if pair not in sb.pairs:
        return None
    if facts.bounds is None or any(facts.bounds.values[v] is not True for v in valid_nodes):
        return None
    rbox: Dict[str, Tuple[Fraction, Fraction]] = {}
    fixed: Dict[str, Fraction] = {}
    for d, (lo, hi) in zip(dims, box):
        if lo is None or hi is None:
            return None
        if d.sort == "real" and hi > lo:
            rbox[d.name] = (lo, hi)
        elif lo == hi and d.sort != "bool":
            fixed[d.name] = Fraction(lo)
        elif d.sort == "bool" and lo == hi:
            continue
        else:
            return None
    ta, tb = sb.threshold(i), sb.threshold(j)
    cases = bias_cases(ta, tb)

    def volume(pattern: Dict[int, bool], constraints: List[Cut]) -> Fraction:
        while True:
            sub = _Substitution(sb.model, facts, fixed, pattern)
            try:
                ga, gb = sub.form(ta.g), sub.form(tb.g)
                break
            except _Branch as e:
                r_i = e.relu
                # branch on the earliest undecided dependency of this ReLU's pre-activation
                while True:
                    try:
                        pre = _Substitution(sb.model, facts, fixed, pattern).form(sb.model.relus[r_i].pre)
                        break
                    except _Branch as e2:
                        r_i = e2.relu
                if len(pattern) >= max_unstable:
                    raise _Fail() from None
                acc = Fraction(0)
                for on in (True, False):
                    acc += volume(
                        {**pattern, r_i: on},  # active: pre > 0; inactive: pre <= 0
                        constraints + [(*_neg(pre), True) if on else (*pre, False)],
                    )
                return acc
        out = Fraction(0)
        for pa, pb in cases:
            fs = constraints + [_holds(ga, pa, ta.strict), _holds(gb, pb, tb.strict)]
            v = cut_volume(fs, rbox, max_dims=max_dims, deadline=deadline)
            if v is None:
                raise _Fail()
            out += v
        return out

    try:
        total = volume({}, [])
    except _Fail:
        return None
    full = box_volume(rbox)
    if full == 0:
        return None
    return total / full
