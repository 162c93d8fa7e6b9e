"""Issue #22: `graph synthetic:mag` ran about a minute in silence. Drawing a synthetic graph
now reports its step, the fraction done and the time left on stderr (a terminal, or
--progress), and nothing when stderr is no terminal or with --quiet."""

from __future__ import annotations

import io
import itertools

from fuseflowc.data import progress as progress_mod
from fuseflowc.data.progress import WorkProgress
from tests.support.golden import run_cli

SPEC = "synthetic:nodes=3000,edges=9000,features=4"


def _clock(monkeypatch, step: float) -> None:
    """time.monotonic() advancing `step` seconds per call."""
    ticks = itertools.count()
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: next(ticks) * step)


def test_time_left_is_the_time_so_far_scaled_by_the_work_left(monkeypatch):
    _clock(monkeypatch, 10.0)
    out = io.StringIO()
    p = WorkProgress(100, "job", out, after=0, interval=0, terminal=False)  # start: t = 0
    p.advance(25, "step one")    # t = 10: a quarter done in 10 s -> 30 s left
    p.advance(25, "step two")    # t = 20: half done in 20 s -> 20 s left
    assert out.getvalue().splitlines() == ["job: step one, 25%, about 30 s left",
                                           "job: step two, 50%, about 20 s left"]


def test_quiet_for_the_first_second_then_at_most_one_line_per_interval(monkeypatch):
    _clock(monkeypatch, 0.3)
    out = io.StringIO()
    p = WorkProgress(1000, "job", out, after=1.0, interval=1.0, terminal=False)
    for _ in range(20):
        p.advance(10, "s")
    lines = out.getvalue().splitlines()
    assert 3 <= len(lines) <= 6, lines   # 6 s of clock: nothing before 1 s, then ~1 per s


def test_graph_progress_on_stderr_with_the_flag(monkeypatch):
    _clock(monkeypatch, 0.7)
    r = run_cli(["graph", SPEC, "--progress"])
    assert r.exit_code == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith(f"graph {SPEC}: ")]
    assert lines and any("left" in x for x in lines), r.stderr
    assert any("drawing edges" in x for x in lines), lines
    assert "nodes" in r.stdout and "graph synthetic" in r.stdout  # the statistics unchanged


def test_graph_quiet_without_a_terminal_or_with_quiet(monkeypatch):
    _clock(monkeypatch, 0.7)
    for args in (["graph", SPEC], ["graph", SPEC, "-q"]):
        r = run_cli(args)
        assert r.exit_code == 0 and "left" not in r.stderr, r.stderr
    r = run_cli(["graph", SPEC, "-q", "--progress"])
    assert r.exit_code == 2 and "contradict" in r.stderr
