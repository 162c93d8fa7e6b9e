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

from .node import Node
from .tokens import EB, MASK, D, N, S0

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

    def run(self) -> bool:
        c, r, p = self.ins
        ct, cm, cf = c.toks, c.times, c.free
        rt, rm, rf = r.toks, r.times, r.free
        pt, pm, pf = p.toks, p.times, p.free
        oc, o0, o1 = self.outs
        oct, ocm, ocf, ocb = oc.toks, oc.times, oc.free, oc.bounded
        o0t, o0m, o0f, o0b = o0.toks, o0.times, o0.free, o0.bounded
        o1t, o1m, o1f, o1b = o1.toks, o1.times, o1.free, o1.bounded
        t, ii, lat, size = self.t, self.ii, self.lat, self.size
        base, infib, dstop = self.base, self.infib, self.dstop
        stall = fires = 0
        blocked = False
        while ct and rt:
            a = ct[0]
            f = t + ii
            tm = cm[0]
            if tm > f:
                f = tm
            tm = rm[0]
            if tm > f:
                f = tm
            # The dense side's head (peeked: nothing is taken before the firing is certain).
            npar = 0
            nbase = base
            if infib:
                dense = _FIBER
            elif dstop is not None:
                dense = dstop
            else:
                if not pt:
                    break
                x = pt[0]
                tm = pm[0]
                if tm > f:
                    f = tm
                npar = 1
                if x >= 0:
                    dense = _FIBER
                    nbase = x * size
                elif x == N:                     # a dense scanner gives N then a stop
                    dense = _FIBER
                    nbase = -1
                elif x == D:
                    dense = D
                else:                            # no fiber before it: a bare S(k+1)
                    dense = x - 1 - EB
            if dense is _FIBER and a < 0 and a != N:
                # the crd fiber ends: the dense fiber's closing stop is next on the dense side
                if a == D:
                    raise self.error("the crd stream ends (D) inside a fiber of the dense level")
                if len(pt) <= npar:
                    break
                y = pt[npar]
                tm = pm[npar]
                if tm > f:
                    f = tm
                if y.__class__ is int and y <= -3:  # merges with the parent's stop
                    dense = -4 - ((-3 - y) & MASK)
                    npar += 1
                else:
                    dense = S0
            emit = False
            if dense is _FIBER:
                nfib, ndstop = True, None
                if a >= 0 and nbase >= 0 and a < size:
                    emit, x0, x1 = True, rt[0], nbase + a
            elif a >= 0 or a == N:               # a crd element facing a dense stop: dropped
                nfib, ndstop = False, dense
            else:
                if a != dense:
                    if a > -3 or dense > -3 or (a - dense) & MASK:
                        raise self.mismatch("stop tokens of the joined streams", (a, dense))
                    a = a if a < dense else dense  # a fiber only if both sides have one
                emit, x0, x1 = True, a, a
                nfib, ndstop = False, None
            if emit:
                # mirrors the emit block of _Joiner.run in sim/prims_join.py (the same timing
                # rule for a (crd, ref0, ref1) triple; a, x0, x1 there c, x, y): keep in sync
                if (ocb and not ocf) or (o0b and not o0f) or (o1b and not o1f):
                    blocked = True
                    break
                f0 = f
                if ocb:
                    s = ocf.popleft()
                    if s > f:
                        f = s
                if o0b:
                    s = o0f.popleft()
                    if s > f:
                        f = s
                if o1b:
                    s = o1f.popleft()
                    if s > f:
                        f = s
                stall += f - f0
                fl = f + lat
                oct.append(a)
                ocm.append(fl)
                o0t.append(x0)
                o0m.append(fl)
                o1t.append(x1)
                o1m.append(fl)
            f1 = f + 1
            ct.popleft()
            cm.popleft()
            cf.append(f1)
            rt.popleft()
            rm.popleft()
            rf.append(f1)
            if npar:                             # 0, 1 or 2 parent tokens taken (usually 0)
                for _ in range(npar):
                    pt.popleft()
                    pm.popleft()
                    pf.append(f1)
            base, infib, dstop = nbase, nfib, ndstop
            t = f
            fires += 1
            if emit and a == D:
                self.done = True
                break
        self.t = t
        self.base, self.infib, self.dstop = base, infib, dstop
        self.stall += stall
        self.fires += fires
        return blocked
