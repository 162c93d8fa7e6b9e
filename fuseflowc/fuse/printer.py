"""Printing the fused IR as text (grammars/fused.lark; docs/fused-ir.md). Deterministic: regions
in execution order, indices in canonical order, instances, views and edges as numbered."""

from __future__ import annotations

from ..lang.printer import expr_str
from . import ir

HEADER = "# fuseflowc fused einsum IR (docs/fused-ir.md)"


def _access(tensor: str, indices) -> str:
    return f"{tensor}[{','.join(indices)}]"


def _dim(d) -> str:
    return str(d)


def tensor_str(t: ir.TensorInfo) -> str:
    text = f"tensor {t.name}[{', '.join(map(str, t.dims))}] : {t.format.name()} {t.role}"
    if t.role in ("permuted", "part"):
        text += f" of {t.copy_of}"
    if t.threshold is not None:
        text += f" >= {t.threshold!r}"
    if t.block is not None:
        text += f" block {t.block}"
    return text


def edge_str(e: ir.Edge) -> str:
    if e.kind == "format":
        why = f"format {e.tensor} {e.view} by {e.statement}"
    else:
        why = f"{e.kind} by {e.statement}"
    return f"edge {e.src} -> {e.dst} : {why}"


def region_str(r: ir.Region) -> list[str]:
    """The lines of one region."""
    head = f"region {r.name} " + (f"group {r.group} {{" if r.group is not None else "unfused {")
    out = [head, f"  statements {', '.join(r.statements)}"]
    if r.materialized:
        out.append(f"  materialized {', '.join(r.materialized)}")
    for name, dim in r.indices:
        out.append(f"  index {name} : {_dim(dim)}")
    for e in r.exprs:
        mapping = ", ".join(f"{a}={b}" for a, b in e.index_map)
        line = f"  expr {e.id} {_access(e.statement, e.lhs)} = {expr_str(e.expr)} {{{mapping}}}"
        out.append(line + (" writes" if e.writes else ""))
    for v in r.views:
        kind = f"{v.kind} {v.producer}" if v.kind in ("inline", "shared") else v.kind
        out.append(f"  view {v.id} {_access(v.tensor, v.indices)} {kind} "
                   f"({', '.join(v.mode_order)})")
    for e in r.edges:
        out.append("  " + edge_str(e))
    out.append(f"  order {' -> '.join(r.order)} : {r.order_index}")
    for p in r.parallel:
        out.append(f"  parallelize {p.statement}: {p.local} = {p.index} by {p.factor}")
    out.append("}")
    return out


def fused_str(f: ir.FusedProgram) -> str:
    """The whole fused IR as text, ending with a newline."""
    out = [HEADER]
    if f.source:
        out.append(f'source "{f.source}"')
    for name, size in f.dims:
        out.append(f"dim {name}" if size is None else f"dim {name} = {size}")
    for t in f.tensors:
        out.append(tensor_str(t))
    for var, its in f.reuse:
        out.extend(f"reuse {var} {k}: {', '.join(names)}" for k, names in enumerate(its)
                   if names)
    for name, wave in f.waves.items():
        out.append(f"wave {name} {wave}")
    written: set[tuple[str, int]] = set()
    for r in f.regions:
        if r.bound is not None and r.bound in f.bindings:
            if r.bound not in written:   # one line for the iteration's regions
                written.add(r.bound)
                out.append("")
                out.append(binding_str(r.bound, f.bindings[r.bound]))
            continue
        out.append("")
        out.extend(region_str(r))
    return "\n".join(out) + "\n"


def binding_str(bound: tuple[str, int], names: dict[str, str]) -> str:
    """`reuse l K = 0 {a = b, ...}`: iteration K of reused loop l is iteration 0 with name a
    renamed b, and so on (docs/fused-ir.md, "Reused iterations")."""
    var, k = bound
    return f"reuse {var} {k} = 0 {{{', '.join(f'{a} = {b}' for a, b in names.items())}}}"

