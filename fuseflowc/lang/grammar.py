"""Loading the project's Lark grammars from fuseflowc.grammars (the top-level grammars/ dir).

Parsers are built LALR with positions on every node, and cached on disk by Lark (keyed by the
grammar's hash) so that compile-path commands start fast.
"""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark


@functools.cache
def parser(grammar_file: str, start: str = "start") -> Lark:
    """The LALR parser of `grammar_file` (e.g. 'program.lark') for start symbol `start`."""
    text = resources.files("fuseflowc.grammars").joinpath(grammar_file).read_text(encoding="utf-8")
    return Lark(text, parser="lalr", start=start, propagate_positions=True,
                maybe_placeholders=True, cache=True)
