"""`make bench-bigbird`: one head of BigBird attention: fusion variants, block sizes, parallel
factors.

Runs `fuse FLAGS | lower | opt -p 'locate,PAR,cleanup' | simulate --check` as separate
processes (the real command line) for every configuration and prints one line per
configuration:

    cycles bigbird S=1024 <config>: N

Data: `gen-data --size S=.. --mask M=bigbird:block=64,random=3 --seed 1` (DH = 64 from the
program; at S = 64 the mask is one dense block). Configurations (docs/opt.md, "Scaling"):

- fusion variants at `--small-size` (64) and `--size` (1024), default memory: the element-sparse
  graph (attention.ff) unfused (`fuse --unfused`: five graphs), partial (`fuse --share`: the
  scores and the exponentials are stored once, three graphs) and fully fused (one graph, order
  51: each score computed once and repeated over the head dimension `d`; the default order 0
  recomputes it per `d`); the blocked graphs (attention-bB.ff, B = 16, 32, 64) partial and full
  (a blocked program cannot be unfused: its row max and sum would be stored as blocked vectors,
  and blocked formats are matrices). The fully fused element-sparse graph at `--size` is
  skipped unless `--unblocked-full` (1.35 GB of reads: ~12 minutes and ~11 GB of memory on the
  Python engine, ~15 s and 1.7 GB on the compiled one; it runs with unbounded channels: with
  1024-entry channels it deadlocks, since each of its three nests
  must hold a whole row of scores while the row's max and sum are computed);
- the fully fused B = `--par-block` graph parallelized at the block-row index `i`, at the
  key-block index `j` (all three of its copies u0, u1, u2: see INDICES) and at `u0` alone (the
  `j` of `O = Ex V` only) by 1, 2, 4, 8, 16, and `i` by 4 nested with `j` by 4 and with `u0` by
  4, with the default HBM2 memory and with ideal memory (`mem=inf`), which isolates the graph's
  own scaling from the bandwidth bound;
- with `--reduce lanes` or `both` (the default), the `j` and `u0` sweeps and nested pairs again
  with `parallelize{...,reduce=lanes}` (per-lane partial sums combined after the lanes, see
  docs/opt.md), on ideal memory, labelled `lanes`.

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
from dataclasses import dataclass
from pathlib import Path

from fuseflowc.bench.exe import fuseflowc_command

ROOT = Path(__file__).resolve().parents[2]
MODEL = "ir_examples/models/bigbird_attention"
MASK = "M=bigbird:block=64,random=3"


def _ffc() -> list[str]:
    return fuseflowc_command()


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

#: `fuse` flags of the fusion variants. Full fusion uses order 51 (i, u0, u1, u2, u3, u4, u5,
#: d): every score is computed once and repeated over `d`; order 0 nests the scores' reduction
#: under `d` and recomputes each score DH / b times.
FUSION = {"unfused": ("--unfused",), "partial": ("--share",), "full": ("--order", "51")}


@dataclass(frozen=True)
class Config:
    """One simulation: `label` names it on the printed line."""

    label: str
    size: int
    block: int                    # 0: the element-sparse graph
    fuse: tuple[str, ...] = FUSION["full"]
    par: str = ""                 # parallelize passes for `opt -p`
    mem: str = ""                 # a `simulate --set` override

    @property
    def run_key(self) -> tuple:
        """What the simulation depends on (everything but the label): configurations with the
        same key are one run."""
        return (self.size, self.block, self.fuse, self.par, self.mem)


def fusion_configs(sizes: list[int], unblocked_full: int) -> list[Config]:
    """Every fusion variant at every size (see the module docstring); the fully fused
    element-sparse graph only at sizes <= `unblocked_full`."""
    out = []
    for size in sizes:
        for variant in ("unfused", "partial", "full"):
            if variant != "full" or size <= unblocked_full:
                out.append(Config(f"unblocked {variant}", size, 0, FUSION[variant]))
        if size > 256 and size <= unblocked_full:
            # its softmax holds a row of scores per nest while the row max and sum are made:
            # more than 1024-entry channels (a deadlock, reported as such, at S = 1024)
            out[-1] = Config("unblocked full depth=inf", size, 0, FUSION["full"],
                             mem="channel.depth=inf")
        for b in (16, 32, 64):
            if size % b == 0:
                for variant in ("partial", "full"):
                    out.append(Config(f"b{b} {variant}", size, b, FUSION[variant]))
    return out


#: The indices the factor sweeps split, by the name the printed lines use: the block-row index
#: `i`; the key-block index `j`, which the fused graph iterates as three copies (u0 in the
#: `O = Ex V` nest, u1 in the row sum's, u2 in the row max's: fuse gives each statement's copy of
#: `j` its own name), all split by the same factor; and `u0` alone.
INDICES = {"i": ("i",), "j": ("u0", "u1", "u2"), "u0": ("u0",)}


def split(index: str, factor: int, reduce: str = "serial") -> str:
    """The parallelize passes splitting `index` (a key of INDICES) by `factor`."""
    opt = ",reduce=lanes" if reduce == "lanes" else ""
    return ",".join(f"parallelize{{index={x},factor={factor}{opt}}}" for x in INDICES[index])


def lanes_configs(size: int, par_block: int) -> list[Config]:
    """The `reduce=lanes` rows: `j` and `u0` by 2..16 and `i` by 4 nested with each by 4,
    ideal memory."""
    out = []
    for index in ("j", "u0"):
        for f in (2, 4, 8, 16):
            out.append(Config(f"b{par_block} {index}x{f} lanes mem=inf", size, par_block,
                              par=split(index, f, "lanes"), mem=IDEAL_MEMORY))
        out.append(Config(f"b{par_block} i4x{index}x4 lanes mem=inf", size, par_block,
                          par=split("i", 4) + "," + split(index, 4, "lanes"),
                          mem=IDEAL_MEMORY))
    return out


def parallel_configs(size: int, par_block: int, reduce: str = "both") -> list[Config]:
    """The factor sweeps on the fully fused `par_block` graph. `reduce`: `serial` (the sweeps
    only), `lanes` (the serial baseline and the `reduce=lanes` rows) or `both`."""
    if reduce == "lanes":
        return [Config(f"b{par_block} ix1 mem=inf", size, par_block, mem=IDEAL_MEMORY)] \
            + lanes_configs(size, par_block)
    out = []
    for mem, label in (("", ""), (IDEAL_MEMORY, " mem=inf")):
        for index in INDICES:
            for f in (1, 2, 4, 8, 16):
                if f == 1 and index != "i":
                    continue  # the same graph as i x 1
                out.append(Config(f"b{par_block} {index}x{f}{label}", size, par_block,
                                  par=split(index, f) if f > 1 else "", mem=mem))
        for index in ("j", "u0"):
            out.append(Config(f"b{par_block} i4x{index}x4{label}", size, par_block,
                              par=split("i", 4) + "," + split(index, 4), mem=mem))
    if reduce == "both":
        out += lanes_configs(size, par_block)
    return out


def configs(size: int = 1024, par_block: int = 16, small_size: int = 64,
            reduce: str = "both", unblocked_full: int = 256,
            parts: tuple[str, ...] = ("fusion", "parallel")) -> list[Config]:
    """Every configuration, in print order."""
    out = []
    if "fusion" in parts:
        out += fusion_configs([s for s in (small_size, size) if s], unblocked_full)
    if "parallel" in parts:
        out += parallel_configs(size, par_block, reduce)
    return out


def run_one(tmp: Path, c: Config, timeout: float) -> str:
    """Simulate one configuration; its cycles, or `FAILED (why)`."""
    try:
        data = tmp / f"data_s{c.size}_b{c.block}"
        samml = _sh(_ffc() + ["lower"], _sh(_ffc() + ["fuse", program(c.block), *c.fuse]))
        passes = ",".join(p for p in ("locate", c.par, "cleanup") if p)
        samml = _sh(_ffc() + ["opt", "-p", passes], samml)
        stats = tmp / f"{c.label.replace(' ', '_').replace('=', '_')}_{c.size}.json"
        _sh(_ffc() + ["simulate", "-", "--data", str(data), "--check", "--json-out", str(stats)]
            + (["--set", c.mem] if c.mem else []),
            samml, timeout=timeout)
        return str(sum(k["cycles"] for k in json.loads(stats.read_text())["kernels"]))
    except subprocess.TimeoutExpired:
        return f"FAILED (timeout {timeout:.0f} s)"
    except RuntimeError as e:
        return f"FAILED ({e})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="sequence length S (multiple of 64)")
    ap.add_argument("--par-block", type=int, default=16, choices=(16, 32, 64),
                    help="block size of the graph the factor sweep parallelizes")
    ap.add_argument("--small-size", type=int, default=64,
                    help="the second S of the fusion variants (0 = skip)")
    ap.add_argument("--unblocked-full", action="store_true",
                    help="also simulate the fully fused element-sparse graph at --size "
                         "(by default only at S <= 256: it is slow)")
    ap.add_argument("--only", choices=("fusion", "parallel"), action="append",
                    help="run only these parts (repeatable; default: both)")
    ap.add_argument("--reduce", default="both", choices=("serial", "lanes", "both"),
                    help="serial: the sweeps only; lanes: the serial baseline and the "
                         "reduce=lanes rows; both (default): everything")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per simulation")
    args = ap.parse_args(argv)
    todo = configs(args.size, args.par_block, args.small_size, args.reduce,
                   args.size if args.unblocked_full else 256,
                   tuple(args.only or ("fusion", "parallel")))
    with tempfile.TemporaryDirectory(prefix="bench-bigbird-") as t:
        tmp = Path(t)
        for size, block in sorted({(c.size, c.block) for c in todo}):
            _sh(_ffc() + ["gen-data", program(block), "--size", f"S={size}", "--mask", MASK,
                          "--seed", "1", "-o", str(tmp / f"data_s{size}_b{block}")])
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            # one simulation per distinct configuration (e.g. `b16 full` is also `b16 ix1`)
            runs: dict = {}
            for c in todo:
                if c.run_key not in runs:
                    runs[c.run_key] = pool.submit(run_one, tmp, c, args.timeout)
            failed = 0
            for c in todo:  # in configuration order, as each finishes
                out = runs[c.run_key].result()
                print(f"cycles bigbird S={c.size} {c.label}: {out}", flush=True)
                failed += out.startswith("FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
