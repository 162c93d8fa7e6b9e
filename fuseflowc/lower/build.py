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
from ..ops import INTERSECT_OPS, UNION_OPS, ZERO_PRESERVING
from ..samml.ir import MAX_SPACC_ORDER
from . import expr as X


class ContextInsideReduction(UserError):
    """An outer index iterated inside a reduction, between the reduced expression's own
    indices, with no coordinates there (lower.distribute rewrites the statement first wherever a
    product can go into the sum)."""

    def __init__(self, analysis: "Analysis", reduction: X.Reduce, message: str, loc=None,
                 outer: str = ""):
        super().__init__(message, loc)
        self.analysis = analysis
        self.reduction = reduction
        self.outer = outer   # the outer index iterated inside the reduction


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
    """A coordinate source of a loop: an input view's scanner (`scan`), the coordinate output of
    a sparse accumulator (`spacc`, node = the Reduce), a node computed in its own loop whose
    values ride as payload (`value`), or a full-range input vector widening an intermediate
    (`helper`, node = a synthetic Access)."""

    node: X.Node
    kind: str = "scan"

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


class Analysis:
    """Spaces, loops and join trees of one statement (see the module docstring)."""

    def __init__(self, st: X.Statement, out_format=None, stop_at_inside: bool = False):
        """Analyze `st`. A reduction iterating an outer index between its own indices is a
        ContextInsideReduction error, or with `stop_at_inside` recorded in `inside` (the
        analysis then stops there: lower.distribute rewrites the statement first)."""
        self.st = st
        self.inside: ContextInsideReduction | None = None
        self.out_format = out_format  # the written tensor's format (compressed levels)
        self.order = st.order
        self.pos = {x: k for k, x in enumerate(st.order)}
        self.loops: list[Loop] = []
        self.nodes: list[X.Node] = list(st.expr.walk())
        for n in self.nodes:  # a statement may be analyzed again after a rewrite
            n.vleaf, n.held, n.loops, n.space, n.emit_empty = None, False, {}, (), False
        self._helpers: dict = {}
        self.parent: dict[X.Node, X.Node] = {c: n for n in self.nodes for c in n.children()}
        self._indices(st.expr)
        self._drop_full_widening(st.expr)
        root_loops = {x: self._new_loop(x, st.expr) for x in self._sorted(st.expr.free)}
        self._space(st.expr, self._sorted(st.expr.free), root_loops)
        if self.inside is not None:
            if stop_at_inside:
                return
            raise self.inside
        self._check_absent_intersections(st.expr, False)
        for loop in self.loops:
            loop.join = self._drop_full_outer_spacc(self._join(loop.owner, loop), loop.index)
            if loop.join is None:  # pragma: no cover - every loop has a source by construction
                raise AssertionError(f"loop {loop} without coordinates")

    def _drop_full_widening(self, e: X.Node) -> None:
        """Widening is needed only where an intermediate's coordinates may miss some: drop the
        levels whose coordinates are full by construction (dense scans), outermost first, up
        to the first level that is not. Every level inside that one is widened even if full:
        under an outer coordinate that only widening adds, the intermediate has no entries
        at all. A level lowering would have to widen without a full-range vector is refused
        (fuse's `_to_materialize` stores such intermediates instead)."""
        for c in e.children():
            self._drop_full_widening(c)
        if not e.widen:
            return
        own = self._sorted(e.free)
        first = next((k for k, x in enumerate(own) if not _full(e, x, self.pos, False)),
                     len(own))
        for x in own[:first]:
            e.widen.pop(x, None)
        missing = [x for x in own[first:] if x not in e.widen]
        if missing:
            raise UserError(
                f"an intermediate fused away with --inline-widened must be widened at "
                f"{', '.join(missing)} (its declared format stores zeros there that a use can "
                "see), but no dense input vector over that dim gives the coordinates: fuse "
                "without --inline-widened", e.loc or self.st.loc)

    def _sorted(self, xs) -> tuple[str, ...]:
        return tuple(sorted(xs, key=self.pos.__getitem__))

    def _new_loop(self, x: str, owner: X.Node) -> Loop:
        loop = Loop(x, owner, len(self.loops))
        self.loops.append(loop)
        return loop

    def _indices(self, e: X.Node) -> None:
        annotate_indices(e, self.pos)

    def _last(self, e: X.Node) -> int:
        return max((self.pos[x] for x in e.every), default=-1)

    def _space(self, e: X.Node, space: tuple[str, ...], loops: dict[str, Loop]) -> None:
        if self.inside is not None:
            return   # the spaces below a reduction with an outer index inside are moot
        e.space = space
        e.loops = {x: loops[x] for x in space}
        if isinstance(e, X.Reduce):
            r = e.index
            body_space = self._sorted(set(space) | {r})
            after = [x for x in body_space if self.pos[x] > self.pos[r]]
            if len(after) > MAX_SPACC_ORDER:
                raise UserError(
                    f"the reduction over {r} would need an order-{len(after)} sparse accumulator "
                    f"(indices {', '.join(after)} are iterated inside {r}); only orders "
                    f"0-{MAX_SPACC_ORDER} exist: choose a dataflow order with {r} nearer the "
                    "innermost level",
                    e.loc or self.st.loc)
            # (Only when the level outside r is one of e's own indices: a context level,
            # iterated for recomputation, has no coordinates of e's own to hold.)
            e.held = (not after and bool(space) and space[-1] in e.free
                      and not _full(e.body, r, self.pos)
                      and (len(space) > 1 or self.pattern_sensitive(e))
                      and not _every_fiber(e, self.pos))
            own = set(self.spacc_levels(e)) | {r}
            body_loops = {x: loops[x] for x in body_space if x not in own}
            for x in body_space:
                if x in own:
                    body_loops[x] = self._new_loop(x, e.body)
            body_space = self._reduction_space(e.body, body_space, hoist=False)
            body_loops = {x: body_loops[x] for x in body_space}
            x = body_space[-1] if body_space else None
            if x is not None and self._value_leaf(e, e.body, x):
                # A widened body (an intermediate seen as declared) is a value leaf of the
                # reduction's own loop at its innermost index, as under any other parent: it is
                # computed in a loop of its own and its values ride a union with the full-range
                # vector, so that the reduction sees a 0 for every coordinate it stores as 0
                # (a max over a row of negative products is 0, not the largest product).
                e.body.vleaf = (x, body_loops[x])
                body_loops[x] = self._new_loop(x, e.body)
            self._space(e.body, body_space, body_loops)
            return
        for c in e.children():
            last = self._last(c)
            cs = self._sorted(set(c.free) | {x for x in space if self.pos[x] < last})
            cs = self._reduction_space(c, cs)
            if c.free:
                # A value leaf joins at its innermost own index: it is computed once per point
                # of its own indices and broadcast over later outer ones (not recomputed inside
                # them: its values could not ride a joiner as whole fibers).
                xf = max(c.free, key=self.pos.__getitem__)
                if cs[-1] != xf and self._value_leaf(e, c, xf):
                    cs = tuple(y for y in cs if self.pos[y] <= self.pos[xf])
            cl = loops
            x = cs[-1] if cs else None
            if x is not None and self._value_leaf(e, c, x):
                # c is computed in its own loop at x; the parent's loop sees its values.
                c.vleaf = (x, loops[x])
                cl = dict(loops)
                cl[x] = self._new_loop(x, c)
            self._space(c, cs, cl)

    def _check_absent_intersections(self, e: X.Node, maybe_absent: bool) -> None:
        """A sum (or max/min) of operands without a common index is an intersection whose
        operands sit at different levels with no joiner between them; under a union side that
        may be absent, the absence of its outer operand cannot reach its inner one (which reads
        0, not absent): not lowered, an error. The same for a broadcast sum whose required side
        holds such an outer product."""
        if isinstance(e, X.Binary) and e.op in UNION_OPS:
            la, lb = set(e.lhs.free), set(e.rhs.free)
            if maybe_absent and la and lb and not la & lb and not (
                    isinstance(e.lhs, X.Const) or isinstance(e.rhs, X.Const)):
                raise UserError(
                    f"{e.op} of operands with indices of their own ({', '.join(sorted(la))} and "
                    f"{', '.join(sorted(lb))}: an intersection) under an operand of a sum that "
                    "may be absent is not lowered yet: write it as a separate statement",
                    e.loc or self.st.loc)
            for side, mine, theirs in ((e.lhs, la, lb), (e.rhs, lb, la)):
                if maybe_absent and mine - theirs and _has_broadcast_product(side):
                    raise UserError(
                        f"{e.op} whose side {', '.join(sorted(mine))} is a product of operands "
                        "at different levels, under an operand of a sum that may be absent, is "
                        "not lowered yet (the outer factor's absence cannot reach the inner "
                        "one): write it as a separate statement", e.loc or self.st.loc)
                absent = maybe_absent or not (mine - theirs)
                self._check_absent_intersections(side, absent)
            return
        for c in e.children():
            self._check_absent_intersections(c, maybe_absent)

    def _reduction_space(self, c: X.Node, cs: tuple[str, ...], hoist: bool = True
                         ) -> tuple[str, ...]:
        """A reduction iterates an outer (context) index inside its reduced index only if it
        has coordinates for it. One it lacks that follows the reduced index and all of its own
        indices is left out (the reduced value is broadcast over it instead); one between its
        own indices cannot be iterated: an error asking for another order.

        Outer indices after all of its own are also left out when its fibers may be empty:
        recomputed inside them, an order-0 reduction could be neither held (no coordinates of
        its own there) nor trusted (its reducer cannot tell an empty fiber closing an outer one
        from a missing fiber); computed once and broadcast, it can."""
        if not isinstance(c, X.Reduce):
            return cs
        last_free = max((self.pos[x] for x in c.free), default=-1)
        if hoist and cs and self.pos[cs[-1]] > last_free \
                and not _full(c.body, c.index, self.pos):
            cs = tuple(x for x in cs if self.pos[x] <= last_free)
        r = self.pos[c.index]
        lacking = [x for x in cs if x not in c.free and self.pos[x] > r]
        if not lacking:
            return cs
        last_own = max((self.pos[x] for x in c.free), default=-1)
        if all(self.pos[x] > last_own for x in lacking):
            return tuple(x for x in cs if x not in lacking)
        self.inside = self.inside or ContextInsideReduction(
            self, c,
            f"the dataflow order {' -> '.join(self.order)} iterates {lacking[0]} inside the "
            f"reduction over {c.index}, between the reduced expression's own indices, but that "
            f"expression has no {lacking[0]}: choose an order with {lacking[0]} outside "
            f"{c.index}", c.loc or self.st.loc, lacking[0])
        return cs

    def _value_leaf(self, parent: X.Node, c: X.Node, x: str) -> bool:
        """Whether child c must join its parent's loop at x (c's innermost index) with its
        computed values: a widened intermediate, or a union side that may be absent and whose
        absence must not read as 0 (max/min, or a side that is not zero-preserving)."""
        if isinstance(c, X.Const) or x not in c.free:
            return False  # no coordinates of its own at x: it never meets the union there
        if x in c.widen:
            return True
        if not (isinstance(parent, X.Binary) and parent.op in UNION_OPS):
            return False
        other = parent.rhs if c is parent.lhs else parent.lhs
        if isinstance(other, X.Const):
            return False
        mine, theirs = set(c.free), set(other.free)
        if mine - theirs and not theirs - mine:
            return False  # c is required: never absent
        if mine - theirs and theirs - mine:
            return False  # an intersection
        return parent.op in ("max", "min") or not X.zero_preserving(c)

    def zero_sign_shows(self, e: X.Node) -> bool:
        """Whether e's value reaches a divisor (of a quotient or of rsqrt), where the sign of
        a zero shows: 1 / -0.0 is -inf."""
        while e in self.parent:
            p = self.parent[e]
            if (isinstance(p, X.Binary) and p.op == "/" and e is p.rhs) \
                    or (isinstance(p, X.Unary) and p.op == "rsqrt"):
                return True
            e = p
        return False

    def pattern_sensitive(self, e: X.Node) -> bool:
        """Whether some use of e's value distinguishes an absent entry from a stored 0 (or the
        written tensor has a compressed level: explicit zeros reaching it are stored entries)."""
        while e in self.parent:
            p = self.parent[e]
            if isinstance(p, X.Unary):
                if p.op not in ZERO_PRESERVING:
                    return True
            elif isinstance(p, X.Reduce):
                if p.op != "sum":
                    return True
            elif isinstance(p, X.Binary):
                other = p.rhs if e is p.lhs else p.lhs
                if p.op in ("max", "min"):
                    return True
                if p.op in ("/", "mask") and e is p.rhs:
                    return True
                if p.op == "/" and not (isinstance(p.rhs, X.Const) and p.rhs.value != 0):
                    return True  # an explicit 0 / 0 is NaN, an absent numerator no entry
                if p.op in ("+", "-"):
                    if isinstance(other, X.Const):
                        return True  # e + c: an explicit 0 gives c, absence nothing
                    mine, theirs = set(e.free), set(other.free)
                    if mine - theirs:
                        return True  # e decides the pattern
                    if theirs - mine:
                        return False  # the other side decides it; absent e counts as 0
                    # a plain union: e's pattern shows in the result's; look further up
            e = p
        # Up to the root through pattern-preserving operations (products, sums): an explicit 0
        # of e becomes a stored entry of the written tensor (e's own index may be reduced away or
        # sit on a dense level: the entry still shows on any compressed level).
        fmt = self.out_format
        return fmt is not None and not fmt.is_dense

    def spacc_levels(self, e: X.Reduce) -> tuple[str, ...]:
        """The indices of e's space produced by its sparse accumulator: those after its index,
        or, for a held order-0 reduction, its innermost level (the held outer coordinates).

        An order-0 reduction whose fibers may be empty is held when its use tells an absent
        result from 0 (the reducer would emit an explicit 0) or when it sits under two or more
        levels (the reducer cannot tell an empty fiber closing an outer one from a missing
        fiber): `crdhold` repeats its outer coordinate per reduced coordinate and `spacc1`
        accumulates those points, emitting exactly the outer coordinates that had entries."""
        if e.held:
            return (e.space[-1],)
        return tuple(x for x in e.space if self.pos[x] > self.pos[e.index])

    def _join(self, e: X.Node, loop: Loop) -> "Leaf | Join | None":
        """The join tree of `loop` below node `e` (None: e has no coordinates at this loop)."""
        x = loop.index
        if e.vleaf is not None and e.vleaf[1] is loop:
            tree = Leaf(e, "value")
            if x in e.widen:
                tree = Join("union", tree, Leaf(self.helper(e, x, loop), "helper"))
            return tree
        if e.loops.get(loop.index) is not loop:
            return None
        tree = self._join_inner(e, loop)
        # At its innermost level a widened node is a value leaf: widened in its parent's loop.
        if x in e.widen and tree is not None and not (e.vleaf and e.vleaf[0] == x):
            tree = Join("union", tree, Leaf(self.helper(e, x, loop), "helper"))
        return tree

    def _drop_full_outer_spacc(self, tree: "Leaf | Join | None", x: str
                               ) -> "Leaf | Join | None":
        """Settle the outer output levels of sparse accumulators (order >= 2) in a join at x.
        A joiner cannot filter such a level, whose payload is a whole fiber of the next level:
        it may meet another operand only where the join's coordinates are exactly its own.

        - An accumulator that holds every coordinate of x under every outer point, when the
          rest of the join does too, is left out of the join: both sides then give the same
          coordinates in the same order, so the loop takes them from the rest, and the
          accumulator's next level is met fiber by fiber, one per coordinate of x, as a
          scanner's would be (docs/lowering.md, "Full accumulator levels"; GPT-3's
          `Q = sum_e(ln1 Wq) + bq` in the order s -> e -> h -> d: the order-2 accumulator's h
          meets bq's). It emits a coordinate of x only with a point below it, so the levels
          inside x must be full too (`_full_inside`).
        - Otherwise an accumulator whose coordinates decide the join (a required side of every
          union above it) stays in it as a `spacc-outer` leaf: the joiner takes its coordinates
          and locates the other operands there, its payload is its own coordinates (unused),
          and nothing of its fibers is dropped (`T0[k] - sum_j A0[i,k,j]` in j -> k -> i: T0
          lacks i, so the accumulator's side is required).
        - Failing both, the rule of the first case without the levels inside x (the body full
          at x and at the reduced index): a union where the accumulator is not required
          (the artifact GCN's Z2 with --share --inline-widened). The accumulator then
          receives every coordinate of x but would emit only those with a point below; it is
          made to emit every one it receives (`emit_empty`), an empty fiber below where a
          whole slab is empty, so its coordinates at x are the rest's. That needs its body
          full at its outer levels inside x too (`_emits_full`), else an empty fiber there
          would add coordinates the accumulator lacks; failing that it is not set, and the
          join at such a level, where the accumulator is not full and meets the other side,
          is refused.
        Anything else stays as it is and codegen refuses it (OuterLevelJoin)."""
        if not isinstance(tree, Join):
            return tree
        outer = [leaf for leaf in tree.leaves() if leaf.kind == "spacc"
                 and x != self.spacc_levels(leaf.node)[-1]]
        if not outer:
            return tree

        def without(t: "Leaf | Join", drop) -> "Leaf | Join | None":
            if isinstance(t, Leaf):
                return None if t in drop else t
            a, b = without(t.left, drop), without(t.right, drop)
            if a is None or b is None:
                return a if b is None else b
            return Join(t.op, a, b, t.required)

        def dropped(strict: bool) -> "Leaf | Join | None":
            drop = [leaf for leaf in outer if _full(leaf.node, x, self.pos)
                    and (not strict or self._full_inside(leaf.node, x))]
            rest = without(tree, drop) if drop else None
            return rest if rest is not None and self._tree_full(rest, x) else None

        rest = dropped(strict=True)
        if rest is not None:
            return rest
        if all(_decides(tree, leaf) for leaf in outer):
            for leaf in outer:
                leaf.kind = "spacc-outer"
            return tree
        rest = dropped(strict=False)
        if rest is None:
            return tree
        for leaf in outer:
            if _full(leaf.node, x, self.pos) and not self._full_inside(leaf.node, x) \
                    and self._emits_full(leaf.node, x):
                leaf.node.emit_empty = True
        return rest

    def _emits_full(self, e: X.Reduce, x: str) -> bool:
        """Whether accumulator e, emitting every outer coordinate it receives, is full at x and
        adds nothing at its other outer levels: its body is full at x and at the reduced index
        (so it receives every coordinate of x), and at each outer level y inside x (an empty
        fiber at y would be a coordinate of y with nothing below). Outside x nothing is added:
        a coordinate received there has every coordinate of x below it."""
        outer = self.spacc_levels(e)[:-1]
        return all(_full(e.body, y, self.pos) for y in outer if self.pos[y] > self.pos[x])

    def _full_inside(self, e: X.Reduce, x: str) -> bool:
        """Whether accumulator e's body is full at every output level of e inside x."""
        return all(_full(e.body, y, self.pos) for y in e.free if self.pos[y] > self.pos[x])

    def _tree_full(self, t: "Leaf | Join", x: str) -> bool:
        """Whether a join tree gives every coordinate of x under every outer point (`_full`'s
        rule on the tree: an intersection needs both sides full, a union its required sides or,
        with none required, one side)."""
        if isinstance(t, Leaf):
            return t.kind == "helper" or _full(t.node, x, self.pos)
        a, b = self._tree_full(t.left, x), self._tree_full(t.right, x)
        if t.op == "intersect":
            return a and b
        ra, rb = t.required
        if ra or rb:
            return (a or not ra) and (b or not rb)
        return a or b

    def helper(self, e: X.Node, x: str, loop: Loop) -> X.Access:
        """The full-range vector view widening e at loop x (one per (e, loop))."""
        key = (id(e), id(loop))
        if key not in self._helpers:
            h = X.Access(e.widen[x], (x,))
            k = e.space.index(x)
            h.space = e.space[:k + 1]
            h.loops = {y: e.loops[y] for y in e.space[:k]}
            h.loops[x] = loop
            h.free = (x,)
            h.every = frozenset((x,))
            self._helpers[key] = h
        return self._helpers[key]

    def _join_inner(self, e: X.Node, loop: Loop) -> "Leaf | Join | None":
        x = loop.index
        if isinstance(e, X.Access):
            return Leaf(e) if x in e.indices else None
        if isinstance(e, X.Const):
            return None
        if isinstance(e, X.Reduce):
            if x in self.spacc_levels(e):
                return Leaf(e, "spacc")
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


def _full(e: X.Node, x: str, pos: dict[str, int], widened: bool = True) -> bool:
    """Whether e's coordinates at index x are every coordinate of its dim, for every point of
    the levels outside (structurally: dense input levels; intersections need all operands
    full, unions one; an intermediate widened at x, unless `widened` is False for e itself)."""
    if widened and x in e.widen:
        return True
    if isinstance(e, X.Const) or x not in e.every:
        return True  # broadcast over x
    if isinstance(e, X.Access):
        return x not in e.indices or _dense_prefix(e, x)
    if isinstance(e, X.Unary):
        return _full(e.arg, x, pos)
    if isinstance(e, X.Reduce):
        if pos[x] > pos[e.index]:
            # a sparse accumulator's output: the union over r of the body's coordinates
            return _full(e.body, x, pos) and _full(e.body, e.index, pos)
        # At its innermost own level an order-0 reduction of possibly empty fibers may be
        # held (emitting only coordinates with entries, see Analysis.spacc_levels).
        if e.free and x == max(e.free, key=pos.__getitem__) \
                and not _full(e.body, e.index, pos) and not _every_fiber(e, pos):
            return False
        return _full(e.body, x, pos)
    assert isinstance(e, X.Binary)
    a, b = _full(e.lhs, x, pos), _full(e.rhs, x, pos)
    if e.op in UNION_OPS:
        la, lb = set(e.lhs.free), set(e.rhs.free)
        ra, rb = bool(la - lb), bool(lb - la)
        if ra or rb:  # required sides decide (both required: an intersection)
            return (a or not ra) and (b or not rb)
        return a or b
    return a and b


def _decides(tree: "Leaf | Join", leaf: Leaf) -> bool:
    """Whether the coordinates of `tree` are exactly those of `leaf`: on the way down to it,
    every join is a union whose side holding the leaf is required and whose other side is not
    (the union's coordinates are then its required side's)."""
    if tree is leaf:
        return True
    if not isinstance(tree, Join) or tree.op != "union":
        return False
    for k, side in enumerate((tree.left, tree.right)):
        if any(lf is leaf for lf in side.leaves()):
            return tree.required[k] and not tree.required[1 - k] and _decides(side, leaf)
    return False


def _every_fiber(e: X.Reduce, pos: dict[str, int]) -> bool:
    """Whether order-0 reduction e gives an all-dense intermediate (`dense_result`) and its
    body has a fiber under every coordinate of e's own indices: the reducer then emits a value
    for each, an explicit 0 for an empty one, as the declared format stores it (not held)."""
    return e.dense_result and all(_full(e.body, y, pos) for y in e.free)


def _dense_prefix(e: X.Access, x: str) -> bool:
    """Whether the view's level of x and every level above it are dense (so that the view has
    every coordinate of x under every coordinate outside it)."""
    fmt = getattr(e, "format", None)
    if fmt is None:
        return False
    level = fmt.mode_order.index(e.indices.index(x))
    return all(lv == "dense" for lv in fmt.levels[:level + 1])


def annotate_indices(e: X.Node, pos: dict[str, int]) -> None:
    """Set `free` (sorted by `pos`) and `every` on e and its descendants."""
    def srt(xs):
        return tuple(sorted(xs, key=pos.__getitem__))
    for c in e.children():
        annotate_indices(c, pos)
    if isinstance(e, X.Access):
        e.free = srt(set(e.indices))
        e.every = frozenset(e.indices)
    elif isinstance(e, X.Const):
        e.free, e.every = (), frozenset()
    elif isinstance(e, X.Reduce):
        e.free = tuple(x for x in e.body.free if x != e.index)
        e.every = e.body.every | {e.index}
    else:
        kids = e.children()
        e.free = srt(set().union(*(set(c.free) for c in kids)))
        e.every = frozenset().union(*(c.every for c in kids))


def full_at(e: X.Node, x: str, order: tuple[str, ...]) -> bool:
    """`_full` for a tree not yet analyzed (indices annotated here)."""
    pos = {y: k for k, y in enumerate(order)}
    annotate_indices(e, pos)
    return _full(e, x, pos)


def empty_below(e: X.Node, x: str, order: tuple[str, ...]) -> bool:
    """Whether e, at a coordinate of x where every view indexed by x is absent (one that only
    widening adds), has no entries at the levels inside x (or only zeros), so that widening
    it there gives the stored zeros. Not so when an operand without x meets the absent ones
    only at levels outside x: a broadcast operand's value would stand alone below x (an N
    operand is an ALU's identity). A tree not yet analyzed (indices annotated here)."""
    pos = {y: k for k, y in enumerate(order)}
    annotate_indices(e, pos)

    def joined_inside(a: X.Node, b: X.Node) -> bool:
        return any(pos[y] > pos[x] for y in set(a.free) & set(b.free))

    def absent(e: X.Node) -> bool:
        if isinstance(e, X.Access):
            return x in e.indices
        if isinstance(e, X.Const):
            return False
        if isinstance(e, X.Unary):
            return absent(e.arg)
        if isinstance(e, X.Reduce):
            return absent(e.body)  # nothing to reduce: no entry (or an explicit 0)
        assert isinstance(e, X.Binary)
        a, b = absent(e.lhs), absent(e.rhs)
        if a and b:
            return True
        # one side runs on below x: only a joiner inside x can stop it
        ra = bool(set(e.lhs.free) - set(e.rhs.free))
        rb = bool(set(e.rhs.free) - set(e.lhs.free))
        if e.op in INTERSECT_OPS or (ra and rb):
            return (a or b) and joined_inside(e.lhs, e.rhs)
        if ra != rb:  # the side owning more indices is required
            return (a if ra else b) and joined_inside(e.lhs, e.rhs)
        return False
    return absent(e)


def _has_broadcast_product(e: X.Node) -> bool:
    """Whether e contains a product, quotient or mask of operands without a common index (an
    outer product: nothing joins the inner operand with the outer one)."""
    if isinstance(e, X.Binary) and e.op in INTERSECT_OPS \
            and not isinstance(e.lhs, X.Const) and not isinstance(e.rhs, X.Const) \
            and e.lhs.free and e.rhs.free and not set(e.lhs.free) & set(e.rhs.free):
        return True
    return any(_has_broadcast_product(c) for c in e.children())
