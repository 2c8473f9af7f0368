"""Sampling the distributions of LANGUAGE.md, vectorised over runs, exact in distribution.

Each sampler receives the evaluated parameters (0-d constants or per-run arrays), the
number of runs ``n`` and the generator, and returns an ``(n,)`` array (a pair of arrays
for ``unif`` over a product of sets).
"""

from __future__ import annotations

from math import comb
from typing import List

import numpy as np

from lang import ast as A

from .evaluate import Ctx, Evaluator, as_int_array
from .values import full

MAX_REJECTION_ROUNDS = 2000


class Sampler:
    """Draws ``x ~ D`` for every run of a context (one method per distribution)."""

    def __init__(self, ev: Evaluator):
        self.ev = ev
        self.rng = ev.rng

    def sample(self, call: A.Call, ctx: Ctx):
        m = getattr(self, "_" + call.func, None)
        if m is None:
            known = "bern, unif, lap, exp, dlap, dexp, gauss, uniform, step, density"
            raise self.ev.error(f"unknown distribution '{call.func}' (known: {known})", call)
        return m(call, ctx)

    # ---------------------------------------------------------------- helpers
    def _args(self, call, ctx, k: int):
        if len(call.args) != k:
            raise self.ev.error(f"'{call.func}' takes {k} argument{'s' if k > 1 else ''}", call)
        out = []
        for a in call.args:
            v = self.ev.eval(a, ctx)
            if isinstance(v, tuple) or np.asarray(v).dtype == bool:
                raise self.ev.error(f"argument of '{call.func}' must be a number", a)
            out.append(full(v, ctx.n).astype(np.float64) if np.asarray(v).dtype != np.int64 else full(v, ctx.n))
        return out

    def _check(self, bad, msg: str, node, ctx):
        if np.any(bad):
            raise self.ev.error(f"{msg} ({self.ev.runs(bad, ctx.n)})", node)

    def _int_arg(self, call, ctx, v, i):
        a = as_int_array(v, ctx.n)
        if a is None:
            raise self.ev.error(f"argument {i + 1} of '{call.func}' must be an integer", call.args[i])
        return a

    # ---------------------------------------------------------------- discrete
    def _bern(self, call, ctx):
        (p,) = self._args(call, ctx, 1)
        self._check((p < 0) | (p > 1) | np.isnan(p), "bern's probability must be in [0, 1]", call.args[0], ctx)
        return self.rng.random(ctx.n) < p

    def _unif(self, call, ctx):
        if len(call.args) == 1:
            return self._unif_set(call, ctx)
        lo, hi = self._args(call, ctx, 2)
        lo, hi = self._int_arg(call, ctx, lo, 0), self._int_arg(call, ctx, hi, 1)
        self._check(lo > hi, "unif(lo, hi) needs lo <= hi", call, ctx)
        return self.rng.integers(lo, hi, size=ctx.n, endpoint=True)

    def _set_elements(self, e: A.Expr, ctx: Ctx) -> List[object]:
        """The elements of a set expression: a literal ``{…}`` or a product ``S1 * S2`` (pairs)."""
        if isinstance(e, A.SetLit):
            elems = [self.ev.eval(x, ctx) for x in e.items]
            if all(not isinstance(v, tuple) and np.ndim(v) == 0 for v in elems):
                seen, uniq = set(), []
                for v in elems:  # a set: duplicates count once
                    key = np.asarray(v).item()
                    if key not in seen:
                        seen.add(key)
                        uniq.append(v)
                elems = uniq
            return elems
        if isinstance(e, A.Binary) and e.op == "*":
            left, right = self._set_elements(e.left, ctx), self._set_elements(e.right, ctx)
            flat = isinstance(e.left, A.Binary)  # (S1 * S2) * S3 gives triples
            return [(*a, b) if flat else (a, b) for a in left for b in right]
        raise self.ev.error("unif needs a set {c1, …, ck}, a product of sets, or two bounds", e)

    def _unif_set(self, call, ctx):
        elems = self._set_elements(call.args[0], ctx)
        if not elems:
            raise self.ev.error("unif of an empty set", call)
        pick = self.rng.integers(0, len(elems), size=ctx.n)
        return self._choose(elems, pick, ctx.n)

    def _choose(self, elems, pick, n):
        if isinstance(elems[0], tuple):
            return tuple(self._choose([e[i] for e in elems], pick, n) for i in range(len(elems[0])))
        stacked = np.stack([full(v, n) for v in elems])
        return stacked[pick, np.arange(n)]

    def _geometric(self, s, n):
        """Per run: G >= 0 with Pr(G = g) proportional to exp(-g/s)."""
        p = -np.expm1(-1.0 / s)  # 1 - exp(-1/s), accurately
        return self.rng.geometric(p, size=n) - 1

    def _dlap(self, call, ctx):
        m, s = self._args(call, ctx, 2)
        m = self._int_arg(call, ctx, m, 0)
        self._check(~(s > 0), "dlap's scale must be positive", call.args[1], ctx)
        # the difference of two i.i.d. geometrics is two-sided geometric: Pr(d) ∝ exp(-|d|/s)
        return m + self._geometric(s, ctx.n) - self._geometric(s, ctx.n)

    def _dexp(self, call, ctx):
        k, s = self._args(call, ctx, 2)
        k = self._int_arg(call, ctx, k, 0)
        self._check(~(s > 0), "dexp's scale must be positive", call.args[1], ctx)
        return k + self._geometric(s, ctx.n)

    # ---------------------------------------------------------------- continuous
    def _lap(self, call, ctx):
        m, s = self._args(call, ctx, 2)
        self._check(~(s > 0), "lap's scale must be positive", call.args[1], ctx)
        return m + s * self.rng.laplace(0.0, 1.0, size=ctx.n)

    def _exp(self, call, ctx):
        k, s = self._args(call, ctx, 2)
        self._check(~(s > 0), "exp's scale must be positive", call.args[1], ctx)
        return k + s * self.rng.exponential(1.0, size=ctx.n)

    def _gauss(self, call, ctx):
        m, v = self._args(call, ctx, 2)
        self._check(~(v >= 0), "gauss's variance must be non-negative", call.args[1], ctx)
        return m + np.sqrt(v) * self.rng.standard_normal(ctx.n)

    def _uniform(self, call, ctx):
        a, b = self._args(call, ctx, 2)
        self._check(~(a <= b), "uniform(a, b) needs a <= b", call, ctx)
        return a + (b - a) * self.rng.random(ctx.n)

    def _step(self, call, ctx):
        if len(call.args) != 1 or not isinstance(call.args[0], A.ListLit) or not call.args[0].items:
            raise self.ev.error("step needs a list of bins [(a1, b1, w1), …]", call)
        bins = []
        for item in call.args[0].items:
            if not isinstance(item, A.TupleExpr) or len(item.items) != 3:
                raise self.ev.error("a bin of step is a triple (a, b, w)", item)
            a, b, w = (full(self.ev.eval(x, ctx), ctx.n).astype(float) for x in item.items)
            self._check(~(a <= b), "a bin (a, b, w) of step needs a <= b", item, ctx)
            self._check(~(w >= 0), "a bin's weight must be non-negative", item.items[2], ctx)
            bins.append((a, b, w))
        weights = np.stack([w for _, _, w in bins])
        cum = np.cumsum(weights, axis=0)
        total = cum[-1]
        self._check(~(total > 0), "step's weights sum to zero", call, ctx)
        u = self.rng.random(ctx.n) * total
        which = np.minimum((u[None, :] >= cum).sum(axis=0), len(bins) - 1)
        cols = np.arange(ctx.n)
        lo = np.stack([a for a, _, _ in bins])[which, cols]
        hi = np.stack([b for _, b, _ in bins])[which, cols]
        return lo + (hi - lo) * self.rng.random(ctx.n)

    def _density(self, call, ctx):
        if len(call.args) != 3:
            raise self.ev.error("density takes (lo, hi, POLY)", call)
        lo, hi = (full(self.ev.eval(x, ctx), ctx.n).astype(float) for x in call.args[:2])
        self._check(~(lo < hi), "density(lo, hi, POLY) needs lo < hi", call, ctx)
        coeffs = self._poly(call.args[2], ctx)
        width = hi - lo
        # coefficients in t ∈ [0, 1] where _ = lo + width * t
        tco = [np.zeros(ctx.n) for _ in coeffs]
        for k, c in enumerate(coeffs):
            for m in range(k + 1):
                tco[m] = tco[m] + c * comb(k, m) * lo ** (k - m) * width ** m
        bound = sum(np.abs(c) for c in tco)  # >= max over [0, 1] of the polynomial
        self._check(~(bound > 0), "density's polynomial is zero", call.args[2], ctx)
        t = np.zeros(ctx.n)
        pending = np.arange(ctx.n)
        for _ in range(MAX_REJECTION_ROUNDS):
            if len(pending) == 0:
                return lo + width * t
            cand = self.rng.random(len(pending))
            val = sum(c[pending] * cand ** m for m, c in enumerate(tco))
            self._check(val < -1e-9 * bound[pending], "density's polynomial is negative on [lo, hi]",
                        call.args[2], Ctx(None, np.arange(len(pending))))
            ok = self.rng.random(len(pending)) * bound[pending] < val
            t[pending[ok]] = cand[ok]
            pending = pending[~ok]
        raise self.ev.error("density: rejection sampling did not finish (is the polynomial "
                            "almost zero on [lo, hi]?)", call)

    def _poly(self, e: A.Expr, ctx) -> List[np.ndarray]:
        """Per-run coefficients (lowest degree first) of a polynomial in the bound name ``_``."""
        if not A.contains(e, A.Var) or "_" not in A.free_vars(e):
            return [full(self.ev.eval(e, ctx), ctx.n).astype(float)]
        if isinstance(e, A.Var):
            return [np.zeros(ctx.n), np.ones(ctx.n)]
        if isinstance(e, A.Unary) and e.op == "-":
            return [-c for c in self._poly(e.operand, ctx)]
        if isinstance(e, A.Binary) and e.op in ("+", "-"):
            a, b = self._poly(e.left, ctx), self._poly(e.right, ctx)
            size = max(len(a), len(b))
            a += [np.zeros(ctx.n)] * (size - len(a))
            b += [np.zeros(ctx.n)] * (size - len(b))
            return [x + y if e.op == "+" else x - y for x, y in zip(a, b)]
        if isinstance(e, A.Binary) and e.op == "*":
            a, b = self._poly(e.left, ctx), self._poly(e.right, ctx)
            out = [np.zeros(ctx.n) for _ in range(len(a) + len(b) - 1)]
            for i, x in enumerate(a):
                for j, y in enumerate(b):
                    out[i + j] = out[i + j] + x * y
            return out
        if isinstance(e, A.Binary) and e.op == "/" and "_" not in A.free_vars(e.right):
            d = full(self.ev.eval(e.right, ctx), ctx.n).astype(float)
            self._check(d == 0, "division by zero", e, ctx)
            return [c / d for c in self._poly(e.left, ctx)]
        raise self.ev.error("density's third argument must be a polynomial in '_'", e)
