"""The dataflow-order sweep's summary (the paper's Sec. 8.6, Figure 17), read from the results
of a sweep spec that crosses every region's orders (`orders = "product"`).

`make bench-orders` runs `fuseflowc sweep ir_examples/sweeps/bench_orders.toml` (the nested
matmul on KarateClub, fused into one region and unfused, with free_input_order: every order
fused, lowered, simulated and checked) and then `python -m fuseflowc.bench.orders SPEC
RESULTS`: one line per configuration (each region's order index and index order, cycles,
cycles normalized to the worst of its variant, speed-up over it, the permute steps' cycles and
the permuted copies, or why it failed), a `VARIANT: ...` line per variant and a final
`orders: N, best/worst = X` line.

The index orders are `fuseflowc orders`' listing (fuse.orders) of each program; the permute
cycles and copies are the row's `permute X -> Y` kernels.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from fuseflowc.diagnostics import UserError


@dataclass
class OrderRun:
    """One configuration of the results: its variant, each region's order (index and index
    order, regions in execution order), and what happened. `status` is "ok", "mismatch: ..."
    or "error: ..." (the first line of the failure); `cycles` includes the permute steps
    (`permute_cycles`)."""

    variant: str
    orders: dict[str, tuple[int, tuple[str, ...]]]
    copies: tuple[str, ...] = ()
    cycles: int | None = None
    permute_cycles: int = 0
    status: str = "ok"

    def label(self) -> str:
        return "; ".join(f"{r}#{k} {' -> '.join(names)}"
                         for r, (k, names) in self.orders.items())


#: A row's error text: `STAGE: [FILE:LINE:COL: ]error: MESSAGE` (worker.run_config).
_ERROR = re.compile(r"^[\w-]+: (?:.*?:\d+:\d+: )?(?:error: )?")


def _listings(config: dict, base: Path) -> dict[str, list[tuple[str, ...]]]:
    """Region name -> its valid index orders in `fuseflowc orders`' enumeration (the
    program fused with order 0, as the sweep counts them), regions in execution order."""
    from fuseflowc import pipeline
    from fuseflowc.fuse.orders import region_orders
    path = str(base / config["program"])
    program = pipeline.load_program(path, tuple(config["schedule"]), config["unfused"])
    fused = pipeline.fuse(program, pipeline.CompileOptions(
        inline_widened=config["inline_widened"], free_input_order=config["free_input_order"],
        share=config["share"]), path)
    counts = {r["region"]: r["orders"] for r in region_orders(fused)}
    rows = region_orders(fused, None, max(counts.values()))
    return {r["region"]: [tuple(o) for o in r["listed"]] for r in rows}


def order_run(config: dict, row: dict, listing: dict[str, list[tuple[str, ...]]]) -> OrderRun:
    """The OrderRun of one results row (of configuration `config`)."""
    ks = config["orders"] or {}
    run = OrderRun(config["variant"], {r: (ks[r], listing[r][ks[r]]) for r in listing if r in ks})
    if row["status"] != "ok":
        kind = "mismatch" if row.get("check") == "mismatch" else "error"
        text = (row.get("error") or row["status"]).removeprefix(
            "check: outputs differ from the reference: ")
        run.status = f"{kind}: " + (text if kind == "mismatch" else _ERROR.sub("", text))
        return run
    permutes = {name: c for name, c in row["kernel_cycles"].items()
                if name.startswith("permute ")}
    run.cycles = row["cycles"]
    run.permute_cycles = sum(permutes.values())
    run.copies = tuple(sorted(name.split(" -> ", 1)[1] for name in permutes))
    return run


def read_runs(spec_path: str, results: str) -> list[OrderRun]:
    """The OrderRuns of every configuration of the spec, in grid order, from its results file
    (a configuration without a row there is a UserError: the sweep has not finished)."""
    from fuseflowc.sweep.grid import expand_counted
    from fuseflowc.sweep.results import read_rows
    from fuseflowc.sweep.spec import parse_spec
    spec = parse_spec(spec_path)
    rows = {r["id"]: r for r in read_rows(results)}
    listings: dict[tuple, dict] = {}
    runs = []
    for config in expand_counted(spec):
        if config["orders"] is None:
            raise UserError(f"{spec_path}: {config['variant']}: every program of an order "
                            f"sweep needs orders = \"product\" (and must fuse)")
        if config["id"] not in rows:
            raise UserError(f"{results}: no row for configuration {config['id']} (run the "
                            f"sweep to the end first)")
        key = (config["program"], tuple(config["schedule"]), config["unfused"],
               config["inline_widened"], config["free_input_order"], config["share"])
        if key not in listings:
            listings[key] = _listings(config, Path(spec_path).parent)
        runs.append(order_run(config, rows[config["id"]], listings[key]))
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
    """`python -m fuseflowc.bench.orders SPEC RESULTS`: exit 1 when an order simulated but did
    not match the reference (an order that does not compile is a finding, not a failure)."""
    ap = argparse.ArgumentParser(prog="python -m fuseflowc.bench.orders",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("spec", help='the sweep spec (orders = "product")')
    ap.add_argument("results", help="its results file (fuseflowc sweep -o)")
    args = ap.parse_args(argv)
    try:
        runs = read_runs(args.spec, args.results)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in summary_lines(runs):
        print(line, flush=True)
    return 0 if all(r.status == "ok" or r.status.startswith("error") for r in runs) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
