"""The expression tree lowering works on: one fused statement in global index names.

Nodes are plain objects compared by identity (two accesses of the same tensor are two views).
Every reduction has exactly one index (multi-index reductions are split by `split_reductions`
once the global order is known). After `fuseflowc.lower.build.analyze`, every node carries its
free indices `free`, the indices of its subtree `every`, its iteration space `space` (indices in
the global order) and the loop it shares at each level of that space (`loops`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Loc
from ..ops import ZERO_PRESERVING


class Node:
    """Base of expression nodes (identity semantics)."""

    kind = ""
    loc: Loc | None = None

    def __init__(self) -> None:
        self.free: tuple[str, ...] = ()
        self.every: frozenset[str] = frozenset()
        self.space: tuple[str, ...] = ()
        self.loops: dict[str, "object"] = {}
        self.column = -1  # fusion-table column, set by the table builder
        #: Indices at which this (inlined intermediate) result must be widened to every
        #: coordinate, with explicit zeros ("seen as declared"), and the full-range input
        #: vector to take the coordinates from, per index.
        self.widen: dict[str, str] = {}
        #: (index, parent loop) when this node is a value leaf of its parent's loop at `index`:
        #: computed in its own loop, its values ride through the parent's joiner as payload.
        self.vleaf: tuple | None = None
        #: An order-0 reduction computed by a sparse accumulator over its held outer
        #: coordinates, so that empty fibers leave no result (see build).
        self.held = False
        #: An order-0 reduction giving (through zero-preserving steps) an inlined intermediate
        #: declared all-dense: an empty fiber's explicit 0 is what that tensor stores, so it
        #: need not be held where every fiber exists (see build).
        self.dense_result = False
        #: An order-2 or order-3 sparse accumulator that must emit every outer coordinate it
        #: receives, an empty fiber below where nothing was accumulated: a join takes one of
        #: its outer levels from another operand (build.Analysis._drop_full_outer_spacc).
        self.emit_empty = False

    def children(self) -> tuple["Node", ...]:
        return ()

    def walk(self):
        """This node and its descendants, pre-order."""
        yield self
        for c in self.children():
            yield from c.walk()


class Access(Node):
    """A view of a tensor: `tensor[indices]` (indices in the tensor's logical mode order)."""

    kind = "access"

    def __init__(self, tensor: str, indices: tuple[str, ...], loc: Loc | None = None,
                 format=None):
        super().__init__()
        self.tensor, self.indices, self.loc = tensor, tuple(indices), loc
        self.format = format  # the tensor's storage format (for fullness of coordinates)
        self.shared = False   # reads a shared intermediate's stream (fuseflowc.lower.shared)


class Const(Node):
    kind = "const"

    def __init__(self, value: float, loc: Loc | None = None):
        super().__init__()
        self.value, self.loc = float(value), loc


class Unary(Node):
    """A unary function of the language (relu exp neg sqrt rsqrt sigmoid tanh gelu)."""

    kind = "unary"

    def __init__(self, op: str, arg: Node, loc: Loc | None = None):
        super().__init__()
        self.op, self.arg, self.loc = op, arg, loc

    def children(self):
        return (self.arg,)


class Binary(Node):
    """`op` in + - * / max min mask (mask: lhs's entries where rhs stores one)."""

    kind = "binary"

    def __init__(self, op: str, lhs: Node, rhs: Node, loc: Loc | None = None):
        super().__init__()
        self.op, self.lhs, self.rhs, self.loc = op, lhs, rhs, loc

    def children(self):
        return (self.lhs, self.rhs)


class Reduce(Node):
    """`op` (sum | max) over one index of `body`."""

    kind = "reduce"

    def __init__(self, op: str, index: str, body: Node, loc: Loc | None = None):
        super().__init__()
        self.op, self.index, self.body, self.loc = op, index, body, loc

    def children(self):
        return (self.body,)


class MultiReduce(Node):
    """A reduction over several indices before `split_reductions` (only seen by the adapter)."""

    kind = "multireduce"

    def __init__(self, op: str, indices: tuple[str, ...], body: Node, loc: Loc | None = None):
        super().__init__()
        self.op, self.indices, self.body, self.loc = op, tuple(indices), body, loc

    def children(self):
        return (self.body,)


@dataclass
class Statement:
    """One fused statement to write: `tensor[indices] = expr` (global index names), with the
    global dataflow `order` of all its indices (outer to inner)."""

    name: str
    tensor: str
    indices: tuple[str, ...]
    expr: Node
    order: tuple[str, ...]
    loc: Loc | None = None
    #: Source statements inlined into this one (for messages and the table title).
    inlined: tuple[str, ...] = ()
    #: The declared format of a shared intermediate this statement publishes as streams for
    #: readers in its graph instead of writing it (fuseflowc.lower.shared); None: written.
    shared_format: object = None


@dataclass
class TensorInfo:
    """A tensor as lowering sees it: dims, storage format, role (input|output|temp), block."""

    name: str
    dims: tuple
    format: object
    role: str
    block: int | None = None
    loc: Loc | None = None


@dataclass
class Region:
    """A graph to generate: the statements it writes (each an independent fused tree)."""

    name: str
    statements: list[Statement] = field(default_factory=list)
    #: The program's names of the renamed indices (fused IR region), for pictures and tables.
    source_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The shared intermediates its statements publish (fuseflowc.lower.shared), as tensors
    #: to store should one not be readable as a stream.
    shared: dict[str, "TensorInfo"] = field(default_factory=dict)
    #: A graph of a rebound iteration of a reused loop (fused IR `reuse l K = 0 {...}`): the
    #: region of iteration 0 whose graph it is, with these names renamed; nothing to generate.
    rebinds: tuple["Region", dict[str, str]] | None = None
    #: Why lowering made this graph (an intermediate stored by a graph of its own), for the
    #: notes `lower` prints.
    notes: list[str] = field(default_factory=list)

    def statement_names(self) -> set[str]:
        """The statements the graph computes, written or inlined."""
        if self.rebinds is not None:
            template, names = self.rebinds
            return {names.get(n, n) for n in template.statement_names()}
        return {n for st in self.statements for n in (st.name, *st.inlined)}


def zero_preserving(e: Node) -> bool:
    """Whether e's value is 0 wherever its inner input values are 0 (loading 0 for an absent
    entry then gives the same result as absence). A sum or difference of operands with
    different indices is not: an operand iterated outside (broadcast) keeps its value while
    the inner one reads 0."""
    if isinstance(e, Access):
        return True
    if isinstance(e, Const):
        return e.value == 0.0
    if isinstance(e, Unary):
        return e.op in ZERO_PRESERVING and zero_preserving(e.arg)
    if isinstance(e, Reduce):
        return zero_preserving(e.body)
    assert isinstance(e, Binary)
    a, b = zero_preserving(e.lhs), zero_preserving(e.rhs)
    if e.op in ("+", "-", "max", "min") and set(e.lhs.free) != set(e.rhs.free):
        return False
    if e.op in ("+", "-"):
        return a and b
    if e.op in ("*", "/") and e.free and not isinstance(e.lhs, Const) \
            and not isinstance(e.rhs, Const):
        # Only an operand iterated at the innermost index reads 0 where the product is absent:
        # an outer one (fewer indices, its value repeated) may come out of a joiner as N, an
        # ALU's identity, so N * f(0) is f(0), not 0 (T1[i,j,k] * T0[i,j] with T0 absent).
        inner = e.free[-1]
        a = a and inner in e.lhs.free
        b = b and inner in e.rhs.free
    if e.op == "*":
        return a or b
    if e.op in ("/", "mask"):
        return a
    return a and b  # max, min of zeros


def split_reductions(e: Node, order: tuple[str, ...]) -> Node:
    """Replace every MultiReduce by nested single-index Reduces, the index earliest in `order`
    outermost (so the innermost reduction is over the index iterated innermost)."""
    pos = {x: k for k, x in enumerate(order)}
    if isinstance(e, MultiReduce):
        body = split_reductions(e.body, order)
        for r in sorted(e.indices, key=lambda x: pos[x], reverse=True):
            body = Reduce(e.op, r, body, e.loc)
        body.widen = e.widen
        body.dense_result = e.dense_result
        return body
    if isinstance(e, Unary):
        e.arg = split_reductions(e.arg, order)
    elif isinstance(e, Binary):
        e.lhs = split_reductions(e.lhs, order)
        e.rhs = split_reductions(e.rhs, order)
    elif isinstance(e, Reduce):
        e.body = split_reductions(e.body, order)
    return e
