"""Reading an ONNX model for `fuseflowc import`: the file, its opset, its constants, and where
an error is (a node, a graph input), without a traceback for any file a user can give.

The `onnx` package is an optional extra (`pip install 'fuseflowc[onnx]'`); it is imported only
here, when a model is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..diagnostics import Loc, UserError

#: The oldest default-domain opset read (the operators' forms before 13 differ: axes attributes).
MIN_OPSET = 13
#: Bounds on what is read: a model of the sizes the simulator runs fits easily.
MAX_NODES = 100_000
MAX_ELEMENTS = 1 << 28


@dataclass(frozen=True)
class Where(Loc):
    """A place in a model: `MODEL.onnx:node 3 'MatMul_0'` (or a graph input or initializer)."""

    what: str = ""

    def __str__(self) -> str:
        return self.what


def where(path: str, what: str | None = None) -> Where:
    """A location in the model at `path` described by `what` (the file itself when None; no
    source line is shown)."""
    return Where(None, 0, 0, 1, path if what is None else f"{path}:{what}")


def _onnx():
    try:
        import onnx
    except ImportError:
        raise UserError("fuseflowc import needs the onnx package: "
                        "pip install 'fuseflowc[onnx]'") from None
    return onnx


@dataclass
class Model:
    """A model read: its graph (onnx.GraphProto), default-domain opset and constants."""

    path: str
    graph: object
    opset: int
    constants: dict[str, np.ndarray]   # initializers and Constant nodes' values
    sparse: set[str]                   # constants given as SparseTensorProto

    def node_loc(self, k: int) -> Where:
        n = self.graph.node[k]
        return where(self.path, f"node {k} '{n.name or n.output[0]}' ({n.op_type}, opset "
                                f"{self.opset})")

    def input_loc(self, name: str) -> Where:
        return where(self.path, f"input '{name}'")


def read_model(path: str) -> Model:
    """Read and check the ONNX model at `path` (external data is read beside it)."""
    onnx = _onnx()
    p = Path(path)
    if not p.is_file():
        raise UserError("no such file" if not p.exists() else "not a file", where(path))
    try:
        proto = onnx.load(str(p), load_external_data=False)
        from onnx.external_data_helper import load_external_data_for_model, uses_external_data
        if any(uses_external_data(t) for t in proto.graph.initializer):
            load_external_data_for_model(proto, str(p.parent))
        onnx.checker.check_model(proto)
    except UserError:
        raise
    except Exception as e:  # the onnx package raises many kinds (DecodeError, ValidationError)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"not a valid ONNX model: {first[:300]}", where(path)) from None
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None or opset < MIN_OPSET:
        raise UserError(f"opset {opset} of the default domain; fuseflowc import reads "
                        f"opsets {MIN_OPSET} and later (onnx.version_converter converts older "
                        f"models)", where(path))
    g = proto.graph
    if len(g.node) > MAX_NODES:
        raise UserError(f"{len(g.node)} nodes; at most {MAX_NODES} are read", where(path))
    constants, sparse = _constants(onnx, path, g)
    return Model(path, g, opset, constants, sparse)


def _array(onnx, path: str, t, what: str) -> np.ndarray:
    n = int(np.prod([int(d) for d in t.dims], dtype=object)) if len(t.dims) else 1
    if n > MAX_ELEMENTS:
        raise UserError(f"{what} '{t.name}' has {n} elements; at most {MAX_ELEMENTS}",
                        where(path))
    try:
        return onnx.numpy_helper.to_array(t)
    except Exception as e:
        raise UserError(f"{what} '{t.name}' cannot be read: "
                        f"{(str(e).splitlines() or [''])[0][:200]}", where(path)) from None


def _constants(onnx, path: str, g) -> tuple[dict[str, np.ndarray], set[str]]:
    out: dict[str, np.ndarray] = {}
    sparse: set[str] = set()
    for t in g.initializer:
        out[t.name] = _array(onnx, path, t, "initializer")
    for st in g.sparse_initializer:
        name = st.values.name
        shape = tuple(int(d) for d in st.dims)
        if int(np.prod(shape, dtype=object)) > MAX_ELEMENTS:
            raise UserError(f"sparse initializer '{name}' is too large", where(path))
        vals = _array(onnx, path, st.values, "sparse initializer")
        idx = _array(onnx, path, st.indices, "sparse initializer").astype(np.int64)
        dense = np.zeros(shape, dtype=vals.dtype)
        if idx.ndim == 1:  # linear indices
            if idx.size and (idx.min() < 0 or idx.max() >= dense.size):
                raise UserError(f"sparse initializer '{name}' has an index out of range",
                                where(path))
            dense.reshape(-1)[idx] = vals
        else:
            if idx.size and (idx.min() < 0 or (idx >= np.array(shape)).any()):
                raise UserError(f"sparse initializer '{name}' has an index out of range",
                                where(path))
            dense[tuple(idx.T)] = vals
        out[name] = dense
        sparse.add(name)
    for k, n in enumerate(g.node):
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            value = next((a for a in n.attribute if a.name in ("value", "value_float",
                                                                "value_floats", "value_int",
                                                                "value_ints")), None)
            if value is None:
                raise UserError("a Constant without a value this importer reads (value, "
                                "value_float(s), value_int(s))", where(path, f"node {k} '{n.name}'"))
            out[n.output[0]] = _constant_value(onnx, path, value)
    return out, sparse


def _constant_value(onnx, path: str, a) -> np.ndarray:
    if a.name == "value":
        return _array(onnx, path, a.t, "constant")
    v = onnx.helper.get_attribute_value(a)
    return np.asarray(v, dtype=np.float32 if "float" in a.name else np.int64)
