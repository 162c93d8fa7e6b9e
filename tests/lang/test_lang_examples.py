"""Every example program in ir_examples/ checks, and survives a print/parse/check round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source
from fuseflowc.lang import ast
from fuseflowc.lang.checker import check
from fuseflowc.lang.load import load_program
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import program_str
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples").rglob("*.ff"))
MODELS = ("gcn", "graphsage", "sae", "gpt3_bigbird")


def _id(p: Path) -> str:
    return p.relative_to(ROOT / "ir_examples").as_posix()


def test_examples_exist():
    names = {_id(p) for p in EXAMPLES}
    for kernel in ("spmv", "spmm", "sddmm", "add", "mul", "residual", "spmv_t_scaled",
                   "nested_matmul", "nested_matmul_fused", "mttkrp", "fig7_pair",
                   "multi_output", "multi_consumer"):
        assert f"kernels/{kernel}.ff" in names
    for m in MODELS:
        for variant in ("", "_unfused", "_partial", "_full"):
            assert f"models/{m}/{m}{variant}.ff" in names
    # The Makefile's `make demo` runs this exact file.
    assert "models/gcn/gcn_full.ff" in names


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_example_checks_and_round_trips(path):
    p1 = load_program(str(path))
    text1 = program_str(p1)
    p2 = check(parse_program(Source("<printed>", text1)))
    assert program_str(p2) == text1
    # The printed form has every sum explicit: reparsed, its right sides are the normalized ones.
    assert [s.rhs for s in p2.statements] == [s.expr for s in p1.statements]
    assert [s.expr for s in p2.statements] == [s.expr for s in p1.statements]
    assert p2.directives == p1.directives
    assert p2.tensors == p1.tensors and p2.dims == p1.dims


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_example_check_command(path):
    r = run_cli(["check", "-q", str(path)])
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")


@pytest.mark.parametrize("model", MODELS)
def test_model_variants_differ_only_in_regions(model):
    """The variants include the model file and add fusion regions, nothing else."""
    d = ROOT / "ir_examples" / "models" / model
    base = load_program(str(d / f"{model}.ff"))
    names = [s.name for s in base.statements]
    assert base.regions() == []
    variants = {v: load_program(str(d / f"{model}_{v}.ff")) for v in ("unfused", "partial", "full")}
    for v, p in variants.items():
        assert p.statements == base.statements and p.tensors == base.tensors, v
        assert [d for d in p.directives if not isinstance(d, ast.Fuse)] == base.directives, v
    assert variants["unfused"].regions() == []
    # Partial: several regions that together cover every statement, in statement order.
    partial = variants["partial"].regions()
    assert len(partial) >= 2
    assert [s for r in partial for s in r.statements] == names
    (full,) = variants["full"].regions()
    assert list(full.statements) == names


@pytest.mark.parametrize("model", MODELS)
def test_model_output_is_its_last_statement(model):
    """Every intermediate of a model is read by a later statement: the only output is the last."""
    p = load_program(str(ROOT / "ir_examples" / "models" / model / f"{model}.ff"))
    assert p.outputs == [p.statements[-1].name]


def test_attention_intermediates_keep_the_mask_pattern():
    """The softmax's element-wise steps over the mask are declared (dense, dense, compressed)."""
    p = load_program(str(ROOT / "ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff"))
    for name in ("Sc", "Sh", "Ex", "P"):
        assert p.tensor(name).format.levels == ("dense", "dense", "compressed"), name
    assert p.tensor("M").format.name() == "csr"
    unbound = {d.name for d in p.dims if d.size is None}
    assert unbound == {"S", "E", "NH", "DH", "FF"}
