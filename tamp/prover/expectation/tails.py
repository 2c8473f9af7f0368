"""Laplace draws in the expected-failure rules: a continuous sample weighted by the one test
that reads it.

``x ~ lap(m, s)`` (density ``exp(-|x - m|/s) / (2s)``, s > 0) where the expectation F reads x
only inside one atom φ (:func:`tamp.prover.expectation.prove.the_atom`) has the exact
pre-expectation ``q·F[φ := true] + (1 - q)·F[φ := false]`` with ``q = Pr[φ(x)]``, when φ is
one of

* ``x > e`` / ``x >= e`` (also ``e < x``…), d = e - m:  ``d >= 0 ? exp(-d/s)/2 : 1 - exp(d/s)/2``;
* ``x < e`` / ``x <= e``: one minus that;
* ``abs(x - m) > t`` / ``>=``:  ``t >= 0 ? exp(-t/s) : 1``; ``abs(x - m) < t`` / ``<=``: one minus that,

(e, t not reading x). F may read x in several such tests of one event — ``abs(x - m) <= t`` in
the postcondition, ``abs(x - m) > t`` in a test of the program — : :func:`one_event` writes
each as φ or ``!φ`` first. This lets a stage draw continuous noise — a noisy reading re-taken
when it is off (:mod:`tamp.prover.stages.products`).

Why this is sound: these are the Laplace distribution's exact probabilities (its tails are
``exp(-d/s)/2`` on each side); x is continuous, so ``x > e`` and ``x >= e`` differ only on a
set of probability 0 (written as one event, F's expectation over x does not change); the weighted sum is then exactly F's expectation over x. An out-of-range scale
(s <= 0) gives 1 (0 for the lower pre-expectation). Any other test, or x read twice, is
outside the rule (the caller refuses the program). The checker has its own copy of the rule
(:mod:`tamp.certificate.exp_rules`).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars

ONE = A.num(1)
ZERO = A.num(0)
HALF = A.Binary("/", ONE, A.num(2))

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _exp(e: A.Expr) -> A.Expr:
    return A.Call("exp", (e,))


def _above(d: A.Expr, s: A.Expr) -> A.Expr:
    """Pr[x > m + d] for x ~ lap(m, s), s > 0."""
    right = A.Binary("*", HALF, _exp(A.Unary("-", A.Binary("/", d, s))))
    left = A.Binary("-", ONE, A.Binary("*", HALF, _exp(A.Binary("/", d, s))))
    return A.Cond(A.Binary(">=", d, ZERO), right, left)


def lap_chance(phi: A.Expr, x: str, m: A.Expr, s: A.Expr) -> Optional[A.Expr]:
    """Pr[φ(x)] for x ~ lap(m, s) (s > 0), or None for a test outside the rule."""
    if not isinstance(phi, A.Binary) or phi.op not in _FLIP:
        return None
    xv = A.Var(x)
    op, lhs, rhs = phi.op, phi.left, phi.right
    if x in set(free_vars(lhs)) and x in set(free_vars(rhs)):
        return None
    if x in set(free_vars(rhs)):  # written with x on the right: turn it around
        op, lhs, rhs = _FLIP[op], rhs, lhs
    if x in set(free_vars(m)) or x in set(free_vars(s)) or x in set(free_vars(rhs)):
        return None
    if lhs == xv:
        up = _above(A.Binary("-", rhs, m), s)
        return up if op in (">", ">=") else A.Binary("-", ONE, up)
    if isinstance(lhs, A.Call) and lhs.func == "abs" and len(lhs.args) == 1 and lhs.args[0] == A.Binary("-", xv, m):
        out = A.Cond(A.Binary(">=", rhs, ZERO), _exp(A.Unary("-", A.Binary("/", rhs, s))), ONE)
        return out if op in (">", ">=") else A.Binary("-", ONE, out)
    return None


def _canon(atom: A.Expr, x: str) -> Optional[Tuple[A.Expr, bool]]:
    """(``lhs > rhs`` with x on the left, True) for ``lhs > rhs`` or ``>=``; (that, False) for
    ``<`` or ``<=`` (its complement up to a tie of probability 0); None otherwise."""
    if not isinstance(atom, A.Binary) or atom.op not in _FLIP:
        return None
    op, lhs, rhs = atom.op, atom.left, atom.right
    if x in set(free_vars(rhs)):
        if x in set(free_vars(lhs)):
            return None
        op, lhs, rhs = _FLIP[op], rhs, lhs
    return A.Binary(">", lhs, rhs), op in (">", ">=")


def one_event(f: A.Expr, x: str) -> Optional[Tuple[A.Expr, A.Expr]]:
    """``(f', φ)``: f with every comparison that reads x written as φ or ``!φ`` (φ = ``lhs >
    rhs``), when all of them are one event up to complement and ties; None otherwise."""
    atoms: List[A.Expr] = []

    def visit(e: A.Node) -> None:
        if not isinstance(e, A.Expr) or x not in set(free_vars(e)):
            return
        if isinstance(e, A.Binary) and e.op in ("==", "!=", "<", "<=", ">", ">="):
            atoms.append(e)
            return
        for c in A.children(e):
            visit(c)

    visit(f)
    forms: List[Tuple[A.Expr, bool]] = []
    for a in atoms:
        c = _canon(a, x)
        if c is None:
            return None
        forms.append(c)
    if not forms or len({g for g, _ in forms}) != 1:
        return None
    phi = forms[0][0]
    out = f
    for a, (_g, up) in zip(atoms, forms):
        out = _replace(out, a, phi if up else A.Unary("!", phi))
    return out, phi


def _replace(e: A.Expr, old: A.Expr, new: A.Expr) -> A.Expr:
    class _Rep(Transformer):
        def enter(self, node):
            return new if node == old else DESCEND

    out: A.Expr = _Rep().walk(e)
    return out


def exp_chance(phi: A.Expr, x: str, k: A.Expr, s: A.Expr) -> Optional[A.Expr]:
    """Pr[φ(x)] for x ~ exp(k, s) (density ``exp(-(x - k)/s)/s`` on x >= k, s > 0), or None for a
    test outside the rule: for ``x > e`` / ``x >= e`` (x is continuous, ties have probability
    0), d = e - k, ``d >= 0 ? exp(-d/s) : 1`` — the exponential's exact survival function, and 1
    below its start k; ``x < e`` / ``x <= e`` is one minus that; x on the right is turned around.
    Exact, so it serves the upper and the lower pre-expectation alike (nothing here is only an
    upper bound)."""
    if not isinstance(phi, A.Binary) or phi.op not in _FLIP:
        return None
    op, lhs, rhs = phi.op, phi.left, phi.right
    if x in set(free_vars(rhs)):
        if x in set(free_vars(lhs)):
            return None
        op, lhs, rhs = _FLIP[op], rhs, lhs
    if lhs != A.Var(x) or x in set(free_vars(k)) | set(free_vars(s)) | set(free_vars(rhs)):
        return None
    d = A.Binary("-", rhs, k)
    up = A.Cond(A.Binary(">=", d, ZERO), _exp(A.Unary("-", A.Binary("/", d, s))), ONE)
    return up if op in (">", ">=") else A.Binary("-", ONE, up)


#: the continuous draws with a closed-form chance of one tail test, by distribution name
TAIL_CHANCES = {"lap": lap_chance, "exp": exp_chance}


def tail_chance(dist: str, phi: A.Expr, x: str, m: A.Expr, s: A.Expr) -> Optional[A.Expr]:
    """Pr[φ(x)] for ``x ~ dist(m, s)`` with s > 0 (``lap`` or ``exp``), or None."""
    rule = TAIL_CHANCES.get(dist)
    return rule(phi, x, m, s) if rule is not None else None
