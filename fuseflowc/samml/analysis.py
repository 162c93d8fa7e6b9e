"""The loop nest of every stream of a SAMML graph: which index variables its tokens iterate.

A stream's *context* is the tuple of index variables, outermost first, whose fibers its stop
tokens close: a scan of index `j` below a ref of context `(i,)` yields streams of context
`(i, j)`; a reducer over `j` turns `(i, j)` back into `(i,)`. The position of an index `x` in a
context gives the stop depth at which one `x` element is a unit: `depth(ctx, x)` is 0 for the
innermost index (a unit is one token), 1 when one level is nested inside it (a unit is a fiber
closed by S0), and so on. `fork`/`join` at that level deal and gather whole `x` elements.

An analysis of the SAMML IR shared by its users: `opt.parallelize` picks fork/join levels with it,
`estimate` follows the loop nest of each stream. Pure Python (the compile path).
"""

from __future__ import annotations

from . import ir

Context = tuple[str, ...]


def _last(ctx: Context, index: str) -> int | None:
    """The position of the last occurrence of `index` in `ctx` (None when absent)."""
    for k in range(len(ctx) - 1, -1, -1):
        if ctx[k] == index:
            return k
    return None


def _drop(ctx: Context, index: str) -> Context:
    """`ctx` without its last occurrence of `index` (unchanged when absent)."""
    k = _last(ctx, index)
    return ctx if k is None else ctx[:k] + ctx[k + 1:]


def node_contexts(n: ir.Node, ins: list[Context]) -> list[Context]:
    """The contexts of `n`'s outputs given its inputs' contexts (see the module docstring)."""
    first = ins[0] if ins else ()
    k = len(n.outputs)
    if isinstance(n, ir.Root):
        return [()] * k
    if isinstance(n, ir.Replay):    # the spilled stream's loop nest, recorded by `map`
        return [tuple(n.context or ())] * k
    if isinstance(n, ir.Scan):
        return [first + (n.index,)] * k
    if isinstance(n, ir.Repeat):
        return [ins[1] if len(ins) > 1 else first] * k
    if isinstance(n, ir.Reduce):
        return [first[:-1]] * k
    if isinstance(n, (ir.Spacc1, ir.Spacc2, ir.Spacc3)):
        # Output k is input k with the reduced level gone.
        return [_drop(ins[j] if j < len(ins) else first, n.index) for j in range(k)]
    if isinstance(n, ir.CrdHold):
        inner = ins[1] if len(ins) > 1 else first
        return [inner] * k
    if isinstance(n, ir.CrdDrop):
        inner = ins[1] if len(ins) > 1 else first
        return [first, inner][:k] + [inner] * max(0, k - 2)
    # Joiners, arrays, repsigs, forks, joins and (as a fallback) unknown kinds keep the loop
    # nest of their deepest operand.
    return [max(ins, key=len, default=())] * k


def stream_contexts(g: ir.Graph) -> dict[ir.Stream, Context]:
    """Stream -> its context, for every stream `g` defines (and every operand it reads)."""
    ctx: dict[ir.Stream, Context] = {}
    for n in g.topo_order():
        ins = [ctx.get(s, ()) for s in n.inputs]
        for s, c in zip(n.outputs, node_contexts(n, ins)):
            ctx[s] = c
    return ctx


def depth(ctx: Context, index: str) -> int:
    """The stop depth of one `index` element in a stream of context `ctx` (which must contain
    it): the number of levels nested inside the last occurrence of `index`."""
    k = _last(ctx, index)
    if k is None:
        raise ValueError(f"index {index} is not in context {ctx}")
    return len(ctx) - 1 - k


def iterated_indices(g: ir.Graph) -> list[str]:
    """The index variables some stream of `g` iterates, sorted."""
    return sorted({x for c in stream_contexts(g).values() for x in c})
