"""The pictures of `fuseflowc report`, drawn with matplotlib (a dependency of fuseflowc) with
its non-interactive Agg backend, so no display is needed. Each function takes a summary section
and a path and writes one SVG or PNG; `available()` says whether matplotlib can be imported (a
copy installed without it still writes the text report, and says so)."""

from __future__ import annotations

import importlib.util


def available() -> bool:
    """Whether matplotlib is importable."""
    return importlib.util.find_spec("matplotlib") is not None


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # stable SVG output: no random ids, no date
    matplotlib.rcParams["svg.hashsalt"] = "fuseflowc"
    return plt


def _save(fig, path: str) -> None:
    fmt = path.rsplit(".", 1)[-1]
    meta = {"Date": None} if fmt == "svg" else {}
    fig.tight_layout()
    fig.savefig(path, format=fmt, metadata=meta, dpi=120)
    import matplotlib.pyplot as plt
    plt.close(fig)


FAILED_COLOR = "tab:red"


def _bars(ax, groups: list[str], series: dict[str, list], ylabel: str,
          failed: dict[tuple[str, str], str] | None = None) -> None:
    """Grouped bars; `failed` maps (group, series) to a status drawn as a red x and its word
    where a variant has no successful configuration (no bar to draw)."""
    n = max(len(series), 1)
    width = 0.8 / n
    failed = failed or {}
    for k, (name, vals) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=name)
        for x, g in zip(xs, groups):
            if (g, name) in failed:
                _mark(ax, x, 0.0, failed[(g, name)])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def _mark(ax, x, y, status: str) -> None:
    ax.plot([x], [y], marker="x", color=FAILED_COLOR, markersize=9, mew=2, linestyle="none")
    ax.annotate(status, (x, y), textcoords="offset points", xytext=(0, 8), ha="center",
                rotation=90, fontsize="x-small", color=FAILED_COLOR)


def _by_group(rows, group, series, value, marks=()):
    """Groups and series of the rows (and of the failure marks, so a variant or a whole
    model whose configurations all failed still has its place)."""
    groups = sorted({group(r) for r in [*rows, *marks]})
    names = []
    for r in [*rows, *marks]:
        if series(r) not in names:
            names.append(series(r))
    table = {(group(r), series(r)): value(r) for r in rows}
    return groups, {n: [table.get((g, n)) for g in groups] for n in names}


def _fusion_marks(marks) -> tuple[list[dict], dict[tuple[str, str], str]]:
    lost = [m for m in marks if m["variant_failed"]]
    return lost, {(f"{m['model']} / {m['data']}", m["variant"]): m["status"] for m in lost}


def speedup(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """Speedup over unfused per model (and data set), one bar per fusion variant; variants
    whose every configuration failed are marked with a red x and their status."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    lost, failed = _fusion_marks(marks)
    groups, series = _by_group(rows, lambda r: f"{r['model']} / {r['data']}",
                               lambda r: r["variant"], lambda r: r["speedup"], lost)
    _bars(ax, groups, series, "speedup over unfused", failed)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_title("Fusion: speedup over unfused")
    _save(fig, path)


def normalized(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """FLOPs and bytes normalized to unfused, per model and variant (failures marked)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    lost, failed = _fusion_marks(marks)
    for ax, key, what in ((axes[0], "flops_norm", "FLOPs"), (axes[1], "bytes_norm", "bytes")):
        # (_by_group calls the key functions before the next iteration: late binding is harmless)
        groups, series = _by_group(rows, lambda r: f"{r['model']} / {r['data']}",
                                   lambda r: r["variant"], lambda r: r[key], lost)  # noqa: B023
        _bars(ax, groups, series, f"{what} / unfused", failed)
        ax.set_title(f"{what} normalized to unfused")
    _save(fig, path)


def parallel(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """Cycles against the parallel factor, one line per model, variant, data set and site;
    failed factors are red x marks on the x axis."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    lines: dict[str, list] = {}
    for r in rows:
        lines.setdefault(f"{r['model']}/{r['variant']} {r['data']} {r['site']}", []).append(r)
    for name, rs in lines.items():
        ax.plot([r["factor"] for r in rs], [r["cycles"] for r in rs], marker="o", label=name)
    # on the log axis a failure sits below the lowest curve (0 has no place on it)
    low = min(r["cycles"] for r in rows) / 1.5 if rows else 0.0
    for m in marks:
        if m["site"]:
            _mark(ax, m["factor"], low, f"{m['model']}/{m['variant']} {m['status']}")
    ax.set_xscale("log", base=2)
    # integer ticks at the factors run (1 2 4 8, not 2^0 or 1.0); no minor ticks between
    from matplotlib.ticker import FixedLocator, NullLocator
    factors = sorted({int(r["factor"]) for r in rows} | {int(m["factor"]) for m in marks
                                                         if m["site"]})
    if factors:
        ax.xaxis.set_major_locator(FixedLocator(factors))
        ax.set_xticklabels([str(f) for f in factors])
    ax.xaxis.set_minor_locator(NullLocator())
    # data sets of very different sizes share the axis: log cycles keep each curve's shape
    if rows:
        ax.set_yscale("log")
    ax.set_xlabel("parallel factor (lanes per graph)")
    ax.set_ylabel("cycles (log)")
    ax.set_title("Cycles against parallel factor")
    if lines:
        ax.legend(fontsize="small")
    _save(fig, path)


def block(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """Cycles per block size (and unblocked), per model, data set and variant (failed block
    sizes marked)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    lost = [m for m in marks if m["block"]]
    groups, series = _by_group(rows, lambda r: f"{r['model']}/{r['variant']} / {r['data']}",
                               lambda r: f"block {r['block']}", lambda r: r["cycles"], lost)
    failed = {(f"{m['model']}/{m['variant']} / {m['data']}", f"block {m['block']}"):
              m["status"] for m in lost}
    _bars(ax, groups, series, "cycles", failed)
    ax.set_title("Cycles against block size")
    _save(fig, path)


def orders(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """Each configuration's cycles over its orders, sorted and normalized to the worst."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for r in rows:
        label = f"{r['model']}/{r['variant']} {r['data']}"
        ax.plot(range(len(r["normalized"])), r["normalized"], marker=".", label=label)
    ax.set_xlabel("orders, best to worst")
    ax.set_ylabel("cycles / worst")
    ax.set_ylim(0, 1.05)
    ax.set_title("Spread over dataflow orders")
    if len(rows) <= 10:
        ax.legend(fontsize="small")
    _save(fig, path)


def energy(rows: list[dict], path: str, marks: list[dict] = ()) -> None:
    """Energy and energy-delay product normalized to unfused, per model and variant."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    lost, failed = _fusion_marks(marks)
    for ax, key, what in ((axes[0], "energy_norm", "energy"),
                          (axes[1], "edp_norm", "energy-delay product")):
        groups, series = _by_group(rows, lambda r: f"{r['model']} / {r['data']}",
                                   lambda r: r["variant"], lambda r: r[key], lost)  # noqa: B023
        _bars(ax, groups, series, f"{what} / unfused", failed)
        ax.set_title(f"{what} normalized to unfused")
    _save(fig, path)


SECTIONS = {"fusion": ("speedup", speedup), "normalized": ("normalized", normalized),
            "energy": ("energy", energy),
            "parallel": ("parallel", parallel), "block": ("block", block),
            "orders": ("orders", orders)}


def draw_all(summary: dict, out_dir, fmt: str) -> dict[str, str]:
    """Draw every plot the summary has data for into out_dir; section -> file name."""
    from pathlib import Path
    data = {"fusion": [r for r in summary["fusion"] if r["speedup"] is not None],
            "normalized": [r for r in summary["fusion"] if r["flops_norm"] is not None],
            "energy": [r for r in summary["fusion"] if r.get("energy_norm") is not None],
            "parallel": summary["parallel"], "block": summary["block"],
            "orders": summary["orders"]}
    unfinished = summary.get("unfinished", [])
    marks = {"fusion": [m for m in unfinished if m["variant_failed"]],
             "parallel": [m for m in unfinished if m["site"]],
             "block": [m for m in unfinished if m["block"]], "orders": []}
    marks["normalized"] = marks["fusion"]
    # results without energy figures (files from before sim.energy) get no energy plot
    marks["energy"] = marks["fusion"] if data["energy"] else []
    out = {}
    for key, (stem, fn) in SECTIONS.items():
        # a section whose every configuration failed still gets its plot, with the marks
        if data[key] or marks[key]:
            name = f"{stem}.{fmt}"
            fn(data[key], str(Path(out_dir) / name), marks[key])
            out[key] = name
    return out
