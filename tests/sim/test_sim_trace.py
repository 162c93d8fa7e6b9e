"""`simulate --trace`: the Chrome trace-event file read back by a strict reader of the format
(tests/support/trace_reader.py); each node's busy and stalled slices sum to its counters (what
`--json` prints); both engines write the same bytes; a trace above --trace-limit is merged,
says so and keeps exact totals; a failed run writes no trace."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from fuseflowc.sim.trace import Recorder, trace_text
from tests.opt.test_opt_parallel import ROOT, inputs_for, lowered
from tests.opt.test_opt_sim import optimized
from tests.support.trace_reader import TraceError, read_trace

fast_only = pytest.mark.skipif(not engine_fast.available(),
                               reason="fuseflowc.sim._fast is not built")

CASES = [("spmv", "locate"), ("spmm", "parallelize{index=i,factor=2}"),
         ("sddmm", "locate"), ("mttkrp", "cleanup")]


def traced(module, inputs, sizes, arch, engine, limit=10**8):
    rec = Recorder(limit)
    result = Simulator(module, inputs, sizes, arch, engine=engine, trace=rec).run()
    return result, trace_text(rec.document())


def check_counters(result, text: str) -> None:
    """Every node's busy/stalled slices (and the args of merged ones) equal its counters."""
    tr = read_trace(text)
    for k in result.kernels:
        threads = tr.threads(tr.process(f": {k.graph}"))
        step = not k.channels          # a permute or decompose step: its kernel slice only
        assert step == (set(threads) == {"kernel"})
        for n in [] if step else k.nodes:
            [track] = [t for name, t in threads.items()
                       if name == n.name or name.startswith(n.name + " = ")]
            assert track.args_total("busy_cycles") == n.fires * n.ii, n.name
            assert track.args_total("stalled_cycles") == n.stall, n.name
            if not tr.other["merged"]:
                assert track.total("busy") == n.fires * n.ii, n.name
                assert track.total("stalled") == n.stall, n.name
        kernel = threads["kernel"].slices
        assert [(e - s) for s, e, _, _ in kernel] == [k.cycles]


def module_for(name, pipeline):
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
    return optimized(module, pipeline), sizes


@fast_only
@pytest.mark.parametrize("name,pipeline", CASES)
@pytest.mark.parametrize("depth", ["2", "inf"])
def test_both_engines_write_the_same_trace(name, pipeline, depth):
    module, sizes = module_for(name, pipeline)
    inputs, all_sizes = inputs_for(module, sizes, 0, 0.4, 7)
    arch = Arch.load(depth=depth)
    py, text_py = traced(module, inputs, all_sizes, arch, "python")
    fast, text_fast = traced(module, inputs, all_sizes, arch, "fast")
    assert text_py == text_fast
    check_counters(py, text_py)
    assert read_trace(text_py).other["merged"] is False


@fast_only
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), density=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       dim=st.integers(1, 9), depth=st.sampled_from(["2", "8", "inf"]),
       case=st.sampled_from(CASES))
def test_random_runs_agree_and_add_up(seed, density, dim, depth, case):
    module, sizes = module_for(*case)
    inputs, all_sizes = inputs_for(module, sizes, seed, density, dim)
    arch = Arch.load(depth=depth)
    py, text_py = traced(module, inputs, all_sizes, arch, "python")
    _, text_fast = traced(module, inputs, all_sizes, arch, "fast")
    assert text_py == text_fast
    check_counters(py, text_py)


def test_a_trace_above_its_limit_is_merged_with_exact_totals():
    module, sizes = module_for("spmm", "locate")
    inputs, all_sizes = inputs_for(module, sizes, 3, 0.5, 9)
    arch = Arch.load(depth="2")
    result, full = traced(module, inputs, all_sizes, arch, "python")
    n_full = len(json.loads(full)["traceEvents"])
    limit = max(n_full // 3, 200)
    assert limit < n_full
    _, small = traced(module, inputs, all_sizes, arch, "python", limit)
    doc = json.loads(small)
    assert len(doc["traceEvents"]) <= limit
    assert doc["otherData"]["merged"] is True and doc["otherData"]["quantum_cycles"] > 1
    check_counters(result, small)


def test_the_event_count_is_the_events_made():
    """document() picks the quantum by counting (EventCount), then makes the events once."""
    from fuseflowc.sim.trace import EventCount
    module, sizes = module_for("spmm", "locate")
    inputs, all_sizes = inputs_for(module, sizes, 4, 0.5, 8)
    rec = Recorder()
    Simulator(module, inputs, all_sizes, Arch.load(depth="2"), engine="python",
              trace=rec).run()
    count = EventCount(rec.kernels)
    for q in (1, 2, 4, 16, 256, 1 << 20):
        assert count(q) == len(rec._events(q)), q


def test_memory_and_occupancy_counters():
    module, sizes = module_for("spmv", "cleanup")
    inputs, all_sizes = inputs_for(module, sizes, 1, 0.5, 8)
    result, text = traced(module, inputs, all_sizes, Arch.load(), "python")
    tr = read_trace(text)
    [k] = result.kernels
    mem = tr.counters[(1, "memory bandwidth")]
    # a step function: each value holds until the next sample; the last is 0
    assert mem[-1][1]["bytes_per_cycle"] == 0
    moved = sum(a["bytes_per_cycle"] * (t1 - t0) for (t0, a), (t1, _) in zip(mem, mem[1:]))
    total = sum(k.bytes_read().values()) + sum(k.bytes_written().values())
    assert moved == pytest.approx(total, rel=1e-3)
    occ = [name for (_, name) in tr.counters if name.startswith("occupancy ")]
    assert sorted(occ) == sorted(f"occupancy {c.name}" for c in k.channels)
    # every channel ends empty, and no sample exceeds the depth
    for c in k.channels:
        samples = tr.counters[(1, f"occupancy {c.name}")]
        assert samples[-1][1]["tokens"] == 0
        assert max(a["tokens"] for _, a in samples) <= Arch.load().depth


def test_a_stream_read_twice_by_one_node_gets_two_counter_tracks():
    """Found on GCN (fully fused, Cora): node #39 reads %c11 at two operands, two channels
    named `%c11->#39`; one counter name for both interleaved their samples out of time order
    (the strict reader refused the trace)."""
    text = """tensor x[N]: dense input
tensor y[N]: dense output
graph g {
  %r = root {tensor = x}
  %c, %f = scan %r {tensor = x, mode = 0, format = dense, index = i}
  %v = array %f {tensor = x}
  %w = alu %v, %v {op = mul}
  write_vals %w {tensor = y}
}
"""
    import numpy as np

    from fuseflowc.data.fibertree import FiberTensor
    from fuseflowc.formats import dense
    from fuseflowc.samml.parser import parse_text
    module = parse_text(text)
    x = FiberTensor.from_dense(np.arange(1.0, 40.0), dense(1))
    _, out = traced(module, {"x": x}, {"N": 39}, Arch.load(depth="2"), "python")
    tr = read_trace(out)
    names = sorted(n for (_, n) in tr.counters if "->#3" in n)
    assert len(names) == 2 and len(set(names)) == 2, names


def test_the_strict_reader_refuses_broken_traces():
    good = {"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "k"}},
        {"ph": "B", "name": "busy", "pid": 1, "tid": 1, "ts": 0},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 5}]}
    read_trace(json.dumps(good))
    for broken in (good["traceEvents"][:2],                         # B never ended
                   good["traceEvents"][:1] + good["traceEvents"][2:],   # E without B
                   [good["traceEvents"][0], {**good["traceEvents"][1], "ts": 9},
                    good["traceEvents"][2]],                          # time goes back
                   [good["traceEvents"][0], {"ph": "B", "pid": 1, "tid": 1, "ts": 0},
                    good["traceEvents"][2]],                          # B without a name
                   good["traceEvents"][1:]):                          # no process name
        with pytest.raises(TraceError):
            read_trace(json.dumps({"traceEvents": broken}))


def test_a_permute_step_is_a_kernel_of_the_time_line():
    """A permute step before a graph: its own process with a kernel slice of its cycles, and
    the graph's kernel starts where it ends."""
    import numpy as np

    from fuseflowc.data.fibertree import FiberTensor
    from fuseflowc.formats import shorthand
    from fuseflowc.samml.parser import parse_text
    from tests.sim.test_permute_sim import MODULE
    module = parse_text(MODULE)
    rng = np.random.default_rng(1)
    dense = np.where(rng.random((5, 7)) < 0.3, rng.uniform(-1, 1, (5, 7)), 0.0)
    A = FiberTensor.from_dense(dense, shorthand("csr", 2))
    result, text = traced(module, {"A": A}, {"N": 5, "M": 7}, Arch.load(), "python")
    tr = read_trace(text)
    assert [k.graph for k in result.kernels] == ["permute A -> U", "copy"]
    step, graph = (tr.threads(tr.process(f"kernel {i}: "))["kernel"].slices[0]
                   for i in (1, 2))
    assert step[:2] == (0, result.kernels[0].cycles)
    assert graph[:2] == (result.kernels[0].cycles, result.cycles)
    check_counters(result, text)
