"""`fuseflowc lower` reads only the fused IR: a program (file or stdin) is refused with the
pipeline to run instead, exit 1, nothing written; fused IR from `fuse` lowers."""

from __future__ import annotations

from pathlib import Path

from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
SPMV = ROOT / "ir_examples" / "kernels" / "spmv.ff"


def test_program_on_stdin_is_a_user_error(tmp_path):
    out = tmp_path / "y.samml"
    r = run_cli(["lower", "-", "-o", str(out)], input=SPMV.read_text())
    assert r.exit_code == 1
    assert "this is a program, not fused IR" in r.stderr
    assert "fuseflowc fuse PROGRAM.ff | fuseflowc lower" in r.stderr
    assert not out.exists()


def test_program_file_names_the_file():
    r = run_cli(["lower", str(SPMV)])
    assert r.exit_code == 1 and r.stdout == ""
    assert f"run `fuseflowc fuse {SPMV} | fuseflowc lower`" in r.stderr


def test_garbage_is_a_fused_ir_syntax_error():
    r = run_cli(["lower", "-"], input="region {\n")
    assert r.exit_code == 1
    assert "<stdin>:1:" in r.stderr and "program" not in r.stderr


def test_schedule_options_belong_to_fuse():
    r = run_cli(["lower", "-s", "order y: j -> i", str(SPMV)])
    assert r.exit_code == 2  # click usage error: lower has no --schedule


def test_fused_ir_lowers():
    fused = run_cli(["fuse", str(SPMV)])
    r = run_cli(["lower", "-"], input=fused.stdout)
    assert r.exit_code == 0, r.stderr
    assert "graph y" in r.stdout
