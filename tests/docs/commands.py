"""The shell commands of the documentation: every line of every ```sh block of README.md and
docs/*.md, as a user would type them, and a way to run them.

A block is skipped only when the line just before its opening fence (blank lines aside) is
`<!-- docs-test: skip: REASON -->` (a command that needs /work/shared/data or runs long); the
reason is required. A command is one line, or several joined by a trailing backslash; `#`
starts a comment outside quotes.

Commands run in a sandbox: a fresh copy of the repository's data files (ir_examples, docs,
the architecture files; no Python packages, so `python -m fuseflowc` runs the installed one)
in a temporary directory, which is the current directory, with `.venv` linking to the test's
Python environment (as in a clone after `make venv`); a path under /tmp/ names the same
path under the sandbox's tmp/ (the commands of several files or test runs never meet). A
command made only of `fuseflowc ...` stages joined by `|`, with at most a final `> FILE`, runs
in-process through click's runner (as fast as the test of one command, and the same entry
point); any other runs in bash with the test's Python environment first on PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"^<!--\s*docs-test:\s*skip:\s*(?P<reason>.*?)\s*-->$")
MARKER = re.compile(r"<!--\s*docs-test\b")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
#: Top-level entries of the checkout a sandbox leaves out: version control, environments,
#: outputs, and the Python packages (commands run the installed fuseflowc, never a copy).
LEFT_OUT = {".git", ".venv", "out", "results", "build", "dist", "fuseflowc", "tests",
            ".pytest_cache", ".hypothesis", "__pycache__", "work"}
#: Of sim/ (the simulator's Python package), only the data files a command may name.
SIM_DATA = (".toml", ".md")
#: Of tests/, the data a document may name (a clone has them): real PyTorch exports, and the
#: small data set of the simulator's goldens.
TEST_DATA = ("tests/importer/torch", "tests/golden/sim/data")


@dataclass
class Command:
    """One command of a block: its text (continuations joined) and its first line's number."""

    text: str
    line: int


@dataclass
class Block:
    """One ```sh block of a document."""

    path: Path
    line: int                          # the opening fence's line (1-based)
    commands: list[Command] = field(default_factory=list)
    skip: str | None = None            # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


class DocsError(ValueError):
    """A malformed marker or block: file:line: message."""


def documents(root: Path = ROOT) -> list[Path]:
    """README.md and docs/*.md, sorted: the documents whose commands are tested."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The ```sh blocks of a markdown file, with their commands and skip markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    k = 0
    pending: tuple[str, int] | None = None   # a skip marker waiting for its block
    while k < len(lines):
        text = lines[k].strip()
        m = FENCE.match(lines[k])
        if MARKER.search(text):
            skip = SKIP.match(text)
            if skip is None or not skip["reason"]:
                raise DocsError(f"{path}:{k + 1}: a docs-test marker is written "
                                f"'<!-- docs-test: skip: REASON -->' (a reason is required)")
            pending = (skip["reason"], k + 1)
            k += 1
            continue
        if m is None:
            if text and pending is not None:
                raise DocsError(f"{path}:{pending[1]}: a docs-test marker must come just before "
                                f"a ```sh block")
            k += 1
            continue
        end = k + 1
        while end < len(lines) and not lines[end].strip().startswith(m["fence"]):
            end += 1
        if m["info"] == "sh":
            block = Block(path, k + 1, skip=pending[0] if pending else None)
            block.commands = commands(lines[k + 1:end], k + 2)
            out.append(block)
        elif pending is not None:
            raise DocsError(f"{path}:{pending[1]}: a docs-test marker must come just before a "
                            f"```sh block, not a ```{m['info']} one")
        pending = None
        k = end + 1
    if pending is not None:
        raise DocsError(f"{path}:{pending[1]}: a docs-test marker must come just before a "
                        f"```sh block")
    return out


def commands(lines: list[str], first: int) -> list[Command]:
    """The commands of a block's lines (the first is line `first`): continuations joined,
    comments and blank lines dropped."""
    out: list[Command] = []
    text, start = "", None
    for n, raw in enumerate(lines, first):
        line = _uncomment(raw).rstrip()
        if start is None:
            if not line.strip():
                continue
            start = n
        if line.endswith("\\"):
            text += line[:-1] + " "
            continue
        text += line
        out.append(Command(" ".join(text.split()), start))
        text, start = "", None
    if start is not None:
        out.append(Command(" ".join(text.split()), start))
    return out


def _uncomment(line: str) -> str:
    """The line without its `#` comment (a # inside quotes, or inside a word, stays)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k]
    return line


def sandbox(dest: Path, root: Path = ROOT) -> Path:
    """A fresh copy of the checkout's data files in `dest` (see the module docstring)."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(root.iterdir()):
        if entry.name in LEFT_OUT or entry.name.endswith(".egg-info"):
            continue
        if entry.name == "sim":
            (dest / "sim").mkdir()
            for f in sorted(entry.iterdir()):
                if f.is_file() and f.suffix in SIM_DATA:
                    shutil.copy2(f, dest / "sim" / f.name)
        elif entry.is_dir():
            shutil.copytree(entry, dest / entry.name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        else:
            shutil.copy2(entry, dest / entry.name)
    for rel in TEST_DATA:
        shutil.copytree(root / rel, dest / rel)
    (dest / "tmp").mkdir()
    venv = Path(sys.prefix)
    if venv != Path(sys.base_prefix):      # `.venv/bin/python ...` as in a set-up clone
        (dest / ".venv").symlink_to(venv, target_is_directory=True)
    return dest


@dataclass
class Outcome:
    """What a command did."""

    code: int
    stdout: str
    stderr: str
    how: str            # "in-process" or "bash"


def in_sandbox(text: str, box: Path) -> str:
    """The command with /tmp/ paths moved under the sandbox."""
    return re.sub(r"(?<![\w./])/tmp/", f"{box}/tmp/", text)


def fuseflowc_stages(text: str) -> tuple[list[list[str]], str | None] | None:
    """(argv of each stage, the file of a final `> FILE`) when `text` is only fuseflowc stages
    joined by `|`; else None (the command runs in bash)."""
    if re.search(r"\d>|>&|&>", text):
        return None                     # a redirection of stderr: bash's job
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return None
    target = None
    if len(tokens) >= 2 and tokens[-2] == ">":
        target, tokens = tokens[-1], tokens[:-2]
    stages: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            stages.append([])
        elif set(t) <= set("<>|&;()"):
            return None                 # another operator: bash's job
        else:
            stages[-1].append(t)
    if any(not s or s[0] != "fuseflowc" for s in stages):
        return None
    return [s[1:] for s in stages], target


def run(text: str, box: Path, timeout: float = 120.0) -> Outcome:
    """Run one command from the sandbox `box` (its current directory)."""
    text = in_sandbox(text, box)
    staged = fuseflowc_stages(text)
    if staged is None:
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                                    f"{os.environ.get('PATH', '')}")
        p = subprocess.run(["bash", "-o", "pipefail", "-c", text], cwd=box, env=env,
                           capture_output=True, text=True, timeout=timeout)
        return Outcome(p.returncode, p.stdout, p.stderr, "bash")
    from click.testing import CliRunner

    from fuseflowc.cli import main
    stages, target = staged
    data: bytes | None = None
    errs: list[str] = []
    old = os.getcwd()
    os.chdir(box)
    try:
        for argv in stages:
            r = CliRunner().invoke(main, argv, input=data, catch_exceptions=True)
            errs.append(r.stderr)
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                raise r.exception
            data = r.stdout_bytes
            if r.exit_code != 0:
                return Outcome(r.exit_code, r.stdout, "".join(errs), "in-process")
        if target is not None:
            Path(target).write_bytes(data or b"")
            data = b""
    finally:
        os.chdir(old)
    return Outcome(0, (data or b"").decode("utf-8", "replace"), "".join(errs), "in-process")
