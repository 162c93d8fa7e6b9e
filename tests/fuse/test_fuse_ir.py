"""The fused IR: round trip on every example, order selection, the Figure 7 pair, the verifier."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.orders import region_pog
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.printer import fused_str
from fuseflowc.lang.load import load_program
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "ir_examples").rglob("*.ff"))


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", EXAMPLES, ids=_rel)
def test_every_example_fuses_and_round_trips(path):
    text = fused_str(fuse_program(load_program(str(path)), _rel(path)))
    again = fused_str(parse_fused(Source("ir", text)))
    assert again == text


def _order_line(ir_text: str, region: str) -> list[str]:
    lines = ir_text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"region {region} ")))
    line = next(line for line in lines[start:] if line.startswith("  order "))
    return line.split(":")[0].replace("order", "", 1).split("->")


@pytest.mark.parametrize("example,region,extra", [
    ("ir_examples/models/graphsage/graphsage_full.ff", "graphsage", ["--inline-widened"]),
    ("ir_examples/models/graphsage/graphsage_full.ff", "graphsage.1", []),
    ("ir_examples/models/gpt3_bigbird/gpt3_bigbird_partial.ff", "pre.7", []),
    ("ir_examples/kernels/multi_output.ff", "rowstats", []),
])
def test_fuse_order_k_is_the_kth_listed_order(example, region, extra):
    listing = run_cli(["orders", example, "--region", region, "--list", "6", "--json", *extra])
    assert listing.exit_code == 0
    import json
    row = json.loads(listing.stdout)["regions"][0]
    assert len(row["listed"]) == min(6, row["orders"])
    fused = fuse_program(load_program(example), options=FuseOptions(
        inline_widened=bool(extra)))
    pog = region_pog(fused.region(region))
    names = fused.region(region).index_names()
    for k, order in enumerate(row["listed"]):
        r = run_cli(["fuse", example, "--order", str(k), "--region", region, *extra])
        assert r.exit_code == 0, r.stderr
        assert [x.strip() for x in _order_line(r.stdout, region)] == order
        assert tuple(names[v] for v in pog.unrank(k)) == tuple(order)
    # a large K is unranked without enumerating the ones before it
    last = row["orders"] - 1
    r = run_cli(["fuse", example, "--order", str(last), "--region", region, *extra])
    assert r.exit_code == 0
    r = run_cli(["fuse", example, "--order", str(last + 1), "--region", region, *extra])
    assert r.exit_code == 1 and f"{row['orders']} valid orders" in r.stderr


def test_widened_intermediates_are_materialized_unless_asked():
    path = str(ROOT / "ir_examples/models/gcn/gcn_full.ff")
    split = fuse_program(load_program(path))
    assert len(split.regions) > 1 and "Z1" in split.regions[0].materialized
    whole = fuse_program(load_program(path), options=FuseOptions(inline_widened=True))
    assert [r.name for r in whole.regions] == ["gcn"] and not whole.regions[0].materialized


def test_figure7_pair_materializes_A_and_reads_transposed_copies():
    f = fuse_program(load_program(str(ROOT / "ir_examples/kernels/fig7_pair.ff")))
    assert [r.name for r in f.regions] == ["fig7.1", "fig7.2"]
    assert all(r.materialized == ("A",) for r in f.regions)
    first, second = f.regions
    assert [e.statement for e in first.exprs] == ["A"] and first.exprs[0].writes
    assert {v.tensor: v.kind for v in first.views} == {"B": "input", "C__T": "permuted"}
    assert {v.tensor: v.kind for v in second.views} == {"B": "input", "A__T": "permuted"}
    copies = {t.name: (t.copy_of, t.format.mode_order) for t in f.tensors if t.role == "permuted"}
    assert copies == {"C__T": ("C", (1, 0)), "A__T": ("A", (1, 0))}
    assert first.order == ("i", "j", "u0") and second.order == ("i", "j", "u0")


def test_without_user_orders_figure7_fuses_by_substitution():
    f = fuse_program(load_program(str(ROOT / "ir_examples/kernels/fig7_pair.ff"),
                                  schedule=("order A: i -> k -> j", "order E: i -> k -> j")))
    (r,) = f.regions
    assert r.name == "fig7" and not r.materialized
    kinds = sorted((v.tensor, v.kind) for v in r.views)
    assert ("A", "inline") in kinds and not any(k == "permuted" for _, k in kinds)


OUTER = """
dim I, J
tensor x[I] : dense
tensor z[J] : dense
tensor M[I, J] : dense
tensor y[I] : dense
y[i] = x[i] * sum[j](z[j])
"""


def test_order_directive_constrains_the_count(tmp_path):
    path = tmp_path / "outer.ff"
    path.write_text(OUTER)
    free = fuse_program(load_program(str(path))).regions[0]
    assert region_pog(free).count() == 2
    pinned = fuse_program(load_program(str(path), schedule=("order y: j -> i",))).regions[0]
    assert region_pog(pinned).count() == 1
    assert pinned.order == ("u0", "i")
    assert any(e.kind == "order" and e.statement == "y" for e in pinned.edges)


def _ir(example: str) -> str:
    return fused_str(fuse_program(load_program(str(ROOT / example)), example))


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("view v0 A[i,u0] input (i, u0)", "view v0 A[i,u0] input (u0, i)"),
     "does not match the storage order"),
    (lambda t: t.replace("order i -> u0 : 0", "order u0 -> i : 0"), "against edge i -> u0"),
    (lambda t: t.replace("expr e0 y[i] = sum[u0](A[i,u0] * x[u0])",
                         "expr e0 y[i] = sum[u0](A[i,u0] * z[u0])"), "undeclared tensor 'z'"),
    (lambda t: t.replace("index u0 : J\n", ""), "undeclared index 'u0'"),
    (lambda t: t.replace("view v1 x[u0] input (u0)\n", ""), "has no view"),
])
def test_verifier_rejects_malformed_ir(edit, message):
    text = _ir("ir_examples/kernels/spmv.ff")
    bad = edit(text)
    assert bad != text
    with pytest.raises(UserError) as e:
        parse_fused(Source("bad.fused", bad))
    assert message in e.value.format()
    assert "bad.fused:" in e.value.format()


def test_compile_path_imports_no_heavy_modules():
    code = ("import sys\n"
            "from fuseflowc.fuse import algorithm, parser, printer, verify, orders\n"
            "from fuseflowc.commands import fuse\n"
            "bad = [m for m in ('numpy', 'scipy', 'networkx', 'rich') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
