"""Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union.

Inputs are wired as [crd0, ref0, crd1, ref1, ...]; outputs as [crd, ref0, ref1, ...]. A firing
looks at every input's head pair (all heads must be present); it pops the pairs with the smallest
coordinate and emits when the join condition holds. Stops must line up across inputs: stops
(of equal level) or D on every input are emitted once. An N coordinate (from a scanner fed an N
ref) stands for an empty fiber and is skipped.
"""

from __future__ import annotations

from collections import deque
from bisect import bisect_left
from itertools import accumulate, count, islice, repeat
from operator import add, sub

from .channel import pop_n
from .node import Node
from .tokens import MASK, D, N, same_stop

#: Runs up to this long are skipped by a plain loop; longer ones with C-level calls.
SHORT = 32


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


class _Joiner(Node):
    __slots__ = ("n", "required")
    BULK = True  # runs of skipped coordinates in one go (tests turn it off to compare)

    def __init__(self, name: str, n: int, required=(), ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.n = n
        self.required = tuple(required)

    def run(self) -> bool:
        if self.n == 2:
            return self._run2()
        return self._run_n()

    def _run2(self) -> bool:
        """The two-input case, inlined (it dominates sparse kernels)."""
        c0, r0, c1, r1 = self.ins
        a_t, a_m, a_f = c0.toks, c0.times, c0.free
        ra_t, ra_m, ra_f = r0.toks, r0.times, r0.free
        b_t, b_m, b_f = c1.toks, c1.times, c1.free
        rb_t, rb_m, rb_f = r1.toks, r1.times, r1.free
        oc, o0, o1 = self.outs
        oct, ocm, ocf, ocb = oc.toks, oc.times, oc.free, oc.bounded
        o0t, o0m, o0f, o0b = o0.toks, o0.times, o0.free, o0.bounded
        o1t, o1m, o1f, o1b = o1.toks, o1.times, o1.free, o1.bounded
        union = self.kind == "union"
        bulk = self.BULK and not union
        ints_a = r0.kind != "val"       # ref payloads hold ints (None-sentinel pops are safe)
        ints_b = r1.kind != "val"
        keep_a = 1 not in self.required   # union may emit a coordinate only input 0 has
        keep_b = 0 not in self.required
        t, ii, lat = self.t, self.ii, self.lat
        stall = fires = 0
        blocked = False
        while a_t and ra_t and b_t and rb_t:
            a = a_t[0]
            b = b_t[0]
            f = t + ii
            tm = a_m[0]
            if tm > f:
                f = tm
            tm = b_m[0]
            if tm > f:
                f = tm
            tm = ra_m[0]
            if tm > f:
                f = tm
            tm = rb_m[0]
            if tm > f:
                f = tm
            if bulk and a != b and (a >= 0 or b >= 0) and (a >= 0 or a <= -3) \
                    and (b >= 0 or b <= -3):
                # An intersection skips, without emitting, every coordinate below the other
                # side's head coordinate, and every coordinate facing the other side's stop
                # (the tail of a fiber): do such a run in one go (same firing cycles).
                if b < 0 or 0 <= a < b:
                    s_t, s_m, s_f, s_rt, s_rm, s_rf, lim = a_t, a_m, a_f, ra_t, ra_m, ra_f, b
                    s_ints = ints_a
                else:
                    s_t, s_m, s_f, s_rt, s_rm, s_rf, lim = b_t, b_m, b_f, rb_t, rb_m, rb_f, a
                    s_ints = ints_b
                # The run: the leading coordinates in 0..lim-1, or all leading coordinates
                # when the other side is at a stop (stops and N are negative).
                # Short runs by a plain loop (cheapest), long ones by _run_length.
                k = 0
                if lim >= 0:
                    for x in s_t:
                        if x >= lim or x < 0:
                            break
                        k += 1
                        if k == SHORT:
                            break
                else:
                    for x in s_t:
                        if x < 0:
                            break
                        k += 1
                        if k == SHORT:
                            break
                if k == SHORT:
                    k = _run_length(s_t, lim)
                if len(s_rt) < k:
                    k = len(s_rt)
                if 3 < k <= SHORT:
                    fs = []
                    fj = f - ii
                    for tm, tr in zip(islice(s_m, k), islice(s_rm, k)):
                        fj += ii
                        if tm > fj:
                            fj = tm
                        if tr > fj:
                            fj = tr
                        fs.append(fj + 1)
                    for _ in repeat(None, k):
                        s_t.popleft()
                        s_m.popleft()
                        s_rt.popleft()
                        s_rm.popleft()
                    s_f.extend(fs)
                    s_rf.extend(fs)
                    t = fj
                    fires += k
                    continue
                if k > SHORT:
                    # Firing j is f_j = max(f_{j-1} + ii, arrival_j) with f_-1 = f - ii, so
                    # f_j - j*ii is a running max of (arrival_j - j*ii) started at f. Common
                    # cases at C speed: arrivals j*ii apart (a producer firing back to back)
                    # give f_j = max(f, arrival_0) + j*ii.
                    tms = list(islice(s_m, k))
                    a0 = tms[0]
                    step = range(a0, a0 + k * ii, ii)
                    rms = list(islice(s_rm, k))
                    if rms[0] == a0 and tms == list(step) and tms == rms:
                        # f is already at least every head arrival, a0 included
                        fs = list(range(f + 1, f + 1 + k * ii, ii))
                    else:
                        g = accumulate(map(sub, map(max, tms, rms),
                                           count(0, ii)), max, initial=f)
                        next(g)
                        fs = list(map(add, g, count(1, ii)))   # f_j + 1: the freed slots
                    pop_n(s_t, k)
                    pop_n(s_m, k)
                    pop_n(s_rm, k)
                    if s_ints:
                        pop_n(s_rt, k)
                    else:                   # val payloads (blocks do not compare with None)
                        for _ in repeat(None, k):
                            s_rt.popleft()
                    s_f.extend(fs)
                    s_rf.extend(fs)
                    t = fs[-1] - 1
                    fires += k
                    continue
            # which inputs to pop (pa, pb) and what to emit (c, x, y) or c None
            c = None
            if a >= 0 and b >= 0:
                if a == b:
                    pa = pb = True
                    c, x, y = a, ra_t[0], rb_t[0]
                elif a < b:
                    pa, pb = True, False
                    if union and keep_a:
                        c, x, y = a, ra_t[0], N
                else:
                    pa, pb = False, True
                    if union and keep_b:
                        c, x, y = b, N, rb_t[0]
            elif a == N:
                pa, pb = True, False
            elif b == N:
                pa, pb = False, True
            elif a >= 0:
                if b == D:
                    raise self.mismatch("stream ends (D) of the joined streams", (a, b))
                pa, pb = True, False
                if union and keep_a:
                    c, x, y = a, ra_t[0], N
            elif b >= 0:
                if a == D:
                    raise self.mismatch("stream ends (D) of the joined streams", (a, b))
                pa, pb = False, True
                if union and keep_b:
                    c, x, y = b, N, rb_t[0]
            else:
                if a != b:
                    if a > -3 or b > -3 or (a - b) & MASK:
                        raise self.mismatch("stop tokens of the joined streams", (a, b))
                    # same level, different emptiness: a union has a fiber if any input has
                    # one, an intersection only if all have
                    a = (a if a > b else b) if union else (a if a < b else b)
                pa = pb = True
                c = x = y = a
            if c is not None:
                # mirrored by the emit block of Locate.run (sim/prims_locate.py): keep in sync
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
                oct.append(c)
                ocm.append(fl)
                o0t.append(x)
                o0m.append(fl)
                o1t.append(y)
                o1m.append(fl)
            f1 = f + 1
            if pa:
                a_t.popleft()
                a_m.popleft()
                a_f.append(f1)
                ra_t.popleft()
                ra_m.popleft()
                ra_f.append(f1)
            if pb:
                b_t.popleft()
                b_m.popleft()
                b_f.append(f1)
                rb_t.popleft()
                rb_m.popleft()
                rb_f.append(f1)
            t = f
            fires += 1
            if c == D:
                self.done = True
                break
        self.t = t
        self.stall += stall
        self.fires += fires
        return blocked

    def _run_n(self) -> bool:
        ins = self.ins
        n = self.n
        crds = ins[0::2]
        refs = ins[1::2]
        outs = self.outs
        ocrd = outs[0]
        orefs = outs[1:]
        fire = self.fire_at
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
                if any(not same_stop(h, heads[0]) for h in heads):
                    raise self.mismatch("stop tokens of the joined streams", heads)
                h0 = max(heads) if is_union else min(heads)   # see _run2
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
