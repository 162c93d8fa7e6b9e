"""The `--dump-table` view: each statement's fusion table as a text grid (paper Figs. 8, 19).

Rows are the indices in the dataflow order, then `val`; columns are the input views and the
intermediate results (in bottom-up order). Primitive cells: `LS(x)` a level scanner reading
reference x, `Rep(x, i)` a repeat over the loop of i, `Val(x)` a value array, compute cells
(`×`, `+`, `Σk`, `Red1k`, ...). Reference cells `⟨C_i⟩` point at the cell of column C in row i
whose stream they reuse. Loops with a joiner are listed under the grid.
"""

from __future__ import annotations

from . import expr as X
from .build import Analysis, Join, Leaf

_SYM = {"+": "+", "-": "-", "*": "×", "/": "÷", "max": "max", "min": "min", "mask": "mask"}


def _names(an: Analysis) -> dict[X.Node, str]:
    names: dict[X.Node, str] = {}
    # temporaries are T0, T1, ... skipping the program's own tensor names (an inlined
    # intermediate called T0 must not be confused with the table's first temporary)
    taken = {e.tensor for e in _postorder(an.st.expr) if isinstance(e, X.Access)}
    taken |= {an.st.tensor, *an.st.inlined}
    k = 0
    for e in _postorder(an.st.expr):
        if isinstance(e, X.Access):
            names[e] = f"{e.tensor}[{','.join(e.indices)}]"
        elif isinstance(e, X.Const):
            names[e] = repr(e.value)
        elif e is an.st.expr:
            names[e] = f"{an.st.tensor}[{','.join(e.free)}]"
        else:
            while f"T{k}" in taken:
                k += 1
            names[e] = f"T{k}[{','.join(e.free)}]"
            k += 1
    return names


def _postorder(e: X.Node):
    for c in e.children():
        yield from _postorder(c)
    yield e


def _tree_text(tree, names) -> str:
    if isinstance(tree, Leaf):
        if tree.kind == "helper":
            return f"full({tree.node.tensor})"
        return names[tree.node] + (" (values)" if tree.kind == "value" else "")
    inner = f"{_tree_text(tree.left, names)}, {_tree_text(tree.right, names)}"
    if tree.op == "union" and any(tree.required):
        req = [s for s, r in zip(("left", "right"), tree.required) if r]
        return f"∪({inner}; required {', '.join(req)})"
    return ("∩" if tree.op == "intersect" else "∪") + f"({inner})"


def table_grid(an: Analysis) -> list[list[str]]:
    """The grid: a header row, one row per index, a value row."""
    names = _names(an)
    cols = [e for e in _postorder(an.st.expr) if not isinstance(e, X.Const)]
    rows = list(an.order) + ["val"]
    grid = [[""] + [names[e] for e in cols]]
    for x in rows:
        line = [x]
        for e in cols:
            line.append(_cell(an, e, x, names))
        grid.append(line)
    return grid


def _ref(e: X.Node, x: str, names) -> str:
    short = names[e].split("[")[0]
    return f"⟨{short}_{x}⟩"


def _cell(an: Analysis, e: X.Node, x: str, names) -> str:
    if x == "val":
        if isinstance(e, X.Access):
            return f"Val({_ref(e, e.space[-1], names) if e.space else 'root'})"
        if isinstance(e, X.Unary):
            return f"{e.op}({_ref(e.arg, 'val', names)})"
        if isinstance(e, X.Reduce):
            lv = an.spacc_levels(e)
            sym = "Σ" if e.op == "sum" else "max"
            if lv:
                return f"Red{len(lv)}{e.index}[val]"
            return f"{sym}{e.index}({_ref(e.body, 'val', names)})"
        assert isinstance(e, X.Binary)
        parts = [repr(c.value) if isinstance(c, X.Const) else _ref(c, "val", names)
                 for c in (e.lhs, e.rhs)]
        extra = [c for c in (e.lhs, e.rhs) if not isinstance(c, X.Const)
                 and len(c.space) < len(e.space)]
        text = f"{_SYM[e.op]}({', '.join(parts)})"
        if extra:
            text += " Rep " + ",".join(e.space[len(extra[0].space):])
        return text
    if x not in e.space:
        return ""
    k = e.space.index(x)
    if isinstance(e, X.Access):
        prev = "root" if k == 0 else _ref(e, e.space[k - 1], names)
        if x in e.indices:
            return f"LS({prev})"
        return f"Rep({prev}, {x})"
    if isinstance(e, X.Reduce) and x in an.spacc_levels(e):
        lv = an.spacc_levels(e)
        return f"Red{len(lv)}{e.index}[crd{len(lv) - 1 - lv.index(x)}]"
    src = _source(an, e, e.loops[x], names)
    return f"⟨{src}_{x}⟩" if src else "·"


def _source(an: Analysis, e: X.Node, loop, names) -> str:
    """The column whose coordinates e's level reuses (the first leaf below e at this loop)."""
    t = an._join(e, loop)
    if t is None:
        return ""
    leaf = t.leaves()[0]
    n = leaf.node
    return names[n].split("[")[0]


def dump_table(an: Analysis, title: str) -> str:
    """One table as text."""
    grid = table_grid(an)
    widths = [max(len(r[c]) for r in grid) for c in range(len(grid[0]))]
    lines = [title]
    for r, row in enumerate(grid):
        lines.append(" | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if r == 0:
            lines.append("-+-".join("-" * w for w in widths))
    names = _names(an)
    for loop in an.loops:
        if isinstance(loop.join, Join):
            lines.append(f"  join {loop.index} (loop {loop.number}): "
                         + _tree_text(loop.join, names))
    return "\n".join(lines)


def dump_tables(analyses: list[tuple[str, Analysis]]) -> str:
    """Every statement's table, titled with its graph, statement and dataflow order."""
    out = []
    for graph, an in analyses:
        inl = f" (fused: {', '.join(an.st.inlined)})" if an.st.inlined else ""
        title = (f"graph {graph}, statement {an.st.name}{inl}, order "
                 + " -> ".join(an.order))
        out.append(dump_table(an, title))
    return "\n\n".join(out) + "\n"
