"""`simulate` tells where a long run is (issue #12, item 6; time left: issue #22): the kernel
(k of n), the cycles so far against the cycle model's expected cycles, the FLOPs done against
the estimator's FLOPs of the kernel, the time left; only after the first second, only on a
terminal or with --progress, never with --quiet. The one-second threshold and the tick rate are
forced small here so that a small run shows progress. Both engines tick alike: the compiled one
calls the same tick(cycle, flops) at the same activations with the same figures.

Progress reads a monotonic clock whose zero is the machine's boot: the tests drive it with a
fake clock that starts near zero, as on a machine up for a few seconds (issue #22)."""

from __future__ import annotations

import io
import re
import types

import pytest

import fuseflowc.commands.simulate as simulate_cmd
from fuseflowc.sim import engine_fast
from fuseflowc.sim import progress as progress_mod
from fuseflowc.sim.arch import Arch
from fuseflowc.sim.build import Simulator
from fuseflowc.sim.engine import Engine
from fuseflowc.sim.progress import Expected, Progress, duration
from tests.support import sim_pins
from tests.support.golden import run_cli, run_pipeline

PROGRAM = """dim I = 40, J = 30
tensor A[I, J] : csr
tensor x[J] : dense
tensor y[I] : dense
tensor z[I] : dense
y[i] = A[i,j] * x[j]
z[i] = relu(y[i])
"""
#: Both engines (the compiled one where it is built).
ENGINES = ["python", pytest.param("fast", marks=pytest.mark.skipif(
    not engine_fast.available(), reason="fuseflowc.sim._fast is not built"))]
LINE = re.compile(r"^simulate: kernel (\d) of 2 \((\w)\): cycle ([\d,]+)"
                  r"( of ~[\d.]+(?: k)? \(estimate\), \d+%| \(past the estimate of ~[\d.]+(?: k)?\))"
                  r"; (\d+) of ~(\d+) FLOPs(; about (?:\d+ s|\d+ min \d+ s|\d+ h \d+ min) left)?$")


@pytest.fixture(scope="module")
def two_kernels(tmp_path_factory):
    """An unfused two-statement program: graphs y and z, and its data."""
    d = tmp_path_factory.mktemp("progress")
    (d / "two.ff").write_text(PROGRAM)
    r = run_cli(["gen-data", str(d / "two.ff"), "-o", str(d / "data"), "--density", "A=0.3"])
    assert r.exit_code == 0, r.stderr
    r = run_pipeline(f"fuseflowc fuse {d / 'two.ff'} --unfused | fuseflowc lower")
    assert r.exit_code == 0, r.stderr
    (d / "two.samml").write_text(r.stdout)
    return d


@pytest.fixture
def eager(monkeypatch):
    """Progress from the first activation on, every activation."""
    monkeypatch.setattr(simulate_cmd, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(simulate_cmd, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(Engine, "PROGRESS_EVERY", 1)


def _simulate(d, *flags, engine="python"):
    return run_cli(["simulate", str(d / "two.samml"), "--data", str(d / "data"), "--check",
                    "--engine", engine, *flags])


@pytest.mark.parametrize("engine", ENGINES)
def test_progress_names_the_kernel_the_cycles_and_the_estimated_flops(two_kernels, eager,
                                                                       engine):
    r = _simulate(two_kernels, "--progress", engine=engine)
    assert r.exit_code == 0, r.stderr
    shown = [x for x in r.stderr.splitlines() if x.startswith("simulate: kernel")]
    lines = [m.groups() for m in map(LINE.match, shown) if m]
    assert len(lines) == len(shown) > 0, shown
    assert {(k, name) for k, name, *_ in lines} == {("1", "y"), ("2", "z")}
    # the estimate is the estimator's FLOPs of each kernel (exact here: 720 and 40)
    assert {(name, total) for _, name, _, _, _, total, _ in lines} == {("y", "720"), ("z", "40")}
    for _, _, _, against, done, total, left in lines:
        assert 0 <= int(done) <= int(total)
        # a time left whenever the run is within the model's cycles, never past them
        assert (left is None) == against.startswith(" (past")
    assert any(left for *_, left in lines)
    cycles = [int(c.replace(",", "")) for k, _, c, *_ in lines if k == "1"]
    assert cycles == sorted(cycles) and cycles[-1] > 0      # the clock only moves on
    assert "check: z match" in r.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_no_progress_off_a_terminal_unless_asked(two_kernels, eager, engine):
    r = _simulate(two_kernels, engine=engine)
    assert r.exit_code == 0 and "simulate: kernel" not in r.stderr
    assert "cycles" in r.stderr                              # the tables still show


@pytest.mark.parametrize("engine", ENGINES)
def test_quiet_silences_progress_and_tables(two_kernels, eager, engine):
    r = _simulate(two_kernels, "--quiet", engine=engine)
    assert r.exit_code == 0
    assert r.stderr == "check: z match\n"
    r = _simulate(two_kernels, "--quiet", "--progress")
    assert r.exit_code == 2 and "contradict" in r.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_short_runs_show_nothing(two_kernels, monkeypatch, engine):
    monkeypatch.setattr(Engine, "PROGRESS_EVERY", 1)        # ticks, but under a second
    r = _simulate(two_kernels, "--progress", engine=engine)
    assert r.exit_code == 0 and "simulate: kernel" not in r.stderr


class _Ticks:
    """A progress report that records what the engine tells it."""

    def __init__(self):
        self.seen = []

    def kernel(self, k, n, name):
        self.seen.append(("kernel", k, n, name))

    def tick(self, cycle, flops):
        self.seen.append((cycle, flops))


@pytest.mark.skipif(not engine_fast.available(), reason="fuseflowc.sim._fast is not built")
@pytest.mark.parametrize("every", [1, 5, 1024])
def test_both_engines_tick_alike(monkeypatch, every):
    """The same ticks (cycle, FLOPs) at the same activations on both engines: a fused SpMM-like
    kernel under back-pressure (depth 2) and with bandwidth limits."""
    monkeypatch.setattr(Engine, "PROGRESS_EVERY", every)
    from fuseflowc.diagnostics import Source
    from fuseflowc.samml.parser import parse_module
    path = sim_pins.ROOT / "ir_examples" / "kernels" / "nested_matmul_fused.ff"
    module = parse_module(Source(str(path), sim_pins.lowered_text(path)))
    inputs, sizes = sim_pins.module_inputs(module)
    for sets in ((), ("channel.depth=2", "memory.bandwidth=2")):
        ticks = {}
        for engine in ("python", "fast"):
            ticks[engine] = _Ticks()
            Simulator(module, inputs, sizes, Arch.load(None, sets), progress=ticks[engine],
                      engine=engine).run()
        assert ticks["fast"].seen == ticks["python"].seen
        if every < 1024:                                   # (a run of < 1024 activations)
            assert any(len(t) == 2 for t in ticks["python"].seen)


class _Clock:
    """A monotonic clock that reads `now` (seconds since an arbitrary zero)."""

    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_report_without_an_estimate_and_its_rate_limit(monkeypatch):
    """On a machine up for less than the interval (the clock reads 0.5 s at the start), a new
    kernel still shows at once: no time on the clock may stand for "long ago" (issue #22, the
    `last = 0.0` sentinel: 0.0 is just now when the machine booted 0.5 s ago)."""
    clock = _Clock(0.5)
    monkeypatch.setattr(progress_mod, "time", types.SimpleNamespace(monotonic=clock))
    out = io.StringIO()
    calls = []

    def estimate():
        calls.append(1)
        return None                                        # the estimator cannot model it
    p = Progress(out, after=0.0, interval=3600.0, estimate=estimate, terminal=False)
    p.kernel(1, 3, "g")
    p.tick(1024, 2_500_000)
    clock.now = 1.0
    p.tick(2048, 5_000_000)                                # within the interval: not shown
    p.kernel(2, 3, "h")
    p.tick(10, 0)                                          # a new kernel shows at once
    p.tick(20, 0)                                          # and then waits for the interval
    p.close()
    assert out.getvalue().splitlines() == [
        "simulate: kernel 1 of 3 (g): cycle 1,024; 2.5 M FLOPs",
        "simulate: kernel 2 of 3 (h): cycle 10; 0 FLOPs"]
    assert calls == [1]                                    # asked once, lazily


def test_nothing_shows_before_after_seconds_even_near_the_clock_zero():
    clock = _Clock(0.0)
    out = io.StringIO()
    p = Progress(out, after=1.0, interval=1.0, terminal=False, clock=clock)
    p.kernel(1, 1, "g")
    p.tick(5, 0)                                           # 0 s into the run
    clock.now = 0.999
    p.tick(6, 0)
    clock.now = 1.0
    p.tick(7, 0)                                           # the first second is over
    assert out.getvalue().splitlines() == ["simulate: kernel 1 of 1 (g): cycle 7; 0 FLOPs"]


def _time_left(est: dict, n: int, steps) -> list[str]:
    """The lines a run of kernels shows: `steps` is (seconds, kernel name or None, cycle)."""
    clock = _Clock(2.0)
    out = io.StringIO()
    p = Progress(out, after=0.0, interval=0.0, estimate=lambda: est, terminal=False,
                 clock=clock)
    k = 0
    for now, name, cycle in steps:
        clock.now = now
        if name is not None:
            k += 1
            p.kernel(k, n, name)
        else:
            p.tick(cycle, 0)
    return out.getvalue().splitlines()


def test_the_time_left_comes_from_the_cycle_model_and_the_rate_so_far():
    est = {"g": Expected(100.0, 1000.0), "h": Expected(0.0, 3000.0), "unused": Expected(1, 1e9)}
    lines = _time_left(est, 2, [
        (2.0, "g", 0),
        (4.0, None, 250),        # 250 of 4000 expected cycles in 2 s: 3750 left, 30 s
        (10.0, None, 1000),      # 1000 in 8 s: 3000 left, 24 s
        (10.0, "h", 0),
        (22.0, None, 500),       # 1000 + 500 in 20 s: 2500 left, 33 s
        (23.0, None, 3500)])     # past h's 3000 cycles: no time left shown
    assert lines == [
        "simulate: kernel 1 of 2 (g): cycle 250 of ~1 k (estimate), 25%; 0 of ~100 FLOPs; "
        "about 30 s left",
        "simulate: kernel 1 of 2 (g): cycle 1,000 of ~1 k (estimate), 100%; 0 of ~100 FLOPs; "
        "about 24 s left",
        "simulate: kernel 2 of 2 (h): cycle 500 of ~3 k (estimate), 17%; 0 FLOPs; "
        "about 33 s left",
        "simulate: kernel 2 of 2 (h): cycle 3,500 (past the estimate of ~3 k); 0 FLOPs"]


def test_no_time_left_when_a_later_kernel_has_no_cycle_estimate():
    est = {"g": Expected(10.0, 100.0), "p": Expected(0.0, 0.0)}
    lines = _time_left(est, 2, [(2.0, "g", 0), (3.0, None, 50)])
    assert lines == ["simulate: kernel 1 of 2 (g): cycle 50 of ~100 (estimate), 50%; "
                     "0 of ~10 FLOPs"]


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (59.4, "59 s"), (61, "1 min 1 s"),
                                           (3599, "59 min 59 s"), (7260, "2 h 1 min"),
                                           (-3, "0 s")])
def test_durations_read_as_people_say_them(seconds, text):
    assert duration(seconds) == text


def test_a_terminal_gets_a_transient_line():
    out = io.StringIO()
    p = Progress(out, after=0.0, interval=0.0, estimate=lambda: {"g": Expected(1000, 20)},
                 terminal=True)
    p.kernel(1, 1, "g")
    p.tick(10, 500)
    p.close()
    text = out.getvalue()
    assert "simulate: kernel 1 of 1 (g): cycle 10 of ~20 (estimate), 50%; 500 of ~1 k FLOPs" in text
    assert text.endswith("\x1b[2K")                        # erased when the run is over


def test_the_help_says_what_progress_shows():
    """It said the estimator had no cycle model (issue #22); it has one, and progress uses it."""
    r = run_cli(["simulate", "--help"])
    text = " ".join(r.stdout.split())
    assert r.exit_code == 0 and "no cycle model" not in text
    assert "the cycles `fuseflowc estimate`'s cycle model expects of the kernel" in text
    assert "the time left" in text
