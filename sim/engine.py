"""The discrete-event engine: one heap of node activations, no polling of idle nodes.

The heap holds (cycle, sequence, node); the sequence counter makes the order of equal cycles, and
so the whole run, deterministic. A node is put on the heap only when a token it may use arrives
(a producer pushed into one of its inputs) or an output slot frees (a consumer popped from a FIFO
the node was blocked on). An activation runs the node as far ahead as its inputs and output room
allow. The run ends when every writer has seen D; if the heap empties first, nothing can move any
more: that is a deadlock, reported with what every unfinished node waits on.
"""

from __future__ import annotations

from heapq import heappop, heappush

from fuseflowc.diagnostics import UserError

from .tokens import show_all


class Engine:
    """Runs a set of wired nodes (see sim.build) to completion."""

    def __init__(self, nodes: list, writers: list | None = None,
                 max_cycles: int | None = None, progress=None, memory=None):
        self.nodes = nodes
        self.writers = writers if writers is not None else [n for n in nodes
                                                             if n.kind.startswith("write")]
        self.max_cycles = max_cycles
        self.progress = progress  # callable(cycle) or None
        self.memory = memory      # the nodes' sim.memory.Memory: its past windows are dropped
        self.activations = 0

    def run(self) -> int:
        """Run to completion; returns the total cycle count (largest node finish time)."""
        heap: list = []
        seq = 0
        for n in self.nodes:
            n.queued = True
            heappush(heap, (0, seq, n))
            seq += 1
        writers = self.writers
        remaining = sum(1 for w in writers if not w.done)
        max_cycles = self.max_cycles
        progress = self.progress
        memory = self.memory
        acts = 0
        while heap:
            _, _, node = heappop(heap)
            node.queued = False
            if node.done:
                continue
            ins = node.ins
            outs = node.ochans
            pre_in = [len(c.toks) for c in ins]
            pre_out = [len(c.toks) for c in outs]
            stages = node.stages
            for p in stages:
                p.prepare()
            was_done = node.done
            node.wants_out = bool(node.run())
            for p in stages:
                p.flush()
            acts += 1
            if max_cycles is not None and node.t > max_cycles:
                raise UserError(
                    f"simulation exceeded the cycle budget (--max-cycles {max_cycles}) at node "
                    f"{node.name} ({node.kind}), cycle {node.t}")
            if not acts & 1023:         # every 1024 activations
                if progress is not None:
                    progress(node.t)
                if memory is not None:
                    memory.forget_before(self.earliest_firing())
            # Wake consumers that received tokens and producers that got a slot back.
            for c, before in zip(outs, pre_out):
                grown = len(c.toks) - before
                if grown > 0:
                    c.pushed += grown
                    d = c.dst
                    if d is not None and not d.queued and not d.done:
                        d.queued = True
                        heappush(heap, (c.times[-1], seq, d))
                        seq += 1
            for c, before in zip(ins, pre_in):
                if len(c.toks) < before:
                    s = c.src
                    if s is not None and s.wants_out and not s.queued and not s.done:
                        s.queued = True
                        heappush(heap, (node.t, seq, s))
                        seq += 1
            if node.done and not was_done and node in writers:
                remaining -= 1
                if remaining == 0 and writers:
                    break
        self.activations = acts
        if any(not w.done for w in writers):
            raise self.deadlock()
        return max((n.finish for n in self.nodes), default=0)

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
            if n.done:
                continue
            waits = []
            for c in n.ins:
                if not c.toks:
                    waits.append(f"input {c.name} is empty")
            for c in n.ochans:
                if c.bounded and len(c.toks) >= (c.depth or 0):
                    waits.append(f"output {c.name} is full ({len(c.toks)}/{c.depth}: "
                                 f"{_head(c)})")
            held = [f"{c.name} holds {_head(c)}" for c in n.ins if c.toks]
            msg = f"{n.name} ({n.kind}) at cycle {max(n.t, 0)}: " + "; ".join(waits + held)
            err.note(msg)
        return err


def _head(c, k: int = 4) -> str:
    toks = list(c.toks)
    text = show_all(toks[:k], c.kind)
    if len(toks) > k:
        text += f" ... ({len(toks)} tokens)"
    return text or "nothing"
