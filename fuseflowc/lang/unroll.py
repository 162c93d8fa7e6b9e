"""Unrolling loops over list dimensions into ordinary statements (the `unroll` schedule).

Every iteration's statements become statements of the flat program with per-iteration names
(`ast.element_name`): list elements are `W__3`, a tensor computed inside loops at iteration
(d, t) is `T__1_5`, a fold's intermediate states are `H__k` and its last state keeps the name
`H`. List index expressions are evaluated here, out-of-range reads resolved (an `else` fallback
or a located error), and each read of a computed list element checked to follow its write
(and, in a map, to come from the same iteration). Directives naming a statement of a loop body
apply to every iteration: `fuse layer: T, H` becomes one region per iteration, `layer__k`.
Everything downstream (fuse, lower, simulate) sees an ordinary program.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

from ..diagnostics import UserError
from ..limits import MAX_UNROLLED
from . import ast


def list_sizes(program: ast.Program, decl: ast.TensorDecl) -> tuple[int, ...]:
    """The sizes of a tensor's list dims (fixed by the checker)."""
    return tuple(d if isinstance(d, int) else program.dim(d).size for d in decl.lists)


def lidx_value(x: ast.LIdx, env: dict[str, int], n: int, tables: dict[str, tuple[int, ...]],
               what: str) -> int:
    """The value of list index expression `x` with loop variables `env`, indexing a list dim of
    size `n` (for `reverse`); an index list read out of its range is an error."""
    if x.op == "var":
        return env[x.args[0]]
    if x.op == "num":
        return x.args[0]
    if x.op in "+-":
        a, b = (lidx_value(y, env, n, tables, what) for y in x.args)
        return a + b if x.op == "+" else a - b
    if x.op == "*":
        return x.args[0] * lidx_value(x.args[1], env, n, tables, what)
    if x.op == "reverse":
        return n - 1 - lidx_value(x.args[0], env, n, tables, what)
    name = x.args[0]
    k = lidx_value(x.args[1], env, len(tables[name]), tables, what)
    if not 0 <= k < len(tables[name]):
        raise UserError(f"index list {name} has {len(tables[name])} entries; {name}[{k}] is "
                        f"out of range {what}", x.loc)
    return tables[name][k]


def where(env: dict[str, int]) -> str:
    """`at d = 1, t = 0` for error messages."""
    return "at " + ", ".join(f"{v} = {k}" for v, k in env.items()) if env else "outside loops"


def unroll(program: ast.Program) -> ast.Program:
    """The flat program of a checked program with loops (see the module docstring)."""
    return _Unroll(program).run()


class _Unroll:
    def __init__(self, p: ast.Program):
        self.p = p
        self.decls = {t.name: t for t in p.tensors}
        self.tables = {x.name: x.values for x in p.indices}
        self.statements: list[ast.Assignment] = []
        # list element -> (the loop that wrote it, the iteration's loop variables)
        self.written: dict[tuple[str, tuple[int, ...]], tuple[ast.Loop, dict[str, int]]] = {}
        # a body's tensor -> its per-iteration flat names with the iteration (loop values)
        self.instances: dict[str, list[tuple[tuple[int, ...], str]]] = {}
        self.schedules = {d.var: d.mode for d in p.directives if isinstance(d, ast.Schedule)}
        self.reuse: list[tuple[str, list[list[str]]]] = []
        self.waves: dict[str, int] = {}
        self.next_wave = 0  # a nest's waves follow the previous nest's (e.g. per map iteration)
        self.iteration_of: dict[str, tuple[str, int]] = {}  # statement -> (reuse loop, k)
        self.body_names = {st.name for lp in p.loops for st in lp.statements()}
        self.computed_lists = {st.name for lp in p.loops for st in lp.statements()
                               if self.decls[st.name].lists}

    def size(self, dim) -> int:
        return dim if isinstance(dim, int) else self.p.dim(dim).size

    def check_size(self) -> None:
        """Refuse, before unrolling, a program whose flat form would hold more than
        MAX_UNROLLED statements and list elements (a list dim of 10^9 would take hours)."""
        total = 0
        for t in self.p.tensors:
            if t.lists:
                n = math.prod(list_sizes(self.p, t))
                total += n
                if total > MAX_UNROLLED:
                    raise UserError(f"the lists of the program have more than {MAX_UNROLLED:,} "
                                    f"elements in all ({t.name} has {n:,}); "
                                    f"the loops are unrolled, so at most {MAX_UNROLLED:,} "
                                    f"statements and list elements", t.loc)

        def count(items) -> int:
            n = 0
            for item in items:
                n += self.size(item.dim) * count(item.body) if isinstance(item, ast.Loop) else 1
                if n > MAX_UNROLLED:
                    return n
            return n
        def dims(loop) -> list[str]:
            out = [str(loop.dim)]
            for x in loop.body:
                if isinstance(x, ast.Loop):
                    out += [d for d in dims(x) if d not in out]
            return out
        for item in self.p.body:
            if isinstance(item, ast.Loop):
                total += count([item])
                if total > MAX_UNROLLED:
                    nest = dims(item)
                    over = ("the loop over " + nest[0] if len(nest) == 1 else
                            "the loop nest over " + " x ".join(nest))
                    lower = " or ".join(nest)
                    raise UserError(f"the loops unroll to more than {MAX_UNROLLED:,} statements "
                                    f"and list elements; at most {MAX_UNROLLED:,} ({over} "
                                    f"unrolls to {total:,} or more: lower the size of {lower})",
                                    item.loc)

    def run(self) -> ast.Program:
        self.check_size()
        for item in self.p.body:
            if isinstance(item, ast.Loop):
                self.loop(item, {}, {})
            else:
                self.emit(item, {}, {}, item.name)
        # an empty list dim is no dim of the flat program (every later IR wants sizes >= 1)
        dims = [d for d in self.p.dims if d.size != 0]
        out = ast.Program(self.p.source, dims, self.flat_tensors(), self.statements,
                          self.directives())
        out.reuse, out.waves = self.reuse, self.waves
        return out

    # ---- names ----------------------------------------------------------------------------
    def element(self, a: ast.Access, env: dict[str, int], mapping: dict[str, str],
                loop: ast.Loop | None) -> ast.Access:
        """The flat access of `a` in the iteration `env` (a fallback's, out of range)."""
        decl = self.decls[a.tensor]
        if not a.lists:
            return replace(a, tensor=mapping.get(a.tensor, a.tensor))
        sizes = list_sizes(self.p, decl)
        what = where(env)
        pos = tuple(lidx_value(x, env, n, self.tables, what) for x, n in zip(a.lists, sizes))
        if not all(0 <= k < n for k, n in zip(pos, sizes)):
            if a.fallback is not None:
                return self.element(a.fallback, env, mapping, loop)
            raise UserError(f"{a.tensor}[{', '.join(map(str, pos))}] is out of range {what} "
                            f"({a.tensor} is a list over "
                            f"{' x '.join(map(str, sizes)) or 'nothing'}); give the value of an "
                            f"out-of-range read with `else`, as in "
                            f"{a.tensor}[t - 1; ...] else X[...]", a.lists[0].loc or a.loc)
        if a.tensor in self.computed_lists:
            w = self.written.get((a.tensor, pos))
            if w is None:
                raise UserError(f"{a.tensor}[{', '.join(map(str, pos))}] is read {what} before "
                                f"it is computed", a.loc)
            wloop, wenv = w
            if wloop.kind == "map" and wloop.var in env and wenv[wloop.var] != env[wloop.var] \
                    and any(lp is wloop for lp in self.scope):
                raise UserError(f"the iterations of a map are independent, but {what} reads "
                                f"{a.tensor}[{', '.join(map(str, pos))}], written {where(wenv)};"
                                f" use scan", a.loc)
        return ast.Access(ast.element_name(a.tensor, pos), a.indices, a.loc, a.index_locs)

    def expr(self, e: ast.Expr, env, mapping, loop) -> ast.Expr:
        if isinstance(e, ast.Access):
            return self.element(e, env, mapping, loop)
        if isinstance(e, ast.Binary):
            return replace(e, lhs=self.expr(e.lhs, env, mapping, loop),
                           rhs=self.expr(e.rhs, env, mapping, loop))
        if isinstance(e, ast.Call):
            return replace(e, args=tuple(self.expr(a, env, mapping, loop) for a in e.args))
        if isinstance(e, ast.Reduce):
            return replace(e, body=self.expr(e.body, env, mapping, loop))
        return e

    def emit(self, s: ast.Assignment, env, mapping, name: str, loop=None) -> str:
        rhs = self.expr(s.rhs, env, mapping, loop)
        self.statements.append(ast.Assignment(replace(s.lhs, tensor=name, lists=()), rhs,
                                              s.loc))
        if env:
            self.instances.setdefault(s.name, []).append((tuple(env.values()), name))
        return name

    # ---- loops ----------------------------------------------------------------------------
    scope: list[ast.Loop] = []

    def loop(self, lp: ast.Loop, env: dict[str, int], mapping: dict[str, str]) -> None:
        n = self.size(lp.dim)
        outer = tuple(env.values())
        inner_loop = lp.body[0] if len(lp.body) == 1 else None
        if isinstance(inner_loop, ast.Loop) and self.schedules.get(inner_loop.var) == "wavefront":
            self.wavefront(lp, inner_loop, env, mapping)
            return
        reuse = self.schedules.get(lp.var) == "reuse"
        marks: list[int] = []
        self.scope = self.scope + [lp]
        current = None
        if lp.state is not None:
            current = self.element(lp.init, env, mapping, lp).tensor
            if n == 0 and lp.kind == "fold":
                self.copy(lp, current, ast.element_name(lp.state, outer), env)
        for k in range(n):
            marks.append(len(self.statements))
            inner = {**env, lp.var: k}
            local = dict(mapping)
            if current is not None:
                local[lp.state] = current
            for item in lp.body:
                if isinstance(item, ast.Loop):
                    self.loop(item, inner, local)
                    continue
                pos = tuple(inner.values())
                decl = self.decls[item.name]
                if item.name == lp.state:
                    last = k == n - 1 and lp.kind == "fold"
                    name = ast.element_name(item.name, outer if last else pos)
                    if lp.kind == "scan":
                        self.written[(item.name, pos)] = (lp, inner)
                    current = self.emit(item, inner, local, name, lp)
                elif decl.lists:
                    self.written[(item.name, pos)] = (lp, inner)
                    self.emit(item, inner, local, ast.element_name(item.name, pos), lp)
                else:
                    local[item.name] = self.emit(item, inner, local,
                                                 ast.element_name(item.name, pos), lp)
        if lp.kind == "fold" and lp.state is not None:
            mapping[lp.state] = ast.element_name(lp.state, outer)
        self.scope = self.scope[:-1]
        if reuse:
            ends = marks + [len(self.statements)]
            self.iterations(lp.var, [self.statements[ends[k]:ends[k + 1]]
                                     for k in range(len(marks))])

    def wavefront(self, outer_lp: ast.Loop, lp: ast.Loop, env, mapping) -> None:
        """Two nested scans in anti-diagonal order: (a, b) after (a - 1, b) and (a, b - 1),
        diagonal a + b by diagonal (the reads-after-writes checks hold the order legal). The
        waves of this nest are numbered after those of the nests emitted before it."""
        pairs = sorted(((a, b) for a in range(self.size(outer_lp.dim))
                        for b in range(self.size(lp.dim))), key=lambda ab: (sum(ab), ab[0]))
        self.scope = self.scope + [outer_lp, lp]
        groups: dict[int, list[ast.Assignment]] = {}
        for a, b in pairs:
            inner = {**env, outer_lp.var: a, lp.var: b}
            local = dict(mapping)
            first = len(self.statements)
            for item in lp.body:
                if isinstance(item, ast.Loop):
                    self.loop(item, inner, local)
                    continue
                pos = tuple(inner.values())
                name = ast.element_name(item.name, pos)
                if self.decls[item.name].lists:
                    self.written[(item.name, pos)] = (lp, inner)
                else:
                    local[item.name] = name
                self.emit(item, inner, local, name, lp)
            for s in self.statements[first:]:
                self.waves[s.name] = self.next_wave + a + b
            groups.setdefault(a, []).extend(self.statements[first:])
        self.next_wave += self.size(outer_lp.dim) + self.size(lp.dim) - 1
        self.scope = self.scope[:-2]
        if self.schedules.get(outer_lp.var) == "reuse":
            self.iterations(outer_lp.var, [groups[a] for a in sorted(groups)])

    def iterations(self, var: str, groups: list[list[ast.Assignment]]) -> None:
        """Record the statements of each iteration of reused loop `var` (instances of a nested
        loop numbered on from the previous instance's)."""
        its = next((x for v, x in self.reuse if v == var), None)
        if its is None:
            its = []
            self.reuse.append((var, its))
        for group in groups:
            for st in group:
                self.iteration_of[st.name] = (var, len(its))
            its.append([st.name for st in group])

    def copy(self, lp: ast.Loop, src: str, dst: str, env) -> None:
        """A fold of no iterations: its result is the initial state."""
        decl = self.decls[lp.state]
        idx = tuple(f"i{k}" for k in range(decl.order))
        lhs = ast.Access(dst, idx, lp.loc, tuple(lp.loc for _ in idx))
        self.statements.append(ast.Assignment(lhs, ast.Access(src, idx, lp.loc,
                                                              tuple(lp.loc for _ in idx)),
                                              lp.loc))
        if env:
            self.instances.setdefault(lp.state, []).append((tuple(env.values()), dst))

    # ---- declarations and directives -----------------------------------------------------
    def flat_tensors(self) -> list[ast.TensorDecl]:
        made = {s.name for s in self.statements}
        read = {a.tensor for s in self.statements for a in s.rhs.walk()
                if isinstance(a, ast.Access)}
        body_only = {st.name for lp in self.p.loops for st in lp.statements()} - \
            {s.name for s in self.p.body if isinstance(s, ast.Assignment)}
        out = []
        for t in self.p.tensors:
            if t.lists:
                for pos in itertools.product(*(range(n) for n in list_sizes(self.p, t))):
                    out.append(replace(t, name=ast.element_name(t.name, pos), lists=(),
                                       list_locs=()))
                continue
            names = [t.name] if t.name not in body_only else []
            names += [f for _, f in self.instances.get(t.name, []) if f != t.name]
            if t.name in body_only and (t.name in made or t.name in read):
                names.insert(0, t.name)
            for name in dict.fromkeys(names):
                out.append(replace(t, name=name))
        return out

    def flats(self, name: str) -> list[tuple[tuple[int, ...], str]] | None:
        """The per-iteration flat names of a body's tensor, or of a list's elements (none
        for a loop of no iteration); None for a tensor of neither kind."""
        decl = self.decls.get(name)
        if decl is not None and decl.lists:
            return [(pos, ast.element_name(name, pos))
                    for pos in itertools.product(*(range(n)
                                                   for n in list_sizes(self.p, decl)))]
        if name in self.body_names:
            return self.instances.get(name, [])
        return None

    def directives(self) -> list[ast.Directive]:
        out: list[ast.Directive] = []
        for d in self.p.directives:
            if isinstance(d, ast.Schedule):
                continue
            if isinstance(d, ast.Fuse):
                out.extend(self.fuse(d))
            elif isinstance(d, (ast.Order, ast.Parallelize)):
                fl = self.flats(d.statement)
                out.extend([d] if fl is None else [replace(d, statement=f) for _, f in fl])
            elif isinstance(d, ast.Block):
                fl = self.flats(d.tensor)
                out.extend([d] if fl is None else [replace(d, tensor=f) for _, f in fl])
            elif isinstance(d, ast.Output):
                names, locs = [], []
                for name, loc in zip(d.tensors, d.item_locs):
                    fl = self.flats(name)
                    fl = [((), name)] if fl is None else fl
                    names += [f for _, f in fl]
                    locs += [loc] * len(fl)
                if names:
                    out.append(replace(d, tensors=tuple(names), item_locs=tuple(locs)))
            else:
                out.append(d)
        return out

    def fuse(self, d: ast.Fuse) -> list[ast.Fuse]:
        per = [self.flats(n) for n in d.statements]
        if any(f is None for f in per):
            # with unrolled names, a fold's state names its last state's statement (H), not
            # the body's statement in every iteration
            made = {st.name for st in self.statements}
            per = [None if n in made else f for n, f in zip(d.statements, per)]
        if all(f is None for f in per):
            its = {self.iteration_of[n] for n in d.statements if n in self.iteration_of}
            if len(its) > 1:
                raise UserError(f"fusion region {d.name} spans iterations of the loop over "
                                f"{min(its)[0]}, whose schedule is reuse (one configuration "
                                f"for every iteration); fuse across iterations with unroll",
                                d.loc)
            return [d]
        if any(f is None for f in per):
            outside = next(n for n, f in zip(d.statements, per) if f is None)
            raise UserError(f"fusion region {d.name} mixes statements of a loop body with "
                            f"{outside}, which is outside it; to fuse across iterations name "
                            f"the unrolled statements (e.g. T__0, H__0, T__1)", d.loc)
        groups: dict[tuple[int, ...], list[tuple[str, object]]] = {}
        for fl, loc in zip(per, d.item_locs):
            for pos, name in fl:
                groups.setdefault(pos, []).append((name, loc))
        return [ast.Fuse(ast.element_name(d.name, pos), tuple(n for n, _ in g), d.loc,
                         tuple(loc for _, loc in g)) for pos, g in groups.items()]
