"""`make bench-sim`: simulate SpMM (Gustavson, ikj) and SDDMM on real matrices from ../shared/data
and print cycles, wall time and token-hops per second per case, then the median case's rate as
the last line, `token-hops/s: N`.

Wall time is the engine's run (building the graph and assembling outputs excluded); token-hops
are tokens moved over channels; the cpu column is the process CPU time of the whole simulation
(build, run, assembly), a check on wall time when other work shares the machine. Usage: python -m sim.bench [--data DIR] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.samml.load import load_module

from .arch import Arch
from .build import Simulator

ROOT = Path(__file__).resolve().parents[1]
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


def _inputs(kernel: str, a: sp.csr_matrix) -> dict:
    if kernel == "spmm_ikj":
        return {"A": a, "B": a.T.tocsr()}
    rng = np.random.default_rng(0)
    n, m = a.shape
    return {"S": a, "A": rng.uniform(-1, 1, (n, K)), "B": rng.uniform(-1, 1, (K, m))}


def run_case(kernel: str, matrix: Path, rows: int | None) -> dict:
    """Simulate one case; returns its figures."""
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
    sim = Simulator(module, tensors, sizes, Arch.load())
    t0 = time.perf_counter()
    c0 = time.process_time()
    res = sim.run()
    cpu = time.process_time() - c0
    total = time.perf_counter() - t0
    k = res.kernels[0]
    return {"case": f"{kernel} {matrix.stem}", "cycles": k.cycles, "hops": k.hops,
            "wall": k.wall, "total": total, "cpu": cpu,
            "rate": k.hops / k.wall if k.wall else 0.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--quick", action="store_true", help="two small cases only")
    args = ap.parse_args(argv)
    data = Path(args.data)
    rows = []
    print(f"{'case':28} {'cycles':>12} {'token-hops':>12} {'wall s':>8} {'token-hops/s':>14} "
          f"{'cpu s (build+run)':>18}")
    for kernel, name, keep in (QUICK if args.quick else CASES):
        path = data / name
        if not path.exists():
            print(f"{kernel} {name}: skipped ({path} is absent)")
            continue
        r = run_case(kernel, path, keep)
        rows.append(r)
        print(f"{r['case']:28} {r['cycles']:>12,} {r['hops']:>12,} {r['wall']:>8.2f} "
              f"{r['rate']:>14,.0f} {r['cpu']:>18.2f}", flush=True)
    if not rows:
        print("no matrices found", file=sys.stderr)
        return 1
    print(f"token-hops/s: {statistics.median_low([r['rate'] for r in rows]):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
