"""`make bench-plan-models` (issue 22): the planner on models it never saw (not in its warehouse
nor in bench-plan): GIN, a GAT-style attention, a transform-first GCN and a pruned MLP
(ir_examples/models/{gin,gat,gcn_transform_first,mlp_pruned}), on real graphs.

Per model and graph: the space is every valid fusion plan of the planner's interesting points
(all 2^m assignments, deduplicated by their regions), each compiled with the default pipeline
(`lower`'s) and with it minus `locate`, fused plainly and with --inline-widened (--share too
where a statement has several consumers), all in fuse's order 0; each is simulated (the
compiled engine). The plan is made from the program as written (no directives) with the same
data, validated, then simulated. One row per model: the space's size, its best, the plan's
cycles and their ratio (goal: within 5%).

    python -m fuseflowc.bench.plan_models --graph cora=../shared/data/cora.npz --out results/pm
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("gin", "gat", "gcn_transform_first", "mlp_pruned")
ROOT = Path(__file__).resolve().parents[2]


def make_data(model: str, graph: str, out: Path) -> Path:
    """gen-data for `model` from graph file `graph` (the MLP: the graph's features, pruned
    random weights at density 0.1)."""
    d = out / f"data_{model}"
    if d.exists():
        return d
    prog = ROOT / "ir_examples" / "models" / model / f"{model}.ff"
    cmd = [sys.executable, "-m", "fuseflowc", "gen-data", str(prog), "-o", str(d), "--seed", "1"]
    if model == "mlp_pruned":
        # no adjacency: the features come from a GCN's data of the same graph
        src = make_data("gcn_transform_first", graph, out)
        import numpy as np
        import scipy.sparse as sp
        x = sp.load_npz(src / "X.npz")
        c = int(np.load(src / "W2.npy").shape[1])
        cmd += ["--size", f"N={x.shape[0]}", "--size", f"F={x.shape[1]}", "--size", f"C={c}",
                "--density", "W1=0.1", "--density", "W2=0.1", "--density", "X=0.5"]
        subprocess.run(cmd, check=True, capture_output=True)
        sp.save_npz(d / "X.npz", x)
        return d
    subprocess.run(cmd + ["--graph", graph], check=True, capture_output=True)
    return d


def simulate(program, data: Path, flags: dict, passes: str) -> int | str:
    """Simulated cycles of `program` (checked against the reference), or the error."""
    from fuseflowc import pipeline
    from fuseflowc.diagnostics import UserError
    try:
        c = pipeline.compile(program, pipeline.CompileOptions(passes=passes, **flags))
        inputs, sizes = pipeline.load_data(c.module, str(data))
        res = pipeline.simulate(c.module, inputs, sizes)
        ref = pipeline.reference(c.program, str(data), sizes)
        bad = pipeline.check(c.module, res, ref)
        return f"check: {bad[0]}" if bad else int(sum(k.cycles for k in res.kernels))
    except UserError as e:
        return f"error: {str(e).splitlines()[0]}"


def space(planner) -> list[tuple[tuple[str, ...], ...]]:
    """Every valid assignment's regions (statement tuples), deduplicated, fuse-none first."""
    stmts = [s.name for s in planner.p.statements]
    points = planner.fusable_edges()
    seen, out = set(), []
    for q in itertools.product((True, False), repeat=len(points)):
        regs = planner.components(stmts, [pt for pt, mat in zip(points, q) if not mat])
        where = {s: k for k, r in enumerate(regs) for s in r}
        if any(mat and where[a] == where[b] for (a, b), mat in zip(points, q)):
            continue
        if not planner.acyclic(regs):
            continue
        key = tuple(planner.ordered(r) for r in regs)
        if key not in seen:
            seen.add(key)
            out.append(key)
    return sorted(out, key=lambda k: (len(k) != len(stmts), k))


def with_regions(program, regions):
    from dataclasses import replace

    from fuseflowc.lang import ast
    keep = [d for d in program.directives if not isinstance(d, (ast.Fuse, ast.Order,
                                                                ast.Parallelize))]
    fuse = [ast.Fuse(f"r{k}", r) for k, r in enumerate(regions) if len(r) > 1]
    return replace(program, directives=keep + fuse)


def bench_model(model: str, gname: str, graph: str, out: Path) -> dict:
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.load import load_program, program_from_source
    from fuseflowc.plan.cost import CostOptions, pipeline_of
    from fuseflowc.plan.emit import program_text
    from fuseflowc.plan.search import Planner, PlanOptions
    data = make_data(model, graph, out)
    program = load_program(str(ROOT / "ir_examples" / "models" / model / f"{model}.ff"))
    multi = any(len(v) > 1 for v in Planner(program, CostOptions(str(data)),
                                            PlanOptions()).ev.consumers.values())
    flag_sets = [{}, {"inline_widened": True}] + ([{"share": True}] if multi else [])
    rows = []
    for flags in flag_sets:   # the interesting points depend on the flags (widening)
        for regions in space(Planner(program, CostOptions(str(data), **flags), PlanOptions())):
            for locate in (True, False):
                cyc = simulate(with_regions(program, regions), data, flags, pipeline_of(locate))
                rows.append((cyc, regions, flags, locate))
    ok = [r for r in rows if isinstance(r[0], int)]
    best = min(ok, key=lambda r: r[0])
    unfused = next(r[0] for r in rows if len(r[1]) == len(program.statements)
                   and not r[2] and r[3])
    t0, c0 = time.perf_counter(), time.process_time()
    from fuseflowc.plan.flags import plan_over_flags
    _, res, cost = plan_over_flags(program, CostOptions(str(data)), PlanOptions())
    flags = {k: True for k in ("inline_widened", "share") if getattr(cost, k)}
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    text = program_text(program, res, [f"bench-plan-models: {model} on {gname}"])
    (out / f"{model}_{gname}_plan.ff").write_text(text)
    planned = program_from_source(Source(f"{model}_plan.ff", text))
    plan_cyc = simulate(planned, data, flags, res.passes)
    name = lambda r: ("; ".join("+".join(x) for x in r[1] if len(x) > 1) or "unfused") + \
        ("" if r[3] else " (no locate)") + "".join(f" --{k.replace('_', '-')}" for k in r[2])
    with open(out / f"{model}_{gname}_space.txt", "w") as f:
        for r in sorted(rows, key=lambda r: (not isinstance(r[0], int), str(r[0]).zfill(12))):
            f.write(f"{r[0]}\t{name(r)}\n")
    return {"model": model, "data": gname, "configs": len(rows), "ok": len(ok),
            "best": best[0], "best_config": name(best), "unfused": unfused, "plan": plan_cyc,
            "plan_config": name((0, tuple(rp.statements for rp in res.regions), flags,
                                 res.locate)),
            "est": res.total.cycles, "seconds": seconds, "cpu": cpu}


def report(rows, out=sys.stdout) -> None:
    print("| model | data | configs (ok) | simulated best | best config | unfused (default "
          "pipeline) | plan | plan config | plan / best | plan s (CPU) |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in rows:
        ratio = f"{r['plan'] / r['best']:.3f}" if isinstance(r["plan"], int) else "-"
        plan = f"{r['plan']:,}" if isinstance(r["plan"], int) else r["plan"]
        print(f"| {r['model']} | {r['data']} | {r['configs']} ({r['ok']}) | {r['best']:,} | "
              f"{r['best_config']} | {r['unfused']:,} | {plan} | {r['plan_config']} | {ratio} "
              f"| {r['seconds']:.1f} ({r['cpu']:.1f}) |", file=out, flush=True)
    good = [r for r in rows if isinstance(r["plan"], int) and r["plan"] <= 1.05 * r["best"]]
    print(f"\nbench-plan-models: {len(good)}/{len(rows)} plans within 5% of the simulated "
          f"best", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.plan_models")
    ap.add_argument("--graph", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--out", default="results/plan-models")
    ap.add_argument("--only", default=None, help="comma-separated model names")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for g in a.graph:
        gname, _, path = g.partition("=")
        for model in MODELS:
            if a.only and model not in a.only.split(","):
                continue
            (out / gname).mkdir(exist_ok=True)
            row = bench_model(model, gname, path, out / gname)
            rows.append(row)
            print(f"bench-plan-models {model} {gname}: best {row['best']} ({row['best_config']})"
                  f", plan {row['plan']} ({row['plan_config']})", file=sys.stderr, flush=True)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
