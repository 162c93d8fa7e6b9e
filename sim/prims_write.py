"""Level and value writers: they record their streams; sim.assemble builds the tensor after D."""

from __future__ import annotations

from .node import Node
from .tokens import S0, D


class Writer(Node):
    """write_level (a crd stream) or write_vals (a val stream): records every token until D."""

    __slots__ = ("tensor", "mode", "fmt", "got", "bpt", "seg")
    kind_name = "write"
    BULK_DATA = ("got",)

    def __init__(self, name: str, kind: str, tensor: str, mode: int | None = None,
                 fmt: str | None = None, ii: int = 1, lat: int = 1, mem=None, bpt: int = 4):
        super().__init__(name, ii, lat)
        self.mem = mem  # the graph's sim.memory.Memory, or None
        self.bpt = bpt  # bytes stored per data token
        self.kind = kind
        self.tensor = tensor
        self.mode = mode
        self.fmt = fmt
        self.got: list = []
        self.seg = kind == "write_level"

    def run(self) -> bool:
        return self.fire_each(self._record, self.ins[0], None)

    def _record(self, x):
        """Record token x (not D); the bytes storing it: a coordinate, a value (float or block)
        or a compressed level's stop (a segment entry per fiber: a stop closes one)."""
        if x.__class__ is not int or x >= 0:
            self.got.append(x)
            return None, self.bpt if self.mem is not None else 0
        if x != D:
            self.got.append(x)
        return None, self.bpt if x <= S0 and self.seg and self.mem is not None else 0


class Spill(Writer):
    """spill: records every token of a stream (of any kind) until D, for a `replay` of a later
    configuration; every token but D is stored, `bpt` bytes each, through the memory calendar."""

    __slots__ = ("buffer", "block")

    def __init__(self, name: str, buffer: str, ii: int = 1, lat: int = 1, mem=None,
                 bpt: int = 4, block: int | None = None):
        super().__init__(name, "spill", buffer, None, None, ii, lat, mem, bpt)
        self.buffer = buffer
        self.block = block   # the b of a stream of b x b block values (None: scalars)

    def _record(self, x):
        """Record token x and store its bytes (D ends the stream: neither)."""
        if x.__class__ is int and x == D:
            return None, 0
        self.got.append(x)
        return None, self.bpt if self.mem is not None else 0
