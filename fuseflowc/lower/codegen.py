"""Graph generation from a statement's analysis: the fusion table's cells evaluated lazily.

Each cell kind is a memoized method (the paper's lambda table Λ, Algorithm 2): asking for the
output value of the statement pulls in, recursively, the value cells of its operands, the
reference chains of the input views (roots, level scanners, repeats), the joiners of the
loops, and the reducers. A cell is built once, when first needed, so references to cells not
yet created are just method calls. Writers are added last.
"""

from __future__ import annotations

from ..diagnostics import UserError
from ..ops import BINARY_OP, CONST_OP
from ..samml import ir
from ..samml.ir import SPACC_KINDS
from . import expr as X
from .blocks import BlockPlan
from .build import Analysis, Join, Leaf, Loop, _full
from .shared import CannotShare, Published


def _seen_loop(e: X.Node, x: str) -> Loop:
    """The loop whose coordinates e's parent sees at x: e's own, or for a value leaf at x the
    parent's loop its values ride into (a widened body of a reduction, say)."""
    if e.vleaf is not None and e.vleaf[0] == x:
        return e.vleaf[1]
    return e.loops[x]


class OuterLevelJoin(UserError):
    """The outer output level of an order-2 accumulator meets another operand in a joiner
    (lower.distribute rewrites the statement first wherever a product can go into the sum)."""

    def __init__(self, reduction: X.Reduce, message: str, loc=None):
        super().__init__(message, loc)
        self.reduction = reduction


class Codegen:
    """Generates the nodes of one statement into graph `g` (see the module docstring)."""

    def __init__(self, g: ir.Graph, an: Analysis, tensors: dict[str, X.TensorInfo],
                 shared: dict[str, Published] | None = None):
        self.g = g
        self.an = an
        self.tensors = tensors
        # the streams of the graph's shared intermediates (fuseflowc.lower.shared), by tensor
        self.shared = shared if shared is not None else {}
        self.memo: dict = {}
        # blocked tensors: split indices and block labels (None for unblocked statements)
        self.bp = BlockPlan.of(an.st, tensors, an.pos, an.parent)
        self._check_views()

    # -- checks ---------------------------------------------------------------------------------
    def _check_views(self) -> None:
        for v in self.an.nodes:
            if not isinstance(v, X.Access):
                continue
            fmt = v.format if v.shared else self.tensors[v.tensor].format
            seq = [v.indices[m] for m in fmt.mode_order]
            ranks = [self.an.pos[x] for x in seq]
            if ranks != sorted(ranks):
                raise UserError(
                    f"{v.tensor}[{', '.join(v.indices)}] is stored in the order "
                    f"{' -> '.join(seq)}, discordant with the dataflow order "
                    f"{' -> '.join(self.an.order)} (a permuted view is needed; not supported by "
                    "lower yet)", v.loc or self.an.st.loc)

    # -- helpers --------------------------------------------------------------------------------
    def _memo(self, key, make):
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def add(self, node: ir.Node, *inputs):
        return self.g.add(node, *inputs)

    # -- block labels (fuseflowc.lower.blocks) ---------------------------------------------------
    def _lab(self, e: X.Node, *operands: X.Node) -> dict:
        """The block-label attributes of an ALU computing e from `operands` (none unblocked)."""
        if self.bp is None:
            return {}
        keys = ("in0", "in1")
        out = {keys[k]: list(self.bp.labels(o)) for k, o in enumerate(operands)}
        out["out"] = list(self.bp.labels(e))
        return out

    def _labr(self, e: X.Reduce) -> dict:
        """The block-label attributes of the reducer or accumulator of e."""
        if self.bp is None:
            return {}
        return {"in0": list(self.bp.labels(e.body)), "out": list(self.bp.labels(e))}

    # -- reference chains of input views --------------------------------------------------------
    def root(self, v: X.Access):
        return self._memo(("root", v), lambda: self.add(ir.Root(tensor=v.tensor)))

    def ref_in(self, v: X.Access, x: str):
        """The reference stream of view v entering level x of its space."""
        k = v.space.index(x)
        return self.root(v) if k == 0 else self.ref_out(v, v.space[k - 1])

    def scan(self, v: X.Access, x: str):
        if v.shared:
            return self._memo(("scan", v, x), lambda: self._shared_scan(v, x))

        def make():
            t = self.tensors[v.tensor]
            mode = v.indices.index(x)
            level = t.format.mode_order.index(mode)
            return self.add(ir.Scan(tensor=v.tensor, mode=mode, format=t.format.kind(level),
                                    index=x), self.ref_in(v, x))
        return self._memo(("scan", v, x), make)

    def ref_out(self, v: X.Access, x: str):
        """The reference stream of view v after level x (joined, or repeated over x)."""
        def make():
            loop = v.loops[x]
            if x in v.indices:
                if isinstance(loop.join, Join):
                    return self.join(loop)[1][v]
                return self.scan(v, x)[1]
            return self.add(ir.Repeat(index=x), self.ref_in(v, x), self.repsig(loop))
        return self._memo(("ref_out", v, x), make)

    def _shared_scan(self, v: X.Access, x: str):
        """(crd, payload) of a shared view at level x: the published coordinates, with the
        values as the innermost level's payload (fuseflowc.lower.shared)."""
        pub = self.shared.get(v.tensor)
        loc = v.loc or self.an.st.loc
        if pub is None:
            raise CannotShare(v.tensor, "its producer is not generated before this reader", loc)
        if self.bp is not None:
            raise CannotShare(v.tensor, "its reader is blocked", loc)
        seq = tuple(v.indices[m] for m in pub.format.mode_order)
        if seq != v.space:
            extra = ", ".join(y for y in v.space if y not in seq)
            raise CannotShare(v.tensor, f"a reader iterates {extra} around its levels, so it "
                              "would read each row again (order those indices inside, or let "
                              "it be stored)", loc)
        k = seq.index(x)
        loop = v.loops[x]
        if k < len(seq) - 1:
            if not _full(loop.owner, x, self.an.pos):
                raise CannotShare(v.tensor, f"a reader iterates only some coordinates of its "
                                  f"level {x}, the stream all of them", loc)
            return pub.crds[k], pub.crds[k]
        if pub.format.levels[-1] != "dense" and _absent_in_union(loop.join, v):
            raise CannotShare(v.tensor, f"a union reads it at {x} where it may be absent (a "
                              "stored entry reads 0 there, the stream nothing)", loc)
        return pub.crds[k], pub.val

    # -- loops ----------------------------------------------------------------------------------
    def crd(self, loop: Loop):
        """The coordinate stream of a loop."""
        if isinstance(loop.join, Join):
            return self.join(loop)[0]
        return self.leaf_crd(loop.join, loop)

    def repsig(self, loop: Loop):
        return self._memo(("repsig", loop), lambda: self.add(ir.Repsig(index=loop.index),
                                                             self.crd(loop)))

    def leaf_crd(self, leaf: Leaf, loop: Loop):
        if leaf.kind in ("scan", "helper"):
            return self.scan(leaf.node, loop.index)[0]
        if leaf.kind == "value":
            return self.crd(leaf.node.loops[loop.index])
        return self.spacc(leaf.node)[0][loop.index]

    def leaf_payload(self, leaf: Leaf, loop: Loop):
        if leaf.kind in ("scan", "helper"):
            return self.scan(leaf.node, loop.index)[1]
        if leaf.kind == "value":
            return self.raw_val(leaf.node)
        e = leaf.node
        if leaf.kind == "spacc-outer":
            # the join's coordinates are the accumulator's own (Analysis._drop_full_outer_spacc):
            # nothing of its fibers is dropped, and its payload, its coordinates, is unused
            return self.spacc(e)[0][loop.index]
        levels = self.an.spacc_levels(e)
        if loop.index != levels[-1]:
            raise OuterLevelJoin(e,
                f"the outer output level {loop.index} of an order-{len(levels)} reduction over "
                f"{e.index} meets another operand; joining it is not supported: choose a "
                f"dataflow order with {e.index} innermost", e.loc or self.an.st.loc)
        return self.spacc(e)[1]

    def join(self, loop: Loop):
        """(crd, {leaf node: payload out}) of a loop whose join tree is a Join."""
        def make():
            return self._materialize(loop.join, loop)
        return self._memo(("join", loop), make)

    def _materialize(self, tree, loop: Loop):
        if isinstance(tree, Leaf):
            return self.leaf_crd(tree, loop), {tree.node: self.leaf_payload(tree, loop)}
        lc, lp = self._materialize(tree.left, loop)
        rc, rp = self._materialize(tree.right, loop)
        items = [(lc, n, s) for n, s in lp.items()] + [(rc, n, s) for n, s in rp.items()]
        ins = [s for c, _, p in items for s in (c, p)]
        if tree.op == "intersect":
            node = ir.Intersect(index=loop.index)
        else:
            req = [k for k in range(len(items))
                   if (k < len(lp) and tree.required[0]) or (k >= len(lp) and tree.required[1])]
            node = ir.Union(index=loop.index, required=req)
        outs = self.add(node, *ins)
        return outs[0], {n: outs[k + 1] for k, (_, n, _) in enumerate(items)}

    # -- values ---------------------------------------------------------------------------------
    def val(self, e: X.Node):
        """The value stream of e as its parent sees it, with the stop structure of e's space
        (a value leaf's values come out of its parent's joiner; widened ones with 0 for N)."""
        if e.vleaf is None:
            return self.raw_val(e)

        def make():
            x, loop = e.vleaf
            if not isinstance(loop.join, Join):
                v = self.raw_val(e)
            else:
                v = self.join(loop)[1][e]
            if x in e.widen:
                if self.bp is not None:
                    raise UserError(f"widening an intermediate over the blocked index {x} is not "
                                    "supported; declare the intermediate with the written "
                                    "pattern's format or fuse it differently",
                                    e.loc or self.an.st.loc)
                # N (absent) + 0 * h = 0: the stored zero of the declared format. (The vector's
                # values are multiplied by 0, so they must be finite.)
                h = self.an.helper(e, x, loop)
                zero = self.add(ir.Alu(op="mulc", const=0.0),
                                self.add(ir.Array(tensor=h.tensor), self.join(loop)[1][h]))
                if not self.an.zero_sign_shows(e):
                    return self.add(ir.Alu(op="add"), v, zero)
                # A divisor shows the sign of a zero (1 / -0.0 is -inf): a stored zero is +0.0,
                # but 0 * h is -0.0 where h < 0, and v + 0.0 would turn a computed -0.0 into
                # +0.0. Exact: -(-0.0 - v) is v, and -0.0 where v is N (x - N = x), negated +0.0.
                minus_zero = self.add(ir.Alu(op="neg"),
                                      self.add(ir.Alu(op="addc", const=0.0), zero))
                v = self.add(ir.Alu(op="neg"), self.add(ir.Alu(op="sub"), minus_zero, v))
            return v
        return self._memo(("val", e), make)

    def raw_val(self, e: X.Node):
        """The value stream of e computed in its own loops."""
        return self._memo(("raw", e), lambda: self._val(e))

    def _val(self, e: X.Node):
        if isinstance(e, X.Access):
            if e.shared:   # the values ride as the innermost level's payload
                if not e.space:
                    raise CannotShare(e.tensor, "a scalar has no stream of its own",
                                      e.loc or self.an.st.loc)
                return self.ref_out(e, e.space[-1])
            ref = self.root(e) if not e.space else self.ref_out(e, e.space[-1])
            return self.add(ir.Array(tensor=e.tensor), ref)
        if isinstance(e, X.Unary):
            return self.add(ir.Alu(op=e.op, **self._lab(e, e.arg)),
                            self.extend(self.val(e.arg), e.arg, e))
        if isinstance(e, X.Reduce):
            levels = self.an.spacc_levels(e)
            if not levels:
                return self.add(ir.Reduce(op=e.op, index=e.index, **self._labr(e)),
                                self.val(e.body))
            loop = e.loops[levels[-1]]
            if isinstance(loop.join, Join):
                return self.join(loop)[1][e]
            return self.spacc(e)[1]
        if isinstance(e, X.Const):
            raise UserError("a constant alone has no stream; write it inside an expression "
                            "with a tensor", e.loc or self.an.st.loc)
        assert isinstance(e, X.Binary)
        if e.op == "mask":
            v = self.extend(self.val(e.lhs), e.lhs, e)
            if self.bp is not None and self.bp.labels(e.lhs) != self.bp.labels(e):
                # the mask has inner indices the masked value lacks: broadcast its blocks
                v = self.add(ir.Alu(op="mulc", const=1.0, **self._lab(e, e.lhs)), v)
            if any(isinstance(n, X.Reduce) or n.vleaf is not None for n in e.rhs.walk()):
                # The mask's values are ignored, but its pattern is that of the reductions (and
                # value leaves) under it, which own loops of their own: their joiners must be
                # generated, and a sparse accumulator's values must go somewhere. Generate the
                # mask's values and add them times 0.
                m = self.extend(self.val(e.rhs), e.rhs, e)
                m = self.add(ir.Alu(op="mulc", const=0.0, **self._lab(e.rhs, e.rhs)), m)
                v = self.add(ir.Alu(op="add", **self._lab(e, e, e.rhs)), v, m)
            return v
        if isinstance(e.lhs, X.Const) and isinstance(e.rhs, X.Const):
            raise UserError("an operation between two constants has no stream",
                            e.loc or self.an.st.loc)
        if isinstance(e.rhs, X.Const):
            return self.add(ir.Alu(op=CONST_OP[e.op][0], const=e.rhs.value,
                                   **self._lab(e, e.lhs)),
                            self.extend(self.val(e.lhs), e.lhs, e))
        if isinstance(e.lhs, X.Const):
            return self.add(ir.Alu(op=CONST_OP[e.op][1], const=e.lhs.value,
                                   **self._lab(e, e.rhs)),
                            self.extend(self.val(e.rhs), e.rhs, e))
        a = self.extend(self.val(e.lhs), e.lhs, e)
        b = self.extend(self.val(e.rhs), e.rhs, e)
        return self.add(ir.Alu(op=BINARY_OP[e.op], **self._lab(e, e.lhs, e.rhs)), a, b)

    def extend(self, v, child: X.Node, parent: X.Node):
        """Repeat child's values over the trailing levels of parent's space it lacks."""
        for x in parent.space[len(child.space):]:
            v = self.add(ir.Repeat(index=x), v, self.repsig(parent.loops[x]))
        return v

    def spacc(self, e: X.Reduce):
        """({index: crd out}, val out) of e's sparse accumulator."""
        def make():
            levels = self.an.spacc_levels(e)
            body = e.body
            crds = [self.crd(_seen_loop(body, x)) for x in levels]
            if e.held:
                # the outer coordinate held once per reduced coordinate: points to accumulate
                crds[0], _ = self.add(ir.CrdHold(outer=levels[0], inner=e.index), crds[0],
                                      self.crd(_seen_loop(body, e.index)))
            kind = SPACC_KINDS[len(levels)]
            more = {"emit_empty": "yes"} if e.emit_empty else {}
            *cs, v = self.add(kind(op=e.op, index=e.index, **more, **self._labr(e)), *crds,
                              self.val(body))
            return dict(zip(levels, cs)), v
        return self._memo(("spacc", e), make)

    # -- writers --------------------------------------------------------------------------------
    def write(self) -> None:
        """Generate the statement: its value, then one level writer per level and the values
        writer of the written tensor."""
        st = self.an.st
        fmt = st.shared_format if st.shared_format is not None else \
            self.tensors[st.tensor].format
        root = st.expr
        seq = [st.indices[m] for m in fmt.mode_order]
        if tuple(seq) != root.space:
            raise UserError(
                f"{st.tensor} is stored in the order {' -> '.join(seq) or '(scalar)'}, discordant "
                f"with the dataflow order {' -> '.join(self.an.order)} (a permuted output is "
                "needed; not supported by lower yet)", st.loc)
        if isinstance(root, X.Const):
            raise UserError("a statement assigning a constant has no stream", st.loc)
        v = self.val(root)
        if st.shared_format is not None:
            self._publish(v, seq)
            return
        t = self.tensors[st.tensor]
        if self.bp is not None:
            have = self.bp.labels(root)
            want = list(st.indices) if t.format.blocked or t.block is not None else []
            if have != want:
                # a block written in another axis order (or broadcast): rearrange it
                v = self.add(ir.Alu(op="mulc", const=1.0, in0=list(have), out=want), v)
        for level, x in enumerate(seq):
            mode = t.format.mode_order[level]
            self.add(ir.WriteLevel(tensor=st.tensor, mode=mode, format=t.format.levels[level]),
                     self.crd(root.loops[x]))
        self.add(ir.WriteVals(tensor=st.tensor), v)
        # Every joiner must shape the result. One nobody pulled would filter nothing: that only
        # happens when its coordinates feed nothing but accumulated outer levels (an outer-level
        # join, which lower.distribute rewrites away first where it can; else OuterLevelJoin).
        for loop in self.an.loops:
            if isinstance(loop.join, Join) and ("join", loop) not in self.memo:
                self.join(loop)
                raise AssertionError(f"the joiner of loop {loop} feeds nothing")

    def _publish(self, v, seq: list[str]) -> None:
        """Publish a shared intermediate's streams for its readers in the graph instead of
        writing it: a dense level must carry every coordinate, as the stored tensor would."""
        st = self.an.st
        fmt = st.shared_format
        if self.bp is not None:
            raise CannotShare(st.tensor, "it is computed blocked", st.loc)
        for level, x in enumerate(seq):
            if fmt.levels[level] == "dense" and not _full(st.expr, x, self.an.pos):
                raise CannotShare(st.tensor, f"its computed coordinates at {x} may miss some its "
                                  "dense level stores", st.loc)
        crds = [self.crd(st.expr.loops[x]) for x in seq]
        for loop in self.an.loops:
            if isinstance(loop.join, Join) and ("join", loop) not in self.memo:
                self.join(loop)
                raise AssertionError(f"the joiner of loop {loop} feeds nothing")
        self.shared[st.tensor] = Published(fmt, crds, v)


def _absent_in_union(tree, v: X.Access) -> bool:
    """Whether leaf `v` sits on a side of a union of `tree` that need not hold a coordinate."""
    def walk(t) -> bool | None:   # None: v not below t
        if isinstance(t, Leaf):
            return False if t.node is v else None
        for k, side in enumerate((t.left, t.right)):
            got = walk(side)
            if got is not None:
                return got or (t.op == "union" and not t.required[k])
        return None
    return bool(walk(tree))
