"""The base class of simulated primitives and the timing bookkeeping they share.

A node keeps its own clock `t` (the cycle of its last firing). One firing takes at most one token
from each input it pops and emits at most one token on each output; its cycle is the maximum of
`t + ii`, the arrival cycle of every input head it looks at and the free cycle of every output
slot it fills. Outputs become visible at `firing + lat`; a popped slot frees at `firing + 1`.
The cycles a firing waits for an output slot beyond what its inputs allowed are `stall` cycles.

Subclasses implement `run()`: process as many firings as inputs and output room allow (running
ahead of the global clock is safe because every decision depends on token values only, never on
arrival order: the network is a Kahn process network with time stamps), and return True when it
stopped for lack of output room (so the engine wakes it when a slot frees). Hot primitives inline
the timing arithmetic; the others use `fire`.
"""

from __future__ import annotations

from fuseflowc.diagnostics import UserError

from .tokens import show


class Node:
    """One primitive instance: inputs are Channels, outputs are ports (see sim.channel)."""

    __slots__ = ("name", "kind", "ins", "outs", "t", "ii", "lat", "fires", "stall", "done",
                 "queued", "wants_out", "flops", "rd_seg", "rd_crd", "rd_vals", "wr_seg",
                 "wr_crd", "wr_vals", "started", "ochans", "stages")

    kind_name = "node"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        self.name = name
        self.kind = self.kind_name
        self.ins: list = []
        self.outs: list = []
        self.t = -ii         # cycle of the last firing (none yet: the first may be at 0)
        self.ii = ii
        self.lat = lat
        self.fires = 0
        self.stall = 0
        self.done = False
        self.queued = False
        self.wants_out = False
        self.started = False
        self.flops = 0
        self.ochans: list = []
        self.stages: list = []
        self.rd_seg = self.rd_crd = self.rd_vals = 0
        self.wr_seg = self.wr_crd = self.wr_vals = 0

    # ---- wiring -------------------------------------------------------------------------
    def wire(self, ins: list, outs: list) -> None:
        """Attach input channels and output ports (see sim.channel.make_port)."""
        self.ins = list(ins)
        self.outs = list(outs)
        for c in self.ins:
            c.dst = self
        self.ochans = []
        self.stages = []
        for p in self.outs:
            chans = p.chans if hasattr(p, "chans") else [p]
            if len(chans) > 1:
                self.stages.append(p)
            for c in chans:
                c.src = self
                self.ochans.append(c)

    @property
    def finish(self) -> int:
        """The cycle this node's last output became visible (its last firing + latency)."""
        return self.t + self.lat if self.fires else 0

    # ---- generic firing (for primitives whose control flow is not on the hot path) -------
    def room(self, *ports) -> bool:
        """True when every port in `ports` has a free slot."""
        for p in ports:
            if p.bounded and not p.free:
                return False
        return True

    def fire(self, f: int, pops, emits) -> int:
        """Fire at the earliest cycle >= `f` the output slots allow: pop the `pops` channels,
        push `emits` [(port, token)]. Returns the firing cycle."""
        f0 = f
        for p, _ in emits:
            if p.bounded:
                s = p.free.popleft()
                if s > f:
                    f = s
        self.stall += f - f0
        for ch in pops:
            ch.toks.popleft()
            ch.times.popleft()
            ch.free.append(f + 1)
        fl = f + self.lat
        for p, tok in emits:
            p.toks.append(tok)
            p.times.append(fl)
        self.t = f
        self.fires += 1
        return f

    def error(self, msg: str) -> UserError:
        return UserError(f"simulation: node {self.name} ({self.kind}): {msg}")

    def mismatch(self, what: str, toks) -> UserError:
        return self.error(f"{what} do not line up: " + " vs ".join(show(t) for t in toks))

    def run(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"
