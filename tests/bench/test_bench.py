"""`make bench` at tiny scale: every spec in ir_examples/bench (and quick/) is a valid sweep with
the expected grid; the driver runs a spec, counts orders and writes a summary with the
paper's sections; the summary's own arithmetic (parallel speedups) is right; the estimator
handles `locate` nodes as the intersection they replace.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "ir_examples" / "bench"

# configurations per spec: the grid the benchmark promises (programs x params x orders x
# pipelines x data sets)
EXPECTED = {
    "fig12_gcn": 8, "fig12_graphsage": 6, "fig12_sae": 3, "fig12_gpt3": 5,
    "fig15_parallel": 20, "fig16_block": 4, "fig17_orders": 24,
    "quick/fig12_gcn": 4, "quick/fig12_graphsage": 4, "quick/fig12_sae": 3,
    "quick/fig12_gpt3": 3, "quick/fig15_parallel": 20, "quick/fig16_block": 3,
    "quick/fig17_orders": 24,
    # make bench-paper: Figure 12 at the paper's sizes (tests/bench/test_bench_paper.py)
    "paper/fig12_gcn_collab": 3, "paper/fig12_graphsage_collab": 3,
    "paper/fig12_sae_imagenet": 3, "paper/fig12_gpt3_s1024": 10,
    # make bench-artifact: Figure 12 in the artifact's configuration (test_bench_artifact.py)
    # (GNN and SAE: each fused variant in the paper's order and in our order 0)
    "artifact/gcn_small": 9, "artifact/gcn_collab": 3, "artifact/graphsage_small": 9,
    "artifact/graphsage_collab": 3, "artifact/sae_imagenet": 5, "artifact/sae_luna16": 5,
    "artifact/gpt3_attn": 9, "artifact/gpt3_dense": 8,
    # make bench-paper-long: the artifact's rows that do not fit bench-paper's 60 minutes
    "artifact/long/gcn_small_full": 6, "artifact/long/graphsage_small_full": 6,
    "artifact/long/gcn_mag": 3, "artifact/long/graphsage_mag": 3, "artifact/long/sae_nih": 5,
    # and the paper-size GPT-3 fused as the artifact fuses (37-40 minutes a run)
    "paper/long/fig12_gpt3_s1024_iw": 2,
    # and the paper-size MAG graph (one run at a time, ~10 minutes a spec)
    "paper/long/fig12_gcn_mag": 3, "paper/long/fig12_graphsage_mag": 3,
}


def _portable_spec(spec: Path, tmp: Path) -> Path:
    """A copy of `spec` in tmp whose relative paths are absolute, and whose data directories
    (made by the Makefile, maybe not yet) are an empty directory: --dry-run needs them to
    exist, not to hold data."""
    empty = tmp / "data"
    empty.mkdir(exist_ok=True)
    text = spec.read_text()

    def absolute(m):
        key, val = m.group(1), m.group(2)
        if key == "dir":
            return f'{key} = "{empty}"'
        if key == "graph" and (val == "karate" or val.startswith("synthetic:")):
            return m.group(0)
        return f'{key} = "{(spec.parent / val).resolve()}"'
    text = re.sub(r'^(path|dir|graph) = "([^"]+)"', absolute, text, flags=re.M)
    out = tmp / spec.name
    out.write_text(text)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_spec_dry_run(name, tmp_path):
    spec = BENCH / f"{name}.toml"
    for m in re.finditer(r'^(path|graph) = "([^"]+)"', spec.read_text(), flags=re.M):
        if m.group(2) != "karate" and not m.group(2).startswith("synthetic:"):
            path = spec.parent / m.group(2)
            if "shared/data/" in m.group(2) and not path.exists():
                # the real data sets live beside the clone (../shared/data), as for every
                # data-set test; a path inside the repository must exist
                pytest.skip(f"{name} needs {m.group(2)} (../shared/data is not here)")
            assert path.exists(), f"{name}: {m.group(2)} does not exist"
    portable = str(_portable_spec(spec, tmp_path))
    r = run_cli(["sweep", portable, "-o", str(tmp_path / "r.csv"), "--dry-run"])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    if any(x.startswith("count  ") for x in lines):
        # orders = "all": a dry run compiles nothing, so the orders are counted here
        from fuseflowc.sweep.grid import expand_counted
        from fuseflowc.sweep.spec import parse_spec
        assert len(expand_counted(parse_spec(portable))) == EXPECTED[name]
    else:
        assert f"sweep: {EXPECTED[name]} configurations, 0 already" in r.stderr
        assert len(lines) == EXPECTED[name]


def test_every_spec_is_listed():
    found = {str(p.relative_to(BENCH).with_suffix("")) for p in BENCH.rglob("*.toml")}
    assert found == set(EXPECTED)


def test_full_and_quick_specs_match():
    """The quick scale runs the same experiments as the full one."""
    full = {p.stem for p in BENCH.glob("*.toml")}
    quick = {p.stem for p in (BENCH / "quick").glob("*.toml")}
    assert full == quick


def test_driver_runs_a_sweep_and_writes_the_summary(tmp_path):
    """The driver on one tiny sweep (the toy SAE, smaller still) plus the order counts."""
    from fuseflowc.bench.driver import main

    specs = tmp_path / "specs"
    specs.mkdir()
    spec = _portable_spec(BENCH / "quick" / "fig12_sae.toml", specs)
    spec.write_text(spec.read_text().replace(
        "sizes = { Bt = 2, P = 64, D1 = 16, D2 = 8 }", "sizes = { Bt = 2, P = 8, D1 = 4, D2 = 2 }"))
    out = tmp_path / "results"
    assert main(["--specs", str(specs), "--out", str(out), "--jobs", "1", "--scale", "test",
                 "--only", "fig12_sae", "--only", "orders"]) == 0
    text = (out / "SUMMARY.md").read_text()
    assert text.startswith("# FuseFlow Section 8 with fuseflowc (`make bench`, scale: test")
    fig12 = text.split("## Figure 12")[1].split("## ")[0]
    for variant in ("unfused", "partial", "full"):
        assert re.search(rf"\| sae +\| toy +\| {variant} +\| +[\d,]+ \| +\d+\.\d\dx \|", fig12)
    assert "| sae   | toy  | unfused |" in fig12 or "unfused" in fig12
    assert "Winner per model and data set: sae on toy: **" in fig12
    rows = (out / "fig12_sae.csv").read_text().splitlines()
    assert len(rows) == 4 and all(",ok,match," in r for r in rows[1:])
    orders = json.loads((out / "orders.json").read_text())
    nested = next(e for e in orders if e["program"] == "nested_matmul fused")
    assert (nested["constrained"], nested["free"]) == (1, 12)  # docs/fused-ir.md
    assert "| nested_matmul fused |" in text
    timings = json.loads((out / "timings.json").read_text())
    assert set(timings) == {"fig12_sae", "orders", "total"}
    assert (out / "fig12_sae" / "report.md").exists()
    # no compile part ran: the summary says so instead of failing
    assert "compile.txt is missing" in text
    # --summary-only rewrites the same summary from what is there
    shutil.copy(out / "SUMMARY.md", tmp_path / "before.md")
    assert main(["--specs", str(specs), "--out", str(out), "--jobs", "1", "--scale", "test",
                 "--summary-only"]) == 0
    assert (out / "SUMMARY.md").read_text() == (tmp_path / "before.md").read_text()


def _row(**kw):
    base = {"id": "x", "model": "bb", "variant": "attention", "data": "d", "status": "ok",
            "cycles": 100, "parallel": "", "block": "", "flops": 1, "bytes": 1,
            "est_flops": None, "est_bytes": None, "arch": [], "order": 0,
            "inline_widened": False, "params": {}, "pipeline": "", "order_region": None,
            "error": None}
    base.update(kw)
    return base


def test_parallel_section_speedups_against_serial():
    from fuseflowc.bench.summary import parallel_section

    rows = [_row(id="a", parallel="O:i=1", cycles=1000), _row(id="b", parallel="O:j=1",
                                                               cycles=1000),
            _row(id="c", parallel="O:i=4", cycles=250), _row(id="d", parallel="O:j=4",
                                                             cycles=500),
            _row(id="e", variant="nested", parallel="O:i=4,O:j=4", cycles=100),
            _row(id="f", parallel="O:i=2", status="timeout", cycles=None),
            # one index of three statements (three copies in the graph) is one split by 4
            _row(id="g", parallel="O:k=4,den:k=4,mx:k=4", cycles=400),
            _row(id="h", variant="nested", parallel="O:i=4,O:k=4,den:k=4,mx:k=4", cycles=80),
            _row(id="i", parallel="O:k=4,den:k=4,mx:k=4", cycles=300,
                 pipeline="schedule{reduce=lanes},locate")]
    text = "\n".join(parallel_section(rows))
    assert "Serial (factor 1): 1,000 cycles" in text
    # columns F = 1, 4, 16: the timed-out F = 2 row does not count
    assert re.search(r"\| +F = 1 \| +F = 4 \| +F = 16 \|", text)
    assert re.search(r"\| O:i +\| +1,000 \(1\.00x\) \| +250 \(4\.00x\) \| +- \|", text)
    assert re.search(r"\| O:j +\| +1,000 \(1\.00x\) \| +500 \(2\.00x\) \| +- \|", text)
    assert re.search(r"\| O:i by 4 x O:j by 4 +\| +- \| +- \| +100 \(10\.00x\) \|", text)
    assert re.search(r"\| O/den/mx:k +\| +- \| +400 \(2\.50x\) \| +- \|", text)
    assert re.search(r"\| O/den/mx:k \(lanes\) +\| +- \| +300 \(3\.33x\) \| +- \|", text)
    assert re.search(r"\| O:i by 4 x O/den/mx:k by 4 +\| +- \| +- \| +80 \(12\.50x\) \|", text)


def test_estimate_of_located_graph_equals_the_intersection(tmp_path):
    """`locate` emits exactly the intersection's streams, so the estimate is unchanged."""
    from fuseflowc.estimate import DataStats, estimate_module
    from fuseflowc.opt.pipeline import parse_pipeline, run_pipeline
    from fuseflowc.samml.parser import parse_text

    prog = ROOT / "ir_examples" / "models" / "gcn" / "gcn_partial.ff"
    assert run_cli(["gen-data", str(prog), "--graph", "karate", "-o", str(tmp_path / "d"),
                    "--seed", "1"]).exit_code == 0
    fused = run_cli(["fuse", str(prog)])
    low = run_cli(["lower", "-"], input=fused.stdout)
    assert low.exit_code == 0, low.stderr
    plain = parse_text(low.stdout, "g.samml")
    located = parse_text(low.stdout, "g.samml")
    run_pipeline(located, parse_pipeline("locate"))
    assert "locate" in {n.KIND for g in located.graphs for n in g.nodes}
    a = estimate_module(plain, DataStats.from_dir(tmp_path / "d", plain, 8))
    b = estimate_module(located, DataStats.from_dir(tmp_path / "d", located, 8))
    assert a.total.flops == pytest.approx(b.total.flops)
    assert a.total.bytes == pytest.approx(b.total.bytes)
    assert a.total.flops > 0


def test_gcn_section_shows_estimates_of_timed_out_rows():
    from fuseflowc.bench.summary import gcn_section

    rows = [_row(id="a", model="gcn", variant="unfused", cycles=100, flops=10, bytes=40),
            _row(id="b", model="gcn", variant="partial", cycles=50, flops=10, bytes=20),
            _row(id="c", model="gcn", variant="full", status="timeout", cycles=None,
                 flops=None, bytes=None, est_flops=30.0, est_bytes=80.0)]
    text = "\n".join(gcn_section(rows))
    assert re.search(r"\| d +\| partial +\| +10 \| +20 \| +1\.00 \| +0\.50 \| +0\.500 \|", text)
    assert re.search(r"\| d +\| full \(est\.\) +\| +30 \| +80 \| +3\.00 \| +2\.00 \| +0\.375 \|",
                     text)
    assert "its FLOPs and bytes are the estimator's" in text
