"""fuseflowc.pipeline: the stages as one library (load any input, compile, simulate, reference,
which outputs are compared). The commands, the sweep and the harnesses go through it, so what
it computes must be what the CLI chain `fuse | lower | opt | simulate --check` computes."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fuseflowc import pipeline
from fuseflowc.diagnostics import UserError
from fuseflowc.pipeline import CompileOptions
from tests.support.golden import run_cli, run_pipeline
from tests.support.paths import ROOT

KERNELS = ROOT / "ir_examples" / "kernels"
SPMV = KERNELS / "spmv.ff"
NESTED = KERNELS / "nested_matmul_fused.ff"     # D = (A B) C fused: E is an intermediate

FIXED = """dim I, J = 6
tensor A[I, J] : csr
tensor x[J] : dense
tensor y[I] : dense
y[i] = A[i,j] * x[j]
"""


def _text(*args: str, input: str | None = None) -> str:
    r = run_cli(list(args), input=input)
    assert r.exit_code == 0, r.stderr
    return r.stdout


@pytest.fixture
def spmv_files(tmp_path):
    """spmv as a program, as fused IR and as a SAMML module (written by the CLI as lowered,
    `lower -O0`: the library's `compile` runs the passes it is given, none by default)."""
    fused = tmp_path / "spmv.fused"
    fused.write_text(_text("fuse", str(SPMV)))
    samml = tmp_path / "spmv.samml"
    samml.write_text(_text("lower", "-O0", str(fused)))
    return {"program": str(SPMV), "fused": str(fused), "samml": str(samml)}


# ---- loading: the kind is sniffed ----------------------------------------------------------

@pytest.mark.parametrize("kind", pipeline.KINDS)
def test_load_sniffs_each_kind(spmv_files, kind):
    from fuseflowc.fuse.ir import FusedProgram
    from fuseflowc.lang.ast import Program
    from fuseflowc.samml.ir import Module
    inp = pipeline.load(spmv_files[kind])
    assert inp.kind == kind
    assert inp.source == spmv_files[kind]
    assert isinstance(inp.ir, {"program": Program, "fused": FusedProgram, "samml": Module}[kind])


def test_every_kind_compiles_to_the_module_the_cli_writes(spmv_files):
    from fuseflowc.samml.printer import print_module
    want = run_pipeline(f"fuseflowc fuse {SPMV} | fuseflowc lower -O0").stdout
    assert "graph" in want
    for kind, path in spmv_files.items():
        assert print_module(pipeline.compile_path(path).module) == want, kind


def test_load_reads_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(SPMV.read_text()))
    inp = pipeline.load("-")
    assert (inp.kind, inp.source) == ("program", None)


def test_a_text_of_no_kind_is_reported_as_a_program(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("what is this\n")
    with pytest.raises(UserError) as e:
        pipeline.load(str(f))
    assert e.value.format().startswith(f"{f}:1:")


def test_a_given_kind_is_not_sniffed(spmv_files):
    """`lower` reads fused IR only: a program is the parser's error, naming what to run."""
    with pytest.raises(UserError, match="this is a program, not fused IR"):
        pipeline.load(spmv_files["program"], kind="fused")
    with pytest.raises(ValueError, match="kind must be one of"):
        pipeline.load(spmv_files["program"], kind="lark")


def test_load_applies_schedule_and_unfused_to_programs():
    p = pipeline.load(str(NESTED), CompileOptions(unfused=True)).ir
    assert len(pipeline.fuse(p).regions) == 2
    assert len(pipeline.fuse(pipeline.load(str(NESTED)).ir).regions) == 1
    p = pipeline.load_program(str(SPMV), ("order y: j -> i",))
    assert pipeline.fuse(p).regions[0].order[0] != pipeline.fuse(
        pipeline.load_program(str(SPMV))).regions[0].order[0]


# ---- options that apply to programs only ---------------------------------------------------

LEGACY = "--schedule, --unfused, --order and --inline-widened apply to programs"


@pytest.mark.parametrize("kind,what", [("fused", "fused IR"), ("samml", "a SAMML module")])
@pytest.mark.parametrize("options", [CompileOptions(schedule=("order y: j -> i",)),
                                     CompileOptions(unfused=True), CompileOptions(order=0),
                                     CompileOptions(inline_widened=True)])
def test_program_options_on_other_kinds_are_errors(spmv_files, kind, what, options):
    with pytest.raises(UserError) as e:
        pipeline.load(spmv_files[kind], options)
    assert str(e.value) == f"{LEGACY}; this input is {what}"
    inp = pipeline.load(spmv_files[kind])
    with pytest.raises(UserError) as e:   # the same when the input was loaded without them
        pipeline.compile(inp, options)
    assert str(e.value) == f"{LEGACY}; this input is {what}"


@pytest.mark.parametrize("options,flags", [
    (CompileOptions(share=True), "--inline-widened and --share"),
    (CompileOptions(order=1, order_region="y", free_input_order=True),
     "--inline-widened, --order-region and --free-input-order"),
    (CompileOptions(orders={"y": 0}), "--inline-widened and --orders")])
def test_library_only_fuse_options_are_named_too(spmv_files, options, flags):
    """Options `estimate` does not have: the message names them after its own four."""
    fused = pipeline.load(spmv_files["fused"]).ir
    with pytest.raises(UserError) as e:
        pipeline.compile(fused, options)
    assert str(e.value) == (f"--schedule, --unfused, --order, {flags} apply to programs; "
                            f"this input is fused IR")


def test_program_options_are_checked_before_parsing(tmp_path):
    """A SAMML module with a syntax error and --order: the option is the error (as today)."""
    f = tmp_path / "bad.samml"
    f.write_text("graph g {\n  this is not samml\n}\n")
    with pytest.raises(UserError, match="this input is a SAMML module"):
        pipeline.load(str(f), CompileOptions(order=1))


def test_compile_takes_what_load_makes_or_the_objects():
    with pytest.raises(TypeError, match="not str"):
        pipeline.compile(str(SPMV))


# ---- compiling -----------------------------------------------------------------------------

def test_stages_are_reported_in_order(spmv_files):
    seen: list[str] = []
    pipeline.compile(pipeline.load(str(SPMV)), CompileOptions(passes="cleanup"),
                     stages=seen)
    assert seen == ["fuse", "lower", "opt"]
    seen.clear()
    pipeline.compile(pipeline.load(spmv_files["fused"]), stages=seen)
    assert seen == ["lower"]
    seen.clear()
    pipeline.compile(pipeline.load(spmv_files["samml"]), CompileOptions(passes=""),
                     stages=seen)
    assert seen == ["opt"]


def test_a_bad_pipeline_is_a_user_error_at_the_opt_stage():
    seen: list[str] = []
    with pytest.raises(UserError, match="unknown pass 'nosuchpass'"):
        pipeline.compile(pipeline.load(str(SPMV)), CompileOptions(passes="nosuchpass"),
                         stages=seen)
    assert seen[-1] == "opt"


def test_passes_match_the_opt_command(spmv_files):
    from fuseflowc.samml.printer import print_module
    want = _text("opt", spmv_files["samml"], "-p", "cleanup")
    got = pipeline.compile_path(str(SPMV), CompileOptions(passes="cleanup"))
    assert print_module(got.module) == want
    assert [t.name for t in got.timings] == ["cleanup"]


def test_reparsing_changes_nothing():
    from fuseflowc.samml.printer import print_module
    p = pipeline.load_program(str(NESTED))
    plain = print_module(pipeline.compile(p).module)
    again = pipeline.compile(p, CompileOptions(reparse_fused=True, reparse_module=True))
    assert print_module(again.module) == plain


def test_fixed_sizes(tmp_path, spmv_files):
    f = tmp_path / "fixed.ff"
    f.write_text(FIXED)
    assert pipeline.compile_path(str(f)).fixed_sizes() == {"J": 6}
    assert pipeline.compile_path(spmv_files["program"]).fixed_sizes() == {}
    assert pipeline.compile_path(spmv_files["samml"]).fixed_sizes() == {}


def test_the_recorded_source():
    """A program's module records the program's path; fused IR keeps the path it records."""
    m = pipeline.compile_path(str(SPMV)).module
    assert m.source == str(SPMV)
    fused = pipeline.fuse(pipeline.load_program(str(SPMV)), source="elsewhere.ff")
    assert pipeline.compile(fused).module.source == "elsewhere.ff"
    assert pipeline.compile(fused, source="there.ff").module.source == "there.ff"


# ---- which outputs are compared: the one rule -----------------------------------------------

def _fake():
    """A module declaring input A, intermediate T and outputs Y and Z (graph g1 writes T and Y,
    g2 writes Z); a simulation that wrote A, T and Y (not Z); a reference of T, Y, Z and W (a
    tensor the module does not have)."""
    from fuseflowc.samml.ir import WriteVals
    roles = {"A": "input", "T": "temp", "Y": "output", "Z": "output"}
    tensors = [SimpleNamespace(name=n, role=r) for n, r in roles.items()]
    graphs = [SimpleNamespace(name="g1", nodes=[WriteVals(tensor="T"), WriteVals(tensor="Y")]),
              SimpleNamespace(name="g2", nodes=[WriteVals(tensor="Z")])]
    module = SimpleNamespace(tensors=tensors, graphs=graphs,
                             tensor=lambda n: next((t for t in tensors if t.name == n), None))
    result = SimpleNamespace(tensors={"A": "a", "T": "t", "Y": "y"})
    ref = {"W": "W", "T": "T", "Y": "Y", "Z": "Z"}
    return module, result, ref


def test_check_rule_whole_run():
    """Every declared output is due (Z, unwritten, is expected: a mismatch); intermediates,
    inputs and tensors the module lacks are not compared."""
    module, result, ref = _fake()
    assert pipeline.outputs_to_check(module, result, ref) == (
        {"Y": "y"}, {"Y": "Y", "Z": "Z"})
    assert pipeline.check(module, SimpleNamespace(tensors={}), {"Y": ref["Y"]}) == [
        "Y: not written by the simulation"]


def test_check_rule_graphs_that_ran():
    """simulate --check --graph g1: g2 did not run, so Z is not due; the intermediate T that
    g1 wrote is one of its results."""
    module, result, ref = _fake()
    assert pipeline.outputs_to_check(module, result, ref, ["g1"]) == (
        {"T": "t", "Y": "y"}, {"T": "T", "Y": "Y"})
    with pytest.raises(TypeError, match="not a str"):   # (a rule name of before, say)
        pipeline.outputs_to_check(module, result, ref, "all-declared")


def test_check_rule_reference_subset():
    """Only what the reference holds is compared (bench.decompose passes {"C": ...})."""
    module, result, _ = _fake()
    assert pipeline.outputs_to_check(module, result, {"Y": "Y"}) == ({"Y": "y"}, {"Y": "Y"})


def _spmv_run(seed: int = 0):
    from fuseflowc.data.gen import random_inputs
    p = pipeline.load_program(str(SPMV))
    module = pipeline.compile(p).module
    sizes = {"I": 7, "J": 5}
    inputs = random_inputs([s for s in p.specs() if s.name in set(p.inputs)], sizes, seed)
    return p, module, inputs, sizes, pipeline.simulate(module, inputs, sizes)


def test_check_against_the_reference():
    p, module, inputs, sizes, result = _spmv_run()
    ref = pipeline.reference(p, inputs)
    assert pipeline.check(module, result, ref) == []
    other = _spmv_run(seed=9)[2]    # the reference of other inputs: y differs
    problems = pipeline.check(module, result, pipeline.reference(p, other))
    assert problems and problems[0].startswith("y: ")


def test_reference_from_a_data_directory(tmp_path):
    from fuseflowc.data.io import save_tensors
    p, module, inputs, sizes, result = _spmv_run(3)
    save_tensors(tmp_path, inputs)
    loaded, got_sizes = pipeline.load_data(module, tmp_path)
    assert got_sizes == sizes and sorted(loaded) == ["A", "x"]
    from fuseflowc.sim.compare import compare
    assert compare(pipeline.reference(p, tmp_path), pipeline.reference(p, inputs)) == []
    assert pipeline.check(module, result, pipeline.reference(p, tmp_path, sizes)) == []


def test_simulate_matches_the_cli(tmp_path, spmv_files):
    """Cycles and the check of `simulate --check` (which goes through the same functions)."""
    import json

    from fuseflowc.data.io import save_tensors
    p, module, inputs, sizes, result = _spmv_run(5)
    (tmp_path / "d").mkdir()
    save_tensors(tmp_path / "d", inputs)
    stats = json.loads(_text("simulate", spmv_files["samml"], "--data", str(tmp_path / "d"),
                             "--check", "--json"))
    assert stats["total"]["cycles"] == result.cycles


def test_deterministic():
    from fuseflowc.samml.printer import print_module
    runs = [_spmv_run(1) for _ in range(2)]
    assert print_module(runs[0][1]) == print_module(runs[1][1])
    assert runs[0][4].cycles == runs[1][4].cycles
    assert [k.cycles for k in runs[0][4].kernels] == [k.cycles for k in runs[1][4].kernels]


def test_notes_are_collected():
    p, module, inputs, sizes, _ = _spmv_run()
    notes: list[str] = []
    pipeline.simulate(module, inputs, sizes, engine="python", notes=notes)
    assert notes == []     # asked for python: nothing to explain


# ---- layering ------------------------------------------------------------------------------

def test_importing_the_pipeline_loads_nothing_heavy():
    code = ("import sys, fuseflowc.pipeline; "
            "bad = [m for m in ('numpy', 'scipy', 'networkx', 'rich', 'lark') "
            "if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_library_module_imports_the_commands():
    """fuseflowc.commands is the CLI's: libraries (pipeline, sweep, bench, ...) must not use
    it (estimate_accuracy once imported the private commands.estimate._module)."""
    pkg = ROOT / "fuseflowc"
    bad = []
    for f in sorted(pkg.rglob("*.py")):
        rel = f.relative_to(pkg)
        if rel.parts[0] == "commands" or rel == Path("cli.py"):
            continue
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:   # relative: resolve against the file's package
                    parts = ("fuseflowc",) + rel.parent.parts
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ((base,) if base else ()))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            if any(n == "fuseflowc.commands" or n.startswith("fuseflowc.commands.")
                   for n in names):
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, bad
