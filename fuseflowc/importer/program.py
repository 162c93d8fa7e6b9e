"""The program an import builds: dims (classes of equal ONNX axes), tensors, one or more
statements per ONNX node, printed as a readable .ff program.

An ONNX value is a `Val`: a program tensor seen through a view (`axes`: per ONNX axis, its dim
class, or None for an axis of size 1, which no tensor stores; `pos`: which of the tensor's modes
the axis is). Transpose, Squeeze, Unsqueeze and unit Reshapes only change the view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..diagnostics import UserError

_NAME = re.compile(r"[^A-Za-z0-9_]")
#: Words a tensor or dim must not be named (keywords, functions, reductions).
RESERVED = {"dim", "tensor", "fuse", "order", "parallelize", "block", "output", "include",
            "decompose", "map", "scan", "fold", "from", "in", "else", "index", "window",
            "reverse", "schedule", "sum", "max", "min", "mask", "dense", "relu", "exp", "neg",
            "sqrt", "rsqrt", "sigmoid", "tanh", "gelu", "csr", "csc", "dcsr", "dcsc", "coo",
            "sparse", "compressed", "singleton", "blocked", "bcsr", "bdcsr", "bdense", "ell",
            "by", "unroll", "reuse", "wavefront"}
INDEX_NAMES = "ijklmnpqrtuvwxyz"


@dataclass
class Val:
    tensor: str
    axes: list            # per ONNX axis: a dim class id, or None (size 1)
    pos: list             # per ONNX axis: the tensor mode it is, or None
    full: bool = True     # the tensor stores every coordinate
    masked: bool = False  # a score under a -inf mask: only Softmax may read it
    const: float | None = None  # a scalar constant (no tensor)
    negated: bool = False  # a boolean condition read as its complement (Not)
    boolean: bool = False  # a boolean condition: its stored entries are its true ones

    @property
    def rank(self) -> int:
        return len(self.axes)

    def access(self, names: list[str]) -> str:
        """The access with `names[k]` for ONNX axis k (unit axes take no index)."""
        if self.const is not None:
            return _num(self.const)
        idx = [""] * sum(p is not None for p in self.pos)
        for n, p in zip(names, self.pos):
            if p is not None:
                idx[p] = n
        return f"{self.tensor}[{', '.join(idx)}]"


def _num(x: float) -> str:
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


@dataclass
class Tensor:
    name: str
    dims: list            # dim class ids of its modes
    format: str
    comment: str = ""


@dataclass
class Program:
    """What the import writes, built node by node."""

    source: str
    parent: dict = field(default_factory=dict)
    size: dict = field(default_factory=dict)
    label: dict = field(default_factory=dict)   # dim class -> preferred name
    tensors: dict = field(default_factory=dict)  # name -> Tensor
    lines: list = field(default_factory=list)    # statements and comments, in order
    statements: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    names: set = field(default_factory=set)

    # ---- dims -----------------------------------------------------------------------------
    def new_dim(self, size: int, label: str) -> int:
        d = len(self.parent)
        self.parent[d], self.size[d], self.label[d] = d, size, label
        return d

    def find(self, d: int) -> int:
        while self.parent[d] != d:
            self.parent[d] = self.parent[self.parent[d]]
            d = self.parent[d]
        return d

    def unify(self, a: int, b: int, loc) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if self.size[ra] != self.size[rb]:
            raise UserError(f"dimensions of size {self.size[ra]} and {self.size[rb]} meet "
                            f"(their shapes do not match)", loc)
        lo, hi = min(ra, rb), max(ra, rb)
        self.parent[hi] = lo
        return lo

    # ---- names ----------------------------------------------------------------------------
    def fresh(self, onnx_name: str, prefix: str = "t") -> str:
        base = _NAME.sub("_", onnx_name).strip("_") or prefix
        base = re.sub(r"_{2,}", "_", base)
        if not base[0].isalpha():
            base = f"{prefix}_{base}"
        if base.lower() in RESERVED:
            base = f"{prefix}_{base}"
        name, k = base, 2
        while name in self.names or name.lower() in RESERVED:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    # ---- tensors and statements -----------------------------------------------------------
    def declare(self, name: str, dims: list, fmt: str, comment: str = "") -> None:
        self.tensors[name] = Tensor(name, dims, fmt, comment)

    def new_val(self, onnx_name: str, axes: list, fmt: str = "dense", comment: str = "",
                full: bool = True, masked: bool = False) -> Val:
        """A new tensor for an ONNX value of these axes (unit axes not stored)."""
        name = self.fresh(onnx_name)
        dims = [a for a in axes if a is not None]
        pos, k = [], 0
        for a in axes:
            pos.append(None if a is None else k)
            k += a is not None
        self.declare(name, dims, fmt, comment)
        return Val(name, list(axes), pos, full, masked)

    def assign(self, val: Val, rhs: str, names: list[str]) -> None:
        self.lines.append(f"{val.access(names)} = {rhs}")
        self.statements.append(val.tensor)

    def comment(self, text: str) -> None:
        self.lines.append(f"# {text}")

    # ---- printing -------------------------------------------------------------------------
    def dim_names(self) -> dict[int, str]:
        roots = sorted({self.find(d) for d in self.parent})
        used: set[str] = set(self.tensors)
        out = {}
        for r in roots:
            base = _NAME.sub("_", self.label[r]).strip("_").upper() or "D"
            if not base[0].isalpha():
                base = f"D_{base}"
            if base.lower() in RESERVED:
                base = f"D_{base}"
            name, k = base, 2
            while name in used:
                name, k = f"{base}_{k}", k + 1
            used.add(name)
            out[r] = name
        return out

    def text(self, header: list[str], fuse: bool) -> str:
        names = self.dim_names()
        dims = [d for d in sorted(names)
                if any(self.find(x) == d for t in self.tensors.values() for x in t.dims)]
        out = [f"# {h}" for h in header]
        out.append("dim " + ", ".join(f"{names[d]} = {self.size[d]}" for d in dims))
        out.append("")
        width = max((len(t.name) + 2 + len(", ".join(names[self.find(x)] for x in t.dims))
                     for t in self.tensors.values()), default=0)
        for t in self.tensors.values():
            head = f"tensor {t.name}[{', '.join(names[self.find(x)] for x in t.dims)}]"
            line = f"{head:<{width + 7}} : {t.format}"
            out.append(f"{line}  # {t.comment}" if t.comment else line)
        out.append("")
        out.extend(self.lines)
        extra = [o for o in self.outputs if o in self.read_tensors()]
        if extra:
            out.append(f"output {', '.join(extra)}")
        if fuse and len(self.statements) > 1:
            out.append(f"fuse model: {', '.join(self.statements)}")
        return "\n".join(out) + "\n"

    def read_tensors(self) -> set[str]:
        read = set()
        for line in self.lines:
            if line.startswith("#"):
                continue
            rhs = line.split("=", 1)[1]
            read.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\[", rhs))
        return read


def index_names(n: int) -> list[str]:
    """n distinct index names."""
    base = list(INDEX_NAMES)
    k = 2
    while len(base) < n:
        base += [f"{c}{k}" for c in INDEX_NAMES]
        k += 1
    return base[:n]
