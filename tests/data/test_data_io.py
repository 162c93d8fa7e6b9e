"""fuseflowc.data.io: file round trips in every format and style, conversion rules, and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.data.io import (
    SAVE_STYLES,
    load_inputs,
    load_tensor,
    read_level_files,
    save_tensors,
    write_data_dir,
)
from fuseflowc.data.spec import TensorSpec
from fuseflowc.diagnostics import UserError
from fuseflowc.formats import Format, shorthand
from fuseflowc.outputs import MANIFEST

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def fmt_of(levels, mode_order=None, blocked=False):
    return Format(tuple(levels), tuple(mode_order or range(len(levels))), blocked)


@st.composite
def formats(draw, order, blocked=False):
    levels = draw(st.lists(st.sampled_from(["dense", "compressed"]), min_size=order,
                           max_size=order))
    perm = draw(st.permutations(list(range(order))))
    return Format(tuple(levels), tuple(perm), blocked)


@st.composite
def tensors(draw, orders=(0, 1, 2, 3), allow_blocked=True):
    """A FiberTensor of random order, shape (0-size dims included), format, pattern (with empty
    fibers), and values (stored explicit zeros included)."""
    order = draw(st.sampled_from(orders))
    blocked = allow_blocked and order == 2 and draw(st.booleans())
    b = draw(st.sampled_from([1, 2, 3])) if blocked else None
    fmt = draw(formats(order, blocked))
    if blocked:
        bshape = tuple(draw(st.integers(0, 3)) for _ in range(order))
        shape = tuple(s * b for s in bshape)
    else:
        shape = bshape = tuple(draw(st.integers(0, 4)) for _ in range(order))
    n = int(np.prod(bshape)) if order else 1
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < density
    if order == 0:
        mask[:] = True
    coords = np.argwhere(mask.reshape(bshape)) if order else np.zeros((1, 0), np.int64)
    vshape = (coords.shape[0],) if b is None else (coords.shape[0], b, b)
    vals = rng.choice([0.0, 1.5, -2.25, 0.125, 3.0], size=vshape)
    return FiberTensor.from_coo(shape, coords, vals, fmt, b)


def spec_for(t: FiberTensor, fmt: Format | None = None, name="T") -> TensorSpec:
    fmt = fmt or t.format
    return TensorSpec(name, tuple(f"D{k}" for k in range(t.order)), fmt,
                      t.block if fmt.blocked else None)


def expected_pattern(t: FiberTensor, style: str, target: Format, block) -> np.ndarray:
    """What `target` should store after `t` went through a file of `style`.

    The file's stored entries: the non-zeros for dense files (.npy, and any file of a dense-format
    tensor), else the tensor's stored entries. A compressed target stores exactly those (blocks:
    every block containing one); dense levels store everything beneath them.
    """
    dense_file = style == "npy" or (style == "auto" and (t.format.is_dense or t.order == 0)) \
        or t.format.is_dense
    src = t.to_dense() != 0 if dense_file else t.pattern()
    coords = np.argwhere(src)
    if block:
        coords = np.unique(coords // block, axis=0).reshape(-1, 2)
    vals = np.ones((coords.shape[0],) + ((block, block) if block else ()))
    return FiberTensor.from_coo(t.shape, coords, vals, target, block).pattern()


def check_same(got: FiberTensor, t: FiberTensor, style: str, target: Format, block=None):
    assert got.shape == t.shape
    assert got.format == target
    assert got.block == block
    np.testing.assert_array_equal(got.to_dense(), t.to_dense())
    np.testing.assert_array_equal(got.pattern(), expected_pattern(t, style, target, block))


@SETTINGS
@given(t=tensors(), style=st.sampled_from(SAVE_STYLES))
def test_round_trip_same_format(tmp_path_factory, t, style):
    d = tmp_path_factory.mktemp("rt")
    save_tensors(d, {"T": t}, style)
    got, sizes = load_inputs(d, [spec_for(t)])
    check_same(got["T"], t, style, t.format, t.block)
    assert sizes == {f"D{k}": s for k, s in enumerate(t.shape)}


@SETTINGS
@given(data=st.data(), style=st.sampled_from(SAVE_STYLES))
def test_round_trip_any_declared_format(tmp_path_factory, data, style):
    t = data.draw(tensors(allow_blocked=True))
    block = None
    blocked = t.order == 2 and data.draw(st.booleans())
    if blocked:
        divisors = [b for b in (1, 2, 3) if all(s % b == 0 for s in t.shape)]
        block = data.draw(st.sampled_from(divisors))
    target = data.draw(formats(t.order, blocked))
    d = tmp_path_factory.mktemp("conv")
    save_tensors(d, {"T": t}, style)
    spec = TensorSpec("T", tuple(f"D{k}" for k in range(t.order)), target, block)
    got, _ = load_inputs(d, [spec])
    check_same(got["T"], t, style, target, block)


@pytest.mark.parametrize("name", ["dense", "sparse", "csr", "csc", "dcsr", "dcsc", "bcsr",
                                  "bdcsr", "bdense"])
@pytest.mark.parametrize("style", SAVE_STYLES)
def test_every_shorthand_every_style(tmp_path, name, style):
    a = np.zeros((4, 6))
    a[0, 1], a[0, 5], a[3, 0], a[2, 2] = 1.0, -2.0, 0.5, 4.0
    fmt = shorthand(name, 2)
    b = 2 if fmt.blocked else None
    t = FiberTensor.from_dense(a, fmt, b)
    save_tensors(tmp_path, {"A": t}, style)
    got = load_tensor(next(tmp_path.iterdir()), TensorSpec("A", ("I", "J"), fmt, b), (4, 6))
    check_same(got, t, style, fmt, b)


def test_auto_style_picks_file_kinds(tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    ts = {
        "D": FiberTensor.from_dense(a, shorthand("dense", 2)),
        "R": FiberTensor.from_dense(a, shorthand("csr", 2)),
        "C": FiberTensor.from_dense(a, shorthand("csc", 2)),
        "B": FiberTensor.from_dense(np.ones((4, 4)), shorthand("bcsr", 2), 2),
        "V": FiberTensor.from_dense(np.arange(3.0), shorthand("sparse", 1)),
        "S": FiberTensor.from_dense(np.array(2.0), shorthand("dense", 0)),
    }
    paths = save_tensors(tmp_path, ts)
    assert [p.name for p in paths] == ["B.npz", "C.npz", "D.npy", "R.npz", "S.npy", "V.npz"]
    assert sp.load_npz(tmp_path / "R.npz").format == "csr"
    assert sp.load_npz(tmp_path / "C.npz").format == "csc"
    assert sp.load_npz(tmp_path / "B.npz").format == "bsr"
    assert sorted(np.load(tmp_path / "V.npz").files) == ["coords", "shape", "values"]


# ---- conversion rules --------------------------------------------------------------------------
def test_sparse_file_keeps_explicit_zeros_and_sums_duplicates(tmp_path):
    m = sp.coo_matrix(([1.0, 0.0, 2.0, 3.0], ([0, 1, 2, 2], [0, 1, 2, 2])), shape=(3, 3))
    sp.save_npz(tmp_path / "A.npz", m, compressed=False)
    # coo save_npz keeps the duplicate (2, 2) entries: the loader sums them.
    got = load_tensor(tmp_path / "A.npz", TensorSpec("A", ("I", "J"), shorthand("csr", 2)))
    np.testing.assert_array_equal(got.levels[1].crd, [0, 1, 2])
    np.testing.assert_array_equal(got.vals, [1.0, 0.0, 5.0])


def test_dense_file_to_compressed_stores_nonzeros(tmp_path):
    a = np.array([[0.0, 1.0], [0.0, 0.0]])
    np.save(tmp_path / "A.npy", a)
    got = load_tensor(tmp_path / "A.npy", TensorSpec("A", ("I", "J"), shorthand("dcsr", 2)))
    assert got.nnz == 1
    np.testing.assert_array_equal(got.levels[0].crd, [0])


def test_block_conversion_against_numpy(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.random((6, 9)) * (rng.random((6, 9)) < 0.15)
    np.save(tmp_path / "A.npy", a)
    got = load_tensor(tmp_path / "A.npy", TensorSpec("A", ("I", "J"), shorthand("bcsr", 2), 3))
    blocks_nz = np.abs(a).reshape(2, 3, 3, 3).sum(axis=(1, 3)) != 0
    np.testing.assert_array_equal(got.pattern(), np.kron(blocks_nz, np.ones((3, 3), bool)))
    np.testing.assert_array_equal(got.to_dense(), a)
    assert got.vals.shape == (int(blocks_nz.sum()), 3, 3)


def test_block_size_must_divide(tmp_path):
    np.save(tmp_path / "A.npy", np.ones((4, 5)))
    with pytest.raises(UserError, match=r"A.npy: shape \(4, 5\) is not divisible by block size 2"):
        load_inputs(tmp_path, [TensorSpec("A", ("I", "J"), shorthand("bcsr", 2), 2)])


def test_mtx_pattern_and_symmetric(tmp_path):
    (tmp_path / "A.mtx").write_text(
        "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n")
    got, sizes = load_inputs(tmp_path, [TensorSpec("A", ("N", "N"), shorthand("csr", 2))])
    np.testing.assert_array_equal(got["A"].to_dense(),
                                  [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    assert sizes == {"N": 3}


def test_mtx_real_general_and_array(tmp_path):
    m = sp.random(5, 7, density=0.3, random_state=1, format="coo")
    scipy.io.mmwrite(str(tmp_path / "A.mtx"), m)
    scipy.io.mmwrite(str(tmp_path / "B.mtx"), np.arange(6.0).reshape(2, 3))
    got, _ = load_inputs(tmp_path, [TensorSpec("A", ("I", "J"), shorthand("csc", 2)),
                                    TensorSpec("B", ("K", "L"), shorthand("dcsr", 2))])
    np.testing.assert_allclose(got["A"].to_dense(), m.toarray())
    assert got["A"].nnz == m.nnz
    np.testing.assert_array_equal(got["B"].to_dense(), np.arange(6.0).reshape(2, 3))
    assert got["B"].nnz == 5


def test_npz_dense_archive_keys(tmp_path):
    np.savez(tmp_path / "x.npz", np.arange(3.0))
    np.savez(tmp_path / "y.npz", y=np.arange(4.0))
    got, sizes = load_inputs(tmp_path, [TensorSpec("x", ("I",), shorthand("dense", 1)),
                                        TensorSpec("y", ("J",), shorthand("sparse", 1))])
    assert sizes == {"I": 3, "J": 4}
    assert got["y"].nnz == 3


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("k, value", [(3, 10**9), (4, 10**9), (2, -1), (6, 3), (1, 99)])
def test_scipy_archive_with_a_broken_indptr_is_an_error(tmp_path, fmt, k, value):
    """Found by fuzzing: scipy's load_npz trusts indptr, and converting such a matrix read out of
    bounds (a segfault, or 'double free or corruption' and abort): now a located error."""
    m = sp.random(6, 5, density=0.4, random_state=1, format=fmt)
    sp.save_npz(tmp_path / "A.npz", m)
    arrays = dict(np.load(tmp_path / "A.npz"))
    ptr = arrays["indptr"].astype(np.int64)
    ptr[min(k, ptr.size - 1)] = value
    arrays["indptr"] = ptr
    np.savez(tmp_path / "A.npz", **arrays)
    with pytest.raises(UserError, match="A.npz: unreadable or corrupt scipy.sparse .npz file"):
        load_tensor(tmp_path / "A.npz", TensorSpec("A", ("I", "J"), shorthand("csr", 2)))


def test_level_files_example(tmp_path):
    # The REFERENCE.md worked example: CSR A = [[1,0,2],[0,0,0],[0,3,0]].
    files = {"shape": "3\n3\n", "1_seg": "0\n2\n2\n3\n", "1_crd": "0\n2\n1\n",
             "vals": "1\n2\n3\n"}
    for k, v in files.items():
        (tmp_path / f"tensor_A_mode_{k}").write_text(v)
    t = read_level_files(tmp_path, "A")
    assert t.format == shorthand("csr", 2)
    np.testing.assert_array_equal(t.to_dense(), [[1, 0, 2], [0, 0, 0], [0, 3, 0]])
    got, _ = load_inputs(tmp_path, [TensorSpec("A", ("I", "J"), shorthand("dcsc", 2))])
    np.testing.assert_array_equal(got["A"].levels[0].crd, [0, 1, 2])
    np.testing.assert_array_equal(got["A"].vals, [1, 3, 2])


def test_level_files_empty_and_scalar(tmp_path):
    t = FiberTensor.from_coo((0, 3), np.zeros((0, 2)), np.zeros(0), shorthand("dcsr", 2))
    s = FiberTensor.from_dense(np.array(-1.5), shorthand("dense", 0))
    save_tensors(tmp_path, {"E": t, "s": s}, "sam")
    assert (tmp_path / "tensor_s_mode_shape").read_text() == ""
    got, sizes = load_inputs(tmp_path, [TensorSpec("E", ("I", "J"), shorthand("csr", 2)),
                                        TensorSpec("s", (), shorthand("dense", 0))])
    assert got["E"].shape == (0, 3) and got["E"].nnz == 0
    assert float(got["s"].vals[0]) == -1.5
    assert sizes == {"I": 0, "J": 3}


def test_write_data_dir_is_atomic(tmp_path):
    out = tmp_path / "data"
    t = FiberTensor.from_dense(np.ones(2), shorthand("dense", 1))
    write_data_dir(out, {"x": t, "z": t})
    write_data_dir(out, {"x": t})  # a directory it wrote: its files replaced, z.npy gone
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "x.npy"]

    class Boom(dict):
        def __getitem__(self, k):
            raise RuntimeError("fail while writing")

    with pytest.raises(RuntimeError):
        write_data_dir(out, Boom({"y": t}))
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "x.npy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
    # A file fuseflowc did not write: the directory is refused, nothing in it touched.
    (out / "old.npy").write_bytes(b"x")
    with pytest.raises(UserError, match="old.npy"):
        write_data_dir(out, {"y": t})
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "old.npy", "x.npy"]


def test_save_refuses_unknown_style(tmp_path):
    with pytest.raises(UserError, match="unknown data file style 'csv'"):
        save_tensors(tmp_path, {}, "csv")


# ---- load_inputs: dim binding and every error a user can cause ---------------------------------
def specs(*items):
    return [TensorSpec(n, dims, shorthand(f, len(dims))) for n, dims, f in items]


def test_binding_message_names_both_files(tmp_path):
    sp.save_npz(tmp_path / "A.npz", sp.csr_matrix(np.ones((3, 4))))
    np.save(tmp_path / "x.npy", np.ones(5))
    with pytest.raises(UserError) as e:
        load_inputs(tmp_path, specs(("A", ("I", "J"), "csr"), ("x", ("J",), "dense")))
    assert str(e.value) == (f"{tmp_path}/x.npy: has shape (5,) but 'x' is declared [J] and "
                            f"J = 4 from A.npz")


def test_binding_given_sizes_and_fixed_dims(tmp_path):
    np.save(tmp_path / "x.npy", np.ones(5))
    with pytest.raises(UserError, match=r"J = 4 given"):
        load_inputs(tmp_path, specs(("x", ("J",), "dense")), sizes={"J": 4})
    with pytest.raises(UserError, match=r"declared \[4\]: dim 0 must be 4"):
        load_inputs(tmp_path, specs(("x", (4,), "dense")))
    got, sizes = load_inputs(tmp_path, specs(("x", (5,), "dense")), sizes={"K": 2})
    assert sizes == {"K": 2}


def test_repeated_dim_in_one_tensor(tmp_path):
    np.save(tmp_path / "A.npy", np.ones((2, 3)))
    with pytest.raises(UserError, match="both uses of N must have the same size"):
        load_inputs(tmp_path, specs(("A", ("N", "N"), "dense")))


def test_wrong_order(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((2, 2)))
    with pytest.raises(UserError, match=r"x.npy: holds a matrix of shape \(2, 2\), but 'x' is "
                                        r"declared \[J\], a vector"):
        load_inputs(tmp_path, specs(("x", ("J",), "dense")))


def test_missing_file_lists_directory(tmp_path):
    np.save(tmp_path / "B.npy", np.ones(2))
    (tmp_path / "tensor_C_mode_vals").write_text("1\n")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UserError, match=r"no file for tensor 'A' .*the directory holds: B, C$"):
        load_inputs(tmp_path, specs(("A", ("I",), "dense")))
    with pytest.raises(UserError, match="data directory does not exist"):
        load_inputs(tmp_path / "nope", specs(("A", ("I",), "dense")))


def test_ambiguous_files(tmp_path):
    np.save(tmp_path / "A.npy", np.ones(2))
    (tmp_path / "tensor_A_mode_vals").write_text("1\n")
    with pytest.raises(UserError, match=r"tensor 'A' is ambiguous: found A.npy, tensor_A_mode_\*"):
        load_inputs(tmp_path, specs(("A", ("I",), "dense")))


@pytest.mark.parametrize("content,msg", [
    (b"garbage", "unreadable or corrupt .npy file"),
    (None, "NaN"),
    ("inf", "infinite"),
    ("str", "are not numbers"),
    ("obj", "unreadable or corrupt .npy file"),
    ("complex", "complex values are not supported"),
])
def test_bad_npy(tmp_path, content, msg):
    p = tmp_path / "x.npy"
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif content is None:
        np.save(p, np.array([1.0, np.nan]))
    elif content == "inf":
        np.save(p, np.array([1.0, -np.inf]))
    elif content == "str":
        np.save(p, np.array(["a", "b"]))
    elif content == "obj":
        np.save(p, np.array([{}, 1], dtype=object), allow_pickle=True)
    else:
        np.save(p, np.array([1j, 2]))
    with pytest.raises(UserError, match=msg) as e:
        load_inputs(tmp_path, specs(("x", ("I",), "dense")))
    assert str(e.value).startswith(f"{tmp_path}/x.npy: ")


@pytest.mark.parametrize("make,msg", [
    (lambda p: p.write_bytes(b"PK\x03\x04broken"), "unreadable or corrupt .npz"),
    (lambda p: np.savez(p, other=np.ones(2)), "no tensor in this .npz archive.*keys other"),
    (lambda p: np.savez(p, coords=np.array([[0.5]]), values=np.ones(1), shape=np.array([2])),
     "key 'coords' must hold integers"),
    (lambda p: np.savez(p, coords=np.array([[3]]), values=np.ones(1), shape=np.array([2])),
     r"entry 0 has coordinates \(3,\) outside shape \(2,\)"),
    (lambda p: np.savez(p, coords=np.array([[0, 0]]), values=np.ones(1), shape=np.array([2])),
     r"must have shape \(nnz, order\) = \(1, 1\)"),
    (lambda p: np.savez(p, coords=np.array([[0]]), values=np.array([np.nan]),
                        shape=np.array([2])), "NaN"),
    (lambda p: sp.save_npz(p, sp.csr_matrix(np.array([[np.inf]]))), "infinite"),
])
def test_bad_npz(tmp_path, make, msg):
    make(tmp_path / "x.npz")
    with pytest.raises(UserError, match=msg):
        load_inputs(tmp_path, specs(("x", ("I",), "sparse")))


def test_bad_mtx(tmp_path):
    (tmp_path / "A.mtx").write_text("not a matrix market file\n")
    with pytest.raises(UserError, match="A.mtx:1: not a Matrix Market file"):
        load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))
    (tmp_path / "A.mtx").write_text("%%MatrixMarket matrix coordinate complex general\n"
                                    "1 1 1\n1 1 1.0 2.0\n")
    with pytest.raises(UserError, match="complex values are not supported"):
        load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))


LEVELS_OK = {"shape": "3\n3\n", "1_seg": "0\n2\n2\n3\n", "1_crd": "0\n2\n1\n", "vals": "1\n2\n3\n"}


@pytest.mark.parametrize("change,msg", [
    ({"1_crd": "0\n2.5\n1\n"}, r"tensor_A_mode_1_crd: line 2: expected an integer, found '2.5'"),
    ({"1_crd": "0\n3\n1\n"}, r"tensor_A_mode_1_crd: entry 1 is 3, outside level 1's size 3"),
    ({"1_crd": "0\n-1\n1\n"}, "outside level 1's size 3"),
    ({"1_seg": "0\n2\n1\n3\n"}, r"tensor_A_mode_1_seg: is not monotone"),
    ({"1_seg": "1\n2\n2\n3\n"}, "must start at 0"),
    ({"1_seg": "0\n2\n3\n"}, "has 3 entries; level 1 has 3 parent position"),
    ({"1_seg": "0\n2\n2\n2\n"}, "ends at 2 but tensor_A_mode_1_crd has 3 entries"),
    ({"1_crd": "2\n0\n1\n"}, "not strictly increasing within their fiber"),
    ({"1_crd": "0\n0\n1\n"}, "not strictly increasing within their fiber"),
    ({"vals": "1\n2\n"}, "has 2 values; the levels have 3 position"),
    ({"vals": "1\nnan\n3\n"}, "line 2: value nan is not finite"),
    ({"vals": "1\nx\n3\n"}, "line 2: expected a number"),
    ({"shape": None}, "tensor_A_mode_shape: missing"),
    ({"1_seg": None}, "tensor_A_mode_1_seg is missing"),
    ({"order": "0\n0\n"}, "must list the modes 0..1 once each"),
    ({"3_crd": "0\n"}, "level 3 does not exist"),
    ({"block": "2\n"}, r"shape \(3, 3\) is not divisible by the block size 2"),
])
def test_bad_level_files(tmp_path, change, msg):
    files = dict(LEVELS_OK, **change)
    for k, v in files.items():
        if v is not None:
            (tmp_path / f"tensor_A_mode_{k}").write_text(v)
    with pytest.raises(UserError, match=msg):
        load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))


def test_level_files_with_empty_fibers_accept_repeated_coordinates_across_fibers(tmp_path):
    # Fibers [2], [], [0, 1]: crd 2 -> 0 decreases across a fiber boundary after an empty fiber.
    for k, v in {"shape": "3\n3\n", "1_seg": "0\n1\n1\n3\n", "1_crd": "2\n0\n1\n",
                 "vals": "1\n2\n3\n"}.items():
        (tmp_path / f"tensor_A_mode_{k}").write_text(v)
    got, _ = load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))
    np.testing.assert_array_equal(got["A"].to_dense(), [[0, 0, 1], [0, 0, 0], [2, 3, 0]])


def test_no_traceback_for_any_prefix_truncation(tmp_path):
    """A truncated file of any style is a UserError, never another exception."""
    a = FiberTensor.from_dense(np.arange(20.0).reshape(4, 5), shorthand("csr", 2))
    for style in ("npy", "npz"):
        src = tmp_path / style
        src.mkdir()
        save_tensors(src, {"A": a}, style)
        data = (src / f"A.{style}").read_bytes()
        for cut in itertools.chain(range(0, 64), range(64, len(data), 37)):
            bad = tmp_path / f"cut_{style}"
            bad.mkdir(exist_ok=True)
            (bad / f"A.{style}").write_bytes(data[:cut])
            try:
                load_inputs(bad, specs(("A", ("I", "J"), "csr")))
            except UserError:
                pass


@pytest.mark.parametrize("crd,msg", [
    ("0\n99999999999999999999999\n1\n", "line 2: integer 99999999999999999999999 is out of range"),
    ("0\n2 1\n", "line 2: expected an integer, found '2 1'"),
])
def test_level_file_number_parsing(tmp_path, crd, msg):
    for k, v in dict(LEVELS_OK, **{"1_crd": crd}).items():
        (tmp_path / f"tensor_A_mode_{k}").write_text(v)
    with pytest.raises(UserError, match=msg):
        load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))


def test_huge_dense_declaration_is_refused(tmp_path):
    np.savez(tmp_path / "A.npz", coords=np.array([[0, 0]]), values=np.ones(1),
             shape=np.array([10**6, 10**6]))
    got, _ = load_inputs(tmp_path, specs(("A", ("I", "J"), "dcsr")))
    assert got["A"].nnz == 1
    got, _ = load_inputs(tmp_path, specs(("A", ("I", "J"), "csr")))  # 10**6 row positions
    assert got["A"].levels[0].size == 10**6
    with pytest.raises(UserError, match=r"A.npz: storing tensor 'A' \(1000000 x 1000000\) in "
                                        r"format dense would need 1000000000000 stored values"):
        load_inputs(tmp_path, specs(("A", ("I", "J"), "dense")))


def test_load_tensor_by_any_level_file_and_unknown_files(tmp_path):
    t = FiberTensor.from_dense(np.eye(3), shorthand("dcsr", 2))
    save_tensors(tmp_path, {"B": t}, "sam")
    spec = TensorSpec("B", ("I", "J"), shorthand("csr", 2))
    got = load_tensor(tmp_path / "tensor_B_mode_1_crd", spec, (3, None))
    np.testing.assert_array_equal(got.to_dense(), np.eye(3))
    with pytest.raises(UserError, match=r"has shape \(3, 3\) but 'B' expects size 4 in dim 1"):
        load_tensor(tmp_path / "tensor_B_mode_vals", spec, (None, 4))
    (tmp_path / "B.txt").write_text("1\n")
    with pytest.raises(UserError, match="B.txt: not a tensor file"):
        load_tensor(tmp_path / "B.txt", spec)
    with pytest.raises(UserError, match="nope.npy: no such file"):
        load_tensor(tmp_path / "nope.npy", spec)


def test_mtx_column_and_row_vectors(tmp_path):
    scipy.io.mmwrite(str(tmp_path / "x.mtx"), sp.coo_matrix(np.array([[0.0], [2.0], [3.0]])))
    scipy.io.mmwrite(str(tmp_path / "y.mtx"), np.array([[1.0, 0.0]]))
    got, sizes = load_inputs(tmp_path, specs(("x", ("I",), "sparse"), ("y", ("J",), "sparse")))
    np.testing.assert_array_equal(got["x"].to_dense(), [0, 2, 3])
    assert got["x"].nnz == 2 and got["y"].nnz == 1 and sizes == {"I": 3, "J": 2}
    with pytest.raises(UserError, match="x.mtx: holds a matrix of shape \\(3, 1\\)"):
        load_inputs(tmp_path, specs(("x", ("I", "J", "K"), "sparse")))


def _fuzz_sources(tmp_path):
    """One valid file per style (plus mtx), as name -> bytes."""
    rng = np.random.default_rng(0)
    a = np.round(rng.random((4, 5)) * (rng.random((4, 5)) < 0.5), 2)
    t = FiberTensor.from_dense(a, shorthand("csr", 2))
    out = {}
    for style in ("npy", "npz", "sam"):
        d = tmp_path / f"src_{style}"
        d.mkdir()
        save_tensors(d, {"A": t}, style)
        out.update({p.name: p.read_bytes() for p in d.iterdir()})
    d = tmp_path / "src_mtx"
    d.mkdir()
    scipy.io.mmwrite(str(d / "A.mtx"), sp.coo_matrix(a))
    out["A.mtx"] = (d / "A.mtx").read_bytes()
    np.savez(d / "coo.npz", coords=np.array([[0, 1]]), values=np.ones(1), shape=np.array([4, 5]))
    out["A.coo.npz"] = (d / "coo.npz").read_bytes()
    return out


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_files_never_escape_as_other_errors(tmp_path_factory, data):
    base = tmp_path_factory.getbasetemp() / "fuzz_src"
    if not base.exists():
        base.mkdir()
        srcs = _fuzz_sources(base)
        for k, v in srcs.items():
            (base / ("_" + k)).write_bytes(v)
    srcs = {p.name[1:]: p.read_bytes() for p in base.iterdir() if p.name.startswith("_")}
    group = data.draw(st.sampled_from(["A.npy", "A.npz", "A.mtx", "A.coo.npz", "sam"]))
    files = ({k: v for k, v in srcs.items() if k.startswith("tensor_")} if group == "sam"
             else {("A.npz" if group == "A.coo.npz" else group): srcs[group]})
    victim = data.draw(st.sampled_from(sorted(files)))
    blob = bytearray(files[victim])
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = data.draw(st.integers(0, max(len(blob) - 1, 0)))
        if op == "flip" and blob:
            blob[pos] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del blob[pos:]
        else:
            blob[pos:pos] = data.draw(st.sampled_from([b"-", b"9", b"\n", b".", b"nan", b"\x00"]))
    files[victim] = bytes(blob)
    d = tmp_path_factory.mktemp("fuzz")
    for k, v in files.items():
        (d / k).write_bytes(v)
    try:
        load_inputs(d, specs(("A", ("I", "J"), "csr")))
    except UserError:
        pass


def test_simulate_reads_mixed_text_data_dir(tmp_path):
    """Integration: a .mtx matrix and SAM level files feed `fuseflowc simulate`."""
    from tests.support.golden import ROOT, run_cli

    case = ROOT / "tests" / "golden" / "data"
    r = run_cli(["simulate", str(case / "simulate_data_errors.samml"), "--data",
                 str(case / "dirs" / "ok"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), [7.0, 0.0, 6.0])


def test_singleton_levels_are_stored(tmp_path):
    """COO (compressed, singleton) is stored and generated (tests/e2e/test_levels.py has the rest)."""
    np.save(tmp_path / "A.npy", np.eye(2))
    fmt = Format(("compressed", "singleton"), (0, 1))
    got, _ = load_inputs(tmp_path, [TensorSpec("A", ("I", "J"), fmt)])
    assert got["A"].levels[1].kind == "singleton" and (got["A"].to_dense() == np.eye(2)).all()
    from fuseflowc.data.gen import random_tensor
    t = random_tensor(TensorSpec("A", ("I", "J"), fmt), (2, 2), 0.5)
    assert t.format == fmt and t.to_coo()[0].shape == (2, 2)


def test_docs_dcsc_level_files_example(tmp_path):
    """The DCSC listing of docs/data.md is what save_tensors writes."""
    a = np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 0]])
    save_tensors(tmp_path, {"A": FiberTensor.from_dense(a, shorthand("dcsc", 2))}, "sam")
    got = {p.name[len("tensor_A_mode_"):]: p.read_text().split() for p in tmp_path.iterdir()}
    assert got == {"shape": ["3", "3"], "order": ["1", "0"], "0_seg": ["0", "3"],
                   "0_crd": ["0", "1", "2"], "1_seg": ["0", "1", "2", "3"],
                   "1_crd": ["0", "2", "0"], "vals": ["1.0", "3.0", "2.0"]}
