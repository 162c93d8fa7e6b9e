"""Distributing a product into a sum: the normalizing rewrite of a statement before it is
generated.

`(sum_k X) op D = sum_k (X op D)` for op in *, / (X the dividend) and mask, when D does not
depend on k: the same values and pattern. A statement is rewritten so wherever the order
leaves the sum unbuildable as written:

- the order iterates an index of D inside the sum, between the summed expression's own
  indices (no coordinates for it there: build.ContextInsideReduction);
- the outer output level of an order-2 or higher accumulator would meet D in a joiner (a
  joiner cannot carry a whole fiber: `outer_level_join`);
- the sum is a scalar (no free index) whose fibers may be empty (its reducer would emit an
  explicit 0 for an empty stream where the language stores nothing, and a scalar has no
  coordinate level to hold it on: `scalar_of_possibly_empty`).

Each rewrite moves one operand into one sum, so a statement is rewritten at most once per node.
"""

from __future__ import annotations

from . import expr as X
from .build import Analysis, Join, full_at


def normalize(st: X.Statement, out_format) -> Analysis:
    """Rewrite `st.expr` in place until it needs no distribution (see the module docstring);
    the analysis of the result. A sum that needs one where the rewrite does not apply is the
    user's error (the analysis' ContextInsideReduction; the outer-level join is codegen's).
    Nothing here catches an exception: each case is a finding of the analysis."""
    for _ in range(sum(1 for _ in st.expr.walk()) + 1):
        an = Analysis(st, out_format, stop_at_inside=True)
        if an.inside is not None:
            if not distribute(st, an, an.inside.reduction):
                raise an.inside
            continue
        if not any(t is not None and distribute(st, an, t)
                   for t in (scalar_of_possibly_empty(an), outer_level_join(an))):
            return an
    raise AssertionError("distribution did not converge")  # pragma: no cover


def outer_level_join(an: Analysis) -> X.Reduce | None:
    """The first sum whose accumulator's outer output level meets another operand in a
    joiner (codegen's OuterLevelJoin, found before generating)."""
    for loop in an.loops:
        if not isinstance(loop.join, Join):
            continue
        for leaf in loop.join.leaves():
            if leaf.kind == "spacc" and loop.index != an.spacc_levels(leaf.node)[-1]:
                return leaf.node
    return None


def scalar_of_possibly_empty(an: Analysis) -> X.Reduce | None:
    """A sum to a scalar (no free index) whose fibers may be empty, under a product, quotient or
    mask: distributed into the sum (`(sum_j Y) * X = sum_j (Y * X)`), it gets X's indices and
    can be held like any order-0 reduction."""
    for n in an.nodes:
        if isinstance(n, X.Reduce) and n.op == "sum" and not n.free \
                and not full_at(n.body, n.index, an.order):
            p = an.parent.get(n)
            if isinstance(p, X.Binary) and (p.op == "*" or (p.op in ("/", "mask")
                                                             and p.lhs is n)):
                return n
    return None


def distribute(st: X.Statement, an: Analysis, e: X.Reduce) -> bool:
    """Rewrite `e op o` (op in *, /, mask; e a sum the other operand o does not depend on) into
    `sum(e.body op o)` in place; False when the rewrite does not apply."""
    p = an.parent.get(e)
    if e.op != "sum" or not isinstance(p, X.Binary):
        return False
    if p.op == "*":
        o = p.rhs if p.lhs is e else p.lhs
    elif p.op in ("/", "mask") and p.lhs is e:
        o = p.rhs
    else:
        return False
    if e.index in o.every or isinstance(o, X.Const):
        return False
    body = X.Binary(p.op, e.body, o, p.loc) if p.lhs is e else X.Binary(p.op, o, e.body, p.loc)
    new = X.Reduce("sum", e.index, body, e.loc)
    new.widen = p.widen
    gp = an.parent.get(p)
    if gp is None:
        st.expr = new
    elif isinstance(gp, X.Unary):
        gp.arg = new
    elif isinstance(gp, X.Reduce):
        gp.body = new
    elif gp.lhs is p:
        gp.lhs = new
    else:
        gp.rhs = new
    return True
