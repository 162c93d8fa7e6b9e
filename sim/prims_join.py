"""Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union.

Inputs are wired as [crd0, ref0, crd1, ref1, ...]; outputs as [crd, ref0, ref1, ...]. A firing
looks at every input's head pair (all heads must be present); it pops the pairs with the smallest
coordinate and emits when the join condition holds. Stops must line up across inputs: stops
(of equal level) or D on every input are emitted once. An N coordinate (from a scanner fed an N
ref) stands for an empty fiber and is skipped. Timing: one firing looks at every head.
"""

from __future__ import annotations

from .node import BLOCKED, WAITING, Node
from .tokens import D, N, same_stop


class _Joiner(Node):
    __slots__ = ("n", "required", "union")

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


class Intersect(_Joiner):
    """Emit a coordinate present in every input, with every input's ref."""

    __slots__ = ()
    kind_name = "intersect"


class Union(_Joiner):
    """Emit a coordinate present in any input (and in every `required` input), with N as the
    ref of the inputs that lack it."""

    __slots__ = ()
    kind_name = "union"
