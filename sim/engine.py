"""The discrete-event engine: one heap of node activations, no polling of idle nodes.

The heap holds (cycle, sequence, node); the sequence counter makes the order of equal cycles, and
so the whole run, deterministic. A node is put on the heap (`schedule`) only when a token it may
use arrives (a producer pushed into one of its inputs) or an output slot frees (a consumer popped
from a FIFO the node was blocked on): `wake`. An activation (`step`) runs the node as far ahead
as its inputs and output room allow. `run` steps until every writer has seen D; if the heap
empties first, nothing can move any more: that is a deadlock, reported with what every unfinished
node waits on. Every `HOOK_EVERY` activations the hooks run (`add_hook`): the progress report and
the memory calendar's housekeeping.
"""

from __future__ import annotations

from heapq import heappop, heappush

from fuseflowc.diagnostics import UserError

from .tokens import show_all


class Engine:
    """Runs a set of wired nodes (see sim.build) to completion."""

    #: Activations between two calls of a hook (the memory calendar's housekeeping).
    HOOK_EVERY = 1024
    #: Activations between two progress ticks.
    PROGRESS_EVERY = 1024

    def __init__(self, nodes: list, writers: list | None = None,
                 max_cycles: int | None = None, progress=None, memory=None):
        self.nodes = nodes
        self.writers = writers if writers is not None else [n for n in nodes
                                                             if n.kind.startswith("write")]
        self.max_cycles = max_cycles
        self.activations = 0
        self.heap: list = []
        self.seq = 0
        self.remaining = 0        # writers that have not seen D
        self.hooks: list = []     # (every, callable(engine, node))
        if progress is not None:  # callable(cycle, flops): where the run is
            self.add_hook(lambda engine, node: progress(engine.clock(), engine.flops()),
                          self.PROGRESS_EVERY)
        if memory is not None:    # the nodes' sim.memory.Memory: its past windows are dropped
            self.add_hook(lambda engine, node: memory.forget_before(engine.earliest_firing()))

    def add_hook(self, hook, every: int | None = None) -> None:
        """Call hook(engine, node) every `every` (default HOOK_EVERY) activations (node: the
        one just run); hooks due at the same activation run in the order they were added."""
        self.hooks.append((every or self.HOOK_EVERY, hook))

    # ---- the loop -------------------------------------------------------------------------
    def run(self) -> int:
        """Run to completion; returns the total cycle count (largest node finish time)."""
        for n in self.nodes:
            n.materialize()
        for n in self.nodes:
            self.schedule(n, 0)
        self.remaining = sum(1 for w in self.writers if not w.done)
        heap = self.heap
        while heap:
            _, _, node = heappop(heap)
            node.queued = False
            if not node.done and self.step(node):
                break
        if any(not w.done for w in self.writers):
            raise self.deadlock()
        return max((n.finish for n in self.nodes), default=0)

    def schedule(self, node, cycle: int) -> None:
        """Put node on the heap to run at `cycle` (once: a queued node is not queued again)."""
        node.queued = True
        heappush(self.heap, (cycle, self.seq, node))
        self.seq += 1

    def step(self, node) -> bool:
        """One activation of node: run it, then wake the nodes it gave tokens or slots to.
        Returns True when it was the last writer to see D (the run is over)."""
        pre_in = [len(c.toks) for c in node.ins]
        pre_out = [len(c.toks) for c in node.ochans]
        was_done = node.done
        for p in node.stages:
            p.prepare()
        node.wants_out = bool(node.run())
        for p in node.stages:
            p.flush()
        self.activations += 1
        if self.max_cycles is not None and node.t > self.max_cycles:
            raise UserError(
                f"simulation exceeded the cycle budget (--max-cycles {self.max_cycles}) at node "
                f"{node.name} ({node.kind}), cycle {node.t}")
        for every, hook in self.hooks:
            if not self.activations % every:
                hook(self, node)
        self.wake(node, pre_in, pre_out)
        if node.done and not was_done and node in self.writers:
            self.remaining -= 1
            return self.remaining == 0
        return False

    def wake(self, node, pre_in: list, pre_out: list) -> None:
        """Schedule the consumers that received tokens from node (at the last one's arrival)
        and the blocked producers that got a slot back (at node's clock)."""
        for c, before in zip(node.ochans, pre_out):
            grown = len(c.toks) - before
            if grown > 0:
                c.pushed += grown
                d = c.dst
                if d is not None and not d.queued and not d.done:
                    self.schedule(d, c.times[-1])
        for c, before in zip(node.ins, pre_in):
            if len(c.toks) < before:
                s = c.src
                if s is not None and s.wants_out and not s.queued and not s.done:
                    self.schedule(s, node.t)

    # ---- reports --------------------------------------------------------------------------
    def clock(self) -> int:
        """How far the run has got: the latest firing of any node so far."""
        return max((n.t for n in self.nodes if n.fires), default=0)

    def flops(self) -> int:
        """FLOPs done so far."""
        return sum(n.flops for n in self.nodes)

    def earliest_firing(self) -> int:
        """A cycle no node can fire before any more (windows of the memory calendar before it
        are history): a node fires next at >= its last firing + ii. A node that never fired and
        has no input token yet is left out: its first firing waits for a token that a node
        counted here (or, in turn, one left out) has yet to emit, at or after that one's bound."""
        return min((n.t + n.ii for n in self.nodes if not n.done
                    and (n.fires or not n.ins or any(c.toks for c in n.ins))), default=0)

    def deadlock(self) -> UserError:
        """The error describing a run where nothing can move while a writer has not seen D."""
        waiting = [w.name for w in self.writers if not w.done]
        err = UserError("simulation deadlocked: no node can make progress while "
                        + ("writer " if len(waiting) == 1 else "writers ")
                        + ", ".join(waiting)
                        + (" has" if len(waiting) == 1 else " have") + " not seen D")
        for n in self.nodes:
            if not n.done:
                err.note(_waits(n))
        hint = _fanout_hint(self.nodes)
        if hint:
            err.note(hint)
        return err


def _fanout_hint(nodes) -> str | None:
    """Why a fan-out can deadlock, when one did: a stream read by several nodes whose FIFO to
    one reader is full while another reader has taken more of it (that reader waits for a
    result of the whole row, e.g. a shared stream's re-read after its row reduction)."""
    for n in nodes:
        for p in n.outs:
            chans = getattr(p, "chans", None) or []
            if len(chans) < 2:
                continue
            full = [c for c in chans if c.bounded and len(c.toks) >= (c.depth or 0)]
            if full and len(full) < len(chans):
                c = full[0]
                return (f"stream {c.name} fans out to {len(chans)} readers, and its FIFO to "
                        f"{c.dst.name if c.dst is not None else 'a reader'} is full "
                        f"(channel.depth {c.depth}) while one to another reader is not: the "
                        "readers take the stream at different paces, and a reader "
                        "that waits for a result of the whole row (a shared stream of "
                        "`fuse --share` read again after its row reduction, docs/lowering.md, "
                        "\"Shared streams\") needs room for the longest row plus 2 tokens: "
                        "rerun with --set channel.depth=N, N at least that, or --depth inf")
    return None


def _waits(n) -> str:
    """What unfinished node n waits on: its empty inputs, full outputs and held tokens."""
    waits = []
    for c in n.ins:
        if not c.toks:
            waits.append(f"input {c.name} is empty")
    for c in n.ochans:
        if c.bounded and len(c.toks) >= (c.depth or 0):
            waits.append(f"output {c.name} is full ({len(c.toks)}/{c.depth}: {_head(c)})")
    held = [f"{c.name} holds {_head(c)}" for c in n.ins if c.toks]
    return f"{n.name} ({n.kind}) at cycle {max(n.t, 0)}: " + "; ".join(waits + held)


def _head(c, k: int = 4) -> str:
    toks = list(c.toks)
    text = show_all(toks[:k], c.kind)
    if len(toks) > k:
        text += f" ... ({len(toks)} tokens)"
    return text or "nothing"
