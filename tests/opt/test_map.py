"""The fabric (fuseflowc.fabric), the tiles a graph occupies (samml.tiles) and the `map` pass,
against hand-counted graphs and an independent recount."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.fabric import PRESETS, TILE_CLASSES, Fabric
from fuseflowc.opt import parse_pipeline, run_pipeline
from fuseflowc.samml.ir import KINDS
from fuseflowc.samml.kinds import PLACEMENT
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.tiles import misfits, tile_usage
from fuseflowc.sim.arch import Arch
from tests.support.golden import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "ir_examples" / "samml"
ONYX = PRESETS["onyx"]


def _module(name: str, fix: dict | None = None):
    text = (EXAMPLES / name).read_text()
    for dim, size in (fix or {}).items():   # fix a dim in the declarations: `[N, M]` -> `[5000, M]`
        text = text.replace(f"[{dim},", f"[{size},").replace(f", {dim}]", f", {size}]") \
            .replace(f"[{dim}]", f"[{size}]")
    return parse_text(text, name)


def test_every_kind_has_one_placement():
    assert set(PLACEMENT) == set(KINDS)
    assert set(PLACEMENT.values()) <= {"", *TILE_CLASSES}


def test_spmv_row_by_hand():
    # PE: repsig, repeat, intersect, alu, reduce; MEM: 3 scans, 2 arrays, 2 writers; roots: none
    m = _module("spmv_row.samml")
    use = tile_usage(m.graphs[0], m, ONYX)
    assert (use.pe, use.mem, use.buffers) == (5, 7, [])


def test_spmv_col_accumulator_by_hand():
    # spacc1 over j holds a fiber of i: 5000 x (crd + val) x 4 bytes = 40,000 bytes = 10 tiles
    m = _module("spmv_col.samml", {"N": 5000})
    use = tile_usage(m.graphs[0], m, ONYX)
    assert [b.nbytes for b in use.buffers] == [40_000]
    assert (use.pe, use.mem) == (4, 7 + 10)
    # a dim the module does not fix: the size is unknown when compiling, one tile
    m = _module("spmv_col.samml")
    assert tile_usage(m.graphs[0], m, ONYX).to_json() == {"pe": 4, "mem": 8,
                                                          "buffer_bytes": [None]}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 1 << 20), st.integers(1, 64))
def test_buffer_tiles_recounted(n, mem_bytes, pe):
    """Tiles of the accumulator = ceil(n * 8 / capacity); fits iff both counts are within."""
    m = _module("spmv_col.samml", {"N": n})
    fab = Fabric("t", pe, 100, mem_bytes)
    use = tile_usage(m.graphs[0], m, fab)
    want = max(1, -(-n * 8 // mem_bytes))
    assert use.buffers[0].tiles == want == math.ceil(n * 8 / mem_bytes)
    assert use.mem == 7 + want
    assert (misfits(use, fab) == []) == (4 <= pe and 7 + want <= 100)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.samml")), ids=lambda p: p.name)
@pytest.mark.parametrize("fabric", ["unlimited", "onyx"])
def test_map_keeps_a_fitting_module_unchanged(path, fabric):
    m = parse_text(path.read_text(), str(path))
    before = print_module(m)
    run_pipeline(m, parse_pipeline(f"map{{fabric={fabric}}}"))
    assert print_module(m) == before


def test_a_graph_too_big_is_split_not_refused():
    # the refusal (split=false) and the split itself: tests/opt/test_map_split.py
    r = run_cli(["opt", "-p", "map{fabric=onyx pe=4}", str(EXAMPLES / "spmv_row.samml")])
    assert r.exit_code == 0, r.stderr
    assert "graph spmv_row__c0 {" in r.stdout and "graph spmv_row__c1 {" in r.stdout
    ok = run_cli(["opt", "-p", "map{fabric=onyx pe=5 mem=7}", str(EXAMPLES / "spmv_row.samml")])
    assert ok.exit_code == 0 and "spmv_row__c" not in ok.stdout, ok.stderr


def test_a_buffer_bigger_than_the_memory_is_refused_at_the_accumulator(tmp_path):
    src = tmp_path / "col.samml"
    src.write_text(print_module(_module("spmv_col.samml", {"N": 5000})))
    r = run_cli(["opt", "-p", "map{fabric=onyx mem=9}", str(src)])
    assert r.exit_code == 1
    line = next(i for i, x in enumerate(src.read_text().splitlines(), 1) if "spacc1" in x)
    assert f"col.samml:{line}:" in r.stderr.splitlines()[0]
    assert "the buffer of spacc1 in graph spmv_col needs 40,000 bytes, 10 memory tiles of " \
           "4,096 bytes; fabric onyx has 9" in r.stderr


@pytest.mark.parametrize("opt", ["pe=-1", "element-bytes=0", "fabric=huge"])
def test_bad_options_are_usage_errors(opt):
    r = run_cli(["opt", "-p", f"map{{{opt}}}", str(EXAMPLES / "spmv_row.samml")])
    assert r.exit_code in (1, 2) and "Traceback" not in r.stderr and r.stderr.strip()


def test_arch_selects_a_preset_and_overrides():
    assert Arch.load().fabric.unlimited
    f = Arch.load(sets=["fabric.preset=onyx", "fabric.mem_tiles=inf", "fabric.pe_tiles=8"]).fabric
    assert (f.pe, f.mem, f.mem_bytes) == (8, None, 4096)


def test_simulate_reports_tiles_and_refuses_a_module_too_big():
    import json
    data = EXAMPLES.parents[1] / "tests" / "golden" / "sim" / "data"
    g = str(EXAMPLES / "spmv_col.samml")
    r = run_cli(["simulate", g, "--data", str(data), "--json"])
    # with the data's N = 4: the accumulator's buffer is 4 x 8 bytes, one tile
    assert json.loads(r.stdout)["kernels"][0]["tiles"] == {"pe": 4, "mem": 8,
                                                          "buffer_bytes": [32]}
    r = run_cli(["simulate", g, "--data", str(data), "--set", "fabric.preset=onyx",
                 "--set", "fabric.mem_tiles=7", "-q"])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.splitlines()[0].endswith(
        "spmv_col.samml:8:7: error: graph spmv_col does not fit fabric onyx (sim/arch.toml "
        "[fabric]): it needs 8 MEM tiles, onyx has 7")
