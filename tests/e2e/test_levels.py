"""Singleton and fixed-length compressed(c) levels (COO and ELL), end to end: the syntax and its
errors, storage (padding never an entry; a fiber longer than c refused when the data is
stored), level files and npz, the reference evaluator and both simulation engines against
numpy/scipy, the estimator's bytes against the simulator's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.data.io import tensor_from_scipy
from fuseflowc.data.levelfiles import read_level_files, write_level_files
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.formats import PAD, Format, shorthand
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.lang.printer import program_str
from fuseflowc.reference.evaluate import evaluate
from fuseflowc.sim import engine_fast
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from fuseflowc.sim.differential import first_difference, run
from tests.support.lower_harness import fused_module, load_text

COO = shorthand("coo", 2)


def ell(c: int) -> Format:
    return shorthand("ell", 2, c)


# ---- syntax ----------------------------------------------------------------------------------

def _parse(text: str):
    return check(parse_program(Source("p.ff", text)))


def test_formats_parse_and_print_back():
    text = ("dim N = 4, M = 5\n"
            "tensor A[N, M]: coo\ntensor B[N, M]: ell(3)\n"
            "tensor C[N, M]: (dense, compressed(2)) order (1, 0)\n"
            "tensor D[N, M]: (compressed, singleton) order (1, 0)\n"
            "tensor E[N, M]: (compressed(4), compressed(2))\n"
            "tensor F[N, M, M]: (dense, compressed, singleton)\n"
            "tensor x[M]: dense\ntensor y[N]: dense\n"
            "y[i] = A[i, j] * x[j] + B[i, j] * x[j] + C[i, j] * x[j] + D[i, j] * x[j]"
            " + E[i, j] * x[j]\n")
    p = _parse(text)
    fmts = {t.name: t.format for t in p.tensors}
    assert fmts["A"] == Format(("compressed", "singleton"), (0, 1))
    assert fmts["B"] == Format(("dense", "compressed(3)"), (0, 1))
    assert fmts["A"].kinds == ("nonunique", "singleton")
    assert fmts["B"].kinds == ("dense", "fixed")
    assert fmts["F"].kinds == ("dense", "nonunique", "singleton")
    printed = program_str(p)
    for want in ("tensor A[N, M] : coo", "tensor B[N, M] : ell(3)",
                 "tensor C[N, M] : (dense, compressed(2)) order (1, 0)",
                 "tensor D[N, M] : (compressed, singleton) order (1, 0)",
                 "tensor E[N, M] : (compressed(4), compressed(2))"):
        assert want in printed
    again = _parse(printed)
    assert {t.name: t.format for t in again.tensors} == fmts


BAD = [
    ("ell", 17, "format ell needs its fixed length: ell(c)"),
    ("ell(0)", 21, "a fixed length must be at least 1"),
    ("csr(2)", 17, "format csr takes no argument"),
    ("coo(2)", 17, "format coo takes no argument"),
    ("(dense, compressed(0))", 36, "a fixed length must be at least 1"),
    ("(dense, dense(3))", 25, "level format dense takes no argument"),
    ("(dense, singleton)", 17, "a singleton level must directly follow a compressed level"),
    ("(singleton, compressed)", 17, "a singleton level must directly follow a compressed"),
    ("(dense, compressed(2)) blocked", 17, "blocked formats take dense and compressed levels"),
    ("(dense, sparse(2))", 25, "unknown level format 'sparse'"),
    ("ell(99999999)", 21, "too large"),
]


@pytest.mark.parametrize("fmt,col,message", BAD)
def test_format_errors_are_located(fmt, col, message):
    text = f"dim N = 4, M = 5\ntensor A[N, M]: {fmt}\ntensor y[N]: dense\ny[i] = A[i, j]\n"
    with pytest.raises(UserError) as e:
        _parse(text)
    d = e.value.diagnostics[0]
    assert message in d.message
    assert (d.loc.line, d.loc.col) == (2, col), d.format()


def test_format_order_mismatch_and_computed_tensor_errors():
    with pytest.raises(UserError, match="format coo is for tensors of order 2") as e:
        _parse("dim N = 4\ntensor A[N]: coo\ntensor y[N]: dense\ny[i] = A[i]\n")
    assert str(e.value.diagnostics[0].loc) == "p.ff:2:14"
    with pytest.raises(UserError, match="reads but does not write") as e:
        _parse("dim N = 4\ntensor A[N, N]: csr\ntensor B[N, N]: ell(2)\nB[i, j] = A[i, j]\n")
    assert str(e.value.diagnostics[0].loc) == "p.ff:3:17"


def test_samml_and_fused_ir_parse_the_formats():
    from fuseflowc.fuse.algorithm import FuseOptions, fuse_program, pick_orders
    from fuseflowc.fuse.parser import parse_fused
    from fuseflowc.fuse.printer import fused_str
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.samml.printer import print_module
    p = load_text(SPMV % {"fmt": "ell(2)"})
    fused = fused_str(fuse_program(p, None, FuseOptions(pick_orders(None, None))))
    assert "tensor A[N, M] : ell(2) input" in fused
    assert fused_str(parse_fused(Source("f", fused))) == fused
    m = fused_module(p)
    text = print_module(m)
    assert "tensor A[N, M]: ell(2) input" in text and "format = fixed" in text
    assert print_module(parse_module(Source("s", text))) == text
    bad = text.replace("ell(2)", "ell(0)")
    with pytest.raises(UserError, match="fixed length must be between 1"):
        parse_module(Source("s", bad))
    wrong = text.replace("format = fixed", "format = compressed")
    with pytest.raises(UserError, match="stores mode 1 in a fixed level"):
        from fuseflowc.samml.verify import verify
        verify(parse_module(Source("s", wrong)))


# ---- storage ---------------------------------------------------------------------------------

def _csr(m):
    return sp.csr_matrix(np.asarray(m, dtype=float))


def test_ell_storage_pads_after_the_coordinates_and_padding_is_no_entry():
    a = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 0]], float)
    t = FiberTensor.from_dense(a, ell(3))
    assert t.levels[1].kind == "fixed" and t.levels[1].seg is None
    assert t.levels[1].crd.tolist() == [1, 3, PAD, PAD, PAD, PAD, 0, PAD, PAD]
    assert t.vals.tolist() == [1, 2, 0, 0, 0, 0, 3, 0, 0]
    coords, vals = t.to_coo()
    assert coords.tolist() == [[0, 1], [0, 3], [2, 0]] and vals.tolist() == [1, 2, 3]
    assert (t.to_dense() == a).all() and t.pattern().sum() == 3


def test_coo_storage_repeats_rows_and_sums_duplicates():
    t = FiberTensor.from_coo((3, 4), [[2, 1], [0, 3], [0, 1], [0, 1]], [1.0, 2.0, 3.0, 4.0],
                             COO)
    assert t.levels[0].kind == "nonunique" and t.levels[0].seg.tolist() == [0, 3]
    assert t.levels[0].crd.tolist() == [0, 0, 2]
    assert t.levels[1].kind == "singleton" and t.levels[1].crd.tolist() == [1, 3, 1]
    assert t.vals.tolist() == [7.0, 2.0, 1.0]


def test_a_row_longer_than_c_is_refused_when_the_data_is_stored():
    m = _csr([[1, 1, 1], [0, 1, 0]])
    with pytest.raises(UserError, match=r"fiber 0 of its compressed\(2\) level has 3 "
                                        r"coordinates, more than its fixed length 2; choose "
                                        r"c >= 3"):
        tensor_from_scipy(m, TensorSpec("A", ("N", "M"), ell(2)))


@pytest.mark.parametrize("fmt", [COO, ell(3), Format(("compressed", "compressed(2)"), (1, 0)),
                                 Format(("dense", "compressed", "singleton"), (0, 1, 2))])
def test_level_files_round_trip(tmp_path, fmt):
    rng = np.random.default_rng(3)
    shape = (5, 4) if fmt.order == 2 else (3, 4, 5)
    a = rng.random(shape) * (rng.random(shape) < 0.3)
    if fmt.order == 2:
        a[:, :] *= (np.cumsum(a != 0, axis=1 if fmt.mode_order == (0, 1) else 0) <= 2)
    t = FiberTensor.from_dense(a, fmt)
    write_level_files(tmp_path, "A", t)
    back = read_level_files(tmp_path, "A")
    assert back.format == fmt
    assert (back.to_dense() == a).all()
    for x, y in zip(back.levels, t.levels):
        assert x.kind == y.kind and (x.crd is None or (x.crd == y.crd).all())


def _files(tmp_path, **arrays):
    for what, nums in arrays.items():
        (tmp_path / f"tensor_A_mode_{what}").write_text("".join(f"{x}\n" for x in nums))


@pytest.mark.parametrize("arrays,message", [
    (dict(shape=[2, 3], **{"1_crd": [-1, 0, 2, -1], "1_width": [2]}, vals=[0, 1, 1, 0]),
     "padding (-1) only follow them"),
    (dict(shape=[2, 3], **{"1_crd": [1, 0, 2, -1], "1_width": [2]}, vals=[1, 1, 1, 0]),
     "strictly increasing"),
    (dict(shape=[2, 3], **{"1_crd": [0, 1, 2], "1_width": [2]}, vals=[1, 1, 1]),
     "it needs 4"),
    (dict(shape=[2, 3], **{"1_crd": [0, 3, 2, -1], "1_width": [2]}, vals=[1, 1, 1, 0]),
     "outside level 1's size 3"),
    (dict(shape=[2, 3], **{"1_crd": [0, 1]}, vals=[1, 1]),
     "a singleton level must directly follow a compressed level"),
    (dict(shape=[2, 3], **{"0_seg": [0, 2], "0_crd": [1, 0], "1_crd": [0, 1]}, vals=[1, 1]),
     "non-decreasing"),
    (dict(shape=[2, 3], **{"0_seg": [0, 2], "0_crd": [1, 1], "1_crd": [2, 1]}, vals=[1, 1]),
     "COO entries are sorted and unique"),
    (dict(shape=[2, 3], **{"1_width": [2]}, vals=[1, 1]),
     "a compressed(c) level has"),
])
def test_bad_level_files_name_the_file(tmp_path, arrays, message):
    _files(tmp_path, **arrays)
    with pytest.raises(UserError, match=None) as e:
        read_level_files(tmp_path, "A")
    msg = e.value.diagnostics[0].message
    assert message in msg and "tensor_A_mode_" in msg, msg


def test_npz_and_level_file_data_load_into_the_declared_format(tmp_path):
    from fuseflowc.data.io import load_inputs, save_tensors
    a = _csr([[0, 2, 0], [1, 0, 3], [0, 0, 0]])
    for style in ("npz", "sam"):
        d = tmp_path / style
        d.mkdir()
        save_tensors(d, {"A": tensor_from_scipy(a, TensorSpec("A", ("N", "M"), COO))}, style)
        for fmt in (COO, ell(2), shorthand("csr", 2)):
            got, _ = load_inputs(str(d), [TensorSpec("A", ("N", "M"), fmt)])
            assert got["A"].format == fmt and (got["A"].to_dense() == a.toarray()).all()
        with pytest.raises(UserError, match=r"A\.npz|tensor_A_mode"):
            load_inputs(str(d), [TensorSpec("A", ("N", "M"), ell(1))])


# ---- programs on random matrices: reference, both engines, numpy -----------------------------

SPMV = """dim N, M
tensor A[N, M]: %(fmt)s
tensor x[M]: dense
tensor y[N]: dense
y[i] = A[i, j] * x[j]
"""

SPMM = """dim N, M, K
tensor A[N, M]: %(fmt)s
tensor B[M, K]: dense
tensor C[N, K]: dense
C[i, k] = A[i, j] * B[j, k]
"""

# y = A^T x with the order j -> i: fuse makes a permuted copy of A (COO by column; CSC for ELL)
SPMV_T = """dim N, M
tensor A[N, M]: %(fmt)s
tensor x[N]: dense
tensor y[M]: dense
y[j] = A[i, j] * x[i]
order y: j -> i
"""

# element-wise with a CSR matrix: intersections of the new scanners' streams with compressed ones
MASKED = """dim N, M
tensor A[N, M]: %(fmt)s
tensor B[N, M]: csr
tensor C[N, M]: csr
C[i, j] = A[i, j] * B[i, j] + B[i, j]
"""


@st.composite
def matrices(draw, max_n=7):
    """Small random matrices: empty ones, single entries, empty rows, full rows."""
    n, m = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    density = draw(st.sampled_from([0.0, 0.15, 0.5, 1.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (n, m)) * (rng.random((n, m)) < density)
    if draw(st.booleans()) and a.size:      # a single entry
        a = np.zeros((n, m))
        a[rng.integers(n), rng.integers(m)] = 0.5
    return a


def _inputs(program, a: np.ndarray, fmt: Format, seed: int) -> dict:
    from fuseflowc.data.gen import random_inputs
    n, m = a.shape
    sizes = {"N": n, "M": m, "K": 3}
    specs = [s for s in program.specs() if s.name in set(program.inputs) and s.name != "A"]
    inputs = random_inputs(specs, sizes, seed)
    inputs["A"] = tensor_from_scipy(sp.coo_matrix(a), TensorSpec("A", ("N", "M"), fmt))
    return inputs, sizes


def _numpy(kind: str, a: np.ndarray, inputs: dict) -> dict:
    if kind == "spmv":
        return {"y": a @ inputs["x"].to_dense()}
    if kind == "spmm":
        return {"C": a @ inputs["B"].to_dense()}
    if kind == "spmv_t":
        return {"y": a.T @ inputs["x"].to_dense()}
    b = inputs["B"].to_dense()
    return {"C": a * b + b}


PROGRAMS = {"spmv": SPMV, "spmm": SPMM, "spmv_t": SPMV_T, "masked": MASKED}


def _fmt(a: np.ndarray, kind: str, slack: int) -> tuple[str, Format]:
    if kind == "coo":
        return "coo", COO
    c = max(int((a != 0).sum(axis=1).max()) if a.size else 0, 1) + slack
    return f"ell({c})", ell(c)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrices(), st.sampled_from(sorted(PROGRAMS)), st.sampled_from(["coo", "ell"]),
       st.integers(0, 2), st.integers(0, 100), st.sampled_from([None, "2", "inf"]))
def test_reference_and_both_engines_equal_numpy(a, program_kind, fmt_kind, slack, seed, depth):
    """`run` (the reference) and `simulate --check` (each engine) on COO and ELL equal numpy;
    the two engines agree on every counter; the outputs' stored patterns are the reference's."""
    text, fmt = _fmt(a, fmt_kind, slack)
    program = load_text(PROGRAMS[program_kind] % {"fmt": text})
    inputs, sizes = _inputs(program, a, fmt, seed)
    want = _numpy(program_kind, a, inputs)
    ref = evaluate(program, inputs)
    for name, w in want.items():
        np.testing.assert_allclose(ref[name].to_dense(), w, rtol=1e-9, atol=1e-12)
    module = fused_module(program)
    arch = Arch.load(depth=depth)
    py = run(module, inputs, sizes, arch, "python")
    assert py.error is None, py.error.format()
    for name in want:
        got = py.result.tensors[name]
        np.testing.assert_allclose(got.to_dense(), ref[name].to_dense(), rtol=1e-9, atol=1e-12)
        assert (got.pattern() == ref[name].pattern()).all()
    if engine_fast.available():
        diff = first_difference(py, run(module, inputs, sizes, arch, "fast"))
        assert diff is None, diff


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrices(max_n=6), st.integers(0, 3))
def test_padding_and_format_never_change_a_result(a, slack):
    """The same matrix as CSR, COO and ELL(c) for any c that fits: identical outputs, values and
    patterns (the simulated C of the masked program included)."""
    program_of = {}
    outs = []
    for text, fmt in (("csr", shorthand("csr", 2)), ("coo", COO), _fmt(a, "ell", slack)):
        program_of[text] = load_text(MASKED % {"fmt": text})
        inputs, sizes = _inputs(program_of[text], a, fmt, 7)
        res = Simulator(fused_module(program_of[text]), inputs, sizes).run()
        outs.append(res.tensors["C"])
    for o in outs[1:]:
        assert (o.to_dense() == outs[0].to_dense()).all()
        assert (o.pattern() == outs[0].pattern()).all()


def test_long_fibers_on_both_engines():
    """Fibers and COO runs long enough for the compiled scanner's cursor runs: the Python
    engine's run of refs from a refs array equals numpy and the compiled engine's."""
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (6, 40)) * (rng.random((6, 40)) < 0.7)
    a[2] = 0
    for fmt_kind in ("coo", "ell"):
        text, fmt = _fmt(a, fmt_kind, 3)
        program = load_text(SPMM % {"fmt": text})
        inputs, sizes = _inputs(program, a, fmt, 1)
        module = fused_module(program)
        arch = Arch.load()
        bulk = run(module, inputs, sizes, arch, "python")
        np.testing.assert_allclose(bulk.result.tensors["C"].to_dense(),
                                   a @ inputs["B"].to_dense())
        if engine_fast.available():
            assert first_difference(bulk, run(module, inputs, sizes, arch, "fast")) is None


# ---- what the scanners read --------------------------------------------------------------------

def _spmv_bytes(a, fmt_text, fmt):
    program = load_text(SPMV % {"fmt": fmt_text})
    inputs, sizes = _inputs(program, a, fmt, 0)
    module = fused_module(program)
    res = Simulator(module, inputs, sizes).run()
    return module, inputs, sizes, res.kernels[0].bytes_read()


def test_fixed_scanner_reads_no_seg_and_one_padding_slot_per_short_row():
    a = np.array([[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 4, 5]], float)
    eb = Arch.load().element_bytes
    _, _, _, b = _spmv_bytes(a, "ell(3)", ell(3))
    # 5 coordinates + one padding slot for each of the 2 rows shorter than 3
    assert b["seg"] == 0 and b["crd"] == eb * (5 + 2)
    _, _, _, csr = _spmv_bytes(a, "csr", shorthand("csr", 2))
    assert csr["seg"] == eb * 2 * 3 and csr["crd"] == eb * 5


def test_coo_scanners_read_seg_once_and_find_runs():
    a = np.array([[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 4, 5]], float)
    eb = Arch.load().element_bytes
    _, _, _, b = _spmv_bytes(a, "coo", COO)
    # seg: one fiber (2); crd: a row per run (2), each entry's column (5) and the parent crd
    # read to find each run's end (5)
    assert b["seg"] == eb * 2 and b["crd"] == eb * (2 + 5 + 5)


@pytest.mark.parametrize("fmt_kind", ["coo", "ell"])
def test_estimate_counts_the_bytes_the_simulator_reads(fmt_kind):
    from fuseflowc.estimate import DataStats, estimate_module
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (30, 20)) * (rng.random((30, 20)) < 0.2)
    text, fmt = _fmt(a, fmt_kind, 1)
    module, inputs, sizes, b = _spmv_bytes(a, text, fmt)
    stats = DataStats(dict(sizes), {}, Arch.load().element_bytes)
    from fuseflowc.estimate.stats import stats_of_fiber
    stats.tensors = {k: stats_of_fiber(k, t) for k, t in inputs.items()}
    est = estimate_module(module, stats).total
    assert (est.read_seg, est.read_crd, est.read_vals) == \
        pytest.approx((b["seg"], b["crd"], b["vals"]))


# ---- the general forms: fixed levels under sparse ones, COO per outer coordinate --------------

GENERAL = [
    ("(compressed, compressed(3))", "y[i] = A[i, j] * x[j]", {"y": "a @ x"}),
    ("(compressed(2), compressed(3))", "y[i] = A[i, j] * x[j]", {"y": "a @ x"}),
    ("(compressed(3), compressed) order (1, 0)", "z[j] = A[i, j] * w[i]", {"z": "a.T @ w"}),
    ("(compressed, singleton) order (1, 0)", "z[j] = A[i, j] * w[i]", {"z": "a.T @ w"}),
]


@pytest.mark.parametrize("fmt,statement,want", GENERAL)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_general_forms_on_both_engines(fmt, statement, want, seed):
    from fuseflowc.data.gen import random_inputs
    text = (f"dim N, M\ntensor A[N, M]: {fmt}\ntensor x[M]: dense\ntensor w[N]: dense\n"
            f"tensor y[N]: dense\ntensor z[M]: dense\n{statement}\n")
    program = load_text(text)
    sizes = {"N": 5 + seed, "M": 4 + 2 * seed}
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    inputs = random_inputs(specs, sizes, seed, {"A": 0.4})
    env = {"a": inputs["A"].to_dense(), "x": inputs.get("x") and inputs["x"].to_dense(),
           "w": inputs.get("w") and inputs["w"].to_dense()}
    module = fused_module(program)
    arch = Arch.load()
    py = run(module, inputs, sizes, arch, "python")
    assert py.error is None, py.error.format()
    for name, expr in want.items():
        np.testing.assert_allclose(py.result.tensors[name].to_dense(), eval(expr, {}, env),
                                   rtol=1e-9, atol=1e-12)
    if engine_fast.available():
        assert first_difference(py, run(module, inputs, sizes, arch, "fast")) is None


def test_coo_per_row_order_3():
    """(dense, compressed, singleton): a COO of (j, k) under every i."""
    from fuseflowc.data.gen import random_inputs
    text = ("dim I, J, K\ntensor A[I, J, K]: (dense, compressed, singleton)\n"
            "tensor B[J, K]: dense\ntensor y[I]: dense\ny[i] = A[i, j, k] * B[j, k]\n")
    program = load_text(text)
    sizes = {"I": 3, "J": 4, "K": 5}
    specs = [s for s in program.specs() if s.name in set(program.inputs)]
    inputs = random_inputs(specs, sizes, 4, {"A": 0.3})
    assert inputs["A"].levels[1].kind == "nonunique"
    want = np.einsum("ijk,jk->i", inputs["A"].to_dense(), inputs["B"].to_dense())
    module = fused_module(program)
    py = run(module, inputs, sizes, Arch.load(), "python")
    assert py.error is None, py.error.format()
    np.testing.assert_allclose(py.result.tensors["y"].to_dense(), want, rtol=1e-9, atol=1e-12)
    if engine_fast.available():
        assert first_difference(py, run(module, inputs, sizes, Arch.load(), "fast")) is None


def test_gen_data_refuses_a_graph_with_rows_longer_than_c(tmp_path):
    """A graph's adjacency does not fit ell(8) (KarateClub has a node of degree 17, 18 with its
    self-loop): exit 1, the message says which fiber and the c that fits, nothing written; with
    random data gen-data keeps each row's c smallest columns."""
    from tests.support.golden import run_cli
    prog = tmp_path / "g.ff"
    prog.write_text("dim N, F\ntensor A[N, N]: ell(8)\ntensor X[N, F]: dense\n"
                    "tensor Y[N, F]: dense\nY[i, f] = A[i, k] * X[k, f]\n")
    r = run_cli(["gen-data", str(prog), "--graph", "karate", "-o", str(tmp_path / "d")])
    assert r.exit_code == 1
    assert "more than its fixed length 8; choose c >= 18" in r.stderr
    assert not (tmp_path / "d").exists()
    r = run_cli(["gen-data", str(prog), "--size", "N=30", "--size", "F=2", "--density",
                 "A=0.9", "-o", str(tmp_path / "d"), "--format", "sam"])
    assert r.exit_code == 0, r.stderr
    crd = (tmp_path / "d" / "tensor_A_mode_1_crd").read_text().split()
    assert len(crd) == 30 * 8 and "-1" not in crd     # every row full: 27 of 30 > 8


def test_fused_ir_and_samml_refuse_to_write_coo_or_ell():
    from fuseflowc.fuse.algorithm import FuseOptions, fuse_program, pick_orders
    from fuseflowc.fuse.parser import parse_fused
    from fuseflowc.fuse.printer import fused_str
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.samml.printer import print_module
    from fuseflowc.samml.verify import verify
    p = load_text("dim N, M\ntensor A[N, M]: csr\ntensor B[N, M]: csr\nB[i, j] = A[i, j]\n")
    fused = fused_str(fuse_program(p, None, FuseOptions(pick_orders(None, None))))
    bad = fused.replace("tensor B[N, M] : csr output", "tensor B[N, M] : coo output")
    with pytest.raises(UserError, match="tensor 'B' is computed, but its format coo"):
        parse_fused(Source("f", bad))
    text = print_module(fused_module(p))
    bad = text.replace("tensor B[N, M]: csr output", "tensor B[N, M]: ell(2) output")
    with pytest.raises(UserError, match="stores mode 1 as a fixed level, which SAMML graphs "
                                        "read but do not write"):
        verify(parse_module(Source("s", bad)))
