"""`make bench-paper` at tiny scale: a program marked `estimate_only` in a sweep spec becomes an
`estimated` row with its reason (never simulated, never silently dropped), the PAPER.md writer
turns results rows into the per-model tables and the sentences against the paper, and the
driver's paper scale runs only the specs and writes PAPER.md. (The specs themselves are
dry-run in tests/bench/test_bench.py with the other bench specs.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.sweep.grid import expand
from fuseflowc.sweep.results import ResultsWriter, normalize_row, read_rows
from fuseflowc.sweep.spec import parse_spec
from tests.support.golden import ROOT, run_cli

KERNELS = ROOT / "ir_examples" / "kernels"

SPEC = f"""
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
model = "spmv"
variant = "unfused"
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
model = "spmv"
variant = "full"
estimate_only = "too big for this test"
[[data]]
name = "small"
sizes = {{ I = 6, J = 5 }}
density = 0.5
seed = 1
"""


def test_estimate_only_rows_are_estimated_with_their_reason(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", str(spec), "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "1 ok, 1 estimated" in r.stderr
    sim, est = read_rows(str(out))
    assert sim["status"] == "ok" and sim["check"] == "match"
    assert est["status"] == "estimated" and est["cycles"] is None and est["check"] is None
    assert est["error"] == "estimated, not simulated: too big for this test"
    # the same program estimated and simulated: the estimate is the simulated one's
    assert est["est_flops"] == sim["est_flops"] > 0 and est["est_cycles"] == sim["est_cycles"]
    # an estimated configuration is another configuration (its own id), and --strict does not
    # count it as a failure
    assert est["id"] != sim["id"]
    assert run_cli(["sweep", str(spec), "-o", str(out), "--strict"]).exit_code == 0


def test_estimate_only_changes_no_other_id(tmp_path):
    """Ids of programs without the key stay what results files already hold."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    plain = tmp_path / "plain.toml"
    plain.write_text(SPEC.replace('estimate_only = "too big for this test"\n', ""))
    a, b = expand(parse_spec(str(spec))), expand(parse_spec(str(plain)))
    assert a[0]["id"] == b[0]["id"] and a[1]["id"] != b[1]["id"]


@pytest.mark.parametrize("value", ['""', "true", "3"])
def test_estimate_only_needs_a_reason(tmp_path, value):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace('"too big for this test"', value))
    with pytest.raises(UserError) as e:
        parse_spec(str(spec))
    assert "programs[1].estimate_only" in e.value.format()
    assert "expected the reason it is not simulated" in e.value.format()


def _row(model, data, variant, status="ok", cycles=None, est_cycles=None, **kw):
    row = {"id": f"{model}-{data}-{variant}", "model": model, "data": data, "variant": variant,
           "status": status, "cycles": cycles, "est_cycles": est_cycles,
           "flops": kw.pop("flops", 100 if status == "ok" else None),
           "bytes": kw.pop("bytes", 1000 if status == "ok" else None),
           "est_flops": kw.pop("est_flops", 110), "est_bytes": kw.pop("est_bytes", 900),
           "check": "match" if status == "ok" else None, "wall_seconds": 1.5}
    row.update(kw)
    return normalize_row(row)


def _write(path: Path, rows: list[dict]) -> None:
    w = ResultsWriter(str(path))
    for r in rows:
        w.append(r)
    w.close()


def test_paper_page_compares_with_the_paper(tmp_path):
    from fuseflowc.bench.paper import write_paper

    _write(tmp_path / "fig12_gcn_collab.csv", [
        _row("gcn", "collab", "unfused", cycles=2600, est_cycles=1000),
        _row("gcn", "collab", "partial", cycles=1000, est_cycles=500),   # 2.6x: agrees
        _row("gcn", "collab", "full", "estimated", est_cycles=2000, est_flops=220,
             error="estimated, not simulated: recomputes layer 1"),       # 0.5x est.: agrees
    ])
    _write(tmp_path / "fig12_graphsage_mag.csv", [
        _row("graphsage", "mag", "unfused", cycles=1200, est_cycles=100),
        _row("graphsage", "mag", "partial", cycles=1000, est_cycles=90),   # 1.2x vs 3.9x
        _row("graphsage", "mag", "full", "timeout", est_cycles=50,
             error="timeout after 10 s (during simulate)"),                # 2x est.: wins
    ])
    _write(tmp_path / "fig12_sae_imagenet.csv", [
        _row("sae", "imagenet", "unfused", cycles=100, est_cycles=100),
        _row("sae", "imagenet", "partial", cycles=50, est_cycles=100),
        _row("sae", "imagenet", "full", cycles=50, est_cycles=100),
    ])
    text = write_paper(tmp_path, ["fig12_gcn_collab", "fig12_graphsage_mag", "fig12_sae",
                                  "fig12_sae_imagenet"], 2,
                       "Commit abc of 2026-11-24.")
    assert text == (tmp_path / "PAPER.md").read_text()
    assert text.startswith("# FuseFlow Figure 12 at the paper's sizes")
    assert "Commit abc of 2026-11-24." in text
    gcn = text.split("## GCN")[1].split("## ")[0]
    assert re.search(r"\| collab +\| partial +\| simulated, checked +\| +1,000 \| +500 \| "
                     r"+2\.60x \| ~2\.6x +\|", gcn)
    # an estimated variant: estimated over estimated, never over the simulated baseline
    assert re.search(r"\| full +\| estimated \[1\] +\| +- \| +2,000 \| "
                     r"+0\.50x est\. \| slower than partial \| +220 \| +900 \| +2\.00 \| +1\.00 \|", gcn)
    assert "[1] recomputes layer 1." in gcn
    assert "- gcn partial on collab: agrees: ours 2.60x against the paper's ~2.6x; is our " \
           "fastest variant" in gcn
    # ranked against partial's estimate, not its simulated cycles
    assert "- gcn full on collab: agrees: slower than partial (estimated cycles 2,000 vs " \
           "500)" in gcn
    sage = text.split("## GraphSAGE")[1].split("## ")[0]
    # a timed-out configuration still has a row, marked, with the estimator's figures
    assert "| timeout, estimated [1] |" in sage
    assert "[1] timeout after 10 s (during simulate)." in sage
    assert "- graphsage partial on mag: **disagrees**: ours 1.20x against the paper's " \
           "~3.9x; is slower than our full (estimated cycles 50 vs 90)" in sage
    assert "- graphsage full on mag: **disagrees**: not slower than partial (estimated " \
           "cycles 50 vs 90)" in sage
    # every disagreement says why
    for line in sage.splitlines():
        if "**disagrees**" in line:
            assert " Why: " in line
    assert "- fig12_sae: no results" in text
    # a tie is not a win: partial fusion is not "more effective" than a full fusion as fast
    assert "- sae partial on imagenet: **disagrees**: ties with our full (simulated cycles " \
           "50 vs 50)" in text
    assert "- sae full on imagenet: **disagrees**: not slower than partial" in text


def test_driver_paper_scale_runs_specs_and_writes_the_page(tmp_path):
    from fuseflowc.bench.driver import main

    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "fig12_spmv.toml").write_text(SPEC)
    out = tmp_path / "results"
    assert main(["--specs", str(specs), "--out", str(out), "--jobs", "1", "--scale",
                 "paper"]) == 0
    assert (out / "PAPER.md").exists() and not (out / "SUMMARY.md").exists()
    assert not (out / "orders.json").exists() and not (out / "compile.txt").exists()
    text = (out / "PAPER.md").read_text()
    assert "## spmv" in text and "| small | full    | estimated [1]" in text
    assert "[1] too big for this test." in text
    assert "| fig12_spmv |" in text   # the wall-time table
    assert "## Not run" not in text
    # a configuration added to the spec (or cut off by an interruption) is listed as not run
    (specs / "fig12_spmv.toml").write_text(SPEC.replace("[[data]]", '[[data]]\nname = "tiny"\n'
                                                        'sizes = { I = 2, J = 2 }\n[[data]]', 1))
    assert main(["--specs", str(specs), "--out", str(out), "--summary-only", "--scale",
                 "paper"]) == 0
    text = (out / "PAPER.md").read_text()
    missing = text.split("## Not run")[1]
    # (compiled by the default pipeline, as a spec without `pipelines` is)
    default = "-p locate,schedule,cleanup"
    assert re.search(rf"- fig12_spmv: [0-9a-f]{{12}} spmv/unfused order 0 {default} tiny",
                     missing)
    assert f"spmv/full order 0 {default} tiny" in missing and "small" not in missing


def test_driver_paper_scale_shows_the_long_sets_rows_once_run(tmp_path):
    """SPECS/long/ (`make bench-paper-long`) is not run by the 60-minute set: its
    configurations are listed as the long set's (not as "Not run"), and once the long target
    has written its rows they are in the model's table."""
    from fuseflowc.bench.driver import main

    specs = tmp_path / "specs"
    (specs / "long").mkdir(parents=True)
    unfused, full = SPEC.split('[[programs]]\npath = "', 2)[1:]
    (specs / "fig12_spmv.toml").write_text('[[programs]]\npath = "' + unfused +
                                           SPEC[SPEC.index("[[data]]"):])
    (specs / "long" / "fig12_spmv_long.toml").write_text(
        '[[programs]]\npath = "' + full.replace('estimate_only = "too big for this test"\n', ""))
    out = tmp_path / "results"
    assert main(["--specs", str(specs), "--out", str(out), "--jobs", "1", "--scale",
                 "paper"]) == 0
    text = (out / "PAPER.md").read_text()
    assert "## Not run" not in text
    long_part = text.split("## The long set")[1]
    assert "`make bench-paper-long` runs them" in long_part
    assert re.search(r"- fig12_spmv_long: [0-9a-f]{12} spmv/full order 0 .* small", long_part)
    assert "| small | full " not in text
    # the long target runs SPECS/long into the same results directory, then the table again;
    # each set keeps its own total wall time
    total = json.loads((out / "timings.json").read_text())["total"]
    assert main(["--specs", str(specs / "long"), "--out", str(out), "--jobs", "1", "--scale",
                 "paper"]) == 0
    timings = json.loads((out / "timings.json").read_text())
    assert timings["total"] == total and timings["total-long"]["part"] == "total-long"
    assert main(["--specs", str(specs), "--out", str(out), "--summary-only", "--scale",
                 "paper"]) == 0
    text = (out / "PAPER.md").read_text()
    assert "## The long set" not in text and "## Not run" not in text
    assert re.search(r"\| small +\| full +\| simulated, checked", text)
    assert re.search(r"\| small +\| unfused +\| simulated, checked", text)
