"""Where a long data generation is (`fuseflowc graph synthetic:mag`: about a minute), on stderr:
the step, the fraction of the work done and the time left.

The work is counted in units the caller declares up front (`WorkProgress(total)`), each step
adding its share as it goes (`advance(units, step)`); the time left is the time so far scaled
by the work still to do. Like `simulate`'s progress (fuseflowc/sim/progress.py): nothing for
the first `after` seconds (short runs stay quiet), then at most one update per `interval`
seconds, a transient line on a terminal (rich), plain lines when asked for (`--progress`),
nothing otherwise.
"""

from __future__ import annotations

import sys
import time

from fuseflowc.status import StatusLine, duration


class WorkProgress:
    """The progress report of one long piece of work of `total` units (see the module
    docstring). `label` starts every line (e.g. the command and what it makes)."""

    def __init__(self, total: float, label: str, stream=None, after: float = 1.0,
                 interval: float = 1.0, terminal: bool | None = None):
        self.total = max(float(total), 0.0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.interval = interval
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.start = time.monotonic()
        self.shown_at: float | None = None   # when the last update was shown (None: never)
        self.done = 0.0
        self.status = StatusLine(self.stream, self.terminal)

    def add_work(self, units: float) -> None:
        """More work than declared so far (a step that learns its size when it starts)."""
        self.total += max(float(units), 0.0)

    def advance(self, units: float, step: str) -> None:
        """`units` more of the work are done; `step` says what is being done now."""
        self.done = min(self.done + units, self.total)
        now = time.monotonic()
        if now - self.start < self.after:
            return
        if self.shown_at is not None and now - self.shown_at < self.interval:
            return
        self.shown_at = now
        self.show(self.line(step, now))

    def line(self, step: str, now: float) -> str:
        """The text of one update."""
        frac = self.done / self.total if self.total else 0.0
        text = f"{self.label}: {step}, {frac:.0%}"
        if frac > 0.02:
            left = (now - self.start) * (1 - frac) / frac
            text += f", about {duration(left)} left"
        return text

    def show(self, text: str) -> None:
        """One update (fuseflowc.status.StatusLine)."""
        self.status.show(text)

    def close(self) -> None:
        """The work is over: take the transient line away."""
        self.status.close()
