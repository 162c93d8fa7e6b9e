"""`make bench-sim`: simulate SpMM (Gustavson, ikj) and SDDMM on real matrices from ../shared/data
on both engines, the Python one (sim/engine.py) and the compiled one (sim/cpp), check that they
agree on everything (sim/differential.py), and print per case the cycles, token-hops and each
engine's token-hops per second and their ratio; then the compiled engine's median rate as
`token-hops/s: N` and the median ratio as `speedup: N`.

Then, with the compiled engine, each case on the default architecture (channel depth 1024)
and on SAM-like settings (the Python SAM simulator's: no memory model, unbounded channels:
`--set memory.latency=0 --set memory.bandwidth=1000000000 --depth inf`; checked against the
Python engine too when both run): CPU nanoseconds per token-hop at each (the least of 7 runs:
another process or a busy host only adds time, as `timeit` reasons),
their ratio, and `depth-inf ns/hop: N` (the median over cases).

Rates are token-hops (tokens moved over channels) per second of process CPU time of the engine
run (building the graph excluded, for the compiled engine its compiled graph too, and
assembling outputs excluded; the compiled engine's reading of its counters and writer streams
back into Python included): on a machine shared with other work CPU time is what one
single-threaded run costs, where wall time would measure the neighbours too. Wall seconds are
printed alongside. Usage: python -m fuseflowc.bench.sim_speed [--data DIR]
[--quick] [--engine fast|python|both]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.samml.load import load_module
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.differential import first_difference, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "ir_examples" / "samml"

# (kernel, matrix, rows kept or None for all)
CASES = [
    ("spmm_ikj", "jazz.mtx", None),
    ("spmm_ikj", "1138_bus.mtx", None),
    ("spmm_ikj", "lp_ship04l.mtx", None),
    ("sddmm", "jazz.mtx", None),
    ("sddmm", "1138_bus.mtx", None),
    ("sddmm", "ca-GrQc.mtx", 1500),
]
QUICK = [("spmm_ikj", "jazz.mtx", None), ("sddmm", "jazz.mtx", None)]
K = 16  # the dense inner dimension of SDDMM
#: The Python SAM simulator's settings: no memory model, unbounded channels.
SAM_LIKE = ("memory.latency=0", "memory.bandwidth=1000000000")
#: Runs per ns/hop figure; the least is reported. One run is 5-20 ms of CPU, which a busy host
#: (another process, a shared physical core) lengthens by up to 2x: the median of 3 flipped
#: between runs of the same build, the least of 7 does not (2026-11-28).
REPEATS = 7


def _inputs(kernel: str, a: sp.csr_matrix) -> dict:
    if kernel == "spmm_ikj":
        return {"A": a, "B": a.T.tocsr()}
    rng = np.random.default_rng(0)
    n, m = a.shape
    return {"S": a, "A": rng.uniform(-1, 1, (n, K)), "B": rng.uniform(-1, 1, (K, m))}


def load_case(kernel: str, matrix: Path, rows: int | None):
    """(module, input tensors, sizes) of one case."""
    a = scipy.io.mmread(matrix).tocsr().astype(np.float64)
    if rows:
        a = a[:rows, :rows]
    module = load_module(str(EXAMPLES / f"{kernel}.samml"))
    arrays = _inputs(kernel, a)
    tensors, sizes = {}, {}
    for decl in module.tensors:
        if decl.role != "input":
            continue
        x = arrays[decl.name]
        if sp.issparse(x):
            coo = x.tocoo()
            coords = np.stack([coo.row, coo.col], axis=1)
            tensors[decl.name] = FiberTensor.from_coo(x.shape, coords, coo.data, decl.format)
        else:
            tensors[decl.name] = FiberTensor.from_dense(x, decl.format)
        for d, s in zip(decl.dims, x.shape):
            sizes[d] = s
    return module, tensors, sizes


def run_case(kernel: str, matrix: Path, rows: int | None, engines: tuple[str, ...]) -> dict:
    """Simulate one case on each engine; returns its figures (and whether the runs agree)."""
    module, tensors, sizes = load_case(kernel, matrix, rows)
    out = {"case": f"{kernel} {matrix.stem}"}
    outcomes = {}
    for engine in engines:
        o = run(module, tensors, sizes, Arch.load(), engine)
        if o.error is not None:
            raise SystemExit(f"{out['case']} ({engine}): {o.error.diagnostics[0].message}")
        k = o.result.kernels[0]
        outcomes[engine] = o
        out.update(cycles=k.cycles, hops=k.hops)
        out[engine] = {"cpu": k.cpu, "wall": k.wall, "rate": k.hops / k.cpu if k.cpu else 0.0,
                       "ran": k.engine}
    if len(engines) == 2:
        out["diff"] = first_difference(outcomes["python"], outcomes["fast"])
    if "fast" in engines:
        out["ns"] = {}
        for label, arch in (("1024", Arch.load()), ("inf", Arch.load(sets=SAM_LIKE,
                                                                     depth="inf"))):
            out["ns"][label] = _ns_per_hop(module, tensors, sizes, arch)
        if len(engines) == 2 and not out["diff"]:
            sam = Arch.load(sets=SAM_LIKE, depth="inf")
            out["diff"] = first_difference(run(module, tensors, sizes, sam, "python"),
                                           run(module, tensors, sizes, sam, "fast"))
    return out


def _ns_per_hop(module, tensors, sizes, arch) -> float:
    """The compiled engine's CPU nanoseconds per token-hop on one architecture (the least of
    REPEATS runs)."""
    ns = []
    for _ in range(REPEATS):
        o = run(module, tensors, sizes, arch, "fast")
        if o.error is not None:
            raise SystemExit(o.error.diagnostics[0].message)
        k = o.result.kernels[0]
        ns.append(k.cpu * 1e9 / k.hops if k.hops else 0.0)
    return min(ns)


def _print_ns(rows: list[dict]) -> None:
    """The per-case ns/hop table at depth 1024 and SAM-like (depth inf), and its median."""
    print(f"\n{'case':24} {'ns/hop depth 1024':>18} {'ns/hop depth inf':>17} {'inf/1024':>9}")
    for r in rows:
        a, b = r["ns"]["1024"], r["ns"]["inf"]
        print(f"{r['case']:24} {a:>18.2f} {b:>17.2f} {b / a if a else 0.0:>9.2f}")
    print(f"depth-inf ns/hop: {statistics.median([r['ns']['inf'] for r in rows]):.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--quick", action="store_true", help="two small cases only")
    ap.add_argument("--engine", choices=("both", "fast", "python"), default="both")
    args = ap.parse_args(argv)
    engines = ("python", "fast") if args.engine == "both" else (args.engine,)
    data = Path(args.data)
    rows = []
    head = f"{'case':24} {'cycles':>11} {'token-hops':>11}"
    for e in engines:
        head += f" {e + ' cpu s':>13} {e + ' wall s':>13} {e + ' hops/s':>15}"
    if len(engines) == 2:
        head += f" {'ratio':>7}"
    print(head)
    bad = []
    for kernel, name, keep in (QUICK if args.quick else CASES):
        path = data / name
        if not path.exists():
            print(f"{kernel} {name}: skipped ({path} is absent)")
            continue
        r = run_case(kernel, path, keep, engines)
        rows.append(r)
        line = f"{r['case']:24} {r['cycles']:>11,} {r['hops']:>11,}"
        for e in engines:
            line += f" {r[e]['cpu']:>13.3f} {r[e]['wall']:>13.3f} {r[e]['rate']:>15,.0f}"
        if len(engines) == 2:
            r["ratio"] = r["fast"]["rate"] / r["python"]["rate"] if r["python"]["rate"] else 0.0
            line += f" {r['ratio']:>7.1f}"
            if r["fast"]["ran"] != "fast":
                line += "  (the compiled engine could not run it: Python ran both)"
            if r["diff"]:
                bad.append(f"{r['case']}: the engines differ: {r['diff']}")
        print(line, flush=True)
    if not rows:
        print("no matrices found", file=sys.stderr)
        return 1
    for b in bad:
        print(b, file=sys.stderr)
    last = engines[-1]
    print(f"token-hops/s: {statistics.median_low([r[last]['rate'] for r in rows]):.0f}")
    if len(engines) == 2:
        print(f"speedup: {statistics.median_low([r['ratio'] for r in rows]):.1f}")
    if "fast" in engines:
        _print_ns(rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
