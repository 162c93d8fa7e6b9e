"""A status line on stderr for long runs: transient (rich) on a terminal, plain lines elsewhere.

Shared by `simulate`'s progress (sim/progress.py) and `graph`'s (data/progress.py), so that both
draw and clear their line the same way and say durations alike.
"""

from __future__ import annotations


def duration(seconds: float) -> str:
    """A rounded duration for people: '7 s', '2 min 5 s', '3 h 20 min'."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


class StatusLine:
    """One line of status on `stream`: redrawn in place on a terminal (`terminal`), else printed
    as a plain line per update."""

    def __init__(self, stream, terminal: bool):
        self.stream = stream
        self.terminal = terminal
        self.live = None                  # the rich display, once something was shown

    def show(self, text: str) -> None:
        """Put one update on the stream."""
        if not self.terminal:
            print(text, file=self.stream, flush=True)
            return
        from rich.text import Text
        if self.live is None:
            from rich.console import Console
            from rich.live import Live
            console = Console(file=self.stream, force_terminal=True)
            self.live = Live(Text(text), console=console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(Text(text), refresh=True)

    def close(self) -> None:
        """The run is over: take the transient line away."""
        if self.live is not None:
            self.live.stop()
            self.live = None
