"""A differential fuzzer: tamp's answers against the exact enumerator (tests/fuzz/exact.py) on
small discrete programs.

:func:`program` draws a program over inputs ``n: int`` (0..3) and ``p: real`` (0 < p < 1):
``bern``/``unif`` draws, assignments, conditionals, ``while`` loops with small trip counts,
and ``for`` loops whose bound is a variable the body may assign (``m := min(m + 1, 4)``, ``if
(b0) { m := m + 1; }``, ``m := m + 1``, which never ends, …), nested to depth 2, then one
``ensures``. :func:`check` asks:

* ``tamp prove`` with ``fails B`` for B drawn from a list, B = ``?`` (the inferred bound) and B
  a constant *below* the exact failure probability at some input (a false claim): whenever
  the answer is "proved", the exact failure probability (a run that does not end counts as a
  failure) must be at most B at every input of :data:`POINTS`; an inferred bound must parse
  and be proved again when given back with ``--bound``;
* the same with every input fixed (``--input``) at one point: ``fails ?`` and a false constant;
* ``tamp prob`` for ``P(E)`` (E the postcondition) at two inputs: its value, or the interval it
  certifies, must hold the exact probability.

Findings are returned, not raised: the CI test (tests/fuzz/test_fuzz_differential.py) asserts
there are none at a fixed seed; benchmarks/fuzz/differential.py runs for a while and prints them.
"""

from __future__ import annotations

import random
import traceback
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import exact

from lang.errors import TampError
from lang.evaluate import evaluate
from lang.parser import parse, parse_expr

PARAMS = "n: int, p: real"
REQUIRES = "0 <= n && n <= 3 && 0 < p && p < 1"
#: the inputs every proved claim is checked at (all satisfy REQUIRES)
POINTS: List[Dict[str, object]] = [
    {"n": n, "p": p} for n in (0, 1, 2, 3) for p in (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10))
]
PRELUDE = "b0 := false; b1 := false; k0 := 0; k1 := 0; m := 0;"
BOUNDS = ["0", "1 / 2", "p", "1 - p", "p * p", "p / 2", "1 / 4", "3 / 4", "n * p", "1 / 8", "p * (1 - p)", "0.9"]


@dataclass
class Finding:
    kind: str  # "unsound bound" | "wrong probability" | "crash" | "inferred bound not reusable"
    program: str
    claim: str
    detail: str

    def render(self) -> str:
        return f"[{self.kind}] {self.claim}\n--- program ---\n{self.program}--- detail ---\n{self.detail}\n"


# ---------------------------------------------------------------------------- the grammar


class Gen:
    """Draws program text from ``rng`` (see the module docstring)."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.loops = 0

    def pick(self, xs):
        return self.r.choice(xs)

    def k(self) -> str:
        return self.pick(["k0", "k1"])

    def b(self) -> str:
        return self.pick(["b0", "b1"])

    def cond(self) -> str:
        c = self.r.randrange(6)
        if c == 0:
            return self.b()
        if c == 1:
            return f"!{self.b()}"
        if c == 2:
            return f"{self.k()} {self.pick(['<', '<=', '==', '!=', '>=', '>'])} {self.pick(['0', '1', '2', 'n'])}"
        if c == 3:
            return f"({self.b()} {self.pick(['&&', '||'])} {self.k()} >= {self.pick(['1', '2'])})"
        if c == 4:
            return f"{self.k()} + {self.k()} {self.pick(['<=', '==', '>'])} {self.pick(['1', '2', '3'])}"
        return f"m {self.pick(['<=', '>', '=='])} {self.pick(['1', '2', 'n'])}"

    def simple(self) -> str:
        c = self.r.randrange(10)
        if c <= 1:
            return f"{self.b()} ~ bern({self.pick(['p', '1 - p', '0.5', '1 / 4', 'p / 2', '1 / 3'])});"
        if c == 2:
            return f"{self.k()} ~ {self.pick(['unif(0, 2)', 'unif(1, 3)', 'unif(0, n)', 'unif({0, 2, 5})', 'unif(0, 1)'])};"
        if c == 3:
            k = self.k()
            return f"{k} := {self.pick([f'{self.k()} + 1', f'{k} + {self.k()}', f'{k} - 1', f'min({k}, 3)', '2 * n', f'{k} mod 2'])};"
        if c == 4:
            k = self.k()
            return f"{k} := {self.b()} ? {k} + 1 : {k};"
        if c == 5:
            return f"{self.b()} := {self.cond()};"
        if c == 6:
            return f"m := {self.pick(['n', '2 * n', 'k0', '1', 'm + 1'])};"
        if c == 7:
            return f"{self.b()} := !{self.b()};"
        return f"{self.k()} := {self.k()} + {self.pick(['1', '2'])};"

    def block(self, depth: int, extra: Optional[str] = None) -> str:
        out = []
        for _ in range(self.r.randint(1, 3)):
            kind = self.pick(["simple"] * 4 + (["if", "for", "forvar", "while"] if depth > 0 else []))
            if kind == "simple":
                out.append(self.simple())
            elif kind == "if":
                then = self.block(depth - 1)
                other = self.block(depth - 1) if self.r.random() < 0.5 else None
                out.append(f"if ({self.cond()}) {{ {then} }}" + (f" else {{ {other} }}" if other else ""))
            elif kind == "for":
                c = self.counter()
                out.append(f"for {c} in 0..{self.pick(['2', '3', 'n', 'k0'])} {{ {self.block(depth - 1)} }}")
            elif kind == "forvar":  # a for loop whose bound the body (or the code before it) assigns
                c = self.counter()
                init = self.pick(["n", "2 * n", "k0", "1", "0"])
                grow = self.pick(
                    ["m := min(m + 1, 4);", "if (b0) { m := m + 1; }", "m := m - 1;", "m := m + 1;", "skip;"]
                )
                out.append(f"m := {init}; for {c} in 0..m {{ {self.block(depth - 1)} {grow} }}")
            else:
                c = self.counter()
                hi = self.pick(["2", "3", "n"])
                extra_c = self.pick(["", f" && {self.cond()}"])
                out.append(f"{c} := 0; while ({c} < {hi}{extra_c}) {{ {self.block(depth - 1)} {c} := {c} + 1; }}")
        if extra:
            out.append(extra)
        return " ".join(out)

    def counter(self) -> str:
        self.loops += 1
        return f"c{self.loops}"

    def ensures(self) -> str:
        c = self.cond()
        if self.r.random() < 0.4:
            c = f"{c} {self.pick(['&&', '||', '==>'])} {self.cond()}"
        return c


def program_body(rng: random.Random) -> Tuple[str, str]:
    """(body statements, postcondition) of one random program."""
    g = Gen(rng)
    return g.block(2), g.ensures()


def source(body: str, ensures: str, fails: Optional[str] = None, name: str = "f") -> str:
    return (
        f"program {name}({PARAMS})\n  requires {REQUIRES}\n  ensures {ensures}\n"
        + (f"  fails {fails}\n" if fails is not None else "")
        + f"{{\n  {PRELUDE}\n  {body}\n}}\n"
    )


# ---------------------------------------------------------------------------- the checks


def _value(bound: Optional[str], point: Dict[str, object]):
    if bound is None:  # a proved claim always names its bound
        raise ValueError("a proved claim without a bound")
    return evaluate(parse_expr(bound), point)


def _exceeds(fail: Fraction, bound) -> bool:
    """``fail > bound`` exactly for exact bounds; with a margin for a float (log, exp …)."""
    if isinstance(bound, (int, Fraction)):
        return fail > bound
    return float(fail) > float(bound) + 1e-9 * max(1.0, abs(float(bound)))


def _prove(text: str, timeout: float, bound: Optional[str] = None):
    from tamp.api import prove

    return prove(text, bound=bound, timeout=timeout).programs[0]


def check(body: str, ensures: str, rng: random.Random, timeout: float = 3.0, stats=None) -> List[Finding]:
    """Every claim tamp proves about the program holds at every point of :data:`POINTS`, and
    ``tamp prob`` agrees with the enumerator (see the module docstring)."""
    stats = stats if stats is not None else {}
    base = source(body, ensures)
    try:
        prog = parse(base).programs[0]
        post = [parse_expr(ensures)]
        outcomes = [exact.run(prog, pt) for pt in POINTS]
        fails = [o.failure(post) for o in outcomes]
    except (exact.Unsupported, TampError, ValueError, ArithmeticError) as exc:
        stats["skipped (enumerator)"] = stats.get("skipped (enumerator)", 0) + 1
        return [] if isinstance(exc, exact.Unsupported) else [Finding("crash", base, "enumerate", repr(exc))]
    findings: List[Finding] = []
    worst = max(lo for lo, _hi in fails)
    claims = ["?", rng.choice(BOUNDS)]
    if worst > 0:  # a false constant claim: below the exact failure probability at some input
        below = worst * Fraction(rng.choice([1, 3, 9]), 10)
        claims.append(f"{below.numerator} / {below.denominator}")
    for claim in claims:
        text = source(body, ensures, claim)
        try:
            res = _prove(text, timeout)
        except TampError:
            stats["prove: input error"] = stats.get("prove: input error", 0) + 1
            continue
        except Exception:  # noqa: BLE001 - an internal error is a finding
            findings.append(Finding("crash", text, f"prove (fails {claim})", traceback.format_exc(limit=-6)))
            continue
        stats[f"prove {res.verdict}"] = stats.get(f"prove {res.verdict}", 0) + 1
        if res.verdict != "proved":
            continue
        bound = res.bound if claim == "?" else claim
        shown = f"fails {claim}" + (f" (inferred: {bound})" if claim == "?" else "")
        try:
            vals = [_value(bound, pt) for pt in POINTS]
        except Exception as exc:  # noqa: BLE001 - a bound tamp printed must be the user's language
            findings.append(Finding("inferred bound not reusable", text, shown, f"{bound!r}: {exc!r}"))
            continue
        for pt, (lo, hi), v in zip(POINTS, fails, vals):
            if _exceeds(lo, v):
                findings.append(
                    Finding(
                        "unsound bound",
                        text,
                        shown,
                        f"at n = {pt['n']}, p = {pt['p']}: exact failure probability >= {lo} "
                        f"(<= {hi}) > bound {v}\n{res.message}",
                    )
                )
                break
        if claim == "?":
            try:
                again = _prove(source(body, ensures), timeout * 5, bound=bound)
            except Exception as exc:  # noqa: BLE001 - the bound must be taken back
                findings.append(Finding("inferred bound not reusable", text, shown, repr(exc)))
                continue
            if again.verdict != "proved":
                stats["inferred bound not proved again"] = stats.get("inferred bound not proved again", 0) + 1
    findings += check_fixed(body, ensures, rng, fails, timeout, stats)
    findings += check_prob(body, ensures, outcomes, stats)
    return findings


def check_fixed(body: str, ensures: str, rng: random.Random, fails, timeout: float, stats) -> List[Finding]:
    """``tamp prove --input n=… --input p=…`` at one point of :data:`POINTS`: ``fails ?`` and a
    constant below the exact failure probability there (false). A proved bound must be at
    least the exact value at that point."""
    from tamp.api import prove

    i = rng.randrange(len(POINTS))
    pt, (lo, hi) = POINTS[i], fails[i]
    claims = ["?"]
    if lo > 0:
        below = lo * Fraction(rng.choice([1, 5, 9]), 10)
        claims.append(f"{below.numerator} / {below.denominator}")
    out: List[Finding] = []
    for claim in claims:
        text = source(body, ensures, claim)
        shown = f"fails {claim} --input n={pt['n']} --input p={pt['p']}"
        try:
            res = prove(text, timeout=timeout, inputs={"n": pt["n"], "p": pt["p"]}).programs[0]
        except TampError:
            stats["prove (fixed inputs): input error"] = stats.get("prove (fixed inputs): input error", 0) + 1
            continue
        except Exception:  # noqa: BLE001 - an internal error is a finding
            out.append(Finding("crash", text, shown, traceback.format_exc(limit=-6)))
            continue
        stats[f"prove (fixed inputs) {res.verdict}"] = stats.get(f"prove (fixed inputs) {res.verdict}", 0) + 1
        if res.verdict != "proved":
            continue
        bound = res.bound if claim == "?" else claim
        try:
            v = _value(bound, pt)
        except Exception as exc:  # noqa: BLE001
            out.append(Finding("inferred bound not reusable", text, shown, f"{bound!r}: {exc!r}"))
            continue
        if _exceeds(lo, v):
            out.append(
                Finding(
                    "unsound bound",
                    text,
                    shown + (f" (inferred: {bound})" if claim == "?" else ""),
                    f"exact failure probability >= {lo} (<= {hi}) > bound {v}\n{res.message}",
                )
            )
    return out


def check_prob(body: str, ensures: str, outcomes, stats) -> List[Finding]:
    """``tamp prob`` on ``P(ensures)`` at two inputs against the enumerator (runs that end)."""
    from tamp.api import prob

    out: List[Finding] = []
    event = parse_expr(ensures)
    for i in (0, len(POINTS) - 1):
        o, pt = outcomes[i], POINTS[i]
        if o.stuck:  # the meaning of P(…) with runs that do not end is not what is compared here
            continue
        text = source(body, f"P({ensures}) >= 0")
        want = o.probability(event)
        try:
            res = prob(text, inputs={"n": pt["n"], "p": pt["p"]}, timeout=10).programs[0]
        except TampError:
            stats["prob: input error"] = stats.get("prob: input error", 0) + 1
            continue
        except Exception:  # noqa: BLE001
            out.append(Finding("crash", text, f"prob at {pt}", traceback.format_exc(limit=-6)))
            continue
        for t in getattr(res, "terms", []):
            iv = t.interval
            if iv is None:
                continue
            stats["prob terms"] = stats.get("prob terms", 0) + 1
            lo, hi = Fraction(iv.lo), Fraction(iv.hi)
            if not (lo <= want <= hi) or (iv.is_exact and lo != want):
                out.append(
                    Finding(
                        "wrong probability",
                        text,
                        f"{t.text} at n = {pt['n']}, p = {pt['p']}",
                        f"exact {want}, tamp [{lo}, {hi}]",
                    )
                )
    return out


def fuzz(seed: int, count: int, timeout: float = 3.0, stats=None, deadline: Optional[float] = None):
    """(findings, programs tried) for ``count`` programs drawn from ``seed`` (stops at the
    monotonic ``deadline`` if given)."""
    import time

    rng = random.Random(seed)
    findings: List[Finding] = []
    tried = 0
    for _ in range(count):
        if deadline is not None and time.monotonic() > deadline:
            break
        body, ensures = program_body(rng)
        findings += check(body, ensures, rng, timeout, stats)
        tried += 1
    return findings, tried
