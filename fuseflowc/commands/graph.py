"""`fuseflowc graph`: read or generate a graph data set, print its degree statistics, and
optionally write it as a graph archive (the npz layout `--graph PATH.npz` reads)."""

from __future__ import annotations

import json
import sys

import click

#: Work units (fuseflowc.data.synthetic's) of the degree statistics, per stored entry.
STATS_WORK_PER_ENTRY = 83


@click.command("graph")
@click.argument("source", metavar="SOURCE")
@click.option("-o", "--output", "output", metavar="OUT.npz", default=None,
              help="Write the graph as a graph archive (atomically).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of a synthetic graph without its own seed=.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--progress", "show_progress", is_flag=True,
              help="Report progress on stderr (plain lines) even when it is not a terminal; a "
                   "terminal gets a transient progress line without asking. Only runs longer "
                   "than a second show any.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def cmd(source: str, output: str | None, seed: int, as_json: bool, show_progress: bool,
        quiet: bool) -> None:
    """Load SOURCE (what gen-data --graph takes) and print its degree statistics: nodes,
    undirected edges, mean, median, 90th/99th percentile and max degree, isolated nodes, the
    power-law exponent of the tail (degrees >= 10), and the features' shape and density.
    Drawing a large synthetic graph (synthetic:mag: about a minute) shows its step, the
    fraction done and the time left on stderr when it is a terminal (or with --progress);
    --quiet silences it.

    SOURCE: karate; synthetic:collab, synthetic:mag or synthetic:nodes=N,edges=E[,...] (a
    seeded Chung-Lu graph); an OGB data set directory (its raw/ files; DIR,relation=all for
    every relation of a heterogeneous one); PATH.npz (a graph archive, or PyG arrays with an
    edge_index); PATH.npy (a PyG edge_index); PATH.mtx. See docs/data.md.

    \b
    Examples:
      fuseflowc graph synthetic:collab
      fuseflowc graph ~/ogb/ogbn_arxiv -o arxiv.npz
      fuseflowc graph edge_index.npy -o g.npz
      fuseflowc graph synthetic:mag --progress 2> progress.log
    """
    from ..data.graphs import (
        check_archive_name,
        degree_stats,
        load_graph,
        split_options,
        write_npz_graph,
    )
    from ..data.synthetic import is_synthetic
    from ..outputs import Outputs

    # the output is checked before the graph is read or made (which may take minutes), and may
    # not be the source file
    out = Outputs(None if source in ("karate",) or is_synthetic(source)
                  else split_options(source)[0])
    if output is not None:
        check_archive_name(output)
    archive = out.file(output) if output is not None else None
    if quiet and show_progress:
        raise click.UsageError("--quiet and --progress contradict each other")
    progress = _progress(source, quiet, show_progress)
    try:
        g = load_graph(source, features="none", seed=seed, progress=progress)
        stats = {"name": g.name, **degree_stats(g.adj)}
    finally:
        if progress is not None:
            progress.close()
    if g.features is not None:
        f = g.features
        stats["features"] = int(f.shape[1])
        stats["feature_density"] = f.nnz / max(f.shape[0] * f.shape[1], 1)
    if archive is not None:
        with out:
            write_npz_graph(g, archive.staged_path())
    if as_json:
        click.echo(json.dumps(stats, indent=1))
    else:
        click.echo(_text(stats), err=output is not None)
    if output is not None:
        click.echo(f"wrote {output}", err=True)


def _progress(source: str, quiet: bool, show_progress: bool):
    """The progress line of making a synthetic graph (on a terminal, or with --progress), else
    None."""
    from ..data.synthetic import is_synthetic
    if not is_synthetic(source) or quiet or not (show_progress or sys.stderr.isatty()):
        return None
    from ..data.progress import WorkProgress
    from ..data.synthetic import parse_synthetic
    # the statistics' share (an entry per edge and direction) is known from the spec
    return WorkProgress(2 * parse_synthetic(source).edges * STATS_WORK_PER_ENTRY,
                        f"graph {source}", sys.stderr)


def _text(s: dict) -> str:
    exp = "-" if s["tail_exponent"] is None else f"{s['tail_exponent']:.2f}"
    lines = [f"graph {s['name']}: {s['nodes']:,} nodes, {s['edges']:,} undirected edges",
             f"degree: mean {s['mean']:.2f}, median {s['median']:g}, p90 {s['p90']:g}, "
             f"p99 {s['p99']:g}, max {s['max']:,}; {s['isolated']:,} isolated; tail exponent "
             f"{exp}"]
    if "features" in s:
        lines.append(f"features: {s['features']} per node, density {s['feature_density']:.4%}")
    return "\n".join(lines)
