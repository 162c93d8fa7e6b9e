"""The `source "..."` path a fused or SAMML file records: found from the file's directory, else
from the current directory (where `fuse` recorded it), and rewritten by `lower -o` so that the
module still finds it from its own directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
SPMV = "ir_examples/kernels/spmv.ff"


@pytest.fixture
def data(tmp_path, monkeypatch):
    """Run from the repository root (so SPMV is a cwd-relative path) with spmv data in tmp."""
    monkeypatch.chdir(ROOT)
    d = tmp_path / "d"
    r = run_cli(["gen-data", SPMV, "--size", "I=12", "--size", "J=9", "--density", "A=0.3",
                 "--seed", "3", "-o", str(d)])
    assert r.exit_code == 0, r.stderr
    return d


def _samml_on_stdout() -> str:
    fused = run_cli(["fuse", SPMV])
    assert fused.exit_code == 0, fused.stderr
    r = run_cli(["lower"], input=fused.stdout)
    assert r.exit_code == 0, r.stderr
    assert f'source "{SPMV}"' in r.stdout
    return r.stdout


def test_module_moved_away_finds_source_from_cwd(data, tmp_path):
    # `fuse prog | lower > elsewhere/g.samml` keeps the cwd-relative path: it used to be looked
    # up only beside g.samml ("tmp/ir_examples/...: no such file").
    g = tmp_path / "x" / "g.samml"
    g.parent.mkdir()
    g.write_text(_samml_on_stdout())
    r = run_cli(["simulate", str(g), "--data", str(data), "--check"])
    assert r.exit_code == 0, r.stderr
    assert "check: y match" in r.stderr


def test_source_beside_module_wins(data, tmp_path):
    # A module copied together with its program finds the copy beside it first.
    d = tmp_path / "copy"
    (d / "ir_examples" / "kernels").mkdir(parents=True)
    shutil.copy(ROOT / SPMV, d / SPMV)
    (d / "g.samml").write_text(_samml_on_stdout())
    # Break the copy: if it is the one read, --check fails on the changed statement.
    text = (d / SPMV).read_text().replace("A[i,j] * x[j]", "A[i,j] * x[j] * 2.0")
    (d / SPMV).write_text(text)
    r = run_cli(["simulate", str(d / "g.samml"), "--data", str(data), "--check"])
    assert r.exit_code == 1
    assert "differ" in r.stderr


def test_missing_source_names_both_places(data, tmp_path):
    g = tmp_path / "g.samml"
    g.write_text(_samml_on_stdout().replace(SPMV, "nowhere/p.ff"))
    r = run_cli(["simulate", str(g), "--data", str(data), "--check"])
    assert r.exit_code == 1
    assert "nowhere/p.ff: no such file" in r.stderr
    assert str(tmp_path) in r.stderr and str(ROOT) in r.stderr


def test_lower_rewrites_source_found_beside_fused_file(tmp_path, monkeypatch):
    # A fused file whose source sits beside it, lowered from another directory into a
    # subdirectory: the module's source must point at that program from the module's directory.
    d = tmp_path / "w"
    d.mkdir()
    shutil.copy(ROOT / SPMV, d / "spmv.ff")
    monkeypatch.chdir(d)
    assert run_cli(["fuse", "spmv.ff", "-o", "spmv.fused"]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    (d / "out").mkdir()
    r = run_cli(["lower", "w/spmv.fused", "-o", "w/out/g.samml"])
    assert r.exit_code == 0, r.stderr
    assert (d / "out" / "g.samml").read_text().startswith('source "../spmv.ff"')


def test_lower_keeps_cwd_relative_source(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    fused = run_cli(["fuse", SPMV]).stdout
    out = tmp_path / "g.samml"
    assert run_cli(["lower", "-o", str(out)], input=fused).exit_code == 0
    recorded = out.read_text().splitlines()[0].split('"')[1]
    assert (tmp_path / recorded).resolve() == (ROOT / SPMV).resolve()
