"""Run one primitive on hand-written token streams (tests, docs): `run_node`."""

from __future__ import annotations

from .channel import Channel
from .engine import Engine
from .tokens import parse


def run_node(node, inputs: list, n_outputs: int, kinds: list[str] | None = None,
             max_cycles: int | None = 100_000):
    """Feed `inputs` (token lists, or text like "0 2 S0 D") to `node` and collect its outputs.

    Returns (list of output token lists, list of output arrival-cycle lists). Input tokens are
    all available at cycle 0; outputs go to unbounded FIFOs nobody reads.
    """
    kinds = kinds or ["crd"] * len(inputs)
    ins = []
    for i, toks in enumerate(inputs):
        if isinstance(toks, str):
            toks = parse(toks, kinds[i])
        c = Channel(f"in{i}", kinds[i], None)
        c.feed(list(toks))
        ins.append(c)
    outs = [Channel(f"out{i}", "crd", None) for i in range(n_outputs)]
    node.wire(ins, outs)
    Engine([node], writers=[], max_cycles=max_cycles).run()
    return [list(c.toks) for c in outs], [list(c.times) for c in outs]
