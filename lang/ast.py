"""The abstract syntax of `.prob` programs.

Plain frozen dataclasses. Every node carries a source position ``pos`` that is
*not* part of equality, so that parse → print → parse is the identity on the
AST even though positions move.

Expressions
    Num, BoolLit, Var, Index, Unary, Binary, Cond, Call, TupleExpr, SetLit,
    ListLit, Quant, Sum, Prob, Independent, Hole
Statements
    Assign, Sample, If, While, For, Assume, Skip, VarDecl, Block
Top level
    Param, Private, OpRate, Memory, ValueReliability, Program, SourceFile

Operators are kept as their source spelling (``"+"``, ``"+."``, ``"&&"``,
``"==>"``, ``"div"`` …). Unreliable operators (``+. -. *. /. <. <=. >. >=. ==.``) and
candidate ones (``+? -? *? /? <? <=? >? >=? ==?``, for ``tamp place``) appear only in
statements of programs with a rate for them; the CFA construction desugars them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator, List, Optional, Tuple, Union
from typing import Type as PyType


@dataclass(frozen=True)
class Pos:
    """A source span: 1-based line and column of the first character, and of the end."""

    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


def _pos() -> Any:  # a dataclasses.field, typed as the default it stands for
    return field(default=None, compare=False, repr=False, kw_only=True)


class Node:
    """Base class of every syntax node (for isinstance checks)."""

    pos: Optional[Pos]


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Type:
    """A type: ``bool``, ``int``, ``real``, an array of a base type, or a pair."""

    name: str  # "bool" | "int" | "real" | "array" | "tuple" | "set"
    elem: Tuple["Type", ...] = ()

    def __str__(self) -> str:
        if self.name == "array":
            return f"{self.elem[0]}[]"
        if self.name == "tuple":
            return "(" + ", ".join(map(str, self.elem)) + ")"
        if self.name == "set":
            return "set of " + str(self.elem[0])
        return self.name

    @property
    def is_numeric(self) -> bool:
        return self.name in ("int", "real")


BOOL = Type("bool")
INT = Type("int")
REAL = Type("real")


def array_of(t: Type) -> Type:
    return Type("array", (t,))


def tuple_of(*ts: Type) -> Type:
    return Type("tuple", tuple(ts))


def set_of(t: Type) -> Type:
    return Type("set", (t,))


# --------------------------------------------------------------------------- expressions


class Expr(Node):
    """Base class of expressions."""


@dataclass(frozen=True)
class Num(Expr):
    """A numeric literal, exact. ``is_int`` is true for integer literals like ``42``."""

    value: Fraction
    is_int: bool = False
    text: Optional[str] = field(default=None, compare=False, repr=False)
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class BoolLit(Expr):
    value: bool
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Var(Expr):
    name: str
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Index(Expr):
    """Array element ``base[index]``."""

    base: Expr
    index: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Unary(Expr):
    """``-e`` or ``!e``."""

    op: str
    operand: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Binary(Expr):
    """A binary operation, ``op`` as spelled in the source."""

    op: str
    left: Expr
    right: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Cond(Expr):
    """``cond ? then : other``."""

    cond: Expr
    then: Expr
    other: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Call(Expr):
    """A built-in function call: abs, min, max, log, exp, sqrt, fst, snd — or, right of
    ``~``, a distribution (bern, unif, lap, exp, dlap, dexp, gauss, uniform, step, density)."""

    func: str
    args: Tuple[Expr, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class TupleExpr(Expr):
    items: Tuple[Expr, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class SetLit(Expr):
    """A finite set ``{c1, …, ck}`` (distribution arguments only)."""

    items: Tuple[Expr, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class ListLit(Expr):
    """A list ``[e1, …]`` (the bins of ``step``)."""

    items: Tuple[Expr, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Quant(Expr):
    """``forall j in lo..hi: body`` / ``exists …``; ``inclusive`` for ``lo..=hi``."""

    kind: str  # "forall" | "exists"
    var: str
    lo: Expr
    hi: Expr
    inclusive: bool
    body: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Sum(Expr):
    """``sum(j in lo..hi: body)``."""

    var: str
    lo: Expr
    hi: Expr
    inclusive: bool
    body: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Prob(Expr):
    """``P(event)`` or ``P(event | given)``: a probability at exit."""

    event: Expr
    given: Optional[Expr] = None
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Independent(Expr):
    """``independent(e, x)`` or ``independent(e, x in {a, b})`` (causal fairness)."""

    expr: Expr
    var: str
    values: Optional[Tuple[Expr, ...]] = None
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Hole(Expr):
    """``?``: a value tamp is asked to infer — ``fails ?`` (the smallest failure bound it can
    prove) or one constant of an ``ensures`` (``abs(t - s) <= ?``, the smallest margin).
    ``stated``: the bound the program itself claimed when ``--infer`` asked for one in its place
    (source text, not a child node: inference tries it as a candidate and never does worse)."""

    pos: Optional[Pos] = _pos()
    stated: Optional[str] = field(default=None, compare=False)


@dataclass(frozen=True)
class Fairness(Expr):
    """Group-fairness sugar (an ``ensures`` clause only).

    ``ensures fairness T given S [when Q] >= c`` stands for
    ``P(T | S && Q) / P(T | !S && Q) >= c``; ``parity`` asks it both ways
    (the ratio and its inverse are both ``op c``). Comparisons inside S or Q
    need parentheses: ``fairness hire given (sex < 1) >= 0.85``.
    """

    kind: str  # "fairness" | "parity"
    target: Expr
    group: Expr
    qual: Optional[Expr]
    op: str
    threshold: Expr
    pos: Optional[Pos] = _pos()


# --------------------------------------------------------------------------- statements


class Stmt(Node):
    """Base class of statements."""


LValue = Union[Var, Index]


def target_name(t: Expr) -> str:
    """The variable an assignment or sampling target writes: ``x`` for ``x`` and for ``x[i]``."""
    base = t.base if isinstance(t, Index) else t
    if not isinstance(base, Var):
        raise TypeError(f"not an assignment target: {t!r}")
    return base.name


@dataclass(frozen=True)
class Assign(Stmt):
    """``x := e``, ``a[i] := e`` or ``(x, y) := e``."""

    targets: Tuple[LValue, ...]
    value: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Sample(Stmt):
    """``x ~ D``, ``a[i] ~ D`` or ``(x, y) ~ D``; ``dist`` is a Call naming the distribution."""

    targets: Tuple[LValue, ...]
    dist: Call
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Block(Stmt):
    stmts: Tuple[Stmt, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Block
    other: Optional[Block] = None
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class While(Stmt):
    """``while (cond) invariant I1 invariant I2 { body }``; ``invariants`` are the user's
    loop invariants (hints for the prover, checked, never trusted), in source order."""

    cond: Expr
    body: Block
    invariants: Tuple[Expr, ...] = ()
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class For(Stmt):
    """``for i in lo..hi invariant I { body }``: sugar for a counted while loop; the
    invariants hold at the head of that loop (after ``i := lo``, before each test)."""

    var: str
    lo: Expr
    hi: Expr
    inclusive: bool
    body: Block
    invariants: Tuple[Expr, ...] = ()
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Assume(Stmt):
    cond: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Skip(Stmt):
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class VarDecl(Stmt):
    """``var x: real;``"""

    name: str
    type: Type
    pos: Optional[Pos] = _pos()


# --------------------------------------------------------------------------- top level


@dataclass(frozen=True)
class Param:
    name: str
    type: Type
    pos: Optional[Pos] = _pos()


PRIME = "'"


def primed(name: str) -> str:
    """The other run's copy of input ``name`` in a ``neighbours`` clause: ``q'`` (a variable whose
    name ends in a prime; the prime is not an identifier character, so no program can write it)."""
    return name + PRIME


def unprimed(name: str) -> Optional[str]:
    """``q`` for ``q'``, None for an unprimed name."""
    return name[: -len(PRIME)] if name.endswith(PRIME) else None


@dataclass(frozen=True)
class Private(Node):
    """``private E on x1, …, xk`` (``delta`` for ``private E, D on …``): the program is
    (E, D)-differentially private in the outputs ``x1 … xk`` for inputs related by the
    ``neighbours`` clause. ``epsilon`` is a :class:`Hole` for ``private ? on …``."""

    epsilon: Expr
    delta: Optional[Expr]
    outputs: Tuple[str, ...]
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class OpRate(Node):
    """``rate(*.) E``: the failure probability of each unreliable operation of one kind (the
    operator's unreliable spelling: ``+. -. *. /. <. <=. >. >=. ==.``)."""

    op: str
    rate: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Memory(Node):
    """``unreliable a, b`` / ``unreliable(E) a, b``: variables (scalars or arrays, parameters or
    locals) in unreliable memory: every read fails with probability ``rate`` (the program's
    ``rate`` when None). ``candidate`` (``unreliable? a``): a region ``tamp place`` may put in
    unreliable memory; elsewhere it is read as unreliable (the claim must hold either way)."""

    names: Tuple[str, ...]
    rate: Optional[Expr]
    candidate: bool = False
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class ValueReliability(Node):
    """``reliability(x, y) >= E``: Rely's value-level reliability. With probability at least
    ``E`` each of the named variables ends with the value it has in the fully reliable run."""

    names: Tuple[str, ...]
    bound: Expr
    pos: Optional[Pos] = _pos()


@dataclass(frozen=True)
class Program:
    """One ``program`` with its specification clauses, in source order within each kind."""

    name: str
    params: Tuple[Param, ...]
    body: Block
    requires: Tuple[Expr, ...] = ()
    ensures: Tuple[Expr, ...] = ()
    fails: Optional[Expr] = None
    rate: Optional[Expr] = None
    reliability: Optional[Expr] = None
    neighbours: Optional[Expr] = None
    private: Optional["Private"] = None
    op_rates: Tuple[OpRate, ...] = ()
    memory: Tuple[Memory, ...] = ()
    value_reliability: Optional[ValueReliability] = None
    pos: Optional[Pos] = _pos()

    def param(self, name: str) -> Optional[Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class SourceFile:
    programs: Tuple[Program, ...]
    path: str = field(default="<string>", compare=False)
    text: str = field(default="", compare=False, repr=False)

    def program(self, name: str) -> Optional[Program]:
        for p in self.programs:
            if p.name == name:
                return p
        return None


# --------------------------------------------------------------------------- helpers


_FIELDS: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass fields of ``cls`` other than ``pos`` (computed once per class: the walks
    below run on every node of every formula the prover builds)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f for f in getattr(cls, "__dataclass_fields__", {}) if f != "pos")
    return names


def children(node: Node) -> Iterator[Node]:
    """The direct sub-nodes of ``node`` (expressions and statements), in order."""
    for f in field_names(type(node)):
        v = getattr(node, f)
        if isinstance(v, Node):
            yield v
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, Node):
                    yield x


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal of ``node`` and all nodes below it."""
    stack: List[Node] = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(children(n))))


def left_spine(e: "Binary") -> List["Binary"]:
    """``e`` and the binary operations down its left operands, top first: for ``a + b - c``
    (parsed ``(a + b) - c``) the nodes ``(a + b) - c`` and ``a + b``; the last one's ``left``
    is the chain's first operand. A flat sum of n terms is n levels deep, so passes walk a
    chain with this, iteratively, and recurse only into the (shallow) right operands.

    >>> from lang.parser import parse_expr
    >>> [n.op for n in left_spine(parse_expr("a + b - c * d"))]
    ['-', '+']
    """
    out = [e]
    x = e.left
    while isinstance(x, Binary) and type(x) is Binary:
        out.append(x)
        x = x.left
    return out


def contains(node: Node, kind: Union[PyType[Node], Tuple[PyType[Node], ...]]) -> bool:
    """Whether any node below ``node`` (inclusive) is an instance of ``kind``."""
    return any(isinstance(n, kind) for n in walk(node))


def num(v: int | Fraction | str, is_int: bool | None = None) -> Num:
    """A literal from an int / Fraction / str."""
    f = Fraction(v)
    if is_int is None:
        is_int = isinstance(v, int) and not isinstance(v, bool)
    return Num(f, is_int)


# --------------------------------------------------------------------------- hashing


def _remember_hashes() -> None:
    """Give every node class a hash computed once per node: a frozen dataclass's generated
    ``__hash__`` hashes the tuple of its fields, so each set or dict lookup of a candidate walked
    the whole tree again (a tenth of a loop proof's time). The value is the generated hash, so
    iteration orders do not change. The memo lives in the node's ``__dict__`` (a frozen dataclass
    only guards ``setattr``) and is left out of pickles and copies: string hashes differ between
    processes, and a node sent to a Dask worker hashes anew there."""

    def state(self: Any) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.pop("_hash", None)
        return d

    stack: List[type] = [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        gen = cls.__dict__.get("__hash__")
        if gen is None or not hasattr(cls, "__dataclass_fields__"):
            continue

        def remembered(self: Any, gen: Any = gen) -> int:
            d = self.__dict__
            h: Optional[int] = d.get("_hash")
            if h is None:
                h = d["_hash"] = int(gen(self))
            return h

        setattr(cls, "__hash__", remembered)  # noqa: B010 - a method set on the class after the fact
        setattr(cls, "__getstate__", state)  # noqa: B010


_remember_hashes()
