"""The stages as one library: load any input, compile it, simulate it, compute its reference,
and choose which outputs are compared with the reference.

The subcommands run one stage each, between processes; every tool that runs several in one
process (`estimate`, `sweep`, the benchmarks, the planner, the test harness) goes through this
module, so that they all compile alike:

    inp = load("model.ff", CompileOptions(order=2))     # sniffs program / fused IR / SAMML
    compiled = compile(inp, CompileOptions(order=2, passes="schedule,cleanup"))
    inputs, sizes = load_data(compiled.module, "data/")
    result = simulate(compiled.module, inputs, sizes)
    problems = check(compiled.module, result, reference(compiled.program, "data/", sizes))

Which tensors are compared is one rule for every caller (`outputs_to_check`): every output the
graphs that ran must write, and every intermediate they wrote, against the expected tensor of
the same name; an output not written is a mismatch.

Nothing heavy is imported here at module level (the commands `fuse`, `opt` and `dot` must not
load numpy, scipy, networkx or rich): every stage is imported when first used. This module
imports no command (fuseflowc.commands): the commands import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .diagnostics import UserError

if TYPE_CHECKING:  # the stages are imported when first used (see above)
    from .fuse.algorithm import FuseOptions
    from .fuse.ir import FusedProgram
    from .lang.ast import Program
    from .lower.build import Analysis
    from .samml.ir import Module

#: The kinds of input `load` reads (fuseflowc.ir_kind's names).
KINDS = ("program", "fused", "samml")

_KIND_NAMES = {"fused": "fused IR", "samml": "a SAMML module"}


@dataclass(frozen=True)
class CompileOptions:
    """How an input is compiled: the options of `fuse` (programs only), lowering's
    verification, and the `opt` pipeline. The defaults are the commands' defaults."""

    schedule: tuple[str, ...] = ()      # directive texts overriding the program's (-s)
    unfused: bool = False               # drop every fusion region
    order: int | str | None = None      # the K-th valid order or "paper" (every region, or:)
    order_region: str | None = None
    orders: dict | None = None          # K per region name (the order sweep); replaces order
    inline_widened: bool = False
    free_input_order: bool = False
    share: bool = False
    verify: bool = True                 # verify the lowered (or loaded SAMML) module
    passes: str | None = None           # opt pipeline text; None: no opt stage at all
    verify_each: bool = True            # verify after every opt pass
    verify_after: bool = False          # else, once after the whole pipeline (`lower`)
    reparse_fused: bool = False         # print and parse back the fused IR, as between
    reparse_module: bool = False        # processes; the module too (verified both times)

    def fuse_options(self) -> FuseOptions:
        """fuseflowc.fuse.algorithm.FuseOptions of these options (the fuse stage's own type;
        callers above the stages give CompileOptions)."""
        from .fuse.algorithm import FuseOptions, pick_orders
        orders = dict(self.orders) if self.orders is not None else \
            pick_orders(self.order, self.order_region)
        return FuseOptions(orders, self.inline_widened, self.free_input_order, self.share)

    def program_only(self) -> tuple[str, ...]:
        """The options given that apply to programs only (fuse's), by their flags."""
        given = (("--schedule", bool(self.schedule)), ("--unfused", self.unfused),
                 ("--order", self.order is not None),
                 ("--order-region", self.order_region is not None),
                 ("--orders", self.orders is not None),
                 ("--inline-widened", self.inline_widened),
                 ("--free-input-order", self.free_input_order), ("--share", self.share))
        return tuple(flag for flag, on in given if on)


def _program_only_error(options: CompileOptions, kind: str) -> UserError | None:
    """The error for fuse options given with fused IR or a SAMML module (None: none given).
    It names `estimate`'s four program options, as it always has, and any other given."""
    given = options.program_only()
    if not given:
        return None
    flags = ["--schedule", "--unfused", "--order", "--inline-widened"]
    flags += [f for f in given if f not in flags]
    return UserError(", ".join(flags[:-1]) + f" and {flags[-1]} apply to programs; this input "
                     f"is {_KIND_NAMES[kind]}")


@dataclass
class Input:
    """A loaded input: its kind ("program", "fused" or "samml"), the path it was read from
    (None for stdin) and the object of that kind (lang.ast.Program, fuse.ir.FusedProgram or
    samml.ir.Module; parsed, a program also checked, a module not yet verified)."""

    kind: str
    source: str | None
    ir: Program | FusedProgram | Module


def load(path: str, options: CompileOptions = CompileOptions(), kind: str | None = None
         ) -> Input:
    """Read PATH ('-' = stdin) and parse it as `kind`, or else as the IR it holds
    (fuseflowc.ir_kind.sniff; a text that shows no kind is parsed as a program, whose errors
    say what is wrong). A program gets `options.schedule` and `options.unfused`; the other
    IRs take no fuse option (UserError naming them, before the text is parsed)."""
    from .files import read_source
    from .ir_kind import sniff
    src = read_source(path)
    source = None if path == "-" else path
    if kind is None:
        kind = sniff(src.text)[0] or "program"
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if kind != "program":
        err = _program_only_error(options, kind)
        if err is not None:
            raise err
    if kind == "samml":
        from .samml.parser import parse_module
        return Input(kind, source, parse_module(src))
    if kind == "fused":
        from .fuse.parser import parse_fused
        return Input(kind, source, parse_fused(src))
    from .lang.load import program_from_source
    return Input(kind, source, program_from_source(src, options.schedule, options.unfused))


def compile_path(path: str, options: CompileOptions = CompileOptions()) -> "Compiled":
    """`load` PATH (sniffing its kind) and `compile` it with `options`."""
    return compile(load(path, options), options)


def load_program(path: str, schedule: tuple[str, ...] = (), unfused: bool = False):
    """The checked program at PATH ('-' = stdin) with schedule overrides (no sniffing: what
    is not a program is reported as such by the parser)."""
    return load(path, CompileOptions(schedule=tuple(schedule), unfused=unfused), "program").ir


@dataclass
class Compiled:
    """What `compile` made: the module, and the program and fused IR it came from (None for
    what the input did not go through); each lowered statement's analysis (for `lower
    --dump-table`) and the opt passes' wall times."""

    module: Module
    fused: FusedProgram | None = None
    program: Program | None = None
    analyses: list[tuple[str, Analysis]] = field(default_factory=list)
    timings: list = field(default_factory=list)

    def fixed_sizes(self) -> dict[str, int]:
        """The dim sizes the program or fused IR fixes (`dim H = 16`); a module records none."""
        if self.fused is None:
            return {}
        return {name: size for name, size in self.fused.dims if size is not None}


def fuse(program: Program, options: CompileOptions = CompileOptions(),
         source: str | None = None) -> FusedProgram:
    """The fused IR of a checked program, with the fuse options of `options`; `source`: the
    program path it records."""
    from .fuse.algorithm import fuse_program
    return fuse_program(program, source, options.fuse_options())


def region_orders(program: Program, options: CompileOptions = CompileOptions(),
                  source: str | None = None, region: str | None = None,
                  listed: int = 0) -> list[dict]:
    """Each region's count of valid dataflow orders (fuseflowc.fuse.orders.region_orders'
    rows; only region `region`, the first `listed` orders listed) of the program fused with
    `options` (their order choice aside: counts do not depend on it)."""
    from dataclasses import replace

    from .fuse.orders import region_orders as rows
    fused = fuse(program, replace(options, order=None, order_region=None, orders=None), source)
    return rows(fused, region, listed)


def _input_of(x) -> Input:
    if isinstance(x, Input):
        return x
    from .fuse.ir import FusedProgram
    from .lang.ast import Program
    from .samml.ir import Module
    for cls, kind in ((Program, "program"), (FusedProgram, "fused"), (Module, "samml")):
        if isinstance(x, cls):
            return Input(kind, None, x)
    raise TypeError(f"compile takes an Input, a Program, a FusedProgram or a Module, not "
                    f"{type(x).__name__}")


def compile(x, options: CompileOptions = CompileOptions(), source: str | None = None,
            stages: list[str] | None = None,
            after: Callable | None = None) -> Compiled:
    """Compile an Input (or a checked Program, a FusedProgram or a Module): fuse a program,
    lower fused IR, verify the module (`options.verify`), run `options.passes`. `source` is
    the program path recorded in the fused IR and the module (default: a program's own path;
    for fused IR, the path it records).
    Fuse options with fused IR or a module are a UserError; an opt pipeline's error is a
    UserError too. "fuse", "lower" and "opt" are appended to `stages` as each starts (a sweep
    row names the stage that failed: the last); `after(pass, module)` is called after each
    pass (`opt --print-after-all`)."""
    inp = _input_of(x)
    if source is None and inp.kind == "program":
        source = inp.source   # fused IR and modules keep the path they record
    if inp.kind != "program":
        err = _program_only_error(options, inp.kind)
        if err is not None:
            raise err
    stage = (stages if stages is not None else []).append
    out = Compiled(None)
    if inp.kind == "samml":
        out.module = inp.ir
    else:
        from .lower.driver import lower_fused
        fused = inp.ir
        if inp.kind == "program":
            stage("fuse")
            out.program = inp.ir
            fused = fuse(inp.ir, options, source)
        out.fused = fused
        if options.reparse_fused:
            from .diagnostics import Source
            from .fuse.parser import parse_fused
            from .fuse.printer import fused_str
            fused = parse_fused(Source("<fused>", fused_str(fused)))
        stage("lower")
        out.module, out.analyses = lower_fused(fused, source)
    if options.verify or options.reparse_module:
        from .samml.rebound import trusted
        from .samml.verify import verify
        verify(out.module, trusted(out.module))
        if options.reparse_module:
            from .diagnostics import Source
            from .samml.parser import parse_module
            from .samml.printer import print_module
            out.module = parse_module(Source("<lowered>", print_module(out.module)))
            verify(out.module)
    if options.passes is not None:
        from .opt.pipeline import PipelineError, parse_pipeline, run_pipeline
        stage("opt")
        try:
            out.timings = run_pipeline(out.module, parse_pipeline(options.passes),
                                       verify_each=options.verify_each, after=after)
        except PipelineError as e:
            raise UserError(str(e)) from None
        if options.verify_after and not options.verify_each:
            _verify_optimized(out.module, options.passes)
    return out


def _verify_optimized(module, passes: str) -> None:
    """Verify `module` after pipeline `passes` ran without a check between passes; an error
    says how to find the pass that broke it."""
    from .samml.rebound import trusted
    from .samml.verify import verify
    try:
        verify(module, trusted(module))
    except UserError as e:
        raise UserError(f"the module does not verify after the pipeline `{passes}` (`lower "
                        f"-O0 | opt -p '{passes}'` verifies after each pass and names the "
                        "one that broke it)", diagnostics=e.diagnostics) from None


def load_data(module, data_dir, sizes: dict | None = None) -> tuple[dict, dict]:
    """(input tensors, dim sizes) of the module's inputs, read from DATA_DIR as `simulate
    --data` reads them (fuseflowc.data.io.load_inputs)."""
    from .data.io import load_inputs
    inputs, bound = load_inputs(data_dir, [t.spec() for t in module.tensors
                                           if t.role == "input"], sizes)
    from .samml.block_sizes import require_blocks
    require_blocks(module, bound)
    return inputs, bound


def load_program_data(program, data_dir, sizes: dict | None = None) -> tuple[dict, dict]:
    """(input tensors, dim sizes) of a checked program's inputs, read from DATA_DIR as the
    program declares them (which a module may store otherwise: see `as_declared`)."""
    from .data.io import load_inputs
    from .lang.decompose import require_sizes
    names = set(program.inputs)
    inputs, bound = load_inputs(data_dir, [s for s in program.specs() if s.name in names], sizes)
    require_sizes(program, bound)
    return inputs, bound


def as_declared(module, inputs: dict) -> dict:
    """The inputs stored as the module declares them, as `simulate --data` loads them (an input
    may be declared in a permuted format standing for fuse's permuted copy)."""
    from .data.io import RawTensor, convert
    out = dict(inputs)
    for t in module.tensors:
        if t.role == "input" and t.name in inputs and inputs[t.name].format != t.format:
            out[t.name] = convert(RawTensor.from_fiber(inputs[t.name]), t.spec(), t.name)
    return out


def simulate(module, inputs: dict, sizes: dict, arch=None, graphs: list[str] | None = None, *,
             max_cycles: int | None = None, progress=None, engine: str | None = None,
             hoist: bool = False, notes: list[str] | None = None, trace=None):
    """Run the module's graphs (or the first ones, `graphs`) on `inputs` with the simulator
    (fuseflowc.sim.build.Simulator; `arch` None: sim/arch.toml); its SimResult. The
    simulator's notes (why a graph ran on the Python engine) are added to `notes`. `trace`:
    None or a fuseflowc.sim.trace.Recorder the run's activations feed."""
    from .sim.build import Simulator
    sim = Simulator(module, inputs, sizes, arch, max_cycles, progress, engine=engine,
                    hoist=hoist, trace=trace)
    result = sim.run(graphs)
    if notes is not None:
        notes.extend(sim.notes)
    return result


def source_program(module, module_path: str) -> Path:
    """The path of the program the module was compiled from (its recorded `source`, relative
    to the module file's directory, or to the cwd for `-`: files.recorded_base); UserError when
    it names none or the file is gone."""
    if not module.source:
        raise UserError("--check needs --expect DIR or --program PROG: the module names no "
                        "source program")
    from .files import missing_recorded, recorded_path
    src = recorded_path(module.source, module_path)
    if src is None:
        raise missing_recorded("the module's source program", module.source, module_path,
                               "--program PROG")
    return src


def reference(program, data, sizes: dict | None = None, keep: set[str] | None = None) -> dict:
    """The reference evaluator's tensors of a checked program (fuseflowc.reference, which
    shares no code with the compiler), on `data`: the input tensors, or a directory holding
    them (the program's own input declarations, with `sizes`). `keep`: only these tensors are
    returned, and every other intermediate is let go after its last reader (at the paper's
    sizes, gigabytes); None: all of them."""
    from .reference.evaluate import evaluate
    if not isinstance(data, dict):
        data, _ = load_program_data(program, data, sizes)
    return evaluate(program, data, keep=keep)


def written_outputs(module: Module, result) -> dict:
    """The module's declared outputs the simulation wrote (what `simulate -o` saves)."""
    return {t.name: result.tensors[t.name] for t in module.tensors
            if t.role == "output" and t.name in result.tensors}


def outputs_to_check(module: Module, result, reference: dict,
                     graphs: list[str] | None = None) -> tuple[dict, dict]:
    """(actual, expected): the simulated tensors and the `reference` tensors (the reference
    evaluator's, or files of expected outputs) to compare, by the one rule every caller uses:
    what the run was to produce, that the reference holds: every declared output of the graphs
    that ran (`graphs`; None: all of them), and for a run that stopped early (`graphs` given:
    `simulate --graph`) also every intermediate (role temp) it wrote, its results then. An
    output that was due but not written is in `expected` only: `compare` reports it. (Graphs
    after the last that ran did not: their outputs are not due. Inputs are not compared.)"""
    from .samml.ir import WriteVals
    if isinstance(graphs, str):
        raise TypeError("graphs is a list of graph names, not a str")
    due = {t.name for t in module.tensors if t.role == "output"}
    if graphs is not None:
        ran = set(graphs)
        due &= {n.tensor for g in module.graphs if g.name in ran for n in g.nodes
                if isinstance(n, WriteVals)}
    made = {n for n in result.tensors if graphs is not None
            and module.tensor(n) is not None and module.tensor(n).role == "temp"}
    names = sorted((due | made) & set(reference))
    expected = {k: reference[k] for k in names}
    actual = {k: result.tensors[k] for k in names if k in result.tensors}
    return actual, expected


def check(module: Module, result, reference: dict, graphs: list[str] | None = None
          ) -> list[str]:
    """fuseflowc.sim.compare's messages for the tensors `outputs_to_check` picks (empty: all
    match)."""
    from .sim.compare import compare
    return compare(*outputs_to_check(module, result, reference, graphs))


def import_stages() -> None:
    """Import every stage a compile, simulation and check runs: before a deadline starts (a
    timeout that interrupted an import would leave half-initialized modules behind for the
    next one), or before forking workers (each then starts with them loaded)."""
    import fuseflowc.data.io  # noqa: F401
    import fuseflowc.fuse.algorithm  # noqa: F401
    import fuseflowc.lang.load  # noqa: F401
    import fuseflowc.lower.driver  # noqa: F401
    import fuseflowc.opt.pipeline  # noqa: F401
    import fuseflowc.reference.evaluate  # noqa: F401
    import fuseflowc.reference.gendata  # noqa: F401
    import fuseflowc.samml.verify  # noqa: F401
    import fuseflowc.sim.arch  # noqa: F401
    import fuseflowc.sim.build  # noqa: F401
    import fuseflowc.sim.compare  # noqa: F401
    import fuseflowc.sim.report  # noqa: F401
