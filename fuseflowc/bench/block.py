"""Sparsity blocking benchmark: BigBird attention (one head) at block sizes 16, 32, 64 against
the element-sparse program on the same mask, through the real pipeline (separate processes):

  fuseflowc fuse P --order K | fuseflowc lower | fuseflowc simulate - --data D --check --json-out J

For each b, one data directory holds Q, K, V (S x DH dense, seeded) and M, a BigBird mask with
b-token blocks (global first and last blocks, a window of three blocks, R random blocks per
row), stored element-wise; the loader stores it as each program declares it (csr for the
unblocked program, bcsr with block b for the blocked one), so both read the same values.
Prints one line per run and a table `b  unblocked  blocked  speedup`.

Run: python -m fuseflowc.bench.block [--seq 256] [--random 1] [--order 51] [--out out/bench_block]
[--blocked-only]  (or `make bench-block`). Order 51 of the region is `i -> u0 -> u1 -> u2 ->
u3 -> u4 -> u5 -> d`: the scores are computed once per (row, column) block and repeated over
d (order 0 puts d before the score's k and recomputes them per d).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from fuseflowc.bench.exe import fuseflowc_command

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "ir_examples" / "models" / "bigbird_attention"


def block_pattern(nb: int, n_random: int, seed: int) -> np.ndarray:
    """BigBird's block pattern (fuseflowc.data.bigbird: global first/last block rows and
    columns, window of three, seeded random blocks)."""
    from fuseflowc.data.bigbird import bigbird_block_pattern
    return np.asarray(bigbird_block_pattern(nb, n_random, seed), dtype=bool)


def make_data(d: Path, seq: int, dh: int, b: int, n_random: int, seed: int) -> float:
    """Write Q, K, V and the mask M into d; returns the mask's density."""
    from fuseflowc.data.io import tensor_from_array, write_data_dir
    from fuseflowc.data.spec import TensorSpec
    from fuseflowc.formats import dense, shorthand
    rng = np.random.default_rng(seed)
    tensors = {}
    for name in ("Q", "K", "V"):
        tensors[name] = tensor_from_array(rng.uniform(-1.0, 1.0, size=(seq, dh)),
                                          TensorSpec(name, ("S", "DH"), dense(2)))
    pat = block_pattern(seq // b, n_random, seed)
    m = np.kron(pat, np.ones((b, b)))
    tensors["M"] = tensor_from_array(m, TensorSpec("M", ("S", "S"), shorthand("csr", 2)))
    write_data_dir(d, tensors)
    return float(pat.mean())


def run(ffc: list[str], prog: Path, data: Path, order: int, out: Path) -> dict:
    """Simulate one program; returns the kernel's cycles, FLOPs and the wall time."""
    t = time.time()
    fuse = subprocess.run([*ffc, "fuse", str(prog), "--order", str(order)], capture_output=True,
                          text=True, check=True)
    low = subprocess.run([*ffc, "lower", "-"], input=fuse.stdout, capture_output=True, text=True,
                         check=True)
    sim = subprocess.run([*ffc, "simulate", "-", "--data", str(data), "--check", "--json-out",
                          str(out)], input=low.stdout, capture_output=True, text=True)
    if sim.returncode != 0:
        raise SystemExit(f"{prog.name}: simulate failed:\n{sim.stderr}")
    rep = json.loads(out.read_text())
    return {"report": rep, "wall": time.time() - t, "stdout": sim.stdout + sim.stderr}


def _cycles(rep: dict) -> tuple[int, int]:
    t = rep["total"]
    return t["cycles"], t["flops"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--dh", type=int, default=64)
    ap.add_argument("--random", type=int, default=1, help="random blocks per row")
    ap.add_argument("--order", type=int, default=51,
                    help="dataflow order (fuse --order) of both programs")
    ap.add_argument("--blocks", default="16,32,64")
    ap.add_argument("--out", default="out/bench_block")
    ap.add_argument("--blocked-only", action="store_true",
                    help="skip the (slow) element-sparse program")
    a = ap.parse_args(argv)
    ffc = fuseflowc_command()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for b in (int(x) for x in a.blocks.split(",")):
        d = out / f"data_b{b}"
        dens = make_data(d, a.seq, a.dh, b, a.random, seed=b)
        res = {}
        runs = [("unblocked", PROGRAMS / "attention.ff"),
                ("blocked", PROGRAMS / f"attention-b{b}.ff")]
        for tag, prog in runs[1:] if a.blocked_only else runs:
            r = run(ffc, prog, d, a.order, out / f"{tag}_b{b}.json")
            cyc, fl = _cycles(r["report"])
            ok = "check: O match" in r["stdout"]
            print(f"S={a.seq} b={b} mask={dens:.3f} {tag}: cycles {cyc} flops {fl} "
                  f"check {'ok' if ok else '?'} wall {r['wall']:.1f}s", flush=True)
            res[tag] = cyc
        rows.append((b, dens, res.get("unblocked", 0), res["blocked"]))
    print(f"{'b':>4} {'mask':>6} {'unblocked':>12} {'blocked':>10} {'speedup':>8}")
    for b, dens, u, k in rows:
        print(f"{b:>4} {dens:>6.3f} {u:>12} {k:>10} {u / max(k, 1):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
