"""tamp.cfa.dependence: which values depend on a sample (data and control flow, loops, arrays), and
which user assumes are conditioning rather than preconditions."""

from lang import ast as A
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.dependence import (
    analyse,
    conditioning_assumes,
    precondition_assumes,
    precondition_positions,
    user_assumes,
)


def cfa_of(body, params="n: int, q: real[]"):
    src = f"program t({params}) {{ {body} }}"
    return build_cfa(parse(src).programs[0])


def tainted_at_exit(cfa):
    return set(analyse(cfa).tainted_at(cfa.exit))


def test_user_assumes_are_marked_and_guards_are_not():
    cfa = cfa_of("x ~ bern(0.5); if (x) { y := 1; } else { y := 2; } while (n > 3) { n2 := 1; } assume(n > 0);")
    marked = user_assumes(cfa)
    assert [show(st) for _e, st in marked] == ["n > 0"]
    guards = [
        d["stmt"] for _u, _v, _k, d in cfa.edges() if isinstance(d["stmt"], A.Assume) and not d.get("user_assume")
    ]
    assert len(guards) >= 4


def show(st):
    from tamp.show import show_expr

    return show_expr(st.cond)


def test_data_flow_taints_and_strong_updates_untaint():
    cfa = cfa_of("x ~ lap(0, 1); y := x + n; z := n; w := x; w := n;")
    t = tainted_at_exit(cfa)
    assert {"x", "y"} <= t and "z" not in t and "w" not in t


def test_control_dependence_taints_assignments_under_a_sampled_branch():
    cfa = cfa_of("x ~ bern(0.5); y := 0; if (x) { y := 1; } z := 2;")
    t = tainted_at_exit(cfa)
    assert "y" in t and "z" not in t


def test_nested_branches_inherit_control_dependence():
    cfa = cfa_of("x ~ bern(0.5); y := 0; if (x) { if (n > 0) { y := 1; } }")
    assert "y" in tainted_at_exit(cfa)


def test_a_loop_guarded_by_a_sample_taints_its_counter():
    cfa = cfa_of("ok ~ bern(0.5); k := 0; while (!ok) { ok ~ bern(0.5); k := k + 1; } m := n;")
    t = tainted_at_exit(cfa)
    assert "k" in t and "m" not in t


def test_counter_loops_on_inputs_stay_untainted():
    cfa = cfa_of("s := 0; for i in 0..n { a[i] ~ lap(q[i], 1); s := s + q[i]; }")
    t = tainted_at_exit(cfa)
    assert "a" in t and "s" not in t and "i" not in t


def test_arrays_taint_through_elements_and_indices():
    cfa = cfa_of("j ~ unif(0, 3); b[j] := 1; c[0] := n; c[1] := b[0];")
    t = tainted_at_exit(cfa)
    assert "b" in t and "c" in t


def test_loop_carried_taint_reaches_a_fixpoint():
    cfa = cfa_of("x := false; y := true; i := 0; while (i < 3) { y := x; x ~ bern(0.5); i := i + 1; }")
    assert "y" in tainted_at_exit(cfa)


def test_unreliable_operations_taint_the_failed_flag():
    src = "program r(a: int) rate 0.01 ensures !failed fails 1 { y := a +. 1; assume(!failed); }"
    cfa = build_cfa(parse(src).programs[0])
    assert "failed" in tainted_at_exit(cfa)
    assert len(conditioning_assumes(cfa)) == 1


def test_conditioning_and_precondition_assumes_are_told_apart():
    cfa = cfa_of("m := n * 2; assume(m > 0); x ~ bern(0.5); assume(x); if (x) { assume(n > 1); }")
    cond = conditioning_assumes(cfa)
    assert [show(c.stmt) for c in cond] == ["x", "n > 1"]
    assert cond[0].reads == ("x",) and not cond[0].under_branch
    assert cond[1].reads == () and cond[1].under_branch
    assert [show(st) for st in precondition_assumes(cfa)] == ["m > 0"]


def test_precondition_positions_are_source_positions():
    src = "program t(n: int) {\n  assume(n > 0);\n  x ~ bern(0.5);\n  assume(x);\n}"
    assert precondition_positions(parse(src).programs[0]) == {(2, 3)}
