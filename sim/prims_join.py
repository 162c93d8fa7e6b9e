"""Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union.

Inputs are wired as [crd0, ref0, crd1, ref1, ...]; outputs as [crd, ref0, ref1, ...]. A firing
looks at every input's head pair (all heads must be present); it pops the pairs with the smallest
coordinate and emits when the join condition holds. Stops must line up across inputs: stops
(of equal level) or D on every input are emitted once. An N coordinate (from a scanner fed an N
ref) stands for an empty fiber and is skipped.
"""

from __future__ import annotations

from .node import Node
from .tokens import D, N


class _Joiner(Node):
    __slots__ = ("n", "required")

    def __init__(self, name: str, n: int, required=(), ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.n = n
        self.required = tuple(required)

    def run(self) -> bool:
        ins = self.ins
        n = self.n
        crds = ins[0::2]
        refs = ins[1::2]
        outs = self.outs
        ocrd = outs[0]
        orefs = outs[1:]
        fire = self.fire
        room = self.room
        is_union = self.kind == "union"
        required = self.required
        while True:
            f = self.t + self.ii
            heads = []
            for i in range(n):
                c, r = crds[i], refs[i]
                if not c.toks or not r.toks:
                    return False
                tm = c.times[0]
                if tm > f:
                    f = tm
                tm = r.times[0]
                if tm > f:
                    f = tm
                heads.append(c.toks[0])
            # N coordinates: an empty fiber; drop the pair without emitting.
            skip = [i for i in range(n) if heads[i] == N]
            if skip:
                fire(f, [ch for i in skip for ch in (crds[i], refs[i])], ())
                continue
            data = [h for h in heads if h >= 0]
            if not data:                                   # all stops / D
                h0 = heads[0]
                if any(h != h0 for h in heads):
                    raise self.mismatch("stop tokens of the joined streams", heads)
                if not room(*outs):
                    return True
                fire(f, ins, [(ocrd, h0)] + [(p, h0) for p in orefs])
                if h0 == D:
                    self.done = True
                    return False
                continue
            if any(h == D for h in heads):
                raise self.mismatch("stream ends (D) of the joined streams", heads)
            m = min(data)
            at = [i for i in range(n) if heads[i] == m]
            pops = [ch for i in at for ch in (crds[i], refs[i])]
            if is_union:
                emit = all(heads[i] == m for i in required)
            else:
                emit = len(at) == n
            if not emit:
                fire(f, pops, ())
                continue
            if not room(*outs):
                return True
            emits = [(ocrd, m)]
            for i in range(n):
                emits.append((orefs[i], refs[i].toks[0] if heads[i] == m else N))
            fire(f, pops, emits)


class Intersect(_Joiner):
    """Emit a coordinate present in every input, with every input's ref."""

    __slots__ = ()
    kind_name = "intersect"


class Union(_Joiner):
    """Emit a coordinate present in any input (and in every `required` input), with N as the
    ref of the inputs that lack it."""

    __slots__ = ()
    kind_name = "union"
