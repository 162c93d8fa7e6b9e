"""Energy (sim/energy.py): the prices of sim/arch.toml [energy] applied to the counters, the same
for both engines and for the estimator's expected counts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.sim.arch import ENERGY_KEYS, Arch
from fuseflowc.sim.energy import BUFFER_KINDS, add_energy, charge
from fuseflowc.sim.report import result_stats
from tests.support import sim_pins

EXAMPLES = sim_pins.ROOT / "ir_examples" / "samml"


def _run(name: str, arch: Arch, engine: str = "python") -> dict:
    from fuseflowc.samml.load import load_module
    from fuseflowc.sim.build import Simulator
    module = load_module(str(EXAMPLES / name))
    inputs, sizes = sim_pins.module_inputs(module)
    res = Simulator(module, inputs, sizes, arch, engine=engine).run()
    return add_energy(result_stats(res), module, arch), module


def test_charge_by_hand():
    arch = Arch.load(sets=["energy.alu_op=2", "energy.fifo_hop=0.5", "energy.onchip_byte=1",
                           "energy.dram_byte=100", "energy.reconfiguration=1000",
                           "energy.config_node=10"])
    e = charge(arch, flops=3, hops=10, onchip_bytes=8, dram_bytes=4, loads=1,
               nodes_configured=7)
    assert e == {"alu": 6.0, "fifo": 5.0, "onchip": 8.0, "dram": 400.0, "config": 1070.0,
                 "total": 1489.0}


def test_the_defaults_are_cited_figures():
    # Horowitz ISSCC 2014, 45 nm: 640 pJ per 32-bit DRAM word, 10 pJ per 64-bit 8 KB SRAM read
    e = Arch.load().energy
    assert e["dram_byte"] == 640 / 4 and e["onchip_byte"] == 10 / 8
    assert set(e) == set(ENERGY_KEYS)


@pytest.mark.parametrize("item", ["energy.dram_byte=-1", "energy.alu_op=nan",
                                  "energy.fifo_hop=1e10"])
def test_a_bad_price_is_refused(item):
    with pytest.raises(UserError, match=item.split("=")[0] + " must be a number from 0 to"):
        Arch.load(sets=[item])


def test_an_unknown_event_is_refused():
    with pytest.raises(UserError, match="unknown key `energy.sram`"):
        Arch.load(sets=["energy.sram=1"])


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0, 1000, allow_nan=False).map(lambda x: round(x, 2)),
                min_size=len(ENERGY_KEYS), max_size=len(ENERGY_KEYS)),
       st.sampled_from(["spmv_row.samml", "spmm_kij.samml", "softmax.samml", "residual.samml"]))
def test_energy_is_the_counters_priced(prices, name):
    """An independent recount from the JSON counters (node kinds and firings, hops, bytes,
    graphs) at random prices equals the reported energy, per kernel and in total."""
    arch = Arch.load(sets=[f"energy.{k}={p}" for k, p in zip(ENERGY_KEYS, prices)])
    p = dict(zip(ENERGY_KEYS, prices))
    stats, module = _run(name, arch)
    total = 0.0
    for k in stats["kernels"]:
        buf = sum(n["firings"] for n in k["nodes"] if n["kind"] in BUFFER_KINDS)
        nodes = len(module.graph(k["graph"]).nodes)
        want = (k["flops"] * p["alu_op"] + k["token_hops"] * p["fifo_hop"]
                + buf * arch.element_bytes * p["onchip_byte"]
                + (k["bytes_read"]["total"] + k["bytes_written"]["total"]) * p["dram_byte"]
                + p["reconfiguration"] + nodes * p["config_node"])
        assert k["energy_pj"]["total"] == pytest.approx(want, abs=0.5)
        total += want
    assert stats["total"]["energy_pj"]["total"] == pytest.approx(total, abs=0.5)
    assert stats["total"]["edp"] == pytest.approx(
        stats["total"]["energy_pj"]["total"] * stats["total"]["cycles"], rel=1e-9, abs=1)


@pytest.mark.parametrize("name", ["spmm_ikj.samml", "softmax.samml", "spmv_par.samml"])
def test_both_engines_report_the_same_energy(name):
    pytest.importorskip("fuseflowc.sim._fast")
    arch = Arch.load()
    py, _ = _run(name, arch, "python")
    fast, _ = _run(name, arch, "fast")
    assert [k["energy_pj"] for k in py["kernels"]] == [k["energy_pj"] for k in fast["kernels"]]
    assert py["total"]["energy_pj"]["onchip"] > 0 or name != "spmm_ikj.samml"


def test_simulate_and_estimate_report_energy(tmp_path):
    """`simulate --json` and `estimate --json` carry energy per kernel and in total; the
    estimate of the spmv example is within the cycle model's usual error of the simulation."""
    from tests.support.golden import run_pipeline
    data = sim_pins.ROOT / "tests" / "golden" / "sim" / "data"
    g = EXAMPLES / "spmv_row.samml"
    sim = json.loads(run_pipeline(f"fuseflowc simulate {g} --data {data} --json").stdout)
    est = json.loads(run_pipeline(f"fuseflowc estimate {g} --data {data} --json").stdout)
    s, e = sim["total"]["energy_pj"], est["total"]["energy_pj"]
    assert s["total"] > 0 and set(s) == set(e)
    assert s["config"] == e["config"]
    assert e["total"] == pytest.approx(s["total"], rel=0.25)
    assert sim["kernels"][0]["energy_pj"] == s
