"""Shared streams (`fuse --share`): an intermediate computed once in a graph, its stream fanned
out to every reader in the same graph instead of stored and read back (docs/lowering.md,
"Shared streams").

The producer is generated first, in the graph's order; instead of writers it *publishes* its
coordinate stream per level (storage order) and its value stream. A reader's view of the
intermediate (a `shared` view of the fused IR) takes, at each of the tensor's levels but the
innermost, the published coordinates (the reader iterates exactly those: every coordinate of a
dense level, which the producer emits too), and at the innermost level the published
coordinates with the values riding as the payload a scanner's reference would (the value array
is not needed: the payload *is* the value). A stream with several readers is a fan-out: every
reader gets its own FIFO. A reader that sees the tensor only after a reduction over the same row
(layer norm's `x - mean`, softmax's `e / sum`) finds a row waiting in its FIFO: the channel needs
room for a row of the innermost level plus its closing stop (`row_tokens`).

Whatever lowering cannot read this way raises CannotShare; the driver then stores the tensor and
splits the graph there (fuseflowc.lower.driver), with a note saying which tensor and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import UserError


class CannotShare(UserError):
    """A shared intermediate lowering cannot fan out as one stream: `tensor`, and why."""

    def __init__(self, tensor: str, why: str, loc=None):
        super().__init__(f"{tensor} cannot be one stream fanned out to its readers: {why}", loc)
        self.tensor = tensor
        self.why = why


@dataclass
class Published:
    """The streams of a shared intermediate in its graph: its format, the coordinate stream of
    each level (storage order) and its value stream."""

    format: object
    crds: list
    val: object


def row_tokens(size: int) -> int:
    """The FIFO entries a reader that waits for a row's reduction needs: the row's coordinates
    (at most the innermost level's dim size) and the stop closing it."""
    return size + 1
