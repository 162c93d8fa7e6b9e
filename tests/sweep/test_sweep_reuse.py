"""A sweep simulates each distinct compiled configuration once (fuseflowc.sweep.reuse): rows
whose compiled module, program, schedule, data set and arch agree repeat the first such row's
run, name it in `reused`, and carry exactly the results a run of their own gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.sweep.grid import expand
from fuseflowc.sweep.results import read_rows
from fuseflowc.sweep.reuse import RESULT_FIELDS, candidates, leaders, repeated_row
from fuseflowc.sweep.spec import parse_spec
from tests.support.golden import ROOT, run_cli

NESTED = ROOT / "ir_examples" / "kernels" / "nested_matmul_sweep.ff"

# the nested matmul in order 0 twice under two variant names (the same compiled module), and
# in order 1 (another module); two data sets, so the pairs are per data set
A = f"""
[[programs]]
path = "{NESTED}"
model = "nested"
variant = "a"
free_input_order = true
orders = [0, 1]
"""
B = f"""
[[programs]]
path = "{NESTED}"
model = "nested"
variant = "b"
free_input_order = true
orders = [0]
"""
DATA = """
[[data]]
name = "d1"
sizes = { I = 6, K = 5, J = 7, L = 3 }
density = 0.4
seed = 1
[[data]]
name = "d2"
sizes = { I = 4, K = 8, J = 5, L = 2 }
density = 0.5
seed = 2
"""
SPEC = A + B + DATA


def _sweep(tmp_path, text: str, out_name: str = "r.csv", *args: str):
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    out = tmp_path / out_name
    r = run_cli(["sweep", str(spec), "-o", str(out), *args])
    assert r.exit_code == 0, r.stderr
    return r, {(row["variant"], row["order"], row["data"]): row for row in read_rows(str(out))}


def _results(row: dict) -> dict:
    return {k: row[k] for k in RESULT_FIELDS}


def test_identical_configurations_share_one_run_with_a_run_of_its_own_results(tmp_path):
    r, rows = _sweep(tmp_path, SPEC, "r.csv", "-j", "2")
    assert "sweep: 6 configurations: 6 ok (2 repeating another configuration's run" in r.stderr
    for d in ("d1", "d2"):
        a0, a1, b0 = rows[("a", 0, d)], rows[("a", 1, d)], rows[("b", 0, d)]
        assert b0["reused"] == a0["id"] and not a0["reused"] and not a1["reused"]
        assert b0["check"] == "match" and _results(b0) == _results(a0)
        assert a1["kernel_cycles"] != a0["kernel_cycles"]   # order 1 is another module
    # the repeated row's results are what its own run gives: b alone, nothing to repeat
    _, own = _sweep(tmp_path, B + DATA, "own.csv")
    for d in ("d1", "d2"):
        assert not own[("b", 0, d)]["reused"]
        assert _results(own[("b", 0, d)]) == _results(rows[("b", 0, d)])


def test_a_resumed_sweep_repeats_a_leader_already_in_the_file(tmp_path):
    _, rows = _sweep(tmp_path, SPEC)
    out = tmp_path / "r.csv"
    lines = out.read_text().splitlines(keepends=True)
    b_d1 = rows[("b", 0, "d1")]["id"]
    out.write_text("".join(x for x in lines if not x.startswith(b_d1)))
    r, again = _sweep(tmp_path, SPEC)
    assert "1 ok (1 repeating another configuration's run" in r.stderr
    assert "5 already in" in r.stderr
    assert again[("b", 0, "d1")]["reused"] == rows[("a", 0, "d1")]["id"]
    assert _results(again[("b", 0, "d1")]) == _results(rows[("b", 0, "d1")])
    # the leader gone instead: it runs again, the repeating row stays as it was
    lines = out.read_text().splitlines(keepends=True)
    a_d2 = rows[("a", 0, "d2")]["id"]
    out.write_text("".join(x for x in lines if not x.startswith(a_d2)))
    r, again = _sweep(tmp_path, SPEC)
    assert "1 ok; 5 already in" in r.stderr
    assert _results(again[("a", 0, "d2")]) == _results(rows[("a", 0, "d2")])


def test_only_configurations_of_the_same_program_data_and_arch_are_compiled_for_a_key(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    grid = expand(parse_spec(str(spec)))
    assert len(candidates(grid)) == 6
    one = [c for c in grid if c["data"] == "d1" and c["variant"] == "a"]
    assert candidates(one) == one          # orders 0 and 1 of a: may compile alike
    assert candidates([c for c in grid if c["order"] == 1]) == []   # alone in their groups
    assert candidates([{**c, "estimate_only": "why"} for c in grid]) == []


@given(st.lists(st.one_of(st.none(), st.sampled_from("xyz")), max_size=12))
def test_each_row_repeats_the_first_row_of_its_key(keys):
    configs = [{"id": f"c{n}"} for n in range(len(keys))]
    lead = leaders(configs, {c["id"]: k for c, k in zip(configs, keys)})
    for n, k in enumerate(keys):
        first = keys.index(k) if k is not None else n
        assert lead.get(f"c{n}") == (f"c{first}" if first != n else None)


def test_a_repeated_row_keeps_its_own_configuration():
    leader = {"id": "L", "variant": "a", "order": "paper", "cycles": 7, "status": "ok",
              "check": "match", "wall_seconds": 3.5}
    row = repeated_row({"id": "F", "variant": "a-order0", "order": 0}, leader)
    assert (row["id"], row["variant"], row["order"], row["cycles"], row["reused"],
            row["wall_seconds"]) == ("F", "a-order0", 0, 7, "L", 0.0)
