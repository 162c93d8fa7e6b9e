"""The compiled engine (sim/cpp, built as the extension `fuseflowc.sim._fast`): runs a graph the Python
builder made (sim/build.py) and gives the same results as sim.engine.Engine, bit for bit.

The Python nodes and channels stay the graph's description: `FastEngine` makes the compiled
twin of each node from its attributes (sim/cpp/registry.hpp), runs it, and writes the outcome
back into the Python objects (every node's counters and clock, every channel's token-hops, every
writer's stream, as a compact sim.recorded.Recorded), so reports, assembly and error messages
are the Python engine's own code. A deadlock copies the channels' contents back and is reported by sim.engine.Engine.deadlock; a
node's error is raised by the Python node's `error`/`mismatch`.
"""

from __future__ import annotations

from collections import deque

from fuseflowc.diagnostics import UserError

from .engine import Engine
from .recorded import Recorded

try:
    from . import _fast
except ImportError as e:        # not built (no compiler at install time, or disabled)
    _fast = None
    _WHY = ("not built (it needs a C++ compiler when fuseflowc is installed)"
            if "_fast" in str(e) else f"not loadable ({e})")
else:
    _WHY = ""


class Unsupported(UserError):
    """The compiled engine cannot run this graph (a primitive or a value it does not take)."""


def available() -> bool:
    """Whether the compiled engine is built."""
    return _fast is not None


def unavailable_reason() -> str:
    """Why the compiled engine cannot be imported ('' when it can)."""
    return _WHY


def unsupported(nodes) -> list[str]:
    """The primitive kinds (SAMML kind names) among `nodes` the compiled engine does not
    implement (sorted)."""
    if _fast is None:
        return sorted({n.kind for n in nodes})
    return sorted({n.kind for n in nodes} - set(_fast.kinds()))


class FastEngine:
    """Runs a set of wired Python nodes on the compiled core; the interface of
    sim.engine.Engine (`run()` returns the total cycle count; `activations` counts them)."""

    def __init__(self, nodes: list, writers: list | None = None,
                 max_cycles: int | None = None, progress=None, memory=None, trace=None):
        """`trace`: None, or a callable given the activation records in batches (a
        sim.trace.KernelTrace's feed)."""
        if _fast is None:
            raise UserError(f"the compiled simulation engine is {_WHY}")
        self.nodes = nodes
        self.writers = writers if writers is not None else [n for n in nodes
                                                             if n.kind.startswith("write")]
        self.max_cycles = max_cycles
        self.progress = progress
        self.memory = memory
        self.trace = trace
        self.activations = 0
        self._graph = None

    def prepare(self) -> None:
        """Make the compiled graph of the nodes (what Simulator.build is to the Python engine:
        building, not running; run() does it when it was not done)."""
        if self._graph is None:
            self._graph = self._build()

    def run(self) -> int:
        self.prepare()
        g, chans = self._graph
        try:
            # a budget past 2**62 cycles is no budget (the core's clock is 64-bit)
            args = (-1 if self.max_cycles is None or self.max_cycles > 2**62
                    else self.max_cycles,
                    self.progress, Engine.PROGRESS_EVERY)   # progress(cycle, flops), as Engine's
            if self.trace is not None:          # untraced: the call it always was
                args += (self.trace,)
            status, cycles, acts, over = g.run(*args)
        except _fast.SimError as e:
            self._sync(g, chans)
            node, msg, what, toks = e.args
            n = self.nodes[node]
            raise (n.mismatch(what, toks) if what else n.error(msg)) from None
        self.activations = acts
        self._sync(g, chans)
        if status == "budget":
            node = self.nodes[over]
            raise UserError(
                f"simulation exceeded the cycle budget (--max-cycles {self.max_cycles}) at node "
                f"{node.name} ({node.kind}), cycle {node.t}")
        if status == "deadlock":
            for i, c in enumerate(chans):
                toks, times = g.channel_tokens(i)
                c.toks, c.times = deque(toks), deque(times)
            raise Engine(self.nodes, self.writers).deadlock()
        return cycles

    # ---- building and reading back -------------------------------------------------------
    def _build(self):
        """The compiled graph of the Python nodes; returns it and its channels in index order."""
        g = _fast.Graph(self.memory)
        chans: list = []
        index: dict = {}

        def chan(c) -> int:
            i = index.get(id(c))
            if i is None:
                i = g.add_channel(c.name, c.kind, -1 if c.depth is None else c.depth)
                if c.toks or c.pushed:     # a hand-written input stream (sim.harness, tests)
                    try:
                        g.feed(i, list(c.toks), list(c.times), c.pushed)
                    except _fast.Unsupported as e:
                        raise Unsupported(f"the compiled engine cannot run channel {c.name}: "
                                          f"{e}") from None
                index[id(c)] = i
                chans.append(c)
            return i

        for n in self.nodes:
            try:
                g.add_node(n)
            except _fast.Unsupported as e:
                raise Unsupported(f"the compiled engine cannot run node {n.name} ({n.kind}): "
                                  f"{e}") from None
        for k, n in enumerate(self.nodes):
            outs = [[chan(c) for c in (p.chans if hasattr(p, "chans") else [p])]
                    for p in n.outs]
            g.wire(k, [chan(c) for c in n.ins], outs)
        pos = {id(n): k for k, n in enumerate(self.nodes)}
        g.set_writers([pos[id(w)] for w in self.writers])
        return g, chans

    def _sync(self, g, chans) -> None:
        """Write the compiled run's counters, clocks and writer streams into the Python
        objects (a writer's stream moves out of the compiled graph as a compact Recorded)."""
        for n, c in zip(self.nodes, g.counters()):
            (n.t, n.fires, n.stall, n.flops, n.rd_seg, n.rd_crd, n.rd_vals, n.wr_seg,
             n.wr_crd, n.wr_vals, n.done) = c
        for c, p in zip(chans, g.pushed()):
            c.pushed = p
        for k, n in enumerate(self.nodes):
            if hasattr(n, "got"):
                n.got = Recorded(*g.take_stream(k), _fast.TOKEN_TAGS)
