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


def _bars(ax, groups: list[str], series: dict[str, list], ylabel: str) -> None:
    n = max(len(series), 1)
    width = 0.8 / n
    for k, (name, vals) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=name)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def _by_group(rows, group, series, value):
    groups = sorted({group(r) for r in rows})
    names = []
    for r in rows:
        if series(r) not in names:
            names.append(series(r))
    table = {(group(r), series(r)): value(r) for r in rows}
    return groups, {n: [table.get((g, n)) for g in groups] for n in names}


def speedup(rows: list[dict], path: str) -> None:
    """Speedup over unfused per model (and data set), one bar per fusion variant."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    groups, series = _by_group(rows, lambda r: f"{r['model']} / {r['data']}",
                               lambda r: r["variant"], lambda r: r["speedup"])
    _bars(ax, groups, series, "speedup over unfused")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_title("Fusion: speedup over unfused")
    _save(fig, path)


def normalized(rows: list[dict], path: str) -> None:
    """FLOPs and bytes normalized to unfused, per model and variant."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, what in ((axes[0], "flops_norm", "FLOPs"), (axes[1], "bytes_norm", "bytes")):
        groups, series = _by_group(rows, lambda r: f"{r['model']} / {r['data']}",
                                   lambda r: r["variant"], lambda r: r[key])
        _bars(ax, groups, series, f"{what} / unfused")
        ax.set_title(f"{what} normalized to unfused")
    _save(fig, path)


def parallel(rows: list[dict], path: str) -> None:
    """Cycles against the parallel factor, one line per model, variant, data set and site."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    lines: dict[str, list] = {}
    for r in rows:
        lines.setdefault(f"{r['model']}/{r['variant']} {r['data']} {r['site']}", []).append(r)
    for name, rs in lines.items():
        ax.plot([r["factor"] for r in rs], [r["cycles"] for r in rs], marker="o", label=name)
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import ScalarFormatter
    ax.xaxis.set_major_formatter(ScalarFormatter())   # 1 2 4 8, not 2^0 2^1 ...
    ax.set_xlabel("parallel factor")
    ax.set_ylabel("cycles")
    ax.set_title("Cycles against parallel factor")
    ax.legend(fontsize="small")
    _save(fig, path)


def block(rows: list[dict], path: str) -> None:
    """Cycles per block size (and unblocked), per model, data set and variant."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    groups, series = _by_group(rows, lambda r: f"{r['model']}/{r['variant']} / {r['data']}",
                               lambda r: f"block {r['block']}", lambda r: r["cycles"])
    _bars(ax, groups, series, "cycles")
    ax.set_title("Cycles against block size")
    _save(fig, path)


def orders(rows: list[dict], path: str) -> None:
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


SECTIONS = {"fusion": ("speedup", speedup), "normalized": ("normalized", normalized),
            "parallel": ("parallel", parallel), "block": ("block", block),
            "orders": ("orders", orders)}


def draw_all(summary: dict, out_dir, fmt: str) -> dict[str, str]:
    """Draw every plot the summary has data for into out_dir; section -> file name."""
    from pathlib import Path
    data = {"fusion": [r for r in summary["fusion"] if r["speedup"] is not None],
            "normalized": [r for r in summary["fusion"] if r["flops_norm"] is not None],
            "parallel": summary["parallel"], "block": summary["block"],
            "orders": summary["orders"]}
    out = {}
    for key, (stem, fn) in SECTIONS.items():
        if data[key]:
            name = f"{stem}.{fmt}"
            fn(data[key], str(Path(out_dir) / name))
            out[key] = name
    return out
