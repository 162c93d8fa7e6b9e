"""The base class of simulated primitives: it owns time, so that a primitive reads as its
algorithm (the way COMAL's templates read: peek the heads, decide, enqueue, dequeue).

A node keeps its own clock `t` (the cycle of its last firing). One firing takes at most one token
from each input it pops and emits at most one token on each output; its cycle is the maximum of
`t + ii`, the arrival cycle of every input head it looks at and the free cycle of every output
slot it fills (then the memory calendar's, for the bytes it moves). Outputs become visible at
`firing + lat`; a popped slot frees at `firing + 1`. The cycles a firing waits for an output slot
beyond what its inputs allowed are `stall` cycles.

A primitive implements `step()`: look at the heads of its inputs (`ch.toks[0]`), decide, and do
one firing through `fire` (or a run of firings through `fire_run` / `fire_pops`); it returns
None after firing, `WAITING` when the firing it needs lacks an input token (or the node is done),
`BLOCKED` when it lacks an output slot (check `port.full()` before any side effect). `run()`
steps as far as inputs and output room allow: running ahead of the global clock is safe because
every decision depends on token values only, never on arrival order (the network is a Kahn
process network with time stamps); the engine wakes a BLOCKED node when a slot frees.
"""

from __future__ import annotations

from itertools import accumulate, count, islice, repeat
from operator import add, sub

from fuseflowc.diagnostics import UserError

from .channel import pop_n
from .tokens import D, show

#: step() results (run() returns BLOCKED or WAITING to the engine).
BLOCKED = True
WAITING = False

#: fire_pops times runs up to this long by a plain loop, longer ones with C-level calls.
SHORT = 32


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

    def release(self) -> None:
        """Drop the bulk data this node read or recorded (BULK_DATA), keeping its counters: a
        finished graph's nodes stay in its KernelResult for the report, and at the paper's
        sizes (sim/README.md, "Memory") each graph's copies of its inputs would otherwise
        accumulate over the run. The node cannot run again afterwards."""
        for a in self.BULK_DATA:
            setattr(self, a, None)

    def step(self):  # pragma: no cover - abstract
        """One firing (or a run of them): None, or WAITING / BLOCKED when it cannot fire."""
        raise NotImplementedError

    # ---- the firing rule ----------------------------------------------------------------
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

    # The shapes of most firings, spelled out for speed (tests/sim/test_sim_node.py: each is
    # `fire` with the same arguments).

    def fire1(self, inp, out, tok, nbytes: int = 0, after: int = 0) -> int:
        """`fire((inp,), ((out, tok),), after=after, nbytes=nbytes)`; no emission when `out`
        is None."""
        f = self.t + self.ii
        if after > f:
            f = after
        tm = inp.times[0]
        if tm > f:
            f = tm
        if out is not None and out.bounded:
            s = out.free.popleft()
            if s > f:
                self.stall += s - f
                f = s
        if nbytes:
            f = self.mem.take(f, nbytes)
        inp.toks.popleft()
        inp.times.popleft()
        inp.free.append(f + 1)
        if out is not None:
            out.toks.append(tok)
            out.times.append(f + self.lat)
        self.t = f
        self.fires += 1
        return f

    def fire2(self, a, b, out, tok) -> int:
        """`fire((a, b), ((out, tok),))`; no emission when `out` is None."""
        f = self.t + self.ii
        tm = a.times[0]
        if tm > f:
            f = tm
        tm = b.times[0]
        if tm > f:
            f = tm
        if out is not None and out.bounded:
            s = out.free.popleft()
            if s > f:
                self.stall += s - f
                f = s
        f1 = f + 1
        a.toks.popleft()
        a.times.popleft()
        a.free.append(f1)
        b.toks.popleft()
        b.times.popleft()
        b.free.append(f1)
        if out is not None:
            out.toks.append(tok)
            out.times.append(f + self.lat)
        self.t = f
        self.fires += 1
        return f

    def emit2(self, o1, t1, o2, t2, nbytes: int = 0) -> int:
        """`fire(emits=((o1, t1), (o2, t2)), nbytes=nbytes)`: two tokens out, none taken."""
        f = f0 = self.t + self.ii
        if o1.bounded:
            s = o1.free.popleft()
            if s > f:
                f = s
        if o2.bounded:
            s = o2.free.popleft()
            if s > f:
                f = s
        self.stall += f - f0
        if nbytes:
            f = self.mem.take(f, nbytes)
        fl = f + self.lat
        o1.toks.append(t1)
        o1.times.append(fl)
        o2.toks.append(t2)
        o2.times.append(fl)
        self.t = f
        self.fires += 1
        return f

    def fire_each(self, fn, inp, out, after: int = 0):
        """A stream map, the shape of pass-through primitives and of runs of like tokens: one
        firing per head x of `inp` while `out` (None: no output) has room, popping x and
        emitting y of `(y, nbytes) = fn(x)` (nbytes through the memory calendar); the first
        firing not before `after`. `fn(x)` returns None to stop before x (the caller's own
        step takes it). Returns BLOCKED when stopped for an output slot, WAITING when the input
        ran out or after D (the node is done), None when fn stopped. Each firing is `fire1`,
        in one loop for speed."""
        it, itm, ifr = inp.toks, inp.times, inp.free
        emit = out is not None
        ob = emit and out.bounded
        if emit:
            ot, otm, of = out.toks, out.times, out.free
        t, ii, lat = self.t, self.ii, self.lat
        mem = self.mem
        if mem is not None:             # Memory.take's fast path, inlined
            used, W, cap, spill = mem.used, mem.window, mem.cap, mem.spill
        stall = fires = 0
        result = WAITING
        while it:
            if ob and not of:
                result = BLOCKED
                break
            x = it[0]
            r = fn(x)
            if r is None:
                result = None
                break
            y, nb = r
            f = t + ii
            if after > f:
                f = after
            tm = itm[0]
            if tm > f:
                f = tm
            if ob:
                s = of.popleft()
                if s > f:
                    stall += s - f
                    f = s
            if nb:
                w = f // W
                u = used.get(w, 0) + nb
                if u <= cap:
                    used[w] = u
                else:
                    f = spill(w, nb)
            it.popleft()
            itm.popleft()
            ifr.append(f + 1)
            if emit:
                ot.append(y)
                otm.append(f + lat)
            t = f
            fires += 1
            if x.__class__ is int and x == D:
                self.done = True
                break
        self.t = t
        self.stall += stall
        self.fires += fires
        return result

    def fire_zip(self, fn, a, b, out):
        """A binary stream map: one firing per pair of heads (x, y) of `a` and `b` while `out`
        (None: no output) has room, popping both and emitting fn(x, y); fn returns None to stop
        before the pair. Returns BLOCKED / WAITING / None as fire_each. Each firing is `fire2`,
        in one loop for speed."""
        at, atm, af = a.toks, a.times, a.free
        bt, btm, bf = b.toks, b.times, b.free
        emit = out is not None
        ob = emit and out.bounded
        if emit:
            ot, otm, of = out.toks, out.times, out.free
        t, ii, lat = self.t, self.ii, self.lat
        stall = fires = 0
        result = WAITING
        while at and bt:
            if ob and not of:
                result = BLOCKED
                break
            z = fn(at[0], bt[0])
            if z is None:
                result = None
                break
            f = t + ii
            tm = atm[0]
            if tm > f:
                f = tm
            tm = btm[0]
            if tm > f:
                f = tm
            if ob:
                s = of.popleft()
                if s > f:
                    stall += s - f
                    f = s
            at.popleft()
            atm.popleft()
            af.append(f + 1)
            bt.popleft()
            btm.popleft()
            bf.append(f + 1)
            if emit:
                ot.append(z)
                otm.append(f + lat)
            t = f
            fires += 1
        self.t = t
        self.stall += stall
        self.fires += fires
        return result

    def fire_all(self, fn, outs):
        """A stream map over every input: one firing per set of heads while every input has a
        token, popping every input and emitting fn(heads) (one token per port of `outs`, which
        must have room); fn(*heads) (free of side effects: it may be asked again) returns None to
        stop before those heads. Returns BLOCKED / WAITING / None as fire_each. Each firing is
        `fire(self.ins, zip(outs, fn(heads)))`; two (crd, ref) pairs in, three ports out (a
        two-input joiner's run of matches) in one loop for speed."""
        if len(self.ins) != 4 or len(outs) != 3:
            return self._fire_all_n(fn, outs)
        c0, r0, c1, r1 = self.ins
        c0t, c0m, c0f = c0.toks, c0.times, c0.free
        r0t, r0m, r0f = r0.toks, r0.times, r0.free
        c1t, c1m, c1f = c1.toks, c1.times, c1.free
        r1t, r1m, r1f = r1.toks, r1.times, r1.free
        o0, o1, o2 = outs
        o0b, o1b, o2b = o0.bounded, o1.bounded, o2.bounded
        t, ii, lat = self.t, self.ii, self.lat
        stall = fires = 0
        result = WAITING
        while c0t and r0t and c1t and r1t:
            emit = fn(c0t[0], r0t[0], c1t[0], r1t[0])
            if emit is None:
                result = None
                break
            if (o0b and not o0.free) or (o1b and not o1.free) or (o2b and not o2.free):
                result = BLOCKED
                break
            f = t + ii
            tm = c0m[0]
            if tm > f:
                f = tm
            tm = r0m[0]
            if tm > f:
                f = tm
            tm = c1m[0]
            if tm > f:
                f = tm
            tm = r1m[0]
            if tm > f:
                f = tm
            f0 = f
            if o0b:
                s = o0.free.popleft()
                if s > f:
                    f = s
            if o1b:
                s = o1.free.popleft()
                if s > f:
                    f = s
            if o2b:
                s = o2.free.popleft()
                if s > f:
                    f = s
            stall += f - f0
            f1 = f + 1
            c0t.popleft()
            c0m.popleft()
            c0f.append(f1)
            r0t.popleft()
            r0m.popleft()
            r0f.append(f1)
            c1t.popleft()
            c1m.popleft()
            c1f.append(f1)
            r1t.popleft()
            r1m.popleft()
            r1f.append(f1)
            fl = f + lat
            x0, x1, x2 = emit
            o0.toks.append(x0)
            o0.times.append(fl)
            o1.toks.append(x1)
            o1.times.append(fl)
            o2.toks.append(x2)
            o2.times.append(fl)
            t = f
            fires += 1
        self.t = t
        self.stall += stall
        self.fires += fires
        return result

    def _fire_all_n(self, fn, outs):
        """fire_all for any number of inputs and outputs, firing by firing."""
        ins = self.ins
        while True:
            for c in ins:
                if not c.toks:
                    return WAITING
            emit = fn(*[c.toks[0] for c in ins])
            if emit is None:
                return None
            for p in outs:
                if p.full():
                    return BLOCKED
            self.fire(ins, tuple(zip(outs, emit)))

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

    def fire_run(self, o1, toks1, o2, toks2, nbytes: int = 0) -> None:
        """k firings one after the other, popping nothing, the j-th emitting toks1[j] on port
        o1 and toks2[j] on o2 (both k long, within the ports' free slots), each moving `nbytes`
        through the memory calendar: k `emit2`s. In one go (ranges of stamps) when no slot
        frees late, or the slots free back to back (a consumer firing every ii cycles, the
        usual steady state), and the calendar has room in every window; else firing by firing
        (in one loop)."""
        ii = self.ii
        k = len(toks1)
        f = self.t + ii
        first = f
        bounded = [p for p in (o1, o2) if p.bounded]
        # Free slots are stamped in pop order, so the k-th is the latest; when even it is free
        # by the first firing, no firing of the run waits for a slot.
        if any(p.free[k - 1] > f for p in bounded):
            # firing j is max(f_{j-1} + ii, slot j's free cycle): with slots freed ii apart,
            # max(f, free_0) + j*ii
            fr = list(islice(bounded[0].free, k))
            fr0 = fr[0]
            if fr != list(range(fr0, fr0 + k * ii, ii)) or \
                    (len(bounded) == 2 and list(islice(bounded[1].free, k)) != fr):
                return self._emit_each(o1, toks1, o2, toks2, nbytes)
            if fr0 > f:
                first = fr0
        if nbytes and not self.mem.take_run(first, k, ii, nbytes):
            return self._emit_each(o1, toks1, o2, toks2, nbytes)
        last = first + (k - 1) * ii
        stamps = range(first + self.lat, last + self.lat + 1, ii)
        o1.toks.extend(toks1)
        o1.times.extend(stamps)
        o2.toks.extend(toks2)
        o2.times.extend(stamps)
        for p in bounded:
            pop_n(p.free, k)
        self.stall += first - f          # only the first firing waits
        self.t = last
        self.fires += k
        return None

    def _emit_each(self, o1, toks1, o2, toks2, nbytes: int) -> None:
        """fire_run firing by firing: `emit2` for each pair of tokens, in one loop."""
        t1, m1, fr1, b1 = o1.toks, o1.times, o1.free, o1.bounded
        t2, m2, fr2, b2 = o2.toks, o2.times, o2.free, o2.bounded
        t, ii, lat, mem = self.t, self.ii, self.lat, self.mem
        stall = 0
        for x1, x2 in zip(toks1, toks2):
            f = f0 = t + ii
            if b1:
                s = fr1.popleft()
                if s > f:
                    f = s
            if b2:
                s = fr2.popleft()
                if s > f:
                    f = s
            stall += f - f0
            if nbytes:
                f = mem.take(f, nbytes)
            fl = f + lat
            t1.append(x1)
            m1.append(fl)
            t2.append(x2)
            m2.append(fl)
            t = f
        self.t = t
        self.stall += stall
        self.fires += len(toks1)

    def fire_pops(self, k: int, pops, looks=(), ints: bool = True) -> None:
        """k firings that each pop the head of every channel in `pops` and emit nothing (an
        intersection skipping coordinates): firing j at max(firing j-1 + ii, the arrival of
        the j-th tokens), the first also after the heads of `looks`. `ints`: the popped tokens
        are ints (a faster drain; blocks do not compare with None)."""
        ii = self.ii
        f = self.t + ii
        for c in looks:
            tm = c.times[0]
            if tm > f:
                f = tm
        arrivals = [list(islice(c.times, k)) for c in pops]
        if k <= SHORT:
            fs = []
            fj = f - ii
            for tms in zip(*arrivals):
                fj += ii
                for tm in tms:
                    if tm > fj:
                        fj = tm
                fs.append(fj + 1)
        else:
            # f_j - j*ii is a running max of (arrival_j - j*ii) started at f. The common case
            # at C speed: arrivals ii apart (a producer firing back to back) give
            # f_j = max(f, arrival_0) + j*ii.
            a0 = arrivals[0][0]
            if all(a == arrivals[0] for a in arrivals) and \
                    arrivals[0] == list(range(a0, a0 + k * ii, ii)):
                f = max(f, a0)
                fs = list(range(f + 1, f + 1 + k * ii, ii))
            else:
                latest = map(max, *arrivals) if len(arrivals) > 1 else arrivals[0]
                g = accumulate(map(sub, latest, count(0, ii)), max, initial=f)
                next(g)
                fs = list(map(add, g, count(1, ii)))   # f_j + 1: the freed slots
        for c in pops:
            pop_n(c.times, k)
            if ints:
                pop_n(c.toks, k)
            else:
                for _ in repeat(None, k):
                    c.toks.popleft()
            c.free.extend(fs)
        self.t = fs[-1] - 1
        self.fires += k

    # ---- errors -------------------------------------------------------------------------
    def error(self, msg: str) -> UserError:
        return UserError(f"simulation: node {self.name} ({self.kind}): {msg}")

    def mismatch(self, what: str, toks) -> UserError:
        return self.error(f"{what} do not line up: " + " vs ".join(show(t) for t in toks))

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"
