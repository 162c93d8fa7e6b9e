"""`make bench-fabric`: Figure 12's four models, unfused / partial / full, on the unlimited fabric
and on finite ones (docs/fabric.md).

    python -m fuseflowc.bench.fabric ir_examples/bench/fig12_*.toml --json out/bench_fabric.json

Each spec's programs of variant unfused, partial and full (`full-stored` where a spec has no
`full`) are compiled as `fuseflowc sweep`
compiles them (fuse | lower | opt with the spec's pipeline) on the spec's first data set; then,
per fabric, mapped with `opt -p 'map{fabric=NAME}'` (a graph that does not fit is split into
configurations, its cut streams spilled to DRAM) and simulated with that fabric in the machine
description. Every split run's outputs are compared with the unlimited run's (they must be the
same tensors). Printed per model, variant and fabric: cycles with each configuration's load
(sim/arch.toml [config]), energy (pJ), energy-delay product, configurations and the bytes the
cut streams spill; `--markdown FILE` writes the same table as Markdown.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time

#: The fabrics of the table (fuseflowc.fabric.PRESETS), the unlimited one first.
FABRICS = ("unlimited", "onyx-quarter", "onyx-eighth")
VARIANTS = ("unfused", "partial", "full")
#: A spec without a `full` variant has its full fusion as `full-stored` (plain `fuse`: GraphSAGE's
#: widened full fusion does not finish on Cora; ir_examples/bench/fig12_graphsage.toml).
FULL_STORED = "full-stored"


def run_fabric(module, inputs: dict, sizes: dict, arch_sets: tuple, fabric: str):
    """(row figures, SimResult) of `module` mapped onto and simulated on `fabric`."""
    from fuseflowc import pipeline
    from fuseflowc.opt import parse_pipeline, run_pipeline
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.energy import add_energy
    from fuseflowc.sim.report import result_stats, schedule_stats
    m = copy.deepcopy(module)
    if fabric != "unlimited":
        run_pipeline(m, parse_pipeline(f"map{{fabric={fabric}}}"))
    arch = Arch.load(None, tuple(arch_sets) + (f"fabric.preset={fabric}",))
    t0 = time.perf_counter()
    result = pipeline.simulate(m, inputs, sizes, arch)
    stats = result_stats(result, arch)
    sched = schedule_stats(result, m, arch)
    add_energy(stats, m, arch)
    cycles = sched["cycles_with_configuration"]
    energy = stats["total"]["energy_pj"]["total"]
    row = {"fabric": fabric, "cycles": cycles, "energy_pj": energy,
           "edp": energy * cycles, "configurations": sched["configurations"],
           "spilled_bytes": sched.get("spilled_bytes", 0),
           "seconds": round(time.perf_counter() - t0, 1)}
    return row, m, result


def run_config(config: dict, base: str, cache: str, fabrics) -> list[dict]:
    """The rows of one configuration (a model's variant on a data set), one per fabric."""
    from fuseflowc import pipeline
    from fuseflowc.bench.estimate_cycles import _build
    from fuseflowc.sim.compare import compare
    from fuseflowc.sweep.worker import data_dir_for
    program, module, _ = _build(config, base)
    data_dir = data_dir_for(config, program, {"base": base, "data_cache": cache})
    inputs, sizes = pipeline.load_data(module, data_dir)
    rows, whole = [], None
    for fabric in fabrics:
        row, m, result = run_fabric(module, inputs, sizes, config["arch"], fabric)
        outs = pipeline.written_outputs(m, result)
        if whole is None:
            whole = outs
        else:
            problems = compare(outs, whole)
            row["same_outputs"] = not problems
        rows.append({"model": config["model"], "variant": config["variant"],
                     "data": config["data"], **row})
    return rows


def markdown(rows: list[dict]) -> str:
    """The table of every row as Markdown."""
    head = ("model", "variant", "fabric", "cycles", "energy (uJ)", "EDP (uJ x Mcycles)",
            "configurations", "spilled bytes")
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        out.append(f"| {r['model']} | {r['variant']} | {r['fabric']} | {r['cycles']:,} | "
                   f"{r['energy_pj'] / 1e6:,.1f} | {r['edp'] / 1e12:,.1f} | "
                   f"{r['configurations']} | {r['spilled_bytes']:,} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.fabric",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="+", help="sweep spec files (TOML) of Figure 12's models")
    ap.add_argument("--fabrics", default=",".join(FABRICS),
                    help=f"comma-separated fabric presets (default {','.join(FABRICS)})")
    ap.add_argument("--json", metavar="FILE", help="write every row to FILE")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as Markdown to FILE")
    args = ap.parse_args(argv)
    from fuseflowc.diagnostics import UserError
    from fuseflowc.fabric import PRESETS
    from fuseflowc.sweep.grid import expand_counted
    from fuseflowc.sweep.spec import parse_spec
    fabrics = [f.strip() for f in args.fabrics.split(",") if f.strip()]
    bad = [f for f in fabrics if f not in PRESETS]
    if bad or not fabrics:
        ap.error(f"--fabrics: unknown {', '.join(bad) or '(none)'}; known: {', '.join(PRESETS)}")
    rows: list[dict] = []
    failed = 0
    with tempfile.TemporaryDirectory(prefix="fuseflowc-bench-fabric-") as cache:
        for path in args.specs:
            try:
                spec = parse_spec(path)
            except UserError as e:
                print(e.format().rstrip(), file=sys.stderr)
                failed += 1
                continue
            base = os.path.dirname(spec.path) or "."
            every = expand_counted(spec)
            wanted = VARIANTS if any(c["variant"] == "full" for c in every) \
                else VARIANTS[:2] + (FULL_STORED,)
            configs = [c for c in every if c["variant"] in wanted]
            first = configs[0]["data"] if configs else None
            for config in sorted((c for c in configs if c["data"] == first),
                                 key=lambda c: wanted.index(c["variant"])):
                try:
                    got = run_config(config, base, cache, fabrics)
                except UserError as e:
                    failed += 1
                    print(f"{config['model']} {config['variant']}: "
                          f"{e.format().splitlines()[0]}", file=sys.stderr)
                    continue
                for r in got:
                    print(f"{r['model']:10} {r['variant']:8} {r['fabric']:13} cycles "
                          f"{r['cycles']:>12,} energy-uJ {r['energy_pj'] / 1e6:>10,.1f} "
                          f"configs {r['configurations']:>3} spilled {r['spilled_bytes']:>12,}"
                          + ("" if r.get("same_outputs", True) else "  OUTPUTS DIFFER"),
                          flush=True)
                rows += got
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows))
    differ = [r for r in rows if not r.get("same_outputs", True)]
    if differ:
        print(f"bench-fabric: {len(differ)} split runs computed other outputs", file=sys.stderr)
    return 1 if failed or differ or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
