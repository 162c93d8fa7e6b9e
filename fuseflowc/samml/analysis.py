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
from .kinds import BUFFERED

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


def _unit(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [()] * k                                 # root: the whole tensor, no loop


def _scanned(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [first + (n.index,)] * k                 # scan: one level deeper


def _replayed(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [tuple(n.context or ())] * k             # replay: the spilled stream's, from `map`


def _repeated(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [ins[1] if len(ins) > 1 else first] * k  # repeat: the loop nest of its signal


def _reduced(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [first[:-1]] * k                         # reduce: the innermost level gone


def _accumulated(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    # A sparse accumulator: output k is input k with the reduced level gone.
    return [_drop(ins[j] if j < len(ins) else first, n.index) for j in range(k)]


def _held(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    inner = ins[1] if len(ins) > 1 else first       # crdhold: the inner loop nest
    return [inner] * k


def _dropped(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    inner = ins[1] if len(ins) > 1 else first       # crddrop: outer stays outer
    return [first, inner][:k] + [inner] * max(0, k - 2)


def _deepest(n: ir.Node, ins: list[Context], first: Context, k: int) -> list[Context]:
    return [max(ins, key=len, default=())] * k


#: Kind -> how its outputs' loop nests follow from its inputs'. Joiners, arrays, repsigs,
#: ALUs, forks, joins and writers (and, as a fallback, kinds not listed) keep the loop nest of
#: their deepest operand.
CONTEXT_RULES = {"root": _unit, "replay": _replayed, "scan": _scanned, "repeat": _repeated, "reduce": _reduced,
                 "crdhold": _held, "crddrop": _dropped,
                 **{kind: _accumulated for kind in BUFFERED}}


def node_contexts(n: ir.Node, ins: list[Context]) -> list[Context]:
    """The contexts of `n`'s outputs given its inputs' contexts (see the module docstring)."""
    return CONTEXT_RULES.get(n.KIND, _deepest)(n, ins, ins[0] if ins else (), len(n.outputs))


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
