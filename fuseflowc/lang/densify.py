"""`dense(e)`: a subexpression given the model's (dense, mathematical) semantics.

In the language a value has a pattern and a broadcast never creates coordinates, so
`relu(sum[f](X[b,f] * W[f,h]) + c[h])` has no entry where column h of a pruned W stores nothing,
where a dense framework computes relu(c[h]). `dense(e)` says "e at every coordinate of its
indices, absent entries as stored zeros" (docs/language.md, "Dense values"). It is defined by a
rule the language already has, "assigned tensors are seen as declared": before checking, each
`dense(e)` becomes an access to a fresh intermediate declared `dense` that a statement of its
own assigns e, placed just before the statement that used it, in that statement's fusion region
and loop body. So the checker, the reference evaluator, fuse and lower all see an ordinary
program, and `simulate --check` compares the compiled graphs with the reference as for any other.

The intermediate is named `<statement>__dense<k>`; its indices are those of e that the rest of
the statement also uses (an index used only inside e is summed inside it, where the implicit sum
of the statement would have gone), in order of first appearance.
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import UserError
from ..formats import dense as dense_format
from . import ast

#: The function name of the densifying operator.
DENSE = "dense"


def hoist_dense(program: ast.Program) -> ast.Program:
    """`program` with every `dense(e)` replaced by an access to a dense intermediate assigned e
    (see the module docstring); the program itself when it has none."""
    if not any(_has_dense(s.rhs) for s in _all_statements(program.body or program.statements)):
        return program
    hoister = _Hoister(program)
    if program.body:
        body = hoister.items(program.body)
        statements = [x for x in body if isinstance(x, ast.Assignment)]
    else:  # a program built without the parser's body (statements only)
        body, statements = [], hoister.items(program.statements)
    return replace(program, body=body, statements=statements,
                   tensors=program.tensors + hoister.decls,
                   directives=hoister.directives(program.directives))


def _all_statements(items) -> list[ast.Assignment]:
    out = []
    for x in items:
        if isinstance(x, ast.Loop):
            out.extend(x.statements())
        else:
            out.append(x)
    return out


def _has_dense(e: ast.Expr) -> bool:
    return any(isinstance(x, ast.Call) and x.func == DENSE for x in e.walk())


class _Hoister:
    def __init__(self, program: ast.Program):
        self.decls_by_name = {t.name: t for t in program.tensors}
        self.taken = set(self.decls_by_name)
        self.decls: list[ast.TensorDecl] = []
        # statement -> its hoisted statements and the indices each uses; its own indices after
        self.made: dict[str, list[tuple[str, set[str]]]] = {}
        self.uses: dict[str, set[str]] = {}

    def items(self, items) -> list:
        out: list = []
        for x in items:
            if isinstance(x, ast.Loop):
                out.append(replace(x, body=tuple(self.items(x.body))))
            else:
                out.extend(self.statement(x))
        return out

    def statement(self, s: ast.Assignment) -> list[ast.Assignment]:
        if not _has_dense(s.rhs):
            return [s]
        hoisted: list[ast.Assignment] = []
        rhs = self.rewrite(s, s.rhs, hoisted)
        self.uses[s.name] = _all_indices(rhs) | set(s.lhs.indices)
        return hoisted + [replace(s, rhs=rhs)]

    def rewrite(self, s: ast.Assignment, e: ast.Expr, hoisted: list) -> ast.Expr:
        if isinstance(e, ast.Call) and e.func == DENSE:
            if len(e.args) != 1:
                raise UserError(f"dense takes 1 argument, not {len(e.args)}", e.loc)
            inner = self.rewrite(s, e.args[0], hoisted)
            return self.hoist(s, e, inner, hoisted)
        if isinstance(e, ast.Binary):
            return replace(e, lhs=self.rewrite(s, e.lhs, hoisted),
                           rhs=self.rewrite(s, e.rhs, hoisted))
        if isinstance(e, ast.Call):
            return replace(e, args=tuple(self.rewrite(s, a, hoisted) for a in e.args))
        if isinstance(e, ast.Reduce):
            return replace(e, body=self.rewrite(s, e.body, hoisted))
        return e

    def hoist(self, s: ast.Assignment, call: ast.Call, inner: ast.Expr, hoisted: list
              ) -> ast.Access:
        outside = set(s.lhs.indices) | set(_indices_outside(s.rhs, call))
        free = tuple(i for i in ast.indices_of(inner) if i in outside)
        if not free:
            raise UserError("dense(...) needs an index that the rest of the statement uses "
                            "(scalars are not supported)", call.loc)
        dims = tuple(self.dim_of(i, inner, call) for i in free)
        k = 1
        while f"{s.name}__dense{k}" in self.taken:
            k += 1
        name = f"{s.name}__dense{k}"
        self.taken.add(name)
        self.decls.append(ast.TensorDecl(name, dims, dense_format(len(dims)), loc=call.loc))
        self.made.setdefault(s.name, []).append((name, _all_indices(inner)))
        access = ast.Access(name, free, loc=call.loc, index_locs=(call.loc,) * len(free))
        hoisted.append(ast.Assignment(access, inner, call.loc))
        return access

    def dim_of(self, index: str, e: ast.Expr, call: ast.Call) -> str | int:
        for x in e.walk():
            if isinstance(x, ast.Access) and index in x.indices:
                decl = self.decls_by_name.get(x.tensor)
                if decl is not None and len(decl.dims) == len(x.indices):
                    return decl.dims[x.indices.index(index)]
        raise UserError(f"dense(...): no declared tensor inside it tells the dimension of "
                        f"index {index}", call.loc)

    def directives(self, directives: list) -> list:
        """Fusion regions gain each hoisted statement before its user; an `order` of a user is
        split between it and its hoisted statements (each keeps its own indices)."""
        out = []
        for d in directives:
            if isinstance(d, ast.Fuse) and any(n in self.made for n in d.statements):
                names: list[str] = []
                for n in d.statements:
                    names.extend(new for new, _ in self.made.get(n, ()))
                    names.append(n)
                out.append(replace(d, statements=tuple(names), item_locs=()))
            elif isinstance(d, ast.Order) and d.statement in self.made:
                for new, idx in self.made[d.statement]:
                    out.append(ast.Order(new, tuple(i for i in d.indices if i in idx), d.loc))
                mine = self.uses[d.statement]
                out.append(replace(d, indices=tuple(i for i in d.indices if i in mine),
                                   item_locs=()))
            else:
                out.append(d)
        return out


def _all_indices(e: ast.Expr) -> set[str]:
    """Every index name e uses, reduced ones included."""
    out: set[str] = set()
    for x in e.walk():
        if isinstance(x, ast.Access):
            out.update(x.indices)
        elif isinstance(x, ast.Reduce):
            out.update(x.indices)
    return out


def _indices_outside(e: ast.Expr, call: ast.Call):
    """The index names used in e outside the subtree `call` (by identity)."""
    if e is call:
        return
    if isinstance(e, ast.Access):
        yield from e.indices
        return
    if isinstance(e, ast.Reduce):
        yield from e.indices
    for c in e.children():
        yield from _indices_outside(c, call)
