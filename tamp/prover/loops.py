"""Prover II: programs with loops, labelled on the CFA itself (GENERALIZE by construction).

The automaton is the CFA with its back edges; every node gets (λ, κ) and the ordinary
checker (:mod:`.check`) verifies them — the induction on run length there covers every
iteration count, so a checked labelling is a proof for all inputs.

* One axiom per sampling statement (the same at every iteration); combinations of the
  proposals of :mod:`.candidates` are tried cheapest-derived first.
* κ is computed, not guessed: along the loop-free parts it adds the axioms' costs (``max``
  where branches join); at a loop head with counter ``i`` (``i := lo`` before the loop,
  ``i := i + 1`` in its body, condition ``i < hi``) it is ``κ_in + c · (i - lo)`` where ``c`` is
  the cost of one iteration (computed the same way over the body, nested loops included);
  after the loop ``i`` is replaced by its final value ``hi``. An assignment ``i := i + k``
  rewrites κ by ``i ↦ i - k``. Anything else makes κ unavailable (the proof is "unknown").
* λ is found by Houdini over candidate invariants: counter ranges, the postcondition and its
  prefix forms (``forall j in 0..n: B`` → ``forall j in 0..i: B``, occurrences of ``hi``
  replaced by ``i``), the axioms' ``¬bad`` (generalised over array indices), branch conditions
  and assignment equalities. Candidates not preserved by some edge are dropped to a fixpoint.
"""

from __future__ import annotations

import itertools
import time
from typing import Dict, List, Optional

import networkx as nx
import z3

from lang import ast as A

from .automaton import AEdge, FailureAutomaton
from .candidates import proposals
from .check import check_automaton
from .exprs import ZERO, conjuncts, not_, plus, subst
from .labels import negated_conjuncts
from .result import ProofResult, axioms_table
from .show import show_expr
from .smt import VALID, Encoder, Stats, is_valid, to_real
from .synthesis import Timeout
from .trace import StepState, step

MAX_COMBOS = 12


class NoKappa(Exception):
    """κ cannot be expressed for this program with these axioms."""


# ---------------------------------------------------------------------------- loop structure


def _loops(cfa) -> Dict[int, dict]:
    """For each loop head: body nodes, latches, condition, counter (name, init, hi, strict)."""
    g = cfa.graph
    dag = nx.DiGraph()
    dag.add_nodes_from(g.nodes)
    for u, v, _k, d in cfa.edges():
        if not d.get("back"):
            dag.add_edge(u, v)
    info = {}
    for h in cfa.loop_heads:
        latches = [u for u, v, _k, d in cfa.edges() if v == h and d.get("back")]
        body = {h}
        stack = list(latches)
        while stack:
            n = stack.pop()
            if n in body:
                continue
            body.add(n)
            stack.extend(p for p in dag.predecessors(n))
        cond = None
        exit_edge = None
        for u, v, _k, d in cfa.out_edges(h):
            st = d["stmt"]
            if isinstance(st, A.Assume) and v in body:
                cond = st.cond
            elif isinstance(st, A.Assume):
                exit_edge = (u, v)
        counter = _counter(cfa, h, body, cond)
        info[h] = {"body": body, "latches": latches, "cond": cond, "counter": counter, "exit": exit_edge}
    return info, dag


def _counter(cfa, h, body, cond):
    """(name, init expr, hi expr or None, strict) of the loop counter, or None."""
    if cond is None:
        return None
    incs = set()
    for u, v, _k, d in cfa.edges():
        st = d["stmt"]
        if u in body and v in body and isinstance(st, A.Assign) and isinstance(st.targets[0], A.Var):
            x = st.targets[0].name
            if st.value == A.Binary("+", A.Var(x), A.num(1)):
                incs.add(x)
    atoms = conjuncts(cond)
    for x in sorted(incs):
        hi, strict = None, True
        for a in atoms:
            if isinstance(a, A.Binary) and a.op in ("<", "<=") and a.left == A.Var(x):
                hi, strict = a.right, a.op == "<"
        if hi is None:
            continue
        init = _init_value(cfa, h, body, x)
        if init is None:
            continue
        return (x, init, hi, strict, len(atoms) == 1)
    return None


def _init_value(cfa, h, body, x):
    """The value assigned to ``x`` on the straight-line path into loop head ``h``."""
    cur, seen = h, set()
    while cur not in seen:
        seen.add(cur)
        ins = [(w, d) for w, _v, _k, d in cfa.graph.in_edges(cur, keys=True, data=True)
               if not d.get("back") and (cur != h or w not in body)]
        if len(ins) != 1:
            return None
        w, d = ins[0]
        st = d["stmt"]
        if isinstance(st, A.Assign) and st.targets[0] == A.Var(x):
            return None if x in A.free_vars(st.value) else st.value
        if isinstance(st, (A.Assign, A.Sample)) and x in {t.name for t in st.targets if isinstance(t, A.Var)}:
            return None
        cur = w
    return None


# ---------------------------------------------------------------------------- κ


def _max(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == b:
        return a
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return A.Call("max", (a, b))


def _transfer(k: A.Expr, st, axiom, loop_exit_subst=None) -> A.Expr:
    """κ after one statement."""
    if isinstance(st, A.Sample):
        names = {t.name if isinstance(t, A.Var) else t.base.name for t in st.targets}
        cost = axiom.cost if axiom is not None else ZERO
        if names & (A.free_vars(k) | A.free_vars(cost)):
            raise NoKappa("a sampled variable occurs in the failure bound")
        return plus(k, cost)
    if isinstance(st, A.Assign):
        t = st.targets[0]
        name = t.name if isinstance(t, A.Var) else t.base.name
        if name not in A.free_vars(k):
            return k
        v = st.value
        if isinstance(t, A.Var) and isinstance(v, A.Binary) and v.op == "+" and v.left == t \
                and isinstance(v.right, A.Num):
            return subst(k, {name: A.Binary("-", t, v.right)})
        raise NoKappa(f"the failure bound depends on '{name}', which is reassigned")
    if loop_exit_subst:
        return subst(k, loop_exit_subst)
    return k


def compute_kappa(cfa, axioms: Dict, loops, dag) -> Dict[int, A.Expr]:
    """κ for every CFA node (see the module docstring)."""
    order = list(nx.topological_sort(dag))
    inputs = {p.name for p in cfa.params}

    def region(nodes, start, k0, heads_done):
        kap = {start: k0}
        for n in order:
            if n not in nodes or n == start:
                continue
            vals = []
            for u, _v, key, d in cfa.graph.in_edges(n, keys=True, data=True):
                if d.get("back") or u not in kap:
                    continue
                ex = None
                if u in loops and loops[u]["exit"] == (u, n):
                    c = loops[u]["counter"]
                    if c is not None and c[4]:
                        name, _init, hi, strict, _only = c
                        ex = {name: hi if strict else A.Binary("+", hi, A.num(1))}
                vals.append(_transfer(kap[u], d["stmt"], axioms.get((u, n, key)), ex))
            if not vals:
                continue
            k = vals[0]
            for v in vals[1:]:
                k = _max(k, v)
            if n in loops:
                k = plus(k, loop_term(n))
            kap[n] = k
        return kap

    cache = {}

    def loop_term(h):
        if h in cache:
            return cache[h]
        lp = loops[h]
        c = lp["counter"]
        inner = region(lp["body"], h, ZERO, None)
        vals = [kk for u in lp["latches"] if u in inner for kk in [inner[u]]]
        if not vals:
            raise NoKappa("a loop body has no path back to its head")
        per = vals[0]
        for v in vals[1:]:
            per = _max(per, v)
        if per == ZERO:
            cache[h] = ZERO
            return ZERO
        if c is None:
            raise NoKappa("a loop with costly samplings has no recognisable counter")
        if A.free_vars(per) - inputs:
            raise NoKappa("the cost of one iteration depends on the state: " + show_expr(per))
        name, init = c[0], c[1]
        term = A.Binary("*", per, A.Binary("-", A.Var(name), init))
        cache[h] = term
        return term

    kap = region(set(cfa.graph.nodes), cfa.entry, ZERO, None)
    # body nodes: κ(head) + delta
    return kap


# ---------------------------------------------------------------------------- λ (Houdini)


def _replace_subsets(e: A.Expr, old: A.Expr, new: A.Expr, limit=8) -> List[A.Expr]:
    """Variants of ``e`` with some occurrences of ``old`` replaced by ``new``."""
    occ = []

    def count(x, path=()):
        if x == old:
            occ.append(path)
            return
        for i, ch in enumerate(A.children(x)):
            count(ch, path + (i,))

    count(e)
    if not occ or len(occ) > 4:
        return []
    out = []
    for r in range(1, len(occ) + 1):
        for chosen in itertools.combinations(occ, r):
            out.append(_replace_at(e, set(chosen), old, new))
    return out[:limit]


def _replace_at(e, paths, old, new, path=()):
    if path in paths:
        return new
    if not isinstance(e, A.Expr):
        return e
    import dataclasses

    changes = {}
    idx = 0
    for f in dataclasses.fields(e):
        if f.name == "pos":
            continue
        v = getattr(e, f.name)
        if isinstance(v, A.Node):
            changes[f.name] = _replace_at(v, paths, old, new, path + (idx,))
            idx += 1
        elif isinstance(v, tuple) and v and isinstance(v[0], A.Node):
            items = []
            for it in v:
                items.append(_replace_at(it, paths, old, new, path + (idx,)))
                idx += 1
            changes[f.name] = tuple(items)
    return dataclasses.replace(e, **changes)


def candidate_pool(cfa, axioms, loops) -> List[A.Expr]:
    pool: List[A.Expr] = []

    def add(c):
        if c not in pool and not (isinstance(c, A.BoolLit)):
            pool.append(c)

    post = [c for e in cfa.ensures for c in conjuncts(e)]
    for c in post:
        add(c)
    for h, lp in loops.items():
        cnt = lp["counter"]
        if cnt is None:
            continue
        name, init, hi, strict, _only = cnt
        i = A.Var(name)
        add(A.Binary("<=", init, i))
        add(A.Binary("<=", i, hi if strict else A.Binary("+", hi, A.num(1))))
        for c in post:
            for v in _replace_subsets(c, hi, i):
                add(v)
        for (u, v, k), ax in axioms.items():
            st = cfa.graph.edges[u, v, k]["stmt"]
            if u in lp["body"]:
                for nb in negated_conjuncts(ax.bad):
                    add(nb)
                    if any(isinstance(t, A.Index) and t.index == i for t in st.targets):
                        j = "j$"
                        add(A.Quant("forall", j, init, i, False, subst(nb, {name: A.Var(j)})))
    for (u, v, k), ax in axioms.items():
        for nb in negated_conjuncts(ax.bad):
            add(nb)
    for u, v, k, d in cfa.edges():
        st = d["stmt"]
        if isinstance(st, A.Assume):
            for c in conjuncts(st.cond):
                if not isinstance(c, A.BoolLit):
                    add(c)
                    add(not_(c))
        elif isinstance(st, A.Assign) and isinstance(st.targets[0], A.Var) \
                and st.targets[0].name not in A.free_vars(st.value) and not st.targets[0].name.startswith("$"):
            add(A.Binary("==", st.targets[0], st.value))
    return pool


def houdini(aut: FailureAutomaton, cfa, enc, valid, pool) -> None:
    """Largest subset of ``pool`` at each node that is inductive over the automaton's edges."""
    env0 = enc.initial_env()
    enc_pool = {}
    for c in pool:
        try:
            enc_pool[id(c)] = enc.expr(c, env0)
        except Exception:
            continue
    usable = [c for c in pool if id(c) in enc_pool]
    for n in aut.nodes.values():
        n.label = list(usable)
    root = aut.nodes[aut.root]
    root.label = [c for c in usable if valid(enc_pool[id(c)]) == VALID]
    work = list(aut.edges)
    while work:
        e = work.pop(0)
        src, dst = aut.nodes[e.src], aut.nodes[e.dst]
        if not dst.label:
            continue
        st = StepState(dict(env0), [enc_pool[id(c)] for c in src.label], [], z3.RealVal(0), [])
        st2 = step(enc, st, e.stmt, e.axiom)
        ctx = st2.context()
        whole = z3.And(*[enc.expr(c, st2.env) for c in dst.label])
        if valid(z3.Implies(ctx, whole)) == VALID:
            continue
        kept = [c for c in dst.label if valid(z3.Implies(ctx, enc.expr(c, st2.env))) == VALID]
        if len(kept) != len(dst.label):
            dst.label = kept
            work.extend(x for x in aut.out(dst.id) if x not in work)


# ---------------------------------------------------------------------------- driver


def automaton_of(cfa) -> FailureAutomaton:
    aut = FailureAutomaton(cfa.name)
    for n, d in cfa.graph.nodes(data=True):
        from .automaton import ANode

        aut.nodes[n] = ANode(n, n, d.get("line"))
    aut.root = cfa.entry
    aut.exits = [cfa.exit]
    for u, v, k, d in cfa.edges():
        aut.edges.append(AEdge(u, v, d["stmt"], "cfa", (u, v, k), None, d.get("line"), bool(d.get("back"))))
    return aut


def prove_loops(program, cfa, deadline, t0, progress) -> ProofResult:
    stats = Stats()
    enc = Encoder(cfa.types)
    env0 = enc.initial_env()
    hyps = [enc.expr(r, env0) for r in cfa.requires]
    times = {"synthesis": 0.0, "interpolation": 0.0, "inclusion": 0.0}

    def valid(goal):
        ms = 8000
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout()
            ms = int(min(ms, left * 1000))
        return is_valid(goal, enc, stats, ms, hyps)

    loops, dag = _loops(cfa)
    samples = [(u, v, k) for u, v, k, d in cfa.edges() if isinstance(d["stmt"], A.Sample)]
    spec = list(cfa.ensures) + [cfa.bound]
    n_real = max(1, sum(1 for s in samples if cfa.graph.edges[s]["stmt"].dist.func not in ("bern", "unif")))
    cands = [proposals(cfa.graph.edges[s]["stmt"], spec, cfa.bound, n_real) for s in samples]
    # prefer costly (informative) axioms derived from the spec: drop pure cost-0 choices last
    cands = [[c for c in cs if not _zero(c.cost)] + [c for c in cs if _zero(c.cost)] for cs in cands]
    proposals_n = 0
    reason = "no combination of axioms gave a checked labelling"
    aut = automaton_of(cfa)
    try:
        for combo in itertools.islice(itertools.product(*cands), MAX_COMBOS):
            proposals_n += 1
            axioms = dict(zip(samples, combo))
            ts = time.monotonic()
            try:
                kap = compute_kappa(cfa, axioms, loops, dag)
            except NoKappa as exc:
                reason = f"no failure bound κ: {exc}"
                continue
            missing = [n for n in cfa.graph.nodes if n not in kap]
            if missing:
                reason = "some nodes are unreachable"
                continue
            # quick rejection: the exit bound must fit β under the counters' ranges
            aut = automaton_of(cfa)
            for e in aut.edges:
                if e.cfa_edge in axioms:
                    e.axiom = axioms[e.cfa_edge]
            for n in aut.nodes.values():
                n.kappa = kap[n.id]
            times["synthesis"] += time.monotonic() - ts
            ti = time.monotonic()
            if progress:
                progress(f"{program.name}: labelling with axioms #{proposals_n}")
            houdini(aut, cfa, enc, valid, candidate_pool(cfa, axioms, loops))
            times["interpolation"] += time.monotonic() - ti
            tc = time.monotonic()
            obligations = check_automaton(aut, cfa, enc, valid, cfa.bound)
            times["inclusion"] += time.monotonic() - tc
            bad = [o for o in obligations if o.status != VALID]
            if not bad:
                return _done(program, cfa, "proved", t0, "", aut, stats, times, obligations, None, proposals_n)
            reason = "the labelled automaton did not check: " + "; ".join(
                f"{o.rule} at {o.where} ({o.status})" for o in bad[:3])
    except Timeout:
        return _done(program, cfa, "unknown", t0, f"timeout after {proposals_n} axiom combination(s)", None,
                     stats, times, [], reason, proposals_n)
    return _done(program, cfa, "unknown", t0,
                 "not proved (a failed union-bound proof does not mean the claim is false)", None, stats, times,
                 [], reason, proposals_n)


def _zero(e):
    return isinstance(e, A.Num) and e.value == 0


def _done(program, cfa, verdict, t0, message, aut, stats, times, obligations, failure, proposals_n):
    st = {"traces": "all (loop automaton)", "proposals": proposals_n, "lemma_instances": stats.lemma_instances,
          "solver_calls": stats.solver_calls, "solver_unknowns": stats.unknowns,
          "obligations": len(obligations), "time": {k: round(v, 4) for k, v in times.items()}}
    return ProofResult(program.name, "failure-bound", verdict, time.monotonic() - t0, show_expr(cfa.bound),
                       message, cfa=cfa, automata=[aut] if aut is not None and verdict == "proved" else [],
                       axioms=axioms_table(aut) if aut is not None and verdict == "proved" else [],
                       stats=st, obligations=obligations, failed_trace=failure)
