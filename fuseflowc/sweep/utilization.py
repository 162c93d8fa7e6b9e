"""Where the cycles went, for `fuseflowc report --trace FILE --run RUN.json`: from a trace
(`simulate --trace`) the number of busy nodes over time and a time-line of every node; from a
trace or a run's JSON (`simulate --json-out`) the critical nodes of each kernel (the busiest,
with their busy fraction and stalled cycles). Files are read strictly: a file that is not
what it should be is a UserError naming it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import UserError

#: Critical nodes listed per kernel.
TOP = 3


@dataclass
class Kernel:
    name: str
    start: int
    cycles: int
    # node name -> (busy, stalled) cycles
    nodes: dict[str, tuple[int, int]] = field(default_factory=dict)
    # node name -> [(start, end, state, busy cycles in it)] (traces only; a slice merged above
    # --trace-limit holds fewer busy cycles than it spans)
    slices: dict[str, list[tuple[int, int, str, int]]] = field(default_factory=dict)


@dataclass
class Run:
    label: str
    kernels: list[Kernel]
    traced: bool


def label_of(path: str) -> str:
    """A configuration's label: its file name (a trace and the JSON of one run stay apart)."""
    return Path(path).name


def _load(path: str, text: str) -> dict:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: not a JSON object")
    return doc


def read_trace(path: str, text: str) -> Run:
    """A `simulate --trace` file: its kernels (processes), their nodes' slices and totals."""
    doc = _load(path, text)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise UserError(f"{path}: not a trace (no traceEvents list): give a file "
                        "`simulate --trace` wrote")
    try:
        names, kernels = _read_events(events)
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path}: not a trace `simulate --trace` wrote ({type(e).__name__}: "
                        f"{e})") from None
    if not kernels:
        raise UserError(f"{path}: the trace has no kernel")
    for (pid, tid), name in names.items():    # nodes that never fired still count
        if tid and pid in kernels:
            kernels[pid].nodes.setdefault(name.split(" = ")[0], (0, 0))
    return Run(label_of(path), [kernels[p] for p in sorted(kernels)], True)


def _read_events(events: list) -> tuple[dict[tuple[int, int], str], dict[int, Kernel]]:
    """A trace's node names by (pid, tid), and its kernels by pid with their nodes' slices and
    totals (KeyError, TypeError or ValueError where an event is not what `simulate --trace`
    writes)."""
    names: dict[tuple[int, int], str] = {}
    kernels: dict[int, Kernel] = {}
    open_: dict[tuple[int, int], dict] = {}
    for e in events:
        ph, pid = e["ph"], e["pid"]
        if ph == "M" and e["name"] == "thread_name":
            names[(pid, e["tid"])] = str(e["args"]["name"])
        elif ph == "B" and e["tid"] == 0:
            kernels[pid] = Kernel(str(e["name"]), int(e["ts"]), int(e["args"]["cycles"]))
        elif ph == "B":
            open_[(pid, e["tid"])] = e
        elif ph == "E" and e["tid"] != 0:
            b = open_.pop((pid, e["tid"]))
            k = kernels[pid]
            node = names[(pid, e["tid"])].split(" = ")[0]
            k.slices.setdefault(node, []).append(
                (int(b["ts"]) - k.start, int(e["ts"]) - k.start, str(b["name"]),
                 int(b["args"]["busy_cycles"])))
            busy, stalled = k.nodes.get(node, (0, 0))
            k.nodes[node] = (busy + int(b["args"]["busy_cycles"]),
                             stalled + int(b["args"]["stalled_cycles"]))
    return names, kernels


def read_run(path: str, text: str) -> Run:
    """A `simulate --json-out` file: every kernel's node counters."""
    doc = _load(path, text)
    try:
        kernels, start = [], 0
        for k in doc["kernels"]:
            kern = Kernel(str(k["graph"]), start, int(k["cycles"]))
            for n in k["nodes"]:
                kern.nodes[str(n["name"])] = (int(n["busy_cycles"]), int(n["stalled_cycles"]))
            kernels.append(kern)
            start += kern.cycles
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path}: not a `simulate --json` result ({type(e).__name__}: "
                        f"{e})") from None
    return Run(label_of(path), kernels, False)


def critical_nodes(runs: list[Run]) -> list[dict]:
    """Per run and kernel, the TOP busiest nodes: busy and stalled cycles, busy fraction."""
    out = []
    for r in runs:
        for k in r.kernels:
            ranked = sorted(k.nodes.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
            for rank, (name, (busy, stalled)) in enumerate(ranked[:TOP], start=1):
                out.append({"config": r.label, "kernel": k.name, "cycles": k.cycles,
                            "rank": rank, "node": name, "busy": busy, "stalled": stalled,
                            "busy_fraction": busy / k.cycles if k.cycles else 0.0})
    return out


def busy_over_time(run: Run, bins: int = 400) -> tuple[list[float], list[float], float]:
    """(bin starts, mean busy nodes per bin, bin width) over the whole run of a trace."""
    end = max((k.start + k.cycles for k in run.kernels), default=0)
    width = max(end / bins, 1.0)
    n = int(end / width) + 1
    acc = [0.0] * n
    for k in run.kernels:
        for slices in k.slices.values():
            for s, e, _, busy in slices:
                if not busy:
                    continue
                density = busy / (e - s)     # 1 unless merged: its busy cycles spread evenly
                a, b = k.start + s, k.start + e
                i = int(a / width)
                while a < b:
                    edge = min(b, (i + 1) * width)
                    acc[i] += (edge - a) * density
                    a, i = edge, i + 1
    return [i * width for i in range(n)], [v / width for v in acc], width


def utilization_plot(runs: list[Run], path: str) -> None:
    """Busy nodes over time, one panel per traced configuration, kernel boundaries marked."""
    from .plots import _plt, _save
    plt = _plt()
    traced = [r for r in runs if r.traced]
    fig, axes = plt.subplots(len(traced), 1, figsize=(8, 2.2 * len(traced) + 0.6),
                             squeeze=False)
    for ax, r in zip(axes[:, 0], traced):
        xs, ys, width = busy_over_time(r)
        ax.fill_between(xs, ys, step="post", alpha=0.6, color="tab:orange")
        for k in r.kernels[1:]:
            ax.axvline(k.start, color="gray", linewidth=0.7, linestyle="--")
        total = sum(len(k.nodes) for k in r.kernels)
        kernels = f"{len(r.kernels)} kernel" + ("s" if len(r.kernels) != 1 else "")
        ax.set_title(f"{r.label}: busy nodes over time ({total} nodes, {kernels}, mean per "
                     f"{width:,.0f} cycles)", fontsize=9)
        ax.set_ylabel("busy nodes")
        ax.set_xlim(0, xs[-1] if xs else 1)
        ax.set_ylim(bottom=0)
    axes[-1, 0].set_xlabel("cycle")
    for ax in axes[:, 0]:
        _plain_cycles(ax)
    _save(fig, path)


def _plain_cycles(ax) -> None:
    """Cycles on the x axis as 1,500,000, not 1.5 with a `1e6` offset in the corner."""
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def timeline_plot(run: Run, path: str, most: int = 60) -> None:
    """A time-line of a trace (what Perfetto shows): one row per node, busy slices orange,
    stalled red, kernel boundaries dashed; at most `most` rows (the busiest nodes)."""
    from .plots import _plt, _save
    plt = _plt()
    rows = []
    for k in run.kernels:
        for name, slices in k.slices.items():
            rows.append((k, name, slices))
    rows.sort(key=lambda r: -r[0].nodes[r[1]][0])
    rows = sorted(rows[:most], key=lambda r: (r[0].start, _index(r[1]), r[1]))
    fig, ax = plt.subplots(figsize=(10, 0.22 * len(rows) + 1.2))
    colours = {"busy": "tab:orange", "stalled": "tab:red"}
    for y, (k, _name, slices) in enumerate(rows):
        for state in ("busy", "stalled"):
            bars = [(k.start + s, e - s) for s, e, st, _ in slices if st == state]
            if bars:
                ax.broken_barh(bars, (y - 0.4, 0.8), color=colours[state], linewidth=0)
    for k in run.kernels[1:]:
        ax.axvline(k.start, color="gray", linewidth=0.7, linestyle="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{k.name} {name}" for k, name, _ in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("cycle")
    ax.set_title(f"{run.label}: node time-line (orange busy, red stalled)", fontsize=9)
    _plain_cycles(ax)
    _save(fig, path)


def _index(name: str) -> int:
    head = name.split(" ", 1)[0]
    return int(head[1:]) if head[1:].isdigit() else 0
