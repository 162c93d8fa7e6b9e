"""One statement of the reference evaluator: its right side evaluated to a pattern-carrying value,
and that value stored in the assigned tensor's declared format (see reference.evaluate for the
semantics). Shared by the statement-by-statement evaluator (reference.evaluate) and the one for
programs with loops (reference.loops).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.fibertree import FiberTensor
from ..diagnostics import UserError
from ..lang import ast
from . import ops
from .values import SVal, unique_keys


@dataclass
class StatementResult:
    """One evaluated statement: the tensor it assigns, stored as declared, and the wall time."""

    name: str
    tensor: FiberTensor
    seconds: float


def bind_dims(program: ast.Program, inputs: dict[str, FiberTensor]) -> dict[str, int]:
    """Sizes of every named dim, from the declarations and the input tensors (which must all be
    present and consistent with them)."""
    sizes = {d.name: d.size for d in program.dims if d.size is not None}
    for name in program.inputs:
        decl = program.tensor(name)
        t = inputs.get(name)
        if t is None:
            raise UserError(f"no value given for input tensor '{name}'", decl.loc)
        if len(t.shape) != decl.order:
            raise UserError(f"input '{name}' has {len(t.shape)} dim(s) but is declared with "
                            f"{decl.order}", decl.loc)
        for dim, got in zip(decl.dims, t.shape):
            want = dim if isinstance(dim, int) else sizes.get(dim)
            if want is not None and want != got:
                raise UserError(f"input '{name}' has shape {tuple(t.shape)} but is declared "
                                f"[{', '.join(map(str, decl.dims))}] with {dim} = {want}",
                                decl.loc)
            if isinstance(dim, str):
                sizes[dim] = got
    return sizes


class ExprEvaluator:
    """Evaluation of one statement's right side."""

    def __init__(self, tensors: dict[str, FiberTensor]):
        self.tensors = tensors

    def eval(self, e: ast.Expr) -> SVal:
        if isinstance(e, ast.Access):
            return SVal.from_fiber(self.tensors[e.tensor], e.indices)
        if isinstance(e, ast.Const):
            return SVal.scalar(e.value)
        if isinstance(e, ast.Call):
            if e.func == "mask":
                return self.product(e)
            if len(e.args) == 1:
                return ops.unary(e.func, self.eval(e.args[0]))
            return ops.binary(e.func, self.eval(e.args[0]), self.eval(e.args[1]))
        if isinstance(e, ast.Binary):
            if e.op == "*":
                return self.product(e)
            return ops.binary(e.op, self.eval(e.lhs), self.eval(e.rhs))
        if isinstance(e, ast.Reduce):
            if e.op == "sum":
                return self.product(e)
            return ops.reduce("max", self.eval(e.body), e.indices)
        raise TypeError(f"unknown expression {e!r}")

    def product(self, e: ast.Expr) -> SVal:
        """A sum of products (with masks) evaluated by pairwise contraction."""
        factors: list[SVal] = []
        over: list[str] = []
        self._factors(e, factors, over)
        return ops.contract(factors, over)

    def _factors(self, e: ast.Expr, factors: list[SVal], over: list[str]) -> None:
        """Flatten `*`, mask and nested sums into factors and summed indices. mask(e, M) is e
        times M's pattern with value 1; a sum over a factor commutes with the other factors,
        which cannot use its (reduced) indices."""
        if isinstance(e, ast.Binary) and e.op == "*":
            self._factors(e.lhs, factors, over)
            self._factors(e.rhs, factors, over)
        elif isinstance(e, ast.Call) and e.func == "mask":
            self._factors(e.args[0], factors, over)
            m = self.eval(e.args[1])
            factors.append(SVal(m.indices, m.sizes, m.coords, np.ones(m.nnz)))
        elif (isinstance(e, ast.Reduce) and e.op == "sum"
              and not set(e.indices) & (set(over) | _used(factors))):
            over.extend(e.indices)
            self._factors(e.body, factors, over)
        else:
            factors.append(self.eval(e))


def _used(factors: list[SVal]) -> set[str]:
    return {i for f in factors for i in f.indices}


def materialize(value: SVal, lhs: ast.Access, decl: ast.TensorDecl, shape: tuple[int, ...],
                block: int | None) -> FiberTensor:
    """Store a statement's value in the declared format: its stored entries are the computed
    pattern's coordinates (widened under trailing dense levels by from_coo); a blocked format
    stores every block holding a computed entry."""
    v = value.transpose(lhs.indices).sorted()
    fmt = decl.format
    if not fmt.blocked:
        return FiberTensor.from_coo(shape, v.coords, v.vals, fmt, name=decl.name)
    b = block
    if b is None:
        raise UserError(f"tensor {decl.name} has blocked format {fmt.name()} but no block size; "
                        f"give one with `block {decl.name}: B`", decl.loc)
    if any(s % b for s in shape):
        raise UserError(f"block size {b} does not divide the shape {tuple(shape)} of "
                        f"{decl.name}", decl.loc)
    bc = v.coords // b
    inner = v.coords % b
    ncols = max(shape[1] // b, 1)
    key = bc[:, 0] * ncols + bc[:, 1]
    uniq, _, inv = unique_keys(key)
    blocks = np.zeros((uniq.shape[0], b, b))
    blocks[inv.reshape(-1), inner[:, 0], inner[:, 1]] = v.vals
    bcoords = np.stack([uniq // ncols, uniq % ncols], axis=1).astype(np.int64)
    return FiberTensor.from_coo(shape, bcoords, blocks, fmt, b, decl.name)


def store(program: ast.Program, lhs: ast.Access, value: SVal, name: str,
          sizes: dict[str, int]) -> FiberTensor:
    """The value of the statement assigning tensor `name` (`lhs` its left side), stored in the
    tensor's declared format; binds the dims it is the first to give a size."""
    decl = program.tensor(name)
    idx_size = dict(zip(value.indices, value.sizes))
    shape = tuple(d if isinstance(d, int) else sizes.get(d, idx_size.get(i))
                  for d, i in zip(decl.dims, lhs.indices))
    for d, i, n in zip(decl.dims, lhs.indices, shape):
        if idx_size.get(i) != n:
            raise UserError(f"index {i} of {name} ranges over {idx_size.get(i)} "
                            f"coordinates but {name}'s dim {d} has size {n}", lhs.loc)
        if isinstance(d, str):
            sizes.setdefault(d, n)
    return materialize(value, lhs, decl, shape, program.block_size(name))
