"""`make bench-bigbird`: one head of BigBird attention, parallel factors and block sizes.

Runs `fuse | lower | opt -p 'locate,PAR,cleanup' | simulate --check` as separate processes (the
real command line) for every configuration and prints one line per configuration:

    cycles bigbird S=1024 <config>: N

Data: `gen-data --size S=.. --mask M=bigbird:block=64,random=3 --seed 1` (DH = 64 from the
program). Configurations (docs/opt.md, "Scaling"):

- blocked graphs (attention-bB.ff) with B = 16, 32, 64, serial;
- the B = `--par-block` graph parallelized at the block-row index `i` and at the key-block index
  `u0` (the `j` of `O = Ex V`) by 1, 2, 4, 8, 16, and `i` by 4 nested with `u0` by 4;
- with `--reduce lanes` or `both` (the default), the `u0` sweep and the nested pair again with
  `parallelize{...,reduce=lanes}` (per-lane partial sums combined after the lanes, see
  docs/opt.md), on ideal memory, labelled `lanes`;
- the unblocked graph (attention.ff) at `--unblocked-size` (0 = skip: at S = 1024 it is far too
  slow for the Python simulator, see docs/opt.md).

Every run is checked against the reference evaluator (`--check`); a mismatch or a timeout prints
`FAILED` on the configuration's line and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = "ir_examples/models/bigbird_attention"
MASK = "M=bigbird:block=64,random=3"


def _ffc() -> list[str]:
    return [sys.executable, "-m", "fuseflowc.cli"]


def _sh(args: list[str], stdin: str | None = None, timeout: float | None = None) -> str:
    r = subprocess.run(args, input=stdin, capture_output=True, text=True, cwd=ROOT,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args[2:4])}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def program(block: int) -> str:
    """The attention program for block size `block` (0 = unblocked)."""
    return f"{MODEL}/attention.ff" if block == 0 else f"{MODEL}/attention-b{block}.ff"


#: `simulate --set` for the ideal-memory runs: bandwidth no node can exhaust (bytes/cycle).
IDEAL_MEMORY = "memory.bandwidth=1000000"


def lanes_configs(size: int, par_block: int) -> list[tuple[str, int, int, str, str]]:
    """The `reduce=lanes` rows: `u0` by 2..16 and `i` by 4 nested with `u0` by 4, ideal
    memory."""
    out = []
    for f in (2, 4, 8, 16):
        out.append((f"b{par_block} u0x{f} lanes mem=inf", size, par_block,
                    f"parallelize{{index=u0,factor={f},reduce=lanes}}", IDEAL_MEMORY))
    out.append((f"b{par_block} i4xu0x4 lanes mem=inf", size, par_block,
                "parallelize{index=i,factor=4},parallelize{index=u0,factor=4,reduce=lanes}",
                IDEAL_MEMORY))
    return out


def configs(size: int, par_block: int, unblocked_size: int, reduce: str = "both"
            ) -> list[tuple[str, int, int, str, str]]:
    """(label, S, block, parallelize passes, simulate --set) for every configuration, in print
    order. The factor sweep runs twice: with the default HBM2 memory (256 bytes/cycle shared by
    every memory-touching node) and with ideal memory (`mem=inf`), which isolates the dataflow
    graph's own scaling from the bandwidth bound. `reduce`: `serial` (the sweeps only), `lanes`
    (the serial baseline and the `reduce=lanes` rows) or `both`."""
    if reduce == "lanes":
        return [(f"b{par_block} ix1 mem=inf", size, par_block, "", IDEAL_MEMORY)] \
            + lanes_configs(size, par_block)
    out = [(f"b{b}", size, b, "", "") for b in (16, 32, 64)]
    for mem, label in (("", ""), (IDEAL_MEMORY, " mem=inf")):
        for index in ("i", "u0"):
            for f in (1, 2, 4, 8, 16):
                if f == 1 and index != "i":
                    continue  # the same graph as i x 1
                out.append((f"b{par_block} {index}x{f}{label}", size, par_block,
                            f"parallelize{{index={index},factor={f}}}" if f > 1 else "", mem))
        out.append((f"b{par_block} i4xu0x4{label}", size, par_block,
                    "parallelize{index=i,factor=4},parallelize{index=u0,factor=4}", mem))
    if reduce == "both":
        out += lanes_configs(size, par_block)
    if unblocked_size:
        out.append(("unblocked", unblocked_size, 0, "", ""))
        out.append(("b64", unblocked_size, 64, "", ""))
    return out


def run_one(tmp: Path, label: str, size: int, block: int, par: str, mem: str,
            timeout: float) -> str:
    """Simulate one configuration; the line to print."""
    head = f"cycles bigbird S={size} {label}"
    try:
        data = tmp / f"data_s{size}_b{block}"
        samml = _sh(_ffc() + ["lower"], _sh(_ffc() + ["fuse", program(block)]))
        passes = ",".join(p for p in ("locate", par, "cleanup") if p)
        samml = _sh(_ffc() + ["opt", "-p", passes], samml)
        stats = tmp / f"{label.replace(' ', '_')}_{size}.json"
        _sh(_ffc() + ["simulate", "-", "--data", str(data), "--check", "--json", str(stats)]
            + (["--set", mem] if mem else []),
            samml, timeout=timeout)
        cycles = sum(k["cycles"] for k in json.loads(stats.read_text())["kernels"])
        return f"{head}: {cycles}"
    except subprocess.TimeoutExpired:
        return f"{head}: FAILED (timeout {timeout:.0f} s)"
    except RuntimeError as e:
        return f"{head}: FAILED ({e})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="sequence length S (multiple of 64)")
    ap.add_argument("--par-block", type=int, default=16, choices=(16, 32, 64),
                    help="block size of the graph the factor sweep parallelizes")
    ap.add_argument("--unblocked-size", type=int, default=0,
                    help="also simulate the unblocked graph (and b64) at this S (0 = skip)")
    ap.add_argument("--reduce", default="both", choices=("serial", "lanes", "both"),
                    help="serial: the sweeps only; lanes: the serial baseline and the "
                         "reduce=lanes rows; both (default): everything")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per simulation")
    args = ap.parse_args(argv)
    todo = configs(args.size, args.par_block, args.unblocked_size, args.reduce)
    with tempfile.TemporaryDirectory(prefix="bench-bigbird-") as t:
        tmp = Path(t)
        for size, block in sorted({(s, b) for _, s, b, _, _ in todo}):
            _sh(_ffc() + ["gen-data", program(block), "--size", f"S={size}", "--mask", MASK,
                          "--seed", "1", "-o", str(tmp / f"data_s{size}_b{block}")])
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            lines = pool.map(lambda c: run_one(tmp, *c, timeout=args.timeout), todo)
            failed = 0
            for line in lines:  # in configuration order, as each finishes
                print(line, flush=True)
                failed += "FAILED" in line
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
