"""Group fairness of a decision program under a population: ``tamp fairness P --population POP --group sex``.

Causal fairness (``independent(out, sex)``) asks whether changing only ``sex`` changes the
class. Group fairness (demographic parity) asks how often each group gets the positive class
when applicants are drawn from a population::

    P(out = 1 | sex = 1) / P(out = 1 | sex = 0)

(the four-fifths rule asks for a ratio between 0.8 and 1/0.8 = 1.25: the claim checked, with
``--min-ratio``; ``proved`` only when the whole certified interval is inside). The population is a program without parameters
that samples the decision program's inputs (the same file ``--population`` takes for causal
fairness). :func:`splice` joins the two into one program without parameters — the
population's statements, then the decision program's body — which computes exactly the
joint distribution of the inputs and the class: the decision program is deterministic and
reads only its parameters, which the population assigns. Its ``requires`` are not assumed (an
``assume`` would condition the population, not describe it).

Why the interval is sound: each conditional probability is computed by the probability engine
(:func:`tamp.probability.probability`) as an exact rational or a certified interval; the ratio
of two intervals of non-negative numbers with a positive denominator lies in
``[lo1 / hi0, hi1 / lo0]``. A denominator whose lower end is 0 leaves the ratio unbounded above,
and that is what is reported (never a finite upper end that is not certain).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Optional, Sequence, Set, Tuple, Union

from lang import ast as A
from lang.errors import TampError
from lang.parser import parse
from lang.printer import print_program
from lang.typecheck import check_file
from lang.walk import Walker
from tamp.core.interval import Interval
from tamp.probability import probability
from tamp.results import PROVED, UNKNOWN, VIOLATED, exit_code_of

from .exact import decimal_text

Bound = Union[Fraction, Interval]


@dataclass
class GroupFairness:
    """``P(out = positive | group = 1)``, ``P(out = positive | group = 0)`` and their ratio."""

    program: str
    group: str
    output: str
    positive: int
    p1: Interval
    p0: Interval
    ratio: Tuple[Fraction, Optional[Fraction]]  # (lower, upper); upper None: unbounded
    spliced: str  # the population-spliced program's text
    min_ratio: Fraction = Fraction(4, 5)  # the claim: min_ratio <= ratio <= 1 / min_ratio
    time_s: float = 0.0

    @property
    def verdict(self) -> str:
        """``proved`` when the whole ratio interval is within [r, 1/r] (the four-fifths rule for
        r = 0.8, both ways), ``violated`` when it is wholly outside, else ``unknown``."""
        lo, hi = self.ratio
        r = self.min_ratio
        if r <= 0:
            return PROVED
        if (hi is not None and hi < r) or lo > 1 / r:
            return VIOLATED
        if lo >= r and hi is not None and hi <= 1 / r:
            return PROVED
        return UNKNOWN

    @property
    def exit_code(self) -> int:
        """The exit status ``tamp fairness --group`` returns for this verdict."""
        return exit_code_of(self.verdict)

    def claim(self) -> str:
        ev = f"{self.output} == {self.positive}"
        r = self.min_ratio
        return (
            f"{_num(r)} <= P({ev} | {self.group} == 1) / P({ev} | {self.group} == 0) <= {_num(1 / r) if r else 'inf'}"
        )

    def to_json(self) -> dict:
        def iv(i: Interval) -> dict:
            return {"lower": float(i.lo), "upper": float(i.hi), "lower_exact": _text(i.lo), "upper_exact": _text(i.hi)}

        lo, hi = self.ratio
        return {
            "name": self.program,
            "kind": "group",
            "verdict": self.verdict,
            "time_s": round(self.time_s, 4),
            "claim": self.claim(),
            "group": self.group,
            "positive": f"{self.output} == {self.positive}",
            "p_group1": iv(self.p1),
            "p_group0": iv(self.p0),
            "ratio": {
                "lower": float(lo),
                "upper": None if hi is None else float(hi),
                "lower_exact": _text(lo),
                "upper_exact": None if hi is None else _text(hi),
            },
        }

    def render_text(self) -> str:
        ev = f"{self.output} == {self.positive}"
        lo, hi = self.ratio
        hi_t = "+inf (P(... | group 0) may be 0)" if hi is None else f"{float(hi):.6f}"
        return "\n".join(
            [
                f"{self.program}: {self.verdict}  group fairness {self.claim()}",
                f"  P({ev} | {self.group} == 1) in {_show(self.p1)}",
                f"  P({ev} | {self.group} == 0) in {_show(self.p0)}",
                f"  ratio P({ev} | {self.group} == 1) / P({ev} | {self.group} == 0) in [{float(lo):.6f}, {hi_t}]",
            ]
        )


def _text(q: Fraction) -> Optional[str]:
    """``n/d``, or None past 4000 digits (Python's int/str conversion stops at 4300)."""
    return str(q) if max(q.numerator.bit_length(), q.denominator.bit_length()) < 13000 else None


def _num(q: Fraction) -> str:
    """0.8, 1.25, 10/9: the exact decimal when there is one, else the fraction."""
    return decimal_text(q).strip("()")


def _show(i: Interval) -> str:
    return f"[{float(i.lo):.6f}, {float(i.hi):.6f}]" + (
        f" (exactly {i.lo})" if i.is_exact and i.lo.denominator < 10**6 else ""
    )


def _as_interval(v: Bound) -> Interval:
    return Interval(v, v) if isinstance(v, Fraction) else v


def ratio(p1: Interval, p0: Interval) -> Tuple[Fraction, Optional[Fraction]]:
    """The certified range of a / b for a in p1, b in p0 (both within [0, 1])."""
    if p0.lo <= 0:
        return (Fraction(0) if p0.hi <= 0 else max(Fraction(0), p1.lo) / p0.hi), None
    return max(Fraction(0), p1.lo) / p0.hi, p1.hi / p0.lo


class _Assigned(Walker[Set[str]]):
    """The variables a statement assigns or samples (``x := e``, ``x ~ D``, at any depth)."""

    def _targets(self, node, kids: Sequence[Set[str]]) -> Set[str]:
        out = set().union(*kids) if kids else set()
        return out | {t.name for t in node.targets if isinstance(t, A.Var)}

    Assign = _targets
    Sample = _targets

    def default(self, node: A.Node, kids: Sequence[Set[str]]) -> Set[str]:
        return set().union(*kids) if kids else set()


def _names(stmts) -> Set[str]:
    return _Assigned().walk(A.Block(tuple(stmts)))


def splice(program: A.Program, population: A.Program, path: str = "<program>", pop_path: str = "<population>") -> str:
    """The text of one program without parameters: the population's statements, then the
    program's body (see the module docstring). A parameter the population does not assign, or
    a name both assign, is an error."""
    if population.params:
        raise TampError(f"the population program '{population.name}' has parameters; it must sample them", pop_path)
    pop_names = _names(population.body.stmts)
    params = [p.name for p in program.params]
    missing = [p for p in params if p not in pop_names]
    if missing:
        raise TampError(
            f"the population does not assign the input{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} of program '{program.name}'",
            pop_path,
        )
    clash = sorted((pop_names - set(params)) & _names(program.body.stmts))
    if clash:
        raise TampError(
            f"the population and program '{program.name}' both assign {', '.join(clash)}; rename it in the population",
            pop_path,
        )
    # the inputs declared with their types first: a population giving one a value of another
    # type (a bool from bern for an int input) is then a type error of the spliced program
    decls = tuple(A.VarDecl(p.name, p.type) for p in program.params)
    body = A.Block(decls + tuple(population.body.stmts) + tuple(program.body.stmts))
    spliced = replace(program, name=f"{program.name}_in_population", params=(), body=body, requires=(), ensures=())
    text = print_program(spliced) + "\n"
    try:
        check_file(parse(text, "<spliced program>"))
    except TampError as exc:
        raise TampError(
            f"the population and program '{program.name}' do not fit together: {exc.message} "
            "(a 0/1 input sampled with bern is a bool: write `b ~ bern(p); sex := b ? 1 : 0;`)",
            pop_path,
        ) from None
    return text


def group_fairness(
    program: A.Program,
    population: A.Program,
    group: str,
    *,
    output: str = "out",
    positive: int = 1,
    timeout: float = 120.0,
    tolerance: float = 1e-4,
    min_ratio: Fraction = Fraction(4, 5),
    path: str = "<program>",
    pop_path: str = "<population>",
) -> GroupFairness:
    """P(output == positive | group == 1), the same given group == 0, their ratio, and whether
    ``min_ratio <= ratio <= 1 / min_ratio`` (the four-fifths rule for 0.8) is certain."""
    t0 = time.monotonic()
    types = {p.name: p.type for p in program.params}
    if group not in types:
        raise TampError(
            f"--group {group}: program '{program.name}' has no input '{group}' "
            f"(its inputs: {', '.join(types) or 'none'})",
            "--group",
        )
    if types[group] != A.INT:
        raise TampError(f"--group {group}: the input is a {types[group]}; a group is an int input (0/1)", "--group")
    if output not in _names(program.body.stmts):
        raise TampError(f"program '{program.name}' does not assign '{output}'", path)
    text = splice(program, population, path, pop_path)
    prog = parse(text, "<spliced program>").programs[0]
    event = f"{output} == {positive}"
    p1 = _as_interval(probability(prog, event, f"{group} == 1", tolerance=tolerance, timeout=timeout / 2))
    p0 = _as_interval(probability(prog, event, f"{group} == 0", tolerance=tolerance, timeout=timeout / 2))
    return GroupFairness(
        program.name, group, output, positive, p1, p0, ratio(p1, p0), text, min_ratio, time.monotonic() - t0
    )
