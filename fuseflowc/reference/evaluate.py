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
statement's full iteration space is never materialized; a statement with a large result that is
pointwise in its first index is evaluated in row blocks (reference.rowblocks).
"""

from __future__ import annotations

import time
from typing import Iterator

from ..data.fibertree import FiberTensor
from ..lang import ast
from . import ops
from .decompose import reads, split_parts
from .loops import evaluate_looped
from .rowblocks import evaluate_rows, row_plan
from .statements import ExprEvaluator, StatementResult, bind_dims, store
from .values import SVal


def _evaluate(expr: ast.Expr, tensors: dict[str, FiberTensor],
              parts: dict[str, list[FiberTensor]]) -> SVal:
    """A right side's value; one that reads a decomposed matrix A is the sum of its values with
    A replaced by each of A's parts (fuseflowc.reference.decompose)."""
    a = next((a for a in parts if reads(expr, a)), None)
    if a is None:
        return ExprEvaluator(tensors).eval(expr)
    total = None
    for part in parts[a]:
        v = ExprEvaluator({**tensors, a: part}).eval(expr)
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
        yield from evaluate_looped(program, inputs)
        return
    sizes = bind_dims(program, inputs)
    tensors = {n: inputs[n] for n in program.inputs}
    parts = {d.tensor: split_parts(tensors[d.tensor], d) for d in program.decompositions()}
    last = _last_reads(program) if keep is not None else {}
    for k, s in enumerate(program.statements):
        t0 = time.perf_counter()
        plan = row_plan(program, s, tensors, sizes, parts)
        stored = evaluate_rows(program, s, tensors, plan) if plan else None
        if stored is None:
            expr = s.expr if s.expr is not None else s.rhs
            value = _evaluate(expr, tensors, parts)
            stored = store(program, s.lhs, value, s.name, sizes)
            del value
        tensors[s.name] = stored
        del stored
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


def evaluate(program: ast.Program, inputs: dict[str, FiberTensor],
             keep: set[str] | None = None) -> dict[str, FiberTensor]:
    """Every assigned tensor of the checked `program` (or those named in `keep`), evaluated on
    `inputs` and stored in its declared format (see the module docstring for the semantics).
    With `keep`, the others are let go as soon as no later statement reads them."""
    if keep is None:
        return {r.name: r.tensor for r in evaluate_statements(program, inputs)}
    return {r.name: r.tensor for r in evaluate_statements(program, inputs, keep)
            if r.name in keep}
