"""Lowering a whole program: regions -> one SAMML graph each, in a module."""

from __future__ import annotations

from ..lang import ast
from ..samml import ir
from . import expr as X
from .adapt import regions_of
from .build import Analysis
from .codegen import Codegen


def lower_program(program: ast.Program, source: str | None = None
                  ) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Lower a checked program to a module (one graph per region, in execution order); also
    returns each written statement's analysis (graph name, analysis) for `--dump-table`."""
    regions, tensors = regions_of(program)
    return lower_regions(regions, tensors, source)


def lower_fused(fp, source: str | None = None) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Lower a fused program (fuseflowc.fuse.ir.FusedProgram) to a module."""
    from .adapt_fused import regions_from_fused
    regions, tensors = regions_from_fused(fp)
    return lower_regions(regions, tensors, source if source is not None else fp.source)


def lower_regions(regions: list[X.Region], tensors: dict[str, X.TensorInfo],
                  source: str | None) -> tuple[ir.Module, list[tuple[str, Analysis]]]:
    """Generate one graph per region (see lower_program)."""
    graphs: list[ir.Graph] = []
    analyses: list[tuple[str, Analysis]] = []
    for region in regions:
        g = ir.Graph(region.name)
        for st in region.statements:
            an = Analysis(st, tensors[st.tensor].format)
            Codegen(g, an, tensors).write()
            analyses.append((region.name, an))
        graphs.append(g)
    decls = [ir.TensorDecl(t.name, tuple(t.dims), t.format, t.role, t.block)
             for t in tensors.values()]
    return ir.Module(decls, graphs, source), analyses


def lower_statement(st: X.Statement, tensors: dict[str, X.TensorInfo], name: str = "g"
                    ) -> ir.Graph:
    """Lower one statement into a fresh graph (for tests and tools)."""
    g = ir.Graph(name)
    Codegen(g, Analysis(st, tensors[st.tensor].format), tensors).write()
    return g
