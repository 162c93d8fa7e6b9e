"""Counters of a simulation as JSON-ready dicts and as rich tables on stderr."""

from __future__ import annotations


def _b(d: dict) -> dict:
    return {"seg": d["seg"], "crd": d["crd"], "vals": d["vals"], "total": sum(d.values())}


def node_stats(n, cycles: int) -> dict:
    """One node's counters. busy = firings x ii; stalled = cycles waiting for an output slot
    once inputs were there; idle = the rest of the kernel's cycles (waiting for input)."""
    busy = n.fires * n.ii
    return {
        "name": n.name, "kind": n.kind, "firings": n.fires, "busy_cycles": busy,
        "stalled_cycles": n.stall, "idle_cycles": max(cycles - busy - n.stall, 0),
        "finish": n.finish, "latency": n.lat, "ii": n.ii, "flops": n.flops,
        "bytes_read": _b({"seg": n.rd_seg, "crd": n.rd_crd, "vals": n.rd_vals}),
        "bytes_written": _b({"seg": n.wr_seg, "crd": n.wr_crd, "vals": n.wr_vals}),
    }


def kernel_stats(k) -> dict:
    """One graph's counters, with per-node and per-channel detail (`hoisted`: true for a
    decompose step left out of the totals)."""
    extra = {"hoisted": True} if getattr(k, "hoisted", False) else {}
    spill = spill_bytes([k])
    if any(spill.values()):     # a configuration of a split graph (opt -p map)
        extra.update(spill)
    return {**extra,
        "graph": k.graph, "cycles": k.cycles, "flops": k.flops,
        "bytes_read": _b(k.bytes_read()), "bytes_written": _b(k.bytes_written()),
        "token_hops": k.hops, "wall_seconds": round(k.wall, 6),
        "activations": k.activations,
        "nodes": [node_stats(n, k.cycles) for n in k.nodes],
        "channels": [{"name": c.name, "kind": c.kind,
                      "from": c.src.name if c.src else None,
                      "to": c.dst.name if c.dst else None, "tokens": c.pushed}
                     for c in k.channels],
    }


def spill_bytes(kernels) -> dict:
    """{"spilled_bytes", "replayed_bytes"}: what the kernels' spills stored in DRAM and their
    replays read back (the cut streams of graphs split into configurations)."""
    nodes = [n for k in kernels for n in k.nodes]
    return {"spilled_bytes": sum(n.wr_crd + n.wr_vals for n in nodes if n.kind == "spill"),
            "replayed_bytes": sum(n.rd_crd + n.rd_vals for n in nodes if n.kind == "replay")}


def schedule_stats(result, module, arch) -> dict:
    """Configurations and loop schedules of a run: how many graphs were configured and what
    that costs (arch [config]), the runs that reused a configuration, the cycles per iteration
    of a reused loop, and for wavefront graphs the cycles with each wave's graphs in parallel
    lanes (a wave costs its slowest graph)."""
    graphs = {g.name: g for g in module.graphs}
    loads = reuses = cost = 0
    waves: dict[int, list[int]] = {}
    sequential = 0
    iterations: dict[str, dict[int, int]] = {}
    for k in result.kernels:
        g = graphs.get(k.graph)
        if g is None:           # a permute step: data movement, no configuration
            sequential += k.cycles
            continue
        if g.template is None:
            loads += 1
            cost += arch.config_cycles(len(g.nodes))
        else:
            reuses += 1
            cost += arch.rebind_cycles(len(g.binds))
        if g.iteration is not None:
            per = iterations.setdefault(g.iteration[0], {})
            per[g.iteration[1]] = per.get(g.iteration[1], 0) + k.cycles
        if g.wave is None:
            sequential += k.cycles
        else:
            waves.setdefault(g.wave, []).append(k.cycles)
    total = sum(k.cycles for k in result.kernels)
    out = {"configurations": loads, "reused_runs": reuses, "configuration_cycles": cost,
           "cycles_with_configuration": total + cost}
    spill = spill_bytes(result.kernels)
    if any(spill.values()):
        out.update(spill)
    if iterations:  # per reused loop, the cycles of each iteration's graphs
        out["iteration_cycles"] = {v: [per[k] for k in sorted(per)]
                                   for v, per in iterations.items()}
    if waves:
        out["waves"] = len(waves)
        out["lanes"] = max(len(v) for v in waves.values())
        out["wavefront_cycles"] = sequential + sum(max(v) for v in waves.values())
    return out


def print_schedule_stats(s: dict, console) -> None:
    """The configuration and loop-schedule figures (schedule_stats) in a few lines."""
    console.print(f"configurations: {s['configurations']:,} loaded, {s['reused_runs']:,} "
                  f"reused; configuration cycles {s['configuration_cycles']:,}; cycles with "
                  f"configuration {s['cycles_with_configuration']:,}")
    if "spilled_bytes" in s:
        console.print(f"cut streams: {s['spilled_bytes']:,} bytes spilled to DRAM, "
                      f"{s['replayed_bytes']:,} replayed")
    for var, it in s.get("iteration_cycles", {}).items():
        console.print(f"loop {var}: {len(it)} iterations, cycles per iteration "
                      + ", ".join(f"{c:,}" for c in it))
    if "waves" in s:
        console.print(f"wavefront: {s['waves']} waves, up to {s['lanes']} lanes; cycles with "
                      f"the waves in parallel {s['wavefront_cycles']:,}")


def result_stats(result, arch=None) -> dict:
    """The whole run: totals, every kernel, and the architecture used."""
    kernels = [kernel_stats(k) for k in result.kernels]
    counted = [k for k in kernels if not k.get("hoisted")]
    total = {"cycles": sum(k["cycles"] for k in counted),
             "flops": sum(k["flops"] for k in counted),
             "token_hops": sum(k["token_hops"] for k in counted)}
    for which in ("bytes_read", "bytes_written"):
        total[which] = {key: sum(k[which][key] for k in counted)
                        for key in ("seg", "crd", "vals", "total")}
    out = {"total": total, "kernels": kernels}
    if arch is not None:
        out["arch"] = arch.as_dict()
    return out


#: The kernel table's figure columns: (header, function of a kernel's stats), in print order.
KERNEL_COLUMNS = (
    ("cycles", lambda k: k["cycles"]),
    ("FLOPs", lambda k: k["flops"]),
    ("read seg", lambda k: k["bytes_read"]["seg"]),
    ("read crd", lambda k: k["bytes_read"]["crd"]),
    ("read vals", lambda k: k["bytes_read"]["vals"]),
    ("write seg", lambda k: k["bytes_written"]["seg"]),
    ("write crd", lambda k: k["bytes_written"]["crd"]),
    ("write vals", lambda k: k["bytes_written"]["vals"]),
    ("hops", lambda k: k["token_hops"]),
)
#: When the whole table is too wide: the timing figures, then the off-chip bytes.
SPLIT = ((0, 1, 8), (2, 3, 4, 5, 6, 7))


def _fitting_groups(console, rows: list[tuple[str, list[str]]], build) -> list[list[int]]:
    """The figure columns in groups, each making a table (with the kernel column) no wider
    than the console: all in one table if it fits, else timing and bytes apart (SPLIT), each
    split further where it still does not fit. Figures are never truncated."""
    wide = console.options.update_width(1 << 20)  # measure unclamped by the console

    def fits(cols):
        return console.measure(build(cols, rows), options=wide).maximum <= console.width

    every = list(range(len(KERNEL_COLUMNS)))
    if fits(every):
        return [every]
    groups: list[list[int]] = []
    for part in SPLIT:
        cur: list[int] = []
        for j in part:
            if cur and not fits(cur + [j]):
                groups.append(cur)
                cur = [j]
            else:
                cur = cur + [j]
        groups.append(cur)
    return groups


def shown_node(name: str, graph) -> str:
    """A node's table name (`#19 reduce(max,u0)`, see sim.build) with its index shown as
    `u0(j)` when `graph` (the SAMML graph it belongs to, or None) has the program's names for
    it (fuseflowc.names); the JSON counters keep the plain name."""
    if graph is None or not graph.source_names or not name.startswith("#"):
        return name
    from fuseflowc.names import shown
    number = name[1:].split(" ", 1)[0]
    order = graph.topo_order()
    if not number.isdigit() or int(number) >= len(order):
        return name
    index = getattr(order[int(number)], "index", None)
    if index is None or not name.endswith(f"{index})"):
        return name
    return name[:-len(index) - 1] + shown(index, graph.source_names) + ")"


def print_tables(stats: dict, console, busiest: int = 5, module=None) -> None:
    """Per-kernel and total figures, then the busiest nodes, as rich tables. Figures are
    never cut: columns that do not fit the console's width go to a continuation table.
    With the simulated `module`, a node's index is shown with its program name (`u0(j)`)."""
    from rich import box
    from rich.table import Table
    headers = [h for h, _ in KERNEL_COLUMNS]
    rows = [(k["graph"] + (" (hoisted)" if k.get("hoisted") else ""),
             [f"{fn(k):,}" for _, fn in KERNEL_COLUMNS]) for k in stats["kernels"]]
    if len(stats["kernels"]) > 1:
        rows.append(("total", [f"{fn(stats['total']):,}" for _, fn in KERNEL_COLUMNS]))

    def build(cols, rows, title="simulation"):
        t = Table(title=title, title_justify="left", box=box.SIMPLE)
        # `permute A -> A__T` stays on one line; figures never wrap or shrink
        t.add_column("kernel", justify="left", no_wrap=True,
                     min_width=max(len(r[0]) for r in rows) if rows else None)
        for j in cols:
            width = max([len(r[1][j]) for r in rows] + [len(w) for w in headers[j].split()])
            t.add_column(headers[j], justify="right", no_wrap=True, min_width=width)
        for name, cells in rows:
            t.add_row(name, *[cells[j] for j in cols])
        return t

    groups = _fitting_groups(console, rows, build)
    for i, cols in enumerate(groups):
        title = "simulation" if i == 0 else ("off-chip bytes" if cols[0] in SPLIT[1]
                                             else "simulation (continued)")
        console.print(build(cols, rows, title))
    nodes = [(k["graph"], n) for k in stats["kernels"] for n in k["nodes"]]
    nodes.sort(key=lambda gn: (-gn[1]["busy_cycles"], -gn[1]["stalled_cycles"], gn[0],
                               gn[1]["name"]))
    top = nodes[:busiest]
    cells = [(f"{n['busy_cycles']:,}", f"{n['stalled_cycles']:,}", f"{n['finish']:,}")
             for _, n in top]
    b = Table(title="busiest nodes (cycles)", title_justify="left", box=box.SIMPLE)
    b.add_column("kernel", justify="left", overflow="fold")   # names fold, never cut
    b.add_column("node", justify="left", overflow="fold")
    for j, col in enumerate(("busy", "stalled", "finish")):
        width = max([len(c[j]) for c in cells] + [len(col)])
        b.add_column(col, justify="right", no_wrap=True, min_width=width)
    for (g, n), c in zip(top, cells):
        b.add_row(g, shown_node(n["name"], module.graph(g) if module is not None else None),
                  *c)
    console.print(b)


def configuration_rows(kernels, module, fabric, element_bytes: int, sizes: dict) -> list[dict]:
    """One row per graph of `module` among `kernels` ({name: (cycles, bytes, spilled,
    replayed)}): its tiles on `fabric` (samml.tiles, with the data's `sizes`), cycles and
    off-chip bytes, and the bytes its spills store and its replays read."""
    from fuseflowc.samml.tiles import tile_usage
    rows = []
    for name, (cycles, nbytes, spilled, replayed) in kernels.items():
        g = module.graph(name)
        if g is None:          # a permute or decompose step: no configuration
            continue
        use = tile_usage(g, module, fabric, element_bytes, sizes)
        rows.append({"kernel": name, "pe": use.pe, "mem": use.mem, "cycles": cycles,
                     "bytes": nbytes, "spilled": spilled, "replayed": replayed})
    return rows


def print_configurations(rows: list[dict], fabric, console) -> None:
    """The configurations table: per graph its tiles on `fabric`, cycles, bytes, spills."""
    from rich import box
    from rich.table import Table
    cap = "" if fabric.unlimited else f" of {fabric.pe:,} PE, {fabric.mem:,} MEM" \
        if fabric.pe is not None and fabric.mem is not None else ""
    t = Table(title=f"configurations (fabric {fabric.name}{cap})", title_justify="left",
              box=box.SIMPLE)
    for col in ("kernel", "PE", "MEM", "cycles", "bytes", "spilled", "replayed"):
        t.add_column(col, justify="left" if col == "kernel" else "right")
    for r in rows:
        t.add_row(r["kernel"], *(f"{r[k]:,.0f}" for k in ("pe", "mem", "cycles", "bytes",
                                                           "spilled", "replayed")))
    console.print(t)
