"""The reference evaluator against an independent brute-force oracle, on random programs.

The oracle below implements the sparsity rules of docs/language.md literally: every
subexpression is a dense value array plus a boolean pattern array over the full index space
(I, J, K), constant along the axes of indices it does not use. It shares no code with
fuseflowc.reference; it reads inputs and results only through FiberTensor.to_dense/pattern.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuseflowc.data.gen import random_tensor, tensor_rng
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import Source
from fuseflowc.formats import Format
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.reference import evaluate

DIMS = ("I", "J", "K")
AXIS = {"i": 0, "j": 1, "k": 2}


# ---- the oracle ----------------------------------------------------------------------------------
class Dense:
    """A subexpression: values, pattern (both full 3-D arrays) and its free indices."""

    def __init__(self, v, p, free):
        self.p = np.asarray(p, bool)
        self.v = np.where(self.p, v, 0.0)
        self.free = frozenset(free)


def o_access(arr, pat, idx, shape3):
    """Tensor entries indexed by `idx` (e.g. ('k','i')) spread over the (I,J,K) space."""
    order = sorted(range(len(idx)), key=lambda n: AXIS[idx[n]])
    v, p = np.transpose(arr, order), np.transpose(pat, order)
    full = [shape3[a] if a in {AXIS[x] for x in idx} else 1 for a in range(3)]
    v = v.reshape(full)
    p = p.reshape(full)
    return Dense(np.broadcast_to(v, shape3), np.broadcast_to(p, shape3), idx)


def o_union(op, a, b):
    p = a.p | b.p
    if a.free - b.free:
        p = p & a.p  # a has indices b lacks: a must store the coordinate
    if b.free - a.free:
        p = p & b.p
    with np.errstate(all="ignore"):
        if op in ("+", "-"):
            v = a.v + b.v if op == "+" else a.v - b.v  # absent reads 0 (v is 0 there)
        else:
            f = np.maximum if op == "max" else np.minimum
            v = np.where(a.p & b.p, f(a.v, b.v), np.where(a.p, a.v, b.v))
    return Dense(v, p, a.free | b.free)


def o_intersect(op, a, b):
    p = a.p & b.p
    with np.errstate(all="ignore"):
        v = {"*": a.v * b.v, "/": a.v / np.where(b.p, b.v, 1.0), "mask": a.v}[op]
    return Dense(v, p, a.free | b.free)


def o_reduce(op, a, x):
    ax = AXIS[x]
    p = a.p.any(axis=ax, keepdims=True)
    if op == "sum":
        v = a.v.sum(axis=ax, keepdims=True)
    else:
        v = np.where(a.p, a.v, -np.inf).max(axis=ax, keepdims=True, initial=-np.inf)
    p = np.broadcast_to(p, a.p.shape)
    v = np.broadcast_to(np.where(p[(slice(None),) * 3], v, 0.0), a.p.shape)
    return Dense(v, p, a.free - {x})


O_UNARY = {
    "relu": lambda x: np.maximum(x, 0), "exp": np.exp, "neg": lambda x: -x, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))),
}


def o_unary(f, a):
    with np.errstate(all="ignore"):
        return Dense(np.where(a.p, O_UNARY[f](a.v), 0.0), a.p, a.free)


def o_stored(fmt: Format, pat: np.ndarray) -> np.ndarray:
    """Stored entries of a computed pattern materialized in `fmt` (logical axes of `pat`): the
    pattern widened to every coordinate under the dense levels after the last compressed one."""
    comp = [k for k, lv in enumerate(fmt.levels) if lv == "compressed"]
    if not comp:
        return np.ones_like(pat)
    under = [fmt.mode_order[k] for k in range(comp[-1] + 1, fmt.order)]
    if not under:
        return pat
    return np.broadcast_to(pat.any(axis=tuple(under), keepdims=True), pat.shape).copy()


# ---- random programs -----------------------------------------------------------------------------
LEVELS = st.sampled_from(["dense", "compressed"])


@st.composite
def formats(draw, order):
    levels = tuple(draw(LEVELS) for _ in range(order))
    return Format(levels, tuple(draw(st.permutations(range(order)))))


def fmt_text(f: Format) -> str:
    text = f"({', '.join(f.levels)}) order ({', '.join(map(str, f.mode_order))})"
    return text + (" blocked" if f.blocked else "")


def maybe_blocked(draw, fmt: Format, shape) -> tuple[Format, int | None]:
    """Sometimes make a matrix format blocked with 2 x 2 blocks (when its sizes allow)."""
    if len(shape) == 2 and all(s % 2 == 0 for s in shape) and draw(st.booleans()):
        return Format(fmt.levels, fmt.mode_order, True), 2
    return fmt, None


def o_stored_blocked(fmt: Format, pat: np.ndarray, b: int | None) -> np.ndarray:
    """Stored entries of a computed pattern materialized in a (possibly blocked) format: a block
    is stored iff it holds a computed entry, then widened like an element under dense levels."""
    if b is None:
        return o_stored(fmt, pat)
    m, n = pat.shape
    blocks = pat.reshape(m // b, b, n // b, b).any(axis=(1, 3))
    return np.kron(o_stored(fmt, blocks), np.ones((b, b), bool)).astype(bool)


class Gen:
    """Builds an expression's source text and its oracle value side by side."""

    def __init__(self, draw, tensors, dense_of, shape3):
        self.draw, self.tensors, self.dense_of, self.shape3 = draw, tensors, dense_of, shape3

    def access(self, avoid=frozenset()):
        names = [n for n, idx in self.tensors.items() if not set(idx) & avoid]
        assume(names)
        n = self.draw(st.sampled_from(sorted(names)))
        idx = self.tensors[n]
        v, p = self.dense_of[n]
        return f"{n}[{','.join(idx)}]", o_access(v, p, idx, self.shape3), frozenset()

    def expr(self, depth, avoid=frozenset()):
        """(text, oracle value, bound indices); `avoid`: indices reduced elsewhere."""
        draw = self.draw
        kind = draw(st.sampled_from(["access", "unary", "binary", "binary", "binary",
                                     "reduce", "reduce", "const", "mask"] if depth else ["access"]))
        if kind == "access":
            return self.access(avoid)
        if kind == "const":
            c = draw(st.sampled_from([0.5, 2.0, -1.0, 0.0]))
            t, a, bnd = self.expr(depth - 1, avoid)
            op = draw(st.sampled_from(["+", "*", "-"]))
            cd = Dense(np.full(self.shape3, c), np.ones(self.shape3, bool), ())
            val = o_union(op, a, cd) if op in "+-" else o_intersect(op, a, cd)
            return f"({t} {op} {c!r})", val, bnd
        if kind == "unary":
            f = draw(st.sampled_from(["relu", "exp", "neg", "tanh", "sigmoid", "gelu",
                                      "sqrt", "rsqrt"]))
            t, a, bnd = self.expr(depth - 1, avoid)
            if f == "sqrt":  # keep arguments in the domain: sqrt(relu(e))
                return f"sqrt(relu({t}))", Dense(np.sqrt(np.maximum(a.v, 0)), a.p, a.free), bnd
            if f == "rsqrt":  # rsqrt(relu(e) + 1)
                one = Dense(np.ones(self.shape3), np.ones(self.shape3, bool), ())
                s = o_union("+", o_unary("relu", a), one)
                r = 1 / np.sqrt(np.where(s.p, s.v, 1))
                return f"rsqrt(relu({t}) + 1)", Dense(r, s.p, s.free), bnd
            return f"{f}({t})", o_unary(f, a), bnd
        if kind == "reduce":
            t, a, bnd = self.expr(depth - 1, avoid)
            free = sorted(a.free)
            assume(free)
            x = draw(st.sampled_from(free))
            op = draw(st.sampled_from(["sum", "max"]))
            return f"{op}[{x}]({t})", o_reduce(op, a, x), bnd | {x}
        if kind == "mask":
            t, a, bnd = self.expr(depth - 1, avoid)
            mt, m, _ = self.access(avoid | bnd)
            assume(not (m.free & bnd))
            return f"mask({t}, {mt})", o_intersect("mask", a, m), bnd
        op = draw(st.sampled_from(["+", "-", "*", "/", "max", "min"]))
        lt, a, ba = self.expr(depth - 1, avoid)
        rt, b, bb = self.expr(depth - 1, avoid | ba)
        # A reduced index may not be used anywhere else in the statement.
        assume(not (ba & (b.free | bb)) and not (bb & a.free))
        if op == "/":  # a safe denominator with b's pattern: exp(b)
            return f"({lt} / exp({rt}))", o_intersect("/", a, o_unary("exp", b)), ba | bb
        if op in ("max", "min"):
            return f"{op}({lt}, {rt})", o_union(op, a, b), ba | bb
        val = o_intersect(op, a, b) if op == "*" else o_union(op, a, b)
        return f"({lt} {op} {rt})", val, ba | bb


def declare(decls: list[str], name: str, dims, fmt, blk) -> None:
    """Append the declaration of tensor `name` (and its `block` directive) to `decls`."""
    decls.append(f"tensor {name}[{', '.join(dims)}] : {fmt_text(fmt)}")
    if blk:
        decls.append(f"block {name}: {blk}")


def draw_input(draw, name: str, order: int, sizes: dict, seed: int, densities: list[float],
               decls: list[str]):
    """An input `name` of `order` modes: dims, format (maybe blocked) and density drawn, its
    declaration appended to `decls`; returns (dims, random tensor)."""
    dims = draw(st.permutations(DIMS))[:order]
    fmt = draw(formats(order))
    fmt, blk = maybe_blocked(draw, fmt, [sizes[d] for d in dims])
    declare(decls, name, dims, fmt, blk)
    dens = draw(st.sampled_from(densities))
    t = random_tensor(TensorSpec(name, tuple(dims), fmt, blk), tuple(sizes[d] for d in dims),
                      dens, tensor_rng(seed, name))
    return dims, t


@st.composite
def programs(draw):
    sizes = {d: draw(st.sampled_from([1, 2, 3, 3, 4])) for d in DIMS}
    shape3 = tuple(sizes[d] for d in DIMS)
    seed = draw(st.integers(0, 10**6))
    decls, tensors, dense_of = [], {}, {}
    inputs = {}
    for n in range(draw(st.integers(1, 3))):
        name = f"T{n}"
        dims, t = draw_input(draw, name, draw(st.integers(1, 3)), sizes, seed,
                             [0.0, 0.2, 0.5, 1.0], decls)
        inputs[name] = t
        tensors[name] = tuple(d.lower() for d in dims)
        dense_of[name] = (t.to_dense(), t.pattern())
    stmts, expected = [], {}
    gen = Gen(draw, tensors, dense_of, shape3)
    for s in range(draw(st.integers(1, 3))):
        text, val, _ = gen.expr(draw(st.integers(0, 3)))
        free = sorted(val.free)
        assume(free)
        lhs = draw(st.permutations(free))
        fmt = draw(formats(len(lhs)))
        name = f"S{s}"
        fmt, blk = maybe_blocked(draw, fmt, [sizes[x.upper()] for x in lhs])
        declare(decls, name, [x.upper() for x in lhs], fmt, blk)
        stmts.append(f"{name}[{','.join(lhs)}] = {text}")
        # Extract the result over lhs axes (constant along the others), then materialize.
        sel = tuple(slice(None) if d.lower() in lhs else 0 for d in DIMS)
        axes_left = [d.lower() for d in DIMS if d.lower() in lhs]
        perm = [axes_left.index(x) for x in lhs]
        v = np.transpose(val.v[sel], perm)
        p = np.transpose(val.p[sel], perm)
        stored = o_stored_blocked(fmt, p, blk)
        v = np.where(p, v, 0.0)
        expected[name] = (v, stored)
        # Later statements read the materialized tensor.
        tensors[name] = tuple(lhs)
        dense_of[name] = (v, stored)
    src = ("dim " + ", ".join(f"{d} = {sizes[d]}" for d in DIMS) + "\n"
           + "\n".join(decls) + "\n" + "\n".join(stmts) + "\n")
    return src, inputs, expected


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs())
def test_evaluate_matches_dense_oracle(case):
    src, inputs, expected = case
    program = check(parse_program(Source("<random>", src)))
    out = evaluate(program, inputs)
    for name, (v, p) in expected.items():
        got = out[name]
        np.testing.assert_array_equal(got.pattern(), p, err_msg=f"pattern of {name}\n{src}")
        np.testing.assert_allclose(got.to_dense(), v, rtol=1e-9, atol=1e-12, equal_nan=True,
                                   err_msg=f"values of {name}\n{src}")


@st.composite
def contractions(draw):
    """`S[...] = sum[...](T0 * T1 * ...)`, optionally masked: the pairwise-contraction paths
    (scipy matrix products, dense products, the sorted-COO join) on denser, larger operands."""
    sizes = {d: draw(st.integers(1, 6)) for d in DIMS}
    shape3 = tuple(sizes[d] for d in DIMS)
    seed = draw(st.integers(0, 10**6))
    decls, factors, texts = [], [], []
    inputs = {}
    for n in range(draw(st.integers(2, 3))):
        name = f"T{n}"
        dims, t = draw_input(draw, name, draw(st.integers(1, 2 if n < 2 else 3)), sizes, seed,
                             [0.0, 0.3, 0.7, 1.0, 1.0], decls)
        inputs[name] = t
        idx = tuple(d.lower() for d in dims)
        texts.append(f"{name}[{','.join(idx)}]")
        factors.append(o_access(t.to_dense(), t.pattern(), idx, shape3))
    val = factors[0]
    for f in factors[1:]:
        val = o_intersect("*", val, f)
    text = " * ".join(texts)
    free = sorted(val.free)
    summed = [x for x in free if draw(st.booleans())]
    keep = [x for x in free if x not in summed]
    assume(keep)
    for x in summed:
        val = o_reduce("sum", val, x)
    if summed:
        text = f"sum[{','.join(summed)}]({text})"
    if draw(st.booleans()):
        mdims = [d for d in DIMS if d.lower() in keep]
        mfmt = draw(formats(len(mdims)))
        decls.append(f"tensor M[{', '.join(mdims)}] : {fmt_text(mfmt)}")
        m = random_tensor(TensorSpec("M", tuple(mdims), mfmt), tuple(sizes[d] for d in mdims),
                          draw(st.sampled_from([0.0, 0.5, 1.0])), tensor_rng(seed, "M"))
        inputs["M"] = m
        midx = tuple(d.lower() for d in mdims)
        val = o_intersect("mask", val, o_access(m.to_dense(), m.pattern(), midx, shape3))
        text = f"mask({text}, M[{','.join(midx)}])"
    lhs = draw(st.permutations(keep))
    fmt = draw(formats(len(lhs)))
    fmt, blk = maybe_blocked(draw, fmt, [sizes[x.upper()] for x in lhs])
    decls.append(f"tensor S[{', '.join(x.upper() for x in lhs)}] : {fmt_text(fmt)}")
    if blk:
        decls.append("block S: 2")
    sel = tuple(slice(None) if d.lower() in lhs else 0 for d in DIMS)
    axes_left = [d.lower() for d in DIMS if d.lower() in lhs]
    perm = [axes_left.index(x) for x in lhs]
    v = np.transpose(val.v[sel], perm)
    p = np.transpose(val.p[sel], perm)
    src = ("dim " + ", ".join(f"{d} = {sizes[d]}" for d in DIMS) + "\n" + "\n".join(decls)
           + f"\nS[{','.join(lhs)}] = {text}\n")
    return src, inputs, {"S": (np.where(p, v, 0.0), o_stored_blocked(fmt, p, blk))}


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=contractions())
def test_contractions_match_dense_oracle(case):
    test_evaluate_matches_dense_oracle.hypothesis.inner_test(case)


# ---- unique_keys: the evaluator's ranking of coordinate keys ------------------------------------
@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.integers(0, 2**40), max_size=60), small=st.booleans(),
       ordered=st.booleans())
def test_unique_keys_is_np_unique(keys, small, ordered):
    """Sorted keys, keys in a small range (ranked by counting) and keys spread over a large
    range (ranked by sorting) all give np.unique's distinct keys, first occurrences and ranks."""
    from fuseflowc.reference.values import unique_keys
    k = np.array([x % 50 for x in keys] if small else keys, np.int64)
    if ordered:
        k = np.sort(k)
    got = unique_keys(k)
    want = np.unique(k, return_index=True, return_inverse=True)
    for g, w in zip(got, want):
        assert np.array_equal(g, w.reshape(-1))
