"""Checking a fused IR read from text: every reference resolves, every view agrees with its
tensor's format, the chosen order is a linear extension of the POG, and every expression is one
lowering can take (the checks the program checker makes on statements, on the instances; reads
of stored tensors only after a region writes them; inlining without cycles and within the
nesting limit). Errors are located at the offending line of the IR text and reported together.
"""

from __future__ import annotations

from ..diagnostics import DiagnosticSink
from ..formats import copy_levels
from ..lang import ast
from ..lang.checker import call_problem, reduce_problems
from ..limits import MAX_NESTING
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
    bad: set[str] = set()  # tensors whose declaration is broken: no view checks against them
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
            bad.add(t.name)
        if t.format.blocked and t.block is None:
            sink.error(f"tensor '{t.name}' has the blocked format {t.format.name()} but no "
                       f"block size (`block B` after its role)", t.loc)
        elif t.block is not None and not t.format.blocked:
            sink.error(f"tensor '{t.name}' has a block size but its format {t.format.name()} "
                       f"is not blocked", t.loc)
        if t.role in ("output", "intermediate") and not t.format.classic:
            sink.error(f"tensor '{t.name}' is computed, but its format {t.format.name()} has a "
                       f"singleton or fixed-length level (input formats only)", t.loc)
    for t in f.tensors:
        if t.role == "permuted":
            base = tensors.get(t.copy_of)
            if base is None:
                sink.error(f"permuted tensor '{t.name}' is a copy of undeclared '{t.copy_of}'",
                           t.loc)
            elif base.role == "permuted":
                sink.error(f"permuted tensor '{t.name}' is a copy of '{t.copy_of}', itself a "
                           f"copy: copy the original", t.loc)
            elif base.block != t.block and (base.dims != t.dims
                                            or base.format.levels != t.format.levels
                                            or base.format.mode_order != t.format.mode_order):
                sink.error(f"permuted tensor '{t.name}' has another block size than "
                           f"'{t.copy_of}' (a re-blocked copy): it must have the dims, level "
                           f"formats and mode order of '{t.copy_of}'", t.loc)
            elif base.block == t.block and (base.dims != t.dims
                                            or copy_levels(base.format) != t.format.levels):
                sink.error(f"permuted tensor '{t.name}' must have the dims, level formats and "
                           f"block size of '{t.copy_of}' (compressed for its compressed(c) "
                           f"levels), only its mode order may differ", t.loc)
        elif t.role == "part":
            base = tensors.get(t.copy_of)
            if base is None or base.role != "input":
                sink.error(f"part '{t.name}' is a part of '{t.copy_of}', which is not a declared "
                           f"input", t.loc)
            elif base.dims != t.dims or len(t.dims) != 2:
                sink.error(f"part '{t.name}' must be a matrix with the dims of "
                           f"'{t.copy_of}'", t.loc)
            elif (t.threshold is None) == t.format.blocked:
                sink.error(f"part '{t.name}': a blocked part has a fill threshold in (0, 1] "
                           f"(`part of A >= 0.5`), the residual none", t.loc)
            elif t.threshold is not None and not 0 < t.threshold <= 1:
                sink.error(f"part '{t.name}': threshold {t.threshold!r} is not in (0, 1]",
                           t.loc)
    writers: dict[str, str] = {}
    names = set()
    for r in f.regions:
        if r.name in names:
            sink.error(f"region '{r.name}' is defined twice", r.loc)
        names.add(r.name)
        _region(r, tensors, dims, sink, writers, bad)
    for t in f.tensors:
        if t.role == "output" and t.name not in writers:
            sink.error(f"output '{t.name}' is written by no region (no expression assigning it "
                       f"is marked `writes`)", t.loc)
    sink.raise_if_any()


def _same_dim(a, b, dims) -> bool:
    """Whether two dims (names or sizes) are the same extent: equal, or fixed to one size."""
    if a == b:
        return True
    sa = a if isinstance(a, int) else dims.get(a)
    sb = b if isinstance(b, int) else dims.get(b)
    return sa is not None and sa == sb


def _region(r: ir.Region, tensors, dims, sink: DiagnosticSink, writers: dict[str, str],
            bad: set[str]) -> None:
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

    def check_dims(names, t: ir.TensorInfo, loc, what) -> None:
        """Each index of an access ranges over the tensor's dim at its mode."""
        for m, (n, d) in enumerate(zip(names, t.dims)):
            if n in idx and not _same_dim(idx[n], d, dims):
                sink.error(f"{what}: index '{n}' ranges over {idx[n]} but mode {m} of "
                           f"'{t.name}' is {d}", loc)

    def check_access(a: ast.Access, e: ir.Instance) -> None:
        t = tensors.get(a.tensor)
        if t is None:
            sink.error(f"expression '{e.id}' reads undeclared tensor '{a.tensor}'", a.loc)
            return
        if len(a.indices) != len(t.dims):
            sink.error(f"expression '{e.id}' indexes '{a.tensor}' with {len(a.indices)} "
                       f"indices, but it has {len(t.dims)} dims", a.loc)
        if len(set(a.indices)) != len(a.indices):
            sink.error(f"expression '{e.id}' indexes '{a.tensor}' with a repeated index "
                       f"({', '.join(a.indices)}); diagonal access is not supported", a.loc)
        if (a.tensor, a.indices) not in by_access:
            sink.error(f"expression '{e.id}' reads {a.tensor}[{','.join(a.indices)}], which "
                       f"has no view {where}", a.loc)

    written: dict[str, str] = {}  # by this region (its graph cannot read them back)
    for e in r.exprs:
        t = tensors.get(e.statement)
        if t is None or t.role in ("input", "permuted"):
            sink.error(f"expression '{e.id}' assigns '{e.statement}', which is not a computed "
                       f"tensor", e.loc)
        elif len(e.lhs) != len(t.dims):
            sink.error(f"expression '{e.id}' assigns '{e.statement}' with {len(e.lhs)} indices, "
                       f"but it has {len(t.dims)} dims", e.loc)
        else:
            check_dims(e.lhs, t, e.loc, f"expression '{e.id}'")
        check_indices(e.lhs, e.loc, f"expression '{e.id}'")
        if len(set(e.lhs)) != len(e.lhs):
            sink.error(f"expression '{e.id}' assigns '{e.statement}' with a repeated index "
                       f"({', '.join(e.lhs)})", e.loc)
        check_indices([g for _, g in e.index_map], e.loc, f"expression '{e.id}'")
        for x in e.expr.walk():
            if isinstance(x, ast.Access):
                check_indices(x.indices, x.loc or e.loc, f"expression '{e.id}'")
                check_access(x, e)
            elif isinstance(x, ast.Reduce):
                check_indices(x.indices, x.loc or e.loc, f"expression '{e.id}'")
                for msg in reduce_problems(x, e.expr, e.lhs, e.statement):
                    sink.error(f"expression '{e.id}': {msg}", x.loc or e.loc)
            elif isinstance(x, ast.Call):
                msg = call_problem(x)
                if msg is not None:
                    sink.error(f"expression '{e.id}': {msg}", x.loc or e.loc)
        free = ast.indices_of(e.expr)
        for i in free:
            if i not in e.lhs:
                sink.error(f"expression '{e.id}' uses index '{i}' on its right side, which is "
                           f"neither on its left side nor reduced (fused IR makes every "
                           f"reduction explicit)", e.loc)
        for i in e.lhs:
            if i not in free:
                sink.error(f"index '{i}' of '{e.statement}' in expression '{e.id}' is bound "
                           f"nowhere on the right side", e.loc)
        if e.writes:
            if e.statement in writers or e.statement in written:
                first = writers.get(e.statement, r.name)
                sink.error(f"'{e.statement}' is written twice (regions '{first}' and "
                           f"'{r.name}')", e.loc)
            written.setdefault(e.statement, r.name)
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
        check_dims(v.indices, t, v.loc, f"view '{v.id}'")
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
        want = {"input": ("input", "part"), "materialized": ("intermediate", "output"),
                "permuted": ("permuted",)}[v.kind]
        if t.role not in want:
            sink.error(f"view '{v.id}' is {v.kind} but '{v.tensor}' is declared {t.role}",
                       v.loc)
        elif v.kind == "materialized" and v.tensor not in writers:
            sink.error(f"view '{v.id}' reads '{v.tensor}' back from memory, but no earlier "
                       f"region writes it", v.loc)
        elif v.kind == "permuted":
            base = tensors.get(t.copy_of)
            if base is not None and base.role != "input" and base.name not in writers:
                sink.error(f"view '{v.id}' reads '{v.tensor}', a copy of '{base.name}', which "
                           f"no earlier region writes", v.loc)
        if v.tensor in bad:
            continue
        stored = tuple(v.indices[m] for m in t.format.mode_order)
        if v.mode_order != stored:
            sink.error(f"view '{v.id}': mode order ({', '.join(v.mode_order)}) does not match "
                       f"the storage order of '{v.tensor}' ({', '.join(stored)})", v.loc)
    _inlining(r, insts, by_access, sink)
    for name, region in written.items():
        writers.setdefault(name, region)
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


def check_inlining(f: ir.FusedProgram, statement_locs: dict) -> None:
    """Raise UserError when an expression of `f` with its inlined producers is nested deeper
    than MAX_NESTING (what `fuse` checks of its output: statements each within the limit may
    exceed it together); errors are located at the statements (`statement_locs`)."""
    sink = DiagnosticSink()
    for r in f.regions:
        _inlining(r, {e.id: e for e in r.exprs}, {(v.tensor, v.indices): v for v in r.views},
                  sink, statement_locs)
    sink.raise_if_any()


def _inlining(r: ir.Region, insts: dict[str, ir.Instance], by_access, sink: DiagnosticSink,
              statement_locs: dict | None = None) -> None:
    """Lowering expands every inline view into its producer's expression: the producers must
    not read their own results (a cycle), and the expanded trees must stay within MAX_NESTING
    (a reduction over n indices counts n levels: lowering splits it). Errors are located at
    the instances, or at their statements in `statement_locs`."""

    def loc(eid: str):
        e = insts[eid]
        return statement_locs.get(e.statement) if statement_locs is not None else e.loc

    depth: dict[str, int] = {}
    state: dict[str, str] = {}

    def producers(e: ir.Instance) -> list[str]:
        out = []
        for a in e.expr.walk():
            if isinstance(a, ast.Access):
                v = by_access.get((a.tensor, a.indices))
                if v is not None and v.kind == "inline" and v.producer in insts:
                    out.append(v.producer)
        return out

    def nesting(x: ast.Expr) -> int:
        if isinstance(x, ast.Access):
            v = by_access.get((x.tensor, x.indices))
            return depth.get(v.producer, 0) if v is not None and v.kind == "inline" else 0
        own = len(x.indices) if isinstance(x, ast.Reduce) else 0 if isinstance(x, ast.Const) \
            else 1
        return own + max((nesting(c) for c in x.children()), default=0)

    for root in r.exprs:  # depth first over producers, iteratively (chains may be long)
        if root.id in state:
            continue
        stack = [(root.id, iter(producers(root)))]
        state[root.id] = "open"
        while stack:
            eid, todo = stack[-1]
            nxt = next(todo, None)
            if nxt is None:
                stack.pop()
                state[eid] = "done"
                depth[eid] = nesting(insts[eid].expr)
                if depth[eid] > MAX_NESTING:
                    sink.error(f"statement {insts[eid].statement} (expression '{eid}') is "
                               f"nested {depth[eid]} levels deep once lowered (a reduction over "
                               f"n indices is n levels, and the statements inlined into it add "
                               f"theirs), more than {MAX_NESTING}: fuse fewer statements into "
                               f"region '{r.name}', or reduce over fewer indices at once",
                               loc(eid))
                    depth[eid] = 0  # reported once, not again by every consumer
            elif state.get(nxt) == "open":
                sink.error(f"expression '{nxt}' reads its own result through inline views "
                           f"(a cycle of inlined producers {eid} -> {nxt})", loc(nxt))
            elif nxt not in state:
                state[nxt] = "open"
                stack.append((nxt, iter(producers(insts[nxt]))))
