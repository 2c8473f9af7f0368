"""Programs with loops, labelled on the CFA itself.

The failure automaton is the CFA with its back edges (:mod:`.prove`): κ at every node is
computed from the chosen axioms and the loop counts (:mod:`.kappa`), λ is found by Houdini over
candidate templates (:mod:`.invariants`, with the closed forms of :mod:`tamp.prover.counting`
and the selection shapes of :mod:`tamp.prover.selection`); joins of loop-free code get branch
copies (:mod:`.branch_copies`); :mod:`.ranking` orders the axiom combinations tried; every loop
gets a checked termination argument (:mod:`.termination`).

Soundness: the trace method's checker (:mod:`tamp.prover.trace.check`) verifies the labelled
automaton, back edges included: induction on run length covers every run, and the termination
argument makes the bound total (a run that never ends counts as failing).
"""
