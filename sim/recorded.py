"""A writer's stream as the compiled engine recorded it: one 64-bit word per token, no Python
object per token (a MAG-size output streams tens of millions of them).

The words are the compiled engine's token encoding (sim/cpp/tokens.hpp; the tags come from the
extension, `_fast.TOKEN_TAGS`): a float is its IEEE double; an int (coordinate, ref or control
token of sim/tokens.py) is a 48-bit payload under the int tag; a block value is an index into
`blocks` under the block tag. `sim.assemble` reads the arrays directly (`np.asarray(stream,
np.int64)` for a crd stream, `stored_values()` for a val stream); iterating or `tolist()` gives
the very tokens the Python engine's writer records, for the few readers that want them (a
replayed spill, tests, error messages).
"""

from __future__ import annotations

import numpy as np

from .tokens import N


class Recorded:
    """A recorded stream: `bits` (uint64, one word per token, D excluded), `blocks` (the block
    values block tokens index) and `tags` ((shift, int tag, block tag) of the encoding)."""

    __slots__ = ("bits", "blocks", "_shift", "_int", "_block")

    def __init__(self, bits: np.ndarray, blocks: list, tags: tuple[int, int, int]):
        self.bits = bits
        self.blocks = blocks
        self._shift, self._int, self._block = (np.uint64(t) for t in tags)

    def __len__(self) -> int:
        return int(self.bits.shape[0])

    def _tag(self) -> np.ndarray:
        return self.bits >> self._shift

    def is_int(self) -> np.ndarray:
        """Per token: whether it is an int (a coordinate, ref or control token)."""
        return self._tag() == self._int

    def ints(self) -> np.ndarray:
        """Per token: its int (the 48-bit payload sign-extended; meaningless where not is_int)."""
        return (self.bits << np.uint64(64 - int(self._shift))).view(np.int64) \
            >> np.int64(64 - int(self._shift))

    def __array__(self, dtype=None, copy=None):
        """The tokens as int64 (a crd, ref or repsig stream: every token is an int)."""
        if not bool(self.is_int().all()):
            raise TypeError("a recorded stream with values has no int64 array")
        a = self.ints()
        return a if dtype is None else a.astype(dtype, copy=False)

    def stored_values(self) -> np.ndarray:
        """The stored values of a scalar val stream: every value, N as 0.0, stops dropped
        (sim.assemble._values on the list of the same tokens), as float64."""
        if self.blocks:
            raise TypeError("a stream of block values: use tolist()")
        is_int = self.is_int()
        keep = ~is_int | (self.ints() == N)
        vals = self.bits[keep].view(np.float64)
        vals[is_int[keep]] = 0.0
        return vals

    def tolist(self) -> list:
        """The tokens as the Python engine records them: ints, floats and block arrays."""
        is_int = self.is_int().tolist()
        ints = self.ints().tolist()
        floats = self.bits.view(np.float64).tolist()
        block = (self._tag() == self._block).tolist() if self.blocks else None
        payload = (self.bits & np.uint64((1 << int(self._shift)) - 1)).tolist() \
            if self.blocks else None
        out = []
        for k, i in enumerate(is_int):
            if i:
                out.append(ints[k])
            elif block is not None and block[k]:
                out.append(self.blocks[payload[k]])
            else:
                out.append(floats[k])
        return out

    def __iter__(self):
        return iter(self.tolist())
