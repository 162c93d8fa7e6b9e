"""Loading the project's Lark grammars from fuseflowc.grammars (the top-level grammars/ dir).

Parsers are built LALR with positions on every node, and cached on disk by Lark (keyed by the
grammar's hash) so that compile-path commands start fast.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from importlib import resources

from lark import Lark


@functools.cache
def parser(grammar_file: str, start: str = "start") -> Lark:
    """The LALR parser of `grammar_file` (e.g. 'program.lark') for start symbol `start`."""
    text = resources.files("fuseflowc.grammars").joinpath(grammar_file).read_text(encoding="utf-8")
    return Lark(text, parser="lalr", start=start, propagate_positions=True,
                maybe_placeholders=True, cache=True)


@contextlib.contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector (as a `with` block or a decorator; nests).

    Parsing and building an IR make millions of small objects that all live until the parse
    ends; the collector's passes over them, triggered every few hundred allocations, made a
    4 MB SAMML file take 25 s of CPU where it takes 9 s without (found by fuzzing). Nothing a
    parse makes is garbage before it returns, and the objects are collected as usual after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
