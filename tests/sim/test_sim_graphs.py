"""Whole graphs: multi-kernel modules, random shapes against scipy (hypothesis), exact counts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.sim.arch import Arch
from tests.sim.test_sim_examples import _blocky, check
from tests.support.golden import run_cli

TWO = """
tensor A[N, M]: csr input
tensor x[M]: dense input
tensor T[N, M]: csr temp
tensor y[N]: dense output

graph relu {
  %ra = root {tensor = A}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = dense, index = i}
  %cj, %rj = scan %ri {tensor = A, mode = 1, format = compressed, index = j}
  %v = array %rj {tensor = A}
  %w = alu %v {op = relu}
  write_level %ci {tensor = T, mode = 0, format = dense}
  write_level %cj {tensor = T, mode = 1, format = compressed}
  write_vals %w {tensor = T}
}

graph spmv {
  %ra = root {tensor = T}
  %rx = root {tensor = x}
  %ci, %ri = scan %ra {tensor = T, mode = 0, format = dense, index = i}
  %rs = repsig %ci {index = i}
  %rxr = repeat %rx, %rs {index = i}
  %cj, %rj = scan %ri {tensor = T, mode = 1, format = compressed, index = j}
  %cx, %rxj = scan %rxr {tensor = x, mode = 0, format = dense, index = j}
  %c, %r1, %r2 = intersect %cj, %rj, %cx, %rxj {index = j}
  %va = array %r1 {tensor = T}
  %vx = array %r2 {tensor = x}
  %p = alu %va, %vx {op = mul}
  %s = reduce %p {op = sum, index = j}
  write_vals %s {tensor = y}
}
"""


def test_two_kernels_feed_each_other(tmp_path):
    rng = np.random.default_rng(0)
    a = np.where(rng.random((6, 5)) < 0.5, rng.uniform(-1, 1, (6, 5)), 0.0)
    x = rng.random(5)
    g = tmp_path / "two.samml"
    g.write_text(TWO)
    data = tmp_path / "d"          # outputs may not go inside an input directory
    data.mkdir()
    np.save(data / "A.npy", a)
    np.save(data / "x.npy", x)
    exp = tmp_path / "exp"
    exp.mkdir()
    np.save(exp / "y.npy", np.maximum(a, 0) @ x)
    import json
    r = run_cli(["simulate", str(g), "--data", str(data), "--check", "--expect", str(exp),
                 "--json-out", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.stderr
    assert "total" in r.stderr and "relu" in r.stderr and "spmv" in r.stderr
    stats = json.loads((tmp_path / "s.json").read_text())
    assert [k["graph"] for k in stats["kernels"]] == ["relu", "spmv"]
    assert stats["total"]["cycles"] == sum(k["cycles"] for k in stats["kernels"])
    r = run_cli(["simulate", str(g), "--data", str(data), "--graph", "spmv", "--check",
                 "--expect", str(exp)])
    assert r.exit_code == 0, r.stderr
    assert "relu" not in r.stderr.split("busiest")[0]


matrices = st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 6),
                     st.floats(0.0, 0.8), st.integers(0, 2**31))


def _rand(rng, n, m, density):
    return np.where(rng.random((n, m)) < density, rng.uniform(-2, 2, (n, m)), 0.0)


@settings(max_examples=25, deadline=None)
@given(matrices, st.sampled_from(["spmm_ijk", "spmm_ikj", "spmm_kij"]),
       st.sampled_from(["inf", 2, 64]))
def test_spmm_orders_match_numpy(shape, name, depth):
    n, k, m, density, seed = shape
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, n, k, density), _rand(rng, k, m, density)
    check(name, {"A": a, "B": b}, {"C": a @ b}, Arch.load(depth=depth))


@settings(max_examples=25, deadline=None)
@given(matrices)
def test_elementwise_and_softmax_match_numpy(shape):
    n, m, _, density, seed = shape
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, n, m, density), _rand(rng, n, m, density)
    check("add", {"A": a, "B": b}, {"C": a + b})
    check("mul", {"A": a, "B": b}, {"C": a * b})
    from tests.sim.test_sim_examples import _softmax
    check("softmax", {"A": a}, {"Y": _softmax(a)})


def test_block_spmm_counts():
    rng = np.random.default_rng(9)
    a, b = _blocky(rng, 16, 12), _blocky(rng, 12, 8)
    k = check("block_spmm", {"A": a, "B": b}, {"C": a @ b}).kernels[0]
    ablk = np.abs(a).reshape(4, 4, 3, 4).sum(axis=(1, 3)) != 0   # block pattern of A
    bblk = np.abs(b).reshape(3, 4, 2, 4).sum(axis=(1, 3)) != 0
    products = int((ablk.astype(int) @ bblk.astype(int)).sum())
    # each block product: b^3 for the matmul, b^2 to accumulate it
    assert k.flops == products * (4 ** 3 + 4 ** 2)
    assert k.bytes_read()["vals"] == 4 * 16 * (products + int(ablk.sum()))
    nblk = int(((ablk.astype(int) @ bblk.astype(int)) != 0).sum())
    assert k.bytes_written()["vals"] == 4 * 16 * nblk
    # block costs stretch the timing: bmm latency 2b-1 = 7, interval b = 4
    bmm = [n for n in k.nodes if n.kind == "alu"][0]
    assert (bmm.lat, bmm.ii) == (7, 4)
    assert bmm.fires * 4 <= k.cycles


def test_help_teaches():
    r = run_cli(["simulate", "--help"])
    assert r.exit_code == 0
    for word in ("--data", "--check", "--expect", "--json", "--arch", "--set", "--depth",
                 "--max-cycles", "Examples"):
        assert word in r.stdout


@settings(max_examples=20, deadline=None)
@given(matrices)
def test_dcsr_add_goes_through_n_refs(shape):
    """Doubly compressed inputs: the row union gives N refs for rows one side lacks, whose
    scans give N coordinates that the column union skips."""
    from fuseflowc.data.fibertree import FiberTensor
    from fuseflowc.diagnostics import Source
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.sim.build import Simulator
    from tests.sim.test_sim_examples import EXAMPLES
    text = (EXAMPLES / "add.samml").read_text().replace(": csr ", ": dcsr ") \
        .replace("mode = 0, format = dense", "mode = 0, format = compressed")
    module = parse_module(Source("add_dcsr.samml", text))
    n, m, _, density, seed = shape
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, n, m, density), _rand(rng, n, m, density)
    fmt = module.tensor("A").format
    ins = {"A": FiberTensor.from_dense(a, fmt), "B": FiberTensor.from_dense(b, fmt)}
    res = Simulator(module, ins, {"N": n, "M": m}).run()
    np.testing.assert_allclose(res.tensors["C"].to_dense(), a + b)
