"""Primitives that walk tensor storage: root, level scanners, repeat and its signal generator,
value arrays. Token semantics follow REFERENCE.md (see sim.tokens for the encoding)."""

from __future__ import annotations

from itertools import islice

from .channel import pop_n
from .memory import unlimited
from .node import Node
from .tokens import EB, MASK, D, N, S0


class Root(Node):
    """The root reference of a tensor: emits `0, D`."""

    __slots__ = ("left",)
    kind_name = "root"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.left = [0, D]

    def run(self) -> bool:
        out = self.outs[0]
        while self.left:
            if not self.room(out):
                return True
            tok = self.left.pop(0)
            self.fire(self.t + self.ii, (), ((out, tok),))
        self.done = True
        return False


class Scan(Node):
    """A level scanner (fiber lookup): ref in; crd and ref out.

    For each input ref it emits that fiber's coordinates and positions, then closes the fiber
    with S0; an input stop Sk becomes S(k+1), merged with the closing stop of the fiber before it
    (so the S0 is held back until the next input token is known); N gives N then a stop; D passes.
    Dense levels enumerate 0..size-1 with refs `ref * size + crd`; compressed ones read seg/crd.
    The other sparse levels (sim.levels) give instead, per input ref x, the fiber's positions
    `lo[x]..hi[x]` and the bytes the lookup reads `look[x]` (counted as crd bytes; no seg), and
    `refs` (when not None) the ref emitted for each position (else the position itself).
    """

    __slots__ = ("dense", "size", "seg", "crd", "pos", "end", "base", "pending", "eb", "mem",
                 "lo", "hi", "look", "refs")
    kind_name = "scan"
    BULK = True  # long fiber runs in one go (tests turn it off to compare)

    def __init__(self, name: str, dense: bool, size: int = 0, seg=None, crd=None,
                 ii: int = 1, lat: int = 1, eb: int = 4, mem=None, lo=None, hi=None,
                 look=None, refs=None):
        super().__init__(name, ii, lat)
        self.eb = eb  # memory.element_bytes: bytes per seg entry and per coordinate
        # the graph's sim.memory.Memory (compressed levels; dense ones read no memory)
        self.mem = None if dense else (mem if mem is not None else unlimited())
        self.dense = dense
        self.size = size
        self.seg = list(seg) if seg is not None else None
        self.crd = list(crd) if crd is not None else None
        self.lo = list(lo) if lo is not None else None
        self.hi = list(hi) if hi is not None else None
        self.look = list(look) if look is not None else None
        self.refs = list(refs) if refs is not None else None
        self.pos = self.end = self.base = 0
        self.pending = False  # a fiber was emitted whose closing stop is not yet out

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        oc, orf = self.outs
        ct, ctm, cf, cb = oc.toks, oc.times, oc.free, oc.bounded
        rt, rtm, rf, rb = orf.toks, orf.times, orf.free, orf.bounded
        t, ii, lat = self.t, self.ii, self.lat
        pos, end, base, pending = self.pos, self.end, self.base, self.pending
        dense, crd, seg, size = self.dense, self.crd, self.seg, self.size
        mem = self.mem                  # None when dense: only compressed levels read memory
        if not dense:                   # Memory.take's fast path, inlined below
            used, W, cap, spill = mem.used, mem.window, mem.cap, mem.spill
        eb = self.eb
        lo, hi, look, refs = self.lo, self.hi, self.look, self.refs
        bulk = self.BULK
        retry = 0                   # a failed bulk attempt is not retried before this firing
        stall = fires = nseg = ncrd = nlook = 0
        blocked = False
        while True:
            if (cb and not cf) or (rb and not rf):
                blocked = True
                break
            f = t + ii
            if bulk and pos + 8 < end and fires >= retry:  # a run inside a fiber: in bulk
                k = end - pos
                if cb and len(cf) < k:
                    k = len(cf)
                if rb and len(rf) < k:
                    k = len(rf)
                # Free slots are stamped in pop order, so the k-th is the latest; when even it
                # is free by the first firing, no firing of the run waits for a slot.
                if k > 8:
                    f1 = f
                    if (cb and cf[k - 1] > f) or (rb and rf[k - 1] > f):
                        # Back-pressure: firing j is max(f_{j-1} + ii, slot j's free cycle).
                        # Slots freed back to back (a consumer firing every ii cycles, the
                        # usual steady state) make that max(f, free_0) + j*ii; otherwise
                        # go token by token.
                        fr = list(islice(cf if cb else rf, k))
                        fr0 = fr[0]
                        if fr != list(range(fr0, fr0 + k * ii, ii)) or \
                                (cb and rb and fr != list(islice(rf, k))):
                            k = 0
                            retry = fires + 32      # not for 32 firings (bounded cost)
                        elif fr0 > f:
                            f1 = fr0
                if k > 8 and not dense and not mem.take_run(f1, k, ii, eb):
                    k = 0                           # memory is busy: token by token
                    retry = fires + 32
                if k > 8:
                    last = f1 + (k - 1) * ii
                    stamps = range(f1 + lat, last + lat + 1, ii)
                    stall += f1 - f                 # only the first firing waits
                    if dense:
                        ct.extend(range(pos - base, pos - base + k))
                    else:
                        ct.extend(crd[pos:pos + k])
                        ncrd += k
                    ctm.extend(stamps)
                    rt.extend(range(pos, pos + k) if refs is None else refs[pos:pos + k])
                    rtm.extend(stamps)
                    if cb:                      # take k free slots (C speed: ints)
                        pop_n(cf, k)
                    if rb:
                        pop_n(rf, k)
                    pos += k
                    t = last
                    fires += k
                    continue
            nb = 0                             # bytes this firing reads (0 when dense)
            if pos < end:                      # inside a fiber: emit the next element
                if dense:
                    c = pos - base
                else:
                    c = crd[pos]
                    ncrd += 1
                    nb = eb
                r = pos if refs is None else refs[pos]
                pos += 1
            else:
                if not it:
                    break
                x = it[0]
                rdy = itm[0]
                if rdy > f:
                    f = rdy
                if pending and (x >= 0 or x == D or x == N):
                    c = r = S0                  # close the previous fiber, keep the input
                    pending = False
                else:
                    it.popleft()
                    itm.popleft()
                    if x >= 0:                  # look the fiber up
                        if dense:
                            base = x * size
                            pos, end = base, base + size
                        elif lo is None:
                            pos, end = seg[x], seg[x + 1]
                            nseg += 2
                            nb = 2 * eb
                        else:
                            pos, end = lo[x], hi[x]
                            nb = look[x]
                            nlook += nb
                        pending = True
                        if pos < end:
                            if dense:
                                c = 0
                            else:
                                c = crd[pos]
                                ncrd += 1
                                nb += eb
                            r = pos if refs is None else refs[pos]
                            pos += 1
                        else:                   # empty fiber: nothing to emit this cycle
                            if nb:              # nb > 0: a compressed level
                                f = mem.take(f, nb)
                            ifr.append(f + 1)
                            t = f
                            fires += 1
                            continue
                    elif x == N:
                        c = r = N
                        pending = True
                    elif x == D:
                        c = r = D
                        self.done = True
                    elif pending:               # Sk -> S(k+1), merged with the held S0
                        c = r = -4 - ((-3 - x) & MASK)
                        pending = False
                    else:                       # no fiber before it: a bare S(k+1)
                        c = r = x - 1 - EB
                    f0 = f
                    if cb:
                        s = cf.popleft()
                        if s > f:
                            f = s
                    if rb:
                        s = rf.popleft()
                        if s > f:
                            f = s
                    stall += f - f0
                    if nb:
                        f = mem.take(f, nb)
                    ifr.append(f + 1)
                    ct.append(c)
                    ctm.append(f + lat)
                    rt.append(r)
                    rtm.append(f + lat)
                    t = f
                    fires += 1
                    if c == D:
                        break
                    continue
            f0 = f
            if cb:
                s = cf.popleft()
                if s > f:
                    f = s
            if rb:
                s = rf.popleft()
                if s > f:
                    f = s
            stall += f - f0
            if nb:                              # Memory.take, inlined (the hot path)
                w = f // W
                u = used.get(w, 0) + nb
                if u <= cap:
                    used[w] = u
                else:
                    f = spill(w, nb)
            ct.append(c)
            ctm.append(f + lat)
            rt.append(r)
            rtm.append(f + lat)
            t = f
            fires += 1
        self.t = t
        self.pos, self.end, self.base, self.pending = pos, end, base, pending
        self.stall += stall
        self.fires += fires
        self.rd_seg += self.eb * nseg
        self.rd_crd += self.eb * ncrd + nlook
        return blocked


class RepSig(Node):
    """Repeat-signal generator: crd in; R per coordinate, S per stop (any level), D."""

    __slots__ = ()
    kind_name = "repsig"

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat = self.t, self.ii, self.lat
        stall = fires = 0
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
            if x >= 0 or x == N:
                x = 0
            elif x <= -3:
                x = S0
            else:
                self.done = True
            ot.append(x)
            otm.append(f + lat)
            t = f
            fires += 1
            if x == D:
                break
        self.t = t
        self.stall += stall
        self.fires += fires
        return blocked


class Repeat(Node):
    """Repeat a ref (or value) stream along a repeat-signal stream.

    Inputs: the stream to repeat, the repsig stream. For the current input element it emits one
    copy per R; at S it moves on: if the next input token is a stop Sk it emits S(k+1) (merged),
    else S0. An input stop met with no current element (an empty outer fiber) takes one S and
    emits S(k+1). D ends both.
    """

    __slots__ = ("cur", "has", "ready")
    kind_name = "repeat"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.cur = None
        self.has = False
        self.ready = 0  # the cycle the held element was taken: its first use is not earlier

    def run(self) -> bool:
        a, g = self.ins
        at, atm, af = a.toks, a.times, a.free
        gt, gtm, gf = g.toks, g.times, g.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat = self.t, self.ii, self.lat
        cur, has, ready = self.cur, self.has, self.ready
        stall = fires = 0
        blocked = False
        while True:
            if ob and not of:
                blocked = True
                break
            f = t + ii
            if not has:
                if not at:
                    break
                x = at[0]
                if x.__class__ is not int or x >= 0 or x == N:   # a new element
                    # Taking the element costs no cycle of its own: it moves into the held
                    # register (its slot frees the next cycle) and the firing that uses it
                    # first (R: a copy; S: the close) may be in the same cycle (SAM's
                    # repeater pops the ref and the signal in one cycle).
                    at.popleft()
                    r = atm.popleft()
                    if r > f:
                        f = r
                    af.append(f + 1)
                    cur = x
                    has = True
                    ready = f
                    continue
                # a stop or D with no current element: needs the matching signal
                if not gt:
                    break
                sig = gt[0]
                r = atm[0]
                if r > f:
                    f = r
                r = gtm[0]
                if r > f:
                    f = r
                if x == D:
                    if sig != D:
                        raise self.mismatch("input and repeat signal (end)", (x, sig))
                    out = D
                    self.done = True
                else:
                    if sig != S0:
                        raise self.mismatch("input stop and repeat signal", (x, sig))
                    out = x - 1 - EB                 # bare: no element, no fiber
                at.popleft()
                atm.popleft()
                gt.popleft()
                gtm.popleft()
                f0 = f
                if ob:
                    s = of.popleft()
                    if s > f:
                        f = s
                stall += f - f0
                af.append(f + 1)
                gf.append(f + 1)
            else:
                if not gt:
                    break
                if ready > f:
                    f = ready
                sig = gt[0]
                r = gtm[0]
                if r > f:
                    f = r
                if sig == 0:                         # R: one more copy
                    out = cur
                    gt.popleft()
                    gtm.popleft()
                    f0 = f
                    if ob:
                        s = of.popleft()
                        if s > f:
                            f = s
                    stall += f - f0
                    gf.append(f + 1)
                elif sig == S0:                      # S: close, merging a following input stop
                    if not at:
                        break
                    x = at[0]
                    r = atm[0]
                    if r > f:
                        f = r
                    merged = x.__class__ is int and x <= -3
                    out = -4 - ((-3 - x) & MASK) if merged else S0
                    gt.popleft()
                    gtm.popleft()
                    if merged:
                        at.popleft()
                        atm.popleft()
                    f0 = f
                    if ob:
                        s = of.popleft()
                        if s > f:
                            f = s
                    stall += f - f0
                    gf.append(f + 1)
                    if merged:
                        af.append(f + 1)
                    has = False
                    cur = None
                else:
                    raise self.error(f"repeat signal ended ({'D'}) inside an element")
            ot.append(out)
            otm.append(f + lat)
            t = f
            fires += 1
            if out is D:
                break
        self.t = t
        self.cur, self.has, self.ready = cur, has, ready
        self.stall += stall
        self.fires += fires
        return blocked


class Array(Node):
    """Value array: ref in, value out; N loads 0 (a zero block); stops and D pass."""

    __slots__ = ("vals", "zero", "vbytes", "mem")
    kind_name = "array"

    def __init__(self, name: str, vals: list, zero=0.0, vbytes: int = 4,
                 ii: int = 1, lat: int = 1, mem=None):
        super().__init__(name, ii, lat)
        self.vals = vals
        self.zero = zero
        self.vbytes = vbytes
        self.mem = mem if mem is not None else unlimited()  # the graph's sim.memory.Memory

    def run(self) -> bool:
        ch = self.ins[0]
        it, itm, ifr = ch.toks, ch.times, ch.free
        o = self.outs[0]
        ot, otm, of, ob = o.toks, o.times, o.free, o.bounded
        t, ii, lat = self.t, self.ii, self.lat
        vals, zero = self.vals, self.zero
        mem = self.mem
        used, W, cap, spill = mem.used, mem.window, mem.cap, mem.spill
        vbytes = self.vbytes
        stall = fires = loads = 0
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
            if x >= 0:
                w = f // W                      # Memory.take, inlined (the hot path)
                u = used.get(w, 0) + vbytes
                if u <= cap:
                    used[w] = u
                else:
                    f = spill(w, vbytes)
                x = vals[x]
                loads += 1
            elif x == N:
                x = zero
            elif x == D:
                self.done = True
            ifr.append(f + 1)
            ot.append(x)
            otm.append(f + lat)
            t = f
            fires += 1
            if x is D:
                break
        self.t = t
        self.stall += stall
        self.fires += fires
        self.rd_vals += loads * vbytes
        return blocked
