"""Parse `.prob` source text into the AST of :mod:`lang.ast`.

>>> f = parse("program p(n: int) ensures n >= 0 { x := n; }")
>>> f.programs[0].body.stmts[0]
Assign(targets=(Var(name='x'),), value=Var(name='n'))

Errors are raised as :class:`lang.errors.ParseError` with file, line and column.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast as A
from .errors import ParseError, TampError

_GRAMMAR = Path(__file__).with_name("grammar.lark")

# Readable names for the grammar's terminals in "expected …" messages.
_TOKEN_NAMES = {
    "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'",
    "SEMICOLON": "';'", "COMMA": "','", "COLON": "':'", "NAME": "a name", "NUMBER": "a number",
    "CMPOP": "a comparison", "ADDOP": "'+' or '-'", "MULOP": "'*' or '/'", "DOTDOT": "'..'",
    "TILDE": "'~'", "__ANON_0": "':='", "BASETYPE": "a type", "QUANT": "'forall' or 'exists'",
    "VBAR": "'|'", "QMARK": "'?'", "MINUS": "'-'", "BANG": "'!'",
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(_GRAMMAR.read_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _pos(meta) -> A.Pos | None:
    if getattr(meta, "empty", True):
        return None
    return A.Pos(meta.line, meta.column, meta.end_line, meta.end_column)


def _tpos(tok: Token) -> A.Pos:
    return A.Pos(tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column)


def parse_number(text: str) -> A.Num:
    """An exact literal: ``42`` (int), ``0.5`` = 1/2, ``1e-7`` = 1/10^7 (reals)."""
    is_int = all(c.isdigit() for c in text)
    return A.Num(Fraction(text), is_int, text)


@v_args(meta=True)
class _ToAst(Transformer):
    """One method per grammar rule, building AST nodes with positions."""

    # ---------------------------------------------------------------- top level
    def start(self, meta, progs):
        return tuple(progs)

    def program(self, meta, ch):
        name, *rest = ch
        params, clauses, body = [], {"requires": [], "ensures": []}, None
        for x in rest:
            if isinstance(x, A.Param):
                params.append(x)
            elif isinstance(x, tuple) and len(x) == 3 and x[0] == "clause":
                _, kind, e = x
                if kind in ("requires", "ensures"):
                    clauses[kind].append(e)
                else:
                    if kind in clauses:
                        raise ParseError(f"duplicate '{kind}' clause", line=e.pos.line if e.pos else 0,
                                         col=e.pos.col if e.pos else 0)
                    clauses[kind] = e
            elif isinstance(x, A.Block):
                body = x
        return A.Program(str(name), tuple(params), body, tuple(clauses["requires"]),
                         tuple(clauses["ensures"]), clauses.get("fails"), clauses.get("rate"),
                         clauses.get("reliability"), pos=A.Pos(name.line, name.column))

    def param(self, meta, ch):
        name, ty = ch
        return A.Param(str(name), ty, pos=_tpos(name))

    def type(self, meta, ch):
        base = A.Type(str(ch[0]))
        return A.array_of(base) if ch[1] is not None else base

    def _clause(kind):
        def f(self, meta, ch):
            return ("clause", kind, ch[0])
        return f

    def fairness(self, meta, ch):
        kind, target, group, qual = ch
        # The threshold comparison is the last one written: `… given S >= c` or `… when Q >= c`.
        last = qual if qual is not None else group
        if not (isinstance(last, A.Binary) and last.op in ("<", "<=", ">", ">=")):
            raise ParseError(f"'{kind}' needs a threshold: `{kind} T given S >= 0.85` "
                             "(parenthesise comparisons inside S)",
                             line=meta.line, col=meta.column)
        op, threshold = last.op, last.right
        if qual is not None:
            qual = last.left
        else:
            group = last.left
        return ("clause", "ensures", A.Fairness(str(kind), target, group, qual, op, threshold, pos=_pos(meta)))

    requires = _clause("requires")
    ensures = _clause("ensures")
    fails = _clause("fails")
    rate = _clause("rate")
    reliability = _clause("reliability")

    # ---------------------------------------------------------------- statements
    def block(self, meta, ch):
        return A.Block(tuple(ch), pos=_pos(meta))

    def assign(self, meta, ch):
        return A.Assign(ch[0], ch[1], pos=_pos(meta))

    def sample(self, meta, ch):
        return A.Sample(ch[0], ch[1], pos=_pos(meta))

    def targets(self, meta, ch):
        return tuple(ch)

    def index_lv(self, meta, ch):
        name, idx = ch
        return A.Index(A.Var(str(name), pos=_tpos(name)), idx, pos=_pos(meta))

    def dist(self, meta, ch):
        name, *args = ch
        args = tuple(a for a in args if a is not None)
        return A.Call(str(name), args, pos=_pos(meta))

    def if_stmt(self, meta, ch):
        cond, then, other = ch
        if isinstance(other, A.If):  # else if
            other = A.Block((other,), pos=other.pos)
        return A.If(cond, then, other, pos=_pos(meta))

    def while_stmt(self, meta, ch):
        return A.While(ch[0], ch[1], pos=_pos(meta))

    def for_stmt(self, meta, ch):
        name, (lo, hi, incl), body = ch
        return A.For(str(name), lo, hi, incl, body, pos=_pos(meta))

    def assume(self, meta, ch):
        return A.Assume(ch[0], pos=_pos(meta))

    def skip(self, meta, ch):
        return A.Skip(pos=_pos(meta))

    def var_decl(self, meta, ch):
        return A.VarDecl(str(ch[0]), ch[1], pos=_pos(meta))

    def range(self, meta, ch):
        lo, dots, hi = ch
        return (lo, hi, str(dots) == "..=")

    # ---------------------------------------------------------------- expressions
    def number(self, meta, ch):
        n = parse_number(str(ch[0]))
        return A.Num(n.value, n.is_int, n.text, pos=_pos(meta))

    def true(self, meta, ch):
        return A.BoolLit(True, pos=_pos(meta))

    def false(self, meta, ch):
        return A.BoolLit(False, pos=_pos(meta))

    def var(self, meta, ch):
        return A.Var(str(ch[0]), pos=_pos(meta))

    def index(self, meta, ch):
        return A.Index(ch[0], ch[1], pos=_pos(meta))

    def call(self, meta, ch):
        name, *args = ch
        return A.Call(str(name), tuple(a for a in args if a is not None), pos=_pos(meta))

    def neg(self, meta, ch):
        return A.Unary("-", ch[0], pos=_pos(meta))

    def not_(self, meta, ch):
        return A.Unary("!", ch[0], pos=_pos(meta))

    def binop(self, meta, ch):
        left, op, right = ch
        return A.Binary(str(op), left, right, pos=_pos(meta))

    def compare(self, meta, ch):
        return self.binop(meta, ch)

    def _fixed(op):
        def f(self, meta, ch):
            return A.Binary(op, ch[0], ch[1], pos=_pos(meta))
        return f

    and_ = _fixed("&&")
    or_ = _fixed("||")
    implies = _fixed("==>")
    iff = _fixed("<==>")

    def cond(self, meta, ch):
        return A.Cond(ch[0], ch[1], ch[2], pos=_pos(meta))

    def quantifier(self, meta, ch):
        kind, name, (lo, hi, incl), body = ch
        return A.Quant(str(kind), str(name), lo, hi, incl, body, pos=_pos(meta))

    def sum(self, meta, ch):
        name, (lo, hi, incl), body = ch
        return A.Sum(str(name), lo, hi, incl, body, pos=_pos(meta))

    def prob(self, meta, ch):
        return A.Prob(ch[0], ch[1], pos=_pos(meta))

    def independent(self, meta, ch):
        e, name, values = ch
        return A.Independent(e, str(name), values.items if values is not None else None, pos=_pos(meta))

    def tuple(self, meta, ch):
        return A.TupleExpr(tuple(ch), pos=_pos(meta))

    def set_lit(self, meta, ch):
        return A.SetLit(tuple(c for c in ch if c is not None), pos=_pos(meta))

    def list(self, meta, ch):
        return A.ListLit(tuple(c for c in ch if c is not None), pos=_pos(meta))


def _expected(exc: UnexpectedInput) -> str:
    exp = sorted({_TOKEN_NAMES.get(t, repr(t.lower()) if t.isupper() else t) for t in (exc.expected or ())}
                 if hasattr(exc, "expected") else set())
    if not exp:
        return ""
    if len(exp) > 6:
        exp = exp[:6] + ["…"]
    return "; expected " + ", ".join(exp)


def _syntax_error(exc: UnexpectedInput, path: str, text: str) -> ParseError:
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "end of input"
        msg = f"unexpected character {ch!r}"
        return ParseError(msg, path, exc.line, exc.column, text)
    if isinstance(exc, UnexpectedEOF):
        lines = text.splitlines() or [""]
        return ParseError("unexpected end of input" + _expected(exc), path, len(lines), len(lines[-1]) + 1, text)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            return ParseError("unexpected end of input" + _expected(exc), path, len(lines),
                              len(lines[-1]) + 1, text)
        # lark's expected set is huge for LALR; keep the message short
        exp = exc.accepts if getattr(exc, "accepts", None) else exc.expected
        exc2 = type("E", (), {"expected": exp})()
        return ParseError(f"unexpected {str(tok)!r}" + _expected(exc2), path, tok.line, tok.column, text)
    return ParseError(str(exc).splitlines()[0], path, getattr(exc, "line", 0), getattr(exc, "column", 0), text)


def parse(text: str, path: str = "<string>") -> A.SourceFile:
    """Parse a whole `.prob` file. Raises :class:`ParseError`."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, path, text) from None
    except RecursionError:
        raise ParseError("input is nested too deeply", path, 1, 1, text) from None
    try:
        progs = _ToAst().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, TampError):
            raise exc.orig_exc.with_source(path, text) from None
        raise
    except RecursionError:
        raise ParseError("input is nested too deeply", path, 1, 1, text) from None
    return A.SourceFile(tuple(progs), path, text)


def parse_file(path: str) -> A.SourceFile:
    """Read and parse a file; an unreadable file is a :class:`ParseError` too."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParseError(f"cannot read file: {exc.strerror if isinstance(exc, OSError) else exc}", path) from None
    return parse(text, path)


def parse_expr(text: str, path: str = "<expr>") -> A.Expr:
    """Parse a single expression (for ``--bound`` and ``--input``)."""
    src = f"program __e__() ensures {text} {{ }}"
    try:
        f = parse(src, path)
    except ParseError as e:
        # re-locate the column into the expression text
        col = max(e.col - len("program __e__() ensures "), 1)
        raise ParseError(e.message, path, 1, col, text) from None
    return f.programs[0].ensures[0] if f.programs[0].ensures else None
