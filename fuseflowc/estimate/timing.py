"""The cycle model: when each stream of a graph starts and ends, from its expected length.

The simulator (sim/README.md, "Timing") fires every node at most once per `ii` cycles, one
token per firing, and a node's outputs arrive `latency` cycles after it fires (plus
`memory.latency` for compressed scanners, value arrays and writers). With deep channels the
nodes of a graph overlap almost completely, so a graph takes about as long as its busiest node,
plus the pipeline latencies in front of and behind it, unless something forces its parts to run
one after another. This module keeps, for every stream, the cycle its first token arrives and
the cycle its last token arrives (a `Span`), node by node in topological order:

    fire_first = the latest first arrival of the inputs
    fire_last  = max(the latest last arrival of the inputs (+ the last group's flush),
                     fire_first + (firings - 1) * ii,
                     the inputs' tail release + their tail share of the firings * ii)
    out        = (fire_first + latency, fire_last + latency)

except that a reducer or sparse accumulator emits a group only once it has seen all of it: its
first output waits for the first group (1/groups of its input's span), so a spacc over the
whole stream is a barrier between what feeds it and what reads it. Its last group (1/groups of
the stream, the `tail`) reaches the nodes downstream only when it is released, so each of
them still has that share of its work to do after the release (sparse autoencoder layers
fused per batch row: every layer's last row runs after the layer before has finished it).
In a parallel lane an accumulator over the split index's rows holds a whole number of them
(every lanes-th row), and a join takes the lanes' rows round-robin, waiting on each lane in
turn (`gather`), not on the latest lane for all of its work.

Firings per node kind are counted from stream lengths in tokens (elements, one stop per
innermost fiber, and D), as the primitives take them (sim/prims_*.py): one per output token for
scanners, repeats and unions; per input token for value primitives, locators, forks and
writers; inputs plus outputs for sparse accumulators (their flush takes firings of its own);
for an intersection every coordinate of either side once (matches popped together); a crdhold
or a join takes every token of every input. A node in a parallel lane counts its lane's share
of the stream (`StreamShape.lane_weight`).

The graph's cycles are the latest writer's finish, bounded below by its off-chip bytes over
`memory.bandwidth` (every memory node shares one bandwidth calendar, sim/memory.py) plus the
memory latency. Permute steps use the simulator's own formula (sim/permute.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ops import block_contracts
from ..samml.kinds import SPACC_KINDS

#: The sparse accumulators' kind names (spacc1, spacc2, ...).
_SPACC = tuple(c.KIND for c in SPACC_KINDS.values())

#: Node kinds whose latency includes memory.latency (when they touch memory).
_MEMORY_KINDS = ("array", "write_level", "write_vals", "spill", "replay")


@dataclass(frozen=True)
class Span:
    """Arrival cycles of a stream's first and last token, and the share of the stream that
    arrives only at the end (`tail`): the last group an accumulator releases, whose work every
    node downstream can do only after it (1 behind a whole-stream barrier)."""

    first: float
    last: float
    tail: float = 0.0
    release: float = 0.0    # the cycle the tail starts to arrive
    phase: int = 0          # whole-stream barriers behind it
    groups: float = 0.0     # the groups the tail's accumulator releases (0: none upstream)


def tokens(s) -> float:
    """Expected tokens of stream `s` (an estimate.shape.StreamShape) in its lane: elements (N included),
    one stop per innermost fiber (a stop closing several levels is one token), and D; times the
    lane's weight and its imbalance (StreamShape.lane_skew)."""
    stops = float(s.counts[-2]) if len(s.counts) >= 2 else 0.0
    return (float(s.counts[-1]) + stops + 1.0) * s.lane_weight * s.lane_skew


def firings(n, ins: list, outs: list) -> float:
    """Expected firings of node `n` with input streams `ins` and output streams `outs`
    (see the module docstring)."""
    k = n.KIND
    tin = [tokens(s) for s in ins]
    tout = [tokens(s) for s in outs]
    if k == "root":
        return 2.0
    if k in ("scan", "repeat", "union", "replay"):
        return max(tout, default=0.0)
    if k == "intersect":
        crd = tin[0::2]
        return max(sum(crd) - (len(crd) - 1) * (tout[0] if tout else 0.0), max(crd, default=0))
    if k in _SPACC:
        return max(tin, default=0.0) + max(tout, default=0.0)
    if k in ("crdhold", "join"):   # every token of every input: outer and inner, or lanes
        return sum(tin)
    return max(tin, default=0.0)


def node_timing(n, arch, ins: list, outs: list, compressed: bool,
                cache: dict | None = None) -> tuple[int, int]:
    """(latency, ii) of node `n` as sim/build.py gives them: the arch's per-kind values, block
    costs for nodes handling b x b values, memory.latency added to memory nodes. `cache`
    (a dict kept per arch) saves re-evaluating the arch's block expressions."""
    vb = None
    for s in list(ins) + list(outs):
        if s.kind == "val" and s.block:
            vb = s.block
    op = getattr(n, "op", None)
    if n.KIND == "alu" and vb and getattr(n, "out", None) is not None:
        op = "bmm" if block_contracts(n.op, n.in0, n.in1, n.out) else n.op
    key = (n.KIND, op, vb, compressed)
    got = cache.get(key) if cache is not None else None
    if got is not None:
        return got
    lat, ii = arch.timing(n.KIND, op, vb)
    if n.KIND in _MEMORY_KINDS or (n.KIND == "scan" and compressed):
        lat += arch.mem_latency
    if cache is not None:
        cache[key] = (lat, ii)
    return lat, ii


def groups_of(n, ins: list) -> float:
    """How many groups an accumulating node emits one at a time (a group's output leaves only
    after the group's last input): fibers of the reduced level for `reduce`, groups of fibers
    for sparse accumulators; 0 for every other kind."""
    if n.KIND == "reduce" and ins:
        c = ins[0].counts
        return float(c[-2]) if len(c) >= 2 else 1.0
    if n.KIND in _SPACC and ins:
        c = ins[0].counts
        return float(c[-3]) if len(c) >= 3 else 1.0
    return 0.0


#: A memory node moving at least this share of the bandwidth per firing takes its turn at the
#: whole bandwidth (Calendar); lighter ones stream beside each other.
HEAVY = 0.25


class Calendar:
    """The graph's memory (sim/memory.py: windows served first come, first served in the
    engine's order, so a node running ahead takes the bandwidth and the next one waits):
    `free` is the cycle the heavy nodes so far have moved their bytes by; `moved` the bytes
    of every memory node so far per phase (the whole-stream barriers behind it), which no node
    of the phase finishes before moving from the phase's `start` (its first release)."""

    def __init__(self):
        self.free = 0.0
        self.moved: dict[int, float] = {}
        self.start: dict[int, float] = {}
        self.timings: dict = {}     # node_timing's cache (one arch per graph)


def bytes_per_firing(n, ins: list, outs: list, eb: int, compressed: bool) -> float:
    """Off-chip bytes node `n` moves per firing: a value (b x b of them for a block) for arrays
    and value writers, a coordinate for compressed scanners and level writers."""
    k = n.KIND
    if k in ("array", "write_vals"):
        vals = [s for s in list(outs) + list(ins) if s.kind == "val"]
        b = vals[0].block if vals and vals[0].block else None
        return float(eb * (b * b if b else 1))
    if k in ("spill", "replay"):    # every token of the cut stream, a value a block's b x b
        vals = [s for s in list(outs) + list(ins) if s.kind == "val" and s.block]
        return float(eb * (vals[0].block ** 2 if vals else 1))
    if k == "write_level":
        return float(eb) if getattr(n, "format", "dense") != "dense" else 0.0
    if k == "scan" and compressed:
        return float(eb)
    return 0.0


def _outermost_units(n, ins: list) -> bool:
    """Whether join `n` gathers units of one enclosing fiber (its lanes split the stream's
    outermost index): then `gather` follows its rounds; under several enclosing fibers the
    rounds restart in each, and the lanes' spans say too little to follow them."""
    c = ins[0].counts if ins else []
    k = len(c) - 2 - int(getattr(n, "level", 0))
    return 0 <= k < len(c) and float(c[k]) <= 1.0


def gather(spans: list, tin: list, ii: float) -> tuple[float, float, float, float]:
    """A join's (first output, last output before latency, tail, release): it takes the lanes'
    units round-robin (sim/prims_crd.py Join): lane 0's first group, lane 1's, ..., then
    every lane's second group, so it waits on each lane in turn, not on the slowest lane
    before it starts nor on the latest release for all its work. A lane's groups
    (Span.groups; one unit when no accumulator is upstream) leave between its first output
    and its release, evenly spaced, the last one its tail's share of its tokens, the others
    an even share of the rest. The tail: the tokens after the last wait on a lane."""
    lanes = []
    for s, tk in zip(spans, tin):
        g = max(int(round(s.groups)), 1) if s.groups > 0 else 1
        share = s.tail if s.groups > 0 else 1.0
        lanes.append((s, tk, g, share))
    t, start, rel, after = 0.0, None, 0.0, 0.0
    for r in range(max((x[2] for x in lanes), default=0)):
        for s, tk, g, share in lanes:
            if r >= g:
                continue
            avail = s.first + (s.release - s.first) * r / (g - 1) if g > 1 else s.release \
                if s.groups > 0 else s.first
            part = tk * (share if r == g - 1 else (1.0 - share) / (g - 1))
            if part <= 0:
                continue
            if start is None:
                start = avail
            if avail >= t:
                t, rel, after = avail, avail, 0.0
            t += part * ii
            after += part
    total = sum(tin)
    return (start or 0.0), t, (after / total if total > 0 else 0.0), rel


def fire(n, arch, ins: list, outs: list, spans: list, compressed: bool = False,
         memory: Calendar | None = None, eb: int = 4, group_lanes: int = 1,
         shares: tuple[float, float, float] | None = None) -> tuple[Span, float, float]:
    """The span of node `n`'s outputs given its inputs' spans; also its finish (the cycle its
    last output arrives) and its firings. `memory`: the graph's Calendar (None: bandwidth not modelled here);
    `group_lanes`: the lanes an accumulator's groups are dealt to (it sees 1/group_lanes of
    the serial stream's groups); `shares`: its first and last group's shares of its input and
    its number of groups, when known (else groups / group_lanes, 1 / groups each)."""
    lat, ii = node_timing(n, arch, ins, outs, compressed,
                          memory.timings if memory is not None else None)
    first = max((s.first for s in spans), default=0.0)
    last = max((s.last for s in spans), default=0.0)
    q, rel, gs = max(((s.tail, s.release, s.groups) for s in spans), default=(0.0, 0.0, 0.0))
    phase = max((s.phase for s in spans), default=0)
    f = firings(n, ins, outs)
    bpf = bytes_per_firing(n, ins, outs, eb, compressed) if memory is not None else 0.0
    if bpf >= HEAVY * arch.bandwidth * ii:
        # a heavy memory node: no faster than the bandwidth, and after the heavy ones before it
        ii = max(float(ii), bpf / arch.bandwidth)
        first = max(first, memory.free)
        memory.free = first + f * bpf / arch.bandwidth
    out_first, flush = first, 0.0
    g = groups_of(n, ins) / group_lanes
    if g > 0:
        # it takes its inputs as they come, but a group leaves only after the group's last
        # input: the first output waits for the first group, and the last group's flush
        # (its share of the output tokens, for accumulators) follows the last input
        if shares is not None:
            head, tail, g = shares
        g = max(g, 1.0)
        if shares is None:
            head, tail = 1.0 / g, 1.0 / g
        out_first = first + (last - first) * head
        flush = max((tokens(s) for s in outs), default=0.0) / g if n.KIND != "reduce" else 1.0
    if n.KIND == "join" and len(spans) > 1 and _outermost_units(n, ins):
        out_first, end, q, rel = gather(spans, [tokens(s) for s in ins], ii)
        gs = 0.0
        end = max(end - ii, last)
    else:
        # the inputs' tail share of the work can start only when the tail is released
        end = max(last + flush * ii, first + max(f - 1.0, 0.0) * ii, rel + q * f * ii)
    if bpf > 0:   # light nodes together may saturate the memory within a phase too
        start = memory.start.setdefault(phase, rel if phase else 0.0)
        memory.moved[phase] = memory.moved.get(phase, 0.0) + f * bpf
        end = max(end, start + memory.moved[phase] / arch.bandwidth)
    if g > 0 and tail >= q:   # this node's last group is the tail from here on
        q, rel, gs = tail, last, g
        if g <= 1.0:
            phase += 1
    return Span(out_first + lat, end + lat, q, rel + lat, phase, gs), end + lat, f


def bandwidth_bound(cost, arch) -> float:
    """Cycles a graph needs at least to move its off-chip bytes: bytes / bandwidth, plus the
    memory latency of the first request."""
    b = float(cost.bytes)
    return arch.mem_latency + b / arch.bandwidth if b > 0 else 0.0


def permute_cycles(read_bytes: float, written_bytes: float, entries: float, arch) -> float:
    """A permute step's cycles as sim/permute.py charges them: memory latency, the larger of the
    bytes read and written over the bandwidth, and the sort at permute.elements_per_cycle."""
    return arch.mem_latency + math.ceil(max(read_bytes, written_bytes) / arch.bandwidth) \
        + math.ceil(entries / arch.permute_rate)
