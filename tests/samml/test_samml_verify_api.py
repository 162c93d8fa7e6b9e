"""The verifier on graphs built in Python (no source locations: graph and node are named),
and the load/save helpers."""

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.formats import shorthand
from fuseflowc.samml.ir import (
    Alu,
    Array,
    Graph,
    Module,
    Root,
    Scan,
    TensorDecl,
    WriteLevel,
    WriteVals,
)
from fuseflowc.samml.load import load_module, save_module
from fuseflowc.samml.verify import verify


def _copy_module(graph_name="copy"):
    g = Graph(graph_name)
    r0 = g.add(Root(tensor="A"))
    ci, ri = g.add(Scan(tensor="A", mode=0, format="compressed", index="i"), r0)
    g.add(WriteLevel(tensor="B", mode=0, format="compressed"), ci)
    v = g.add(Array(tensor="A"), ri)
    g.add(WriteVals(tensor="B"), v)
    m = Module([TensorDecl("A", ("N",), shorthand("sparse", 1), "input"),
                TensorDecl("B", ("N",), shorthand("sparse", 1), "output")], [g])
    return m, g, v


def _messages(m):
    with pytest.raises(UserError) as e:
        verify(m)
    return [d.message for d in e.value.diagnostics]


def test_valid_module_verifies():
    m, _, _ = _copy_module()
    verify(m)


def test_unlocated_errors_name_graph_and_node():
    m, g, v = _copy_module()
    g.nodes[1].format = "dense"
    (msg,) = _messages(m)
    assert msg.startswith("scan of tensor A mode 0 says dense, but A (sparse) stores mode 0")
    assert msg.endswith("[graph copy, node 1 (scan tensor=A mode=0 index=i)]")


def test_stream_of_another_graph_is_undefined():
    m, g, v = _copy_module()
    other = Graph("other")
    foreign = other.add(Root(tensor="A"))
    g.nodes[3].inputs = [foreign]
    msgs = _messages(m)
    assert any("operand 1 of array is used but never defined" in x for x in msgs)


def test_stream_with_two_producers():
    m, g, v = _copy_module()
    g.add(Alu(op="exp"), v)
    g.nodes[-1].outputs = [v]  # the same stream object defined twice
    msgs = _messages(m)
    assert any(x.startswith("stream %v0 is defined twice") for x in msgs)


def test_wrong_attribute_type_from_python():
    m, g, v = _copy_module()
    g.nodes[1].mode = "0"
    g.nodes[0].tensor = "not a name"
    msgs = _messages(m)
    assert any("scan attribute 'mode': expected an integer >= 0, got '0'" in x for x in msgs)
    assert any("root attribute 'tensor': expected a name" in x for x in msgs)


def test_load_and_save(tmp_path):
    m, _, _ = _copy_module()
    path = tmp_path / "copy.samml"
    save_module(m, str(path))
    again = load_module(str(path))
    assert [n.KIND for n in again.graphs[0].nodes] == ["root", "scan", "write_level", "array",
                                                        "write_vals"]
    path.write_text(path.read_text().replace("tensor = B}", "tensor = Q}", 1))
    with pytest.raises(UserError) as e:
        load_module(str(path))
    assert "tensor Q is not declared" in e.value.format()
    assert f"{path}:" in e.value.format()
    assert load_module(str(path), check=False).graphs[0].name == "copy"
