"""Parse `.prob` source text into the AST of :mod:`lang.ast`.

>>> f = parse("program p(n: int) ensures n >= 0 { x := n; }")
>>> f.programs[0].body.stmts[0]
Assign(targets=(Var(name='x'),), value=Var(name='n'))

Errors are raised as :class:`lang.errors.ParseError` with file, line and column.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from lark import Lark, Token, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import PatternStr
from lark.visitors import Transformer_NonRecursive

from . import ast as A
from .errors import ParseError, TampError, error_at
from .files import read_text
from .gcpause import paused_gc
from .lalr import Driver, Fallback
from .recursion import MAX_DEPTH, nesting_overflow

_GRAMMAR = Path(__file__).with_name("grammar.lark")


def _cache_file() -> Optional[str]:
    """Where the analysed LALR tables are kept between runs: a file in the user's own cache
    directory (``$XDG_CACHE_HOME/tamp`` or ``~/.cache/tamp``, created private), never a shared
    temporary directory (the cache is a pickle). None when there is no such directory; lark
    itself checks the grammar's hash in the file and rebuilds on any mismatch or damage."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = os.path.join(base, "tamp")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.stat(d)
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
            return None
    except OSError:
        return None
    return os.path.join(d, "grammar-lalr.cache")


@lru_cache(maxsize=1)
def _parser() -> Lark:
    # building the LALR tables takes ~0.4 s, loading them from the cache ~20 ms
    return Lark(
        _GRAMMAR.read_text(),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        start=["start", "expr_start"],
        cache=_cache_file() or False,
    )


def _pos(meta: Any) -> Optional[A.Pos]:
    if getattr(meta, "empty", True):
        return None
    return A.Pos(meta.line, meta.column, meta.end_line, meta.end_column)


def _tpos(tok: Token) -> A.Pos:
    line, col = tok.line or 0, tok.column or 0
    return A.Pos(line, col, tok.end_line or line, tok.end_column or col)


# Literals stay far below Python's 4300-digit int/str conversion limit, so that every exact
# value can be printed; beyond these a literal is a clear error, not a hang or a crash later.
MAX_DIGITS = 1000
MAX_EXPONENT = 1000
_NUMBER = re.compile(r"(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")
_RATIO = re.compile(r"(\d+)/(\d+)")


def parse_number(text: str) -> A.Num:
    """An exact literal: ``42`` (int), ``0.5`` = 1/2, ``1e-7`` = 1/10^7 (reals); also ``1/3``
    (for ``--input``). Raises ``ValueError`` for anything else, for more than
    :data:`MAX_DIGITS` digits or an exponent beyond ±:data:`MAX_EXPONENT`."""
    text = text.strip()
    if text.isdigit() and text.isascii() and len(text) <= 18:  # the common case, fast
        return A.Num(Fraction(int(text)), True, text)
    m = _NUMBER.fullmatch(text) or _RATIO.fullmatch(text)
    if m is None:
        raise ValueError(f"not a number: {text[:40]!r}")
    if len(m.group(1)) + len(m.group(2) or "") > MAX_DIGITS:
        raise ValueError(f"number too long: more than {MAX_DIGITS} digits")
    if m.re is _RATIO:
        return A.Num(Fraction(int(m.group(1)), int(m.group(2))), False, text)
    whole, frac, exp = m.group(1), m.group(2) or "", m.group(3)
    e = 0 if exp is None else (int(exp) if len(exp) <= 6 else 10 * MAX_EXPONENT)
    if abs(e) > MAX_EXPONENT:
        raise ValueError(f"number out of range: the exponent must be within ±{MAX_EXPONENT}")
    value = Fraction(int(whole + frac)) * Fraction(10) ** (e - len(frac))
    return A.Num(value, frac == "" and exp is None, text)


def _clause(kind: str) -> Callable[[Any, Any, List[Any]], Any]:
    """The rule method of a specification clause: ``("clause", kind, expression)``."""

    def f(self: Any, meta: Any, ch: List[Any]) -> Any:
        return ("clause", kind, ch[0])

    return f


#: the candidate operators, longest first (a syntax error right after one gets a hint)
_CANDIDATES = ("<=?", ">=?", "==?", "+?", "-?", "*?", "/?", "<?", ">?")

#: the operators a `rate(OP)` clause may name
_RATE_OPS = ("+.", "-.", "*.", "/.", "<.", "<=.", ">.", ">=.", "==.")


def _line(n: Any) -> int:
    return n.pos.line if n.pos else 0


def _col(n: Any) -> int:
    return n.pos.col if n.pos else 0


def _value_reliability(e: Optional[A.Expr]) -> Optional[A.ValueReliability]:
    """``reliability(x) >= E`` / ``reliability(x, y) >= E`` (Rely's ``R(x)``) as a
    :class:`lang.ast.ValueReliability`; None for the run-level ``reliability E``. The two cannot
    be confused: a run-level reliability is a number, never a comparison."""
    if not (isinstance(e, A.Binary) and e.op == ">="):
        return None
    left = e.left
    items = left.items if isinstance(left, A.TupleExpr) else (left,)
    names = []
    for it in items:
        if not isinstance(it, A.Var):
            raise ParseError(
                "value-level reliability names variables: `reliability(x, y) >= E`", line=_line(it), col=_col(it)
            )
        names.append(it.name)
    return A.ValueReliability(tuple(names), e.right, pos=e.pos)


def _fixed(op: str) -> Callable[[Any, Any, List[Any]], Any]:
    """The rule method of a binary operator spelled by the rule itself (``&&``, ``||`` …)."""

    def f(self: Any, meta: Any, ch: List[Any]) -> Any:
        return A.Binary(op, ch[0], ch[1], pos=_pos(meta))

    return f


def _invariants(items: List[Any]) -> Tuple[A.Expr, ...]:
    """The expressions of a loop's ``invariant`` clauses, in source order."""
    return tuple(e for _tag, e in items)


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):  # type: ignore[type-arg]
    """One method per grammar rule, building AST nodes with positions."""

    # ---------------------------------------------------------------- top level
    def start(self, meta: Any, progs: List[A.Program]) -> Tuple[A.Program, ...]:
        return tuple(progs)

    def expr_start(self, meta: Any, ch: List[Any]) -> Any:
        return ch[0]

    def program(self, meta: Any, ch: List[Any]) -> Any:
        name, *rest = ch
        params: List[A.Param] = []
        lists: Dict[str, List[A.Expr]] = {"requires": [], "ensures": []}
        clauses: Dict[str, A.Expr] = {}
        op_rates: List[A.OpRate] = []
        memory: List[A.Memory] = []
        body: Optional[A.Block] = None
        for x in rest:
            if isinstance(x, A.Param):
                params.append(x)
            elif isinstance(x, A.OpRate):
                if any(o.op == x.op for o in op_rates):
                    raise ParseError(f"duplicate 'rate({x.op})' clause", line=_line(x), col=_col(x))
                op_rates.append(x)
            elif isinstance(x, A.Memory):
                memory.append(x)
            elif isinstance(x, tuple) and len(x) == 3 and x[0] == "clause":
                _, kind, e = x
                if kind in ("requires", "ensures"):
                    lists[kind].append(e)
                else:
                    if kind in clauses:
                        raise ParseError(
                            f"duplicate '{kind}' clause", line=e.pos.line if e.pos else 0, col=e.pos.col if e.pos else 0
                        )
                    clauses[kind] = e
            elif isinstance(x, A.Block):
                body = x
        assert body is not None, "the grammar requires a body"
        value_rel = _value_reliability(clauses.get("reliability"))
        if value_rel is not None:
            del clauses["reliability"]
        return A.Program(
            str(name),
            tuple(params),
            body,
            tuple(lists["requires"]),
            tuple(lists["ensures"]),
            clauses.get("fails"),
            clauses.get("rate"),
            clauses.get("reliability"),
            clauses.get("neighbours"),
            clauses.get("private"),  # type: ignore[arg-type]
            tuple(op_rates),
            tuple(memory),
            value_rel,
            pos=A.Pos(name.line, name.column),
        )

    def param(self, meta: Any, ch: List[Any]) -> Any:
        name, ty = ch
        return A.Param(str(name), ty, pos=_tpos(name))

    def type(self, meta: Any, ch: List[Any]) -> Any:
        base = A.Type(str(ch[0]))
        return A.array_of(base) if ch[1] is not None else base

    def fairness(self, meta: Any, ch: List[Any]) -> Any:
        kind, target, group, qual = ch
        # The threshold comparison is the last one written: `… given S >= c` or `… when Q >= c`.
        last = qual if qual is not None else group
        if not (isinstance(last, A.Binary) and last.op in ("<", "<=", ">", ">=")):
            raise ParseError(
                f"'{kind}' needs a threshold: `{kind} T given S >= 0.85` (parenthesise comparisons inside S)",
                line=kind.line,
                col=kind.column,
            )
        op, threshold = last.op, last.right
        if qual is not None:
            qual = last.left
        else:
            group = last.left
        pos = A.Pos(kind.line, kind.column, meta.end_line, meta.end_column)
        return ("clause", "ensures", A.Fairness(str(kind), target, group, qual, op, threshold, pos=pos))

    requires = _clause("requires")
    ensures = _clause("ensures")
    fails = _clause("fails")
    rate = _clause("rate")
    reliability = _clause("reliability")
    neighbours = _clause("neighbours")

    def op_rate(self, meta: Any, ch: List[Any]) -> Any:
        op, e = ch
        if op not in _RATE_OPS:
            raise ParseError(
                f"'rate({op})': a rate is given for an unreliable operator ({', '.join(_RATE_OPS)})",
                line=meta.line,
                col=meta.column,
            )
        return A.OpRate(str(op), e, pos=_pos(meta))

    def rate_op(self, meta: Any, ch: List[Any]) -> Any:
        return str(ch[0])

    def cand_mark(self, meta: Any, ch: List[Any]) -> Any:
        return True

    def memory(self, meta: Any, ch: List[Any]) -> Any:
        cand, e, *names = ch
        return A.Memory(tuple(str(n) for n in names), e, bool(cand), pos=_pos(meta))

    def private(self, meta: Any, ch: List[Any]) -> Any:
        eps, delta, *names = ch
        outs = tuple(str(n) for n in names if n is not None)
        return ("clause", "private", A.Private(eps, delta, outs, pos=_pos(meta)))

    # ---------------------------------------------------------------- statements
    def block(self, meta: Any, ch: List[Any]) -> Any:
        return A.Block(tuple(ch), pos=_pos(meta))

    def assign(self, meta: Any, ch: List[Any]) -> Any:
        return A.Assign(ch[0], ch[1], pos=_pos(meta))

    def sample(self, meta: Any, ch: List[Any]) -> Any:
        return A.Sample(ch[0], ch[1], pos=_pos(meta))

    def targets(self, meta: Any, ch: List[Any]) -> Any:
        return tuple(ch)

    def index_lv(self, meta: Any, ch: List[Any]) -> Any:
        name, idx = ch
        return A.Index(A.Var(str(name), pos=_tpos(name)), idx, pos=_pos(meta))

    def dist(self, meta: Any, ch: List[Any]) -> Any:
        name, *args = ch
        return A.Call(str(name), tuple(a for a in args if a is not None), pos=_pos(meta))

    def if_stmt(self, meta: Any, ch: List[Any]) -> Any:
        cond, then, other = ch
        if isinstance(other, A.If):  # else if
            other = A.Block((other,), pos=other.pos)
        return A.If(cond, then, other, pos=_pos(meta))

    def invariant(self, meta: Any, ch: List[Any]) -> Any:
        return ("invariant", ch[0])

    def while_stmt(self, meta: Any, ch: List[Any]) -> Any:
        cond, *invs, body = ch
        return A.While(cond, body, _invariants(invs), pos=_pos(meta))

    def for_stmt(self, meta: Any, ch: List[Any]) -> Any:
        name, (lo, hi, incl), *invs, body = ch
        return A.For(str(name), lo, hi, incl, body, _invariants(invs), pos=_pos(meta))

    def assume(self, meta: Any, ch: List[Any]) -> Any:
        return A.Assume(ch[0], pos=_pos(meta))

    def skip(self, meta: Any, ch: List[Any]) -> Any:
        return A.Skip(pos=_pos(meta))

    def var_decl(self, meta: Any, ch: List[Any]) -> Any:
        return A.VarDecl(str(ch[0]), ch[1], pos=_pos(meta))

    def range(self, meta: Any, ch: List[Any]) -> Any:
        lo, dots, hi = ch
        return (lo, hi, str(dots) == "..=")

    # ---------------------------------------------------------------- expressions
    def number(self, meta: Any, ch: List[Any]) -> Any:
        try:
            n = parse_number(str(ch[0]))
        except ValueError as exc:
            raise ParseError(str(exc), line=meta.line, col=meta.column) from None
        return A.Num(n.value, n.is_int, n.text, pos=_pos(meta))

    def true(self, meta: Any, ch: List[Any]) -> Any:
        return A.BoolLit(True, pos=_pos(meta))

    def false(self, meta: Any, ch: List[Any]) -> Any:
        return A.BoolLit(False, pos=_pos(meta))

    def var(self, meta: Any, ch: List[Any]) -> Any:
        return A.Var(str(ch[0]), pos=_pos(meta))

    def primed(self, meta: Any, ch: List[Any]) -> Any:
        return A.Var(str(ch[0]) + "'", pos=_pos(meta))

    def index(self, meta: Any, ch: List[Any]) -> Any:
        return A.Index(ch[0], ch[1], pos=_pos(meta))

    def call(self, meta: Any, ch: List[Any]) -> Any:
        name, *args = ch
        actual = tuple(a for a in args if a is not None)
        if str(name) == "pow" and len(actual) != 2:
            raise ParseError(
                f"pow takes 2 arguments (base, exponent), but {len(actual)} given", line=meta.line, col=meta.column
            )
        if str(name) == "pow":
            # pow(b, e) is exp(e * log(b)): defined for b > 0 (log's domain check applies), so
            # Rely's (1 - r)^N is written pow(1 - r, N) and every engine reads it as it reads exp.
            base, expo = actual
            log_b = A.Call("log", (base,), pos=_pos(meta))
            return A.Call("exp", (A.Binary("*", expo, log_b, pos=_pos(meta)),), pos=_pos(meta))
        return A.Call(str(name), actual, pos=_pos(meta))

    def neg(self, meta: Any, ch: List[Any]) -> Any:
        return A.Unary("-", ch[0], pos=_pos(meta))

    def not_(self, meta: Any, ch: List[Any]) -> Any:
        return A.Unary("!", ch[0], pos=_pos(meta))

    def binop(self, meta: Any, ch: List[Any]) -> Any:
        left, op, right = ch
        return A.Binary(str(op), left, right, pos=_pos(meta))

    def compare(self, meta: Any, ch: List[Any]) -> Any:
        return self.binop(meta, ch)

    and_ = _fixed("&&")
    or_ = _fixed("||")
    implies = _fixed("==>")
    iff = _fixed("<==>")

    def cond(self, meta: Any, ch: List[Any]) -> Any:
        return A.Cond(ch[0], ch[1], ch[2], pos=_pos(meta))

    def quantifier(self, meta: Any, ch: List[Any]) -> Any:
        kind, name, (lo, hi, incl), body = ch
        return A.Quant(str(kind), str(name), lo, hi, incl, body, pos=_pos(meta))

    def sum(self, meta: Any, ch: List[Any]) -> Any:
        name, (lo, hi, incl), body = ch
        return A.Sum(str(name), lo, hi, incl, body, pos=_pos(meta))

    def prob(self, meta: Any, ch: List[Any]) -> Any:
        return A.Prob(ch[0], ch[1], pos=_pos(meta))

    def hole(self, meta: Any, ch: List[Any]) -> Any:
        return A.Hole(pos=_pos(meta))

    def independent(self, meta: Any, ch: List[Any]) -> Any:
        e, name, values = ch
        return A.Independent(e, str(name), values.items if values is not None else None, pos=_pos(meta))

    def tuple(self, meta: Any, ch: List[Any]) -> Any:
        return A.TupleExpr(tuple(ch), pos=_pos(meta))

    def set_lit(self, meta: Any, ch: List[Any]) -> Any:
        return A.SetLit(tuple(c for c in ch if c is not None), pos=_pos(meta))

    def list(self, meta: Any, ch: List[Any]) -> Any:
        return A.ListLit(tuple(c for c in ch if c is not None), pos=_pos(meta))


# --------------------------------------------------------------------------- error messages

KEYWORDS = frozenset(
    (
        "program requires ensures fails rate reliability unreliable neighbours private if else while for in invariant assume skip var true "
        "false forall exists sum div mod independent fairness parity given when P bool int real"
    ).split()
)

# Words that are keywords only in one clause (`on` in `private E on x`), names elsewhere.
SOFT_KEYWORDS = frozenset(("on",))

# Human names of the terminals whose spelling is a pattern (the others print as their text).
_TERMINAL_NAMES = {
    "$END": "end of input",
    "NAME": "a name",
    "NUMBER": "a number",
    "CMPOP": "a comparison",
    "ADDOP": "'+'",
    "MULOP": "'*'",
    "DOTDOT": "'..'",
    "BASETYPE": "a type (bool, int, real)",
    "QUANT": "'forall'",
    "FAIRNESS": "'fairness'",
    "ARRAY": "'[]'",
}
_STATEMENT_START = {"if", "while", "for", "assume", "skip", "var"}
_EXPRESSION_START = {"NAME", "NUMBER", "(", "-", "!", "true", "false", "QUANT", "sum", "P", "independent", "[", "{"}
_OPERATORS = {"ADDOP", "MULOP", "CMPOP", "<==>", "==>", "||", "&&", "?"}
_CLAUSES = {"requires", "ensures", "fails", "rate", "reliability", "unreliable", "neighbours", "private"}
_MAX_EXPECTED = 5


@lru_cache(maxsize=1)
def _terminal_text() -> Dict[str, str]:
    """Terminal name -> its literal spelling (for terminals that are plain strings)."""
    return {t.name: t.pattern.value for t in _parser().terminals if isinstance(t.pattern, PatternStr)}


def _key(terminal: str) -> str:
    """A terminal as the sets above name it: its spelling if literal, else its name."""
    return str(_terminal_text().get(terminal, terminal))


def _show(key: str) -> str:
    return _TERMINAL_NAMES.get(key, f"'{key}'")


def expected_text(terminals: Iterable[str]) -> str:
    """A short, human list of what could come next: "a statement or '}'"."""
    keys = {_key(t) for t in terminals}
    items = []
    if _STATEMENT_START <= keys:
        items.append("a statement")
        keys -= _STATEMENT_START | {"NAME", "("}
    if len(keys & _EXPRESSION_START) >= 5:
        items.append("an expression")
        keys -= _EXPRESSION_START | {"?"}  # `?` (a value to infer) starts an expression too
    if len(keys & _OPERATORS) >= 3:
        items.append("an operator")
        keys -= _OPERATORS
    if _CLAUSES <= keys:
        items.append("a clause (requires, ensures, fails, rate, reliability, unreliable, neighbours, private)")
        keys -= _CLAUSES
    items += sorted((_show(k) for k in keys), key=lambda x: (x == "end of input", x))
    if not items:
        return ""
    if len(items) > _MAX_EXPECTED:
        items = items[: _MAX_EXPECTED - 1] + ["…"]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


def _show_char(ch: str) -> str:
    if ch.isprintable() and ch not in "'\\":
        return f"'{ch}'"
    return repr(ch) if ch != "'" else '"\'"'


def _char_hint(ch: str) -> str:
    if ch == "=":
        return " ('=' alone is not an operator: write ':=' to assign or '==' to compare)"
    if ch in "\"'":
        return " (the language has no strings)"
    if ch == "&" or ch == "|":
        return f" (write '{ch}{ch}')"
    return ""


def _line_col(text: str, offset: int) -> Tuple[int, int]:
    """1-based line and column of character ``offset`` (lines split at '\\n' only, as lark does)."""
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _end_position(text: str) -> Tuple[int, int]:
    """Where "end of input" errors point: just after the last non-blank character."""
    return _line_col(text, len(text.rstrip()))


def _offset(text: str, line: int, col: int) -> int:
    start = 0
    for _ in range(line - 1):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    return start + col - 1


def _syntax_error(exc: UnexpectedInput, path: str, text: str) -> ParseError:
    """One clear message for a lark error."""
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END" or isinstance(exc, UnexpectedEOF):
        line, col = _end_position(text)
        exp = expected_text(getattr(exc, "accepts", None) or exc.expected or ())
        msg = "unexpected end of input" + (f"; expected {exp}" if exp else "")
        return ParseError(msg, path, line, col, text)
    line, col = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    offset = _offset(text, line, col)
    if text.startswith("/*", offset):
        return ParseError("unterminated comment: '/*' has no closing '*/'", path, line, col, text)
    if isinstance(exc, UnexpectedCharacters):
        ch = text[offset] if offset < len(text) else ""
        return ParseError(f"unexpected character {_show_char(ch)}{_char_hint(ch)}", path, line, col, text)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        terminals = exc.accepts or exc.expected or ()
        before = text[:offset].rstrip()
        cand = next((c for c in _CANDIDATES if before.endswith(c)), None)
        if cand is not None and "NAME" in terminals:
            # `n*r+?`: the candidate operator `+?` (tamp place), not `+` and a value to infer
            k = len(before) - len(cand)
            pl, pc = _line_col(text, k)
            return ParseError(
                f"'{cand}' is a candidate operator (for `tamp place`); for a value to infer write "
                f"'{cand[:-1]} ?' with a space",
                path,
                pl,
                pc,
                text,
            )
        if str(tok) in KEYWORDS and "NAME" in terminals:
            return ParseError(f"'{tok}' is a keyword and cannot be used as a name", path, line, col, text)
        exp = expected_text(terminals)
        shown = str(tok) if len(str(tok)) <= 40 else str(tok)[:37] + "..."
        msg = f"unexpected '{shown}'" + (f"; expected {exp}" if exp else "")
        return ParseError(msg, path, line, col, text)
    return ParseError(str(exc).splitlines()[0], path, line, col, text)


# --------------------------------------------------------------------------- entry points


def _check_nesting(result: Any, path: str, text: str) -> None:
    """Refuse ASTs nested deeper than MAX_DEPTH levels (the recursive passes could not handle
    them). A chain of binary operators written without parentheses (``a + b + c + …``, the
    left-deep tree every pass walks iteratively) is one level however long it is; nesting is
    parentheses on the right, unary operators, calls, quantifiers and statements in blocks."""
    node = nesting_overflow(result, MAX_DEPTH)
    if node is not None:
        pos = getattr(node, "pos", None)
        line, col = (pos.line, pos.col) if pos is not None else (1, 1)
        raise ParseError(f"the program is nested too deeply (more than {MAX_DEPTH} levels)", path, line, col, text)


def _duplicate_programs(progs: Iterable[A.Program], path: str, text: str) -> None:
    seen: Dict[str, A.Program] = {}
    for p in progs:
        if p.name in seen:
            first = seen[p.name].pos
            at = f" (the first is at line {first.line})" if first is not None else ""
            raise error_at(ParseError, f"duplicate program name '{p.name}'{at}", p.pos, path, text)
        seen[p.name] = p


def _driver() -> Optional[Driver]:
    """The fast LALR driver over the tables of :func:`_parser` (built once per parser; None if
    this lark cannot provide them, see :data:`DRIVER_ERROR`)."""
    global DRIVER_ERROR, _DRIVER_FOR
    lark_parser = _parser()
    if _DRIVER_FOR is not None and _DRIVER_FOR[0] is lark_parser:
        return _DRIVER_FOR[1]
    drv: Optional[Driver] = None
    try:
        drv = Driver(lark_parser, _ToAst(), tuple(sorted(KEYWORDS)), tuple(sorted(SOFT_KEYWORDS)))
    except (AttributeError, KeyError, TypeError, Fallback) as exc:  # pragma: no cover - another lark
        DRIVER_ERROR = exc
    _DRIVER_FOR = (lark_parser, drv)
    return drv


_DRIVER_FOR: Optional[Tuple[Lark, Optional[Driver]]] = None
DRIVER_ERROR: Optional[Exception] = None  # why the fast driver is not available, if it is not


def _run(text: str, path: str, start: str) -> Any:
    """Parse ``text`` from grammar rule ``start`` and build the AST: the fast driver first,
    lark's own parser (and its error reporting) when the driver gives up."""
    if not isinstance(text, str):
        raise ParseError("the input is not text", path)
    with paused_gc():
        return _parse_text(text, path, start)


def _parse_text(text: str, path: str, start: str) -> Any:
    result = None
    drv = _driver()
    if drv is not None:
        try:
            result = drv.parse(text, start)
        except Fallback:
            result = None
        except TampError as exc:
            raise exc.with_source(path, text) from None
    if result is None:
        result = _run_lark(text, path, start)
    _check_nesting(result, path, text)
    return result


def _run_lark(text: str, path: str, start: str) -> Any:
    try:
        tree = _parser().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, path, text) from None
    except RecursionError:  # pragma: no cover - lark's LALR parser and the transformer do not recurse
        raise ParseError(f"the program is nested too deeply (more than {MAX_DEPTH} levels)", path, 1, 1, text) from None
    try:
        return _ToAst().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, TampError):
            raise exc.orig_exc.with_source(path, text) from None
        raise


def parse(text: str, path: str = "<string>") -> A.SourceFile:
    """Parse a whole `.prob` file. Raises :class:`ParseError` (never anything else for bad text)."""
    progs = _run(text, path, "start")
    _duplicate_programs(progs, path, text)
    return A.SourceFile(tuple(progs), path, text)


def parse_file(path: str) -> A.SourceFile:
    """Read and parse a file; an unreadable file or invalid UTF-8 is a :class:`ParseError` too
    (:func:`lang.loader.load` also type-checks)."""
    return parse(read_text(path), str(path))


def parse_expr(text: str, path: str = "<expr>") -> A.Expr:
    """Parse a single expression (for ``--bound`` and ``--input``). Raises :class:`ParseError`."""
    out: A.Expr = _run(text, path, "expr_start")
    return out
