"""A lean LALR(1) driver over lark's own tables: the fast path of :mod:`lang.parser`.

lark builds the parse tables from ``grammar.lark`` (the one grammar of the language) and its
tree builder decides which children a rule keeps (anonymous tokens dropped, ``?rule`` inlined,
``[x]`` placeholders, ``_rule`` helpers spliced). Driving those tables here, instead of through
``Lark.parse`` plus a tree transformer, builds the AST directly while parsing: no intermediate
tree, no second pass, no per-node position bookkeeping (every stack entry carries its source
span, and a node's position is the span of its reduction, as lark's ``propagate_positions``
computes it). On 20,000 one-line statements this is several times faster than the tree path.

The driver is an optimisation, not a second grammar: on any input it cannot handle (a lexeme
it does not know, a syntax error) it raises :class:`Fallback` and :mod:`lang.parser` parses the
text with lark itself, which then also produces the error message. Equivalence of the two
paths (ASTs and positions) is tested on every program of the repository and on generated
programs (``tests/lang/test_lang_fastpath.py``).

>>> from lang.parser import _parser, _ToAst
>>> drv = Driver(_parser(), _ToAst())
>>> drv.parse("a + 2 * b", "expr_start")
Binary(op='+', left=Var(name='a'), right=Binary(op='*', left=Num(value=Fraction(2, 1), is_int=True), right=Var(name='b')))
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from lark import Lark, Token, Tree
from lark.parse_tree_builder import ParseTreeBuilder
from lark.parsers.lalr_analysis import Shift

Tok = Tuple[Tuple[str, ...], str, int, int, int, int]  # (candidate types, value, offset, line, col, end col)
Span = Tuple[int, int, int, int]  # line, column, end line, end column


class Fallback(Exception):
    """The fast path cannot parse this text; lark's own parser decides (and explains errors)."""


# One lexeme at a time, longest operators first; the token *type* is chosen afterwards from
# the lexeme and what the parser state accepts (``-`` is binary ADDOP or unary MINUS).
_LEXEME = re.compile(
    r"""
    (?P<ws>[ \t\f\r\n]+)
  | (?P<comment>/\*[\s\S]*?\*/|//[^\n]*)
  | (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<array>\[[ \t]*\])
  | (?P<op><==>|==>|<=[.?]|>=[.?]|==[.?]|\.\.=|\.\.|:=|==|!=|<=|>=|&&|\|\||[-+*/<>][.?]|[-+*/<>!?:;,()\[\]{}|~'])
""",
    re.X,
)

_OPS = (
    "<==> ==> ..= .. := == != <= >= && || +. -. *. /. <. >. <=. >=. ==. +? -? *? /? <? >? <=? >=? ==? "
    "- + * / < > ! ? : ; , ( ) [ ] { } | ~ '"
).split()


class _Meta:
    """The position of the reduction being built (what lark's ``meta`` would hold)."""

    __slots__ = ("empty", "line", "column", "end_line", "end_column")

    def __init__(self) -> None:
        self.empty = True
        self.line = self.column = self.end_line = self.end_column = 0


class Driver:
    """Parses with ``lark_parser``'s LALR tables, calling ``builder``'s rule methods (written
    for lark's ``v_args(meta=True)``: ``method(meta, children)``) on each reduction."""

    def __init__(
        self, lark_parser: Lark, builder: Any, keywords: Tuple[str, ...] = (), soft_keywords: Tuple[str, ...] = ()
    ):
        table = lark_parser.parser.parser.parser.parse_table
        self.states: Dict[Any, Dict[str, Tuple[Any, Any]]] = table.states
        self.start_states = table.start_states
        self.end_states = table.end_states
        self.meta = _Meta()
        conf = getattr(lark_parser, "lexer_conf", None)  # a Lark loaded from its cache has no ignore_tokens
        ignore = set(getattr(lark_parser, "ignore_tokens", None) or getattr(conf, "ignore", None) or ())
        terminals = [t for t in lark_parser.terminals if t.name not in ignore]
        self.word_types = _word_types(terminals, keywords)
        for w in soft_keywords:  # a keyword in one clause, a name elsewhere: tried in that order
            self.word_types[w] = _types_of(w, terminals)
        self.op_types = {op: _types_of(op, terminals) for op in _OPS}
        self.number_type = ("NUMBER",)
        self.name_type = ("NAME",)
        adapter = _Adapter(builder, self.meta)
        builder_ = ParseTreeBuilder(lark_parser.rules, Tree, False, False, True)  # type: ignore[no-untyped-call]
        callbacks = builder_.create_callback(adapter)  # type: ignore[no-untyped-call]
        # per rule: (size, goto symbol, callback or None for a pure pass-through ?rule)
        self.rules: Dict[Any, Tuple[int, str, Optional[Callable[[List[Any]], Any]]]] = {}
        for rule in lark_parser.rules:
            exp = rule.expansion
            passthrough = (
                rule.options.expand1
                and not rule.alias
                and len(exp) == 1
                and not (exp[0].is_term and getattr(exp[0], "filter_out", False))
                and not (not exp[0].is_term and exp[0].name.startswith("_"))
                and not rule.options.empty_indices
            )
            self.rules[rule] = (len(exp), str(rule.origin.name), None if passthrough else callbacks[rule])

    # ---------------------------------------------------------------- lexing
    def tokens(self, text: str) -> Iterator[Tok]:
        """(candidate types, value, line, column, end column) of each token, then the end."""
        line, line_start = 1, 0
        match = _LEXEME.match
        pos, n = 0, len(text)
        word_types, op_types = self.word_types, self.op_types
        while pos < n:
            m = match(text, pos)
            if m is None:
                raise Fallback()
            kind = m.lastgroup
            value = m.group()
            end = m.end()
            if kind == "ws" or kind == "comment":
                nl = value.count("\n")
                if nl:
                    line += nl
                    line_start = pos + value.rindex("\n") + 1
                pos = end
                continue
            col = pos - line_start + 1
            if kind == "word":
                types = word_types.get(value, self.name_type)
            elif kind == "num":
                types = self.number_type
            elif kind == "op":
                types = op_types[value]
            else:
                types = ("ARRAY",)
            yield types, value, pos, line, col, col + len(value)
            pos = end
        yield ("$END",), "", pos, line, pos - line_start + 1, pos - line_start + 1

    # ---------------------------------------------------------------- parsing
    def parse(self, text: str, start: str) -> Any:
        states, rules, meta = self.states, self.rules, self.meta
        end_state = self.end_states[start]
        st: List[Any] = [self.start_states[start]]  # parser states
        vals: List[Any] = []  # semantic values
        spans: List[Optional[Span]] = []  # (line, col, end_line, end_col) or None
        for types, value, offset, line, col, end_col in self._split_arrays(self.tokens(text), st):
            while True:
                acts = states[st[-1]]
                for ttype in types:
                    act = acts.get(ttype)
                    if act is not None:
                        break
                else:
                    raise Fallback()
                action, arg = act
                if action is Shift:
                    st.append(arg)
                    vals.append(Token(ttype, value, offset, line, col, line, end_col, offset + len(value)))
                    spans.append((line, col, line, end_col))
                    break
                size, origin, callback = rules[arg]
                if callback is None:  # `?a: b` with one child: the value and its span pass through
                    del st[-1]
                else:
                    if size:
                        children = vals[-size:]
                        sp = spans[-size:]
                        del st[-size:], vals[-size:], spans[-size:]
                        first = sp[0] if sp[0] is not None else next((s for s in sp if s is not None), None)
                    else:
                        children, sp, first = [], [], None
                    if first is None:
                        meta.empty = True
                        span = None
                    else:
                        last = sp[-1] if sp[-1] is not None else next(s for s in reversed(sp) if s is not None)
                        meta.empty = False
                        meta.line, meta.column, meta.end_line, meta.end_column = span = (
                            first[0],
                            first[1],
                            last[2],
                            last[3],
                        )
                    vals.append(callback(children))
                    spans.append(span)
                nxt = states[st[-1]][origin][1]
                st.append(nxt)
                if nxt == end_state and ttype == "$END":
                    return vals[-1]
        raise Fallback()  # pragma: no cover - $END always ends the loop above

    def _split_arrays(self, tokens: Iterable[Tok], st: List[Any]) -> Iterator[Tok]:
        """``[ ]`` is ARRAY after a base type and an empty list ``[`` ``]`` elsewhere."""
        states = self.states
        for tok in tokens:
            if tok[0] == ("ARRAY",) and "ARRAY" not in states[st[-1]]:
                _types, value, offset, line, col, end_col = tok
                inner = len(value) - 1
                yield ("LSQB",), "[", offset, line, col, col + 1
                yield ("RSQB",), "]", offset + inner, line, col + inner, end_col
            else:
                yield tok


_MORE = object()


class _Adapter:
    """Exposes ``builder``'s ``method(meta, children)`` as lark's inline ``method(children)``,
    with the driver's current position as ``meta``."""

    def __init__(self, builder: Any, meta: _Meta):
        self._builder = builder
        self._meta = meta

    def __getattr__(self, name: str) -> Callable[[List[Any]], Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._builder, name)  # AttributeError: lark builds a Tree (helper rules)
        base = getattr(method, "base_func", method)  # the undecorated bound method
        meta = self._meta

        def call(children: List[Any]) -> Any:
            return base(meta, children)

        return call


def _types_of(lexeme: str, terminals: Iterable[Any]) -> Tuple[str, ...]:
    """The terminals whose pattern matches the whole ``lexeme`` (string terminals first)."""
    out = [str(t.name) for t in terminals if t.pattern.type == "str" and t.pattern.value == lexeme]
    out += [str(t.name) for t in terminals if t.pattern.type == "re" and re.fullmatch(t.pattern.to_regexp(), lexeme)]
    return tuple(out)


def _word_types(terminals: List[Any], keywords: Tuple[str, ...]) -> Dict[str, Tuple[str, ...]]:
    """Token types of the keywords (every other word is a NAME; checked: no keyword is one)."""
    out = {}
    for w in keywords:
        types = _types_of(w, terminals)
        if "NAME" in types or not types:
            raise Fallback()  # the grammar and the keyword list disagree: use lark alone
        out[w] = types
    return out
