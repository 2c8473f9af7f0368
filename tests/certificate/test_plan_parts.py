"""The checker's plan (:func:`tamp.certificate.checker._plan_parts`): one job per certified part,
in order; a program certified twice among the failure-bound sections (whatever their methods), or
absent from the source, ends the plan with a reject; a privacy claim may certify a program whose
failure bound is certified too (its own section)."""

from __future__ import annotations

from types import SimpleNamespace

from tamp.certificate.checker import _plan_parts


class _Src:
    path = "t.prob"

    def program(self, name):
        return object() if name in ("a", "b") else None


def _part(name):
    return SimpleNamespace(name=name)


def test_parts_are_planned_in_order():
    plan: list = []
    _plan_parts(plan, _Src(), [([_part("a")], "union"), (None, "conc"), ([_part("b")], "nest")], "'{}' twice")
    assert [(job, part.name) for job, part in plan] == [("union", "a"), ("nest", "b")]


def test_a_program_certified_by_two_methods_is_rejected_and_ends_the_plan():
    plan: list = []
    _plan_parts(plan, _Src(), [([_part("a")], "union"), ([_part("a"), _part("b")], "nest")], "'{}' twice")
    assert plan[-1] == ("reject", "'a' twice") and len(plan) == 2
    _plan_parts(plan, _Src(), [([_part("b")], "privacy")], "privacy '{}' twice")
    assert len(plan) == 2  # nothing after a reject


def test_sections_have_their_own_names_and_missing_programs_are_rejected():
    plan: list = []
    _plan_parts(plan, _Src(), [([_part("a")], "union")], "'{}' twice")
    _plan_parts(plan, _Src(), [([_part("a")], "privacy")], "privacy '{}' twice")
    assert [job for job, _ in plan] == ["union", "privacy"]
    _plan_parts(plan, _Src(), [([_part("zz")], "prob")], "'{}' twice")
    assert plan[-1] == ("reject", "program 'zz' is not in t.prob")
