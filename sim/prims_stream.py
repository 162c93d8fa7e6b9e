"""Primitives that walk tensor storage: root, level scanners, repeat and its signal generator,
value arrays. Token semantics follow REFERENCE.md (see sim.tokens for the encoding); timing is
sim.node's firing rule."""

from __future__ import annotations

import numpy as np

from .memory import unlimited
from .node import BLOCKED, WAITING, Node
from .tokens import S0, D, N, R, empt, is_crd, is_done, is_element, is_stop, level, stop


class Root(Node):
    """The root reference of a tensor: emits `0, D`."""

    __slots__ = ("left",)
    kind_name = "root"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.left = [0, D]

    def step(self):
        if not self.left:
            self.done = True
            return WAITING
        out = self.outs[0]
        if out.full():
            return BLOCKED
        self.fire(emits=((out, self.left.pop(0)),))


class Scan(Node):
    """A level scanner (fiber lookup): ref in; crd and ref out.

    For each input ref it emits that fiber's coordinates and positions, then closes the fiber
    with S0; an input stop Sk becomes S(k+1), merged with the closing stop of the fiber before it
    (so the S0 is held back until the next input token is known); N gives N then a stop; D passes.
    Dense levels enumerate 0..size-1 with refs `ref * size + crd`; compressed ones read seg/crd
    (2 seg entries per lookup and 1 crd entry per coordinate through the memory calendar).
    The other sparse levels (sim.levels) give instead, per input ref x, the fiber's positions
    `lo[x]..hi[x]` and the bytes the lookup reads `look[x]` (counted as crd bytes; no seg), and
    `refs` (when not None) the ref emitted for each position (else the position itself).
    """

    __slots__ = ("dense", "size", "seg", "crd", "pos", "end", "base", "pending", "eb",
                 "lo", "hi", "look", "refs")
    kind_name = "scan"
    BULK_DATA = ("seg", "crd", "lo", "hi", "look", "refs")

    def __init__(self, name: str, dense: bool, size: int = 0, seg=None, crd=None,
                 ii: int = 1, lat: int = 1, eb: int = 4, mem=None, lo=None, hi=None,
                 look=None, refs=None):
        super().__init__(name, ii, lat)
        self.eb = eb  # memory.element_bytes: bytes per seg entry and per coordinate
        # the graph's sim.memory.Memory (compressed levels; dense ones read no memory)
        self.mem = None if dense else (mem if mem is not None else unlimited())
        self.dense = dense
        self.size = size
        # a list or a numpy array is kept as given (the builder's own: at the paper's sizes a
        # level's copy is gigabytes; an array becomes a list only if the Python engine runs
        # the node: Node.materialize), anything else is copied into a list
        self.seg, self.crd, self.lo, self.hi, self.look, self.refs = (
            x if x is None or x.__class__ is list or isinstance(x, np.ndarray) else list(x)
            for x in (seg, crd, lo, hi, look, refs))
        self.pos = self.end = self.base = 0   # the open fiber: positions pos..end-1 left
        self.pending = False  # a fiber was emitted whose closing stop is not yet out

    def step(self):
        oc, orf = self.outs
        if oc.full() or orf.full():
            return BLOCKED
        if self.pos < self.end:                 # inside a fiber: its next element
            c, r, nb = self._next()
            self.fire(emits=((oc, c), (orf, r)), nbytes=nb)
            return None
        inp = self.ins[0]
        if not inp.toks:
            return WAITING
        x = inp.toks[0]
        if self.pending and not is_stop(x):
            self.pending = False                # close the previous fiber, keep the input
            self.fire(emits=((oc, S0), (orf, S0)), looks=(inp,))
            return None
        if is_crd(x):
            self._lookup(inp, x, oc, orf)
            return None
        if x == N:                              # no fiber: N, then its (bare) stop
            c = N
            self.pending = True
        elif x == D:
            c = D
            self.done = True
        elif self.pending:                      # Sk -> S(k+1), merged with the held S0
            c = stop(level(x) + 1)
            self.pending = False
        else:                                   # no fiber before it: a bare S(k+1)
            c = stop(level(x) + 1, empt(x) + 1)
        self.fire((inp,), ((oc, c), (orf, c)))
        return WAITING if c == D else None

    def _next(self):
        """The open fiber's next (crd, ref) and the bytes reading it costs."""
        pos = self.pos
        self.pos = pos + 1
        if self.dense:
            return pos - self.base, pos, 0
        self.rd_crd += self.eb
        return self.crd[pos], pos if self.refs is None else self.refs[pos], self.eb

    def _lookup(self, inp, x: int, oc, orf) -> None:
        """Open the fiber of ref x, emitting its first element in the same firing."""
        if self.dense:
            self.base = x * self.size
            self.pos, self.end = self.base, self.base + self.size
            nb = 0
        elif self.lo is None:
            self.pos, self.end = self.seg[x], self.seg[x + 1]
            nb = 2 * self.eb
            self.rd_seg += nb
        else:                                   # a fixed or singleton level (sim.levels)
            self.pos, self.end = self.lo[x], self.hi[x]
            nb = self.look[x]
            self.rd_crd += nb
        self.pending = True
        if self.pos == self.end:                # empty fiber: nothing to emit this cycle
            self.fire((inp,), nbytes=nb)
            return
        c, r, b = self._next()
        self.fire((inp,), ((oc, c), (orf, r)), nbytes=nb + b)


class RepSig(Node):
    """Repeat-signal generator: crd in; R per coordinate, S per stop (any level), D."""

    __slots__ = ()
    kind_name = "repsig"

    def step(self):
        stall = self.stalled()
        if stall is not None:
            return stall
        inp, out = self.ins[0], self.outs[0]
        x = inp.toks[0]
        if is_element(x):
            sig = R
        elif is_stop(x):
            sig = S0
        else:
            sig = D
        self.fire((inp,), ((out, sig),))
        if is_done(x):
            self.done = True
            return WAITING
        return None


class Repeat(Node):
    """Repeat a ref (or value) stream along a repeat-signal stream.

    Inputs: the stream to repeat, the repsig stream. For the current input element it emits one
    copy per R; at S it moves on: if the next input token is a stop Sk it emits S(k+1) (merged),
    else S0. An input stop met with no current element (an empty outer fiber) takes one S and
    emits S(k+1). D ends both. The current element is held in a register loaded without a
    firing of its own (sim/README.md, "Timing").
    """

    __slots__ = ("cur", "has", "ready")
    kind_name = "repeat"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.cur = None
        self.has = False
        self.ready = 0  # the cycle the held element was taken: its first use is not earlier

    def step(self):
        a, g = self.ins
        out = self.outs[0]
        if out.full():                          # (also before a take: the compiled core's order)
            return BLOCKED
        if not self.has:
            if not a.toks:
                return WAITING
            x = a.toks[0]
            if is_element(x):                   # a new element
                self.cur = x
                self.has = True
                self.ready = self.take(a)
                return None
            return self._no_element(a, g, out, x)
        if not g.toks:
            return WAITING
        sig = g.toks[0]
        if sig == R:                            # a copy per R
            self.fire((g,), ((out, self.cur),), after=self.ready)
            return None
        if sig != S0:
            raise self.error("repeat signal ended (D) inside an element")
        if not a.toks:                          # S: close, merging a following input stop
            return WAITING
        x = a.toks[0]
        if is_stop(x):
            self.fire((g, a), ((out, stop(level(x) + 1)),), after=self.ready)
        else:
            self.fire((g,), ((out, S0),), looks=(a,), after=self.ready)
        self.has = False
        self.cur = None
        return None

    def _no_element(self, a, g, out, x):
        """An input stop or D with no current element: it takes the matching signal."""
        if not g.toks:
            return WAITING
        sig = g.toks[0]
        if x == D:
            if sig != D:
                raise self.mismatch("input and repeat signal (end)", (x, sig))
            self.fire((a, g), ((out, D),))
            self.done = True
            return WAITING
        if sig != S0:
            raise self.mismatch("input stop and repeat signal", (x, sig))
        self.fire((a, g), ((out, stop(level(x) + 1, empt(x) + 1)),))  # bare: no element, no fiber
        return None


class Array(Node):
    """Value array: ref in, value out; N loads 0 (a zero block); stops and D pass. Each value
    loaded moves `vbytes` through the memory calendar."""

    __slots__ = ("vals", "zero", "vbytes")
    kind_name = "array"
    BULK_DATA = ("vals",)

    def __init__(self, name: str, vals: list, zero=0.0, vbytes: int = 4,
                 ii: int = 1, lat: int = 1, mem=None):
        super().__init__(name, ii, lat)
        self.vals = vals
        self.zero = zero
        self.vbytes = vbytes
        self.mem = mem if mem is not None else unlimited()  # the graph's sim.memory.Memory

    def step(self):
        stall = self.stalled()
        if stall is not None:
            return stall
        inp, out = self.ins[0], self.outs[0]
        x = inp.toks[0]
        if is_crd(x):                           # a ref loads its value
            self.rd_vals += self.vbytes
            self.fire((inp,), ((out, self.vals[x]),), nbytes=self.vbytes)
            return None
        self.fire((inp,), ((out, self.zero if x == N else x),))   # N loads zero; stops pass
        if x == D:
            self.done = True
            return WAITING
        return None


class Replay(Node):
    """replay: emits the tokens a spill of an earlier configuration recorded, then D; every
    token but D is read from DRAM, `bpt` bytes each, through the memory calendar (counted as
    value bytes on a val stream, else as coordinate bytes)."""

    __slots__ = ("toks", "pos", "bpt", "val")
    kind_name = "replay"
    BULK_DATA = ("toks",)

    def __init__(self, name: str, toks: list, bpt: int = 4, val: bool = False,
                 ii: int = 1, lat: int = 1, mem=None):
        super().__init__(name, ii, lat)
        self.toks = toks
        self.pos = 0
        self.bpt = bpt
        self.val = val
        self.mem = mem if mem is not None else unlimited()

    def step(self):
        if self.pos > len(self.toks):
            self.done = True
            return WAITING
        out = self.outs[0]
        if out.full():
            return BLOCKED
        if self.pos == len(self.toks):
            self.fire(emits=((out, D),))
        else:
            self.fire(emits=((out, self.toks[self.pos]),), nbytes=self.bpt)
            if self.val:
                self.rd_vals += self.bpt
            else:
                self.rd_crd += self.bpt
        self.pos += 1
