"""`fuseflowc sweep`: spec files, the grid and its ids, results files, and whole sweeps (small
programs, tiny data) through the CLI: workers, resume, failures as rows, timeouts, pruning."""

from __future__ import annotations

import csv
import json
import re
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.sweep.grid import CONFIG_FIELDS, config_id, expand, expand_counted
from fuseflowc.sweep.results import NAMES, ResultsWriter, format_row, read_rows
from fuseflowc.sweep.runner import prune_rows
from fuseflowc.sweep.spec import parse_spec
from tests.fuse.test_fuse_share import SOFTMAX
from tests.support.golden import ROOT, run_cli

KERNELS = ROOT / "ir_examples" / "kernels"

# two programs with several valid orders each, two tiny random data sets
SMALL = f"""
orders = [0, 1]
[[programs]]
path = "{KERNELS / 'nested_matmul_sweep.ff'}"
model = "nested"
variant = "fused"
free_input_order = true
[[programs]]
path = "{KERNELS / 'multi_output.ff'}"
model = "rowstats"
variant = "fused"
[[data]]
name = "d1"
sizes = {{ I = 6, K = 5, J = 7, L = 3 }}
density = 0.4
seed = 1
[[data]]
name = "d2"
sizes = {{ I = 4, K = 8, J = 5, L = 2 }}
density = {{ A = 0.5, B = 0.3 }}
seed = 2
"""


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def spec_error(tmp_path, text, name="spec.toml") -> str:
    with pytest.raises(UserError) as e:
        parse_spec(write(tmp_path, text, name))
    return e.value.format()


# ---- spec and grid ------------------------------------------------------------------------------
def test_grid_is_the_cross_product_with_stable_distinct_ids(tmp_path):
    spec = parse_spec(write(tmp_path, SMALL))
    configs = expand(spec)
    assert len(configs) == 2 * 2 * 2
    assert len({c["id"] for c in configs}) == 8
    again = expand(parse_spec(write(tmp_path, SMALL)))
    assert [c["id"] for c in configs] == [c["id"] for c in again]
    for c in configs:
        assert c["id"] == config_id(c)
        other = dict(c, order=c["order"] + 7)
        assert config_id(other) != c["id"]


def test_all_orders_are_counted_and_capped(tmp_path):
    text = SMALL.replace("orders = [0, 1]", 'orders = "all"\nmax_orders = 5')
    configs = expand_counted(parse_spec(write(tmp_path, text)))
    nested = sorted({c["order"] for c in configs if c["model"] == "nested"})
    rows = sorted({c["order"] for c in configs if c["model"] == "rowstats"})
    assert nested == [0, 1, 2, 3, 4]          # 12 valid orders, capped at 5
    assert rows == [0, 1, 2, 3, 4]            # 6 valid orders, capped at 5
    text = SMALL.replace("orders = [0, 1]", 'orders = "all"')
    configs = expand_counted(parse_spec(write(tmp_path, text)))
    assert len({c["order"] for c in configs if c["model"] == "nested"}) == 12
    assert len({c["order"] for c in configs if c["model"] == "rowstats"}) == 6


def test_schedule_templates_take_every_parameter_point(tmp_path):
    text = f"""
schedule = ["parallelize Y: i by {{factor}}", "order Y: {{o}}"]
[params]
factor = [1, 2, 4]
o = ["i -> c -> h"]
[[programs]]
path = "{ROOT / 'ir_examples/models/gcn/gcn_unfused.ff'}"
[[data]]
graph = "karate"
"""
    configs = expand(parse_spec(write(tmp_path, text)))
    assert [c["schedule"] for c in configs] == [
        [f"parallelize Y: i by {f}", "order Y: i -> c -> h"] for f in (1, 2, 4)]
    assert [c["params"] for c in configs] == [{"factor": f, "o": "i -> c -> h"}
                                              for f in (1, 2, 4)]
    assert configs[0]["model"] == "gcn" and configs[0]["variant"] == "unfused"
    assert configs[0]["data"] == "karate"


def test_json_specs_are_accepted(tmp_path):
    spec = {"programs": [str(KERNELS / "spmv.ff")], "orders": [0],
            "data": [{"name": "r", "sizes": {"I": 4, "J": 3}, "seed": 3}],
            "pipelines": ["", "cleanup"], "arch": [[], ["memory.latency=0"]]}
    configs = expand(parse_spec(write(tmp_path, json.dumps(spec), "spec.json")))
    assert len(configs) == 4
    assert {(c["pipeline"], tuple(c["arch"])) for c in configs} == {
        ("", ()), ("cleanup", ()), ("", ("memory.latency=0",)),
        ("cleanup", ("memory.latency=0",))}


@pytest.mark.parametrize("text, where, message", [
    ("orders = [0, \n", ":1:", "invalid TOML"),
    ('orders = "some"\nprograms = ["x.ff"]\n', ":1:1:", "orders: expected \"all\""),
    ('programs = ["nope.ff"]\n[[data]]\nseed = 1\n', ":1:1:", "nope.ff: no such file"),
    ('colour = 3\n', ":1:1:", "colour: unknown key"),
    ('schedule = ["parallelize Y: i by {f}"]\nprograms = ["SPMV"]\n[[data]]\nseed = 1\n',
     ":1:1:", "uses {f}, which [params] does not define"),
])
def test_bad_specs_are_located(tmp_path, text, where, message):
    text = text.replace("SPMV", str(KERNELS / "spmv.ff"))
    msg = spec_error(tmp_path, text)
    first = msg.split("\n")[0]
    assert f"spec.toml{where}" in first and message in first, msg


@pytest.mark.parametrize("key", ["programs", "dir", "graph"])
def test_spec_paths_too_long_to_look_up_are_located(tmp_path, key):
    """Found by fuzzing (make fuzz N=10000, case 523): a data dir whose name is too long for
    the system made Path.is_dir raise, an internal error."""
    long = "a" * 300 + "/x"
    spmv = KERNELS / "spmv.ff"
    text = {"programs": f'programs = ["{long}.ff"]\n[[data]]\nseed = 1\n',
            "dir": f'programs = ["{spmv}"]\n[[data]]\ndir = "{long}"\n',
            "graph": f'programs = ["{spmv}"]\n[[data]]\ngraph = "{long}.npz"\n'}[key]
    first = spec_error(tmp_path, text).split("\n")[0]
    assert "spec.toml:" in first and "error:" in first and "name too long" in first, first


@pytest.mark.parametrize("line, message", [
    ("timeout = nan", "timeout: expected a positive finite number"),
    ("timeout = inf", "timeout: expected a positive finite number"),
    ("timeout = 1e300", "timeout: 1e+300 seconds is more than the longest timeout, 1e+07"),
    ("flops_per_cycle = -inf", "flops_per_cycle: expected a positive finite number"),
])
def test_spec_numbers_must_be_finite(tmp_path, line, message):
    """Found by fuzzing: a timeout of nan or inf (TOML has both) reached the alarm timer, and
    every configuration became an 'internal error' row."""
    first = spec_error(tmp_path, f'{line}\nprograms = ["{KERNELS / "spmv.ff"}"]\n[[data]]\n'
                                 f'seed = 1\n').split("\n")[0]
    assert "spec.toml:1:1: error: " + message in first, first


@pytest.mark.parametrize("name, text, where", [
    ("spec.toml", "timeout = 1" + "0" * 5000 + "\n", ":1:11:"),
    ("spec.json", '{"programs": [],\n "timeout": 1' + "0" * 5000 + "}", ":2:13:"),
])
def test_spec_number_too_long_to_read(tmp_path, name, text, where):
    """Found by fuzzing: tomllib and json raise a bare ValueError for an integer of more than
    4300 digits (exit 3)."""
    first = spec_error(tmp_path, text, name).split("\n")[0]
    assert f"{name}{where} error: a number with 5001 digits; at most 4300 are read" in first


def test_negative_data_seed_is_refused(tmp_path):
    """Found by fuzzing: numpy refuses a negative seed (every row an internal error)."""
    first = spec_error(tmp_path, f'programs = ["{KERNELS / "spmv.ff"}"]\n[[data]]\nseed = -1\n'
                       ).split("\n")[0]
    assert "spec.toml:3:1: error: data[0].seed: expected a non-negative integer" in first


@pytest.mark.parametrize("option, message", [
    (["--timeout", "nan"], "nan is not a finite number"),
    (["--timeout", "inf"], "is not in the range 0<x<=10000000.0"),
    (["--prune", "nan"], "nan is not a finite number"),
    (["-j", "99999999999999999999"], "is not in the range 1<=x<=256"),
])
def test_sweep_options_are_bounded(tmp_path, option, message):
    """Found by fuzzing: -j 99999999999999999999 was an OverflowError (exit 3), --timeout nan
    an internal error in every row."""
    spec = tmp_path / "spec.toml"
    spec.write_text(f'programs = ["{KERNELS / "spmv.ff"}"]\n[[data]]\nseed = 1\n')
    r = run_cli(["sweep", str(spec), "-o", str(tmp_path / "r.csv"), *option])
    assert r.exit_code == 2 and message in r.stderr, r.stderr
    assert not (tmp_path / "r.csv").exists()


def test_bad_key_in_second_table_points_at_that_table(tmp_path):
    text = (f'[[programs]]\npath = "{KERNELS / "spmv.ff"}"\n[[data]]\nseed = 1\n'
            f'[[data]]\nname = "b"\nseed = "x"\n')
    first = spec_error(tmp_path, text).split("\n")[0]
    assert "spec.toml:7:1: error: data[1].seed: expected a non-negative integer" in first


def test_bad_json_spec_is_located(tmp_path):
    first = spec_error(tmp_path, '{"programs": [1,\n ]}', "spec.json").split("\n")[0]
    assert first.startswith(str(tmp_path / "spec.json") + ":2:2: error: invalid JSON")


def test_spec_without_data_names_file_and_key(tmp_path):
    msg = spec_error(tmp_path, f'programs = ["{KERNELS / "spmv.ff"}"]\n')
    assert msg.startswith("fuseflowc: error: " + str(tmp_path / "spec.toml") + ": data: missing")


# ---- results files ------------------------------------------------------------------------------
cell = st.one_of(st.none(), st.integers(-10**12, 10**12), st.text(max_size=12))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "model": st.text(max_size=8), "order": st.integers(0, 99), "cycles": st.one_of(
        st.none(), st.integers(0, 10**15)), "error": st.text(max_size=30),
    "params": st.dictionaries(st.text(min_size=1, max_size=5), st.integers(0, 99), max_size=3),
    "inline_widened": st.booleans(),
    "est_bytes": st.one_of(st.none(), st.floats(0, 1e12))}), max_size=4),
    st.sampled_from(["csv", "jsonl"]))
def test_rows_round_trip_through_both_file_kinds(tmp_path_factory, rows, kind):
    path = tmp_path_factory.mktemp("r") / f"results.{kind}"
    w = ResultsWriter(str(path))
    for k, r in enumerate(rows):
        w.append({**r, "id": f"id{k}"})
    w.close()
    back = read_rows(str(path))
    assert len(back) == len(rows)
    for k, (a, b) in enumerate(zip(rows, back)):
        assert b["id"] == f"id{k}"
        for key, v in a.items():
            if key in ("model", "error") and kind == "csv":
                # CSV cannot tell an empty string from a missing one
                assert b[key] == (v or None)
            else:
                assert b[key] == v, key


def test_a_partial_last_line_is_dropped_when_resuming(tmp_path):
    path = tmp_path / "r.csv"
    w = ResultsWriter(str(path))
    w.append({"id": "a", "status": "ok", "cycles": 3})
    w.close()
    with open(path, "a") as f:
        f.write(format_row("csv", {"id": "b", "status": "ok"})[:10])   # killed mid-write
    w = ResultsWriter(str(path))
    w.append({"id": "c", "status": "ok"})
    w.close()
    assert [r["id"] for r in read_rows(str(path))] == ["a", "c"]


def test_results_header_must_match(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("id,something\nx,1\n")
    with pytest.raises(UserError, match="header"):
        ResultsWriter(str(path))


def test_results_extension_is_checked(tmp_path):
    r = run_cli(["sweep", write(tmp_path, SMALL), "-o", str(tmp_path / "r.txt")])
    assert r.exit_code == 1 and "results files are .csv or .jsonl" in r.stderr


# ---- whole sweeps -------------------------------------------------------------------------------
def rows_by_id(path) -> dict:
    return {r["id"]: r for r in read_rows(str(path))}


def stable(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "wall_seconds"}


def test_small_sweep_end_to_end_with_two_workers_then_resume(tmp_path):
    spec = write(tmp_path, SMALL)
    out = tmp_path / "results.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "-j", "2"])
    assert r.exit_code == 0, r.stderr
    # (multi_output has one order: its order 1 compiles as its order 0, so it repeats that run)
    assert ("sweep: 8 configurations: 8 ok (2 repeating another configuration's run, which "
            "compiles the same); 0 already in") in r.stderr
    rows = read_rows(str(out))
    configs = expand(parse_spec(spec))
    assert [row["id"] for row in rows] == [c["id"] for c in configs]   # grid order
    header = next(csv.reader(open(out)))
    assert header == list(NAMES)
    for row, c in zip(rows, configs):
        assert row["status"] == "ok" and row["check"] == "match", row
        # (CSV reads an empty text as None)
        assert all((row[f] or None) == (c[f] or None) for f in CONFIG_FIELDS)
        assert row["cycles"] == sum(row["kernel_cycles"].values()) > 0
        assert row["bytes"] == sum(row[f"bytes_{a}_{b}"] for a in ("read", "written")
                                   for b in ("seg", "crd", "vals"))
        assert row["flops"] > 0 and row["wall_seconds"] >= 0 and not row["error"]
    # orders really differ: the nested matmul's order 1 reads permuted copies
    nested = [r for r in rows if r["model"] == "nested" and r["data"] == "d1"]
    assert nested[0]["kernel_cycles"].keys() != nested[1]["kernel_cycles"].keys()
    before = out.read_text()
    # resume: nothing left to do, the file is unchanged
    r = run_cli(["sweep", spec, "-o", str(out)])
    assert r.exit_code == 0 and "none run; 8 already in" in r.stderr
    assert out.read_text() == before
    # drop two rows: only those run again, with the same results (deterministic, -j 1)
    lines = before.splitlines(keepends=True)
    out.write_text("".join(lines[:3] + lines[5:]))
    r = run_cli(["sweep", spec, "-o", str(out)])
    assert "2 ok; 6 already in" in r.stderr
    again = rows_by_id(out)
    assert [stable(again[x["id"]]) for x in rows] == [stable(x) for x in rows]


def test_dry_run_lists_configurations_and_runs_nothing(tmp_path):
    spec = write(tmp_path, SMALL)
    out = tmp_path / "r.jsonl"
    r = run_cli(["sweep", spec, "-o", str(out), "--dry-run"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 8 and all(x.startswith("todo  ") for x in lines)
    # no `pipelines` key: the default pipeline, as `lower` compiles
    assert "nested/fused free-input-order order 1 -p locate,schedule,cleanup d2" in r.stdout
    assert not out.exists()


def test_pipelines_default_to_lowers_and_an_empty_one_is_the_raw_graph(tmp_path):
    """Issue 22: no key means opt.pipeline.DEFAULT_PIPELINE; "" spelled out runs no pass."""
    from fuseflowc.opt.pipeline import DEFAULT_PIPELINE
    assert parse_spec(write(tmp_path, SMALL)).pipelines == [DEFAULT_PIPELINE]
    raw = parse_spec(write(tmp_path, 'pipelines = [""]\n' + SMALL))
    assert raw.pipelines == [""]
    assert {c["pipeline"] for c in expand(raw)} == {""}


def test_failures_are_rows_and_the_sweep_goes_on(tmp_path):
    spec = write(tmp_path, f"""
orders = [0, 1]
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
[[data]]
name = "small"
sizes = {{ I = 5, J = 4 }}
seed = 1
[[data]]
name = "nosize"
seed = 1
""")
    out = tmp_path / "r.jsonl"
    r = run_cli(["sweep", spec, "-o", str(out), "-j", "2"])
    assert r.exit_code == 0, r.stderr
    rows = read_rows(str(out))
    assert [(x["order"], x["data"], x["status"]) for x in rows] == [
        (0, "small", "ok"), (0, "nosize", "error"), (1, "small", "error"),
        (1, "nosize", "error")]
    assert rows[1]["error"].startswith("data: ") and "dim I has no size" in rows[1]["error"]
    assert rows[2]["error"].startswith("fuse: --order 1 is out of range")
    assert "1 ok, 3 error" in r.stderr and rows[2]["id"] in r.stderr


def test_a_mismatch_is_an_error_row(tmp_path, monkeypatch):
    import fuseflowc.sim.compare
    monkeypatch.setattr(fuseflowc.sim.compare, "compare", lambda a, e: ["D: values differ at (0, 0)"])
    spec = write(tmp_path, SMALL)
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out)])     # -j 1: in this process (sees the patch)
    assert r.exit_code == 0
    rows = read_rows(str(out))
    assert all(x["status"] == "error" and x["check"] == "mismatch" for x in rows)
    assert all(x["cycles"] > 0 for x in rows)        # measured all the same
    assert rows[0]["error"] == ("check: outputs differ from the reference: "
                                "D: values differ at (0, 0)")


def test_check_false_skips_the_check(tmp_path):
    spec = write(tmp_path, "check = false\n" + SMALL)
    out = tmp_path / "r.csv"
    run_cli(["sweep", spec, "-o", str(out)])
    assert {x["check"] for x in read_rows(str(out))} == {"skipped"}


def test_timeout_rows(tmp_path):
    spec = write(tmp_path, SMALL)
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "-j", "2", "--timeout", "0.0001"])
    assert r.exit_code == 0, r.stderr
    rows = read_rows(str(out))
    assert {x["status"] for x in rows} == {"timeout"}
    assert all(x["error"].startswith("timeout after 0.0001 s (during ") for x in rows)


def fake_estimator(monkeypatch):
    """An estimator whose cost depends only on the program's file name (unfused 7, partial 2,
    full 1 thousand cycles' worth of bytes): pruning is then predictable (the real estimator's
    numbers are tested in its own suite)."""
    mod = types.ModuleType("fuseflowc.estimate")
    cost = {"unfused": 7000.0, "partial": 2000.0, "full": 1000.0}

    class Cost:
        def __init__(self, flops, nbytes):
            self.flops, self.bytes = flops, nbytes
            self.cycles = nbytes / 256

    class DataStats:
        @staticmethod
        def from_dir(path, module, element_bytes=4):
            return None

    def estimate_module(module, stats, arch=None):
        variant = Path(module.source).stem.rpartition("_")[2]
        total = Cost(10.0, cost[variant] * 256)
        return types.SimpleNamespace(kernels={"k": total}, total=total)
    mod.DataStats, mod.estimate_module = DataStats, estimate_module
    monkeypatch.setitem(sys.modules, "fuseflowc.estimate", mod)


def test_prune_records_pruned_rows(tmp_path, monkeypatch):
    fake_estimator(monkeypatch)
    gcn = ROOT / "ir_examples" / "models" / "gcn"
    spec = write(tmp_path, f"""
programs = ["{gcn / 'gcn_unfused.ff'}", "{gcn / 'gcn_partial.ff'}", "{gcn / 'gcn_full.ff'}"]
[[data]]
graph = "karate"
""")
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "-j", "2", "--prune", "2"])
    assert r.exit_code == 0, r.stderr
    rows = {x["variant"]: x for x in read_rows(str(out))}
    # estimated cycles = bytes / 256 B per cycle
    assert rows["unfused"]["status"] == "pruned" and rows["unfused"]["cycles"] is None
    assert rows["unfused"]["est_cycles"] == 7000.0
    assert rows["unfused"]["error"] == (
        f"estimated 7000 cycles is 7.00x the best estimate (1000 cycles, {rows['full']['id']}) "
        f"for gcn on karate; --prune 2")
    assert rows["partial"]["status"] == "ok" and rows["partial"]["est_cycles"] == 2000.0
    assert rows["full"]["status"] == "ok"
    assert "2 ok, 1 pruned" in r.stderr


def test_prune_estimates_each_configuration_once(tmp_path, monkeypatch):
    # The configurations --prune keeps run with the estimate it made (it used to be redone).
    fake_estimator(monkeypatch)
    calls = []
    estimate = sys.modules["fuseflowc.estimate"].estimate_module
    monkeypatch.setattr(sys.modules["fuseflowc.estimate"], "estimate_module",
                        lambda m, s, a=None: calls.append(Path(m.source).name) or estimate(m, s, a))
    gcn = ROOT / "ir_examples" / "models" / "gcn"
    spec = write(tmp_path, f"""
programs = ["{gcn / 'gcn_unfused.ff'}", "{gcn / 'gcn_full.ff'}"]
check = false
[[data]]
graph = "karate"
""")
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "--prune", "2"])
    assert r.exit_code == 0, r.stderr
    assert sorted(calls) == ["gcn_full.ff", "gcn_unfused.ff"]
    rows = {x["variant"]: x for x in read_rows(str(out))}
    assert rows["full"]["status"] == "ok" and rows["full"]["est_cycles"] == 1000.0


def test_prune_groups_by_model_data_and_arch():
    def row(i, model, data, est, arch=()):
        return {"id": i, "model": model, "data": data, "arch": list(arch), "est_cycles": est}
    est = [row("a", "m", "d", 10), row("b", "m", "d", 31), row("c", "m", "e", 31),
           row("d", "n", "d", 100), row("e", "m", "d", 30, ["x.y=1"]), row("f", "m", "d", None)]
    done = [row("z", "n", "d", 20)]
    got = prune_rows(est, done, 3.0)
    assert sorted(got) == ["b", "d"]
    assert "(20 cycles, z)" in got["d"]


def test_prune_uses_the_real_estimator_when_present(tmp_path):
    pytest.importorskip("fuseflowc.estimate")
    spec = write(tmp_path, SMALL.replace("orders = [0, 1]", "orders = [0]"))
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "--prune", "1000000"])
    assert r.exit_code == 0, r.stderr
    for x in read_rows(str(out)):
        assert x["status"] == "ok" and x["est_flops"] is not None and x["est_bytes"] > 0
        assert x["est_cycles"] >= x["est_bytes"] / 256


def test_parallel_factors_apply_only_with_the_schedule_pass(tmp_path):
    spec = write(tmp_path, f"""
schedule = ["parallelize y: i by {{factor}}"]
pipelines = ["", "schedule"]
[params]
factor = [1, 4]
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
[[data]]
sizes = {{ I = 40, J = 30 }}
density = 0.2
seed = 4
""")
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    rows = {(x["params"]["factor"], x["pipeline"]): x for x in read_rows(str(out))}
    assert {x["parallel"] for x in rows.values()} == {"y:i=1", "y:i=4"}
    assert all(x["status"] == "ok" and x["check"] == "match" for x in rows.values())
    assert rows[(4, None)]["cycles"] == rows[(1, None)]["cycles"]          # not applied
    assert rows[(4, "schedule")]["cycles"] < rows[(1, "schedule")]["cycles"]
    assert "note: 2 configuration(s) parallelize in their schedule but their pipeline has " \
           "no `schedule` pass" in r.stderr


def test_ctrl_c_leaves_a_valid_file_and_stops_the_workers(tmp_path):
    """Ctrl-C after the first row: exit 130, whole rows only, and a re-run resumes them. Many
    data sets, so that the sweep is far from done when the signal lands (a fast machine once
    finished six of them and was in interpreter shutdown when Ctrl-C arrived)."""
    import signal
    import subprocess
    import time
    SETS = 60
    sets = "".join(f"""
[[data]]
name = "s{k}"
sizes = {{ I = 600, J = 600 }}
density = 0.005
seed = {k}
""" for k in range(SETS))
    spec = write(tmp_path, f'programs = ["{KERNELS / "spmv.ff"}"]\n' + sets)
    out = tmp_path / "r.csv"
    exe = str(Path(sys.executable).with_name("fuseflowc"))
    proc = subprocess.Popen([exe, "sweep", spec, "-o", str(out), "-j", "2"],
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_text().count("\n") >= 2:     # header and one row
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err)
    rows = read_rows(str(out))                  # parses: whole rows only
    assert 1 <= len(rows) < SETS and all(x["status"] == "ok" for x in rows)
    r = run_cli(["sweep", spec, "-o", str(out), "--dry-run"])
    assert r.stdout.count("done  ") == len(rows)


def test_results_directory_is_created_and_a_directory_is_refused(tmp_path):
    w = ResultsWriter(str(tmp_path / "new" / "deeper" / "r.jsonl"))
    w.close()
    assert (tmp_path / "new" / "deeper" / "r.jsonl").exists()
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(UserError, match="is a directory"):
        ResultsWriter(str(tmp_path / "d.csv"))


def test_share_key_runs_fuse_share_and_keeps_old_ids(tmp_path):
    """`share = true` fuses with --share (T is read by m and y: computed once, so
    fewer FLOPs than recomputing it per consumer); a configuration without it keeps the id it
    had before the key existed (resumed results files stay valid)."""
    prog = tmp_path / "softmax.ff"
    prog.write_text(SOFTMAX)
    spec = write(tmp_path, f"""
[[programs]]
path = "{prog}"
variant = "plain"
[[programs]]
path = "{prog}"
variant = "share"
share = true
[[data]]
name = "d"
sizes = {{ I = 7, J = 9 }}
density = 0.4
seed = 3
""")
    configs = expand(parse_spec(spec))
    plain, share = configs
    assert not plain["share"] and share["share"]
    # the id a configuration had before the key existed (computed with fuseflowc at 83694c7)
    old = {"model": "m", "variant": "v", "program": "p.ff", "inline_widened": False,
           "free_input_order": False, "order": 0, "order_region": None, "params": {},
           "schedule": [], "pipeline": "locate", "data": "d", "data_source": {"name": "d"},
           "arch": []}
    assert config_id({**old, "share": False}) == "c58dafe991a1"
    assert config_id({**old, "share": True}) != "c58dafe991a1"
    assert share["id"] != config_id({**share, "share": False})
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    rows = {row["variant"]: row for row in read_rows(str(out))}
    assert all(row["status"] == "ok" and row["check"] == "match" for row in rows.values())
    assert rows["share"]["share"] is True and not rows["plain"]["share"]
    assert rows["share"]["flops"] < rows["plain"]["flops"]
    # T is one stream fanned out to its readers in the one graph (docs/lowering.md, "Shared
    # streams"), not a graph of its own
    assert len(rows["share"]["kernel_cycles"]) == len(rows["plain"]["kernel_cycles"]) == 1


@pytest.mark.parametrize("text", ["dask://host:port", "dask://h:99999", "dask://h:80x",
                                  "dask://h:80?connect-timeout=inf",
                                  "dask://h:80?connect-timeout=nan",
                                  "dask://h:80?connect-timeout=1e300"])
def test_bad_executors_are_user_errors(text):
    """Found by fuzzing: a port that is no number, or past 65535, made urllib raise ValueError
    (exit 3); an infinite connect timeout would wait for ever."""
    from fuseflowc.sweep.cluster import parse_executor
    with pytest.raises(UserError, match=f"--executor {re.escape(text)}: "):
        parse_executor(text)


# ---- max_jobs: a spec bounds how many of its runs share the machine ------------------------------
@pytest.mark.parametrize("line, message", [
    ("max_jobs = 0", "max_jobs: expected a positive integer"),
    ("max_jobs = 1.5", "max_jobs: expected a positive integer"),
    ("max_jobs = 257", "max_jobs: at most 256"),
])
def test_max_jobs_is_a_bounded_positive_integer(tmp_path, line, message):
    first = spec_error(tmp_path, f'{line}\nprograms = ["{KERNELS / "spmv.ff"}"]\n[[data]]\n'
                                 f'seed = 1\n').split("\n")[0]
    assert "spec.toml:1:1: error: " + message in first, first


@pytest.mark.parametrize("asked, cap, used", [(2, 1, 1), (1, 2, 1), (2, None, 2)])
def test_max_jobs_bounds_the_workers_whatever_j_asks(tmp_path, monkeypatch, asked, cap, used):
    import fuseflowc.sweep.runner as runner
    seen = []
    real = runner.make_pool
    monkeypatch.setattr(runner, "make_pool", lambda ex, jobs: seen.append(jobs) or real(ex, jobs))
    text = SMALL.replace("orders = [0, 1]", "orders = [0]" + (f"\nmax_jobs = {cap}" if cap else ""))
    r = run_cli(["sweep", write(tmp_path, text), "-o", str(tmp_path / "r.csv"), "-j", str(asked)])
    assert r.exit_code == 0, r.stderr
    assert seen == [used]
    assert all(row["status"] == "ok" for row in read_rows(str(tmp_path / "r.csv")))
