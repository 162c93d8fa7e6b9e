"""Energy from event counts: the one place that turns counters into picojoules.

The events and their prices are the [energy] table of the machine description (sim/arch.toml,
`Arch.energy`). The simulator's counters (per kernel: FLOPs, token hops, accumulator firings,
off-chip bytes; both engines keep the same ones) and the estimator's expected counts go through
`charge`, so the two engines agree by construction and the estimate is priced the same way.
"""

from __future__ import annotations

from fuseflowc.samml.kinds import BUFFERED

#: Node kinds whose firings read and write an on-chip buffer (an accumulator's): each firing
#: moves one element in and out of it (the kinds' `accumulates` trait, samml.kinds).
BUFFER_KINDS = BUFFERED
#: The parts of an energy figure, in print order, and the event each charges.
PARTS = (("alu", "alu_op"), ("fifo", "fifo_hop"), ("onchip", "onchip_byte"),
         ("dram", "dram_byte"), ("config", None))


def charge(arch, flops: float, hops: float, onchip_bytes: float, dram_bytes: float,
           loads: int = 0, nodes_configured: int = 0) -> dict:
    """Picojoules per part (PARTS) and their `total`, rounded to 0.1 pJ: `flops` ALU
    operations, `hops` tokens over channels, `onchip_bytes` buffer bytes, `dram_bytes`
    off-chip bytes, `loads` configuration loads of `nodes_configured` nodes in all."""
    e = arch.energy
    counts = {"alu": flops, "fifo": hops, "onchip": onchip_bytes, "dram": dram_bytes}
    out = {part: float(counts[part]) * e[event] for part, event in PARTS if event}
    out["config"] = loads * e["reconfiguration"] + nodes_configured * e["config_node"]
    out["total"] = sum(out.values())
    return {k: round(v, 1) for k, v in out.items()}


def configuration(module, kernel: str) -> tuple[int, int]:
    """(configuration loads, nodes configured) of running `kernel` of `module`: a graph that is
    not a reuse of an earlier one's configuration loads once with all its nodes (as
    sim.report.schedule_stats counts them); a reuse or a permute step loads nothing."""
    g = module.graph(kernel) if module is not None else None
    if g is None or g.template is not None:
        return 0, 0
    return 1, len(g.nodes)


def kernel_energy(k: dict, module, arch) -> dict:
    """The energy of one simulated kernel from its counters (sim.report.kernel_stats)."""
    buffered = sum(n["firings"] for n in k["nodes"] if n["kind"] in BUFFER_KINDS)
    return charge(arch, k["flops"], k["token_hops"], buffered * arch.element_bytes,
                  k["bytes_read"]["total"] + k["bytes_written"]["total"],
                  *configuration(module, k["graph"]))


def add_energy(stats: dict, module, arch) -> dict:
    """Add `energy_pj` to every kernel of a run's stats (sim.report.result_stats) and to its
    total (the kernels counted in it), with the total's energy-delay product `edp` (pJ x
    cycles). Returns `stats`."""
    total: dict = {}
    for k in stats["kernels"]:
        k["energy_pj"] = kernel_energy(k, module, arch)
        if not k.get("hoisted"):
            for part, v in k["energy_pj"].items():
                total[part] = total.get(part, 0.0) + v
    stats["total"]["energy_pj"] = {p: round(total.get(p, 0.0), 1)
                                   for p in [p for p, _ in PARTS] + ["total"]}
    stats["total"]["edp"] = round(stats["total"]["energy_pj"]["total"]
                                  * stats["total"]["cycles"], 1)
    return stats


def print_energy(stats: dict, console) -> None:
    """The energy (picojoules per part) on `console`: one line for a single kernel, else a table
    per kernel with the total; then the energy-delay product."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table
    names = {"alu": "ALU", "fifo": "FIFO", "onchip": "on-chip", "dram": "DRAM",
             "config": "configuration"}
    kernels = stats["kernels"]
    if len(kernels) == 1:
        e = kernels[0]["energy_pj"]
        console.print(f"energy: {e['total']:,.1f} pJ ("
                      + ", ".join(f"{names[p]} {e[p]:,.1f}" for p, _ in PARTS) + ")")
    else:
        t = Table(title=escape("energy (pJ; sim/arch.toml [energy])"), title_justify="left",
                  box=box.SIMPLE)
        t.add_column("kernel", justify="left", no_wrap=True)
        for part, _ in PARTS:
            t.add_column(names[part], justify="right", no_wrap=True)
        t.add_column("total", justify="right", no_wrap=True)
        rows = [(k["graph"] + (" (hoisted)" if k.get("hoisted") else ""), k["energy_pj"])
                for k in kernels] + [("total", stats["total"]["energy_pj"])]
        for name, e in rows:
            t.add_row(name, *(f"{e[p]:,.1f}" for p, _ in PARTS), f"{e['total']:,.1f}")
        console.print(t)
    console.print(f"energy-delay product: {stats['total']['edp']:,.1f} pJ x cycles")
