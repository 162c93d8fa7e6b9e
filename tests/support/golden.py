"""Golden-file tests, xDSL/lit style.

A golden case is any file under tests/golden/ with lines `# RUN: <command>` (or `// RUN:`).
Each command is a pipeline of `fuseflowc ...` stages separated by `|`, run in-process (fast) from
the repository root; `%s` is the case file's path. If the file holds separator lines `# -----`,
each chunk is run on its own (line numbers are kept). The stdout, stderr and exit status of every
command of every chunk are compared with `<file>.expected`; `pytest --update-goldens` rewrites it.

Use `run_cli(args, input)` in ordinary tests for the same in-process invocation.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from fuseflowc.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "tests" / "golden"
RUN_RE = re.compile(r"^\s*(?:#|//)\s*RUN:\s*(.*)$")
SPLIT_RE = re.compile(r"^\s*(?:#|//)\s*-----\s*$")


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: list[str] | str, input: str | None = None) -> CliResult:
    """Run `fuseflowc ARGS` in-process; returns exit code, stdout and stderr."""
    if isinstance(args, str):
        args = shlex.split(args)
    runner = CliRunner()
    r = runner.invoke(main, args, input=input, catch_exceptions=True)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return CliResult(r.exit_code, r.stdout, r.stderr)


def run_pipeline(command: str) -> CliResult:
    """Run `fuseflowc a | fuseflowc b ...`: each stage's stdout is the next one's stdin."""
    stages = [shlex.split(s) for s in command.split("|")]
    data: str | None = None
    errs: list[str] = []
    code = 0
    for argv in stages:
        if not argv or argv[0] != "fuseflowc":
            raise ValueError(f"golden RUN stages must start with fuseflowc: {command!r}")
        r = run_cli(argv[1:], input=data)
        errs.append(r.stderr)
        data = r.stdout
        if r.exit_code != 0:
            code = r.exit_code
            break
    return CliResult(code, data or "", "".join(errs))


def golden_cases() -> list[Path]:
    """Every file under tests/golden/ that has a RUN line."""
    out = []
    for p in sorted(GOLDEN_DIR.rglob("*")):
        if p.is_file() and p.suffix != ".expected":
            try:
                text = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if any(RUN_RE.match(line) for line in text.splitlines()):
                out.append(p)
    return out


def _chunks(lines: list[str]) -> list[list[str]]:
    chunks, cur = [], []
    for line in lines:
        if SPLIT_RE.match(line):
            chunks.append(cur)
            cur = []
        else:
            cur.append(line)
    chunks.append(cur)
    return chunks


def render_case(path: Path) -> str:
    """Run every RUN command of the case and render the transcript compared with .expected."""
    rel = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").split("\n")
    commands = [m.group(1).strip() for line in lines if (m := RUN_RE.match(line))]
    chunks = _chunks(lines)
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for ci, chunk in enumerate(chunks):
            if len(chunks) > 1:
                # Keep original line numbers: blank lines stand in for earlier chunks.
                start = sum(len(c) + 1 for c in chunks[:ci])
                target = Path(tmp) / f"{ci}" / path.name
                target.parent.mkdir()
                target.write_text("\n" * start + "\n".join(chunk), encoding="utf-8")
                sub, shown = str(target), rel
            else:
                sub, shown = rel, rel
            for cmd in commands:
                r = run_pipeline(cmd.replace("%s", sub))
                text = f"$ {cmd}\n"
                if len(chunks) > 1:
                    text = f"$ {cmd}    [chunk {ci + 1}]\n"
                text += f"exit: {r.exit_code}\n"
                if r.stdout:
                    text += "--- stdout\n" + r.stdout + ("" if r.stdout.endswith("\n") else "\n")
                if r.stderr:
                    text += "--- stderr\n" + r.stderr + ("" if r.stderr.endswith("\n") else "\n")
                out.append(text.replace(sub, shown).replace(tmp, "<tmp>"))
    return "\n".join(out)


def check_case(path: Path, update: bool) -> None:
    """Compare (or with `update`, rewrite) the case's expected transcript."""
    got = render_case(path)
    expected_path = path.with_name(path.name + ".expected")
    if update or not expected_path.exists():
        if not update:
            raise AssertionError(f"{expected_path} is missing; run pytest --update-goldens")
        expected_path.write_text(got, encoding="utf-8")
        return
    expected = expected_path.read_text(encoding="utf-8")
    if got != expected:
        import difflib
        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True),
                                            str(expected_path), "actual"))
        raise AssertionError(f"golden mismatch for {path}:\n{diff}")
