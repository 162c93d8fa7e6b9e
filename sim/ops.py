"""Value operations of ALUs and reducers, on floats and on dense b x b numpy blocks.

Scalar versions use `math` with IEEE results where Python would raise (x/0 -> inf or nan,
exp overflow -> inf, sqrt of a negative -> nan), so the simulator agrees with numpy, which the
reference evaluator uses. Block versions are numpy element-wise; `bmm` is a block matmul.
"""

from __future__ import annotations

import math

import numpy as np

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
    return INF if x == 0.0 else NAN


def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _gelu(x):
    # The exact (erf) form, as torch.nn.functional.gelu's default.
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def _max(a, b):
    return a if a >= b else b


def _min(a, b):
    return a if a <= b else b


def _relu(x):
    return x if x > 0.0 else 0.0


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
    def run(*a):
        with np.errstate(all="ignore"):
            return fn(*a)
    return run


def _block_gelu(x):
    from scipy.special import erf
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


BINARY_BLOCK = {
    "add": np.add, "sub": np.subtract, "mul": _np(np.multiply), "div": _np(np.divide),
    "max": np.maximum, "min": np.minimum, "bmm": np.matmul,
}
UNARY_BLOCK = {
    "relu": lambda x: np.maximum(x, 0.0), "exp": _np(np.exp), "neg": np.negative,
    "sqrt": _np(np.sqrt), "rsqrt": _np(lambda x: 1.0 / np.sqrt(x)),
    "sigmoid": _np(lambda x: 1.0 / (1.0 + np.exp(-x))), "tanh": np.tanh, "gelu": _block_gelu,
}
SCALAR_CONST_BLOCK = {
    "addc": lambda x, c: x + c, "subc": lambda x, c: x - c, "mulc": lambda x, c: x * c,
    "divc": _np(lambda x, c: x / c), "rsubc": lambda x, c: c - x,
    "rdivc": _np(lambda x, c: c / x), "maxc": np.maximum, "minc": np.minimum,
}

ALU_OPS = tuple(BINARY_SCALAR) + ("bmm",) + tuple(UNARY_SCALAR) + tuple(SCALAR_CONST)


def arity(op: str) -> int:
    """Number of value inputs of ALU op `op` (2 for binary ops, 1 otherwise)."""
    return 2 if op in BINARY_SCALAR or op == "bmm" else 1


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


def alu_flops(op: str, block: int | None) -> int:
    """FLOPs charged per ALU firing on data: 1 per element, b^3 for a b x b block matmul
    (one per multiply-accumulate), b^2 for element-wise block ops."""
    if not block:
        return 1
    return block ** 3 if op == "bmm" else block * block


REDUCE_SCALAR = {"sum": lambda a, b: a + b, "max": _max}
REDUCE_BLOCK = {"sum": np.add, "max": np.maximum}
