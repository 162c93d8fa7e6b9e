"""The order FuseFlow's compiler picks (`fuse --order paper`): the paper's "first valid
topological sort provided by FuseFlow" (Sec. 8.1).

How FuseFlow's compiler (evanmwilliams/fuseflow-compiler, lib/Conversion/SparseToSam) chooses,
as read there (facts, not its code):

- The views of a fused region are built on demand from the function's returned value: an
  operation's view first builds the views of its input operands, in operand order (an
  intermediate's by recursing into its producer, a new view per use), then creates its own
  output variables. An input's view creates one variable per storage level, outer to inner,
  and constrains them to that order. So variables are created in a post-order walk of the
  expression tree from the output, operands left to right.
- Variables that must be equal (a producer's output and its consumer's operand, operands
  joined on an index) are merged into logical index variables, numbered by their first
  variable's creation (`getLogicalIndexVar`, `getAllLoopOrders`).
- `TopoSort.h` enumerates the topological sorts of the partial order by backtracking, at each
  step trying the vertices of in-degree 0 in that numbering, keeping at most 21 sorts;
  `getLoopOrder` takes sort 0: the earliest-numbered free index at every step.

Our regions carry the same information: instances (one per binding of a statement: the
recursion's copies with their global index names), views (an input's or a materialized
tensor's storage order) and the POG. `creation_order` replays the walk over them; the order
is then the first topological sort of the region's POG in that numbering. A region writing
several tensors is walked from each written instance in program order (FuseFlow's function
returns one value; our region's roots are its written statements). Plain Python: on the
compile path.
"""

from __future__ import annotations

from ..lang import ast
from . import ir
from .pog import POG

#: The spelling of this order choice wherever an order K is accepted (`--order paper`, a
#: sweep's `orders = ["paper", 0]`).
PAPER = "paper"


def creation_order(region: ir.Region) -> list[str]:
    """The region's index variables in the order FuseFlow's compiler creates them (see the
    module docstring); indices the walk does not reach keep their canonical order after it."""
    views = {(v.tensor, tuple(v.indices)): v for v in region.views}
    insts = {e.id: e for e in region.exprs}
    seen: dict[str, None] = {}
    expanded: set[str] = set()
    stack: list[tuple[str, object]] = [("inst", e) for e in reversed(region.exprs) if e.writes]
    # an explicit stack (a region may nest a hundred levels): "inst" expands an instance into
    # its operands (left to right) then its own left side; "names" emits indices
    while stack:
        kind, item = stack.pop()
        if kind == "names":
            for x in item:  # type: ignore[union-attr]
                seen.setdefault(x, None)
            continue
        e: ir.Instance = item  # type: ignore[assignment]
        if e.id in expanded:  # a second use of the same binding creates no new index
            continue
        expanded.add(e.id)
        todo: list[tuple[str, object]] = []
        for a in e.expr.walk():
            if not isinstance(a, ast.Access):
                continue
            v = views.get((a.tensor, tuple(a.indices)))
            if v is not None and v.kind == "inline" and v.producer in insts:
                todo.append(("inst", insts[v.producer]))
            else:
                todo.append(("names", v.mode_order if v is not None else tuple(a.indices)))
        todo.append(("names", e.lhs))
        stack.extend(reversed(todo))
    names = region.index_names()
    return [x for x in seen if x in set(names)] + [x for x in names if x not in seen]


def paper_order(region: ir.Region) -> tuple[str, ...]:
    """The first topological sort of the region's POG, free indices taken earliest-created."""
    created = creation_order(region)
    rank = {n: p for p, n in enumerate(created)}
    pog = POG.from_edges(len(created), {(rank[e.src], rank[e.dst]) for e in region.edges})
    return tuple(created[v] for v in pog.unrank(0))
