"""Level and value writers: they record their streams; sim.assemble builds the tensor after D."""

from __future__ import annotations

from .node import Node
from .tokens import D, S0


class Writer(Node):
    """write_level (a crd stream) or write_vals (a val stream): records every token until D."""

    __slots__ = ("tensor", "mode", "fmt", "got", "mem", "bpt")
    kind_name = "write"

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

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        got = self.got
        app = got.append
        t, ii = self.t, self.ii
        mem = self.mem
        if mem is not None:     # Memory.take inlined (its fast path; spill when full)
            used, W, cap, spill = mem.used, mem.window, mem.cap, mem.spill
        bpt = self.bpt
        # a compressed level stores a segment entry per fiber: a stop closes one
        seg = self.kind == "write_level"
        fires = 0
        while it:
            x = it.popleft()
            f = t + ii
            r = itm.popleft()
            if r > f:
                f = r
            # bytes: a coordinate, a value (float or block) or a level's stop; D is neither
            # >= 0 nor <= S0, so it is never charged
            if mem is not None and (x.__class__ is not int or x >= 0 or (x <= S0 and seg)):
                w = f // W
                u = used.get(w, 0) + bpt
                if u <= cap:
                    used[w] = u
                else:
                    f = spill(w, bpt)
            ifr.append(f + 1)
            t = f
            fires += 1
            if x.__class__ is int and x == D:
                self.done = True
                break
            app(x)
        self.t = t
        self.fires += fires
        return False
