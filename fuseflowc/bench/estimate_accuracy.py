"""`make bench-estimate`: the estimator's accuracy against the simulator's own counts.

For every configuration (model x fusion variant x data set) the program is compiled (fuse
--inline-widened, except GPT-3: plain fuse; lower), its inputs generated (`fuseflowc gen-data`, seeded), then estimated
twice - from the measured data (`DataStats.from_dir`) and from sizes and nnz only
(`DataStats.from_values`, uniform independent non-zeros) - and simulated. One line per
configuration: FLOPs and bytes estimated, simulated, and the error in percent, the estimate's and
the simulation's wall time; then the average absolute errors over GCN, GraphSAGE and BigBird
attention (the paper's Table 2 set) and over everything.

Usage: python -m fuseflowc.bench.estimate_accuracy [--quick] [-j N] [--data DIR] [--work DIR]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fuseflowc.bench.exe import fuseflowc_command

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "ir_examples" / "models"
VARIANTS = ("unfused", "partial", "full")

# (model, program base path, gen-data arguments per data set name)
GRAPHS = {"karate": ["--graph", "karate"], "cora": ["--graph", "{data}/cora.npz"]}
SMALL = {
    "bigbird_attn": (MODELS / "bigbird_attention" / "multihead" / "bigbird_attn", {
        "S64": ["--size", "S=64", "--size", "NH=2", "--size", "DH=16", "--density", "M=0.2"]}),
    "gpt3_bigbird": (MODELS / "gpt3_bigbird" / "gpt3_bigbird", {
        "S32": ["--size", "S=32", "--size", "E=16", "--size", "NH=2", "--size", "DH=8",
                "--size", "FF=32", "--density", "M=0.25"]}),
    "sae": (MODELS / "sae" / "sae", {
        "b5": ["--size", "Bt=5", "--size", "P=64", "--size", "D1=32", "--size", "D2=16",
               "--density", "X=0.5"]}),
}
TABLE2 = ("gcn", "graphsage", "bigbird_attn")


def configs(quick: bool) -> list[tuple[str, str, str, Path, list[str]]]:
    """(model, variant, data set, program, gen-data args) of every configuration."""
    out = []
    for model in ("gcn", "graphsage"):
        for ds, args in GRAPHS.items():
            if quick and ds != "karate":
                continue
            for v in VARIANTS:
                out.append((model, v, ds, MODELS / model / f"{model}_{v}.ff", args))
    for model, (base, sets) in SMALL.items():
        for ds, args in sets.items():
            for v in VARIANTS:
                out.append((model, v, ds, Path(f"{base}_{v}.ff"), args))
    return out


def _cli(args: list[str]) -> None:
    r = subprocess.run([*fuseflowc_command(), *args], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError((r.stderr.strip().splitlines() or ["failed"])[-1])


def _gen_data(cfg, data: str, work: str) -> Path:
    """The data directory of a configuration's model and data set, generated (`fuseflowc
    gen-data`, seeded) unless it exists."""
    model, _variant, ds, program, gen = cfg
    base = program.parent / f"{program.stem.rsplit('_', 1)[0]}.ff"
    ddir = Path(work) / f"{model}_{ds}"
    if not ddir.exists():
        _cli(["gen-data", str(base), "-o", str(ddir), "--seed", "1",
              *[a.format(data=data) for a in gen]])
    return ddir


def run_config(cfg, data: str, work: str) -> dict:
    """Compile, generate data, estimate and simulate one configuration."""
    model, variant, ds, program, gen = cfg
    name = f"{model} {variant} {ds}"
    row = {"config": name, "model": model}
    try:
        from fuseflowc import pipeline
        from fuseflowc.estimate import DataStats, estimate_module
        ddir = _gen_data(cfg, data, work)
        # GPT-3's regions lower only without --inline-widened (docs/lowering.md, "Limits")
        options = pipeline.CompileOptions(inline_widened=not model.startswith("gpt3"))
        module = pipeline.compile_path(str(program), options).module
        stats = DataStats.from_dir(ddir, module)
        est = estimate_module(module, stats)
        dens = {n: t.nnz / max(math.prod(t.shape) / ((t.block or 1) ** 2), 1)
                for n, t in stats.tensors.items()}
        uni = estimate_module(module, DataStats.from_values(module, stats.sizes, dens))
        row.update(est_flops=est.total.flops, est_bytes=est.total.bytes, est_ms=est.ms,
                   uni_flops=uni.total.flops, uni_bytes=uni.total.bytes)
        from fuseflowc.sim.arch import Arch
        t0 = time.perf_counter()
        # the inputs DataStats.from_dir loaded (Simulator copies the dicts)
        res = pipeline.simulate(module, stats.fibers, stats.sizes, Arch.load())
        row["sim_s"] = time.perf_counter() - t0
        row["sim_flops"] = sum(k.flops for k in res.kernels)
        row["sim_bytes"] = sum(sum(k.bytes_read().values()) + sum(k.bytes_written().values())
                               for k in res.kernels)
    except Exception as e:  # one failed configuration is a row, not a failed benchmark
        row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:100]
    return row


def err(est: float, sim: float) -> float:
    """Signed error of an estimate in percent of the simulated count."""
    return 100.0 * (est - sim) / sim if sim else (0.0 if est == 0 else math.inf)


def report(rows: list[dict], out=sys.stdout) -> None:
    """The table and the averages."""
    print(f"{'config':30} {'FLOPs est':>12} {'sim':>12} {'err%':>7} {'bytes est':>12} "
          f"{'sim':>12} {'err%':>7} {'uniform err% F/B':>17} {'est ms':>7} {'sim s':>7}",
          file=out)
    for r in rows:
        if "error" in r or "sim_flops" not in r:
            print(f"{r['config']:30} {r.get('error', 'not simulated')}", file=out)
            continue
        ef, eb = err(r["est_flops"], r["sim_flops"]), err(r["est_bytes"], r["sim_bytes"])
        uf, ub = err(r["uni_flops"], r["sim_flops"]), err(r["uni_bytes"], r["sim_bytes"])
        r["err_flops"], r["err_bytes"] = ef, eb
        print(f"{r['config']:30} {r['est_flops']:>12,.0f} {r['sim_flops']:>12,} {ef:>7.2f} "
              f"{r['est_bytes']:>12,.0f} {r['sim_bytes']:>12,} {eb:>7.2f} "
              f"{uf:>8.1f}/{ub:<8.1f} {r['est_ms']:>7.1f} {r['sim_s']:>7.1f}", file=out)
    for label, keep in (("GCN, GraphSAGE, BigBird attention", TABLE2), ("all", None)):
        ok = [r for r in rows if "err_flops" in r and (keep is None or r["model"] in keep)]
        if not ok:
            continue
        af = sum(abs(r["err_flops"]) for r in ok) / len(ok)
        ab = sum(abs(r["err_bytes"]) for r in ok) / len(ok)
        print(f"average |error| over {label} ({len(ok)} configs): FLOPs {af:.2f}%, "
              f"bytes {ab:.2f}%", file=out)
    failed = [r for r in rows if "error" in r]
    if failed:
        print(f"{len(failed)} configuration(s) failed", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--work", default=None, help="where generated data goes (default: a temp dir)")
    ap.add_argument("--quick", action="store_true", help="KarateClub and the small models only")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    cfgs = configs(args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        Path(work).mkdir(parents=True, exist_ok=True)
        # generate each data set once, before the workers race for it
        seen = set()
        for cfg in cfgs:
            key = (cfg[0], cfg[2])
            if key not in seen:
                seen.add(key)
                try:
                    _gen_data(cfg, args.data, work)
                except Exception:  # the configuration's own run reports the failure
                    pass
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as ex:
                rows = list(ex.map(run_config, cfgs, [args.data] * len(cfgs),
                                   [work] * len(cfgs)))
        else:
            rows = [run_config(c, args.data, work) for c in cfgs]
    report(rows)
    return 1 if any("error" in r for r in rows) and all("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
