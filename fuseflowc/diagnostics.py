"""User-facing diagnostics: located errors printed as `file:line:col: error: message` with a caret.

Every error a user can cause (bad syntax, types, shapes, formats, data, IR) is raised as a
`UserError`; the CLI prints it on stderr and exits 1. Anything else escaping a command is a bug
and is reported as an internal error.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Source:
    """The text of one input file, with its display name (a path, or `<stdin>`)."""

    __slots__ = ("name", "text", "_lines")

    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text
        self._lines: list[str] | None = None

    def line(self, n: int) -> str:
        """Line `n` (1-based) without its newline, or '' when out of range."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines[n - 1] if 1 <= n <= len(self._lines) else ""

    def __repr__(self) -> str:
        return f"Source({self.name!r})"


@dataclass(frozen=True)
class Loc:
    """A position in a source: 1-based line and column; `length` columns are underlined."""

    source: Source | None
    line: int
    col: int
    length: int = 1

    def __str__(self) -> str:
        name = self.source.name if self.source else "<input>"
        return f"{name}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    """One message, optionally located, of severity `error`, `warning` or `note`."""

    message: str
    loc: Loc | None = None
    severity: str = "error"

    def format(self) -> str:
        head = f"{self.loc}: " if self.loc else "fuseflowc: "
        out = [f"{head}{self.severity}: {self.message}"]
        if self.loc and self.loc.source:
            text = self.loc.source.line(self.loc.line)
            if text or self.loc.line >= 1:
                shown = text.expandtabs(1)
                out.append(f"  {shown}")
                caret = " " * max(self.loc.col - 1, 0) + "^" + "~" * max(self.loc.length - 1, 0)
                out.append(f"  {caret}")
        return "\n".join(out)


class UserError(Exception):
    """An error caused by the user's input: printed as diagnostics, exit status 1."""

    def __init__(self, message: str | None = None, loc: Loc | None = None,
                 diagnostics: list[Diagnostic] | None = None):
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])
        if message is not None:
            self.diagnostics.insert(0, Diagnostic(message, loc))
        super().__init__(self.diagnostics[0].message if self.diagnostics else "error")

    def note(self, message: str, loc: Loc | None = None) -> "UserError":
        """Attach a note (e.g. where a conflicting definition was) and return self."""
        self.diagnostics.append(Diagnostic(message, loc, "note"))
        return self

    def format(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


class InternalError(Exception):
    """A bug in fuseflowc (a broken invariant), never the user's fault."""


@dataclass
class DiagnosticSink:
    """Collects several errors (e.g. from a checker) and raises them together."""

    errors: list[Diagnostic] = field(default_factory=list)

    def error(self, message: str, loc: Loc | None = None) -> Diagnostic:
        d = Diagnostic(message, loc)
        self.errors.append(d)
        return d

    def note(self, message: str, loc: Loc | None = None) -> None:
        self.errors.append(Diagnostic(message, loc, "note"))

    def raise_if_any(self) -> None:
        if any(d.severity == "error" for d in self.errors):
            raise UserError(diagnostics=self.errors)
