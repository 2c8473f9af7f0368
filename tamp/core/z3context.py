"""One z3 context per proof: the same answer in a notebook's tenth call as on the command line.

z3 numbers every term it creates, in one table per context, and its heuristics read those
numbers (the order of a sum's arguments after simplification, the order of variables in the
simplex tableau, the order lemmas are tried in). So the same query, built after other proofs
have filled the table, is a different query to z3: a histogram median proved in 10 s in a fresh
process came back "unknown" after another test file's proofs in the same process. Proving in a
fresh context makes every proof see the numbering a fresh process would.

:func:`proof_context` is entered by each engine's top-level entry (the prover, the certificate
checker). The outermost entry installs a new context as z3's default (``z3.main_ctx()``, which
every term built without an explicit ``ctx=`` uses) and it stays the default afterwards, so the
result's terms and the caller's later terms share a context; nested entries (the prover asked
again for a needed bound) keep the one they are in.

The same numbering also depends on *when* z3 terms are freed: z3 recycles a freed term's number
for the next new term, and a term held by cyclic Python garbage is freed only when the cyclic
collector runs, on a schedule set by everything the process allocated before (a library loaded
before the proof moved it, and a 12 s proof of a top-k program came back "unknown"). So the
outermost entry also freezes the objects alive before it (``gc.freeze``, then a collection of the
now empty generations): during the proof the collector sees only the proof's own objects; they
are unfrozen at the end. And it pauses the automatic collector for the proof: its schedule counts
every allocation of the process, the other threads' included (a test runner's messaging thread,
a cache warmed or not by earlier work), so the same proof met its collections at different
moments in a pytest-xdist worker than in a fresh process, and the histogram median came back
"unknown" there (after 1817 solver calls instead of 450). Instead the proof collects at points of
its own: every :data:`COLLECT_EVERY` solver queries (:func:`tick`, called by
:func:`tamp.core.validity.check_sat`) and between two proof methods (:func:`collect`), the same
points in every process. Memory is unchanged in practice (reference counting frees all but
cyclic garbage; measured: a 50 s proof peaks at the same resident size).

A library the proof loads on first use (sympy, for closed forms) would break that again: in a
fresh process its import allocates hundreds of thousands of objects in the middle of the proof,
in a process that loaded it before, nothing. :func:`load_in_proof` imports it with the collector
paused and then freezes what is alive, in every process alike, so that the collector's state
after that point is the same whether the import happened or not (and sympy's result cache,
another trace of earlier proofs, is emptied when a proof starts).

Caches that hold z3 terms across proofs register a function with :func:`on_new_context` that
empties them: terms of two contexts must never meet in one z3 call.

>>> import z3
>>> with proof_context():
...     x = z3.Real("x")
...     with proof_context():
...         y = z3.Real("y")
>>> x.ctx is y.ctx is z3.main_ctx()
True
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
from types import ModuleType
from typing import Callable, Iterator, List, Set

import z3
import z3.z3 as _z3_module

# z3 writes its own warnings straight to the process's stderr (e.g. "optimization with
# quantified constraints is not supported", when a template guess's query carries the sum
# lemmas): they are notes to z3's developers, not messages for tamp's user, and every answer
# they qualify is already treated as a hint (a guess is re-decided by the checker) or as
# failure (``unknown``). Off for every context, new ones included (a global parameter).
z3.set_param("warning", False)

_RESETS: List[Callable[[], None]] = []
_depth = 0
#: whether the automatic collector ran before the outermost proof paused it
_collector_was_on = True
#: solver queries between two of a proof's own collections (:func:`tick`)
COLLECT_EVERY = 500
_ticks = 0
#: the modules :func:`load_in_proof` has settled in the current proof
_settled: Set[str] = set()


def on_new_context(reset: Callable[[], None]) -> Callable[[], None]:
    """Register ``reset`` (which empties a cache of z3 terms) to run whenever a proof installs a
    new context; returns it, so it can decorate the function."""
    _RESETS.append(reset)
    return reset


def new_default_context() -> z3.Context:
    """Install a new z3 context as the default one (``z3.main_ctx()``) and empty the registered
    caches; terms made before keep their own (old) context."""
    ctx = z3.Context()
    _z3_module._main_ctx = ctx  # z3's module-level default, read by main_ctx()
    for reset in _RESETS:
        reset()
    return ctx


def load_in_proof(name: str) -> ModuleType:
    """The module ``name``, imported (when it is not yet) so that the rest of the proof sees the
    same collector state whether or not this process had loaded it before (see above). Outside
    a proof, a plain import."""
    if _depth == 0:
        return importlib.import_module(name)
    if name in _settled:
        return sys.modules[name]
    enabled = gc.isenabled()
    gc.disable()  # the import's objects are counted but not collected: no collection happens
    try:
        module = importlib.import_module(name)
    finally:
        if enabled:
            gc.enable()
    gc.freeze()  # what is alive, the import's objects included, leaves the collector's view
    _settled.add(name)
    return module


def in_proof() -> bool:
    """Whether a proof's context is current (inside :func:`proof_context`)."""
    return _depth > 0


def collect() -> None:
    """Inside a proof: collect the proof's cyclic garbage now (a point of the proof's own, the
    same in every process; the automatic collector is paused). Outside: nothing."""
    if _depth > 0:
        gc.collect()


def tick() -> None:
    """One solver query: every :data:`COLLECT_EVERY` of a proof's queries, :func:`collect`."""
    global _ticks
    if _depth > 0:
        _ticks += 1
        if _ticks % COLLECT_EVERY == 0:
            collect()


@contextlib.contextmanager
def proof_context() -> Iterator[z3.Context]:
    """Run the body in a fresh z3 context, unless it already runs inside one."""
    global _depth, _collector_was_on, _ticks
    if _depth == 0:
        new_default_context()
        _settled.clear()
        if "sympy" in sys.modules:  # its cache of results holds earlier proofs' work
            sys.modules["sympy"].core.cache.clear_cache()
        _collector_was_on = gc.isenabled()
        gc.disable()
        gc.freeze()
        gc.collect()
        _ticks = 0
    _depth += 1
    try:
        yield z3.main_ctx()
    finally:
        _depth -= 1
        if _depth == 0:
            gc.unfreeze()
            if _collector_was_on:
                gc.enable()
