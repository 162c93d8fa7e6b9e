"""The fuzzing loop: make cases, run them (in `jobs` children at a time), classify, count, then
minimize one case per distinct failure and save it as a reproducer; print the table.

Output directory (--out): `corpus/` (the seeds, reused while the project is unchanged),
`outcomes.jsonl` (one line per case), `summary.txt` (the table, also printed), and
`failures/NN-<outcome>-<command>/` per distinct failure: `work/` (the minimized case's files),
`stdin`, `repro.sh` (runs it in a fresh copy of work/) and `case.txt` (key, command line, what was
mutated, the output of the original and of the minimized run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .cases import Case, make_case
from .classify import FAILURES, OUTCOMES, Verdict, classify
from .corpus import Corpus, build_corpus
from .execute import SANDBOX_FAILED, Child, Limits, Run, wait_any
from .families import BY_NAME, FAMILIES
from .families.plan import fuse_flags
from .minimize import Budget, minimize
from .sandbox import diff, materialize, snapshot
from .twins import combine, compare

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Failure:
    """A distinct failure: its key, how many cases hit it, the first case and its run."""

    key: tuple[str, str, str]
    count: int
    case: Case
    verdict: Verdict
    run: Run
    repro: Path | None = None
    minimized: Case | None = None


@dataclass
class Summary:
    """Counts per command and outcome, the distinct failures, and timing."""

    cases: int = 0
    seconds: float = 0.0
    counts: dict[str, Counter] = field(default_factory=dict)      # family -> outcomes
    commands: Counter = field(default_factory=Counter)            # subcommand -> cases
    failures: dict[tuple, Failure] = field(default_factory=dict)

    def add(self, case: Case, verdict: Verdict, run: Run) -> None:
        self.cases += 1
        self.counts.setdefault(case.family or case.command, Counter())[verdict.outcome] += 1
        self.commands[case.command] += 1
        if verdict.key is not None:
            f = self.failures.get(verdict.key)
            if f is None:
                self.failures[verdict.key] = Failure(verdict.key, 1, case, verdict, run)
            else:
                f.count += 1

    def total(self) -> Counter:
        t: Counter = Counter()
        for c in self.counts.values():
            t.update(c)
        return t

    def fatal(self) -> int:
        """Cases whose outcome is a defect (FAILURES)."""
        t = self.total()
        return sum(t[o] for o in FAILURES)


class CaseRunner:
    """Makes a case's directory, runs it, and judges the run."""

    def __init__(self, work: Path, limits: Limits):
        self.work = work
        self.limits = limits
        self.made: dict[int, bytes] = {}   # case -> the output `fuse` must accept next

    def fuse_output(self, case: Case, text: bytes, tag: str) -> Verdict:
        """The verdict on `fuse` of a plan case's output (its program, beside the case's own
        files), with the fuse flags the plan names: ok, or `wrong` when fuse rejects the plan,
        or the run's own failure."""
        name = case.then_fuse
        args = [(name,), *((f,) for f in fuse_flags(text))]
        follow = Case(case.seed, case.index, "fuse", args, {**case.files, name: text},
                      inputs=[name], family=case.family)
        child, base, before = self.start(follow, tag + "-fuse")
        try:
            run = child.wait()
        except BaseException:
            child.kill()
            raise
        verdict = self.judge(follow, run, base, before)
        if verdict.outcome == "user-error":
            first = (run.stderr.strip().splitlines() or [""])[0]
            return Verdict("wrong", ("wrong", "fuse rejects the plan", "plan"), first[:160])
        return verdict

    def start(self, case: Case, tag: str) -> tuple[Child, Path, dict]:
        base = self.work / tag
        if base.exists():
            shutil.rmtree(base)
        c = base / "c"
        materialize(c / "work", case.files)
        (c / "tmp").mkdir()
        before = snapshot(c)
        child = Child(case.argv, c / "work", c / "tmp", base / "io", case.stdin, self.limits)
        return child, base, before

    def judge(self, case: Case, run: Run, base: Path, before: dict) -> Verdict:
        if run.exit_code == SANDBOX_FAILED:
            raise RuntimeError(f"fuzz: the sandbox of case {case.index} failed (a bug of the "
                               f"fuzzer):\n{run.stderr}")
        after = snapshot(base / "c")
        verdict = classify(case, run, diff(before, after), after)
        if case.then_fuse and verdict.outcome == "ok":
            try:
                self.made[case.index] = (base / "c" / "work" / case.then_fuse).read_bytes()
            except OSError:
                pass
        _remove(base)
        return verdict

    def run(self, case: Case, tag: str = "trial") -> tuple[Verdict, Run]:
        child, base, before = self.start(case, tag)
        try:
            run = child.wait()
        except BaseException:
            child.kill()
            raise
        verdict = self.judge(case, run, base, before)
        return self.twin(case, verdict, run, tag)

    def twin(self, case: Case, verdict: Verdict, run: Run, tag: str) -> tuple[Verdict, Run]:
        """A differential case's second run (the other engine), compared with the first: the
        combined verdict (fuseflowc.fuzz.twins); a plan case's output through `fuse`. Other
        cases pass through."""
        made = self.made.pop(case.index, None)
        if made is not None:
            return self.fuse_output(case, made, tag), run
        if case.twin is None:
            return verdict, run
        other = dataclasses.replace(case, args=[case.twin[1] if g == case.twin[0] else g
                                                for g in case.args], twin=None)
        child, base, before = self.start(other, tag + "-twin")
        try:
            run2 = child.wait()
        except BaseException:
            child.kill()
            raise
        verdict2 = self.judge(other, run2, base, before)
        return combine(case.command, verdict, verdict2, compare(run, run2)), run


def scratch_dir() -> str | None:
    """Where case directories go: a memory file system if there is one (cases write and delete
    thousands of small files), else the system's temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _remove(path: Path) -> None:
    """rm -rf that also copes with directories a case made unwritable."""
    def fix(func, p, exc):
        try:
            os.chmod(os.path.dirname(p), 0o755)
            os.chmod(p, 0o755)
            func(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=fix)


def run_cases(corpus: Corpus, runner: CaseRunner, seed: int, n: int, jobs: int = 1,
              commands: tuple[str, ...] = (), log=None, record=None) -> Summary:
    """Run cases 0..n-1 of `seed`; `record(case, verdict, run)` is called for each."""
    summary = Summary()
    start = time.monotonic()
    running: list[tuple[Case, Child, Path, dict]] = []
    next_index = 0
    last_log = start
    try:
        while next_index < n or running:
            while next_index < n and len(running) < jobs:
                case = make_case(corpus, seed, next_index, commands)
                # each running case has a directory of its own (one that hangs outlives others)
                child, base, before = runner.start(case, f"case{next_index}")
                running.append((case, child, base, before))
                next_index += 1
            wait_any([r[1] for r in running],
                     min(r[1].deadline for r in running) - time.monotonic())
            still = []
            for case, child, base, before in running:
                run = child.poll()
                if run is None:
                    still.append((case, child, base, before))
                    continue
                verdict = runner.judge(case, run, base, before)
                # (a differential case's twin runs here, while the other jobs go on)
                verdict, run = runner.twin(case, verdict, run, f"case{case.index}")
                summary.add(case, verdict, run)
                if record:
                    record(case, verdict, run)
            running = still
            if log and time.monotonic() - last_log > 30:
                last_log = time.monotonic()
                log(f"fuzz: {summary.cases}/{n} cases, {summary.fatal()} failing, "
                    f"{len(summary.failures)} distinct keys")
    finally:  # stopped (Ctrl-C, SIGTERM, a bug): no case may outlive the fuzzer
        for _, child, base, _ in running:
            child.kill()
            _remove(base)
    summary.seconds = time.monotonic() - start
    return summary


def ordered_failures(summary: Summary) -> list[Failure]:
    """The distinct failures (FAILURES outcomes), worst outcome first, then by key."""
    return sorted((f for f in summary.failures.values() if f.key[0] in FAILURES),
                  key=lambda f: (-OUTCOMES.index(f.key[0]), f.key))


def table(summary: Summary, seed: int, limits: Limits, jobs: int) -> str:
    """The table of outcomes per family (with the subcommand it runs), the cases per
    subcommand, and the distinct failures."""
    cols = [o for o in OUTCOMES]
    rows = [["family", "command", "cases", *cols]]
    for fam in sorted(summary.counts):
        c = summary.counts[fam]
        cmd = BY_NAME[fam].command if fam in BY_NAME else fam
        rows.append([fam, cmd, str(sum(c.values())), *(str(c[o]) for o in cols)])
    t = summary.total()
    rows.append(["total", "", str(summary.cases), *(str(t[o]) for o in cols)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"fuseflowc fuzz: {summary.cases} cases, seed {seed}, {summary.seconds:.0f} s "
             f"({summary.cases / max(summary.seconds, 1e-9):.1f} cases/s, {jobs} job(s)), "
             f"limits {limits.seconds:g} s and {limits.memory_mb} MiB per case", ""]
    for k, r in enumerate(rows):
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(r, widths))).rstrip())
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", "cases per subcommand: " + ", ".join(
        f"{cmd} {n}" for cmd, n in sorted(summary.commands.items()))]
    fails = ordered_failures(summary)
    lines += ["", f"failures: {summary.fatal()} cases, {len(fails)} distinct (outcome, what, "
                  f"where)"]
    for k, f in enumerate(fails, 1):
        where = f" -> {f.repro}" if f.repro else ""
        lines.append(f"  {k:2}. {f.key[0]:<8} {f.key[1]} at {f.key[2]}: {f.count} case(s), "
                     f"first #{f.case.index}{where}")
    warned = sorted((f for f in summary.failures.values() if f.key[0] == "warning"),
                    key=lambda f: f.key)
    if warned:
        lines += ["", "warnings (not failures):"]
        lines += [f"  {f.key[1]} in {f.key[2]}: {f.count} case(s), first #{f.case.index}: "
                  f"{f.verdict.detail}" for f in warned]
    return "\n".join(lines) + "\n"


def write_repro(out: Path, k: int, f: Failure, case: Case, run: Run, seed: int) -> Path:
    """The reproducer directory of failure `f` (the case to save is `case`)."""
    d = out / f"{k:02d}-{f.key[0]}-{f.case.command}"
    if d.exists():
        _remove(d)
    materialize(d / "work", case.files)
    (d / "stdin").write_bytes(case.stdin)
    cmd = " ".join(shlex.quote(a) for a in ["${FUSEFLOWC:-fuseflowc}", *case.argv])
    cmd = cmd.replace("'${FUSEFLOWC:-fuseflowc}'", '"${FUSEFLOWC:-fuseflowc}"')
    (d / "repro.sh").write_text(
        "#!/bin/sh\n"
        f"# fuseflowc fuzz, seed {seed}, case {f.case.index}: {f.key[0]} {f.key[1]} at "
        f"{f.key[2]}\n"
        "# Runs the case in a fresh copy of work/ (the command may write there);\n"
        "# FUSEFLOWC=path/to/fuseflowc picks the program.\n"
        'here=$(cd "$(dirname "$0")" && pwd)\n'
        'tmp=$(mktemp -d)\n'
        'cp -a "$here/work" "$tmp/work" && mkdir "$tmp/tmp" && cd "$tmp/work" || exit 125\n'
        f'TMPDIR="$tmp/tmp" {cmd} < "$here/stdin"\n'
        'status=$?\n'
        'echo "repro: exit $status (ran in $tmp/work)" >&2\n'
        'exit $status\n')
    os.chmod(d / "repro.sh", 0o755)
    orig = f.case
    (d / "case.txt").write_text(
        f"key: {f.key}\ncases with this key: {f.count}\nfirst case: seed {seed} index "
        f"{orig.index}\noriginal command: fuseflowc {shlex.join(orig.argv)}\n"
        f"mutations: {'; '.join(orig.notes) or '(none)'}\nverdict: {f.verdict.detail}\n"
        f"minimized command: fuseflowc {shlex.join(case.argv)}\n"
        f"\n--- stderr of the minimized run ---\n{run.stderr[-8000:]}\n"
        f"--- stack dump ---\n{run.stack[-4000:]}\n")
    return d


def reproduce(summary: Summary, runner: CaseRunner, out: Path, seed: int,
              minimize_seconds: float, log=None) -> None:
    """Minimize each distinct failure (within `minimize_seconds`) and write its reproducer."""
    for k, f in enumerate(ordered_failures(summary), 1):
        case, run = f.case, f.run
        if minimize_seconds > 0:
            def fails_same(c: Case, key=f.key) -> bool:
                return runner.run(c)[0].key == key
            trials = 400 if f.key[0] != "hang" else 20
            case = minimize(f.case, fails_same, Budget(trials, minimize_seconds))
            verdict, run = runner.run(case)
            if verdict.key != f.key:  # flaky (a hang near the limit): keep the original
                case, run = f.case, f.run
        f.minimized = case
        f.repro = write_repro(out / "failures", k, f, case, run, seed)
        if log:
            log(f"fuzz: reproducer {f.repro}")


def _record_to(path: Path):
    fh = open(path, "w", encoding="utf-8")

    def record(case: Case, verdict: Verdict, run: Run) -> None:
        fh.write(json.dumps({"case": case.index, "family": case.family,
                             "command": case.command,
                             "outcome": verdict.outcome, "key": verdict.key,
                             "seconds": round(run.seconds, 3), "argv": case.argv,
                             "notes": case.notes,
                             # a user error's first line of stderr (to sort them by cause)
                             "detail": verdict.detail}) + "\n")
        fh.flush()
    return record, fh


def prepare() -> None:
    """Import and warm everything the commands use, once, before forking: each child then
    starts with the parsers loaded."""
    import importlib

    from fuseflowc.cli import COMMANDS, _module_name
    from fuseflowc.pipeline import import_stages
    from fuseflowc.syntax import parser
    for name in COMMANDS:
        importlib.import_module(_module_name(name))
    for fam in FAMILIES:
        fam.builder()
    import_stages()
    for mod in ("scipy.sparse", "scipy.io"):
        importlib.import_module(mod)
    parser("program.lark", "start")  # the keys fuseflowc.lang.parser uses
    parser("program.lark", "directives")
    parser("fused.lark")
    parser("samml.lark")  # the key fuseflowc.samml.parser uses
    import gc
    gc.collect()
    gc.freeze()  # forked children then do not copy the heap by touching reference counts


def fuzz(cases: int, seed: int, out: Path, limits: Limits | None = None, jobs: int = 1,
         minimize_seconds: float = 60.0, commands: tuple[str, ...] = (), scope: str = "full",
         corpus_dir: Path | None = None, log=None) -> Summary:
    """The whole run: corpus, cases, reproducers, table (in out/summary.txt); the Summary.
    `limits` defaults to Limits() (the per-case time and memory limits)."""
    limits = Limits() if limits is None else limits
    out = out.resolve()  # children chdir into their sandboxes (a relative --out broke them)
    out.mkdir(parents=True, exist_ok=True)
    prepare()
    corpus = build_corpus(REPO, corpus_dir or out / "corpus", scope, log=log)
    with tempfile.TemporaryDirectory(prefix="fuseflowc-fuzz-", dir=scratch_dir()) as tmp:
        runner = CaseRunner(Path(tmp), limits)
        record, fh = _record_to(out / "outcomes.jsonl")
        try:
            summary = run_cases(corpus, runner, seed, cases, jobs, commands, log, record)
        finally:
            fh.close()
        failures = out / "failures"
        if failures.exists():
            _remove(failures)
        reproduce(summary, runner, out, seed, minimize_seconds, log)
    (out / "summary.txt").write_text(table(summary, seed, limits, jobs))
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m fuseflowc.fuzz`: exit 0 if no case failed (FAILURES), else 1."""
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", "-n", type=int, default=1000, help="number of cases")
    ap.add_argument("--seed", type=int, default=1, help="random seed (case K of seed S is "
                                                        "always the same case)")
    ap.add_argument("--out", type=Path, default=Path("out/fuzz"), help="output directory")
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="CPU seconds per case (wall-clock backstop: 10x)")
    ap.add_argument("--memory-mb", type=int, default=3072, help="address space per case")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="cases run at once")
    ap.add_argument("--minimize-seconds", type=float, default=60.0,
                    help="time to shrink each distinct failure (0: save it as found)")
    ap.add_argument("--commands", "--families", default="",
                    help="only these families or subcommands (comma-separated)")
    ap.add_argument("--scope", choices=("full", "small"), default="full",
                    help="seeds: every example (full) or a few kernels and GCN (small)")
    ap.add_argument("--corpus", type=Path, default=None, help="corpus directory "
                                                              "(default OUT/corpus)")
    ap.add_argument("--show", type=int, default=None, metavar="K",
                    help="only make case K, print it and its outcome (no table)")
    a = ap.parse_args(argv)
    if not (REPO / "ir_examples").is_dir():
        ap.error(f"the fuzzer's seeds are the examples of a fuseflowc checkout; "
                 f"{REPO / 'ir_examples'} does not exist")
    commands = tuple(c for c in a.commands.split(",") if c)
    unknown = set(commands) - set(BY_NAME) - {f.command for f in FAMILIES}
    if unknown:
        ap.error(f"unknown families or commands: {', '.join(sorted(unknown))} (families: "
                 f"{', '.join(BY_NAME)})")
    limits = Limits(seconds=a.time_limit, memory_mb=a.memory_mb)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def stop(signum, frame):  # SIGTERM unwinds like Ctrl-C: children killed, scratch removed
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        if a.show is not None:
            return show(a, commands, limits, log)
        summary = fuzz(a.cases, a.seed, a.out, limits, a.jobs, a.minimize_seconds, commands,
                       a.scope, a.corpus, log)
    except KeyboardInterrupt:
        log(f"fuzz: stopped; the cases run so far are in {a.out / 'outcomes.jsonl'}")
        return 130
    sys.stdout.write((a.out / "summary.txt").read_text())
    return 1 if summary.fatal() else 0


def show(a, commands, limits, log) -> int:
    """--show K: make and run one case, print its command line, mutations and verdict."""
    prepare()
    corpus = build_corpus(REPO, a.corpus or a.out / "corpus", a.scope, log=log)
    case = make_case(corpus, a.seed, a.show, commands)
    with tempfile.TemporaryDirectory(prefix="fuseflowc-fuzz-", dir=scratch_dir()) as tmp:
        verdict, run = CaseRunner(Path(tmp), limits).run(case)
    print(f"case {a.show} ({case.family}): fuseflowc {shlex.join(case.argv)}")
    for n in case.notes:
        print(f"  mutation: {n[:200]}")
    print(f"  outcome: {verdict.outcome} {verdict.key or ''} {verdict.detail}")
    print(f"  exit {run.exit_code}, {run.seconds:.2f} s\n--- stderr\n{run.stderr[-3000:]}")
    return 0
