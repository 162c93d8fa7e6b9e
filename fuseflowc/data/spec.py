"""What a stage needs to know about a tensor to load or write it: the shared data contract.

Both the program AST and the SAMML IR describe their tensors as `TensorSpec`s, so one loader
(fuseflowc.data.io) serves the reference evaluator and the simulator alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..formats import Format


@dataclass(frozen=True)
class TensorSpec:
    """A tensor's name, its dimensions (a dim name bound from data, or a fixed size), its storage
    format, and its block size (only for blocked formats)."""

    name: str
    dims: tuple[str | int, ...]
    format: Format
    block: int | None = None

    @property
    def order(self) -> int:
        return len(self.dims)
