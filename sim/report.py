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
    """One graph's counters, with per-node and per-channel detail."""
    return {
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


def result_stats(result, arch=None) -> dict:
    """The whole run: totals, every kernel, and the architecture used."""
    kernels = [kernel_stats(k) for k in result.kernels]
    total = {"cycles": sum(k["cycles"] for k in kernels),
             "flops": sum(k["flops"] for k in kernels),
             "token_hops": sum(k["token_hops"] for k in kernels)}
    for which in ("bytes_read", "bytes_written"):
        total[which] = {key: sum(k[which][key] for k in kernels)
                        for key in ("seg", "crd", "vals", "total")}
    out = {"total": total, "kernels": kernels}
    if arch is not None:
        out["arch"] = arch.as_dict()
    return out


def print_tables(stats: dict, console, busiest: int = 5) -> None:
    """Per-kernel and total figures, then the busiest nodes, as rich tables."""
    from rich.table import Table

    from rich import box
    t = Table(title="simulation", title_justify="left", box=box.SIMPLE)
    for col in ("kernel", "cycles", "FLOPs", "read seg", "read crd", "read vals",
                "write seg", "write crd", "write vals", "hops"):
        t.add_column(col, justify="left" if col == "kernel" else "right",
                     no_wrap=col == "kernel")  # `permute A -> A__T` stays on one line

    def row(name, k):
        r, w = k["bytes_read"], k["bytes_written"]
        t.add_row(name, f"{k['cycles']:,}", f"{k['flops']:,}", f"{r['seg']:,}", f"{r['crd']:,}",
                  f"{r['vals']:,}", f"{w['seg']:,}", f"{w['crd']:,}", f"{w['vals']:,}",
                  f"{k['token_hops']:,}")
    for k in stats["kernels"]:
        row(k["graph"], k)
    if len(stats["kernels"]) > 1:
        row("total", stats["total"])
    console.print(t)
    nodes = [(k["graph"], n) for k in stats["kernels"] for n in k["nodes"]]
    nodes.sort(key=lambda gn: (-gn[1]["busy_cycles"], -gn[1]["stalled_cycles"], gn[0],
                               gn[1]["name"]))
    b = Table(title="busiest nodes (cycles)", title_justify="left", box=box.SIMPLE)
    for col in ("kernel", "node", "busy", "stalled", "finish"):
        b.add_column(col, justify="left" if col in ("kernel", "node") else "right")
    for g, n in nodes[:busiest]:
        b.add_row(g, n["name"], f"{n['busy_cycles']:,}", f"{n['stalled_cycles']:,}",
                  f"{n['finish']:,}")
    console.print(b)
