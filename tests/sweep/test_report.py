"""`fuseflowc report`: the summary's numbers against direct computations, the files written
with -o, plots when matplotlib is importable, text only (and said so) when not, bad inputs."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.outputs import MANIFEST
from fuseflowc.sweep import plots
from fuseflowc.sweep.results import NAMES, read_rows
from fuseflowc.sweep.summary import summarize
from tests.support.golden import ROOT, run_cli

FIXTURE = ROOT / "tests" / "golden" / "sweep" / "fixture.jsonl"


def row(i, **kw) -> dict:
    base = {n: None for n in NAMES}
    base.update({"id": f"r{i}", "model": "m", "variant": "unfused", "order": 0, "params": {},
                 "pipeline": "", "data": "d", "arch": [], "parallel": "", "block": "",
                 "status": "ok", "inline_widened": False})
    base.update(kw)
    return base


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 10**6), min_size=2, max_size=12, unique=True))
def test_order_spread_matches_statistics(cycles):
    rows = [row(k, order=k, cycles=c, flops=1, bytes=1) for k, c in enumerate(cycles)]
    (o,) = summarize(rows)["orders"]
    assert o["orders"] == len(cycles)
    assert (o["best"], o["worst"]) == (min(cycles), max(cycles))
    assert o["median"] == statistics.median(cycles)
    assert o["best_norm"] == min(cycles) / max(cycles)
    assert o["best_order"] == cycles.index(min(cycles))
    assert o["normalized"] == sorted(c / max(cycles) for c in cycles)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["unfused", "partial", "full", "other"]),
                       st.lists(st.integers(1, 10**6), min_size=1, max_size=4),
                       min_size=2))
def test_fusion_speedup_is_best_unfused_over_best_variant(by_variant):
    rows, k = [], 0
    for v, cs in by_variant.items():
        for c in cs:
            rows.append(row(k, variant=v, cycles=c, flops=2 * c, bytes=3 * c))
            k += 1
    fusion = summarize(rows)["fusion"]
    if "unfused" not in by_variant:
        assert fusion == []
        return
    base = min(by_variant["unfused"])
    assert [r["variant"] for r in fusion][0] == "unfused"
    for r in fusion:
        best = min(by_variant[r["variant"]])
        assert r["cycles"] == best
        assert r["speedup"] == pytest.approx(base / best)
        assert r["flops_norm"] == pytest.approx(best / base)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["unfused", "partial", "full"]),
                          st.integers(1, 10**6), st.integers(1, 10**9)),
                min_size=2, max_size=8))
def test_energy_is_the_fastest_rows_relative_to_unfused(runs):
    """Energy and EDP of each variant's fewest-cycles row, over the unfused variant's."""
    rows = [row(k, variant=v, cycles=c, flops=1, bytes=1, energy=float(e), edp=float(e) * c)
            for k, (v, c, e) in enumerate(runs)]
    fusion = summarize(rows)["fusion"]
    variants = {v for v, _, _ in runs}
    if "unfused" not in variants or len(variants) < 2:
        assert fusion == []
        return

    def fastest(v):
        return min((c, k) for k, (w, c, _) in enumerate(runs) if w == v)[1]
    base = runs[fastest("unfused")]
    for r in fusion:
        v, c, e = runs[fastest(r["variant"])]
        assert (r["energy"], r["edp"]) == (e, e * c)
        assert r["energy_norm"] == pytest.approx(e / base[2])
        assert r["edp_norm"] == pytest.approx(e * c / (base[2] * base[1]))


def test_energy_has_its_section_and_plot(tmp_path):
    results = tmp_path / "r.jsonl"
    rows = [row(0, cycles=100, flops=4, bytes=8, energy=2.0e6, edp=2.0e8),
            row(1, variant="full", cycles=50, flops=4, bytes=4, energy=3.0e6, edp=1.5e8)]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = run_cli(["report", str(results)])
    assert r.exit_code == 0, r.stderr
    assert "Energy and energy-delay product normalized to unfused" in r.stdout
    line = next(x for x in r.stdout.splitlines() if "| full" in x and "3.0" in x)
    assert [c.strip() for c in line.strip("| ").split("|")][3:] == ["3.0", "150.0", "1.50",
                                                                     "0.75"]
    if not plots.available():
        return
    out = tmp_path / "rep"
    assert run_cli(["report", str(results), "-o", str(out)]).exit_code == 0
    assert "![energy and energy-delay product normalized to unfused](energy.svg)" in \
        (out / "report.md").read_text()
    assert (out / "energy.svg").read_text().lstrip().startswith("<?xml")
    # results without energy (older files) have no energy section and no plot
    r = run_cli(["report", str(FIXTURE)])
    assert "Energy and energy-delay" not in r.stdout


def test_failed_and_pruned_rows_do_not_count():
    rows = [row(0, cycles=100, flops=1, bytes=1), row(1, variant="full", cycles=10,
                                                       status="pruned"),
            row(2, variant="full", status="error", error="lower: boom"),
            row(3, variant="full", cycles=50, flops=1, bytes=1)]
    s = summarize(rows)
    assert [(r["variant"], r["cycles"]) for r in s["fusion"]] == [("unfused", 100), ("full", 50)]
    assert [f["id"] for f in s["failed"]] == ["r2"]
    assert s["status"] == {"ok": 2, "error": 1, "pruned": 1}


def test_parallel_baseline_is_the_unparallelized_row():
    rows = [row(0, cycles=800, flops=1, bytes=1),
            row(1, parallel="Y:i=2", cycles=500, flops=1, bytes=1),
            row(2, parallel="Y:i=4", cycles=200, flops=1, bytes=1),
            row(3, parallel="Y:i=2,Z:j=2", cycles=100, flops=1, bytes=1),
            row(4, parallel="Y:i=4,Y:j=2", cycles=90, flops=1, bytes=1)]
    p = summarize(rows)["parallel"]
    # the factor is one graph's lanes (issue 22): Y and Z's graphs with 2 lanes each are 2,
    # not 4; two indices of Y's nest multiply (8)
    assert [(r["site"], r["factor"], r["speedup"]) for r in p] == [
        ("Y:i", 1, 1.0), ("Y:i", 2, 1.6), ("Y:i", 4, 4.0),
        ("Y:i,Y:j", 1, 1.0), ("Y:i,Y:j", 8, 800 / 90),
        ("Y:i,Z:j", 1, 1.0), ("Y:i,Z:j", 2, 8.0)]


def test_estimator_error():
    rows = [row(0, cycles=1, flops=100, bytes=1000, est_flops=103.0, est_bytes=900.0),
            row(1, variant="full", cycles=1, flops=100, bytes=1000, est_flops=99.0,
                est_bytes=1000.0)]
    e = summarize(rows)["estimator"]["overall"]
    assert e["flops_mean"] == pytest.approx(0.02) and e["flops_max"] == pytest.approx(0.03)
    assert e["bytes_mean"] == pytest.approx(0.05) and e["bytes_max"] == pytest.approx(0.1)


def test_matplotlib_is_a_dependency_so_reports_have_plots():
    """Plots are what people look at: matplotlib is installed with fuseflowc, not an extra
    (so the test below draws them in every `make test`, never skips)."""
    import tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("matplotlib") for d in meta["dependencies"])
    assert plots.available()


def test_report_directory_has_markdown_json_and_plots(tmp_path):
    out = tmp_path / "rep"
    r = run_cli(["report", str(FIXTURE), "-o", str(out), "--format", "png"])
    assert r.exit_code == 0, r.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [MANIFEST, "block.png", "normalized.png", "orders.png", "parallel.png",
                     "report.md", "speedup.png", "summary.json"]
    for n in names:
        if n.endswith(".png"):
            assert (out / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "![speedup over unfused](speedup.png)" in md
    assert json.loads((out / "summary.json").read_text())["rows"] == 31
    r = run_cli(["report", str(FIXTURE), "-o", str(out)])       # replaced whole: svg now
    assert sorted(p.suffix for p in out.iterdir()).count(".svg") == 5
    assert (out / "speedup.svg").read_text().lstrip().startswith("<?xml")
    import matplotlib
    assert matplotlib.get_backend().lower() == "agg"  # drawn without a display


def test_report_without_matplotlib_is_text_only_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    out = tmp_path / "rep"
    r = run_cli(["report", str(FIXTURE), "-o", str(out)])
    assert r.exit_code == 0
    assert "matplotlib is not installed" in r.stderr and "text only" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "report.md", "summary.json"]
    assert "![" not in (out / "report.md").read_text()


def test_csv_and_jsonl_give_the_same_report(tmp_path):
    from fuseflowc.sweep.results import ResultsWriter
    w = ResultsWriter(str(tmp_path / "r.csv"))
    for r in read_rows(str(FIXTURE)):
        w.append(r)
    w.close()
    a = run_cli(["report", str(FIXTURE), "--json"]).stdout
    b = run_cli(["report", str(tmp_path / "r.csv"), "--json"]).stdout
    assert a == b


ROW = '{"id": "a", "model": "m", "variant": "v", "data": "d", "status": "ok"'
HEAD = "id,model,variant,data,status,"


@pytest.mark.parametrize("name, text, message", [
    ("r.jsonl", ROW + '}\n{"id": \n', "r.jsonl:2:8: not a JSON row"),
    ("r.jsonl", '[1, 2]\n', "r.jsonl:1: a row is a JSON object with an id"),
    ("r.csv", HEAD + "cycles\na,m,v,d,ok,1\nb\n", "r.csv:3: 1 cells, but the header has 6"),
    ("r.csv", HEAD + "cycles\na,m,v,d,ok,many\n",
     "r.csv:2: column cycles: cannot read 'many' as int"),
    ("r.csv", "model,cycles\n", "r.csv:1: the first row must be the header"),
    # rows whose columns have the wrong type or are missing (found by the fuzzer: a missing
    # data column made the report sort None against text; a missing params one, call .items()
    # on None)
    ("r.csv", "id,model,variant,status,cycles\na,m,v,ok,1\n",
     "r.csv:2: column data: every row needs one"),
    ("r.jsonl", '{"id": "a", "model": "m", "variant": "v", "data": null, "status": "ok"}\n',
     "r.jsonl:1: column data: every row needs one"),
    ("r.jsonl", ROW + ', "params": "factor=2"}\n',
     'r.jsonl:1: column params: expected a JSON object, not "factor=2"'),
    ("r.jsonl", ROW + ', "arch": [1]}\n', "r.jsonl:1: column arch: expected a JSON array of "
                                          "strings, not [1]"),
    ("r.jsonl", ROW + ', "cycles": "12"}\n', 'column cycles: expected an integer, not "12"'),
    ("r.jsonl", ROW + ', "cycles": true}\n', "column cycles: expected an integer, not true"),
    ("r.jsonl", ROW + ', "inline_widened": 1}\n',
     "column inline_widened: expected true or false, not 1"),
    ("r.jsonl", '{"id": "a", "model": 7, "variant": "v", "data": "d", "status": "ok"}\n',
     "column model: expected text, not 7"),
    ("r.csv", HEAD + "params\na,m,v,,ok,{}\n", "r.csv:2: column data: every row needs one"),
    ("r.csv", HEAD + "params\na,m,v,d,ok,[2]\n",
     "r.csv:2: column params: expected a JSON object, not [2]"),
    # json raises a bare ValueError for more than 4300 digits (it was exit 3)
    ("r.jsonl", ROW + "}\n" + ROW + ', "cycles": 1' + "0" * 5000 + "}\n",
     "r.jsonl:2:82: error: a number with 5001 digits; at most 4300 are read"),
    ("r.csv", HEAD + "cycles\na,m,v,d,ok,1" + "0" * 5000 + "\n",
     "r.csv:2: column cycles: cannot read"),
])
def test_bad_results_files_are_located(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    r = run_cli(["report", str(tmp_path / name)])
    assert r.exit_code == 1 and message in r.stderr, r.stderr


def test_missing_structured_columns_read_as_empty(tmp_path):
    """A results file without the optional columns (params, arch, ...) still reports."""
    (tmp_path / "r.csv").write_text(HEAD + "cycles\na,m,unfused,d,ok,10\nb,m,full,d,ok,5\n")
    (row, _) = read_rows(str(tmp_path / "r.csv"))
    assert (row["params"], row["arch"], row["schedule"]) == ({}, [], [])
    r = run_cli(["report", str(tmp_path / "r.csv")])
    assert r.exit_code == 0 and "2.00x" in r.stdout, r.stderr


def test_failures_are_listed_with_parameters_and_marked_in_the_plots(tmp_path):
    rows = [row(0, cycles=100, flops=1, bytes=1),
            row(1, variant="partial", cycles=50, flops=1, bytes=1),
            row(2, variant="full", status="timeout", error="timeout after 5 s (during simulate)",
                params={"b": 16}, pipeline="cleanup"),
            row(3, variant="partial", status="error", error="lower: boom", parallel="Y:i=4",
                params={"f": 4}),
            row(4, variant="partial", status="error", error="lower: boom", block="A=16")]
    s = summarize(rows)
    marks = {(u["variant"], u["status"], u["variant_failed"], u["site"], u["factor"], u["block"])
             for u in s["unfinished"]}
    assert marks == {("full", "timeout", True, "", 1, ""), ("partial", "error", False, "Y:i", 4, ""),
                     ("partial", "error", False, "", 1, "16")}
    assert [f["setting"] for f in s["failed"]] == ["b=16 -p cleanup", "f=4", "-"]
    from fuseflowc.sweep.markdown import render
    md = render(s, "r.jsonl")
    assert "Variants with no successful configuration (not in the table): m/full on d: timeout." in md
    assert "| b=16 -p cleanup |" in md
    if not plots.available():
        return
    out = tmp_path / "rep"
    drawn = plots.draw_all(s, out.parent, "svg")
    svg = (tmp_path / drawn["fusion"]).read_text()
    assert "timeout" in svg                 # the failed variant's mark and word
    assert "m/partial error" in (tmp_path / drawn["parallel"]).read_text()
    assert "error" in (tmp_path / drawn["block"]).read_text()
