"""`parallelize{...,reduce=lanes}`: a reducer over the split index runs per lane and the lane
results are combined after the lanes (an ALU tree for `reduce`, a union and an ALU tree for
`spacc1`). Against the serial graph, on random data (factors 1-8, densities 0 to 1, single
elements): the written coordinates (levels, order) are identical, the values equal within the
`--check` tolerance (sums are reassociated), and bit for bit when every combined reducer is a
max. Structure, what stays serial, errors and the blocked BigBird attention through the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.opt import PipelineError, parse_pipeline
from fuseflowc.opt.parallelize import combines_per_lane
from fuseflowc.samml import ir
from fuseflowc.samml.analysis import stream_contexts
from fuseflowc.samml.load import load_module
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from tests.opt.test_opt_parallel import ROOT, indices, inputs_for, lowered, sparse_density
from tests.opt.test_opt_sim import assert_same_patterns, optimized, simulate
from tests.support.golden import run_cli

EXAMPLES = sorted((ROOT / "ir_examples" / "samml").glob("*.samml"))
KERNELS = ["spmv", "spmm", "sddmm", "mttkrp", "nested_matmul_fused", "residual"]
BIGBIRD = ROOT / "ir_examples" / "models" / "bigbird_attention" / "attention-b16.ff"


def combined(module, index: str) -> list[ir.Node]:
    """The reducers of `module` that `reduce=lanes` runs per lane when splitting `index`."""
    out = []
    for g in module.graphs:
        ctx = stream_contexts(g)
        out += [n for n in g.nodes if combines_per_lane(n, ctx, index)]
    return out


def assert_close(a, b, exact: bool = False) -> None:
    """Same tensors, same stored coordinates (levels, order); values within simulate --check's
    tolerance (bit for bit with `exact`)."""
    if exact:
        # bit for bit, but for the sign of a zero: max is IEEE maximum with numpy's rule for
        # equal operands (the second wins, sim/ops.py), so max(-0.0, 0.0) depends on the order
        # the lanes combine in; every other bit must be the serial graph's
        assert_same_patterns(a, b)
        for name in sorted(a.tensors):
            x, y = a.tensors[name].vals, b.tensors[name].vals
            assert x.dtype == y.dtype and (x + 0.0).tobytes() == (y + 0.0).tobytes(), name
        return
    assert_same_patterns(a, b)
    for name in sorted(a.tensors):
        x, y = a.tensors[name].vals, b.tensors[name].vals
        assert np.allclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True), name


def single_element(inputs: dict, seed: int) -> dict:
    """`inputs` with every tensor reduced to one of its stored entries (or left empty)."""
    out = {}
    for k, (name, t) in enumerate(sorted(inputs.items())):
        coords, vals = t.to_coo()
        if len(vals) > 1:
            i = (seed + k) % len(vals)
            coords, vals = coords[i:i + 1], vals[i:i + 1]
        out[name] = FiberTensor.from_coo(t.shape, coords, vals, t.format, t.block)
    return out


def check_lanes(module, pipeline: str, sizes: dict, seed: int = 0, density=None, dim: int = 6,
                single: bool = False, exact: bool = False):
    """Simulate `module` and `module` after `pipeline` on the same random inputs; the written
    tensors agree (assert_close). Returns (serial, parallel) results."""
    par = optimized(module, pipeline)
    inputs, all_sizes = inputs_for(module, sizes, seed, density, dim)
    if single:
        inputs = single_element(inputs, seed)
    a, b = simulate(module, inputs, all_sizes), simulate(par, inputs, all_sizes)
    assert_close(a, b, exact)
    return a, b


def reduced_indices(module) -> list[str]:
    """The indices of `module` with a reducer `reduce=lanes` combines per lane."""
    return [x for x in indices(module) if combined(module, x)]


# ---- random factors, indices and densities -----------------------------------------------------

@pytest.mark.parametrize("name", KERNELS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernels_random(name, data):
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
    xs = reduced_indices(module)
    assert xs, f"{name}: no reducer to combine per lane"
    index = data.draw(st.sampled_from(xs), label="index")
    factor = data.draw(st.integers(1, 8), label="factor")
    density = sparse_density(module, data.draw)
    dim = data.draw(st.integers(1, 7), label="dim")
    single = data.draw(st.booleans(), label="single")
    check_lanes(module, f"parallelize{{index={index},factor={factor},reduce=lanes}}", sizes,
                data.draw(st.integers(0, 2**16)), density, dim, single)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_examples_random(path, data):
    module = load_module(str(path))
    index = data.draw(st.sampled_from(indices(module)), label="index")
    factor = data.draw(st.integers(1, 8), label="factor")
    check_lanes(module, f"parallelize{{index={index},factor={factor},reduce=lanes}}", {},
                data.draw(st.integers(0, 2**16)), sparse_density(module, data.draw),
                data.draw(st.sampled_from((4, 8))), data.draw(st.booleans()))


def _as_max(module):
    """`module` with every reducer and accumulator a max (the combination is exact)."""
    text = print_module(module)
    return parse_text(text.replace("{op = sum, index", "{op = max, index"))


@pytest.mark.parametrize("name", ["spmm", "mttkrp", "nested_matmul_fused"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_spacc_max_is_exact(name, data):
    """Max accumulators combine per lane through a union whose N is max's identity: bit for
    bit the serial results, negative values and lanes without any element included."""
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
    module = _as_max(module)
    xs = [x for x in reduced_indices(module)
          if all(isinstance(n, ir.Spacc1) for n in combined(module, x))]
    assert xs
    index = data.draw(st.sampled_from(xs), label="index")
    factor = data.draw(st.integers(2, 8), label="factor")
    check_lanes(module, f"parallelize{{index={index},factor={factor},reduce=lanes}}", sizes,
                data.draw(st.integers(0, 2**16)), sparse_density(module, data.draw),
                data.draw(st.integers(1, 7)), data.draw(st.booleans()), exact=True)


MODELS = ["gcn/gcn_partial.ff", "graphsage/graphsage_full.ff", "sae/sae_full.ff",
          "gpt3_mini/gpt3_mini_partial.ff"]


@pytest.mark.parametrize("rel", MODELS)
def test_models_every_reduced_index(rel):
    """Every index of a model with a reducer combined per lane, factors 2-4 in turn; then
    nested with the next index (plain) by 2."""
    module, sizes = lowered(ROOT / "ir_examples" / "models" / rel)
    xs = reduced_indices(module)
    assert xs
    others = indices(module)
    for k, index in enumerate(xs):
        check_lanes(module, f"parallelize{{index={index},factor={2 + k % 3},reduce=lanes}}",
                    sizes, seed=k, dim=4)
        outer = others[(others.index(index) + 1) % len(others)]
        check_lanes(module, f"parallelize{{index={outer},factor=2}},"
                            f"parallelize{{index={index},factor=2,reduce=lanes}}",
                    sizes, seed=k, dim=4)


# ---- structure ---------------------------------------------------------------------------------

@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_spmv_reduce_tree(factor):
    """spmv at its reduced index: F per-lane reducers, F - 1 adds combining them, no join."""
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / "spmv.ff")
    pipeline = f"parallelize{{index=u0,factor={factor},reduce=lanes}}"
    g = optimized(module, pipeline).graphs[0]
    reds = [n for n in g.nodes if isinstance(n, ir.Reduce)]
    assert sorted(n.lane for n in reds) == list(range(factor))
    adds = [n for n in g.nodes if isinstance(n, ir.Alu) and n.op == "add"]
    assert len(adds) == factor - 1 and all(n.lane is None for n in adds)
    assert not any(isinstance(n, ir.Join) for n in g.nodes)
    (w,) = [n for n in g.nodes if isinstance(n, ir.WriteVals)]
    assert w.inputs[0].producer in adds
    for seed, density in ((0, None), (1, 0.0), (2, 0.1), (3, 1.0)):
        check_lanes(module, pipeline, sizes, seed, density, dim=7)


def test_spmm_union_of_lanes():
    """spmm at its reduced index: per-lane spacc1s read by one union of F (crd, val) pairs."""
    module, _ = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    g = optimized(module, "parallelize{index=u0,factor=4,reduce=lanes}").graphs[0]
    accs = [n for n in g.nodes if isinstance(n, ir.Spacc1)]
    assert sorted(n.lane for n in accs) == [0, 1, 2, 3]
    (u,) = [n for n in g.nodes if isinstance(n, ir.Union) and n.lane is None]
    assert u.index == "j" and u.required == [] and len(u.inputs) == 8
    assert {s.producer for s in u.inputs} == set(accs)
    assert sum(isinstance(n, ir.Alu) and n.op == "add" for n in g.nodes) == 3


def test_serial_mode_is_unchanged_and_the_default():
    module, _ = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    a = print_module(optimized(module, "parallelize{index=u0,factor=4}"))
    assert a == print_module(optimized(module, "parallelize{index=u0,factor=4,reduce=serial}"))
    assert a != print_module(optimized(module, "parallelize{index=u0,factor=4,reduce=lanes}"))


def test_reduce_max_and_spacc2_stay_serial():
    """A reduce max (an empty lane would give 0, not max's identity) and a spacc2 read a join."""
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / "spmv.ff")
    module = _as_max(module)
    assert not combined(module, "u0")
    pipeline = "parallelize{index=u0,factor=4,reduce=lanes}"
    g = optimized(module, pipeline).graphs[0]
    (red,) = [n for n in g.nodes if isinstance(n, ir.Reduce)]
    assert red.lane is None and isinstance(red.inputs[0].producer, ir.Join)
    check_lanes(module, pipeline, sizes, density=0.3, exact=True)
    for path in EXAMPLES:
        m = load_module(str(path))
        for g in m.graphs:
            ctx = stream_contexts(g)
            for n in g.nodes:
                if isinstance(n, ir.Spacc2):
                    assert not combines_per_lane(n, ctx, n.index)


def test_factor_one_is_identity():
    for name in KERNELS:
        module, _ = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
        for x in indices(module):
            out = optimized(module, f"parallelize{{index={x},factor=1,reduce=lanes}}")
            assert print_module(out) == print_module(module)


def test_blocked_labels_and_nesting_lanes():
    """On blocked attention the combining ALUs carry the accumulator's block labels; nested
    under `i` by 2 they sit in the `i` lanes."""
    module, _ = lowered(BIGBIRD)
    par = optimized(module, "locate,parallelize{index=i,factor=2},"
                            "parallelize{index=u0,factor=2,reduce=lanes},cleanup")
    g = par.graphs[0]
    unions = [n for n in g.nodes if isinstance(n, ir.Union) and n.index == "d"]
    assert sorted(n.lane for n in unions) == [0, 1]
    for u in unions:
        (alu,) = [n for n in g.nodes if isinstance(n, ir.Alu) and u.outputs[1] in n.inputs]
        assert alu.op == "add" and alu.in0 == alu.in1 == alu.out == ["i", "d"]
        assert alu.lane == u.lane


# ---- errors ------------------------------------------------------------------------------------

def test_bad_reduce_value():
    with pytest.raises(PipelineError, match=r"pass parallelize: option reduce must be one of "
                                            r"serial, lanes, got 'parallel'"):
        parse_pipeline("parallelize{index=i,reduce=parallel}")
    r = run_cli(["opt", str(EXAMPLES[0]), "-p", "parallelize{index=i,reduce=x}"])
    assert r.exit_code == 2 and "option reduce must be one of serial, lanes" in r.stderr
    assert "Traceback" not in r.stderr


# ---- blocked BigBird attention through the command line ----------------------------------------

@pytest.fixture(scope="module")
def bigbird(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bb")
    r = run_cli(["gen-data", str(BIGBIRD), "--size", "S=64", "--mask",
                 "M=bigbird:block=16,random=1", "--seed", "3", "-o", str(tmp / "d")])
    assert r.exit_code == 0, r.stderr
    fused = run_cli(["fuse", str(BIGBIRD)])
    assert fused.exit_code == 0, fused.stderr
    (tmp / "a.fused").write_text(fused.stdout)
    low = run_cli(["lower", str(tmp / "a.fused"), "-o", str(tmp / "a.samml")])
    assert low.exit_code == 0, low.stderr
    return tmp


@pytest.mark.parametrize("par", ["parallelize{index=u0,factor=2,reduce=lanes}",
                                 "parallelize{index=u0,factor=4,reduce=lanes}",
                                 "parallelize{index=i,factor=2},"
                                 "parallelize{index=u0,factor=2,reduce=lanes}"])
def test_bigbird_attention_checks(bigbird, par):
    out = bigbird / "par.samml"
    r = run_cli(["opt", str(bigbird / "a.samml"), "-p", f"locate,{par},cleanup", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "spacc1" in out.read_text() and "union" in out.read_text()
    r = run_cli(["simulate", str(out), "--data", str(bigbird / "d"), "--check"])
    assert r.exit_code == 0, r.stderr
    assert "check: O match" in r.stderr


# ---- the schedule pass -------------------------------------------------------------------------

def test_schedule_pass_forwards_reduce():
    """`schedule{reduce=lanes}` applies the program's directives with per-lane reductions: the
    same graph as the explicit passes; `schedule` alone keeps the serial reducer."""
    from tests.opt.test_opt_parallel_schedule import run, spmm
    m = run(spmm(), "schedule{reduce=lanes}")
    explicit = run(spmm(""), "parallelize{index=i,factor=2},"
                             "parallelize{index=u0,factor=3,reduce=lanes}")
    assert m.schedules == [] and print_module(m) == print_module(explicit)
    assert sum(isinstance(n, ir.Spacc1) for n in m.graphs[0].nodes) == 6
    plain = run(spmm(), "schedule")
    assert sum(isinstance(n, ir.Spacc1) for n in plain.graphs[0].nodes) == 2
    check_lanes(spmm(), "schedule{reduce=lanes}", {}, dim=5)
    with pytest.raises(PipelineError, match="pass schedule: option reduce must be one of"):
        parse_pipeline("schedule{reduce=yes}")


def test_bench_bigbird_rows():
    """`make bench-bigbird` prints the reduce=lanes rows (ideal memory) after its own;
    `--reduce lanes` runs only those and the serial baseline."""
    from fuseflowc.bench.bigbird import IDEAL_MEMORY, parallel_configs
    both = [c.label for c in parallel_configs(1024, 16)]
    serial = [c.label for c in parallel_configs(1024, 16, "serial")]
    lanes = parallel_configs(1024, 16, "lanes")
    assert both[:len(serial)] == serial and len(both) == len(serial) + 10
    assert [c.label for c in lanes] == ["b16 ix1 mem=inf"] + both[len(serial):]
    assert all(c.mem == IDEAL_MEMORY for c in lanes)
    assert lanes[-1].par == ("parallelize{index=i,factor=4},"
                             "parallelize{index=u0,factor=4,reduce=lanes}")
    assert "b16 i4xjx4 lanes mem=inf" in [c.label for c in lanes]
    assert all("reduce=lanes" in c.par for c in lanes[1:])
