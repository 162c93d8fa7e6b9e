"""The reference evaluator for programs with loops: the loops run as written, iteration by
iteration, on lists of tensors (docs/language.md, "Lists and loops").

This module is the oracle for the `unroll` compilation (fuseflowc.lang.unroll) and so shares
nothing with it but the naming of per-iteration results (`ast.element_name`): list index
expressions, fallbacks, carried states and the visibility of iteration-local tensors are
interpreted here on their own. Each statement's right side is evaluated by the ordinary
statement evaluator on the tensors its accesses denote in the current iteration.
"""

from __future__ import annotations

import itertools
import time
from typing import Iterator

from ..data.fibertree import FiberTensor
from ..diagnostics import InternalError
from ..lang import ast
from .statements import ExprEvaluator, StatementResult, bind_dims, store


def evaluate_looped(flat: ast.Program, inputs: dict[str, FiberTensor]
                    ) -> Iterator[StatementResult]:
    """Evaluate `flat.looped` (the checked program with its loops) on `inputs`, named as the
    unrolled `flat` program names its tensors (input list elements come as `W__k`)."""
    yield from _Loops(flat, inputs).run()


class _Loops:
    def __init__(self, flat: ast.Program, inputs: dict[str, FiberTensor]):
        self.flat = flat
        self.p = flat.looped
        self.sizes = bind_dims(flat, inputs)
        self.decls = {t.name: t for t in self.p.tensors}
        self.tables = {x.name: x.values for x in self.p.indices}
        self.lists: dict[str, dict[tuple[int, ...], FiberTensor]] = {}
        top: dict[str, FiberTensor] = {}
        for t in self.p.tensors:
            if t.lists:
                self.lists[t.name] = {}
                for pos in itertools.product(*(range(n) for n in self.list_shape(t))):
                    key = ast.element_name(t.name, pos)
                    if key in inputs:
                        self.lists[t.name][pos] = inputs[key]
            elif t.name in inputs:
                top[t.name] = inputs[t.name]
        self.top = top

    def list_shape(self, t: ast.TensorDecl) -> tuple[int, ...]:
        return tuple(d if isinstance(d, int) else self.p.dim(d).size for d in t.lists)

    def run(self) -> Iterator[StatementResult]:
        for item in self.p.body:
            if isinstance(item, ast.Loop):
                yield from self.loop(item, {}, self.top)
            else:
                yield self.assign(item, {}, self.top, item.name)
                self.top[item.name] = self.last

    # ---- one statement --------------------------------------------------------------------
    def position(self, x: ast.LIdx, env: dict[str, int], n: int) -> int:
        """The list position `x` denotes in iteration `env`, in a list dim of length n."""
        op, args = x.op, x.args
        if op == "var":
            return env[args[0]]
        if op == "num":
            return args[0]
        if op == "+":
            return self.position(args[0], env, n) + self.position(args[1], env, n)
        if op == "-":
            return self.position(args[0], env, n) - self.position(args[1], env, n)
        if op == "*":
            return args[0] * self.position(args[1], env, n)
        if op == "reverse":
            return (n - 1) - self.position(args[0], env, n)
        table = self.tables[args[0]]
        return table[self.position(args[1], env, len(table))]

    def tensor(self, a: ast.Access, env, scope) -> FiberTensor:
        """The tensor access `a` reads in iteration `env` (`scope`: the tensors visible)."""
        if not a.lists:
            return scope[a.tensor]
        shape = self.list_shape(self.decls[a.tensor])
        pos = tuple(self.position(x, env, n) for x, n in zip(a.lists, shape))
        if any(not 0 <= k < n for k, n in zip(pos, shape)):
            if a.fallback is None:  # the checker reports these
                raise InternalError(f"{a.tensor}{list(pos)} out of range reached evaluation")
            return self.tensor(a.fallback, env, scope)
        return self.lists[a.tensor][pos]

    def assign(self, s: ast.Assignment, env, scope, name: str) -> StatementResult:
        t0 = time.perf_counter()
        expr = s.expr if s.expr is not None else s.rhs
        operands: dict[str, FiberTensor] = {}

        def bind(e: ast.Expr) -> ast.Expr:
            if isinstance(e, ast.Access):
                key = f"%{len(operands)}"
                operands[key] = self.tensor(e, env, scope)
                return ast.Access(key, e.indices)
            if isinstance(e, ast.Binary):
                return ast.Binary(e.op, bind(e.lhs), bind(e.rhs))
            if isinstance(e, ast.Call):
                return ast.Call(e.func, tuple(bind(x) for x in e.args))
            if isinstance(e, ast.Reduce):
                return ast.Reduce(e.op, e.indices, bind(e.body))
            return e

        value = ExprEvaluator(operands).eval(bind(expr))
        self.last = store(self.flat, s.lhs, value, name, self.sizes)
        return StatementResult(name, self.last, time.perf_counter() - t0)

    # ---- loops ----------------------------------------------------------------------------
    def loop(self, lp: ast.Loop, env: dict[str, int], scope: dict[str, FiberTensor]
             ) -> Iterator[StatementResult]:
        n = lp.dim if isinstance(lp.dim, int) else self.p.dim(lp.dim).size
        outer = tuple(env.values())
        state = self.tensor(lp.init, env, scope) if lp.state is not None else None
        if lp.kind == "fold" and n == 0:  # no iteration: the result is the initial state
            decl = self.decls[lp.state]
            idx = tuple(f"i{k}" for k in range(decl.order))
            value = ExprEvaluator({"%0": state}).eval(ast.Access("%0", idx))
            name = ast.element_name(lp.state, outer)
            state = store(self.flat, ast.Access(name, idx), value, name, self.sizes)
            yield StatementResult(name, state, 0.0)
        for k in range(n):
            inner = {**env, lp.var: k}
            pos = outer + (k,)
            local = dict(scope)
            if state is not None:
                local[lp.state] = state
            for item in lp.body:
                if isinstance(item, ast.Loop):
                    yield from self.loop(item, inner, local)
                    continue
                decl = self.decls[item.name]
                if item.name == lp.state:
                    final = lp.kind == "fold" and k == n - 1
                    yield self.assign(item, inner, local,
                                      ast.element_name(item.name, outer if final else pos))
                    state = self.last
                    if lp.kind == "scan":
                        self.lists[item.name][pos] = state
                elif decl.lists:
                    yield self.assign(item, inner, local, ast.element_name(item.name, pos))
                    self.lists[item.name][pos] = self.last
                else:
                    yield self.assign(item, inner, local, ast.element_name(item.name, pos))
                    local[item.name] = self.last
        if lp.kind == "fold":
            scope[lp.state] = state
