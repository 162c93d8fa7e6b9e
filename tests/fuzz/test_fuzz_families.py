"""The fuzzer's families (fuseflowc/fuzz/families): the registry's shape (one line per family,
sorted, so that branches adding one merge cleanly), the weights' promise (every subcommand at
least 3.6% of the cases: 300 of 10,000 with room for chance), the differential comparison of
two engines' runs, and the damaged inputs the graph families make."""

from __future__ import annotations

import collections
import random
import re
from pathlib import Path

import pytest

from fuseflowc.cli import COMMANDS
from fuseflowc.fuzz import families
from fuseflowc.fuzz.classify import Verdict
from fuseflowc.fuzz.execute import Run
from fuseflowc.fuzz.families import FAMILIES, pick_family
from fuseflowc.fuzz.twins import combine, compare


def test_one_line_per_family_sorted_by_name():
    text = Path(families.__file__).read_text()
    block = text[text.index("FAMILIES: tuple"):text.index("\n)\n", text.index("FAMILIES:"))]
    lines = [ln for ln in block.splitlines()[1:] if ln.strip()]
    assert all(re.fullmatch(r'    Family\("[\w-]+", "[\w-]+", \d+, "\w+:\w+"\),', ln)
               for ln in lines), lines
    names = [f.name for f in FAMILIES]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_every_family_names_a_subcommand_and_a_builder():
    for f in FAMILIES:
        assert f.command in COMMANDS, f
        assert callable(f.builder()), f


def test_every_subcommand_gets_at_least_3_6_percent():
    total = sum(f.weight for f in FAMILIES)
    share = collections.Counter()
    for f in FAMILIES:
        share[f.command] += f.weight / total
    assert set(share) == set(COMMANDS), set(COMMANDS) - set(share)
    low = {c: round(s, 4) for c, s in share.items() if s < 0.036}
    assert not low, low


def test_the_draw_follows_the_weights():
    rng = random.Random(1)
    n = 20_000
    counts = collections.Counter(pick_family(rng).command for _ in range(n))
    assert min(counts[c] for c in COMMANDS) >= 0.03 * n, counts


def _run(code=0, out="", err="") -> Run:
    return Run(code, None, False, out, err, "", False, 0.1)


REPORT = '{"total": {"cycles": 334, "flops": 4}, "kernels": [{"cycles": 334, ' \
         '"wall_seconds": %s}]}'


def test_compare_ignores_wall_times_and_finds_differences():
    a = _run(0, REPORT % "0.001", "note: x took 0.5 s")
    assert compare(a, _run(0, REPORT % "0.250", "note: x took 1.5 s")) is None
    d = compare(a, _run(0, (REPORT % "0.001").replace('334, "wall', '335, "wall'),
                        "note: x took 0.5 s"))
    assert d and "kernels[0].cycles" in d, d
    assert "exit 0" in compare(a, _run(1, "", "error: deadlock"))
    d = compare(_run(1, "", "x.samml:3:1: error: deadlock\nnote: waiting a"),
                _run(1, "", "x.samml:3:1: error: deadlock\nnote: waiting b"))
    assert d and "stderr line 2" in d


def test_combine_prefers_a_failure_then_the_difference():
    ok = Verdict("ok", None, "")
    internal = Verdict("internal", ("internal", "KeyError", "sim/x.py:f"), "")
    assert combine("simulate", ok, internal, "x") is internal
    v = combine("simulate", ok, ok, "the report on stdout differs at total.cycles: 1 vs 2")
    assert v.outcome == "differ" and v.key[0] == "differ"
    assert combine("simulate", ok, ok, None) is ok


@pytest.mark.parametrize("seed", range(12))
def test_graph_damage_is_deterministic_and_changes_the_files(seed):
    from fuseflowc.fuzz.families.graphs import _damage_hetero, _hetero_files
    files = _hetero_files("mag")
    a, b = dict(files), dict(files)
    how_a = _damage_hetero(a, "mag", random.Random(seed))
    how_b = _damage_hetero(b, "mag", random.Random(seed))
    assert how_a == how_b and a == b and a != files


def test_a_plan_that_fuse_rejects_is_wrong(tmp_path):
    from fuseflowc.fuzz.cases import Case
    from fuseflowc.fuzz.driver import CaseRunner
    from fuseflowc.fuzz.execute import Limits
    from tests.support.golden import ROOT
    runner = CaseRunner(tmp_path, Limits())
    case = Case(1, 0, "plan", [], {}, family="plan", then_fuse="planned.ff")
    bad = b"dim I\ntensor A[I] : dense\ntensor B[I] : dense\nB[i] = C[i]\n"
    v = runner.fuse_output(case, bad, "t")
    assert v.outcome == "wrong" and v.key == ("wrong", "fuse rejects the plan", "plan"), v
    good = (ROOT / "ir_examples/kernels/spmv.ff").read_bytes()
    assert runner.fuse_output(case, good, "t").outcome == "ok"
