"""Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union.

Inputs are wired as [crd0, ref0, crd1, ref1, ...]; outputs as [crd, ref0, ref1, ...]. A firing
looks at every input's head pair (all heads must be present); it pops the pairs with the smallest
coordinate and emits when the join condition holds. Stops must line up across inputs: stops
(of equal level) or D on every input are emitted once. An N coordinate (from a scanner fed an N
ref) stands for an empty fiber and is skipped. Timing: one firing looks at every head.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from itertools import islice

from .node import BLOCKED, SHORT, WAITING, Node
from .tokens import D, N, same_stop


def _run_length(d: deque, lim: int) -> int:
    """How many leading tokens of crd deque `d` are coordinates below `lim` (any coordinate when
    lim < 0). Coordinates increase within a fiber and control tokens are negative, so chunks
    without a negative are sorted: min and bisect (C speed) replace a loop per token."""
    it = iter(d)
    k = 0
    m = 32
    while True:
        w = list(islice(it, m))
        if not w:
            return k
        j = len(w)
        if min(w) < 0:                 # the first negative ends the run: find it
            lo, hi = 0, j
            while hi - lo > 8:
                mid = (lo + hi) >> 1
                if min(w[lo:mid]) < 0:
                    hi = mid
                else:
                    lo = mid
            j = lo
            while w[j] >= 0:
                j += 1
        if lim >= 0 and j and w[j - 1] >= lim:
            return k + bisect_left(w, lim, 0, j)
        k += j
        if j < len(w):
            return k
        m <<= 1


def _match(c0, r0, c1, r1):
    """(crd, ref0, ref1) when two (crd, ref) heads hold the same coordinate, else None."""
    return (c0, r0, r1) if c0 == c1 and c0 >= 0 else None


class _Joiner(Node):
    __slots__ = ("n", "required", "union")
    BULK = True  # runs of skipped coordinates in one go (tests turn it off to compare)

    def __init__(self, name: str, n: int, required=(), ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.n = n
        self.required = tuple(required)
        self.union = self.kind_name == "union"

    def step(self):
        ins = self.ins
        for c in ins:
            if not c.toks:
                return WAITING
        if self.n == 2:
            r = self.fire_all(_match, self.outs)    # a run of matches: the common case
            if r is not None:
                return r
            a, b = ins[0].toks[0], ins[2].toks[0]
            if self.BULK and not self.union and self._skip_run(a, b):
                return None
            heads = [a, b]
        else:
            heads = [c.toks[0] for c in ins[0::2]]
        take, c = self._decide(heads)
        pops = [ch for i in take for ch in (ins[2 * i], ins[2 * i + 1])]
        if c is None:
            self.fire(pops, (), ins)
            return None
        outs = self.outs
        for p in outs:
            if p.full():
                return BLOCKED
        if c < 0:                               # a stop or D: on every output
            emits = [(p, c) for p in outs]
        else:                                   # the refs of the inputs at c, N for the rest
            emits = [(outs[0], c)] + [
                (outs[1 + i], ins[2 * i + 1].toks[0] if h == c else N)
                for i, h in enumerate(heads)]
        self.fire(pops, emits, ins)
        if c == D:
            self.done = True
            return WAITING
        return None

    def _decide(self, heads: list):
        """(the inputs to pop, the coordinate or stop to emit, or None) for these heads."""
        if N in heads:                          # an empty fiber: skip it, emit nothing
            skip = [i for i, h in enumerate(heads) if h == N]
            # two inputs: one N pair per firing (as the compiled core does); more: all
            return (skip[:1] if self.n == 2 else skip), None
        data = [h for h in heads if h >= 0]
        if not data:                            # stops (or D) on every input: line up
            for h in heads:
                if not same_stop(h, heads[0]):
                    raise self.mismatch("stop tokens of the joined streams", heads)
            # same level, different emptiness: a union has a fiber if any input has one, an
            # intersection only if all have
            return range(self.n), (max(heads) if self.union else min(heads))
        if D in heads:
            raise self.mismatch("stream ends (D) of the joined streams", heads)
        m = min(data)
        at = [i for i, h in enumerate(heads) if h == m]
        if self.union:
            emit = all(heads[i] == m for i in self.required)
        else:
            emit = len(at) == self.n
        return at, (m if emit else None)

    def _skip_run(self, a, b) -> bool:
        """An intersection skips, without emitting, every coordinate below the other side's
        head coordinate, and every coordinate facing the other side's stop (the tail of a
        fiber): do such a run of more than 3 in one go (Node.fire_pops: same firing cycles)."""
        heads = (a, b)
        if a == b or (a < 0 and b < 0) or (a < 0 and a > -3) or (b < 0 and b > -3):
            return False
        side = 0 if b < 0 or 0 <= a < b else 1
        crd, ref = self.ins[2 * side], self.ins[2 * side + 1]
        lim = heads[1 - side]       # skip coordinates below it (any, when it is a stop)
        k = 0
        for x in crd.toks:      # short runs by a plain loop (cheapest), long ones at C speed
            if x < 0 or 0 <= lim <= x:
                break
            k += 1
            if k == SHORT:
                k = _run_length(crd.toks, lim)
                break
        k = min(k, len(ref.toks))
        if k <= 3:
            return False
        other = self.ins[2 - 2 * side:4 - 2 * side]
        self.fire_pops(k, (crd, ref), other, ref.kind != "val")
        return True


class Intersect(_Joiner):
    """Emit a coordinate present in every input, with every input's ref."""

    __slots__ = ()
    kind_name = "intersect"


class Union(_Joiner):
    """Emit a coordinate present in any input (and in every `required` input), with N as the
    ref of the inputs that lack it."""

    __slots__ = ()
    kind_name = "union"
