"""The locator: a coordinate stream intersected with a dense level, without scanning the level.

`locate crd, ref, parent {tensor, mode}` emits exactly what `intersect crd, ref, scan(parent)`
would (scan = the dense scanner of that level): a dense fiber holds every coordinate 0..size-1,
so a coordinate c of the crd stream is present in the dense fiber of parent ref p, at ref
`p * size + c`. The dense side is simulated symbolically from the parent stream: a parent ref
opens a (full) fiber, an N parent an empty one, a parent stop is a bare stop, and a fiber's
closing stop merges with a following parent stop (S0, or S(k+1) for Sk) as a dense scanner's
does. Stops must line up as in an intersection; equal-level stops keep the emptier one.

Timing: one firing per token of the crd stream (like a scanner: one element per cycle); the
parent tokens a firing needs (at most two: a fiber's ref and the stop closing it) are taken in
that firing and delay it to their arrival.
"""

from __future__ import annotations

from .node import BLOCKED, WAITING, Node
from .tokens import S0, D, N, empt, is_crd, is_stop, level, same_stop, stop

_FIBER = object()  # the dense side is inside a fiber (every coordinate present)


class Locate(Node):
    """Inputs [crd, ref, parent ref]; outputs [crd, ref, located ref]."""

    __slots__ = ("size", "base", "infib", "dstop")
    kind_name = "locate"

    def __init__(self, name: str, size: int, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.size = size
        self.base = -1       # parent ref * size of the open dense fiber (-1: an N fiber)
        self.infib = False   # a dense fiber is open
        self.dstop = None    # the dense side's head when it is a stop or D waiting to match

    def step(self):
        c, r, p = self.ins
        if not c.toks or not r.toks:
            return WAITING
        a = c.toks[0]
        head = self._dense_head(p)
        if head is None:
            return WAITING
        dense, base, taken = head
        looked = taken
        if dense is _FIBER and a < 0 and a != N:
            # the crd fiber ends: the dense fiber's closing stop is next on the dense side
            if a == D:
                raise self.error("the crd stream ends (D) inside a fiber of the dense level")
            if len(p.toks) <= taken:
                return WAITING
            looked += 1
            y = p.toks[taken]
            if is_stop(y):                      # merges with the parent's stop
                dense = stop(level(y) + 1)
                taken += 1
            else:
                dense = S0
        emit, infib, dstop = self._match(a, dense, base, r)
        if emit is not None:
            outs = self.outs
            for o in outs:
                if o.full():
                    return BLOCKED
            emit = tuple(zip(outs, emit))
        # the parent tokens this firing needs (at most two) are taken in it, after they arrive
        after = max((p.arrival(i) for i in range(looked)), default=0)
        self.fire((c, r) + (p,) * taken, emit or (), after=after)
        self.base, self.infib, self.dstop = base, infib, dstop
        if emit and a == D:
            self.done = True
            return WAITING
        return None

    def _dense_head(self, p):
        """(the dense side's head, the open fiber's base, parent tokens it takes), or None
        while the parent token it needs has not come. The head is _FIBER inside a fiber."""
        if self.infib:
            return _FIBER, self.base, 0
        if self.dstop is not None:
            return self.dstop, self.base, 0
        if not p.toks:
            return None
        x = p.toks[0]
        if is_crd(x):
            return _FIBER, x * self.size, 1
        if x == N:                              # a dense scanner gives N then a stop
            return _FIBER, -1, 1
        if x == D:
            return D, self.base, 1
        return stop(level(x) + 1, empt(x) + 1), self.base, 1   # no fiber before it: a bare S(k+1)

    def _match(self, a, dense, base: int, r):
        """(the (crd, ref, located ref) to emit or None, a fiber open, the dense stop left)
        for crd head a facing the dense side's head."""
        if dense is _FIBER:
            if a >= 0 and base >= 0 and a < self.size:
                return (a, r.toks[0], base + a), True, None
            return None, True, None
        if a >= 0 or a == N:                    # a crd element facing a dense stop: dropped
            return None, False, dense
        if a != dense:
            if not (is_stop(a) and is_stop(dense) and same_stop(a, dense)):
                raise self.mismatch("stop tokens of the joined streams", (a, dense))
            a = a if empt(a) > empt(dense) else dense   # a fiber only if both sides have one
        return (a, a, a), False, None
