"""Selection mechanisms: loops that keep a running best or wait for a sentinel.

Report-noisy-max and top-k scans compare each element with a running maximum
(:mod:`.argmax`); sparse-vector style loops keep a variable at its entry value until they find
what they search for (:mod:`.sentinel`). Both contribute candidate loop invariants.

Soundness: candidates only; the loop method keeps what the solver proves inductive and its
checker decides.
"""
