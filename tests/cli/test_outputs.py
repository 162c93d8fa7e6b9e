"""What every command writes (fuseflowc/outputs.py), as a user sees it through the CLI: modes as
a plain open() gives, output directories that never lose a file fuseflowc did not write, outputs
that are or hold inputs refused, every output checked before any is written and all written or
none, and no temporary file left by a failure, Ctrl-C or SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fuseflowc.outputs import MANIFEST
from tests.support.golden import ROOT, run_cli

SPMV = ROOT / "ir_examples" / "kernels" / "spmv.ff"
FIXTURE = ROOT / "tests" / "golden" / "sweep" / "fixture.jsonl"
SIZES = ["--size", "I=6", "--size", "J=5", "--density", "A=0.3"]


def ok(args, input=None):
    r = run_cli([str(a) for a in args], input=input)
    assert r.exit_code == 0, r.stderr
    return r


def fail(args, *words, code=1):
    r = run_cli([str(a) for a in args])
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    return r


def snapshot(d: Path) -> dict[str, bytes]:
    """Every file under d (names relative), with its bytes: to show nothing was touched."""
    return {p.relative_to(d).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(d.rglob("*"))}


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory with spmv.ff, its data d/ and its graph g.samml, as the current directory."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SPMV, "spmv.ff")
    ok(["gen-data", "spmv.ff", "-o", "d", *SIZES, "--seed", "1"])
    ok(["fuse", "spmv.ff", "-o", "f.fused"])
    ok(["lower", "f.fused", "-o", "g.samml"])
    return tmp_path


@pytest.fixture
def umask():
    """Run with a chosen umask (restored afterwards)."""
    old = os.umask(0o022)
    yield lambda m: os.umask(m)
    os.umask(old)


def mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


# ---- modes (issue 18, item 3) ----------------------------------------------------------------
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o027], ids=oct)
def test_file_outputs_get_the_mode_open_gives(work, umask, mask):
    umask(mask)
    ok(["fuse", "spmv.ff", "-o", "new.fused"])
    assert mode("new.fused") == 0o666 & ~mask
    Path("old.fused").write_text("old")
    os.chmod("old.fused", 0o644)
    ok(["fuse", "spmv.ff", "-o", "old.fused"])  # replaced: the umask's mode, not 0600
    assert mode("old.fused") == 0o666 & ~mask
    ok(["run", "spmv.ff", "--data", "d", "--json-out", "s.json"])
    assert mode("s.json") == 0o666 & ~mask


@pytest.mark.parametrize("mask", [0o022, 0o007], ids=oct)
def test_output_directories_get_the_mode_mkdir_gives(work, umask, mask):
    umask(mask)
    ok(["gen-data", "spmv.ff", "-o", "d2", *SIZES])
    ok(["run", "spmv.ff", "--data", "d2", "-o", "r"])
    ok(["simulate", "g.samml", "--data", "d2", "-o", "s"])
    ok(["report", FIXTURE, "-o", "rep"])
    for d in ("d2", "r", "s", "rep"):
        assert mode(d) == 0o777 & ~mask, d
        for f in Path(d).iterdir():
            assert mode(f) == 0o666 & ~mask, f


def test_rendered_pictures_get_the_mode_open_gives(work, umask, monkeypatch):
    umask(0o002)
    fake = work / "bin" / "dot"  # a stand-in for Graphviz: copies the DOT text to its -o file
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\ncat > "$3"\n')
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(fake) if name == "dot" else None)
    ok(["dot", "g.samml", "-o", "g.svg"])
    assert mode("g.svg") == 0o664
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []


# ---- output directories (item 2) ---------------------------------------------------------------
def test_a_directory_holding_a_users_file_is_refused_untouched(work):
    Path("d/notes.txt").write_text("mine")
    before = snapshot(work / "d")
    fail(["gen-data", "spmv.ff", "-o", "d", *SIZES, "--seed", "2"],
         "-o d: the directory holds files fuseflowc did not write (notes.txt)")
    fail(["run", "spmv.ff", "--data", "d", "-o", "d"], "is also an input")
    Path("out").mkdir()
    Path("out/keep").mkdir()
    fail(["run", "spmv.ff", "--data", "d", "-o", "out"], "keep/", f"it has no {MANIFEST}")
    assert snapshot(work / "d") == before
    assert sorted(os.listdir("out")) == ["keep"]


def test_a_directory_fuseflowc_wrote_is_rewritten_and_loses_stale_files(work):
    ok(["gen-data", "spmv.ff", "-o", "d", *SIZES, "--seed", "2"])
    assert sorted(os.listdir("d")) == [MANIFEST, "A.npz", "x.npy"]
    ok(["gen-data", "spmv.ff", "-o", "d", *SIZES, "--format", "sam"])  # A.npz, x.npy gone
    names = sorted(os.listdir("d"))
    assert "A.npz" not in names and "tensor_A_mode_vals" in names and MANIFEST in names
    lines = Path("d", MANIFEST).read_text().splitlines()
    assert sorted(line.split("  ")[1] for line in lines) == [n for n in names if n != MANIFEST]
    # sha256sum's format: `sha256sum -c` checks it
    if shutil.which("sha256sum"):
        assert subprocess.run(["sha256sum", "-c", "--quiet", MANIFEST], cwd="d").returncode == 0
    ok(["simulate", "g.samml", "--data", "d", "--check"])


def test_a_changed_file_counts_as_not_fuseflowcs(work):
    Path("d/x.npy").write_bytes(Path("d/x.npy").read_bytes()[:-1] + b"\0")
    fail(["gen-data", "spmv.ff", "-o", "d", *SIZES],
         "x.npy (changed since fuseflowc wrote it)")


def test_an_unreadable_file_counts_as_not_fuseflowcs(work, monkeypatch):
    import fuseflowc.outputs as outputs

    def unreadable(path):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(outputs, "_sha256", unreadable)  # (root reads a mode-000 file anyway)
    fail(["gen-data", "spmv.ff", "-o", "d", *SIZES], "A.npz (Permission denied)")


def test_an_empty_directory_and_dot_are_accepted(work, monkeypatch):
    Path("empty").mkdir()
    ok(["gen-data", "spmv.ff", "-o", "empty", *SIZES])
    Path("here").mkdir()
    monkeypatch.chdir("here")
    ok(["gen-data", "../spmv.ff", "-o", ".", *SIZES])  # into the current directory, in place
    ok(["run", "../spmv.ff", "--data", "../d", "-o", "."])  # its own files: replaced
    assert sorted(os.listdir(".")) == [MANIFEST, "y.npy"]
    monkeypatch.chdir(work)
    before = snapshot(work)
    fail(["gen-data", "spmv.ff", "-o", ".", *SIZES], "contains an input")
    fail(["run", "spmv.ff", "--data", "d", "-o", "."], "contains an input")
    assert snapshot(work) == before  # and no ..XXXX directories


def test_outputs_that_are_or_hold_inputs_are_refused(work):
    before = snapshot(work)
    fail(["simulate", "g.samml", "--data", "d", "-o", "d"], "-o d: is also an input")
    shutil.copy(FIXTURE, "d/r.jsonl")
    before = snapshot(work)
    fail(["report", "d/r.jsonl", "-o", "d"], "-o d: contains an input of this command")
    fail(["fuse", "spmv.ff", "-o", "spmv.ff"], "-o spmv.ff: is also an input")
    fail(["opt", "g.samml", "-o", "g.samml"], "is also an input")
    Path("sub").mkdir()
    fail(["gen-data", "spmv.ff", "-o", "sub/..", *SIZES], "-o sub/..: contains an input")
    fail(["gen-data", "d/../spmv.ff", "-o", "d/..", *SIZES], "contains an input")
    Path("sub").rmdir()
    # found by fuzzing: an output inside an input directory replaced one of its files
    fail(["estimate", "g.samml", "--data", "d", "--json-out", "d/A.npz"],
         "--json-out d/A.npz: is inside d, an input directory of this command")
    fail(["simulate", "g.samml", "--data", "d", "-o", "d/out"], "-o d/out: is inside d")
    fail(["run", "spmv.ff", "--data", "d", "--json-out", "d/s.json"], "is inside d")
    assert snapshot(work) == before


# ---- -o naming a directory, '.', '' (item 4) --------------------------------------------------
FILE_OUTPUTS = [
    ["check", "spmv.ff"], ["fuse", "spmv.ff"], ["orders", "spmv.ff"], ["lower", "f.fused"],
    ["opt", "g.samml"], ["estimate", "g.samml", "--data", "d"], ["dot", "g.samml"],
]


@pytest.mark.parametrize("target", ["adir", ".", "", "adir/", "nodir/x"])
@pytest.mark.parametrize("args", FILE_OUTPUTS, ids=lambda a: a[0])
def test_file_output_naming_a_directory_is_an_error(work, args, target):
    Path("adir").mkdir(exist_ok=True)
    before = snapshot(work)
    word = {"": "an empty file name", "nodir/x": "directory nodir does not exist"}.get(
        target, "is a directory")
    fail([*args, "-o", target], word)
    assert snapshot(work) == before


@pytest.mark.parametrize("args", [["simulate", "g.samml", "--data", "d"],
                                  ["run", "spmv.ff", "--data", "d"],
                                  ["estimate", "g.samml", "--data", "d"],
                                  ["orders", "spmv.ff"], ["report", FIXTURE]],
                         ids=lambda a: a[0])
def test_json_out_naming_a_directory_is_an_error(work, args):
    Path("adir").mkdir()
    before = snapshot(work)
    fail([*args, "--json-out", "adir"], "--json-out adir: is a directory")
    fail([*args, "--json-out", ""], "--json-out '': an empty file name")
    assert snapshot(work) == before


@pytest.mark.parametrize("args", [["gen-data", "spmv.ff", *SIZES],
                                  ["run", "spmv.ff", "--data", "d"],
                                  ["simulate", "g.samml", "--data", "d"], ["report", FIXTURE],
                                  ["check", "spmv.ff"]], ids=lambda a: a[0])
def test_an_output_name_too_long_is_an_error(work, args):
    """Found by fuzzing: Path.exists() raises for a name longer than the file system takes, so
    a directory output of 300 characters was an OSError (exit 3)."""
    before = snapshot(work)
    fail([*args, "-o", "x" * 300], "cannot write: File name too long")
    assert snapshot(work) == before


def test_a_device_or_fifo_is_written_in_place(work):
    fifo = work / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    ok(["check", "spmv.ff", "-o", fifo])
    reader.join(10)
    assert got and got[0].startswith("dim I, J")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO, not replaced by a file


# ---- every output checked first, all or nothing (item 4) -------------------------------------
def test_run_writes_all_outputs_or_none(work):
    fail(["run", "spmv.ff", "--data", "d", "-o", "out", "--json-out", "nodir/x.json"],
         "--json-out nodir/x.json: directory nodir does not exist")
    assert not Path("out").exists()
    ok(["run", "spmv.ff", "--data", "d", "-o", "out"])
    before = snapshot(work)
    Path("adir").mkdir()
    fail(["run", "spmv.ff", "--data", "d", "-o", "out", "--json-out", "adir"], "is a directory")
    fail(["run", "spmv.ff", "--data", "d", "-o", "out", "--json-out", "out/s.json"],
         "--json-out out/s.json: is inside the output directory -o out")
    fail(["run", "spmv.ff", "--data", "d", "-o", "x.json", "--json-out", "x.json"],
         "name the same output")
    Path("adir").rmdir()
    assert snapshot(work) == before


def test_simulate_writes_nothing_when_the_check_fails(work):
    ok(["gen-data", "spmv.ff", "-o", "other", *SIZES, "--seed", "7"])
    ok(["run", "spmv.ff", "--data", "other", "-o", "wrong"])
    before = snapshot(work)
    fail(["simulate", "g.samml", "--data", "d", "--expect", "wrong", "-o", "out",
          "--json-out", "s.json"], "differ")
    assert snapshot(work) == before


# ---- failures and interruptions leave no temporary files (item 2) -----------------------------
def _interrupt_while_writing(monkeypatch, sig):
    """Make the data writer raise signal `sig` at this process after its first tensor."""
    import fuseflowc.data.io as io
    real = io._save_one
    calls = []

    def save_one(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), sig)
        return real(*a, **k)
    monkeypatch.setattr(io, "_save_one", save_one)


@pytest.fixture
def default_sigint():
    """SIGINT raises KeyboardInterrupt, as at a terminal, however pytest was started: a run in the
    background of a non-interactive shell inherits SIGINT ignored, and Python then installs no
    handler, so the in-process Ctrl-C below would do nothing."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("fresh", [True, False])
def test_ctrl_c_while_writing_leaves_nothing(work, monkeypatch, fresh, default_sigint):
    target = "new" if fresh else "d"
    before = snapshot(work)
    _interrupt_while_writing(monkeypatch, signal.SIGINT)
    r = run_cli(["gen-data", "spmv.ff", "-o", target, *SIZES, "--seed", "5"])
    assert r.exit_code == 130 and "interrupted" in r.stderr
    assert snapshot(work) == before  # no .new.XXXX.tmp, no staging directory inside d/


def test_sigterm_while_writing_leaves_nothing(work):
    # In a child process: if SIGTERM were not handled it would kill the test run.
    code = ("import os, signal, sys\n"
            "import fuseflowc.data.io as io\n"
            "real = io._save_one\n"
            "def once(*a, **k):\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    return real(*a, **k)\n"
            "io._save_one = once\n"
            "from fuseflowc.cli import main\n"
            "main(sys.argv[1:], prog_name='fuseflowc')\n")
    before = snapshot(work)
    r = subprocess.run([sys.executable, "-c", code, "gen-data", "spmv.ff", "-o", "new", *SIZES],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    assert snapshot(work) == before


def test_ctrl_c_while_moving_outputs_into_place_waits_for_the_last(work, monkeypatch):
    """A signal during the moves is held off: every output lands, then the command stops."""
    ok(["run", "spmv.ff", "--data", "d", "-o", "out"])  # exists: its files are replaced
    real = os.replace
    calls = []

    def replace(a, b, **k):
        calls.append(b)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return real(a, b, **k)
    monkeypatch.setattr(os, "replace", replace)
    r = run_cli(["run", "spmv.ff", "--data", "d", "-o", "out", "--json-out", "s.json"])
    assert r.exit_code == 130 and "interrupted" in r.stderr
    assert len(calls) == 3  # out/y.npy, out/.fuseflowc-manifest, s.json
    assert json.loads(Path("s.json").read_text())["written"] == ["y"]
    assert sorted(os.listdir("out")) == [MANIFEST, "y.npy"]
    assert not [p for p in work.rglob(".*") if p.name != MANIFEST]
