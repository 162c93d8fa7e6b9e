"""Row-block evaluation of one statement, so a large result is never one COO value.

A statement `S[i, ...] = e` whose first left-side index `i` is, in every access of `e` that
uses it, that access's first index (and only there), and is summed or maxed nowhere, computes
row r of S from row r of those operands alone: every operation of the language is pointwise in
an index it does not reduce. Such a statement is evaluated on consecutive row ranges of its
`i`-operands (the other operands are read whole, once), each range's value stored in S's
format, and the stored blocks joined level by level into S. The values and patterns are those
of the whole evaluation (tests/reference/test_reference_rowblocks.py checks it on random
programs), and the peak is one block's COO value (24 bytes an entry) instead of the whole
result's: GCN on ogbn-mag's 736,389 x 349 softmax intermediates are 6.2 GB each as one COO
value, 2 GB stored.

Only storage formats whose first level holds logical mode 0, dense or compressed, unblocked,
are sliced and joined; any other statement is evaluated whole (reference.evaluate).
"""

from __future__ import annotations

import math

import numpy as np

from ..data.fibertree import FiberTensor, Level, check_storage
from ..lang import ast
from .statements import ExprEvaluator, materialize
from .values import SVal

#: A statement whose result or largest sliced operand holds more than this many entries (rows
#: times the entries of a row: the product of the result's other dims, an operand's stored
#: entries per row on average) is evaluated in row blocks of about this many entries each: 4 M,
#: ~100 MB as a COO value.
BLOCK_COORDS = 1 << 22

_TOP = ("dense", "compressed", "nonunique")


def _sliceable(t: FiberTensor) -> bool:
    return t.block is None and t.format.mode_order[0] == 0 and t.levels[0].kind in _TOP


def row_plan(program: ast.Program, s: ast.Assignment, tensors: dict[str, FiberTensor],
             sizes: dict[str, int], decomposed) -> tuple[tuple[int, ...], set[str], int] | None:
    """(the result's shape, the tensors to slice by rows, rows per block) when statement `s`
    is to be evaluated in row blocks (see the module docstring), else None."""
    if not s.lhs.indices:
        return None
    decl = program.tensor(s.name)
    if decl.format.blocked or decl.format.mode_order[0] != 0 or decl.format.kinds[0] not in _TOP:
        return None
    shape = tuple(d if isinstance(d, int) else sizes.get(d) for d in decl.dims)
    if any(n is None for n in shape):
        return None
    i = s.lhs.indices[0]
    if s.lhs.indices.count(i) != 1:
        return None
    expr = s.expr if s.expr is not None else s.rhs
    sliced: set[str] = set()
    for x in expr.walk():
        if isinstance(x, ast.Reduce) and i in x.indices:
            return None
        if isinstance(x, ast.Access):
            if x.tensor in decomposed:
                return None
            if i not in x.indices:
                continue
            t = tensors[x.tensor]
            if (x.indices[0] != i or x.indices.count(i) != 1 or not _sliceable(t)
                    or t.shape[0] != shape[0]):
                return None
            sliced.add(x.tensor)
    if not sliced or shape[0] == 0:
        return None
    # entries a row holds, in the result (at most) and in the largest sliced operand (on average)
    width = max([math.prod(shape[1:])] + [-(-tensors[n].nnz // shape[0]) for n in sliced])
    if shape[0] * width <= BLOCK_COORDS:
        return None
    return shape, sliced, max(1, BLOCK_COORDS // max(width, 1))


class _Cached(ExprEvaluator):
    """An evaluator that reads each unsliced access once for all blocks."""

    def __init__(self, tensors: dict[str, FiberTensor], cache: dict):
        super().__init__(tensors)
        self.cache = cache

    def eval(self, e: ast.Expr) -> SVal:
        if isinstance(e, ast.Access) and (e.tensor, e.indices) in self.cache:
            return self.cache[e.tensor, e.indices]
        return super().eval(e)


def evaluate_rows(program: ast.Program, s: ast.Assignment, tensors: dict[str, FiberTensor],
                  plan: tuple[tuple[int, ...], set[str], int]) -> FiberTensor | None:
    """Statement `s` evaluated in row blocks by `plan` (row_plan's) and stored in its declared
    format; None when a block's value does not have the declared shape (the whole evaluation
    then reports it as it reports any mismatch)."""
    shape, sliced, rows = plan
    decl = program.tensor(s.name)
    expr = s.expr if s.expr is not None else s.rhs
    cache = {(x.tensor, x.indices): SVal.from_fiber(tensors[x.tensor], x.indices)
             for x in expr.walk() if isinstance(x, ast.Access) and x.tensor not in sliced}
    # the whole result's storage is refused as the whole evaluation refuses it: its dense levels
    # before any block, its stored entries as the blocks add them
    check_storage(decl.name, shape, decl.format, 0)
    blocks, stored = [], 0
    for r0 in range(0, shape[0], rows):
        r1 = min(r0 + rows, shape[0])
        part = {**tensors, **{n: row_slice(tensors[n], r0, r1) for n in sliced}}
        value = _Cached(part, cache).eval(expr)
        bshape = (r1 - r0,) + shape[1:]
        if dict(zip(value.indices, value.sizes)) != dict(zip(s.lhs.indices, bshape)):
            return None
        blocks.append((r0, materialize(value, s.lhs, decl, bshape, None)))
        stored += blocks[-1][1].vals.shape[0]
        check_storage(decl.name, shape, decl.format, stored)
        del value, part
    return join_rows(blocks, shape)


def row_slice(t: FiberTensor, r0: int, r1: int) -> FiberTensor:
    """Rows r0..r1-1 of `t` (first level dense or compressed, holding mode 0, unblocked) as a
    tensor of r1 - r0 rows, sharing `t`'s arrays where it can."""
    top = t.levels[0]
    if top.kind == "dense":
        p0, p1 = r0, r1
        levels = [Level("dense", r1 - r0)]
    else:
        p0, p1 = (int(x) for x in np.searchsorted(top.crd, [r0, r1]))
        levels = [Level(top.kind, r1 - r0, np.array([0, p1 - p0], np.int64),
                        top.crd[p0:p1] - r0)]
    for lv in t.levels[1:]:
        if lv.kind == "dense":
            p0, p1 = p0 * lv.size, p1 * lv.size
            levels.append(Level("dense", lv.size))
        elif lv.kind in ("compressed", "nonunique"):
            q0, q1 = int(lv.seg[p0]), int(lv.seg[p1])
            levels.append(Level(lv.kind, lv.size, lv.seg[p0:p1 + 1] - q0, lv.crd[q0:q1]))
            p0, p1 = q0, q1
        elif lv.kind == "fixed":
            p0, p1 = p0 * lv.width, p1 * lv.width
            levels.append(Level("fixed", lv.size, None, lv.crd[p0:p1], lv.width))
        else:  # singleton: one position per parent position
            levels.append(Level(lv.kind, lv.size, None, lv.crd[p0:p1]))
    return FiberTensor((r1 - r0,) + tuple(t.shape[1:]), t.format, levels, t.vals[p0:p1])


def join_rows(blocks: list[tuple[int, FiberTensor]], shape: tuple[int, ...]) -> FiberTensor:
    """The tensor of `shape` whose rows r0.. are each block's (blocks in row order, covering
    every row, all in one format): row_slice's inverse."""
    first = blocks[0][1]
    levels = []
    for k, lv in enumerate(first.levels):
        size = shape[0] if k == 0 else lv.size
        if lv.kind == "dense":
            levels.append(Level("dense", size))
            continue
        crds = [b.levels[k].crd + (r0 if k == 0 else 0) for r0, b in blocks]
        crd = np.concatenate(crds).astype(np.int64, copy=False)
        seg = None
        if k == 0:      # the root's one fiber holds every block's rows
            seg = np.array([0, crd.shape[0]], np.int64)
        elif lv.kind in ("compressed", "nonunique"):
            parts, base = [np.zeros(1, np.int64)], 0
            for _, b in blocks:
                parts.append(b.levels[k].seg[1:] + base)
                base += b.levels[k].crd.shape[0]
            seg = np.concatenate(parts)
        levels.append(Level(lv.kind, size, seg, crd, lv.width))
        del crds
    vals = np.concatenate([b.vals for _, b in blocks])
    return FiberTensor(tuple(shape), first.format, levels, vals)
