"""The prover's foundations, shared by every proof method.

The z3 translation of expressions and the validity query (:mod:`.smt`, with a deterministic
second opinion in :mod:`.decide`), small expression helpers (:mod:`.exprs`), weakest
preconditions through one statement (:mod:`.wp`), the sympy simplifier used only for
presentation (:mod:`.simplify`), why a proof failed as data (:mod:`.failure`), checks of the
claim itself before any search (:mod:`.claim`), the concrete runs and live variables that
prune candidate pools (:mod:`.samples`, :mod:`.liveness`), and the concrete points that refute
false obligations before the solver is asked (:mod:`.points`).

Soundness: nothing here decides a verdict. A query answered ``unknown`` is never valid; pruning
a candidate (samples, liveness) only weakens a label, which the checker of the method decides;
a point (points) only ever says "not valid".
"""
