"""`dot` without Graphviz (the built-in layered drawing, issue 22) and `dot --load RUN.json`
(issue 28): nodes filled by busy fraction and labelled with their cycles, edges widened by
tokens, checked against the run's own JSON; a run of another module is refused."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.samml import runload
from tests.support.golden import ROOT, run_cli

SPMV = str(ROOT / "ir_examples" / "samml" / "spmv_row.samml")
SPMV_FF = str(ROOT / "ir_examples" / "kernels" / "spmv.ff")


@pytest.fixture(scope="module")
def run_json(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    r = run_cli(["gen-data", SPMV_FF, "-o", str(d / "data"), "--size", "I=30", "--size",
                 "J=20", "--density", "A=0.2", "--seed", "3"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["simulate", SPMV, "--data", str(d / "data"), "-q", "--json-out",
                 str(d / "run.json")])
    assert r.exit_code == 0, r.stderr
    return d / "run.json"


@pytest.mark.parametrize("ext,magic", [("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_pictures_without_graphviz(tmp_path, monkeypatch, ext, magic):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / f"g.{ext}"
    r = run_cli(["dot", SPMV, "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes()[:len(magic)] == magic
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"g.{ext}"]


def test_the_builtin_svg_is_deterministic_and_names_every_node(tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    for out in (a, b):
        assert run_cli(["dot", SPMV, "-o", str(out), "--renderer", "builtin"]).exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    for kind in ("root", "scan", "repsig", "repeat", "intersect", "array", "alu", "reduce",
                 "write_level", "write_vals"):
        assert f">{kind}<" in text or f"{kind}</" in text or kind in text, kind


def test_load_colours_and_labels_every_node_from_the_run(run_json):
    run = json.loads(run_json.read_text())
    [k] = run["kernels"]
    r = run_cli(["dot", SPMV, "--load", str(run_json)])
    assert r.exit_code == 0, r.stderr
    nodes = re.findall(r'n(\d+) \[label="([^"]*)", fillcolor="(#[0-9a-f]{6})"\]', r.stdout)
    assert len(nodes) == len(k["nodes"])
    for i, label, colour in nodes:
        n = k["nodes"][int(i)]
        frac = n["busy_cycles"] / k["cycles"]
        assert f"busy {n['busy_cycles']:,} ({frac:.0%}), stalled {n['stalled_cycles']:,}" in label
        assert colour == runload.fill(frac)
    top = max(c["tokens"] for c in k["channels"])
    widths = re.findall(r'label="%(\w+) ([\d,]+)", penwidth=([\d.]+)', r.stdout)
    assert len(widths) == len(k["channels"])
    by_name = {c["name"].lstrip("%").split("->")[0]: c["tokens"] for c in k["channels"]}
    for stream, tok, w in widths:
        assert int(tok.replace(",", "")) == by_name[stream]
        assert float(w) == runload.width(by_name[stream], top)


def test_load_picture_without_graphviz(tmp_path, run_json):
    out = tmp_path / "load.svg"
    r = run_cli(["dot", SPMV, "--load", str(run_json), "-o", str(out), "--renderer",
                 "builtin"])
    assert r.exit_code == 0, r.stderr
    assert "fill = busy fraction" in out.read_text()


def test_a_run_of_another_module_or_no_run_is_refused(tmp_path, run_json):
    other = str(ROOT / "ir_examples" / "samml" / "spmm_ijk.samml")
    r = run_cli(["dot", other, "--load", str(run_json)])
    assert r.exit_code == 1 and "the run has no graph" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"kernels": [\n  {"graph": 1,}]}')
    r = run_cli(["dot", SPMV, "--load", str(bad), "-o", str(tmp_path / "x.dot")])
    assert r.exit_code == 1 and f"{bad}:2:" in r.stderr and "not JSON" in r.stderr
    assert not (tmp_path / "x.dot").exists()
    doc = json.loads(run_json.read_text())
    doc["kernels"][0]["nodes"].pop()
    bad.write_text(json.dumps(doc))
    r = run_cli(["dot", SPMV, "--load", str(bad)])
    assert r.exit_code == 1 and "another pipeline" in r.stderr
    doc["kernels"][0]["nodes"][0]["busy_cycles"] = -3
    bad.write_text(json.dumps(doc))
    r = run_cli(["dot", SPMV, "--load", str(bad)])
    assert r.exit_code == 1 and "not a count" in r.stderr
    r = run_cli(["dot", "-", "--load", "-"], input="")
    assert r.exit_code == 2


@given(st.lists(st.floats(0, 1), min_size=2, max_size=6))
def test_fill_darkens_as_the_busy_fraction_grows(fracs):
    def lum(c):
        r, g, b = (int(c[i:i + 2], 16) for i in (1, 3, 5))
        return 0.299 * r + 0.587 * g + 0.114 * b
    fracs = sorted(fracs)
    lums = [lum(runload.fill(f)) for f in fracs]
    assert all(a >= b - 1 for a, b in zip(lums, lums[1:]))
    assert runload.fill(0.0) == "#ffffff" and runload.fill(1.0) == "#bd0026"
