"""The exact JSON form of a CFA (statements and specification as serialised ASTs).

Used by the writer to record the CFA a proof is about, and by the checker to compare that
record with the CFA it rebuilds from the source file: equal JSON means equal graphs, equal
statements (exactly, internal names included) and equal claim (requires, ensures, bound).
Source lines are left out: they do not change what is proved.
"""

from __future__ import annotations

from typing import Any, Dict

from lang.serialize import to_json


def cfa_form(cfa) -> Dict[str, Any]:
    """Everything of ``cfa`` that a proof depends on, as plain JSON data."""
    return {
        "name": cfa.name,
        "entry": cfa.entry,
        "exit": cfa.exit,
        "loop_heads": sorted(cfa.loop_heads),
        "params": [{"name": p.name, "type": to_json(p.type)} for p in cfa.params],
        "requires": [to_json(e) for e in cfa.requires],
        "ensures": [to_json(e) for e in cfa.ensures],
        "bound": to_json(cfa.bound),
        "types": {n: to_json(t) for n, t in sorted(cfa.types.items())},
        "nodes": sorted(cfa.graph.nodes),
        "edges": [
            {
                "src": u,
                "dst": v,
                "key": k,
                "stmt": to_json(d["stmt"]),
                "back": bool(d.get("back")),
                "user_assume": bool(d.get("user_assume")),
            }
            for u, v, k, d in cfa.edges()
        ],
    }


def first_difference(a: Any, b: Any, where: str = "cfa") -> str:
    """A short description of the first place where two JSON values differ ('' when equal)."""
    if type(a) is not type(b):
        return where
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{where}.{k}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return ""
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return ""
    return "" if a == b else where
