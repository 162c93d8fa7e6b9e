"""`fuseflowc report`: summarize a sweep's results file as markdown tables and plots."""

from __future__ import annotations

import json

import click

from .options import json_option, json_out_option


@click.command("report")
@click.argument("results", metavar="RESULTS", required=False)
@click.option("-o", "--output", "out_dir", metavar="DIR", default=None,
              help="Write DIR/report.md, DIR/summary.json and the plots into DIR (a new or "
                   "empty directory, or one fuseflowc wrote: see docs/outputs.md) instead of "
                   "printing the markdown.")
@click.option("--format", "fmt", type=click.Choice(["svg", "png"]), default="svg",
              show_default=True, help="Image format of the plots.")
@click.option("--trace", "traces", multiple=True, metavar="FILE",
              help="A `simulate --trace` file of a configuration (repeatable): its busy nodes "
                   "over time (a plot, with -o) and its critical nodes per kernel.")
@click.option("--run", "runs", multiple=True, metavar="RUN.json",
              help="A `simulate --json-out` file of a configuration (repeatable): its critical "
                   "nodes per kernel.")
@json_option
@json_out_option
def cmd(results: str | None, out_dir: str | None, fmt: str, traces: tuple[str, ...],
        runs: tuple[str, ...], as_json: bool, json_out: str | None) -> None:
    """Summarize RESULTS (a .csv or .jsonl file written by `fuseflowc sweep`), and where the
    cycles went in simulated configurations (--trace, --run).

    The markdown holds: per model and fusion variant, cycles and speedup over unfused; FLOPs
    and bytes normalized to unfused; energy and energy-delay product normalized to unfused
    (simulated rows); cycles against parallel factor and block size; the spread
    over dataflow orders (best, median, worst, normalized to the worst); the estimator's error
    against the simulator; and the failed configurations. With -o DIR it also draws the
    matching plots (speedup bars, normalized FLOPs and bytes, normalized energy and EDP,
    parallel and block scaling, order spread) as SVG or PNG with matplotlib (installed with fuseflowc); should it be missing,
    the report is text only, and says so on stderr. `--json` prints the summary as JSON on
    stdout instead of the markdown; `--json-out FILE` also writes it to FILE.

    \b
    Examples:
      fuseflowc report results/gcn.csv
      fuseflowc report results/gcn.csv -o results/gcn-report --format png
      fuseflowc report results/orders.jsonl --json > summary.json
      fuseflowc report --trace fused.trace.json --trace unfused.trace.json -o util/
    """
    from ..outputs import Outputs
    from ..sweep.markdown import render
    from ..sweep.summary import clean_json

    if results is None and not traces and not runs:
        raise click.UsageError("give RESULTS (a sweep's results file), or --trace / --run files")
    out = Outputs(results, *traces, *runs)
    report_dir = out.directory(out_dir) if out_dir is not None else None
    stdout = out.file("-") if as_json or report_dir is None else None
    json_file = out.file(json_out, "--json-out") if json_out is not None else None
    summary, sims = _summary(results, traces, runs)
    text_json = json.dumps(clean_json(summary), indent=1) + "\n"
    images: dict[str, str] = {}
    with out:
        if stdout is not None:
            stdout.write(text_json if as_json else render(summary, results or "traces") + "\n")
        if json_file is not None:
            json_file.write(text_json)
        if report_dir is not None:
            images = _write_report_dir(report_dir.path(), summary, sims, fmt,
                                       results or "traces", text_json)
    if report_dir is not None:
        names = ["report.md", "summary.json", *images.values()]
        click.echo(f"report: wrote {', '.join(names)} to {out_dir}", err=True)


def _summary(results: str | None, traces, runs) -> tuple[dict, list]:
    """(sweep.summary.summarize of the results file's rows (none without one), with the
    critical nodes of the traces and runs; those traces and runs read)."""
    from ..sweep.results import REPORT_COLUMNS, read_rows
    from ..sweep.summary import summarize
    summary = summarize(read_rows(results, REPORT_COLUMNS) if results is not None else [])
    sims = _simulated(traces, runs)
    if sims:
        from ..sweep.utilization import critical_nodes
        summary["critical_nodes"] = critical_nodes(sims)
    return summary, sims


def _write_report_dir(tmp, summary: dict, sims: list, fmt: str, title: str,
                      text_json: str) -> dict[str, str]:
    """-o DIR's files, into `tmp` (the directory being written): the plots (when matplotlib
    is installed), report.md and summary.json; the plots' names by what they show."""
    from ..sweep import plots
    from ..sweep.markdown import render
    images: dict[str, str] = {}
    if plots.available():
        images = plots.draw_all(summary, tmp, fmt)
        images.update(_utilization_plots(sims, tmp, fmt))
    else:
        click.echo("report: matplotlib is not installed (pip install matplotlib): "
                   "text only, no plots", err=True)
    (tmp / "report.md").write_text(render(summary, title, images) + "\n",
                                   encoding="utf-8")
    (tmp / "summary.json").write_text(text_json, encoding="utf-8")
    return images


def _simulated(traces, runs) -> list:
    """The configurations given as traces and runs (sweep.utilization.Run), in order."""
    from ..files import read_source
    from ..sweep.utilization import read_run, read_trace
    return ([read_trace(t, read_source(t).text) for t in traces]
            + [read_run(r, read_source(r).text) for r in runs])


def _utilization_plots(sims, out_dir, fmt: str) -> dict[str, str]:
    """utilization.FMT (busy nodes over time, every trace) and timeline-LABEL.FMT per trace."""
    from ..sweep.utilization import timeline_plot, utilization_plot
    traced = [r for r in sims if r.traced]
    if not traced:
        return {}
    out = {"utilization": f"utilization.{fmt}"}
    utilization_plot(traced, str(out_dir / out["utilization"]))
    for k, r in enumerate(traced):
        name = f"timeline-{k + 1}.{fmt}"
        timeline_plot(r, str(out_dir / name))
        out[f"timeline:{r.label}"] = name
    return out
