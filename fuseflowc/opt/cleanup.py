"""`cleanup`: `cse` then `dce`, the clean-up a lowered module gets before the other passes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..samml.ir import Graph, Module
from .base import GraphPass, register
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination


@register
@dataclass(frozen=True)
class Cleanup(GraphPass):
    """cse then dce: merge duplicate nodes, then remove what no writer needs."""

    name: ClassVar[str] = "cleanup"

    def apply_graph(self, g: Graph) -> None:
        # (graph by graph: cse and dce rewrite each graph on its own, so this is cse on every
        # graph, then dce on every graph)
        CommonSubexpressionElimination().apply_graph(g)
        DeadCodeElimination().apply_graph(g)

    def finish(self, module: Module) -> None:
        DeadCodeElimination().finish(module)
