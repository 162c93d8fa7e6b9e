"""Level and value writers: they record their streams; sim.assemble builds the tensor after D."""

from __future__ import annotations

from .node import Node
from .tokens import D, S0


class Writer(Node):
    """write_level (a crd stream) or write_vals (a val stream): records every token until D."""

    __slots__ = ("tensor", "mode", "fmt", "got", "mem", "bpt", "stop_bytes")
    kind_name = "write"

    def __init__(self, name: str, kind: str, tensor: str, mode: int | None = None,
                 fmt: str | None = None, ii: int = 1, lat: int = 1, mem=None, bpt: int = 4):
        super().__init__(name, ii, lat)
        self.mem = mem  # the graph's sim.memory.Memory, or None
        self.bpt = bpt  # bytes stored per data token
        # a compressed level stores a segment entry per fiber: a stop closes one
        self.stop_bytes = bpt if kind == "write_level" else 0
        self.kind = kind
        self.tensor = tensor
        self.mode = mode
        self.fmt = fmt
        self.got: list = []

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        got = self.got
        app = got.append
        t, ii = self.t, self.ii
        take = self.mem.take if self.mem is not None else None
        bpt, stop_bytes = self.bpt, self.stop_bytes
        fires = 0
        while it:
            x = it.popleft()
            f = t + ii
            r = itm.popleft()
            if r > f:
                f = r
            if x.__class__ is int:
                if x == D:
                    ifr.append(f + 1)
                    t = f
                    fires += 1
                    self.done = True
                    break
                if take is not None:
                    if x >= 0:                    # a coordinate
                        f = take(f, bpt)
                    elif x <= S0 and stop_bytes:  # a stop: a segment entry
                        f = take(f, stop_bytes)
            elif take is not None:                # a value (float or block)
                f = take(f, bpt)
            ifr.append(f + 1)
            t = f
            fires += 1
            app(x)
        self.t = t
        self.fires += fires
        return False
