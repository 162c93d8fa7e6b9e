"""`fuseflowc gen-data`: write random input tensors (or a graph data set) for a program."""

from __future__ import annotations

import click

from ..diagnostics import UserError
from .options import schedule_option

STYLES = ("auto", "npy", "npz", "sam")
NORMALIZATIONS = ("gcn", "mean", "none")


@click.command("gen-data")
@click.argument("program", metavar="PROGRAM")
@click.option("-o", "--output", "output", metavar="DIR", required=True,
              help="The data directory to write: a new or empty directory, or one fuseflowc "
                   "wrote (its files are replaced; see docs/outputs.md).")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N",
              help="Size of a dim the program leaves unsized, e.g. --size N=100 (repeatable).")
@click.option("--density", "densities", multiple=True, metavar="[T=]D",
              help="Fraction of non-zero entries: T=0.1 for input T, or 0.1 for every input "
                   "without its own (repeatable). Default: 1 for dense formats, 0.1 otherwise.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Random seed; the same seed gives the same files.")
@click.option("--graph", "graph", metavar="SOURCE", default=None,
              help="Take the adjacency (and features) from a graph: karate, PATH.npz or PATH.mtx.")
@click.option("--normalize", type=click.Choice(NORMALIZATIONS), default="gcn",
              show_default=True,
              help="With --graph: the adjacency written: gcn (D^-1/2 (A+I) D^-1/2), mean "
                   "(D^-1 A, GraphSAGE) or none (the raw 0/1 adjacency).")
@click.option("--graph-tensor", metavar="T", default=None,
              help="With --graph: the input receiving the adjacency (default: the only square "
                   "sparse matrix input).")
@click.option("--feature-tensor", metavar="T", default=None,
              help="With --graph: the input receiving the node features (default: the only "
                   "other matrix input indexed [nodes, F] with F not fixed by the program).")
@click.option("--format", "style", type=click.Choice(STYLES), default="auto", show_default=True,
              help="File style: auto (dense -> .npy, sparse -> .npz), npy, npz or sam (SAM level "
                   "files).")
@click.option("--mask", "masks", multiple=True, metavar="T=bigbird:block=B,random=R[,...]",
              help="Give square matrix input T a BigBird attention mask (values 1.0): blocks "
                   "of B tokens, global first/last blocks, a window of 3 blocks, R random "
                   "blocks per block row; optional global=G, window=W, seed=N (default: "
                   "--seed). Repeatable.")
@schedule_option
def cmd(program: str, output: str, sizes: tuple[str, ...], densities: tuple[str, ...], seed: int,
        graph: str | None, normalize: str, graph_tensor: str | None,
        feature_tensor: str | None, style: str, masks: tuple[str, ...],
        schedule: tuple[str, ...]) -> None:
    """Write random input tensors for PROGRAM into the directory -o DIR.

    Every input (a declared tensor no statement assigns) gets a file of its declared shape and
    format: non-zero values uniform in [-1, 1), exactly round(density x size) of them; dense
    levels store every coordinate beneath them. Blocked formats get whole random blocks (the
    block size comes from the program's `block` directive or --schedule). Each tensor has its
    own random stream fixed by --seed and its name: the same command writes the same files.

    Sizes come from `dim N = 100` in the program or --size N=100; a dim with neither is an error.

    With --graph, the adjacency input (--graph-tensor, default the only square sparse matrix
    input, e.g. A[N, N] : csr) gets the graph's adjacency, normalized by --normalize, and the
    feature input (--feature-tensor, default the only other matrix input [N, F] whose F the
    program does not fix) gets its node features (when the graph has none: the identity, or
    random features when --size gives F); their dims are bound from the graph. A graph with
    labels also sizes the program's class dim, the one open dim of an output indexed with the
    nodes (the logits Y[N, C]), and says so; --size C=N wins. Other inputs are random.

    \b
    Example:
      fuseflowc gen-data ir_examples/kernels/spmv.ff --size I=100 --size J=80 \\
          --density A=0.05 -o data --seed 1
      fuseflowc gen-data ir_examples/models/gcn/gcn_full.ff --graph karate -o out/demo/data

    With --mask T=bigbird:block=B,random=R the input T (an S x S matrix) is a BigBird mask
    instead of random (fuseflowc.data.bigbird; see docs/data.md):

    \b
      fuseflowc gen-data ir_examples/models/gpt3_bigbird/gpt3_bigbird_full.ff \\
          --size S=64 --size E=768 --size NH=12 --size DH=64 --size FF=3072 \\
          --mask M=bigbird:block=8,random=3 -o data --seed 1
    """
    from ..lang.load import load_program
    from ..outputs import Outputs
    from ..reference.gendata import generate, parse_densities, parse_sizes, summary

    out = Outputs(program, graph if graph != "karate" else None)
    out_dir = out.directory(output)
    p = load_program(program, schedule)
    size_opts = parse_sizes(p, sizes)
    density_opts = parse_densities(p, densities)
    tensors, sources = generate(p, size_opts, density_opts, seed, graph, normalize, graph_tensor,
                                feature_tensor)
    _apply_masks(p, masks, density_opts[1], seed, tensors, sources)
    from ..data.io import save_tensors
    with out:
        save_tensors(out_dir.path(), tensors, style)
    click.echo(summary(p, tensors, sources, output), err=True)


def _apply_masks(p, masks: tuple[str, ...], per_density: dict, seed: int, tensors: dict,
                 sources: dict) -> None:
    """Replace each `--mask T=SPEC` input T by its BigBird mask (stored in T's format)."""
    if not masks:
        return
    from ..data.bigbird import mask_density, parse_mask_spec
    from ..data.io import tensor_from_scipy

    specs = {s.name: s for s in p.specs()}
    done: set[str] = set()
    for item in masks:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name or ":" in name:
            raise UserError(f"--mask '{item}': expected T=bigbird:block=B,random=R, e.g. "
                            f"--mask M=bigbird:block=64,random=3")
        if name not in tensors:
            what = "is computed by the program, not an input" if name in set(p.assigned) \
                else "is not a tensor of the program"
            raise UserError(f"--mask {item}: {name} {what}; inputs are "
                            f"{', '.join(p.inputs) or '(none)'}")
        if name in done:
            raise UserError(f"--mask {item}: {name} already has a mask")
        if name in per_density:
            raise UserError(f"--mask {item}: {name} also has --density; a mask's density is "
                            f"fixed by its BigBird parameters")
        shape = tensors[name].shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise UserError(f"--mask {item}: {name} must be a square matrix, its shape is "
                            f"{' x '.join(map(str, shape))}", p.tensor(name).loc)
        try:
            spec = parse_mask_spec(text.strip())
            m = spec.build(shape[0], seed)
        except UserError as e:
            raise UserError(f"--mask {item}: {e}") from None
        tensors[name] = tensor_from_scipy(m, specs[name])
        sources[name] = f"{spec.text()}, density {mask_density(m):.4f}"
        done.add(name)
