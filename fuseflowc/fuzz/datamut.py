"""Mutations of a data directory (the files `run`, `simulate` and `estimate` read with --data).

A mutation picks one file of the directory (or the directory itself) and makes it wrong in one
way a user or a broken tool could: a corrupt or lying .npy header (an absurd shape, another
dtype), an array of the wrong shape, dtype (ints, bools, complex, float16, big-endian, objects,
strings) or with NaN / inf / huge values; a scipy .npz archive with a missing key, indices out of
range or unsorted, a decreasing indptr, a wrong shape or format, or a broken zip; the tensor as
Matrix Market text, then perhaps mutated as text; a missing, empty, extra or duplicate file
(`x.npy` beside `x.npz`); a directory, a FIFO, or a symbolic link (to /dev/zero, to a directory,
dangling, to itself) where a file is expected. Archives are written with fixed timestamps, so the
same seed gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import random
import zipfile

import numpy as np

from .sandbox import Entry, Special
from .textmut import NUMBERS, TextMutator

ODD_DTYPES = ("<i8", "<i4", "|b1", "<c16", "<f2", "<f4", ">f8", "<U3", "|S2", "<M8[s]")
ODD_VALUES = (np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324, -0.0)
HUGE_SHAPES = ((10**12,), (10**6, 10**6), (2**62, 2), (0,), (), (1, 1, 1, 1, 1, 1, 1, 1))


def npy_bytes(a: np.ndarray) -> bytes:
    """`a` as .npy file bytes (objects pickled, as numpy does when allowed)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=True)
    return buf.getvalue()


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed .npz archive of `arrays` (keys sorted, timestamps fixed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k in sorted(arrays):
            z.writestr(zipfile.ZipInfo(k + ".npy", date_time=(1980, 1, 1, 0, 0, 0)),
                       npy_bytes(arrays[k]))
    return buf.getvalue()


def _load_npy(data: bytes) -> np.ndarray | None:
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except Exception:  # noqa: BLE001 - an already-mutated file
        return None


def _load_npz(data: bytes) -> dict[str, np.ndarray] | None:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except Exception:  # noqa: BLE001
        return None


def _npy_body(data: bytes) -> bytes:
    """The array bytes of a .npy file (what follows its header)."""
    if data[6:7] == b"\x01":
        return data[10 + int.from_bytes(data[8:10], "little"):]
    return data[12 + int.from_bytes(data[8:12], "little"):]


def _header_with(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """The .npy bytes with a header that lies about shape, dtype or order (data unchanged)."""
    a = _load_npy(data)
    if a is None:
        return data[:rng.randrange(len(data) + 1)], "truncate a broken .npy"
    body = _npy_body(data)
    d = {"descr": np.lib.format.dtype_to_descr(a.dtype), "fortran_order": False,
         "shape": a.shape}
    what = rng.choice(("shape", "descr", "fortran", "garbage"))
    if what == "shape":
        d["shape"] = rng.choice(HUGE_SHAPES + (a.shape[::-1], a.shape + (2,)))
    elif what == "descr":
        d["descr"] = rng.choice(ODD_DTYPES)
    elif what == "fortran":
        d["fortran_order"] = True
    else:
        head = repr(d).encode()
        k = rng.randrange(len(head))
        head = head[:k] + rng.choice((b"(", b"'", b"}", b"\x00", b"9" * 40, b"__import__")) + \
            head[k:]
        return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + body, \
            "garbage in the .npy header"
    head = repr(d).encode() + b"\n"
    head += b" " * (-(10 + len(head)) % 64)
    key = {"shape": "shape", "descr": "descr"}.get(what, "fortran_order")
    return (b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + body,
            f"npy header {key} = {d[key]!r}")


def _odd_array(a: np.ndarray, rng: random.Random) -> tuple[np.ndarray, str]:
    """`a` with another shape, dtype or some odd values."""
    if a.dtype.kind not in "biufc":  # text (a scipy archive's format) or objects
        return np.array([np.nan, 1.0]), f"{a.dtype} replaced by [nan, 1]"
    what = rng.choice(("shape", "dtype", "values", "values", "empty", "objects"))
    if what == "shape":
        how = rng.choice(("T", "extra", "drop", "scalar", "flat", "grow"))
        if how == "T":
            return a.T.copy(), "transposed"
        if how == "extra":
            return a[..., None], "an extra axis"
        if how == "drop" and a.ndim:
            return a.reshape(-1)[: max(1, a.shape[0])], "an axis dropped"
        if how == "scalar":
            return np.asarray(a.reshape(-1)[0] if a.size else 0.0), "a scalar"
        if how == "grow":
            return np.concatenate([a, a]) if a.ndim else a, "twice as long"
        return a.reshape(-1), "flattened"
    if what == "dtype":
        dt = rng.choice(ODD_DTYPES)
        try:
            return a.astype(dt), f"dtype {dt}"
        except (TypeError, ValueError):
            return a.astype("<c16"), "dtype complex"
    if what == "values":
        b = a.astype(np.float64, copy=True)
        if b.size:
            flat = b.reshape(-1)
            v = rng.choice(ODD_VALUES)
            idx = [rng.randrange(flat.size) for _ in range(rng.randint(1, 3))]
            flat[idx] = v
            return b, f"value {v} at {idx}"
        return b, "no values"
    if what == "empty":
        return np.zeros((0,) * max(a.ndim, 1)), "empty"
    return np.array([[1.0, "x"]], dtype=object), "an object array"


def _mutate_npy(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.35:
        return _header_with(data, rng)
    a = _load_npy(data)
    if a is None:
        return data + b"\x00", "a broken .npy grown"
    b, what = _odd_array(a, rng)
    return npy_bytes(b), what


def _mutate_npz(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    arrays = _load_npz(data)
    if arrays is None or rng.random() < 0.15:
        k = rng.randrange(len(data) + 1)
        if rng.random() < 0.5:
            return data[:k], f"archive truncated at {k}"
        b = bytearray(data)
        for _ in range(4):
            if b:
                b[rng.randrange(len(b))] ^= 0xFF
        return bytes(b), "archive bytes flipped"
    key = rng.choice(sorted(arrays))
    what = rng.choice(("drop", "indices", "indptr", "shape", "format", "array", "member",
                       "huge"))
    a = arrays[key]
    if what == "drop":
        del arrays[key]
        note = f"key {key} removed"
    elif what == "indices" and "indices" in arrays and arrays["indices"].size:
        ind = arrays["indices"].astype(np.int64)
        ind[rng.randrange(ind.size)] = rng.choice((-1, 10**9, 2**40, int(ind.max()) + 1))
        if rng.random() < 0.5:
            ind = ind[::-1].copy()
        arrays["indices"] = ind
        note = "indices out of range or unsorted"
    elif what == "indptr" and "indptr" in arrays and arrays["indptr"].size > 1:
        p = arrays["indptr"].astype(np.int64)
        k = rng.randrange(p.size)
        p[k] = rng.choice((-5, 0, int(p[-1]) + 7, 10**12))
        arrays["indptr"] = p
        note = f"indptr[{k}] = {p[k]}"
    elif what == "shape" and "shape" in arrays:
        arrays["shape"] = np.array(rng.choice(((10**12, 3), (-1, 4), (3,), (1, 1, 1), (0, 0),
                                               (2**62, 2**62))), dtype=np.int64)
        note = f"shape {tuple(arrays['shape'])}"
    elif what == "format" and "format" in arrays:
        arrays["format"] = np.array(rng.choice((b"csc", b"coo", b"bsr", b"dia", b"xyz", b"")))
        note = f"format {arrays['format']!r}"
    elif what == "huge":
        arrays[key] = np.zeros(0)
        buf = npz_bytes(arrays)
        head = repr({"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
        head = head.encode() + b"\n"
        head += b" " * (-(10 + len(head)) % 64)
        member = b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + b"\0" * 64
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(buf)) as zin, zipfile.ZipFile(out, "w") as zout:
            for info in zin.infolist():
                payload = member if info.filename == key + ".npy" else zin.read(info)
                zout.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)),
                              payload)
        return out.getvalue(), f"member {key} claims shape 10^6 x 10^6"
    elif what == "member":
        arrays[rng.choice(("extra", "arr_0", "coords", "values"))] = np.arange(3)
        note = "an extra member"
    else:
        b, note = _odd_array(a, rng)
        arrays[key] = b
        note = f"{key}: {note}"
    return npz_bytes(arrays), note


def _as_mtx(data: bytes, suffix: str) -> bytes | None:
    """A tensor file (.npy or scipy .npz matrix) as Matrix Market coordinate text."""
    if suffix == ".npy":
        a = _load_npy(data)
        if a is None or a.ndim not in (1, 2):
            return None
        a = a.reshape(a.shape[0], -1) if a.ndim == 2 else a.reshape(-1, 1)
        rows, cols = np.nonzero(a)
        vals, shape = a[rows, cols], a.shape
    else:
        arrays = _load_npz(data)
        if not arrays or "indptr" not in arrays or "shape" not in arrays:
            return None
        import scipy.sparse as sp
        try:
            m = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                              shape=tuple(arrays["shape"])).tocoo()
        except Exception:  # noqa: BLE001
            return None
        rows, cols, vals, shape = m.row, m.col, m.data, m.shape
    lines = ["%%MatrixMarket matrix coordinate real general",
             f"{shape[0]} {shape[1]} {len(vals)}"]
    lines += [f"{r + 1} {c + 1} {float(v)!r}" for r, c, v in zip(rows, cols, vals)]
    return ("\n".join(lines) + "\n").encode()


MTX_BANNERS = (b"%%MatrixMarket matrix coordinate pattern general",
               b"%%MatrixMarket matrix coordinate integer symmetric",
               b"%%MatrixMarket matrix coordinate complex hermitian",
               b"%%MatrixMarket matrix coordinate real skew-symmetric",
               b"%%MatrixMarket matrix array real general", b"%%MatrixMarket tensor coordinate",
               b"%MatrixMarket matrix coordinate real general", b"")


def _mutate_mtx(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    lines = data.split(b"\n")
    r = rng.random()
    if r < 0.3 and lines:
        lines[0] = rng.choice(MTX_BANNERS)
        return b"\n".join(lines), f"banner {lines[0][:40]!r}"
    if r < 0.5 and len(lines) > 1:
        lines[1] = " ".join(rng.choice(NUMBERS) if rng.random() < 0.5 else w
                            for w in lines[1].decode(errors="replace").split()).encode()
        return b"\n".join(lines), f"size line {lines[1][:40]!r}"
    return TextMutator("mtx", rng).mutate(data)


def _structure(files: dict[str, Entry], d: str, rng: random.Random) -> str:
    """A missing, empty, extra, duplicate or special file in data dir `d`; edits `files`."""
    names = sorted(p for p in files if p.startswith(d + "/"))
    what = rng.choice(("remove", "empty", "extra", "duplicate", "rename", "dir", "fifo",
                       "link-zero", "link-dir", "link-dangling", "link-loop", "dir-missing",
                       "dir-file", "dir-empty", "dir-link"))
    if what.startswith("dir-"):
        for p in names:
            del files[p]
        if what == "dir-file":
            files[d] = b"not a directory\n"
        elif what == "dir-empty":
            files[d] = Special("dir")
        elif what == "dir-link":
            files[d] = Special("symlink", d.rsplit("/", 1)[-1])
        return f"data directory: {what[4:]}"
    if not names:
        files[d + "/x.npy"] = b""
        return "an empty x.npy in an empty data directory"
    p = rng.choice(names)
    stem, _, suffix = p.rpartition(".")
    if what == "remove":
        del files[p]
    elif what == "empty":
        files[p] = b""
    elif what == "extra":
        files[d + "/" + rng.choice(("README.txt", ".hidden", "junk.npy", "zz.npz", "q.mtx",
                                    "tensor_A_mode_0_crd"))] = rng.choice((b"", b"\x00" * 9,
                                                                           npy_bytes(np.eye(2))))
    elif what == "duplicate":
        other = rng.choice([s for s in ("npy", "npz", "mtx") if s != suffix])
        files[f"{stem}.{other}"] = files[p] if isinstance(files[p], bytes) else b""
    elif what == "rename":
        files[p.rpartition("/")[0] + "/" + p.rpartition("/")[2].swapcase()] = files.pop(p)
    elif what == "dir":
        files[p] = Special("dir")
    elif what == "fifo":
        files[p] = Special("fifo")
    elif what == "link-zero":
        files[p] = Special("symlink", "/dev/zero")
    elif what == "link-dir":
        files[p] = Special("symlink", ".")
    elif what == "link-dangling":
        files[p] = Special("symlink", "no-such-file")
    else:
        files[p] = Special("symlink", p.rpartition("/")[2])
    return f"{p}: {what}"


def mutate_data(files: dict[str, Entry], d: str, rng: random.Random) -> str:
    """Mutate data directory `d` (a path in `files`) in place; returns what was done."""
    names = sorted(p for p in files if p.startswith(d + "/") and isinstance(files[p], bytes))
    if not names or rng.random() < 0.25:
        return _structure(files, d, rng)
    p = rng.choice(names)
    data = files[p]
    if p.endswith(".npy") or p.endswith(".npz"):
        if rng.random() < 0.15:
            mtx = _as_mtx(data, p[-4:])
            if mtx is not None:
                del files[p]
                q = p[:-4] + ".mtx"
                if rng.random() < 0.6:
                    mtx, note = _mutate_mtx(mtx, rng)
                    files[q] = mtx
                    return f"{p} as Matrix Market, {note}"
                files[q] = mtx
                return f"{p} as Matrix Market"
    files[p], note = mutate_file(p, data, rng)
    return f"{p}: {note}"


def _mutate_gzip(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A gzip-compressed text (OGB's .csv.gz): its text mutated and recompressed (fixed
    timestamp), or the compressed bytes broken."""
    try:
        text = gzip.decompress(data)
    except (OSError, EOFError):
        text = None
    if text is None or rng.random() < 0.2:
        k = rng.randrange(len(data) + 1)
        return (data[:k], f"gzip truncated at {k}") if rng.random() < 0.5 else \
            (data[:k] + b"\xff" + data[k + 1:], f"gzip byte {k} replaced")
    text, note = TextMutator("csv", rng).mutate(text)
    return gzip.compress(text, mtime=0), f"(inside gzip) {note}"


def mutate_file(path: str, data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One file of a data set mutated by its kind (.npy, .npz, .mtx, .gz, else text)."""
    if path.endswith(".npy"):
        return _mutate_npy(data, rng)
    if path.endswith(".npz"):
        return _mutate_npz(data, rng)
    if path.endswith(".mtx"):
        return _mutate_mtx(data, rng)
    if path.endswith(".gz"):
        return _mutate_gzip(data, rng)
    return TextMutator("level", rng).mutate(data)  # SAM level files and CSV are text


def mutate_tree(files: dict[str, Entry], d: str, rng: random.Random) -> str:
    """Mutate one file under directory `d` (any depth), or its structure; returns what."""
    names = sorted(p for p in files if p.startswith(d + "/") and isinstance(files[p], bytes))
    if not names or rng.random() < 0.25:
        return _structure(files, d, rng)
    p = rng.choice(names)
    files[p], note = mutate_file(p, files[p], rng)
    return f"{p}: {note}"
