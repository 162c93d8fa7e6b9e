"""Format decomposition (`decompose A: bcsr(b) >= t, ..., csr`; docs/language.md, "Format
decomposition"): random matrices and thresholds through fuse | lower | simulate, against the
reference evaluator on the *undecomposed* program (values and stored pattern); the two splits
(simulator's and reference's) agree; empty parts; the checker's reasons; the costed split step
and --hoist."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.decompose import split
from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import shorthand
from fuseflowc.fuse.algorithm import fuse_program
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lower.driver import lower_fused
from fuseflowc.reference.decompose import split_parts
from fuseflowc.reference.evaluate import evaluate
from fuseflowc.sim.build import Simulator
from tests.support.golden import run_cli

SPMM = """
dim I, J, K
tensor A[I, J] : csr
tensor B[J, K] : dense
tensor C[I, K] : dense
C[i,k] = A[i,j] * B[j,k]
"""

CSR, BCSR, DCSR, BDCSR = (shorthand(n, 2) for n in ("csr", "bcsr", "dcsr", "bdcsr"))


def _program(text: str):
    return check(parse_program(Source("<test>", text)))


def _matrix(rng, m, n, density, fmt=CSR) -> FiberTensor:
    dense = np.where(rng.random((m, n)) < density, rng.uniform(-1, 1, (m, n)), 0.0)
    return FiberTensor.from_dense(dense, fmt)


def _simulate(program, inputs) -> dict:
    fp = fuse_program(program)
    module, _ = lower_fused(fp)
    sizes = {d: n for t in program.tensors if t.name in inputs
             for d, n in zip(t.dims, inputs[t.name].shape)}
    return Simulator(module, inputs, sizes).run().tensors


def _same(a: FiberTensor, b: FiberTensor) -> None:
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.pattern(), b.pattern())
    np.testing.assert_allclose(a.to_dense(), b.to_dense(), rtol=1e-9, atol=1e-12)


parts_strategy = st.lists(st.tuples(st.sampled_from([1, 2, 4]),
                                    st.floats(0.01, 1.0), st.booleans()),
                          min_size=1, max_size=2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), density=st.sampled_from([0.0, 0.1, 0.4, 0.9, 1.0]),
       parts=parts_strategy, residual_dcsr=st.booleans())
def test_every_decomposition_equals_the_undecomposed_spmm(seed, density, parts, residual_dcsr):
    rng = np.random.default_rng(seed)
    m, n, k = 8, 8, 4
    a = _matrix(rng, m, n, density)
    b = FiberTensor.from_dense(rng.uniform(-1, 1, (n, k)), shorthand("dense", 2))
    text = ", ".join(f"{'bdcsr' if dc else 'bcsr'}({bs}) >= {t!r}" for bs, t, dc in parts)
    directive = f"decompose A: {text}, {'dcsr' if residual_dcsr else 'csr'}"
    plain = _program(SPMM)
    decomposed = _program(SPMM + directive)
    expect = evaluate(plain, {"A": a, "B": b})["C"]
    _same(evaluate(decomposed, {"A": a, "B": b})["C"], expect)   # `run`
    _same(_simulate(decomposed, {"A": a, "B": b})["C"], expect)   # simulate --check


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), density=st.sampled_from([0.0, 0.05, 0.3, 0.7, 1.0]),
       parts=parts_strategy)
def test_the_two_splits_agree_and_partition_the_matrix(seed, density, parts):
    rng = np.random.default_rng(seed)
    a = _matrix(rng, 16, 8, density)
    formats = [(BDCSR if dc else BCSR, b, t) for b, t, dc in parts] + [(CSR, None, None)]
    ours = split(a, formats)
    directive = _program(SPMM + "decompose A: " + ", ".join(
        f"{'bdcsr' if f is BDCSR else 'bcsr'}({b}) >= {t!r}" for f, b, t in formats[:-1])
        + ", csr").decompositions()[0]
    theirs = split_parts(a, directive)
    assert len(ours) == len(theirs) == len(formats)
    for x, y in zip(ours, theirs):
        _same(x, y)
    np.testing.assert_allclose(sum(p.to_dense() for p in ours), a.to_dense())
    # every entry of A lies in exactly one part; elsewhere parts store zeros (a later blocked
    # part's block may cover an entry an earlier part took: it stores 0 there)
    covered = np.zeros(a.shape, dtype=int)
    for p in ours:
        covered += p.pattern() & (p.to_dense() != 0)
    assert (covered[a.to_dense() != 0] == 1).all() and covered.max(initial=0) <= 1
    for p, (_, b, _t) in zip(ours[:-1], formats[:-1]):
        for (bi, bj), blk in zip(*p.to_coo()):
            fill = a.pattern()[bi * b:(bi + 1) * b, bj * b:(bj + 1) * b].sum()
            assert fill >= 1 and blk.shape == (b, b)


@pytest.mark.parametrize("threshold, empty", [("1", "blocked"), ("0.01", "residual")])
def test_empty_parts(threshold, empty):
    """No block reaches the threshold (the blocked part is empty), or every block does (the
    residual is)."""
    rng = np.random.default_rng(3)
    a = _matrix(rng, 8, 8, 0.3)
    b = FiberTensor.from_dense(rng.uniform(-1, 1, (8, 4)), shorthand("dense", 2))
    decomposed = _program(SPMM + f"decompose A: bcsr(4) >= {threshold}, csr")
    parts = split(a, [(BCSR, 4, float(threshold)), (CSR, None, None)])
    assert parts[0 if empty == "blocked" else 1].nnz == 0
    assert parts[1 if empty == "blocked" else 0].nnz > 0
    expect = evaluate(_program(SPMM), {"A": a, "B": b})["C"]
    _same(_simulate(decomposed, {"A": a, "B": b})["C"], expect)


GCN_AGG = """
dim N, F
tensor A[N, N] : csr
tensor X[N, F] : dense
tensor W[F, F] : dense
tensor T[N, F] : dense
tensor H[N, F] : dense
T[i,f] = A[i,j] * X[j,f]
H[i,g] = relu(sum[f](T[i,f] * W[f,g]))
fuse layer: T, H
"""


def test_gcn_aggregation_stays_fused_with_its_consumer():
    rng = np.random.default_rng(7)
    a = _matrix(rng, 8, 8, 0.4)
    x = FiberTensor.from_dense(rng.uniform(-1, 1, (8, 4)), shorthand("dense", 2))
    w = FiberTensor.from_dense(rng.uniform(-1, 1, (4, 4)), shorthand("dense", 2))
    inputs = {"A": a, "X": x, "W": w}
    decomposed = _program(GCN_AGG + "decompose A: bcsr(2) >= 0.5, csr")
    fp = fuse_program(decomposed)
    layer = next(r for r in fp.regions if r.group == "layer")
    assert set(layer.statements) == {"T", "H"}
    expect = evaluate(_program(GCN_AGG), inputs)["H"]
    _same(_simulate(decomposed, inputs)["H"], expect)


@pytest.mark.parametrize("body, decl, why", [
    ("C[i,k] = relu(sum[j](A[i,j] * B[j,k]))", "dense", "under the non-linear function relu"),
    ("C[i,k] = max[j](A[i,j] * B[j,k])", "dense", "in a max[j] reduction"),
    ("C[i,k] = sum[j](A[i,j] * B[j,k]) + 1", "dense", "a term of + does not read A"),
    ("C[i,k] = sum[j](A[i,j] * A[i,j] * B[j,k])", "dense", "both factors of a product"),
    ("C[i,k] = sum[j](B[j,k] / A[i,j])", "dense", "in a denominator"),
    ("C[i,k] = sum[j](mask(B[j,k], A[i,j]))", "dense", "the mask of mask"),
    ("C[i,k] = sum[j](A[i,j] * B[j,k])", "csr", "declare C dense"),
])
def test_non_linear_statements_are_errors_at_the_directive(tmp_path, body, decl, why):
    text = (f"dim I = 8, J = 8, K = 4\ntensor A[I, J] : csr\ntensor B[J, K] : dense\n"
            f"tensor C[I, K] : {decl}\n{body}\ndecompose A: bcsr(4) >= 0.5, csr\n")
    path = tmp_path / "p.ff"
    path.write_text(text)
    r = run_cli(["check", str(path)])
    assert r.exit_code == 1
    assert f"{path}:6:11: error: decompose A: statement C" in r.stderr
    assert why in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("directive, why", [
    ("decompose A: bcsr(4) >= 1.5, csr", "is not a fill in (0, 1]"),
    ("decompose A: bcsr(4), csr", "needs a fill threshold"),
    ("decompose A: bcsr >= 0.5, csr", "needs a block size"),
    ("decompose A: csr", "at least one blocked part"),
    ("decompose A: bcsr(4) >= 0.5, bcsr(2) >= 0.5", "the last part is the residual"),
    ("decompose A: csr >= 0.5, csr", "must be blocked"),
    ("decompose A: bcsr(3) >= 0.5, csr", "block size 3 does not divide"),
    ("decompose B: bcsr(4) >= 0.5, csr", "only an unblocked matrix"),
    ("decompose Z: bcsr(4) >= 0.5, csr", "undefined tensor Z"),
    ("decompose A: foo(4) >= 0.5, csr", "unknown matrix format 'foo'"),
    ("decompose A: coo(4) >= 0.5, csr", "part 0 (coo(4) >= 0.5) must be blocked"),
    ("decompose A: bcsr(4) >= 0.5, ell(4)", "ell(c) cannot be a part of a decomposition"),
    ("decompose C: bcsr(4) >= 0.5, csr", "only an input"),
])
def test_bad_directives(tmp_path, directive, why):
    text = ("dim I = 8, J = 8, K = 4\ntensor A[I, J] : csr\ntensor B[J] : dense\n"
            "tensor C[I, K] : dense\ntensor D[J, K] : dense\n"
            f"C[i,k] = A[i,j] * D[j,k]\n{directive}\n")
    path = tmp_path / "p.ff"
    path.write_text(text)
    r = run_cli(["check", str(path)])
    assert r.exit_code == 1, r.stdout
    assert why in r.stderr, r.stderr
    assert f"{path}:7:" in r.stderr


def test_vector_operand_over_a_blocked_index_is_an_error(tmp_path):
    path = tmp_path / "spmv.ff"
    path.write_text("dim I, J\ntensor A[I, J] : csr\ntensor x[J] : dense\n"
                    "tensor y[I] : dense\ny[i] = A[i,j] * x[j]\n"
                    "decompose A: bcsr(4) >= 0.5, csr\n")
    r = run_cli(["check", str(path)])
    assert r.exit_code == 1
    assert "x has 1 dim(s) over a blocked index" in r.stderr


def _pipeline(tmp_path, text: str, extra: list[str]):
    path = tmp_path / "p.ff"
    path.write_text(text)
    data = tmp_path / "d"
    r = run_cli(["gen-data", str(path), "-o", str(data), "--seed", "2", "--size", "I=16",
                 "--size", "J=16", "--size", "K=4", "--density", "A=0.3"])
    assert r.exit_code == 0, r.stderr
    fused = run_cli(["fuse", str(path)])
    assert fused.exit_code == 0, fused.stderr
    low = run_cli(["lower", "-"], input=fused.stdout)
    assert low.exit_code == 0, low.stderr
    sim = run_cli(["simulate", "-", "--data", str(data), "--check", "--json"] + extra,
                  input=low.stdout)
    assert sim.exit_code == 0, sim.stderr
    assert "check: C match" in sim.stderr
    return low.stdout, json.loads(sim.stdout), sim.stderr


def test_split_is_a_costed_step_and_hoist_leaves_it_out(tmp_path):
    text = SPMM + "decompose A: bcsr(4) >= 0.25, csr\n"
    samml, stats, _ = _pipeline(tmp_path, text, [])
    assert "decompose A -> A__d0 >= 0.25, A__d1" in samml
    kernels = {k["graph"]: k for k in stats["kernels"]}
    step = kernels["decompose A -> A__d0, A__d1"]
    assert step["cycles"] > 0 and step["flops"] == 0
    assert step["bytes_read"]["crd"] > 0 and step["bytes_written"]["vals"] > 0
    assert stats["total"]["cycles"] == sum(k["cycles"] for k in stats["kernels"])
    # re-blocking the dense B is a relayout: the graph reading B__b4 pays for its bytes
    relayout = kernels["permute B -> B__b4"]
    assert relayout["cycles"] == 0 and relayout["bytes_read"]["total"] == 0
    assert kernels["C__d0"]["bytes_read"]["vals"] > 0
    (tmp_path / "h").mkdir()
    _, hoisted, _ = _pipeline(tmp_path / "h", text, ["--hoist"])
    hk = {k["graph"]: k for k in hoisted["kernels"]}
    assert hk["decompose A -> A__d0, A__d1"]["hoisted"] is True
    assert hoisted["total"]["cycles"] == stats["total"]["cycles"] - step["cycles"]
    assert hoisted["total"]["bytes_read"]["total"] == \
        stats["total"]["bytes_read"]["total"] - step["bytes_read"]["total"]


def test_samml_decompose_step_round_trips_and_is_verified(tmp_path):
    samml, _, _ = _pipeline(tmp_path, SPMM + "decompose A: bcsr(4) >= 0.5, csr\n", [])
    path = tmp_path / "m.samml"
    path.write_text(samml)
    r = run_cli(["opt", str(path), "-p", "cleanup"])
    assert r.exit_code == 0, r.stderr
    assert "decompose A -> A__d0 >= 0.5, A__d1" in r.stdout
    bad = samml.replace("decompose A -> A__d0 >= 0.5, A__d1", "decompose A -> A__d0, A__d1")
    path.write_text(bad)
    r = run_cli(["simulate", str(path), "--data", str(tmp_path / "d")])
    assert r.exit_code == 1
    assert "part A__d0 must be blocked, with a threshold" in r.stderr


def test_split_rejects_a_block_size_that_does_not_divide():
    a = _matrix(np.random.default_rng(1), 6, 6, 0.5)
    with pytest.raises(UserError, match="does not divide"):
        split(a, [(BCSR, 4, 0.5), (CSR, None, None)])


def test_estimate_counts_the_split_and_parts_as_the_simulator(tmp_path):
    """The estimator's decompose step and part graphs, from data, against the simulator."""
    samml, stats, _ = _pipeline(tmp_path, SPMM + "decompose A: bcsr(4) >= 0.25, csr\n", [])
    path = tmp_path / "m.samml"
    path.write_text(samml)
    r = run_cli(["estimate", str(path), "--data", str(tmp_path / "d"), "--json"])
    assert r.exit_code == 0, r.stderr
    est = json.loads(r.stdout)["kernels"]
    sim = {k["graph"]: k for k in stats["kernels"]}
    step = "decompose A -> A__d0, A__d1"
    assert est[step]["bytes_read"] == sim[step]["bytes_read"]["total"]
    assert est[step]["bytes_written"] == sim[step]["bytes_written"]["total"]
    assert est[step]["cycles"] == sim[step]["cycles"]   # the split's cycles: the same formula
    assert est["permute B -> B__b4"]["cycles"] == sim["permute B -> B__b4"]["cycles"]
    for name in ("C__d0", "C"):
        assert est[name]["flops"] == sim[name]["flops"]
    assert est["permute B -> B__b4"]["bytes"] == \
        sim["permute B -> B__b4"]["bytes_read"]["total"] + \
        sim["permute B -> B__b4"]["bytes_written"]["total"]


def _blocky(tmp_path):
    """A 32 x 32 matrix: one full 8 x 8 block and a few scattered entries."""
    import scipy.sparse as sp
    a = np.zeros((32, 32))
    a[8:16, 16:24] = 1.5
    a[0, 31] = a[30, 2] = a[20, 5] = 2.0
    path = tmp_path / "A.npz"
    sp.save_npz(path, sp.csr_matrix(a))
    prog = tmp_path / "spmm.ff"
    prog.write_text(SPMM)
    return path, prog


def test_advisor_ranks_candidates_and_finds_the_block(tmp_path):
    path, prog = _blocky(tmp_path)
    r = run_cli(["decompose-advisor", str(path), "--program", str(prog), "--size", "K=8",
                 "--blocks", "4,8", "--thresholds", "0.5,1", "--top", "50", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    best = out["best"]
    assert out["tensor"] == "A" and out["nnz"] == 67
    proxies = [c["cycles_proxy"] for c in best]
    assert proxies == sorted(proxies)
    directives = {c["directive"]: c for c in best}
    assert "(no decomposition)" in directives
    full = directives["decompose A: bcsr(8) >= 1.0, csr"]
    assert full["blocked_share"] == round(64 / 67, 4)     # the full block, nothing else
    assert directives["(no decomposition)"]["blocked_share"] == 0
    assert len(best) == out["candidates"]


def test_advisor_hoist_leaves_the_split_out(tmp_path):
    path, prog = _blocky(tmp_path)
    args = ["decompose-advisor", str(path), "--program", str(prog), "--size", "K=8",
            "--blocks", "8", "--thresholds", "1", "--top", "9", "--json"]
    plain = {c["directive"]: c for c in json.loads(run_cli(args).stdout)["best"]}
    hoisted = {c["directive"]: c for c in json.loads(run_cli(args + ["--hoist"]).stdout)["best"]}
    d = "decompose A: bcsr(8) >= 1.0, csr"
    assert plain[d]["split_cycles_proxy"] > 0
    assert hoisted[d]["cycles_proxy"] == pytest.approx(
        plain[d]["cycles_proxy"] - plain[d]["split_cycles_proxy"], abs=0.2)


@pytest.mark.parametrize("args, why", [
    (["--blocks", "x"], "--blocks x: expected numbers"),
    (["--thresholds", "0"], "a threshold is in (0, 1]"),
    (["--tensor", "B"], "not an unblocked sparse matrix"),
    ([], "give the size of K"),
])
def test_advisor_bad_inputs(tmp_path, args, why):
    path, prog = _blocky(tmp_path)
    r = run_cli(["decompose-advisor", str(path), "--program", str(prog)] + args)
    assert r.exit_code == 1
    assert why in r.stderr


TRANSPOSED = """dim I = 8, J = 8, K = 4
tensor A[J, I] : csr
tensor B[J, K] : dense
tensor C[I, K] : dense
"""


@pytest.mark.parametrize("body", [
    "C[i,k] = A[j,i] * B[j,k]",                          # A^T B: the sum over j comes first
    "C[i,k] = 0.5 * sum[j](A[j,i] * B[j,k]) / 3",        # scaled, divided by a constant
    "C[i,k] = -(A[j,i] * B[j,k])",                       # negated
])
@pytest.mark.parametrize("directive", ["decompose A: bcsr(2) >= 0.5, csr",
                                       "decompose A: bcsr(4) >= 0.25, bcsr(2) >= 0.5, dcsr"])
@pytest.mark.parametrize("density", [0.2, 0.7])
def test_other_linear_statements(body, directive, density):
    rng = np.random.default_rng(11)
    inputs = {"A": _matrix(rng, 8, 8, density),
              "B": FiberTensor.from_dense(rng.uniform(-1, 1, (8, 4)), shorthand("dense", 2))}
    expect = evaluate(_program(TRANSPOSED + body), inputs)["C"]
    decomposed = _program(TRANSPOSED + body + "\n" + directive)
    _same(evaluate(decomposed, inputs)["C"], expect)
    _same(_simulate(decomposed, inputs)["C"], expect)


def test_the_residual_folds_into_the_sum_unless_its_reduction_comes_first():
    spmm = fuse_program(_program(SPMM + "decompose A: bcsr(4) >= 0.5, csr"))
    assert [r.name for r in spmm.regions] == ["C__d0", "C"]     # C = C__d0__u + A__d1 B
    at_b = fuse_program(_program(TRANSPOSED + "C[i,k] = A[j,i] * B[j,k]\n"
                                 "decompose A: bcsr(4) >= 0.5, csr"))
    assert [r.name for r in at_b.regions] == ["C__d0", "C__d1", "C"]   # j is outermost


TWO_READERS = """dim I = 8, J = 8, K = 4
tensor A[I, J] : csc
tensor B[J, K] : dense
tensor E[J, K] : dense
tensor C[I, K] : dense
tensor D[I, K] : dense
tensor G[I, K] : dense
C[i,k] = A[i,j] * B[j,k]
D[i,k] = A[i,j] * E[j,k]
G[i,k] = relu(C[i,k] + D[i,k])
fuse g: D, G
parallelize C: i by 2
"""


@pytest.mark.parametrize("directive", ["decompose A: bcsr(2) >= 0.5, csr",
                                       "decompose A: bdense(4) >= 0.25, bcsr(2) >= 0.5, dcsc"])
def test_two_statements_read_a_csc_matrix_one_fused_with_a_consumer(directive):
    rng = np.random.default_rng(5)
    dense = shorthand("dense", 2)
    inputs = {"A": _matrix(rng, 8, 8, 0.5, shorthand("csc", 2)),
              "B": FiberTensor.from_dense(rng.uniform(-1, 1, (8, 4)), dense),
              "E": FiberTensor.from_dense(rng.uniform(-1, 1, (8, 4)), dense)}
    expect = evaluate(_program(TWO_READERS), inputs)
    decomposed = _program(TWO_READERS + directive)
    got = _simulate(decomposed, inputs)
    for name in "CG":
        _same(evaluate(decomposed, inputs)[name], expect[name])
        _same(got[name], expect[name])


GCN2 = """dim N = 16, F = 8
tensor A[N, N] : csr
tensor X[N, F] : dense
tensor W[F, F] : dense
tensor T1[N, F] : dense
tensor H[N, F] : dense
tensor T2[N, F] : dense
tensor Y[N, F] : dense
T1[i,f] = A[i,j] * X[j,f]
H[i,g] = relu(sum[f](T1[i,f] * W[f,g]))
T2[i,f] = A[i,j] * H[j,f]
Y[i,g] = sum[f](T2[i,f] * W[f,g])
"""


@pytest.mark.parametrize("directive", ["decompose A: bcsr(4) >= 0.5, csr",
                                       "decompose A: bcsr(8) >= 0.25, bcsr(2) >= 0.5, csr"])
@pytest.mark.parametrize("regions", ["fuse layer1: T1, H\nfuse layer2: T2, Y\n", ""])
def test_a_blocked_part_reads_an_intermediate_of_an_earlier_region(directive, regions):
    rng = np.random.default_rng(5)
    dense = shorthand("dense", 2)
    inputs = {"A": _matrix(rng, 16, 16, 0.4),
              "X": FiberTensor.from_dense(rng.uniform(-1, 1, (16, 8)), dense),
              "W": FiberTensor.from_dense(rng.uniform(-1, 1, (8, 8)), dense)}
    expect = evaluate(_program(GCN2 + regions), inputs)["Y"]
    decomposed = _program(GCN2 + regions + directive)
    _same(_simulate(decomposed, inputs)["Y"], expect)
    module, _ = lower_fused(fuse_program(decomposed))
    steps = [s.name for s in module.steps]
    assert sum(s.startswith("decompose A") for s in steps) == 1   # one split for both layers
    assert any(s.startswith("permute H -> H__b") for s in steps)


def test_an_intermediate_of_the_same_region_is_an_error(tmp_path):
    path = tmp_path / "g.ff"
    path.write_text(GCN2 + "fuse all: T1, H, T2, Y\ndecompose A: bcsr(4) >= 0.5, csr\n")
    r = run_cli(["check", str(path)])
    assert r.exit_code == 1
    assert "H is computed in the same fusion region as T2" in r.stderr


@pytest.mark.parametrize("decls, missing", [
    ("tensor index[J, K] : dense\ntensor C[I, K] : dense\n", "undefined tensor B"),
    ("tensor B[J, K] : dense\ntensor C2[I, K] : dense\n", "undefined tensor C"),
])
def test_a_decomposed_statement_with_an_undeclared_tensor_is_reported(tmp_path, decls, missing):
    """Found by make fuzz N=10000 (case 8837: B renamed in its declaration only): the
    decomposition's checks looked the undeclared tensor up and raised KeyError."""
    p = tmp_path / "p.ff"
    p.write_text("dim I = 32, J = 32, K = 16\ntensor A[I, J] : csr\n" + decls
                 + "C[i,k] = A[i,j] * B[j,k]\ndecompose A: bcsr(8) >= 0.5, bcsr(4) >= 0.25, csr\n")
    r = run_cli(["check", str(p)])
    assert r.exit_code == 1 and missing in r.stderr and "Traceback" not in r.stderr, r.stderr
