"""From a checked program to lowering regions: fusion regions, inlining, global orders.

This is the bridge until (and besides) the fused einsum IR of `fuseflowc fuse`: each fusion
region becomes one graph; within it, a statement consumed only inside the region is inlined
into its consumers (its reduction indices renamed fresh), and every statement whose result
leaves the region (read by a later region, or a program output) is written. Each written
statement gets a global order: a topological order of the partial order graph made of the
statements' `order` directives and the storage mode orders of every tensor view (and of the
written tensor), ties broken by first appearance.
"""

from __future__ import annotations

import heapq

from ..diagnostics import UserError
from ..lang import ast
from . import expr as X


def regions_of(program: ast.Program) -> tuple[list[X.Region], dict[str, X.TensorInfo]]:
    """Split `program` into regions (graphs, in a valid execution order) and describe every
    tensor the graphs touch."""
    stmts = {s.name: s for s in program.statements}
    position = {s.name: k for k, s in enumerate(program.statements)}
    groups: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for r in program.regions():
        members = sorted(r.statements, key=lambda n: position[n])
        groups.append((r.name, members))
        seen.update(members)
    for s in program.statements:
        if s.name not in seen:
            groups.append((s.name, [s.name]))
    groups = _split_for_widening(program, groups, position)
    group_of = {n: k for k, (_, ms) in enumerate(groups) for n in ms}
    reads = {s.name: {a.tensor for a in s.rhs.walk() if isinstance(a, ast.Access)}
             for s in program.statements}
    outputs = set(program.outputs)

    # Order the groups: a group runs after every group producing a tensor it reads.
    deps = {k: set() for k in range(len(groups))}
    for k, (_, ms) in enumerate(groups):
        for n in ms:
            for t in reads[n]:
                if t in group_of and group_of[t] != k:
                    deps[k].add(group_of[t])
    order: list[int] = []
    ready = [(min(position[n] for n in groups[k][1]), k) for k in deps if not deps[k]]
    heapq.heapify(ready)
    done: set[int] = set()
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        done.add(k)
        for j in deps:
            if j not in done and deps[j] <= done and all(j != q for _, q in ready):
                heapq.heappush(ready, (min(position[n] for n in groups[j][1]), j))
    if len(order) != len(groups):
        stuck = [groups[k][0] for k in range(len(groups)) if k not in done]
        raise UserError("the fusion regions depend on each other in a cycle ("
                        + ", ".join(stuck) + "); merge them into one region",
                        program.regions()[0].loc if program.regions() else None)

    # Which statements are written (leave their group) and which tensors are temps.
    written: set[str] = set()
    for s in program.statements:
        k = group_of[s.name]
        if s.name in outputs or any(s.name in reads[c] and group_of[c] != k for c in stmts):
            written.add(s.name)
    tensors: dict[str, X.TensorInfo] = {}
    inputs = set(program.inputs)
    for t in program.tensors:
        role = ("input" if t.name in inputs else "output" if t.name in outputs
                else "temp" if t.name in written else None)
        if role is None:
            continue  # fused away: never stored
        tensors[t.name] = X.TensorInfo(t.name, tuple(t.dims), t.format, role,
                                       program.block_size(t.name), t.loc)

    used_names: set[str] = set()
    regions: list[X.Region] = []
    for k in order:
        name, members = groups[k]
        gname = name if name not in used_names else f"{name}_{k}"
        used_names.add(gname)
        region = X.Region(gname)
        inside = set(members)
        for n in members:
            if n in written:
                region.statements.append(_statement(program, stmts[n], inside, written))
        regions.append(region)
    return regions, tensors


def _split_for_widening(program: ast.Program, groups, position):
    """Split regions so that intermediates needing their declared (widened) pattern are stored
    by one graph and read back by a later one (see fuseflowc.lower.widen)."""
    from .widen import must_materialize
    reads = {s.name: {a.tensor for a in s.rhs.walk() if isinstance(a, ast.Access)}
             for s in program.statements}
    out = []
    todo = list(groups)
    while todo:
        name, members = todo.pop(0)
        mat = must_materialize(program, members)
        if not mat or len(members) == 1:
            out.append((name, members))
            continue
        later: set[str] = set()
        for n in members:  # members are in statement order: producers first
            if reads[n] & (mat | later):
                later.add(n)
        first = [n for n in members if n not in later]
        out.append((name, first))
        todo.insert(0, (f"{name}_2", [n for n in members if n in later]))
    return out


class _Inliner:
    """Builds one written statement's tree, inlining producers of the same region."""

    def __init__(self, program: ast.Program, inside: set[str]):
        self.program = program
        self.inside = inside
        self.used: set[str] = set()
        self.edges: list[tuple[str, str]] = []
        self.appearance: list[str] = []
        self.inlined: list[str] = []

    def fresh(self, base: str) -> str:
        k = 1
        while f"{base}_{k}" in self.used:
            k += 1
        name = f"{base}_{k}"
        self.used.add(name)
        return name

    def see(self, x: str) -> None:
        if x not in self.appearance:
            self.appearance.append(x)

    def statement(self, s: ast.Assignment, rename: dict[str, str]) -> X.Node:
        """Convert statement `s` whose free indices map through `rename` (reduced ones get fresh
        names); record its order directive and the mode orders of its views."""
        reduced = [i for i, _ in s.index_dims if i not in s.lhs.indices]
        names = dict(rename)
        self.used.update(rename.values())
        for r in reduced:
            names[r] = r if r not in self.used else self.fresh(r)
            self.used.add(names[r])
        for i in s.lhs.indices:
            self.see(names[i])
        od = self.program.order_of(s.name)
        if od is not None:
            seq = [names[i] for i in od.indices]
            self.edges += list(zip(seq, seq[1:]))
        return self.expr(s.expr, names)

    def expr(self, e: ast.Expr, names: dict[str, str]) -> X.Node:
        if isinstance(e, ast.Access):
            idx = tuple(names[i] for i in e.indices)
            for i in idx:
                self.see(i)
            if e.tensor in self.inside and e.tensor not in self.program.inputs:
                producer = self.program.statement(e.tensor)
                self.inlined.append(producer.name)
                sub = dict(zip(producer.lhs.indices, idx))
                return self.statement(producer, sub)
            decl = self.program.tensor(e.tensor)
            seq = [idx[m] for m in decl.format.mode_order]
            self.edges += list(zip(seq, seq[1:]))
            return X.Access(e.tensor, idx, e.loc, decl.format)
        if isinstance(e, ast.Const):
            return X.Const(e.value, e.loc)
        if isinstance(e, ast.Binary):
            return X.Binary(e.op, self.expr(e.lhs, names), self.expr(e.rhs, names), e.loc)
        if isinstance(e, ast.Call):
            args = [self.expr(a, names) for a in e.args]
            if len(args) == 1:
                return X.Unary(e.func, args[0], e.loc)
            return X.Binary(e.func, args[0], args[1], e.loc)
        if isinstance(e, ast.Reduce):
            for i in e.indices:
                self.see(names[i])
            return X.MultiReduce(e.op, tuple(names[i] for i in e.indices),
                                 self.expr(e.body, names), e.loc)
        raise AssertionError(type(e))


def _statement(program: ast.Program, s: ast.Assignment, inside: set[str],
               written: set[str]) -> X.Statement:
    # Written statements of the region are still inlined into their consumers in the region
    # (they are computed again there rather than read back).
    inl = _Inliner(program, inside - {s.name})
    ident = {i: i for i in s.lhs.indices}
    e = inl.statement(s, ident)
    decl = program.tensor(s.name)
    seq = [s.lhs.indices[m] for m in decl.format.mode_order]
    edges = inl.edges + list(zip(seq, seq[1:]))
    indices = sorted({x for n in e.walk() for x in
                      (n.indices if isinstance(n, (X.Access, X.MultiReduce)) else ())},
                     key=inl.appearance.index)
    order = _topo(indices, edges, s)
    e = X.split_reductions(e, order)
    return X.Statement(s.name, s.name, tuple(s.lhs.indices), e, order, s.loc,
                       tuple(dict.fromkeys(inl.inlined)))


def _topo(indices: list[str], edges: list[tuple[str, str]], s: ast.Assignment
          ) -> tuple[str, ...]:
    """A topological order of `indices` under `edges`, ties broken by position in `indices`."""
    rank = {x: k for k, x in enumerate(indices)}
    succ: dict[str, set[str]] = {x: set() for x in indices}
    indeg = {x: 0 for x in indices}
    for a, b in set(edges):
        if a != b and b not in succ[a]:
            succ[a].add(b)
            indeg[b] += 1
    ready = [(rank[x], x) for x in indices if indeg[x] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, x = heapq.heappop(ready)
        out.append(x)
        for y in sorted(succ[x], key=rank.get):
            indeg[y] -= 1
            if indeg[y] == 0:
                heapq.heappush(ready, (rank[y], y))
    if len(out) != len(indices):
        stuck = [x for x in indices if x not in out]
        raise UserError(f"statement {s.name}: no dataflow order is concordant with the storage "
                        "orders of its tensors and the order directives (a cycle among "
                        + ", ".join(stuck) + "); a permuted copy of a tensor is needed "
                        "(not supported by lower yet): change a format or an order", s.loc)
    return tuple(out)
