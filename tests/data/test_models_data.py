"""The Makefile's `data` targets: every gen-data command `make -n data` prints is run, in-process,
with its sizes shrunk (later --size options win) and the graph files replaced by tiny graphs in
the same layout, so the generators, their options and the programs they name are checked fast.
The written data is then checked for what each target promises (normalized adjacency, 50%
sparse SAE inputs, the BigBird mask) and the reference evaluator runs on it."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from fuseflowc.data.bigbird import bigbird_mask
from fuseflowc.data.graphs import gcn_normalize, karate_club, mean_normalize
from fuseflowc.data.io import load_inputs
from fuseflowc.lang.load import load_program
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]

# Small sizes appended to each command (they override the Makefile's); the mask block sizes the
# Makefile uses (4, 16, 64) divide S = 64 * k, so S stays a multiple of 64.
SMALL = {"sae": ["--size", "P=12", "--size", "D1=6", "--size", "D2=3"],
         "gpt3": ["--size", "S=128", "--size", "E=4", "--size", "NH=2", "--size", "DH=2",
                  "--size", "FF=8"]}


def _tiny_graph(path: Path, n: int, f: int, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=0.3, random_state=seed, format="csr")
    a = ((a + a.T) > 0).astype(np.float64).tocsr()
    a.setdiag(0)
    a.eliminate_zeros()
    x = sp.csr_matrix(rng.uniform(-1, 1, (n, f)) * (rng.random((n, f)) < 0.5))
    np.savez_compressed(path, adj_indptr=a.indptr, adj_indices=a.indices,
                        adj_shape=np.array(a.shape), feat_indptr=x.indptr,
                        feat_indices=x.indices, feat_data=x.data.astype(np.float32),
                        feat_shape=np.array(x.shape), labels=np.arange(n) % 3)
    return a


def _commands(ddir: Path, data: Path) -> list[list[str]]:
    r = subprocess.run(["make", "-n", "-B", "data", f"DDIR={ddir}", f"DATA={data}"], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    out = []
    for line in r.stdout.splitlines():
        for part in line.split("&&"):
            argv = shlex.split(part)
            if len(argv) > 1 and argv[0].endswith("fuseflowc") and argv[1] == "gen-data":
                out.append(argv[1:])
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Run every `make data` generator at small sizes; returns (data dir, graphs, commands)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    tmp = tmp_path_factory.mktemp("models_data")
    graphs = {"cora": _tiny_graph(tmp / "cora.npz", 9, 5, 1),
              "cora_ml": _tiny_graph(tmp / "cora_ml.npz", 7, 4, 2)}
    ddir = tmp / "data"
    cmds = _commands(ddir, tmp)
    for argv in cmds:
        prog = argv[argv.index("--seed") + 2] if "--seed" in argv else argv[1]
        extra = SMALL["sae"] if "/sae/" in prog else SMALL["gpt3"] if "/gpt3" in prog else []
        (ddir / Path(argv[argv.index("-o") + 1]).relative_to(ddir).parent).mkdir(
            parents=True, exist_ok=True)
        r = run_cli(argv + extra)
        assert r.exit_code == 0, (argv, r.stderr)
    return ddir, graphs, cmds


def _load(ddir: Path, prog: str, sub: str):
    p = load_program(str(ROOT / "ir_examples" / "models" / prog))
    specs = [s for s in p.specs() if s.name in set(p.inputs)]
    return p, load_inputs(ddir / sub, specs)[0]


def test_every_target_is_generated(made):
    ddir, _, cmds = made
    want = {f"{m}/{g}" for m in ("gcn", "graphsage") for g in ("karate", "cora", "cora_ml")} | \
        {"sae/imagenet", "sae/imagenet_h64", "sae/mnist", "gpt3/s64", "gpt3/s1024",
         "gpt3_mini/s64", "gpt3_mini/s256"}
    made_dirs = {str(p.relative_to(ddir)) for p in ddir.glob("*/*") if p.is_dir()}
    assert made_dirs == want
    assert len(cmds) == len(want)


@pytest.mark.parametrize("model, norm", [("gcn", gcn_normalize), ("graphsage", mean_normalize)])
@pytest.mark.parametrize("graph", ["karate", "cora", "cora_ml"])
def test_graph_data(made, model, norm, graph):
    ddir, graphs, _ = made
    _, t = _load(ddir, f"{model}/{model}.ff", f"{model}/{graph}")
    adj = karate_club().adj if graph == "karate" else graphs[graph]
    np.testing.assert_allclose(t["A"].to_dense(), norm(adj).toarray())
    assert t["X"].shape[0] == adj.shape[0]
    # the logits are as wide as the graph has classes (karate 2, the tiny graphs 3)
    assert t["b2"].shape == ((2,) if graph == "karate" else (3,))


def test_sae_data_is_half_sparse(made):
    ddir, _, _ = made
    for sub in ("imagenet", "imagenet_h64", "mnist"):
        _, t = _load(ddir, "sae/sae.ff", f"sae/{sub}")
        x = t["X"].to_dense()
        assert x.shape == (5, 12)
        assert np.count_nonzero(x) == 30  # exactly 50% of 5 x 12


@pytest.mark.parametrize("prog, sub, block", [
    ("gpt3_bigbird/gpt3_bigbird.ff", "gpt3/s64", 4),
    ("gpt3_bigbird/gpt3_bigbird.ff", "gpt3/s1024", 64),
    ("gpt3_mini/gpt3_mini.ff", "gpt3_mini/s64", 4),
    ("gpt3_mini/gpt3_mini.ff", "gpt3_mini/s256", 16),
])
def test_gpt3_mask(made, prog, sub, block):
    ddir, _, _ = made
    _, t = _load(ddir, prog, sub)
    np.testing.assert_array_equal(t["M"].to_dense(), bigbird_mask(128, block, 3, 1).toarray())


@pytest.mark.parametrize("prog, sub", [("gcn/gcn_full.ff", "gcn/cora"),
                                       ("graphsage/graphsage_full.ff", "graphsage/cora_ml"),
                                       ("sae/sae_full.ff", "sae/mnist"),
                                       ("gpt3_mini/gpt3_mini_full.ff", "gpt3_mini/s256")])
def test_evaluator_runs_on_generated_data(made, prog, sub):
    ddir, _, _ = made
    r = run_cli(["run", str(ROOT / "ir_examples" / "models" / prog), "--data", str(ddir / sub)])
    assert r.exit_code == 0, r.stderr
