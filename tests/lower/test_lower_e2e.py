"""Lowering end to end: lower -> (print, parse, verify) -> simulate vs the reference evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.lang.load import load_program
from tests.support.lower_harness import assert_matches, load_text

ROOT = Path(__file__).resolve().parents[2]
SIZES = dict(I=5, J=6, K=4, L=3, N=5)

KERNELS = [
    ("spmv.ff", ()),
    ("spmm.ff", ()),
    ("add.ff", ()),
    ("mul.ff", ()),
    ("residual.ff", ()),
    ("sddmm.ff", ()),
    ("spmv_t_scaled.ff", ()),
    ("nested_matmul.ff", ()),
    ("nested_matmul_fused.ff", ()),
    ("nested_matmul_one.ff", ()),
    ("multi_consumer.ff", ()),
    ("multi_output.ff", ()),
    ("multi_consumer.ff", ("--unfused",)),
    ("multi_output.ff", ("--unfused",)),
    ("nested_matmul_fused.ff", ("order E: i -> k -> j", "order D: i -> j -> l")),
]


@pytest.mark.parametrize("name,sched", KERNELS, ids=lambda x: str(x))
def test_kernel_examples(name, sched):
    unfused = "--unfused" in sched
    sched = tuple(s for s in sched if s != "--unfused")
    p = load_program(str(ROOT / "ir_examples" / "kernels" / name), sched, unfused)
    for seed in range(3):
        assert_matches(p, SIZES, seed, patterns=True)


# Programs whose formats make other dataflow orders concordant.
SPMV_COL = """
dim I, J
tensor A[I, J] : csc
tensor x[J] : dense
tensor y[I] : dense
y[i] = A[i,j] * x[j]
order y: j -> i
"""

SPMM_ORDERS = """
dim I, K, J
tensor A[I, K] : csr
tensor B[K, J] : %s
tensor C[I, J] : %s
C[i,j] = A[i,k] * B[k,j]
order C: %s
"""


def test_spmv_column_order():
    p = load_text(SPMV_COL)
    for seed in range(3):
        assert_matches(p, SIZES, seed)


@pytest.mark.parametrize("bfmt,cfmt,order", [
    ("dense", "dense", "i -> k -> j"),
    ("csr", "csr", "i -> k -> j"),
    ("csc", "dense", "i -> j -> k"),
    ("(dense, dense) order (1, 0)", "dcsr", "i -> j -> k"),
    # inner products into a sparse result: an empty k fiber closing a non-empty j fiber
    # would read as "no fiber" to an order-0 reducer; the held accumulator has no ambiguity
    ("dcsc", "sparse", "i -> j -> k"),
    ("dcsc", "dense", "i -> j -> k"),
])
def test_spmm_orders(bfmt, cfmt, order):
    p = load_text(SPMM_ORDERS % (bfmt, cfmt, order))
    for seed in range(3):
        assert_matches(p, SIZES, seed, density={"A": 0.4, "B": 0.3}, patterns=True)


def test_spmm_kij_with_column_major_a():
    p = load_text(SPMM_ORDERS.replace("A[I, K] : csr", "A[I, K] : dcsc")
                  % ("dcsr", "dense", "k -> i -> j"))
    for seed in range(3):
        assert_matches(p, SIZES, seed)


def test_empty_rows_and_empty_tensors():
    p = load_program(str(ROOT / "ir_examples" / "kernels" / "nested_matmul_fused.ff"))
    for d in (0.0, 0.1, 0.3):
        for seed in range(3):
            assert_matches(p, SIZES, seed, density={"A": d, "B": d})
    q = load_program(str(ROOT / "ir_examples" / "kernels" / "multi_output.ff"))
    for d in (0.0, 0.15):
        assert_matches(q, SIZES, 0, density={"A": d, "B": 0.5})


FUSED_MISC = {
    "bias_relu": """
dim I, J
tensor A[I, J] : csr
tensor x[J] : dense
tensor b[I] : dense
tensor t[I] : dense
tensor y[I] : dense
t[i] = A[i,j] * x[j]
y[i] = relu(t[i] + b[i])
fuse layer: t, y
""",
    "row_bias_sparse": """
dim I, J
tensor A[I, J] : csr
tensor b[J] : dense
tensor y[I, J] : csr
y[i,j] = A[i,j] + b[j]
""",
    "sub_sparse": """
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : dcsr
tensor y[I, J] : dense
y[i,j] = A[i,j] - 2 * B[i,j]
""",
    "mask_scale": """
dim I, J
tensor A[I, J] : dense
tensor M[I, J] : csr
tensor y[I, J] : csr
y[i,j] = mask(3 - A[i,j], M[i,j]) / 2
""",
    "row_max": """
dim I, J
tensor A[I, J] : csr
tensor m[I] : dense
m[i] = max[j](A[i,j])
""",
    "gcn_layer": """
dim N, F, H
tensor A[N, N] : csr
tensor X[N, F] : csr
tensor W[F, H] : dense
tensor b[H] : dense
tensor T[N, F] : csr
tensor Z[N, H] : dense
tensor Y[N, H] : dense
T[i,f] = A[i,k] * X[k,f]
Z[i,h] = T[i,f] * W[f,h]
Y[i,h] = relu(Z[i,h] + b[h])
fuse layer: T, Z, Y
""",
}


@pytest.mark.parametrize("name", sorted(FUSED_MISC))
def test_misc_programs(name):
    p = load_text(FUSED_MISC[name])
    sizes = dict(SIZES, F=4, H=3)
    for seed in range(3):
        assert_matches(p, sizes, seed)


@pytest.mark.parametrize("inline_widened", [False, True])
def test_mttkrp_distributes_the_product_into_the_sum(inline_widened):
    """(sum_k B C) * D with the order-2 accumulator's outer level l meeting D: the product is
    distributed into the sum (same values and pattern) and accumulated again over l."""
    p = load_program(str(ROOT / "ir_examples" / "kernels" / "mttkrp.ff"))
    for d in (None, 0.0, 0.2):
        for seed in range(2):
            assert_matches(p, dict(I=4, J=3, K=5, L=4), seed, inline_widened=inline_widened,
                           patterns=True,
                           density={"B": d} if d is not None else None)


@pytest.mark.parametrize("d", [0.0, 0.3, 1.0])
def test_outer_level_union_where_the_accumulator_is_required(d):
    # The same outer-level join, but in a union: a sum does not distribute over it. E lacks i,
    # so the accumulator's side is required: the join's coordinates at l are its own, and it
    # stays in the joiner (empty slices of B included: density 0).
    p = load_text("""
dim I, J, K, L
tensor B[I, K, L] : sparse
tensor C[K, J] : dense
tensor E[L, J] : dense
tensor A[I, L, J] : dense
A[i,l,j] = B[i,k,l] * C[k,j] + E[l,j]
order A: i -> k -> l -> j
""")
    assert_matches(p, dict(I=3, J=3, K=3, L=3), density={"B": d})


def test_unsupported_is_a_user_error():
    # A plain union (E has every index of the sum): E may hold an l the accumulator lacks,
    # whose fiber of j the accumulator cannot give.
    p = load_text("""
dim I, J, K, L
tensor B[I, K, L] : sparse
tensor C[K, J] : dense
tensor E[I, L, J] : sparse
tensor A[I, L, J] : dense
A[i,l,j] = B[i,k,l] * C[k,j] + E[i,l,j]
order A: i -> k -> l -> j
""")
    with pytest.raises(UserError, match="order-2"):
        assert_matches(p, dict(I=3, J=3, K=3, L=3))


ML_PROGRAMS = {
    # A row softmax over a sparse score matrix: max reduction, its value broadcast back (val
    # repeat) into a union under the broadcast rule, exp, sum, division by the broadcast sum.
    "softmax": """
dim I, J
tensor S[I, J] : csr
tensor m[I] : sparse
tensor e[I, J] : csr
tensor s[I] : sparse
tensor y[I, J] : csr
m[i] = max[j](S[i,j])
e[i,j] = exp(S[i,j] - m[i])
s[i] = sum[j](e[i,j])
y[i,j] = e[i,j] / s[i]
fuse sm: m, e, s, y
""",
    # max/min of operands with different patterns: an absent side is not 0 (value unions).
    "maxmin": """
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : dcsr
tensor y[I, J] : dense
tensor z[I, J] : csr
y[i,j] = max(A[i,j], B[i,j])
z[i,j] = min(A[i,j], 0.5 * B[i,j]) + exp(A[i,j])
""",
    # Reductions of empty rows have no entry: exp of one must stay absent (coordinate drop).
    "exp_of_sum": """
dim I, J
tensor A[I, J] : csr
tensor y[I] : dense
y[i] = exp(sum[j](A[i,j]))
""",
    # A row max broadcast over j: with k before j it is computed once per row (val repeat);
    # + 1 is pattern-sensitive (an empty row's max has no entry), so empty rows are dropped.
    "row_max_bias": """
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : csr
tensor y[I, J] : dense
y[i,j] = max[k](A[i,k]) * 2 + 1 + B[i,j]
order y: i -> k -> j
""",
    # Non-zero-preserving functions on both sides of unions, a sparse broadcast vector.
    "exp_union": """
dim I, J
tensor A[I, J] : csr
tensor B[I, J] : csr
tensor b[I] : sparse
tensor y[I, J] : dense
y[i,j] = exp(A[i,j]) + B[i,j] - sigmoid(b[i])
""",
}


@pytest.mark.parametrize("name", sorted(ML_PROGRAMS))
@pytest.mark.parametrize("inline_widened", [False, True])
def test_ml_operations(name, inline_widened):
    p = load_text(ML_PROGRAMS[name])
    for d in (None, 0.0, 0.3):
        for seed in range(2):
            dens = {t: d for t in ("S", "A", "B", "b") if t in p.inputs} if d is not None \
                else None
            assert_matches(p, dict(I=4, J=5, K=5), seed, density=dens,
                           inline_widened=inline_widened, patterns=True)


# (the stacked RNN's 256 steps take ~30 s per case here: `make examples` and test_lists run it)
MODELS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ir_examples" / "models").glob("*/*_*.ff")
                if "gpt3" not in p.name and "rnn_stacked" not in p.name)
MODEL_SIZES = dict(N=5, F=4, C=4, Bt=3, P=5, D1=4, D2=3, K=3)


@pytest.mark.parametrize("path", MODELS)
@pytest.mark.parametrize("how", ["fuse", "fuse-inline-widened"])
def test_models(path, how):
    """Every model variant, lowered from fuse's IR, and from fuse's IR with widened
    intermediates inlined (lowering widens them in the stream); empty graphs too."""
    p = load_program(str(ROOT / path))
    for seed, d in ((0, None), (1, 0.0)):
        dens = {"A": d, "X": d} if d is not None else None
        assert_matches(p, MODEL_SIZES, seed, density=dens,
                       inline_widened=how == "fuse-inline-widened")


GPT3 = sorted(str(p.relative_to(ROOT)) for p in
              (ROOT / "ir_examples" / "models" / "gpt3_bigbird").glob("*_*.ff"))


@pytest.mark.parametrize("path", GPT3)
@pytest.mark.parametrize("inline_widened", [False, True])
def test_gpt3_bigbird_through_fuse(path, inline_widened):
    """One GPT-3 layer with BigBird attention: layer norms, per-head projections (read through
    fuse's permuted copies of the dense weights, declared so for the loader), masked softmax,
    feed-forward network; with `--inline-widened` too (fuse materializes the intermediates
    whose recomputed copies no order can lower)."""
    p = load_program(str(ROOT / path))
    assert_matches(p, dict(S=6, E=4, NH=2, DH=2, FF=4), 0, inline_widened=inline_widened,
                   density={"M": 0.4}, patterns=True)


def test_inline_widened_models_are_one_graph():
    from tests.support.lower_harness import fused_module
    for path in MODELS:
        if path.endswith("_full.ff"):
            m = fused_module(load_program(str(ROOT / path)), inline_widened=True)
            assert len(m.graphs) == 1, path
            assert not [t for t in m.tensors if t.role == "temp"], path
