"""`fuseflowc simulate`: run a SAMML module on input data with the discrete-event simulator."""

from __future__ import annotations

import json
import sys

import click

from ..diagnostics import UserError
from .options import LegacyJsonCommand, json_option, json_out_option


@click.command("simulate", cls=LegacyJsonCommand)
@click.argument("graph", default="-", metavar="GRAPH")
@click.option("--data", "data_dir", required=True, metavar="DIR",
              help="Directory holding the input tensors (one file per tensor; see docs/data.md).")
@click.option("-o", "--output", "out_dir", metavar="OUTDIR",
              help="Write the output tensors into OUTDIR: a new or empty directory, or one "
                   "fuseflowc wrote (its files are replaced; see docs/outputs.md).")
@click.option("--check", is_flag=True,
              help="Compare the outputs with --expect DIR, or else with the reference evaluator "
                   "run on the module's source program; exit 1 with a diff on mismatch. With "
                   "--graph, every tensor the graphs that ran wrote (intermediates too).")
@click.option("--expect", "expect_dir", metavar="DIR",
              help="Directory of expected output tensors for --check.")
@click.option("--program", "program", metavar="PROG",
              help="The source program --check runs the reference evaluator on, instead of the "
                   "one the module records (`source \"...\"`, relative to the module file's "
                   "directory, or to the current directory when the module comes from stdin).")
@json_option
@json_out_option
@click.option("--arch", "arch_file", metavar="FILE",
              help="Architecture file (TOML) overriding sim/arch.toml.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override one architecture value, e.g. channel.depth=2, kind.alu.latency=3, "
                   "memory.latency=0 (repeatable).")
@click.option("--depth", metavar="N|inf",
              help="Channel depth (FIFO entries, 1 to 2**62), or inf (unbounded, as in SAM).")
@click.option("--max-cycles", type=click.IntRange(min=1, max=2**62), default=None, metavar="N",
              help="Stop with an error if any node passes this cycle (a runaway run).")
@click.option("--graph", "graph_name", metavar="NAME",
              help="Report only graph NAME (graphs before it still run: they may write its "
                   "inputs).")
@click.option("--hoist", is_flag=True,
              help="Report the module's decompose steps (the split of a decomposed matrix into "
                   "its parts) but leave them out of the totals: the pattern is static, so the "
                   "split is done once, outside the kernel (docs/language.md, \"Format "
                   "decomposition\").")
@click.option("--engine", type=click.Choice(["fast", "python"]), default=None,
              help="Simulation engine: fast (compiled, sim/cpp) or python (sim/engine.py); the "
                   "same results either way. Default: fast when it is built, else python (said "
                   "in one line on stderr).")
@click.option("--progress", "show_progress", is_flag=True,
              help="Report progress on stderr (plain lines) even when it is not a terminal; a "
                   "terminal gets a transient progress line without asking. Either way only "
                   "after the first second.")
@click.option("--trace", "trace_file", metavar="FILE",
              help="Also write a time-line of the run as Chrome trace-event JSON (open it in "
                   "ui.perfetto.dev or chrome://tracing): a track per node with its busy and "
                   "stalled intervals, channel occupancy and memory bandwidth counters, one "
                   "process per kernel (docs/trace.md).")
@click.option("--trace-limit", type=click.IntRange(min=1_000, max=100_000_000), default=None,
              metavar="N",
              help="Most events in the --trace file (default 500,000, about 50 MB); above it "
                   "nearby intervals are merged and the trace says so.")
@click.option("-q", "--quiet", is_flag=True,
              help="No progress, no notes and no tables on stderr (errors and the --check "
                   "verdict still show).")
def cmd(graph, data_dir, out_dir, check, expect_dir, program, as_json, json_out, arch_file, sets,
        depth, max_cycles, graph_name, hoist, engine, show_progress, trace_file, trace_limit,
        quiet):
    """Simulate the SAMML graphs of GRAPH (a .samml file, or - for stdin) on data.

    Every graph of the module runs in order (tensors written by one feed the later ones). A
    table of cycles, FLOPs and off-chip bytes (seg, crd and vals apart) per kernel, and the
    busiest nodes, goes to stderr, then the energy per kernel in picojoules (ALU operations,
    FIFO hops, on-chip buffer bytes, DRAM bytes, configuration; priced by sim/arch.toml
    [energy]) and the energy-delay product. --json prints every counter (per kernel, node and
    channel, with `energy_pj` per kernel and in total, and the `tiles` of each graph on the
    fabric of sim/arch.toml [fabric], which refuses a module that does not fit it) as JSON on
    stdout instead, --json-out FILE also writes it to FILE. --trace FILE writes a time-line of
    every node's busy and stalled intervals for Perfetto (docs/trace.md). Every output is
    checked before the simulation starts, and all are written (after --check passes), or none.
    Timing comes from sim/arch.toml (see --arch, --set, --depth). A deadlock (nothing can move
    while a writer waits for D) is reported with what every stuck node waits on, exit 1. A run
    longer than a second tells on stderr where it is (on a terminal, or with --progress), on
    either engine: the kernel (k of n), the cycles so far against the cycles `fuseflowc
    estimate`'s cycle model expects of the kernel, the FLOPs done against its expected FLOPs,
    and the time left at the rate so far.
    --quiet silences progress, notes and tables.

    \b
    Examples:
      fuseflowc simulate ir_examples/samml/spmv_row.samml --data d/ --check --expect d/ref
      fuseflowc lower prog.fused | fuseflowc simulate --data d/ --check --json-out stats.json
      fuseflowc simulate g.samml --data d/ --depth 2 --set memory.latency=0 -o out/
      fuseflowc simulate g.samml --data d/ --engine python    # the reference engine
      fuseflowc simulate g.samml --data d/ --depth inf --set memory.latency=0 --set memory.bandwidth=1e9
      fuseflowc simulate g.samml --data d/ --trace run.trace.json   # open in ui.perfetto.dev
      cat g.samml | fuseflowc simulate - --data d/ --check --program prog.ff
    """
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.tiles import check_fits

    from .. import pipeline
    from ..outputs import Outputs

    if program is not None and (expect_dir or not check):
        raise click.UsageError("--program names the program --check evaluates: it needs "
                               "--check and contradicts --expect")
    out = Outputs(graph, data_dir, expect_dir, arch_file, program)
    dests = _Destinations(out, out_dir, as_json, json_out, trace_file)
    recorder = _recorder(trace_file, trace_limit)
    module = pipeline.compile(pipeline.load(graph, kind="samml")).module  # parsed, verified
    graphs = _graphs_up_to(module, graph_name)
    arch = Arch.load(arch_file, sets, depth)
    inputs, sizes = pipeline.load_data(module, data_dir)
    check_fits(module, arch, sizes)
    # the program --check evaluates is found and parsed now, not after a run of hours
    reference = _reference_program(module, graph, program) if check and not expect_dir else None
    if reference is not None:
        out.add_inputs(reference[0])
    if quiet and show_progress:
        raise click.UsageError("--quiet and --progress contradict each other")
    result = _run(module, inputs, sizes, arch, graphs, dict(
        max_cycles=max_cycles, engine=engine, hoist=hoist, trace=recorder), quiet, show_progress)
    if graph_name is not None:
        result.kernels = [k for k in result.kernels if k.graph == graph_name]
    stats = _stats(result, module, arch, sizes, report=not as_json and not quiet)
    outputs = pipeline.written_outputs(module, result)
    if check or expect_dir:
        expected = _expected(module, data_dir, expect_dir, sizes, _comparable(module, result),
                             reference)
        _check(module, result, expected, graphs, graph_name, expect_dir)
    dests.write(out, json.dumps(stats, indent=1, sort_keys=False) + "\n", recorder, outputs)


def _recorder(trace_file: str | None, trace_limit: int | None):
    """The trace recorder of --trace (None without it); --trace-limit needs --trace."""
    if trace_limit is not None and trace_file is None:
        raise click.UsageError("--trace-limit needs --trace FILE")
    if trace_file is None:
        return None
    from fuseflowc.sim.trace import DEFAULT_LIMIT, Recorder
    return Recorder(trace_limit or DEFAULT_LIMIT)


class _Destinations:
    """simulate's outputs, each checked before the run (docs/outputs.md): the tensors
    directory (-o), JSON on stdout (--json) and in a file (--json-out), the trace (--trace)."""

    def __init__(self, out, out_dir, as_json: bool, json_out, trace_file):
        self.tensors = out.directory(out_dir) if out_dir else None
        self.json = [d for d in (out.file("-", "--json") if as_json else None,
                                 out.file(json_out, "--json-out") if json_out is not None
                                 else None) if d is not None]
        self.trace = out.file(trace_file, "--trace") if trace_file is not None else None

    def write(self, out, text_json: str, recorder, outputs: dict) -> None:
        """Write every output, or none (`out`: the Outputs all of them belong to)."""
        from fuseflowc.data.io import save_tensors
        text_trace = None
        if recorder is not None:
            from fuseflowc.sim.trace import trace_text
            text_trace = trace_text(recorder.document())
        with out:
            if self.trace is not None:
                self.trace.write(text_trace)
            if self.tensors is not None:
                save_tensors(self.tensors.path(), outputs)
            for dest in self.json:
                dest.write(text_json)


def _graphs_up_to(module, graph_name: str | None) -> list[str] | None:
    """The graphs `--graph NAME` runs (those up to NAME; None: all); UserError for no such
    graph."""
    if graph_name is None:
        return None
    names = [g.name for g in module.graphs]
    if graph_name not in names:
        raise UserError(f"--graph {graph_name}: no such graph (the module has: "
                        + ", ".join(names) + ")")
    return names[: names.index(graph_name) + 1]


def _run(module, inputs: dict, sizes: dict, arch, graphs, options: dict, quiet: bool,
         show_progress: bool):
    """Simulate (pipeline.simulate with `options`), with the progress line when asked or on a
    terminal, and the simulator's notes on stderr unless `quiet`; the SimResult."""
    from .. import pipeline
    progress = None
    notes: list[str] = []
    if not quiet and (show_progress or sys.stderr.isatty()):
        from fuseflowc.sim.progress import Progress
        progress = Progress(sys.stderr, after=PROGRESS_AFTER, interval=PROGRESS_INTERVAL,
                            estimate=_expected_costs(module, inputs, sizes, arch))
    try:
        result = pipeline.simulate(module, inputs, sizes, arch, graphs, progress=progress,
                                   notes=notes, **options)
    finally:
        if progress is not None:
            progress.close()
    if not quiet:
        for note in notes:
            click.echo(f"simulate: note: {note}", err=True)
    return result


def _stats(result, module, arch, sizes: dict, report: bool) -> dict:
    """The run's counters (sim.report.result_stats with the schedule, energy and tiles), also
    shown as tables on stderr when `report`."""
    from fuseflowc.sim.energy import add_energy, print_energy
    from fuseflowc.sim.report import (
        print_schedule_stats,
        print_tables,
        result_stats,
        schedule_stats,
    )
    from fuseflowc.sim.tiles import add_tiles
    stats = result_stats(result, arch)
    stats["schedule"] = schedule_stats(result, module, arch)
    add_energy(stats, module, arch)
    add_tiles(stats, module, arch, sizes)
    if report:
        from rich.console import Console
        console = Console(file=sys.stderr, width=None if sys.stderr.isatty() else 110)
        print_tables(stats, console, module=module)
        print_energy(stats, console)
        split = "spilled_bytes" in stats["schedule"]
        if split or not arch.fabric.unlimited:
            _print_configurations(stats, module, arch, sizes, console)
        # shown for reused, wavefront and split graphs (other modules' tables stay as they were)
        if split or any(g.template is not None or g.wave is not None for g in module.graphs):
            print_schedule_stats(stats["schedule"], console)
    return stats


def _print_configurations(stats: dict, module, arch, sizes: dict, console) -> None:
    """The table of configurations (tiles, cycles, bytes, spills per graph) on `console`."""
    from fuseflowc.sim.report import configuration_rows, print_configurations
    rows = configuration_rows(
        {k["graph"]: (k["cycles"], k["bytes_read"]["total"] + k["bytes_written"]["total"],
                      k.get("spilled_bytes", 0), k.get("replayed_bytes", 0))
         for k in stats["kernels"]}, module, arch.fabric, arch.element_bytes, sizes)
    print_configurations(rows, arch.fabric, console)


def _comparable(module, result) -> set[str]:
    """What the reference keeps: the module's outputs and every module tensor the run wrote
    (the other intermediates go after their last reader)."""
    return {t.name for t in module.tensors if t.role == "output"} | {
        n for n in result.tensors if module.tensor(n) is not None}


def _check(module, result, expected: dict, graphs, graph_name, expect_dir) -> None:
    """--check: compare by pipeline.outputs_to_check's rule (with --graph, what the graphs that
    ran wrote); UserError with the differences, else the verdict on stderr."""
    from fuseflowc.sim.compare import compare

    from .. import pipeline
    checked, expected = pipeline.outputs_to_check(module, result, expected, graphs)
    if graph_name is not None and not checked:
        raise UserError(f"--check --graph {graph_name}: the graphs up to {graph_name} "
                        f"write no tensor the " + ("--expect directory holds"
                                                   if expect_dir else
                                                   "source program computes"))
    problems = compare(checked, expected)
    if problems:
        raise UserError("simulated outputs differ from the expected ones:\n"
                        + "\n".join(problems))
    click.echo("check: " + ", ".join(sorted(expected)) + " match", err=True)


def _reference_program(module, graph: str, program: str | None):
    """(path, parsed program) of what --check evaluates: `program`, else the module's recorded
    source program; a missing or malformed one is a UserError before the simulation runs."""
    from .. import pipeline
    src = program if program is not None else pipeline.source_program(module, graph)
    return src, pipeline.load_program(str(src))


def _expected(module, data_dir, expect_dir, sizes, keep: set[str], reference) -> dict:
    """The expected tensors: the --expect files of the module's outputs, or else the reference
    evaluator's tensors named in `keep` of the `reference` program (_reference_program) on the
    same data (`outputs_to_check` picks among them)."""
    from .. import pipeline
    if expect_dir:
        from fuseflowc.data.io import load_inputs
        specs = [t.spec() for t in module.tensors if t.role == "output"]
        tensors, _ = load_inputs(expect_dir, specs, sizes)
        return tensors
    # only what can be compared is kept (the other intermediates go after their last reader)
    return pipeline.reference(reference[1], data_dir, sizes, keep=keep)


#: Progress shows only in runs longer than this (seconds), at most once per PROGRESS_INTERVAL.
PROGRESS_AFTER = 1.0
PROGRESS_INTERVAL = 1.0


def _expected_costs(module, inputs: dict, sizes: dict, arch):
    """A function giving `fuseflowc estimate`'s expected FLOPs and cycles per kernel
    (sim.progress.Expected, in execution order) for these inputs on this architecture (None
    when the estimator cannot model the module), computed when first asked: only runs long
    enough to show progress pay for it."""
    def estimate():
        from fuseflowc.estimate import DataStats, estimate_module
        from fuseflowc.estimate.stats import stats_of_fiber
        from fuseflowc.sim.progress import Expected
        stats = DataStats(dict(sizes), {n: stats_of_fiber(n, t) for n, t in sorted(inputs.items())},
                          arch.element_bytes, "simulate inputs", dict(inputs))
        try:
            est = estimate_module(module, stats, arch)
        except UserError:
            return None     # no estimate: the progress line shows the cycles and FLOPs alone
        return {name: Expected(c.flops, c.cycles) for name, c in est.kernels.items()}
    return estimate
