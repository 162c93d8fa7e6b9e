"""A strict Matrix Market reader with located errors.

scipy.io.mmread (fast_matrix_market) crashes the interpreter on some malformed files (a file cut
off in the middle of a number is enough), and user data files must never do that; so fuseflowc
reads Matrix Market itself. Semantics follow scipy.io.mmread: `coordinate` files give their
entries (1-based indices), `array` files a dense matrix (column-major); `pattern` entries are 1.0;
`symmetric` files are expanded to both triangles (`skew-symmetric` with negated values,
`hermitian` real files like symmetric); `complex` files are refused. Duplicate coordinates are
returned as they are (the caller sums them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..diagnostics import UserError

FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "integer", "pattern", "complex")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


@dataclass
class MatrixMarket:
    """The content of a Matrix Market file: `shape`; for coordinate files `rows`, `cols`
    (0-based, int64) and `values` (float64) after symmetric expansion; for array files `array`."""

    shape: tuple[int, int]
    rows: np.ndarray | None = None
    cols: np.ndarray | None = None
    values: np.ndarray | None = None
    array: np.ndarray | None = None

    @property
    def dense(self) -> bool:
        return self.array is not None


def _err(path, lineno: int | None, msg: str) -> UserError:
    where = f"{path}:{lineno}" if lineno else f"{path}"
    return UserError(f"{where}: {msg}")


def read_mtx(path) -> MatrixMarket:
    """Read and check a Matrix Market file (see the module docstring)."""
    path = Path(path)
    lines = _read_lines(path)
    fmt, field, sym = _header(path, lines)
    # Data lines: everything after the header that is neither a comment nor blank.
    data = [(i, ln) for i, ln in enumerate(lines[1:], 2) if ln.strip() and
            not ln.lstrip().startswith("%")]
    if not data:
        raise _err(path, len(lines), "missing the size line")
    size_no, size_line = data[0]
    body = data[1:]
    m, n, count, per = _sizes(path, size_no, size_line, fmt, field, sym)
    if len(body) != count:
        last = body[-1][0] if body else size_no
        raise _err(path, last, f"expected {count} entries after the size line, found "
                               f"{len(body)}")
    table = _table(path, body, count, per)
    vals = _values(path, body, table, field, count, per)
    if fmt == "array":
        return MatrixMarket((m, n), array=_dense(vals, m, n, sym))
    return _coordinates(path, body, table, vals, m, n, sym)


def _read_lines(path: Path) -> list[str]:
    """The file's lines (UTF-8 text)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise _err(path, None, "not a Matrix Market file (not UTF-8 text)") from None
    except OSError as e:
        raise _err(path, None, f"cannot read: {e.strerror}") from None
    return text.splitlines()


def _header(path: Path, lines: list[str]) -> tuple[str, str, str]:
    """The header's format, field and symmetry (lower case), checked."""
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        raise _err(path, 1, "not a Matrix Market file: the first line must start with "
                            "%%MatrixMarket")
    head = lines[0].split()
    if len(head) != 5 or head[1].lower() != "matrix":
        raise _err(path, 1, "header must read '%%MatrixMarket matrix <format> <field> "
                            "<symmetry>'")
    fmt, field, sym = (h.lower() for h in head[2:])
    for value, allowed, what in ((fmt, FORMATS, "format"), (field, FIELDS, "field"),
                                 (sym, SYMMETRIES, "symmetry")):
        if value not in allowed:
            raise _err(path, 1, f"unknown {what} '{value}' (expected {', '.join(allowed)})")
    if field == "complex":
        raise _err(path, 1, "complex values are not supported")
    if fmt == "array" and field == "pattern":
        raise _err(path, 1, "an array file cannot have the pattern field")
    return fmt, field, sym


def _sizes(path: Path, size_no: int, size_line: str, fmt: str, field: str,
           sym: str) -> tuple[int, int, int, int]:
    """(rows, columns, entries, numbers per entry line) from the size line."""
    want = 3 if fmt == "coordinate" else 2
    sizes = size_line.split()
    try:
        nums = [int(s) for s in sizes]
    except ValueError:
        nums = []
    if len(nums) != want or min(nums) < 0:
        what = "rows columns entries" if fmt == "coordinate" else "rows columns"
        raise _err(path, size_no, f"size line must hold {want} non-negative integers "
                                  f"({what}), found {size_line.strip()[:60]!r}")
    m, n = nums[0], nums[1]
    if sym != "general" and m != n:
        raise _err(path, size_no, f"a {sym} matrix must be square, not {m} x {n}")
    if fmt == "array":
        count = (m * n if sym == "general" else
                 n * (n + 1) // 2 if sym in ("symmetric", "hermitian") else n * (n - 1) // 2)
        return m, n, count, 1
    return m, n, nums[2], 2 if field == "pattern" else 3


def _table(path: Path, body: list, count: int, per: int) -> np.ndarray:
    """The entry lines' numbers as text, one row per entry (`per` numbers on every line)."""
    tokens = " ".join(ln for _, ln in body).split()
    if len(tokens) != count * per:
        for lineno, ln in body:
            if len(ln.split()) != per:
                raise _err(path, lineno, f"expected {per} number(s) per line, found "
                                         f"{ln.strip()[:60]!r}")
    return np.array(tokens, dtype=str).reshape(count, per)


def _column(path: Path, body: list, table: np.ndarray, k: int, integer: bool) -> np.ndarray:
    """Column k of the table as int64 or float64; the first bad number is located."""
    try:
        return table[:, k].astype(np.int64 if integer else np.float64)
    except (ValueError, OverflowError):
        for row, (lineno, _line) in enumerate(body):
            tok = table[row, k]
            try:
                x = int(tok) if integer else float(tok)
                if integer and not -2**63 <= x < 2**63:
                    raise ValueError
            except ValueError:
                want_t = "an integer" if integer else "a number"
                raise _err(path, lineno, f"expected {want_t}, found {tok[:40]!r}") from None
        raise  # unreachable: some token failed above


def _values(path: Path, body: list, table: np.ndarray, field: str, count: int,
            per: int) -> np.ndarray:
    """The entries' values (ones for a pattern), finite."""
    vals_k = per - 1 if field != "pattern" else None
    if vals_k is None:
        vals = np.ones(count)
    elif field == "integer":
        vals = _column(path, body, table, vals_k, True).astype(np.float64)
    else:
        vals = _column(path, body, table, vals_k, False)
    bad = ~np.isfinite(vals)
    if bad.any():
        k = int(np.argmax(bad))
        raise _err(path, body[k][0], f"value {table[k, vals_k]} is not finite; inputs must be "
                                     f"finite")
    return vals


def _dense(vals: np.ndarray, m: int, n: int, sym: str) -> np.ndarray:
    """An array file's values as a dense m x n matrix (column-major; a symmetric kind gives
    its lower triangle)."""
    a = np.zeros((m, n))
    if sym == "general":
        a[:] = vals.reshape(n, m).T  # column-major
    else:
        # Lower triangle (with the diagonal unless skew), column by column.
        strict = sym == "skew-symmetric"
        # Column-major lower triangle = the transpose of the row-major upper triangle.
        jj_a, ii_a = np.triu_indices(n, 1 if strict else 0)
        a[ii_a, jj_a] = vals
        a[jj_a, ii_a] = -vals if strict else vals
    return a


def _coordinates(path: Path, body: list, table: np.ndarray, vals: np.ndarray, m: int, n: int,
                 sym: str) -> MatrixMarket:
    """A coordinate file's entries (0-based, inside the matrix), a symmetric kind's mirrored."""
    rows = _column(path, body, table, 0, True) - 1
    cols = _column(path, body, table, 1, True) - 1
    out = (rows < 0) | (rows >= m) | (cols < 0) | (cols >= n)
    if out.any():
        k = int(np.argmax(out))
        raise _err(path, body[k][0], f"entry ({rows[k] + 1}, {cols[k] + 1}) is outside the "
                                     f"{m} x {n} matrix (indices are 1-based)")
    if sym != "general":
        off = rows != cols
        if sym == "skew-symmetric" and (~off).any():
            k = int(np.argmax(~off))
            raise _err(path, body[k][0], "a skew-symmetric matrix has no diagonal entries")
        sign = -1.0 if sym == "skew-symmetric" else 1.0
        rows, cols, vals = (np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]]),
                            np.concatenate([vals, sign * vals[off]]))
    return MatrixMarket((m, n), rows=rows, cols=cols, values=vals)
