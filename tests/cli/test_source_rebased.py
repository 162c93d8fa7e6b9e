"""A pipeline through files keeps its source program (issue #22): every command that writes a
fused file or a module records the program's path relative to where it writes (the output
file's directory; the current directory for stdout), and `simulate` reads it back relative to
where it reads (the module file's directory; the current directory for stdin), so files may be
written and read from directories at any depth. `--program` names the program when a module
read from stdin records a path the current directory does not have."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """tmp/prog/spmm.ff, its data in tmp/D, directories tmp/out and tmp/x/y/z; cwd tmp."""
    (tmp_path / "prog").mkdir()
    shutil.copy(ROOT / "ir_examples" / "kernels" / "spmm.ff", tmp_path / "prog" / "spmm.ff")
    for d in ("out", "x/y/z"):
        (tmp_path / d).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    r = run_cli(["gen-data", "prog/spmm.ff", "-o", "D", "--size", "I=12", "--size", "K=7",
                 "--size", "J=5", "--density", "A=0.4", "--seed", "2"])
    assert r.exit_code == 0, r.stderr
    return tmp_path


def _ok(args, input=None):
    r = run_cli(args, input=input)
    assert r.exit_code == 0, r.stderr
    return r


def _source(text: str) -> str:
    return next(x for x in text.splitlines() if x.startswith("source ")).split('"')[1]


def test_opt_to_stdout_then_simulate_from_another_depth(tree, monkeypatch):
    """The issue's pipeline: lower -o OUT/spmm.samml in one directory, then `opt OUT/... |
    simulate -` from a directory three levels down (opt used to pass the file-relative path
    on to stdout, where it was read relative to the cwd: no such file)."""
    fused = _ok(["fuse", "prog/spmm.ff"]).stdout
    _ok(["lower", "-o", "out/spmm.samml"], input=fused)
    assert _source((tree / "out" / "spmm.samml").read_text()) == "../prog/spmm.ff"
    monkeypatch.chdir(tree / "x" / "y" / "z")
    opt = _ok(["opt", "../../../out/spmm.samml", "-p", "locate"]).stdout
    assert _source(opt) == "../../../prog/spmm.ff"
    r = _ok(["simulate", "-", "--data", "../../../D", "--check"], input=opt)
    assert "check: C match" in r.stderr


def test_files_written_from_any_depth_are_the_same_bytes(tree, monkeypatch):
    """fuse -o, lower -o and opt -o from the top and from three levels down write identical
    files (the recorded path depends on where the file is, not on where the command ran), and
    simulate finds the program from a third directory."""
    outs = {}
    for cwd, up in ((tree, ""), (tree / "x" / "y" / "z", "../../../")):
        monkeypatch.chdir(cwd)
        _ok(["fuse", f"{up}prog/spmm.ff", "-o", f"{up}out/a.fused"])
        _ok(["lower", f"{up}out/a.fused", "-o", f"{up}x/b.samml"])
        _ok(["opt", f"{up}x/b.samml", "-p", "locate", "-o", f"{up}x/y/c.samml"])
        outs[up] = [(tree / p).read_bytes() for p in ("out/a.fused", "x/b.samml", "x/y/c.samml")]
    assert outs[""] == outs["../../../"]
    assert [_source(t.decode()) for t in outs[""]] == [
        "../prog/spmm.ff", "../prog/spmm.ff", "../../prog/spmm.ff"]
    monkeypatch.chdir(tree / "out")
    r = _ok(["simulate", "../x/y/c.samml", "--data", "../D", "--check"])
    assert "check: C match" in r.stderr


def test_a_module_on_stdin_is_relative_to_the_cwd_or_named_with_program(tree, monkeypatch):
    lowered = _ok(["lower", "-"], input=_ok(["fuse", "prog/spmm.ff"]).stdout).stdout
    _ok(["opt", "-", "-p", "cleanup", "-o", "out/m.samml"], input=lowered)
    module = (tree / "out" / "m.samml").read_text()
    assert _source(module) == "../prog/spmm.ff"
    monkeypatch.chdir(tree / "out")              # `cat m.samml | simulate -` beside the file
    assert "check: C match" in _ok(["simulate", "-", "--data", "../D", "--check"],
                                   input=module).stderr
    monkeypatch.chdir(tree / "x" / "y")          # elsewhere: a clear error, then --program
    r = run_cli(["simulate", "-", "--data", "../../D", "--check"], input=module)
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert "../prog/spmm.ff: no such file in the current directory" in r.stderr
    assert "--program PROG" in r.stderr
    r = _ok(["simulate", "-", "--data", "../../D", "--check", "--program",
             "../../prog/spmm.ff"], input=module)
    assert "check: C match" in r.stderr


def test_a_missing_or_broken_program_fails_before_the_simulation(tree):
    """--check finds and parses its program before the run: at the paper's sizes a run takes
    minutes to hours, which a wrong path must not cost (the run's cycle table, printed after
    the simulation, is absent)."""
    _ok(["lower", "-o", "out/spmm.samml"], input=_ok(["fuse", "prog/spmm.ff"]).stdout)
    (tree / "prog" / "spmm.ff").rename(tree / "prog" / "moved.ff")
    r = run_cli(["simulate", "out/spmm.samml", "--data", "D", "--check"])
    assert r.exit_code == 1 and "no such file" in r.stderr and "Traceback" not in r.stderr
    assert "cycles" not in r.stderr, r.stderr
    (tree / "prog" / "bad.ff").write_text("tensor A[I, K] : csr\nC[i] = = A[i,k]\n")
    r = run_cli(["simulate", "out/spmm.samml", "--data", "D", "--check", "--program",
                 "prog/bad.ff"])
    assert r.exit_code == 1 and "bad.ff:" in r.stderr and "cycles" not in r.stderr, r.stderr
    r = _ok(["simulate", "out/spmm.samml", "--data", "D", "--check", "--program",
             "prog/moved.ff"])
    assert "cycles" in r.stderr and "check: C match" in r.stderr


def test_program_is_a_check_option(tree):
    for extra in ([], ["--check", "--expect", "D"]):
        r = run_cli(["simulate", "out/none.samml", "--data", "D", "--program", "p.ff", *extra])
        assert r.exit_code == 2 and "--program" in r.stderr


_PART = st.sampled_from(["a", "b", "c", ".."])
_DIR = st.lists(_PART, max_size=4).map(lambda p: "/".join(p) or ".")


@given(src=_DIR, dst=_DIR, rec=st.lists(st.sampled_from(["p", "q", ".."]), max_size=3))
def test_a_rebased_path_names_the_same_file(tmp_path_factory, src, dst, rec):
    """Against plain path arithmetic (os.path.normpath): the rebased path, taken from the
    output's directory, is the file the recorded one names from the input's directory."""
    from fuseflowc.files import rebase_recorded, recorded_base
    recorded = "/".join([*rec, "prog.ff"])
    holder_in, holder_out = f"{src}/in.samml", f"{dst}/out.samml"
    new = rebase_recorded(recorded, holder_in, holder_out)
    named = os.path.normpath(os.path.join(os.getcwd(), src, recorded))
    assert os.path.normpath(os.path.join(os.getcwd(), dst, new)) == named
    assert not os.path.isabs(new)
    assert rebase_recorded(recorded, "-", "-") == recorded      # a stream to a stream: as is
    assert recorded_base("-") == recorded_base(None) == Path(".")
