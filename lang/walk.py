"""One walker over the syntax tree, which every pass over :mod:`lang.ast` specialises.

A pass is a subclass of :class:`Walker` with one method per node class it treats, named after
the class (``Var``, ``Binary``, ``Call`` …), in the style of lark's ``Transformer`` and pysmt's
walkers. A method receives the node and the results already computed for its children (in
:func:`lang.ast.children` order) and returns the node's result; classes without a method go to
:meth:`Walker.default`. :meth:`Walker.enter` runs before a node's children are walked and may
answer for the whole subtree (a cache hit, a binder that needs its own scope, a subtree the
pass leaves alone).

:class:`Transformer` is the walker whose default rebuilds the node from its transformed
children — and returns the node itself when no child changed, so untouched subtrees stay
shared.

The walk is iterative (an explicit stack, children left to right, post-order; :meth:`enter`
sees the nodes in pre-order), so an expression as deep as a chain of 100,000 operators is
walked without Python recursion; within one walk each node object is visited once (shared
subtrees are answered from a memo keyed by identity). Methods are looked up on the walker's
class, once per node class.

Built on it here: :func:`free_vars`, :func:`substitute`, :func:`replace_all`; and
:func:`operands` flattens an operator chain.

>>> from lang import ast as A
>>> class Count(Walker[int]):
...     def Var(self, node, kids):
...         return 1
...     def default(self, node, kids):
...         return sum(kids)
>>> x = A.Var("x")
>>> Count().walk(A.Binary("+", x, A.Binary("*", x, A.num(2))))
2
>>> class Double(Transformer):
...     def Num(self, node, kids):
...         return A.Num(node.value * 2, node.is_int)
>>> from lang.printer import print_expr
>>> print_expr(Double().walk(A.Binary("+", x, A.num(3))))
'x + 6'
>>> print_expr(substitute(A.Binary("+", x, A.Var("y")), {"x": A.num(1)}))
'1 + y'
>>> sorted(free_vars(A.Quant("forall", "j", A.num(0), A.Var("n"), False,
...                          A.Index(A.Var("a"), A.Var("j")))))
['a', 'n']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from lang import ast as A

__all__ = ["Walker", "Transformer", "DESCEND", "rebuild", "substitute", "replace_all", "free_vars", "operands"]

R = TypeVar("R")


class _Descend:
    """The answer of :meth:`Walker.enter` that lets the walk go into the node's children."""

    def __repr__(self) -> str:
        return "DESCEND"


DESCEND: Any = _Descend()


class Walker(Generic[R]):
    """A bottom-up walk computing one result of type ``R`` per node (see the module docstring).

    Subclasses define methods named after node classes, ``def Binary(self, node, kids)``, where
    ``kids`` holds the results of the node's children; and may override :meth:`enter` and
    :meth:`default`."""

    def enter(self, node: A.Node) -> Any:
        """Called before the children of ``node`` are walked: return :data:`DESCEND` to walk
        them (the default), or the node's result to skip its subtree."""
        return DESCEND

    def default(self, node: A.Node, kids: Sequence[R]) -> R:
        """The result for a node whose class has no method of its own."""
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(node).__name__}")

    def walk(self, root: A.Node, memo: dict[int, R] | None = None) -> R:
        """The result for ``root``. ``memo`` holds results by node identity; a caller may keep
        one across walks (results that do not change between them) if it also keeps the nodes
        alive, so that their ids stay theirs. By default each walk has its own."""
        if memo is None:
            memo = {}
        enter, cls_self = self.enter, type(self)
        table = _TABLES.get(cls_self)
        if table is None:
            table = _TABLES[cls_self] = {}
        node_cls, fields_of = A.Node, _node_fields
        stack: list[tuple[A.Node, list[A.Node] | None]] = [(root, None)]
        push, pop = stack.append, stack.pop
        while stack:
            node, kids = pop()
            key = id(node)
            if key in memo:
                continue
            if kids is None:
                early = enter(node)
                if early is not DESCEND:
                    memo[key] = early
                    continue
                kids = []
                for f in fields_of(type(node)):
                    v = getattr(node, f)
                    if isinstance(v, node_cls):
                        kids.append(v)
                    elif type(v) is tuple:
                        for x in v:
                            if isinstance(x, node_cls):
                                kids.append(x)
                if kids:
                    push((node, kids))
                    for c in reversed(kids):
                        if id(c) not in memo:
                            push((c, None))
                    continue
                results: list[R] = []
            else:
                results = [memo[id(c)] for c in kids]
            m = table.get(type(node))
            if m is None:  # methods are looked up on the class, once per node class
                m = table[type(node)] = getattr(cls_self, type(node).__name__, None) or cls_self.default
            memo[key] = m(self, node, results)
        return memo[id(root)]


#: per walker class: node class -> the (unbound) method that handles it
_TABLES: dict[type, dict[type, Callable[..., Any]]] = {}

#: annotations of dataclass fields that never hold a node (the walk does not look into them)
_NOT_NODES = frozenset({"str", "bool", "int", "Fraction", "Type", "Pos", "Optional[str]", "Optional[Pos]"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _node_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold nodes or tuples of nodes, in order (computed once
    per class; the same children, in the same order, as :func:`lang.ast.children`)."""
    names = _FIELDS.get(cls)
    if names is None:
        declared = getattr(cls, "__dataclass_fields__", {})
        names = _FIELDS[cls] = tuple(f for f in A.field_names(cls) if str(declared[f].type) not in _NOT_NODES)
    return names


class Transformer(Walker[Any]):
    """A walker whose default rebuilds each node from its transformed children (see
    :func:`rebuild`): a subclass only names the node classes it changes."""

    def default(self, node: A.Node, kids: Sequence[Any]) -> Any:
        return rebuild(node, kids)


def rebuild(node: A.Node, kids: Sequence[Any]) -> A.Node:
    """``node`` with its children (in :func:`lang.ast.children` order) replaced by ``kids``;
    ``node`` itself when every one of ``kids`` is the child it replaces. The source position is
    kept.

    >>> from lang import ast as A
    >>> e = A.Binary("+", A.Var("x"), A.Var("y"))
    >>> rebuild(e, [A.Var("x"), A.num(1)])
    Binary(op='+', left=Var(name='x'), right=Num(value=Fraction(1, 1), is_int=True))
    >>> rebuild(e, [e.left, e.right]) is e
    True
    """
    if not kids:
        return node
    changes: dict[str, Any] = {}
    k = 0
    for name in A.field_names(type(node)):
        v = getattr(node, name)
        if isinstance(v, A.Node):
            w = kids[k]
            k += 1
            if w is not v:
                changes[name] = w
        elif isinstance(v, tuple):
            items = list(v)
            changed = False
            for i, x in enumerate(v):
                if isinstance(x, A.Node):
                    if kids[k] is not x:
                        items[i] = kids[k]
                        changed = True
                    k += 1
            if changed:
                changes[name] = tuple(items)
    return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]


def operands(e: A.Expr, op: str) -> list[A.Expr]:
    """The operands of a chain of the binary operator ``op`` (``a && b && c``, however it is
    parenthesised), left to right, without recursion; ``[e]`` when ``e`` is not an ``op``.

    >>> from lang.parser import parse_expr
    >>> from lang.printer import print_expr
    >>> [print_expr(x) for x in operands(parse_expr("a && (b && c) && (d || e)"), "&&")]
    ['a', 'b', 'c', 'd || e']
    """
    out: list[A.Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Binary) and x.op == op:
            stack.append(x.right)
            stack.append(x.left)
        else:
            out.append(x)
    return out


# ---------------------------------------------------------------------------- free variables

_FV_CACHE: dict[int, tuple[A.Node, frozenset[str]]] = {}
_NONE: frozenset[str] = frozenset()


class _FreeVars(Walker[frozenset[str]]):
    """Names read by an expression; results are kept across walks (see :func:`free_vars`)."""

    def enter(self, node: A.Node) -> Any:
        hit = _FV_CACHE.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        return DESCEND

    def _keep(self, node: A.Node, out: frozenset[str]) -> frozenset[str]:
        if len(_FV_CACHE) > 200_000:
            _FV_CACHE.clear()
        _FV_CACHE[id(node)] = (node, out)
        return out

    def Var(self, node: A.Var, kids: Sequence[frozenset[str]]) -> frozenset[str]:
        return self._keep(node, frozenset((node.name,)))

    def _bound(self, node: Any, kids: Sequence[frozenset[str]]) -> frozenset[str]:
        lo, hi, body = kids
        return self._keep(node, lo | hi | (body - {node.var}))

    Quant = Sum = _bound

    def Independent(self, node: A.Independent, kids: Sequence[frozenset[str]]) -> frozenset[str]:
        out = frozenset((node.var,))
        for k in kids:
            out = out | k
        return self._keep(node, out)

    def default(self, node: A.Node, kids: Sequence[frozenset[str]]) -> frozenset[str]:
        out = _NONE
        for k in kids:
            if k:
                out = k if not out else out | k
        return self._keep(node, out)


_FREE_VARS = _FreeVars()


def free_vars(e: A.Node) -> frozenset[str]:
    """Names of the variables read by ``e`` (quantifier and sum variables are bound; the
    variable named by ``independent(e, x)`` counts as read).

    Results are memoised per node, by identity (the node is kept with its entry, so its id
    cannot be reused while the entry lives; nodes are immutable, so the answer cannot change),
    and a new node over known children costs one union."""
    hit = _FV_CACHE.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    return _FREE_VARS.walk(e)


def written_vars(s: A.Node) -> frozenset[str]:
    """Names of the variables statement ``s`` may write: assignment and sampling targets (the
    array's name for an element write) and ``for`` counters, anywhere inside ``s``.

    >>> from lang.parser import parse
    >>> body = parse("program p(a: int[]) { for i in 0..3 { a[i] := 1; x ~ bern(1/2); } }", "t").programs[0].body
    >>> sorted(written_vars(body))
    ['a', 'i', 'x']
    """
    out: set[str] = set()
    for n in A.walk(s):
        if isinstance(n, (A.Assign, A.Sample)):
            out.update(A.target_name(t) for t in n.targets)
        elif isinstance(n, A.For):
            out.add(n.var)
    return frozenset(out)


# ---------------------------------------------------------------------------- substitution


class _Substitute(Transformer):
    def __init__(self, m: Mapping[str, A.Expr]):
        self.m = m

    def enter(self, node: A.Node) -> Any:
        if isinstance(node, A.Var):
            return self.m.get(node.name, node)
        if not isinstance(node, A.Expr) or free_vars(node).isdisjoint(self.m):
            return node
        if isinstance(node, (A.Quant, A.Sum)) and node.var in self.m:
            inner = {k: v for k, v in self.m.items() if k != node.var}
            lo, hi = self.walk(node.lo), self.walk(node.hi)
            body = substitute(node.body, inner)
            return rebuild(node, [lo, hi, body])
        return DESCEND


def substitute(e: A.Expr, m: Mapping[str, A.Expr]) -> A.Expr:
    """``e`` with the free occurrences of the variables in ``m`` replaced (quantifier and sum
    variables shadow; the replacements are assumed not to mention bound variables, which holds
    for the prover's SSA and label substitutions). Subtrees that read none of the variables are
    returned as they are (the same object)."""
    if not m:
        return e
    if isinstance(e, A.Var):
        return m.get(e.name, e)
    if free_vars(e).isdisjoint(m):  # the common case: answered without a walk
        return e
    out: A.Expr = _Substitute(m).walk(e)
    return out


class _ReplaceAll(Transformer):
    def __init__(self, old: A.Node, new: A.Node):
        self.old, self.new = old, new

    def enter(self, node: A.Node) -> Any:
        return self.new if node == self.old else DESCEND


def replace_all(e: A.Node, old: A.Node, new: A.Node) -> Any:
    """``e`` with every sub-tree equal to ``old`` replaced by ``new`` (outermost first).

    >>> from lang import ast as A
    >>> from lang.printer import print_expr
    >>> x_y = A.Binary("*", A.Var("x"), A.Var("y"))
    >>> print_expr(replace_all(A.Binary("+", x_y, A.num(1)), x_y, A.Var("z")))
    'z + 1'
    """
    return _ReplaceAll(old, new).walk(e)
