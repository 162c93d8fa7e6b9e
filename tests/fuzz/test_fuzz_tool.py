"""The fuzzer itself (fuseflowc.fuzz): the sandbox sees every kind of outcome, the classifier
reads tracebacks, the time limit fires, the minimizer shrinks, mutations are deterministic.

Failures are provoked by test hooks: `fuseflowc.lang.load.load_program` is replaced (in this
process, before the fork, so the forked child runs the replacement) by a function that
misbehaves on a marker in the program text. No real bug is needed.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile
import time
from pathlib import Path

import pytest

import fuseflowc.lang.load as load
from fuseflowc.fuzz.cases import Case
from fuseflowc.fuzz.classify import PROJECT, classify, traceback_key
from fuseflowc.fuzz.datamut import mutate_data, npy_bytes
from fuseflowc.fuzz.driver import CaseRunner, prepare
from fuseflowc.fuzz.execute import BACKSTOP, Limits, Run, extension, group_cpu_seconds
from fuseflowc.fuzz.minimize import Budget, ddmin, minimize
from fuseflowc.fuzz.sandbox import Changes, Special, Stat, diff, snapshot
from fuseflowc.fuzz.textmut import TextMutator, tokenize

SPMV = (b"dim I, J\ntensor A[I, J] : csr\ntensor x[J] : dense\ntensor y[I] : dense\n"
        b"y[i] = A[i,j] * x[j]\n")
REAL_LOAD = load.load_program


def _hooked(path, schedule=(), unfused=False):
    """load_program, misbehaving on markers in the program text."""
    text = Path(path).read_text() if path != "-" else ""
    if "RAISE" in text:
        raise ValueError("hook: deliberate internal error")
    if "SPIN" in text:  # a hang that burns CPU
        while True:
            pass
    if "HANG" in text:  # a hang that waits (no CPU)
        while True:
            time.sleep(0.01)
    if "SEGV" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "TMPFILE" in text:
        tempfile.mkstemp(prefix="fuzzhook-")
    if "CLOBBER" in text:
        Path("notes.txt").write_text("overwritten\n")
    if "WRITEFAIL" in text:
        Path("stray.txt").write_text("half an output\n")
        from fuseflowc.diagnostics import UserError
        raise UserError("hook: failed after writing")
    return REAL_LOAD(path, schedule, unfused)


@pytest.fixture(scope="module")
def prepared():
    prepare()  # import the commands once, before forking (as the fuzzer does)


@pytest.fixture
def sandbox(prepared, tmp_path, monkeypatch):
    monkeypatch.setattr(load, "load_program", _hooked)
    return CaseRunner(tmp_path, Limits(seconds=2, memory_mb=0))


def _case(text: bytes, *args: tuple[str, ...], files=None, outputs=()) -> Case:
    return Case(seed=0, index=0, command="check", args=[("p.ff",), *args],
                files={"p.ff": text, **(files or {})}, inputs=["p.ff"], outputs=list(outputs))


def test_ok_and_user_error(sandbox):
    v, run = sandbox.run(_case(SPMV))
    assert (v.outcome, run.exit_code) == ("ok", 0) and "y[i] = sum[j]" in run.stdout
    v, run = sandbox.run(_case(SPMV + b"z[i] = q[i]\n"))
    assert (v.outcome, run.exit_code, v.key) == ("user-error", 1, None)
    assert "error:" in run.stderr


def test_traceback_is_internal_with_its_innermost_project_frame(sandbox):
    v, run = sandbox.run(_case(SPMV + b"# RAISE\n"))
    assert run.exit_code == 3
    assert v.outcome == "internal"
    # the hook's frame is not project code: the innermost project frame is the command's
    assert v.key == ("internal", "ValueError", "fuseflowc/commands/check.py:cmd")


def test_traceback_key_reads_the_last_traceback():
    f = PROJECT / "fuseflowc/lang/checker.py"
    text = (f"Traceback (most recent call last):\n  File \"{f}\", line 3, in check\n"
            "    x()\nKeyError: 'a'\n\nDuring handling of the above exception, another "
            f"exception occurred:\n\nTraceback (most recent call last):\n  File \"{f}\", line "
            f"9, in outer\n  File \"/usr/lib/python3/x.py\", line 1, in lib\n"
            "lark.exceptions.UnexpectedToken: bad\n")
    assert traceback_key(text) == ("UnexpectedToken", "fuseflowc/lang/checker.py:outer")
    assert traceback_key("fuseflowc: error: nothing\n") is None


@pytest.mark.parametrize("junk", ["x" * 1_000_000, "\n" * 1_000_000, " " * 1_000_000])
def test_classifying_a_megabyte_of_output_is_quick(junk):
    """The streams may echo a 200,000-byte line or a flood of blank lines: the classifier's
    patterns must stay linear (a quadratic one stalled the fuzzer itself)."""
    run = Run(exit_code=1, signal=None, timed_out=False, stdout=junk,
              stderr=junk + "\nerror: bad\n" + junk,
              stack="", stray_processes=False, seconds=0.1)
    start = time.monotonic()
    v = classify(_case(SPMV), run, Changes([], [], []), {})
    assert v.outcome == "user-error" and time.monotonic() - start < 2


def test_a_check_mismatch_of_an_unmutated_graph_is_a_wrong_answer():
    case = Case(seed=0, index=0, command="simulate", args=[("g.samml",), ("--check",)],
                files={}, inputs=["g.samml"], notes=["data: d/x.npy: value nan at [1]"])
    run = Run(exit_code=1, signal=None, timed_out=False, stdout="", stderr="fuseflowc: error: "
              "simulated outputs differ from the expected ones:\ny: 1 of 6 entries differ\n",
              stack="", stray_processes=False, seconds=0.1)
    v = classify(case, run, Changes([], [], []), {})
    assert v.key == ("wrong", "simulate --check", "mutated data")
    assert v.detail == "y: 1 of 6 entries differ"
    case.mutated = ["g.samml"]  # a mutated graph may compute something else: not a finding
    assert classify(case, run, Changes([], [], []), {}).outcome == "user-error"


def test_a_sweep_row_with_an_internal_error_counts():
    run = Run(exit_code=0, signal=None, timed_out=False, stdout="",
              stderr="2af03c42f106 spmm/plain tiny: error: load: internal error: ValueError: x\n",
              stack="", stray_processes=False, seconds=0.1)
    v = classify(_case(SPMV), run, Changes([], [], []), {})
    assert v.key == ("internal", "ValueError", "sweep row (load)")


def test_time_limit_fires_and_the_stack_is_kept(sandbox):
    start = time.monotonic()
    v, run = sandbox.run(_case(SPMV + b"# SPIN\n"))
    assert time.monotonic() - start < 2 * BACKSTOP + 5  # its CPU time, or the backstop
    assert run.timed_out and v.outcome == "hang"
    assert v.key == ("hang", "check", "fuseflowc/commands/check.py")
    assert "_hooked" in run.stack


def test_a_case_that_waits_forever_stops_at_the_wall_clock_backstop(prepared, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setattr(load, "load_program", _hooked)
    runner = CaseRunner(tmp_path, Limits(seconds=0.5, memory_mb=0))
    start = time.monotonic()
    v, run = runner.run(_case(SPMV + b"# HANG\n"))
    took = time.monotonic() - start
    assert run.timed_out and v.outcome == "hang" and "_hooked" in run.stack
    assert 0.5 * BACKSTOP <= took < 0.5 * BACKSTOP + 5


def test_a_slow_machine_extends_the_deadline_a_hang_does_not():
    lim = Limits(seconds=10)
    assert extension(cpu=2.0, wall=10.0, limits=lim) == 8.0      # busy machine: 8 s of CPU left
    assert extension(cpu=9.9, wall=12.0, limits=lim) == 0.25     # nearly done: a short wait
    assert extension(cpu=10.0, wall=10.0, limits=lim) == 0.0     # its CPU time is used up
    assert extension(cpu=0.0, wall=10 * BACKSTOP, limits=lim) == 0.0   # waits forever
    assert extension(cpu=0.0, wall=10 * BACKSTOP - 1, limits=lim) == 1.0  # up to the backstop


def test_group_cpu_seconds_counts_a_busy_process_group():
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                          "while time.process_time() - t < 0.6: pass\ntime.sleep(30)"],
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while group_cpu_seconds(p.pid) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert 0.5 <= group_cpu_seconds(p.pid) < 5
        assert group_cpu_seconds(p.pid + 10**7) == 0.0  # no such group
    finally:
        p.kill()
        p.wait()


def test_a_signal_is_a_crash(sandbox):
    v, run = sandbox.run(_case(SPMV + b"# SEGV\n"))
    assert v.outcome == "crash" and v.key[1] == "SIGSEGV"


def test_files_left_in_the_temporary_directory(sandbox):
    v, _ = sandbox.run(_case(SPMV + b"# TMPFILE\n"))
    assert v.key == ("leftover", "temporary file", "check")


def test_a_user_file_changed_is_a_clobber(sandbox):
    v, _ = sandbox.run(_case(SPMV + b"# CLOBBER\n", files={"notes.txt": b"mine\n"}))
    assert v.key == ("clobber", "not an output", "check")


def test_output_written_by_a_failed_command(sandbox):
    v, _ = sandbox.run(_case(SPMV + b"# WRITEFAIL\n"))
    assert v.key == ("leftover", "written by a failed command", "check")


def _judge(case: Case, added=(), modified=(), mode=0o644, code=0):
    run = Run(exit_code=code, signal=None, timed_out=False, stdout="", stderr="e" if code else "",
              stack="", stray_processes=False, seconds=0.1)
    after = {p: Stat("file", mode, "h") for p in [*added, *modified]}
    return classify(case, run, Changes(list(added), [], list(modified)), after)


def test_asked_for_outputs_are_fine_others_are_not():
    case = _case(SPMV, ("-o", "out.ff"), outputs=["out.ff"])
    assert _judge(case, added=["work/out.ff"]).outcome == "ok"
    assert _judge(case, added=["work/out.ff"], mode=0o600).key == ("perm", "file 0600", "check")
    assert _judge(case, added=["work/other"]).key == ("leftover", "not an output", "check")
    assert _judge(case, added=["work/out.ff"], code=1).key == \
        ("leftover", "written by a failed command", "check")
    over = _case(SPMV, ("-o", "p.ff"), outputs=["p.ff"])
    assert _judge(over, modified=["work/p.ff"]).key == ("clobber", "output over an input",
                                                        "check")
    # a directory fuseflowc wrote (gen-data's) may be replaced when named as the output
    d = _case(SPMV, ("-o", "data"), outputs=["data"])
    d.made = ["data"]
    assert _judge(d, modified=["work/data/x.npy"]).outcome == "ok"
    d.made = []
    assert _judge(d, modified=["work/data/x.npy"]).key == ("clobber", "not an output", "check")
    # sweep --strict: exit 1 for a failed configuration, with its rows written
    sweep = Case(seed=0, index=0, command="sweep", args=[("s.toml",), ("--strict",),
                                                          ("-o", "r.csv")],
                 files={}, inputs=["s.toml"], outputs=["r.csv"])
    run = Run(exit_code=1, signal=None, timed_out=False, stdout="", stderr="sweep: 1 "
              "configuration(s) of the grid failed in r.csv (1 error); exit 1 (--strict)",
              stack="", stray_processes=False, seconds=0.1)
    after = {"work/r.csv": Stat("file", 0o644, "h")}
    assert classify(sweep, run, Changes(["work/r.csv"], [], []), after).outcome == "user-error"


def test_snapshot_sees_specials_without_opening_them(tmp_path):
    from fuseflowc.fuzz.sandbox import materialize
    materialize(tmp_path, {"d/f": b"x", "fifo": Special("fifo"), "l": Special("symlink", "d"),
                           "e": Special("dir")})
    before = snapshot(tmp_path)
    assert {k: s.kind for k, s in before.items()} == {"d": "dir", "d/f": "file", "e": "dir",
                                                      "fifo": "other", "l": "symlink"}
    (tmp_path / "d/f").write_bytes(b"y")
    (tmp_path / "new").write_bytes(b"")
    ch = diff(before, snapshot(tmp_path))
    assert (ch.added, ch.removed, ch.modified) == (["new"], [], ["d/f"])


def test_ddmin_finds_the_two_needed_items():
    budget = Budget(1000, 60)
    assert ddmin(list(range(40)), lambda xs: 3 in xs and 27 in xs, budget) == [3, 27]
    assert ddmin([1, 2, 3], lambda xs: True, Budget(1000, 60)) == []


def test_minimizer_shrinks_a_real_failing_case(sandbox):
    """A program with the marker in the middle, an option and an extra file: the minimized
    case keeps only what the failure needs."""
    text = b"dim I\n" * 12 + b"# RAISE here\n" + b"tensor x[I] : dense\n" * 12
    case = _case(text, ("-q",), files={"other.txt": b"unrelated\n"})
    key = sandbox.run(case)[0].key
    trials = []

    def fails(c: Case) -> bool:
        trials.append(c)
        return sandbox.run(c)[0].key == key
    small = minimize(case, fails, Budget(200, 60))
    assert sandbox.run(small)[0].key == key
    assert small.args == [("p.ff",)]
    assert set(small.files) == {"p.ff"}
    assert small.files["p.ff"] == b"RAISE"
    assert len(trials) < 80


def test_tokens_cover_the_text_and_mutations_are_deterministic():
    for kind in ("program", "samml", "fused", "toml"):
        text = SPMV.decode() + "%s graph { } 1e5 \"s\" # c\n"
        toks = tokenize(kind, text)
        assert "".join(text[t.start:t.end] for t in toks) == text
    a = [TextMutator("program", random.Random(k)).mutate(SPMV) for k in range(50)]
    b = [TextMutator("program", random.Random(k)).mutate(SPMV) for k in range(50)]
    assert a == b and len({x for x, _ in a}) > 40


def test_data_mutations_are_deterministic_and_varied():
    import io

    import numpy as np
    import scipy.sparse as sp
    buf = io.BytesIO()
    sp.save_npz(buf, sp.random(5, 4, density=0.5, random_state=0, format="csr"))
    base = {"d/x.npy": npy_bytes(np.arange(6.0)), "d/A.npy": npy_bytes(np.eye(3)),
            "d/B.npz": buf.getvalue(), "d/C.mtx": b"%%MatrixMarket matrix coordinate real "
                                                  b"general\n2 2 1\n1 1 2.5\n"}

    def one(k):
        files = dict(base)
        note = mutate_data(files, "d", random.Random(k))
        return files, note
    runs = [one(k) for k in range(800)]
    assert runs == [one(k) for k in range(800)]
    assert len({n.split(":")[-1].split()[0] for _, n in runs}) > 10


def test_the_outcomes_file_keeps_a_user_errors_first_line(tmp_path):
    """outcomes.jsonl says why each user error was one (to sort a family's by cause)."""
    import json

    from fuseflowc.fuzz.driver import _record_to
    case = Case(1, 7, "plan", [("p.ff",)], {}, family="plan")
    run = Run(exit_code=1, signal=None, timed_out=False, stdout="",
              stderr="fuseflowc: error: --size N=0: a size is at least 1\n  more\n", stack="",
              stray_processes=False, seconds=0.5)
    record, fh = _record_to(tmp_path / "outcomes.jsonl")
    record(case, classify(case, run, Changes([], [], []), {}), run)
    fh.close()
    line = json.loads((tmp_path / "outcomes.jsonl").read_text())
    assert line["outcome"] == "user-error"
    assert line["detail"] == "fuseflowc: error: --size N=0: a size is at least 1"
