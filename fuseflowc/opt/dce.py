"""`dce`: dead-code elimination.

A node is live when it writes a tensor (write_level, write_vals) or a DRAM buffer (spill: the
kinds whose `refs` trait is `writer` or `spill`) or one of its results is read by a live node;
every other node is removed. Permute steps are kept as they are. With `decls=true` (the
default) a temp tensor declaration no node and no permute step names any more is dropped too;
input and output declarations always stay (they are the module's interface).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..samml.ir import Graph, Module
from .base import GraphPass, register

#: The `refs` traits of the kinds that keep what they read (a tensor, a DRAM buffer).
_SINKS = ("writer", "spill")


def live_nodes(g: Graph) -> set[int]:
    """The ids of the nodes of `g` whose results reach a writer or a spill (those included)."""
    live: set[int] = set()
    work = [n for n in g.nodes if n.TRAITS.refs in _SINKS]
    while work:
        n = work.pop()
        if id(n) in live:
            continue
        live.add(id(n))
        work += [s.producer for s in n.inputs if s.producer is not None]
    return live


def dead_code(g: Graph) -> int:
    """Remove the nodes of `g` that reach no writer; returns how many were removed."""
    live = live_nodes(g)
    before = len(g.nodes)
    g.nodes = [n for n in g.nodes if id(n) in live]
    return before - len(g.nodes)


def unused_temps(m: Module) -> list[str]:
    """Names of temp tensors no node and no permute step of `m` names."""
    named = {t for g in m.graphs for t in g.tensor_names()}
    named |= {s.src for s in m.steps} | {x for s in m.steps for x in s.made}
    return [t.name for t in m.tensors if t.role == "temp" and t.name not in named]


@register
@dataclass(frozen=True)
class DeadCodeElimination(GraphPass):
    """Remove nodes none of whose results reaches a writer (and unused temp declarations)."""

    name: ClassVar[str] = "dce"
    decls: bool = True

    def apply_graph(self, g: Graph) -> None:
        dead_code(g)

    def finish(self, module: Module) -> None:
        if self.decls:
            drop = set(unused_temps(module))
            module.tensors = [t for t in module.tensors if t.name not in drop]
