"""`fuseflowc lower` runs the default pipeline (docs/opt.md, "The default pipeline"): its output
is exactly `lower -O0 | opt -p DEFAULT_PIPELINE`, a note on stderr names the passes, running
them again changes nothing, and the result simulates to the reference's tensors in fewer cycles
than the raw graph (issue 22: the fast pipeline is the default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.opt.pipeline import DEFAULT_PIPELINE
from tests.support.golden import run_cli, run_pipeline

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "ir_examples" / p for p in (
    "kernels/spmv.ff", "kernels/spmm.ff", "kernels/sddmm.ff", "models/gcn/gcn_partial.ff",
    "models/gat/gat.ff")]

PARALLEL = """dim I, J
tensor A[I, J] : csr
tensor x[J] : dense
tensor y[I] : dense
y[i] = A[i,j] * x[j]
parallelize y: i by 2
"""


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lower_is_lower_O0_then_the_default_pipeline(path):
    fused = run_cli(["fuse", str(path)]).stdout
    default = run_cli(["lower", "-"], input=fused)
    assert default.exit_code == 0, default.stderr
    assert f"default pipeline `opt -p {DEFAULT_PIPELINE}`" in default.stderr
    raw = run_cli(["lower", "-O0", "-"], input=fused)
    assert raw.exit_code == 0 and "note" not in raw.stderr
    by_hand = run_cli(["opt", "-p", DEFAULT_PIPELINE, "-"], input=raw.stdout)
    assert default.stdout == by_hand.stdout
    # idempotent: the passes again leave the module as it is
    again = run_cli(["opt", "-p", DEFAULT_PIPELINE, "-"], input=default.stdout)
    assert again.stdout == default.stdout
    assert run_cli(["lower", "--no-opt", "-"], input=fused).stdout == raw.stdout


def test_default_pipeline_applies_the_programs_parallelize_and_locates(tmp_path):
    prog = tmp_path / "p.ff"
    prog.write_text(PARALLEL)
    default = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower").stdout
    raw = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower -O0").stdout
    assert "schedule parallelize" in raw and "fork" not in raw and "locate" not in raw
    assert "schedule parallelize" not in default
    assert "fork" in default and "locate" in default


def test_default_pipeline_is_faster_and_checks(tmp_path):
    prog = ROOT / "ir_examples/models/gcn/gcn_partial.ff"
    data = tmp_path / "d"
    g = run_cli(["gen-data", str(prog), "-o", str(data), "--size", "N=40", "--size", "F=12",
                 "--size", "C=3", "--density", "A=0.15", "--density", "X=0.3", "--seed", "2"])
    assert g.exit_code == 0, g.stderr
    cycles = {}
    for flag in ("", "-O0"):
        r = run_pipeline(f"fuseflowc fuse {prog} | fuseflowc lower {flag} | fuseflowc simulate"
                         f" - --data {data} --check --json")
        assert r.exit_code == 0, r.stderr
        import json
        cycles[flag] = json.loads(r.stdout)["total"]["cycles"]
    assert cycles[""] < cycles["-O0"]
