"""Program's lookups (tensor, statement, positions, readers, regions, ...) are indexes kept until
the statements, tensors or directives change: after any sequence of in-place changes to those
lists (every list method, item and slice assignment, deletion, `+=`, `*=`) or replacements of
them, every lookup equals the same lookup computed from scratch on a fresh program."""

from __future__ import annotations

import copy
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import Source
from fuseflowc.lang import ast
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program

_TEXT = """\
dim N = 4
tensor A[N,N]: csr
tensor B[N,N]: bdense
tensor C[N,N]: dense
tensor D[N,N]: dense
tensor E[N,N]: dense
C[i,j] = A[i,k] * B[k,j]
D[i,j] = C[i,j] + A[i,j]
E[i,j] = D[i,k] * C[k,j]
fuse r1: C, D
order D: j -> i
parallelize E: i by 2
block B: 2
"""


def _program() -> ast.Program:
    return check(parse_program(Source("<lookups>", _TEXT)))


_P = _program()
_STATEMENTS, _TENSORS, _DIRECTIVES = list(_P.statements), list(_P.tensors), list(_P.directives)
_POOLS = {"statements": _STATEMENTS, "tensors": _TENSORS, "directives": _DIRECTIVES}


def _lookups(p: ast.Program) -> tuple:
    """Every lookup, as plain values (a missing name as None)."""
    def get(f, name):
        try:
            return f(name)
        except StopIteration:
            return None
    names = ["A", "B", "C", "D", "E", "Z"]
    return (
        [get(p.tensor, n) for n in names], [get(p.statement, n) for n in names],
        dict(p.positions()), dict(p.readers()), p.assigned, p.inputs, p.outputs, p.regions(),
        [p.region_of(n) for n in names], [p.order_of(n) for n in names],
        [p.block_size(n) for n in names], [p.parallelizations(n) for n in names],
        p.decompositions())


def _fresh(p: ast.Program) -> ast.Program:
    return ast.Program(p.source, list(p.dims), list(p.tensors), list(p.statements),
                       list(p.directives))


_FIELD = st.sampled_from(sorted(_POOLS))


@st.composite
def _change(draw):
    """(field, method name, argument maker): one in-place change or replacement of a list."""
    field = draw(_FIELD)
    pool = _POOLS[field]
    item = draw(st.sampled_from(pool))
    k = draw(st.integers(-4, 4))
    op = draw(st.sampled_from(["append", "extend", "insert", "pop", "remove", "clear",
                               "reverse", "sort", "setitem", "setslice", "delitem", "delslice",
                               "iadd", "imul", "assign"]))
    return field, op, item, k


def _apply(p: ast.Program, change) -> None:
    field, op, item, k = change
    xs = getattr(p, field)
    n = len(xs)
    if op == "append":
        xs.append(item)
    elif op == "extend":
        xs.extend([item])
    elif op == "insert":
        xs.insert(k, item)
    elif op == "pop" and n:
        xs.pop(k % n)
    elif op == "remove" and item in xs:
        xs.remove(item)
    elif op == "clear":
        xs.clear()
    elif op == "reverse":
        xs.reverse()
    elif op == "sort":
        xs.sort(key=lambda x: repr(x)[k % 7:])
    elif op == "setitem" and n:
        xs[k % n] = item
    elif op == "setslice":
        xs[k % (n + 1):] = [item]
    elif op == "delitem" and n:
        del xs[k % n]
    elif op == "delslice":
        del xs[: k % (n + 1)]
    elif op == "iadd":
        xs += [item]
        setattr(p, field, xs)   # what `p.field += [...]` does
    elif op == "imul":
        xs *= 1 + k % 2
    elif op == "assign":
        setattr(p, field, [item, *xs[:k % (n + 1)]])


@settings(max_examples=60, deadline=None)
@given(st.lists(_change(), max_size=6))
def test_lookups_follow_every_change_of_the_lists(changes):
    p = copy.copy(_P)
    for f in _POOLS:
        setattr(p, f, list(getattr(_P, f)))
    _lookups(p)   # the indexes exist before the changes
    for change in changes:
        _apply(p, change)
        assert _lookups(p) == _lookups(_fresh(p)), change


def test_copies_and_pickles_keep_lookups_and_count_changes_anew():
    p = _program()
    before = _lookups(p)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert _lookups(q) == before
        q.statements.pop()
        assert _lookups(q) == _lookups(_fresh(q)) != before
    assert _lookups(p) == before


def test_a_list_shared_by_two_programs_is_followed_by_both():
    p = _program()
    q = ast.Program(p.source, p.dims, p.tensors, p.statements, p.directives)
    _lookups(p), _lookups(q)
    q.statements.pop()
    assert _lookups(p) == _lookups(q) == _lookups(_fresh(q))
