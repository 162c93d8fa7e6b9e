"""`parallelize{index,factor}` never changes what a graph computes: the parallel graph writes
the same tensors as the serial one, bit for bit, with the output coordinates in the same order,
for random factors, indices and densities (empty rows and empty tensors included), on the
hand-written SAMML examples, lowered kernels and every model variant; nested parallelism gives
F1 x F2 lanes; errors name the pass and the option; cycles go down with F on SpMM."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import UserError
from fuseflowc.lang.load import load_program
from fuseflowc.opt import PipelineError, parse_pipeline
from fuseflowc.opt.parallelize import parallelize_graph
from fuseflowc.samml import ir
from fuseflowc.samml.analysis import depth, iterated_indices, stream_contexts
from fuseflowc.samml.load import load_module
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from tests.opt.test_opt_sim import assert_identical, optimized, simulate
from tests.support.lower_harness import fused_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples" / "samml").glob("*.samml"))
KERNELS = ["spmv", "spmm", "sddmm", "add", "mttkrp", "residual", "nested_matmul_fused",
           "multi_output"]
MODELS = sorted((ROOT / "ir_examples" / "models").glob("*/*_*.ff"))

_CACHE: dict = {}

# Loop trip counts cut for these tests: every layer or step of a loop model lowers to the same
# graphs with the same indices, so two layers (three steps) exercise what twelve do, in a sixth
# of the simulation time.
_FEW_ITERATIONS = {"L": 2, "D": 2, "T": 3}
_SHRUNK = Path(tempfile.mkdtemp(prefix="ffc-parallel-"))


def _fewer_iterations(path: Path) -> Path:
    """`path` itself, or a copy of its model directory with the loop dims of _FEW_ITERATIONS cut
    (`dim L = 12` -> `dim L = 2`)."""
    pattern = re.compile(r"^dim (%s) = \d+" % "|".join(_FEW_ITERATIONS), re.M)
    if not pattern.search("".join(p.read_text() for p in path.parent.glob("*.ff"))):
        return path
    copy = _SHRUNK / path.parent.name
    if not copy.exists():
        shutil.copytree(path.parent, copy)
        for ff in copy.glob("*.ff"):
            ff.write_text(pattern.sub(lambda m: f"dim {m[1]} = {_FEW_ITERATIONS[m[1]]}",
                                      ff.read_text()))
    return copy / path.name


def lowered(path: Path, inline_widened: bool = False):
    """(module, fixed sizes) of a program through fuse and lower (cached: lowering is slow)."""
    key = (str(path), inline_widened)
    if key not in _CACHE:
        program = load_program(str(_fewer_iterations(path)))
        sizes = {d.name: d.size for d in program.dims if d.size is not None}
        _CACHE[key] = (print_module(fused_module(program, inline_widened=inline_widened)), sizes)
    text, sizes = _CACHE[key]
    return parse_text(text), dict(sizes)


def indices(module) -> list[str]:
    return sorted({x for g in module.graphs for x in iterated_indices(g)})


def inputs_for(module, sizes: dict, seed: int, density=None, dim: int = 6):
    sizes = dict(sizes)
    # blocked tensors: the smallest size that is a multiple of every block size
    for b in sorted({t.block for t in module.tensors if t.block}):
        dim = dim if dim % b == 0 else (dim // b + 1) * b
    for t in module.tensors:
        for d in t.dims:
            if isinstance(d, str):
                sizes.setdefault(d, dim)
    specs = [t.spec() for t in module.tensors if t.role == "input"]
    return random_inputs(specs, sizes, seed, density), sizes


def check_same(module, pipeline: str, sizes: dict, seed: int = 0, density=None, dim: int = 6):
    """Simulate `module` and `module` after `pipeline` on the same random inputs; every written
    tensor must be identical. Returns (serial, parallel) results."""
    par = optimized(module, pipeline)
    inputs, all_sizes = inputs_for(module, sizes, seed, density, dim)
    a, b = simulate(module, inputs, all_sizes), simulate(par, inputs, all_sizes)
    assert_identical(a, b)
    return a, b


def sparse_density(module, draw) -> dict:
    """A density per input: 0 (an empty tensor), sparse (empty rows likely) or full."""
    return {t.name: draw(st.sampled_from((0.0, 0.1, 0.3, 1.0)))
            for t in module.tensors if t.role == "input"}


# ---- random factors, indices and densities -----------------------------------------------------

@pytest.mark.parametrize("name", ["spmv", "spmm", "sddmm", "mttkrp"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernels_random(name, data):
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
    index = data.draw(st.sampled_from(indices(module)), label="index")
    factor = data.draw(st.integers(1, 8), label="factor")
    density = sparse_density(module, data.draw)
    dim = data.draw(st.integers(1, 7), label="dim")
    check_same(module, f"parallelize{{index={index},factor={factor}}}", sizes,
               data.draw(st.integers(0, 2**16)), density, dim)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_examples_random(path, data):
    module = load_module(str(path))
    index = data.draw(st.sampled_from(indices(module)), label="index")
    factor = data.draw(st.integers(1, 8), label="factor")
    check_same(module, f"parallelize{{index={index},factor={factor}}}", {},
               data.draw(st.integers(0, 2**16)), sparse_density(module, data.draw),
               data.draw(st.sampled_from((4, 8))))  # multiples of every block size


@pytest.mark.parametrize("name", KERNELS)
def test_kernels_every_index(name):
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / f"{name}.ff")
    for k, index in enumerate(indices(module)):
        check_same(module, f"parallelize{{index={index},factor={2 + k % 3}}}", sizes, seed=k)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_models_every_index(path):
    """Every model variant (small sizes), every index it iterates (GPT-3's: every third, to
    keep the suite fast), factors 2-4 in turn."""
    module, sizes = lowered(path)
    xs = indices(module)
    if len(xs) > 8:
        xs = xs[::3]
    for k, index in enumerate(xs):
        check_same(module, f"parallelize{{index={index},factor={2 + k % 3}}}", sizes,
                   seed=k, dim=4)


@pytest.mark.parametrize("rel", ["gcn/gcn_partial.ff", "sae/sae_full.ff",
                                 "graphsage/graphsage_full.ff"])
def test_models_nested(rel):
    module, sizes = lowered(ROOT / "ir_examples" / "models" / rel)
    xs = indices(module)
    for a, b in zip(xs, xs[1:] + xs[:1]):
        check_same(module, f"parallelize{{index={a},factor=2}},parallelize{{index={b},factor=3}}",
                   sizes, dim=4)


# ---- structure ---------------------------------------------------------------------------------

def test_factor_one_is_identity():
    for path in EXAMPLES:
        module = load_module(str(path))
        for x in indices(module):
            assert print_module(optimized(module, f"parallelize{{index={x},factor=1}}")) == \
                print_module(module)


def test_nested_spmm_16_lanes():
    """i by 4 then j by 4: 16 lanes; each j fork is inside an i lane; identical results."""
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    pipeline = "parallelize{index=i,factor=4},parallelize{index=j,factor=4}"
    par = optimized(module, pipeline)
    g = par.graphs[0]
    # the j scan makes the j level (one per i lane); the loads below it run in 16 lanes
    assert sorted(n.lane for n in g.nodes if isinstance(n, ir.Scan) and n.index == "j") == \
        [0, 1, 2, 3]
    assert sorted(n.lane for n in g.nodes if isinstance(n, ir.Array) and n.tensor == "B") == \
        list(range(16))
    forks = [n for n in g.nodes if isinstance(n, ir.Fork)]
    assert {n.lanes for n in forks} == {4}
    # the j forks sit in the i lanes (lanes 0..3), the i forks outside every lane
    assert sorted({n.lane for n in forks if n.lane is not None}) == [0, 1, 2, 3]
    for seed, density in ((0, None), (1, 0.0), (2, 0.2)):
        check_same(module, pipeline, sizes, seed, density, dim=7)


def test_fork_and_join_levels_are_the_index_depth():
    """Every fork/join the pass adds deals whole elements of the index: its level is the depth
    of the index in the stream it splits."""
    module, _ = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    g = module.graphs[0]
    parallelize_graph(g, "i", 3)
    ctx = stream_contexts(g)
    for n in g.nodes:
        if isinstance(n, (ir.Fork, ir.Join)):
            assert n.level == depth(ctx[n.inputs[0]], "i")
            assert n.lanes == 3 and len(n.inputs if isinstance(n, ir.Join) else n.outputs) == 3


def test_reducer_over_the_index_sees_joined_lanes():
    """spmv parallelized at its reduced index (u0): the reducer stays serial after a join."""
    module, sizes = lowered(ROOT / "ir_examples" / "kernels" / "spmv.ff")
    par = optimized(module, "parallelize{index=u0,factor=4}")
    g = par.graphs[0]
    (red,) = [n for n in g.nodes if isinstance(n, ir.Reduce)]
    assert red.lane is None and isinstance(red.inputs[0].producer, ir.Join)
    check_same(module, "parallelize{index=u0,factor=4}", sizes)


def test_cycles_go_down_on_spmm_rows():
    module, _ = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    cycles = []
    for f in (1, 2, 4):
        _, b = check_same(module, f"parallelize{{index=i,factor={f}}}",
                          {"I": 32, "K": 32, "J": 8})
        cycles.append(b.cycles)
    assert cycles[0] > cycles[1] > cycles[2], cycles


# ---- errors ------------------------------------------------------------------------------------

def test_errors():
    module, _ = lowered(ROOT / "ir_examples" / "kernels" / "spmm.ff")
    with pytest.raises(PipelineError, match="parallelize: option factor must be between 1 and 64"):
        parse_pipeline("parallelize{index=i,factor=0}")
    with pytest.raises(PipelineError, match="option index is required"):
        parse_pipeline("parallelize{factor=2}")
    with pytest.raises(UserError, match=r"parallelize\{index=q factor=3\}: option index: no "
                                        r"graph iterates index q.*\n  C: i, j, u0"):
        parse_pipeline("parallelize{index=q,factor=3}")[0].apply(module)
    with pytest.raises(UserError, match="option graph: no graph named D"):
        parse_pipeline("parallelize{index=i,graph=D}")[0].apply(module)
    # an index one graph iterates, asked of a graph that does not
    gcn, _ = lowered(ROOT / "ir_examples" / "models" / "gcn" / "gcn_partial.ff")
    g = gcn.graphs[0]
    other = next(x for x in indices(gcn) if x not in iterated_indices(g))
    with pytest.raises(UserError, match=f"option index: graph {g.name} does not iterate index "
                                        f"{other}"):
        parse_pipeline(f"parallelize{{index={other},graph={g.name}}}")[0].apply(gcn)


@pytest.mark.parametrize("rel", ["kernels/spmm.ff", "kernels/sddmm.ff",
                                 "models/gcn/gcn_partial.ff"])
def test_after_locate(rel):
    """`locate` nodes (a joiner without a dense scan) parallelize like intersections."""
    module, sizes = lowered(ROOT / "ir_examples" / rel)
    located = optimized(module, "locate")
    assert any(isinstance(n, ir.Locate) for g in located.graphs for n in g.nodes)
    for k, index in enumerate(indices(located)):
        check_same(located, f"parallelize{{index={index},factor={2 + k % 3}}}", sizes, seed=k,
                   dim=5)
