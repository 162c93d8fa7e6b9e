"""`cse`: common-subexpression elimination.

Two nodes are duplicates when they have the same kind, the same attributes (lane included) and
read the same streams in the same order: two scanners of one view, two roots of one tensor, two
identical repsigs or ALU ops. Such nodes compute the same streams, so consumers of the later one
are rewired to the first and the later one is removed. Visiting nodes in topological order and
rewriting each node's operands before comparing it merges whole chains in one sweep (two
root -> scan -> scan chains of one tensor merge level by level); the sweep is repeated until
nothing changes, so the result is a fixed point. Writers are never merged (two writers of one
level are an error the verifier reports, not something to hide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..samml.ir import Graph, Node, Stream
from .base import GraphPass, register


def _value_key(v: Any) -> Any:
    # Floats by their exact bits' text (so -0.0 and 0.0 differ, and an int constant a pass
    # stored equals the same float); lists as tuples so the key hashes.
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float) or (isinstance(v, int) and abs(v) < 2 ** 53):
        return ("num", float(v).hex())
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, (list, tuple)):
        return tuple(_value_key(x) for x in v)
    return ("repr", repr(v))


def node_key(n: Node) -> tuple:
    """What makes two nodes duplicates: kind, attributes and operand streams (by identity)."""
    attrs = tuple((k, _value_key(v)) for k, v in n.attrs().items())
    return (n.KIND, attrs, tuple(id(s) for s in n.inputs), len(n.outputs))


def cse_sweep(g: Graph) -> int:
    """One sweep of `g` in topological order; returns how many nodes were merged away."""
    remap: dict[int, Stream] = {}
    seen: dict[tuple, Node] = {}
    removed: set[int] = set()
    for n in g.topo_order():
        n.inputs = [remap.get(id(s), s) for s in n.inputs]
        if not n.outputs:
            continue
        key = node_key(n)
        first = seen.get(key)
        if first is None:
            seen[key] = n
            continue
        for old, new in zip(n.outputs, first.outputs):
            remap[id(old)] = new
        removed.add(id(n))
    # Operands of nodes visited before their producer (only on a cycle) may still need rewiring.
    for n in g.nodes:
        n.inputs = [remap.get(id(s), s) for s in n.inputs]
    g.nodes = [n for n in g.nodes if id(n) not in removed]
    return len(removed)


def common_subexpressions(g: Graph) -> int:
    """Merge duplicate nodes of `g` to a fixed point; returns how many nodes were removed."""
    total = 0
    while True:
        k = cse_sweep(g)
        total += k
        if k == 0:
            return total


@register
@dataclass(frozen=True)
class CommonSubexpressionElimination(GraphPass):
    """Merge duplicate nodes (same kind, attributes and inputs), rewiring their consumers."""

    name: ClassVar[str] = "cse"

    def apply_graph(self, g: Graph) -> None:
        common_subexpressions(g)
