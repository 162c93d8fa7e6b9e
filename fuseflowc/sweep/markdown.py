"""The markdown text of `fuseflowc report`: a summary's tables, aligned so that they read well
as plain text too."""

from __future__ import annotations


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:,.1f}"
    return f"{int(x):,}"


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


def render(s: dict, source: str, images: dict[str, str] | None = None) -> str:
    """The markdown report of summary `s` (from summary.summarize) of results file `source`;
    `images` maps a section (fusion, normalized, parallel, block, orders) to an image file."""
    images = images or {}
    out = [f"# Sweep report: {source}", "", _status_line(s) + ".", ""]

    def img(key, what):
        if key in images:
            out.extend([f"![{what}]({images[key]})", ""])

    fusion = s["fusion"]
    out.append("## Fusion: cycles and speedup over unfused")
    out.append("")
    if fusion:
        out.append("Best configuration of each variant; speedup = unfused cycles / cycles.")
        out.append("")
        out.append(table(["model", "data", "variant", "cycles", "speedup", "config"],
                         [[r["model"] + (f" ({r['arch']})" if r["arch"] else ""), r["data"],
                           r["variant"], _num(r["cycles"]), _x(r["speedup"]), r["id"]]
                          for r in fusion], right={3, 4}))
        out.append("")
        img("fusion", "speedup over unfused")
        out.append("## FLOPs and bytes normalized to unfused")
        out.append("")
        out.append(table(["model", "data", "variant", "FLOPs", "bytes", "FLOPs / unfused",
                          "bytes / unfused"],
                         [[r["model"], r["data"], r["variant"], _num(r["flops"]),
                           _num(r["bytes"]), _f(r["flops_norm"]), _f(r["bytes_norm"])]
                          for r in fusion], right={3, 4, 5, 6}))
        out.append("")
        img("normalized", "FLOPs and bytes normalized to unfused")
    else:
        out.extend(["No model has results for an `unfused` variant and another one.", ""])

    out.extend(["## Cycles against parallel factor", ""])
    if s["parallel"]:
        out.append("Speedup over the unparallelized (or least parallel) configuration.")
        out.append("")
        out.append(table(["model", "variant", "data", "parallelized", "factor", "cycles",
                          "speedup"],
                         [[r["model"], r["variant"], r["data"], r["site"], str(r["factor"]),
                           _num(r["cycles"]), _x(r["speedup"])] for r in s["parallel"]],
                         right={4, 5, 6}))
        out.append("")
        img("parallel", "cycles against parallel factor")
    else:
        out.extend(["No parallelized configurations.", ""])

    out.extend(["## Cycles against block size", ""])
    if s["block"]:
        out.append("Speedup over the best unblocked configuration of the model and data set.")
        out.append("")
        out.append(table(["model", "data", "variant", "block", "cycles", "speedup"],
                         [[r["model"], r["data"], r["variant"], r["block"], _num(r["cycles"]),
                           _x(r["speedup"])] for r in s["block"]], right={3, 4, 5}))
        out.append("")
        img("block", "cycles against block size")
    else:
        out.extend(["No blocked configurations.", ""])

    out.extend(["## Spread over dataflow orders", ""])
    if s["orders"]:
        out.append("Cycles normalized to the worst order of each configuration.")
        out.append("")

        def setting(r):
            bits = [f"{k}={v}" for k, v in sorted(r["params"].items())]
            if r["pipeline"]:
                bits.append(f"-p {r['pipeline']}")
            if r["arch"]:
                bits.append(r["arch"])
            if r["flags"]:
                bits.append(r["flags"])
            return " ".join(bits) or "-"
        out.append(table(["model", "variant", "data", "setting", "orders", "best", "median",
                          "worst", "best / worst", "median / worst", "best order"],
                         [[r["model"], r["variant"], r["data"], setting(r), str(r["orders"]),
                           _num(r["best"]), _num(r["median"]), _num(r["worst"]),
                           _f(r["best_norm"]), _f(r["median_norm"]), str(r["best_order"])]
                          for r in s["orders"]], right=set(range(4, 11))))
        out.append("")
        img("orders", "cycles over dataflow orders, normalized to the worst")
    else:
        out.extend(["No configuration was run with two or more orders.", ""])

    out.extend(["## Estimator error", ""])
    est = s["estimator"]
    if est["overall"]:
        out.append("|estimate - simulated| / simulated, over the configurations run.")
        out.append("")
        rows = [[e["model"], str(e["rows"]), _pct(e["flops_mean"]), _pct(e["flops_max"]),
                 _pct(e["bytes_mean"]), _pct(e["bytes_max"])] for e in est["per_model"]]
        o = est["overall"]
        rows.append(["all", str(o["rows"]), _pct(o["flops_mean"]), _pct(o["flops_max"]),
                     _pct(o["bytes_mean"]), _pct(o["bytes_max"])])
        out.append(table(["model", "rows", "FLOPs mean", "FLOPs max", "bytes mean",
                          "bytes max"], rows))
        out.append("")
    else:
        out.extend(["No estimates in the results (the estimator was not available).", ""])

    if s["failed"]:
        out.extend(["## Failed configurations", ""])
        out.append(table(["config", "model", "variant", "order", "data", "status", "error"],
                         [[f["id"], f["model"], f["variant"], str(f["order"]), f["data"],
                           f["status"], (f["error"] or "").replace("|", "\\|")]
                          for f in s["failed"]], right={3}))
        out.append("")
    return "\n".join(out)
