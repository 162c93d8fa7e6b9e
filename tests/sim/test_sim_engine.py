"""The engine and timing model: latency, initiation interval, back-pressure, determinism,
deadlock and cycle-budget reports, writers and output assembly, errors users can cause."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format, shorthand
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
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from fuseflowc.sim.channel import Channel
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.prims_compute import Alu as SimAlu
from fuseflowc.sim.prims_stream import Array as SimArray
from fuseflowc.sim.prims_write import Writer
from fuseflowc.sim.tokens import D, stop
from tests.sim.test_sim_examples import EXAMPLES, _sparse, simulate
from tests.support.golden import run_cli


def copy_module(fmt: Format, out_fmt: Format | None = None, order: int = 2) -> Module:
    """B = A through scanners and writers: every level of A scanned, B written."""
    out_fmt = out_fmt or fmt
    g = Graph("copy")
    ref = g.add(Root(tensor="A"))
    crds = {}
    for k, kind in enumerate(fmt.levels):
        mode = fmt.mode_order[k]
        crds[mode], ref = g.add(Scan(tensor="A", mode=mode, format=kind, index=f"i{mode}"), ref)
    vals = g.add(Array(tensor="A"), ref)
    for k, kind in enumerate(out_fmt.levels):
        mode = out_fmt.mode_order[k]
        g.add(WriteLevel(tensor="B", mode=mode, format=kind), crds[mode])
    g.add(WriteVals(tensor="B"), vals)
    dims = tuple(f"d{i}" for i in range(order))
    return Module([TensorDecl("A", dims, fmt, "input"), TensorDecl("B", dims, out_fmt, "output")],
                  [g])


FORMATS = ["dense", "sparse", "csr", "csc", "dcsr", "dcsc"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FORMATS), st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31),
       st.floats(0.0, 1.0))
def test_scan_and_write_round_trip(fmt_name, n, m, seed, density):
    """Scanning a matrix level by level and writing the streams back gives the matrix."""
    fmt = shorthand(fmt_name, 2)
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, m)) < density, rng.uniform(-3, 3, (n, m)), 0.0)
    module = copy_module(fmt)
    res = Simulator(module, {"A": FiberTensor.from_dense(a, fmt)}, {"d0": n, "d1": m}).run()
    b = res.tensors["B"]
    assert np.array_equal(b.to_dense(), a)
    if fmt_name in ("dcsr", "dcsc", "sparse"):
        assert b.nnz == np.count_nonzero(a)


def test_order3_round_trip():
    fmt = Format(("dense", "compressed", "compressed"), (0, 1, 2))
    rng = np.random.default_rng(1)
    a = np.where(rng.random((3, 4, 5)) < 0.2, 1.0 + rng.random((3, 4, 5)), 0.0)
    a[1] = 0.0
    module = copy_module(fmt, order=3)
    res = Simulator(module, {"A": FiberTensor.from_dense(a, fmt)},
                    {"d0": 3, "d1": 4, "d2": 5}).run()
    assert np.array_equal(res.tensors["B"].to_dense(), a)


# ---- timing ----------------------------------------------------------------------------------

def _chain(depth, lat=1, ii=1, n=20):
    """array -> alu -> writer on a preloaded ref stream of n tokens."""
    refs = Channel("refs", "ref", None)
    refs.feed(list(range(n)) + [stop(0), D])
    c1, c2 = Channel("v", "val", depth), Channel("w", "val", depth)
    arr = SimArray("arr", [float(i) for i in range(n)], lat=lat, ii=ii)
    alu = SimAlu("alu", "exp", lat=lat, ii=ii)
    w = Writer("w", "write_vals", "T")
    arr.wire([refs], [c1])
    alu.wire([c1], [c2])
    w.wire([c2], [])
    cycles = Engine([arr, alu, w]).run()
    return cycles, arr, alu, w


def test_latency_and_ii():
    n = 20
    cycles, arr, alu, w = _chain(None, lat=1, ii=1, n=n)
    # n + 2 tokens, one per cycle; two hops of latency 1 ahead of the writer
    assert w.t == (n + 2 - 1) + 2
    assert arr.fires == alu.fires == w.fires == n + 2
    cycles3, *_ = _chain(None, lat=5, ii=3, n=n)
    assert cycles3 >= 3 * (n + 1) + 10


def test_depth_changes_cycles_not_results():
    base, *_ = _chain(None)
    for depth in (1, 2, 8):
        cycles, _, _, w = _chain(depth)
        assert [round(x, 9) for x in w.got] == [round(float(np.exp(i)), 9) for i in range(20)] \
            + [stop(0)]
        assert cycles >= base


def test_back_pressure_stalls_the_producer():
    # a slow consumer (ii 4) behind a depth-1 FIFO stalls the fast producer
    refs = Channel("refs", "ref", None)
    refs.feed(list(range(10)) + [D])
    c1, c2 = Channel("v", "val", 1), Channel("w", "val", None)
    arr = SimArray("arr", [1.0] * 10)
    alu = SimAlu("alu", "neg", ii=4)
    w = Writer("w", "write_vals", "T")
    arr.wire([refs], [c1])
    alu.wire([c1], [c2])
    w.wire([c2], [])
    Engine([arr, alu, w]).run()
    assert arr.stall > 0 and alu.stall == 0
    assert alu.t >= 4 * 10


def test_same_input_same_cycles():
    rng = np.random.default_rng(4)
    a = _sparse(rng, 20, 15, 0.2)
    b = _sparse(rng, 15, 9, 0.3)
    r1 = simulate("spmm_ikj", {"A": a, "B": b})
    r2 = simulate("spmm_ikj", {"A": a, "B": b})
    k1, k2 = r1.kernels[0], r2.kernels[0]
    assert (k1.cycles, k1.flops, k1.hops) == (k2.cycles, k2.flops, k2.hops)
    assert [n.t for n in k1.nodes] == [n.t for n in k2.nodes]
    assert [c.pushed for c in k1.channels] == [c.pushed for c in k2.channels]


def test_counters_spmv():
    rng = np.random.default_rng(6)
    a = _sparse(rng, 10, 8, 0.3)
    x = rng.random(8)
    k = simulate("spmv_row", {"A": a, "x": x}).kernels[0]
    nnz = np.count_nonzero(a)
    assert k.flops == 2 * nnz                      # one mul and one add per stored entry
    rd = k.bytes_read()
    assert rd["crd"] == 4 * nnz                    # A's j coordinates (x's level is dense)
    assert rd["seg"] == 8 * 10                     # two seg entries per row lookup
    assert rd["vals"] == 2 * 4 * nnz               # A and x values of each product
    assert k.bytes_written() == {"seg": 0, "crd": 0, "vals": 4 * 10}
    assert k.hops == sum(c.pushed for c in k.channels) > 0


def test_memory_latency_is_charged():
    rng = np.random.default_rng(6)
    a = _sparse(rng, 10, 8, 0.3)
    x = rng.random(8)
    slow = simulate("spmv_row", {"A": a, "x": x}, Arch.load(sets=["memory.latency=100"]))
    fast = simulate("spmv_row", {"A": a, "x": x}, Arch.load(sets=["memory.latency=0"]))
    assert slow.cycles >= fast.cycles + 200       # three memory nodes on the critical path


# ---- failure ---------------------------------------------------------------------------------

def test_cyclic_graph_deadlocks():
    """alu(add) fed by its own output (the verifier rejects cycles; the engine must not hang)."""
    g = Graph("loop")
    r = g.add(Root(tensor="A"))
    _, ref = g.add(Scan(tensor="A", mode=0, format="dense", index="i"), r)
    va = g.add(Array(tensor="A"), ref)
    node = Alu(op="add")
    s = g.add(node, va, va)
    node.inputs[1] = s                              # close the cycle
    g.add(WriteLevel(tensor="B", mode=0, format="dense"), _)
    g.add(WriteVals(tensor="B"), s)
    fmt = shorthand("dense", 1)
    m = Module([TensorDecl("A", ("N",), fmt, "input"), TensorDecl("B", ("N",), fmt, "output")],
               [g])
    with pytest.raises(UserError) as e:
        Simulator(m, {"A": FiberTensor.from_dense(np.ones(3), fmt)}, {"N": 3}).run()
    text = e.value.format()
    assert "deadlocked" in text and "alu(add)" in text and "is empty" in text


def test_softmax_with_depth_one_deadlocks():
    """The row's values must wait in a FIFO while the row max is reduced: depth 1 cannot."""
    rng = np.random.default_rng(0)
    a = _sparse(rng, 6, 6, 0.6)
    with pytest.raises(UserError) as e:
        simulate("softmax", {"A": a}, Arch.load(depth=1))
    text = e.value.format()
    assert "deadlocked" in text and "is full" in text and "write_vals(Y)" in text
    simulate("softmax", {"A": a}, Arch.load(depth=8))   # deep enough for these rows


def test_cycle_budget():
    rng = np.random.default_rng(0)
    a = _sparse(rng, 30, 30, 0.3)
    from fuseflowc.samml.load import load_module
    module = load_module(str(EXAMPLES / "softmax.samml"))
    fmt = module.tensor("A").format
    with pytest.raises(UserError, match="cycle budget"):
        Simulator(module, {"A": FiberTensor.from_dense(a, fmt)}, {"N": 30, "M": 30},
                  max_cycles=50).run()


def test_arch_overrides_and_errors():
    a = Arch.load(sets=["kind.alu.latency=3", "kind.alu.ii=2", "memory.bandwidth=64"])
    assert a.timing("alu") == (3, 2) and a.bandwidth == 64.0
    assert a.timing("alu", "bmm", 4) == (7, 4)
    assert a.timing("array", None, 4) == (16, 1)
    assert a.mem_window == 16 and Arch.load(sets=["memory.window=4"]).mem_window == 4
    assert Arch.load(depth="inf").depth is None and Arch.load(depth=3).depth == 3
    for bad in (["kind.nope.latency=1"], ["channel.width=3"], ["memory.latency=-1"],
                ["kind.alu.ii=0"], ["x=1"], ["novalue"], ["block.bmm_latency=2**b"],
                ["memory.window=0"], ["memory.window=1.5"]):
        with pytest.raises(UserError):
            Arch.load(sets=bad).timing("alu", "bmm", 4)
    with pytest.raises(UserError):
        Arch.load(depth=0)


def test_arch_file(tmp_path):
    f = tmp_path / "a.toml"
    f.write_text("[channel]\ndepth = 7\n[kind.scan]\nlatency = 4\n")
    a = Arch.load(f)
    assert a.depth == 7 and a.timing("scan") == (4, 1) and a.timing("alu") == (1, 1)
    f.write_text("[channel\n")
    with pytest.raises(UserError, match="not a valid TOML"):
        Arch.load(f)


@pytest.mark.parametrize("content, message", [
    (b"[memory]\nlatency = \xff\n", "a.toml: not a UTF-8 text file"),
    (b"[memory]\nlatency = 1" + b"0" * 5000 + b"\n",
     "a.toml:2:11: error: a number with 5001 digits"),
    (None, "is a directory, expected a file"),
])
def test_arch_file_that_cannot_be_read(tmp_path, content, message):
    """Found by fuzzing: an arch file that is not UTF-8 (UnicodeDecodeError), holds a number of
    thousands of digits (tomllib's bare ValueError) or is a directory (IsADirectoryError) was
    exit 3; it is read now as every text input is (fuseflowc.files.read_source)."""
    f = tmp_path / "a.toml"
    if content is None:
        f.mkdir()
    else:
        f.write_bytes(content)
    with pytest.raises(UserError) as e:
        Arch.load(f)
    assert message in e.value.format()


# ---- the command -----------------------------------------------------------------------------

def _data(tmp_path, **arrays):
    d = tmp_path / "data"
    d.mkdir(exist_ok=True)
    for k, v in arrays.items():
        np.save(d / f"{k}.npy", v)
    return d


def test_cli_json_and_outputs(tmp_path):
    rng = np.random.default_rng(1)
    a, x = _sparse(rng, 7, 5, 0.4), rng.random(5)
    d = _data(tmp_path, A=a, x=x)
    r = run_cli(["simulate", str(EXAMPLES / "spmv_row.samml"), "--data", str(d), "--json",
                 str(tmp_path / "s.json"), "-o", str(tmp_path / "out"), "--depth", "4",
                 "--set", "memory.latency=0"])
    assert r.exit_code == 0, r.stderr
    stats = json.loads((tmp_path / "s.json").read_text())
    k = stats["kernels"][0]
    assert stats["total"]["cycles"] == k["cycles"] > 0
    assert stats["arch"]["channel"]["depth"] == 4
    assert {"name", "kind", "busy_cycles", "stalled_cycles", "idle_cycles", "flops"} <= \
        set(k["nodes"][0])
    assert all(c["tokens"] > 0 for c in k["channels"])
    y = np.load(tmp_path / "out" / "y.npy")
    assert np.allclose(y, a @ x)


def test_cli_check_mismatch_shows_a_diff(tmp_path):
    rng = np.random.default_rng(1)
    a, x = _sparse(rng, 7, 5, 0.4), rng.random(5)
    d = _data(tmp_path, A=a, x=x)
    ref = tmp_path / "ref"
    ref.mkdir()
    wrong = a @ x
    wrong[2] += 1.0
    np.save(ref / "y.npy", wrong)
    r = run_cli(["simulate", str(EXAMPLES / "spmv_row.samml"), "--data", str(d), "--check",
                 "--expect", str(ref), "-o", str(tmp_path / "out")])
    assert r.exit_code == 1
    assert "y: 1 of 7 entries differ (max abs error 1)" in r.stderr
    assert "at (2,): expected" in r.stderr
    assert not (tmp_path / "out").exists()          # nothing written on failure


def test_cli_check_with_graph_checks_what_ran(tmp_path):
    """Found by fuzzing: `--check --graph E` (E before the last graph) compared the module's
    output D, which no graph that ran computed ('D: not written by the simulation', exit 1).
    It checks the tensors the graphs that ran wrote, intermediates too."""
    prog = str(EXAMPLES.parent / "kernels" / "nested_matmul.ff")
    d, fused, g = (str(tmp_path / n) for n in ("d", "f.fused", "g.samml"))
    for args in (["gen-data", prog, "-o", d, "--size", "I=5", "--size", "K=4", "--size",
                  "J=6", "--size", "L=3", "--seed", "1"],
                 ["fuse", prog, "--unfused", "-o", fused], ["lower", fused, "-o", g]):
        assert run_cli(args).exit_code == 0
    r = run_cli(["simulate", g, "--data", d, "--check", "--graph", "E"])
    assert r.exit_code == 0 and "check: E match" in r.stderr, r.stderr
    r = run_cli(["simulate", g, "--data", d, "--check", "--graph", "D"])
    assert r.exit_code == 0 and "check: D, E match" in r.stderr, r.stderr
    ref = str(tmp_path / "ref")  # an --expect directory holds outputs only: not E
    assert run_cli(["run", prog, "--data", d, "-o", ref]).exit_code == 0
    r = run_cli(["simulate", g, "--data", d, "--check", "--graph", "E", "--expect", ref])
    assert r.exit_code == 1 and "--check --graph E: the graphs up to E write no tensor the " \
        "--expect directory holds" in r.stderr, r.stderr


def test_cli_errors(tmp_path):
    rng = np.random.default_rng(1)
    d = _data(tmp_path, A=_sparse(rng, 7, 5, 0.4))
    g = str(EXAMPLES / "spmv_row.samml")
    r = run_cli(["simulate", g, "--data", str(d)])
    assert r.exit_code == 1 and "x" in r.stderr                      # missing tensor
    d2 = _data(tmp_path, x=rng.random(6))
    r = run_cli(["simulate", g, "--data", str(d2)])
    assert r.exit_code == 1                                         # M bound twice: 5 vs 6
    r = run_cli(["simulate", g, "--data", str(d), "--set", "bogus"])
    assert r.exit_code == 1 and "KEY=VALUE" in r.stderr
    r = run_cli(["simulate", g, "--data", str(d), "--check"])
    assert r.exit_code == 1
    r = run_cli(["simulate", g, "--data", str(d), "--graph", "nope"])
    assert r.exit_code == 1 and "no such graph" in r.stderr
    text = (EXAMPLES / "spmv_row.samml").read_text()
    d3 = tmp_path / "d3"
    d3.mkdir()
    np.save(d3 / "A.npy", _sparse(rng, 7, 5, 0.4))
    np.save(d3 / "x.npy", rng.random(5))
    r = run_cli(["simulate", "-", "--data", str(d3), "--max-cycles", "5"], input=text)
    assert r.exit_code == 1 and "--max-cycles 5" in r.stderr          # stdin, budget
    bad = tmp_path / "bad.samml"
    bad.write_text("tensor A[N]: dense input\ngraph g {\n  %x = frob %y\n}\n")
    r = run_cli(["simulate", str(bad), "--data", str(d)])
    assert r.exit_code == 1 and "bad.samml:3" in r.stderr


def test_memory_bandwidth_throttles():
    """At 1 byte/cycle the run takes at least as many cycles as it moves bytes (every byte
    read and every value written goes through the one memory), and values do not change."""
    rng = np.random.default_rng(6)
    a = _sparse(rng, 10, 8, 0.3)
    x = rng.random(8)
    wide = simulate("spmv_row", {"A": a, "x": x}, Arch.load(sets=["memory.latency=0"]))
    narrow = simulate("spmv_row", {"A": a, "x": x},
                      Arch.load(sets=["memory.latency=0", "memory.bandwidth=1"]))
    k = narrow.kernels[0]
    read = sum(k.bytes_read().values())
    assert narrow.cycles >= read > 0
    assert narrow.cycles > 2 * wide.cycles
    assert np.allclose(narrow.tensors["y"].to_dense(), a @ x)
