"""The fused IR read by Lark (grammars/fused.lark): the lines fuse.fastlines and
fuse.fastregions leave, and every text that has an error (whose messages are Lark's)."""

from __future__ import annotations

from lark import Token, Transformer, v_args
from lark.exceptions import UnexpectedInput

from ..diagnostics import Loc, Source, UserError
from ..formats import (
    MAX_WIDTH,
    Format,
    format_problem,
    level_problem,
    level_text,
)
from ..ir_kind import wrong_kind
from ..lang import ast
from ..limits import (
    MAX_INT,
    MAX_LANES,
    MAX_TENSOR_ORDER,
    check_nesting,
    finite_number,
    order_number,
    whole_number,
)
from ..syntax import parser, syntax_error, user_errors_unwrapped
from . import ir


def read(source: Source, text: str) -> tuple[list, list[int]]:
    """(the top-level items of `text` (the text of `source`, some lines blanked), as the
    transformer makes them; the line each starts on)."""
    try:
        tree = parser("fused.lark").parse(text)
    except UnexpectedInput as e:
        raise wrong_kind(source, "fused") or syntax_error(e, source, "fused IR") from None
    check_nesting(tree, source)  # (the transformer recurses once per nesting level)
    with user_errors_unwrapped():
        items = _Build(source).transform(tree)
    return items, [c.meta.line for c in tree.children]


@v_args(meta=True)
class _Build(Transformer):
    def __init__(self, source: Source):
        super().__init__()
        self.src = source

    def _loc(self, meta) -> Loc:
        if getattr(meta, "empty", True):
            return Loc(self.src, 1, 1)
        length = meta.end_pos - meta.start_pos if meta.line == meta.end_line else 1
        return Loc(self.src, meta.line, meta.column, max(length, 1))

    def _tok(self, t: Token) -> Loc:
        return Loc(self.src, t.line, t.column, max(len(str(t)), 1))

    def _int(self, t: Token, what: str, lo: int = 0, hi: int = MAX_INT) -> int:
        return whole_number(str(t), what, self._tok(t), lo, hi)

    def start(self, meta, items):
        return items

    def source(self, meta, items):
        return ("source", str(items[0])[1:-1])

    def dim_decl(self, meta, items):
        name, size = items
        return ("dim", str(name),
                None if size is None else self._int(size, "a dimension size", 1))

    def dim(self, meta, items):
        (t,) = items
        return self._int(t, "a dimension size", 1) if t.type == "INT" else str(t)

    def role_plain(self, meta, items):
        return str(items[0]), None

    def role_permuted(self, meta, items):
        return "permuted", str(items[0])

    def role_part(self, meta, items):
        name, threshold = items
        t = None if threshold is None else finite_number(str(threshold), self._tok(threshold))
        return "part", (str(name), t)

    def tensor_decl(self, meta, items):
        name, *rest = items
        block = rest[-1]
        role, copy_of = rest[-2]
        threshold = None
        if role == "part":
            copy_of, threshold = copy_of
        fmt = rest[-3]
        dims = tuple(d for d in rest[:-3] if d is not None)
        if len(dims) > MAX_TENSOR_ORDER:
            raise UserError(f"tensor '{name}' has {len(dims)} dims; at most {MAX_TENSOR_ORDER} "
                            f"are supported", self._tok(name))
        return ir.TensorInfo(str(name), dims, fmt, role,
                             None if block is None else self._int(block, "a block size", 1),
                             copy_of, self._tok(name), threshold)

    def fmt_arg(self, meta, items):
        (tok,) = items
        return self._int(tok, "a fixed length", 1, MAX_WIDTH)

    def fmt_short(self, meta, items):
        tok, arg = items[0], (items[1] if len(items) > 1 else None)
        return (str(tok), self._tok(tok), arg)

    def level(self, meta, items):
        tok, arg = items[0], (items[1] if len(items) > 1 else None)
        problem = level_problem(str(tok), arg)
        if problem:
            raise UserError(problem, self._tok(tok))
        return level_text(str(tok), arg)

    def fmt_general(self, meta, items):
        levels = [t for t in items if isinstance(t, str) and not isinstance(t, Token)]
        order = next((x for x in items if isinstance(x, tuple)), None)
        blocked = any(isinstance(t, Token) and t.type == "BLOCKED" for t in items)
        loc = self._loc(meta)
        problem = format_problem(tuple(levels), blocked)
        if problem:
            raise UserError(problem, loc)
        mode_order = order if order is not None else tuple(range(len(levels)))
        if sorted(mode_order) != list(range(len(levels))):
            raise UserError(f"mode order {mode_order} is not a permutation of the "
                            f"{len(levels)} levels", loc)
        if blocked and len(levels) != 2:
            raise UserError("blocked formats are supported for matrices only", loc)
        return Format(tuple(levels), tuple(mode_order), blocked)

    def fmt_order(self, meta, items):
        return tuple(self._int(t, "a mode number") for t in items)

    # ---- regions ---------------------------------------------------------------------------
    def grouped(self, meta, items):
        return str(items[0])

    def unfused(self, meta, items):
        return None

    def region(self, meta, items):
        name, group, *lines = items
        r = ir.Region(str(name), group, (), loc=self._tok(name))
        for kind, value in lines:
            if kind == "statements":
                r.statements = value
            elif kind == "materialized":
                r.materialized = value
            elif kind == "index":
                r.indices.append(value)
            elif kind == "expr":
                r.exprs.append(value)
            elif kind == "view":
                r.views.append(value)
            elif kind == "edge":
                r.edges.append(value)
            elif kind == "order":
                r.order, r.order_index, r_loc = value
                r.order_loc = r_loc
            elif kind == "parallel":
                r.parallel.append(value)
        return r

    def statements(self, meta, items):
        return ("statements", tuple(map(str, items)))

    def materialized(self, meta, items):
        return ("materialized", tuple(map(str, items)))

    def index(self, meta, items):
        name, dim = items
        return ("index", (str(name), dim))

    def reuse(self, meta, items):
        var, k, *names = items
        return ("reuse", str(var), self._int(k, "an iteration", 0, 10**9),
                [str(n) for n in names], self._loc(meta))

    def rebound(self, meta, items):
        var, k, of, *pairs = items
        return ("rebound", str(var), self._int(k, "an iteration", 0, 10**9),
                self._int(of, "an iteration", 0, 10**9),
                [(*p, self._loc(meta)) for p in pairs if p is not None],
                self._loc(meta))

    def wave(self, meta, items):
        name, k = items
        return ("wave", str(name), self._int(k, "a wave"))

    def binding(self, meta, items):
        return (str(items[0]), str(items[1]))

    def expr_line(self, meta, items):
        eid, lhs, expr, *rest = items
        writes = rest[-1] is not None
        bindings = tuple(b for b in rest[:-1] if b is not None)
        return ("expr", ir.Instance(str(eid), lhs.tensor, lhs.indices, expr, bindings, writes,
                                    self._tok(eid)))

    def kind_plain(self, meta, items):
        return str(items[0]), None

    def kind_inline(self, meta, items):
        return "inline", str(items[0])

    def kind_shared(self, meta, items):
        return "shared", str(items[0])

    def view(self, meta, items):
        vid, acc, (kind, producer), *mode = items
        mode = tuple(str(m) for m in mode if m is not None)
        return ("view", ir.View(str(vid), acc.tensor, acc.indices, kind, mode, producer,
                                loc=self._tok(vid)))

    def why_format(self, meta, items):
        return ("format", str(items[2]), str(items[0]), str(items[1]))

    def why_order(self, meta, items):
        return ("order", str(items[0]), None, None)

    def why_output(self, meta, items):
        return ("output", str(items[0]), None, None)

    def why_shared(self, meta, items):
        return ("shared", str(items[0]), None, None)

    def edge(self, meta, items):
        src, dst, (kind, stmt, tensor, view) = items
        return ("edge", ir.Edge(str(src), str(dst), kind, stmt, tensor, view,
                                loc=self._loc(meta)))

    def order(self, meta, items):
        *names, k = items
        names = tuple(str(n) for n in names if n is not None)
        return ("order", (names, order_number(str(k), len(names), self._tok(k)),
                          self._loc(meta)))

    def parallel(self, meta, items):
        stmt, local, index, factor = items
        return ("parallel", ir.Parallel(str(stmt), str(local), str(index),
                                        self._int(factor, "a parallel factor", 1, MAX_LANES)))

    # ---- expressions (as in fuseflowc.lang.parser) -------------------------------------------
    def access(self, meta, items):
        name, *idx = items
        return ast.Access(str(name), tuple(str(i) for i in idx if i is not None),
                          self._tok(name))

    def _bin(op):  # noqa: N805
        def f(self, meta, items):
            return ast.Binary(op, items[0], items[1], self._loc(meta))
        return f

    add, sub, mul, div = _bin("+"), _bin("-"), _bin("*"), _bin("/")

    def neg(self, meta, items):
        (x,) = items
        if isinstance(x, ast.Const):
            return ast.Const(-x.value, self._loc(meta))
        return ast.Call("neg", (x,), self._loc(meta))

    def const(self, meta, items):
        return ast.Const(finite_number(str(items[0]), self._tok(items[0])), self._tok(items[0]))

    def fname(self, meta, items):
        return items[0]

    def call(self, meta, items):
        name, *args = items
        return ast.Call(str(name), tuple(args), self._tok(name))

    def reduce(self, meta, items):
        op, *rest = items
        *idx, body = rest
        return ast.Reduce(str(op), tuple(str(t) for t in idx), body, self._tok(op))
