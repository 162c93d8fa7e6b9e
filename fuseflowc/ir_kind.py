"""Which of the three text IRs an input holds: a program, fused IR or a SAMML module.

Each IR has lines the others never have: fused IR its `region NAME group G {` / `region NAME
unfused {` lines; SAMML its `graph NAME {`, `permute A -> B` and `schedule KIND {...}` lines; a
program its statements `T[i, j] = ...`, its directives (`fuse R: ...`, `order S: i -> j`,
`parallelize S: i by 4`, `block T: 4`, `output T`, `include "..."`), `dim I, J` and tensor
declarations without a role. `sniff` reads each line once (linear time, whatever the file
holds) and goes by the first such line. The parsers call `wrong_kind` when a file does not
parse, so that a command given the wrong IR says what the file is and what to run instead of a
syntax error; `estimate` uses `sniff` to pick its parser.
"""

from __future__ import annotations

import re

from .diagnostics import Loc, Source, UserError

_FUSED = re.compile(r"region\s+[\w.]+\s+(?:group\s+[\w.]+|unfused)\s*\{")
_SAMML = re.compile(r"graph\s+\w+\s*\{|permute\s+\w+\s*->|schedule\s+\w+\s*\{")
_PROGRAM = re.compile(
    r"\w+\s*\[[^\]\n]*\]\s*="                               # a statement
    r"|include\s*\"|fuse\s+\w+\s*:|order\s+\w+\s*:\s*[A-Za-z_]"  # directives
    r"|parallelize\s+\w+\s*:\s*\w+\s+by\b|block\s+\w+\s*:|output\s+\w"
    r"|dim\s+\w+\s*(?:=\s*\d+\s*)?,"                          # several dims
    r"|tensor\s+\w+\s*\[[^\]\n]*\]\s*:\s*(?:\w+|\([^)\n]*\)(?:\s*order\s*\([^)\n]*\))?)"
    r"(?:\s*blocked)?\s*(?:#.*)?$")                           # a tensor without a role

_NAMES = {"program": "a program", "fused": "fused IR", "samml": "a SAMML module"}
_PLACEHOLDER = {"program": "PROGRAM.ff", "fused": "FUSED", "samml": "GRAPH"}  # for stdin


def sniff(text: str) -> tuple[str | None, int | None]:
    """The IR kind of `text` ("program", "fused" or "samml") and the 1-based line that shows
    it, or (None, None) when no line does."""
    for n, line in enumerate(text.split("\n"), 1):
        s = line.lstrip()
        if s.startswith("region") and _FUSED.match(s):
            return "fused", n
        if s.startswith(("graph", "permute", "schedule")) and _SAMML.match(s):
            return "samml", n
        if s and s[0] != "#" and _PROGRAM.match(s):
            return "program", n
    return None, None


def _command() -> str:
    """The running fuseflowc subcommand (for the advice), or a placeholder outside the CLI."""
    try:
        import click
        ctx = click.get_current_context(silent=True)
    except ImportError:  # pragma: no cover - click is a dependency
        ctx = None
    return ctx.info_name if ctx is not None and ctx.info_name else "COMMAND"


def wrong_kind(source: Source, want: str) -> UserError | None:
    """The error for `source` when it holds another IR than `want` (None when it does not, or
    looks like `want`: then its own syntax error is the one to show)."""
    got, line = sniff(source.text)
    if got is None or got == want:
        return None
    name = source.name if source.name not in ("-", "<stdin>") else _PLACEHOLDER[got]
    cmd = _command()
    advice = {
        ("program", "fused"): f"run `fuseflowc fuse {name} | fuseflowc {cmd}` ({cmd} reads "
                              f"only what `fuseflowc fuse` writes)" if cmd != "fuse" else
                              f"`fuseflowc fuse {name}` (without --verify-ir) fuses it",
        ("program", "samml"): f"compile it first: `fuseflowc fuse {name} | fuseflowc lower | "
                              f"fuseflowc {cmd} - ...`",
        ("fused", "program"): f"`fuseflowc lower {name}` lowers it"
                              + ("" if cmd != "fuse" else f", `fuseflowc fuse --verify-ir {name}` "
                                 f"checks it") + f"; {cmd} reads programs",
        ("fused", "samml"): f"lower it first: `fuseflowc lower {name} | fuseflowc {cmd} - ...`",
        ("samml", "program"): f"it is already lowered: `fuseflowc simulate`, `opt`, `dot` and "
                              f"`estimate` read it; {cmd} reads programs",
        ("samml", "fused"): f"it is already lowered: `fuseflowc simulate`, `opt`, `dot` and "
                            f"`estimate` read it; {cmd} reads fused IR",
    }[(got, want)]
    loc = None
    if line is not None:
        text = source.line(line)
        loc = Loc(source, line, len(text) - len(text.lstrip()) + 1, len(text.strip()) or 1)
    return UserError(f"this is {_NAMES[got]}, not {_NAMES[want]}: {advice}", loc)
