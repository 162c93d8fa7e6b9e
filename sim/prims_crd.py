"""Coordinate-stream primitives: coordinate drop and hold, fork and join for parallel lanes."""

from __future__ import annotations

from collections import deque

from .prims_compute import _Queued
from .tokens import D, N, S0, empt, level, same_stop, stop


class CrdDrop(_Queued):
    """(outer crd, inner crd) -> (outer crd, inner crd): an outer coordinate goes out only if its
    inner fiber is non-empty. The closing stop of a kept fiber is held back until the next kept
    fiber (then S0) or the outer fiber's end (then S(k+1), merged) is known."""

    __slots__ = ("mode", "held", "after_crd")
    kind_name = "crddrop"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.q = [deque(), deque()]
        self.mode = 0          # 0: at an outer token; 1: streaming a kept inner fiber
        self.held = False      # a kept fiber's closing stop is owed
        self.after_crd = False  # the last outer token of the current outer fiber was a crd

    def run(self) -> bool:
        o_in, i_in = self.ins
        ot, it = o_in.toks, i_in.toks
        qo, qi = self.q
        while True:
            if self.drain():
                return True
            if self.done:
                return False
            f = self.t + self.ii
            if self.mode == 1:                          # inside a kept inner fiber
                if not it:
                    return False
                f = max(f, i_in.times[0])
                x = it[0]
                if x >= 0 or x == N:
                    if not self.room(self.outs[1]):
                        return True
                    self.fire_at(f, (i_in,), ((self.outs[1], x),))
                else:
                    self.fire_at(f, (i_in,), ())
                    self.mode = 0
                    self.held = True
                    self.after_crd = True
                continue
            if not ot:
                return False
            f = max(f, o_in.times[0])
            o = ot[0]
            if o >= 0 or o == N:
                if not it:
                    return False
                f = max(f, i_in.times[0])
                x = it[0]
                if x < 0 and x != N:                    # empty inner fiber: drop o
                    if x == D:
                        raise self.mismatch("outer and inner streams", (o, x))
                    self.fire_at(f, (o_in, i_in), ())
                    self.after_crd = True
                    continue
                if self.held:
                    qi.append(S0)
                    self.held = False
                qo.append(o)
                self.fire_at(f, (o_in,), ())
                self.mode = 1
                continue
            # an outer stop Sk or D
            pops = [o_in]
            if not self.after_crd or o == D:            # the inner stream has its own token
                if not it:
                    return False
                f = max(f, i_in.times[0])
                x = it[0]
                if not (x == D if o == D else x <= -3 and level(x) == level(o) + 1):
                    raise self.mismatch("outer and inner stops", (o, x))
                pops.append(i_in)
            self.fire_at(f, pops, ())
            qo.append(o)
            if o == D:
                qi.append(D)
            elif self.held:                              # merged with the last kept fiber
                qi.append(stop(level(o) + 1))
            else:                                        # no kept fiber: bare
                qi.append(stop(level(o) + 1, empt(o) + 1))
            self.held = False
            self.after_crd = False


class CrdHold(_Queued):
    """(outer crd, inner crd) -> (outer crd, inner crd): the outer coordinate is repeated once
    per inner coordinate; stops of the inner stream go to both outputs."""

    __slots__ = ("cur",)
    kind_name = "crdhold"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.q = [deque(), deque()]
        self.cur = None

    def run(self) -> bool:
        o_in, i_in = self.ins
        ot, it = o_in.toks, i_in.toks
        oo, io = self.outs
        while True:
            if self.drain():
                return True
            if self.done:
                return False
            f = self.t + self.ii
            if self.cur is None:
                if not ot:
                    return False
                f = max(f, o_in.times[0])
                o = ot[0]
                if o >= 0 or o == N:
                    self.cur = o
                    self.fire_at(f, (o_in,), ())
                    continue
                if not it:
                    return False
                f = max(f, i_in.times[0])
                x = it[0]
                if not (x == D if o == D else x <= -3 and level(x) == level(o) + 1):
                    raise self.mismatch("outer and inner stops", (o, x))
                if not self.room(oo, io):
                    return True
                self.fire_at(f, (o_in, i_in), ((oo, x), (io, x)))
                if x == D:
                    self.done = True
                continue
            if not it:
                return False
            f = max(f, i_in.times[0])
            x = it[0]
            if x >= 0 or x == N:
                if not self.room(oo, io):
                    return True
                self.fire_at(f, (i_in,), ((oo, self.cur), (io, x)))
                continue
            if x == D:
                raise self.error("inner stream ended (D) inside an outer fiber")
            pops = [i_in]
            if level(x):                                # the outer fiber ends too
                if not ot:
                    return False
                f = max(f, o_in.times[0])
                if not (ot[0] <= -3 and level(ot[0]) == level(x) - 1):
                    raise self.mismatch("outer and inner stops", (ot[0], x))
                pops.append(o_in)
            if not self.room(oo, io):
                return True
            self.fire_at(f, pops, ((oo, x), (io, x)))
            self.cur = None


class Fork(_Queued):
    """Scatter a stream round-robin across lanes. A unit is one element at stop depth `level`
    with everything nested inside it (level 0: one data token; level L: a fiber closed by
    S(L-1)); stops of level >= `level` close enclosing fibers and go to every lane (merged with
    the lane's last held unit close), as does D. The lane counter restarts at every enclosing
    stop, so forks and joins at different levels of one loop nest agree. A lane that got no
    unit in an enclosing fiber gets a bare stop (emptiness `level`, see sim.tokens), which is
    how `join` tells it from a lane whose last unit is an empty fiber.
    """

    __slots__ = ("lanes", "lvl", "lane", "inside", "held", "any")
    kind_name = "fork"

    def __init__(self, name: str, lanes: int, lvl: int = 0, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.lanes = lanes
        self.lvl = lvl
        self.q = [deque() for _ in range(lanes)]
        self.lane = 0
        self.inside = False              # inside a unit (level >= 1)
        self.held: list = [None] * lanes  # lane owes this close S(L-1) of its last unit
        self.any = False                 # some unit went out in the current enclosing fiber

    def run(self) -> bool:
        ch = self.ins[0]
        it = ch.toks
        L = self.lvl
        while True:
            if self.drain():
                return True
            if self.done or not it:
                return False
            f = max(self.t + self.ii, ch.times[0])
            x = it[0]
            ctl = x.__class__ is int and x < 0 and x != N
            lane = self.lane
            if ctl and (x == D or level(x) >= L):   # enclosing stop or D: every lane
                if L >= 1 and not self.inside and x != D and empt(x) < L:
                    # not bare: it also closes an empty unit, which goes to this lane
                    if self.held[lane] is not None:
                        self.q[lane].append(self.held[lane])
                        self.held[lane] = None
                    self.inside = True
                    self.any = True
                for i, qi in enumerate(self.q):
                    if x == D or L == 0 or (i == lane and self.inside):
                        qi.append(x)
                    elif self.held[i] is not None:   # merged with the lane's last unit close
                        qi.append(stop(level(x), empt(self.held[i])))
                    elif self.any:                   # this lane got no unit: bare
                        qi.append(stop(level(x), L))
                    else:
                        qi.append(x)
                    self.held[i] = None
                self.inside = False
                self.any = False
                self.lane = 0
                self.fire_through(f, (ch,))
                continue
            if not self.inside:                      # a unit starts
                if self.held[lane] is not None:
                    self.q[lane].append(self.held[lane])
                    self.held[lane] = None
                self.inside = True
                self.any = True
            if L == 0:                               # the unit is this one token
                self.q[lane].append(x)
                self.inside = False
                self.lane = (lane + 1) % self.lanes
            elif ctl and level(x) == L - 1:          # the unit's close: held back
                self.held[lane] = x
                self.inside = False
                self.lane = (lane + 1) % self.lanes
            else:
                self.q[lane].append(x)
            self.fire_through(f, (ch,))


class Join(_Queued):
    """Gather lanes back in the original order: the inverse of Fork at the same level."""

    __slots__ = ("lanes", "lvl", "lane", "inside", "held", "closed", "endk")
    kind_name = "join"

    def __init__(self, name: str, lanes: int, lvl: int = 0, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.lanes = lanes
        self.lvl = lvl
        self.q = [deque()]
        self.lane = 0
        self.inside = False
        self.held = None                 # the close S(L-1) owed for the last unit out
        self.closed = [False] * lanes    # lane's enclosing fiber already ended (merged close)
        self.endk = None                 # the merged enclosing stop seen last

    def run(self) -> bool:
        L = self.lvl
        out = self.q[0]
        while True:
            if self.drain():
                return True
            if self.done:
                return False
            lane = self.lane
            ch = self.ins[lane]
            if not self.closed[lane]:
                if not ch.toks:
                    return False
                x = ch.toks[0]
                f = max(self.t + self.ii, ch.times[0])
                ctl = x.__class__ is int and x < 0 and x != N
                enclosing = ctl and (x == D or level(x) >= L)
                # an enclosing stop at a unit boundary that is not bare closes an empty unit
                empty_unit = enclosing and L >= 1 and not self.inside and x != D and \
                    empt(x) < L
                if not enclosing or empty_unit:
                    if not self.inside:                 # a unit starts
                        if self.held is not None:
                            out.append(self.held)
                            self.held = None
                        self.inside = True
                    if empty_unit:
                        pass                            # handled as a merged close below
                    elif L == 0:
                        out.append(x)
                        self.inside = False
                        self.lane = (lane + 1) % self.lanes
                        self.fire_through(f, (ch,))
                        continue
                    elif ctl and level(x) == L - 1:     # the unit's close: next lane
                        self.held = x
                        self.inside = False
                        self.lane = (lane + 1) % self.lanes
                        self.fire_through(f, (ch,))
                        continue
                    else:
                        out.append(x)
                        self.fire_through(f, (ch,))
                        continue
                if self.inside:                     # merged close: this lane's fiber ended
                    self.inside = False
                    self.held = stop(L - 1, empt(x))
                    self.closed[lane] = True
                    self.endk = x
                    self.lane = (lane + 1) % self.lanes
                    self.fire_through(f, (ch,))
                    continue
            # this lane has no more units: the enclosing fiber ends on every lane
            pops = []
            f = self.t + self.ii
            endk = self.endk
            for i, c in enumerate(self.ins):
                if self.closed[i]:
                    continue
                if not c.toks:
                    return False
                f = max(f, c.times[0])
                h = c.toks[0]
                if endk is None:
                    endk = h
                if not same_stop(h, endk):
                    raise self.mismatch("lane stops", (endk, h))
                pops.append(c)
            if self.held is not None and endk != D:     # merged with the last unit's close
                out.append(stop(level(endk), empt(self.held)))
            else:
                out.append(endk)
            self.fire_through(f, pops)
            self.held = None
            self.inside = False
            self.closed = [False] * self.lanes
            self.endk = None
            self.lane = 0
