"""Value primitives: ALUs, the order-0 reducer and the sparse accumulators of order 1 and 2.
Timing is sim.node's firing rule; these classes say what each firing computes."""

from __future__ import annotations

from collections import deque

from fuseflowc.ops import alu_flops, arity, labelled_alu_flops

from .node import BLOCKED, WAITING, Node
from .ops import REDUCE_BLOCK, REDUCE_SCALAR, alu_function, labelled_alu, labelled_reduce
from .tokens import S0, D, N, empt, is_bare, is_crd, is_element, is_stop, level, same_stop, stop


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

    __slots__ = ("op", "fn", "binary", "fl", "nl", "nr", "mul")
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
        # the common case, without a function call (float or unlabelled block: same)
        self.mul = op == "mul" and self.nl is None

    def step(self):
        if self.binary:
            return self._step_binary()
        stall = self.stalled()
        if stall is not None:
            return stall
        inp, out = self.ins[0], self.outs[0]
        x = inp.toks[0]
        if x.__class__ is not int:              # a value (control tokens pass)
            self.flops += self.fl
            self.fire((inp,), ((out, self.fn(x)),))
            return None
        self.fire((inp,), ((out, x),))
        if x == D:
            self.done = True
            return WAITING
        return None

    def _step_binary(self):
        """One firing on both operands' heads (a stream ending in D does not stop the node:
        a binary ALU takes whatever pairs come)."""
        a, b = self.ins
        out = self.outs[0]
        if not a.toks or not b.toks:
            return WAITING
        if out.full():
            return BLOCKED
        z = self._apply(a.toks[0], b.toks[0])
        self.fire((a, b), ((out, z),))
        return None

    def _apply(self, x, y):
        """The result token of operands x and y."""
        xc = x.__class__ is int
        yc = y.__class__ is int
        if not xc and not yc:
            self.flops += self.fl
            return x * y if self.mul else self.fn(x, y)
        if xc and yc:
            return self._control(x, y)
        if xc and x == N:
            return _n_left(self.op, self.fn, y) if self.nl is None else self.nl(y)
        if yc and y == N:
            return x if self.nr is None else self.nr(x)
        raise self.mismatch("operand streams", (x, y))

    def _control(self, x: int, y: int) -> int:
        """Two control tokens (or N and a control token): they must line up."""
        if x == y:
            z = x
        elif is_stop(x) and is_stop(y) and level(x) == level(y):
            z = x if empt(x) < empt(y) else y       # same level: the lesser emptiness
        elif x == N and y >= -2:
            z = y
        elif y == N and x >= -2:
            z = x
        else:
            raise self.mismatch("operand streams", (x, y))
        if z == D:
            self.done = True
        return z


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
        self.pend = None     # the stop owed after a result

    def step(self):
        out = self.outs[0]
        if self.pend is not None:               # the stop that follows a result
            if out.full():
                return BLOCKED
            self.fire(emits=((out, self.pend),))
            self.pend = None
            return None
        inp = self.ins[0]
        if not inp.toks:
            return WAITING
        x = inp.toks[0]
        if x.__class__ is not int:              # a value: folded in
            self._fold(x)
            self.fire((inp,))
            return None
        if x == N or (is_bare(x) and level(x) == 0):    # nothing to fold
            self.fire((inp,))
            return None
        if out.full():                          # a stop or D: the result goes out
            return BLOCKED
        if x == D:
            self.fire((inp,), ((out, D),))
            self.done = True
            return WAITING
        if is_bare(x):                          # bare Sk/e (k > 0) -> S(k-1)/(e-1)
            self.acc = None
            self.fire((inp,), ((out, stop(level(x) - 1, empt(x) - 1)),))
            return None
        self.fire((inp,), ((out, self.acc if self.acc is not None else self.zero),))
        self.acc = None
        if level(x) > 0:                        # Sk (k > 0): the result, then S(k-1)
            self.pend = stop(level(x) - 1)
        return None

    def _fold(self, x) -> None:
        """Fold value x into the accumulator."""
        if self.pre is not None:
            x = self.pre(x)
        self.acc = x if self.acc is None else self.fn(self.acc, x)
        self.flops += self.fl


class _Queued(Node):
    """A node that may owe several tokens per output after one input: `q[i]` holds what output
    i still has to emit; queued tokens drain (one per output per firing) before more input is
    consumed (`consume`, one input firing)."""

    __slots__ = ("q",)

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.q: list[deque] = []

    def step(self):
        emits = self._heads()
        if emits:                               # drain first
            for p, _ in emits:
                if p.full():
                    return BLOCKED
            self.fire(emits=emits)
            self._pop_heads()
            return None
        if self.done:
            return WAITING
        return self.consume()

    def consume(self):  # pragma: no cover - abstract
        """One firing that takes input: None, or WAITING / BLOCKED."""
        raise NotImplementedError

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

    def fire_through(self, pops, looks=()) -> None:
        """Fire popping `pops` and emit in the same firing the head of every non-empty queue
        when its output has room: a token queued by this firing leaves in the cycle it came in
        (pass-through, one token per cycle like every primitive), the rest drains in later
        firings."""
        emits = self._heads()
        if not emits or any(p.full() for p, _ in emits):
            self.fire(pops, (), looks)
            return
        self.fire(pops, emits, looks)
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

    def step(self):
        if self.fi < len(self.items) or self.pend is not None:
            return self._flush_one()
        c_in, v_in = self.ins
        if not c_in.toks or not v_in.toks:
            return WAITING
        c, v = c_in.toks[0], v_in.toks[0]
        if is_crd(c):                           # a point: accumulated
            if v.__class__ is not int:
                self._point(c, v)
        elif c != N and not same_stop(c, v):
            raise self.mismatch("crd and val streams", (c, v))
        self.fire((c_in, v_in))
        if c == D:
            self.pend = D
        elif is_stop(c) and level(c) > 0:       # Sk, k >= 1: flush, then S(k-1)
            self.items = sorted(self.acc.items())
            self.fi = 0
            self.acc.clear()
            self.pend = stop(level(c) - 1, max(empt(c) - 1, 0))
        return None                             # (N and S0, the end of an inner fiber: nothing)

    def _point(self, c: int, v) -> None:
        """Accumulate point (c, v)."""
        if self.pre is not None:
            v = self.pre(v)
        old = self.acc.get(c)
        self.acc[c] = v if old is None else self.fn(old, v)
        self.flops += self.fl

    def _flush_one(self):
        """One point of the flushed fiber (or the stop after it) per firing."""
        oc, ov = self.outs
        if oc.full() or ov.full():
            return BLOCKED
        if self.fi < len(self.items):
            c, v = self.items[self.fi]
            self.fi += 1
        else:
            c = v = self.pend
            self.pend = None
        self.fire(emits=((oc, c), (ov, v)))
        if c == D and v.__class__ is int:
            self.done = True
            return WAITING
        return None


class Spacc2(_Queued):
    """Order-2 sparse accumulator: (crd1, crd0, val) in and out. Accumulates points (i, j) of two
    inner levels; a stop Sk with k >= 2 in the crd0 stream flushes them sorted: crd1 gets the
    i's then S(k-2); crd0 and val get each i's j's closed by S0, the last closed by S(k-1).
    The current i is held in a register loaded without a firing of its own (sim/README.md,
    "Timing"): one point per cycle. With `emit_empty` every i received is flushed, an empty
    fiber (its S0 alone) where nothing was accumulated."""

    __slots__ = ("fn", "acc", "cur", "fl", "pre", "ready", "emit_empty")
    kind_name = "spacc2"

    def __init__(self, name: str, op: str = "sum", block: int | None = None,
                 ii: int = 1, lat: int = 1, labels=None, emit_empty: bool = False):
        super().__init__(name, ii, lat)
        self.emit_empty = emit_empty   # every outer coordinate received is emitted
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

    def consume(self):
        i_in, j_in, v_in = self.ins
        if not j_in.toks or not v_in.toks:
            return WAITING
        j, v = j_in.toks[0], v_in.toks[0]
        if self.cur is None:
            if not i_in.toks:
                return WAITING
            i = i_in.toks[0]
            if is_element(i):                   # the next outer coordinate: into the register
                self.cur = i
                if self.emit_empty and i != N:  # emitted even if nothing is accumulated
                    self.acc.setdefault(i, {})
                self.ready = self.take(i_in, (j_in, v_in), self.ready)
                return None
            return self._outer_end(i, j, v)
        if j >= 0:
            if self.cur != N and v.__class__ is not int:
                if self.pre is not None:
                    v = self.pre(v)
                row = self.acc.setdefault(self.cur, {})
                old = row.get(j)
                row[j] = v if old is None else self.fn(old, v)
                self.flops += self.fl
            self.fire((j_in, v_in), after=self.ready)
            return None
        if j == N:
            self.fire((j_in, v_in), after=self.ready)
            return None
        if not same_stop(j, v) or j == D:
            raise self.mismatch("crd0 and val streams", (j, v))
        return self._inner_end(level(j), j)

    def _outer_end(self, i: int, j: int, v):
        """No current i: an i stop (empty i fiber) or D; crd0 holds the matching token."""
        if not same_stop(j, v) or not (j == D if i == D else
                                       j <= -3 and level(j) == level(i) + 1):
            raise self.mismatch("crd1, crd0 and val streams", (i, j, v))
        self.fire(self.ins, after=self.ready)
        if i == D:
            for qi in self.q:
                qi.append(D)
        elif level(j) >= 2:
            self._flush(level(j), empt(j))
        return None

    def _inner_end(self, k: int, j: int):
        """The stop Sk closing the current i's fiber (k >= 1: the i fiber's too)."""
        i_in, j_in, v_in = self.ins
        if k == 0:
            self.cur = None
            self.fire((j_in, v_in), after=self.ready)
            return None
        if not i_in.toks:
            return WAITING
        if not (i_in.toks[0] <= -3 and level(i_in.toks[0]) == k - 1):
            raise self.mismatch("crd1 and crd0 stops", (i_in.toks[0], j))
        self.cur = None
        self.fire((i_in, j_in, v_in), after=self.ready)
        if k >= 2:
            self._flush(k, empt(j))
        return None
