"""Print AST nodes back as `.prob` source text.

>>> from lang.parser import parse_expr
>>> print_expr(parse_expr("(a + b) * c - (d - e)"))
'(a + b) * c - (d - e)'

Parentheses are the fewest the precedence table needs (see
docs/language.md), plus a few kept for readability and safety (around
quantifiers that are not a whole clause). For every AST the parser produces,
``parse(print_file(f)) == f`` (positions are not part of AST equality).
Numbers print from their source text when they have one, else exactly.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Optional, Sequence

from . import ast as A
from .recursion import deep_recursion

INDENT = "  "

# Precedence levels, loosest first (the grammar's expression rules).
COND, IFF, IMPLIES, OR, AND, CMP, ADD, MUL, UNARY, POSTFIX, ATOM = range(11)

_BINARY_LEVEL = {
    "<==>": IFF,
    "==>": IMPLIES,
    "||": OR,
    "&&": AND,
    "==": CMP,
    "!=": CMP,
    "<": CMP,
    "<=": CMP,
    ">": CMP,
    ">=": CMP,
    "+": ADD,
    "-": ADD,
    "+.": ADD,
    "-.": ADD,
    "*": MUL,
    "/": MUL,
    "div": MUL,
    "mod": MUL,
    "*.": MUL,
    "/.": MUL,
    "+?": ADD,
    "-?": ADD,
    "*?": MUL,
    "/?": MUL,
    **{op + mark: CMP for op in ("<", "<=", ">", ">=", "==") for mark in (".", "?")},
}


# --------------------------------------------------------------------------- numbers


def _digits(n: int) -> str:
    """``str(n)`` for a non-negative int of any size (no 4300-digit conversion limit)."""
    if n < 10**4000:
        return str(n)
    chunk = 10**4000
    parts = []
    while n:
        n, r = divmod(n, chunk)
        parts.append(r)
    return str(parts[-1]) + "".join(str(p).rjust(4000, "0") for p in reversed(parts[:-1]))


def format_number(value: Fraction, is_int: bool) -> str:
    """Exact source text for a non-negative number: ``42``, ``2.0``, ``0.125``,
    or ``(1.0 / 3)`` when the value has no finite decimal expansion."""
    value = Fraction(value)
    if value < 0:
        return "-" + format_number(-value, is_int)
    if is_int and value.denominator == 1:
        return _digits(value.numerator)
    num, den = value.numerator, value.denominator
    twos = fives = 0
    d = den
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:  # no finite decimal: an exact quotient of two literals
        return f"({format_number(Fraction(num), False)} / {_digits(den)})"
    places = max(twos, fives, 1)
    scaled = num * 10**places // den
    text = _digits(scaled).rjust(places + 1, "0")
    head, tail = text[:-places], text[-places:].rstrip("0") or "0"
    return f"{head}.{tail}"


# --------------------------------------------------------------------------- expressions


def print_expr(e: A.Expr) -> str:
    """Source text of an expression."""
    with deep_recursion():
        return _Printer().top(e)


class _Printer:
    """One method per expression node.

    ``expr(e, level, tail)`` prints ``e`` so that it parses back as one operand at precedence
    ``level``, wrapping it in parentheses when it binds looser. ``tail`` says that nothing but a
    closing bracket, a separator or the end follows ``e``: only there may a quantifier, whose
    body extends as far right as possible, go without parentheses."""

    def expr(self, e: A.Expr, level: int, tail: bool = False) -> str:
        own = self.level(e)
        paren = own < level or (isinstance(e, A.Quant) and not tail)
        text = getattr(self, "p_" + type(e).__name__)(e, tail or paren)
        return f"({text})" if paren else text

    @staticmethod
    def level(e: A.Expr) -> int:
        """The precedence level of ``e``'s outermost construct."""
        if isinstance(e, A.Binary):
            return _BINARY_LEVEL.get(e.op, MUL)
        if isinstance(e, A.Cond):
            return COND
        if isinstance(e, (A.Unary, A.Quant)):
            return UNARY
        if isinstance(e, A.Index):
            return POSTFIX
        if isinstance(e, A.Num) and (e.value < 0):
            return UNARY
        if isinstance(e, A.Fairness):
            return COND - 1
        return ATOM

    def p_Num(self, e: A.Num, tail: bool) -> str:
        if e.text is not None and e.value >= 0:
            return e.text
        return format_number(e.value, e.is_int)

    def p_BoolLit(self, e: A.BoolLit, tail: bool) -> str:
        return "true" if e.value else "false"

    def p_Var(self, e: A.Var, tail: bool) -> str:
        return e.name

    def p_Index(self, e: A.Index, tail: bool) -> str:
        return f"{self.expr(e.base, POSTFIX)}[{self.expr(e.index, COND, True)}]"

    def p_Unary(self, e: A.Unary, tail: bool) -> str:
        inner = self.expr(e.operand, UNARY, tail)
        if e.op == "-" and inner.startswith("-"):
            inner = " " + inner  # `- -x`, never `--x`
        return f"{e.op}{inner}"

    def p_Binary(self, e: A.Binary, tail: bool) -> str:
        level = self.level(e)
        if level == CMP:  # non-associative: both sides one level tighter
            left, right = ADD, ADD
        elif level == IMPLIES:  # right-associative
            left, right = level + 1, level
        else:  # left-associative: a chain `a + b - c` of one level prints iteratively
            chain = [e]
            while isinstance(chain[-1].left, A.Binary) and self.level(chain[-1].left) == level:
                chain.append(chain[-1].left)
            parts = [self.expr(chain[-1].left, level)]
            for k, node in enumerate(reversed(chain)):
                last = k == len(chain) - 1
                parts.append(f" {node.op} {self.expr(node.right, level + 1, tail and last)}")
            return "".join(parts)
        return f"{self.expr(e.left, left)} {e.op} {self.expr(e.right, right, tail)}"

    def p_Cond(self, e: A.Cond, tail: bool) -> str:
        return f"{self.expr(e.cond, IFF)} ? {self.expr(e.then, COND)} : {self.expr(e.other, COND, tail)}"

    def p_Call(self, e: A.Call, tail: bool) -> str:
        return f"{e.func}({self.items(e.args)})"

    def p_TupleExpr(self, e: A.TupleExpr, tail: bool) -> str:
        return f"({self.items(e.items)})"

    def p_SetLit(self, e: A.SetLit, tail: bool) -> str:
        return "{" + self.items(e.items) + "}"

    def p_ListLit(self, e: A.ListLit, tail: bool) -> str:
        return f"[{self.items(e.items)}]"

    def range(self, lo: A.Expr, hi: A.Expr, inclusive: bool) -> str:
        return f"{self.expr(lo, ADD)}{'..=' if inclusive else '..'}{self.expr(hi, ADD)}"

    def p_Quant(self, e: A.Quant, tail: bool) -> str:
        return f"{e.kind} {e.var} in {self.range(e.lo, e.hi, e.inclusive)}: {self.expr(e.body, COND, tail)}"

    def p_Sum(self, e: A.Sum, tail: bool) -> str:
        return f"sum({e.var} in {self.range(e.lo, e.hi, e.inclusive)}: {self.expr(e.body, COND, True)})"

    def p_Prob(self, e: A.Prob, tail: bool) -> str:
        given = f" | {self.expr(e.given, COND, True)}" if e.given is not None else ""
        return f"P({self.expr(e.event, COND, True)}{given})"

    def p_Hole(self, e: A.Hole, tail: bool) -> str:
        return "?"

    def p_Independent(self, e: A.Independent, tail: bool) -> str:
        values = f" in {{{self.items(e.values)}}}" if e.values is not None else ""
        return f"independent({self.expr(e.expr, COND, True)}, {e.var}{values})"

    def p_Fairness(self, e: A.Fairness, tail: bool) -> str:
        text = f"{e.kind} {self.expr(e.target, OR)} given "
        if e.qual is None:
            text += self.expr(e.group, ADD)
        else:
            text += f"{self.expr(e.group, COND)} when {self.expr(e.qual, ADD)}"
        return f"{text} {e.op} {self.expr(e.threshold, ADD, tail)}"

    def items(self, xs: Sequence[A.Expr]) -> str:
        return ", ".join(self.expr(x, COND, True) for x in xs)

    def top(self, e: A.Expr) -> str:
        """A whole expression (clause, condition, right-hand side)."""
        return self.expr(e, COND - 1, True)


def _top(e: A.Expr) -> str:
    return _Printer().top(e)


# --------------------------------------------------------------------------- statements


def _target(t: A.Expr) -> str:
    return _Printer().expr(t, POSTFIX)


def _targets(ts: Sequence[A.Expr]) -> str:
    if len(ts) == 1:
        return _target(ts[0])
    return "(" + ", ".join(_target(t) for t in ts) + ")"


def _stmt_lines(s: A.Stmt, depth: int) -> List[str]:
    pad = INDENT * depth
    if isinstance(s, A.Assign):
        return [f"{pad}{_targets(s.targets)} := {_top(s.value)};"]
    if isinstance(s, A.Sample):
        return [f"{pad}{_targets(s.targets)} ~ {_top(s.dist)};"]
    if isinstance(s, A.Assume):
        return [f"{pad}assume({_top(s.cond)});"]
    if isinstance(s, A.Skip):
        return [f"{pad}skip;"]
    if isinstance(s, A.VarDecl):
        return [f"{pad}var {s.name}: {s.type};"]
    if isinstance(s, A.Block):
        return [f"{pad}{{"] + _block_body(s, depth + 1) + [f"{pad}}}"]
    if isinstance(s, A.While):
        head = f"{pad}while ({_top(s.cond)}){_invariant_text(s.invariants)} {{"
        return [head] + _block_body(s.body, depth + 1) + [f"{pad}}}"]
    if isinstance(s, A.For):
        rng = _Printer().range(s.lo, s.hi, s.inclusive)
        head = f"{pad}for {s.var} in {rng}{_invariant_text(s.invariants)} {{"
        return [head] + _block_body(s.body, depth + 1) + [f"{pad}}}"]
    if isinstance(s, A.If):
        return _if_lines(s, depth, pad)
    raise TypeError(f"not a statement: {type(s).__name__}")


def _invariant_text(invariants: Sequence[A.Expr]) -> str:
    """`` invariant I1 invariant I2`` (each clause's expression ends at the next keyword or the
    loop body's ``{``, so it needs no parentheses)."""
    return "".join(f" invariant {_top(e)}" for e in invariants)


def _if_lines(s: A.If, depth: int, head: str) -> List[str]:
    """``if … { … } else if … { … } else { … }``; ``head`` starts the first line."""
    pad = INDENT * depth
    lines = [f"{head}if ({_top(s.cond)}) {{"] + _block_body(s.then, depth + 1)
    other = s.other
    if other is None:
        return lines + [f"{pad}}}"]
    if len(other.stmts) == 1 and isinstance(other.stmts[0], A.If):
        return lines + _if_lines(other.stmts[0], depth, f"{pad}}} else ")
    return lines + [f"{pad}}} else {{"] + _block_body(other, depth + 1) + [f"{pad}}}"]


def _block_body(b: Optional[A.Block], depth: int) -> List[str]:
    out: List[str] = []
    for s in b.stmts if b is not None else ():
        out.extend(_stmt_lines(s, depth))
    return out


def print_stmt(s: A.Stmt, indent: int = 0) -> str:
    """Source text of a statement (several lines for compound ones), indented ``indent`` levels."""
    with deep_recursion():
        return "\n".join(_stmt_lines(s, indent))


# --------------------------------------------------------------------------- programs


def print_program(p: A.Program) -> str:
    """Source text of one program: header, clauses (rate, requires, ensures, fails,
    reliability, neighbours, private) one per line, and the body."""
    with deep_recursion():
        params = ", ".join(f"{x.name}: {x.type}" for x in p.params)
        lines = [f"program {p.name}({params})"]
        if p.rate is not None:
            lines.append(f"{INDENT}rate {_top(p.rate)}")
        lines += [f"{INDENT}rate({o.op}) {_top(o.rate)}" for o in p.op_rates]
        for m in p.memory:
            rate = "" if m.rate is None else f"({_top(m.rate)})"
            lines.append(f"{INDENT}unreliable{'?' if m.candidate else ''}{rate} {', '.join(m.names)}")
        lines += [f"{INDENT}requires {_top(c)}" for c in p.requires]
        lines += [f"{INDENT}ensures {_top(c)}" for c in p.ensures]
        if p.fails is not None:
            lines.append(f"{INDENT}fails {_top(p.fails)}")
        if p.reliability is not None:
            lines.append(f"{INDENT}reliability {_top(p.reliability)}")
        if p.value_reliability is not None:
            v = p.value_reliability
            lines.append(f"{INDENT}reliability({', '.join(v.names)}) >= {_top(v.bound)}")
        if p.neighbours is not None:
            lines.append(f"{INDENT}neighbours {_top(p.neighbours)}")
        if p.private is not None:
            d = p.private
            budget = _top(d.epsilon) + ("" if d.delta is None else ", " + _top(d.delta))
            lines.append(f"{INDENT}private {budget} on {', '.join(d.outputs)}")
        lines.append("{")
        lines += _block_body(p.body, 1)
        lines.append("}")
        return "\n".join(lines) + "\n"


def print_file(f: A.SourceFile) -> str:
    """Source text of a whole file (programs separated by blank lines)."""
    return "\n".join(print_program(p) for p in f.programs)
