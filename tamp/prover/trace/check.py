"""The proof checker: the obligations that make a labelled failure automaton a proof.

Let β be the bound and, for a node q, λ(q) its predicate and κ(q) its failure so far. The
automaton proves ⊢β {requires} P {ensures} when (all under ``requires``):

1. INIT       λ(root) holds and κ(root) = 0;
2. COVER      every run of the CFA is a run of the automaton: the root sits at the CFA entry;
              each node either follows *all* out-edges of its CFA node (same statements, children
              at the CFA successors), or is a *split* node whose guards cover λ (children at the
              same CFA node), and split edges form no cycle (so every run makes progress);
3. STEP       for every edge q →s q': λ(q) ∧ s ⇒ λ(q') and κ(q) + cost(s) <= κ(q') — for a
              sampling with axiom Pr[bad] <= cost only on the outcomes where ¬bad holds,
              and then also λ(q) ⇒ side ∧ κ(q) + cost <= β;
4. BUDGET     λ(root) ⇒ κ(root) <= β (that is, β >= 0);
5. EXIT       λ(q) ⇒ ensures at every exit node.

Why this is sound: write F_k(q, σ) for the probability that a run from state σ at q ends
violating ``ensures`` within k steps. By induction on k, F_k(q, σ) <= max(0, β − κ(q)(σ))
whenever σ ⊨ λ(q). k = 0: F_0 is 0 away from an exit, and at an exit too, by EXIT. Step: an
assume/assign moves deterministically (a blocked assume ends the run, F = 0) and STEP gives
κ(q) <= κ(q'), so the bound carries over; a sampling fails with probability at most
Pr[bad] + sup over ¬bad outcomes of max(0, β − κ(q')) <= cost + (β − κ(q) − cost) =
β − κ(q), where β − κ(q) − cost >= 0 is STEP's side obligation. (β ranges over inputs, which
no statement changes.) So F = lim F_k <= max(0, β − κ(root)) = β at the root, by INIT and
BUDGET. Back edges (loops) need no extra rule: the induction is on the run length. κ may
exceed β at nodes after which nothing is sampled (the max absorbs it), which is why BUDGET
is asked at the root only: every sampling already bounds κ + cost by β itself.

Two things these rules do not cover, established before they are used (:mod:`tamp.prover`):
F counts only runs that *end*, while a failure bound is total (a run that never ends fails),
so every loop also needs a ranking function (:mod:`.termination`; with it every run ends and
F is the whole failure probability); and "a blocked assume ends the run, F = 0" is the
precondition meaning of a user ``assume``, so programs whose ``assume`` conditions on a sampled
value (:mod:`tamp.cfa.dependence`) are not proved by these rules at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import networkx as nx
import z3

from lang import ast as A
from tamp.cfa.places import edge_place, node_place
from tamp.prover.base.smt import VALID, conj, substitute_all, to_real
from tamp.prover.trace.formula import StepState, step
from tamp.show import show_stmt


@dataclass
class Obligation:
    rule: str
    where: str
    status: str
    formula: str = ""
    src: Optional[int] = None  # the automaton nodes it is about (None: a structural COVER problem)
    dst: Optional[int] = None

    def to_json(self) -> dict:
        return {"rule": self.rule, "where": self.where, "status": self.status}


def _at(aut, cfa, nid: int) -> str:
    """Automaton node ``nid`` in the user's terms: its place in the program."""
    return node_place(cfa, aut.nodes[nid].cfa_node)


def _cover(aut, cfa) -> List[str]:
    """Problems with rule COVER (empty when the automaton simulates the CFA)."""
    problems = []
    if aut.nodes[aut.root].cfa_node != cfa.entry:
        problems.append(f"the proof starts at {_at(aut, cfa, aut.root)}, not at the start of the program")
    splits = nx.DiGraph((e.src, e.dst) for e in aut.edges if e.kind == "split")
    if not nx.is_directed_acyclic_graph(splits):
        # a split node whose guards lead back to itself would "cover" runs it never follows
        problems.append("split edges form a cycle")
    for nid, n in aut.nodes.items():
        outs = aut.out(nid)
        if outs and all(e.kind == "split" for e in outs):
            if any(aut.nodes[e.dst].cfa_node != n.cfa_node for e in outs):
                problems.append(f"a case split at {_at(aut, cfa, nid)} moves in the program")
            continue
        if any(e.kind == "split" for e in outs):
            problems.append(f"at {_at(aut, cfa, nid)} the proof mixes a case split with the program's statements")
            continue
        want = {}
        for u, v, k, d in cfa.out_edges(n.cfa_node):
            want[(u, v, k)] = d["stmt"]
        have = {}
        for e in outs:
            if e.cfa_edge is None or tuple(e.cfa_edge) not in want:
                problems.append(f"at {_at(aut, cfa, nid)} the proof takes `{show_stmt(e.stmt)}`, no statement there")
                continue
            if want[tuple(e.cfa_edge)] != e.stmt:
                problems.append(f"at {_at(aut, cfa, nid)} the proof changes the statement `{show_stmt(e.stmt)}`")
            if aut.nodes[e.dst].cfa_node != e.cfa_edge[1]:
                problems.append(f"`{show_stmt(e.stmt)}` at {_at(aut, cfa, nid)} leads to the wrong place")
            have[tuple(e.cfa_edge)] = e
        for key in want:
            if key not in have:
                problems.append(f"at {_at(aut, cfa, nid)} the proof does not follow `{show_stmt(want[key])}`")
        if n.cfa_node == cfa.exit and nid not in aut.exits:
            problems.append("a state of the proof at the end of the program is not an exit")
    return problems


BATCH = 16


def decide_all(formulas, valid, valid_batch=None) -> List[str]:
    """The status of every formula. With ``valid_batch`` (a quicker decision procedure), groups
    of formulas are first asked as one conjunction — valid exactly when each one is, so an
    ``unsat`` settles the whole group — and a group that does not come back valid is halved
    until single formulas are decided by ``valid`` itself."""
    out: List[str] = [""] * len(formulas)  # every entry is set below

    def go(idx):
        if len(idx) == 1:
            out[idx[0]] = valid(formulas[idx[0]])
            return
        if valid_batch(conj(*[formulas[i] for i in idx])) == VALID:
            for i in idx:
                out[i] = VALID
            return
        half = len(idx) // 2
        go(idx[:half])
        go(idx[half:])

    if valid_batch is None:
        return [valid(f) for f in formulas]
    order = list(range(len(formulas)))
    for k in range(0, len(order), BATCH):
        go(order[k : k + BATCH])
    return out


def check_automaton(aut, cfa, enc, valid, beta: A.Expr, valid_batch=None) -> List[Obligation]:
    """Every obligation of rules 1–5, each decided by ``valid`` (VALID only on z3 ``unsat``;
    ``valid_batch``, when given, decides groups of them at once: see :func:`decide_all`)."""
    obs: List[Obligation] = []
    for p in _cover(aut, cfa):
        obs.append(Obligation("COVER", p, "invalid"))
    if not any(o.rule == "COVER" for o in obs):
        obs.append(Obligation("COVER", "the automaton simulates the CFA", VALID))

    env0 = enc.env0
    E = lambda e, env=env0: enc.expr(e, env)  # noqa: E731
    beta0 = to_real(E(beta))

    pending = []  # (obligation, formula), decided together at the end

    def ob(rule, where, formula, src=None, dst=None):
        o = Obligation(rule, where, "", "", src, dst)
        obs.append(o)
        pending.append((o, formula))

    ensures0 = z3.And(*[E(e) for e in cfa.ensures]) if cfa.ensures else z3.BoolVal(True)
    lam0, kap0 = {}, {}  # each node's λ and κ in the initial environment, encoded once

    def L(nid):
        if nid not in lam0:
            lam0[nid] = E(aut.nodes[nid].lam)
        return lam0[nid]

    def K(nid):
        if nid not in kap0:
            kap0[nid] = to_real(E(aut.nodes[nid].kappa))
        return kap0[nid]

    root = aut.nodes[aut.root]
    ob("INIT", _at(aut, cfa, root.id), conj(L(root.id), K(root.id) == 0), root.id)
    ob("BUDGET", _at(aut, cfa, root.id), z3.Implies(L(root.id), K(root.id) <= beta0), root.id)
    for nid, _n in aut.nodes.items():
        lam = L(nid)
        if nid in aut.exits:
            post = ensures0
            ob("EXIT", _at(aut, cfa, nid), z3.Implies(lam, post), nid)
        outs = aut.out(nid)
        if outs and all(e.kind == "split" for e in outs):
            ob(
                "COVER",
                f"the case split at {_at(aut, cfa, nid)}",
                z3.Implies(lam, z3.Or(*[E(e.stmt.cond) for e in outs])),
                nid,
            )
    for e in aut.edges:
        st = StepState(dict(env0), [L(e.src)], [], z3.RealVal(0), [])
        where = edge_place(e.stmt, e.line or aut.nodes[e.src].line)
        if isinstance(e.stmt, A.Sample):
            if e.axiom is None:
                obs.append(Obligation("STEP", where + " (no axiom)", "invalid", "", e.src, e.dst))
                continue
            ax = e.axiom
            cost = to_real(E(ax.cost))
            pre = conj(*[E(s) for s in ax.side], K(e.src) + cost <= beta0)
            ob("STEP", where + " (side, cost)", z3.Implies(L(e.src), pre), e.src, e.dst)
        else:
            cost = z3.RealVal(0)
        st2 = step(enc, st, e.stmt, e.axiom if isinstance(e.stmt, A.Sample) else None)
        # λ(dst) and κ(dst) over the post-state: the pre-state encodings with the changed
        # variables replaced (z3's substitution; the same formula as encoding them again)
        moved = [(env0[k], v) for k, v in st2.env.items() if k in env0 and not v.eq(env0[k])]
        lam_post, kap_post = substitute_all([L(e.dst), K(e.dst)], moved)
        post = conj(lam_post, K(e.src) + cost <= kap_post)
        ob("STEP", where, z3.Implies(st2.context(), post), e.src, e.dst)
    for (o, _f), status in zip(pending, decide_all([f for _o, f in pending], valid, valid_batch)):
        o.status = status
    return obs
