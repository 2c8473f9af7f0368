"""Concentration inequalities for sums of independent draws, as proof rules.

A *noise sum* is ``S = Σ_d (X_d - E[X_d])`` over independent draws ``X_d`` of one family, given
as *blocks* ``(count, param)``: ``count`` draws with the same parameter (a loop contributes one
block of ``count = iterations``; a straight-line draw one block of count 1). Each rule states,
for a *deviation* ``dev`` — ``S`` (``upper``), ``-S`` (``lower``) or ``|S|`` (``both``)::

    Pr[dev >= u] <= f      whenever every condition of :func:`conditions` (u, f) holds.

Every derivation below is Markov's inequality on exp(λ·dev), which bounds Pr[dev >= u] (not only
Pr[dev > u]); so a proof may assume the strict ``dev < u`` off the failure event: a majority
``c > k/2`` follows, where ``dev <= u`` would give only ``c >= k/2``. (At u = 0 every bound is
at least 1, or 2 for two tails, and the ``positive`` condition keeps μ > 0 for Chernoff.)

Every rule also holds trivially when ``f >= c`` (a probability is at most 1): the conditions
that need the draws to spread (``positive``, ``tail``) are stated ``… || f >= c``, so a count
whose probability may be 0 (μ = 0, e.g. ``p >= 0``) still gets its bound where it is at least 1.

The conditions are formulas (:mod:`lang.ast`) over the parameters, ``u`` and ``f``; the prover
and the certificate checker prove them from ``requires`` with z3, never assume them. The tail
condition is stated in two equivalent ways, either one suffices: ``G(u) >= log(c/f)`` (used when
``f`` is given and ``u = threshold(f)``) or ``f >= c·exp(-G(u))`` (used when ``f`` is inferred
from a margin ``u``); ``c = 2`` for ``both`` (two tails, union bound), else 1.

Rules (``W``, ``V``, ``D``, ``μ`` sums over blocks of ``count·(…)``)
---------------------------------------------------------------------

``laplace-bernstein`` — ``lap(m, b)`` and ``dlap(m, b)``; ``W = Σ count·b²``, ``G(u) = u²/(8W)``,
range ``u·b <= 2·sqrt(2)·W`` for every block's b (stated squared: ``u²·b² <= 8·W²``).

    *Derivation.* For X ~ Lap(0, b), E[exp(λX)] = 1/(1 - λ²b²) for |λ| < 1/b, and with
    x = λ²b² ∈ [0, 1/2]: -log(1 - x) <= 2x (convex, equal at 0, log 2 < 1 at 1/2), so
    E[exp(λX)] <= exp(2λ²b²) for |λ| <= 1/(sqrt(2)·b) (sub-exponential, ν² = 4b², α = sqrt(2)·b).
    For a sum of independent draws, E[exp(λS)] <= exp(2λ²W) for |λ| <= 1/(sqrt(2)·b_max);
    Chernoff: Pr[S >= u] <= exp(-λu + 2λ²W), minimised at λ = u/(4W), admissible iff
    u·b_max <= 2·sqrt(2)·W, giving exp(-u²/(8W)). For n i.i.d. Lap(0, b): W = n·b², range
    u <= 2·sqrt(2)·n·b, i.e. with u = sqrt(8·n·b²·log(c/f)) exactly ``log(c/f) <= n``.
    *Discrete Laplace.* dlap(m, b) - m = G1 - G2 with G1, G2 i.i.d. geometric, q = exp(-1/b):
    E[exp(λY)] = (1-q)²/(1 - 2q·cosh λ + q²) for |λ| < 1/b. This is <= 1/(1 - λ²b²) iff
    2q(cosh λ - 1) <= (1-q)²·b²·λ²; (cosh λ - 1)/λ² increases in |λ| and equality holds at
    |λ| = 1/b (2q(cosh(1/b) - 1) = (1-q)²), so it holds on the whole range: the discrete
    Laplace MGF is at most the continuous one, and the same rule applies.

``exponential-bernstein`` — ``exp(k, s)`` (mean k + s) and ``dexp(k, s)`` (mean
k + 1/(exp(1/s) - 1)); ``W = Σ count·s²``, ``G(u) = u²/(4W)``, range ``u·s <= W`` for every s.

    *Derivation.* For X = E - s, E exponential of mean s, log E[exp(λX)] = -λs - log(1 - λs)
    = Σ_{j>=2} (λs)^j/j, which is at most (λs)² for |λs| <= 1/2 (for λs <= 0 an alternating
    series below its first term (λs)²/2; for 0 <= λs <= 1/2 at most (λs)²/(2(1 - λs))). So
    E[exp(λS)] <= exp(λ²W) for |λ| <= 1/(2·s_max); Chernoff at λ = u/(2W), admissible iff
    u·s_max <= W, gives exp(-u²/(4W)).
    *Geometric.* For G - k ~ geometric with q = exp(-1/s) and the exponential E of mean s, the
    cumulant functions κ satisfy κ_G'' <= κ_E'' wherever both are finite (λ < 1/s): with
    y = 1/s - λ > 0, κ_G''(λ) = 1/(4·sinh²(y/2)) and κ_E''(λ) = 1/y², and 2·sinh(y/2) >= y.
    Both centred cumulants vanish with their first derivatives at 0, so the centred geometric's
    MGF is at most the centred exponential's and the same rule applies. (The same argument,
    with 2q(cosh λ - 1) below, gives the discrete Laplace case.)

``gauss-chernoff`` — ``gauss(m, v)`` (v the variance); S ~ N(0, V) exactly, ``V = Σ count·v``;
``G(u) = u²/(2V)`` (Chernoff's bound for a Gaussian: Pr[S >= u] <= exp(-u²/(2V)), u >= 0).

``hoeffding`` — bounded draws, X_d ∈ [a_d, a_d + w_d] (``unif(lo, hi)``: w = hi - lo;
``bern(r)`` counted as 0/1: w = 1); ``D = Σ count·w²``, ``G(u) = 2u²/D`` (Hoeffding 1963).
With ``D <= 0`` (every width 0, since each is ``>= 0``: every draw is constant and the centred
sum is 0) the tail at a margin ``u > 0`` is 0, so the side conditions that need the draws to
spread may hold by ``D <= 0 ∧ u > 0`` instead (a row of zero weights in a sum of signs).

``chernoff`` — Bernoulli counts (``if (f) { k := k + 1; }``, f ~ bern(r)); ``μ = Σ count·r``.
``upper``: Pr[k - μ >= u] <= exp(-u²/(2μ + u)) (multiplicative Chernoff
Pr[k >= (1+δ)μ] <= exp(-δ²μ/(2+δ)) with u = δμ; also true, as 0, for μ = 0);
``lower``: Pr[μ - k >= u] <= exp(-u²/(2μ)) (Pr[k <= (1-δ)μ] <= exp(-δ²μ/2), 0 < δ <= 1; for
u > μ the event k < 0 is empty), μ > 0; ``both``: the sum of the two, at most
2·exp(-u²/(2μ + u)).

:func:`exact_tail` gives each rule's left-hand side independently (exact distributions or
Monte Carlo) for the numeric tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from lang import ast as A

from . import build as B

RULES = ("laplace-bernstein", "exponential-bernstein", "gauss-chernoff", "hoeffding", "chernoff")
MODES = ("both", "upper", "lower")

#: which rules apply to which family of draws (see tamp.prover.concentration.shapes)
RULES_FOR = {
    "laplace": ("laplace-bernstein",),
    "exponential": ("exponential-bernstein",),
    "gauss": ("gauss-chernoff",),
    "bounded": ("hoeffding",),
    "bernoulli": ("chernoff", "hoeffding"),
}


@dataclass(frozen=True)
class Block:
    """``count`` independent draws with the same parameter (scale b, variance v, width w or
    probability r, by family)."""

    count: A.Expr
    param: A.Expr


def _total(blocks, f) -> A.Expr:
    out = None
    for b in blocks:
        term = B.mul(b.count, f(b.param)) if not (isinstance(b.count, A.Num) and b.count.value == 1) else f(b.param)
        out = term if out is None else B.add(out, term)
    return out if out is not None else B.n(0)


def _sq(x):
    if isinstance(x, A.Num) and x.value == 1:
        return x
    return B.mul(x, x)


def _c(mode: str) -> A.Expr:
    return B.n(2) if mode == "both" else B.n(1)


def width(rule: str, blocks) -> A.Expr:
    """The rule's aggregate parameter: W, V, D or μ."""
    if rule in ("laplace-bernstein", "exponential-bernstein"):
        return _total(blocks, _sq)
    if rule == "gauss-chernoff":
        return _total(blocks, lambda v: v)
    if rule == "hoeffding":
        return _total(blocks, _sq)
    if rule == "chernoff":
        return _total(blocks, lambda r: r)
    raise ValueError(f"unknown concentration rule {rule!r}")


def exponent(rule: str, mode: str, blocks, u: A.Expr) -> A.Expr:
    """G(u): the tail is ``c·exp(-G(u))``."""
    K = width(rule, blocks)
    if rule == "laplace-bernstein":
        return B.div(_sq(u), B.mul(8, K))
    if rule == "exponential-bernstein":
        return B.div(_sq(u), B.mul(4, K))
    if rule == "gauss-chernoff":
        return B.div(_sq(u), B.mul(2, K))
    if rule == "hoeffding":
        return B.div(B.mul(2, _sq(u)), K)
    if mode == "lower":
        return B.div(_sq(u), B.mul(2, K))
    return B.div(_sq(u), B.add(B.mul(2, K), u))


def tail(rule: str, mode: str, blocks, u: A.Expr) -> A.Expr:
    """``c·exp(-G(u))``: the failure probability the rule gives for the margin u."""
    g = exponent(rule, mode, blocks, u)
    t = B.exp(B.neg(g))
    return B.mul(2, t) if mode == "both" else t


def threshold(rule: str, mode: str, blocks, f: A.Expr) -> A.Expr:
    """The smallest margin u with ``G(u) >= log(c/f)`` (closed form)."""
    K = width(rule, blocks)
    L = B.log(B.div(_c(mode), f))
    if rule == "laplace-bernstein":
        return B.sqrt(B.mul(B.mul(8, K), L))
    if rule == "exponential-bernstein":
        return B.sqrt(B.mul(B.mul(4, K), L))
    if rule == "gauss-chernoff":
        return B.sqrt(B.mul(B.mul(2, K), L))
    if rule == "hoeffding":
        return B.sqrt(B.div(B.mul(K, L), 2))
    if mode == "lower":
        return B.sqrt(B.mul(B.mul(2, K), L))
    # u² = (2μ + u)·L  ⇔  u = (L + sqrt(L² + 8μL)) / 2
    return B.div(B.add(L, B.sqrt(B.add(_sq(L), B.mul(B.mul(8, K), L)))), 2)


def conditions(rule: str, mode: str, blocks, u: A.Expr, f: A.Expr) -> list[tuple[str, A.Expr]]:
    """(name, formula) pairs: the rule's side conditions at margin u and probability f."""
    if rule not in RULES or mode not in MODES:
        raise ValueError(f"unknown concentration rule {rule!r}/{mode!r}")
    K = width(rule, blocks)
    G = exponent(rule, mode, blocks, u)
    c = _c(mode)
    out: list[tuple[str, A.Expr]] = []
    for b in blocks:
        out.append(("count", B.ge(b.count, 0)))
        if rule in ("laplace-bernstein", "exponential-bernstein"):
            out.append(("scale", B.gt(b.param, 0)))
        elif rule == "gauss-chernoff":
            out.append(("variance", B.ge(b.param, 0)))
        elif rule == "hoeffding":
            out.append(("width", B.ge(b.param, 0)))
        else:
            out.append(("probability", B.and_(B.le(0, b.param), B.le(b.param, 1))))
    # f >= c: the rule's claim Pr[dev >= u] <= f holds whatever the draws (a probability is at
    # most 1 <= c); so the conditions that need the draws to spread (K > 0, the tail) may hold
    # by it instead — a count of probability-0 draws (μ = 0) with the trivial bound 1
    trivial = B.ge(f, c)
    if rule == "hoeffding":
        # no width at all (K <= 0 with every width >= 0: every draw is constant, the centred sum
        # is 0): Pr[dev >= u] = 0 for a margin u > 0, so any f > 0 bounds it (a row of zeros)
        trivial = B.or_(trivial, B.and_(B.le(K, 0), B.gt(u, 0)))
    out.append(("positive", B.or_(B.gt(K, 0), trivial)))
    out.append(("margin", B.ge(u, 0)))
    out.append(("probability", B.gt(f, 0)))
    if rule == "laplace-bernstein":
        for b in blocks:
            out.append(("range", B.le(B.mul(_sq(u), _sq(b.param)), B.mul(8, _sq(K)))))
    if rule == "exponential-bernstein":
        for b in blocks:
            out.append(("range", B.le(B.mul(_sq(u), _sq(b.param)), _sq(K))))
    out.append(("tail", B.or_(B.or_(B.ge(G, B.log(B.div(c, f))), B.ge(f, tail(rule, mode, blocks, u))), trivial)))
    return out


#: the family of a linear combination of independent sums of these families (Bernoulli counts
#: become bounded draws: Hoeffding reads only their range)
COMBINED_FAMILY = {
    "gauss": "gauss",
    "laplace": "laplace",
    "exponential": "exponential",
    "bounded": "bounded",
    "bernoulli": "bounded",
}


def combined_blocks(parts) -> tuple[str, tuple[Block, ...]] | None:
    """The family and blocks of ``T = Σ_k a_k·S_k`` for independent noise sums ``S_k`` (no draw
    in two of them), given as ``parts`` = [(family, blocks, a_k)] with rational literals
    ``a_k``; None when no rule covers the combination (two families, or a family not listed in
    :data:`COMBINED_FAMILY`). A coefficient 0 drops its sum.

    *Why sound.* ``T = Σ_d (a_d·X_d - E[a_d·X_d])`` is again a centred sum of independent
    draws, one per draw of the ``S_k``, and each rule of this module holds for it with the
    scaled blocks:

    * ``gauss`` — ``a·X`` with ``X ~ N(m, v)`` is ``N(a·m, a²·v)``: block ``(count, a²·v)``;
      T is Gaussian with variance ``Σ a_k²·V_k`` (Gaussian-Chernoff is exact for it).
    * ``laplace`` — the laplace-bernstein derivation uses only ``E[exp(λ(X - m))] <=
      1/(1 - λ²b²)`` for ``|λ| < 1/b``; for ``a·X`` this holds with ``λ·a`` in place of λ, i.e.
      scale ``|a|·b`` (``a·Lap(m, b)`` is ``Lap(a·m, |a|·b)``; the discrete case by the same
      MGF bound). The tail is the sub-exponential one, never a Gaussian tail.
    * ``exponential`` — exponential-bernstein bounds ``log E[exp(λX)] <= (λs)²`` for
      ``|λs| <= 1/2`` of both signs (both tails); with ``λ·a`` for λ that is scale ``|a|·s``.
    * ``bounded`` / ``bernoulli`` — ``a·X`` with ``X`` in an interval of width ``w`` lies in
      one of width ``|a|·w`` (a 0/1 indicator: ``|a|``); Hoeffding needs only the ranges.
    """
    fams = {COMBINED_FAMILY.get(f) for f, _bs, a in parts if a != 0}
    if len(fams) != 1 or None in fams:
        return None
    fam = fams.pop()
    if fam is None:
        return None
    out: list[Block] = []
    for f, bs, a in parts:
        if a == 0:
            continue
        for b in bs:
            if fam == "gauss":
                k = a * a
                out.append(Block(b.count, b.param if k == 1 else B.mul(B.n(k), b.param)))
            else:
                w = B.n(1) if f == "bernoulli" else b.param
                out.append(Block(b.count, w if abs(a) == 1 else B.mul(B.n(abs(a)), w)))
    return fam, tuple(out)


def statement(rule: str, mode: str) -> str:
    """The rule as text (for reports and certificates)."""
    dev = {"both": "|S|", "upper": "S", "lower": "-S"}[mode]
    c = "2·" if mode == "both" else ""
    g = {
        "laplace-bernstein": "u²/(8·Σ count·b²)  [u·b <= 2·sqrt(2)·Σ count·b²]",
        "exponential-bernstein": "u²/(4·Σ count·s²)  [u·s <= Σ count·s²]",
        "gauss-chernoff": "u²/(2·Σ count·v)",
        "hoeffding": "2·u²/Σ count·w²",
        "chernoff": "u²/(2μ)" if mode == "lower" else "u²/(2μ + u)",
    }[rule]
    return f"Pr[{dev} >= u] <= {c}exp(-{g})"


# ---------------------------------------------------------------------------- numeric checks


def exact_tail(
    rule: str, mode: str, family: str, n: int, param: float, u: float, runs: int = 200_000, seed: int = 1
) -> float:
    """Pr[dev >= u] for n i.i.d. draws of ``family`` with parameter ``param`` — exactly where a
    closed form exists (Gaussian, binomial), else by Monte Carlo (``runs`` samples)."""
    # deferred on purpose: numpy and scipy take ~0.6 s to load; only this step needs them
    import numpy as np
    from scipy import stats

    if family == "gauss":
        sd = (n * param) ** 0.5
        one = float(stats.norm.sf(u, scale=sd))
        return 2 * one if mode == "both" else one
    if family == "bernoulli":
        mu = n * param
        up = float(stats.binom.sf(np.ceil(mu + u) - 1, n, param))  # k >= mu + u
        lo = float(stats.binom.cdf(np.floor(mu - u), n, param))  # k <= mu - u
        return {"upper": up, "lower": lo, "both": up + lo}[mode]
    rng = np.random.default_rng(seed)
    if family == "laplace":
        s = rng.laplace(0.0, param, size=(runs, n)).sum(axis=1)
    elif family == "exponential":
        s = (rng.exponential(param, size=(runs, n)) - param).sum(axis=1)
    elif family == "geometric":
        q = np.exp(-1.0 / param)
        s = (rng.geometric(1 - q, size=(runs, n)) - 1 - q / (1 - q)).sum(axis=1)
    elif family == "dlaplace":
        q = np.exp(-1.0 / param)
        s = (rng.geometric(1 - q, size=(runs, n)) - rng.geometric(1 - q, size=(runs, n))).sum(axis=1)
    elif family == "bounded":  # integer uniform on [0, param]
        w = int(param)
        s = (rng.integers(0, w + 1, size=(runs, n)) - w / 2).sum(axis=1)
    else:
        raise ValueError(family)
    dev = {"upper": s, "lower": -s, "both": np.abs(s)}[mode]
    return float((dev >= u).mean())
