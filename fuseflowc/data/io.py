"""Tensor files: find, read, check and convert the inputs of a program; write tensors back.

A data directory holds one file (or one set of level files) per tensor, found by the tensor's name:

  <name>.npy                       a dense numpy array (`numpy.save`)
  <name>.npz                       a scipy.sparse matrix (`scipy.sparse.save_npz`), or a numpy
                                   archive of a dense array under key `arr_0` or `<name>`, or a
                                   COO archive with keys `coords` (nnz x order ints), `values`
                                   (nnz floats) and `shape` (order ints)
  <name>.mtx                       Matrix Market (`scipy.io.mmread`); pattern files give 1.0,
                                   symmetric ones are expanded
  tensor_<name>_mode_*             SAM fiber-tree level files (see fuseflowc.data.levelfiles)

Whatever the file holds is converted on load to the format a program declares, through the
coordinates of the file's *stored entries*:
  - dense sources (.npy, dense .npz, array .mtx, level files whose levels are all dense): the
    non-zero entries;
  - sparse sources (scipy .npz, COO .npz, coordinate .mtx, level files with a compressed level):
    the entries the file stores, after summing duplicate coordinates; explicit zeros stay stored.
A blocked format (b x b blocks) stores every block that holds a stored entry; the matrix shape must
be divisible by b. docs/data.md describes all of this with examples.

Every problem with a file is a `UserError` that names the file.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..diagnostics import UserError
from ..files import output_dir
from ..formats import Format
from .fibertree import FiberTensor, Level, check_storage
from .levelfiles import (
    LEVEL_FILE_RE,
    LEVEL_MARK,
    LEVEL_PREFIX,
    _err,
    _shape_text,
    level_file,
    level_files_present,
    read_level_files,
    write_level_files,
)
from .spec import TensorSpec

SINGLE_FILE_SUFFIXES = (".npy", ".npz", ".mtx")
SAVE_STYLES = ("auto", "npy", "npz", "sam")


# ---- the neutral form every file is read into -------------------------------------------------
@dataclass
class RawTensor:
    """What a file holds, before conversion: logical `shape`, stored entries as `coords`
    (nnz, order) in logical mode order with `values` (nnz,), and whether the source was dense
    (then only its non-zeros count as stored when converting to a compressed format)."""

    shape: tuple[int, ...]
    coords: np.ndarray | None
    values: np.ndarray | None
    dense: bool
    #: a dense source kept whole, its coords and values not listed yet (RawTensor.of_array):
    #: `convert` stores it in an all-dense format without listing them (24 bytes an entry)
    array: np.ndarray | None = None

    @classmethod
    def from_array(cls, a: np.ndarray) -> "RawTensor":
        a = np.asarray(a, dtype=np.float64)
        coords = np.argwhere(a != 0).astype(np.int64)  # (nnz, ndim), also for a scalar
        values = a[tuple(coords.T)] if a.ndim else a.reshape(-1)[: coords.shape[0]]
        return cls(tuple(int(s) for s in a.shape), coords, np.asarray(values, np.float64), True)

    @classmethod
    def of_array(cls, a: np.ndarray) -> "RawTensor":
        """A dense array whose entries are listed only if a conversion needs them."""
        return cls(tuple(int(s) for s in a.shape), None, None, True, a)

    def listed(self) -> "RawTensor":
        """This tensor with its coords and values listed."""
        return self if self.coords is not None else RawTensor.from_array(self.array)

    @classmethod
    def from_fiber(cls, t: FiberTensor) -> "RawTensor":
        """Stored entries of a fiber tensor (element granularity, blocks expanded)."""
        coords, vals = t.element_coo()
        dense = t.format.is_dense
        if dense:
            nz = vals != 0
            coords, vals = coords[nz], vals[nz]
        return cls(t.shape, coords.astype(np.int64), np.asarray(vals, np.float64), dense)


def _check_values(path: Path, values: np.ndarray) -> np.ndarray:
    """Values must be real and finite; returned as float64."""
    if values.dtype.kind == "c":
        raise _err(path, "complex values are not supported")
    if values.dtype.kind not in "biuf":
        raise _err(path, f"values of type {values.dtype} are not numbers")
    v = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(v)
    if bad.any():
        what = "NaN" if np.isnan(v[bad]).any() else "infinite"
        raise _err(path, f"holds {int(bad.sum())} {what} value(s); inputs must be finite")
    return v


def _sum_duplicates(shape, coords: np.ndarray, values: np.ndarray):
    """Sort stored entries row-major and sum duplicates (the result stays stored even if 0)."""
    order = len(shape)
    if coords.shape[0] == 0 or order == 0:
        if order == 0 and coords.shape[0] > 1:
            return coords[:1], np.array([values.sum()])
        return coords, values
    keys = np.ravel_multi_index(tuple(coords.T), shape) if math.prod(shape) < 2**62 else None
    if keys is None:
        idx = np.lexsort(coords.T[::-1])
        coords, values = coords[idx], values[idx]
        new = np.ones(coords.shape[0], bool)
        new[1:] = (coords[1:] != coords[:-1]).any(axis=1)
    else:
        if not (keys[1:] >= keys[:-1]).all():  # a CSR matrix's entries are sorted already
            idx = np.argsort(keys, kind="stable")
            coords, values, keys = coords[idx], values[idx], keys[idx]
        new = np.ones(coords.shape[0], bool)
        new[1:] = keys[1:] != keys[:-1]
    if new.all():
        return coords, values
    group = np.cumsum(new) - 1
    summed = np.zeros(int(group[-1]) + 1)
    np.add.at(summed, group, values)
    return coords[new], summed


# ---- readers ------------------------------------------------------------------------------------
def _read_npy(path: Path) -> RawTensor:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy warns about odd headers before failing
            a = np.load(path, allow_pickle=False)
    # numpy's header parser raises many kinds of exceptions for a corrupt file (ValueError,
    # EOFError, tokenize errors, MemoryError for absurd shapes): all mean the same to a user.
    except Exception as e:
        raise _err(path, f"unreadable or corrupt .npy file ({type(e).__name__}: {e})") from None
    if not isinstance(a, np.ndarray):
        if hasattr(a, "close"):
            a.close()
        raise _err(path, "not a .npy array (is it an .npz archive?)")
    _check_values(path, a)
    return RawTensor.of_array(a)


_SCIPY_KEYS = {"format", "shape"}


def _read_npz(path: Path, name: str) -> RawTensor:
    try:
        with warnings.catch_warnings(), np.load(path, allow_pickle=False) as z:
            warnings.simplefilter("ignore")
            if not hasattr(z, "files"):
                raise _err(path, "not an .npz archive (is it an .npy file?)")
            keys = set(z.files)
            if _SCIPY_KEYS <= keys and ("data" in keys or "indptr" in keys):
                return _read_scipy_npz(path)
            if {"coords", "values", "shape"} <= keys:
                return _read_coo_npz(path, z["coords"], z["values"], z["shape"])
            for key in ("arr_0", name):
                if key in keys:
                    a = z[key]
                    _check_values(path, a)
                    return RawTensor.from_array(a)
    except UserError:
        raise
    except Exception as e:  # zip, zlib and numpy header errors of every kind: a corrupt file
        raise _err(path, f"unreadable or corrupt .npz file ({type(e).__name__}: {e})") from None
    raise _err(path, "no tensor in this .npz archive: expected a scipy.sparse matrix "
                     f"(scipy.sparse.save_npz), a dense array under key 'arr_0' or '{name}', or "
                     f"a COO archive with keys coords, values, shape; it has keys "
                     f"{', '.join(sorted(keys)) or '(none)'}")


def _read_scipy_npz(path: Path) -> RawTensor:
    import scipy.sparse as sp

    try:
        m = sp.load_npz(path)
        # load_npz trusts indptr and indices; scipy's C++ code then reads out of bounds (a
        # segfault or heap corruption, found by fuzzing): check the structure first
        if hasattr(m, "check_format"):
            m.check_format(full_check=True)
    except Exception as e:  # scipy raises a variety of errors for broken archives
        raise _err(path, f"unreadable or corrupt scipy.sparse .npz file ({e})") from None
    coo = m.tocoo()
    values = _check_values(path, np.asarray(coo.data))
    shape = tuple(int(s) for s in coo.shape)
    coords = np.stack([np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64)], axis=1)
    if coords.shape[0] and ((coords < 0).any() or (coords >= np.array(shape)).any()):
        raise _err(path, "has indices outside its shape")
    coords, values = _sum_duplicates(shape, coords, values)
    return RawTensor(shape, coords, values, False)


def _read_coo_npz(path: Path, coords, values, shape) -> RawTensor:
    shape = np.asarray(shape)
    if shape.ndim != 1 or shape.dtype.kind not in "iu" or (shape < 0).any():
        raise _err(path, "key 'shape' must be a 1-D array of non-negative integers")
    order = int(shape.shape[0])
    shape_t = tuple(int(s) for s in shape)
    coords = np.asarray(coords)
    values = np.asarray(values)
    if values.ndim != 1:
        raise _err(path, "key 'values' must be a 1-D array")
    nnz = values.shape[0]
    if coords.dtype.kind not in "iu":
        raise _err(path, f"key 'coords' must hold integers, not {coords.dtype}")
    if coords.size == 0 and nnz == 0:
        coords = np.zeros((0, order), np.int64)
    if coords.ndim != 2 or coords.shape != (nnz, order):
        raise _err(path, f"key 'coords' must have shape (nnz, order) = ({nnz}, {order}), "
                         f"not {_shape_text(coords.shape)}")
    coords = coords.astype(np.int64)
    values = _check_values(path, values)
    if nnz:
        bad = (coords < 0) | (coords >= np.array(shape_t, np.int64))
        if bad.any():
            row = int(np.argwhere(bad.any(axis=1))[0, 0])
            raise _err(path, f"entry {row} has coordinates {tuple(int(c) for c in coords[row])} "
                             f"outside shape {_shape_text(shape_t)}")
    coords, values = _sum_duplicates(shape_t, coords, values)
    return RawTensor(shape_t, coords, values, False)


def _read_mtx(path: Path) -> RawTensor:
    from .mtx import read_mtx

    mm = read_mtx(path)
    if mm.dense:
        return RawTensor.from_array(mm.array)
    coords = np.stack([mm.rows, mm.cols], axis=1)
    coords, values = _sum_duplicates(mm.shape, coords, mm.values)
    return RawTensor(mm.shape, coords, values, False)


# ---- finding files -------------------------------------------------------------------------------
def tensor_files(data_dir: Path) -> dict[str, list[str]]:
    """Tensors a directory seems to hold: name -> the file styles found for it."""
    out: dict[str, list[str]] = {}
    for p in sorted(Path(data_dir).iterdir()):
        if not p.is_file():
            continue
        if p.suffix in SINGLE_FILE_SUFFIXES:
            out.setdefault(p.stem, []).append(p.name)
        elif p.name.startswith(LEVEL_PREFIX) and p.name.endswith(LEVEL_MARK + "vals"):
            nm = p.name[len(LEVEL_PREFIX):-len(LEVEL_MARK + "vals")]
            out.setdefault(nm, []).append(f"{LEVEL_PREFIX}{nm}{LEVEL_MARK}*")
    return out


def find_tensor_file(data_dir: Path, name: str) -> Path:
    """The one file holding tensor `name` (for level files: the vals file)."""
    d = Path(data_dir)
    if not d.exists():
        raise UserError(f"{d}: data directory does not exist")
    if not d.is_dir():
        raise UserError(f"{d}: is not a directory")
    found = [d / f"{name}{suf}" for suf in SINGLE_FILE_SUFFIXES if (d / f"{name}{suf}").is_file()]
    levels = level_files_present(d, name)
    if levels:
        found.append(level_file(d, name, "vals"))
    if len(found) > 1:
        shown = [p.name if p.suffix in SINGLE_FILE_SUFFIXES else
                 f"{LEVEL_PREFIX}{name}{LEVEL_MARK}*" for p in found]
        raise UserError(f"{d}: tensor '{name}' is ambiguous: found {', '.join(shown)}; keep one")
    if not found:
        others = sorted(n for n in tensor_files(d) if n != name)
        held = ", ".join(others) if others else "no tensor files"
        raise UserError(f"{d}: no file for tensor '{name}' (looked for {name}.npy, {name}.npz, "
                        f"{name}.mtx, {LEVEL_PREFIX}{name}{LEVEL_MARK}*); the directory holds: "
                        f"{held}")
    return found[0]


def read_raw(path: Path, name: str) -> RawTensor:
    """Read one tensor file (or the level files named by their vals file) into a RawTensor."""
    path = Path(path)
    if path.suffix == ".npy":
        return _read_npy(path)
    if path.suffix == ".npz":
        return _read_npz(path, name)
    if path.suffix == ".mtx":
        return _read_mtx(path)
    m = LEVEL_FILE_RE.match(path.name)
    if m is None:
        raise _err(path, "not a tensor file: expected .npy, .npz, .mtx or a level file "
                         "tensor_<name>_mode_*")
    return RawTensor.from_fiber(read_level_files(path.parent, m.group(1)))


# ---- conversion ----------------------------------------------------------------------------------
def convert(raw: RawTensor, spec: TensorSpec, where: Path | str) -> FiberTensor:
    """Store `raw` in the spec's declared format (and block size); `where` names the file."""
    fmt = spec.format
    if len(raw.shape) != fmt.order:
        raise _err(where, f"holds a tensor of order {len(raw.shape)} {_shape_text(raw.shape)}, "
                          f"but '{spec.name}' is declared with {fmt.order} dim(s)")
    if raw.coords is None and not fmt.blocked and all(k == "dense" for k in fmt.kinds):
        return _dense_as_dense(raw, spec, where)
    raw = raw.listed()
    try:  # before any conversion allocates (blocks: at most one per entry)
        check_storage(spec.name, raw.shape, fmt, raw.coords.shape[0],
                      spec.block if fmt.blocked and spec.block else None)
    except UserError as e:
        raise _err(where, e.diagnostics[0].message) from None
    if not fmt.blocked:
        try:    # a fiber longer than a compressed(c) level's c: name the file
            return FiberTensor.from_coo(raw.shape, raw.coords, raw.values, fmt, name=spec.name)
        except UserError as e:
            raise _err(where, e.diagnostics[0].message) from None
    b = spec.block
    if b is None or b < 1:
        raise UserError(f"'{spec.name}' has blocked format {fmt.name()} but no block size")
    if len(raw.shape) != 2:
        raise _err(where, f"blocked format needs a matrix, found order {len(raw.shape)}")
    if raw.shape[0] % b or raw.shape[1] % b:
        raise _err(where, f"shape {_shape_text(raw.shape)} is not divisible by block size {b} "
                          f"of '{spec.name}'")
    bshape = (raw.shape[0] // b, raw.shape[1] // b)
    bc = raw.coords // b
    inner = raw.coords % b
    if bc.shape[0]:
        key = bc[:, 0] * max(bshape[1], 1) + bc[:, 1]
        uniq, inv = np.unique(key, return_inverse=True)
        blocks = np.zeros((uniq.shape[0], b, b))
        np.add.at(blocks, (inv, inner[:, 0], inner[:, 1]), raw.values)
        bcoords = np.stack([uniq // max(bshape[1], 1), uniq % max(bshape[1], 1)], axis=1)
    else:
        blocks = np.zeros((0, b, b))
        bcoords = np.zeros((0, 2), np.int64)
    return FiberTensor.from_coo(raw.shape, bcoords, blocks, fmt, b, spec.name)


def _dense_as_dense(raw: RawTensor, spec: TensorSpec, where: Path | str) -> FiberTensor:
    """A dense array stored in an all-dense format: its values in the format's storage order,
    as from_coo stores its listed entries (tests/data/test_dense_load.py), without listing
    them: a 736,389 x 128 feature matrix would take 2.3 GB as a list of entries."""
    fmt = spec.format
    try:
        check_storage(spec.name, raw.shape, fmt, math.prod(raw.shape))
    except UserError as e:
        raise _err(where, e.diagnostics[0].message) from None
    a = np.asarray(raw.array, dtype=np.float64)
    vals = np.ascontiguousarray(np.transpose(a, fmt.mode_order) if a.ndim else a).reshape(-1)
    levels = [Level("dense", raw.shape[m]) for m in fmt.mode_order]
    return FiberTensor(raw.shape, fmt, levels, vals)


def _check_against(raw: RawTensor, spec: TensorSpec, shape, where) -> None:
    if len(raw.shape) != spec.order:
        raise _err(where, f"holds a tensor of order {len(raw.shape)} {_shape_text(raw.shape)}, "
                          f"but '{spec.name}' is declared with {spec.order} dim(s)")
    for k, (got, want) in enumerate(zip(raw.shape, shape)):
        if want is not None and got != want:
            raise _err(where, f"has shape {_shape_text(raw.shape)} but '{spec.name}' expects "
                              f"size {want} in dim {k}")


def _as_vector_if_declared(raw: RawTensor, spec: TensorSpec, path: Path) -> RawTensor:
    """Matrix Market has no vectors: an n x 1 or 1 x n .mtx declared as a vector is one."""
    if path.suffix == ".mtx" and spec.order == 1 and len(raw.shape) == 2 and 1 in raw.shape:
        keep = 0 if raw.shape[1] == 1 else 1
        return RawTensor((raw.shape[keep],), raw.coords[:, keep:keep + 1], raw.values, raw.dense)
    return raw


def load_tensor(path: Path, spec: TensorSpec, shape: tuple[int | None, ...] | None = None
                ) -> FiberTensor:
    """Read one tensor file and store it in the spec's declared format.

    `path` is a .npy/.npz/.mtx file or a level file of the tensor (any `tensor_<name>_mode_*`);
    `shape` gives the expected size of each dim, None where any size is fine.
    """
    path = Path(path)
    if not path.exists():
        raise _err(path, "no such file")
    raw = _as_vector_if_declared(read_raw(path, spec.name), spec, path)
    _check_against(raw, spec, shape or (None,) * spec.order, path)
    return convert(raw, spec, path)


def _dims_text(spec: TensorSpec) -> str:
    return "[" + ", ".join(str(d) for d in spec.dims) + "]"


def load_inputs(data_dir, specs: list[TensorSpec], sizes: dict[str, int] | None = None
                ) -> tuple[dict[str, FiberTensor], dict[str, int]]:
    """Load every spec'd tensor from `data_dir`, binding named dims consistently.

    Returns the tensors in their declared formats and the size of every named dim. A dim given as
    an int must match the file; a named dim takes its size from the first file that has it (or
    from `sizes`) and every later file must agree.
    """
    d = Path(data_dir)
    bound: dict[str, int] = {}
    origin: dict[str, str] = {}
    for k, v in (sizes or {}).items():
        bound[k] = int(v)
        origin[k] = "given"
    out: dict[str, FiberTensor] = {}
    for spec in specs:
        path = find_tensor_file(d, spec.name)
        shown = path.name if path.suffix in SINGLE_FILE_SUFFIXES else \
            f"{LEVEL_PREFIX}{spec.name}{LEVEL_MARK}*"
        where = d / shown
        raw = _as_vector_if_declared(read_raw(path, spec.name), spec, path)
        if len(raw.shape) != spec.order:
            kinds = {0: "a scalar", 1: "a vector", 2: "a matrix"}
            got = kinds.get(len(raw.shape), f"an order-{len(raw.shape)} tensor")
            want = kinds.get(spec.order, f"an order-{spec.order} tensor")
            raise _err(where, f"holds {got} of shape {_shape_text(raw.shape)}, but "
                              f"'{spec.name}' is declared {_dims_text(spec)}, {want}")
        local: dict[str, int] = {}
        for k, (dim, got) in enumerate(zip(spec.dims, raw.shape)):
            if isinstance(dim, int):
                if got != dim:
                    raise _err(where, f"has shape {_shape_text(raw.shape)} but '{spec.name}' is "
                                      f"declared {_dims_text(spec)}: dim {k} must be {dim}")
                continue
            if dim in bound and bound[dim] != got:
                src = "given" if origin[dim] == "given" else f"from {origin[dim]}"
                raise _err(where, f"has shape {_shape_text(raw.shape)} but '{spec.name}' is "
                                  f"declared {_dims_text(spec)} and {dim} = {bound[dim]} {src}")
            if dim in local and local[dim] != got:
                raise _err(where, f"has shape {_shape_text(raw.shape)} but '{spec.name}' is "
                                  f"declared {_dims_text(spec)}: both uses of {dim} must have "
                                  f"the same size")
            local[dim] = got
        for dim, got in local.items():
            if dim not in bound:
                bound[dim] = got
                origin[dim] = shown
        out[spec.name] = convert(raw, spec, where)
    return out, bound


# ---- writing -------------------------------------------------------------------------------------
def tensor_to_scipy(t: FiberTensor):
    """A 2-D tensor as a scipy.sparse matrix keeping its stored entries (explicit zeros too):
    CSC when its mode order is column-major, BSR when blocked, else CSR."""
    import scipy.sparse as sp

    if t.block is not None:
        coords, blocks = t.to_coo()
        b = t.block
        nbr = t.shape[0] // b
        order = np.lexsort((coords[:, 1], coords[:, 0])) if coords.shape[0] else np.zeros(0, int)
        coords, blocks = coords[order], np.asarray(blocks)[order]
        indptr = np.zeros(nbr + 1, np.int64)
        np.cumsum(np.bincount(coords[:, 0], minlength=nbr), out=indptr[1:])
        return sp.bsr_matrix((blocks.reshape(-1, b, b), coords[:, 1].astype(np.int64), indptr),
                             shape=t.shape, blocksize=(b, b))
    coords, vals = t.to_coo()
    coo = sp.coo_matrix((vals, (coords[:, 0], coords[:, 1])), shape=t.shape)
    # coo -> csr/csc sums duplicates (there are none) and keeps explicit zeros.
    return coo.tocsc() if t.format.mode_order == (1, 0) else coo.tocsr()


#: Sparse files with more stored entries than this are written without zlib compression (the
#: same arrays, read the same way; compressing MAG-size matrices takes most of a minute).
COMPRESS_MAX_NNZ = 1 << 22


def _sparse_like(fmt: Format) -> Format:
    return Format(("compressed",) * fmt.order, fmt.mode_order, False)


def _save_one(d: Path, name: str, t: FiberTensor, style: str) -> Path:
    dense_fmt = t.format.is_dense
    if style == "auto":
        style = "npy" if dense_fmt or t.order == 0 else "npz"
    if style == "npy":
        p = d / f"{name}.npy"
        np.save(p, t.to_dense())
        return p
    if style == "npz":
        p = d / f"{name}.npz"
        if dense_fmt and t.order:
            # A dense tensor's file means the same in every style: its non-zeros are what a
            # compressed format will store (as for .npy and all-dense level files).
            t = FiberTensor.from_dense(t.to_dense(), _sparse_like(t.format))
        if t.order == 2:
            import scipy.sparse as sp

            # zlib runs at tens of MB/s: graphs of the paper's sizes are written uncompressed
            sp.save_npz(p, tensor_to_scipy(t), compressed=t.nnz <= COMPRESS_MAX_NNZ)
        else:
            # Every stored entry is written, explicit zeros included, so the pattern survives.
            coords, vals = t.to_coo()
            save = np.savez_compressed if t.nnz <= COMPRESS_MAX_NNZ else np.savez
            save(p, coords=np.asarray(coords, np.int64),
                                values=np.asarray(vals, np.float64),
                                shape=np.array(t.shape, dtype=np.int64))
        return p
    if style == "sam":
        return write_level_files(d, name, t)[-1]
    raise ValueError(f"unknown save style {style!r}; expected one of {', '.join(SAVE_STYLES)}")


def save_tensors(out_dir, tensors: dict[str, FiberTensor], style: str = "auto",
                 atomic: bool = False) -> list[Path]:
    """Write each tensor into `out_dir`, one file (or level-file set) per tensor, in sorted name
    order; returns the paths written (for level files: the vals file).

    style: `auto` (dense formats and scalars -> .npy, matrices -> scipy .npz (CSR, CSC, or BSR
    for blocked formats), other sparse orders -> COO .npz), `npy`, `npz`, or `sam` (level files).
    With `atomic`, `out_dir` is written as a whole: it appears (replacing any old directory) only
    once every tensor is written. Without it `out_dir` must exist.
    """
    if style not in SAVE_STYLES:
        raise UserError(f"unknown data file style '{style}'; expected one of "
                        f"{', '.join(SAVE_STYLES)}")
    if atomic:
        with output_dir(str(out_dir)) as tmp:
            written = _save_all(tmp, tensors, style)
        return [Path(out_dir) / p.name for p in written]
    d = Path(out_dir)
    if not d.is_dir():
        raise UserError(f"{d}: output directory does not exist")
    return _save_all(d, tensors, style)


def _save_all(d: Path, tensors: dict[str, FiberTensor], style: str) -> list[Path]:
    out = []
    for name in sorted(tensors):
        try:
            out.append(_save_one(d, name, tensors[name], style))
        except OSError as e:
            raise UserError(f"{d}: cannot write tensor '{name}': {e.strerror or e}") from None
    return out


def write_data_dir(out_dir, tensors: dict[str, FiberTensor], style: str = "auto") -> list[Path]:
    """Write a whole data directory atomically (see `save_tensors`)."""
    return save_tensors(out_dir, tensors, style, atomic=True)


# ---- in-memory sources -----------------------------------------------------------------------
def tensor_from_array(a, spec: TensorSpec) -> FiberTensor:
    """A dense array stored in the spec's format (compressed levels keep its non-zeros)."""
    a = np.asarray(a)
    _check_values(spec.name, a)
    raw = RawTensor.from_array(a)
    return convert(raw, spec, spec.name)


def tensor_from_scipy(m, spec: TensorSpec) -> FiberTensor:
    """A scipy.sparse matrix stored in the spec's format: its stored entries (duplicates summed,
    explicit zeros kept) are the entries a compressed format stores."""
    coo = m.tocoo()
    values = _check_values(spec.name, np.asarray(coo.data))
    shape = tuple(int(s) for s in coo.shape)
    coords = np.stack([np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64)], axis=1)
    coords, values = _sum_duplicates(shape, coords, values)
    return convert(RawTensor(shape, coords, values, False), spec, spec.name)
