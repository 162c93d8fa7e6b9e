"""Where a long simulation is, on stderr: the kernel (k of n), the cycles so far against the
cycle model's expected cycles of the kernel, the FLOPs done against the expected FLOPs, and the
time left.

`Progress` is what `sim.build.Simulator` reports to: `kernel(k, n, name)` when a kernel starts,
`tick(cycle, flops)` from either engine (every `Engine.PROGRESS_EVERY` activations), `close()`
at the end. It shows nothing for the first `after` seconds (short runs stay quiet), then at most
one update per `interval` seconds (the first tick of a new kernel shows at once): a transient
line on a terminal (rich), plain lines otherwise (when asked for with `simulate --progress`).

The estimate is a function giving, per kernel name in execution order, `Expected(flops,
cycles)` (`fuseflowc estimate`'s cost model), or None when the estimator cannot model the
module; it is called once, lazily, when the first update is shown. The kernels a run goes
through are a prefix of that order (`Simulator.kernels`), so the n - k kernels after the
running one are the next n - k names. The time left assumes the run keeps its rate so far,
measured in expected cycles per second of wall time: expected cycles of the kernels done, plus
the running kernel's cycles (at most its expected cycles), over the seconds since the first
kernel started. When a kernel runs past its expected cycles the line says so and shows no time
left (the model was wrong for it; a number would be made up).

All times come from `clock` (default `time.monotonic`), whose zero is arbitrary (the machine's
boot on Linux): times are only ever compared with other times from the same clock, never with a
constant.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple

from fuseflowc.status import StatusLine, duration


class Expected(NamedTuple):
    """The cost model's expectation for one kernel."""

    flops: float
    cycles: float


def _si(x: float) -> str:
    """1234567 -> '1.23 M'."""
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.0f}"


class Progress:
    """The progress report of one simulate run (see the module docstring)."""

    def __init__(self, stream=None, after: float = 1.0, interval: float = 1.0,
                 estimate=None, terminal: bool | None = None, clock=None):
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.interval = interval
        self.estimate = estimate          # callable() -> {kernel name: Expected}, or None
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.clock = clock if clock is not None else time.monotonic
        self.start = self.clock()
        self.last: float | None = None    # when the last update was shown (None: none yet)
        self.fresh = True                 # a kernel started since the last update: show it
        self.k = self.n = 0
        self.name = ""
        self.first: float | None = None   # when the first kernel started
        self.done: list[str] = []         # the kernels finished, in order
        self.expected: dict | None = None
        self.status = StatusLine(self.stream, self.terminal)

    def kernel(self, k: int, n: int, name: str) -> None:
        """Kernel k (1-based) of n, named `name`, starts."""
        if self.k:
            self.done.append(self.name)
        if self.first is None:
            self.first = self.clock()
        self.k, self.n, self.name = k, n, name
        self.fresh = True                 # show the new kernel at its first tick

    def tick(self, cycle: int, flops: int) -> None:
        """The running kernel has reached `cycle` and done `flops`."""
        now = self.clock()
        if now - self.start < self.after:
            return
        if not self.fresh and self.last is not None and now - self.last < self.interval:
            return
        self.last, self.fresh = now, False
        self.show(self.line(cycle, flops, now))

    def line(self, cycle: int, flops: int, now: float | None = None) -> str:
        """The text of one update (`now`: the clock's time, for the time left)."""
        text = f"simulate: kernel {self.k} of {self.n} ({self.name}): cycle {cycle:,}"
        exp = self._expected().get(self.name)
        if exp is None:
            return text + f"; {_si(flops)} FLOPs"
        past = exp.cycles > 0 and cycle > exp.cycles
        if exp.cycles > 0 and not past:
            text += f" of ~{_si(exp.cycles)} (estimate), {cycle / exp.cycles:.0%}"
        elif past:
            text += f" (past the estimate of ~{_si(exp.cycles)})"
        if exp.flops > 0:
            text += f"; {_si(flops)} of ~{_si(exp.flops)} FLOPs"
        else:
            text += f"; {_si(flops)} FLOPs"
        left = None if past else self.seconds_left(cycle, now)
        if left is not None:
            text += f"; about {duration(left)} left"
        return text

    def seconds_left(self, cycle: int, now: float | None = None) -> float | None:
        """The expected seconds until the last kernel ends, at the rate so far (None: no cycle
        estimate for a kernel still to run, or nothing measured yet)."""
        exp = self._expected()
        names = list(exp)
        if self.name not in exp or self.first is None:
            return None
        later = names[names.index(self.name) + 1:][: max(self.n - self.k, 0)]
        if len(later) < self.n - self.k or any(exp[n].cycles <= 0 for n in later):
            return None
        if exp[self.name].cycles <= 0 or any(n not in exp for n in self.done):
            return None
        done = sum(exp[n].cycles for n in self.done) + min(cycle, exp[self.name].cycles)
        elapsed = (self.clock() if now is None else now) - self.first
        if done <= 0 or elapsed <= 0:
            return None
        remaining = exp[self.name].cycles - min(cycle, exp[self.name].cycles) + sum(
            exp[n].cycles for n in later)
        return remaining * elapsed / done

    def _expected(self) -> dict:
        """{kernel name: Expected} ({} when there is no estimate), asked for once."""
        if self.expected is None:
            self.expected = {}
            if self.estimate is not None:
                self.expected = self.estimate() or {}
        return self.expected

    def show(self, text: str) -> None:
        """Put one update on the stream (fuseflowc.status.StatusLine)."""
        self.status.show(text)

    def close(self) -> None:
        """The run is over: take the transient line away."""
        self.status.close()
