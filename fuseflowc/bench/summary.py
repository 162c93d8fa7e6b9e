"""results/SUMMARY.md: the benchmark's figures and tables, one section per experiment of the
FuseFlow paper's Section 8, each with the paper's finding for comparison.

Inputs (all in the results directory written by fuseflowc.bench.driver): the sweeps' results
files `<spec>.csv` (spec names start with the figure they serve: fig12_*, fig15_*, fig16_*,
fig17_*), `orders.json`, `compile.txt` and `timings.json`. The numbers come from
`fuseflowc.sweep.summary` (the same as `fuseflowc report`), regrouped per experiment. Missing
inputs give a line saying so, never an exception: a partial run still has a summary.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from ..sweep.markdown import _estimator_rows, _x, table
from ..sweep.markdown import _num as _n
from ..sweep.results import read_rows_if_any
from ..sweep.summary import _ratio, block_table, estimator_table, fusion_table, ok_rows, order_table

PAPER = {
    "fig12": "Paper (Fig. 12): GPT-3 with BigBird gains most from full fusion (~2.7x); SAE, GCN "
             "and GraphSAGE lose with full fusion (recomputation in the nested matmuls) and "
             "win with partial fusion (up to ~2.6x GCN on OGB-collab, ~3.9x GraphSAGE on "
             "OGB-mag).",
    "fig14": "Paper (Fig. 14): partial fusion cuts bytes (higher operational intensity); full "
             "fusion raises both FLOPs and bytes (recomputation).",
    "fig15": "Paper (Fig. 15): cycles scale with the parallel factor at either index; 4 x 4 "
             "nested gives ~15.9x.",
    "fig16": "Paper (Fig. 16): the speedup over unstructured sparse attention is "
             "proportional to the block size (16, 32, 64).",
    "fig17": "Paper (Fig. 17): the worst order of the nested matmul on KarateClub is ~29x "
             "slower than the best.",
    "table2": "Paper (Table 2, OGB-collab): FLOPs error 1.8-2.8%, bytes error 5.7-11.5% "
              "(GPT-3 block 16: 1.8 / 5.7; GCN: 2.8 / 9.6; GraphSAGE: 2.6 / 11.5).",
    "table3": "Paper (Table 3): GCN 2.0e8 (capped; ~1e15) unconstrained, 6.3e7 constrained; "
              "GraphSAGE 3.9e7 and 1.1e3.",
    "compile": "Paper (Sec. 8.1): every model compiles in < 750 ms.",
}

def load(out: Path, names: list[str]) -> dict[str, list[dict]]:
    """The rows of each spec's results file (name -> rows; none when it is missing or
    empty)."""
    return {name: read_rows_if_any(str(out / f"{name}.csv")) for name in names}


def _rows_for(rows: dict[str, list[dict]], prefix: str) -> list[dict]:
    return [r for name in sorted(rows) if name.startswith(prefix) for r in rows[name]]


def fusion_section(rows: list[dict]) -> list[str]:
    """Figure 12: per model and data set, each variant's cycles and speedup over unfused, and
    which variant wins."""
    fus = fusion_table(ok_rows(rows))
    if not fus:
        return ["No fusion results (the fig12 sweeps did not run or every row failed)."]
    body, winners = [], []
    groups: dict = {}
    for f in fus:
        groups.setdefault((f["model"], f["data"]), []).append(f)
    for (model, data), fs in groups.items():
        best = max(fs, key=lambda f: (f["speedup"] or 0))
        winners.append(f"{model} on {data}: **{best['variant']}** ({_x(best['speedup'])})")
        for f in fs:
            body.append([model, data, f["variant"], _n(f["cycles"]), _x(f["speedup"]),
                         "<-" if f is best else ""])
    return [table(["model", "data", "variant", "cycles", "speedup", "best"], body,
                  {3, 4}), "", "Winner per model and data set: " + "; ".join(winners) + "."]


def gcn_section(rows: list[dict]) -> list[str]:
    """Figure 14: GCN FLOPs and bytes normalized to unfused, with operational intensity."""
    fus = [f for f in fusion_table(ok_rows(rows)) if f["model"] == "gcn"]
    if not fus:
        return ["No GCN fusion results."]
    body = [[f["data"], f["variant"], _n(f["flops"]), _n(f["bytes"]),
             f"{f['flops_norm']:.2f}" if f["flops_norm"] is not None else "-",
             f"{f['bytes_norm']:.2f}" if f["bytes_norm"] is not None else "-",
             f"{f['flops'] / f['bytes']:.3f}" if f["bytes"] else "-"] for f in fus]
    # configurations that did not simulate in time (the widened full fusion on large graphs)
    # still have the estimator's counts, which match the simulator's on every GCN row that
    # did simulate (Table 2): shown, marked "(est.)", normalized to the unfused simulation
    base = {f["data"]: f for f in fus if f["variant"] == "unfused"}
    done = {(f["data"], f["variant"]) for f in fus}
    for r in rows:
        if r["model"] != "gcn" or r["status"] == "ok" or r["data"] not in base \
                or (r["data"], r["variant"]) in done or r["est_flops"] is None:
            continue
        b = base[r["data"]]
        body.append([r["data"], f"{r['variant']} (est.)", _n(r["est_flops"]),
                     _n(r["est_bytes"]), f"{r['est_flops'] / b['flops']:.2f}",
                     f"{r['est_bytes'] / b['bytes']:.2f}",
                     f"{r['est_flops'] / r['est_bytes']:.3f}" if r["est_bytes"] else "-"])
    out = [table(["data", "variant", "FLOPs", "bytes", "FLOPs / unfused", "bytes / unfused",
                  "FLOPs / byte"], body, {2, 3, 4, 5, 6})]
    if any(row[1].endswith("(est.)") for row in body):
        out += ["", "(est.): the configuration did not simulate within its timeout; its FLOPs "
                "and bytes are the estimator's (`fuseflowc estimate`)."]
    return out


def parallel_section(rows: list[dict]) -> list[str]:
    """Figure 15: cycles per parallel factor at each index, and nested; speedup over the
    serial graph (the best factor-1 row)."""
    ok = ok_rows(rows)
    if not ok:
        return ["No parallelization results."]

    def sites(par: str) -> dict[tuple[str, int], list[str]]:
        """(index, factor) -> statements: the directives splitting one index of several
        statements by the same factor (e.g. `j` of O, den and mx, which the fused graph
        iterates as three copies) are one split of that index (none for a serial row)."""
        out: dict[tuple[str, int], list[str]] = {}
        for part in par.split(",") if par else ():
            site, _, f = part.rpartition("=")
            stmt, _, index = site.rpartition(":")
            out.setdefault((index, int(f)), []).append(stmt)
        return out

    def name(index: str, stmts: list[str]) -> str:
        return f"{'/'.join(sorted(stmts))}:{index}"

    parsed = [(r, sites(r["parallel"])) for r in ok]
    total = {id(r): math.prod(f for _, f in s) for r, s in parsed}
    serial = [r["cycles"] for r, _ in parsed if total[id(r)] == 1]
    base = min(serial) if serial else None
    groups: dict = {}
    for r, s in parsed:
        if not r["parallel"]:
            continue
        f = total[id(r)]
        if r["variant"] == "nested":
            site = " x ".join(f"{name(i, st)} by {k}" for (i, k), st in s.items())
        else:
            site = " x ".join(name(i, st) for (i, _), st in s.items())
        if "reduce=lanes" in (r["pipeline"] or ""):
            site += " (lanes)"
        g = groups.setdefault(site, {})
        g[f] = min(r["cycles"], g.get(f, r["cycles"]))
    factors = sorted({f for g in groups.values() for f in g})
    body = []
    for site in sorted(groups, key=lambda s: (" x " in s, s)):
        g = groups[site]
        body.append([site, *(f"{_n(g[f])} ({_x(_ratio(base, g[f]))})" if f in g else "-"
                             for f in factors)])
    return [f"Serial (factor 1): {_n(base)} cycles. Cells: cycles (speedup over serial).", "",
            table(["parallelized", *(f"F = {f}" for f in factors)], body)]


def block_section(rows: list[dict]) -> list[str]:
    """Figure 16: cycles per block size against the unblocked program on the same mask."""
    blk = block_table(ok_rows(rows))
    if not blk:
        return ["No blocking results."]
    body = [[b["data"], "unblocked" if b["block"] == "none" else f"b = {b['block']}",
             _n(b["cycles"]), _x(b["speedup"])] for b in blk]
    return [table(["data", "block", "cycles", "speedup over unblocked"], body)]


def order_section(rows: list[dict]) -> list[str]:
    """Figure 17: the spread over dataflow orders, normalized to the worst."""
    orders = order_table(ok_rows(rows))
    if not orders:
        return ["No order sweep results."]
    body, lines = [], []
    for o in orders:
        pipe = o["pipeline"] or "(none)"
        spread = _ratio(o["worst"], o["best"])
        body.append([o["model"], pipe, str(o["orders"]), _n(o["best"]), _n(o["median"]),
                     _n(o["worst"]), _x(spread), str(o["best_order"])])
        lines.append(f"- opt pipeline {pipe}: normalized to the worst, sorted: "
                     + ", ".join(f"{v:.3f}" for v in o["normalized"]))
    failed = [r for r in rows if r["status"] != "ok"]
    out = [table(["model", "opt", "orders run", "best", "median", "worst", "worst / best",
                  "best order"], body, {2, 3, 4, 5, 6, 7}), "", *lines]
    if failed:
        out += ["", f"{len(failed)} order configurations did not run: " + "; ".join(
            sorted({f"order {r['order']}: {r['error']}" for r in failed}))]
    return out


def estimator_section(rows: list[dict]) -> list[str]:
    """Table 2: the estimator's error against the simulator over every simulated row."""
    est = estimator_table(ok_rows(rows))
    if not est["overall"]:
        return ["No estimates in the results."]
    return [table(["model", "rows", "FLOPs mean err", "FLOPs max err", "bytes mean err",
                   "bytes max err"], _estimator_rows(est))]


def orders_count_section(out: Path) -> list[str]:
    """Table 3: order counts from orders.json."""
    p = out / "orders.json"
    if not p.exists():
        return ["orders.json is missing (the orders part did not run)."]
    body = [[e["program"], " ".join(e["flags"]) or "-", str(e.get("regions", "-")),
             _sci(e.get("constrained")), _sci(e.get("free"))] for e in json.loads(p.read_text())]
    return [table(["program", "fuse flags", "regions", "orders (storage-constrained)",
                   "orders (--free-input-order)"], body, {2, 3, 4}), "",
            "Orders of a program = the product of its regions' counts (`fuseflowc orders "
            "--json`, exact)."]


def _sci(x) -> str:
    if x is None:
        return "error"
    return f"{x:,}" if x < 1e6 else f"{x:.2e}"


def compile_section(out: Path) -> list[str]:
    """Compile times from bench_compile's output lines."""
    p = out / "compile.txt"
    if not p.exists():
        return ["compile.txt is missing (the compile part did not run)."]
    wall, cpu, failed = {}, {}, []
    for line in p.read_text().splitlines():
        m = re.match(r"compile-(cpu-)?ms (\S+): (\d+)", line)
        if m:
            (cpu if m.group(1) else wall)[m.group(2)] = int(m.group(3))
        elif line.startswith("compile failed"):
            failed.append(line)
    if not wall:
        return ["No compile times recorded."] + failed
    body = [[m, _n(wall[m]), _n(cpu.get(m))] for m in sorted(wall)]
    worst = max(wall.values())
    return [table(["model", "wall ms (median)", "CPU ms"], body), "",
            f"Slowest: {worst:,} ms wall (fuse | lower as two processes, Python start-up "
            f"included)."] + failed


def timing_section(out: Path) -> list[str]:
    """Wall time per part."""
    p = out / "timings.json"
    if not p.exists():
        return ["No timings recorded."]
    t = json.loads(p.read_text())
    body = [[k, f"{v['seconds']:,.1f}", v["status"]] for k, v in sorted(
        t.items(), key=lambda kv: (kv[0].startswith("total"), kv[0]))]
    return [table(["part", "wall s", "status"], body, {1})]


def failed_section(rows: dict[str, list[dict]]) -> list[str]:
    """Every configuration that did not simulate and check, except the order sweep's (listed
    in its own section)."""
    bad = [(n, r) for n in sorted(rows) for r in rows[n]
           if r["status"] != "ok" and not n.startswith("fig17")]
    if not bad:
        return ["None."]
    return [table(["sweep", "model", "variant", "params", "data", "status", "error"],
                  [[n, r["model"], r["variant"], r["parallel"] or r["block"] or "-", r["data"],
                    r["status"], (r["error"] or "")[:120]] for n, r in bad], set())]


def render(out: Path, names: list[str], scale: str, jobs: int) -> str:
    """The whole SUMMARY.md text."""
    rows = load(out, names)
    fig12 = _rows_for(rows, "fig12")
    sections = [
        ("Wall time", None, timing_section(out)),
        ("Figure 12: speedup of partial and full fusion over unfused", "fig12",
         fusion_section(fig12)),
        ("Figure 14: GCN FLOPs and bytes normalized to unfused", "fig14", gcn_section(fig12)),
        ("Figure 15: BigBird attention, parallel factor and location", "fig15",
         parallel_section(_rows_for(rows, "fig15"))),
        ("Figure 16: BigBird attention, block size", "fig16",
         block_section(_rows_for(rows, "fig16"))),
        ("Figure 17: dataflow orders of the nested matmul on KarateClub", "fig17",
         order_section(_rows_for(rows, "fig17"))),
        ("Table 2: estimator error (estimate vs simulated, every simulated row)", "table2",
         estimator_section([r for n in sorted(rows) for r in rows[n]])),
        ("Table 3: dataflow order counts", "table3", orders_count_section(out)),
        ("Compile times", "compile", compile_section(out)),
        ("Failed configurations", None, failed_section(rows)),
    ]
    text = [f"# FuseFlow Section 8 with fuseflowc (`make bench`, scale: {scale}, -j {jobs})", "",
            "Simulated cycles, FLOPs and bytes from `fuseflowc sweep` (every configuration "
            "checked against the reference evaluator); sizes and choices in docs/bench.md; "
            "per-sweep reports (and plots, with matplotlib) in the sub-directories.", ""]
    for title, key, body in sections:
        text += [f"## {title}", "", *body, ""]
        if key in PAPER:
            text += [PAPER[key], ""]
    return "\n".join(text).rstrip() + "\n"


def write_summary(out: Path, names: list[str], scale: str, jobs: int) -> str:
    """Write OUT/SUMMARY.md; returns its text."""
    text = render(out, names, scale, jobs)
    (out / "SUMMARY.md").write_text(text)
    return text
