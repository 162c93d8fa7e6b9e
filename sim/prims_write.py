"""Level and value writers: they record their streams; sim.assemble builds the tensor after D."""

from __future__ import annotations

from .node import WAITING, Node
from .tokens import D, is_stop


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

    def step(self):
        inp = self.ins[0]
        if not inp.toks:
            return WAITING
        x = inp.toks[0]
        if x.__class__ is int and x == D:
            self.fire((inp,))
            self.done = True
            return WAITING
        self.got.append(x)
        self.fire((inp,), nbytes=self._bytes(x))
        return None

    def _bytes(self, x) -> int:
        """The bytes storing token x (not D): a coordinate, a value (float or block) or a
        compressed level's stop (a segment entry per fiber: a stop closes one); N nothing."""
        if self.mem is None:
            return 0
        if x.__class__ is not int or x >= 0:
            return self.bpt
        return self.bpt if is_stop(x) and self.seg else 0


class Spill(Writer):
    """spill: records every token of a stream (of any kind) until D, for a `replay` of a later
    configuration; every token but D is stored, `bpt` bytes each, through the memory calendar."""

    __slots__ = ("buffer", "block")

    def __init__(self, name: str, buffer: str, ii: int = 1, lat: int = 1, mem=None,
                 bpt: int = 4, block: int | None = None):
        super().__init__(name, "spill", buffer, None, None, ii, lat, mem, bpt)
        self.buffer = buffer
        self.block = block   # the b of a stream of b x b block values (None: scalars)

    def _bytes(self, x) -> int:
        """The bytes storing token x (not D): every token, stops and N included."""
        return self.bpt if self.mem is not None else 0
