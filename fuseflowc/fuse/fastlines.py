"""The fused IR's plainest top-level lines, read without Lark.

A reused loop's fused IR is mostly lines of three shapes, as `fuse` prints them: tensor
declarations (`tensor W__3[E, NH] : dense input`), the statements of each iteration (`reuse l 3:
a__3, b__3`) and the bindings of rebound iterations (`reuse l 3 = 0 {a__0 = a__3, ...}`): 70% of
a 12-layer GPT-3's fused IR, and most of its parse time through Lark's LALR parser (tokens one
by one, a tree node per token, then the transformer). `split` reads each such line with one
regular expression into the item the parser's transformer would make (same values, same
locations) and blanks it (spaces: every other character keeps its position) in the text left
for Lark; `merge` puts the items back in line order.

A line is taken only when Lark could read it in no other way: at the top level (not inside a
region: the scan stops taking lines from a line that may open one, a `{` left open before any
`#`, until a line that is a lone `}` before any `#`), in the printer's exact spelling, every word one that only the
grammar's NAME terminal matches (no keyword), and every number one the parser accepts (so
reading it here cannot fail). Anything else, well-formed or not, is left to Lark: a blanked
line is what Lark would have read as one complete item, and the spaces left in its place are
whitespace Lark skips (swallowed by the previous line's newline token). Errors are Lark's
alone: when a text read this way has one, fuse.parser reads it again without this module (an
unexpected newline's text would show the blanks).
"""

from __future__ import annotations

import re

from ..diagnostics import Loc, Source
from ..formats import Format, format_problem, level_problem, level_text
from ..limits import MAX_INT, MAX_TENSOR_ORDER
from . import fastregions, ir
from .fastregions import KEYWORDS

_N = r"[A-Za-z_][A-Za-z_0-9.]*"
_TENSOR = re.compile(rf"tensor ({_N})\[([^\]\n]*)\] : ({_N}|\(({_N}(?:, {_N})*)\)"
                     r"(?: order \((\d{1,18}(?:, \d{1,18})*)\))?) "
                     rf"(input|output|intermediate|permuted of ({_N}))")
_REUSE = re.compile(rf"reuse ({_N}) (\d{{1,10}}): ({_N}(?:, {_N})*)")
_REBOUND = re.compile(rf"reuse ({_N}) (\d{{1,10}}) = (\d{{1,10}}) "
                      rf"\{{((?:{_N} = {_N})(?:, {_N} = {_N})*)?\}}")
_SOURCE = re.compile(r'source ("[^"\n]*")')
_DIM_DECL = re.compile(rf"dim ({_N})(?: = (\d{{1,18}}))?")
_WAVE = re.compile(rf"wave ({_N}) (\d{{1,18}})")
_WORD = re.compile(_N)
_DIM = re.compile(rf"{_N}|\d{{1,18}}")
#: The most an iteration number may be (as fuse.parser's `reuse` lines).
_MAX_ITERATION = 10**9


def keywords() -> frozenset[str]:
    """KEYWORDS."""
    return KEYWORDS


def _names_only(words) -> bool:
    return keywords().isdisjoint(words)


def split(text: str, source: Source) -> tuple[list[tuple[int, object]], str]:
    """(the items of the lines read here, with their line numbers; `text` with those lines
    blanked). Items are what fuse.parser's transformer makes of the same lines."""
    items: list[tuple[int, object]] = []
    lines = text.split("\n")
    inside = False
    for k, line in enumerate(lines):
        code = line.split("#", 1)[0] if "#" in line else line
        if inside:
            inside = code.strip() != "}"
            continue
        item = _read(line, k + 1, source) if line[:1] in ("t", "r", "s", "d", "w") else None
        if item is None and line.startswith("region "):
            region = fastregions.read(lines, k, source)
            if region is not None:
                items.append((k + 1, region[0]))
                for j in range(k, region[1] + 1):
                    lines[j] = " " * len(lines[j])
                continue
        if item is None:
            inside = code.count("{") > code.count("}")
            continue
        items.append((k + 1, item))
        lines[k] = " " * len(line)
    if not items:
        return items, text
    return items, "\n".join(lines)


def merge(items: list, lines: list[int], fast: list[tuple[int, object]]) -> list:
    """Lark's `items` (starting on `lines`) and the `fast` ones, in line order."""
    out, k = [], 0
    for line, item in zip(lines, items):
        while k < len(fast) and fast[k][0] < line:
            out.append(fast[k][1])
            k += 1
        out.append(item)
    out.extend(item for _, item in fast[k:])
    return out


def nothing_left(text: str) -> bool:
    """Whether `text` (with the lines read here blanked) has only blanks and comments left,
    which Lark would read as no item."""
    return all(not x.strip() or x.lstrip(" \t").startswith("#") for x in text.split("\n"))


def _read(line: str, n: int, source: Source):
    m = _SOURCE.fullmatch(line)
    if m is not None:
        return ("source", m.group(1)[1:-1])
    m = _DIM_DECL.fullmatch(line)
    if m is not None:
        size = None if m.group(2) is None else int(m.group(2))
        if not _names_only([m.group(1)]) or (size is not None and not 1 <= size <= MAX_INT):
            return None
        return ("dim", m.group(1), size)
    m = _WAVE.fullmatch(line)
    if m is not None:
        if not _names_only([m.group(1)]) or int(m.group(2)) > MAX_INT:
            return None
        return ("wave", m.group(1), int(m.group(2)))
    m = _TENSOR.fullmatch(line)
    if m is not None:
        return _tensor(m, n, source)
    m = _REUSE.fullmatch(line)
    if m is not None:
        names = m.group(3).split(", ")
        if int(m.group(2)) > _MAX_ITERATION or not _names_only([m.group(1), *names]):
            return None
        return ("reuse", m.group(1), int(m.group(2)), names, _item_loc(source, n))
    m = _REBOUND.fullmatch(line)
    if m is not None:
        pairs = [p.split(" = ") for p in m.group(4).split(", ")] if m.group(4) else []
        if (int(m.group(2)) > _MAX_ITERATION or int(m.group(3)) > _MAX_ITERATION
                or not _names_only([m.group(1), *(x for p in pairs for x in p)])):
            return None
        loc = _item_loc(source, n)
        return ("rebound", m.group(1), int(m.group(2)), int(m.group(3)),
                [(a, b, loc) for a, b in pairs], loc)
    return None


def _item_loc(source: Source, n: int) -> Loc:
    """Where the parser locates a whole item on line n: its start, one column (its span, which
    ends after the newline that closes it, is on two lines)."""
    return Loc(source, n, 1, 1)


def _tensor(m: re.Match, n: int, source: Source):
    name, dims_text, fmt, levels, order, role, copy_of = m.groups()
    words = dims_text.split(", ") if dims_text else []
    if len(words) > MAX_TENSOR_ORDER or not _names_only([name]):
        return None
    if copy_of is not None:
        if not _names_only([copy_of]):
            return None
        role = "permuted"
    if levels is None:
        if not _names_only([fmt]):
            return None
        fmt = (fmt, Loc(source, n, m.start(3) + 1, len(fmt)), None)
    else:   # `(dense, compressed) order (1, 0)`: levels without lengths, not blocked
        fmt = _general(levels.split(", "), order)
        if fmt is None:
            return None
    dims: list = []
    for w in words:
        if _DIM.fullmatch(w) is None:
            return None
        if w[0].isdigit():
            v = int(w)
            if not 1 <= v <= MAX_INT:
                return None
            dims.append(v)
        elif not _names_only([w]):
            return None
        else:
            dims.append(w)
    return ir.TensorInfo(name, tuple(dims), fmt, role, None, copy_of,
                         Loc(source, n, 8, len(name)), None)


def _general(levels: list[str], order: str | None) -> Format | None:
    """The format of these levels in this mode order (None: storage order), or None when the
    parser would refuse it."""
    if not _names_only(levels) or any(level_problem(x, None) for x in levels):
        return None
    levels = [level_text(x, None) for x in levels]
    if format_problem(tuple(levels), False):
        return None
    modes = tuple(range(len(levels))) if order is None else tuple(map(int, order.split(", ")))
    if sorted(modes) != list(range(len(levels))):
        return None
    return Format(tuple(levels), modes, False)
