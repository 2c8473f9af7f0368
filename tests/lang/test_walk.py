"""The AST walker (lang/walk.py): iterative, memoised by identity, scoping of binders."""

from lang import ast as A
from lang.parser import parse_expr
from lang.printer import print_expr
from lang.walk import DESCEND, Transformer, Walker, free_vars, rebuild, replace_all, substitute


def _chain(n: int) -> A.Expr:
    e: A.Expr = A.Var("x0")
    for i in range(1, n):
        e = A.Binary("+", e, A.Var(f"x{i % 7}"))
    return e


def test_long_left_deep_chain_is_walked_without_recursion():
    e = _chain(100_000)
    assert free_vars(e) == {f"x{i}" for i in range(7)}
    out = substitute(e, {"x3": A.num(1)})
    assert free_vars(out) == {f"x{i}" for i in range(7)} - {"x3"}

    class Depth(Walker[int]):
        def default(self, node, kids):
            return 1 + max(kids, default=0)

    assert Depth().walk(e) == 100_000


def test_substitution_respects_binders_and_shares_untouched_subtrees():
    e = parse_expr("x + (forall x in 0..n: a[x] > y) + sum(j in 0..x: j * y)")
    out = substitute(e, {"x": A.Var("z"), "y": A.num(2)})
    assert print_expr(out) == "z + (forall x in 0..n: a[x] > 2) + sum(j in 0..z: j * 2)"
    untouched = parse_expr("a[k] + b")
    whole = A.Binary("*", untouched, A.Var("x"))
    assert substitute(whole, {"x": A.num(1)}).left is untouched
    assert substitute(untouched, {"x": A.num(1)}) is untouched


def test_free_vars_of_binders_and_independence():
    assert free_vars(parse_expr("exists i in lo..hi: q[i] == i")) == {"lo", "hi", "q"}
    assert free_vars(A.Independent(A.Var("y"), "s")) == {"y", "s"}
    assert set(free_vars(parse_expr("x + y"))) == {"x", "y"}  # the set-valued name in lang.ast


def test_enter_can_answer_for_a_subtree_and_dispatch_is_per_class():
    seen = []

    class Names(Walker[list]):
        def enter(self, node):
            seen.append(type(node).__name__)
            return [] if isinstance(node, A.Call) else DESCEND

        def Var(self, node, kids):
            return [node.name]

        def default(self, node, kids):
            return [n for k in kids for n in k]

    assert Names().walk(parse_expr("x + log(y) * z")) == ["x", "z"]
    assert "Var" in seen and seen.count("Call") == 1


def test_shared_subtrees_are_visited_once():
    calls = []
    x2 = parse_expr("x * 2")

    class Spy(Transformer):
        def Var(self, node, kids):
            calls.append(node.name)
            return A.Var("w")

    out = Spy().walk(A.Binary("+", x2, x2))
    assert calls == ["x"] and print_expr(out) == "w * 2 + w * 2"


def test_rebuild_keeps_position_and_tuple_fields():
    call = parse_expr("max(a, b)")
    new = rebuild(call, [A.Var("c"), call.args[1]])
    assert print_expr(new) == "max(c, b)" and new.pos == call.pos
    assert print_expr(replace_all(parse_expr("f + (a - b) * (a - b)"), parse_expr("a - b"), A.Var("d"))) == "f + d * d"
