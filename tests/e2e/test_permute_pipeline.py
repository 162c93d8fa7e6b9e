"""Permuted copies end to end: the paper's Figure 7 pair (and its variants) through
`fuse | lower | simulate --check` against the reference evaluator, every valid order; the cost
of a permuted copy of an input is counted as a kernel of its own."""

from __future__ import annotations

import json

import pytest

from tests.support.golden import ROOT, run_cli

FIG7 = str(ROOT / "ir_examples" / "kernels" / "fig7_pair.ff")
SCHEDULES = {
    "inner": [],  # the file's own: A materialized, read back through A__T; C through C__T
    "gustavson": ["-s", "order A: i -> k -> j", "-s", "order E: i -> k -> j"],
    "mixed": ["-s", "order A: i -> j -> k", "-s", "order E: i -> k -> j"],
}


def _data(tmp_path, density: str) -> str:
    d = tmp_path / f"data_{density}"
    r = run_cli(["gen-data", FIG7, "-o", str(d), "--seed", "5", "--size", "N=6",
                 "--density", f"B={density}"])
    assert r.exit_code == 0, r.stderr
    return str(d)


def _orders(schedule: list[str]) -> list[tuple[str, int]]:
    r = run_cli(["orders", FIG7, "--json"] + schedule)
    assert r.exit_code == 0, r.stderr
    return [(x["region"], int(x["orders"])) for x in json.loads(r.stdout)["regions"]]


def _simulate(schedule: list[str], extra: list[str], data: str, json_file: str | None = None):
    fused = run_cli(["fuse", FIG7] + schedule + extra)
    assert fused.exit_code == 0, fused.stderr
    low = run_cli(["lower", "-"], input=fused.stdout)
    assert low.exit_code == 0, low.stderr
    args = ["simulate", "-", "--data", data, "--check"]
    if json_file:
        args += ["--json", json_file]
    sim = run_cli(args, input=low.stdout)
    assert sim.exit_code == 0, sim.stderr
    assert "check: E match" in sim.stderr
    return low.stdout


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_fig7_pair_every_order_checks_against_the_reference(tmp_path, name):
    schedule = SCHEDULES[name]
    data = {d: _data(tmp_path, d) for d in ("0.3", "0")}  # B empty too
    steps = set()
    for region, count in _orders(schedule):
        for k in range(count):
            for d in data.values():
                text = _simulate(schedule, ["--region", region, "--order", str(k)], d)
                steps |= {line for line in text.splitlines() if line.startswith("permute ")}
    if name == "inner":  # the paper's A' (a permuted intermediate) and the copy of input C
        assert steps == {"permute C -> C__T", "permute A -> A__T"}
    if name == "mixed":
        assert steps == {"permute C -> C__T"}


def test_permuted_input_cost_is_counted(tmp_path):
    data = _data(tmp_path, "0.3")
    stats_file = tmp_path / "stats.json"
    _simulate([], [], data, str(stats_file))
    stats = json.loads(stats_file.read_text())
    kernels = {k["graph"]: k for k in stats["kernels"]}
    assert list(kernels) == ["permute C -> C__T", "fig7_1", "permute A -> A__T", "fig7_2"]
    copy = kernels["permute C -> C__T"]
    # C is a dense 6 x 6 input: its 36 values are read and written once; nothing else moves
    assert copy["bytes_read"] == {"seg": 0, "crd": 0, "vals": 36 * 4, "total": 36 * 4}
    assert copy["bytes_written"] == copy["bytes_read"]
    assert copy["flops"] == 0 and copy["cycles"] > 36
    total = stats["total"]
    assert total["cycles"] == sum(k["cycles"] for k in stats["kernels"])
    assert total["bytes_read"]["vals"] >= copy["bytes_read"]["vals"] + \
        kernels["permute A -> A__T"]["bytes_read"]["vals"]
