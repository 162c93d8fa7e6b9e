"""`opt -p locate` and the `locate` primitive: results identical bit for bit to the intersection
with a dense scan they replace, on hand-written streams, on random streams (hypothesis), on
every lowered example and model variant, and on random SpMM / element-wise programs over random
formats and densities (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import Format
from fuseflowc.opt.locate import locate_graph
from fuseflowc.samml.parser import parse_module
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify
from fuseflowc.sim.harness import run_node
from fuseflowc.sim.prims_join import Intersect
from fuseflowc.sim.prims_locate import Locate
from fuseflowc.sim.prims_stream import Scan
from fuseflowc.sim.tokens import D, N, parse, show_empt
from tests.support import sim_pins
from tests.support.golden import run_cli
from tests.support.lower_harness import load_text

# ---- the primitive ------------------------------------------------------------------------

def _via_intersect(crd, ref, parent, size):
    (dc, dr), _ = run_node(Scan("d", True, size), [parent], 2, ["ref"])
    outs, _ = run_node(Intersect("i", 2), [crd, ref, dc, dr], 3, ["crd", "ref", "crd", "ref"])
    return outs


def _via_locate(crd, ref, parent, size):
    outs, times = run_node(Locate("l", size), [crd, ref, parent], 3, ["crd", "ref", "ref"])
    return outs


def _text(streams):
    return [show_empt(s) for s in streams]


def test_locate_by_hand():
    # A = [[., 1, ., 3], [], [0-th only]] in CSR against a dense level of size 4 whose fibers
    # are at parent refs 2, 0, 1.
    crd, ref = parse("1 3 S0 S0 0 S1 D"), parse("0 1 S0 S0 2 S1 D")
    parent = parse("2 0 1 S0 D")
    outs = _via_locate(crd, ref, parent, 4)
    assert _text(outs) == ["1 3 S0 S0 0 S1 D", "0 1 S0 S0 2 S1 D", "9 11 S0 S0 4 S1 D"]
    assert outs == _via_intersect(crd, ref, parent, 4)


def test_locate_n_parent_and_out_of_range_coordinates_are_dropped():
    crd, ref = parse("1 5 S0 2 S1 D"), parse("7 8 S0 9 S1 D")
    parent = parse("3 N S0 D")
    outs = _via_locate(crd, ref, parent, 4)
    assert outs == _via_intersect(crd, ref, parent, 4)
    assert _text(outs)[0] == "1 S0 S1 D"


def test_locate_mismatched_stops_are_an_error():
    with pytest.raises(UserError, match="stop tokens"):
        _via_locate(parse("1 S1 D"), parse("0 S1 D"), parse("0 1 S0 D"), 4)


@st.composite
def locate_case(draw):
    """(crd, ref, parent, size) with real SAM structure: the outer scanners of a random tensor
    give a ref stream Q, its last (compressed) level the crd/ref streams; the parent stream
    keeps Q's stops (emptiness included) with random refs or N in place of Q's refs."""
    order = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=order, max_size=order)))
    density = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    outer = tuple(draw(st.lists(st.sampled_from(["dense", "compressed"]), min_size=order - 1,
                                max_size=order - 1)))
    fmt = Format(outer + ("compressed",), tuple(range(order)))
    a = np.where(rng.random(shape) < density, rng.uniform(-1, 1, shape), 0.0)
    t = FiberTensor.from_dense(a, fmt)
    # Q: the ref stream into the last level, through the outer scanners from the root.
    q = [0, D]
    for k in range(order - 1):
        lvl = t.levels[k]
        if lvl.kind == "dense":
            node = Scan(f"s{k}", True, lvl.size)
        else:
            node = Scan(f"s{k}", False, lvl.size, lvl.seg.tolist(), lvl.crd.tolist())
        (_, q), _ = run_node(node, [q], 2, ["ref"])
    # Some refs of Q become N (a union upstream).
    q = [N if x >= 0 and rng.random() < 0.1 else x for x in q]
    last = t.levels[order - 1]
    (crd, ref), _ = run_node(Scan("c", False, last.size, last.seg.tolist(),
                                  last.crd.tolist()), [q], 2, ["ref"])
    size = draw(st.integers(1, shape[-1] + 1))   # may cut coordinates off
    parent = [x if x < 0 else (N if rng.random() < 0.1 else int(rng.integers(0, 6)))
              for x in q]
    return crd, ref, parent, size


@settings(max_examples=300, deadline=None)
@given(locate_case())
def test_locate_equals_intersect_with_a_dense_scan(case):
    crd, ref, parent, size = case
    assert _via_locate(crd, ref, parent, size) == _via_intersect(crd, ref, parent, size)


def test_locate_respects_back_pressure():
    # The same streams through depth-1 output FIFOs give the same tokens.
    from fuseflowc.sim.channel import Channel
    from fuseflowc.sim.engine import Engine
    crd, ref = parse("1 3 S0 S0 0 S1 D"), parse("0 1 S0 S0 2 S1 D")
    parent = parse("2 0 1 S0 D")
    ins = []
    for i, toks in enumerate((crd, ref, parent)):
        c = Channel(f"in{i}", "crd", None)
        c.feed(toks)
        ins.append(c)
    outs = [Channel(f"o{i}", "crd", 1) for i in range(3)]
    node = Locate("l", 4)
    node.wire(ins, outs)
    got = [[], [], []]
    eng = Engine([node], writers=[])
    # Drain by hand: run, pop everything, free the slots, repeat.
    for _ in range(50):
        node.run()
        for g, o in zip(got, outs):
            while o.toks:
                g.append(o.toks.popleft())
                o.times.popleft()
                o.free.append(node.t + 1)
        if node.done:
            break
    assert eng is not None and got == _via_locate(crd, ref, parent, 4)


# ---- the pass on lowered programs ----------------------------------------------------------

def _simulate(module, inputs, sizes):
    figs, res = sim_pins.figures(module, inputs, sizes)
    return figs, res


def _same_tensors(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for name in sorted(a):
        x, y = a[name], b[name]
        assert x.shape == y.shape and x.format == y.format, name
        for lx, ly in zip(x.levels, y.levels):
            assert lx.kind == ly.kind and lx.size == ly.size
            if lx.kind == "compressed":
                assert np.array_equal(lx.seg, ly.seg) and np.array_equal(lx.crd, ly.crd), name
        assert np.array_equal(np.asarray(x.vals).view(np.uint8),
                              np.asarray(y.vals).view(np.uint8)), f"{name}: values differ"


def _with_and_without(text: str, inputs=None, fixed=None):
    m0 = parse_module(Source("<lowered>", text))
    r = run_cli(["opt", "-p", "locate", "-"], input=text)
    assert r.exit_code == 0, r.stderr
    m1 = parse_module(Source("<located>", r.stdout))
    verify(m1)
    if inputs is None:
        inputs, sizes = sim_pins.module_inputs(m0, fixed)
    else:
        sizes = fixed
    f0, r0 = _simulate(m0, inputs, sizes)
    f1, r1 = _simulate(m1, inputs, sizes)
    _same_tensors(r0.tensors, r1.tensors)
    return m0, m1, f0, f1


@pytest.mark.parametrize("path", sim_pins.program_examples(), ids=lambda p: p.stem)
def test_locate_keeps_every_example_bit_for_bit(path):
    text = sim_pins.lowered_text(path)
    m0, m1, f0, f1 = _with_and_without(text, fixed=sim_pins.program_sizes(path))
    for a, b in zip(f0, f1):
        assert a["kernel"] == b["kernel"] and a["flops"] == b["flops"]
        assert a["read"] == b["read"] and a["written"] == b["written"]
    n_loc = sum(n.KIND == "locate" for g in m1.graphs for n in g.nodes)
    n_before = sum(n.KIND == "intersect" for g in m0.graphs for n in g.nodes)
    n_after = sum(n.KIND == "intersect" for g in m1.graphs for n in g.nodes)
    assert n_before - n_after == n_loc


def test_locate_cuts_gcn_cycles():
    path = sim_pins.ROOT / "ir_examples" / "models" / "gcn" / "gcn_partial.ff"
    text = sim_pins.lowered_text(path)
    from fuseflowc.data.gen import random_inputs
    m0 = parse_module(Source("<lowered>", text))
    sizes = {"N": 200, "F": 30, "H": 16, "C": 4}
    specs = [t.spec() for t in m0.tensors if t.role == "input"]
    inputs = random_inputs(specs, sizes, 1, {"A": 0.02, "X": 0.1})
    _, m1, f0, f1 = _with_and_without(text, inputs, sizes)
    assert sum(n.KIND == "locate" for g in m1.graphs for n in g.nodes) >= 2
    assert not any(n.KIND == "scan" and n.tensor == "X" and n.mode == 0
                   for g in m1.graphs for n in g.nodes)
    # A H1 (H1 dense): the dense scan of H1's rows per row of A is gone
    before = {k["kernel"]: k["cycles"] for k in f0}
    after = {k["kernel"]: k["cycles"] for k in f1}
    assert after["layer2_1"] < 0.6 * before["layer2_1"]
    assert sum(after.values()) < 0.85 * sum(before.values())


def test_locate_is_idempotent_and_round_trips():
    path = sim_pins.ROOT / "ir_examples" / "kernels" / "spmm.ff"
    text = sim_pins.lowered_text(path, "locate")
    m = parse_module(Source("<x>", text))
    for g in m.graphs:
        assert locate_graph(g) == 0
    assert print_module(m) == text


FORMATS = ["dense", "csr", "dcsr"]  # lower needs concordant orders: no csc with csr


@settings(max_examples=25, deadline=None)
@given(fa=st.sampled_from(FORMATS), fb=st.sampled_from(FORMATS),
       kernel=st.sampled_from(["C[i,j] = A[i,k] * B[k,j]", "C[i,j] = A[i,j] * B[i,j]",
                               "y[i] = A[i,j] * B[i,j]"]),
       da=st.sampled_from([0.0, 0.1, 0.5, 1.0]), db=st.sampled_from([0.1, 0.5, 1.0]),
       n=st.integers(1, 7), seed=st.integers(0, 1000))
def test_locate_on_random_programs(fa, fb, kernel, da, db, n, seed):
    out = "y[I]" if kernel.startswith("y") else "C[I, J]"
    src = (f"dim I, J, K\ntensor A[I, {'K' if 'k' in kernel else 'J'}]: {fa}\n"
           f"tensor B[{'K, J' if 'k' in kernel else 'I, J'}]: {fb}\n"
           f"tensor {out}: {'dense' if out.startswith('y') else 'csr'}\n"
           + kernel + "\n")
    program = load_text(src)
    from tests.support.lower_harness import lowered_module
    module = lowered_module(program)
    text = print_module(module)
    m0 = parse_module(Source("<lowered>", text))
    from fuseflowc.data.gen import random_inputs
    sizes = {"I": n, "J": n + 1, "K": max(n - 1, 1)}
    specs = [t.spec() for t in m0.tensors if t.role == "input"]
    inputs = random_inputs(specs, sizes, seed, {"A": da, "B": db})
    _with_and_without(text, inputs, sizes)


GAT = sim_pins.ROOT / "ir_examples" / "models" / "gat" / "gat.ff"


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 14), da=st.sampled_from([0.0, 0.1, 0.4, 1.0]),
       dx=st.sampled_from([0.2, 1.0]), seed=st.integers(0, 1000))
def test_locate_on_a_three_operand_intersection_sharing_coordinates(tmp_path_factory, n, da,
                                                                     dx, seed):
    """GAT's edge attention fused with its aggregation intersects S's refs and its score's
    located refs (one coordinate stream, A's) with Z's dense j level: locate reads the first,
    the second passes through, results bit for bit (issue 22: Z was scanned N^2)."""
    prog = tmp_path_factory.mktemp("gat") / "gat_fused.ff"
    prog.write_text(GAT.read_text() + "\nfuse att: S, den, AG, Y\n")
    text = sim_pins.lowered_text(prog)
    m = parse_module(Source("<x>", text))
    three = [nd for g in m.graphs for nd in g.nodes
             if nd.KIND == "intersect" and len(nd.inputs) == 6]
    assert three, "the fused attention has a three-operand intersection"
    from fuseflowc.data.gen import random_inputs
    sizes = {"N": n, "F": 5, "H": 16}
    specs = [t.spec() for t in m.tensors if t.role == "input"]
    inputs = random_inputs(specs, sizes, seed, {"A": da, "X": dx})
    _, m1, f0, f1 = _with_and_without(text, inputs, sizes)
    left = [nd for g in m1.graphs for nd in g.nodes
            if nd.KIND == "intersect" and len(nd.inputs) == 6]
    assert not left
    assert not any(nd.KIND == "scan" and nd.tensor == "Z" and nd.mode == 0
                   for g in m1.graphs if g.name.startswith("att") for nd in g.nodes)
    for a, b in zip(f0, f1):
        assert a["flops"] == b["flops"] and a["read"] == b["read"]
        assert b["cycles"] <= a["cycles"]


def test_locate_lists_the_readers_once_per_graph(monkeypatch):
    """The pass asked the graph for every stream's readers after each rewrite (quadratic: half
    of `plan`'s CPU on a fused GPT-3 layer, issue 23); it lists them once and keeps them
    current, with the same result (test_locate_keeps_every_example_bit_for_bit)."""
    from fuseflowc.samml.ir import Graph
    path = sim_pins.ROOT / "ir_examples" / "models" / "gcn" / "gcn_partial.ff"
    m = parse_module(Source("<lowered>", sim_pins.lowered_text(path)))
    calls = []
    real = Graph.consumers
    monkeypatch.setattr(Graph, "consumers", lambda g: calls.append(g) or real(g))
    done = [locate_graph(g) for g in m.graphs]
    assert max(done) >= 2 and len(calls) == len({id(g) for g in calls}) <= len(m.graphs)
    verify(m)
