"""Property tests of the program printer and parser (hypothesis).

- Random expression trees print with minimal parentheses and reparse to an equal AST.
- Random well-formed programs (declarations, formats, statements, schedules) pass the checker,
  and print / parse / check round-trips to the same text and the same normalized AST.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import Format, shorthand
from fuseflowc.lang import ast
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import expr_str, program_str
from fuseflowc.ops import BINARY_FUNCS, LANG_REDUCE, UNARY_FUNCS

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# ---- expressions --------------------------------------------------------------------------

NAMES = st.sampled_from(["A", "B", "x", "W1", "t_2"])
INDEX = st.sampled_from(["i", "j", "k", "l"])
NUMBERS = st.one_of(
    st.integers(-20, 20).map(float),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-5, 0.125, 2.5e-300, 1e300, 0.1]),
)

accesses = st.builds(lambda t, idx: ast.Access(t, tuple(idx)), NAMES,
                     st.lists(INDEX, min_size=1, max_size=3, unique=True))
leaves = st.one_of(accesses, NUMBERS.map(ast.Const))


def _extend(children):
    return st.one_of(
        st.builds(ast.Binary, st.sampled_from("+-*/"), children, children),
        st.builds(lambda f, a: ast.Call(f, (a,)), st.sampled_from(UNARY_FUNCS), children),
        st.builds(lambda f, a, b: ast.Call(f, (a, b)), st.sampled_from(BINARY_FUNCS),
                  children, children),
        st.builds(lambda op, idx, b: ast.Reduce(op, tuple(idx), b), st.sampled_from(LANG_REDUCE),
                  st.lists(INDEX, min_size=1, max_size=2, unique=True), children),
    )


expressions = st.recursive(leaves, _extend, max_leaves=12)


def parse_expr(text: str) -> ast.Expr:
    """Parse `text` as the right side of a statement (no checking: names need not exist)."""
    return parse_program(Source("<expr>", f"y[i] = {text}\n")).statements[0].rhs


def _grouping_parens(text: str) -> list[tuple[int, int]]:
    """(open, close) offsets of the parentheses that only group (not calls or reductions)."""
    pairs, stack = [], []
    for k, ch in enumerate(text):
        if ch == "(":
            before = text[:k].rstrip()
            grouping = not before or not (before[-1].isalnum() or before[-1] in "_]")
            stack.append((k, grouping))
        elif ch == ")":
            start, grouping = stack.pop()
            if grouping:
                pairs.append((start, k))
    return pairs


NEG_NUMBER = re.compile(r"^-[0-9.]")


@given(expressions)
@SETTINGS
def test_expression_print_parse_round_trip(e):
    assert parse_expr(expr_str(e)) == e


@given(expressions)
@SETTINGS
def test_expression_parentheses_are_minimal(e):
    """Removing any grouping parentheses changes the parsed tree (or breaks the parse).

    Parentheses around a negative number (`a * (-2)`) are deliberate for readability, and are
    the one exception: `a * -2` would parse to the same tree.
    """
    text = expr_str(e)
    for start, end in _grouping_parens(text):
        inner = text[start + 1:end]
        if NEG_NUMBER.match(inner) and _is_number(inner):
            continue
        shorter = text[:start] + inner + text[end + 1:]
        try:
            other = parse_expr(shorter)
        except UserError:
            continue
        assert other != e, f"parentheses at {start} are redundant in {text!r}"


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_parentheses_examples():
    a, b, c = (ast.Access(n, ("i",)) for n in "abc")
    assert expr_str(ast.Binary("-", a, ast.Binary("-", b, c))) == "a[i] - (b[i] - c[i])"
    assert expr_str(ast.Binary("-", ast.Binary("-", a, b), c)) == "a[i] - b[i] - c[i]"
    assert expr_str(ast.Binary("*", ast.Binary("+", a, b), c)) == "(a[i] + b[i]) * c[i]"
    assert expr_str(ast.Binary("/", a, ast.Binary("*", b, c))) == "a[i] / (b[i] * c[i])"
    assert expr_str(ast.Binary("+", a, ast.Binary("*", b, c))) == "a[i] + b[i] * c[i]"
    assert expr_str(ast.Call("relu", (ast.Binary("+", a, b),))) == "relu(a[i] + b[i])"


# ---- whole programs -----------------------------------------------------------------------

LEVELS = ("dense", "compressed")


@st.composite
def formats(draw, order: int) -> Format:
    """Any format of `order`: a shorthand that fits, or the general form with a mode order."""
    short = [f for n in ("dense", "sparse", "csr", "csc", "dcsr", "dcsc")
             if (f := shorthand(n, order)) is not None]
    if draw(st.booleans()):
        return draw(st.sampled_from(short))
    levels = tuple(draw(st.sampled_from(LEVELS)) for _ in range(order))
    mode_order = tuple(draw(st.permutations(range(order))))
    blocked = order == 2 and draw(st.integers(0, 4)) == 0
    return Format(levels, mode_order, blocked)


class _Gen:
    """Builds one well-formed program from hypothesis draws.

    Every dim D has its own index variable (its lower-cased name) and tensors never repeat a
    dim, so accesses agree on index ranges by construction; a reduction renames the indices it
    reduces to fresh variables, so they are never used outside it.
    """

    def __init__(self, draw):
        self.draw = draw
        self.fresh = itertools.count()
        self.var_dim: dict[str, str] = {}

    def var(self, dim: str, env: dict[str, str]) -> str:
        return env.get(dim, dim.lower())

    def access(self, decl: ast.TensorDecl, env) -> ast.Access:
        idx = tuple(self.var(d, env) for d in decl.dims)
        for v, d in zip(idx, decl.dims):
            self.var_dim[v] = d
        return ast.Access(decl.name, idx)

    def expr(self, readable: list[ast.TensorDecl], dims: list[str], env, depth: int) -> ast.Expr:
        draw = self.draw
        kind = draw(st.sampled_from(["access", "access", "const", "binary", "unary", "binfunc",
                                     "reduce"] if depth > 0 else ["access", "access", "const"]))
        if kind == "access":
            return self.access(draw(st.sampled_from(readable)), env)
        if kind == "const":
            return ast.Const(draw(NUMBERS))
        sub = lambda: self.expr(readable, dims, env, depth - 1)  # noqa: E731
        if kind == "binary":
            return ast.Binary(draw(st.sampled_from("+-*/")), sub(), sub())
        if kind == "unary":
            return ast.Call(draw(st.sampled_from(UNARY_FUNCS)), (sub(),))
        if kind == "binfunc":
            return ast.Call(draw(st.sampled_from(BINARY_FUNCS)), (sub(), sub()))
        reduced = draw(st.lists(st.sampled_from(dims), min_size=1, max_size=2, unique=True))
        inner = dict(env)
        for d in reduced:
            inner[d] = f"r{next(self.fresh)}"
        body = self.expr(readable, dims, inner, depth - 1)
        used = [inner[d] for d in reduced if inner[d] in ast.indices_of(body)]
        if not used:
            return body
        return ast.Reduce(draw(st.sampled_from(LANG_REDUCE)), tuple(used), body)


@st.composite
def programs(draw) -> ast.Program:
    """A random program that must pass the checker."""
    g = _Gen(draw)
    ndims = draw(st.integers(1, 4))
    dim_names = [f"D{k}" for k in range(ndims)]
    dims = [ast.DimDecl(n, draw(st.one_of(st.none(), st.sampled_from([2, 4, 8]))))
            for n in dim_names]
    tensors: list[ast.TensorDecl] = []
    for k in range(draw(st.integers(1, 3))):
        tdims = tuple(draw(st.lists(st.sampled_from(dim_names), min_size=1, max_size=3,
                                    unique=True)))
        tensors.append(ast.TensorDecl(f"In{k}", tdims, draw(formats(len(tdims)))))
    statements: list[ast.Assignment] = []
    for k in range(draw(st.integers(1, 3))):
        readable = tensors[:]  # inputs and every earlier statement's tensor
        rhs = g.expr(readable, dim_names, {}, draw(st.integers(0, 3)))
        free = ast.indices_of(rhs)
        if not free:
            rhs = ast.Binary("*", rhs, g.access(readable[0], {}))
            free = ast.indices_of(rhs)
        lhs_idx = draw(st.lists(st.sampled_from(free), min_size=1, unique=True))
        rest = [i for i in free if i not in lhs_idx]
        if rest and draw(st.booleans()):
            rhs = ast.Reduce("sum", tuple(rest), rhs)  # explicit; else implicit if allowed
        name = f"T{k}"
        decl = ast.TensorDecl(name, tuple(g.var_dim[i] for i in lhs_idx),
                              draw(formats(len(lhs_idx))))
        tensors.append(decl)
        s = ast.Assignment(ast.Access(name, tuple(lhs_idx)), rhs)
        blocks = [ast.Block(t.name, 1) for t in tensors if t.format.blocked]
        try:  # an implicit sum in a non-linear place is an error: make it explicit instead
            check(ast.Program(None, dims, tensors, statements + [s], blocks))
        except UserError as e:
            assert rest and "summed implicitly" in str(e), e.diagnostics
            s = ast.Assignment(s.lhs, ast.Reduce("sum", tuple(rest), rhs))
        statements.append(s)
    directives: list[ast.Directive] = []
    for s in statements:
        if draw(st.booleans()):
            directives.append(ast.Order(s.name, tuple(draw(st.permutations(ast.all_indices(s))))))
        if draw(st.booleans()):
            directives.append(ast.Parallelize(s.name, draw(st.sampled_from(ast.all_indices(s))),
                                              draw(st.integers(1, 16))))
    names = [s.name for s in statements]
    cut = draw(st.integers(0, len(names)))
    if cut:
        directives.append(ast.Fuse("first", tuple(names[:cut])))
        if cut < len(names) and draw(st.booleans()):
            directives.append(ast.Fuse("rest", tuple(names[cut:])))
    for t in tensors:
        if t.format.blocked:
            directives.append(ast.Block(t.name, draw(st.sampled_from([1, 2]))))
    if draw(st.booleans()):
        directives.append(ast.Output((draw(st.sampled_from(names)),)))
    draw(st.randoms()).shuffle(directives)  # directives may appear anywhere
    return ast.Program(None, dims, tensors, statements, directives)


@given(programs())
@SETTINGS
def test_random_programs_check_and_round_trip(p):
    p1 = check(p)
    text1 = program_str(p1)
    p2 = check(parse_program(Source("<printed>", text1)))
    assert program_str(p2) == text1
    assert [s.rhs for s in p2.statements] == [s.expr for s in p1.statements]
    assert [s.lhs for s in p2.statements] == [s.lhs for s in p1.statements]
    assert p2.tensors == p1.tensors and p2.dims == p1.dims
    assert p2.directives == p1.directives
    # The source text (implicit sums left implicit) also reparses to the same program.
    text0 = program_str(p1, explicit=False)
    p0 = check(parse_program(Source("<source>", text0)))
    assert program_str(p0) == text1
