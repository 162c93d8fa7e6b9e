"""Reused loop iterations fused once (docs/fused-ir.md, "Reused iterations").

The iterations of a loop scheduled `reuse` are, by the language's rules, one body with other
tensors bound. `fuse` fuses iteration 0 and, for each later iteration that is iteration 0 up to
a renaming of its names, makes its regions by renaming iteration 0's (no instances, POG or
order search); the fused IR writes such an iteration as one line, `reuse l 3 = 0 {W__0 = W__3,
...}`, and `lower` lowers iteration 0 once and rebinds its graphs.

Whether iteration K is iteration 0 rebound is decided on the program IR (`renamings`): both
iterations' statements, walked in order with every name replaced by its order of first
appearance, must be equal, and so must everything fusion asks about each name (declared dims,
format and block size, stored or not (a program output or read outside its fusion group), its
`order` and `parallelize` directives, its fusion group). Whether a tensor read from memory is
an input or computed by an earlier region (layer 0 reads `X`, layer 1 reads `H__0`) only
labels its views (`input`, `materialized`): fusion treats both alike, and so does the renaming. Anything that differs (a first or last
layer with another body, an `order` for one iteration) leaves that iteration fused in full,
and so does an iteration some of whose statements the program lacks (a program cut down to one
region of the loop, as `plan` costs it).
"""

from __future__ import annotations

from dataclasses import replace

from ..lang import ast
from . import ir
from .free_order import copy_name

Renaming = dict[str, str]


def renamings(program: ast.Program, named_orders: set[str]) -> dict[tuple[str, int], Renaming]:
    """(loop variable, K) -> {iteration 0's name: iteration K's} (statements, tensors and
    fusion groups; every name, equal ones included) for each later iteration of a reused loop
    that is iteration 0 rebound. `named_orders`: region or group names given an order of their
    own (`--order K --region R`): a loop one of whose iterations is named is not rebound."""
    out: dict[tuple[str, int], Renaming] = {}
    if program.decompositions():
        return out   # decomposed inputs are rewritten per statement: fused in full
    present = {s.name for s in program.statements}
    for var, its in program.reuse:
        if len(its) < 2 or any(_named(program, names, named_orders) for names in its):
            continue
        # a program may hold part of a loop (plan fuses one region of it at a time): an
        # iteration with a statement missing is not the body rebound, so it is fused in full,
        # and without all of iteration 0 there is no template to rebind
        if not _complete(its[0], present):
            continue
        first = _signature(program, its[0])
        if first is None:
            continue
        for k in range(1, len(its)):
            if not _complete(its[k], present):
                continue
            sig = _signature(program, its[k])
            if sig is not None and sig[0] == first[0]:
                out[(var, k)] = dict(zip(first[1], sig[1]))
    return out


def _complete(names: list[str], present: set[str]) -> bool:
    """Whether an iteration has statements and the program holds every one of them."""
    return bool(names) and all(n in present for n in names)


def _named(program: ast.Program, names: list[str], named: set[str]) -> bool:
    """Whether a region of these statements may be named in `named` (its group, a statement,
    or a split region `group.N`)."""
    if not named:
        return False
    for s in names:
        g = program.region_of(s)
        base = s if g is None else g.name
        if any(n == base or n == s or n.startswith(base + ".") for n in named):
            return True
    return False


def _signature(program: ast.Program, names: list[str]):
    """(what fusion sees of the statements `names` with every name replaced by its order of
    first appearance, those names in that order), or None when a fusion group of them has a
    statement outside them."""
    ids: dict[str, int] = {}

    def cid(n: str) -> int:
        return ids.setdefault(n, len(ids))

    inside = set(names)
    groups: dict[str, int] = {}
    stmts = []
    for n in names:
        st = program.statement(n)
        cid(n)
        g = program.region_of(n)
        if g is not None:
            if not set(g.statements) <= inside:
                return None
            if g.name not in groups:
                groups[g.name] = len(groups)
        stmts.append((st.lhs.indices, _expr(st.expr if st.expr is not None else st.rhs, cid),
                      st.index_dims, None if g is None else groups[g.name]))
    taken = {g.name for g in program.regions()}
    outputs = set(program.outputs)
    readers = program.readers()
    attrs = []
    for n in ids:
        decl = program.tensor(n)
        g = program.region_of(n)
        group = set(g.statements) if g is not None else {n}
        order = program.order_of(n) if n in inside else None
        # stored: a program output or read outside its group (fusion and widening ask
        # only for the two together: the tensor is written in its declared format)
        stored = n in inside and (n in outputs or
                                  any(r not in group for r in readers.get(n, ())))
        attrs.append((decl.dims, decl.format, program.block_size(n), stored,
                      n in inside, n in taken,
                      None if order is None else order.indices,
                      tuple((p.index, p.factor) for p in program.parallelizations(n))
                      if n in inside else ()))
    names_in_order = list(ids)
    group_names = list(groups)
    return (tuple(stmts), tuple(attrs), len(group_names)), names_in_order + group_names


def _expr(e: ast.Expr, cid) -> tuple:
    if isinstance(e, ast.Access):
        return ("a", cid(e.tensor), e.indices,
                None if e.fallback is None else _expr(e.fallback, cid))
    if isinstance(e, ast.Const):
        return ("c", e.value)
    if isinstance(e, ast.Binary):
        return ("b", e.op, _expr(e.lhs, cid), _expr(e.rhs, cid))
    if isinstance(e, ast.Call):
        return ("f", e.func, tuple(_expr(a, cid) for a in e.args))
    if isinstance(e, ast.Reduce):
        return ("r", e.op, e.indices, _expr(e.body, cid))
    raise TypeError(type(e).__name__)


# ---- renaming regions -------------------------------------------------------------------------

def region_names(r: ir.Region):
    """Every name a region holds (group, statements, tensors), in order of appearance."""
    if r.group is not None:
        yield r.group
    yield from r.statements
    yield from r.materialized
    for e in r.exprs:
        yield e.statement
        for a in e.expr.walk():
            if isinstance(a, ast.Access):
                yield a.tensor
    for v in r.views:
        yield v.tensor
        if v.copy_of is not None:
            yield v.copy_of
    for e in r.edges:
        yield e.statement
        if e.tensor is not None:
            yield e.tensor
    for p in r.parallel:
        yield p.statement


def binding_names(templates: list[ir.Region], rho: Renaming, declared: set[str]) -> Renaming:
    """The names of iteration 0's regions `templates` that iteration K renames, {iteration 0's:
    iteration K's} in order of first appearance, from the program-level renaming `rho`; a
    permuted copy is named after its renamed tensor as fusion names it (free_order.copy_name;
    `declared`: the program's tensor names)."""
    out: Renaming = {}
    for r in templates:
        for v in r.views:
            if v.kind == "permuted" and v.copy_of is not None and v.tensor not in rho:
                modes = tuple(v.indices.index(g) for g in v.mode_order)
                rho[v.tensor] = (copy_name(rho[v.copy_of], modes, declared)
                                 if rho.get(v.copy_of, v.copy_of) != v.copy_of else v.tensor)
        for n in region_names(r):
            m = rho.get(n, n)
            if m != n and n not in out:
                out[n] = m
    return out


def rename_region(r: ir.Region, names: Renaming, computed: set[str], bound: tuple[str, int]
                  ) -> ir.Region:
    """Region `r` of iteration 0 with every name in `names` renamed: the region iteration
    `bound` computes. A view read from memory is `materialized` when its renamed tensor is
    `computed` by the program, else `input`."""
    def nm(x: str) -> str:
        return names.get(x, x)

    base = r.group if r.group is not None else r.statements[0]
    exprs = [ir.Instance(e.id, nm(e.statement), e.lhs, _rename_expr(e.expr, names),
                         e.index_map, e.writes, e.loc) for e in r.exprs]
    views = []
    for v in r.views:
        kind = v.kind
        if kind in ("input", "materialized"):
            kind = "materialized" if nm(v.tensor) in computed else "input"
        views.append(ir.View(v.id, nm(v.tensor), v.indices, kind, v.mode_order, v.producer,
                             None if v.copy_of is None else nm(v.copy_of), v.loc))
    edges = [ir.Edge(e.src, e.dst, e.kind, nm(e.statement),
                     None if e.tensor is None else nm(e.tensor), e.view, e.loc)
             for e in r.edges]
    return ir.Region(nm(base) + r.name[len(base):], None if r.group is None else nm(r.group),
                     tuple(map(nm, r.statements)), list(r.indices), exprs, views, edges,
                     r.order, r.order_index, tuple(map(nm, r.materialized)),
                     [replace(p, statement=nm(p.statement)) for p in r.parallel], r.loc,
                     r.order_loc, bound=bound, template=r.name)


def _rename_expr(e: ast.Expr, names: Renaming) -> ast.Expr:
    if isinstance(e, ast.Access):
        return replace(e, tensor=names[e.tensor]) if e.tensor in names else e
    if isinstance(e, ast.Reduce):
        return replace(e, body=_rename_expr(e.body, names))
    if isinstance(e, ast.Binary):
        return replace(e, lhs=_rename_expr(e.lhs, names), rhs=_rename_expr(e.rhs, names))
    if isinstance(e, ast.Call):
        return replace(e, args=tuple(_rename_expr(a, names) for a in e.args))
    return e


def templates_of(regions: list[ir.Region], statements: list[str]) -> list[ir.Region]:
    """The regions (in order) computing iteration 0's `statements`."""
    inside = set(statements)
    return [r for r in regions if r.bound is None and set(r.statements) <= inside]


def contiguous(regions: list[ir.Region], bound: tuple[str, int]) -> bool:
    """Whether the regions of iteration `bound` follow each other in `regions`, in their
    templates' order (what the one line standing for them in the fused IR can say)."""
    pos = [k for k, r in enumerate(regions) if r.bound == bound]
    if not pos or pos != list(range(pos[0], pos[0] + len(pos))):
        return False
    order = {r.name: k for k, r in enumerate(regions)}
    tpos = [order.get(regions[k].template, -1) for k in pos]
    return tpos == sorted(tpos)
