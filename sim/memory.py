"""Off-chip bandwidth shared by the nodes of one graph: a calendar of fixed-length windows.

Every node that touches memory (compressed scanners reading seg/crd, value arrays, writers) asks
the graph's `Memory` for the bytes of each token it moves. Time is cut into windows of `window`
cycles, each able to move `bandwidth * window` bytes. One rule: a request made at cycle f is
served at f when the window of f still has room for it, else at the start of the last window
holding its bytes: the first later window with room, or, for a request larger than a window,
the last of the consecutive windows it is split over. So nodes share the device's bandwidth by what they actually move at the time:
one node streaming alone may use all of it, F parallel lanes split it F ways only while all of
them read. (A static split among all memory nodes of the graph, the earlier model, starved a
parallel graph's lanes even when most of them were idle.)

Nodes run ahead of each other (sim/node.py), so requests do not arrive in cycle order; a window
is shared first come, first served in the engine's (deterministic) order. So a node that runs
ahead (by up to its channels' depth) may take windows a slower node would have used first in
cycle order, and the slower node's request moves later: under a saturated memory the cycle count
depends a little on channel depth (SpMV at 6 bytes/cycle: 4,871 cycles with unbounded channels,
4,980 at depth 2). The totals are right (no window moves more than its bytes). Deterministic:
same graph, same data, same arch, same cycles.
"""

from __future__ import annotations

import math


class Memory:
    """The bandwidth calendar of one graph run (see the module docstring)."""

    __slots__ = ("bandwidth", "window", "cap", "used", "low")

    def __init__(self, bandwidth: float, window: int):
        self.bandwidth = bandwidth
        self.window = window
        self.cap = bandwidth * window   # bytes one window moves
        self.used: dict[int, float] = {}
        self.low = 0                    # windows below this one are forgotten

    def take(self, f: int, n: float) -> int:
        """Reserve `n` bytes requested at cycle `f`; returns the cycle they are served (>= f)."""
        W = self.window
        w = f // W
        used = self.used
        u = used.get(w, 0)
        if u + n <= self.cap:
            used[w] = u + n
            return f
        return self.spill(w, n)

    def spill(self, w: int, n: float) -> int:
        """`n` bytes that do not fit in window `w`: fill it and the windows after it."""
        W, cap, used = self.window, self.cap, self.used
        if n <= cap:                    # fits in one window: the first later one with room
            w += 1
            while used.get(w, 0) + n > cap:
                w += 1
            used[w] = used.get(w, 0) + n
            return w * W
        left = n
        while True:                     # larger than a window: split, in order
            u = used.get(w, 0)
            room = cap - u
            if room > 0:
                part = room if left > room else left
                used[w] = u + part
                left -= part
                if left <= 0:             # served with the last window holding its bytes
                    return w * W
            w += 1

    def forget_before(self, f: int) -> None:
        """Drop the windows that end before cycle `f` (no request can be earlier: the engine
        passes the earliest cycle any node may still fire at), so a long run's calendar stays
        as small as the span nodes run ahead of each other."""
        w = f // self.window
        if w <= self.low:
            return
        used = self.used
        if w - self.low > len(used):    # a long gap: fewer entries than windows to visit
            for k in [k for k in used if k < w]:
                del used[k]
        else:
            for k in range(self.low, w):
                used.pop(k, None)
        self.low = w


def unlimited() -> Memory:
    """A memory no request waits for (nodes built outside a graph, e.g. in tests)."""
    return Memory(math.inf, 1 << 40)
