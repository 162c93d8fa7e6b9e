"""`make bench-paper` runs the artifact's rows that fit its 60 minutes; the rest are the long
set, ir_examples/bench/artifact/long/ (`make bench-paper-long`). The table says why a long bar
has no figure yet (fuseflowc.bench.artifact.LONG), and takes the long set's rows once they are
in the results directory."""

from __future__ import annotations

import re
from pathlib import Path

from fuseflowc.bench import artifact
from fuseflowc.bench.artifact import LONG, NOT_RUN, ORDER0, our_figures
from tests.support.paths import ROOT

ARTIFACT = ROOT / "ir_examples" / "bench" / "artifact"


def _bars(spec: Path) -> set[tuple[str, str, str]]:
    """(model, data, variant) of every row a spec makes (programs x data sets), read from its
    text: parsing the spec needs the shared data sets, which CI does not have."""
    text = spec.read_text()
    progs = re.findall(r'^model = "(\w+)"\s*\nvariant = "([\w-]+)"', text, flags=re.M)
    datas = re.findall(r'^name = "(\w+)"', text, flags=re.M)
    assert progs and datas, spec
    return {(m, d, v) for m, v in progs for d in datas}


def _compared(bars):
    """The bars the table compares (our order-0 variants are a column beside them)."""
    return {b for b in bars if b[2] not in ORDER0.values()}


def test_the_reasons_are_exactly_the_long_sets_bars():
    long_bars = set().union(*map(_bars, sorted((ARTIFACT / "long").glob("*.toml"))))
    assert _compared(long_bars) == set(LONG)


def test_the_60_minute_set_runs_none_of_them():
    short = set().union(*map(_bars, sorted(ARTIFACT.glob("*.toml"))))
    assert short and not short & set(LONG)
    assert not set(LONG) & set(NOT_RUN)


def test_a_long_bar_says_so_until_its_row_is_there():
    key = ("gcn", "dblp", "full")
    figs = our_figures([])
    assert "make bench-paper-long" in figs[key].how and figs[key].cycles is None
    row = {"model": "gcn", "data": "dblp", "variant": "full", "status": "ok",
           "check": "match", "cycles": 123, "est_cycles": 120}
    figs = our_figures([row])
    assert figs[key].cycles == 123 and figs[key].how == "simulated, checked"


def test_the_table_names_the_long_target(tmp_path):
    cells = [[c.strip() for c in x.strip("|").split("|")]
             for x in "\n".join(artifact.artifact_section(tmp_path)).splitlines()
             if x.startswith("|")]
    for model, data, variant in LONG:
        row = [c for c in cells if c[:3] == [artifact.MODEL_TITLES[model], data, variant]]
        assert len(row) == 1 and "make bench-paper-long" in row[0][8], (model, data, variant)


def test_every_bar_without_a_simulated_figure_has_an_estimate():
    """Every long and not-run bar has the cycle model's estimate, and only those."""
    assert set(artifact.ESTIMATES) == set(LONG) | set(NOT_RUN)


def _sim(model, data, variant, cycles):
    return {"model": model, "data": data, "variant": variant, "status": "ok",
            "check": "match", "cycles": cycles, "est_cycles": None}


def test_the_ranking_places_an_unsimulated_bar_by_its_estimate_and_says_so(tmp_path):
    rows = [_sim("gcn", "collab", "unfused", 600), _sim("gcn", "collab", "partial", 400)]
    _, ranks = artifact.bar_rows(our_figures(rows))
    line = next(r for r in ranks if r.startswith("- GCN collab:"))
    # the full bar is not simulated: 6.69 G estimated, slower than both simulated bars
    assert "ours partial < unfused < full: same ranking (full placed by the cycle model's " \
           "estimate, not simulated)" in line, line
    rows[1]["cycles"] = 700                      # a partial slower than unfused: the ranking says so
    _, ranks = artifact.bar_rows(our_figures(rows))
    line = next(r for r in ranks if r.startswith("- GCN collab:"))
    assert "ours unfused < partial < full: **ranked differently** (full placed" in line, line
    # a simulated row replaces the estimate
    rows.append(_sim("gcn", "collab", "full", 100))
    _, ranks = artifact.bar_rows(our_figures(rows))
    line = next(r for r in ranks if r.startswith("- GCN collab:"))
    assert "ours full < unfused < partial: **ranked differently**." in line, line
