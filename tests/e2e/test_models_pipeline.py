"""Every model variant through the command line as `make models-cycles` runs it, at small sizes:

    fuseflowc gen-data PROG [--graph karate | --size ... | --mask M=bigbird:...] -o D
    fuseflowc fuse VARIANT [--inline-widened] | fuseflowc lower | fuseflowc simulate - --data D --check

GCN, GraphSAGE and SAE are fused with --inline-widened, the GPT-3 layers with plain fuse (as the
Makefile does). tests/lower/test_lower_e2e.py checks the same programs in-process on random data; this
adds the data generators of the Makefile (graph normalization, BigBird masks) and the reduced
gpt3_mini layer, and checks that the JSON counters the cycles table reads are there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.golden import run_cli, run_pipeline

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "ir_examples" / "models"

GPT3_SMALL = ["--size", "S=8", "--size", "E=4", "--size", "NH=2", "--size", "DH=2",
              "--size", "FF=4", "--mask", "M=bigbird:block=1,random=2"]
CASES = {
    # model: (base program, gen-data options, fuse flags)
    "gcn": ("gcn/gcn.ff", ["--graph", "karate", "--normalize", "gcn"], "--inline-widened"),
    "graphsage": ("graphsage/graphsage.ff", ["--graph", "karate", "--normalize", "mean"],
                  "--inline-widened"),
    "sae": ("sae/sae.ff", ["--size", "Bt=3", "--size", "P=6", "--size", "D1=4", "--size", "D2=2",
                           "--density", "X=0.5"], "--inline-widened"),
    "gpt3_bigbird": ("gpt3_bigbird/gpt3_bigbird.ff", GPT3_SMALL, ""),
    "gpt3_mini": ("gpt3_mini/gpt3_mini.ff", GPT3_SMALL, ""),
}


@pytest.mark.parametrize("variant", ["unfused", "partial", "full"])
@pytest.mark.parametrize("model", sorted(CASES))
def test_model_pipeline(tmp_path, model, variant):
    base, gen, flags = CASES[model]
    data = tmp_path / "d"
    r = run_cli(["gen-data", str(MODELS / base), "--seed", "3", "-o", str(data), *gen])
    assert r.exit_code == 0, r.stderr
    prog = MODELS / Path(base).parent / f"{Path(base).stem}_{variant}.ff"
    stats = tmp_path / "sim.json"
    r = run_pipeline(f"fuseflowc fuse {prog} {flags} | fuseflowc lower | "
                     f"fuseflowc simulate - --data {data} --check --json {stats}")
    assert r.exit_code == 0, r.stderr
    assert "check: " in r.stderr and " match" in r.stderr, r.stderr
    total = json.loads(stats.read_text())["total"]
    assert total["cycles"] > 0 and total["flops"] > 0 and total["token_hops"] > 0
    assert total["bytes_read"]["total"] > 0 and total["bytes_written"]["total"] > 0
