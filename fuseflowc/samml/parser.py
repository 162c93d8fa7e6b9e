"""Parsing the SAMML text format (grammars/samml.lark) into a `Module`.

`parse_module(source)` reports, with locations, everything that prevents building the data model:
syntax errors, bad tensor declarations, unknown node kinds, unknown or repeated attribute names,
a stream name defined twice. Everything else (operand counts and kinds, attribute values,
undefined streams, cycles, tensor consistency) is the verifier's job (`verify.verify`), so that
graphs built in Python get the same checks.

Stream names may be used before their definition inside a graph (so a cycle can be written down
and reported by the verifier).
"""

from __future__ import annotations

import math
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedInput

from ..diagnostics import DiagnosticSink, Loc, Source
from ..formats import (
    MAX_WIDTH,
    Format,
    format_problem,
    level_problem,
    level_text,
    shorthand,
    shorthand_orders,
    shorthand_problem,
)
from ..ir_kind import wrong_kind
from ..limits import MAX_INT, MAX_TENSOR_ORDER, check_nesting, whole_number
from ..syntax import parser, paused_gc, samml_syntax_error
from .ir import KINDS, ROLES, Decompose, Graph, Module, Node, Permute, Schedule, Stream, TensorDecl


@paused_gc()
def parse_module(source: Source) -> Module:
    """Parse a SAMML file into a Module (not yet verified). Raises UserError."""
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    try:
        tree = parser("samml.lark").parse(text)
    except UnexpectedInput as e:
        raise wrong_kind(source, "samml") or samml_syntax_error(e, source) from None
    # the builder recurses once per level of lists in lists
    check_nesting(tree, source, {"v_list"}, "an attribute value (lists in lists)", "")
    return _Builder(source).module(tree)


def parse_text(text: str, name: str = "<input>") -> Module:
    """Convenience: parse SAMML text given as a string."""
    return parse_module(Source(name, text))


# ---- tree -> data model ------------------------------------------------------------------------

class _Builder:
    def __init__(self, source: Source):
        self.source = source
        self.sink = DiagnosticSink()

    def int(self, tok: Token, what: str) -> int:
        """An integer token (signed), bounded by MAX_INT before it is converted."""
        return whole_number(str(tok), what, self.loc(tok), -MAX_INT, MAX_INT)

    def loc(self, item: Tree | Token) -> Loc:
        if isinstance(item, Token):
            return Loc(self.source, item.line or 1, item.column or 1, max(len(str(item)), 1))
        meta = item.meta
        if getattr(meta, "empty", True):
            return Loc(self.source, 1, 1)
        length = meta.end_column - meta.column if meta.end_line == meta.line else 1
        return Loc(self.source, meta.line, meta.column, max(length, 1))

    def module(self, tree: Tree) -> Module:
        m = Module(loc=Loc(self.source, 1, 1))
        seen_source: Token | None = None
        names: list[Tree] = []
        for item in tree.children:
            if item.data == "source":
                tok = item.children[0]
                if seen_source is not None:
                    self.sink.error("the source program is named twice", self.loc(tok))
                seen_source = tok
                m.source = str(tok)[1:-1]
            elif item.data == "tensor_decl":
                decl = self.tensor_decl(item)
                if decl is not None:
                    if m.tensor(decl.name) is not None:
                        self.sink.error(f"tensor {decl.name} is declared twice", decl.loc)
                        self.sink.note("first declared here", m.tensor(decl.name).loc)
                    else:
                        m.tensors.append(decl)
            elif item.data == "permute":
                m.steps.append(self.permute(item, len(m.graphs)))
            elif item.data == "decompose":
                m.steps.append(self.decompose(item, len(m.graphs)))
            elif item.data == "schedule":
                m.schedules.append(self.schedule(item))
            elif item.data == "names":
                names.append(item)
            elif item.data in ("wave", "iteration"):
                names.append(item)
            elif item.data == "graph_reuse":
                g = self.graph_reuse(item, m)
                if g is not None:
                    m.graphs.append(g)
            else:
                m.graphs.append(self.graph(item))
        for item in names:
            if item.data == "wave":
                self.wave(item, m)
            elif item.data == "iteration":
                self.iteration(item, m)
            else:
                self.names(item, m)
        for g in m.graphs:  # a reuse has its template's index names (named after the graphs)
            if g.template is not None and not g.source_names and m.graph(g.template):
                g.source_names = dict(m.graph(g.template).source_names)
        self.sink.raise_if_any()
        return m

    # -- loop schedules ----------------------------------------------------------------------
    def graph_reuse(self, t: Tree, m: Module) -> Graph | None:
        """`graph NAME = TEMPLATE {a = b, ...}`: TEMPLATE (an earlier graph written out) with
        tensor b bound where it names tensor a."""
        name_tok, tmpl_tok, attrs = t.children
        tmpl = m.graph(str(tmpl_tok))
        if tmpl is None or tmpl.template is not None:
            why = "is not defined before it" if tmpl is None else "itself reuses another graph"
            self.sink.error(f"graph {name_tok} reuses graph {tmpl_tok}, which {why}",
                            self.loc(tmpl_tok))
            return None
        binds: dict[str, str] = {}
        for a in (attrs.children if attrs is not None else []):
            if a is None:
                continue
            key_tok, value = a.children
            v = self.value(value, str(key_tok))
            if not isinstance(v, str):
                self.sink.error(f"binding of tensor {key_tok}: expected a tensor name",
                                self.loc(key_tok))
            elif str(key_tok) in binds:
                self.sink.error(f"tensor {key_tok} is bound twice", self.loc(key_tok))
            else:
                binds[str(key_tok)] = v
        g = tmpl.rebound(str(name_tok), binds)
        g.template, g.binds, g.loc = tmpl.name, binds, self.loc(name_tok)
        return g

    def wave(self, t: Tree, m: Module) -> None:
        """`wave GRAPH K`: the graph's anti-diagonal in a wavefront loop nest."""
        name_tok, k_tok = t.children
        g = m.graph(str(name_tok))
        k = self.int(k_tok, "a wave")
        if g is None:
            self.sink.error(f"wave of graph {name_tok}, which the module does not define",
                            self.loc(name_tok))
        elif g.wave is not None:
            self.sink.error(f"the wave of graph {name_tok} is given twice", self.loc(name_tok))
        elif k < 0:
            self.sink.error(f"a wave is a number >= 0, not {k}", self.loc(k_tok))
        else:
            g.wave = k

    def iteration(self, t: Tree, m: Module) -> None:
        """`iteration GRAPH l K`: the graph computes iteration K of reused loop l."""
        name_tok, var_tok, k_tok = t.children
        g = m.graph(str(name_tok))
        k = self.int(k_tok, "an iteration")
        if g is None:
            self.sink.error(f"iteration of graph {name_tok}, which the module does not define",
                            self.loc(name_tok))
        elif g.iteration is not None:
            self.sink.error(f"the iteration of graph {name_tok} is given twice",
                            self.loc(name_tok))
        elif k < 0:
            self.sink.error(f"an iteration is a number >= 0, not {k}", self.loc(k_tok))
        else:
            g.iteration = (str(var_tok), k)

    # -- index names -------------------------------------------------------------------------
    def names(self, t: Tree, m: Module) -> None:
        """`names GRAPH {u0 = j, u1 = [i, k]}`: the program's names of a graph's indices."""
        name_tok, attrs = t.children
        g = m.graph(str(name_tok))
        if g is None:
            self.sink.error(f"names of graph {name_tok}, which the module does not define",
                            self.loc(name_tok))
            return
        if g.source_names:
            self.sink.error(f"the names of graph {name_tok} are given twice", self.loc(name_tok))
            return
        for a in (attrs.children if attrs is not None else []):
            if a is None:
                continue
            key_tok, value = a.children
            v = self.value(value, str(key_tok))
            ns = tuple(v) if isinstance(v, list) else (v,)
            if str(key_tok) in g.source_names:
                self.sink.error(f"index {key_tok} is named twice", self.loc(key_tok))
            elif not ns or not all(isinstance(x, str) for x in ns):
                self.sink.error(f"index {key_tok}: expected a name or a list of names",
                                self.loc(key_tok))
            else:
                g.source_names[str(key_tok)] = ns

    # -- tensor declarations -----------------------------------------------------------------
    def tensor_decl(self, t: Tree) -> TensorDecl | None:
        name_tok, *rest = t.children
        *dim_trees, fmt, role_tok, block_tok = rest
        dims: list[str | int] = []
        for d in dim_trees:
            if d is None:
                continue
            tok = d.children[0]
            if tok.type == "INT":
                size = self.int(tok, "a dimension")
                if size <= 0:
                    self.sink.error(f"dimension {tok} of tensor {name_tok} must be positive",
                                    self.loc(tok))
                    return None
                dims.append(size)
            else:
                dims.append(str(tok))
        order = len(dims)
        if order > MAX_TENSOR_ORDER:
            self.sink.error(f"tensor {name_tok} has {order} dimensions; at most "
                            f"{MAX_TENSOR_ORDER} are supported", self.loc(name_tok))
            return None
        fmt_value = self.format(fmt, order, str(name_tok))
        role = str(role_tok)
        if role not in ROLES:
            self.sink.error(f"unknown tensor role '{role}'; expected input, output or temp",
                            self.loc(role_tok))
            return None
        block = None
        if block_tok is not None:
            block = self.int(block_tok, "a block size")
            if block <= 0:
                self.sink.error("block size must be positive", self.loc(block_tok))
                return None
        if fmt_value is None:
            return None
        if fmt_value.blocked and block is None:
            self.sink.error(f"tensor {name_tok} has the blocked format {fmt_value.name()} and "
                            "needs a block size (`block B` after its role)", self.loc(fmt))
            return None
        if block is not None and not fmt_value.blocked:
            self.sink.error(f"tensor {name_tok} has a block size but its format "
                            f"{fmt_value.name()} is not blocked", self.loc(block_tok))
            return None
        return TensorDecl(str(name_tok), tuple(dims), fmt_value, role, block, self.loc(name_tok))

    def format(self, t: Tree, order: int, tensor: str) -> Format | None:
        if t.data == "fmt_short":
            tok = t.children[0]
            arg = self.fmt_arg(t.children[1] if len(t.children) > 1 else None)
            if arg is False:
                return None
            problem = shorthand_problem(str(tok), arg)
            if problem:
                self.sink.error(problem, self.loc(tok))
                return None
            f = shorthand(str(tok), order, arg)
            if f is None:
                self.sink.error(f"format {tok} is for {shorthand_orders(str(tok))}, but tensor "
                                f"{tensor} has {order} dimension{'s' * (order != 1)}",
                                self.loc(tok))
            return f
        levels: list[str] = []
        order_tree = None
        blocked = False
        for c in t.children:
            if isinstance(c, Tree) and c.data == "level":
                tok = c.children[0]
                arg = self.fmt_arg(c.children[1] if len(c.children) > 1 else None)
                if arg is False:
                    return None
                problem = level_problem(str(tok), arg)
                if problem:
                    self.sink.error(problem, self.loc(tok))
                    return None
                levels.append(level_text(str(tok), arg))
            elif isinstance(c, Tree):
                order_tree = c
            elif c is not None and c.type == "BLOCKED":
                blocked = True
        problem = format_problem(tuple(levels), blocked)
        if problem:
            self.sink.error(problem, self.loc(t))
            return None
        if len(levels) != order:
            self.sink.error(f"format has {len(levels)} level{'s' * (len(levels) != 1)} but "
                            f"tensor {tensor} has {order} dimension{'s' * (order != 1)}",
                            self.loc(t))
            return None
        mode_order = tuple(range(order))
        if order_tree is not None:
            mode_order = tuple(self.int(x, "a mode number") for x in order_tree.children)
            if sorted(mode_order) != list(range(order)):
                self.sink.error(f"mode order ({', '.join(map(str, mode_order))}) is not a "
                                f"permutation of 0..{order - 1}", self.loc(order_tree))
                return None
        if blocked and order != 2:
            self.sink.error("blocked formats are for order-2 tensors", self.loc(t))
            return None
        return Format(tuple(levels), mode_order, blocked)

    def fmt_arg(self, t: Tree | None) -> int | None | bool:
        """The fixed length of `compressed(c)` / `ell(c)` (None: no argument; False: a bad one,
        reported)."""
        if t is None:
            return None
        tok = t.children[0]
        n = self.int(tok, "a fixed length")
        if n is None or not 1 <= n <= MAX_WIDTH:
            if n is not None:
                self.sink.error(f"the fixed length must be between 1 and {MAX_WIDTH}, not {n}",
                                self.loc(tok))
            return False
        return n

    # -- permute steps -----------------------------------------------------------------------
    def permute(self, t: Tree, position: int) -> Permute:
        """`permute SRC -> DST [modes (...)]`, placed after the `position` graphs before it
        (its checks are the verifier's)."""
        src_tok, dst_tok, modes_tree = t.children
        step = Permute(str(src_tok), str(dst_tok), None, position, self.loc(t),
                       self.loc(src_tok), self.loc(dst_tok))
        if modes_tree is not None:
            step.modes = tuple(self.int(x, "a mode number") for x in modes_tree.children)
            step.modes_loc = self.loc(modes_tree)
        step.loc = Loc(self.source, step.loc.line, step.loc.col, len("permute"))
        return step

    def decompose(self, t: Tree, position: int) -> Decompose:
        """`decompose SRC -> P0 >= t0, ..., R`, placed after the `position` graphs before it
        (its checks are the verifier's)."""
        src_tok, *parts = t.children
        names, thresholds, locs = [], [], []
        for p in parts:
            name_tok, thr = p.children
            names.append(str(name_tok))
            locs.append(self.loc(name_tok))
            if thr is None:
                thresholds.append(None)
                continue
            value = float(str(thr))
            if not math.isfinite(value):
                self.sink.error(f"threshold {thr} of part {name_tok} is not a finite number",
                                self.loc(thr))
                value = 1.0
            thresholds.append(value)
        step = Decompose(str(src_tok), tuple(names), tuple(thresholds), position, self.loc(t),
                         self.loc(src_tok), tuple(locs))
        step.loc = Loc(self.source, step.loc.line, step.loc.col, len("decompose"))
        return step

    # -- schedule directives -----------------------------------------------------------------
    def schedule(self, t: Tree) -> Schedule:
        """`schedule KIND {attr = value, ...}` (kind and values are checked by the verifier)."""
        kind_tok, attrs = t.children
        d = Schedule(str(kind_tok), loc=self.loc(kind_tok))
        self.attributes(d, attrs, f"schedule {kind_tok}")
        return d

    # -- graphs ------------------------------------------------------------------------------
    def graph(self, t: Tree) -> Graph:
        name_tok, *node_trees = t.children
        g = Graph(str(name_tok), loc=self.loc(name_tok))
        defined: dict[str, Stream] = {}
        pending: list[tuple[Node, list[Token]]] = []
        for nt in node_trees:
            built = self.node(nt, defined)
            if built is not None:
                g.nodes.append(built[0])
                pending.append(built)
        undefined: dict[str, Stream] = {}
        for node, operand_toks in pending:
            for tok in operand_toks:
                name = str(tok)[1:]
                s = defined.get(name)
                if s is None:  # left for the verifier to report, one object per name
                    s = undefined.setdefault(name, Stream(None, None, 0, name, None))
                node.inputs.append(s)
        _infer_kinds(g)
        return g

    def node(self, t: Tree, defined: dict[str, Stream]) -> tuple[Node, list[Token]] | None:
        results, kind_tok, operands, attrs = t.children
        cls = KINDS.get(str(kind_tok))
        if cls is None:
            self.sink.error(f"unknown node kind '{kind_tok}'; known kinds: "
                            f"{', '.join(KINDS)}", self.loc(kind_tok))
            return None
        node = cls()
        node.loc = self.loc(kind_tok)
        self.attributes(node, attrs, cls.KIND)
        for i, tok in enumerate(results.children if results is not None else []):
            name = str(tok)[1:]
            loc = self.loc(tok)
            if name in defined:
                self.sink.error(f"stream %{name} is defined twice (a stream has one producer)",
                                loc)
                self.sink.note("first defined here", defined[name].loc)
                continue
            s = Stream(None, node, i, name, loc)
            defined[name] = s
            node.outputs.append(s)
            node.result_locs.append(loc)
        operand_toks = list(operands.children) if operands is not None else []
        node.operand_locs = [self.loc(tok) for tok in operand_toks]
        return node, operand_toks

    def attributes(self, owner: Node | Schedule, attrs: Tree | None, what: str) -> None:
        """Set `{key = value, ...}` on `owner` (a node or schedule directive) as declared by its
        `attr_specs()`, recording each one's location; an unknown or repeated key is an error.
        `what` names the owner in messages."""
        specs = {s.name: s for s in owner.attr_specs()}
        for a in (attrs.children if attrs is not None else []):
            if a is None:
                continue
            key_tok, value = a.children
            key = str(key_tok)
            if key not in specs:
                known = ", ".join(specs)
                self.sink.error(f"{what} has no attribute '{key}'; its attributes: {known}",
                                self.loc(key_tok))
                continue
            if key in owner.attr_locs:
                self.sink.error(f"attribute '{key}' is given twice", self.loc(key_tok))
                continue
            owner.attr_locs[key] = self.loc(value) if isinstance(value, Tree) else self.loc(key_tok)
            type_ = specs[key].type
            setattr(owner, key, _coerce(self.value(value, key, type_ == "float"), type_))

    def value(self, v: Tree, key: str, real: bool = False) -> Any:
        """The literal of attribute `key`; `real`: a float is wanted (an integer literal of
        any length is then a float, else it must fit MAX_INT)."""
        if v.data == "v_list":
            return [self.value(c, key) for c in v.children if c is not None]
        tok = v.children[0]
        if v.data == "v_int":
            return float(tok) if real else self.int(tok, f"{key} =")
        if v.data == "v_float":
            return float(tok)
        return str(tok)


def _coerce(value: Any, type_: str) -> Any:
    """Literal -> attribute value: ints are floats where a float is wanted, and the names
    inf/nan are floats."""
    if type_ == "float":
        if isinstance(value, int):
            return float(value)
        if value in ("inf", "nan"):
            return math.inf if value == "inf" else math.nan
    return value


def _infer_kinds(g: Graph) -> None:
    """Set the kind of every parsed result stream from its producer's signature. Polymorphic
    kinds (repeat, fork, join) follow their input 0, possibly defined later: iterate to a
    fixpoint (a polymorphic cycle keeps kind None; the verifier reports the cycle)."""
    changed = True
    rounds = 0
    while changed and rounds <= len(g.nodes) + 1:
        changed = False
        rounds += 1
        for n in g.nodes:
            kinds = n.output_kinds([s.kind for s in n.inputs])
            for s, k in zip(n.outputs, kinds):
                if s.kind != k and k is not None:
                    s.kind = k
                    changed = True
