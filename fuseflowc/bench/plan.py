"""`make bench-plan` (issue 14, item 4): the planner's plan against an exhaustive sweep's best.

For each sweep spec (the models' fusion variants of Figure 12, BigBird attention's variants,
the nested matmul's orders of Figure 17) the sweep is run (resumably, into OUT/NAME.csv) and
its best configuration per model and data set taken (fewest simulated cycles, status ok). The
planner then plans the model's program without any directives (the unfused variant's program,
regions dropped) on the same data, with the fuse flags the spec's variants use, and its
program is simulated and checked as one more sweep configuration. One row per model and data
set: the sweep's best, the plan's cycles, their ratio (target: within 5%) and the planner's
wall time (target: under 2 s).

    python -m fuseflowc.bench.plan --specs ir_examples/bench/quick --out results/plan-quick
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

#: spec file names the bench runs, in its table's order: in --specs (the paper bench's specs,
#: ir_examples/bench or its quick/), except BigBird attention's variants, which the paper
#: bench does not sweep (ir_examples/sweeps/bigbird_fusion[_quick].toml, --bigbird)
SPECS = ("fig12_gcn.toml", "fig12_graphsage.toml", "fig12_sae.toml", "fig12_gpt3.toml",
         "bigbird", "fig17_orders.toml")


def plan_row(spec, rows: list[dict], out: Path, cache: str) -> dict:
    """Plan the model of `rows` (one model and data set of `spec`), simulate the plan, and
    compare with the rows' best."""
    from dataclasses import replace

    from fuseflowc.lang import ast
    from fuseflowc.lang.load import load_program
    from fuseflowc.plan.cost import CostOptions
    from fuseflowc.plan.emit import program_text
    from fuseflowc.plan.search import Planner, PlanOptions
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sweep.worker import data_dir_for, run_config

    ok = [r for r in rows if r.get("status") == "ok" and r.get("cycles") is not None]
    best = min(ok, key=lambda r: (r["cycles"], r["id"])) if ok else None
    ref = best or rows[0]
    base = Path(spec.path).parent
    path = os.path.normpath(base / ref["program"])
    program = load_program(path)
    program = replace(program, directives=[d for d in program.directives
                                           if not isinstance(d, (ast.Fuse, ast.Order,
                                                                 ast.Parallelize))])
    ctx = {"base": str(base), "data_cache": cache, "check": True, "timeout": 900}
    data = data_dir_for(ref, program, ctx)
    flags = {k: any(r.get(k) for r in rows) for k in ("inline_widened", "free_input_order",
                                                     "share")}
    arch = Arch.load(None, ())
    t0, c0 = time.perf_counter(), time.process_time()
    planner = Planner(program, CostOptions(str(data), bandwidth=arch.bandwidth, **flags),
                      PlanOptions())
    result = planner.run()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    name = f"{ref['model']}_{ref['data']}_plan.ff"
    text = program_text(program, result, [f"bench-plan: {ref['model']} on {ref['data']}"])
    (out / name).write_text(text, encoding="utf-8")
    config = dict(ref)
    config.update({"program": os.path.relpath(out / name, base), "schedule": [], "order": 0,
                   "order_region": None, "params": {},
                   "pipeline": result.passes, **flags})
    row = run_config(config, ctx)
    cyc = row.get("cycles") if row.get("status") == "ok" else None
    return {"model": ref["model"], "data": ref["data"], "configs": len(rows),
            "best": best["cycles"] if best else None,
            "best_config": (f"{best['variant']} #{best['order']} {best['pipeline'] or '-'}"
                            if best else "none ok"),
            "plan": cyc, "plan_status": row.get("status"), "plan_error": row.get("error"),
            "plan_regions": "; ".join(", ".join(r.statements) for r in result.regions
                                      if len(r.statements) > 1) or "(unfused)",
            "est_cycles": result.total.cycles, "seconds": seconds, "cpu": cpu,
            "costed": result.stats.costed, "skipped": result.stats.skipped}


def report(rows: list[dict], out=sys.stdout) -> None:
    head = ("model", "data", "sweep configs", "sweep best", "best config", "plan cycles",
            "plan / best", "plan s (CPU)", "within 5%", "plan regions")
    print("| " + " | ".join(head) + " |", file=out)
    print("|" + "|".join("---" for _ in head) + "|", file=out)
    for r in rows:
        ratio = r["plan"] / r["best"] if r["plan"] and r["best"] else None
        ok = "yes" if ratio is not None and ratio <= 1.05 else "NO"
        plan = f"{r['plan']:,}" if r["plan"] else f"{r['plan_status']}: {r['plan_error']}"
        print(f"| {r['model']} | {r['data']} | {r['configs']} | "
              f"{r['best']:,} | {r['best_config']} | {plan} | "
              f"{ratio:.3f} | {r['seconds']:.2f} ({r['cpu']:.2f}) | {ok} | {r['plan_regions']} |"
              if ratio is not None else
              f"| {r['model']} | {r['data']} | {r['configs']} | {r['best']} | "
              f"{r['best_config']} | {plan} | - | {r['seconds']:.2f} ({r['cpu']:.2f}) | NO | "
              f"{r['plan_regions']} |", file=out)
    good = [r for r in rows if r["plan"] and r["best"] and r["plan"] <= 1.05 * r["best"]]
    fast = [r for r in rows if r["seconds"] < 2]
    cpu = [r for r in rows if r["cpu"] < 2]
    print(f"\nbench-plan: {len(good)}/{len(rows)} plans within 5% of the sweep's best; "
          f"{len(fast)}/{len(rows)} planned in under 2 s wall, {len(cpu)}/{len(rows)} in "
          f"under 2 s CPU", file=out)


def main(argv=None) -> int:
    from fuseflowc.sweep.results import read_rows
    from fuseflowc.sweep.runner import run_sweep
    from fuseflowc.sweep.spec import parse_spec
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.plan")
    ap.add_argument("--specs", default="ir_examples/bench/quick")
    ap.add_argument("--out", default="results/plan-quick")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--bigbird", default="ir_examples/sweeps/bigbird_fusion_quick.toml")
    ap.add_argument("--only", default=None, help="comma-separated spec names")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    only = set(a.only.split(",")) if a.only else None
    with tempfile.TemporaryDirectory(prefix="fuseflowc-bench-plan-") as cache:
        for name in SPECS:
            path = Path(a.bigbird) if name == "bigbird" else Path(a.specs) / name
            if not path.exists() or (only and name not in only):
                continue
            spec = parse_spec(str(path))
            results = out / (path.stem + ".csv")
            run_sweep(spec, str(results), jobs=a.jobs)
            groups: dict[tuple, list[dict]] = {}
            for r in read_rows(str(results)):
                groups.setdefault((r["model"], r["data"]), []).append(r)
            for key in sorted(groups):
                row = plan_row(spec, groups[key], out, cache)
                rows.append(row)
                print(f"bench-plan {row['model']} {row['data']}: sweep best {row['best']}, "
                      f"plan {row['plan']} ({row['seconds']:.2f} s)", file=sys.stderr)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
