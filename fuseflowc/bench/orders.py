"""The dataflow-order sweep (the paper's Sec. 8.6, Figure 17): every valid order of a program's
regions through fuse | lower | simulate, checked against the reference evaluator.

`make bench-orders` runs `python -m fuseflowc.bench.orders` on the nested matmul
(ir_examples/kernels/nested_matmul_sweep.ff) with KarateClub data, fused into one region and
unfused, with `--free-input-order`: one line per order (cycles, cycles normalized to the worst
order, permute-step cycles, check status) and a final `orders: N, best/worst = X` line.

Not on the compile path: lowering, the simulator and the evaluator are imported when a sweep
runs. Orders of several regions are swept as their cross product (each region's K from
`fuseflowc orders`).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass, field

from fuseflowc.diagnostics import UserError


@dataclass
class OrderRun:
    """One configuration: K per region, the regions' chosen orders, and what happened.
    `status` is "ok", "mismatch: ..." or "error: ..." (a UserError's message, e.g. an order
    lowering cannot build); `cycles` includes the permute steps (`permute_cycles`)."""

    variant: str
    ks: dict[str, int]
    orders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    copies: tuple[str, ...] = ()
    cycles: int | None = None
    permute_cycles: int = 0
    flops: int = 0
    bytes_moved: int = 0
    status: str = "ok"

    def label(self) -> str:
        return "; ".join(f"{r}#{k} {' -> '.join(self.orders.get(r, ()))}"
                         for r, k in self.ks.items())


def order_space(program, free: bool = True, inline_widened: bool = False) -> dict[str, int]:
    """Region name -> its number of valid orders (fuse with order 0 everywhere)."""
    from fuseflowc import pipeline
    from fuseflowc.fuse.orders import region_pog
    fp = pipeline.fuse(program, pipeline.CompileOptions(free_input_order=free,
                                                        inline_widened=inline_widened))
    return {r.name: region_pog(r).count() for r in fp.regions}


def run_order(program, source: str | None, inputs: dict, sizes: dict, ks: dict[str, int],
              variant: str = "", free: bool = True, inline_widened: bool = False,
              reference: dict | None = None, arch=None) -> OrderRun:
    """Fuse with order ks[R] for each region R, lower, simulate on `inputs` and compare the
    outputs with `reference` (the evaluator's, computed here when None). The fused IR and the
    module are printed and parsed back, as between the pipeline's processes."""
    from fuseflowc import pipeline
    from fuseflowc.sim.arch import Arch

    run = OrderRun(variant, dict(ks))
    try:
        fp = pipeline.fuse(program, pipeline.CompileOptions(
            orders=dict(ks), inline_widened=inline_widened, free_input_order=free), source)
        run.orders = {r.name: tuple(r.order) for r in fp.regions}
        run.copies = tuple(t.name for t in fp.tensors if t.role == "permuted")
        module = pipeline.compile(fp, pipeline.CompileOptions(
            reparse_fused=True, reparse_module=True), source).module
        result = pipeline.simulate(module, pipeline.as_declared(module, inputs), dict(sizes),
                                   arch or Arch.load(None, (), None))
    except UserError as e:
        run.status = "error: " + str(e).splitlines()[0]
        return run
    run.cycles = result.cycles
    run.permute_cycles = sum(k.cycles for k in result.kernels if k.graph.startswith("permute"))
    run.flops = sum(k.flops for k in result.kernels)
    run.bytes_moved = sum(sum(k.bytes_read().values()) + sum(k.bytes_written().values())
                          for k in result.kernels)
    if reference is None:
        reference = pipeline.reference(program, inputs)
    from fuseflowc.sim.compare import compare
    outs, expected = pipeline.outputs_to_check(module, result, reference, "written")
    problems = compare(outs, expected)
    if not outs or problems:
        run.status = "mismatch: " + ("; ".join(problems) if problems else "no output written")
    return run


def sweep(program, source: str | None, inputs: dict, sizes: dict, variant: str = "",
          free: bool = True, inline_widened: bool = False, arch=None) -> list[OrderRun]:
    """Every combination of the regions' valid orders, in order of (K of region 1, ...)."""
    from fuseflowc import pipeline
    space = order_space(program, free, inline_widened)
    reference = pipeline.reference(program, inputs)
    names = list(space)
    runs = []
    for ks in itertools.product(*(range(space[n]) for n in names)):
        runs.append(run_order(program, source, inputs, sizes, dict(zip(names, ks)), variant,
                              free, inline_widened, reference, arch))
    return runs


def summary_lines(runs: list[OrderRun]) -> list[str]:
    """One line per run, cycles normalized to the worst run of its variant that simulated and
    checked; a `VARIANT: ...` line per variant; then `orders: N, best/worst = X` over all runs
    (X over the runs that checked)."""
    lines = []
    variants = list(dict.fromkeys(r.variant for r in runs))
    for variant in variants:
        mine = [r for r in runs if r.variant == variant]
        good = [r for r in mine if r.status == "ok"]
        worst = max((r.cycles for r in good), default=None)
        for r in mine:
            if r.status == "ok":
                copies = ",".join(r.copies) or "-"
                lines.append(f"{r.variant:8} {r.label():48} cycles {r.cycles:>9,}  "
                             f"norm {r.cycles / worst:6.4f}  speedup-vs-worst "
                             f"{worst / r.cycles:6.2f}x  permute {r.permute_cycles:>6,}  "
                             f"copies {copies}")
            else:
                lines.append(f"{r.variant:8} {r.label():48} {r.status}")
        if len(variants) > 1:
            lines.append(f"{variant}: {len(good)} of {len(mine)} orders checked"
                         + (f", best/worst = {worst / min(r.cycles for r in good):.2f}x"
                            if good else ""))
    good = [r for r in runs if r.status == "ok"]
    failed = len(runs) - len(good)
    ratio = (f"{max(r.cycles for r in good) / min(r.cycles for r in good):.2f}x"
             if good else "n/a")
    lines.append(f"orders: {len(runs)}, best/worst = {ratio}"
                 + (f" ({failed} did not compile or check)" if failed else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    """`python -m fuseflowc.bench.orders PROGRAM --data DIR [--unfused] ...`"""
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.orders",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("program")
    ap.add_argument("--data", required=True, help="input data directory (gen-data)")
    ap.add_argument("--variant", action="append", choices=("fused", "unfused"),
                    help="fusion variants to sweep (default: both)")
    ap.add_argument("--constrained", action="store_true",
                    help="without --free-input-order (input storage orders constrain)")
    args = ap.parse_args(argv)
    from fuseflowc import pipeline
    t0 = time.perf_counter()
    runs: list[OrderRun] = []
    try:
        for variant in args.variant or ["fused", "unfused"]:
            program = pipeline.load_program(args.program, (), variant == "unfused")
            inputs, sizes = pipeline.load_program_data(program, args.data)
            runs += sweep(program, args.program, inputs, sizes, variant,
                          free=not args.constrained)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in summary_lines(runs):
        print(line, flush=True)
    print(f"wall time: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0 if all(r.status == "ok" or r.status.startswith("error") for r in runs) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
