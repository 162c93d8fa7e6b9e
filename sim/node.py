"""The base class of simulated primitives: it owns time, so that a primitive reads as its
algorithm (the way COMAL's templates read: peek the heads, decide, enqueue, dequeue).

A node keeps its own clock `t` (the cycle of its last firing). One firing takes at most one token
from each input it pops and emits at most one token on each output; its cycle is the maximum of
`t + ii`, the arrival cycle of every input head it looks at and the free cycle of every output
slot it fills (then the memory calendar's, for the bytes it moves). Outputs become visible at
`firing + lat`; a popped slot frees at `firing + 1`. The cycles a firing waits for an output slot
beyond what its inputs allowed are `stall` cycles.

A primitive implements `step()`: look at the heads of its inputs (`ch.toks[0]`), decide, and do
one firing through `fire` (or load a register through `take`); it returns
None after firing, `WAITING` when the firing it needs lacks an input token (or the node is done),
`BLOCKED` when it lacks an output slot (check `port.full()` before any side effect). `run()`
steps as far as inputs and output room allow: running ahead of the global clock is safe because
every decision depends on token values only, never on arrival order (the network is a Kahn
process network with time stamps); the engine wakes a BLOCKED node when a slot frees.
"""

from __future__ import annotations

from fuseflowc.diagnostics import UserError

from .tokens import show

#: step() results (run() returns BLOCKED or WAITING to the engine).
BLOCKED = True
WAITING = False


class Node:
    """One primitive instance: inputs are Channels, outputs are ports (see sim.channel)."""

    __slots__ = ("name", "kind", "ins", "outs", "t", "ii", "lat", "fires", "stall", "done",
                 "queued", "wants_out", "flops", "rd_seg", "rd_crd", "rd_vals", "wr_seg",
                 "wr_crd", "wr_vals", "started", "ochans", "stages", "mem")

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
        self.mem = None      # the graph's sim.memory.Memory, for nodes that move bytes
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

    # ---- running ------------------------------------------------------------------------
    def run(self) -> bool:
        """Fire as far as inputs and output room allow; True when stopped for an output slot."""
        return self.run_steps(self.step)

    @staticmethod
    def run_steps(step) -> bool:
        """Call `step` until it cannot fire; its result (BLOCKED or WAITING)."""
        while True:
            r = step()
            if r is not None:
                return r

    #: Attributes holding a graph's bulk data (the levels a scanner reads, the values an array
    #: loads, the stream a writer recorded): `release` drops them.
    BULK_DATA: tuple = ()

    def materialize(self) -> None:
        """Turn the bulk data given as numpy arrays (the builder's, sim/build.py `bulk`) into
        the Python lists the Python engine indexes; the compiled engine reads the arrays
        themselves, so a graph it runs never holds them as Python objects."""
        for a in self.BULK_DATA:
            v = getattr(self, a)
            if v is not None and v.__class__ is not list and hasattr(v, "tolist"):
                setattr(self, a, v.tolist())

    def release(self) -> None:
        """Drop the bulk data this node read or recorded (BULK_DATA), keeping its counters: a
        finished graph's nodes stay in its KernelResult for the report, and at the paper's
        sizes (sim/README.md, "Memory") each graph's copies of its inputs would otherwise
        accumulate over the run. The node cannot run again afterwards."""
        for a in self.BULK_DATA:
            setattr(self, a, None)

    def step(self):  # pragma: no cover - abstract
        """One firing: None, or WAITING / BLOCKED when it cannot fire."""
        raise NotImplementedError

    # ---- the firing rule ----------------------------------------------------------------
    def stalled(self):
        """For a node with one input and one output: WAITING when the input has no token,
        BLOCKED when the output is full, None when it can fire on `self.ins[0].toks[0]`."""
        if not self.ins[0].toks:
            return WAITING
        return BLOCKED if self.outs[0].full() else None

    def fire(self, pops=(), emits=(), looks=(), after: int = 0, nbytes: int = 0) -> int:
        """One firing: pop the head of each channel in `pops`, push each (port, token) of
        `emits`. It happens at the first cycle >= `after` that is at least `ii` after the last
        firing, not before the arrival of the heads of `pops` and `looks` (heads it looked at
        without taking), when every emitted port has a free slot, and when the memory calendar
        has room for `nbytes`. Returns the firing cycle. The ports must not be full."""
        f = self.t + self.ii
        if after > f:
            f = after
        for c in pops:
            tm = c.times[0]
            if tm > f:
                f = tm
        for c in looks:
            tm = c.times[0]
            if tm > f:
                f = tm
        f0 = f
        for p, _ in emits:
            if p.bounded:
                s = p.free.popleft()
                if s > f:
                    f = s
        self.stall += f - f0
        if nbytes:
            f = self.mem.take(f, nbytes)
        f1 = f + 1
        for c in pops:
            c.toks.popleft()
            c.times.popleft()
            c.free.append(f1)
        fl = f + self.lat
        for p, tok in emits:
            p.toks.append(tok)
            p.times.append(fl)
        self.t = f
        self.fires += 1
        return f

    def take(self, inp, looks=(), after: int = 0) -> int:
        """Move the head of `inp` into a register without a firing of its own (sim/README.md,
        "Timing"): at the node's next possible firing cycle (>= `after`, the arrival of the
        heads of `inp` and `looks`); its slot frees the cycle after. Returns that cycle: the
        firing that first uses the register is not earlier."""
        f = self.t + self.ii
        if after > f:
            f = after
        for c in (inp, *looks):
            tm = c.times[0]
            if tm > f:
                f = tm
        inp.toks.popleft()
        inp.times.popleft()
        inp.free.append(f + 1)
        return f

    # ---- errors -------------------------------------------------------------------------
    def error(self, msg: str) -> UserError:
        return UserError(f"simulation: node {self.name} ({self.kind}): {msg}")

    def mismatch(self, what: str, toks) -> UserError:
        return self.error(f"{what} do not line up: " + " vs ".join(show(t) for t in toks))

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"
