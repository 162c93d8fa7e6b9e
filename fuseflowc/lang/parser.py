"""Parsing program text into the AST (fuseflowc.lang.ast), with a location on every node."""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedInput

from ..diagnostics import Loc, Source, UserError
from ..formats import (
    MAX_WIDTH,
    PARAM_SHORTHANDS,
    SHORTHAND_NAMES,
    Format,
    format_problem,
    level_problem,
    level_text,
    shorthand,
    shorthand_orders,
    shorthand_problem,
)
from ..ir_kind import wrong_kind
from ..limits import (
    MAX_INT,
    MAX_LANES,
    MAX_TENSOR_ORDER,
    check_nesting,
    finite_number,
    whole_number,
)
from ..syntax import parser, paused_gc, syntax_error, user_errors_unwrapped
from . import ast


def parse_program(source: Source, _stack: tuple[str, ...] = (),
                  _seen: dict[str, Loc] | None = None) -> ast.Program:
    """Parse a whole program, splicing in `include`d files (resolved relative to the including
    file; each file once). Raises UserError on syntax errors, malformed formats and bad
    includes."""
    return _parse(source, "start", "program", _stack, {} if _seen is None else _seen)


def parse_directives(source: Source) -> list[ast.Directive]:
    """Parse schedule directives only (the text of a --schedule command-line override)."""
    return _parse(source, "directives", "schedule").directives


@paused_gc()
def _parse(source: Source, start: str, what: str, stack: tuple[str, ...] = (),
           seen: dict[str, Loc] | None = None) -> ast.Program:
    try:
        tree = parser("program.lark", start).parse(source.text)
    except UnexpectedInput as e:
        kind = wrong_kind(source, "program") if start == "start" else None
        raise kind or syntax_error(e, source, what) from None
    check_nesting(tree, source)  # (the transformer recurses once per nesting level)
    with user_errors_unwrapped():
        items = _Build(source).transform(tree)
    prog = ast.Program(source)
    for item in items.children if isinstance(items, Tree) else items:
        if isinstance(item, ast.DimDecl):
            prog.dims.append(item)
        elif isinstance(item, list):  # a dim declaration declares several dims
            prog.dims.extend(item)
        elif isinstance(item, ast.TensorDecl):
            prog.tensors.append(item)
        elif isinstance(item, ast.Assignment):
            prog.statements.append(item)
            prog.body.append(item)
        elif isinstance(item, ast.Loop):
            prog.body.append(item)
        elif isinstance(item, ast.IndexDecl):
            prog.indices.append(item)
        elif isinstance(item, _Include):
            sub = _include(source, item, stack, {} if seen is None else seen)
            prog.dims.extend(sub.dims)
            prog.tensors.extend(sub.tensors)
            prog.statements.extend(sub.statements)
            prog.directives.extend(sub.directives)
            prog.body.extend(sub.body)
            prog.indices.extend(sub.indices)
        else:
            prog.directives.append(item)
    return prog


class _Include:
    def __init__(self, path: str, loc: Loc):
        self.path, self.loc = path, loc


def _include(source: Source, inc: _Include, stack: tuple[str, ...],
             seen: dict[str, Loc]) -> ast.Program:
    import os

    base = os.path.dirname(source.name) if source.name not in ("<stdin>",) else "."
    path = os.path.normpath(os.path.join(base, inc.path))
    key = os.path.abspath(path)
    if key in stack or key == os.path.abspath(source.name):
        raise UserError(f"include cycle: {inc.path} includes itself (directly or through others)",
                        inc.loc)
    if key in seen:  # it would declare everything again (and 2,000 copies took minutes)
        raise UserError(f"{inc.path} is already included (at {seen[key]}); a program includes "
                        f"a file once", inc.loc)
    seen[key] = inc.loc
    try:
        from ..files import read_source
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            raise UserError(f"{path}: not a regular file (a device or a pipe)")
        sub = read_source(path)
    except UserError as e:
        shown = path.replace("\0", "\\0")  # (a NUL prints as nothing)
        reason = e.diagnostics[0].message.removeprefix(f"{shown}: ")
        if reason == "no such file":
            raise UserError(f"cannot include {inc.path}: no such file {path}", inc.loc) from None
        raise UserError(f"cannot include {inc.path!r}: {shown}: {reason}", inc.loc) from None
    return parse_program(sub, stack + (os.path.abspath(source.name),), seen)


class _Build(Transformer):
    """Lark tree -> AST. Every node gets a Loc from its token or meta."""

    def __init__(self, source: Source):
        super().__init__()
        self.source = source

    # ---- locations ------------------------------------------------------------------------
    def _tok(self, t: Token) -> Loc:
        return Loc(self.source, t.line, t.column, max(len(str(t)), 1))

    def _meta(self, meta) -> Loc:
        if getattr(meta, "empty", True):
            return Loc(self.source, 1, 1)
        length = meta.end_pos - meta.start_pos if meta.line == meta.end_line else 1
        return Loc(self.source, meta.line, meta.column, max(length, 1))

    def _int(self, t: Token, what: str, minimum: int = 0, maximum: int = MAX_INT) -> int:
        return whole_number(str(t), what, self._tok(t), minimum, maximum)

    # ---- declarations -------------------------------------------------------------------
    def start(self, items):
        return items

    def directives(self, items):
        return items

    @v_args(inline=True)
    def dim_item(self, name, size):
        # 0 is allowed for list dims (an empty loop); the checker refuses it for element dims
        return ast.DimDecl(str(name), None if size is None else self._int(size, "a dimension size", 0),
                           self._tok(name))

    def dim_decl(self, items):
        return list(items)

    @v_args(inline=True)
    def dim_ref(self, tok):
        if tok.type == "NUMBER":
            return self._int(tok, "a dimension size", 1), self._tok(tok)
        return str(tok), self._tok(tok)

    def dim_refs(self, items):
        return list(items)

    def shape_plain(self, items):
        (dims,) = items
        return [], dims or []

    def shape_list(self, items):
        lists, dims = items
        return lists, dims or []

    @v_args(meta=True)
    def tensor_decl(self, meta, items):
        name, (lists, dims), fmt = items
        fmt_value, fmt_loc, fmt_check = fmt
        order = len(dims)
        if order + len(lists) > MAX_TENSOR_ORDER:
            raise UserError(f"tensor {name} has {order + len(lists)} dimensions; at most "
                            f"{MAX_TENSOR_ORDER} are supported", self._tok(name))
        fmt_value = fmt_check(order)
        return ast.TensorDecl(str(name), tuple(d for d, _ in dims), fmt_value, self._tok(name),
                              tuple(l for _, l in dims), fmt_loc, tuple(d for d, _ in lists),
                              tuple(l for _, l in lists))

    @v_args(meta=True)
    def index_decl(self, meta, items):
        name, (dim, dim_loc), *values = items
        return ast.IndexDecl(str(name), dim, tuple(self._int(v, "a list position")
                                                   for v in values), self._tok(name), dim_loc)

    @v_args(meta=True)
    def fmt_arg(self, meta, items):
        (tok,) = items
        return ("arg", self._int(tok, "a fixed length", 1, MAX_WIDTH), self._tok(tok))

    @v_args(meta=True)
    def level(self, meta, items):
        tok, arg = items[0], (items[1] if len(items) > 1 else None)
        problem = level_problem(str(tok), None if arg is None else arg[1])
        if problem:
            raise UserError(problem, self._tok(tok))
        return ("level", level_text(str(tok), None if arg is None else arg[1]), self._tok(tok))

    @v_args(meta=True)
    def fmt_short(self, meta, items):
        tok, arg = items[0], (items[1] if len(items) > 1 else None)
        loc = self._tok(tok)
        name = str(tok)
        width = None if arg is None else arg[1]

        def resolve(order: int) -> Format:
            problem = shorthand_problem(name, width)
            if problem:
                raise UserError(problem, loc)
            f = shorthand(name, order, width)
            if f is None:
                raise UserError(f"format {name} is for tensors of {shorthand_orders(name)}, "
                                f"but this tensor has {order} dimension(s)", loc)
            return f

        return None, loc, resolve

    @v_args(meta=True)
    def fmt_general(self, meta, items):
        levels = [t[1] for t in items if isinstance(t, tuple) and t[0] == "level"]
        order_spec = next((x for x in items if isinstance(x, tuple) and x[0] != "level"), None)
        blocked = any(isinstance(t, Token) and t.type == "BLOCKED" for t in items)
        loc = self._meta(meta)
        problem = format_problem(tuple(levels), blocked)
        if problem:
            raise UserError(problem, loc)

        def resolve(order: int) -> Format:
            if len(levels) != order:
                raise UserError(f"format has {len(levels)} level(s) but the tensor has {order} "
                                f"dimension(s); give one level format per dimension", loc)
            mode_order = tuple(range(order))
            if order_spec is not None:
                mode_order, oloc = order_spec
                if sorted(mode_order) != list(range(order)):
                    raise UserError(f"mode order ({', '.join(map(str, mode_order))}) is not a "
                                    f"permutation of 0..{order - 1}", oloc)
            if blocked and order != 2:
                raise UserError("blocked formats are supported for matrices only", loc)
            return Format(tuple(levels), mode_order, blocked)

        return None, loc, resolve

    @v_args(meta=True)
    def fmt_order(self, meta, items):
        return tuple(self._int(t, "a mode number") for t in items), self._meta(meta)

    # ---- statements ---------------------------------------------------------------------
    @v_args(meta=True)
    def assignment(self, meta, items):
        lhs, rhs = items
        return ast.Assignment(lhs, rhs, lhs.loc)

    @v_args(meta=True)
    def access(self, meta, items):
        name, *idx = items
        idx = [t for t in idx if t is not None]
        for x in idx:
            if x.op != "var":
                raise UserError("an element index is an index variable; a list index "
                                "expression goes before a `;`, as in x[t - 1; i, j]", x.loc)
        return ast.Access(str(name), tuple(x.args[0] for x in idx), self._tok(name),
                          tuple(x.loc for x in idx))

    @v_args(meta=True)
    def list_access(self, meta, items):
        name, *rest = items
        lists = tuple(x for x in rest if isinstance(x, ast.LIdx))
        idx = [t for t in rest if isinstance(t, Token)]
        return ast.Access(str(name), tuple(str(t) for t in idx), self._tok(name),
                          tuple(self._tok(t) for t in idx), lists)

    # ---- list index expressions -----------------------------------------------------------
    @v_args(inline=True)
    def lvar(self, tok):
        return ast.LIdx("var", (str(tok),), self._tok(tok))

    @v_args(inline=True)
    def lnum(self, tok):
        return ast.LIdx("num", (self._int(tok, "a list position"),), self._tok(tok))

    @v_args(meta=True, inline=True)
    def lscale(self, meta, tok, x):
        return ast.LIdx("*", (self._int(tok, "a stride"), x), self._meta(meta))

    @v_args(meta=True, inline=True)
    def ladd(self, meta, a, b):
        return ast.LIdx("+", (a, b), self._meta(meta))

    @v_args(meta=True, inline=True)
    def lsub(self, meta, a, b):
        return ast.LIdx("-", (a, b), self._meta(meta))

    @v_args(meta=True, inline=True)
    def lrev(self, meta, x):
        return ast.LIdx("reverse", (x,), self._meta(meta))

    @v_args(inline=True)
    def lind(self, tok, x):
        return ast.LIdx("ind", (str(tok), x), self._tok(tok))

    @v_args(meta=True, inline=True)
    def fallback(self, meta, a, b):
        if not a.lists:
            raise UserError(f"`else` gives the value of an out-of-range list access, but "
                            f"{a.tensor}[...] has no list indices", a.loc)
        return replace(a, fallback=b)

    # ---- loops ----------------------------------------------------------------------------
    @v_args(inline=True)
    def domain(self, tok):
        return str(tok), self._tok(tok)

    @v_args(inline=True)
    def window(self, tok):
        return self._int(tok, "a window length"), self._tok(tok)

    @v_args(inline=True)
    def init(self, name, *lists):
        return ast.Access(str(name), (), self._tok(name), (),
                          tuple(x for x in lists if x is not None))

    def body(self, items):
        return tuple(items)

    @v_args(inline=True)
    def map_loop(self, var, domain, body):
        return ast.Loop("map", str(var), domain[0], body, loc=self._tok(var), dim_loc=domain[1])

    @v_args(inline=True)
    def scan_loop(self, var, domain, body):
        return ast.Loop("scan", str(var), domain[0], body, loc=self._tok(var),
                        dim_loc=domain[1])

    @v_args(inline=True)
    def state_loop(self, name, kind, var, domain, init, body):
        return ast.Loop(str(kind), str(var), domain[0], body, str(name), init, self._tok(var),
                        domain[1])

    @v_args(inline=True)
    def state_loop1(self, lhs, kind, var, domain, init, expr):
        if lhs.lists:
            raise UserError(f"the state {lhs.tensor} of a {kind} is written without list "
                            f"indices", lhs.loc)
        body = (ast.Assignment(lhs, expr, lhs.loc),)
        return ast.Loop(str(kind), str(var), domain[0], body, lhs.tensor, init, self._tok(var),
                        domain[1])

    def _binary(op):
        @v_args(meta=True)
        def build(self, meta, items):
            lhs, rhs = items
            return ast.Binary(op, lhs, rhs, self._op_loc(meta, lhs, rhs))
        return build

    add = _binary("+")
    sub = _binary("-")
    mul = _binary("*")
    div = _binary("/")

    def _op_loc(self, meta, lhs, rhs) -> Loc:
        return self._meta(meta)

    @v_args(meta=True)
    def neg(self, meta, items):
        (x,) = items
        if isinstance(x, ast.Const):
            return ast.Const(-x.value, self._meta(meta))
        return ast.Call("neg", (x,), self._meta(meta))

    @v_args(inline=True)
    def const(self, tok):
        return ast.Const(finite_number(str(tok), self._tok(tok)), self._tok(tok))

    def fname(self, items):
        return items[0]

    @v_args(meta=True)
    def call(self, meta, items):
        name, *args = items
        return ast.Call(str(name), tuple(args), self._tok(name))

    @v_args(meta=True)
    def reduce(self, meta, items):
        op, *rest = items
        *idx, body = rest
        return ast.Reduce(str(op), tuple(str(t) for t in idx), body, self._tok(op))

    @v_args(inline=True)
    def include(self, tok):
        return _Include(str(tok)[1:-1], self._tok(tok))

    # ---- directives -----------------------------------------------------------------------
    @v_args(meta=True)
    def fuse(self, meta, items):
        name, *stmts = items
        return ast.Fuse(str(name), tuple(str(t) for t in stmts), self._tok(name),
                        tuple(self._tok(t) for t in stmts))

    @v_args(meta=True)
    def order(self, meta, items):
        stmt, *idx = items
        return ast.Order(str(stmt), tuple(str(t) for t in idx), self._tok(stmt),
                         tuple(self._tok(t) for t in idx))

    @v_args(meta=True)
    def parallelize(self, meta, items):
        stmt, idx, factor = items
        return ast.Parallelize(str(stmt), str(idx),
                               self._int(factor, "a parallel factor", 1, MAX_LANES),
                               self._tok(stmt))

    @v_args(meta=True)
    def block(self, meta, items):
        tensor, size = items
        return ast.Block(str(tensor), self._int(size, "a block size", 1), self._tok(tensor))

    @v_args(inline=True)
    def schedule(self, var, mode):
        if str(mode) not in ast.LOOP_MODES:
            raise UserError(f"unknown loop schedule {str(mode)!r}; schedules are "
                            f"{', '.join(ast.LOOP_MODES)}", self._tok(mode))
        return ast.Schedule(str(var), str(mode), self._tok(var), self._tok(mode))

    @v_args(meta=True)
    def dpart(self, meta, items):
        name, size, threshold = items
        loc = self._tok(name)
        if str(name) in PARAM_SHORTHANDS:
            raise UserError(f"format {name}(c) cannot be a part of a decomposition: the number of "
                            f"a part is its block size (parts: bcsr(b), bdcsr(b), bdense(b); the "
                            f"residual: an unblocked matrix format such as csr)", loc)
        fmt = shorthand(str(name), 2)
        if fmt is None:
            known = ", ".join(n for n in SHORTHAND_NAMES if shorthand(n, 2) is not None)
            raise UserError(f"unknown matrix format {str(name)!r} in a decomposition; known: "
                            f"{known}", loc)
        block = self._int(size, "a block size", 1) if size is not None else None
        t = finite_number(str(threshold), self._tok(threshold)) if threshold is not None else None
        return ast.DecomposePart(fmt, block, t, loc)

    @v_args(meta=True)
    def decompose(self, meta, items):
        tensor, *parts = items
        return ast.Decompose(str(tensor), tuple(parts), self._tok(tensor))

    @v_args(meta=True)
    def output(self, meta, items):
        return ast.Output(tuple(str(t) for t in items), self._tok(items[0]),
                          tuple(self._tok(t) for t in items))
