"""`cleanup`: `cse` then `dce`, the clean-up a lowered module gets before the other passes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..samml.ir import Module
from .base import ModulePass, register
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination


@register
@dataclass(frozen=True)
class Cleanup(ModulePass):
    """cse then dce: merge duplicate nodes, then remove what no writer needs."""

    name: ClassVar[str] = "cleanup"

    def apply(self, module: Module) -> None:
        CommonSubexpressionElimination().apply(module)
        DeadCodeElimination().apply(module)
