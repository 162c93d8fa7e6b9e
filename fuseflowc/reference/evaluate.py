"""The reference evaluator: a program evaluated statement by statement with numpy/scipy.

It depends only on the program IR (fuseflowc.lang) and the data model, never on fuse/lower: it is
the independent oracle every compiled graph is checked against.

Each statement's right side is evaluated to a pattern-carrying value (`SVal`) following the
sparsity semantics of docs/language.md. The result is then *materialized* in the assigned
tensor's declared format with `FiberTensor.from_coo` of the computed pattern, and later statements
read that tensor ("assigned tensors are seen as declared"): materializing into a format with
dense levels after the last compressed one stores every coordinate beneath them (absent ones
hold 0), so an intermediate declared dense is dense from then on. The compiled graphs do the same.

Products (with masks) under sums are evaluated by pairwise contraction (see ops.contract), so a
statement's full iteration space is never materialized.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..data.fibertree import FiberTensor
from ..diagnostics import UserError
from ..lang import ast
from . import ops
from .decompose import reads, split_parts
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


class _Statement:
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


def _evaluate(expr: ast.Expr, tensors: dict[str, FiberTensor],
              parts: dict[str, list[FiberTensor]]) -> SVal:
    """A right side's value; one that reads a decomposed matrix A is the sum of its values with
    A replaced by each of A's parts (fuseflowc.reference.decompose)."""
    a = next((a for a in parts if reads(expr, a)), None)
    if a is None:
        return _Statement(tensors).eval(expr)
    total = None
    for part in parts[a]:
        v = _Statement({**tensors, a: part}).eval(expr)
        total = v if total is None else ops.binary("+", total, v)
    return total


def evaluate_statements(program: ast.Program, inputs: dict[str, FiberTensor],
                        keep: set[str] | None = None) -> Iterator[StatementResult]:
    """Evaluate the checked `program` on `inputs` (name -> tensor in its declared format),
    yielding each statement's materialized result in statement order. A program with loops is
    evaluated loop by loop (reference.loops), its results named as the unrolled program's.
    `keep` (None: everything): the tensors the caller wants; any other is let go after the
    last statement that reads it (the caller must not hold on to the results it is given),
    which at the paper's sizes is gigabytes of intermediates."""
    if program.looped is not None:
        from .loops import evaluate_looped
        yield from evaluate_looped(program, inputs)
        return
    sizes = bind_dims(program, inputs)
    tensors = {n: inputs[n] for n in program.inputs}
    parts = {d.tensor: split_parts(tensors[d.tensor], d) for d in program.decompositions()}
    last = _last_reads(program) if keep is not None else {}
    for k, s in enumerate(program.statements):
        t0 = time.perf_counter()
        expr = s.expr if s.expr is not None else s.rhs
        value = _evaluate(expr, tensors, parts)
        tensors[s.name] = store(program, s.lhs, value, s.name, sizes)
        del value
        yield StatementResult(s.name, tensors[s.name], time.perf_counter() - t0)
        for name in last.get(k, ()):
            if name not in keep:
                tensors.pop(name, None)
                parts.pop(name, None)


def _last_reads(program: ast.Program) -> dict[int, list[str]]:
    """Statement index -> the tensors it is the last to read or write (the last statement that
    mentions each)."""
    last: dict[str, int] = {}
    for k, s in enumerate(program.statements):
        expr = s.expr if s.expr is not None else s.rhs
        for x in expr.walk():
            if isinstance(x, ast.Access):
                last[x.tensor] = k
        last[s.name] = k
    out: dict[int, list[str]] = {}
    for name, k in last.items():
        out.setdefault(k, []).append(name)
    return out


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


def evaluate(program: ast.Program, inputs: dict[str, FiberTensor],
             keep: set[str] | None = None) -> dict[str, FiberTensor]:
    """Every assigned tensor of the checked `program` (or those named in `keep`), evaluated on
    `inputs` and stored in its declared format (see the module docstring for the semantics).
    With `keep`, the others are let go as soon as no later statement reads them."""
    if keep is None:
        return {r.name: r.tensor for r in evaluate_statements(program, inputs)}
    return {r.name: r.tensor for r in evaluate_statements(program, inputs, keep)
            if r.name in keep}
