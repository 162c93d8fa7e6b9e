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
    from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
    from fuseflowc.fuse.orders import region_pog
    fp = fuse_program(program, None, FuseOptions(free_input_order=free,
                                                 inline_widened=inline_widened))
    return {r.name: region_pog(r).count() for r in fp.regions}


def run_order(program, source: str | None, inputs: dict, sizes: dict, ks: dict[str, int],
              variant: str = "", free: bool = True, inline_widened: bool = False,
              reference: dict | None = None, arch=None) -> OrderRun:
    """Fuse with order ks[R] for each region R, lower, simulate on `inputs` and compare the
    outputs with `reference` (the evaluator's, computed here when None). The fused IR and the
    module are printed and parsed back, as between the pipeline's processes."""
    from fuseflowc.diagnostics import Source
    from fuseflowc.lower.driver import lower_fused
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.samml.printer import print_module
    from fuseflowc.samml.verify import verify
    from fuseflowc.fuse.algorithm import FuseOptions, fuse_program
    from fuseflowc.fuse.parser import parse_fused
    from fuseflowc.fuse.printer import fused_str

    run = OrderRun(variant, dict(ks))
    try:
        fp = fuse_program(program, source, FuseOptions(free_input_order=free,
                                                       inline_widened=inline_widened,
                                                       orders=dict(ks)))
        run.orders = {r.name: tuple(r.order) for r in fp.regions}
        run.copies = tuple(t.name for t in fp.tensors if t.role == "permuted")
        fp = parse_fused(Source("<fused>", fused_str(fp)))
        module = lower_fused(fp)[0]
        verify(module)
        module = parse_module(Source("<lowered>", print_module(module)))
        verify(module)
        result = _simulate(module, inputs, sizes, arch)
    except UserError as e:
        run.status = "error: " + str(e).splitlines()[0]
        return run
    run.cycles = result.cycles
    run.permute_cycles = sum(k.cycles for k in result.kernels if k.graph.startswith("permute"))
    run.flops = sum(k.flops for k in result.kernels)
    run.bytes_moved = sum(sum(k.bytes_read().values()) + sum(k.bytes_written().values())
                          for k in result.kernels)
    if reference is None:
        from fuseflowc.reference.evaluate import evaluate
        reference = evaluate(program, inputs)
    from fuseflowc.sim.compare import compare
    outs = {t.name: result.tensors[t.name] for t in module.tensors
            if t.role == "output" and t.name in result.tensors}
    problems = compare(outs, {k: reference[k] for k in outs} if outs else reference)
    if not outs or problems:
        run.status = "mismatch: " + ("; ".join(problems) if problems else "no output written")
    return run


def _simulate(module, inputs: dict, sizes: dict, arch):
    """Simulate `module` on `inputs` stored as the module declares them."""
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.build import Simulator

    from fuseflowc.data.io import RawTensor, convert
    data = dict(inputs)
    for t in module.tensors:
        if t.role == "input" and t.name in data and data[t.name].format != t.format:
            data[t.name] = convert(RawTensor.from_fiber(data[t.name]), t.spec(), t.name)
    return Simulator(module, data, dict(sizes), arch or Arch.load(None, (), None)).run()


def sweep(program, source: str | None, inputs: dict, sizes: dict, variant: str = "",
          free: bool = True, inline_widened: bool = False, arch=None) -> list[OrderRun]:
    """Every combination of the regions' valid orders, in order of (K of region 1, ...)."""
    from fuseflowc.reference.evaluate import evaluate
    space = order_space(program, free, inline_widened)
    reference = evaluate(program, inputs)
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
    from fuseflowc.data.io import load_inputs
    from fuseflowc.lang.load import load_program
    t0 = time.perf_counter()
    runs: list[OrderRun] = []
    try:
        for variant in args.variant or ["fused", "unfused"]:
            program = load_program(args.program, (), variant == "unfused")
            specs = [s for s in program.specs() if s.name in set(program.inputs)]
            inputs, sizes = load_inputs(args.data, specs)
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
