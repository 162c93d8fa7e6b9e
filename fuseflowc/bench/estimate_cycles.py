"""`make bench-cycles`: the cycle model's error against the simulator on every configuration of
the bench's sweep specs (models, fusion variants, orders, parallel factors, blocks).

    python -m fuseflowc.bench.estimate_cycles ir_examples/bench/*.toml ir_examples/sweeps/*.toml

Each configuration of each spec's grid (fuseflowc.sweep.grid) is compiled as `fuseflowc sweep`
compiles it (fuse | lower | opt), its data made or found as the sweep finds it, estimated
(`estimate_module`) and simulated (the compiled engine when built). Configurations that fail to
compile or simulate are counted and left out. Printed per model: the configurations, the median
and max relative error |est - sim| / sim of total cycles, and how well the estimate ranks the
configurations of each data set (the same files or generator parameters, whichever spec names
them): the pairs it orders as the simulator does (pairs the simulator
puts within 2% of each other are ties, counted as agreeing either way) and whether its best
configuration is the simulator's best (or within 2% of it). `--json FILE` writes every row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

#: Configurations whose simulated cycles differ by less than this fraction are ties.
TIE = 0.02


def _build(config: dict, base: str):
    """(program, module, arch) of a configuration, compiled as `fuseflowc sweep` compiles it
    (without verifying the lowered module: the sweep does, and a bench need not)."""
    from dataclasses import replace

    from fuseflowc import pipeline
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sweep.worker import compile_options

    path = os.path.normpath(os.path.join(base, config["program"]))
    program = pipeline.load_program(path, tuple(config["schedule"]), config.get("unfused", False))
    options = replace(compile_options(config), verify=False)
    module = pipeline.compile(program, options, path).module
    return program, module, Arch.load(None, tuple(config["arch"]))


def run_config(config: dict, base: str, cache: str, simulate: bool = True) -> dict:
    """One configuration's row: model, variant, data, estimated cycles (total and per
    kernel), the estimate's wall time, and the simulated cycles (total and per kernel)."""
    from fuseflowc import pipeline
    from fuseflowc.estimate import DataStats, estimate_module
    from fuseflowc.sweep.worker import data_dir_for

    program, module, arch = _build(config, base)
    data_dir = data_dir_for(config, program, {"base": base, "data_cache": cache})
    stats = DataStats.from_dir(data_dir, module, arch.element_bytes)
    t0 = time.perf_counter()
    est = estimate_module(module, stats, arch)
    ms = (time.perf_counter() - t0) * 1000.0
    src = dict(config["data_source"])
    for k in ("dir", "graph"):   # the same files from any spec's directory: one data set
        if k in src and (k == "dir" or os.sep in str(src[k]) or str(src[k]).endswith(".npz")):
            src[k] = os.path.realpath(os.path.join(base, src[k]))
    row = {"id": config["id"], "model": config["model"], "variant": config["variant"],
           "data": config["data"], "data_key": json.dumps(src, sort_keys=True), "order": config["order"], "pipeline": config["pipeline"],
           "schedule": config["schedule"], "est": est.total.cycles,
           "est_kernels": {k: c.cycles for k, c in est.kernels.items()}, "est_ms": ms}
    if simulate:
        inputs, sizes = pipeline.load_data(module, data_dir)
        result = pipeline.simulate(module, inputs, sizes, arch)
        row["sim"] = sum(k.cycles for k in result.kernels)
        row["sim_kernels"] = {k.graph: k.cycles for k in result.kernels}
    return row


def _err(r: dict) -> float:
    return abs(r["est"] - r["sim"]) / r["sim"] if r["sim"] else 0.0


def ranking(rows: list[dict]) -> tuple[int, int, bool]:
    """(agreeing pairs, pairs, best agrees) of one group of configurations: a pair agrees when
    the estimate orders it as the simulator does, or the simulator ties it (within TIE);
    the best agrees when the estimate's best configuration is within TIE of the simulator's."""
    agree = pairs = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            pairs += 1
            hi = max(a["sim"], b["sim"])
            if hi == 0 or abs(a["sim"] - b["sim"]) / hi < TIE:
                agree += 1
            elif (a["sim"] < b["sim"]) == (a["est"] < b["est"]):
                agree += 1
    best_sim = min(r["sim"] for r in rows)
    pick = min(rows, key=lambda r: (r["est"], r["id"]))
    return agree, pairs, pick["sim"] <= best_sim * (1 + TIE)


def table(rows: list[dict]) -> list[dict]:
    """Per model: configurations, median and max error, ranking agreement over its data sets."""
    out = []
    for model in sorted({r["model"] for r in rows}):
        rs = [r for r in rows if r["model"] == model]
        errs = [_err(r) for r in rs]
        agree = pairs = best = groups = 0
        for data in sorted({r["data_key"] for r in rs}):
            g = [r for r in rs if r["data_key"] == data]
            a, p, b = ranking(g)
            agree, pairs, best, groups = agree + a, pairs + p, best + b, groups + 1
        out.append({"model": model, "configs": len(rs), "median": statistics.median(errs),
                    "max": max(errs), "agree": agree, "pairs": pairs, "best": best,
                    "groups": groups, "est_ms": statistics.median(r["est_ms"] for r in rs)})
    return out


def format_table(summary: list[dict], rows: list[dict]) -> str:
    """The table as Markdown, then the overall line."""
    lines = ["| model | configs | median err % | max err % | pairs ranked as sim | best = sim's best "
             "| estimate ms (median) |", "|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['model']} | {s['configs']} | {100 * s['median']:.1f} | "
                     f"{100 * s['max']:.1f} | {s['agree']}/{s['pairs']} | "
                     f"{s['best']}/{s['groups']} | {s['est_ms']:.1f} |")
    errs = [_err(r) for r in rows]
    lines.append("")
    lines.append(f"all: {len(rows)} configurations, median error {100 * statistics.median(errs):.1f}%,"
                 f" max {100 * max(errs):.1f}%")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.estimate_cycles",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="+", help="sweep spec files (TOML)")
    ap.add_argument("--json", metavar="FILE", help="write every row to FILE")
    ap.add_argument("--sim-cache", metavar="FILE",
                    help="reuse simulated cycles stored in FILE by id (and add new ones)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per configuration")
    args = ap.parse_args(argv)
    from fuseflowc.diagnostics import UserError
    from fuseflowc.sweep.grid import expand_counted
    from fuseflowc.sweep.spec import parse_spec

    cached: dict = {}
    if args.sim_cache and os.path.exists(args.sim_cache):
        with open(args.sim_cache) as f:
            cached = json.load(f)
    rows: list[dict] = []
    seen: set = set()
    failed = bad_specs = 0
    with tempfile.TemporaryDirectory(prefix="fuseflowc-bench-cycles-") as cache:
        for path in args.specs:
            try:
                spec = parse_spec(path)
            except UserError as e:   # e.g. a data set that is not there: the others still run
                print(e.format().rstrip(), file=sys.stderr)
                bad_specs += 1
                continue
            base = os.path.dirname(spec.path) or "."
            for config in expand_counted(spec):
                if config["id"] in seen:
                    continue
                seen.add(config["id"])
                hit = cached.get(config["id"])
                try:
                    row = run_config(config, base, cache, simulate=hit is None)
                except (UserError, RecursionError) as e:
                    failed += 1
                    if args.verbose:
                        print(f"skip {config['id']} {config['model']} {config['variant']}: "
                              f"{str(e).splitlines()[0][:100]}", file=sys.stderr)
                    continue
                if hit is not None:
                    row["sim"], row["sim_kernels"] = hit["sim"], hit["sim_kernels"]
                cached[config["id"]] = {"sim": row["sim"], "sim_kernels": row["sim_kernels"]}
                rows.append(row)
                if args.verbose:
                    print(f"{row['id']} {row['model']:18} {row['variant']:14} {row['data']:8} "
                          f"o{row['order']} {row['pipeline'] or '-':32} "
                          f"{' '.join(row['schedule'])[:40]:40} est {row['est']:>12.0f} "
                          f"sim {row['sim']:>12} err {100 * (row['est'] - row['sim']) / row['sim']:+6.1f}%",
                          file=sys.stderr)
    if args.sim_cache:
        with open(args.sim_cache, "w") as f:
            json.dump(cached, f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not rows:
        print("bench-cycles: no configuration ran", file=sys.stderr)
        return 1
    print(format_table(table(rows), rows))
    if failed:
        print(f"({failed} configurations did not compile or simulate and are left out)")
    return 1 if bad_specs else 0


if __name__ == "__main__":
    sys.exit(main())
