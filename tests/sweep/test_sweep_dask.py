"""`fuseflowc sweep --executor dask://...` against a LocalCluster of two worker processes: the
same rows as a local run, resuming, timeouts, a worker killed mid-run (its configurations rerun,
none lost or duplicated), the files shipped to the workers, and the one-line errors when dask is
missing or the scheduler unreachable; `--strict`."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from fuseflowc.data.graphs import load_graph, save_npz_graph
from fuseflowc.sweep.cluster import make_bundle, parse_executor, remove_bundle, run_in_bundle
from fuseflowc.sweep.grid import expand
from fuseflowc.sweep.results import read_rows
from fuseflowc.sweep.runner import run_sweep
from fuseflowc.sweep.spec import parse_spec
from tests.support.golden import ROOT, run_cli

distributed = pytest.importorskip("distributed")

MODELS = ROOT / "ir_examples" / "models"
KERNELS = ROOT / "ir_examples" / "kernels"


def spec_text(tmp_path: Path) -> str:
    """GCN (a program that includes another) on a shipped graph archive and a shipped data
    directory, and a kernel on generated data: 4 configurations."""
    save_npz_graph(load_graph("synthetic:nodes=30,edges=60,features=5,density=0.5,seed=1"),
                   tmp_path / "g.npz")
    r = run_cli(["gen-data", str(KERNELS / "spmv.ff"), "--size", "I=6", "--size", "J=5",
                 "-o", str(tmp_path / "spmv_data"), "--seed", "2"])
    assert r.exit_code == 0, r.stderr
    return f"""
[[programs]]
path = "{MODELS / 'gcn' / 'gcn_partial.ff'}"
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
[[data]]
graph = "g.npz"
sizes = {{ C = 3 }}
[[data]]
name = "spmv-dir"
dir = "spmv_data"
[[data]]
name = "small"
sizes = {{ I = 5, J = 4 }}
seed = 1
"""


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as c, \
            Client(c.scheduler_address, set_as_default=False) as client:
        yield c, client, "dask://" + c.scheduler_address.removeprefix("tcp://")


def stable(rows):
    return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]


def test_dask_rows_equal_local_rows_and_resume(tmp_path, cluster):
    _, _, address = cluster
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text(tmp_path))
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    assert run_cli(["sweep", str(spec), "-o", str(local)]).exit_code == 0
    r = run_cli(["sweep", str(spec), "-o", str(remote), "--executor", address])
    assert r.exit_code == 0, r.stderr
    rows = read_rows(str(remote))
    assert stable(rows) == stable(read_rows(str(local)))
    assert [x["status"] for x in rows] == ["ok", "error", "error", "error", "ok", "ok"]
    assert "6 configurations: 3 ok, 3 error; 0 already in" in r.stderr
    before = remote.read_text()
    r = run_cli(["sweep", str(spec), "-o", str(remote), "--executor", address])
    assert "none run; 6 already in" in r.stderr and remote.read_text() == before


def test_timeouts_on_the_workers(tmp_path, cluster):
    _, _, address = cluster
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text(tmp_path))
    out = tmp_path / "r.csv"
    r = run_cli(["sweep", str(spec), "-o", str(out), "--executor", address, "--timeout",
                 "0.0001", "--strict"])
    assert r.exit_code == 1
    rows = read_rows(str(out))
    # three configurations are input errors (spmv on the graph archive: no adjacency tensor to
    # put the graph in; GCN on generated data: no size for N; GCN on spmv's data directory: A's
    # shape, found by the estimate): a worker's timer thread posts the timeout only once it
    # gets the GIL (the task thread holds it up to 5 ms at a time), so an error found that fast
    # may come first: an error row then
    inputs = [x for x in rows if x["error"].startswith(("data: ", "estimate: "))
              and "internal error" not in x["error"]]
    timed = [x for x in rows if x not in inputs]
    assert len(inputs) <= 3, [x["error"] for x in rows]
    assert {x["status"] for x in timed} == {"timeout"}, [x["error"] for x in rows]
    assert all(x["error"].startswith("timeout after 0.0001 s (during ") for x in timed)
    assert "6 configuration(s) of the grid failed" in r.stderr


def test_a_killed_worker_reruns_its_configurations(tmp_path, cluster):
    _, client, address = cluster
    spec = tmp_path / "spec.toml"
    spec.write_text(f"""
orders = [0, 1]
[[programs]]
path = "{KERNELS / 'nested_matmul_sweep.ff'}"
free_input_order = true
[[data]]
sizes = {{ I = 12, K = 10, J = 12, L = 6 }}
seed = 1
[[data]]
sizes = {{ I = 10, K = 12, J = 10, L = 5 }}
seed = 2
[[data]]
sizes = {{ I = 12, K = 12, J = 12, L = 4 }}
seed = 3
""")
    out = tmp_path / "r.jsonl"
    done = {}
    t = threading.Thread(target=lambda: done.setdefault(
        "summary", run_sweep(parse_spec(str(spec)), str(out), executor=address)),
        daemon=True)   # a sweep that never ends fails this test, not the worker's exit
    t.start()
    killed = None
    deadline = time.time() + 60
    while killed is None and time.time() < deadline and t.is_alive():
        busy = [w for w, keys in client.processing().items() if keys]
        if busy and out.exists() and len(out.read_text().splitlines()) >= 1:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.05)
    t.join(120)
    assert killed is not None, "no configuration was running to kill"
    ids = [c["id"] for c in expand(parse_spec(str(spec)))]
    rows = read_rows(str(out))
    assert [x["id"] for x in rows] == ids                 # every one, once, in grid order
    assert {x["status"] for x in rows} == {"ok"}, [x["error"] for x in rows]
    assert done["summary"].counts == {"ok": len(ids)}


def test_the_bundle_carries_programs_includes_and_small_data(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text(tmp_path))
    configs = expand(parse_spec(str(spec)))
    bundle = make_bundle(configs, str(tmp_path))
    files = set(bundle["files"])
    assert str(MODELS / "gcn" / "gcn.ff") in files            # included by gcn_partial.ff
    assert str(tmp_path / "g.npz") in files and str(tmp_path / "spmv_data" / "A.npz") in files
    assert not bundle["links"]
    # the worker runs from its copy: the client's data directory may be gone
    shutil.move(tmp_path / "spmv_data", tmp_path / "moved")
    config = next(c for c in configs if c["data"] == "spmv-dir" and c["model"] == "spmv")
    ctx = {"base": str(tmp_path), "check": True, "timeout": None}
    try:
        row = run_in_bundle(config, ctx, bundle)
    finally:
        remove_bundle(bundle["token"])
    assert row["status"] == "ok", row["error"]


def test_large_data_is_linked_not_shipped(tmp_path, monkeypatch):
    import fuseflowc.sweep.cluster as cluster_mod
    monkeypatch.setattr(cluster_mod, "SHIP_MAX_BYTES", 0)
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text(tmp_path))
    bundle = make_bundle(expand(parse_spec(str(spec))), str(tmp_path))
    assert set(bundle["links"]) == {str(tmp_path / "g.npz"), str(tmp_path / "spmv_data")}


def test_unreachable_scheduler_is_a_one_line_error(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[[programs]]\npath = "{KERNELS / "spmv.ff"}"\n[[data]]\nseed = 1\n')
    t = time.time()
    r = run_cli(["sweep", str(spec), "-o", str(tmp_path / "r.csv"), "--executor",
                 "dask://127.0.0.1:9?connect-timeout=1"])
    assert r.exit_code == 1 and time.time() - t < 20
    assert r.stderr.count("\n") == 1
    assert "cannot reach a Dask scheduler at tcp://127.0.0.1:9 within 1 s" in r.stderr


def test_missing_dask_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[[programs]]\npath = "{KERNELS / "spmv.ff"}"\n[[data]]\nseed = 1\n')
    r = run_cli(["sweep", str(spec), "-o", str(tmp_path / "r.csv"), "--executor",
                 "dask://127.0.0.1:8786"])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    assert "dask.distributed is not installed (pip install 'fuseflowc[dask]')" in r.stderr
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("text, msg", [
    ("dask://host", "expected local or dask://HOST:PORT"),
    ("ray://host:1", "expected local or dask://HOST:PORT"),
    ("dask://h:1?timeout=3", "unknown option 'timeout'"),
    ("dask://h:1?connect-timeout=0", "connect-timeout must be a positive number"),
])
def test_bad_executors(text, msg):
    from fuseflowc.diagnostics import UserError
    with pytest.raises(UserError, match=msg):
        parse_executor(text)


def test_strict_exits_1_on_failures_and_default_exits_0(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(f"""
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
[[data]]
name = "small"
sizes = {{ I = 5, J = 4 }}
[[data]]
name = "nosize"
""")
    out = str(tmp_path / "r.csv")
    r = run_cli(["sweep", str(spec), "-o", out])
    assert r.exit_code == 0
    assert "sweep: 1 configuration(s) of the grid failed in" in r.stderr
    # resumed: nothing runs, the failure in the file still counts
    r = run_cli(["sweep", str(spec), "-o", out, "--strict"])
    assert r.exit_code == 1 and "none run; 2 already in" in r.stderr
    ok = tmp_path / "ok.toml"
    ok.write_text(spec.read_text().split('[[data]]\nname = "nosize"')[0])
    r = run_cli(["sweep", str(ok), "-o", str(tmp_path / "ok.csv"), "--strict"])
    assert r.exit_code == 0 and "failed" not in r.stderr
