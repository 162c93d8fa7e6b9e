"""Loop schedules measured (docs/language.md, "Lists and loops: measured"): each loop model of
ir_examples/models compiled unrolled (one region per layer), reused (one configuration for
every layer) and, for the stacked RNN, in wavefront order; simulated with the compiled engine
and checked against the reference evaluator. Prints markdown tables: figures per schedule, and
the growth with the number of layers (1, 2, 4, 8) with a least-squares slope.

    python -m fuseflowc.bench.loops [--quick]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parents[2] / "ir_examples" / "models"

# model: (base file, its loop size's dim, the per-layer fuse directive, data sizes)
CASES = {
    "gcn_deep": ("gcn_deep/gcn_deep.ff", "L", "fuse layer: AX, Z, Bs, Hs",
                 {"N": 32, "F": 16, "C": 4}),
    "gpt3_layers": ("gpt3_layers/gpt3_layers.ff", "L",
                    (MODELS / "gpt3_layers/gpt3_layers_partial.ff").read_text().split(
                        "include \"gpt3_layers.ff\"")[1].strip(),
                    {"S": 16, "E": 16, "NH": 2, "DH": 8, "FF": 64}),
    "rnn_stacked": ("rnn_stacked/rnn_stacked.ff", "D", "", {"K": 8}),
}
SCHEDULES = {"gcn_deep": ("unroll", "reuse"), "gpt3_layers": ("unroll", "reuse"),
             "rnn_stacked": ("unroll", "reuse", "wavefront", "wavefront + reuse")}
LOOP_VAR = {"gcn_deep": "l", "gpt3_layers": "l", "rnn_stacked": "q"}


def program(model: str, schedule: str, layers: int | None = None):
    """The checked program of `model` under `schedule`, with `layers` iterations if given."""
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.checker import check
    from fuseflowc.lang.parser import parse_program
    base, dim, fuse, _ = CASES[model]
    path = MODELS / base
    text = path.read_text()
    if layers is not None:
        text = re.sub(rf"^dim {dim} = \d+", f"dim {dim} = {layers}", text, flags=re.M)
    text += "\n" + fuse + "\n"
    if "reuse" in schedule:
        text += f"schedule {LOOP_VAR[model]}: reuse\n"
    if "wavefront" in schedule:
        text += "schedule t: wavefront\n"
    return check(parse_program(Source(str(path), text)))


def measure(model: str, schedule: str, layers: int | None = None) -> dict:
    """Compile, simulate and check one case; its figures."""
    from fuseflowc import pipeline
    from fuseflowc.data.gen import random_inputs
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.report import result_stats, schedule_stats
    p = program(model, schedule, layers)
    sizes = {**{d.name: d.size for d in p.dims if d.size is not None}, **CASES[model][3]}
    inputs = random_inputs([s for s in p.specs() if s.name in set(p.inputs)], sizes, 1)
    module = pipeline.compile(p, pipeline.CompileOptions(verify=False)).module
    arch = Arch.load()
    t0 = time.perf_counter()
    result = pipeline.simulate(module, inputs, sizes, arch)
    problems = pipeline.check(module, result, pipeline.reference(p, inputs))
    if problems:
        raise SystemExit(f"{model} {schedule}: simulated outputs differ:\n" + "\n".join(problems))
    stats, sched = result_stats(result, arch), schedule_stats(result, module, arch)
    return {"cycles": stats["total"]["cycles"],
            "bytes": stats["total"]["bytes_read"]["total"]
            + stats["total"]["bytes_written"]["total"],
            "graphs": len(module.graphs), **sched, "seconds": time.perf_counter() - t0,
            # the run's time: a wavefront's waves in parallel lanes, plus configuring
            "time": sched.get("wavefront_cycles", stats["total"]["cycles"])
            + sched["configuration_cycles"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the growth of gcn_deep")
    ap.add_argument("--models", default=",".join(CASES),
                    help="comma-separated models (default: all)")
    args = ap.parse_args(argv)
    chosen = args.models.split(",")
    if not args.quick:
        print("| model | schedule | graphs | configurations | cycles | wavefront cycles | "
              "configuration cycles | run time | bytes |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for model, schedules in SCHEDULES.items():
            for sched in schedules if model in chosen else ():
                m = measure(model, sched)
                wave = f"{m['wavefront_cycles']:,}" if "wavefront_cycles" in m else ""
                print(f"| {model} | {sched} | {m['graphs']} | {m['configurations']} | "
                      f"{m['cycles']:,} | {wave} | {m['configuration_cycles']:,} | "
                      f"{m['time']:,} | {m['bytes']:,} |", flush=True)
    print()
    print("| model | schedule | layers 1 / 2 / 4 / 8: cycles (waves in parallel) + configuration "
          "| slope per layer |")
    print("|---|---|---|---:|")
    growth = {"gcn_deep": ("L", ("unroll", "reuse")), "gpt3_layers": ("L", ("unroll", "reuse")),
              "rnn_stacked": ("D", ("unroll", "wavefront", "wavefront + reuse"))}
    for model, (_, scheds) in growth.items():
        if (args.quick and model != "gcn_deep") or model not in chosen:
            continue
        for sched in scheds:
            ns = (1, 2, 4, 8)
            ys = [measure(model, sched, n)["time"] for n in ns]
            slope = float(np.polyfit(ns, ys, 1)[0])
            print(f"| {model} | {sched} | {' / '.join(f'{y:,}' for y in ys)} | "
                  f"{slope:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
