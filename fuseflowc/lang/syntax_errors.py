"""Turning Lark's parse errors into located, human `UserError`s (shared by all three grammars)."""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import Loc, Source, UserError

# Lark terminal names -> what a user would call them.
_PRETTY = {
    "NAME": "a name", "NUMBER": "a number", "INT": "an integer", "STRING": "a string",
    "LSQB": "'['", "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'",
    "RBRACE": "'}'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "PLUS": "'+'",
    "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "SEMICOLON": "';'", "DOT": "'.'",
    "__ANON_0": "'->'", "$END": "end of input", "PERCENT": "'%'", "REDOP": "sum or max",
    "BLOCKED": "'blocked'", "LOOPKIND": "fold or scan",
}


def _pretty(term: str) -> str:
    if term in _PRETTY:
        return _PRETTY[term]
    if term.isupper() and len(term) > 1 and not term.startswith("__"):
        return f"'{term.lower()}'"  # keyword terminals are named after their text
    return term


def _expected(names) -> str:
    items = sorted({_pretty(n) for n in names})
    if len(items) > 6:
        items = items[:6] + ["..."]
    return ", ".join(items)


def syntax_error(e: UnexpectedInput, source: Source, what: str) -> UserError:
    """A UserError for Lark's exception `e` while parsing `source` as `what` (e.g. 'program')."""
    line = getattr(e, "line", None) or 1
    col = getattr(e, "column", None) or 1
    if isinstance(e, UnexpectedCharacters):
        ch = source.text[e.pos_in_stream] if e.pos_in_stream < len(source.text) else "?"
        msg = f"unexpected character {ch!r} in {what}"
        return UserError(msg, Loc(source, line, col))
    if isinstance(e, UnexpectedEOF):
        lines = source.text.split("\n")
        line = len(lines)
        col = len(lines[-1]) + 1
        return UserError(f"unexpected end of input in {what}, expected {_expected(e.expected)}",
                         Loc(source, line, col))
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            lines = source.text.rstrip("\n").split("\n")
            return UserError(f"unexpected end of input in {what}, expected "
                             f"{_expected(e.accepts or e.expected)}",
                             Loc(source, len(lines), len(lines[-1]) + 1))
        text = str(tok)
        if set(e.accepts or e.expected) == {"LOOPKIND"}:
            return UserError(f"unexpected {text!r}: `NAME = ...` starts a fold or scan (`H = fold "
                             f"l in L from X {{...}}`); an assignment indexes its left side, "
                             f"as in y[i] = ...", Loc(source, line, col, max(len(text), 1)))
        return UserError(f"unexpected {text!r}, expected {_expected(e.accepts or e.expected)}",
                         Loc(source, line, col, max(len(text), 1)))
    return UserError(f"syntax error in {what}", Loc(source, line, col))
