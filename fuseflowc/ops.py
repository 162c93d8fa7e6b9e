"""The operator vocabulary: every value operation of the language and of SAMML, in one table.

Each row (`Op`) says how the language spells an operation, which SAMML operation it becomes,
how many value operands it takes, whether it keeps 0 at 0, how lowering co-iterates the operands
of a binary operator, which scalar ALU ops take a constant operand's place, and how the
simulator charges its FLOPs. Every layer reads its lists from here:

- lang: the function names and their arities (`FUNC_ARITY`), the reductions (`LANG_REDUCE`);
- lang.widen and lower: the zero-preserving functions (`ZERO_PRESERVING`), the union and
  intersection operators (`UNION_OPS`, `INTERSECT_OPS`), the ALU op of each operator
  (`BINARY_OP`, `CONST_OP`);
- samml: the ALU and reducer names (`ALU_OPS`, `ALU_BINARY`, `ALU_SCALAR`, `REDUCE_OPS`);
- sim: sim/ops.py keys its numpy semantics by these names and checks at import that they
  match; the FLOPs rules (`alu_flops`, `labelled_alu_flops`, `reduce_flops`) are here so that
  estimate charges exactly what the simulator charges without importing the simulator.

The reference evaluator (fuseflowc/reference/ops.py) keeps its own operations on purpose: it is
the independent oracle the compiled graphs are checked against. The C++ engine has its own
name -> enum map (sim/cpp/prims_compute.cpp); tests/ops/test_ops.py checks it against the table.

Pure Python with no imports: every stage, the numpy-free compile path included, may use it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Values of `Op.kind`.
KINDS = ("binary", "unary", "const", "reduce")


@dataclass(frozen=True)
class Op:
    """One operation.

    `kind`: "binary" (two value operands), "unary" (one), "const" (one operand and the ALU's
    constant `c`: `x op c`), "reduce" (a reducer over an index). `samml`: its name in SAMML
    (the `op` of an `alu` or of a reducer); None when lowering makes no ALU for it (`mask` is an
    intersection that passes its left operand's values). `spelling`: how the language writes
    it, an operator ("+") or a function or reduction name ("relu", "max", "sum"); None for SAMML
    only operations (`bmm`, the constant forms)."""

    kind: str
    samml: str | None
    spelling: str | None = None
    #: A unary function with f(0) == 0: where an operand's entry is absent, loading 0 and
    #: applying f agrees with leaving it absent.
    zero_preserving: bool = False
    #: A binary language operation: how lowering co-iterates the operands' coordinates,
    #: "union" (either side's entries) or "intersect" (both sides').
    joins: str | None = None
    #: A binary language operation: the scalar ALU ops for `e op c` and for `c op e`.
    const: tuple[str, str] | None = None
    #: "element": 1 FLOP per value, b*b per b x b block; "matmul": b**3 per block.
    flops: str = "element"

    @property
    def arity(self) -> int:
        """The number of value operands (a "const" op has one: the constant is an attribute)."""
        return 2 if self.kind == "binary" else 1

    @property
    def is_function(self) -> bool:
        """Whether the language spells it as a call, `relu(x)` or `max(x, y)` (an identifier),
        rather than as an infix operator (`x + y`) or a reduction."""
        return self.kind in ("unary", "binary") and bool(self.spelling) \
            and self.spelling.isidentifier()


#: The table. Its order is the order of every list derived from it (messages list them).
OPS: tuple[Op, ...] = (
    Op("binary", "add", "+", joins="union", const=("addc", "addc")),
    Op("binary", "sub", "-", joins="union", const=("subc", "rsubc")),
    Op("binary", "mul", "*", joins="intersect", const=("mulc", "mulc")),
    Op("binary", "div", "/", joins="intersect", const=("divc", "rdivc")),
    Op("binary", "max", "max", joins="union", const=("maxc", "maxc")),
    Op("binary", "min", "min", joins="union", const=("minc", "minc")),
    Op("binary", None, "mask", joins="intersect"),   # mask(e, M): e's values where M stores one
    Op("binary", "bmm", None, flops="matmul"),       # a b x b block matmul (a product on scalars)
    Op("unary", "relu", "relu", zero_preserving=True),
    Op("unary", "exp", "exp"),
    Op("unary", "neg", "neg", zero_preserving=True),
    Op("unary", "sqrt", "sqrt", zero_preserving=True),
    Op("unary", "rsqrt", "rsqrt"),
    Op("unary", "sigmoid", "sigmoid"),
    Op("unary", "tanh", "tanh", zero_preserving=True),
    Op("unary", "gelu", "gelu", zero_preserving=True),
    Op("const", "addc"),     # x + c
    Op("const", "subc"),     # x - c
    Op("const", "mulc"),     # x * c
    Op("const", "divc"),     # x / c
    Op("const", "rsubc"),    # c - x
    Op("const", "rdivc"),    # c / x
    Op("const", "maxc"),     # max(x, c)
    Op("const", "minc"),     # min(x, c)
    Op("reduce", "sum", "sum"),
    Op("reduce", "max", "max"),
)


def _names(kind: str) -> tuple[str, ...]:
    return tuple(o.samml for o in OPS if o.kind == kind and o.samml is not None)


# ---- SAMML ---------------------------------------------------------------------------------
#: ALU operations by arity; "const" ops compute `x op c` (rsubc: c - x, rdivc: c / x).
ALU_BINARY = _names("binary")
ALU_UNARY = _names("unary")
ALU_SCALAR = _names("const")
ALU_OPS = ALU_BINARY + ALU_UNARY + ALU_SCALAR
#: Reducer (reduce, spacc1, spacc2) operations.
REDUCE_OPS = _names("reduce")

# ---- the language --------------------------------------------------------------------------
#: Function name -> number of arguments (unary functions first). Unary functions act on stored
#: entries only.
FUNC_ARITY: dict[str, int] = {o.spelling: o.arity for kind in ("unary", "binary") for o in OPS
                              if o.kind == kind and o.is_function}
UNARY_FUNCS = tuple(f for f, n in FUNC_ARITY.items() if n == 1)
BINARY_FUNCS = tuple(f for f, n in FUNC_ARITY.items() if n == 2)
#: Reductions the language writes `sum[i](...)`, `max[i](...)`.
LANG_REDUCE = tuple(o.spelling for o in OPS if o.kind == "reduce")
#: Functions with f(0) == 0.
ZERO_PRESERVING = tuple(o.spelling for o in OPS if o.zero_preserving)

# ---- lowering: binary operations by their language spelling ---------------------------------
#: Operators whose operands' coordinates are unioned / intersected.
UNION_OPS = tuple(o.spelling for o in OPS if o.joins == "union")
INTERSECT_OPS = tuple(o.spelling for o in OPS if o.joins == "intersect")
#: Operator -> its binary ALU op; operator -> the scalar ALU ops for `e op c` and `c op e`.
BINARY_OP: dict[str, str] = {o.spelling: o.samml for o in OPS
                             if o.kind == "binary" and o.spelling and o.samml}
CONST_OP: dict[str, tuple[str, str]] = {o.spelling: o.const for o in OPS if o.const}

_ALU = {o.samml: o for o in OPS if o.kind != "reduce" and o.samml}


# ---- semantics shared by the simulator and the estimator -------------------------------------
def arity(op: str) -> int:
    """Number of value inputs of ALU op `op` (2 for binary ops, 1 otherwise)."""
    return 2 if op in ALU_BINARY else 1


def _matmul(op: str) -> bool:
    found = _ALU.get(op)
    return found is not None and found.flops == "matmul"


def alu_flops(op: str, block: int | None) -> int:
    """FLOPs charged per ALU firing on data: 1 per element, b^3 for a b x b block matmul
    (one per multiply-accumulate), b^2 for element-wise block ops."""
    if not block:
        return 1
    return block ** 3 if _matmul(op) else block * block


def block_contracts(op: str, in0, in1, out) -> bool:
    """Whether a labelled ALU contracts an inner index (a block matmul, timed as `bmm`)."""
    if out is None:
        return _matmul(op)
    return bool((set(in0 or ()) | set(in1 or ())) - set(out))


def labelled_alu_flops(op: str, in0, in1, out, b: int) -> int:
    """Element operations of one labelled block ALU firing, as scalars count them (an ALU op
    is 1 FLOP, each value a reducer adds is 1): the size n of its einsum's iteration space
    for element-wise ops (b^2 on b x b blocks), 2n when it contracts a label (a multiply and
    an add per point: 2 b^3 for a b x b block matmul). The legacy unlabelled `bmm` op keeps
    `alu_flops`' b^3 (one per multiply-accumulate)."""
    n = b ** len(set(in0 or ()) | set(in1 or ()) | set(out or ()))
    return 2 * n if block_contracts(op, in0, in1, out) else n


def reduce_flops(in0, b: int) -> int:
    """FLOPs per input block of a labelled reducer (one per value of the block, axes `in0`)."""
    return b ** len(tuple(in0 or ()))
