"""Which fused intermediates must be materialized to be "seen as declared".

The language stores an assigned tensor in its declared format: a dense level (after the last
compressed one) widens its pattern to every coordinate, with explicit zeros. Fused away, the
intermediate's stream carries only its computed pattern. The two agree on every value of the
program unless some use distinguishes an absent entry from a stored 0: a non-zero-preserving
function, a union in which the intermediate's side is required (it owns indices the other side
lacks), max/min, a max reduction, a quotient (unless divided by a non-zero constant: 0 / 0
is NaN), a mask pattern. Such an intermediate is written
to memory and read back (its region is split) rather than fused.

An analysis of the program IR: `fuse` decides materialization with it (`must_materialize`) and
lowering (`lower.adapt_fused`) decides which inlined intermediates to widen in the stream.
"""

from __future__ import annotations

from ..ops import ZERO_PRESERVING
from . import ast


def widens(decl: ast.TensorDecl) -> bool:
    """Whether the declared format stores coordinates beyond the computed pattern (a dense
    level after the last compressed one, or an all-dense format)."""
    levels = decl.format.levels
    last = max((k for k, lv in enumerate(levels) if lv != "dense"), default=-1)
    return last < len(levels) - 1


def path_safe(e: ast.Expr, tensor: str, free: frozenset) -> bool | None:
    """Within e: None if `tensor` is not used; else whether every use is insensitive to stored
    zeros replacing absent entries."""
    if isinstance(e, ast.Access):
        return True if e.tensor == tensor else None
    if isinstance(e, ast.Const):
        return None
    kids = e.children()
    results = [path_safe(c, tensor, free) for c in kids]
    if all(r is None for r in results):
        return None
    if any(r is False for r in results):
        return False
    if isinstance(e, ast.Call):
        if e.func in ZERO_PRESERVING:
            return True
        if e.func == "mask":
            return results[1] is None
        return False  # exp, sigmoid, rsqrt, max, min
    if isinstance(e, ast.Reduce):
        return e.op == "sum"
    assert isinstance(e, ast.Binary)
    if e.op == "*":
        return True
    if e.op == "/":
        # 0 / d is NaN where d is 0 or NaN, an absent numerator gives no entry: only a
        # non-zero constant divisor cannot tell them apart.
        return results[1] is None and _nonzero_const(kids[1])
    # + and -: the side using the tensor must not own indices the other lacks.
    for k, r in enumerate(results):
        if r is not None:
            mine = set(ast.indices_of(kids[k]))
            other = set(ast.indices_of(kids[1 - k]))
            if mine - other:
                return False
    return True


def _nonzero_const(e: ast.Expr) -> bool:
    return isinstance(e, ast.Const) and e.value != 0


def must_materialize(program: ast.Program, group: list[str]) -> set[str]:
    """The statements of `group` (a fusion region) whose results must be stored and read back."""
    out: set[str] = set()
    members = set(group)
    outputs = set(program.outputs)
    readers = program.readers()
    pos = program.positions()
    # the group's statements in program order (not a pass over the whole program per group:
    # quadratic in the statements of an unrolled loop)
    inside = [program.statement(n) for n in sorted(members & pos.keys(), key=pos.__getitem__)]

    def read_outside(t: str) -> bool:
        return any(r not in members for r in readers.get(t, ()))

    def unsafe(t: str, seen: frozenset) -> bool:
        for s in inside:
            if s.name in seen:
                continue
            r = path_safe(s.expr, t, frozenset())
            if r is False:
                return True
            if r is True:
                # The values agree, but the consumer's computed pattern may grow (stored zeros);
                # stored in a format with compressed levels and read later, that shows.
                written = s.name in outputs or read_outside(s.name)
                if written and not program.tensor(s.name).format.is_dense:
                    return True
                if unsafe(s.name, seen | {s.name}):
                    return True
        return False

    for name in group:
        if widens(program.tensor(name)) and unsafe(name, frozenset({name})):
            out.add(name)
    return out
