"""Dataflow orders free of input mode orders (`fuse --free-input-order`, docs/fused-ir.md).

By default every view read from memory (a program input, a materialized intermediate) adds
its storage order to the region's POG, so a region can only iterate its inputs concordantly.
With the option those `format` edges are left out: the POG holds only `order` directives and
output formats, and counts the larger space the paper's Figure 17 sweeps. Once an order is
chosen, every memory view whose storage order is discordant with it is read through a permuted
copy stored in the order the region iterates it (the existing `permuted` view kind; lowering
makes the copy with a module-level `permute` step before the region, and the simulator charges
its cycles and bytes). A view already concordant keeps its tensor.

Plain Python: this module is on the compile path.
"""

from __future__ import annotations

from dataclasses import replace

from ..lang import ast
from . import ir


def copy_name(original: str, modes: tuple[int, ...], declared: set[str]) -> str:
    """The name of `original`'s copy whose logical mode m is stored at level position of
    `modes` (mode order): `B__T` for a matrix (its only other order), `X__p201` otherwise;
    never a name the program declares."""
    name = f"{original}__T" if len(modes) == 2 else f"{original}__p" + "".join(map(str, modes))
    base, n = name, 2
    while name in declared:
        name, n = f"{base}_{n}", n + 1
    return name


def permute_discordant(region: ir.Region, formats: dict, declared: set[str]) -> None:
    """Read every input or materialized view of `region` whose storage order is discordant
    with the region's chosen order through a permuted copy stored in the region's order.

    `formats` maps tensor names to their declared `Format`; `declared` holds every tensor name
    of the program (copies never shadow one). The view becomes `permuted` (copy_of the
    original), its mode order the region's order over its indices, and the accesses of the
    region's expressions read the copy. Deterministic: copies are named by the original and
    the new mode order, so two views (or regions) needing the same copy share it."""
    pos = {n: k for k, n in enumerate(region.order)}
    for v in region.views:
        if v.kind not in ("input", "materialized"):
            continue
        fmt = formats[v.tensor]
        stored = tuple(v.indices[m] for m in fmt.mode_order)
        wanted = tuple(sorted(v.indices, key=pos.__getitem__))
        if stored == wanted:
            continue
        modes = tuple(v.indices.index(g) for g in wanted)
        name = copy_name(v.tensor, modes, declared)
        original = v.tensor
        region.exprs = [replace(e, expr=rename_access(e.expr, original, v.indices, name))
                        for e in region.exprs]
        v.tensor, v.kind, v.mode_order, v.copy_of = name, "permuted", wanted, original


def rename_access(e: ast.Expr, tensor: str, indices: tuple[str, ...], new: str) -> ast.Expr:
    """`e` with every access tensor[indices] reading `new` instead."""
    if isinstance(e, ast.Access):
        return replace(e, tensor=new) if (e.tensor, tuple(e.indices)) == (tensor, indices) else e
    if isinstance(e, ast.Reduce):
        return replace(e, body=rename_access(e.body, tensor, indices, new))
    if isinstance(e, ast.Binary):
        return replace(e, lhs=rename_access(e.lhs, tensor, indices, new),
                       rhs=rename_access(e.rhs, tensor, indices, new))
    if isinstance(e, ast.Call):
        return replace(e, args=tuple(rename_access(a, tensor, indices, new) for a in e.args))
    return e
