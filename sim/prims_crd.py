"""Coordinate-stream primitives: coordinate drop and hold, fork and join for parallel lanes.
Timing is sim.node's firing rule; these classes say what each firing takes and emits."""

from __future__ import annotations

from collections import deque

from .node import BLOCKED, WAITING, Node
from .prims_compute import _Queued
from .tokens import S0, D, N, empt, is_element, is_stop, level, same_stop, stop


def _lines_up(outer: int, inner: int) -> bool:
    """The inner stream's stop (or D) matching an outer stop Sk (or D): S(k+1) (or D)."""
    return inner == D if outer == D else is_stop(inner) and level(inner) == level(outer) + 1


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

    def consume(self):
        o_in, i_in = self.ins
        if self.mode == 1:
            return self._inner(i_in)
        if not o_in.toks:
            return WAITING
        o = o_in.toks[0]
        if is_element(o):
            return self._outer_crd(o_in, i_in, o)
        return self._outer_stop(o_in, i_in, o)

    def _inner(self, i_in):
        """Inside a kept inner fiber: pass its coordinates; its closing stop is held."""
        if not i_in.toks:
            return WAITING
        x = i_in.toks[0]
        if is_element(x):
            out = self.outs[1]
            if out.full():
                return BLOCKED
            self.fire((i_in,), ((out, x),))
            return None
        self.fire((i_in,))
        self.mode = 0
        self.held = True
        self.after_crd = True
        return None

    def _outer_crd(self, o_in, i_in, o: int):
        """An outer coordinate: dropped with its empty inner fiber, or kept (queued)."""
        if not i_in.toks:
            return WAITING
        x = i_in.toks[0]
        if x < 0 and x != N:                    # empty inner fiber: drop o
            if x == D:
                raise self.mismatch("outer and inner streams", (o, x))
            self.fire((o_in, i_in))
            self.after_crd = True
            return None
        qo, qi = self.q
        if self.held:
            qi.append(S0)
            self.held = False
        qo.append(o)
        self.fire((o_in,), looks=(i_in,))
        self.mode = 1
        return None

    def _outer_stop(self, o_in, i_in, o: int):
        """An outer stop Sk or D: the inner stream's S(k+1) merges with a held close."""
        pops = [o_in]
        if not self.after_crd or o == D:        # the inner stream has its own token
            if not i_in.toks:
                return WAITING
            x = i_in.toks[0]
            if not _lines_up(o, x):
                raise self.mismatch("outer and inner stops", (o, x))
            pops.append(i_in)
        self.fire(pops)
        qo, qi = self.q
        qo.append(o)
        if o == D:
            qi.append(D)
        elif self.held:                              # merged with the last kept fiber
            qi.append(stop(level(o) + 1))
        else:                                        # no kept fiber: bare
            qi.append(stop(level(o) + 1, empt(o) + 1))
        self.held = False
        self.after_crd = False
        return None


class CrdHold(Node):
    """(outer crd, inner crd) -> (outer crd, inner crd): the outer coordinate is repeated once
    per inner coordinate; stops of the inner stream go to both outputs."""

    __slots__ = ("cur",)
    kind_name = "crdhold"

    def __init__(self, name: str, ii: int = 1, lat: int = 1):
        super().__init__(name, ii, lat)
        self.cur = None

    def step(self):
        if self.done:
            return WAITING
        o_in, i_in = self.ins
        oo, io = self.outs
        if self.cur is None:
            if not o_in.toks:
                return WAITING
            o = o_in.toks[0]
            if is_element(o):                # the next outer coordinate (a firing)
                self.cur = o
                self.fire((o_in,))
                return None
            return self._outer_stop(o_in, i_in, o)
        if not i_in.toks:
            return WAITING
        x = i_in.toks[0]
        if is_element(x):
            if oo.full() or io.full():
                return BLOCKED
            self.fire((i_in,), ((oo, self.cur), (io, x)))
            return None
        if x == D:
            raise self.error("inner stream ended (D) inside an outer fiber")
        pops = [i_in]
        if level(x):                                # the outer fiber ends too
            if not o_in.toks:
                return WAITING
            if not (is_stop(o_in.toks[0]) and level(o_in.toks[0]) == level(x) - 1):
                raise self.mismatch("outer and inner stops", (o_in.toks[0], x))
            pops.append(o_in)
        if oo.full() or io.full():
            return BLOCKED
        self.fire(pops, ((oo, x), (io, x)))
        self.cur = None
        return None

    def _outer_stop(self, o_in, i_in, o: int):
        """An outer stop or D with no current coordinate: both streams' stops go out."""
        if not i_in.toks:
            return WAITING
        x = i_in.toks[0]
        if not _lines_up(o, x):
            raise self.mismatch("outer and inner stops", (o, x))
        oo, io = self.outs
        if oo.full() or io.full():
            return BLOCKED
        self.fire((o_in, i_in), ((oo, x), (io, x)))
        if x == D:
            self.done = True
            return WAITING
        return None


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

    def consume(self):
        ch = self.ins[0]
        if not ch.toks:
            return WAITING
        x = ch.toks[0]
        ctl = x.__class__ is int and x < 0 and x != N
        if ctl and (x == D or level(x) >= self.lvl):   # enclosing stop or D: every lane
            self._enclosing(x)
        else:
            self._unit_token(x, ctl)
        self.fire_through((ch,))
        return None

    def _start_unit(self) -> None:
        """A unit starts on the current lane: its last unit's held close goes out first."""
        lane = self.lane
        if self.held[lane] is not None:
            self.q[lane].append(self.held[lane])
            self.held[lane] = None
        self.inside = True
        self.any = True

    def _enclosing(self, x: int) -> None:
        """An enclosing stop (or D) goes to every lane; the lane counter restarts."""
        L = self.lvl
        if L >= 1 and not self.inside and x != D and empt(x) < L:
            self._start_unit()     # not bare: it also closes an empty unit, on this lane
        for i, qi in enumerate(self.q):
            if x == D or L == 0 or (i == self.lane and self.inside):
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

    def _unit_token(self, x, ctl: bool) -> None:
        """A token of the current unit goes to the current lane."""
        if not self.inside:
            self._start_unit()
        lane = self.lane
        if self.lvl == 0:                          # the unit is this one token
            self.q[lane].append(x)
            self.inside = False
            self.lane = (lane + 1) % self.lanes
        elif ctl and level(x) == self.lvl - 1:     # the unit's close: held back
            self.held[lane] = x
            self.inside = False
            self.lane = (lane + 1) % self.lanes
        else:
            self.q[lane].append(x)


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

    def consume(self):
        lane = self.lane
        if self.closed[lane]:           # this lane has no more units: the fiber ends
            return self._fiber_end()
        ch = self.ins[lane]
        if not ch.toks:
            return WAITING
        x = ch.toks[0]
        ctl = x.__class__ is int and x < 0 and x != N
        enclosing = ctl and (x == D or level(x) >= self.lvl)
        # an enclosing stop at a unit boundary that is not bare closes an empty unit
        empty_unit = enclosing and self.lvl >= 1 and not self.inside and x != D and \
            empt(x) < self.lvl
        if enclosing and not empty_unit and not self.inside:
            return self._fiber_end()
        if not self.inside:                         # a unit starts
            if self.held is not None:
                self.q[0].append(self.held)
                self.held = None
            self.inside = True
        if enclosing:                               # merged close: this lane's fiber ended
            self.inside = False
            self.held = stop(self.lvl - 1, empt(x))
            self.closed[lane] = True
            self.endk = x
            self.lane = (lane + 1) % self.lanes
        else:
            self._unit_token(x, ctl)
        self.fire_through((ch,))
        return None

    def _unit_token(self, x, ctl: bool) -> None:
        """A token of the current lane's unit goes out; the unit's end moves to the next lane."""
        if self.lvl == 0:
            self.q[0].append(x)
            self.inside = False
            self.lane = (self.lane + 1) % self.lanes
        elif ctl and level(x) == self.lvl - 1:      # the unit's close: next lane
            self.held = x
            self.inside = False
            self.lane = (self.lane + 1) % self.lanes
        else:
            self.q[0].append(x)

    def _fiber_end(self):
        """The enclosing fiber ends on every lane: one stop out for all of them."""
        pops = []
        endk = self.endk
        for i, c in enumerate(self.ins):
            if self.closed[i]:
                continue
            if not c.toks:
                return WAITING
            h = c.toks[0]
            if endk is None:
                endk = h
            if not same_stop(h, endk):
                raise self.mismatch("lane stops", (endk, h))
            pops.append(c)
        if self.held is not None and endk != D:     # merged with the last unit's close
            self.q[0].append(stop(level(endk), empt(self.held)))
        else:
            self.q[0].append(endk)
        self.fire_through(pops)
        self.held = None
        self.inside = False
        self.closed = [False] * self.lanes
        self.endk = None
        self.lane = 0
        return None
