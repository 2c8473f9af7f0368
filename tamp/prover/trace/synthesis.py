"""Axiom synthesis on a trace tree: choose one axiom per sampling edge so every trace is proved.

The tree is searched depth-first as an AND-OR problem: at a branching node every child
must be proved (AND); at a sampling edge one of its proposals must work (OR). A sampling whose
variables the claim may depend on (:func:`relevant_names`) tries the proposals with a cost
first — those are the ones that say something about the value — and the free (support-only)
ones last; any other sampling tries the free ones first. A proposal is pruned as soon as the
prefix's side conditions or ``ω <= β`` fail (costs only grow along a trace), which is what
keeps the costly-first order from exploring combinations over the budget: on a straight-line
sum of six Laplace samplings the search takes 6 proposals (it took thousands cheapest-first). Choices on a shared prefix are shared by every trace through
it, which is what lets the traces merge into one automaton.

Every "proved" here is an SMT answer ``unsat``; ``unknown`` counts as failure. The search
only *proposes*: the labelled automaton is re-checked by :mod:`tamp.prover.trace.check`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from lang import ast as A
from lang.walk import free_vars
from tamp.cfa import CFA
from tamp.core.z3expr import to_real
from tamp.prover.base.decide import decide_fresh
from tamp.prover.base.exprs import assigned_names
from tamp.prover.base.failure import NO_AXIOM, NO_FAMILY, TRACE, ProofFailure, TraceStep
from tamp.prover.base.smt import UNKNOWN, VALID, Encoder, Stats, is_valid
from tamp.prover.trace.automaton import AEdge, FailureAutomaton
from tamp.prover.trace.candidates import proposals
from tamp.prover.trace.formula import StepState, initial_state, prefix_goal, step, trace_goal
from tamp.prover.trace.roots import chain_polynomials
from tamp.show import show_expr, show_stmt


class Timeout(Exception):
    """The proof's time limit was reached."""


#: proposals one search may try before giving up (the suite's proofs need at most a few hundred;
#: an unprovable claim over many samplings would otherwise enumerate combinations for hours)
MAX_PROPOSALS = 1000


class OutOfProposals(Exception):
    """The search tried ``MAX_PROPOSALS`` proposals without finding axioms for every trace."""


@dataclass
class Search:
    """State of one synthesis run."""

    cfa: CFA
    aut: FailureAutomaton
    enc: Encoder
    stats: Stats
    deadline: Optional[float]
    beta: A.Expr
    spec_exprs: List[A.Expr]
    n_real: int
    proposals: int = 0
    traces_proved: int = 0
    failure: Optional[ProofFailure] = None
    cache: Dict[int, list] = field(default_factory=dict)
    max_proposals: Optional[int] = None  # None: MAX_PROPOSALS
    costly_first: bool = True  # at a sampling the claim depends on, try the proposals with a cost first

    def ms(self) -> int:
        """The clock time left (ms, at most 10 s); past the deadline, :class:`Timeout`."""
        if self.deadline is None:
            return 10000
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Timeout()
        return int(min(10000, left * 1000))

    def clock_ms(self) -> Optional[int]:
        """The time the proof has left (ms), None without a deadline."""
        return None if self.deadline is None else self.ms()

    def valid(self, goal) -> str:
        """Validity under ``requires`` within a budget of 10 s of z3's steps; an ``unknown`` of
        the reused solver is asked again of a fresh one (:mod:`.decide`), which runs z3's full
        preprocessing."""
        r = is_valid(goal, self.enc, self.stats, 10000, self.hyps, clock_ms=self.clock_ms())
        if r == UNKNOWN:
            r = decide_fresh(goal, self.enc, self.stats, self.hyps, timeout_ms=self.clock_ms())
        return r

    def valid_quick(self, goal) -> str:
        """:meth:`valid` with a short budget (for groups of obligations asked at once)."""
        return is_valid(goal, self.enc, self.stats, 1000, self.hyps, clock_ms=self.clock_ms(), facts=False)

    def __post_init__(self):
        env0 = self.enc.initial_env()
        self.hyps = [self.enc.expr(r, env0) for r in self.cfa.requires]
        self.beta_z3 = _real(self.enc.expr(self.beta, env0))
        self.relevant = relevant_names(self.cfa)
        self.atoms = program_conditions(self.cfa)

    # ------------------------------------------------------------------ search
    def solve(self, nid: int, st: StepState) -> bool:
        """Choose axioms below ``nid`` (given the symbolic prefix ``st``); True when every trace
        through ``nid`` is proved."""
        if nid in self.aut.exits:
            r = self.valid(trace_goal(self.enc, st, self.cfa.ensures, self.beta_z3))
            if r == VALID:
                self.traces_proved += 1
                return True
            self.note(nid, ProofFailure(TRACE, unknown=r == UNKNOWN))
            return False
        outs = self.aut.out(nid)
        if len(outs) == 1 and isinstance(outs[0].stmt, A.Sample) and outs[0].kind == "cfa":
            return self.solve_sample(outs[0], st)
        for e in outs:  # AND over branches
            if not self.solve(e.dst, step(self.enc, st, e.stmt)):
                return False
        return True

    def solve_sample(self, e: AEdge, st: StepState) -> bool:
        assert isinstance(e.stmt, A.Sample)  # the caller picks sampling edges
        cands = self.cache.get(id(e.stmt))
        if cands is None:
            cands = proposals(e.stmt, self.spec_exprs, self.beta, self.n_real, atoms=self.atoms)
            self.cache[id(e.stmt)] = cands
        if not cands:
            self.note(e.src, ProofFailure(NO_FAMILY, stmt=show_stmt(e.stmt), line=e.line))
            return False
        if self.costly_first and assigned_names(e.stmt) & self.relevant:
            cands = [c for c in cands if not _is_zero(c.cost)] + [c for c in cands if _is_zero(c.cost)]
        for ax in cands:
            if self.proposals >= (self.max_proposals or MAX_PROPOSALS):
                raise OutOfProposals()
            self.proposals += 1
            st2 = step(self.enc, st, e.stmt, ax, self.beta_z3)
            if (ax.side or not _is_zero(ax.cost)) and self.valid(prefix_goal(st2, self.beta_z3)) != VALID:
                continue
            if self.solve(e.dst, st2):
                e.axiom = ax
                return True
        self.note(e.src, ProofFailure(NO_AXIOM, stmt=show_stmt(e.stmt), line=e.line, bound=show_expr(self.beta)))
        return False

    def note(self, nid: int, failure: ProofFailure) -> None:
        """Remember the first failure, with the trace to ``nid``; the innermost sampling that no
        axiom could serve is the more useful explanation, so it replaces a plain trace failure."""
        if self.failure is not None and not (self.failure.kind != NO_AXIOM and failure.kind == NO_AXIOM):
            return
        steps = tuple(TraceStep(e.line, show_stmt(e.stmt), e.kind == "split") for e in self.aut.path_to(nid))
        self.failure = dataclasses.replace(failure, steps=steps)


def program_conditions(cfa) -> List[A.Expr]:
    """The branch conditions and assigned values of the program, and its postcondition: where a
    window axiom looks for the tests of a sampled variable (proposals only)."""
    out: List[A.Expr] = list(cfa.ensures)
    for _u, _v, _k, d in cfa.edges():
        st = d["stmt"]
        e = st.cond if isinstance(st, A.Assume) else st.value if isinstance(st, A.Assign) else None
        if e is not None and e not in out:
            out.append(e)
    # root-counting proposals (uniform_root), as disequalities its proposer reads
    out += [c for c in (A.Binary("!=", p, A.num(0)) for p in chain_polynomials(cfa)) if c not in out]
    return out


def relevant_names(cfa) -> set:
    """The variables the claim may depend on: those read by ``ensures`` or the bound, and,
    closing under the program's statements (flow-insensitively), those read by an assignment to
    a relevant variable, by a branch condition, or by the distribution of a relevant sampling.
    Only an ordering heuristic (which proposals to try first), so over-approximating is fine."""
    rel = set()
    for e in list(cfa.ensures) + [cfa.bound]:
        rel |= set(free_vars(e))
    stmts = [d["stmt"] for _u, _v, _k, d in cfa.edges()]
    for st in stmts:
        if isinstance(st, A.Assume):
            rel |= set(free_vars(st.cond))
    changed = True
    while changed:
        changed = False
        for st in stmts:
            if isinstance(st, A.Assign):
                reads = set(free_vars(st.value)) | {
                    n for t in st.targets if isinstance(t, A.Index) for n in set(free_vars(t.index))
                }
            elif isinstance(st, A.Sample):
                reads = set(free_vars(st.dist))
            else:
                continue
            if assigned_names(st) & rel and not reads <= rel:
                rel |= reads
                changed = True
    return rel


def _is_zero(e) -> bool:
    return isinstance(e, A.Num) and e.value == 0


_real = to_real


def synthesize(search: Search) -> bool:
    """Run the search from the root; on success every sampling edge has its axiom."""
    return search.solve(search.aut.root, initial_state(search.enc))
