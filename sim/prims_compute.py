"""Value primitives: ALUs, the order-0 reducer and the sparse accumulators of order 1 and 2."""

from __future__ import annotations

from collections import deque

from .node import Node
from .ops import (REDUCE_BLOCK, REDUCE_SCALAR, alu_flops, alu_function, arity, labelled_alu,
                  labelled_alu_flops, labelled_reduce)
from .tokens import EB, MASK, D, N, S0, empt, level, same_stop, stop


def _n_left(op: str, fn, y):
    """`N op y` where N acts as the operation's identity."""
    if op == "sub":
        return -y
    if op == "div":
        return fn(1.0, y)
    return y


class Alu(Node):
    """ALU on one or two value streams. Stops and D pass (and must line up for binary ops); an N
    operand acts as the identity of the operation (the other operand is the result); unary and
    scalar ops pass N through."""

    __slots__ = ("op", "fn", "binary", "fl", "nl", "nr")
    kind_name = "alu"

    def __init__(self, name: str, op: str, block: int | None = None, const=None,
                 ii: int = 1, lat: int = 1, labels=None):
        super().__init__(name, ii, lat)
        self.op = op
        self.binary = arity(op) == 2
        self.nl = self.nr = None
        if labels is not None and block:
            # a block einsum: (in0, in1, out) inner-index labels (sim.ops.labelled_alu)
            self.fn, self.nl, self.nr = labelled_alu(op, *labels, block, const)
            self.fl = labelled_alu_flops(op, *labels, block)
        else:
            self.fn = alu_function(op, block, const)
            self.fl = alu_flops(op, block)

    def run(self) -> bool:
        return self._run2() if self.binary else self._run1()

    def _run1(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat, fn = self.t, self.ii, self.lat, self.fn
        stall = fires = ops = 0
        blocked = False
        while it:
            if ob and not of:
                blocked = True
                break
            x = it.popleft()
            f = t + ii
            r = itm.popleft()
            if r > f:
                f = r
            if ob:
                s = of.popleft()
                if s > f:
                    stall += s - f
                    f = s
            ifr.append(f + 1)
            if x.__class__ is not int:
                x = fn(x)
                ops += 1
            elif x == D:
                self.done = True
            ot.append(x)
            otm.append(f + lat)
            t = f
            fires += 1
        self.t = t
        self.stall += stall
        self.fires += fires
        self.flops += ops * self.fl
        return blocked

    def _run2(self) -> bool:
        a, b = self.ins
        at, atm, af = a.toks, a.times, a.free
        bt, btm, bf = b.toks, b.times, b.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat, fn, op = self.t, self.ii, self.lat, self.fn, self.op
        # the common case, without a function call (float or unlabelled block: same)
        mul = op == "mul" and self.nl is None
        nl, nr = self.nl, self.nr
        stall = fires = ops = 0
        blocked = False
        while at and bt:
            if ob and not of:
                blocked = True
                break
            x = at.popleft()
            y = bt.popleft()
            f = t + ii
            r = atm.popleft()
            if r > f:
                f = r
            r = btm.popleft()
            if r > f:
                f = r
            if ob:
                s = of.popleft()
                if s > f:
                    stall += s - f
                    f = s
            af.append(f + 1)
            bf.append(f + 1)
            xc = x.__class__ is int
            yc = y.__class__ is int
            if not xc and not yc:
                if mul:
                    z = x * y
                else:
                    z = fn(x, y)
                ops += 1
            elif xc and yc:
                if x == y:
                    z = x
                elif x <= -3 and y <= -3 and not (x - y) & MASK:
                    z = x if x > y else y       # same level: the lesser emptiness
                elif x == N and y >= -2:
                    z = y
                elif y == N and x >= -2:
                    z = x
                else:
                    raise self.mismatch("operand streams", (x, y))
                if z == D:
                    self.done = True
            elif xc and x == N:
                z = _n_left(op, fn, y) if nl is None else nl(y)
            elif yc and y == N:
                z = x if nr is None else nr(x)
            else:
                raise self.mismatch("operand streams", (x, y))
            ot.append(z)
            otm.append(f + lat)
            t = f
            fires += 1
        self.t = t
        self.stall += stall
        self.fires += fires
        self.flops += ops * self.fl
        return blocked


class Reduce(Node):
    """Order-0 reducer (sum or max): on S0 emits the result and resets; on Sk (k > 0) emits the
    result then S(k-1). An empty fiber gives an explicit 0 (a zero block).

    A bare stop (no fiber here at all: see sim.tokens) reduces to nothing: S(k-1) alone.
    """

    __slots__ = ("fn", "acc", "zero", "pend", "fl", "pre")
    kind_name = "reduce"

    def __init__(self, name: str, op: str = "sum", block: int | None = None,
                 ii: int = 1, lat: int = 1, labels=None):
        super().__init__(name, ii, lat)
        self.fn = (REDUCE_BLOCK if block else REDUCE_SCALAR)[op]
        self.acc = None
        self.pre = None
        if block and labels is not None:
            # labelled blocks: reduce inside each block first (sim.ops.labelled_reduce)
            self.pre, self.zero, self.fl = labelled_reduce(op, *labels, block)
        elif block:
            import numpy as np
            self.zero = np.zeros((block, block))
            self.fl = block * block
        else:
            self.zero = 0.0
            self.fl = 1
        self.pend = None

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat, fn = self.t, self.ii, self.lat, self.fn
        acc, pend = self.acc, self.pend
        stall = fires = ops = 0
        blocked = False
        while True:
            f = t + ii
            if pend is not None:                 # the stop that follows a result
                out = pend
                pend = None
            else:
                if not it:
                    break
                x = it[0]
                r = itm[0]
                if r > f:
                    f = r
                if x.__class__ is not int:        # a value: accumulate
                    it.popleft()
                    itm.popleft()
                    if self.pre is not None:
                        x = self.pre(x)
                    acc = x if acc is None else fn(acc, x)
                    ops += 1
                    ifr.append(f + 1)
                    t = f
                    fires += 1
                    continue
                if x == N or (x < S0 and not (-3 - x) & MASK):   # N, or a bare S0: nothing
                    it.popleft()
                    itm.popleft()
                    ifr.append(f + 1)
                    t = f
                    fires += 1
                    continue
                if ob and not of:
                    blocked = True
                    break
                it.popleft()
                itm.popleft()
                if x == D:
                    out = D
                    self.done = True
                elif x <= S0 - EB:                        # bare Sk/e (k > 0) -> S(k-1)/(e-1)
                    out = x + 1 + EB
                    acc = None
                else:
                    out = acc if acc is not None else self.zero
                    acc = None
                    if x != S0:
                        pend = x + 1
                f0 = f
                if ob:
                    s = of.popleft()
                    if s > f:
                        f = s
                stall += f - f0
                ifr.append(f + 1)
                ot.append(out)
                otm.append(f + lat)
                t = f
                fires += 1
                if out is D:
                    break
                continue
            if ob and not of:
                pend = out
                blocked = True
                break
            if ob:
                s = of.popleft()
                if s > f:
                    stall += s - f
                    f = s
            ot.append(out)
            otm.append(f + lat)
            t = f
            fires += 1
        self.t = t
        self.acc, self.pend = acc, pend
        self.stall += stall
        self.fires += fires
        self.flops += ops * self.fl
        return blocked


class _Queued(Node):
    """A node that may owe several tokens per output after one input: `q[i]` holds what output
    i still has to emit; queued tokens drain (one per output per firing) before more input."""

    __slots__ = ("q",)

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.q: list[deque] = []

    def _heads(self) -> list:
        """What one firing emits: (output, head) for every non-empty queue."""
        outs = self.outs
        return [(outs[i], qi[0]) for i, qi in enumerate(self.q) if qi]

    def _pop_heads(self) -> None:
        """Pop the emitted heads (after the firing); D among them ends the node."""
        for qi in self.q:
            if qi:
                x = qi.popleft()
                if x.__class__ is int and x == D:
                    self.done = True

    def drain(self) -> bool | None:
        """Emit queued tokens; True if blocked on output, None when the queues are empty."""
        while True:
            emits = self._heads()
            if not emits:
                return None
            if not self.room(*(p for p, _ in emits)):
                return True
            self.fire(self.t + self.ii, (), emits)
            self._pop_heads()

    def fire_through(self, f: int, pops) -> None:
        """Fire at >= `f`, popping `pops`, and emit in the same firing the head of every
        non-empty queue when its output has room: a token queued by this firing leaves in the
        cycle it came in (pass-through, one token per cycle like every primitive), the rest
        drains in later firings."""
        emits = self._heads()
        if not emits or not self.room(*(p for p, _ in emits)):
            self.fire(f, pops, ())
            return
        self.fire(f, pops, emits)
        self._pop_heads()


class Spacc1(Node):
    """Order-1 sparse accumulator: (crd, val) in and out. Accumulates the points of the inner
    level across the reduced index; on a stop Sk with k >= 1 emits the accumulated fiber sorted
    by coordinate (one point per cycle), then S(k-1); S0 only ends an inner fiber."""

    __slots__ = ("fn", "acc", "fl", "items", "fi", "pend", "pre")
    kind_name = "spacc1"

    def __init__(self, name: str, op: str = "sum", block: int | None = None,
                 ii: int = 1, lat: int = 1, labels=None):
        super().__init__(name, ii, lat)
        self.fn = (REDUCE_BLOCK if block else REDUCE_SCALAR)[op]
        self.acc: dict = {}
        self.fl = block * block if block else 1
        self.pre = None
        if block and labels is not None:
            self.pre, _, self.fl = labelled_reduce(op, *labels, block)
        self.items: list = []   # the fiber being flushed, sorted
        self.fi = 0             # next item of it to emit
        self.pend = None        # the stop (or D) that follows the flushed fiber

    def run(self) -> bool:
        c_in, v_in = self.ins
        ct, ctm, cfr = c_in.toks, c_in.times, c_in.free
        vt, vtm, vfr = v_in.toks, v_in.times, v_in.free
        oc, ov = self.outs
        oct, ocm, ocf, ocb = oc.toks, oc.times, oc.free, oc.bounded
        ovt, ovm, ovf, ovb = ov.toks, ov.times, ov.free, ov.bounded
        t, ii, lat, fn = self.t, self.ii, self.lat, self.fn
        acc, items, fi, pend = self.acc, self.items, self.fi, self.pend
        nitems = len(items)
        stall = fires = ops = 0
        blocked = False
        while True:
            if fi < nitems or pend is not None:          # flushing: one point per cycle
                if (ocb and not ocf) or (ovb and not ovf):
                    blocked = True
                    break
                f = t + ii
                f0 = f
                if ocb:
                    s = ocf.popleft()
                    if s > f:
                        f = s
                if ovb:
                    s = ovf.popleft()
                    if s > f:
                        f = s
                stall += f - f0
                if fi < nitems:
                    c, v = items[fi]
                    fi += 1
                else:
                    c = v = pend
                    pend = None
                oct.append(c)
                ocm.append(f + lat)
                ovt.append(v)
                ovm.append(f + lat)
                t = f
                fires += 1
                if c == D and v.__class__ is int:
                    self.done = True
                    break
                continue
            if not ct or not vt:
                break
            c = ct.popleft()
            v = vt.popleft()
            f = t + ii
            r = ctm.popleft()
            if r > f:
                f = r
            r = vtm.popleft()
            if r > f:
                f = r
            cfr.append(f + 1)
            vfr.append(f + 1)
            t = f
            fires += 1
            if c >= 0:
                if v.__class__ is not int:
                    if self.pre is not None:
                        v = self.pre(v)
                    old = acc.get(c)
                    acc[c] = v if old is None else fn(old, v)
                    ops += 1
                continue
            if c == N:
                continue
            if not same_stop(c, v):
                raise self.mismatch("crd and val streams", (c, v))
            if c == D:
                pend = D
            elif (-3 - c) & MASK:                    # Sk, k >= 1: flush, then S(k-1)
                items = sorted(acc.items())
                nitems = len(items)
                fi = 0
                acc.clear()
                e = (-3 - c) >> 24
                pend = stop(((-3 - c) & MASK) - 1, e - 1 if e else 0)
        self.t = t
        self.items, self.fi, self.pend = items, fi, pend
        self.stall += stall
        self.fires += fires
        self.flops += ops * self.fl
        return blocked


class Spacc2(_Queued):
    """Order-2 sparse accumulator: (crd1, crd0, val) in and out. Accumulates points (i, j) of two
    inner levels; a stop Sk with k >= 2 in the crd0 stream flushes them sorted: crd1 gets the
    i's then S(k-2); crd0 and val get each i's j's closed by S0, the last closed by S(k-1)."""

    __slots__ = ("fn", "acc", "cur", "fl", "pre", "ready")
    kind_name = "spacc2"

    def __init__(self, name: str, op: str = "sum", block: int | None = None,
                 ii: int = 1, lat: int = 1, labels=None):
        super().__init__(name, ii, lat)
        self.fn = (REDUCE_BLOCK if block else REDUCE_SCALAR)[op]
        self.acc: dict = {}
        self.cur = None
        self.ready = 0  # the cycle the current crd1 coordinate was taken
        self.q = [deque(), deque(), deque()]
        self.fl = block * block if block else 1
        self.pre = None
        if block and labels is not None:
            self.pre, _, self.fl = labelled_reduce(op, *labels, block)

    def _flush(self, k: int, e: int) -> None:
        q1, q0, qv = self.q
        acc = self.acc
        for i in sorted(acc):
            q1.append(i)
            row = acc[i]
            for j in sorted(row):
                q0.append(j)
                qv.append(row[j])
            q0.append(S0)
            qv.append(S0)
        e1 = max(e - 2, 0)
        q1.append(stop(k - 2, e1))
        if acc:
            q0.pop()
            qv.pop()
        e0 = 0 if acc else e1 + 1
        q0.append(stop(k - 1, e0))
        qv.append(stop(k - 1, e0))
        acc.clear()

    def run(self) -> bool:
        i_in, j_in, v_in = self.ins
        it, jt, vt = i_in.toks, j_in.toks, v_in.toks
        while True:
            if self.drain():
                return True
            if self.done or not jt or not vt:
                return False
            f = max(self.t + self.ii, self.ready)
            for ch in (j_in, v_in):
                if ch.times[0] > f:
                    f = ch.times[0]
            j = jt[0]
            v = vt[0]
            if self.cur is None:
                if not it:
                    return False
                if i_in.times[0] > f:
                    f = i_in.times[0]
                i = it[0]
                if i >= 0 or i == N:
                    # Taking the outer coordinate costs no firing: it moves into the register
                    # that tags the points of its fiber (its slot frees the next cycle), and
                    # the fiber's first point is taken in the same cycle: one point per cycle.
                    it.popleft()
                    i_in.times.popleft()
                    i_in.free.append(f + 1)
                    self.cur = i
                    self.ready = f
                    continue
                # no current i: an i stop (empty i fiber) or D; crd0 holds the matching token
                if not same_stop(j, v) or not (j == D if i == D else
                                               j <= -3 and level(j) == level(i) + 1):
                    raise self.mismatch("crd1, crd0 and val streams", (i, j, v))
                self.fire(f, (i_in, j_in, v_in), ())
                if i == D:
                    for qi in self.q:
                        qi.append(D)
                elif level(j) >= 2:
                    self._flush(level(j), empt(j))
                continue
            if j >= 0:
                if self.cur != N and v.__class__ is not int:
                    if self.pre is not None:
                        v = self.pre(v)
                    row = self.acc.setdefault(self.cur, {})
                    old = row.get(j)
                    row[j] = v if old is None else self.fn(old, v)
                    self.flops += self.fl
                self.fire(f, (j_in, v_in), ())
                continue
            if j == N:
                self.fire(f, (j_in, v_in), ())
                continue
            if not same_stop(j, v) or j == D:
                raise self.mismatch("crd0 and val streams", (j, v))
            k = level(j)
            if k == 0:
                self.cur = None
                self.fire(f, (j_in, v_in), ())
                continue
            if not it:
                return False
            if i_in.times[0] > f:
                f = i_in.times[0]
            if not (it[0] <= -3 and level(it[0]) == k - 1):
                raise self.mismatch("crd1 and crd0 stops", (it[0], j))
            self.cur = None
            self.fire(f, (i_in, j_in, v_in), ())
            if k >= 2:
                self._flush(k, empt(j))
