"""Running one fuseflowc command in a forked child of this process, under limits.

The child is a fork of the fuzzing process (the project is already imported and its parsers
built, so a case costs a fork, not an interpreter start-up). It gets its own process group, the
case's working directory, its own temporary directory (TMPDIR and `tempfile.tempdir`), stdin
from a file, stdout and stderr into files, umask 022, a cap on its address space and on the size
of files it writes, and `faulthandler` armed so that a crash, or the parent's SIGUSR1 when the
wall-clock limit runs out, leaves the Python stack in a file. It runs the real entry point
(`fuseflowc.cli.main`, as the console script does) and reports its exit status.

The parent waits with the time limit, then dumps the child's stack and kills its whole process
group; it also kills (and reports) any process of that group still alive after the child ended
(e.g. a worker a command failed to stop).
"""

from __future__ import annotations

import faulthandler
import os
import resource
import select
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: Bytes of each captured stream kept for classification and reports.
CAPTURE_LIMIT = 1 << 20
#: Exit status the child uses when something escaped the CLI's own handlers (a bug).
ESCAPED = 99
#: Signals that stop the fuzzer (blocked around a fork).
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
#: Exit status of a child whose sandbox could not be set up (a bug of the fuzzer, not a case).
SANDBOX_FAILED = 98
#: Marker written on stderr by the child before the traceback of an escaped exception.
ESCAPED_MARK = "fuzz: exception escaped fuseflowc.cli.main:"


@dataclass(frozen=True)
class Limits:
    """Per-case limits: seconds of CPU time (the case's process group), address space (MiB,
    0 = none), written file size. A case also stops at BACKSTOP x `seconds` of wall-clock time,
    CPU used or not (a case that sleeps or waits forever)."""

    seconds: float = 10.0
    memory_mb: int = 3072
    file_mb: int = 256


@dataclass
class Run:
    """What one run did: exit status (None if killed by a signal or the time limit), the signal
    that ended it, whether it ran out of time, its output streams, the stack dump written by
    faulthandler (on a crash or a timeout), leftover processes, and wall time."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    stdout: str
    stderr: str
    stack: str
    stray_processes: bool
    seconds: float


def _child(argv: list[str], cwd: Path, tmp: Path, io_dir: Path, limits: Limits,
           mask: set) -> None:
    """The forked child: set up the sandbox, run the CLI, exit with its status. Never returns.
    `mask` is the signal mask to restore once the fuzzer's handlers are gone."""
    code = ESCAPED
    try:
        # first of all: the fuzzer's own handlers (SIGTERM unwinds it) are not the command's
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.setpgid(0, 0)
        os.umask(0o022)
        os.chdir(cwd)
        os.environ["TMPDIR"] = str(tmp)
        tempfile.tempdir = str(tmp)
        if limits.memory_mb:
            cap = limits.memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        cap = limits.file_mb << 20
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails, not kills
        cpu = int(limits.seconds) + 30  # a backstop if the parent's kill never comes
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        for fd, name, flags in ((0, "stdin", os.O_RDONLY),
                                (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            f = os.open(io_dir / name, flags, 0o600)
            os.dup2(f, fd)
            os.close(f)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # as under a UTF-8 locale
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
        stack = open(io_dir / "stack", "w")
        faulthandler.enable(stack, all_threads=True)
        faulthandler.register(signal.SIGUSR1, stack, all_threads=True)
        from fuseflowc.cli import main
        try:
            main(args=argv, prog_name="fuseflowc")
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - anything escaping main is a finding
            import traceback
            sys.stderr.write(ESCAPED_MARK + "\n" + traceback.format_exc())
            code = ESCAPED
    except BaseException:  # noqa: BLE001 - the sandbox itself failed: say so, never return
        code = SANDBOX_FAILED
        try:
            import traceback
            os.write(2, traceback.format_exc().encode())
        except BaseException:  # noqa: BLE001
            pass
    finally:
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code if 0 <= code < 256 else ESCAPED)


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(CAPTURE_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""


#: A case's wall-clock limit, as a multiple of its CPU-time limit.
BACKSTOP = 10.0
_TICK = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pgid: int) -> float:
    """CPU seconds used by the live processes of group `pgid` and the children they reaped
    (from /proc; 0 where /proc is not there)."""
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0.0
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        if len(fields) > 14 and int(fields[2]) == pgid:
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def extension(cpu: float, wall: float, limits: Limits) -> float:
    """Seconds to wait past a deadline for a case that has used `cpu` seconds of CPU in
    `wall` seconds: none once it has had its CPU time or the wall-clock backstop, else at
    least the CPU time it has left (a busy machine slows a case; it does not hang it)."""
    backstop = limits.seconds * BACKSTOP
    if cpu >= limits.seconds or wall >= backstop:
        return 0.0
    return min(max(limits.seconds - cpu, 0.25), backstop - wall)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Child:
    """A command running in a forked child; `poll` or `wait` for its Run."""

    def __init__(self, argv: list[str], cwd: Path, tmp: Path, io_dir: Path, stdin: bytes,
                 limits: Limits):
        io_dir.mkdir(parents=True, exist_ok=True)
        (io_dir / "stdin").write_bytes(stdin)
        self.io_dir = io_dir
        self.limits = limits
        for s in (sys.stdout, sys.stderr):
            s.flush()
        self.start = time.monotonic()
        self.deadline = self.start + limits.seconds
        # SIGINT/SIGTERM wait until the child has reset the fuzzer's handlers (it unblocks
        # them) and the parent knows the child's pid (it unblocks them after the fork)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            raise
        if pid == 0:  # pragma: no cover - the child exits inside
            _child(argv, cwd, tmp, io_dir, limits, old)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        try:  # the child does this too; whichever runs first wins the race with killpg
            os.setpgid(pid, pid)
        except OSError:
            pass
        self.pid = pid
        try:
            self.fd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.fd = None

    def poll(self) -> Run | None:
        """The Run if the child has ended (or was killed for running out of time), else None."""
        done, status = os.waitpid(self.pid, os.WNOHANG)
        if done:
            return self._finish(status, timed_out=False)
        now = time.monotonic()
        if now < self.deadline:
            return None
        more = extension(group_cpu_seconds(self.pid), now - self.start, self.limits)
        if more > 0:
            self.deadline = now + more
            return None
        try:
            os.kill(self.pid, signal.SIGUSR1)  # faulthandler: the stack where it hangs
        except ProcessLookupError:
            pass
        wait_any([self], 0.5)
        _kill_group(self.pid)
        _, status = os.waitpid(self.pid, 0)
        return self._finish(status, timed_out=True)

    def kill(self) -> None:
        """Stop the child and its process group now (the fuzzer itself is stopping)."""
        _kill_group(self.pid)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def wait(self) -> Run:
        """Block until the child ends or runs out of time."""
        while True:
            run = self.poll()
            if run is not None:
                return run
            wait_any([self], self.deadline - time.monotonic())

    def _finish(self, status: int, timed_out: bool) -> Run:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        seconds = time.monotonic() - self.start
        stray = _group_alive(self.pid)
        if stray:
            _kill_group(self.pid)
        code = os.waitstatus_to_exitcode(status)
        io = self.io_dir
        return Run(exit_code=None if timed_out or code < 0 else code,
                   signal=-code if code < 0 and not timed_out else None,
                   timed_out=timed_out, stdout=_read(io / "stdout"), stderr=_read(io / "stderr"),
                   stack=_read(io / "stack"), stray_processes=stray, seconds=seconds)


def wait_any(children: list[Child], seconds: float) -> None:
    """Sleep until one of `children` may have ended, at most `seconds`."""
    seconds = max(0.0, seconds)
    fds = [c.fd for c in children if c.fd is not None]
    if fds and len(fds) == len(children):
        select.select(fds, [], [], seconds)
    else:
        time.sleep(min(seconds, 0.005))


def run_command(argv: list[str], cwd: Path, tmp: Path, io_dir: Path, stdin: bytes = b"",
                limits: Limits = Limits()) -> Run:
    """Run `fuseflowc ARGV` in a forked child in `cwd` with TMPDIR `tmp`; `io_dir` receives the
    child's stdin, stdout, stderr and stack files. Returns the Run."""
    return Child(argv, cwd, tmp, io_dir, stdin, limits).wait()
