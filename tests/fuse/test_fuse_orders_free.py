"""`fuse --free-input-order`: the storage orders of tensors read from memory leave the POG, and
every discordant view reads a permuted copy. Counts, IR invariants, every order of the nested
matmul (fused and unfused) through fuse | lower | simulate against the evaluator, the permute
steps' cost in the simulation, the order sweep's summary (fuseflowc.bench.orders), and the
CLI."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

from fuseflowc import pipeline
from fuseflowc.bench.orders import OrderRun, summary_lines
from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
from fuseflowc.fuse.orders import region_pog
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.fuse.printer import fused_str
from fuseflowc.lang.load import load_program
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
SWEEP = str(ROOT / "ir_examples/kernels/nested_matmul_sweep.ff")
SIZES = {"I": 5, "K": 4, "J": 6, "L": 3}


def _fuse(path=SWEEP, unfused=False, **kw):
    return fuse_program(load_program(path, (), unfused), None, FuseOptions(**kw))


def _inputs(program, seed=0, density=0.4):
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    return random_inputs(specs, SIZES, seed, {"A": density, "B": density})


@dataclass
class Run:
    """One order of a program through the pipeline, as `fuseflowc sweep` runs it."""

    ks: dict
    status: str = "ok"
    cycles: int = 0
    flops: int = 0
    permute_cycles: int = 0
    copies: tuple = ()


def run_order(program, inputs, sizes, ks) -> Run:
    """Fuse with order ks[R] of each region R (free input order), lower (the fused IR and the
    module printed and parsed back, as between processes), simulate and compare the outputs
    with the reference evaluator's; a UserError (an order lowering cannot build) is the
    status."""
    run = Run(dict(ks))
    options = pipeline.CompileOptions(orders=dict(ks), free_input_order=True,
                                      reparse_fused=True, reparse_module=True)
    try:
        compiled = pipeline.compile(program, options)
    except UserError as e:
        run.status = "error: " + str(e).splitlines()[0]
        return run
    module = compiled.module
    run.copies = tuple(t.name for t in compiled.fused.tensors if t.role == "permuted")
    result = pipeline.simulate(module, pipeline.as_declared(module, inputs), dict(sizes))
    run.cycles = result.cycles
    run.flops = sum(k.flops for k in result.kernels)
    run.permute_cycles = sum(k.cycles for k in result.kernels if k.graph.startswith("permute"))
    problems = pipeline.check(module, result, pipeline.reference(program, inputs))
    if problems or not pipeline.written_outputs(module, result):
        run.status = "mismatch: " + ("; ".join(problems) or "no output written")
    return run


def sweep(program, inputs, sizes) -> list[Run]:
    """Every combination of the regions' free orders (the last region varying fastest)."""
    fp = pipeline.fuse(program, pipeline.CompileOptions(free_input_order=True))
    space = {r.name: region_pog(r).count() for r in fp.regions}
    return [run_order(program, inputs, sizes, dict(zip(space, ks)))
            for ks in itertools.product(*(range(n) for n in space.values()))]


# ---- counts --------------------------------------------------------------------------------

def test_counts_of_the_nested_matmul():
    counts = lambda fp: {r.name: region_pog(r).count() for r in fp.regions}  # noqa: E731
    assert counts(_fuse()) == {"abc": 1}
    # only D's output format (i -> l) is left: 4! / 2
    assert counts(_fuse(free_input_order=True)) == {"abc": 12}
    assert counts(_fuse(unfused=True)) == {"E": 1, "D": 1}
    assert counts(_fuse(unfused=True, free_input_order=True)) == {"E": 3, "D": 3}


def test_free_pog_has_no_format_edges_but_keeps_order_directives_and_outputs():
    fp = _fuse(free_input_order=True)
    assert {(e.src, e.dst, e.kind) for e in fp.regions[0].edges} == {("i", "l", "output")}
    # an order directive still constrains (the paper's "local constraints")
    p = load_program(SWEEP, ("order D: i -> j -> l",))
    fp = fuse_program(p, None, FuseOptions(free_input_order=True))
    assert {e.kind for e in fp.regions[0].edges} == {"output", "order"}
    assert region_pog(fp.regions[0]).count() == 4  # the chain i -> u0 -> l, u1 anywhere


def test_option_off_is_unchanged():
    assert fused_str(_fuse()) == fused_str(_fuse(free_input_order=False))
    assert "permuted" not in fused_str(_fuse())


def test_cli_orders_counts_the_larger_space():
    r = run_cli(["orders", SWEEP, "--free-input-order", "--json"])
    assert r.exit_code == 0, r.stderr
    assert '"orders": 12' in r.stdout
    r = run_cli(["orders", SWEEP, "--json"])
    assert '"orders": 1,' in r.stdout


# ---- the IR of every order ----------------------------------------------------------------

@pytest.mark.parametrize("unfused", [False, True])
def test_every_order_reads_memory_concordantly(unfused):
    base = _fuse(unfused=unfused, free_input_order=True)
    for r0 in base.regions:
        pog = region_pog(r0)
        for k in range(pog.count()):
            fp = _fuse(unfused=unfused, free_input_order=True, orders={r0.name: k})
            text = fused_str(fp)
            assert fused_str(parse_fused(Source("<ir>", text), verify=True)) == text
            r = fp.region(r0.name)
            rank = {n: p for p, n in enumerate(r.index_names())}
            assert tuple(rank[n] for n in r.order) == pog.unrank(k)
            pos = {n: p for p, n in enumerate(r.order)}
            decls = {t.name: t for t in fp.tensors}
            for v in r.views:
                if v.kind == "inline":
                    continue
                t = decls[v.tensor]
                stored = [v.indices[m] for m in t.format.mode_order]
                assert [pos[x] for x in stored] == sorted(pos[x] for x in stored), (k, v)
                assert tuple(stored) == v.mode_order
                if v.kind == "permuted":
                    orig = decls[v.copy_of]
                    assert t.format.levels == orig.format.levels
                    assert t.format.mode_order != orig.format.mode_order
                    assert t.role == "permuted" and t.copy_of == orig.name
                    # the expressions read the copy, never the original, through this view
                    assert f"{v.tensor}[{','.join(v.indices)}]" in text


def test_copies_are_shared_and_named_deterministically():
    # order 0 (i -> l -> u0 -> u1) reads B and C against their storage: B__T and C__T
    fp = _fuse(free_input_order=True)
    copies = {t.name: (t.copy_of, t.format.name()) for t in fp.tensors if t.role == "permuted"}
    assert copies == {"B__T": ("B", "csc"), "C__T": ("C", "(dense, dense) order (1, 0)")}
    assert fused_str(_fuse(free_input_order=True)) == fused_str(fp)


def test_copy_names_never_shadow_program_tensors():
    text = Path(SWEEP).read_text().replace("tensor D[I, L] : dense",
                                           "tensor D[I, L] : dense\ntensor B__T[K, J] : csr")
    from fuseflowc.lang.checker import check
    from fuseflowc.lang.parser import parse_program
    p = check(parse_program(Source("x.ff", text)))
    fp = fuse_program(p, None, FuseOptions(free_input_order=True))
    assert "B__T_2" in {t.name for t in fp.tensors if t.role == "permuted"}


# ---- through the pipeline ------------------------------------------------------------------

def test_every_fused_order_checks():
    """All 12 orders of the fused nested matmul (Figure 17: 12 of 12) simulate and match the
    evaluator; the two with the reduction over k outermost and three indices inside it (9 and
    11) through the order-3 sparse accumulator `spacc3`, which no other order needs."""
    p = load_program(SWEEP)
    inputs = _inputs(p)
    runs = sweep(p, inputs, SIZES)
    assert len(runs) == 12
    assert {r.ks["abc"]: r.status for r in runs if r.status != "ok"} == {}
    for r in runs:
        assert r.cycles > 0 and r.flops > 0
    fp = pipeline.CompileOptions
    uses = {k for k in range(12)
            if any(n.KIND == "spacc3" for g in pipeline.compile(
                p, fp(orders={"abc": k}, free_input_order=True)).module.graphs for n in g.nodes)}
    assert uses == {9, 11}


def test_every_unfused_order_pair_checks():
    p = load_program(SWEEP, (), True)
    runs = sweep(p, _inputs(p, seed=2), SIZES)
    assert len(runs) == 9
    assert [r.status for r in runs] == ["ok"] * 9
    # a materialized intermediate read against its storage gets a copy too: E__T
    assert any("E__T" in r.copies for r in runs)


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_extreme_densities(density):
    p = load_program(SWEEP)
    inputs = _inputs(p, seed=5, density=density)
    for k in (0, 5, 8):
        r = run_order(p, inputs, SIZES, {"abc": k})
        assert r.status == "ok", r.status


def test_permute_steps_are_charged():
    p = load_program(SWEEP)
    inputs = _inputs(p, seed=1)
    concordant = run_order(p, inputs, SIZES, {"abc": 5})  # i -> u1 -> u0 -> l
    assert concordant.copies == () and concordant.permute_cycles == 0
    r = run_order(p, inputs, SIZES, {"abc": 0})  # copies of B and C
    assert set(r.copies) == {"B__T", "C__T"}
    assert r.permute_cycles > 0 and r.cycles > r.permute_cycles
    # the module has the steps and the simulation reports them as kernels with bytes
    from fuseflowc.lower.driver import lower_fused
    from fuseflowc.pipeline import as_declared, simulate
    fp = fuse_program(p, None, FuseOptions(free_input_order=True))
    module = lower_fused(fp)[0]
    assert sorted(s.name for s in module.steps) == ["permute B -> B__T", "permute C -> C__T"]
    result = simulate(module, as_declared(module, inputs), SIZES)
    steps = [k for k in result.kernels if k.graph.startswith("permute")]
    assert len(steps) == 2
    for k in steps:
        assert k.cycles > 0
        assert sum(k.bytes_read().values()) > 0 and sum(k.bytes_written().values()) > 0
    assert result.cycles == r.cycles


def test_pipeline_through_the_cli(tmp_path):
    data = tmp_path / "data"
    sizes = [f"--size={d}={n}" for d, n in SIZES.items()]
    assert run_cli(["gen-data", SWEEP, "-o", str(data), "--seed", "4", *sizes]).exit_code == 0
    fused = run_cli(["fuse", SWEEP, "--free-input-order", "--order", "6"])
    assert fused.exit_code == 0 and "B__T" in fused.stdout
    low = run_cli(["lower"], input=fused.stdout)
    assert low.exit_code == 0, low.stderr
    assert "permute B -> B__T" in low.stdout
    src = tmp_path / "m.samml"
    src.write_text(low.stdout)
    sim = run_cli(["simulate", str(src), "--data", str(data), "--check"])
    assert sim.exit_code == 0, sim.stderr
    assert "check: D match" in sim.stderr and "permute B -> B__T" in sim.stderr


# ---- the sweep's report -------------------------------------------------------------------

def test_summary_lines():
    runs = [OrderRun("fused", {"r": (0, ("i", "j"))}, (), 100),
            OrderRun("fused", {"r": (1, ("j", "i"))}, ("B__T",), 400, 30),
            OrderRun("fused", {"r": (2, ("k", "i"))}, status="error: no")]
    lines = summary_lines(runs)
    assert len(lines) == 4
    assert lines[0].startswith("fused    r#0 i -> j ")
    assert "norm 0.2500" in lines[0] and "4.00x" in lines[0] and "copies -" in lines[0]
    assert "norm 1.0000" in lines[1] and "copies B__T" in lines[1]
    assert lines[2].endswith("error: no")
    assert lines[3] == "orders: 3, best/worst = 4.00x (1 did not compile or check)"
