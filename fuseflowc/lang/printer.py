"""Printing programs and expressions back to source text (deterministic, minimal parentheses)."""

from __future__ import annotations

from . import ast

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def format_number(v: float) -> str:
    """Shortest text that reads back as the same float (integers without a fraction)."""
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def expr_str(e: ast.Expr, prec: int = 0) -> str:
    """Source text of an expression; `prec` is the binding strength of the context."""
    if isinstance(e, ast.Access):
        return f"{e.tensor}[{','.join(e.indices)}]"
    if isinstance(e, ast.Const):
        text = format_number(e.value)
        return f"({text})" if e.value < 0 and prec > 0 else text
    if isinstance(e, ast.Binary):
        p = _PREC[e.op]
        # Left-associative: the right operand of - and / (and of same-precedence ops) needs
        # parentheses at equal precedence.
        text = f"{expr_str(e.lhs, p)} {e.op} {expr_str(e.rhs, p + 1)}"
        return f"({text})" if p < prec else text
    if isinstance(e, ast.Call):
        return f"{e.func}({', '.join(expr_str(a) for a in e.args)})"
    if isinstance(e, ast.Reduce):
        return f"{e.op}[{','.join(e.indices)}]({expr_str(e.body)})"
    raise TypeError(e)


def directive_str(d: ast.Directive) -> str:
    if isinstance(d, ast.Fuse):
        return f"fuse {d.name}: {', '.join(d.statements)}"
    if isinstance(d, ast.Order):
        return f"order {d.statement}: {' -> '.join(d.indices)}"
    if isinstance(d, ast.Parallelize):
        return f"parallelize {d.statement}: {d.index} by {d.factor}"
    if isinstance(d, ast.Block):
        return f"block {d.tensor}: {d.size}"
    if isinstance(d, ast.Output):
        return f"output {', '.join(d.tensors)}"
    if isinstance(d, ast.Decompose):
        return d.text()
    raise TypeError(d)


def program_str(p: ast.Program, explicit: bool = True) -> str:
    """The program as text; with `explicit`, checked statements show their implicit sums."""
    out: list[str] = []
    if p.dims:
        out.append("dim " + ", ".join(d.name if d.size is None else f"{d.name} = {d.size}"
                                      for d in p.dims))
    for t in p.tensors:
        out.append(f"tensor {t.name}[{', '.join(map(str, t.dims))}] : {t.format.name()}")
    if p.statements:
        out.append("")
    for s in p.statements:
        e = s.expr if explicit and s.expr is not None else s.rhs
        out.append(f"{expr_str(s.lhs)} = {expr_str(e)}")
    if p.directives:
        out.append("")
    out.extend(directive_str(d) for d in p.directives)
    return "\n".join(out) + "\n"
