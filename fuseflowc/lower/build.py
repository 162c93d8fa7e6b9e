"""Fusion-table construction: iteration spaces, loops and joins of one fused statement.

Factored iteration (FuseFlow Sec. 3, Fig. 5b): every expression node e has free indices F(e)
and an iteration space S(e), the indices iterated while e is computed, in the global order:

- the statement's root iterates its free indices;
- a child of a non-reduction node inherits its parent's space restricted to the indices that
  come before the last index of the child's subtree (an index after all of them is a broadcast
  of the child's result: its value is repeated), plus its own free indices; so the child's space
  is a prefix of its parent's;
- the body of a reduction over r iterates its parent's space plus r.

A *loop* is one iteration level shared by several nodes. The root owns a loop per free index;
a reduction body shares its parent's loops for indices before r and owns new loops for r and
every index after r: those levels are iterated again, after the reduction, from the sparse
accumulator's output coordinates (an order-k accumulator where k indices follow r; k = 0 is
the order-0 reducer). A loop's coordinates come from a *join tree* mirroring the expression:
intersections for products, quotients and masks, unions for sums, differences, max and min
(with `required` operands under the broadcast rule), and at its leaves the level scanners of
input views and the coordinate outputs of sparse accumulators.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import UserError
from . import expr as X


class Loop:
    """One iteration level: index `index`, created by node `owner` (the statement root or a
    reduction body); `join` is its join tree (a Leaf or a Join)."""

    def __init__(self, index: str, owner: X.Node, number: int):
        self.index = index
        self.owner = owner
        self.number = number
        self.join: "Leaf | Join | None" = None

    def __repr__(self) -> str:
        return f"Loop({self.index}#{self.number})"


@dataclass(eq=False)
class Leaf:
    """A coordinate source of a loop: an input view's scanner, or the coordinate output of a
    sparse accumulator (`node` is then the Reduce)."""

    node: X.Node

    def leaves(self) -> list["Leaf"]:
        return [self]


@dataclass(eq=False)
class Join:
    """An intersection or union of two join subtrees; `required` says which sides must hold
    a coordinate for a union (the broadcast rule)."""

    op: str  # intersect | union
    left: "Leaf | Join"
    right: "Leaf | Join"
    required: tuple[bool, bool] = (False, False)
    leaves_: list[Leaf] = field(default_factory=list)

    def leaves(self) -> list[Leaf]:
        return self.left.leaves() + self.right.leaves()


UNION_OPS = ("+", "-", "max", "min")
INTERSECT_OPS = ("*", "/", "mask")


class Analysis:
    """Spaces, loops and join trees of one statement (see the module docstring)."""

    def __init__(self, st: X.Statement):
        self.st = st
        self.order = st.order
        self.pos = {x: k for k, x in enumerate(st.order)}
        self.loops: list[Loop] = []
        self.nodes: list[X.Node] = list(st.expr.walk())
        self._indices(st.expr)
        root_loops = {x: self._new_loop(x, st.expr) for x in self._sorted(st.expr.free)}
        self._space(st.expr, self._sorted(st.expr.free), root_loops)
        for loop in self.loops:
            loop.join = self._join(loop.owner, loop)
            if loop.join is None:  # pragma: no cover - every loop has a source by construction
                raise AssertionError(f"loop {loop} without coordinates")

    def _sorted(self, xs) -> tuple[str, ...]:
        return tuple(sorted(xs, key=self.pos.__getitem__))

    def _new_loop(self, x: str, owner: X.Node) -> Loop:
        loop = Loop(x, owner, len(self.loops))
        self.loops.append(loop)
        return loop

    def _indices(self, e: X.Node) -> None:
        """Free indices and all indices of every node."""
        for c in e.children():
            self._indices(c)
        if isinstance(e, X.Access):
            e.free = self._sorted(set(e.indices))
            e.every = frozenset(e.indices)
        elif isinstance(e, X.Const):
            e.free, e.every = (), frozenset()
        elif isinstance(e, X.Reduce):
            e.free = tuple(x for x in e.body.free if x != e.index)
            e.every = e.body.every | {e.index}
        else:
            kids = e.children()
            e.free = self._sorted(set().union(*(set(c.free) for c in kids)))
            e.every = frozenset().union(*(c.every for c in kids))

    def _last(self, e: X.Node) -> int:
        return max((self.pos[x] for x in e.every), default=-1)

    def _space(self, e: X.Node, space: tuple[str, ...], loops: dict[str, Loop]) -> None:
        e.space = space
        e.loops = {x: loops[x] for x in space}
        if isinstance(e, X.Reduce):
            r = e.index
            body_space = self._sorted(set(space) | {r})
            after = [x for x in body_space if self.pos[x] > self.pos[r]]
            if len(after) > 2:
                raise UserError(
                    f"the reduction over {r} would need an order-{len(after)} sparse accumulator "
                    f"(indices {', '.join(after)} are iterated inside {r}); only orders 0-2 "
                    f"exist: choose a dataflow order with {r} nearer the innermost level",
                    e.loc or self.st.loc)
            body_loops = {x: loops[x] for x in body_space if self.pos[x] < self.pos[r]}
            for x in body_space:
                if self.pos[x] >= self.pos[r]:
                    body_loops[x] = self._new_loop(x, e.body)
            self._space(e.body, body_space, body_loops)
            return
        for c in e.children():
            last = self._last(c)
            cs = self._sorted(set(c.free) | {x for x in space if self.pos[x] < last})
            self._space(c, cs, loops)

    def spacc_levels(self, e: X.Reduce) -> tuple[str, ...]:
        """The indices of e's space produced by its sparse accumulator (after its index)."""
        return tuple(x for x in e.space if self.pos[x] > self.pos[e.index])

    def _join(self, e: X.Node, loop: Loop) -> "Leaf | Join | None":
        """The join tree of `loop` below node `e` (None: e has no coordinates at this loop)."""
        if e.loops.get(loop.index) is not loop:
            return None
        x = loop.index
        if isinstance(e, X.Access):
            return Leaf(e) if x in e.indices else None
        if isinstance(e, X.Const):
            return None
        if isinstance(e, X.Reduce):
            if self.pos[x] > self.pos[e.index]:
                return Leaf(e)
            return self._join(e.body, loop)
        if isinstance(e, X.Unary):
            return self._join(e.arg, loop)
        assert isinstance(e, X.Binary)
        a, b = self._join(e.lhs, loop), self._join(e.rhs, loop)
        if a is None or b is None:
            return a if b is None else b
        if e.op in INTERSECT_OPS:
            return Join("intersect", a, b)
        # The broadcast rule: an operand with indices the other lacks must hold the coordinate.
        ra = bool(set(e.lhs.free) - set(e.rhs.free))
        rb = bool(set(e.rhs.free) - set(e.lhs.free))
        if ra and rb:
            return Join("intersect", a, b)
        return Join("union", a, b, (ra, rb))
