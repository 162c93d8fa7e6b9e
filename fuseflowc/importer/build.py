"""An ONNX model to a fuseflowc program and its constants: `import_model`.

Dims come from the graph's inputs (a symbolic dim takes its size from `sizes`), constants and
inputs are declared dense or compressed (a `SparseTensorProto` initializer, a `formats` entry, or
a density at most `threshold`), and each node becomes its statements (importer.translate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import UserError
from ..formats import SHORTHAND_NAMES, shorthand
from .model import Model, where
from .patterns import fold_gelu
from .program import Program, Val
from .translate import OPS, Translator, compressed_format


@dataclass
class Imported:
    """What an import gives: the program text and the constants to store beside it."""

    text: str
    constants: dict          # program tensor name -> numpy array (float64; masks as 0/1)
    inputs: dict             # program tensor name -> (onnx input name, shape, dtype, format)
    outputs: dict            # onnx output name -> (program tensor, ONNX axis -> tensor mode)
    ops: list                # operator types, in node order


_FLOAT = {1: "float32", 11: "float64", 10: "float16"}


def import_model(model: Model, sizes: dict[str, int] | None = None,
                 formats: dict[str, str] | None = None, threshold: float | None = None,
                 fuse: bool = True) -> Imported:
    """Translate `model` (see the module docstring). `sizes`: symbolic dim -> size; `formats`:
    graph input or initializer name -> format shorthand."""
    sizes, formats = dict(sizes or {}), dict(formats or {})
    g = model.graph
    p = Program(model.path)
    vals: dict[str, Val] = {}
    constants: dict[str, np.ndarray] = {}
    inputs: dict[str, tuple] = {}
    known = {i.name for i in g.input} | set(model.constants)
    for name in formats:
        if name not in known:
            raise UserError(f"--format {name}=...: the model has no input or initializer "
                            f"named '{name}'")
    used_sizes: set[str] = set()
    for i in g.input:
        if i.name in model.constants:
            continue
        vals[i.name], inputs_entry = _graph_input(model, p, i, sizes, formats, used_sizes)
        inputs[vals[i.name].tensor] = inputs_entry
    for s in sizes:
        if s not in used_sizes:
            raise UserError(f"--size {s}=...: the model has no symbolic dim named '{s}'")
    t = Translator(model, p, vals, {})
    t.constant_tensors = constants
    for name, arr in model.constants.items():
        t.lazy[name] = (lambda n=name, a=arr:
                        _constant(model, p, n, a, formats, threshold, constants))
    ops = []
    nodes = fold_gelu(g, model.constants)
    for _, node in nodes:
        for i in node.input:
            t.users.setdefault(i, []).append(node.op_type)
    for k, node in nodes:
        t.k, t.node = k, node
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            continue
        ops.append(node.op_type)
        fn = OPS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if fn is None:
            dom = f" of domain '{node.domain}'" if node.domain not in ("", "ai.onnx") else ""
            raise UserError(f"unsupported operator {node.op_type}{dom} (opset {model.opset}); "
                            f"docs/import.md lists the operators fuseflowc imports", t.loc)
        p.comment(f"node {k} '{node.name or node.output[0]}': {node.op_type}"
                  f"({', '.join(node.input)})")
        fn(t)
    for name, arr in t.made.items():
        constants[name] = np.asarray(arr, dtype=np.float64)
    outputs = {}
    for o in g.output:
        v = vals.get(o.name)
        if v is None:
            raise UserError(f"graph output '{o.name}' is computed by no node",
                            where(model.path, f"output '{o.name}'"))
        if v.masked or v.const is not None or v.tensor not in p.statements or \
                v.pos != sorted(v.pos, key=lambda x: -1 if x is None else x):
            v = _copy(p, o.name, v)
        p.outputs.append(v.tensor)
        outputs[o.name] = (v.tensor, list(v.pos))
    header = [f"imported from {model.path} by fuseflowc import (opset {model.opset}): "
              f"{len(g.node)} nodes", "every computed tensor is declared dense: the model's "
              "values, as onnxruntime computes them (docs/import.md)"]
    return Imported(p.text(header, fuse), constants, inputs, outputs, ops)


def _copy(p: Program, name: str, v: Val) -> Val:
    from .program import index_names
    axes = list(v.axes)
    y = p.new_val(name + "_out", axes)
    names = index_names(len(axes))
    src = v.access(names) if v.full else f"dense({v.access(names)})"
    p.comment(f"graph output {name}")
    p.assign(y, src, names)
    return y


def _graph_input(model: Model, p: Program, i, sizes, formats, used_sizes) -> tuple:
    loc = model.input_loc(i.name)
    tt = i.type.tensor_type
    if not i.type.HasField("tensor_type"):
        raise UserError("an input that is not a tensor", loc)
    dtype = tt.elem_type
    if dtype not in _FLOAT and dtype != 9:  # 9: bool (a mask)
        import onnx
        try:
            kind = onnx.TensorProto.DataType.Name(dtype)
        except ValueError:  # a number no ONNX type has
            kind = str(dtype)
        raise UserError(f"element type {kind} (fuseflowc "
                        f"imports float tensors and boolean masks; a shape must be a constant)",
                        loc)
    axes, shape = [], []
    for k, d in enumerate(tt.shape.dim):
        if d.HasField("dim_value"):
            n, label = int(d.dim_value), f"{i.name}_{k}"
        else:
            sym = d.dim_param or f"{i.name}_{k}"
            if sym not in sizes:
                raise UserError(f"axis {k} has the symbolic size '{sym}'; give it with "
                                f"--size {sym}=N", loc)
            used_sizes.add(sym)
            n, label = sizes[sym], sym
        if n < 1:
            raise UserError(f"axis {k} has size {n}", loc)
        shape.append(n)
        axes.append(None if n == 1 else p.new_dim(n, label))
    if all(a is None for a in axes):
        raise UserError("a scalar input (scalars are not supported)", loc)
    order = sum(a is not None for a in axes)
    fmt = formats.get(i.name) or (compressed_format(order) if dtype == 9 else "dense")
    _check_format(fmt, order, i.name)
    full = fmt == "dense" or all(lv == "dense" for lv in _levels(fmt, order))
    kind = "mask (its true entries)" if dtype == 9 else _FLOAT[dtype]
    v = p.new_val(i.name, axes, fmt, f"graph input {i.name}: {kind}", full)
    v.boolean = dtype == 9
    return v, (i.name, tuple(shape), "bool" if dtype == 9 else _FLOAT[dtype], fmt)


def _levels(fmt: str, order: int) -> tuple:
    f = shorthand(fmt, order)
    return f.levels if f is not None else ()


def _check_format(fmt: str, order: int, name: str) -> None:
    if fmt.startswith("("):
        return
    if fmt not in SHORTHAND_NAMES or shorthand(fmt, order) is None:
        raise UserError(f"--format {name}={fmt}: not a format of a tensor of {order} "
                        f"dimension(s); formats: {', '.join(SHORTHAND_NAMES)}")


def _constant(model: Model, p: Program, name: str, arr, formats, threshold, constants) -> Val:
    a = np.asarray(arr)
    boolean = a.dtype == bool  # a condition: its true entries, stored compressed
    if boolean:
        a = a.astype(np.float64)
    if a.size == 1:
        return Val("", [None] * a.ndim, [None] * a.ndim, True, False, float(a.reshape(-1)[0]))
    if not np.issubdtype(a.dtype, np.floating) and not np.issubdtype(a.dtype, np.integer):
        raise UserError(f"initializer '{name}' of type {a.dtype}",
                        where(model.path, f"initializer '{name}'"))
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise UserError(f"initializer '{name}' holds NaN or infinities (a -inf mask belongs in "
                        f"Where(mask, scores, -inf))", where(model.path, f"initializer '{name}'"))
    axes = [None if n == 1 else p.new_dim(n, f"{name}_{k}") for k, n in enumerate(a.shape)]
    order = sum(x is not None for x in axes)
    density = np.count_nonzero(a) / a.size
    sparse = boolean or name in model.sparse or (threshold is not None and density <= threshold)
    fmt = formats.get(name) or (compressed_format(order) if sparse else "dense")
    _check_format(fmt, order, name)
    full = all(lv == "dense" for lv in _levels(fmt, order)) if not fmt.startswith("(") else False
    v = p.new_val(name, axes, fmt, f"initializer {name} (density {density:.3g})", full)
    v.boolean = boolean
    constants[v.tensor] = a.reshape([n for n in a.shape if n != 1])
    return v
