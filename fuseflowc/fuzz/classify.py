"""The outcome of one run, and the key that tells distinct failures apart.

Outcomes, worst first (a run gets the first that applies):

  hang       still running at the time limit (killed; the stack faulthandler dumped is kept);
  crash      ended by a signal (segfault, abort, the kernel's OOM killer);
  internal   exit 3, a traceback on stdout or stderr, any exit status fuseflowc never uses, or a
             sweep row reporting an internal error;
  clobber    a file or directory that existed before the run was deleted or changed, and the
             command was not asked to write it (or failed, or wrote over one of its inputs);
  leftover   a file left behind: in the temporary directory, outside the outputs, or an output
             written by a command that failed; or a process of the run still alive;
  perm       an output created or replaced with other permissions than a plain open() gives
             under umask 022 (0644 files, 0755 directories);
  silent     exit 1 or 2 with nothing on stderr (and no -q);
  wrong      `simulate --check` of an unmutated graph found the simulator and the reference
             evaluator disagreeing (on the seed's data or mutated data that both accept);
  differ     (differential cases) the two engines ran the same case differently: exit status,
             the JSON report (wall times aside) or the messages (fuseflowc.fuzz.twins);
  warning    success or a clean error, but a Python warning leaked onto stderr;
  user-error exit 1 or 2 with a message;
  ok         exit 0.

The key of a failure is (outcome, what, where): the exception type and the innermost frame of
project code for tracebacks (file:function), the module of that frame for hangs and crashes
(from the stack dump), the kind of file problem and the command for clobber/leftover/perm.
"""

from __future__ import annotations

import posixpath
import re
import signal
from dataclasses import dataclass
from pathlib import Path

from .cases import Case
from .execute import ESCAPED, Run
from .sandbox import Changes, Stat

OUTCOMES = ("ok", "user-error", "warning", "silent", "wrong", "differ", "perm", "leftover",
            "clobber", "internal", "crash", "hang")
#: Outcomes that are defects (`make fuzz` and the test suite's run fail on any).
FAILURES = ("silent", "wrong", "differ", "perm", "leftover", "clobber", "internal", "crash",
            "hang")
#: What `simulate --check` says when the simulator and the reference evaluator disagree.
MISMATCH = "simulated outputs differ from the expected ones"

TRACEBACK = "Traceback (most recent call last):"
# (the captured streams may hold a megabyte of one word or of newlines: no pattern here may
# start with a repeat that can restart at every position)
FRAME_RE = re.compile(r'^[ \t]*File "([^"]+)", line (\d+),? in (\S+)', re.M)
WARNING_RE = re.compile(r"^\S+\.py:\d+: (\w*Warning): ", re.M)
PROJECT = Path(__file__).resolve().parents[2]
PROJECT_DIRS = ("fuseflowc/", "sim/")


@dataclass(frozen=True)
class Verdict:
    """A run's outcome, its failure key (None for ok and user-error), and a one-line detail."""

    outcome: str
    key: tuple[str, str, str] | None
    detail: str


def _project_frame(path: str) -> str | None:
    """`path` relative to the project if it is project code (not the fuzzer), else None."""
    try:
        rel = Path(path).resolve().relative_to(PROJECT).as_posix()
    except (ValueError, OSError):
        return None
    if rel.startswith(PROJECT_DIRS) and not rel.startswith("fuseflowc/fuzz/"):
        return rel
    return None


def traceback_key(text: str) -> tuple[str, str] | None:
    """(exception type, innermost project frame 'file:function') of the last traceback in
    `text`, or None if it has none."""
    at = text.rfind(TRACEBACK)
    if at < 0:
        return None
    block = text[at:]
    where = "?"
    for m in FRAME_RE.finditer(block):
        rel = _project_frame(m.group(1))
        if rel:
            where = f"{rel}:{m.group(3)}"
    exc = "?"
    for line in block.splitlines()[1:]:
        if line and not line.startswith((" ", "\t")):
            exc = line.split(":", 1)[0].strip().rsplit(".", 1)[-1]
            break
    return exc, where


def _row_internal(text: str) -> tuple[str, str] | None:
    """(stage, exception type) of the first `STAGE: internal error: TYPE` a sweep printed."""
    at = text.find(": internal error: ")
    if at < 0:
        return None
    stage = re.search(r"\w+$", text[max(0, at - 40):at])
    exc = re.match(r"[\w.]+", text[at + len(": internal error: "):])
    return (stage.group(0) if stage else "?", exc.group(0) if exc else "?")


def stack_module(stack: str) -> str:
    """The file of the innermost project frame of a faulthandler dump (innermost first)."""
    for m in re.finditer(r'File "([^"]+)", line \d+ in (\S+)', stack):
        rel = _project_frame(m.group(1))
        if rel:
            return rel
    return "?"


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r + "/") for r in roots)


def _file_outcome(case: Case, run: Run, changes: Changes, after: dict[str, Stat]
                  ) -> Verdict | None:
    """clobber, leftover or perm, from what changed in the case directory (paths relative to
    it: `work/...` is the working directory, `tmp/...` the temporary one)."""
    cmd = case.command
    tmp_left = [p for p in after if p.startswith("tmp/")]
    if tmp_left:
        return Verdict("leftover", ("leftover", "temporary file", cmd),
                       f"left in the temporary directory: {', '.join(tmp_left[:3])}")
    if run.stray_processes:
        return Verdict("leftover", ("leftover", "process", cmd), "a process outlived the command")
    work = lambda p: posixpath.normpath("work/" + p)  # noqa: E731
    outputs = [work(o) for o in case.outputs]
    inputs = [work(i) for i in case.inputs if i]
    made = [work(m) for m in case.made]
    # `sweep --strict` exits 1 when a configuration failed, its rows written as without it
    ok = run.exit_code == 0 or (cmd == "sweep" and run.exit_code == 1
                                and "exit 1 (--strict)" in run.stderr)
    lost = [p for p in changes.removed + changes.modified if not p.startswith("tmp")]
    new = [p for p in changes.added if not p.startswith("tmp")]
    if not ok:
        if lost:
            return Verdict("clobber", ("clobber", "changed by a failed command", cmd),
                           f"changed although the command failed: {', '.join(lost[:3])}")
        if new:
            return Verdict("leftover", ("leftover", "written by a failed command", cmd),
                           f"written although the command failed: {', '.join(new[:3])}")
        return None
    for p in lost:
        if _under(p, inputs) and _under(p, outputs):
            return Verdict("clobber", ("clobber", "output over an input", cmd),
                           f"an input was overwritten by an output: {p}")
        allowed = _under(p, outputs) and (p in outputs or _under(p, [m for m in made
                                                                     if m in outputs]))
        if not allowed:
            return Verdict("clobber", ("clobber", "not an output", cmd),
                           f"changed but not an output: {p}")
    stray = [p for p in new if not _under(p, outputs)]
    if stray:
        return Verdict("leftover", ("leftover", "not an output", cmd),
                       f"written but not an output: {', '.join(stray[:3])}")
    for p in new + changes.modified:
        st = after.get(p)
        if st is None or not _under(p, outputs):
            continue
        want = {"file": 0o644, "dir": 0o755}.get(st.kind)
        if want is not None and st.mode != want:
            return Verdict("perm", ("perm", f"{st.kind} {st.mode:04o}", cmd),
                           f"{p} has mode {st.mode:04o}, expected {want:04o}")
    return None


def classify(case: Case, run: Run, changes: Changes, after: dict[str, Stat]) -> Verdict:
    """The verdict on one run of `case` (see the module docstring)."""
    cmd = case.command
    if run.timed_out:
        return Verdict("hang", ("hang", cmd, stack_module(run.stack)),
                       f"still running after {run.seconds:.1f} s")
    if run.signal is not None:
        try:
            name = signal.Signals(run.signal).name
        except ValueError:
            name = f"signal {run.signal}"
        return Verdict("crash", ("crash", name, stack_module(run.stack)), f"killed by {name}")
    tb = traceback_key(run.stderr) or traceback_key(run.stdout)
    code = run.exit_code
    row = _row_internal(run.stderr)
    if row and not tb:  # a sweep records a bug in one configuration as a row and goes on
        stage, exc = row
        return Verdict("internal", ("internal", exc, f"sweep row ({stage})"),
                       f"a sweep row: {stage}: internal error: {exc}")
    if tb or code not in (0, 1, 2):
        exc, where = tb or (f"exit {code}", "?")
        if code == ESCAPED:
            exc = f"{exc} (escaped main)"
        last = [ln for ln in run.stderr.strip().splitlines() if ln.strip()][-1:] or [""]
        return Verdict("internal", ("internal", exc, where), f"exit {code}: {last[0][:160]}")
    files = _file_outcome(case, run, changes, after)
    if files is not None:
        return files
    if (cmd == "simulate" and code == 1 and MISMATCH in run.stderr and not case.mutated
            and "--expect" not in case.argv):
        # an unmutated graph of an unmutated program: the simulator and the reference evaluator
        # must agree on any data they both accept (NaN and inf included)
        data = "mutated data" if any(n.startswith("data: ") for n in case.notes) else "data"
        first = run.stderr.split(MISMATCH, 1)[1].lstrip(":").strip().splitlines()[:1] or [""]
        return Verdict("wrong", ("wrong", "simulate --check", data), first[0][:160])
    if code in (1, 2) and not run.stderr.strip() and not {"-q", "--quiet"} & set(case.argv):
        return Verdict("silent", ("silent", f"exit {code}", cmd), "failed without a message")
    w = WARNING_RE.search(run.stderr)
    if w:
        return Verdict("warning", ("warning", w.group(1), cmd), w.group(0)[:160])
    if code == 0:
        return Verdict("ok", None, "")
    return Verdict("user-error", None, (run.stderr.strip().splitlines() or [""])[0][:160])
