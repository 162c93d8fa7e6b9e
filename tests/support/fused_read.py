"""The oracle of the fused IR's fast readers (fuse.fastlines, fuse.fastregions): what
`read_items` makes of a text with them and with Lark alone, locations included."""

from __future__ import annotations

import re

from fuseflowc.diagnostics import Loc, Source, UserError
from fuseflowc.fuse.parser import read_items


def shape(x):
    """Everything an item holds, locations included, as comparable values."""
    if isinstance(x, Loc):
        return ("Loc", x.line, x.col, x.length, x.source.name if x.source else None)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(shape(y) for y in x))
    if isinstance(x, dict):
        return ("dict", tuple((shape(k), shape(v)) for k, v in x.items()))
    if hasattr(x, "__dict__"):
        return (type(x).__name__, tuple((k, shape(v)) for k, v in vars(x).items()))
    return x


def outcome(text: str, fast: bool):
    """The items read from `text` (with the fast readers or by Lark alone), or the error."""
    try:
        return shape(read_items(Source("<f>", text), fast))
    except UserError as e:
        return ("error", e.format())


def apply_edits(text: str, edits) -> str:
    """`text` with each (old, new), at) edit applied: `old`'s occurrence number `at` (modulo how
    many there are) replaced by `new`; an edit whose `old` is absent does nothing."""
    for (old, new), at in edits:
        hits = [m.start() for m in re.finditer(re.escape(old), text)]
        if hits:
            k = hits[at % len(hits)]
            text = text[:k] + new + text[k + len(old):]
    return text
