"""The estimator's cycle model (fuseflowc/estimate/timing.py) against the simulator's cycles on
small kernels (SpMV, SpMM in its orders, SDDMM, parallel lanes, a blocked program, GCN), and
its properties: never below bytes / bandwidth, lanes never cost (much) more than one lane,
latencies and ii scale it as they scale the simulator, kernels add."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fuseflowc.data.io import load_inputs
from fuseflowc.estimate import DataStats, estimate_module
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "ir_examples" / "kernels"
MODELS = ROOT / "ir_examples" / "models"

#: Small kernels: the model within this fraction of the simulator's cycles.
TOL = 0.10


def gen(program, ddir, *args, seed=1) -> None:
    r = run_cli(["gen-data", str(program), "-o", str(ddir), "--seed", str(seed), *args])
    assert r.exit_code == 0, r.stderr


def compile_(program, order=None, pipeline: str = "", free_input_order=False):
    """The module of `program` as `fuseflowc sweep` compiles a configuration."""
    from fuseflowc.bench.estimate_cycles import _build
    config = {"program": str(program), "schedule": [], "order": order or 0,
              "order_region": None, "inline_widened": True,
              "free_input_order": free_input_order, "share": False, "pipeline": pipeline,
              "arch": []}
    return _build(config, ".")[1]


def cycles(module, ddir, arch=None) -> tuple[float, int]:
    """(estimated, simulated) total cycles of `module` on the data in `ddir`."""
    arch = arch or Arch.load()
    est = estimate_module(module, DataStats.from_dir(ddir, module, arch.element_bytes), arch)
    specs = [t.spec() for t in module.tensors if t.role == "input"]
    inputs, sizes = load_inputs(str(ddir), specs)
    res = Simulator(module, inputs, sizes, arch).run()
    return est.total.cycles, sum(k.cycles for k in res.kernels)


def rel(a, b) -> float:
    return abs(a - b) / b


@pytest.fixture(scope="module")
def spmm_free(tmp_path_factory):
    """SpMM without its `order` line (compiled with free input orders: inputs read against
    their format come from permuted copies): 3 orders (C is dense: i before j)."""
    p = tmp_path_factory.mktemp("prog") / "spmm_free.ff"
    text = (KERNELS / "spmm.ff").read_text()
    p.write_text("\n".join(x for x in text.splitlines() if not x.startswith("order ")) + "\n")
    return p


@pytest.fixture(scope="module")
def spmm_data(tmp_path_factory):
    d = tmp_path_factory.mktemp("spmm") / "d"
    gen(KERNELS / "spmm.ff", d, "--size", "I=60", "--size", "K=50", "--size", "J=12",
        "--density", "A=0.08")
    return d


# ---- against the simulator ------------------------------------------------------------------
def test_spmv(tmp_path):
    gen(KERNELS / "spmv.ff", tmp_path / "d", "--size", "I=120", "--size", "J=90",
        "--density", "A=0.05")
    est, sim = cycles(compile_(KERNELS / "spmv.ff"), tmp_path / "d")
    assert rel(est, sim) <= TOL, (est, sim)


@pytest.mark.parametrize("order", range(3))
def test_spmm_orders(spmm_free, spmm_data, order):
    """Every dataflow order of SpMM: their cycles differ several times, the model follows
    each one (permute steps included)."""
    est, sim = cycles(compile_(spmm_free, order, free_input_order=True), spmm_data)
    assert rel(est, sim) <= TOL, (order, est, sim)


def test_spmm_orders_rank_as_simulated(spmm_free, spmm_data):
    got = [cycles(compile_(spmm_free, k, free_input_order=True), spmm_data) for k in range(3)]
    by_est = sorted(range(3), key=lambda k: got[k][0])
    by_sim = sorted(range(3), key=lambda k: got[k][1])
    assert by_est[0] == by_sim[0] and by_est[-1] == by_sim[-1], got


def test_sddmm(tmp_path):
    gen(KERNELS / "sddmm.ff", tmp_path / "d", "--size", "I=40", "--size", "J=40",
        "--size", "K=16", "--density", "M=0.1")
    est, sim = cycles(compile_(KERNELS / "sddmm.ff"), tmp_path / "d")
    assert rel(est, sim) <= TOL, (est, sim)


@pytest.mark.parametrize("pipeline", ["parallelize{index=i,factor=2}",
                                      "parallelize{index=i,factor=4}",
                                      "parallelize{index=u0,factor=4,reduce=lanes}"])
def test_parallel_lanes(spmm_data, pipeline):
    est, sim = cycles(compile_(KERNELS / "spmm.ff", None, pipeline), spmm_data)
    assert rel(est, sim) <= TOL, (pipeline, est, sim)


@pytest.mark.parametrize("variant", ["unfused", "partial", "full"])
def test_gcn_on_karate(tmp_path, variant):
    gen(MODELS / "gcn" / "gcn.ff", tmp_path / "d", "--graph", "karate")
    est, sim = cycles(compile_(MODELS / "gcn" / f"gcn_{variant}.ff"), tmp_path / "d")
    assert rel(est, sim) <= TOL, (variant, est, sim)


def test_blocked_attention(tmp_path):
    """Blocks: a bmm firing takes b cycles and a block load b*b values of bandwidth; the model
    charges both (it was 28% low without the bandwidth's turns)."""
    prog = MODELS / "bigbird_attention" / "attention-b16.ff"
    gen(prog, tmp_path / "d", "--size", "S=64", "--mask", "M=bigbird:block=16,random=1")
    est, sim = cycles(compile_(prog, pipeline="locate"), tmp_path / "d")
    assert rel(est, sim) <= 0.15, (est, sim)


def test_a_slower_memory_is_modelled_like_the_simulators(tmp_path):
    """At 1 byte per cycle SpMV is bandwidth-bound: bytes / bandwidth, as simulated."""
    gen(KERNELS / "spmv.ff", tmp_path / "d", "--size", "I=120", "--size", "J=90",
        "--density", "A=0.05")
    arch = Arch.load(None, ("memory.bandwidth=1",))
    est, sim = cycles(compile_(KERNELS / "spmv.ff"), tmp_path / "d", arch)
    assert rel(est, sim) <= TOL, (est, sim)


# ---- properties -----------------------------------------------------------------------------
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(["spmv", "spmm", "sddmm", "add", "mul"]),
       n=st.integers(3, 40), m=st.integers(3, 40), density=st.floats(0.02, 0.6),
       bandwidth=st.sampled_from([0.5, 4, 256]), seed=st.integers(0, 1000))
def test_never_below_the_bandwidth_bound(tmp_path_factory, kernel, n, m, density, bandwidth,
                                         seed):
    tmp = tmp_path_factory.mktemp("k")
    prog = KERNELS / f"{kernel}.ff"
    module = compile_(prog)
    dims = sorted({d for t in module.tensors for d in t.dims if isinstance(d, str)})
    gen(prog, tmp / "d", *[f"--size={d}={n if k % 2 == 0 else m}" for k, d in enumerate(dims)],
        "--density", str(density), seed=seed)
    arch = Arch.load(None, (f"memory.bandwidth={bandwidth}",))
    est = estimate_module(module, DataStats.from_dir(tmp / "d", module), arch)
    for name, c in est.kernels.items():
        assert c.cycles >= c.bytes / bandwidth, name
    assert est.total.cycles == pytest.approx(sum(c.cycles for c in est.kernels.values()))


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(8, 80), density=st.floats(0.02, 0.5), seed=st.integers(0, 1000),
       index=st.sampled_from(["i", "u0"]))
@example(n=58, density=0.041, seed=215, index="i")   # the case the old bound failed on
# one or two rows per lane at 8 lanes: the model took 9/8 rows per lane and waited on the
# latest lane for the whole join (+8.5% then a 4 -> 8 step 10% off the simulator's; +11.7%)
@example(n=11, density=0.344, seed=0, index="i")
@example(n=9, density=0.5, seed=0, index="i")
@example(n=17, density=0.321, seed=765, index="i")   # 3 rows in lane 0, 2 in the others
# sparse rows: a lane's spacc emits 8 values per non-empty row, not its share of the products
@example(n=67, density=0.03125, seed=1, index="i")
@example(n=69, density=0.03125, seed=1, index="i")
def test_more_lanes_track_the_simulator(tmp_path_factory, n, density, seed, index):
    """Lanes divide the work as the simulator's lanes do: at 1, 2, 4 and 8 lanes the model is
    within TOL of the simulator, and what doubling the lanes changes in the model is within 10%
    of what it changes in the simulator. (A bound on the model alone, 'doubling never costs more
    than 5% + 16 cycles', failed on 58 rows at 4 -> 8 lanes: the model +8%, the simulator
    +0.4%, both within 6% of each other; 40 random cases off-line: at most 5.9% apart, step
    ratios within 8.6%.)"""
    tmp = tmp_path_factory.mktemp("l")
    gen(KERNELS / "spmm.ff", tmp / "d", "--size", f"I={n}", "--size", "K=20", "--size", "J=8",
        "--density", f"A={density}", seed=seed)
    prev = None
    for f in (1, 2, 4, 8):
        pipeline = "" if f == 1 else f"parallelize{{index={index},factor={f}}}"
        est, sim = cycles(compile_(KERNELS / "spmm.ff", None, pipeline), tmp / "d")
        assert rel(est, sim) <= TOL, (f, est, sim)
        if prev is not None:
            assert (est / prev[0]) <= (sim / prev[1]) * 1.10, (f, est, sim, prev)
        prev = (est, sim)


def test_latency_and_ii_scale_like_the_simulator(spmm_data):
    """Doubling every node's ii roughly doubles both; a longer memory latency adds to both."""
    module = compile_(KERNELS / "spmm.ff")
    for sets in (("default.ii=2",), ("memory.latency=1000",), ("kind.alu.latency=20",)):
        est, sim = cycles(module, spmm_data, Arch.load(None, sets))
        assert rel(est, sim) <= TOL, (sets, est, sim)


def test_json_and_cli_have_cycles(spmm_data):
    r = run_cli(["estimate", str(KERNELS / "spmm.ff"), "--data", str(spmm_data), "--json"])
    assert r.exit_code == 0, r.stderr
    import json
    doc = json.loads(r.stdout)
    assert doc["total"]["cycles"] > 0 and doc["total"]["cycles"] == doc["kernels"]["C"]["cycles"]
    r = run_cli(["estimate", str(KERNELS / "spmm.ff"), "--data", str(spmm_data), "-q"])
    head, row = r.stdout.splitlines()[:2]
    assert head.split("\t")[-1] == "cycles" and float(row.split("\t")[-1]) > 0


def test_cli_arch_file(tmp_path, spmm_data):
    arch = tmp_path / "slow.toml"
    arch.write_text("[memory]\nbandwidth = 0.5\n")
    fast = run_cli(["estimate", str(KERNELS / "spmm.ff"), "--data", str(spmm_data), "-q"])
    slow = run_cli(["estimate", str(KERNELS / "spmm.ff"), "--data", str(spmm_data), "-q",
                    "--arch", str(arch)])
    assert slow.exit_code == 0, slow.stderr
    c = [float(x.stdout.splitlines()[-1].split("\t")[-1]) for x in (fast, slow)]
    assert c[1] > 2 * c[0]
    bad = tmp_path / "bad.toml"
    bad.write_text("[memory]\nbandwidth = nan\n")
    r = run_cli(["estimate", str(KERNELS / "spmm.ff"), "--data", str(spmm_data), "-q",
                 "--arch", str(bad)])
    assert r.exit_code == 1 and "bandwidth" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("kernel", ["add", "mul", "mttkrp", "multi_consumer", "multi_output",
                                    "residual", "spmv_t_scaled", "fig7_pair",
                                    "nested_matmul_fused"])
def test_every_example_kernel(tmp_path, kernel):
    """The example kernels' default order on random data (unions, crdhold, 3-level tensors,
    several outputs, kernels feeding kernels)."""
    from fuseflowc.lang.load import load_program
    prog = KERNELS / f"{kernel}.ff"
    dims = [d.name for d in load_program(str(prog)).dims if d.size is None]
    gen(prog, tmp_path / "d", *[f"--size={d}={(30, 24, 12, 9)[k % 4]}" for k, d in enumerate(dims)],
        "--density", "0.15", seed=3)
    est, sim = cycles(compile_(prog), tmp_path / "d")
    assert rel(est, sim) <= TOL, (est, sim)
