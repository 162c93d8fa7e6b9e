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


def test_a_plan_is_fused_with_the_flags_its_header_names(tmp_path, monkeypatch):
    """plan searches the fuse flags (issue 22) and says in its header which to compile with;
    fuse without them may reject the plan (issue 23: gpt3_mini_partial planned for
    --inline-widened was reported `wrong`), so the driver passes them on."""
    from fuseflowc.fuzz.cases import Case
    from fuseflowc.fuzz.driver import CaseRunner
    from fuseflowc.fuzz.execute import Limits
    from fuseflowc.fuzz.families.plan import fuse_flags
    from tests.support.golden import ROOT
    runner = CaseRunner(tmp_path, Limits())
    seen = []
    start = runner.start
    monkeypatch.setattr(runner, "start", lambda c, tag: seen.append(c.argv) or start(c, tag))
    case = Case(1, 0, "plan", [], {}, family="plan", then_fuse="planned.ff")
    header = (b"# planned by `fuseflowc plan` for cycles (estimator), --size/--density\n"
              b"# compile: fuseflowc fuse PROG --share --inline-widened | fuseflowc lower\n")
    text = header + (ROOT / "ir_examples/kernels/spmv.ff").read_bytes()
    assert fuse_flags(text) == ["--share", "--inline-widened"]
    assert fuse_flags(text.replace(b"PROG --share --inline-widened", b"PROG")) == []
    assert fuse_flags(text.replace(b"--share", b"--share --bogus")) == ["--share",
                                                                        "--inline-widened"]
    assert runner.fuse_output(case, text, "t").outcome == "ok"
    assert seen == [["fuse", "planned.ff", "--share", "--inline-widened"]]


def test_twin_data_is_data_the_python_engine_runs_quickly(monkeypatch):
    """A differential case runs the Python engine too (issue 23: its twin on a GPT-3 seed ran
    past the case limit): a seed keeps its data if the Python engine is quick on it, else gets
    its program's data made smaller (once per program), else is no differential seed."""
    from fuseflowc.fuzz import corpus
    made = []
    monkeypatch.setattr(corpus, "_make_data", lambda b, prog, sizes, suffix: made.append(
        (prog, sizes, suffix)) or f"data/{prog}{suffix}")

    class Builder:
        def __init__(self, quick):
            self.quick, self.runs = quick, []

        def cheap(self, argv, budget):
            self.runs.append(argv)
            assert argv[-2:] == ["--engine", "python"] and budget == corpus.TWIN_BUDGET
            return argv[argv.index("--data") + 1] in self.quick

    smaller = {}
    b = Builder({"data/a"})
    assert corpus._twin_data(b, "p", "p.samml", "data/a", smaller) == "data/a" and not made
    b = Builder({"data/p.twin"})
    assert corpus._twin_data(b, "p", "p.samml", "data/big", smaller) == "data/p.twin"
    assert corpus._twin_data(b, "p", "p.opt.samml", "data/big", smaller) == "data/p.twin"
    assert made == [("p", corpus.TWIN_SIZES, ".twin")]  # made once for the program
    assert corpus._twin_data(Builder(set()), "q", "q.samml", "data/q", smaller) is None
    assert corpus._twin_data(Builder(set()), None, "x.samml", "data/x", smaller) is None


def test_the_differential_family_simulates_on_the_twin_data(tmp_path):
    from fuseflowc.fuzz.cases import make_case
    from fuseflowc.fuzz.corpus import Corpus, Seed
    for rel in ("a.samml", "slow.samml", "data/big/x.tns", "data/small/x.tns"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    corpus = Corpus(tmp_path, {"samml": [Seed("samml", "a.samml", (), "data/big", "data/small"),
                                         Seed("samml", "slow.samml", (), "data/big", None)]},
                    ["data/big"])
    for k in range(20):
        case = make_case(corpus, 1, k, ("differential",))
        args = [a for g in case.args for a in g]
        assert args[0] == "a.samml" and args[args.index("--data") + 1] == "data/small"
        assert "data/big/x.tns" not in case.files


def test_plan_cases_bound_their_search_within_the_case_limit(tmp_path):
    """Four plan cases were hangs (10.8-13.7 s of search, issue 23): every plan case that
    searches passes --time-limit, a good value nearly always, below the case limit."""
    from fuseflowc.fuzz.cases import make_case
    from fuseflowc.fuzz.corpus import Corpus, Seed
    from fuseflowc.fuzz.execute import Limits
    (tmp_path / "p.ff").write_text("dim I\ntensor a[I] : dense\ntensor b[I] : dense\n"
                                   "b[i] = a[i] + a[i]\n")
    corpus = Corpus(tmp_path, {"program": [Seed("program", "p.ff")]}, [])
    limits = []
    for k in range(60):
        args = [g for g in make_case(corpus, 1, k, ("plan",)).args]
        if any(g[0] == "--learn" for g in args):
            continue
        limits += [g[1] for g in args if g[0] == "--time-limit"]
    assert len(limits) >= 30
    good = [float(v) for v in limits if v == "4"]
    assert len(good) >= 0.8 * len(limits) and all(v < Limits().seconds for v in good)
