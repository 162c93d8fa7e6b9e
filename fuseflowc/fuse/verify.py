"""Checking a fused IR read from text: every reference resolves, every view agrees with its
tensor's format, the chosen order is a linear extension of the POG. Errors are located at the
offending line of the IR text and reported together."""

from __future__ import annotations

from ..diagnostics import DiagnosticSink
from ..lang import ast
from . import ir


def verify_fused(f: ir.FusedProgram) -> None:
    """Raise UserError listing every structural error of `f`."""
    sink = DiagnosticSink()
    dims = {}
    for name, size in f.dims:
        if name in dims:
            sink.error(f"dim '{name}' is declared twice")
        dims[name] = size
    tensors: dict[str, ir.TensorInfo] = {}
    for t in f.tensors:
        if t.name in tensors:
            sink.error(f"tensor '{t.name}' is declared twice", t.loc)
        tensors[t.name] = t
        for d in t.dims:
            if isinstance(d, str) and d not in dims:
                sink.error(f"tensor '{t.name}' uses undeclared dim '{d}'", t.loc)
        if t.format.order != len(t.dims):
            sink.error(f"tensor '{t.name}' has {len(t.dims)} dims but a format of "
                       f"{t.format.order} levels", t.loc)
    for t in f.tensors:
        if t.role == "permuted":
            base = tensors.get(t.copy_of)
            if base is None:
                sink.error(f"permuted tensor '{t.name}' is a copy of undeclared '{t.copy_of}'",
                           t.loc)
            elif base.dims != t.dims or base.format.levels != t.format.levels:
                sink.error(f"permuted tensor '{t.name}' must have the dims and level formats of "
                           f"'{t.copy_of}', only its mode order may differ", t.loc)
    writers: dict[str, str] = {}
    names = set()
    for r in f.regions:
        if r.name in names:
            sink.error(f"region '{r.name}' is defined twice", r.loc)
        names.add(r.name)
        _region(r, tensors, dims, sink, writers)
    sink.raise_if_any()


def _region(r: ir.Region, tensors, dims, sink: DiagnosticSink, writers: dict[str, str]) -> None:
    where = f"in region '{r.name}'"
    idx: dict[str, object] = {}
    for name, d in r.indices:
        if name in idx:
            sink.error(f"index '{name}' is declared twice {where}", r.loc)
        if isinstance(d, str) and d not in dims:
            sink.error(f"index '{name}' ranges over undeclared dim '{d}' {where}", r.loc)
        idx[name] = d
    views = {}
    by_access = {}
    for v in r.views:
        if v.id in views:
            sink.error(f"view '{v.id}' is defined twice {where}", v.loc)
        views[v.id] = v
        by_access[(v.tensor, v.indices)] = v
    insts = {}
    for e in r.exprs:
        if e.id in insts:
            sink.error(f"expression '{e.id}' is defined twice {where}", e.loc)
        insts[e.id] = e

    def check_indices(names, loc, what) -> None:
        for n in names:
            if n not in idx:
                sink.error(f"{what} uses undeclared index '{n}' {where}", loc)

    def check_access(a: ast.Access, e: ir.Instance) -> None:
        t = tensors.get(a.tensor)
        if t is None:
            sink.error(f"expression '{e.id}' reads undeclared tensor '{a.tensor}'", e.loc)
            return
        if len(a.indices) != len(t.dims):
            sink.error(f"expression '{e.id}' indexes '{a.tensor}' with {len(a.indices)} "
                       f"indices, but it has {len(t.dims)} dims", e.loc)
        if (a.tensor, a.indices) not in by_access:
            sink.error(f"expression '{e.id}' reads {a.tensor}[{','.join(a.indices)}], which "
                       f"has no view {where}", e.loc)

    for e in r.exprs:
        t = tensors.get(e.statement)
        if t is None or t.role in ("input", "permuted"):
            sink.error(f"expression '{e.id}' assigns '{e.statement}', which is not a computed "
                       f"tensor", e.loc)
        elif len(e.lhs) != len(t.dims):
            sink.error(f"expression '{e.id}' assigns '{e.statement}' with {len(e.lhs)} indices, "
                       f"but it has {len(t.dims)} dims", e.loc)
        check_indices(e.lhs, e.loc, f"expression '{e.id}'")
        check_indices([g for _, g in e.index_map], e.loc, f"expression '{e.id}'")
        for x in e.expr.walk():
            if isinstance(x, ast.Access):
                check_indices(x.indices, e.loc, f"expression '{e.id}'")
                check_access(x, e)
            elif isinstance(x, ast.Reduce):
                check_indices(x.indices, e.loc, f"expression '{e.id}'")
        if e.writes:
            if e.statement in writers:
                sink.error(f"'{e.statement}' is written twice (regions '{writers[e.statement]}' "
                           f"and '{r.name}')", e.loc)
            writers[e.statement] = r.name
    for v in r.views:
        t = tensors.get(v.tensor)
        check_indices(v.indices, v.loc, f"view '{v.id}'")
        if t is None:
            sink.error(f"view '{v.id}' reads undeclared tensor '{v.tensor}'", v.loc)
            continue
        if len(v.indices) != len(t.dims):
            sink.error(f"view '{v.id}' binds {len(v.indices)} indices to '{v.tensor}', which "
                       f"has {len(t.dims)} dims", v.loc)
            continue
        if sorted(v.mode_order) != sorted(v.indices):
            sink.error(f"view '{v.id}': its mode order must list its indices", v.loc)
        if v.kind == "inline":
            p = insts.get(v.producer)
            if p is None:
                sink.error(f"view '{v.id}' is produced by undefined expression "
                           f"'{v.producer}'", v.loc)
            elif (p.statement, p.lhs) != (v.tensor, v.indices):
                sink.error(f"view '{v.id}' reads {v.tensor}[{','.join(v.indices)}] but "
                           f"'{v.producer}' computes {p.statement}[{','.join(p.lhs)}]", v.loc)
            continue
        want = {"input": ("input",), "materialized": ("intermediate", "output"),
                "permuted": ("permuted",)}[v.kind]
        if t.role not in want:
            sink.error(f"view '{v.id}' is {v.kind} but '{v.tensor}' is declared {t.role}",
                       v.loc)
        stored = tuple(v.indices[m] for m in t.format.mode_order)
        if v.mode_order != stored:
            sink.error(f"view '{v.id}': mode order ({', '.join(v.mode_order)}) does not match "
                       f"the storage order of '{v.tensor}' ({', '.join(stored)})", v.loc)
    for e in r.edges:
        check_indices((e.src, e.dst), e.loc, "edge")
        if e.kind == "format" and (e.view not in views or views[e.view].tensor != e.tensor):
            sink.error(f"edge names view '{e.view}' of '{e.tensor}', which is not a view "
                       f"{where}", e.loc)
    if sorted(r.order) != sorted(idx):
        sink.error(f"the order of region '{r.name}' must list each of its indices once",
                   r.order_loc or r.loc)
    else:
        pos = {n: k for k, n in enumerate(r.order)}
        for e in r.edges:
            if e.src in pos and e.dst in pos and pos[e.src] > pos[e.dst]:
                sink.error(f"the order of region '{r.name}' puts {e.dst} outside {e.src}, "
                           f"against edge {e.src} -> {e.dst}", r.order_loc or r.loc)
    for p in r.parallel:
        check_indices((p.index,), r.loc, "parallelize")
