"""The markdown text of `fuseflowc report`: a summary's tables, aligned so that they read well
as plain text too."""

from __future__ import annotations


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:,.1f}"
    return f"{int(x):,}"


def _uj(pj) -> str:
    """Picojoules as microjoules, with thousands separators."""
    return "-" if pj is None else f"{pj / 1e6:,.1f}"


def _x(x) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _f(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(head: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """A pipe table with padded columns; columns in `right` are right-aligned."""
    right = right if right is not None else set(range(1, len(head)))
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    widths = [max(w, 3) for w in widths]

    def line(cells):
        return "| " + " | ".join(str(c).rjust(w) if k in right else str(c).ljust(w)
                                 for k, (c, w) in enumerate(zip(cells, widths))) + " |"
    sep = "|" + "|".join(("-" * (w + 1) + ":") if k in right else ("-" * (w + 2))
                         for k, w in enumerate(widths)) + "|"
    return "\n".join([line(head), sep, *(line(r) for r in rows)])


def _status_line(s: dict) -> str:
    parts = [f"{n} {k}" for k, n in s["status"].items()]
    return f"{s['rows']} configurations: " + (", ".join(parts) or "none")


def _section(title: str, intro: str | None, head: list[str], rows: list[list[str]],
             right: set[int] | None = None, image: str | None = None, empty: str = ""
             ) -> list[str]:
    """The lines of a `## title` section: `intro`, the table and the `image` line, each
    followed by a blank line; only the sentence `empty` when there are no rows."""
    out = [f"## {title}", ""]
    if not rows:
        return out + [empty, ""]
    if intro:
        out += [intro, ""]
    out += [table(head, rows, right), ""]
    if image:
        out += [image, ""]
    return out


def _setting(r: dict) -> str:
    """How the configurations of an order-spread row are set, besides their order."""
    bits = [f"{k}={v}" for k, v in sorted(r["params"].items())]
    if r["pipeline"]:
        bits.append(f"-p {r['pipeline']}")
    if r["arch"]:
        bits.append(r["arch"])
    if r["flags"]:
        bits.append(r["flags"])
    return " ".join(bits) or "-"


def _estimator_rows(est: dict) -> list[list[str]]:
    rows = []
    for name, e in [*((e["model"], e) for e in est["per_model"]), ("all", est["overall"])]:
        rows.append([name, str(e["rows"]), _pct(e["flops_mean"]), _pct(e["flops_max"]),
                     _pct(e["bytes_mean"]), _pct(e["bytes_max"]),
                     _pct(e.get("cycles_median")), _pct(e.get("cycles_max"))])
    return rows


def render(s: dict, source: str, images: dict[str, str] | None = None) -> str:
    """The markdown report of summary `s` (from summary.summarize) of results file `source`;
    `images` maps a section (fusion, normalized, energy, parallel, block, orders) to an image file."""
    images = images or {}

    def img(key, what):
        return f"![{what}]({images[key]})" if key in images else None

    out = [f"# Sweep report: {source}", "", _status_line(s) + ".", ""]
    fusion = s["fusion"]
    out += _section(
        "Fusion: cycles and speedup over unfused",
        "Best configuration of each variant; speedup = unfused cycles / cycles; pipeline: "
        "the `opt` passes that configuration ran (none: the lowered graph as it is).",
        ["model", "data", "variant", "cycles", "speedup", "pipeline", "config"],
        [[r["model"] + (f" ({r['arch']})" if r["arch"] else ""), r["data"], r["variant"],
          _num(r["cycles"]), _x(r["speedup"]), r.get("pipeline") or "(none)", r["id"]]
         for r in fusion],
        {3, 4}, img("fusion", "speedup over unfused"),
        "No model has results for an `unfused` variant and another one.")
    lost = [u for u in s.get("unfinished", []) if u["variant_failed"]]
    if lost:
        out += ["Variants with no successful configuration (not in the table): " + "; ".join(
            sorted({f"{u['model']}/{u['variant']} on {u['data']}: {u['status']}"
                    for u in lost})) + ".", ""]
    if fusion:
        out += _section(
            "FLOPs and bytes normalized to unfused", None,
            ["model", "data", "variant", "FLOPs", "bytes", "FLOPs / unfused", "bytes / unfused"],
            [[r["model"], r["data"], r["variant"], _num(r["flops"]), _num(r["bytes"]),
              _f(r["flops_norm"]), _f(r["bytes_norm"])] for r in fusion],
            {3, 4, 5, 6}, img("normalized", "FLOPs and bytes normalized to unfused"))
    energy = [r for r in fusion if r.get("energy") is not None]
    if energy:
        out += _section(
            "Energy and energy-delay product normalized to unfused",
            "Energy in microjoules from the machine description's [energy] table (sim/arch.toml; "
            "docs/fabric.md), of the configuration with the fewest cycles; energy-delay "
            "product in microjoules x cycles.",
            ["model", "data", "variant", "energy (uJ)", "EDP (uJ x cycles)", "energy / unfused",
             "EDP / unfused"],
            [[r["model"], r["data"], r["variant"], _uj(r["energy"]), _uj(r["edp"]),
              _f(r["energy_norm"]), _f(r["edp_norm"])] for r in energy],
            {3, 4, 5, 6}, img("energy", "energy and energy-delay product normalized to unfused"))
    out += _section(
        "Cycles against parallel factor",
        "Speedup over the unparallelized (or least parallel) configuration; factor: the lanes "
        "of one graph (the product of the factors of one tensor's parallelized indices, the "
        "largest over tensors: graphs parallelized apart do not multiply).",
        ["model", "variant", "data", "parallelized", "factor", "cycles", "speedup"],
        [[r["model"], r["variant"], r["data"], r["site"], str(r["factor"]), _num(r["cycles"]),
          _x(r["speedup"])] for r in s["parallel"]],
        {4, 5, 6}, img("parallel", "cycles against parallel factor"),
        "No parallelized configurations.")
    out += _section(
        "Cycles against block size",
        "Speedup over the best unblocked configuration of the model and data set.",
        ["model", "data", "variant", "block", "cycles", "speedup"],
        [[r["model"], r["data"], r["variant"], r["block"], _num(r["cycles"]), _x(r["speedup"])]
         for r in s["block"]],
        {3, 4, 5}, img("block", "cycles against block size"),
        "No blocked configurations.")
    out += _section(
        "Spread over dataflow orders",
        "Cycles normalized to the worst order of each configuration.",
        ["model", "variant", "data", "setting", "orders", "best", "median", "worst",
         "best / worst", "median / worst", "best order"],
        [[r["model"], r["variant"], r["data"], _setting(r), str(r["orders"]), _num(r["best"]),
          _num(r["median"]), _num(r["worst"]), _f(r["best_norm"]), _f(r["median_norm"]),
          str(r["best_order"])] for r in s["orders"]],
        set(range(4, 11)), img("orders", "cycles over dataflow orders, normalized to the worst"),
        "No configuration was run with two or more orders.")
    est = s["estimator"]
    out += _section(
        "Estimator error", "|estimate - simulated| / simulated, over the configurations run.",
        ["model", "rows", "FLOPs mean", "FLOPs max", "bytes mean", "bytes max",
         "cycles median", "cycles max"],
        _estimator_rows(est) if est["overall"] else [], None, None,
        "No estimates in the results (the estimator was not available).")
    if s.get("critical_nodes"):
        shots = [f"![{k.split(':', 1)[1]}: node time-line]({v})" for k, v in images.items()
                 if k.startswith("timeline:")]
        out += _section(
            "Utilization: critical nodes per kernel",
            "The busiest nodes of each kernel of each simulated configuration (from its trace "
            "or run JSON): busy = firings x ii, stalled = cycles waiting for an output slot; "
            "busy % of the kernel's cycles.",
            ["config", "kernel", "cycles", "#", "node", "busy", "busy %", "stalled"],
            [[r["config"], r["kernel"], _num(r["cycles"]), str(r["rank"]), r["node"],
              _num(r["busy"]), _pct(r["busy_fraction"]), _num(r["stalled"])]
             for r in s["critical_nodes"]],
            {2, 3, 5, 6, 7}, img("utilization", "busy nodes over time"))
        for shot in shots:
            out += [shot, ""]
    if s["failed"]:
        out += _section(
            "Failed configurations", "Errors and timeouts, with the parameters that set them; "
            "the plots mark them (red x).",
            ["config", "model", "variant", "order", "data", "parameters", "status", "error"],
            [[f["id"], f["model"], f["variant"], str(f["order"]), f["data"],
              f["setting"].replace("|", "\\|"), f["status"],
              (f["error"] or "").replace("|", "\\|")] for f in s["failed"]], {3})
    return "\n".join(out)
