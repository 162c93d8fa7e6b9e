"""`fuseflowc report`: summarize a sweep's results file as markdown tables and plots."""

from __future__ import annotations

import json

import click


@click.command("report")
@click.argument("results", metavar="RESULTS")
@click.option("-o", "--output", "out_dir", metavar="DIR", default=None,
              help="Write DIR/report.md, DIR/summary.json and the plots into DIR (created or "
                   "replaced whole) instead of printing the markdown.")
@click.option("--format", "fmt", type=click.Choice(["svg", "png"]), default="svg",
              show_default=True, help="Image format of the plots.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON (for machines) instead of markdown.")
def cmd(results: str, out_dir: str | None, fmt: str, as_json: bool) -> None:
    """Summarize RESULTS (a .csv or .jsonl file written by `fuseflowc sweep`).

    The markdown holds: per model and fusion variant, cycles and speedup over unfused; FLOPs
    and bytes normalized to unfused; cycles against parallel factor and block size; the spread
    over dataflow orders (best, median, worst, normalized to the worst); the estimator's error
    against the simulator; and the failed configurations. With -o DIR it also draws the
    matching plots (speedup bars, normalized FLOPs and bytes, parallel and block scaling, order
    spread) as SVG or PNG with matplotlib (installed with fuseflowc); should it be
    missing, the report is text only, and says so on stderr.

    \b
    Examples:
      fuseflowc report results/gcn.csv
      fuseflowc report results/gcn.csv -o results/gcn-report --format png
      fuseflowc report results/orders.jsonl --json > summary.json
    """
    from ..files import output_dir, write_output
    from ..sweep.markdown import render
    from ..sweep.results import read_rows
    from ..sweep.summary import clean_json, summarize

    summary = summarize(read_rows(results))
    text_json = json.dumps(clean_json(summary), indent=1) + "\n"
    if out_dir is None:
        write_output(None, text_json if as_json else render(summary, results) + "\n")
        return
    from ..sweep import plots
    images: dict[str, str] = {}
    with output_dir(out_dir) as tmp:
        if plots.available():
            images = plots.draw_all(summary, tmp, fmt)
        else:
            click.echo("report: matplotlib is not installed (pip install matplotlib): "
                       "text only, no plots", err=True)
        (tmp / "report.md").write_text(render(summary, results, images) + "\n", encoding="utf-8")
        (tmp / "summary.json").write_text(text_json, encoding="utf-8")
    if as_json:
        write_output(None, text_json)
    names = ["report.md", "summary.json", *images.values()]
    click.echo(f"report: wrote {', '.join(names)} to {out_dir}", err=True)
