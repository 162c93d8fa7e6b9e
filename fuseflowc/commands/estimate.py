"""`fuseflowc estimate`: FLOPs, off-chip bytes and cycles of a module, analytically (no
simulation)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

import click

from ..diagnostics import UserError
from .options import (
    ORDER,
    inline_widened_option,
    json_out_option,
    output_option,
    schedule_option,
    unfused_option,
)

_COLUMNS = ("flops", "read_seg", "read_crd", "read_vals", "write_seg", "write_crd", "write_vals",
            "bytes", "cycles")


def _pairs(values: tuple[str, ...], what: str, conv) -> tuple[dict, object]:
    """`NAME=VALUE` options (one bare VALUE allowed for --density: the default)."""
    out, default = {}, None
    for v in values:
        name, eq, val = v.partition("=")
        if not eq:
            if what != "--density":
                raise UserError(f"{what} {v}: expected NAME=VALUE")
            name, val = None, v
        try:
            x = conv(val)
        except ValueError:
            raise UserError(f"{what} {v}: {val!r} is not a number") from None
        if name is None:
            default = x
        else:
            out[name.strip()] = x
    return out, default


@click.command("estimate")
@click.argument("input_path", metavar="INPUT", default="-")
@click.option("--data", "data_dir", metavar="DIR",
              help="Measure sizes, densities and intersection rates from the input tensors in "
                   "DIR (the files `fuseflowc simulate --data` reads).")
@click.option("--density", "densities", multiple=True, metavar="[T=]D",
              help="Without --data: fraction of stored entries of input T (of blocks, if "
                   "blocked), or D for every input without its own (repeatable). Default: 1 "
                   "for dense formats, 0.1 otherwise.")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N",
              help="Without --data: the size of a dim (repeatable; every named dim needs one).")
@click.option("--region", "region", metavar="R",
              help="Report only the kernel (graph) R; the graphs before it are still modelled "
                   "(they write its inputs).")
@click.option("--json", "as_json", is_flag=True,
              help="Write JSON (total, kernels, ms, stats) instead of the tab-separated lines "
                   "(and no table on stderr).")
@json_out_option
@click.option("-q", "--quiet", is_flag=True, help="No table on stderr.")
@click.option("--element-bytes", type=click.IntRange(min=1), default=None,
              help="Bytes per seg, crd or value element (the simulator's "
                   "memory.element_bytes; default: the arch's, 4).")
@click.option("--arch", "arch_file", metavar="FILE",
              help="Architecture file (TOML) overriding sim/arch.toml: the latencies, ii, "
                   "bandwidth and block costs the cycles are modelled with (as `simulate`).")
@schedule_option
@unfused_option
@click.option("--order", "order", type=ORDER, default=None, metavar="K|paper",
              help="For a program: the K-th valid dataflow order, or `paper` (as "
                   "`fuseflowc fuse --order`).")
@inline_widened_option
@output_option
def cmd(input_path, data_dir, densities, sizes, region, as_json, json_out, quiet, element_bytes,
        arch_file, schedule, unfused, order, inline_widened, output):
    """Estimate FLOPs, off-chip bytes, cycles and energy of INPUT without simulating it.

    INPUT is a SAMML module (from `lower`/`opt`), or fused IR or a .ff program, compiled here
    (fuse, then lower); - reads stdin. Expected stream lengths are propagated through every
    graph: scanners multiply fibers by their expected length, joiners combine coordinate
    histograms, reductions divide; FLOPs and bytes are counted as the simulator counts them
    (docs/estimate.md); cycles from the stream lengths with each node kind's latency and ii,
    the bandwidth, parallel lanes and blocks of sim/arch.toml (or --arch FILE). Sizes,
    densities and intersection rates come from --data DIR, or else from --size and --density
    (uniform independent non-zeros). Energy (picojoules) prices the expected FLOPs, token
    hops, accumulator buffer bytes, off-chip bytes and configuration loads with sim/arch.toml
    [energy], as `simulate` prices its counters: the table shows it; the JSON has it
    (`energy_pj`) with its parts and the energy-delay product (`edp`, pJ x cycles).

    Stdout (or -o FILE) gets one tab-separated line per kernel and a total line, or JSON with
    --json; --json-out FILE also writes the JSON to FILE. A table of the same numbers goes to
    stderr (not with -q or --json). Each number is shown once: when stdout and stderr are the
    same terminal, the table alone is printed; when they are the same file, the lines alone.

    \b
    Examples:
      fuseflowc estimate gcn.samml --data out/demo/data
      fuseflowc estimate ir_examples/kernels/spmv.ff --size I=1000 --size J=1000 --density A=0.01
      fuseflowc fuse m.ff | fuseflowc lower | fuseflowc estimate --data d/ --json -o est.json
      fuseflowc estimate g.samml --data d/ --json-out est.json > est.tsv
    """
    from fuseflowc.sim.arch import Arch

    from ..estimate import estimate_module
    from ..outputs import Outputs
    from ..pipeline import CompileOptions
    out = Outputs(input_path, data_dir, arch_file)
    dest = out.file(output)
    json_dest = out.file(json_out, "--json-out") if json_out is not None else None
    arch = Arch.load(arch_file)
    if element_bytes is None:
        element_bytes = arch.element_bytes
    compiled = _compile(input_path, CompileOptions(schedule=schedule, unfused=unfused,
                                                   order=order, inline_widened=inline_widened))
    module = compiled.module
    stats = _data_stats(module, compiled.fixed_sizes(), data_dir, densities, sizes,
                        element_bytes)
    est = estimate_module(module, stats, arch)
    kernels = _kernels(est, region)
    doc, energy = _document(est, kernels, region, module, arch, stats)
    confs = _configurations(est, kernels, module, arch, stats, element_bytes, doc)
    text_json = json.dumps(doc, indent=1) + "\n"
    table = not quiet and not as_json
    text = text_json if as_json else _lines(est, kernels, region)
    if dest.stdout and table and _same_place(sys.stdout, sys.stderr):
        if sys.stdout.isatty():
            text = None   # a person reads the table; the lines would repeat every number
        else:
            table = False  # `> log 2>&1`: the lines, once
    if table:
        _table(kernels, est, stats, energy)
        if confs is not None:
            from rich.console import Console

            from fuseflowc.sim.report import print_configurations
            print_configurations(confs, arch.fabric, Console(
                file=sys.stderr, width=None if sys.stderr.isatty() else 110))
    with out:
        if text is not None:
            dest.write(text)
        if json_dest is not None:
            json_dest.write(text_json)


def _compile(input_path: str, options):
    """The input compiled: a program or fused IR as `lower` compiles it (its default
    pipeline), a SAMML graph as given."""
    from .. import pipeline
    from ..opt.pipeline import DEFAULT_PIPELINE
    inp = pipeline.load(input_path, options)
    if inp.kind == "program":
        from ..lang.load import report_warnings
        report_warnings(inp.ir)
    if inp.kind != "samml":
        options = replace(options, passes=DEFAULT_PIPELINE)
    return pipeline.compile(inp, options)


def _data_stats(module, fixed: dict, data_dir, densities, sizes, element_bytes: int):
    """The estimator's DataStats: measured from --data's files, or from --size and --density
    (each checked against the module and the sizes the program fixes)."""
    from ..estimate import DataStats
    dens, default = _pairs(densities, "--density", float)
    size_map, _ = _pairs(sizes, "--size", int)
    for k, v in sorted(fixed.items()):
        if size_map.setdefault(k, v) != v:
            raise UserError(f"--size {k}={size_map[k]}: the program fixes {k} = {v}")
    if data_dir:
        if densities:
            raise UserError("--density applies without --data (with --data, densities are "
                            "measured from the files)")
        stats = DataStats.from_dir(data_dir, module, element_bytes)
        for k, v in size_map.items():
            if stats.sizes.get(k, v) != v:
                raise UserError(f"--size {k}={v}: the data has {k} = {stats.sizes[k]}")
        return stats
    for name in sorted(dens):
        decl = module.tensor(name)
        if decl is None or decl.role != "input":
            raise UserError(f"--density {name}={dens[name]}: the module has no input tensor "
                            f"{name}")
    for k, v in size_map.items():
        if v < 1:
            raise UserError(f"--size {k}={v}: a size is at least 1")
    return DataStats.from_values(module, size_map, dens, element_bytes, default)


def _kernels(est, region: str | None) -> dict:
    """The kernels reported: all of them, or --region's."""
    if region is None:
        return est.kernels
    if region not in est.kernels:
        raise UserError(f"--region {region}: no such kernel (the module has: "
                        + ", ".join(est.kernels) + ")")
    return {region: est.kernels[region]}


def _document(est, kernels: dict, region: str | None, module, arch, stats) -> tuple:
    """(the --json document, the energy per kernel and in total (key "total"))."""
    from ..estimate.energy import estimate_energy
    energy, energy_total = estimate_energy(kernels, module, arch)
    total = kernels[region].to_json() if region is not None else est.total.to_json()
    total["energy_pj"] = energy_total
    total["edp"] = round(energy_total["total"] * total["cycles"], 1)
    doc = {"total": total, "kernels": {k: {**c.to_json(), "energy_pj": energy[k]}
                                       for k, c in kernels.items()},
           "ms": round(est.ms, 3), "stats": stats.origin}
    energy["total"] = energy_total
    return doc, energy


def _configurations(est, kernels: dict, module, arch, stats, element_bytes: int, doc: dict):
    """On a finite fabric, or for a module split into configurations: each graph's tiles and
    spills, added to the --json document `doc` too; None otherwise."""
    if not est.spills and arch.fabric.unlimited:
        return None
    from fuseflowc.sim.report import configuration_rows
    confs = configuration_rows({k: (c.cycles, c.bytes, *est.spills.get(k, (0.0, 0.0)))
                                for k, c in kernels.items()}, module, arch.fabric,
                               element_bytes, stats.sizes)
    for r in confs:
        doc["kernels"][r["kernel"]].update(
            tiles={"pe": r["pe"], "mem": r["mem"]},
            spilled_bytes=round(r["spilled"], 1), replayed_bytes=round(r["replayed"], 1))
    doc["total"]["configurations"] = len(confs)
    doc["total"]["spilled_bytes"] = round(sum(r["spilled"] for r in confs), 1)
    return confs


def _lines(est, kernels: dict, region: str | None) -> str:
    """The tab-separated lines on stdout: a row per kernel, and the total of a whole module."""
    lines = ["kernel\t" + "\t".join(_COLUMNS)]
    rows = list(kernels.items())
    if region is None:
        rows.append(("total", est.total))
    for name, c in rows:
        lines.append(name + "\t" + "\t".join(f"{_value(c, col):.0f}" for col in _COLUMNS))
    return "\n".join(lines) + "\n"


def _same_place(a, b) -> bool:
    """Whether two streams end up in the same terminal or file (`2>&1`)."""
    try:
        if a.isatty() and b.isatty():
            return True
        return os.path.sameopenfile(a.fileno(), b.fileno())
    except (AttributeError, OSError, ValueError):  # e.g. a test harness's in-memory stream
        return False


def _value(c, col: str) -> float:
    return float(getattr(c, col))


def _table(kernels: dict, est, stats, energy: dict) -> None:
    """The rich table on stderr, with the model's wall time."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    console = Console(file=sys.stderr, width=None if sys.stderr.isatty() else 110)
    t = Table(title=f"estimate ({stats.origin}, {est.ms:.1f} ms)", title_justify="left",
              box=box.SIMPLE)
    for col in ("kernel", "FLOPs", "read seg", "read crd", "read vals", "write seg",
                "write crd", "write vals", "bytes", "cycles", "energy (pJ)"):
        t.add_column(col, justify="left" if col == "kernel" else "right",
                     no_wrap=col == "kernel")
    rows = list(kernels.items())
    if len(kernels) > 1:
        rows.append(("total", est.total))
    for name, c in rows:
        t.add_row(name, *(f"{_value(c, col):,.0f}" for col in _COLUMNS),
                  f"{energy[name]['total']:,.0f}")
    console.print(t)
