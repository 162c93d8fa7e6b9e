"""Value operations of ALUs and reducers, on floats and on dense b x b numpy blocks.

Scalar versions use `math` with IEEE results where Python would raise (x/0 -> inf or nan,
exp overflow -> inf, sqrt of a negative -> nan), so the simulator agrees with numpy, which the
reference evaluator uses. Block versions are numpy element-wise; `bmm` is a block matmul.

The operations and their FLOPs rules are those of the operator table (fuseflowc/ops.py): the
tables here hold their semantics, checked against it at import.

NaN propagates (docs/language.md, "NaN and infinities"): max, min and relu are numpy's
`maximum`/`minimum` (IEEE 754-2019 maximum/minimum: a NaN operand gives NaN), never Python's
`max`/`min` or a bare comparison, which silently drop a NaN on one side.
"""

from __future__ import annotations

import math

import numpy as np

from fuseflowc.ops import ALU_BINARY, ALU_SCALAR, ALU_UNARY, REDUCE_OPS, arity, reduce_flops

INF = math.inf
NAN = math.nan


def _div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return NAN if a == 0.0 or a != a else math.copysign(INF, a) * math.copysign(1.0, b)


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def _sqrt(x):
    return math.sqrt(x) if x >= 0.0 else NAN


def _rsqrt(x):
    if x > 0.0:
        return 1.0 / math.sqrt(x)
    return math.copysign(INF, x) if x == 0.0 else NAN   # 1/sqrt(-0.0) = 1/-0.0 = -inf


def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _gelu(x):
    # The exact (erf) form, as torch.nn.functional.gelu's default.
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


# numpy's scalar rule, bit for bit (signed zeros too): a NaN first operand is returned, and a
# NaN second operand fails the comparison and is returned.
def _max(a, b):
    return a if a > b or a != a else b


def _min(a, b):
    return a if a < b or a != a else b


def _relu(x):
    return x if x > 0.0 or x != x else 0.0


BINARY_SCALAR = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _div, "max": _max, "min": _min,
}
UNARY_SCALAR = {
    "relu": _relu, "exp": _exp, "neg": lambda x: -x, "sqrt": _sqrt, "rsqrt": _rsqrt,
    "sigmoid": _sigmoid, "tanh": math.tanh, "gelu": _gelu,
}
# x op c
SCALAR_CONST = {
    "addc": lambda x, c: x + c, "subc": lambda x, c: x - c, "mulc": lambda x, c: x * c,
    "divc": lambda x, c: _div(x, c), "rsubc": lambda x, c: c - x, "rdivc": lambda x, c: _div(c, x),
    "maxc": _max, "minc": _min,
}


def _np(fn):
    """fn without numpy's floating-point warnings: an infinity or NaN (inf - inf, 0 * inf,
    overflow) is a value like any other (IEEE), not something to warn about on stderr."""
    def run(*a, **kw):
        with np.errstate(all="ignore"):
            return fn(*a, **kw)
    return run


def _block_gelu(x):
    from scipy.special import erf
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


BINARY_BLOCK = {
    "add": _np(np.add), "sub": _np(np.subtract), "mul": _np(np.multiply),
    "div": _np(np.divide), "max": np.maximum, "min": np.minimum, "bmm": _np(np.matmul),
}
UNARY_BLOCK = {
    "relu": lambda x: np.maximum(x, 0.0), "exp": _np(np.exp), "neg": np.negative,
    "sqrt": _np(np.sqrt), "rsqrt": _np(lambda x: 1.0 / np.sqrt(x)),
    "sigmoid": _np(lambda x: 1.0 / (1.0 + np.exp(-x))), "tanh": np.tanh,
    "gelu": _np(_block_gelu),
}
SCALAR_CONST_BLOCK = {
    "addc": _np(lambda x, c: x + c), "subc": _np(lambda x, c: x - c),
    "mulc": _np(lambda x, c: x * c), "divc": _np(lambda x, c: x / c),
    "rsubc": _np(lambda x, c: c - x), "rdivc": _np(lambda x, c: c / x),
    "maxc": np.maximum, "minc": np.minimum,
}

def alu_function(op: str, block: int | None, const: float | None):
    """The Python function of ALU `op` on scalars (block None) or b x b blocks."""
    if op in SCALAR_CONST:
        fn = (SCALAR_CONST_BLOCK if block else SCALAR_CONST)[op]
        c = float(const if const is not None else 0.0)
        return lambda x: fn(x, c)
    if op == "bmm":
        if not block:
            return BINARY_SCALAR["mul"]  # a 1 x 1 block matmul is a product
        return np.matmul
    table = (BINARY_BLOCK if block else BINARY_SCALAR) if arity(op) == 2 else \
        (UNARY_BLOCK if block else UNARY_SCALAR)
    return table[op]


REDUCE_SCALAR = {"sum": lambda a, b: a + b, "max": _max}
REDUCE_BLOCK = {"sum": _np(np.add), "max": np.maximum}


def _check_table() -> None:
    """Raise unless every table above holds exactly the operations of fuseflowc/ops.py (the
    one operator table): a new operation needs its semantics here, and nothing here may be
    missing from the table."""
    elementwise = tuple(op for op in ALU_BINARY if op != "bmm")   # bmm on scalars is mul
    for name, table, want in (("BINARY_SCALAR", BINARY_SCALAR, elementwise),
                              ("BINARY_BLOCK", BINARY_BLOCK, ALU_BINARY),
                              ("UNARY_SCALAR", UNARY_SCALAR, ALU_UNARY),
                              ("UNARY_BLOCK", UNARY_BLOCK, ALU_UNARY),
                              ("SCALAR_CONST", SCALAR_CONST, ALU_SCALAR),
                              ("SCALAR_CONST_BLOCK", SCALAR_CONST_BLOCK, ALU_SCALAR),
                              ("REDUCE_SCALAR", REDUCE_SCALAR, REDUCE_OPS),
                              ("REDUCE_BLOCK", REDUCE_BLOCK, REDUCE_OPS)):
        if set(table) != set(want):
            raise ImportError(f"sim/ops.py {name} does not match fuseflowc/ops.py: "
                              f"{sorted(set(table) ^ set(want))}")


_check_table()


# -- labelled block values (block einsums) ------------------------------------------------------
# A block value of a lowered blocked region is an ndarray whose axes are the inner (within-block)
# indices of its view, listed by the node's `in0`/`in1`/`out` labels (docs/samml.md, "Blocked
# tensors"). A scalar (no labels) is a 0-d value: a float.

def _align(x, have: tuple, want: tuple):
    """x with axes `have` transposed and expanded to broadcast against axes `want` (every label
    of `have` must be in `want`)."""
    if not have:
        return x
    perm = sorted(range(len(have)), key=lambda k: want.index(have[k]))
    y = np.transpose(x, perm) if perm != list(range(len(have))) else x
    present = [want.index(have[k]) for k in perm]
    shape = [1] * len(want)
    for ax, n in zip(present, y.shape):
        shape[ax] = n
    return y.reshape(shape)


def _full(x, have: tuple, want: tuple, b: int):
    """x aligned to `want` and broadcast to the full b x ... x b shape (a fresh array)."""
    return np.broadcast_to(_align(np.asarray(x, dtype=np.float64), have, want),
                           (b,) * len(want)).copy()


def _letters(*label_lists):
    names = sorted({x for ls in label_lists for x in ls})
    if len(names) > 52:  # pragma: no cover - far beyond any statement
        raise ValueError("too many block labels")
    alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {x: alpha[k] for k, x in enumerate(names)}


def labelled_alu(op: str, in0, in1, out, b: int, const: float | None):
    """(fn, n_left, n_right) of a labelled block ALU: fn(x[, y]) computes the result with axes
    `out`; n_left(y) / n_right(x) the result when operand a / b is N (the operation's identity).
    Binary element-wise ops broadcast an operand over the labels it lacks; `mul` (and `bmm`) sum
    over the labels in no output (np.einsum)."""
    in0, out = tuple(in0 or ()), tuple(out or ())
    if arity(op) == 1:
        base = alu_function(op, b, const)
        if in0 == out:
            return base, None, None
        return (lambda x: base(_full(x, in0, out, b))), None, None
    in1 = tuple(in1 or ())
    if op in ("mul", "bmm"):
        m = _letters(in0, in1, out)
        spec = (f"{''.join(m[x] for x in in0)},{''.join(m[x] for x in in1)}"
                f"->{''.join(m[x] for x in out)}")

        @_np
        def fn(x, y):
            r = np.einsum(spec, x, y)
            return r if out else float(r)
        # N is the identity 1: the other operand's sum over the contracted labels
        ones0 = np.ones((b,) * len(in0))
        ones1 = np.ones((b,) * len(in1))
        return fn, (lambda y: fn(ones0, y)), (lambda x: fn(x, ones1))
    if set(in0) - set(out) or set(in1) - set(out):
        raise ValueError(f"block alu {op}: only mul contracts labels")
    base = BINARY_BLOCK[op]

    def fn2(x, y):
        return base(_align(x, in0, out), _align(y, in1, out))
    if op == "sub":
        nl = lambda y: -_full(y, in1, out, b)  # noqa: E731
    elif op == "div":
        nl = lambda y: _np(np.divide)(1.0, _full(y, in1, out, b))  # noqa: E731
    else:
        nl = lambda y: _full(y, in1, out, b)  # noqa: E731
    return fn2, nl, (lambda x: _full(x, in0, out, b))


def labelled_reduce(op: str, in0, out, b: int):
    """(pre, zero, flops): `pre` reduces one input block with axes `in0` over the labels missing
    from `out` (None when nothing is reduced inside the block), `zero` the result of an empty
    fiber (a zero block with axes `out`), flops per input block."""
    in0, out = tuple(in0 or ()), tuple(out or ())
    zero = np.zeros((b,) * len(out)) if out else 0.0
    fl = reduce_flops(in0, b)
    gone = tuple(k for k, x in enumerate(in0) if x not in out)
    if not gone:
        if in0 == out:
            return None, zero, fl
        keep = tuple(in0)
        return (lambda x: _align(x, keep, out).reshape((b,) * len(out))), zero, fl
    red = _np(np.sum) if op == "sum" else np.max
    kept = tuple(x for x in in0 if x in out)

    def pre(x):
        r = red(x, axis=gone)
        if not out:
            return float(r)
        return _full(r, kept, out, b)
    return pre, zero, fl
