"""The checker's own re-derivation of the closed-form sum bounds (:mod:`axioms.sum_bounds`).

``tamp check-proof`` does not take a closed-form sum bound on trust. For every instance the
lemma library proposes for a sum application ``t = sumK(lo, hi, …)`` of an obligation — a
name, the lemma, and its parameters (a coefficient ``c``, an index shift ``k``, …) — the
checker

1. STATEMENT  states the theorem itself, from its own text below, for ``t`` and those
              parameters (side condition included), and requires that this statement implies
              the proposed lemma (z3 ``unsat`` of the negation): a lemma with a changed end
              (``log(b/(a-2))``), a changed number or a dropped side condition (``a >= 2``) is
              not implied and is rejected;
2. SHAPE      checks that the sum's own body, encoded from the sum's source expression at a
              fresh index ``j`` with ``lo <= j < hi`` (and ``L >= 1`` for a shift count), equals
              the summand the theorem is about (``c/(j + k)``, ``c/((j+k)(j+k+1))``, ``p + q·j``,
              ``c·exp(g·j)``, ``[tests on (s + σ·j) mod L] ? 1 : 0``) — z3 ``unsat`` of the negation.

Only instances passing both are used (a rejected one is left out: fewer facts, so an
obligation that needed it fails). The theorems (each true under its side condition):
Σ_{x=a}^{b} c/x <= c·log(b/(a-1)) for a >= 2, c >= 0, <= c/a + c·log(b/a) and >= c·log((b+1)/a)
for a >= 1 (1/x between the integrals of 1/y over [x, x+1] and [x-1, x]; x runs over s ± j); Σ c/(x(x+1)) = c(1/a - 1/(b+1))
(telescoping); Σ_{j=lo}^{hi-1} (p + q·j) = p·n + q·n(lo + hi - 1)/2 (Gauss); (1 - e^g)·Σ c·e^{g·j}
= c(e^{g·lo} - e^{g·hi}) (geometric); over L consecutive j, (s ± j) mod L takes every value of
0..L-1 once, so the count of j whose residue lies in [max los, min his] is that interval's
length within 0..L-1; a polynomial c_0 + … + c_d·x^d with some c_k != 0 and exact degree e
(the largest k with c_k != 0, 0 for a constant) has at most e roots, so at most e of the j in
lo..hi-1 are roots (root-count) and at least (hi - lo) - e are not.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import z3

from axioms.lemmas import closed_form_instances

CHECK_MS = 2000


def _valid(f: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.set("timeout", CHECK_MS)
    s.add(z3.Not(f))
    return s.check() == z3.unsat


def _r(x: Any) -> z3.ArithRef:
    x = z3.IntVal(x) if isinstance(x, int) else x
    return z3.ToReal(x) if z3.is_int(x) else x


def own_statement(name: str, t: z3.ExprRef, ps: dict, log, exp) -> z3.BoolRef | None:
    """The theorem ``name`` for ``t`` and the parameters, stated here (None: unknown name)."""
    lo, hi = t.arg(0), t.arg(1)
    if name in ("harmonic-upper", "harmonic-upper1", "harmonic-lower", "telescoping"):
        sigma = ps["sigma"]
        if sigma not in (1, -1) or (name == "telescoping" and sigma != 1):
            return None
        first, last = ps["s"] + sigma * lo, ps["s"] + sigma * (hi - 1)
        c, a, b = _r(ps["c"]), _r(first if sigma == 1 else last), _r(last if sigma == 1 else first)
        if name == "harmonic-upper":
            return z3.Implies(z3.And(lo < hi, c >= 0, a >= 2), t <= c * log(b / (a - 1)))
        if name == "harmonic-upper1":
            return z3.Implies(z3.And(lo < hi, c >= 0, a >= 1), t <= c / a + c * log(b / a))
        if name == "harmonic-lower":
            return z3.Implies(z3.And(lo < hi, c >= 0, a >= 1), t >= c * log((b + 1) / a))
        return z3.Implies(z3.And(lo < hi, a >= 1), t == c / a - c / (b + 1))
    if name == "arithmetic":
        n = _r(hi - lo)
        return z3.Implies(lo < hi, t == _r(ps["p"]) * n + _r(ps["q"]) * n * _r(lo + hi - 1) / 2)
    if name == "geometric":
        c, g = _r(ps["c"]), _r(ps["g"])
        return z3.Implies(lo < hi, t - t * exp(g) == c * exp(g * _r(lo)) - c * exp(g * _r(hi)))
    if name == "root-count":
        coefs = [_r(c) for c in ps["coefs"]]
        if len(coefs) < 2:
            return None
        e: z3.ArithRef = z3.RealVal(0)  # the exact degree: the last nonzero coefficient's power
        for k, c in enumerate(coefs):
            if k > 0:
                e = z3.If(c == 0, e, z3.RealVal(k))
        nonzero = z3.Or(*[c != 0 for c in coefs])
        fact = t <= e if ps["roots"] else t >= _r(hi - lo) - e
        return z3.Implies(z3.And(lo <= hi, nonzero), fact)
    if name == "shift-count":
        L = ps["L"]
        # the residues v in 0..L-1 inside every [lo_i, hi_i]: the integers of [low, high]
        low, high = z3.IntVal(0), L - 1
        for x in reversed(ps["los"]):
            low = z3.If(low >= x, low, x)
        for x in reversed(ps["his"]):
            high = z3.If(high <= x, high, x)
        count = z3.If(low <= high, high - low + 1, 0)
        return z3.Implies(z3.And(L >= 1, hi - lo == L), t == _r(count))
    return None


def _summand(name: str, ps: dict, j: z3.ArithRef):
    if name in ("harmonic-upper", "harmonic-upper1", "harmonic-lower"):
        return _r(ps["c"]) / _r(ps["s"] + ps["sigma"] * j)
    if name == "telescoping":
        x = _r(ps["s"] + j)
        return _r(ps["c"]) / (x * (x + 1))
    if name == "arithmetic":
        return _r(ps["p"]) + _r(ps["q"]) * _r(j)
    return None


def verify(t: z3.ExprRef, name: str, lemma: z3.BoolRef, ps: dict, enc) -> bool:
    """STATEMENT and SHAPE (module docstring) for one proposed instance."""
    own = own_statement(name, t, ps, enc.log, enc.exp)
    if own is None or not _valid(z3.Implies(own, lemma)):
        return False
    expr, names = enc.sum_info(t.decl())
    j = z3.Int("sumcheck$j")
    env = dict(zip(names, [t.arg(k) for k in range(2, t.num_args())]))
    env[expr.var] = j
    try:
        body = enc.expr(expr.body, env)
    except Exception:  # noqa: BLE001 - a body the encoder cannot express: nothing to check against
        return False
    in_range = z3.And(t.arg(0) <= j, j < t.arg(1))
    if name == "geometric":
        want = _r(ps["c"]) * enc.exp(_r(ps["g"]) * _r(j))
        return _valid(z3.Implies(in_range, _r(body) == want))
    if name == "shift-count":
        L, sigma = ps["L"], ps["sigma"]
        if sigma not in (1, -1):
            return False
        m = (ps["s"] + sigma * j) % L
        inside = z3.And(*[m >= x for x in ps["los"]], *[m <= x for x in ps["his"]])
        return _valid(z3.Implies(z3.And(in_range, L >= 1), _r(body) == z3.If(inside, z3.RealVal(1), z3.RealVal(0))))
    if name == "root-count":
        x = _r(j)
        poly = sum((_r(c) * x**k for k, c in enumerate(ps["coefs"])), z3.RealVal(0))
        hit = poly == 0 if ps["roots"] else poly != 0
        return _valid(z3.Implies(in_range, _r(body) == z3.If(hit, z3.RealVal(1), z3.RealVal(0))))
    want = _summand(name, ps, j)
    return want is not None and _valid(z3.Implies(in_range, _r(body) == want))


def checked_closed_forms(sums, enc) -> List[Tuple[str, z3.BoolRef]]:
    """The library's closed-form instances for ``sums`` that pass :func:`verify` (for
    :func:`axioms.lemmas.lemma_instances`' ``closed`` hook)."""
    memo = enc.__dict__.setdefault("_sum_bound_checked", {})  # one check per instance and encoder
    out: List[Tuple[str, z3.BoolRef]] = []
    for t, name, lem, ps in closed_form_instances(sums, enc):
        key = (t.get_id(), name, lem.get_id())
        if key not in memo:
            memo[key] = (t, lem, verify(t, name, lem, ps, enc))  # the terms keep their ids theirs
        if memo[key][2]:
            out.append((name, lem))
    return out
