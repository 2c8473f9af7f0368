"""Arithmetic lemmas about ``log``, ``exp`` and ``sqrt`` for the prover's SMT queries.

The prover encodes ``log``, ``exp`` and ``sqrt`` as uninterpreted functions on the reals. A UF
knows nothing, which is sound but weak; this library adds *instances* of true facts about
the real functions for the terms that actually occur in a query (no quantifiers, so z3 stays
decidable on them). Each lemma is guarded by its domain condition, so nothing is claimed
about ``log`` of a non-positive number or ``sqrt`` of a negative one (whatever value the
program's semantics gives there, the proof holds for every value).

Facts used (each a textbook property of the natural logarithm, exponential and square root):

=====================  ===========================================================
``log-sign``           a > 0  ⇒  (log a > 0 ⇔ a > 1) ∧ (log a = 0 ⇔ a = 1) ∧ (log a < 0 ⇔ a < 1)
``log-tangent``        a > 0  ⇒  1 - 1/a <= log a <= a - 1
``log-mono``           a > 0 ∧ b > 0  ⇒  (a <= b ⇔ log a <= log b) ∧ (a < b ⇔ log a < log b)
``log-mul``            x > 0 ∧ y > 0  ⇒  log(x·y) = log x + log y
``log-div``            x > 0 ∧ y > 0  ⇒  log(x/y) = log x - log y
``log-exp``            log(exp a) = a
``exp-pos``            exp a > 0 ∧ exp a >= 1 + a
``exp-mono``           a <= b ⇔ exp a <= exp b ; a < b ⇔ exp a < exp b
``exp-zero``           a = 0 ⇒ exp a = 1
``exp-log``            x > 0 ⇒ exp(log x) = x
``sqrt-def``           a >= 0 ⇒ sqrt a >= 0 ∧ sqrt a · sqrt a = a
``sqrt-mono``          a >= 0 ∧ b >= 0 ⇒ (a <= b ⇔ sqrt a <= sqrt b)
=====================  ===========================================================

``log-mul``/``log-div`` introduce ``log x``/``log y``; the closure is taken once (one round),
which keeps the number of instances quadratic in the number of terms at most.
"""

from __future__ import annotations

from typing import List, Tuple

import z3

MAX_PAIR_TERMS = 24


def _is(t, name):
    return z3.is_app(t) and t.decl().name() == name and t.num_args() == 1


def _arith_parts(a, kind):
    """``a`` = x*y (kind "*") or x/y (kind "/") as (x, y), else None."""
    if not z3.is_app(a) or a.num_args() != 2:
        return None
    k = a.decl().kind()
    if kind == "*" and k == z3.Z3_OP_MUL:
        return a.arg(0), a.arg(1)
    if kind == "/" and k == z3.Z3_OP_DIV:
        return a.arg(0), a.arg(1)
    return None


def _real(x):
    return z3.ToReal(x) if z3.is_int(x) else x


def lemma_instances(apps, enc) -> List[Tuple[str, z3.BoolRef]]:
    """Instances of the lemmas above for the transcendental applications ``apps``.

    ``enc`` supplies the uninterpreted functions (``enc.log``, ``enc.exp``, ``enc.sqrt``)."""
    out: List[Tuple[str, z3.BoolRef]] = []
    logs = [t for t in apps if _is(t, "log")]
    exps = [t for t in apps if _is(t, "exp")]
    sqrts = [t for t in apps if _is(t, "sqrt")]
    ids = {t.get_id() for t in logs}

    # one round of closure under log-mul / log-div
    for t in list(logs):
        a = t.arg(0)
        for kind in ("*", "/"):
            parts = _arith_parts(a, kind)
            if parts is None:
                continue
            x, y = _real(parts[0]), _real(parts[1])
            lx, ly = enc.log(x), enc.log(y)
            for n in (lx, ly):
                if n.get_id() not in ids:
                    ids.add(n.get_id())
                    logs.append(n)
            rhs = lx + ly if kind == "*" else lx - ly
            out.append((f"log-{'mul' if kind == '*' else 'div'}", z3.Implies(z3.And(x > 0, y > 0), t == rhs)))
        if _is(a, "exp"):
            out.append(("log-exp", t == a.arg(0)))

    for t in logs:
        a = t.arg(0)
        out.append(("log-sign", z3.Implies(a > 0, z3.And((t > 0) == (a > 1),
                                                            (t == 0) == (a == 1), (t < 0) == (a < 1)))))
        out.append(("log-tangent", z3.Implies(a > 0, z3.And(t <= a - 1, t * a >= a - 1))))
    pl = logs[:MAX_PAIR_TERMS]
    for i in range(len(pl)):
        for j in range(i + 1, len(pl)):
            a, b = pl[i].arg(0), pl[j].arg(0)
            la, lb = pl[i], pl[j]
            out.append(("log-mono", z3.Implies(z3.And(a > 0, b > 0),
                                               z3.And((a <= b) == (la <= lb), (a < b) == (la < lb),
                                                      (b <= a) == (lb <= la), (b < a) == (lb < la)))))

    for t in exps:
        a = t.arg(0)
        out.append(("exp-pos", z3.And(t > 0, t >= 1 + a)))
        out.append(("exp-zero", z3.Implies(a == 0, t == 1)))
        if _is(a, "log"):
            out.append(("exp-log", z3.Implies(a.arg(0) > 0, t == a.arg(0))))
    pe = exps[:MAX_PAIR_TERMS]
    for i in range(len(pe)):
        for j in range(i + 1, len(pe)):
            a, b = pe[i].arg(0), pe[j].arg(0)
            ea, eb = pe[i], pe[j]
            out.append(("exp-mono", z3.And((a <= b) == (ea <= eb), (a < b) == (ea < eb),
                                           (b <= a) == (eb <= ea), (b < a) == (eb < ea))))

    for t in sqrts:
        a = t.arg(0)
        out.append(("sqrt-def", z3.Implies(a >= 0, z3.And(t >= 0, t * t == a))))
    ps = sqrts[:MAX_PAIR_TERMS]
    for i in range(len(ps)):
        for j in range(i + 1, len(ps)):
            a, b = ps[i].arg(0), ps[j].arg(0)
            sa, sb = ps[i], ps[j]
            out.append(("sqrt-mono", z3.Implies(z3.And(a >= 0, b >= 0),
                                                z3.And((a <= b) == (sa <= sb), (b <= a) == (sb <= sa)))))
    return out
