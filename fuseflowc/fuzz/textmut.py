"""Mutations of text inputs: grammar-aware (on the token stream) and byte-level.

The three IRs are split into tokens by their own Lark grammars (grammars/*.lark, the basic lexer,
keeping whitespace, comments and newlines), so that a mutation can replace a token by another of
its kind: a name by another name of the file, a keyword of the grammar or an undeclared name; a
number by an extreme value (5000 digits, 1e999, nan, inf, negative, zero); a string by a path
that is no regular file; punctuation by other punctuation. Other texts (TOML specs and arch
files, CSV and JSON lines results, Matrix Market and level files, schedule directives) use a
generic tokenizer with the same kinds. Statement-level mutations delete, duplicate, swap and
splice lines (from another seed of the same kind) and nest sub-expressions deeply; byte-level
ones flip bits, truncate, insert bytes (NUL, invalid UTF-8, CR), flood blank lines.

`mutate(kind, data, rng, ...)` returns the mutated bytes and a short description of the edits.
"""

from __future__ import annotations

import functools
import random
import re
from typing import NamedTuple, Sequence

from fuseflowc.samml.kinds import NAMES as PRIMITIVE_KINDS

#: Inputs tokenized by a project grammar: kind -> grammar file.
GRAMMARS = {"program": "program.lark", "fused": "fused.lark", "samml": "samml.lark",
            "directive": "program.lark"}

#: The largest mutated text (repeats and nesting are cut to fit): 1 MiB, the size of the
#: largest IR the examples make. The parsers read about 0.5 MB/s, so a 4 MB text takes most of
#: a case's 10 s without being a defect; the project's own size limit has its own tests.
MAX_BYTES = 1 << 20
#: Extreme replacements for a number.
NUMBERS = ("0", "-1", "1", "2", "3", "7", "1025", "65536", "2147483648", "9223372036854775808",
           "99999999999999999999", "1" + "0" * 5000, "1e999", "-1e999", "1e-999", "1e308",
           "4.9e-324", "nan", "inf", "-inf", "NaN", "0.5", "-0", "-0.0", "1e5", "0x10", "1_000",
           "007", ".5", "5.", "1e", "+3")
#: Replacements for a quoted string: paths that are no regular file, odd and long ones.
STRINGS = ('""', '"."', '"/"', '"/dev/zero"', '"/dev/null"', '"/proc/self/fd/0"',
           '"nonexistent.ff"', '"data"', '"../../../../../../etc/passwd"', '"\\x00"',
           '"' + "a" * 5000 + '"', '"é"', '"~"', '"*"')
#: Words every kind may receive: formats, operations, roles, every SAMML primitive kind
#: (samml.kinds: a new kind is fuzzed as soon as it is declared), names.
WORDS = ("dense", "compressed", "singleton", "csr", "csc", "dcsr", "dcsc", "bcsr", "bdense",
         "sparse", "coo", "relu", "exp", "gelu", "softmax", "sqrt", "sum", "max", "min", "mask",
         "input", "output", "intermediate", *PRIMITIVE_KINDS, "i", "j", "k", "u0", "u9", "I",
         "N", "A", "x", "y", "zz", "_", "n" * 3000, "é", "None", "true", "false", "inf", "nan")
PUNCT = ("(", ")", "[", "]", "{", "}", ",", ":", "=", "->", "+", "-", "*", "/", "%", "#", '"',
         ";", ".", "\\", "@", "$")
GENERIC_TOKEN = re.compile(
    r'(?P<newline>\r?\n)|(?P<space>[ \t]+)|(?P<comment>#[^\n]*)'
    r'|(?P<string>"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')'
    r'|(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)'
    r'|(?P<stream>%[A-Za-z0-9_]+)|(?P<name>[A-Za-z_][A-Za-z_0-9.]*)|(?P<punct>->|\S)')


class Tok(NamedTuple):
    """A token: its kind (name, number, string, stream, keyword, punct, newline, space,
    comment) and its span in the text."""

    kind: str
    start: int
    end: int


@functools.cache
def _grammar_lexer(grammar: str):
    """(lark parser, terminal name -> token kind) for a project grammar."""
    from lark.lexer import PatternStr

    from fuseflowc.syntax import parser
    p = parser(grammar)
    kinds = {}
    for t in p.terminals:
        if t.name in ("NAME",):
            kinds[t.name] = "name"
        elif t.name in ("INT", "NUMBER", "FLOAT", "SIGNED_NUMBER"):
            kinds[t.name] = "number"
        elif t.name == "STRING":
            kinds[t.name] = "string"
        elif t.name == "STREAM":
            kinds[t.name] = "stream"
        elif t.name == "_NL":
            kinds[t.name] = "newline"
        elif t.name == "COMMENT":
            kinds[t.name] = "comment"
        elif t.name.startswith("__IGNORE") or t.name == "WS":
            kinds[t.name] = "space"
        elif isinstance(t.pattern, PatternStr) and t.pattern.value.isalpha():
            kinds[t.name] = "keyword"
        elif t.name in ("REDOP", "ROLE", "VIEW_KIND", "BLOCKED", "WRITES"):
            kinds[t.name] = "keyword"
        else:
            kinds[t.name] = "punct"
    return p, kinds


@functools.cache
def grammar_words(grammar: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keywords and the punctuation of a grammar (its string terminals), sorted."""
    from lark.lexer import PatternStr

    p, _ = _grammar_lexer(grammar)
    words = sorted({t.pattern.value for t in p.terminals if isinstance(t.pattern, PatternStr)})
    return (tuple(w for w in words if w.isalpha()), tuple(w for w in words if not w.isalpha()))


def tokenize(kind: str, text: str) -> tuple[Tok, ...]:
    """The tokens of `text`, by its kind's grammar if it has one and the text lexes, else by the
    generic tokenizer. Every character belongs to a token (spans cover the text). Cached for
    texts of ordinary size: most mutations start from one of a few hundred seeds."""
    if len(text) <= 1 << 16:
        return _tokenize_cached(kind, text)
    return tuple(_tokenize(kind, text))


@functools.lru_cache(maxsize=512)
def _tokenize_cached(kind: str, text: str) -> tuple[Tok, ...]:
    return tuple(_tokenize(kind, text))


def _tokenize(kind: str, text: str) -> list[Tok]:
    grammar = GRAMMARS.get(kind)
    if grammar:
        p, kinds = _grammar_lexer(grammar)
        try:
            toks = [Tok(kinds.get(t.type, "punct"), t.start_pos, t.end_pos)
                    for t in p.lex(text, dont_ignore=True)]
            if sum(t.end - t.start for t in toks) == len(text):
                return toks
        except Exception:  # noqa: BLE001 - a mutated text need not lex: use the generic one
            pass
    return [Tok(m.lastgroup or "punct", m.start(), m.end()) for m in GENERIC_TOKEN.finditer(text)]


class TextMutator:
    """Mutates the texts of one kind; `donors` are other seeds of that kind (for splicing lines
    and borrowing names)."""

    def __init__(self, kind: str, rng: random.Random, donors: list[str] = (),
                 self_path: str | None = None):
        self.kind = kind
        self.rng = rng
        self.donors = list(donors)
        self.self_path = self_path
        grammar = GRAMMARS.get(kind)
        self.keywords, self.punct = grammar_words(grammar) if grammar else ((), PUNCT)

    # ---- grammar-aware ------------------------------------------------------------------
    def _pick(self, toks: Sequence[Tok], *kinds: str) -> Tok | None:
        cands = [t for t in toks if t.kind in kinds]
        return self.rng.choice(cands) if cands else None

    def _names(self, text: str, toks: Sequence[Tok]) -> list[str]:
        return sorted({text[t.start:t.end] for t in toks if t.kind == "name"})

    def replace_token(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Replace one token by another of its kind (or an extreme value of it)."""
        rng = self.rng
        t = self._pick(toks, "name", "number", "string", "stream", "keyword", "punct")
        if t is None:
            return text, "replace: no token"
        old = text[t.start:t.end]
        if t.kind == "number":
            new = rng.choice(NUMBERS)
        elif t.kind == "string":
            strings = STRINGS + ((f'"{self.self_path}"',) if self.self_path else ())
            new = rng.choice(strings)
        elif t.kind == "name":
            r = rng.random()
            names = self._names(text, toks)
            if r < 0.4 and names:
                new = rng.choice(names)
            elif r < 0.6 and self.keywords:
                new = rng.choice(self.keywords)
            elif r < 0.75:
                new = f"{old}_undeclared"
            else:
                new = rng.choice(WORDS)
        elif t.kind == "stream":
            streams = sorted({text[u.start:u.end] for u in toks if u.kind == "stream"})
            new = rng.choice(streams + ["%undeclared", "%" + "s" * 3000])
        elif t.kind == "keyword":
            new = rng.choice(self.keywords or WORDS)
        else:
            new = rng.choice(self.punct or PUNCT)
        return text[:t.start] + new + text[t.end:], f"replace {t.kind} {old[:20]!r} by {new[:20]!r}"

    def rename_everywhere(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Rename one identifier at every use: consistently (often still valid) or to another
        identifier of the file (a clash)."""
        names = self._names(text, toks)
        if not names:
            return text, "rename: no name"
        old = self.rng.choice(names)
        new = self.rng.choice(names + [old + "2", "zz"])
        out = "".join(new if u.kind == "name" and text[u.start:u.end] == old
                      else text[u.start:u.end] for u in toks)
        return out, f"rename {old!r} -> {new!r}"

    def edit_token(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Delete, duplicate or insert a token, or swap two tokens of the same kind."""
        rng = self.rng
        solid = [t for t in toks if t.kind not in ("space", "newline", "comment")]
        if not solid:
            return text, "edit: no token"
        t = rng.choice(solid)
        op = rng.choice(("delete", "duplicate", "insert", "swap"))
        if op == "delete":
            return text[:t.start] + text[t.end:], f"delete token {text[t.start:t.end][:20]!r}"
        if op == "duplicate":
            s = text[t.start:t.end]
            return text[:t.end] + " " + s + text[t.end:], f"duplicate token {s[:20]!r}"
        if op == "insert":
            new = rng.choice(self.keywords + self.punct + WORDS[:40] + NUMBERS[:12])
            return text[:t.start] + new + " " + text[t.start:], f"insert {new[:20]!r}"
        same = [u for u in solid if u.kind == t.kind and u != t]
        if not same:
            return text, "swap: no partner"
        a, b = sorted((t, rng.choice(same)), key=lambda u: u.start)
        out = (text[:a.start] + text[b.start:b.end] + text[a.end:b.start] + text[a.start:a.end]
               + text[b.end:])
        return out, f"swap {text[a.start:a.end][:12]!r} and {text[b.start:b.end][:12]!r}"

    def duplicate_span(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Duplicate a run of tokens in place (a sub-expression or part of a statement)."""
        if len(toks) < 2:
            return text, "span: too short"
        i = self.rng.randrange(len(toks))
        j = min(len(toks), i + self.rng.randint(1, 8))
        span = text[toks[i].start:toks[j - 1].end]
        end = toks[j - 1].end
        return text[:end] + span + text[end:], f"duplicate span {span[:20]!r}"

    def nest_deeply(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Wrap an operand (preferably right of an `=`) in hundreds of parentheses, unary
        minuses or calls, or replace it by a sum of hundreds of copies of itself."""
        rng = self.rng
        cands, seen_eq = [], False
        for t in toks:
            if t.kind == "newline":
                seen_eq = False
            elif text[t.start:t.end] == "=":
                seen_eq = True
            elif seen_eq and t.kind in ("name", "number"):
                cands.append(t)
        if not cands:
            cands = [t for t in toks if t.kind in ("name", "number")]
        if not cands:
            return text, "nest: no operand"
        t = rng.choice(cands)
        s = text[t.start:t.end]
        # an access `A[i,j]` is the operand, not just its name
        end = t.end
        if text[end:end + 1] == "[":
            close = text.find("]", end)
            if close != -1 and "\n" not in text[end:close]:
                end = close + 1
                s = text[t.start:end]
        n = min(rng.choice((50, 300, 1000, 3000)), max(2, MAX_BYTES // (len(s) + 8)))
        how = rng.choice(("parens", "minus", "call", "sum", "product"))
        if how == "parens":
            new = "(" * n + s + ")" * n
        elif how == "minus":
            new = "-" * n + s
        elif how == "call":
            f = rng.choice(("relu", "exp", "max", "sum[i]"))
            new = (f + "(") * n + s + ")" * n
        elif how == "sum":
            new = " + ".join([s] * n)
        else:
            new = " * ".join([s] * n)
        return text[:t.start] + new + text[end:], f"nest {s[:16]!r} {how} x{n}"

    def edit_lines(self, text: str, toks: Sequence[Tok]) -> tuple[str, str]:
        """Delete, duplicate, swap, move a line (a statement), or splice one from another seed."""
        rng = self.rng
        lines = text.split("\n")
        op = rng.choice(("delete", "duplicate", "swap", "move", "splice", "repeat"))
        i = rng.randrange(len(lines))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "move":
            line = lines.pop(i)
            lines.insert(rng.randrange(len(lines) + 1), line)
        elif op == "splice" and self.donors:
            donor = rng.choice(self.donors).split("\n")
            lines.insert(i, rng.choice(donor))
        else:
            n = min(rng.choice((2, 50, 2000)), max(2, MAX_BYTES // (len(lines[i]) + 1)))
            lines[i:i + 1] = [lines[i]] * n
        return "\n".join(lines), f"{op} line {i + 1}"

    # ---- byte-level ---------------------------------------------------------------------
    def bytes_edit(self, data: bytes) -> tuple[bytes, str]:
        """Flip bits, truncate, insert odd bytes, delete or duplicate a range, flood blank
        lines, change line endings, add a BOM, or empty the file."""
        rng = self.rng
        n = len(data)
        k = rng.randrange(n + 1)
        op = rng.choice(("flip", "truncate", "insert", "delete", "dup", "blank", "crlf", "cr",
                         "bom", "longline", "empty", "nul"))
        if op == "flip" and n:
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                p = rng.randrange(n)
                b[p] ^= 1 << rng.randrange(8)
            return bytes(b), "flip bits"
        if op == "truncate":
            return data[:k], f"truncate at {k}"
        if op == "insert":
            junk = rng.choice((b"\x00", b"\xff", b"\xc3(", b"\r", b"\t", b"\x0b\x0c",
                               "é".encode(), "\u2028".encode(), bytes(rng.randrange(256)
                                                                        for _ in range(8))))
            return data[:k] + junk + data[k:], f"insert {junk!r} at {k}"
        if op == "delete" and n:
            j = min(n, k + rng.randint(1, 64))
            return data[:k] + data[j:], f"delete bytes {k}:{j}"
        if op == "dup" and n:
            j = min(n, k + rng.randint(1, 256))
            return data[:j] + data[k:j] + data[j:], f"duplicate bytes {k}:{j}"
        if op == "blank":
            m = rng.choice((1000, 100_000))
            return data[:k] + b"\n" * m + data[k:], f"{m} blank lines at {k}"
        if op == "crlf":
            return data.replace(b"\n", b"\r\n"), "CRLF line ends"
        if op == "cr":
            return data.replace(b"\n", b"\r"), "CR line ends"
        if op == "bom":
            return b"\xef\xbb\xbf" + data, "UTF-8 BOM"
        if op == "longline":
            return data[:k] + b"x" * 200_000 + data[k:], f"200000-byte line at {k}"
        if op == "nul":
            return data[:k] + b"\x00" * 64 + data[k:], f"NULs at {k}"
        return b"", "empty"

    # ---- the whole ----------------------------------------------------------------------
    def mutate(self, data: bytes) -> tuple[bytes, str]:
        """1-4 edits of `data` (mostly grammar-aware, a third byte-level); (bytes, what)."""
        rng = self.rng
        notes = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
            if rng.random() < 0.3:
                data, note = self.bytes_edit(data)
            else:
                text = data.decode("utf-8", errors="surrogateescape")
                toks = tokenize(self.kind, text)
                op = rng.choices((self.replace_token, self.rename_everywhere, self.edit_token,
                                  self.duplicate_span, self.nest_deeply, self.edit_lines),
                                 weights=(8, 1, 4, 1, 2, 3))[0]
                text, note = op(text, toks)
                data = text.encode("utf-8", errors="surrogateescape")
            if len(data) > MAX_BYTES:
                data = data[:MAX_BYTES]
                note += f" (cut to {MAX_BYTES} bytes)"
            notes.append(note)
        return data, "; ".join(notes)
