"""Issue #23 ("Safe on every surface"): the defects an independent fuzz run found on the
surfaces added since the fuzzer was written (graph readers, the synthetic generator, sweep
executors, decompose with the new level formats, loops, outputs as root), each through the real
entry point: a clear message and exit 1 (2 for usage), never a traceback, an allocation of
terabytes or a search without end. Each test failed before its fix."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import numpy as np
import pytest

from fuseflowc import limits
from tests.support.golden import run_cli


def fails(args: list[str], *needles: str, code: int = 1) -> str:
    r = run_cli(args)
    assert r.exit_code == code, (r.exit_code, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr[:2000]
    return r.stderr


# ---- 1. decompose with an operand whose blocked copy is no format ------------------------------

@pytest.mark.parametrize("fmt", ["coo", "ell(4)", "(dense, compressed(4))",
                                 "(compressed, singleton)"])
@pytest.mark.parametrize("command", ["check", "fuse"])
def test_decompose_with_an_operand_that_cannot_be_blocked(tmp_path, fmt, command):
    p = tmp_path / "d.ff"
    p.write_text("dim I = 8, J = 8, K = 4\ntensor A[I, J] : csr\n"
                 f"tensor B[J, K] : {fmt}\ntensor C[I, K] : dense\n"
                 "C[i,k] = A[i,j] * B[j,k]\ndecompose A: bcsr(2) >= 0.5, csr\n")
    err = fails([command, str(p)], "d.ff:6:", "B is ", "blocked formats take dense and "
                "compressed levels only", "declare B dense, csr or dcsr")
    assert "AssertionError" not in err


# ---- 2. PyG node ids and counts beyond memory --------------------------------------------------

def test_pyg_node_id_of_2_to_the_40_is_refused_before_allocating(tmp_path):
    p = tmp_path / "edge_index.npy"
    np.save(p, np.array([[0, 1], [1, 2**40]]))
    fails(["graph", str(p)], "largest node id 1,099,511,627,776", "needs about 32.0 TiB")


def test_pyg_num_nodes_of_2_to_the_40_is_refused_before_allocating(tmp_path):
    p = tmp_path / "g.npz"
    np.savez(p, edge_index=np.array([[0, 1], [1, 2]]), num_nodes=np.array(2**40))
    fails(["graph", str(p)], "1,099,511,627,776 nodes", "of memory")


def test_pyg_uint64_id_is_not_called_negative(tmp_path):
    p = tmp_path / "edge_index.npy"
    np.save(p, np.array([[0, 1], [1, 2**64 - 1]], dtype=np.uint64))
    err = fails(["graph", str(p)], "18,446,744,073,709,551,615")
    assert "negative" not in err


def test_graph_bigger_than_memory_but_small_ids_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 1 << 30)  # a 1 GiB machine
    p = tmp_path / "edge_index.npy"
    np.save(p, np.array([[0], [100_000_000]]))
    fails(["graph", str(p)], "100,000,001 nodes", "1.0 GiB available")


# ---- 3 and 8. OGB heterogeneous layouts --------------------------------------------------------

def _gz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode(), mtime=0))


def _hetero(root: Path, node_dict: str, triplets: str) -> str:
    raw = root / "mag" / "raw"
    _gz(raw / "num-node-dict.csv.gz", node_dict)
    _gz(raw / "triplet-type-list.csv.gz", triplets)
    _gz(raw / "relations/paper___cites___paper/edge.csv.gz", "0,1\n1,2\n")
    _gz(raw / "relations/author___writes___paper/edge.csv.gz", "0,1\n")
    return str(root / "mag")


def test_ogb_hetero_reads_a_good_layout(tmp_path):
    d = _hetero(tmp_path, "author,paper\n2,3\n", "paper,cites,paper\nauthor,writes,paper\n")
    r = run_cli(["graph", d, "--json"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["graph", d + ",relation=all", "--json"])
    assert r.exit_code == 0 and '"nodes": 5' in r.stdout, r.stderr


def test_ogb_hetero_triplet_line_of_two_fields(tmp_path):
    d = _hetero(tmp_path, "author,paper\n2,3\n", "paper,cites\nauthor,writes,paper\n")
    fails(["graph", d], "triplet-type-list.csv.gz:1: expected head,relation,tail",
          "'paper,cites'")


def test_ogb_hetero_node_type_missing_from_the_node_dict(tmp_path):
    d = _hetero(tmp_path, "author\n2\n", "paper,cites,paper\nauthor,writes,paper\n")
    fails(["graph", d], "triplet-type-list.csv.gz:1: node type 'paper' is not in "
          "num-node-dict.csv.gz")


@pytest.mark.parametrize("node_dict, needle", [
    ("author,paper\n2\n", "as many counts"),
    ("author,paper\n2,-3\n", "expected counts"),
    ("author,paper\n2,1099511627776\n", "32.0 TiB"),
    ("author,paper\n2," + "9" * 5000 + "\n", "expected counts"),
])
def test_ogb_hetero_bad_counts(tmp_path, node_dict, needle):
    d = _hetero(tmp_path, node_dict, "paper,cites,paper\nauthor,writes,paper\n")
    fails(["graph", d], needle)


def test_ogb_hetero_relation_names_stay_inside_the_directory(tmp_path):
    d = _hetero(tmp_path, "author,paper\n2,3\n", "paper,..,paper\n")
    fails(["graph", d], "may not hold '/' or be '.' or '..'")


def test_ogb_homogeneous_node_count_beyond_memory(tmp_path):
    raw = tmp_path / "collab" / "raw"
    _gz(raw / "num-node-list.csv.gz", f"{2**40}\n")
    _gz(raw / "edge.csv.gz", "0,1\n")
    fails(["graph", str(tmp_path / "collab")], "num-node-list.csv.gz", "32.0 TiB")


# ---- 10 and the exponent message: synthetic specs ----------------------------------------------

def test_synthetic_graph_beyond_memory_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 6 << 30)
    t = time.monotonic()
    fails(["graph", "synthetic:nodes=1000000000,edges=1"], "1,000,000,000 nodes", "of memory",
          "6.0 GiB available")
    assert time.monotonic() - t < 5


def test_synthetic_graph_under_an_address_space_limit(monkeypatch):
    # the fuzzer's cases run under RLIMIT_AS: it bounds what is available too
    import resource
    real = resource.getrlimit
    monkeypatch.setattr(resource, "getrlimit", lambda what: (
        (6 << 30, real(what)[1]) if what == resource.RLIMIT_AS else real(what)))
    assert limits.available_memory() < 6 << 30
    fails(["graph", "synthetic:nodes=100000000,edges=1"], "100,000,000 nodes", "of memory")


def test_synthetic_exponent_message_is_not_rounded():
    fails(["graph", "synthetic:nodes=10,edges=5,exponent=1.0000001"],
          ": exponent=1.0000001: a power law")


def test_synthetic_spec_text_round_trips():
    from fuseflowc.data.synthetic import parse_synthetic
    s = parse_synthetic("synthetic:nodes=10,edges=5,exponent=2.0000001,density=0.001")
    assert parse_synthetic(s.text()) == s


# ---- 6. checking a long map is linear; unrolling is bounded -------------------------------------

def _map(tmp_path: Path, t: int) -> str:
    p = tmp_path / f"map{t}.ff"
    p.write_text(f"dim N = 4, T = {t}\ntensor X[N] : dense\ntensor W[T; N] : dense\n"
                 f"tensor Y[T; N] : dense\nmap t in T {{\n  Y[t; i] = X[i] * W[t; i]\n}}\n")
    return str(p)


def _calls(tmp_path: Path, t: int) -> int:
    """The Python function calls that loading (parsing, checking, unrolling) a map of `t`
    iterations makes, after a map of 2 (one-time costs, the grammar, out of the count)."""
    from tests.support.calls import count_calls
    return count_calls(f"from fuseflowc.lang.load import load_program\n"
                       f"load_program({_map(tmp_path, 2)!r})",
                       f"load_program({_map(tmp_path, t)!r})")


def test_checking_a_map_is_linear_in_its_iterations(tmp_path):
    small, large = _calls(tmp_path, 300), _calls(tmp_path, 1200)
    # 4x the iterations: about 4x the calls (3.8 measured); it was quadratic (16x)
    assert large < 5 * small, (small, large)


def test_unrolling_more_than_the_limit_is_refused(tmp_path):
    fails(["check", _map(tmp_path, 10**9)], "map1000000000.ff:3:", "more than 100,000")


def test_unrolled_statements_are_counted_too(tmp_path):
    p = tmp_path / "nested.ff"
    p.write_text("dim N = 2, T = 400, U = 400\ntensor X[N] : dense\n"
                 "tensor Y[N] : dense\ntensor H[N] : dense\n"
                 "map t in T {\n  map u in U {\n    H[i] = X[i] * 2\n  }\n}\nY[i] = X[i]\n")
    # 160,400 statements, only 400 of them at the outer level: the nest is what is counted
    fails(["check", str(p)], "nested.ff:5:5: error: the loops unroll to more than 100,000",
          "the loop nest over T x U unrolls to", "lower the size of T or U")


# ---- 9 and the smaller ones: sweep ----------------------------------------------------------------

@pytest.mark.parametrize("executor", ["dask://[::1", "dask://h:99999", "ray://x", "dask://"])
def test_malformed_executor_is_a_usage_error(tmp_path, executor):
    spec = tmp_path / "s.toml"
    spec.write_text("[[programs]]\npath = \"x.ff\"\n")
    err = fails(["sweep", str(spec), "-o", str(tmp_path / "r.csv"), "--executor", executor],
                "--executor", "dask://HOST:PORT", code=2)
    assert "ValueError" not in err
    assert not (tmp_path / "r.csv").exists()


def test_strict_says_it_exits_1(tmp_path):
    from fuseflowc.sweep.runner import SweepSummary
    s = SweepSummary(total=1, skipped=0)
    s.unsuccessful = {"error": 1}
    assert "--strict makes this exit 1" in s.text("r.csv")
    strict = s.text("r.csv", strict=True)
    assert "--strict makes this exit 1" not in strict and "exit 1 (--strict)" in strict


# ---- a read-only output, as root too ---------------------------------------------------------------

def test_read_only_output_file_is_not_replaced(tmp_path):
    out = tmp_path / "out.fused"
    out.write_text("keep me\n")
    os.chmod(out, 0o444)
    from tests.support.golden import ROOT
    fails(["fuse", str(ROOT / "ir_examples/kernels/spmv.ff"), "-o", str(out)], "read-only")
    assert out.read_text() == "keep me\n"


def test_read_only_output_directory_is_not_written(tmp_path):
    from tests.support.golden import ROOT
    d = tmp_path / "ro"
    d.mkdir()
    os.chmod(d, 0o555)
    try:
        fails(["gen-data", str(ROOT / "ir_examples/kernels/spmv.ff"), "-o", str(d / "x"),
               "--size", "I=3", "--size", "J=3"], "permission denied")
        assert not (d / "x").exists()
    finally:
        os.chmod(d, 0o755)


def test_read_only_results_file_is_not_appended(tmp_path):
    from fuseflowc.diagnostics import UserError
    from fuseflowc.sweep.results import ResultsWriter
    r = tmp_path / "r.csv"
    r.write_text("")
    os.chmod(r, 0o444)
    with pytest.raises(UserError, match="read-only"):
        ResultsWriter(str(r))


# ---- searches bounded: the advisor's candidates ------------------------------------------------

def test_advisor_candidates_are_bounded(tmp_path):
    prog = tmp_path / "spmv.ff"
    prog.write_text("dim I, J\ntensor A[I, J] : csr\ntensor x[J] : dense\n"
                    "tensor y[I] : dense\ny[i] = A[i,j] * x[j]\n")
    m = tmp_path / "a.mtx"
    m.write_text("%%MatrixMarket matrix coordinate real general\n16 16 2\n1 1 1\n16 16 2\n")
    many = ",".join(f"{0.001 * (k + 1):.3f}" for k in range(900))
    t = time.monotonic()
    fails(["decompose-advisor", str(m), "--program", str(prog), "--thresholds", many],
          "3,628 candidate decompositions", "at most 500")
    assert time.monotonic() - t < 10


def test_matrix_market_graph_size_beyond_memory(tmp_path):
    p = tmp_path / "big.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                 "1099511627776 1099511627776 1\n1 1\n")
    fails(["graph", str(p)], "big.mtx", "32.0 TiB")   # was exit 3: an 8 TiB indptr


@pytest.mark.parametrize("size", ["K=-1", "K=0"])
def test_advisor_refuses_sizes_below_one(tmp_path, size):
    # found by the advisor family (fuzz seed 1, case 1117): a ValueError in the model, exit 3
    from tests.support.golden import ROOT
    mtx = tmp_path / "ints.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate integer general\n8 8 2\n1 1 3\n8 8 1\n")
    fails(["decompose-advisor", str(mtx), "--program",
           str(ROOT / "ir_examples/kernels/sddmm.ff"), "--size", size],
          f"--size {size}: a size is at least 1")
