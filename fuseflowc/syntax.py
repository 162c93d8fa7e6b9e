"""The front end shared by the three text parsers (program, fused IR, SAMML): loading the Lark
grammars of fuseflowc.grammars (the top-level grammars/ directory), pausing the garbage collector
while a parse builds its objects, and turning Lark's parse errors into located `UserError`s.

Parsers are built LALR with positions on every node, and cached on disk by Lark (keyed by the
grammar's hash) so that compile-path commands start fast.

Syntax errors come in two wordings, both pinned by goldens: the program and fused-IR wording
(`syntax_error`: "unexpected 'x', expected A, B" and "... in program") and the SAMML wording
(`samml_syntax_error`: "unexpected 'x'; expected A or B", line-oriented, "end of file"). They
share the locating (`_position`, `_end`), the offending character, and the terminal tables.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from importlib import resources

from lark import Lark
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from .diagnostics import Loc, Source, UserError


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


# ---- locating an error (both wordings) ----------------------------------------------------------

@contextlib.contextmanager
def user_errors_unwrapped():
    """Around a lark Transformer's `transform`: a UserError raised inside it comes out as
    itself, not wrapped in lark's VisitError. (The caller transforms, in its own frame: a call
    from here into a stage's transformer would climb the layers.)"""
    try:
        yield
    except VisitError as e:
        if isinstance(e.orig_exc, UserError):
            raise e.orig_exc from None
        raise


def _position(e: UnexpectedInput) -> tuple[int, int]:
    """Line and column Lark gives for `e` (1, 1 when it gives none)."""
    return getattr(e, "line", None) or 1, getattr(e, "column", None) or 1


def _end(text: str, strip: bool = True) -> tuple[int, int]:
    """Line and column just after the last character of `text` (of its last non-empty line
    with `strip`: a premature end is shown after what was written, not on a blank line)."""
    lines = (text.rstrip("\n") if strip else text).split("\n")
    return len(lines), len(lines[-1]) + 1


def _character(e: UnexpectedCharacters, source: Source) -> str:
    """The character the lexer could not match."""
    return source.text[e.pos_in_stream] if e.pos_in_stream < len(source.text) else "?"


# ---- the program and fused-IR wording --------------------------------------------------------

# Lark terminal names of program.lark and fused.lark -> what a user would call them.
_PROGRAM_TERMINALS = {
    "NAME": "a name", "NUMBER": "a number", "INT": "an integer", "STRING": "a string",
    "LSQB": "'['", "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'",
    "RBRACE": "'}'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "PLUS": "'+'",
    "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "SEMICOLON": "';'", "DOT": "'.'",
    "__ANON_0": "'->'", "$END": "end of input", "PERCENT": "'%'", "REDOP": "sum or max",
    "BLOCKED": "'blocked'", "LOOPKIND": "fold or scan",
}


def _program_term(term: str) -> str:
    if term in _PROGRAM_TERMINALS:
        return _PROGRAM_TERMINALS[term]
    if term.isupper() and len(term) > 1 and not term.startswith("__"):
        return f"'{term.lower()}'"  # keyword terminals are named after their text
    return term


def _program_expected(names) -> str:
    items = sorted({_program_term(n) for n in names})
    if len(items) > 6:
        items = items[:6] + ["..."]
    return ", ".join(items)


def syntax_error(e: UnexpectedInput, source: Source, what: str) -> UserError:
    """A UserError for Lark's exception `e` while parsing `source` as `what` (e.g. 'program',
    'fused IR'): "unexpected 'x', expected A, B" (at most six alternatives listed)."""
    line, col = _position(e)
    if isinstance(e, UnexpectedCharacters):
        msg = f"unexpected character {_character(e, source)!r} in {what}"
        return UserError(msg, Loc(source, line, col))
    if isinstance(e, UnexpectedEOF):
        line, col = _end(source.text, strip=False)
        return UserError(f"unexpected end of input in {what}, expected "
                         f"{_program_expected(e.expected)}", Loc(source, line, col))
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return UserError(f"unexpected end of input in {what}, expected "
                             f"{_program_expected(e.accepts or e.expected)}",
                             Loc(source, *_end(source.text)))
        text = str(tok)
        if set(e.accepts or e.expected) == {"LOOPKIND"}:
            return UserError(f"unexpected {text!r}: `NAME = ...` starts a fold or scan (`H = fold "
                             f"l in L from X {{...}}`); an assignment indexes its left side, "
                             f"as in y[i] = ...", Loc(source, line, col, max(len(text), 1)))
        return UserError(f"unexpected {text!r}, expected "
                         f"{_program_expected(e.accepts or e.expected)}",
                         Loc(source, line, col, max(len(text), 1)))
    return UserError(f"syntax error in {what}", Loc(source, line, col))


# ---- the SAMML wording -------------------------------------------------------------------------

# Lark terminal names of samml.lark -> what a user would call them (others: their text).
_SAMML_TERMINALS = {
    "STREAM": "a stream name (%name)", "NAME": "a name", "INT": "an integer",
    "FLOAT": "a number", "STRING": 'a string ("...")', "_NL": "end of line",
    "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'", "LPAR": "'('",
    "RPAR": "')'", "COMMA": "','", "EQUAL": "'='", "COLON": "':'", "BLOCKED": "'blocked'",
    "$END": "end of file",
}


def _samml_term(term: str) -> str:
    if term in _SAMML_TERMINALS:
        return _SAMML_TERMINALS[term]
    try:
        pattern = parser("samml.lark").get_terminal(term).pattern
        return f"'{pattern.value}'" if pattern.type == "str" else term.lower()
    except KeyError:
        return term.lower()


def samml_syntax_error(e: UnexpectedInput, source: Source) -> UserError:
    """A UserError for Lark's exception `e` while parsing `source` as SAMML (samml.lark):
    "unexpected 'x'; expected A, B or C" (every alternative listed), lines being tokens."""
    line, col = _position(e)
    if isinstance(e, UnexpectedCharacters):
        return UserError(f"unexpected character {_character(e, source)!r}",
                         Loc(source, line, col))
    expected = sorted({_samml_term(t) for t in getattr(e, "expected", None) or
                       getattr(e, "accepts", None) or ()})
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        tok = e.token
        shown = "end of line" if tok.type == "_NL" else repr(str(tok))
        line, col = tok.line or line, tok.column or col
        msg = f"unexpected {shown}"
        length = 1 if tok.type == "_NL" else max(len(str(tok)), 1)
    else:
        msg, length = "unexpected end of file", 1
        line, col = _end(source.text)
    if expected:
        msg += "; expected " + (expected[0] if len(expected) == 1 else
                                ", ".join(expected[:-1]) + " or " + expected[-1])
    return UserError(msg, Loc(source, line, col, length))
