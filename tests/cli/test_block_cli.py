"""The blocked BigBird attention programs through the command line: `gen-data` writes
block-sparse inputs (bdense Q, K, V; bcsr M with whole random blocks), then
`fuse | lower | simulate --check` matches the reference evaluator; `run` evaluates them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.golden import run_cli, run_pipeline

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "ir_examples" / "models" / "bigbird_attention"


@pytest.mark.parametrize("b", [16, 32, 64])
def test_gen_data_and_simulate_blocked_attention(tmp_path, b):
    prog = PROGRAMS / f"attention-b{b}.ff"
    d = tmp_path / "data"
    r = run_cli(["gen-data", str(prog), "--size", "S=128", "--density", "M=0.5",
                 "-o", str(d), "--seed", str(b)])
    assert r.exit_code == 0, r.stderr
    assert "bcsr" in r.stderr and "bdense" in r.stderr
    from fuseflowc.data.io import load_inputs
    from fuseflowc.lang.load import load_program
    p = load_program(str(prog), (), False)
    tensors, _ = load_inputs(d, [s for s in p.specs() if s.name in set(p.inputs)],
                          {"S": 128, "DH": 64})
    m = tensors["M"]
    assert m.block == b and m.format.blocked
    # whole blocks: the element pattern is a union of b x b blocks, half of them stored
    pat = m.pattern()
    assert (pat == np.kron(pat[::b, ::b], np.ones((b, b), bool))).all()
    assert m.nnz == round(0.5 * (128 // b) ** 2)
    res = run_pipeline(f"fuseflowc fuse {prog} --order 51 | fuseflowc lower - | "
                       f"fuseflowc simulate - --data {d} --check")
    assert res.exit_code == 0, res.stderr
    assert "check: O match" in res.stderr


def test_run_evaluates_blocked_attention(tmp_path):
    prog = PROGRAMS / "attention-b32.ff"
    d = tmp_path / "data"
    assert run_cli(["gen-data", str(prog), "--size", "S=64", "-o", str(d)]).exit_code == 0
    r = run_cli(["run", str(prog), "--data", str(d), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr
