"""The SAMML node classes: registry, ports, attributes, graph construction."""

import re
import subprocess
import sys

import pytest

from fuseflowc.formats import shorthand
from fuseflowc.samml import ir
from fuseflowc.samml.ir import (
    KINDS,
    STREAM_KINDS,
    Array,
    Graph,
    Module,
    Repeat,
    Repsig,
    Root,
    Scan,
    TensorDecl,
    Union,
)


def _snake(cls_name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls_name).lower()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_name_matches_class(name):
    cls = KINDS[name]
    assert cls.KIND == name
    # write_level <-> WriteLevel, crddrop <-> CrdDrop, spacc1 <-> Spacc1.
    assert name.replace("_", "") == cls.__name__.lower()
    assert cls.__doc__ and cls.REGION in ("iteration", "compute", "construction")
    for spec in cls.attr_specs():
        assert spec.type in ir.ATTR_TYPES and spec.doc


def test_contract_kinds_present():
    expected = {"root", "scan", "repsig", "repeat", "intersect", "union", "array", "alu",
                "reduce", "spacc1", "spacc2", "spacc3", "crddrop", "crdhold", "write_level", "write_vals",
                "fork", "join", "locate", "spill", "replay"}
    assert set(KINDS) == expected


def test_kinds_are_not_subclasses_of_each_other():
    # The simulator dispatches with isinstance: no kind may be an instance of another.
    for a in KINDS.values():
        for b in KINDS.values():
            assert a is b or not issubclass(a, b)


def test_port_kinds_are_stream_kinds():
    for cls in KINDS.values():
        node = cls()
        for p in node.signature(4).inputs + node.signature(4).outputs:
            assert all(k in STREAM_KINDS or k == ir.SAME for k in p.kinds)


def test_graph_add_builds_streams():
    g = Graph("k")
    r0 = g.add(Root(tensor="A"))
    ci, ri = g.add(Scan(tensor="A", mode=0, format="dense", index="i"), r0)
    v = g.add(Array(tensor="A"), ri)
    s = g.add(Repsig(index="i"), ci)
    rv = g.add(Repeat(index="i"), v, s)
    c, a, b = g.add(Union(index="i", required=[0]), ci, ri, ci, ri)
    assert (r0.kind, ci.kind, ri.kind, v.kind, s.kind, rv.kind) == ("ref", "crd", "ref", "val",
                                                                     "repsig", "val")
    assert (c.kind, a.kind, b.kind) == ("crd", "ref", "ref")
    assert rv.producer is g.nodes[4] and rv.index == 0
    names = g.stream_names()
    assert [names[x] for x in (r0, ci, ri, v, s, rv)] == ["r0", "c0", "r1", "v0", "s0", "v1"]
    m = Module([TensorDecl("A", ("N",), shorthand("dense", 1), "input")], [g])
    assert m.specs()["A"].dims == ("N",)


def test_ir_import_is_cheap():
    code = ("import sys, fuseflowc.samml.ir, fuseflowc.samml.parser, fuseflowc.samml.printer, "
            "fuseflowc.samml.verify, fuseflowc.samml.dot, fuseflowc.samml.load, "
            "fuseflowc.commands.dot; "
            "print(sorted(m for m in ('numpy', 'scipy', 'networkx', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_replace_uses_and_remove():
    g = Graph("k")
    r0 = g.add(Root(tensor="A"))
    r1 = g.add(Root(tensor="A"))
    ci, ri = g.add(Scan(tensor="A", mode=0, format="dense", index="i"), r0)
    assert g.replace_uses(r0, r1) == 1
    assert g.nodes[2].inputs == [r1]
    g.remove(g.nodes[0])
    assert [n.KIND for n in g.nodes] == ["root", "scan"]


def test_docs_table_lists_every_kind_and_attribute():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[2] / "docs" / "samml.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line for line in doc.splitlines()
            if line.startswith("| `")}
    for name, cls in KINDS.items():
        assert name in rows, f"docs/samml.md has no row for {name}"
        for spec in cls.attr_specs():
            if spec.name != "lane":  # documented once for all kinds
                assert f"`{spec.name}`" in rows[name], (name, spec.name)
