"""Sparsity blocking: the block plan of one statement (docs/lowering.md, "Blocked tensors").

A tensor with a blocked format stores dense b x b blocks; its levels iterate block coordinates.
When a statement reads or writes blocked tensors, every index variable spanned by a blocked mode
is *split*: its outer part (the block coordinate) is iterated by the SAMML graph exactly like
an unblocked index, and its inner part (the position within the block) lives inside the values.
A value is then an ndarray whose axes are the inner indices of its node, the node's *labels*:

- an access of a blocked tensor: its indices in mode order (a block is stored row-major);
- an access of an unblocked tensor: no labels (it may not use a split index);
- a unary function: its argument's labels; a binary operation: the union of its operands' (in
  the statement's dataflow order), an operand lacking a label is broadcast inside the block;
- a reduction over a split index r reduces r inside each block (`in0`/`out` on the reducer)
  and across the blocks of r's outer loop; a sum of a product contracts r in the product
  itself (a block einsum such as `[i, k], [j, k] -> [i, j]`, timed as a block matmul).

Every ALU, reducer and accumulator of a blocked statement carries these labels (`in0`, `in1`,
`out`), so that the simulator knows how to combine blocks; one block size b per statement.
"""

from __future__ import annotations

from ..diagnostics import UserError
from . import expr as X


class BlockPlan:
    """The split indices (with their block size) and the labels of every node of one
    statement; `BlockPlan.of` returns None for a statement without blocked tensors."""

    def __init__(self, st: X.Statement, tensors: dict[str, X.TensorInfo], pos: dict[str, int],
                 parent: dict, block: int, split: frozenset[str]):
        self.st, self.tensors, self.pos, self.parent = st, tensors, pos, parent
        self.block = block
        self.split = split
        self._labels: dict = {}

    @classmethod
    def of(cls, st: X.Statement, tensors: dict[str, X.TensorInfo], pos: dict[str, int],
           parent: dict) -> "BlockPlan | None":
        """The plan of `st` (checked), or None when it touches no blocked tensor."""
        views = [(v.tensor, v.indices, v.loc) for v in st.expr.walk() if isinstance(v, X.Access)]
        views.append((st.tensor, st.indices, st.loc))
        blocked = [(t, ix, loc) for t, ix, loc in views if _blocked(tensors[t])]
        if not blocked:
            return None
        sizes = {}
        for t, _, loc in blocked:
            info = tensors[t]
            if info.block is None:
                raise UserError(f"tensor {t} has a blocked format but no block size; add "
                                f"`block {t}: <size>`", loc or st.loc)
            sizes.setdefault(info.block, t)
        if len(sizes) > 1:
            (b1, t1), (b2, t2) = sorted(sizes.items())[:2]
            raise UserError(f"statement {st.name} mixes block sizes {b1} ({t1}) and {b2} ({t2}); "
                            "a fused statement has one block size", st.loc)
        split = frozenset(x for _, ix, _ in blocked for x in ix)
        for t, ix, loc in views:
            if not _blocked(tensors[t]) and split & set(ix):
                xs = ", ".join(sorted(split & set(ix), key=pos.__getitem__))
                raise UserError(
                    f"tensor {t} is not blocked, but its index {xs} is blocked by "
                    f"{blocked[0][0]} in statement {st.name}: declare {t} with a blocked format "
                    f"(bcsr, bdcsr, bdense) and block size {next(iter(sizes))}", loc or st.loc)
        return cls(st, tensors, pos, parent, next(iter(sizes)), split)

    def _sorted(self, xs) -> list[str]:
        return sorted(xs, key=self.pos.__getitem__)

    def contracted(self, e: X.Node) -> str | None:
        """The split index a product contracts inside its blocks: a `*` whose parent sums over
        a split index (the block matmul of `sum[k](A[i,k] * B[k,j])`)."""
        if not (isinstance(e, X.Binary) and e.op == "*"):
            return None
        p = self.parent.get(e)
        if isinstance(p, X.Reduce) and p.op == "sum" and p.index in self.split:
            return p.index
        return None

    def labels(self, e: X.Node) -> list[str]:
        """The inner indices of e's block values, in axis order."""
        if e not in self._labels:
            self._labels[e] = self._compute(e)
        return self._labels[e]

    def _compute(self, e: X.Node) -> list[str]:
        if isinstance(e, X.Access):
            return list(e.indices) if _blocked(self.tensors[e.tensor]) else []
        if isinstance(e, X.Const):
            return []
        if isinstance(e, X.Unary):
            return self.labels(e.arg)
        if isinstance(e, X.Reduce):
            return [x for x in self.labels(e.body) if x != e.index]
        assert isinstance(e, X.Binary)
        xs = set(self.labels(e.lhs)) | set(self.labels(e.rhs))
        xs.discard(self.contracted(e))
        return self._sorted(xs)


def _blocked(t: X.TensorInfo) -> bool:
    return bool(t.format.blocked) or t.block is not None
