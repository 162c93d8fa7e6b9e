"""`report --trace/--run` (issue 28: critical nodes per kernel, busy nodes over time) and the
plot conventions of issue 22 (parallel scaling on log cycles with integer factor ticks; the
fusion table names each row's pipeline); `simulate --trace` as a command (all or nothing,
usage errors)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sweep import plots
from fuseflowc.sweep.markdown import render
from fuseflowc.sweep.summary import summarize
from fuseflowc.sweep.utilization import Kernel, Run, busy_over_time
from tests.support.golden import ROOT, run_cli
from tests.support.trace_reader import read_trace
from tests.sweep.test_report import row

SPMV = str(ROOT / "ir_examples" / "samml" / "spmv_row.samml")
SPMV_FF = str(ROOT / "ir_examples" / "kernels" / "spmv.ff")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim")
    r = run_cli(["gen-data", SPMV_FF, "-o", str(d / "data"), "--size", "I=40", "--size",
                 "J=30", "--density", "A=0.2", "--seed", "5"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["simulate", SPMV, "--data", str(d / "data"), "-q", "--json-out",
                 str(d / "run.json"), "--trace", str(d / "run.trace.json")])
    assert r.exit_code == 0, r.stderr
    return d


def test_simulate_trace_matches_its_json(sim):
    run = json.loads((sim / "run.json").read_text())
    tr = read_trace((sim / "run.trace.json").read_text())
    [k] = run["kernels"]
    threads = tr.threads(tr.process(": " + k["graph"]))
    for n in k["nodes"]:
        [t] = [t for name, t in threads.items() if name.split(" = ")[0] == n["name"]]
        assert t.total("busy") == n["busy_cycles"] and t.total("stalled") == n["stalled_cycles"]


def test_simulate_trace_usage_and_failures(sim, tmp_path):
    data = str(sim / "data")
    r = run_cli(["simulate", SPMV, "--data", data, "--trace-limit", "5000"])
    assert r.exit_code == 2 and "--trace-limit needs --trace" in r.stderr
    r = run_cli(["simulate", SPMV, "--data", data, "--trace", str(tmp_path / "t.json"),
                 "--trace-limit", "10"])
    assert r.exit_code == 2
    out = tmp_path / "t.json"
    r = run_cli(["simulate", SPMV, "--data", data, "-q", "--trace", str(out),
                 "--max-cycles", "5"])
    assert r.exit_code == 1 and "cycle budget" in r.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
    r = run_cli(["simulate", SPMV, "--data", data, "-q", "--trace", str(sim / "data")])
    assert r.exit_code in (1, 2) and not (sim / "data").is_file()


def test_report_critical_nodes_from_trace_and_run(sim, tmp_path):
    out = tmp_path / "rep"
    r = run_cli(["report", "--trace", str(sim / "run.trace.json"), "--run",
                 str(sim / "run.json"), "-o", str(out), "--format", "png"])
    assert r.exit_code == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    crit = summary["critical_nodes"]
    run = json.loads((sim / "run.json").read_text())
    [k] = run["kernels"]
    top = sorted(k["nodes"], key=lambda n: (-n["busy_cycles"], -n["stalled_cycles"],
                                            n["name"]))[:3]
    # the trace (label "run" of run.trace.json) and the JSON (label "run") say the same
    assert len(crit) == 6
    for part in (crit[:3], crit[3:]):
        assert [c["node"] for c in part] == [n["name"] for n in top]
        assert [c["busy"] for c in part] == [n["busy_cycles"] for n in top]
        assert [c["stalled"] for c in part] == [n["stalled_cycles"] for n in top]
    md = (out / "report.md").read_text()
    assert "## Utilization: critical nodes per kernel" in md
    assert "![busy nodes over time](utilization.png)" in md
    assert (out / "utilization.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "timeline-1.png").exists()


def test_report_refuses_what_is_not_a_trace(sim, tmp_path):
    r = run_cli(["report", "--trace", str(sim / "run.json")])
    assert r.exit_code == 1 and "run.json: not a trace" in r.stderr
    bad = tmp_path / "t.json"
    bad.write_text('{"traceEvents": [\n{"ph": ')
    r = run_cli(["report", "--trace", str(bad)])
    assert r.exit_code == 1 and f"{bad}:2:" in r.stderr
    assert run_cli(["report"]).exit_code == 2


def test_parallel_plot_log_cycles_and_integer_factor_ticks(monkeypatch, tmp_path):
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig))
    rows = [row(0, cycles=80_000, flops=1, bytes=1, data="cora"),
            row(1, parallel="Y:i=2", cycles=45_000, flops=1, bytes=1, data="cora"),
            row(2, parallel="Y:i=4", cycles=25_000, flops=1, bytes=1, data="cora"),
            row(3, cycles=90, flops=1, bytes=1, data="karate"),
            row(4, parallel="Y:i=2", cycles=50, flops=1, bytes=1, data="karate")]
    plots.parallel(summarize(rows)["parallel"], str(tmp_path / "p.svg"))
    ax = figs[0].axes[0]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4"]


def test_fusion_table_names_the_pipeline():
    rows = [row(0, cycles=100, flops=1, bytes=1, pipeline="locate,cleanup"),
            row(1, variant="full", cycles=50, flops=1, bytes=1, pipeline="")]
    s = summarize(rows)
    assert [r["pipeline"] for r in s["fusion"]] == ["locate,cleanup", ""]
    md = render(s, "r.csv")
    header = next(line for line in md.splitlines() if line.startswith("| model"))
    assert "pipeline" in header
    assert "locate,cleanup" in md and "(none)" in md


@given(st.lists(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 40), st.booleans()),
                         max_size=8), min_size=1, max_size=5),
       st.integers(1, 3))
def test_busy_over_time_keeps_every_busy_cycle(nodes, merge):
    """The plot's area is the busy cycles of the trace, merged slices included (their busy
    cycles spread over their span)."""
    k = Kernel("g", 0, 0)
    total = 0
    for j, gaps in enumerate(nodes):
        t, slices = 0, []
        for gap, length, busy in gaps:
            start, t = t + gap, t + gap + length
            b = length // merge if busy else 0
            slices.append((start, t, "busy" if busy else "stalled", b))
            total += b
        k.slices[f"#{j}"] = slices
        k.cycles = max(k.cycles, t)
    xs, ys, width = busy_over_time(Run("r", [k], True), bins=7)
    assert sum(ys) * width == pytest.approx(total)
