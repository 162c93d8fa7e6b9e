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
from . import ir, rebind


def verify_fused(f: ir.FusedProgram) -> None:
    """Raise UserError listing every structural error of `f`."""
    sink = DiagnosticSink()
    dims = _dims(f, sink)
    tensors, bad = _tensors(f, dims, sink)
    for t in f.tensors:
        if t.role == "permuted":
            _permuted(t, tensors, sink)
        elif t.role == "part":
            _part(t, tensors, sink)
    writers: dict[str, str] = {}
    names = set()
    clean: dict[str, ir.Region] = {}   # regions that are no copy and passed every check
    names_of: dict = {}
    for r in f.regions:
        if r.name in names:
            sink.error(f"region '{r.name}' is defined twice", r.loc)
        names.add(r.name)
        t = clean.get(r.template) if r.template is not None else None
        if t is not None and _copy_clean(r, _renaming(t, r, f.bindings, names_of), tensors,
                                         writers):
            continue
        before = len(sink.errors)
        _RegionCheck(r, tensors, dims, sink, writers, bad).run()
        if r.template is None and len(sink.errors) == before:
            clean[r.name] = r
    for t in f.tensors:
        if t.role == "output" and t.name not in writers:
            sink.error(f"output '{t.name}' is written by no region (no expression assigning it "
                       f"is marked `writes`)", t.loc)
    sink.raise_if_any()


def _copy_clean(c: ir.Region, names: dict | None, tensors: dict,
                writers: dict[str, str]) -> bool:
    """Whether region `c`, a reused iteration's copy of a region that passed every check of
    _RegionCheck (rebind.rename_region's, `names`: its renaming, one-to-one: `_renaming`; None
    when it is not), passes them too; then `writers` gains what c writes. The checks that look
    at the region's structure hold for c as for its template when each renamed tensor is
    declared with the template's tensor's dims and format (so either both or neither
    declaration is broken: `bad`); the checks that read roles and what earlier regions wrote
    are made again here. False leaves `writers` as it was (the region is then checked in
    full, for its messages)."""
    if names is None:
        return False
    for a, b in names.items():
        ta, tb = tensors.get(a), tensors.get(b)
        if (ta is None) != (tb is None):
            return False
        if ta is not None and (ta.dims != tb.dims or ta.format != tb.format):
            return False
    written = set()
    for e in c.exprs:
        role = tensors[e.statement].role
        if role in ("input", "permuted") or e.writes and (e.statement in writers
                                                          or e.statement in written):
            return False
        if e.writes:
            written.add(e.statement)
    for v in c.views:
        tv = tensors[v.tensor]
        if v.kind == "shared" and tv.role != "intermediate" or v.kind not in (
                "inline", "shared") and _source_problem(v, tv, tensors, writers) is not None:
            return False
    for e in c.exprs:
        if e.writes:
            writers.setdefault(e.statement, c.name)
    return True


def _source_problem(v, t: ir.TensorInfo, tensors: dict, writers: dict) -> str | None:
    """What is wrong with view `v` (of a kind read from memory) reading tensor `t`, given the
    tensors earlier regions wrote (`writers`), or None."""
    if t.role not in _VIEW_ROLES[v.kind]:
        return f"view '{v.id}' is {v.kind} but '{v.tensor}' is declared {t.role}"
    if v.kind == "materialized" and v.tensor not in writers:
        return (f"view '{v.id}' reads '{v.tensor}' back from memory, but no earlier region "
                f"writes it")
    if v.kind == "permuted":
        base = tensors.get(t.copy_of)
        while base is not None and base.role == "permuted" and base.copy_of != base.name:
            base = tensors.get(base.copy_of)   # a copy of a re-blocked copy
        if base is not None and base.role not in ("input", "part") \
                and base.name not in writers:   # (a part: made by its decompose step)
            return (f"view '{v.id}' reads '{v.tensor}', a copy of '{base.name}', which no "
                    f"earlier region writes")
    return None


def _dims(f: ir.FusedProgram, sink: DiagnosticSink) -> dict:
    """The declared dims (name -> size or None), each declared once."""
    dims = {}
    for name, size in f.dims:
        if name in dims:
            sink.error(f"dim '{name}' is declared twice")
        dims[name] = size
    return dims


def _tensors(f: ir.FusedProgram, dims: dict,
             sink: DiagnosticSink) -> tuple[dict[str, ir.TensorInfo], set[str]]:
    """The declared tensors by name, and the names of those whose declaration is broken (no
    view is checked against them): each declared once, over declared dims, with a format of
    its order, a block size exactly when blocked, and a classic format when computed."""
    tensors: dict[str, ir.TensorInfo] = {}
    bad: set[str] = set()
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
    return tensors, bad


def _permuted(t: ir.TensorInfo, tensors: dict, sink: DiagnosticSink) -> None:
    """A permuted tensor copies a declared original: the same dims and levels (compressed for
    compressed(c)) and block size, only another mode order; or, re-blocked, the same dims,
    level formats and mode order."""
    base = tensors.get(t.copy_of)
    if base is None:
        sink.error(f"permuted tensor '{t.name}' is a copy of undeclared '{t.copy_of}'",
                   t.loc)
    elif base.role == "permuted" and not _reblocked(base, tensors):
        sink.error(f"permuted tensor '{t.name}' is a copy of '{t.copy_of}', itself a "
                   f"copy: copy the original (only a re-blocked copy may be copied again, "
                   f"into another mode order)", t.loc)
    elif base.role == "permuted" and base.block != t.block:
        sink.error(f"permuted tensor '{t.name}' copies the re-blocked copy '{t.copy_of}': it "
                   f"must keep its block size", t.loc)
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


def _reblocked(t: ir.TensorInfo, tensors: dict) -> bool:
    """Whether permuted tensor `t` is a re-blocked copy of a tensor that is no copy (a
    decomposition's blocked operand, B__b16 of B): the one kind of copy that may be copied
    again, when a region reads it in another mode order (a step cannot re-block and reorder
    at once: the blocked side of a re-blocking permute is stored row-major)."""
    base = tensors.get(t.copy_of)
    return base is not None and base.role != "permuted" and base.block != t.block


def _part(t: ir.TensorInfo, tensors: dict, sink: DiagnosticSink) -> None:
    """A part of a declared input matrix: blocked with a fill threshold in (0, 1], or the
    residual without one."""
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


def _same_dim(a, b, dims) -> bool:
    """Whether two dims (names or sizes) are the same extent: equal, or fixed to one size."""
    if a == b:
        return True
    sa = a if isinstance(a, int) else dims.get(a)
    sb = b if isinstance(b, int) else dims.get(b)
    return sa is not None and sa == sb


# Views by kind -> the roles of the tensors they may read.
_VIEW_ROLES = {"input": ("input", "part"), "materialized": ("intermediate", "output"),
               "permuted": ("permuted",)}


class _RegionCheck:
    """The checks of one region, in this order: its declarations (indices, views,
    expressions), each expression, each view, inlining, then its edges, order and parallel
    directives. `writers` (tensor -> the region writing it) gains the region's writes after
    its views are checked (a region cannot read back what it writes itself)."""

    def __init__(self, r: ir.Region, tensors, dims, sink: DiagnosticSink,
                 writers: dict[str, str], bad: set[str]):
        self.r, self.tensors, self.dims, self.sink = r, tensors, dims, sink
        self.writers, self.bad = writers, bad
        self.where = f"in region '{r.name}'"
        self.idx: dict[str, object] = {}
        self.views: dict = {}
        self.by_access: dict = {}
        self.insts: dict = {}
        self.written: dict[str, str] = {}  # by this region (its graph cannot read them back)

    def run(self) -> None:
        r = self.r
        self.declarations()
        for e in r.exprs:
            self.expression(e)
        for v in r.views:
            self.view(v)
        _inlining(r, self.insts, self.by_access, self.sink)
        for name, region in self.written.items():
            self.writers.setdefault(name, region)
        self.edges_and_order()
        for p in r.parallel:
            self.check_indices((p.index,), r.loc, "parallelize")

    def declarations(self) -> None:
        """Indices over declared dims, views and expressions, each defined once."""
        r, sink, where = self.r, self.sink, self.where
        for name, d in r.indices:
            if name in self.idx:
                sink.error(f"index '{name}' is declared twice {where}", r.loc)
            if isinstance(d, str) and d not in self.dims:
                sink.error(f"index '{name}' ranges over undeclared dim '{d}' {where}", r.loc)
            self.idx[name] = d
        for v in r.views:
            if v.id in self.views:
                sink.error(f"view '{v.id}' is defined twice {where}", v.loc)
            self.views[v.id] = v
            self.by_access[(v.tensor, v.indices)] = v
        for e in r.exprs:
            if e.id in self.insts:
                sink.error(f"expression '{e.id}' is defined twice {where}", e.loc)
            self.insts[e.id] = e

    def check_indices(self, names, loc, what) -> None:
        for n in names:
            if n not in self.idx:
                self.sink.error(f"{what} uses undeclared index '{n}' {self.where}", loc)

    def check_dims(self, names, t: ir.TensorInfo, loc, what) -> None:
        """Each index of an access ranges over the tensor's dim at its mode."""
        idx = self.idx
        for m, (n, d) in enumerate(zip(names, t.dims)):
            if n in idx and not _same_dim(idx[n], d, self.dims):
                self.sink.error(f"{what}: index '{n}' ranges over {idx[n]} but mode {m} of "
                                f"'{t.name}' is {d}", loc)

    def check_access(self, a: ast.Access, e: ir.Instance) -> None:
        sink = self.sink
        t = self.tensors.get(a.tensor)
        if t is None:
            sink.error(f"expression '{e.id}' reads undeclared tensor '{a.tensor}'", a.loc)
            return
        if len(a.indices) != len(t.dims):
            sink.error(f"expression '{e.id}' indexes '{a.tensor}' with {len(a.indices)} "
                       f"indices, but it has {len(t.dims)} dims", a.loc)
        if len(set(a.indices)) != len(a.indices):
            sink.error(f"expression '{e.id}' indexes '{a.tensor}' with a repeated index "
                       f"({', '.join(a.indices)}); diagonal access is not supported", a.loc)
        if (a.tensor, a.indices) not in self.by_access:
            sink.error(f"expression '{e.id}' reads {a.tensor}[{','.join(a.indices)}], which "
                       f"has no view {self.where}", a.loc)

    # ---- expressions -------------------------------------------------------------------------
    def expression(self, e: ir.Instance) -> None:
        """One expression: its left side, the terms of its right side, its free indices, and
        at most one writer per tensor."""
        self.left_side(e)
        self.check_indices([g for _, g in e.index_map], e.loc, f"expression '{e.id}'")
        for x in e.expr.walk():
            self.term(x, e)
        self.free_indices(e)
        if e.writes:
            if e.statement in self.writers or e.statement in self.written:
                first = self.writers.get(e.statement, self.r.name)
                self.sink.error(f"'{e.statement}' is written twice (regions '{first}' and "
                                f"'{self.r.name}')", e.loc)
            self.written.setdefault(e.statement, self.r.name)

    def left_side(self, e: ir.Instance) -> None:
        sink = self.sink
        t = self.tensors.get(e.statement)
        if t is None or t.role in ("input", "permuted"):
            sink.error(f"expression '{e.id}' assigns '{e.statement}', which is not a computed "
                       f"tensor", e.loc)
        elif len(e.lhs) != len(t.dims):
            sink.error(f"expression '{e.id}' assigns '{e.statement}' with {len(e.lhs)} indices, "
                       f"but it has {len(t.dims)} dims", e.loc)
        else:
            self.check_dims(e.lhs, t, e.loc, f"expression '{e.id}'")
        self.check_indices(e.lhs, e.loc, f"expression '{e.id}'")
        if len(set(e.lhs)) != len(e.lhs):
            sink.error(f"expression '{e.id}' assigns '{e.statement}' with a repeated index "
                       f"({', '.join(e.lhs)})", e.loc)

    def term(self, x: ast.Expr, e: ir.Instance) -> None:
        """One node of e's right side: accesses, reductions and calls."""
        sink = self.sink
        if isinstance(x, ast.Access):
            self.check_indices(x.indices, x.loc or e.loc, f"expression '{e.id}'")
            self.check_access(x, e)
        elif isinstance(x, ast.Reduce):
            self.check_indices(x.indices, x.loc or e.loc, f"expression '{e.id}'")
            for msg in reduce_problems(x, e.expr, e.lhs, e.statement):
                sink.error(f"expression '{e.id}': {msg}", x.loc or e.loc)
        elif isinstance(x, ast.Call):
            msg = call_problem(x)
            if msg is not None:
                sink.error(f"expression '{e.id}': {msg}", x.loc or e.loc)

    def free_indices(self, e: ir.Instance) -> None:
        """The right side's free indices are the left side's."""
        free = ast.indices_of(e.expr)
        for i in free:
            if i not in e.lhs:
                self.sink.error(f"expression '{e.id}' uses index '{i}' on its right side, "
                                f"which is neither on its left side nor reduced (fused IR makes "
                                f"every reduction explicit)", e.loc)
        for i in e.lhs:
            if i not in free:
                self.sink.error(f"index '{i}' of '{e.statement}' in expression '{e.id}' is "
                                f"bound nowhere on the right side", e.loc)

    # ---- views -------------------------------------------------------------------------------
    def view(self, v) -> None:
        """One view: a declared tensor of its order, its mode order; an inline view's producer,
        else the tensor's role and (for reads from memory) its writer, and its storage order."""
        sink = self.sink
        t = self.tensors.get(v.tensor)
        self.check_indices(v.indices, v.loc, f"view '{v.id}'")
        if t is None:
            sink.error(f"view '{v.id}' reads undeclared tensor '{v.tensor}'", v.loc)
            return
        if len(v.indices) != len(t.dims):
            sink.error(f"view '{v.id}' binds {len(v.indices)} indices to '{v.tensor}', which "
                       f"has {len(t.dims)} dims", v.loc)
            return
        self.check_dims(v.indices, t, v.loc, f"view '{v.id}'")
        if sorted(v.mode_order) != sorted(v.indices):
            sink.error(f"view '{v.id}': its mode order must list its indices", v.loc)
        if v.kind == "inline":
            self.inline_view(v)
            return
        if v.kind == "shared":
            self.shared_view(v, t)
        else:
            self.view_source(v, t)
        if v.tensor in self.bad:
            return
        stored = tuple(v.indices[m] for m in t.format.mode_order)
        if v.mode_order != stored:
            sink.error(f"view '{v.id}': mode order ({', '.join(v.mode_order)}) does not match "
                       f"the storage order of '{v.tensor}' ({', '.join(stored)})", v.loc)

    def inline_view(self, v) -> None:
        """An inline view reads exactly what its producer computes."""
        p = self.insts.get(v.producer)
        if p is None:
            self.sink.error(f"view '{v.id}' is produced by undefined expression "
                            f"'{v.producer}'", v.loc)
        elif (p.statement, p.lhs) != (v.tensor, v.indices):
            self.sink.error(f"view '{v.id}' reads {v.tensor}[{','.join(v.indices)}] but "
                            f"'{v.producer}' computes {p.statement}[{','.join(p.lhs)}]", v.loc)

    def shared_view(self, v, t: ir.TensorInfo) -> None:
        """A shared view reads the stream of an expression of its region computing its tensor
        (an intermediate, not stored: no expression of the region writes it)."""
        p = self.insts.get(v.producer)
        if p is None:
            self.sink.error(f"view '{v.id}' is produced by undefined expression "
                            f"'{v.producer}'", v.loc)
        elif p.statement != v.tensor:
            self.sink.error(f"view '{v.id}' reads {v.tensor} but '{v.producer}' computes "
                            f"{p.statement}", v.loc)
        elif t.role != "intermediate" or p.writes:
            self.sink.error(f"view '{v.id}' is shared, so '{v.tensor}' must be an intermediate "
                            f"its producer '{v.producer}' does not write", v.loc)

    def view_source(self, v, t: ir.TensorInfo) -> None:
        """A view from memory reads a tensor of a role its kind allows, written by an earlier
        region unless it is an input (or a copy of one)."""
        msg = _source_problem(v, t, self.tensors, self.writers)
        if msg is not None:
            self.sink.error(msg, v.loc)

    # ---- edges and order ---------------------------------------------------------------------
    def edges_and_order(self) -> None:
        """Edges between declared indices naming views of the region; the order lists every
        index once, as a linear extension of the edges."""
        r, sink = self.r, self.sink
        for e in r.edges:
            self.check_indices((e.src, e.dst), e.loc, "edge")
            if e.kind == "format" and (e.view not in self.views
                                       or self.views[e.view].tensor != e.tensor):
                sink.error(f"edge names view '{e.view}' of '{e.tensor}', which is not a view "
                           f"{self.where}", e.loc)
        if sorted(r.order) != sorted(self.idx):
            sink.error(f"the order of region '{r.name}' must list each of its indices once",
                       r.order_loc or r.loc)
            return
        pos = {n: k for k, n in enumerate(r.order)}
        for e in r.edges:
            if e.src in pos and e.dst in pos and pos[e.src] > pos[e.dst]:
                sink.error(f"the order of region '{r.name}' puts {e.dst} outside {e.src}, "
                           f"against edge {e.src} -> {e.dst}", r.order_loc or r.loc)


def check_inlining(f: ir.FusedProgram, statement_locs: dict) -> None:
    """Raise UserError when an expression of `f` with its inlined producers is nested deeper
    than MAX_NESTING (what `fuse` checks of its output: statements each within the limit may
    exceed it together); errors are located at the statements (`statement_locs`)."""
    sink = DiagnosticSink()
    clean: dict[str, ir.Region] = {}
    names_of: dict = {}
    for r in f.regions:
        t = clean.get(r.template) if r.template is not None else None
        if t is not None and _renaming(t, r, f.bindings, names_of) is not None:
            continue   # a renamed copy of a clean template: the same structure
        before = len(sink.errors)
        _inlining(r, {e.id: e for e in r.exprs}, {(v.tensor, v.indices): v for v in r.views},
                  sink, statement_locs)
        if r.template is None and len(sink.errors) == before:
            clean[r.name] = r
    sink.raise_if_any()


def _renaming(t: ir.Region, c: ir.Region, bindings: dict, names_of: dict) -> dict | None:
    """{t's name: c's} for every name of region `t` when `c` is a copy of `t` that
    rebind.rename_region made with its iteration's binding (`bindings[c.bound]`) and that
    renaming is one-to-one on t's names; else None. `names_of` caches each template's names."""
    rho = bindings.get(c.bound)
    if rho is None:
        return None
    own = names_of.get(t.name)
    if own is None:
        own = names_of[t.name] = set(rebind.region_names(t))
    out = {x: rho.get(x, x) for x in own}
    return out if len(set(out.values())) == len(own) else None


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
                if v is not None and v.kind in ("inline", "shared") and v.producer in insts:
                    out.append(v.producer)   # (a shared stream is computed before its readers)
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
