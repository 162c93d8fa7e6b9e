"""Channels (bounded FIFOs between two nodes) and output ports (what a node pushes into).

A channel holds three deques: `toks` (tokens in flight), `times` (the cycle each token becomes
visible to the consumer: push time + producer latency) and `free` (the cycle each free slot became
free: pop time + 1; a bounded channel starts with `depth` slots free at cycle 0). A producer may
push only while `free` is non-empty, and its firing time is at least the slot's free time: that is
back-pressure. An unbounded channel's `free` is a zero-length deque (appends are no-ops) and its
producer never waits.

A node's output port is the channel itself when the stream has one consumer (no overhead), a
`FanOut` when it has several (each consumer keeps its own FIFO; the node writes one staging
buffer that is copied to every FIFO after its activation), or a `NullPort` when nobody reads it.
"""

from __future__ import annotations

from collections import deque
from itertools import chain, islice, repeat

#: The most tokens a fan-out producer emits per activation (see FanOut.prepare).
STAGE = 256

#: Deeper channels keep their initial free slots as a count (LazyFree), not as a deque of
#: zeros: a channel of any depth costs memory for the slots it used, not for its depth.
EAGER_DEPTH = 65536

_drain = deque(maxlen=0).extend  # consume an iterator at C speed


def pop_n(d: deque, k: int) -> None:
    """Pop the first k items of deque `d` in one C-level call (no Python loop per item). The
    items must not compare equal to None (ints do; numpy blocks do not compare with None)."""
    _drain(islice(iter(d.popleft, None), k))


class LazyFree(deque):
    """The free slots of a deep channel: `hidden` slots free at cycle 0, then the deque's
    (the cycles popped slots became free), exactly the queue `deque(repeat(0, depth))` would
    be, without materializing the zeros. Every deque operation the primitives use on `free`
    (popleft, append, extend, len, truthiness, indexing, iteration) sees the whole queue."""

    __slots__ = ("hidden",)

    def __init__(self, hidden: int):
        super().__init__()
        self.hidden = hidden

    def popleft(self):
        if self.hidden:
            self.hidden -= 1
            return 0
        return super().popleft()

    def __len__(self) -> int:
        return self.hidden + super().__len__()

    def __bool__(self) -> bool:
        return bool(self.hidden) or super().__len__() > 0

    def __getitem__(self, k: int):
        if k < 0:
            k += len(self)
        if k < self.hidden:
            return 0
        return super().__getitem__(k - self.hidden)

    def __iter__(self):
        return chain(repeat(0, self.hidden), super().__iter__())


def free_slots(depth: int | None) -> deque:
    """A new channel's free slots: `depth` slots free at cycle 0 (none kept when unbounded)."""
    if depth is None:
        return deque(maxlen=0)
    if depth > EAGER_DEPTH:
        return LazyFree(depth)
    return deque(repeat(0, depth))


class Channel:
    """A FIFO from one producer node to one consumer node carrying one stream."""

    __slots__ = ("name", "kind", "toks", "times", "free", "bounded", "depth", "src", "dst",
                 "pushed")

    def __init__(self, name: str, kind: str, depth: int | None):
        self.name = name
        self.kind = kind
        self.toks: deque = deque()
        self.times: deque = deque()
        self.depth = depth
        self.bounded = depth is not None
        self.free: deque = free_slots(depth)
        self.src = None  # producer node
        self.dst = None  # consumer node
        self.pushed = 0  # tokens moved over this channel (token-hops)

    def full(self) -> bool:
        """No free slot: a producer cannot push now (back-pressure)."""
        return self.bounded and not self.free

    def room(self, k: int) -> int:
        """How many of k tokens fit in the free slots now."""
        return min(k, len(self.free)) if self.bounded else k

    def arrival(self, i: int = 0) -> int:
        """The cycle the i-th token in flight becomes visible to the consumer."""
        return self.times[i]

    def feed(self, tokens, time: int = 0) -> None:
        """Preload tokens (tests: hand-written input streams), all visible at `time`."""
        self.toks.extend(tokens)
        self.times.extend(repeat(time, len(tokens)))
        self.pushed += len(tokens)

    def __repr__(self) -> str:
        return f"Channel({self.name})"


class FanOut:
    """The output port of a stream read by several consumers (implicit broadcast)."""

    __slots__ = ("chans", "toks", "times", "free", "bounded")

    def __init__(self, chans: list[Channel]):
        self.chans = chans
        self.toks: deque = deque()
        self.times: deque = deque()
        self.bounded = any(c.bounded for c in chans)
        self.free: deque = deque()

    full = Channel.full
    room = Channel.room

    def prepare(self) -> None:
        """Before the producer runs: slot j is free when it is free in every consumer FIFO
        (at most STAGE slots per activation, so a starved producer pays little for this)."""
        if self.bounded:
            frees = [c.free if c.bounded else repeat(0) for c in self.chans]
            self.free = deque(islice(map(max, *frees), STAGE))

    def flush(self) -> None:
        """After the producer ran: copy the staged tokens into every consumer FIFO."""
        m = len(self.toks)
        if not m:
            return
        for c in self.chans:
            c.toks.extend(self.toks)
            c.times.extend(self.times)
            if c.bounded:       # take m free slots (C speed: free cycles are ints)
                pop_n(c.free, m)
        self.toks.clear()
        self.times.clear()


class NullPort:
    """The output port of a stream nobody reads: pushes vanish."""

    __slots__ = ("toks", "times", "free", "bounded", "chans")

    def __init__(self):
        self.toks: deque = deque(maxlen=0)
        self.times: deque = deque(maxlen=0)
        self.free: deque = deque(maxlen=0)
        self.bounded = False
        self.chans: list[Channel] = []

    def full(self) -> bool:
        return False

    def room(self, k: int) -> int:
        return k


def make_port(chans: list[Channel]):
    """The port a producer pushes into for a stream read through `chans`."""
    if not chans:
        return NullPort()
    if len(chans) == 1:
        return chans[0]
    return FanOut(chans)
