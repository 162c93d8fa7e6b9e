"""fuseflowc.bench.spec_cost: a spec's cost from cut simulations, one per distinct run."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.bench.spec_cost import extrapolate, main
from tests.support.golden import ROOT

NESTED = ROOT / "ir_examples" / "kernels" / "nested_matmul_sweep.ff"

walls = st.floats(min_value=0.01, max_value=100)
cycles = st.integers(min_value=1, max_value=10**9)


@given(st.lists(st.tuples(walls, cycles), min_size=1, max_size=5))
def test_a_run_that_finished_costs_what_it_took(ks):
    kernels = [(f"g{n}", w, c) for n, (w, c) in enumerate(ks)]
    secs, pace = extrapolate(kernels, {}, 10**12, cut_hit=False)
    assert abs(secs - sum(w for w, _ in ks)) < 1e-9
    assert abs(pace - sum(c for _, c in ks) / sum(w for w, _ in ks)) < 1e-6 * pace


@given(st.lists(walls, max_size=3), walls, cycles, st.integers(0, 10**10),
       st.lists(st.integers(0, 10**10), max_size=3))
def test_the_rest_runs_at_the_pace_of_the_cut_graph(done, wall, cut, more, later):
    kernels = [(f"d{n}", w, 1) for n, w in enumerate(done)] + [("cut", wall, cut)]
    est = {"cut": cut + more, **{f"l{n}": c for n, c in enumerate(later)}}
    secs, pace = extrapolate(kernels, est, cut, cut_hit=True)
    assert pace == cut / wall
    expect = sum(done) + wall * (cut + more + sum(later)) / cut
    assert abs(secs - expect) <= 1e-9 * max(expect, 1)


def test_a_spec_is_costed_per_distinct_run(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(f"""
[[programs]]
path = "{NESTED}"
model = "nested"
variant = "paper"
orders = ["paper"]
[[programs]]
path = "{NESTED}"
model = "nested"
variant = "zero"
[[data]]
name = "d"
sizes = {{ I = 20, K = 20, J = 20, L = 20 }}
density = 0.5
seed = 1
""")
    out = tmp_path / "cost.json"
    assert main([str(spec), "--cut", "2000", "--json-out", str(out)]) == 0
    [rec] = json.loads(out.read_text())
    assert (rec["rows"], rec["distinct"]) == (2, 1)
    [run] = rec["runs"]
    assert run["variants"] == ["paper", "zero"] and run["cut_hit"] and run["notes"] == []
    assert run["est_cycles"] > 2000 and run["sim_s"] > run["cut_s"] > 0 and run["peak_mb"] > 0
    assert "2 rows, 1 distinct runs" in capsys.readouterr().out
