"""Closed forms and counts: what a loop computes, as a function of its iterations.

Scalar evolution of the values a loop updates (:mod:`.recurrence`), closed forms of the arrays
it fills (:mod:`.array_forms`), bounds of search loops that close in on each other
(:mod:`.bracket`), which iterations a counter guard selects (:mod:`.guards`) and iteration
counts from ranking functions (:mod:`.rank_count`).

Soundness: every closed form is a *candidate* label or a term of a failure bound κ; the loop
method's Houdini keeps a candidate only when the solver proves it inductive, and its checker
re-verifies every label and κ, so a wrong closed form can only make a proof fail.
"""
