"""The fused IR's regions, read without Lark when they are spelled as `fuse` prints them.

Regions are most of a fused IR's text and, through Lark's LALR parser (a token at a time, a tree
node per rule, then the transformer), most of `lower`'s parse time. `read` takes a region whose
every line has the printer's exact spelling (any indentation) and builds what fuse.parser's
transformer builds from it: the same objects with the same locations, a node's location being
the span Lark gives its parse tree (from its first child's outermost parentheses to its last
child's; an item ending in a newline has length 1). fuse.fastlines then blanks the region's
lines in the text left for Lark.

A region is taken only when Lark would read it one way and to these objects: every word one
that only NAME matches (no keyword), no name where Lark's lexer would split it (REDOP, `sum`
or `max`, has priority over NAME where an operand starts: `summary[i]` is `sum` then an
error), every number one the transformer accepts, expressions nested well inside the parser's
limit. Anything else, well-formed or not, returns None and is left to Lark, whose messages
stay the only ones (tests/fuse/test_fuse_fastregions.py checks both readers agree).
"""

from __future__ import annotations

import re

from ..diagnostics import Loc, Source, UserError
from ..lang import ast
from ..limits import MAX_INT, MAX_LANES, finite_number, order_number, whole_number
from . import ir

#: The words of the fused grammar that some terminal other than NAME matches: its string
#: terminals (`tensor`, `reuse`, ...) and the alternatives spelled out in its regular ones
#: (ROLE's `input`, REDOP's `sum`, ...). Its other terminals (numbers, strings, newlines,
#: punctuation) match no word of NAME's shape. Written out so that reading needs no Lark;
#: tests/fuse/test_fuse_fastlines.py checks it against grammars/fused.lark. (Here, not in
#: fastlines, which imports this module: no import cycle.)
KEYWORDS = frozenset({
    "block", "blocked", "by", "dim", "edge", "expr", "format", "group", "index", "inline",
    "input", "intermediate", "materialized", "max", "of", "order", "output", "parallelize",
    "part", "permuted", "region", "reuse", "shared", "source", "statements", "sum", "tensor",
    "unfused", "view", "wave", "writes"})

_N = r"[A-Za-z_][A-Za-z_0-9.]*"
_NAMES = rf"{_N}(?:, {_N})*"
_IDX = rf"(?:{_N}(?:,{_N})*)?"
_HEAD = re.compile(rf"region ({_N}) (?:group ({_N})|unfused) \{{")
_LINE = re.compile(r"([ \t]*)([a-z]+) ")
_STATEMENTS = re.compile(_NAMES)
_INDEX = re.compile(rf"({_N}) : ({_N}|\d{{1,18}})")
_EXPR = re.compile(rf"({_N}) ({_N})\[({_IDX})\] = ([^{{}}\n]*) "
                   rf"\{{((?:{_N}={_N}(?:, {_N}={_N})*)?)\}}( writes)?")
_VIEW = re.compile(rf"({_N}) ({_N})\[({_IDX})\] (input|materialized|permuted|(inline|shared) "
                   rf"({_N})) \(((?:{_NAMES})?)\)")
_EDGE = re.compile(rf"({_N}) -> ({_N}) : (?:format ({_N}) ({_N})|(order|output|shared)) "
                   rf"by ({_N})")
_ORDER = re.compile(rf"((?:{_N}(?: -> {_N})*)?) : (\d{{1,18}})")
_PARALLEL = re.compile(rf"({_N}): ({_N}) = ({_N}) by (\d{{1,18}})")
_TOKEN = re.compile(rf"[ \t]*(?:({_N})|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|([-+*/(),\[\]]))")
#: Most operators, calls, reductions and parentheses in one expression read here: below what
#: fuse.parser's check_nesting refuses (MAX_NESTING = 100 levels), counted as nodes, not depth.
_MAX_NODES = 40


class _Defer(Exception):
    """The text is not one this module reads: Lark reads it."""


def read(lines: list[str], k: int, source: Source) -> tuple[ir.Region, int] | None:
    """(the region whose `region` line is lines[k], the index of its closing `}` line), or None
    when it is left to Lark. Line numbers are k + 1 and on."""
    head = _HEAD.fullmatch(lines[k])
    if head is None:
        return None
    try:
        words = [head.group(1)] + ([head.group(2)] if head.group(2) else [])
        _plain(words)
        r = ir.Region(head.group(1), head.group(2), (),
                      loc=Loc(source, k + 1, 8, len(head.group(1))))
        j = k + 1
        while j < len(lines) and lines[j] != "}":
            _line(r, lines[j], j + 1, source)
            j += 1
        if j == len(lines):
            return None
        return r, j
    except (_Defer, UserError):
        return None


def _plain(words) -> None:
    if not KEYWORDS.isdisjoint(words):
        raise _Defer


def _line(r: ir.Region, line: str, n: int, source: Source) -> None:
    m = _LINE.match(line)
    if m is None:
        raise _Defer
    at, kind = m.end(), m.group(2)
    rest = line[at:]
    if kind in ("statements", "materialized"):
        if _STATEMENTS.fullmatch(rest) is None:
            raise _Defer
        names = tuple(rest.split(", "))
        _plain(names)
        if kind == "statements":
            r.statements = names
        else:
            r.materialized = names
    elif kind == "index":
        x = _match(_INDEX, rest)
        dim = x.group(2)
        _plain([x.group(1)] + ([] if dim[0].isdigit() else [dim]))
        if dim[0].isdigit():
            dim = whole_number(dim, "a dimension size", None, 1, MAX_INT)
        r.indices.append((x.group(1), dim))
    elif kind == "expr":
        r.exprs.append(_expr_line(_match(_EXPR, rest), line, at, n, source))
    elif kind == "view":
        r.views.append(_view(_match(_VIEW, rest), at, n, source))
    elif kind == "edge":
        x = _match(_EDGE, rest)
        src, dst, tensor, view, why, stmt = x.groups()
        _plain([w for w in (src, dst, tensor, view, stmt) if w is not None])
        r.edges.append(ir.Edge(src, dst, why or "format", stmt, tensor, view,
                               loc=Loc(source, n, len(m.group(1)) + 1, 1)))
    elif kind == "order":
        x = _match(_ORDER, rest)
        names = tuple(x.group(1).split(" -> ")) if x.group(1) else ()
        _plain(names)
        r.order = names
        r.order_index = order_number(x.group(2), len(names))
        r.order_loc = Loc(source, n, len(m.group(1)) + 1, 1)
    elif kind == "parallelize":
        x = _match(_PARALLEL, rest)
        _plain(x.groups()[:3])
        r.parallel.append(ir.Parallel(x.group(1), x.group(2), x.group(3),
                                      whole_number(x.group(4), "a parallel factor", None, 1,
                                                   MAX_LANES)))
    else:
        raise _Defer


def _match(pattern: re.Pattern, text: str) -> re.Match:
    m = pattern.fullmatch(text)
    if m is None:
        raise _Defer
    return m


def _idx(text: str) -> tuple[str, ...]:
    names = tuple(text.split(",")) if text else ()
    _plain(names)
    return names


def _view(x: re.Match, at: int, n: int, source: Source) -> ir.View:
    vid, tensor, idx, kind, shared, producer, mode = x.groups()
    _plain([vid, tensor] + ([producer] if producer else []))
    mode_order = tuple(mode.split(", ")) if mode else ()
    _plain(mode_order)
    return ir.View(vid, tensor, _idx(idx), shared or kind, mode_order, producer,
                   loc=Loc(source, n, at + 1, len(vid)))


def _expr_line(x: re.Match, line: str, at: int, n: int, source: Source) -> ir.Instance:
    eid, tensor, idx, _, binds, writes = x.groups()
    _plain([eid, tensor])
    pairs = tuple(tuple(b.split("=")) for b in binds.split(", ")) if binds else ()
    _plain([w for p in pairs for w in p])
    start = at + x.start(4)
    expr = _Expr(line, start, at + x.end(4), n, source).read()
    return ir.Instance(eid, tensor, _idx(idx), expr, pairs, writes is not None,
                       Loc(source, n, at + 1, len(eid)))


class _Expr:
    """A recursive-descent reader of one expression, giving each node with its span (start,
    end) and its container's (the outermost parentheses around it), as Lark's trees have."""

    def __init__(self, line: str, start: int, end: int, n: int, source: Source):
        self.toks: list[tuple[str, str, int]] = []   # (kind, text, offset)
        pos = start
        while pos < end:
            m = _TOKEN.match(line, pos, end)
            if m is None or m.end() == pos:
                raise _Defer
            kind = "n" if m.group(1) else "#" if m.group(2) else m.group(3)
            text = m.group(m.lastindex)
            self.toks.append((kind, text, m.start(m.lastindex)))
            pos = m.end()
        self.k, self.n, self.src, self.nodes = 0, n, source, 0

    def read(self) -> ast.Expr:
        node = self._sum()[0]
        if self.k != len(self.toks):
            raise _Defer
        return node

    def _peek(self) -> str | None:
        return self.toks[self.k][0] if self.k < len(self.toks) else None

    def _take(self, kind: str) -> tuple[str, str, int]:
        if self._peek() != kind:
            raise _Defer
        self.k += 1
        return self.toks[self.k - 1]

    def _loc(self, start: int, end: int) -> Loc:
        return Loc(self.src, self.n, start + 1, max(end - start, 1))

    def _tok(self, tok) -> Loc:
        return Loc(self.src, self.n, tok[2] + 1, len(tok[1]))

    # each returns (node, start, end, container start, container end)
    def _sum(self):
        return self._left_assoc(("+", "-"), self._product)

    def _product(self):
        return self._left_assoc(("*", "/"), self._unary)

    def _left_assoc(self, ops: tuple[str, str], operand):
        """operand (op operand)*, for `ops`, grouped from the left (the grammar's sum and
        product levels)."""
        a = operand()
        while self._peek() in ops:
            op = self._take(self._peek())[0]
            a = self._binary(op, a, operand())
        return a

    def _binary(self, op, a, b):
        self._nest()
        start, end = a[3], b[4]
        return ast.Binary(op, a[0], b[0], self._loc(start, end)), start, end, start, end

    def _nest(self) -> None:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise _Defer

    def _unary(self):
        if self._peek() != "-":
            return self._atom()
        minus = self._take("-")
        self._nest()
        x = self._unary()
        start, end = minus[2], x[4]
        loc = self._loc(start, end)
        node = (ast.Const(-x[0].value, loc) if isinstance(x[0], ast.Const)
                else ast.Call("neg", (x[0],), loc))
        return node, start, end, start, end

    def _atom(self):
        kind = self._peek()
        if kind == "(":
            left = self._take("(")
            self._nest()
            x = self._sum()
            right = self._take(")")
            return x[0], x[1], x[2], left[2], right[2] + 1
        if kind == "#":
            tok = self._take("#")
            end = tok[2] + len(tok[1])
            return ast.Const(finite_number(tok[1]), self._tok(tok)), tok[2], end, tok[2], end
        name = self._take("n")
        word = name[1]
        if word in ("sum", "max"):
            return self._redop(name)
        if word.startswith(("sum", "max")):   # Lark's lexer reads REDOP, then the rest
            raise _Defer
        _plain([word])
        if self._peek() == "(":
            return self._call(name, word)
        self._take("[")
        idx = []
        if self._peek() == "n":
            idx.append(self._take("n")[1])
            while self._peek() == ",":
                self._take(",")
                idx.append(self._take("n")[1])
        _plain(idx)
        end = self._take("]")[2] + 1
        node = ast.Access(word, tuple(idx), self._tok(name))
        return node, name[2], end, name[2], end

    def _redop(self, op):
        if self._peek() == "(":
            return self._call(op, op[1])
        self._take("[")
        idx = [self._take("n")[1]]
        while self._peek() == ",":
            self._take(",")
            idx.append(self._take("n")[1])
        _plain(idx)
        self._take("]")
        self._take("(")
        self._nest()
        body = self._sum()[0]
        end = self._take(")")[2] + 1
        return ast.Reduce(op[1], tuple(idx), body, self._tok(op)), op[2], end, op[2], end

    def _call(self, name, word):
        self._take("(")
        self._nest()
        args = [self._sum()[0]]
        while self._peek() == ",":
            self._take(",")
            args.append(self._sum()[0])
        end = self._take(")")[2] + 1
        return ast.Call(word, tuple(args), self._tok(name)), name[2], end, name[2], end
