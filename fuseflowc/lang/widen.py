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
    """The statements of `group` (a fusion region) whose results must be stored and read back:
    a widening intermediate some chain of its safe uses inside the group reaches an unsafe use
    from (or a stored, not dense, result). Linear in the group's reads: each statement's
    verdict is found once (a search per path was exponential in an unrolled RNN's layers)."""
    out: set[str] = set()
    members = set(group)
    outputs = set(program.outputs)
    readers = program.readers()
    pos = program.positions()
    # the group's statements in program order (not a pass over the whole program per group:
    # quadratic in the statements of an unrolled loop)
    inside = [program.statement(n) for n in sorted(members & pos.keys(), key=pos.__getitem__)]
    uses: dict[str, list[ast.Assignment]] = {}   # tensor -> the group's statements reading it
    for s in inside:
        for t in dict.fromkeys(a.tensor for a in s.expr.walk() if isinstance(a, ast.Access)):
            uses.setdefault(t, []).append(s)

    def read_outside(t: str) -> bool:
        return any(r not in members for r in readers.get(t, ()))

    def reaches_unsafe(s: ast.Assignment, t: str) -> bool | None:
        """Whether s's use of t is unsafe (True), safe with a result to follow (None), or
        safe and harmless (False)."""
        r = path_safe(s.expr, t, frozenset())
        if r is False:
            return True
        # The values agree, but the consumer's computed pattern may grow (stored zeros);
        # stored in a format with compressed levels and read later, that shows.
        written = s.name in outputs or read_outside(s.name)
        return True if written and not program.tensor(s.name).format.is_dense else None

    verdict: dict[str, bool] = {}

    def unsafe(t: str) -> bool:
        """Without cycles a chain never meets itself: each tensor's answer is one (iterative
        depth-first, so long chains do not recurse)."""
        stack = [(t, iter(uses.get(t, ())))]
        on_path = {t}
        while stack:
            name, it = stack[-1]
            s = next(it, None)
            if s is None:
                stack.pop()
                on_path.discard(name)
                verdict.setdefault(name, False)
                continue
            if s.name in on_path:
                raise _Cyclic
            hit = reaches_unsafe(s, name)
            if hit is None:
                if s.name not in verdict:
                    on_path.add(s.name)
                    stack.append((s.name, iter(uses.get(s.name, ()))))
                    continue
                hit = verdict[s.name]
            if hit:
                for n, _ in stack:   # every tensor on the path reaches this unsafe use
                    verdict[n] = True
                return True
        return verdict[t]

    try:
        for name in group:
            if widens(program.tensor(name)) and unsafe(name):
                out.add(name)
        return out
    except _Cyclic:
        return _must_materialize_paths(program, group, inside, outputs, readers, members)


class _Cyclic(Exception):
    """A statement of the group reads itself through the group: the per-path search decides."""


def _must_materialize_paths(program, group, inside, outputs, readers, members) -> set[str]:
    """must_materialize by a search per path (exponential in the worst case; only for a group
    whose reads form a cycle, which the per-tensor answers cannot handle)."""
    out: set[str] = set()

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
