"""What a sweep spec costs at its full size, without running it whole: per spec, every
configuration compiled (as `fuseflowc sweep` compiles it) and grouped by run key (the
configurations that compile alike share one run: fuseflowc.sweep.reuse); per distinct run, in
a process of its own, its data made, its cycles estimated per kernel (the estimator's cycle
model), its simulation cut at `--cut` cycles per graph, the reference evaluation timed whole,
and the process's peak memory read. A run's simulation time is extrapolated from the pace of
the graph the cut stopped: graphs that finished count their measured wall time, the cut
graph's rest and the graphs after it their estimated cycles at that pace.

    python -m fuseflowc.bench.spec_cost ir_examples/bench/artifact/gcn_collab.toml
    python -m fuseflowc.bench.spec_cost SPEC... --cut 2000000 --json-out cost.json

Per distinct run it prints the variants it stands for, the estimated cycles, the pace (cycles
per wall second of the cut graph), the estimated simulation and reference wall times, the
peak resident memory, and every note of the simulator (a graph that fell back to the Python
engine says so); per spec the rows, the distinct runs and the estimated wall time of
`fuseflowc sweep SPEC -j 1`. Wall times, so a loaded machine reads slower: the load average
is printed with them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


class _Pace:
    """The simulator's progress hooks (sim.progress.Progress's interface): when each kernel
    started, and the last cycle it reported."""

    def __init__(self):
        self.kernels: list[list] = []     # [name, start wall, last cycle]

    def kernel(self, i: int, n: int, name: str) -> None:
        self.kernels.append([name, time.perf_counter(), 0])

    def tick(self, cycle: int, flops: int = 0) -> None:
        if self.kernels:
            self.kernels[-1][2] = cycle


def extrapolate(kernels: list[tuple[str, float, int]], est: dict[str, float], cut: int,
                cut_hit: bool) -> tuple[float, float | None]:
    """(estimated simulation seconds, pace in cycles/s of the graph the cut stopped or of the
    whole run) from `kernels` [(name, wall seconds, cycles reached)] in order: finished kernels
    count as measured; with `cut_hit`, the last one reached `cut` cycles, and its estimated
    remainder and every estimated kernel not reached run at its pace."""
    done = sum(w for _, w, _ in (kernels[:-1] if cut_hit else kernels))
    if not cut_hit:
        cycles = sum(c for _, _, c in kernels)
        wall = sum(w for _, w, _ in kernels)
        return done, (cycles / wall if wall > 0 else None)
    name, wall, _ = kernels[-1]
    pace = cut / wall if wall > 0 else None
    if pace is None:
        return done, None
    reached = {k for k, _, _ in kernels}
    rest = max(est.get(name, cut) - cut, 0.0) + sum(c for k, c in est.items() if k not in reached)
    return done + wall + rest / pace, pace


def _measure(config: dict, ctx: dict, cut: int, queue) -> None:
    """The child process: one distinct run, measured; puts its record on `queue`."""
    from fuseflowc import pipeline
    from fuseflowc.diagnostics import UserError
    from fuseflowc.estimate import DataStats, estimate_module
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sweep.worker import compile_options, data_dir_for, import_stages

    import_stages()
    rec: dict = {"id": config["id"]}
    try:
        path = os.path.normpath(os.path.join(ctx["base"], config["program"]))
        program = pipeline.load_program(path, tuple(config["schedule"]),
                                        config.get("unfused", False))
        t = time.perf_counter()
        module = pipeline.compile(program, compile_options(config), path).module
        rec["compile_s"] = time.perf_counter() - t
        arch = Arch.load(None, tuple(config["arch"]))
        t = time.perf_counter()
        data_dir = data_dir_for(config, program, ctx)
        rec["data_s"] = time.perf_counter() - t
        t = time.perf_counter()
        est = estimate_module(module, DataStats.from_dir(data_dir, module, arch.element_bytes),
                              arch)
        rec["estimate_s"] = time.perf_counter() - t
        kern = {k: float(c.cycles) for k, c in est.kernels.items()}
        rec["est_cycles"] = float(est.total.cycles)
        rec["graphs"] = len(kern)
        t = time.perf_counter()
        inputs, sizes = pipeline.load_data(module, data_dir)
        rec["load_s"] = time.perf_counter() - t
        pace, notes = _Pace(), []
        t = time.perf_counter()
        cut_hit = False
        try:
            pipeline.simulate(module, inputs, sizes, arch, max_cycles=cut, progress=pace,
                              notes=notes)
        except UserError as e:
            if "exceeded the cycle budget" not in str(e):
                raise
            cut_hit = True
        end = time.perf_counter()
        del inputs
        stamps = [s for _, s, _ in pace.kernels] + [end]
        ran = [(k[0], stamps[i + 1] - stamps[i], cut if cut_hit and i == len(pace.kernels) - 1
                else k[2]) for i, k in enumerate(pace.kernels)]
        rec["cut_s"] = end - t
        rec["cut_hit"] = cut_hit
        rec["cut_graph"] = ran[-1][0] if cut_hit and ran else None
        rec["sim_s"], rec["pace"] = extrapolate(ran, kern, cut, cut_hit)
        rec["notes"] = notes
        t = time.perf_counter()
        declared = {d.name for d in module.tensors if d.role == "output"}
        pipeline.reference(program, data_dir, sizes, keep=declared)
        rec["reference_s"] = time.perf_counter() - t
    except UserError as e:
        rec["error"] = e.format().split("\n", 1)[0]
    rec["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(rec)


def measure(config: dict, ctx: dict, cut: int, timeout: float) -> dict:
    """One distinct run measured in a fresh process (its peak memory is its own)."""
    spawn = mp.get_context("spawn")
    queue = spawn.Queue()
    p = spawn.Process(target=_measure, args=(config, ctx, cut, queue))
    p.start()
    import queue as queues
    end = time.monotonic() + timeout
    while True:
        try:
            rec = queue.get(timeout=1.0)
            break
        except queues.Empty:   # still running, or died (killed: out of memory)
            if p.is_alive() and time.monotonic() < end:
                continue
            p.kill()
            p.join()
            why = (f"no result within {timeout:g} s" if p.exitcode is None or
                   time.monotonic() >= end else f"the process died (exit {p.exitcode})")
            return {"id": config["id"], "error": why}
    p.join()
    return rec


def spec_cost(spec_path: str, cut: int, timeout: float, cache: str, say=print) -> dict:
    """The cost record of one spec (see the module docstring)."""
    from fuseflowc.samml.printer import print_module  # noqa: F401  (the stages, imported once)
    from fuseflowc.sweep.grid import expand_counted
    from fuseflowc.sweep.reuse import candidates, leaders
    from fuseflowc.sweep.spec import parse_spec
    from fuseflowc.sweep.worker import compiled_key

    spec = parse_spec(spec_path)
    grid = expand_counted(spec)
    ctx = {"base": os.path.dirname(spec.path) or ".", "data_cache": cache}
    t = time.perf_counter()
    keys = {c["id"]: compiled_key(c, ctx) for c in candidates(grid)}
    keys_s = time.perf_counter() - t
    lead = leaders(grid, keys)
    runs = [c for c in grid if c["id"] not in lead and not c.get("estimate_only")]
    out = {"spec": spec_path, "rows": len(grid), "distinct": len(runs),
           "keys_s": round(keys_s, 1), "runs": []}
    for c in runs:
        stands = [c["variant"]] + [x["variant"] for x in grid if lead.get(x["id"]) == c["id"]]
        rec = measure(c, ctx, cut, timeout)
        rec.update({"variants": stands, "data": c["data"], "order": c["order"]})
        out["runs"].append(rec)
        say(_line(rec))
    out["wall_s"] = round(keys_s + sum(_total(r) for r in out["runs"]), 1)
    out["peak_mb"] = round(max((r.get("peak_mb", 0) for r in out["runs"]), default=0))
    return out


def _total(r: dict) -> float:
    return sum(r.get(k) or 0.0 for k in ("compile_s", "data_s", "estimate_s", "load_s",
                                          "sim_s", "reference_s"))


def _line(r: dict) -> str:
    what = f"{'+'.join(r['variants'])} order {r['order']} {r['data']}"
    if "error" in r and "sim_s" not in r:
        return f"  {what}: error: {r['error']}"
    pace = f"{r['pace'] / 1e6:.2f} M cycles/s" if r.get("pace") else "pace unknown"
    cut = f"cut at {r['cut_graph']}" if r.get("cut_hit") else "ran whole"
    notes = "; ".join(r.get("notes") or []) or "no notes"
    return (f"  {what}: {r['graphs']} graph(s), est {r['est_cycles']:,.0f} cycles, {cut} "
            f"after {r['cut_s']:.1f} s, {pace}; est sim {r['sim_s']:.1f} s, reference "
            f"{r.get('reference_s', 0):.1f} s, data {r['data_s']:.1f} s, total "
            f"{_total(r):.0f} s; peak {r['peak_mb']:,.0f} MB; {notes}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="e.g. python -m fuseflowc.bench.spec_cost "
                                        "ir_examples/bench/artifact/sae_imagenet.toml --cut "
                                        "1000000")
    ap.add_argument("specs", nargs="+", metavar="SPEC")
    ap.add_argument("--cut", type=int, default=5_000_000,
                    help="cycles each graph is simulated at most (default 5,000,000)")
    ap.add_argument("--timeout", type=float, default=1200.0,
                    help="wall seconds one distinct run may take (default 1200)")
    ap.add_argument("--json-out", metavar="FILE", help="also write the records as JSON")
    a = ap.parse_args(argv)
    if a.cut < 1 or a.timeout <= 0:
        ap.error("--cut and --timeout must be positive")
    records = []
    with tempfile.TemporaryDirectory(prefix="fuseflowc-cost-") as cache:
        for s in a.specs:
            print(f"{s} (load {os.getloadavg()[0]:.1f}):", flush=True)
            try:
                rec = spec_cost(s, a.cut, a.timeout, cache, say=lambda x: print(x, flush=True))
            except Exception as e:  # a spec that does not load: say so, go on
                from fuseflowc.diagnostics import UserError
                if not isinstance(e, UserError):
                    raise
                print(f"  error: {e.format().splitlines()[0]}", file=sys.stderr)
                continue
            records.append(rec)
            print(f"  {rec['rows']} rows, {rec['distinct']} distinct runs: est wall "
                  f"{rec['wall_s'] / 60:.1f} min at -j 1, peak {rec['peak_mb']:,} MB", flush=True)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
