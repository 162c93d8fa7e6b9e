"""Semantic checks of a parsed program, and normalization (implicit sums made explicit).

`check(program)` reports every problem it finds as a located error and returns a program whose
statements carry `expr` (the right side with implicit summations as explicit `sum[...]` nodes) and
`index_dims` (the dimension every index variable ranges over).

Implicit summation (einsum): an index on the right that is not on the left is summed over the
smallest subexpression containing all its uses, so `y[i] = A[i,j]*x[j] + b[i]` is A x + b. Where
that subexpression sits inside a non-linear context (a function argument other than mask's first,
a denominator, a max reduction) the placement would change the result, so it is an error asking
for an explicit `sum[j](...)`.
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from ..diagnostics import Diagnostic, DiagnosticSink, Loc
from ..ops import FUNC_ARITY, LANG_REDUCE
from . import ast
from .decompose import problems as decompose_problems
from .densify import hoist_dense


def _suggest(name: str, known) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check(program: ast.Program) -> ast.Program:
    """Check `program`; raise UserError listing every error; return the normalized program."""
    return _Checker(hoist_dense(program)).run()


class _Checker:
    def __init__(self, program: ast.Program):
        self.p = program
        self.sink = DiagnosticSink()
        self.dims: dict[str, ast.DimDecl] = {}
        self.tensors: dict[str, ast.TensorDecl] = {}
        # Loop context (programs with lists): the enclosing loops, the carried states in scope,
        # and the loop that computes each body-local tensor.
        self.scope: list[ast.Loop] = []
        self.states: dict[str, ast.Loop] = {}
        self.local_owner: dict[str, ast.Loop] = {}
        self.assigned_anywhere: set[str] = set()
        self._first: tuple | None = None
        self._index_names: tuple | None = None
        self.warnings: list[Diagnostic] = []   # located, one per place (see `warned`)

    def first_statement(self, name: str) -> ast.Assignment | None:
        """The first statement of the program that assigns `name` (a dict made once per
        statement list: a scan per access made checking an unrolled loop quadratic, found by
        fuzzing: a map over 10,000 iterations took minutes)."""
        stmts = self.p.statements
        if self._first is None or self._first[0] is not stmts:
            first: dict[str, ast.Assignment] = {}
            for x in stmts:
                first.setdefault(x.name, x)
            self._first = (stmts, first)
        return self._first[1].get(name)

    def index_names(self) -> set[str]:
        """The names of the program's index lists (made once per list of them)."""
        if self._index_names is None or self._index_names[0] is not self.p.indices:
            self._index_names = (self.p.indices, {x.name for x in self.p.indices})
        return self._index_names[1]

    def warn(self, msg: str, loc: Loc | None) -> None:
        self.warnings.append(Diagnostic(msg, loc, "warning"))

    def warned(self, *more: list[Diagnostic]) -> list[Diagnostic]:
        """Every warning once per place: a loop body is checked as written, then once per
        iteration unrolled (where tensors are renamed); the first, as written, is kept."""
        out, seen = [], set()
        for d in [w for ws in (self.warnings, *more) for w in ws]:
            key = (d.loc.source.name if d.loc and d.loc.source else None,
                   d.loc.line, d.loc.col) if d.loc else d.message
            if key not in seen:
                seen.add(key)
                out.append(d)
        return out

    def err(self, msg: str, loc: Loc | None) -> None:
        self.sink.error(msg, loc)

    def note(self, msg: str, loc: Loc | None) -> None:
        self.sink.note(msg, loc)

    def run(self) -> ast.Program:
        self.declarations()
        if self.p.loops or self.p.indices or any(t.lists for t in self.p.tensors):
            return self.run_looped()
        statements = self.statements()
        self.directives(statements)
        self.sink.raise_if_any()
        return replace(self.p, statements=statements, warnings=self.warned())

    # ---- declarations -----------------------------------------------------------------------
    def declarations(self) -> None:
        for d in self.p.dims:
            if d.name in self.dims:
                self.err(f"dimension {d.name} is declared twice", d.loc)
                self.note("first declared here", self.dims[d.name].loc)
            else:
                self.dims[d.name] = d
        for t in self.p.tensors:
            if t.name in self.tensors:
                self.err(f"tensor {t.name} is declared twice", t.loc)
                self.note("first declared here", self.tensors[t.name].loc)
                continue
            self.tensors[t.name] = t
            if t.order == 0:
                self.err(f"tensor {t.name} has no dimensions; scalars are not supported, "
                         f"use a tensor of size [1]", t.loc)
            for dim, loc in zip(t.dims, t.dim_locs):
                if isinstance(dim, str) and dim not in self.dims:
                    self.err(f"undefined dimension {dim}; declare it with `dim {dim}` (size bound "
                             f"from data) or `dim {dim} = <size>`{_suggest(dim, self.dims)}", loc)
                elif self.dim_size(dim) == 0:
                    self.err(f"dimension {dim} has size 0; only list dimensions (before the `;`) "
                             f"may be empty", loc)
            for dim, loc in zip(t.lists, t.list_locs):
                self.list_dim(dim, loc)
        at_loc: dict = {}  # (name, loc) -> how many index lists (linear: found by fuzzing)
        for y in self.p.indices:
            at_loc[y.name, y.loc] = at_loc.get((y.name, y.loc), 0) + 1
        for x in self.p.indices:
            if x.name in self.tensors or at_loc[x.name, x.loc] > 1:
                self.err(f"index list {x.name} has the name of a tensor", x.loc)
            n = self.list_dim(x.dim, x.dim_loc)
            if n is not None and len(x.values) != n:
                self.err(f"index list {x.name} has {len(x.values)} entries but its dimension "
                         f"{x.dim} has size {n}", x.loc)
        lists = {d for t in self.p.tensors for d in t.lists} | {x.dim for x in self.p.indices} \
            | set(_loop_dims(self.p.loops))
        for d in self.dims.values():
            if d.size == 0 and d.name not in lists:
                self.err(f"a dimension size must be at least 1, not 0 (only a list dimension, "
                         f"which {d.name} is not, may be empty)", d.loc)
        names = [x.name for x in self.p.indices]
        for k, x in enumerate(self.p.indices):
            if x.name in names[:k]:
                self.err(f"index list {x.name} is declared twice", x.loc)

    def list_dim(self, dim: str | int, loc: Loc | None) -> int | None:
        """The size of a list dimension (which must be fixed: loops unroll at compile time)."""
        if isinstance(dim, int):
            return dim
        d = self.dims.get(dim)
        if d is None:
            self.err(f"undefined dimension {dim}; declare it with `dim {dim} = <size>`"
                     f"{_suggest(dim, self.dims)}", loc)
            return None
        if d.size is None:
            self.err(f"list dimension {dim} needs a fixed size (`dim {dim} = <size>`): loops "
                     f"over it are compiled before any data is read", loc)
            return None
        return d.size

    def dim_size(self, dim: str | int) -> int | None:
        if isinstance(dim, int):
            return dim
        d = self.dims.get(dim)
        return d.size if d else None

    def same_dim(self, a: str | int, b: str | int) -> bool:
        if a == b:
            return True
        sa, sb = self.dim_size(a), self.dim_size(b)
        return sa is not None and sa == sb

    # ---- statements -------------------------------------------------------------------------
    def statements(self) -> list[ast.Assignment]:
        assigned: dict[str, ast.Assignment] = {}
        out = []
        for s in self.p.statements:
            ok = self.statement(s, assigned)
            if s.name in assigned:
                self.err(f"tensor {s.name} is assigned twice; each tensor is computed by one "
                         f"statement", s.lhs.loc)
                self.note("first assigned here", assigned[s.name].lhs.loc)
            assigned.setdefault(s.name, s)
            out.append(ok if ok is not None else s)
        return out

    def statement(self, s: ast.Assignment, assigned) -> ast.Assignment | None:
        before = len(self.sink.errors)
        index_dims: dict[str, tuple[str | int, Loc, str]] = {}
        for acc in [s.lhs, *[a for a in s.rhs.walk() if isinstance(a, ast.Access)]]:
            self.access(acc, index_dims, s, assigned, acc is s.lhs)
        for e in s.rhs.walk():
            if isinstance(e, ast.Call):
                self.call(e)
            elif isinstance(e, ast.Reduce):
                self.reduce(e, s)
        lhs_idx = set(s.lhs.indices)
        free = ast.indices_of(s.rhs)
        for i, loc in zip(s.lhs.indices, s.lhs.index_locs):
            if i not in free:
                self.err(f"index {i} of {s.name} is bound nowhere on the right side; every "
                         f"left-side index must index some tensor on the right", loc)
        if len(self.sink.errors) > before:
            return None
        expr = self.make_sums_explicit(s, [i for i in free if i not in lhs_idx])
        if expr is None:
            return None
        dims = tuple((i, index_dims[i][0]) for i in sorted(index_dims))
        return replace(s, expr=expr, index_dims=dims)

    def access(self, a: ast.Access, index_dims, s: ast.Assignment, assigned, is_lhs) -> None:
        t = self.tensors.get(a.tensor)
        if t is None:
            hint = (f"; declare it with `tensor {a.tensor}[...] : <format>`"
                    + _suggest(a.tensor, self.tensors))
            self.err(f"undefined tensor {a.tensor}{hint}", a.loc)
            return
        if not self.list_access(a, t, is_lhs):
            return
        if not is_lhs and a.tensor in self.local_owner:
            owner = self.local_owner[a.tensor]
            if owner not in self.scope:
                self.err(f"{a.tensor} is computed once per iteration of the loop over "
                         f"{owner.var}, so it cannot be read outside that loop; write a list "
                         f"element or a fold state instead", a.loc)
                return
        if not is_lhs and a.tensor in self.states and not a.lists:
            pass  # the current state of a fold or scan
        elif not is_lhs:
            if a.tensor == s.name and a.lists == s.lhs.lists:
                self.err(f"{a.tensor} is read in its own definition", a.loc)
            elif a.tensor not in assigned and a.tensor in self.assigned_anywhere:
                self.err(f"{a.tensor} is used before it is assigned", a.loc)
            elif a.tensor not in assigned and self.first_statement(a.tensor) is not None:
                later = self.first_statement(a.tensor)
                self.err(f"{a.tensor} is used before it is assigned", a.loc)
                self.note(f"{a.tensor} is assigned here", later.lhs.loc)
        if len(a.indices) != t.order:
            self.err(f"{a.tensor} has {t.order} dimension(s) [{', '.join(map(str, t.dims))}] "
                     f"but is indexed with {len(a.indices)}", a.loc)
            return
        seen = set()
        for i, loc, dim in zip(a.indices, a.index_locs, t.dims):
            if i in seen:
                self.err(f"index {i} appears twice in {a.tensor}[{','.join(a.indices)}]; "
                         f"diagonal access is not supported", loc)
                continue
            seen.add(i)
            if i in index_dims:
                prev, ploc, ptensor = index_dims[i]
                if not self.same_dim(prev, dim):
                    self.err(f"index {i} ranges over dimension {dim} in {a.tensor} but over "
                             f"{prev} in {ptensor}", loc)
                    self.note(f"{i} first bound to {prev} here", ploc)
            else:
                index_dims[i] = (dim, loc, a.tensor)

    def list_access(self, a: ast.Access, t: ast.TensorDecl, is_lhs: bool) -> bool:
        """Check the list part of an access; False if the rest cannot be checked."""
        if not t.lists and a.lists:
            self.err(f"{a.tensor} is not a list (it is declared without list dimensions "
                     f"before a `;`)", a.loc)
            return False
        if t.lists and not a.lists and a.tensor not in self.states:
            dims = ", ".join(map(str, t.lists))
            self.err(f"{a.tensor} is a list over {dims}; index an element as "
                     f"{a.tensor}[{', '.join(str(d).lower() for d in t.lists)}; ...]", a.loc)
            return False
        if a.lists and len(a.lists) != len(t.lists):
            self.err(f"{a.tensor} is a list over {', '.join(map(str, t.lists))} but is given "
                     f"{len(a.lists)} list index(es)", a.loc)
            return False
        names = self.index_names()
        ok = True
        for x in a.lists:
            for v, loc in _var_locs(x):
                if v not in {lp.var for lp in self.scope}:
                    where = (f"; the loop variables here are "
                             f"{', '.join(lp.var for lp in self.scope)}" if self.scope
                             else "; list indices outside loops are numbers")
                    self.err(f"{v} is not a loop variable{where}", loc)
                    ok = False
            for ind in x.tables():
                if ind.args[0] not in names:
                    self.err(f"undefined index list {ind.args[0]}; declare it with "
                             f"`index {ind.args[0]}[DIM] = ...`{_suggest(ind.args[0], names)}",
                             ind.loc)
                    ok = False
        if a.fallback is not None:
            fb = a.fallback
            if fb.indices != a.indices:
                self.err(f"the fallback {fb.tensor}[...] must have the element indices of "
                         f"{a.tensor} ({', '.join(a.indices)})", fb.loc)
                ok = False
        return ok

    # ---- loops -------------------------------------------------------------------------------
    def run_looped(self) -> ast.Program:
        """Check a program with list dims and loops, then unroll it and check the result."""
        for lp in self.p.loops:
            for st in lp.statements():
                self.assigned_anywhere.add(st.name)
            self.assigned_anywhere.update(_states(lp))
        assigned: dict[str, object] = {}
        body = []
        for item in self.p.body:
            if isinstance(item, ast.Loop):
                body.append(self.loop(item, assigned))
                continue
            if self.tensors.get(item.name) is not None and self.tensors[item.name].lists:
                self.err(f"{item.name} is a list; its elements are written inside loops over "
                         f"its list dimensions", item.lhs.loc)
                continue
            ok = self.statement(item, assigned)
            self.assign(item.name, item.lhs.loc, assigned)
            body.append(ok if ok is not None else item)
        self.loop_schedules()
        self.sink.raise_if_any()
        from .unroll import unroll
        looped = replace(self.p, body=body)
        flat = unroll(looped)
        checked = _Checker(flat)
        checked.declarations()
        statements = checked.statements()
        checked.directives(statements)
        # an error in a loop body shows once, at its place, not once per iteration
        seen: set = set()
        kept, dropping = [], False
        for d in checked.sink.errors:
            if d.severity == "note":  # a note goes with the error before it
                if not dropping:
                    kept.append(d)
                continue
            key = (d.loc.source.name, d.loc.line, d.loc.col) if d.loc and d.loc.source else None
            dropping = key is not None and key in seen
            if not dropping:
                kept.append(d)
                seen.add(key)
        checked.sink.errors[:] = kept
        checked.sink.raise_if_any()
        return replace(flat, statements=statements, looped=looped,
                       warnings=self.warned(checked.warnings))

    def loop_schedules(self) -> None:
        """`schedule v: MODE` names a loop variable (one loop's), once; `reuse` applies to a
        loop outside any other, `wavefront` to a scan that is the whole body of a scan."""
        parent: dict[str, ast.Loop | None] = {}
        loops: dict[str, ast.Loop] = {}

        def visit(lp: ast.Loop, up: ast.Loop | None) -> None:
            parent[lp.var], loops[lp.var] = up, lp
            for x in lp.body:
                if isinstance(x, ast.Loop):
                    visit(x, lp)

        for lp in self.p.loops:
            visit(lp, None)
        seen: set[str] = set()
        for d in self.p.directives:
            if not isinstance(d, ast.Schedule):
                continue
            if d.var not in loops:
                self.err(f"schedule names {d.var}, which is no loop's variable", d.loc)
                continue
            if d.var in seen:
                self.err(f"loop {d.var} has two schedules", d.loc)
            seen.add(d.var)
            lp, up = loops[d.var], parent[d.var]
            if d.mode == "wavefront" and (up is None or up.kind != "scan" or up.state
                                          or lp.kind != "scan" or lp.state
                                          or len(up.body) != 1):
                self.err("wavefront applies to a scan (without `from`) that is the whole body "
                         "of another such scan, as scan d in D { scan t in T { ... } }",
                         d.mode_loc)

    def assign(self, name: str, loc, assigned) -> None:
        if name in assigned:
            self.err(f"tensor {name} is assigned twice; each tensor is computed by one "
                     f"statement", loc)
        assigned.setdefault(name, loc)

    def loop(self, lp: ast.Loop, assigned) -> ast.Loop:
        if lp.var in {x.var for x in self.scope}:
            self.err(f"loop variable {lp.var} is already the variable of an enclosing loop",
                     lp.loc)
        self.list_dim(lp.dim, lp.dim_loc)
        depth = len(self.scope)
        if lp.state is not None:
            self.state(lp, depth, assigned)
        self.scope.append(lp)
        written = [st.name for st in lp.statements() if st.name != lp.state
                   and self.tensors.get(st.name) is not None and self.tensors[st.name].lists]
        for name in written:  # a scan reads earlier iterations' elements (checked at unroll)
            assigned.setdefault(name, lp.loc)
        if lp.state is not None:
            self.states[lp.state] = lp
        body = []
        for item in lp.body:
            if isinstance(item, ast.Loop):
                body.append(self.loop(item, assigned))
                continue
            self.body_lhs(item, lp)
            ok = self.statement(item, assigned)
            if item.name not in written:
                self.assign(item.name, item.lhs.loc, assigned)
            body.append(ok if ok is not None else item)
        self.scope.pop()
        self.states.pop(lp.state, None)
        if lp.state is not None:
            last = lp.body[-1] if lp.body else None
            if not isinstance(last, ast.Assignment) or last.name != lp.state:
                self.err(f"the body of this {lp.kind} must end by assigning the next state "
                         f"{lp.state}[...]", lp.loc)
            elif sum(st.name == lp.state for st in lp.statements()) > 1:
                self.err(f"the state {lp.state} is assigned more than once in the body", lp.loc)
        return replace(lp, body=tuple(body))

    def state(self, lp: ast.Loop, depth: int, assigned) -> None:
        t = self.tensors.get(lp.state)
        if t is None:
            self.err(f"undefined tensor {lp.state}; declare the {lp.kind}'s state", lp.loc)
            return
        want = depth + 1 if lp.kind == "scan" else 0
        if lp.kind == "scan" and (len(t.lists) != want
                                  or not self.same_dim(t.lists[-1], lp.dim)):
            self.err(f"the result {lp.state} of a scan over {lp.dim} is the list of its states:"
                     f" declare it with {want} list dimension(s), the last {lp.dim}", lp.loc)
        if lp.kind == "fold" and t.lists:
            self.err(f"the state {lp.state} of a fold is one tensor, not a list", lp.loc)
        if lp.kind == "fold" and self.scope:
            self.local_owner[lp.state] = self.scope[-1]
        init = lp.init
        it = self.tensors.get(init.tensor)
        if it is None:
            self.err(f"undefined tensor {init.tensor}{_suggest(init.tensor, self.tensors)}",
                     init.loc)
            return
        if init.tensor not in assigned and init.tensor in self.assigned_anywhere:
            self.err(f"{init.tensor} is used before it is assigned", init.loc)
        if len(init.lists) != len(it.lists):
            self.err(f"the initial state {init.tensor} needs {len(it.lists)} list index(es)",
                     init.loc)
        elif self.list_access(init, it, False):
            if len(it.dims) != len(t.dims) or not all(self.same_dim(a, b)
                                                      for a, b in zip(it.dims, t.dims)):
                self.err(f"the initial state {init.tensor}[{', '.join(map(str, it.dims))}] "
                         f"and the state {lp.state}[{', '.join(map(str, t.dims))}] differ in "
                         f"shape", init.loc)

    def body_lhs(self, s: ast.Assignment, lp: ast.Loop) -> None:
        """The left side of a loop body's statement: the state, a list element at the loop
        variables, or a tensor local to the iteration."""
        t = self.tensors.get(s.name)
        if t is None:
            return
        if s.name in self.states:
            if s.lhs.lists:
                self.err(f"the state {s.name} is assigned without list indices", s.lhs.loc)
            return
        if t.lists:
            want = [x.var for x in self.scope]
            got = [x.args[0] if x.op == "var" else None for x in s.lhs.lists]
            if got != want:
                self.err(f"a list element is written at the enclosing loops' variables, "
                         f"{s.name}[{', '.join(want)}; ...], once per iteration", s.lhs.loc)
            return
        self.local_owner[s.name] = lp

    def call(self, c: ast.Call) -> None:
        msg = call_problem(c)
        if msg is not None:
            self.err(msg, c.loc)

    def reduce(self, r: ast.Reduce, s: ast.Assignment) -> None:
        for msg in reduce_problems(r, s.rhs, s.lhs.indices, s.name):
            self.err(msg, r.loc)

    # ---- implicit sums ----------------------------------------------------------------------
    def make_sums_explicit(self, s: ast.Assignment, implicit: list[str]) -> ast.Expr | None:
        if not implicit:
            return s.rhs
        placement: dict[tuple[int, ...], list[str]] = {}
        for i in implicit:
            paths = list(_uses(s.rhs, i))
            if len(set(paths)) == 1:
                self.lone_index(s, i, paths[0])
            lca = _common_prefix(paths)
            bad = _nonlinear_context(s.rhs, lca)
            if bad is not None:
                what, loc = bad
                self.err(f"index {i} is summed implicitly (it is not on the left side) but its "
                         f"uses lie inside {what}, where the sum's place changes the result; "
                         f"write sum[{i}](...) explicitly", loc)
                return None
            placement.setdefault(lca, []).append(i)
        return _wrap(s.rhs, (), placement)

    def lone_index(self, s: ast.Assignment, i: str, path: tuple[int, ...]) -> None:
        """Warn about an implicit sum over one factor: index `i` occurs in the access at
        `path` only (a typo like `X[i,f] * W[g,h]` sums X over f and W over g)."""
        acc = s.rhs
        for k in path:
            acc = acc.children()[k]
        locs = [loc for j, loc in zip(acc.indices, acc.index_locs) if j == i]
        self.warn(f"index {i} occurs only in {_access_text(acc)} and nowhere else in the "
                  f"statement, so {acc.tensor} alone is summed over {i}; write "
                  f"sum[{i}]({_access_text(acc)}) if that is meant", locs[0] if locs else acc.loc)

    # ---- directives -------------------------------------------------------------------------
    def directives(self, statements: list[ast.Assignment]) -> None:
        stmts = {s.name: s for s in statements}
        regions: dict[str, ast.Fuse] = {}
        region_of: dict[str, tuple[str, Loc]] = {}
        orders: dict[str, ast.Order] = {}
        pars: dict[tuple[str, str], ast.Parallelize] = {}
        blocks: dict[str, ast.Block] = {}
        decomposed: set[str] = set()
        for d in self.p.directives:
            if isinstance(d, ast.Fuse):
                if d.name in regions:
                    self.err(f"fusion region {d.name} is defined twice", d.loc)
                    self.note("first defined here", regions[d.name].loc)
                regions.setdefault(d.name, d)
                for name, loc in zip(d.statements, d.item_locs):
                    if name not in stmts:
                        self.err(self._no_statement(name, stmts, "fusion region"), loc)
                    elif name in region_of:
                        prev, ploc = region_of[name]
                        same = ("listed twice in this region" if prev == d.name
                                else f"already in region {prev}")
                        self.err(f"statement {name} is {same}; a statement belongs to "
                                 f"at most one fusion region", loc)
                        self.note("first listed here", ploc)
                    else:
                        region_of[name] = (d.name, loc)
            elif isinstance(d, ast.Order):
                self.order(d, stmts, orders)
            elif isinstance(d, ast.Parallelize):
                s = stmts.get(d.statement)
                if s is None:
                    self.err(self._no_statement(d.statement, stmts, "parallelize"), d.loc)
                elif d.index not in ast.all_indices(s):
                    self.err(f"statement {d.statement} has no index {d.index}; its indices are "
                             f"{', '.join(ast.all_indices(s))}", d.loc)
                elif (d.statement, d.index) in pars:
                    self.err(f"index {d.index} of {d.statement} is parallelized twice", d.loc)
                pars.setdefault((d.statement, d.index), d)
            elif isinstance(d, ast.Block):
                self.block(d, blocks)
            elif isinstance(d, ast.Decompose):
                if d.tensor in decomposed:
                    self.err(f"tensor {d.tensor} is decomposed twice", d.loc)
                    continue
                decomposed.add(d.tensor)
                for msg, loc in decompose_problems(self.p, statements, d):
                    self.err(msg, loc)
            elif isinstance(d, ast.Output):
                for name, loc in zip(d.tensors, d.item_locs):
                    if name not in self.tensors:
                        self.err(f"output names undefined tensor {name}"
                                 f"{_suggest(name, self.tensors)}", loc)
                    elif name not in stmts:
                        self.err(f"{name} is an input (no statement assigns it); only computed "
                                 f"tensors can be outputs", loc)
        for t in self.tensors.values():
            if t.name in stmts and not t.format.classic:
                # level writers build seg/crd levels; COO and ELL are read-only input formats
                self.err(f"tensor {t.name} is computed, but its format {t.format.name()} has "
                         f"a singleton or fixed-length level, which fuseflowc reads but does "
                         f"not write; store it as dense or compressed levels (e.g. csr)",
                         t.format_loc or t.loc)
            if t.format.blocked and t.name not in blocks:
                self.err(f"tensor {t.name} has a blocked format but no block size; add "
                         f"`block {t.name}: <size>`", t.format_loc or t.loc)

    def _no_statement(self, name: str, stmts, where: str) -> str:
        if name in self.tensors:
            return (f"{where} names {name}, but no statement assigns {name} (statements are "
                    f"named by the tensor they assign)")
        return f"{where} names undefined statement {name}{_suggest(name, stmts)}"

    def order(self, d: ast.Order, stmts, orders) -> None:
        s = stmts.get(d.statement)
        if s is None:
            self.err(self._no_statement(d.statement, stmts, "order"), d.loc)
            return
        if d.statement in orders:
            self.err(f"statement {d.statement} has two dataflow orders", d.loc)
            self.note("the first is here", orders[d.statement].loc)
            return
        orders[d.statement] = d
        want = ast.all_indices(s)
        seen: set[str] = set()
        for i, loc in zip(d.indices, d.item_locs):
            if i not in want:
                self.err(f"order of {d.statement} names {i}, which is not an index of the "
                         f"statement (its indices: {', '.join(want)})", loc)
            elif i in seen:  # report the repetition, not the first use
                self.err(f"order of {d.statement} names {i} twice", loc)
                return
            seen.add(i)
        missing = [i for i in want if i not in d.indices]
        if missing and all(i in want for i in d.indices):
            self.err(f"order of {d.statement} is not a permutation of its indices "
                     f"{', '.join(want)}: missing {', '.join(missing)}", d.loc)

    def block(self, d: ast.Block, blocks) -> None:
        t = self.tensors.get(d.tensor)
        if t is None:
            self.err(f"block names undefined tensor {d.tensor}{_suggest(d.tensor, self.tensors)}",
                     d.loc)
            return
        if d.tensor in blocks:
            self.err(f"tensor {d.tensor} has two block sizes", d.loc)
            return
        blocks[d.tensor] = d
        if not t.format.blocked:
            self.err(f"block size given for {d.tensor}, but its format {t.format.name()} is not "
                     f"blocked (use bcsr, bdcsr, bdense or add `blocked`)", d.loc)
            return
        for dim in dict.fromkeys(t.dims):  # a dim used twice is reported once
            size = self.dim_size(dim)
            if size is not None and size % d.size:
                self.err(f"block size {d.size} does not divide dimension {dim} = {size} of "
                         f"{d.tensor}", d.loc)


def _var_locs(x: ast.LIdx):
    if x.op == "var":
        yield x.args[0], x.loc
    for a in x.args:
        if isinstance(a, ast.LIdx):
            yield from _var_locs(a)


def _states(lp: ast.Loop) -> set[str]:
    out = {lp.state} if lp.state else set()
    for item in lp.body:
        if isinstance(item, ast.Loop):
            out |= _states(item)
    return out


def _loop_dims(loops):
    for lp in loops:
        yield lp.dim
        yield from _loop_dims([x for x in lp.body if isinstance(x, ast.Loop)])


def _loop_vars(loops) -> set[str]:
    out = set()
    for lp in loops:
        out.add(lp.var)
        out |= _loop_vars([x for x in lp.body if isinstance(x, ast.Loop)])
    return out


def call_problem(c: ast.Call) -> str | None:
    """What is wrong with a call (an unknown function, a wrong number of arguments), or None.
    Shared with the fused-IR verifier."""
    arity = FUNC_ARITY.get(c.func)
    if arity is None and c.func in LANG_REDUCE:
        return (f"{c.func} is a reduction: write {c.func}[j](...) naming the indices it "
                f"reduces over")
    if arity is None:
        return (f"unknown function {c.func}; functions are "
                f"{', '.join(sorted(FUNC_ARITY))}{_suggest(c.func, FUNC_ARITY)}")
    if len(c.args) != arity:
        hint = (f"; for a reduction write {c.func}[j](...) naming the reduced indices"
                if c.func in LANG_REDUCE else "")
        return f"{c.func} takes {arity} argument(s), not {len(c.args)}{hint}"
    return None


def reduce_problems(r: ast.Reduce, rhs: ast.Expr, lhs: tuple[str, ...], name: str
                    ) -> list[str]:
    """What is wrong with reduction `r` of the right side `rhs` of a statement assigning
    `name[lhs]`: an index listed twice, absent from its argument, also an index of the result,
    or also used outside the reduction. Shared with the fused-IR verifier."""
    out = []
    body_idx = ast.indices_of(r.body)
    for i in dict.fromkeys(r.indices):
        if r.indices.count(i) > 1:
            out.append(f"index {i} is listed twice in {r.op}[...]")
        if i not in body_idx:
            out.append(f"{r.op}[{i}] reduces over {i}, which its argument does not use")
        if i in lhs:
            out.append(f"{r.op}[{i}] reduces over {i}, which is also an index of the result "
                       f"{name}")
    # An index reduced here must not also be used freely elsewhere in the statement.
    outside = _free_outside(rhs, r)
    for i in r.indices:
        if i in outside:
            out.append(f"index {i} is reduced by {r.op}[{i}] but also used outside it (an "
                       f"index name is bound by at most one reduction per statement); give "
                       f"this reduction its own index name, e.g. {r.op}[{i}2]")
    return out


def _free_outside(root: ast.Expr, r: ast.Reduce) -> set[str]:
    """Index variables used in `root` outside the subtree `r`."""
    out: set[str] = set()

    def visit(x: ast.Expr) -> None:
        if x is r:
            return
        if isinstance(x, ast.Access):
            out.update(x.indices)
        for c in x.children():
            visit(c)

    visit(root)
    return out


def _uses(e: ast.Expr, index: str, path: tuple[int, ...] = ()):
    """Paths (child positions from `e`) of the accesses that use `index` freely."""
    if isinstance(e, ast.Access):
        if index in e.indices:
            yield path
        return
    if isinstance(e, ast.Reduce) and index in e.indices:
        return
    for k, c in enumerate(e.children()):
        yield from _uses(c, index, path + (k,))


def _access_text(a: ast.Access) -> str:
    """`X[i, f]` as written (list indices left out)."""
    return f"{a.tensor}[{','.join(a.indices)}]"


def _common_prefix(paths: list[tuple[int, ...]]) -> tuple[int, ...]:
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        for k in range(n):
            if p[k] != first[k]:
                n = k
                break
    return first[:n]


def _nonlinear_context(root: ast.Expr, path: tuple[int, ...]):
    """The first non-linear ancestor on the way to `path` (strict ancestors only), if any."""
    node = root
    for k in path:
        linear = node.func == "neg" or (node.func == "mask" and k == 0) \
            if isinstance(node, ast.Call) else True
        if isinstance(node, ast.Call) and not linear:
            return f"a call to {node.func}", node.loc
        if isinstance(node, ast.Binary) and node.op == "/" and k == 1:
            return "a denominator", node.loc
        if isinstance(node, ast.Reduce) and node.op != "sum":
            return f"{node.op}[{','.join(node.indices)}]", node.loc
        node = node.children()[k]
    return None


def _wrap(e: ast.Expr, path: tuple[int, ...], placement) -> ast.Expr:
    """Rebuild `e`, wrapping the subexpression at each placement path in an explicit sum."""
    kids = e.children()
    if kids:
        new = tuple(_wrap(c, path + (k,), placement) for k, c in enumerate(kids))
        if isinstance(e, ast.Binary):
            e = replace(e, lhs=new[0], rhs=new[1])
        elif isinstance(e, ast.Call):
            e = replace(e, args=new)
        elif isinstance(e, ast.Reduce):
            e = replace(e, body=new[0])
    if path in placement:
        e = ast.Reduce("sum", tuple(placement[path]), e, e.loc, implicit=True)
    return e
