"""The walk over one graph: every node's cost rule (fuseflowc.estimate.rules) in topological
order, with what is the same for every kind: parallel lanes (a node in a lane sees the serial
stream's shape and pays its lane's share), token hops, accumulator buffer traffic, and the
cycle model (fuseflowc.estimate.timing).
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from ..samml import kinds
from . import lanes, timing
from .cost import Cost
from .rules import RULES, Context

#: Kinds whose rule models one lane's share of the index it reduces when a fork splits that
#: index and the node runs per lane (parallelize{reduce=lanes}).
# reducers: the kinds that accumulate (samml.kinds traits)
_REDUCERS = tuple(k for k in kinds.NAMES if kinds.traits(k).accumulates is not None)


class GraphModel:
    """Propagates StreamShape through one graph in topological order and accumulates its Cost
    (`cost`), the tensors it writes (`writes`) and, with an `arch`, its cycles (`finish`)."""

    def __init__(self, graph, tensors: dict, eb: int, arch=None, spilled: dict | None = None):
        self.graph = graph
        self.arch = arch           # sim.arch.Arch: the cycle model's timing (None: no cycles)
        # spilled: buffer -> the StreamShape an earlier graph spilled (shared by the module's
        # graphs, opt -p map's configurations)
        self.ctx = Context(graph.name, tensors, eb,
                           spilled=spilled if spilled is not None else {})
        self.span: dict = {}       # stream -> timing.Span (first and last token's arrival)
        self.finish = 0.0          # the latest node's finish: the graph's cycles
        self.memory = timing.Calendar()
        self.node_times: list = [] # (node, firings, finish) per node, for diagnostics
        self.st: dict = {}         # stream -> StreamShape
        self._contexts: dict = {}  # stream -> its loop nest (samml.analysis.stream_contexts)

    @property
    def cost(self) -> Cost:
        return self.ctx.cost

    @property
    def writes(self) -> dict:
        return self.ctx.writes

    @property
    def spill_io(self) -> list:
        """[bytes this graph's spills store, bytes its replays read]."""
        return self.ctx.spill_io

    def run(self) -> None:
        from ..samml.analysis import stream_contexts
        self._contexts = stream_contexts(self.graph)
        # stream -> the forks it is split by, outermost first: (index, lanes, lane)
        split: dict = {}
        for n in self.graph.topo_order():
            ins = [self.st[s] for s in n.inputs]
            # A node in a parallel lane sees the serial stream's shape (so exact relations
            # survive the fork) and pays its weight's share of the costs.
            weight = min((s.lane_weight for s in ins), default=1.0)
            sp = max((split.get(s, ()) for s in n.inputs), key=len, default=())
            gone = self._per_lane(n, sp)
            self.ctx.lane = gone[-1][1:] if gone else None
            group_lanes = self._group_lanes(n, sp)
            before = replace(self.cost)
            outs = RULES[n.KIND](self.ctx, n, *ins)
            if weight != 1.0:
                self._weigh(before, weight)
            if outs is None:
                self._time(n, ins, [], group_lanes)
                continue
            self._place(n, outs, split, self._split_after(n, sp, gone, split),
                        self._weight_after(n, ins, weight, gone))
            self._count_moves(n, ins, weight)
            if sp or n.KIND == "join":
                lanes.balance(n, ins, sp, self.st, self.ctx.tensor, self._contexts)
            shares = lanes.group_shares(n, ins, sp, self._contexts) \
                if self.arch is not None else None
            self._time(n, ins, [self.st[s] for s in n.outputs], group_lanes, shares)

    def _per_lane(self, n, sp: tuple) -> list:
        """The forks a per-lane reducer undoes: those splitting the index it reduces, which
        none of its outputs iterates (every lane emits the whole reduced stream's structure,
        with its own subset's coordinates)."""
        ctx = self._contexts
        return [e for e in sp if n.KIND in _REDUCERS and e[0] == getattr(n, "index", None)
                and not any(e[0] in ctx.get(o, ()) for o in n.outputs)]

    def _group_lanes(self, n, sp: tuple) -> int:
        """The lanes that split the groups an accumulator emits (an index of its output, not
        the one it reduces): each lane's node sees only its share of the groups."""
        ctx = self._contexts
        return math.prod(e[1] for e in sp if e[0] != getattr(n, "index", None)
                         and any(e[0] in ctx.get(o, ()) for o in n.outputs))

    def _weigh(self, before: Cost, weight: float) -> None:
        """Scale what the node just charged by its lane's weight."""
        for f in fields(Cost):
            old = getattr(before, f.name)
            setattr(self.cost, f.name, old + (getattr(self.cost, f.name) - old) * weight)

    @staticmethod
    def _weight_after(n, ins: list, weight: float, gone: list) -> float:
        """The lane weight of n's outputs: summed over a join's lanes, divided over a fork's,
        multiplied back by the lanes a per-lane reducer undoes."""
        if n.KIND == "join":
            return sum(s.lane_weight for s in ins)
        if n.KIND == "fork":
            return weight / int(n.lanes)
        return weight * math.prod(e[1] for e in gone)

    @staticmethod
    def _split_after(n, sp: tuple, gone: list, split: dict) -> tuple:
        """The forks n's outputs are split by (a fork adds its own per output in `_place`)."""
        if n.KIND == "join":
            return split.get(n.inputs[0], ())[:-1]
        if n.KIND == "fork":
            return sp
        return tuple(e for e in sp if e not in gone)

    def _place(self, n, outs: list, split: dict, sp: tuple, weight: float) -> None:
        """Record n's output shapes at `weight`, and the forks that split them."""
        for k, (s, v) in enumerate(zip(n.outputs, outs)):
            self.st[s] = v if v.lane_weight == weight else replace(v, lane_weight=weight)
            if n.KIND == "fork":
                c = self._contexts.get(n.inputs[0], ())
                x = c[len(c) - 1 - n.level] if len(c) > n.level else None
                split[s] = sp + ((x, int(n.lanes), k),)
            else:
                split[s] = sp

    def _count_moves(self, n, ins: list, weight: float) -> None:
        """Node n's token hops (every token of its outputs, in its lane) and, for an
        accumulator, the bytes its firings move through its buffer (sim.energy)."""
        from fuseflowc.sim.energy import BUFFER_KINDS
        outs = [self.st[s] for s in n.outputs]
        for s in outs:
            stops = float(s.counts[-2]) if len(s.counts) >= 2 else 0.0
            self.cost.hops += (float(s.counts[-1]) + stops + 1.0) * s.lane_weight
        if n.KIND in BUFFER_KINDS:
            self.cost.onchip_bytes += timing.firings(n, ins, outs) * weight * self.ctx.eb

    def _time(self, n, ins: list, outs: list, group_lanes: int, shares=None) -> None:
        """The spans of node n's outputs and its finish (fuseflowc/estimate/timing.py)."""
        if self.arch is None:
            return
        spans = [self.span[s] for s in n.inputs]
        compressed = n.KIND == "scan" and getattr(n, "format", None) != "dense"
        span, fin, f = timing.fire(n, self.arch, ins, outs, spans, compressed, self.memory,
                                   self.ctx.eb, group_lanes, shares)
        for s in n.outputs:
            self.span[s] = span
        self.finish = max(self.finish, fin)
        self.node_times.append((n, f, fin))
