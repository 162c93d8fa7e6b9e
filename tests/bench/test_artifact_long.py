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
