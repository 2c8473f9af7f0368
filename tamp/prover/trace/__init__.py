"""Trace abstraction modulo probability: the union-bound method.

A program's CFA is unfolded into traces (:mod:`.automaton`); each trace becomes a formula
(:mod:`.formula`) where every sampling statement is replaced by a distribution axiom
``Pr[|v - m| > s·log(1/f)] <= f`` with f synthesised (:mod:`.synthesis`, candidates from
:mod:`.candidates`); sequence interpolants label the nodes with a predicate λ and a failure
bound κ (:mod:`.labels`), giving a failure automaton, which :mod:`.check` verifies. The result
and its failure explanation live in :mod:`.result` and :mod:`.explain`.

Soundness: :mod:`.check` is the only thing a "proved" rests on. By induction on run length, a
run that reaches node q satisfies λ(q) except with probability at most κ(q) (each axiom's mass
f is spent on the edge that samples, failure masses add up along a trace: the union bound), and
at the exit λ implies the postcondition while κ is at most the claimed bound. The interpolants
and axiom choices are search: wrong ones make a check fail, never a false claim proved.
"""
