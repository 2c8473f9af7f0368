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
from lang.walk import free_vars

from .draws import below, exponential, laplace, normal
from .evaluate import Ctx, Evaluator
from .values import full

MAX_REJECTION_ROUNDS = 2000
#: Above this scale ``dexp``/``dlap`` draw their geometric in two exact parts (see _geometric).
LARGE_SCALE = 2.0**20


class Sampler:
    """Draws ``x ~ D`` for every run of a context (one method per distribution).

    Each draw combines keyed standard variates (:mod:`.draws`, floats: random numbers) with the
    distribution's parameters in the evaluator's number domain, so ``lap(m, s)`` is exactly
    ``m + s·L`` for the drawn L. Parameters that only steer the sampling (``step``'s weights,
    ``density``'s polynomial) are used as floats."""

    def __init__(self, ev: Evaluator):
        self.ev = ev
        self.dom = ev.dom

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
            out.append(full(v, ctx.n))
        return out

    def _u(self, ctx) -> np.ndarray:
        return ctx.uniforms(self.ev.key)

    def _variate(self, ctx, kind):
        return self.dom.from_floats(kind(self._u(ctx)))

    def _require(self, ok_op, x, y, msg, node, ctx):
        """Error where ``x ok_op y`` surely fails on a run that is not unsure; unsure runs marked."""
        ok, unsure = self.dom.compare(ok_op, self.dom.to_real(x), self.dom.to_real(y))
        self.ev.check(~ok & ~unsure, ctx, node, lambda k: f"{msg} ({k})")
        ctx.mark_unsure(unsure)
        return ok & ~unsure

    def _int_arg(self, call, ctx, v, i):
        return self.ev.as_int(v, ctx, call.args[i], f"argument {i + 1} of '{call.func}'")

    def _add(self, x, y, ctx, call):
        return self.ev.num_op("+", x, y, ctx, call)

    def _mul(self, x, y, ctx, call):
        return self.ev.num_op("*", x, y, ctx, call)

    def _below(self, ctx, k) -> np.ndarray:
        """Per run an exactly uniform integer of ``0 .. k-1`` (uint64; ``k`` a uint64 count per
        run or one for all, 0 standing for 2^64): 64-bit words by rejection (:func:`.draws.below`),
        a rejected run drawing again. Each try is accepted with probability > 1/2, so
        MAX_REJECTION_ROUNDS rounds fail with probability < 2^-2000 per run."""
        k = np.asarray(k, dtype=np.uint64)
        if k.ndim and len(k) and k.min() == k.max():  # one count for every run: one 2^64 mod k
            k = k[0]
        one = k.ndim == 0
        out = np.zeros(ctx.n, dtype=np.uint64)
        pending = np.arange(ctx.n)
        for _ in range(MAX_REJECTION_ROUNDS):
            if len(pending) == 0:
                return out
            sub = ctx if len(pending) == ctx.n else ctx.restrict(np.isin(np.arange(ctx.n), pending))
            value, ok = below(sub.words(self.ev.key), k if one else k[pending])
            out[pending[ok]] = value[ok]
            pending = pending[~ok]
        raise RuntimeError("uniform integer draw: rejection sampling did not finish")  # pragma: no cover

    # ---------------------------------------------------------------- discrete
    def _bern(self, call, ctx):
        (p,) = self._args(call, ctx, 1)
        zero, one = self.dom.lit(0), self.dom.lit(1)
        self._require(">=", p, zero, "bern's probability must be in [0, 1]", call.args[0], ctx)
        self._require("<=", p, one, "bern's probability must be in [0, 1]", call.args[0], ctx)
        return self.ev.compare("<", self.dom.from_floats(self._u(ctx)), p, ctx)

    def _unif(self, call, ctx):
        if len(call.args) == 1:
            return self._unif_set(call, ctx)
        lo, hi = self._args(call, ctx, 2)
        lo, hi = self._int_arg(call, ctx, lo, 0), self._int_arg(call, ctx, hi, 1)
        bad = lo > hi
        self.ev.check(bad, ctx, call, lambda k: f"unif(lo, hi) needs lo <= hi ({k})")
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        with np.errstate(over="ignore"):  # modulo 2^64: hi - lo + 1 and lo + i are exact there
            k = np.where(bad, np.uint64(1), hi.astype(np.uint64) - lo.astype(np.uint64) + np.uint64(1))
            return (lo.astype(np.uint64) + self._below(ctx, k)).astype(np.int64)

    def _set_elements(self, e: A.Expr, ctx: Ctx) -> List[object]:
        """The elements of a set expression: a literal ``{…}`` or a product ``S1 * S2`` (pairs)."""
        if isinstance(e, A.SetLit):
            elems = [self.ev.eval(x, ctx) for x in e.items]
            if all(not isinstance(v, tuple) and np.ndim(v) == 0 for v in elems):
                uniq: List[object] = []
                for v in elems:  # a set: equal elements count once (decided exactly)
                    if not any(bool(self.ev.compare("==", v, w, ctx)) for w in uniq):
                        uniq.append(v)
                elems = uniq
            return elems
        if isinstance(e, A.Binary) and e.op == "*":
            left, right = self._set_elements(e.left, ctx), self._set_elements(e.right, ctx)
            flat = isinstance(e.left, A.Binary)  # (S1 * S2) * S3 gives triples
            return [(*a, b) if flat and isinstance(a, tuple) else (a, b) for a in left for b in right]
        raise self.ev.error("unif needs a set {c1, …, ck}, a product of sets, or two bounds", e)

    def _unif_set(self, call, ctx):
        elems = self._set_elements(call.args[0], ctx)
        if not elems:
            raise self.ev.error("unif of an empty set", call)
        pick = self._below(ctx, len(elems)).astype(np.int64)
        return self._choose(elems, pick, ctx.n)

    def _choose(self, elems, pick, n):
        if isinstance(elems[0], tuple):
            return tuple(self._choose([e[i] for e in elems], pick, n) for i in range(len(elems[0])))
        if any(self.dom.is_real(v) for v in elems) and not any(np.asarray(v).dtype == bool for v in elems):
            elems = [self.dom.to_real(v) for v in elems]
        stacked = np.stack([full(v, n) for v in elems])
        return stacked[pick, np.arange(n)]

    def _geometric(self, s, ctx, call):
        """Per run: G >= 0 with Pr(G >= g) = exp(-g/s).

        Up to LARGE_SCALE, ``floor(s * E)`` for a standard exponential E, in the number domain.
        Beyond it a float E (53 bits) would leave most integers undrawable (``floor(2^60 * E)``
        is nearly always even), so G is split as ``m*H + J`` with m = 2^k, s/m in [2^10, 2^11):
        for a geometric G the quotient H and remainder J are independent, H is geometric with
        scale s/m (small: ``floor(s/m * E)`` is fine-grained) and J is on 0..m-1 with
        Pr(j) ∝ exp(-j/s), drawn exactly uniform (:meth:`_below`) and accepted with probability
        exp(-j/s) >= exp(-2^-10). There s only steers the sampling (as a float: a relative error
        of 2^-53 in the scale moves every probability by about as much)."""
        a = np.asarray(s)
        sf = (
            a.real
            if a.dtype == np.complex128
            else a.astype(np.float64)
            if a.dtype.kind in "iu"
            else self._float(s, ctx)
        )
        large = sf > LARGE_SCALE
        if not large.any():
            return self._geometric_domain(s, ctx, call)
        out = np.zeros(ctx.n, dtype=np.int64)
        if (~large).any():
            out[~large] = self._geometric_domain(np.asarray(s)[~large], ctx.restrict(~large), call)
        out[large] = self._geometric_large(sf[large], ctx.restrict(large))
        return out

    def _geometric_domain(self, s, ctx, call):
        g, unsure = self.dom.floor(self._mul(s, self._variate(ctx, exponential), ctx, call))
        ctx.mark_unsure(unsure)
        return g

    def _geometric_large(self, sf: np.ndarray, ctx) -> np.ndarray:
        _, e = np.frexp(sf)  # 2^(e-1) <= sf < 2^e
        k = np.minimum(e - 11, 52)
        m = np.ldexp(1.0, k)
        h = np.floor(sf / m * exponential(ctx.uniforms(self.ev.key)))
        j = np.zeros(ctx.n, dtype=np.uint64)
        pending = np.arange(ctx.n)
        for _ in range(MAX_REJECTION_ROUNDS):
            if len(pending) == 0:
                break
            sub = ctx.restrict(np.isin(np.arange(ctx.n), pending))
            cand = self._below(sub, m[pending].astype(np.uint64))
            ok = sub.uniforms(self.ev.key) < np.exp(-cand.astype(np.float64) / sf[pending])
            j[pending[ok]] = cand[ok]
            pending = pending[~ok]
        big = h * m + m >= 2.0**62  # past the simulator's ints: undecided, as dom.floor does
        ctx.mark_unsure(big)
        hm = np.where(big, 0, h * m).astype(np.int64)
        return np.where(big, 0, hm + j.astype(np.int64))

    def _dlap(self, call, ctx):
        m, s = self._args(call, ctx, 2)
        m = self._int_arg(call, ctx, m, 0)
        self._require(">", s, self.dom.lit(0), "dlap's scale must be positive", call.args[1], ctx)
        # the difference of two i.i.d. geometrics is two-sided geometric: Pr(d) ∝ exp(-|d|/s)
        g1 = self._geometric(s, ctx, call)
        g2 = self._geometric(s, ctx, call)
        return self.ev.num_op("-", self._add(m, g1, ctx, call), g2, ctx, call)

    def _dexp(self, call, ctx):
        k, s = self._args(call, ctx, 2)
        k = self._int_arg(call, ctx, k, 0)
        self._require(">", s, self.dom.lit(0), "dexp's scale must be positive", call.args[1], ctx)
        return self._add(k, self._geometric(s, ctx, call), ctx, call)

    # ---------------------------------------------------------------- continuous
    def _lap(self, call, ctx):
        m, s = self._args(call, ctx, 2)
        self._require(">", s, self.dom.lit(0), "lap's scale must be positive", call.args[1], ctx)
        return self._add(m, self._mul(s, self._variate(ctx, laplace), ctx, call), ctx, call)

    def _exp(self, call, ctx):
        k, s = self._args(call, ctx, 2)
        self._require(">", s, self.dom.lit(0), "exp's scale must be positive", call.args[1], ctx)
        return self._add(k, self._mul(s, self._variate(ctx, exponential), ctx, call), ctx, call)

    def _gauss(self, call, ctx):
        m, v = self._args(call, ctx, 2)
        ok = self._require(">=", v, self.dom.lit(0), "gauss's variance must be non-negative", call.args[1], ctx)
        sd = self.dom.call("sqrt", np.where(ok, self.dom.to_real(v), self.dom.lit(0)))
        return self._add(m, self._mul(sd, self._variate(ctx, normal), ctx, call), ctx, call)

    def _uniform(self, call, ctx):
        a, b = self._args(call, ctx, 2)
        self._require("<=", a, b, "uniform(a, b) needs a <= b", call, ctx)
        width = self.ev.num_op("-", b, a, ctx, call)
        return self._add(a, self._mul(width, self._variate(ctx, lambda u: u), ctx, call), ctx, call)

    def _step(self, call, ctx):
        if len(call.args) != 1 or not isinstance(call.args[0], A.ListLit) or not call.args[0].items:
            raise self.ev.error("step needs a list of bins [(a1, b1, w1), …]", call)
        bins = []
        for item in call.args[0].items:
            if not isinstance(item, A.TupleExpr) or len(item.items) != 3:
                raise self.ev.error("a bin of step is a triple (a, b, w)", item)
            a, b, w = (self.dom.to_real(full(self.ev.eval(x, ctx), ctx.n)) for x in item.items)
            self._require("<=", a, b, "a bin (a, b, w) of step needs a <= b", item, ctx)
            self._require(">=", w, self.dom.lit(0), "a bin's weight must be non-negative", item.items[2], ctx)
            bins.append((a, b, np.maximum(self.dom.mid(w), 0.0)))
        weights = np.stack([w for _, _, w in bins])
        cum = np.cumsum(weights, axis=0)
        total = cum[-1]
        self.ev.check(~(total > 0), ctx, call, lambda k: f"step's weights sum to zero ({k})")
        u = self._u(ctx) * total
        which = np.minimum((u[None, :] >= cum).sum(axis=0), len(bins) - 1)
        cols = np.arange(ctx.n)
        lo = np.stack([a for a, _, _ in bins])[which, cols]
        hi = np.stack([b for _, b, _ in bins])[which, cols]
        width = self.ev.num_op("-", hi, lo, ctx, call)
        return self._add(lo, self._mul(width, self._variate(ctx, lambda v: v), ctx, call), ctx, call)

    def _density(self, call, ctx):
        if len(call.args) != 3:
            raise self.ev.error("density takes (lo, hi, POLY)", call)
        lo_v, hi_v = (self.dom.to_real(full(self.ev.eval(x, ctx), ctx.n)) for x in call.args[:2])
        self._require("<", lo_v, hi_v, "density(lo, hi, POLY) needs lo < hi", call, ctx)
        lo, hi = self.dom.mid(lo_v), self.dom.mid(hi_v)
        coeffs = self._poly(call.args[2], ctx)
        width = hi - lo
        # coefficients in t ∈ [0, 1] where _ = lo + width * t (floats: they only steer the sampling)
        tco = [np.zeros(ctx.n) for _ in coeffs]
        for k, c in enumerate(coeffs):
            for m in range(k + 1):
                tco[m] = tco[m] + c * comb(k, m) * lo ** (k - m) * width**m
        bound = sum(np.abs(c) for c in tco)  # >= max over [0, 1] of the polynomial
        self.ev.check(~(bound > 0), ctx, call.args[2], lambda k: f"density's polynomial is zero ({k})")
        t = np.zeros(ctx.n)
        pending = np.arange(ctx.n)
        for _ in range(MAX_REJECTION_ROUNDS):
            if len(pending) == 0:
                width_v = self.ev.num_op("-", hi_v, lo_v, ctx, call)
                return self._add(lo_v, self._mul(width_v, self.dom.from_floats(t), ctx, call), ctx, call)
            sub = ctx.restrict(np.isin(np.arange(ctx.n), pending))
            cand = sub.uniforms(self.ev.key)
            val = sum(c[pending] * cand**m for m, c in enumerate(tco))
            if np.any(val < -1e-9 * bound[pending]):
                raise self.ev.error("density's polynomial is negative on [lo, hi]", call.args[2])
            ok = sub.uniforms(self.ev.key) * bound[pending] < val
            t[pending[ok]] = cand[ok]
            pending = pending[~ok]
        raise self.ev.error(
            "density: rejection sampling did not finish (is the polynomial almost zero on [lo, hi]?)", call
        )

    def _poly(self, e: A.Expr, ctx) -> List[np.ndarray]:
        """Per-run coefficients (lowest degree first) of a polynomial in the bound name ``_``."""
        if not A.contains(e, A.Var) or "_" not in set(free_vars(e)):
            return [self._float(self.ev.eval(e, ctx), ctx)]
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
        if isinstance(e, A.Binary) and e.op == "/" and "_" not in set(free_vars(e.right)):
            d = self._float(self.ev.eval(e.right, ctx), ctx)
            self.ev.check(d == 0, ctx, e, lambda k: f"division by zero ({k})")
            d = np.where(d == 0, 1.0, d)
            return [c / d for c in self._poly(e.left, ctx)]
        raise self.ev.error("density's third argument must be a polynomial in '_'", e)

    def _float(self, v, ctx) -> np.ndarray:
        """A number as floats (for parameters that only steer the sampling)."""
        return np.asarray(self.dom.mid(self.dom.to_real(full(v, ctx.n))), dtype=np.float64)
