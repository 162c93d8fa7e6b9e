"""`fuseflowc run` and `fuseflowc gen-data` as a user sees them: files, determinism, summaries,
graphs, and every example program evaluating on generated data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fuseflowc.data.io import load_inputs
from fuseflowc.lang.load import load_program
from fuseflowc.reference import evaluate
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "ir_examples").glob("**/*.ff"))
SPMV = str(ROOT / "ir_examples" / "kernels" / "spmv.ff")


def gen(program, out, *args):
    r = run_cli(["gen-data", str(program), "-o", str(out), *args])
    assert r.exit_code == 0, r.stderr
    return r


def test_gen_data_is_deterministic_and_follows_sizes_and_densities(tmp_path):
    args = ["--size", "I=50", "--size", "J=40", "--density", "A=0.05", "--seed", "3"]
    gen(SPMV, tmp_path / "a", *args)
    gen(SPMV, tmp_path / "b", *args)
    for f in ("A.npz", "x.npy"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    p = load_program(SPMV)
    t, sizes = load_inputs(tmp_path / "a", [s for s in p.specs() if s.name in p.inputs])
    assert sizes == {"I": 50, "J": 40}
    assert t["A"].nnz == 100 and t["x"].nnz == 40
    gen(SPMV, tmp_path / "c", *args[:-1], "4")
    assert (tmp_path / "a" / "A.npz").read_bytes() != (tmp_path / "c" / "A.npz").read_bytes()


def test_run_writes_outputs_matching_numpy_and_summary(tmp_path):
    gen(SPMV, tmp_path / "d", "--size", "I=30", "--size", "J=20", "--density", "0.2")
    r = run_cli(["run", SPMV, "--data", str(tmp_path / "d"), "-o", str(tmp_path / "r"),
                 "--json", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == ""
    assert "tensor" in r.stderr and "wrote y to" in r.stderr
    import scipy.sparse as sp
    A = sp.load_npz(tmp_path / "d" / "A.npz").toarray()
    x = np.load(tmp_path / "d" / "x.npy")
    np.testing.assert_allclose(np.load(tmp_path / "r" / "y.npy"), A @ x)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["dims"] == {"I": 30, "J": 20}
    rows = {t["name"]: t for t in doc["tensors"]}
    assert rows["y"]["role"] == "output" and rows["y"]["shape"] == [30]
    assert rows["A"]["stored"] == 120 and rows["A"]["density"] == pytest.approx(0.2)
    assert doc["written"] == ["y"]


def test_run_without_output_prints_summary_only(tmp_path):
    gen(SPMV, tmp_path / "d", "--size", "I=3", "--size", "J=2")
    r = run_cli(["run", SPMV, "--data", str(tmp_path / "d")])
    assert r.exit_code == 0 and r.stdout == ""
    assert "wrote" not in r.stderr and "y " in r.stderr


def test_run_all_and_sam_style(tmp_path):
    prog = ROOT / "ir_examples" / "models" / "gcn" / "gcn.ff"
    gen(prog, tmp_path / "d", "--graph", "karate", "--seed", "2")
    r = run_cli(["run", str(prog), "--data", str(tmp_path / "d"), "-o", str(tmp_path / "r"),
                 "--all", "--format", "sam"])
    assert r.exit_code == 0, r.stderr
    names = {p.name for p in (tmp_path / "r").iterdir()}
    p = load_program(str(prog))
    for n in p.assigned:
        assert f"tensor_{n}_mode_vals" in names
    # The written level files read back as the evaluated tensors.
    specs = [s for s in p.specs() if s.name in p.assigned]
    back, _ = load_inputs(tmp_path / "r", specs)
    inputs, _ = load_inputs(tmp_path / "d", [s for s in p.specs() if s.name in p.inputs])
    want = evaluate(p, inputs)
    for n in p.assigned:
        np.testing.assert_allclose(back[n].to_dense(), want[n].to_dense())


def test_run_output_dir_is_not_touched_on_error(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "keep").write_text("old")
    r = run_cli(["run", SPMV, "--data", str(tmp_path / "nowhere"), "-o", str(out)])
    assert r.exit_code == 1
    assert (out / "keep").read_text() == "old"


def test_gen_data_graph_binds_dims_and_normalizes(tmp_path):
    import networkx as nx
    import scipy.sparse as sp

    prog = ROOT / "ir_examples" / "models" / "graphsage" / "graphsage.ff"
    gen(prog, tmp_path / "d", "--graph", "karate", "--normalize", "mean")
    A = sp.load_npz(tmp_path / "d" / "A.npz").toarray()
    raw = nx.to_numpy_array(nx.karate_club_graph(), weight=None)
    np.testing.assert_allclose(A, raw / raw.sum(axis=1, keepdims=True))
    X = sp.load_npz(tmp_path / "d" / "X.npz").toarray()
    np.testing.assert_array_equal(X, np.eye(34))  # karate has no features: identity
    # With --size for the feature dim, random features of that width.
    gen(prog, tmp_path / "e", "--graph", "karate", "--size", "F=5", "--normalize", "none")
    X = np.asarray(sp.load_npz(tmp_path / "e" / "X.npz").toarray())
    assert X.shape == (34, 5) and (X != 0).all()  # dense random features, not a sparse input
    np.testing.assert_array_equal(sp.load_npz(tmp_path / "e" / "A.npz").toarray(), raw)


def test_gen_data_graph_size_conflict_is_an_error(tmp_path):
    prog = ROOT / "ir_examples" / "models" / "gcn" / "gcn.ff"
    r = run_cli(["gen-data", str(prog), "-o", str(tmp_path / "d"), "--graph", "karate",
                 "--size", "N=10"])
    assert r.exit_code == 1
    assert "graph karate has adjacency 34x34" in r.stderr and "N = 10" in r.stderr
    assert not (tmp_path / "d").exists()


def _small_sizes(path: Path) -> list[str]:
    p = load_program(str(path))
    out = []
    # a dim of a blocked tensor gets two blocks (the block size must divide it)
    blocked = {d: 2 * s.block for s in p.specs() if s.block for d in s.dims if isinstance(d, str)}
    for d in p.dims:
        if d.size is None:
            out += ["--size", f"{d.name}={blocked.get(d.name, 4)}"]
    return out


@pytest.mark.skipif(not EXAMPLES, reason="no example programs yet")
@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in EXAMPLES])
def test_every_example_evaluates_on_generated_data(path, tmp_path):
    r = run_cli(["gen-data", str(path), "-o", str(tmp_path / "d"), "--density", "0.5",
                 *_small_sizes(path)])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["run", str(path), "--data", str(tmp_path / "d"), "-o", str(tmp_path / "r")])
    assert r.exit_code == 0, r.stderr
    p = load_program(str(path))
    for name in p.outputs:
        assert any(f.name.startswith(name + ".") for f in (tmp_path / "r").iterdir()), name
