"""Where a long simulation is, on stderr: the kernel (k of n), the cycles so far, and the FLOPs
done against an estimate of the kernel's total when one is available.

`Progress` is what `sim.build.Simulator` reports to: `kernel(k, n, name)` when a kernel starts,
`tick(cycle, flops)` from the engine (every `Engine.PROGRESS_EVERY` activations), `close()` at
the end.
It shows nothing for the first `after` seconds (short runs stay quiet), then at most one update
per `interval` seconds: a transient line on a terminal (rich), plain lines otherwise (when asked
for with `simulate --progress`). The estimate is a function name -> expected FLOPs (or None),
called once, lazily, when the first update is shown: `fuseflowc estimate`'s model has no cycle
model, so progress is measured in FLOPs (cycles are shown as they are).
"""

from __future__ import annotations

import sys
import time


def _si(x: float) -> str:
    """1234567 -> '1.23 M'."""
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.0f}"


class Progress:
    """The progress report of one simulate run (see the module docstring)."""

    def __init__(self, stream=None, after: float = 1.0, interval: float = 1.0,
                 estimate=None, terminal: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.interval = interval
        self.estimate = estimate          # callable() -> {kernel name: FLOPs}, or None
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.start = time.monotonic()
        self.last = None                  # when the last update was shown
        self.k = self.n = 0
        self.name = ""
        self.flops_total: dict | None = None
        self.live = None                  # the rich display on a terminal

    def kernel(self, k: int, n: int, name: str) -> None:
        """Kernel k (1-based) of n, named `name`, starts."""
        self.k, self.n, self.name = k, n, name
        self.last = None if self.last is None else 0.0   # show the new kernel at the next tick

    def tick(self, cycle: int, flops: int) -> None:
        """The running kernel has reached `cycle` and done `flops`."""
        now = time.monotonic()
        if now - self.start < self.after:
            return
        if self.last is not None and now - self.last < self.interval:
            return
        self.last = now
        self.show(self.line(cycle, flops))

    def line(self, cycle: int, flops: int) -> str:
        """The text of one update."""
        text = f"simulate: kernel {self.k} of {self.n} ({self.name}): cycle {cycle:,}"
        total = self._total(self.name)
        if total:
            text += (f"; {_si(flops)} of ~{_si(total)} FLOPs (estimate), "
                     f"{min(flops / total, 9.99):.0%}")
        else:
            text += f"; {_si(flops)} FLOPs"
        return text

    def _total(self, name: str):
        """The estimated FLOPs of kernel `name` (None: no estimate)."""
        if self.flops_total is None:
            self.flops_total = {}
            if self.estimate is not None:
                self.flops_total = self.estimate() or {}
        return self.flops_total.get(name)

    def show(self, text: str) -> None:
        """Put one update on the stream: a transient line on a terminal, else a plain line."""
        if not self.terminal:
            print(text, file=self.stream, flush=True)
            return
        if self.live is None:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text
            console = Console(file=self.stream, force_terminal=True)
            self.live = Live(Text(text), console=console, transient=True, auto_refresh=False)
            self.live.start()
        from rich.text import Text
        self.live.update(Text(text), refresh=True)

    def close(self) -> None:
        """The run is over: take the transient line away."""
        if self.live is not None:
            self.live.stop()
            self.live = None
