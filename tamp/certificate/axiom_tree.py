"""Axioms as *derivations* from the axiom library, so a certificate cannot invent one.

A certificate never states an axiom on its own authority: each sampling edge names how its
axiom is built from :mod:`axioms` families, as a tree —

* a leaf ``{"family": NAME, "param": P}``: ``family.instantiate(targets, dist, P)`` for a
  family NAME among ``axioms.families_for(dist)`` of the edge's (rebuilt) statement;
* a node ``{"union": [tree, …]}``: :func:`axioms.base.union_bound` of its children
  (Pr[bad1 ∨ …] <= cost1 + … under all side conditions).

:func:`instances` evaluates a tree; the checker then requires the certificate's stated
``bad``/``cost``/``side`` to be exactly one of the results.
"""

from __future__ import annotations

import itertools
from typing import Any, List

import axioms
from axioms.base import AxiomInstance, union_bound
from lang import ast as A
from lang.serialize import SerializeError

from .params import param_from_json, param_to_json

MAX_COMBINATIONS = 64


class TreeError(ValueError):
    """The tree names no applicable family, or a parameter the family refuses."""


def _families(dist: A.Call):
    return axioms.families_for(dist)


def leaf_instances(stmt: A.Sample, family: str, param: Any) -> List[AxiomInstance]:
    """Every instance of a family called ``family`` applicable to ``stmt``'s distribution."""
    fams = [f for f in _families(stmt.dist) if f.name == family]
    if not fams:
        raise TreeError(f"no axiom family '{family}' applies to {stmt.dist.func}(…)")
    out: List[AxiomInstance] = []
    errors: List[str] = []
    for fam in fams:
        try:
            out.append(fam.instantiate(tuple(stmt.targets), stmt.dist, param))
        except (ValueError, TypeError, NotImplementedError, AttributeError, KeyError) as exc:
            errors.append(f"{exc}")
    if not out:
        raise TreeError(f"family '{family}' refuses the parameter: {errors[0] if errors else '?'}")
    return out


def instances(tree: Any, stmt: A.Sample, where: str = "axiom.parts") -> List[AxiomInstance]:
    """The axiom instances the (JSON) tree denotes for ``stmt`` (several only when families
    share a name); raises :class:`TreeError` / :class:`SerializeError` on a bad tree."""
    if not isinstance(tree, dict):
        raise SerializeError(f"{where}: an axiom derivation is an object")
    if set(tree) == {"family", "param"}:
        if not isinstance(tree["family"], str):
            raise SerializeError(f"{where}.family: expected a string")
        return leaf_instances(stmt, tree["family"], param_from_json(tree["param"], where + ".param"))
    if set(tree) == {"union"}:
        kids = tree["union"]
        if not isinstance(kids, list) or len(kids) < 2:
            raise SerializeError(f"{where}.union: a union has at least two parts")
        options = [instances(k, stmt, f"{where}.union[{i}]") for i, k in enumerate(kids)]
        out = []
        for combo in itertools.islice(itertools.product(*options), MAX_COMBINATIONS):
            out.append(union_bound(list(combo)))
        return out
    raise SerializeError(f'{where}: expected {{"family", "param"}} or {{"union": [...]}}')


def same_axiom(a, b) -> bool:
    """Equal bad event, cost and side conditions (ASTs compared exactly, positions ignored)."""
    return a.bad == b.bad and a.cost == b.cost and tuple(a.side) == tuple(b.side)


# ---------------------------------------------------------------------------- writing


def leaf(family: str, param: Any) -> dict:
    return {"family": family, "param": param_to_json(param)}


def support_tree(stmt: A.Sample):
    """The tree of the cost-0 support facts of ``stmt`` the prover joins to its proposals."""
    leaves = []
    for fam in _families(stmt.dist):
        if not fam.name.startswith("support"):
            continue
        choices = list(fam.choices(stmt.dist)) if fam.param_kind == "choice" else [None]
        prm = choices[0] if choices else None
        try:
            fam.instantiate(tuple(stmt.targets), stmt.dist, prm)
        except (ValueError, TypeError, NotImplementedError):
            continue
        leaves.append(leaf(fam.name, prm))
    if not leaves:
        return None
    return leaves[0] if len(leaves) == 1 else {"union": leaves}


def derive(stmt: A.Sample, axiom) -> Any:
    """A tree that reproduces ``axiom`` exactly for ``stmt``, or None when none is found."""
    trees: List[Any] = []
    try:
        main = leaf(axiom.family, axiom.param)
    except SerializeError:
        main = None
    sup = support_tree(stmt)
    if main is not None:
        trees.append(main)
        if sup is not None:
            trees.append({"union": [main, sup]})
    if sup is not None:
        trees.append(sup)
    for t in trees:
        try:
            if any(same_axiom(i, axiom) for i in instances(t, stmt)):
                return t
        except (TreeError, SerializeError):
            continue
    return None
