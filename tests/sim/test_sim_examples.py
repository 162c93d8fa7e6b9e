"""Every hand-written graph of ir_examples/samml simulated on random and real matrices, checked
against numpy/scipy, directly and through `fuseflowc simulate --check`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.samml.load import load_module
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "ir_examples" / "samml"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def _sparse(rng, n, m, density, empty_rows=True):
    a = sp.random(n, m, density, random_state=rng, data_rvs=lambda k: rng.uniform(-2, 2, k))
    a = a.toarray()
    if empty_rows and n > 2:
        a[rng.integers(0, n, 2)] = 0.0
    return a


def _blocky(rng, n, m, b=4, density=0.3):
    mask = rng.random((n // b, m // b)) < density
    return np.kron(mask, np.ones((b, b))) * rng.uniform(-1, 1, (n, m))


def _softmax(a):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        nz = np.nonzero(a[i])[0]
        if nz.size:
            e = np.exp(a[i, nz] - a[i, nz].max())
            out[i, nz] = e / e.sum()
    return out


def cases(rng, A, B=None):
    """name -> (inputs, sizes, expected outputs) for matrix A (and a second operand B)."""
    n, m = A.shape
    x = rng.uniform(-1, 1, m)
    b = rng.uniform(-1, 1, n)
    B2 = B if B is not None else _sparse(rng, m, 7, 0.3)
    Bsame = B if B is not None and B.shape == A.shape else _sparse(rng, n, m, 0.2)
    K = 5
    Ad, Bd = rng.uniform(-1, 1, (n, K)), rng.uniform(-1, 1, (K, m))
    return {
        "spmv_row": ({"A": A, "x": x}, {"y": A @ x}),
        "spmv_col": ({"A": A, "x": x}, {"y": A @ x}),
        "spmv_par": ({"A": A, "x": x}, {"y": A @ x}),
        "spmm_ijk": ({"A": A, "B": B2}, {"C": A @ B2}),
        "spmm_ikj": ({"A": A, "B": B2}, {"C": A @ B2}),
        "spmm_kij": ({"A": A, "B": B2}, {"C": A @ B2}),
        "sddmm": ({"S": A, "A": Ad, "B": Bd}, {"D": A * (Ad @ Bd)}),
        "add": ({"A": A, "B": Bsame}, {"C": A + Bsame}),
        "mul": ({"A": A, "B": Bsame}, {"C": A * Bsame}),
        "residual": ({"A": A, "x": x, "b": b}, {"r": b - A @ x}),
        "softmax": ({"A": A}, {"Y": _softmax(A)}),
    }


def simulate(name, arrays, arch=None):
    module = load_module(str(EXAMPLES / f"{name}.samml"))
    tensors, sizes = {}, {}
    for decl in module.tensors:
        if decl.role != "input":
            continue
        a = arrays[decl.name]
        tensors[decl.name] = FiberTensor.from_dense(a, decl.format, decl.block)
        for d, s in zip(decl.dims, a.shape):
            sizes[d] = s
    return Simulator(module, tensors, sizes, arch or Arch.load()).run()


def check(name, arrays, expected, arch=None):
    res = simulate(name, arrays, arch)
    for out, want in expected.items():
        got = res.tensors[out].to_dense()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"{name}: {out}")
    return res


def test_every_example_is_covered():
    names = {p.stem for p in EXAMPLES.glob("*.samml")}
    assert names == set(cases(np.random.default_rng(0), np.eye(3))) | {"block_spmm"}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(cases(np.random.default_rng(0), np.eye(3))))
def test_example_random(name, seed):
    rng = np.random.default_rng(seed)
    A = _sparse(rng, 13, 11, 0.25)
    inputs, expected = cases(rng, A)[name]
    check(name, inputs, expected)


@pytest.mark.parametrize("name", sorted(cases(np.random.default_rng(0), np.eye(3))))
def test_example_all_zero(name):
    rng = np.random.default_rng(3)
    A = np.zeros((6, 5))
    inputs, expected = cases(rng, A, np.zeros((5, 5)) if name.startswith("spmm") else None)[name]
    check(name, inputs, expected)


@pytest.mark.parametrize("depth", ["inf", 1, 4])
def test_example_depths_agree(depth):
    """Channel depth changes cycles, never results (spmm_ikj has no must-buffer fan-out)."""
    rng = np.random.default_rng(5)
    A = _sparse(rng, 12, 9, 0.3)
    inputs, expected = cases(rng, A)["spmm_ikj"]
    check("spmm_ikj", inputs, expected, Arch.load(depth=depth))


def test_block_spmm():
    rng = np.random.default_rng(2)
    A, B = _blocky(rng, 16, 12), _blocky(rng, 12, 8)
    res = check("block_spmm", {"A": A, "B": B}, {"C": A @ B})
    k = res.kernels[0]
    nblocks = int(sum(1 for _ in range(1)))  # noqa: F841 - FLOPs are counted below
    assert k.flops > 0 and k.flops % 16 == 0   # b^3 per bmm, b^2 per block add
    zero = np.zeros((16, 12))
    check("block_spmm", {"A": zero, "B": B}, {"C": zero @ B})


def _real(name, rows=120):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    a = scipy.io.mmread(path).tocsr()[:rows, :rows].toarray().astype(float)
    return a


@pytest.mark.parametrize("matrix", ["jazz.mtx", "1138_bus.mtx"])
@pytest.mark.parametrize("name", ["spmv_row", "spmm_ikj", "spmm_kij", "sddmm", "softmax", "mul"])
def test_example_real_matrix(matrix, name):
    rng = np.random.default_rng(7)
    A = _real(matrix, 80)
    B = A.T.copy() if name.startswith("spmm") or name == "mul" else None
    inputs, expected = cases(rng, A, B)[name]
    check(name, inputs, expected)


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.samml")))
def test_cli_checks_every_example(name, tmp_path):
    rng = np.random.default_rng(11)
    if name == "block_spmm":
        A, B = _blocky(rng, 8, 12), _blocky(rng, 12, 8)
        inputs, expected = {"A": A, "B": B}, {"C": A @ B}
    else:
        inputs, expected = cases(rng, _sparse(rng, 9, 8, 0.3))[name]
    data, ref = tmp_path / "data", tmp_path / "ref"
    data.mkdir()
    ref.mkdir()
    for k, v in inputs.items():
        np.save(data / f"{k}.npy", v)
    for k, v in expected.items():
        np.save(ref / f"{k}.npy", v)
    r = run_cli(["simulate", str(EXAMPLES / f"{name}.samml"), "--data", str(data),
                 "--check", "--expect", str(ref), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr
    assert "match" in r.stderr and "cycles" in r.stderr
    for k in expected:
        got = list((tmp_path / "out").glob(f"{k}.*"))
        assert got, f"{k} not written"


@pytest.mark.parametrize("name", ["spmv_row", "spmv_col", "spmv_par", "residual", "add"])
def test_cli_check_against_the_reference_evaluator(name, tmp_path):
    """These graphs name their source program: --check runs `fuseflowc run`'s evaluator."""
    rng = np.random.default_rng(12)
    inputs, _ = cases(rng, _sparse(rng, 9, 8, 0.3))[name]
    for k, v in inputs.items():
        np.save(tmp_path / f"{k}.npy", v)
    r = run_cli(["simulate", str(EXAMPLES / f"{name}.samml"), "--data", str(tmp_path),
                 "--check"])
    assert r.exit_code == 0, r.stderr
    assert "match" in r.stderr
