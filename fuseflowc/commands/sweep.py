"""`fuseflowc sweep`: run a grid of configurations and collect one results row each."""

from __future__ import annotations

import math
import sys

import click

from ..sweep.spec import MAX_JOBS, MAX_TIMEOUT


def _finite(ctx, param, value: float | None) -> float | None:
    # click's FloatRange lets nan through (every comparison with it is false)
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def _executor(ctx, param, value: str) -> str:
    # a malformed --executor is a usage error (exit 2), found before the spec is read
    from ..diagnostics import UserError
    from ..sweep.cluster import parse_executor
    try:
        parse_executor(value)
    except UserError as e:
        raise click.BadParameter(str(e).removeprefix(f"--executor {value}: ")) from None
    return value


@click.command("sweep")
@click.argument("spec", metavar="SPEC")
@click.option("-o", "--output", "results", metavar="RESULTS", required=True,
              help="The results file: .csv or .jsonl (JSON lines). Rows already in it (by "
                   "configuration id) are skipped: rerun the same command to resume.")
@click.option("-j", "--jobs", type=click.IntRange(min=1, max=MAX_JOBS), default=1,
              show_default=True, metavar="N", help="Worker processes.")
@click.option("--prune", type=click.FloatRange(min=1.0), default=None, metavar="F",
              callback=_finite,
              help="Estimate every configuration first and skip (recording a row with status "
                   "pruned and the reason) those whose estimated cycles exceed F times the best "
                   "estimate for the same model, data set and arch.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT),
              default=None, metavar="SECONDS", callback=_finite,
              help="Stop a configuration after this much wall time; it becomes a row with "
                   "status timeout (default: the spec's timeout, else none).")
@click.option("--dry-run", is_flag=True,
              help="List the configurations (id, what, whether done) on stdout; run nothing, "
                   "compile nothing: a program with orders = \"all\" or \"product\" is one "
                   "`count` line per pipeline, data set and arch (its orders are counted when "
                   "the sweep runs).")
@click.option("--executor", default="local", show_default=True, metavar="local|dask://HOST:PORT",
              callback=_executor,
              help="Where configurations run: local worker processes (-j), or the workers of "
                   "a Dask cluster whose scheduler listens at HOST:PORT (pip install "
                   "'fuseflowc[dask]'; docs/sweep.md).")
@click.option("--strict", is_flag=True,
              help="Exit 1 when any configuration of the grid failed or timed out (by "
                   "default the sweep exits 0 and prints the count).")
def cmd(spec: str, results: str, jobs: int, prune: float | None, timeout: float | None,
        dry_run: bool, executor: str, strict: bool) -> None:
    """Run every configuration of the grid described by SPEC (a TOML or JSON file).

    The grid is the cross product of the spec's programs (models and their fusion variants),
    dataflow order indices, schedule parameters (filled into --schedule directive templates),
    opt pipelines, data sets (a directory, or gen-data parameters) and arch overrides. Each
    configuration is compiled (fuse | lower | opt), estimated, simulated and checked against the
    reference evaluator, and gives one row: its fields, cycles (total, per kernel), FLOPs, bytes
    read and written (seg, crd, vals), the estimate, wall time, check status, and the error if
    it failed. A failure (compile error, deadlock, mismatch, timeout) is a row, never a crashed
    sweep. A progress bar shows on stderr; a summary follows. See docs/sweep.md.

    \b
    Examples:
      fuseflowc sweep ir_examples/sweeps/gcn_fusion.toml -o results/gcn.csv -j 2
      fuseflowc sweep ir_examples/sweeps/nested_matmul_orders.toml -o r.jsonl --prune 4
      fuseflowc sweep spec.toml -o r.csv --dry-run
      fuseflowc sweep spec.toml -o r.csv --executor dask://scheduler:8786 --strict
      fuseflowc report results/gcn.csv -o results/gcn-report
    """
    from ..sweep.grid import expand, is_pending
    from ..sweep.results import read_rows_if_any, results_kind
    from ..sweep.runner import describe, run_sweep
    from ..sweep.spec import parse_spec

    results_kind(results)
    s = parse_spec(spec)
    if dry_run:
        done = {r["id"] for r in read_rows_if_any(results)}
        configs = expand(s)
        for c in configs:
            status = "count" if is_pending(c) else "done" if c["id"] in done else "todo"
            click.echo(f"{status}  {describe(c)}")
        pending = sum(map(is_pending, configs))
        n = sum(c["id"] in done for c in configs)
        click.echo(f"sweep: {len(configs) - pending} configurations, {n} already in {results}"
                   + (f"; {pending} count line(s): orders = \"all\" or \"product\", counted "
                      f"when the sweep runs (it compiles each program once per schedule)"
                      if pending else ""),
                   err=True)
        return
    summary = run_sweep(s, results, jobs, prune, timeout, executor)
    click.echo(summary.text(results, strict), err=True)
    sys.stderr.flush()
    if strict and summary.failures:
        click.get_current_context().exit(1)
