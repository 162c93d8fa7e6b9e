"""fuseflowc.data.mtx: agrees with scipy.io.mmread on well-formed files, refuses malformed ones
with located errors (scipy's reader can crash the interpreter on them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.mtx import read_mtx
from fuseflowc.diagnostics import UserError

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def as_dense(mm) -> np.ndarray:
    if mm.dense:
        return mm.array
    a = np.zeros(mm.shape)
    np.add.at(a, (mm.rows, mm.cols), mm.values)
    return a


@st.composite
def matrices(draw):
    sym = draw(st.sampled_from(["general", "symmetric", "skew-symmetric"]))
    m = draw(st.integers(0, 6))
    n = m if sym != "general" else draw(st.integers(0, 6))
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    field = draw(st.sampled_from(["real", "integer", "pattern"]))
    a = (rng.random((m, n)) < draw(st.sampled_from([0.0, 0.4, 1.0]))) * 1.0
    if field == "real":
        a = a * np.round(rng.uniform(-5, 5, (m, n)), 3)
    elif field == "integer":
        a = a * rng.integers(-9, 10, (m, n))
    if sym == "symmetric":
        a = np.tril(a) + np.tril(a, -1).T
    elif sym == "skew-symmetric":
        a = np.tril(a, -1) - np.tril(a, -1).T
    kind = draw(st.sampled_from(["coordinate", "array"]))
    if field == "pattern":
        kind = "coordinate"
    return a, sym, field, kind


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=matrices())
def test_agrees_with_scipy(tmp_path_factory, case):
    a, sym, field, kind = case
    p = tmp_path_factory.mktemp("mm") / "a.mtx"
    target = sp.coo_matrix(a) if kind == "coordinate" else a
    scipy.io.mmwrite(str(p), target, field=field, symmetry=sym)
    mm = read_mtx(p)
    assert mm.dense == (kind == "array")
    assert mm.shape == a.shape
    if a.size:  # scipy's reader dies of SIGFPE on an empty array file
        ref = scipy.io.mmread(str(p))
        ref = ref.toarray() if sp.issparse(ref) else np.asarray(ref)
        np.testing.assert_array_equal(as_dense(mm), ref)
    if field == "pattern":
        assert (np.abs(mm.values) == 1).all()  # skew-symmetric pattern: -1 mirrored, as scipy
    else:
        np.testing.assert_array_equal(as_dense(mm), a)


@pytest.mark.parametrize("name", ["jazz.mtx", "lp_ship04l.mtx", "1138_bus.mtx", "3elt.mtx"])
def test_shared_files_agree_with_scipy(name):
    p = DATA / name
    if not p.is_file():
        pytest.skip(f"{p} is absent")
    mm = read_mtx(p)
    ref = scipy.io.mmread(str(p)).tocoo()
    assert mm.shape == ref.shape and mm.values.shape[0] == ref.nnz
    got = sp.coo_matrix((mm.values, (mm.rows, mm.cols)), shape=mm.shape).tocsr()
    assert abs(got - ref.tocsr()).max() == 0 if ref.nnz else True


HEAD = "%%MatrixMarket matrix coordinate real general\n"


@pytest.mark.parametrize("text,msg", [
    ("", r"a.mtx:1: not a Matrix Market file"),
    ("hello\n", r"a.mtx:1: not a Matrix Market file"),
    ("%%MatrixMarket matrix coordinate real\n", "header must read"),
    ("%%MatrixMarket matrix sparse real general\n2 2 0\n", "unknown format 'sparse'"),
    ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n",
     "complex values are not supported"),
    (HEAD, r"a.mtx:1: missing the size line"),
    (HEAD + "% c\n2 x 1\n", r"a.mtx:3: size line must hold 3 non-negative integers"),
    (HEAD + "2 2 2\n1 1 1.0\n", r"a.mtx:3: expected 2 entries after the size line, found 1"),
    (HEAD + "2 2 1\n1 1 6.4E", r"a.mtx:3: expected a number, found '6.4E'"),
    (HEAD + "2 2 1\n1 1\n", r"a.mtx:3: expected 3 number\(s\) per line"),
    (HEAD + "2 2 1\n1.5 1 2\n", r"a.mtx:3: expected an integer, found '1.5'"),
    (HEAD + "2 2 1\n3 1 2\n", r"a.mtx:3: entry \(3, 1\) is outside the 2 x 2 matrix"),
    (HEAD + "2 2 1\n0 1 2\n", r"entry \(0, 1\) is outside"),
    (HEAD + "2 2 2\n1 1 2\n2 2 nan\n", r"a.mtx:4: value nan is not finite"),
    ("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "must be square, not 2 x 3"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
     "no diagonal entries"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", "expected 4 entries"),
    ("%%MatrixMarket matrix array pattern general\n1 1\n", "cannot have the pattern field"),
])
def test_errors(tmp_path, text, msg):
    (tmp_path / "a.mtx").write_text(text)
    with pytest.raises(UserError, match=msg):
        read_mtx(tmp_path / "a.mtx")


def test_not_text(tmp_path):
    (tmp_path / "a.mtx").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match="not UTF-8 text"):
        read_mtx(tmp_path / "a.mtx")


def test_blank_and_comment_lines_and_hermitian_real(tmp_path):
    (tmp_path / "a.mtx").write_text(
        "%%MatrixMarket matrix coordinate real hermitian\n% hi\n\n2 2 2\n1 1 1.5\n\n2 1 -2\n")
    np.testing.assert_array_equal(as_dense(read_mtx(tmp_path / "a.mtx")),
                                  [[1.5, -2], [-2, 0]])
