"""`orders = "product"` and `unfused = true` in sweep specs: every combination of every
region's orders, carried per region in the configuration and the results' `orders` column;
ids of configurations without them unchanged; results files written before the columns read
and resumed; the order sweep's summary (fuseflowc.bench.orders) read from a sweep."""

from __future__ import annotations

import re

import pytest

from fuseflowc.bench.orders import read_runs, summary_lines
from fuseflowc.diagnostics import UserError
from fuseflowc.sweep.grid import CONFIG_FIELDS, config_id, expand_counted
from fuseflowc.sweep.results import (
    NAMES,
    OLD_NAMES,
    ResultsWriter,
    format_row,
    read_rows,
    rewrite_sorted,
)
from fuseflowc.sweep.spec import parse_spec
from tests.support.golden import ROOT, run_cli
from tests.sweep.test_sweep import spec_error, write

SWEEP = ROOT / "ir_examples" / "kernels" / "nested_matmul_sweep.ff"
DATA = """
[[data]]
name = "tiny"
sizes = { I = 5, K = 4, J = 6, L = 3 }
density = 0.4
seed = 2
"""


def product_spec(unfused: bool = True, fused: bool = False, top: str = "") -> str:
    text = f'orders = "product"\n{top}\n'
    for variant, flag in (("fused", fused), ("unfused", unfused)):
        if flag:
            text += (f'[[programs]]\npath = "{SWEEP}"\nmodel = "nm"\nvariant = "{variant}"\n'
                     f'free_input_order = true\nunfused = {str(variant == "unfused").lower()}\n')
    return text + DATA


def test_product_crosses_every_regions_orders_in_execution_order(tmp_path):
    configs = expand_counted(parse_spec(write(tmp_path, product_spec(fused=True))))
    fused = [c for c in configs if c["variant"] == "fused"]
    unfused = [c for c in configs if c["variant"] == "unfused"]
    assert [c["orders"] for c in fused] == [{"abc": k} for k in range(12)]
    # E runs before D; the last region varies fastest
    assert [list(c["orders"].items()) for c in unfused] == \
        [[("E", e), ("D", d)] for e in range(3) for d in range(3)]
    assert all(c["order"] is None and c["unfused"] for c in unfused)
    assert not any(c["unfused"] for c in fused)
    assert len({c["id"] for c in configs}) == 21
    for c in configs:
        assert c["id"] == config_id(c)
        assert config_id({**c, "orders": {**c["orders"], "X": 1}}) != c["id"]


def test_ids_without_the_new_fields_are_unchanged(tmp_path):
    """unfused and orders count in the id only when set: a configuration of an older spec
    keeps its id (the one fuseflowc gave it before the fields existed)."""
    old = {"model": "m", "variant": "v", "program": "p.ff", "inline_widened": False,
           "free_input_order": False, "order": 0, "order_region": None, "params": {},
           "schedule": [], "pipeline": "locate", "data": "d", "data_source": {"name": "d"},
           "arch": []}
    assert config_id({**old, "unfused": False, "orders": None}) == "c58dafe991a1"
    assert config_id({**old, "unfused": True}) != "c58dafe991a1"
    text = f'orders = "all"\nprograms = ["{SWEEP}"]\n' + DATA
    for c in expand_counted(parse_spec(write(tmp_path, text))):
        assert c["orders"] is None and c["unfused"] is False
        assert c["id"] == config_id({k: c[k] for k in CONFIG_FIELDS})


def test_unfused_program_with_listed_orders_gets_one_index_everywhere(tmp_path):
    text = product_spec().replace('orders = "product"', "orders = [0, 2]")
    configs = expand_counted(parse_spec(write(tmp_path, text)))
    assert [(c["order"], c["orders"], c["unfused"]) for c in configs] == \
        [(0, None, True), (2, None, True)]


def test_more_combinations_than_max_orders_are_refused(tmp_path):
    spec = parse_spec(write(tmp_path, product_spec(top="max_orders = 8")))
    with pytest.raises(UserError) as e:
        expand_counted(spec)
    msg = e.value.format()
    assert "spec.toml" in msg and str(SWEEP) in msg
    assert 'orders = "product" gives 9 order combinations (E: 3 x D: 3), more than ' \
           'max_orders = 8' in msg, msg


def test_a_program_that_does_not_fuse_gets_one_row_saying_why(tmp_path):
    bad = tmp_path / "bad.ff"
    bad.write_text(SWEEP.read_text().replace("fuse abc: E, D", "fuse abc: E, D\nfuse x: Q"))
    text = f'orders = "product"\nprograms = ["{bad}"]\n' + DATA
    configs = expand_counted(parse_spec(write(tmp_path, text)))
    assert [(c["order"], c["orders"]) for c in configs] == [(0, None)]


@pytest.mark.parametrize("text, where, message", [
    ('orders = "products"\nprograms = ["SWEEP"]\n', ":1:1:", 'orders: expected "all", "product"'),
    ('orders = "product"\norder_region = "E"\nprograms = ["SWEEP"]\n', ":1:1:",
     'orders: "product" sweeps the orders of every region; it does not go with order_region'),
    ('[[programs]]\npath = "SWEEP"\norders = "product"\norder_region = "E"\n', ":3:1:",
     "programs[0].orders: \"product\" sweeps"),
    ('[[programs]]\npath = "SWEEP"\nunfused = 1\n', ":3:1:",
     "programs[0].unfused: expected true or false"),
])
def test_bad_product_specs_are_located(tmp_path, text, where, message):
    msg = spec_error(tmp_path, text.replace("SWEEP", str(SWEEP)) + DATA)
    first = msg.split("\n")[0]
    assert f"spec.toml{where}" in first and message in first, msg


# ---- results files ---------------------------------------------------------------------------

def test_new_columns_are_last_and_empty_for_other_rows(tmp_path):
    # (energy and edp were appended after them)
    assert NAMES[len(OLD_NAMES):len(OLD_NAMES) + 2] == ("unfused", "orders")
    path = tmp_path / "r.csv"
    w = ResultsWriter(str(path))
    w.append({"id": "a", "status": "ok", "order": 1})
    w.append({"id": "b", "status": "ok", "unfused": True, "orders": {"E": 2, "D": 0}})
    w.close()
    lines = path.read_text().splitlines()
    assert lines[1].endswith(",,")
    # read back and written again (as a finished sweep rewrites its file): still empty
    rewrite_sorted(str(path), ["a", "b"])
    assert path.read_text().splitlines()[1].endswith(",,")
    a, b = read_rows(str(path))
    assert a["orders"] == {} and a["unfused"] is None
    assert b["orders"] == {"E": 2, "D": 0} and b["unfused"] is True


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_files_written_before_the_columns_read_and_resume(tmp_path, kind):
    path = tmp_path / f"old.{kind}"
    old_row = {"id": "a", "model": "m", "variant": "v", "data": "d", "status": "ok",
               "order": 3, "cycles": 7}
    if kind == "csv":
        path.write_text(",".join(OLD_NAMES) + "\n"
                        + format_row("csv", old_row, OLD_NAMES))
    else:
        import json
        path.write_text(json.dumps({n: old_row.get(n) for n in OLD_NAMES}) + "\n")
    (row,) = read_rows(str(path))
    assert row["orders"] == {} and row["unfused"] is None and row["cycles"] == 7
    w = ResultsWriter(str(path))       # resuming appends in the file's own layout
    w.append({**old_row, "id": "b", "unfused": False})
    if kind == "csv":   # a CSV row has the header's cells: what it lacks would be lost
        with pytest.raises(UserError, match="without the column orders"):
            w.append({**old_row, "id": "c", "orders": {"E": 1}})
    else:               # a JSON line names its fields
        w.append({**old_row, "id": "c", "orders": {"E": 1}})
    w.close()
    rows = read_rows(str(path))
    assert [r["id"] for r in rows] == ["a", "b"] + (["c"] if kind == "jsonl" else [])
    assert rows[-1]["orders"] == ({"E": 1} if kind == "jsonl" else {})
    report = run_cli(["report", str(path), "-o", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.stderr


# ---- whole sweeps ----------------------------------------------------------------------------

def test_product_sweep_checks_every_pair_and_the_order_summary_reads_it(tmp_path):
    """Every pair of orders of the unfused nested matmul (3 x 3) simulates and matches the
    reference through `fuseflowc sweep`; bench.orders prints a line per pair from the
    results; `report` reads them."""
    spec = write(tmp_path, product_spec())
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", spec, "-o", str(out), "--strict"])
    assert r.exit_code == 0, r.stderr
    rows = read_rows(str(out))
    assert len(rows) == 9
    assert all(row["status"] == "ok" and row["check"] == "match" for row in rows)
    assert {tuple(row["orders"].items()) for row in rows} == \
        {(("D", d), ("E", e)) for e in range(3) for d in range(3)}   # CSV sorts JSON keys
    assert all(row["unfused"] is True for row in rows)
    # the per-region orders are what ran: different pairs, different kernels' cycles
    assert len({row["cycles"] for row in rows}) > 1
    lines = summary_lines(read_runs(spec, str(out)))
    assert len(lines) == 10
    assert lines[0].startswith("unfused  E#0 i -> j -> u0; D#0 i -> l -> u0 ")
    assert lines[1].startswith("unfused  E#0 i -> j -> u0; D#1 i -> u0 -> l ")
    assert lines[-1].startswith("orders: 9, best/worst = ")
    assert sum("copies E__T" in x for x in lines) >= 1
    report = run_cli(["report", str(out), "-o", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    # the spread over the pairs, the best one named by its per-region indices
    spread = md.split("## Spread over dataflow orders")[1].split("##")[0]
    assert re.search(r"\| -p locate,schedule,cleanup free-input-order unfused +\| +9 \|.*"
                     r"\| +D#\d E#\d \|", spread), spread


def test_order_summary_needs_every_row(tmp_path):
    spec = write(tmp_path, product_spec())
    out = tmp_path / "r.csv"
    ResultsWriter(str(out)).close()
    with pytest.raises(UserError, match="no row for configuration"):
        read_runs(spec, str(out))
