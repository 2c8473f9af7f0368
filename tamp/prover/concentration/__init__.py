"""Concentration: failure bounds for sums and counts of independent draws.

:mod:`.shapes` finds where a program computes a sum of independent draws (an abstract
interpretation of its AST); :mod:`.proof` applies one concentration rule of
:mod:`axioms.concentration` per sum (Hoeffding, Chernoff, Bernstein, the Laplace-sum tail) and
discharges the rule's side conditions and the claim's implication with the solver.
:mod:`.deviation` and :mod:`.tail` give the loop method candidate facts about accumulated noise
and about code after a loop.

Soundness: a rule applies only to a sum of independent draws whose number of terms is the loop's
trip count; the rule's tail bound holds for every distribution family it is stated for (checked
against exact tails in tests/axioms), and the claim follows from the rule's event by a valid
implication, so the failure probability is at most the rule's bound.
"""
