"""`fuseflowc plan`: choose fusion regions, orders and schedules by estimated cost (docs/plan.md)."""

from __future__ import annotations

import json
import sys

import click

from ..diagnostics import UserError
from ..fabric import PRESETS
from .options import free_input_order_option, inline_widened_option, json_option, output_option


@click.command("plan")
@click.argument("program", metavar="PROG", required=False)
@click.option("--data", "data_dir", metavar="DIR",
              help="Measure sizes and densities from the input tensors in DIR.")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N",
              help="Without --data: the size of a dim (repeatable).")
@click.option("--density", "densities", multiple=True, metavar="[T=]D",
              help="Without --data: fraction of stored entries of input T, or of every input "
                   "without its own (repeatable).")
@click.option("--objective", type=click.Choice(["cycles", "bytes", "flops", "energy", "edp"]),
              default="cycles", show_default=True,
              help="What the plan minimizes (energy in pJ, edp = energy x cycles).")
@click.option("--fabric", default="unlimited", show_default=True,
              type=click.Choice(list(PRESETS)),
              help="Map every candidate onto this fabric (opt -p map): a graph that does not "
                   "fit is split into configurations, each charged its load and its spills.")
@click.option("--lanes", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Lane budget: parallel factors (powers of two) up to N per region.")
@click.option("--top", "top", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Rows of the ranked table of plans.")
@click.option("--max-points", type=click.IntRange(0, 20), default=12, show_default=True,
              help="Partitions with more interesting points get the bounded search.")
@click.option("--max-orders", type=click.IntRange(1, 10000), default=24, show_default=True,
              help="Regions with more valid orders get this many, sampled evenly.")
@click.option("--max-compiles", type=click.IntRange(1, 10**6), default=1500,
              show_default=True,
              help="Budget of region compiles over the whole search (about 5-20 ms each): "
                   "then the search stops and plans with the best it has found, saying so on "
                   "stderr. A count, so the plan is the same on every machine.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True, max=10**6),
              metavar="SECONDS",
              help="Also stop the search after SECONDS of wall time and plan with the best "
                   "found so far (opt-in: the plan then depends on the machine's speed).")
@click.option("--warehouse", "warehouse", metavar="DIR",
              help="A directory of schedule patterns (TOML); the shipped one: "
                   "--warehouse builtin.")
@click.option("--no-search", is_flag=True,
              help="Keep the program's fusion regions; schedules from the warehouse only.")
@click.option("--learn", "learn", metavar="RESULTS",
              help="Instead of planning: write the best configuration of a sweep's results "
                   "file as a new pattern into the warehouse -o DIR.")
@click.option("--name", "name", metavar="NAME", help="With --learn: the pattern's name.")
@click.option("--share", is_flag=True,
              help="Fuse with --share (a multi-consumer intermediate fused into several "
                   "statements of a region is stored once).")
@inline_widened_option
@free_input_order_option
@click.option("--element-bytes", type=click.IntRange(min=1), default=4, show_default=True,
              help="Bytes per element (the simulator's memory.element_bytes).")
@json_option
@click.option("-q", "--quiet", is_flag=True, help="No table on stderr.")
@output_option
def cmd(program, data_dir, sizes, densities, objective, lanes, top, max_points, max_orders,
        max_compiles, time_limit, warehouse, no_search, learn, name, share, inline_widened, free_input_order,
        element_bytes, as_json, quiet, output, fabric="unlimited"):
    """Choose fusion regions, dataflow orders, parallel factors and block sizes for PROG by
    estimated cost, and write PROG with the chosen directives.

    The search follows SystemML's fusion-plan optimizer: interesting points (fusable
    producer -> consumer edges) per independent partition, enumerated with cost-based
    skipping (MPSkipEnum); per region the orders of its partial order graph, then parallel
    factors up to --lanes and block sizes. Costs come from `fuseflowc estimate`'s model
    (--data DIR, or --size/--density). The program goes to stdout (or -o FILE), each planned
    directive with a comment giving its region's estimated cycles, FLOPs and bytes; a ranked
    table of the best --top plans and the search's statistics go to stderr. --json writes a
    JSON document instead of the program. See docs/plan.md.

    \b
    Examples:
      fuseflowc plan ir_examples/models/gcn/gcn.ff --data out/demo/data
      fuseflowc plan ir_examples/kernels/spmm.ff --size I=1000 --size K=1000 --size J=16 \\
          --density A=0.01 --lanes 8
      fuseflowc plan m.ff --data d/ --warehouse builtin --no-search
      fuseflowc plan m.ff --data d/ --fabric onyx-quarter --objective edp
      fuseflowc plan m.ff --data d/ --max-compiles 200      # a quick, reproducible plan
      fuseflowc plan m.ff --data d/ --time-limit 5          # at most ~5 s of search
      fuseflowc plan --learn results.csv -o my-warehouse/ --name spmm_fast
    """
    from ..outputs import Outputs
    if learn is not None:
        _learn(learn, program, output, name)
        return
    if name is not None:
        raise click.BadParameter("--name applies with --learn RESULTS only",
                                 param_hint="'--name'")
    if time_limit is not None and not time_limit == time_limit:
        raise click.BadParameter("nan is not a number of seconds", param_hint="'--time-limit'")
    if program is None:
        raise UserError("missing PROG (a .ff program; - reads stdin)")
    from fuseflowc.sim.arch import Arch

    from ..lang.load import load_program
    from ..plan.cost import CostOptions
    from ..plan.emit import program_text, table, to_json
    from ..plan.flags import plan_over_flags
    from ..plan.search import PlanOptions

    out = Outputs(program, data_dir)
    dest = out.file(output)
    p = load_program(program)
    size_map, dens, default = _sizes(p, data_dir, sizes, densities)
    wh = _warehouse(warehouse, no_search)
    arch = Arch.load(None, ())
    cost = CostOptions(data_dir, size_map, dens, default, element_bytes, arch.bandwidth,
                       inline_widened, free_input_order, share, fabric)
    options = PlanOptions(objective, lanes, top, max_points, max_orders, warehouse=wh,
                          search=not no_search, max_compiles=max_compiles,
                          time_limit=time_limit)
    planner, result, cost = plan_over_flags(p, cost, options)
    if result.note:
        click.echo(f"plan: note: {result.note}", err=True)
    text = (json.dumps(to_json(p, result), indent=1) + "\n") if as_json \
        else program_text(p, result, _header(result, objective, data_dir, cost.free_input_order,
                                             cost.share, cost.inline_widened, fabric))
    if not quiet and not as_json:
        from rich.console import Console
        table(result, Console(file=sys.stderr, width=None if sys.stderr.isatty() else 110))
    with out:
        dest.write(text)


def _learn(learn: str, program, output, name) -> None:
    """--learn RESULTS: write the results' best configuration into warehouse -o DIR."""
    from ..plan.patterns import learn_pattern, pattern_name_error
    if program is not None:
        raise UserError("--learn RESULTS takes no PROG (it reads the programs the "
                        "results name)")
    if output is None:
        raise UserError("--learn RESULTS needs -o DIR, the warehouse to write into")
    if name is not None and pattern_name_error(name):
        raise click.BadParameter(pattern_name_error(name), param_hint="'--name'")
    target = learn_pattern(learn, output, name)
    click.echo(f"plan: wrote pattern {target}", err=True)


def _sizes(p, data_dir, sizes, densities) -> tuple[dict, dict, float | None]:
    """(dim sizes, densities by tensor, the default density) of --size and --density, checked
    against the program's fixed sizes; without --data every dim needs a size."""
    from ..commands.estimate import _pairs
    dens, default = _pairs(densities, "--density", float)
    size_map, _ = _pairs(sizes, "--size", int)
    if data_dir and (densities or sizes):
        raise UserError("--size and --density apply without --data (with --data, sizes and "
                        "densities are measured from the files)")
    for d in p.dims:
        if d.size is not None and size_map.setdefault(d.name, d.size) != d.size:
            raise UserError(f"--size {d.name}={size_map[d.name]}: the program fixes "
                            f"{d.name} = {d.size}")
    for k, v in size_map.items():
        if v < 1:
            raise UserError(f"--size {k}={v}: a size is at least 1")
    if not data_dir:
        missing = sorted({x for t in p.tensors for x in t.dims
                          if isinstance(x, str)} - set(size_map))
        if missing:
            raise UserError("the size of dim " + ", ".join(missing) + " is not known: give "
                            "--data DIR or --size DIM=N for each")
    return size_map, dens, default


def _warehouse(warehouse, no_search: bool):
    """The --warehouse's patterns (None without one); --no-search needs one."""
    if warehouse is not None:
        from ..plan.patterns import Warehouse
        return Warehouse.load(warehouse)
    if no_search:
        raise UserError("--no-search applies a warehouse's schedules: give --warehouse DIR")
    return None


def _header(result, objective: str, data_dir, free_input_order: bool, share: bool,
            inline_widened: bool, fabric: str = "unlimited") -> list[str]:
    """The planned program's header comment: what planned it, how to compile it, its cost."""
    source = "data " + data_dir if data_dir else "--size/--density"
    flags = " ".join(f for f, on in (("--free-input-order", free_input_order),
                                     ("--share", share), ("--inline-widened", inline_widened))
                     if on)
    lowered = "fuseflowc lower" if result.locate else \
        f"fuseflowc lower -O0 | fuseflowc opt -p {result.passes}"
    header = [
        f"planned by `fuseflowc plan` for {objective} ({result.total.model}), {source}",
        f"compile: fuseflowc fuse PROG{' ' + flags if flags else ''} | {lowered}"
        + (f"  (lower's default pipeline: {result.passes})" if result.locate else ""),
        f"total: {result.total.cycles:,.0f} est. cycles, {result.total.flops:,.0f} FLOPs, "
        f"{result.total.bytes:,.0f} bytes; {result.stats.costed} plans costed, "
        f"{result.stats.skipped} skipped"
        + (f"; search cut at its {'--max-compiles' if result.cut == 'compiles' else '--time-limit'}"
           " budget (best found so far)" if result.cut else ""),
    ]
    if fabric != "unlimited":
        n = result.total.configurations
        header.append(f"fabric: {fabric}: {n} configuration{'' if n == 1 else 's'}, "
                      f"{result.total.energy:,.0f} pJ est.; compile with `fuseflowc opt -p "
                      f"'map{{fabric={fabric}}}'` after lowering")
    return header
