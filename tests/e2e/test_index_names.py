"""Human-facing views show a fused index with the program's name for it (`u0(k)`): the
pictures (`fuseflowc dot`), `orders` listings and the simulator's node table. The names come
from the fused instances' index maps and travel to SAMML in a graph's `names` line; the IR
texts keep the global names."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.names import shown, source_names
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from tests.support.golden import run_cli, run_pipeline

ROOT = Path(__file__).resolve().parents[2]
SPMM = "ir_examples/kernels/spmm.ff"  # C[i,j] = A[i,k] * B[k,j]: k becomes u0
GCN = "ir_examples/models/gcn/gcn_full.ff"


def test_source_names_and_how_they_are_shown():
    names = source_names([("i", "i"), ("k", "u0"), ("j", "j"), ("i", "u1"), ("k", "u1"),
                          ("i", "s"), ("k", "u0")])
    assert names == {"u0": ("k",), "u1": ("i", "k"), "s": ("i",)}
    assert [shown(x, names) for x in ("i", "u0", "u1", "s")] == ["i", "u0(k)", "u1(i/k)",
                                                                  "s(i)"]
    assert shown("u0", None) == "u0"


def test_orders_listing_shows_program_names():
    r = run_cli(["orders", SPMM, "--list", "1"])
    assert r.exit_code == 0, r.stderr
    assert "C: index order i j u0(k)" in r.stdout and "0: i -> u0(k) -> j" in r.stdout
    r = run_cli(["orders", GCN, "--inline-widened", "--list", "1"])
    assert "0: i -> u1(i/k) -> u3(k) -> u2(f) -> u0(h) -> c" in r.stdout


def test_fused_ir_keeps_global_names_and_samml_carries_the_program_names():
    fused = run_cli(["fuse", SPMM])
    assert fused.exit_code == 0 and "u0(" not in fused.stdout and "{i=i, j=j, k=u0}" \
        in fused.stdout
    low = run_cli(["lower", "-"], input=fused.stdout)
    assert low.exit_code == 0, low.stderr
    assert "names C {u0 = k}\n\ngraph C {" in low.stdout
    assert "index = u0}" in low.stdout and "u0(" not in low.stdout


def test_dot_labels_show_program_names():
    r = run_pipeline(f"fuseflowc fuse {SPMM} | fuseflowc lower | fuseflowc dot")
    assert r.exit_code == 0, r.stderr
    assert "index=u0(k)" in r.stdout and 'index=i"' in r.stdout  # i is the program's own
    assert 'index=u0"' not in r.stdout and "index=u0\\n" not in r.stdout


def test_simulate_node_table_shows_program_names(tmp_path):
    data = tmp_path / "d"
    assert run_cli(["gen-data", SPMM, "-o", str(data), "--size", "I=8", "--size", "K=8",
                    "--size", "J=4"]).exit_code == 0
    graph = run_pipeline(f"fuseflowc fuse {SPMM} | fuseflowc lower").stdout
    r = run_cli(["simulate", "-", "--data", str(data), "--check",
                 "--json", str(tmp_path / "s.json")], input=graph)
    assert r.exit_code == 0, r.stderr
    assert ",u0(k))" in r.stderr, r.stderr  # e.g. `#7 scan(B,u0(k))`
    # the JSON counters keep the plain names
    assert "u0(k)" not in (tmp_path / "s.json").read_text()


GRAPH = """tensor A[N]: dense input
tensor y[N]: dense output
names g {u0 = j, u1 = [i, k]}

graph g {
  %r0 = root {tensor = A}
  %c0, %r1 = scan %r0 {tensor = A, mode = 0, format = dense, index = u0}
  %v0 = array %r1 {tensor = A}
  write_level %c0 {tensor = y, mode = 0, format = dense}
  write_vals %v0 {tensor = y}
}
"""


def test_names_line_round_trips():
    m = parse_text(GRAPH)
    assert m.graphs[0].source_names == {"u0": ("j",), "u1": ("i", "k")}
    assert print_module(m) == GRAPH


@pytest.mark.parametrize("line, message", [
    ("names h {u0 = j}", "<input>:3:7: error: names of graph h, which the module does not "
                         "define"),
    ("names g {u0 = j}\nnames g {u1 = k}", "<input>:4:7: error: the names of graph g are "
                                           "given twice"),
    ("names g {u0 = j, u0 = k}", "<input>:3:18: error: index u0 is named twice"),
    ("names g {u0 = 3}", "<input>:3:10: error: index u0: expected a name or a list of names"),
])
def test_bad_names_lines_are_located(line, message):
    with pytest.raises(UserError) as e:
        parse_text(GRAPH.replace("names g {u0 = j, u1 = [i, k]}", line))
    assert message in e.value.format()
