"""`fuseflowc import`: an ONNX model to a program and a data directory of its weights."""

from __future__ import annotations

import click

from .options import output_option


def _pairs(items, option: str, convert) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"'{item}': expected NAME=VALUE", param_hint=option)
        try:
            out[name] = convert(value)
        except ValueError:
            raise click.BadParameter(f"'{item}': bad value '{value}'", param_hint=option) from None
    return out


def _size(v: str) -> int:
    n = int(v)
    if not 1 <= n <= 2**31:
        raise ValueError(v)
    return n


@click.command("import")
@click.argument("model", metavar="MODEL.onnx")
@output_option
@click.option("--data", "data", metavar="DIR", default=None,
              help="Also write the model's weights (and seeded random values of its graph "
                   "inputs) into DIR, ready for `run` and `simulate --data DIR --check`.")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N",
              help="The size of a symbolic dim of the graph's inputs (repeatable).")
@click.option("--format", "formats", multiple=True, metavar="NAME=FMT",
              help="Declare graph input or initializer NAME with format FMT (csr, dcsr, "
                   "dense, ...), e.g. --format A=csr for a graph's adjacency (repeatable).")
@click.option("--sparse-threshold", "threshold", type=click.FloatRange(0, 1), default=None,
              metavar="D", help="Store a weight whose density is at most D compressed.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random graph inputs written with --data.")
@click.option("--unfused", is_flag=True,
              help="Write no fusion region (by default one region holds every statement).")
def cmd(model: str, output: str | None, data: str | None, sizes, formats, threshold,
        seed: int, unfused: bool) -> None:
    """Translate MODEL.onnx into a fuseflowc program, one statement per ONNX node (Softmax
    and LayerNormalization: a few), that computes the model's values as onnxruntime does: every
    computed tensor is declared dense, and a sparse weight or input is wrapped in dense(...)
    where its pattern would change a value (docs/language.md, "Dense values").

    Dims are named from the graph's inputs; a symbolic one needs --size. Sparse initializers
    (SparseTensorProto), --format NAME=FMT and --sparse-threshold D give compressed formats. An
    operator outside docs/import.md's table is an error naming the node, its operator and the
    opset; nothing is written then.

    \b
    Examples:
      fuseflowc import mlp.onnx -o mlp.ff --data mlp-data --sparse-threshold 0.5
      fuseflowc import gcn.onnx -o gcn.ff --data d --format A=csr --size nodes=34
      fuseflowc fuse mlp.ff | fuseflowc lower | fuseflowc simulate - --data mlp-data --check
    """
    from pathlib import Path

    from ..diagnostics import InternalError, Source, UserError
    from ..importer.build import import_model
    from ..importer.data import random_inputs, write_data
    from ..importer.model import read_model
    from ..lang.load import program_from_source
    from ..outputs import Outputs

    size_map = _pairs(sizes, "--size", _size)
    format_map = _pairs(formats, "--format", str)
    out = Outputs(model)
    dest = out.file(output)
    data_dir = out.directory(data, "--data") if data is not None else None
    imported = import_model(read_model(model), size_map, format_map, threshold, not unfused)
    try:  # what the importer writes must check: anything else is a bug in it
        program_from_source(Source(output or "<import>", imported.text))
    except UserError as e:
        raise InternalError(f"the imported program does not check:\n{e.format()}") from None
    with out:
        if data_dir is not None:
            write_data(Path(data_dir.path()), imported,
                       random_inputs(imported.inputs, seed))
        dest.write(imported.text)
    ops = sorted(set(imported.ops))
    click.echo(f"imported {model}: {len(imported.ops)} nodes ({', '.join(ops)}), "
               f"{len(imported.constants)} constants, {len(imported.inputs)} inputs", err=True)
