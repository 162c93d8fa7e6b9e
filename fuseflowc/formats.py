"""Storage formats: a level format per mode plus a mode order (TACO's format abstraction).

A tensor of order n is stored as n levels. Storage level k holds logical mode `mode_order[k]`
with level format `levels[k]`:
  dense       every coordinate 0..size-1 is stored (no arrays, only the size);
  compressed  the stored coordinates of each fiber (seg and crd arrays);
  singleton   reserved for COO-like formats (parsed, not yet supported by later stages).
A blocked format stores dense b x b blocks as values; its levels iterate block coordinates. The
block size b is a schedule choice (`block T: 16`), not part of the format.
"""

from __future__ import annotations

from dataclasses import dataclass

LEVEL_KINDS = ("dense", "compressed", "singleton")


@dataclass(frozen=True)
class Format:
    """A storage format: `levels[k]` is the level format of storage level k, which stores the
    logical mode `mode_order[k]`; `blocked` means values are dense b x b blocks."""

    levels: tuple[str, ...]
    mode_order: tuple[int, ...]
    blocked: bool = False

    def __post_init__(self) -> None:
        assert len(self.levels) == len(self.mode_order)
        assert sorted(self.mode_order) == list(range(len(self.levels)))
        assert all(k in LEVEL_KINDS for k in self.levels)

    @property
    def order(self) -> int:
        return len(self.levels)

    @property
    def is_dense(self) -> bool:
        return all(k == "dense" for k in self.levels)

    def level_of_mode(self, mode: int) -> int:
        """The storage level that holds logical mode `mode`."""
        return self.mode_order.index(mode)

    def name(self) -> str:
        """Canonical text: a shorthand when one fits, else the general form."""
        # Order-specific shorthands first, so an all-compressed matrix prints as dcsr.
        for short in sorted(SHORTHAND_NAMES, key=lambda n: isinstance(_SHORTHANDS[n][0], str)):
            if shorthand(short, self.order) == self:
                return short
        text = "(" + ", ".join(self.levels) + ")"
        if self.mode_order != tuple(range(self.order)):
            text += " order (" + ", ".join(map(str, self.mode_order)) + ")"
        if self.blocked:
            text += " blocked"
        return text

    def __str__(self) -> str:
        return self.name()


def dense(order: int) -> Format:
    return Format(("dense",) * order, tuple(range(order)))


# Shorthand -> (levels, mode order, blocked); None levels = any order (all dense / all compressed).
_SHORTHANDS: dict[str, tuple[tuple[str, ...] | str, tuple[int, ...] | None, bool]] = {
    "dense": ("dense", None, False),
    "sparse": ("compressed", None, False),
    "csr": (("dense", "compressed"), (0, 1), False),
    "csc": (("dense", "compressed"), (1, 0), False),
    "dcsr": (("compressed", "compressed"), (0, 1), False),
    "dcsc": (("compressed", "compressed"), (1, 0), False),
    "bcsr": (("dense", "compressed"), (0, 1), True),
    "bdcsr": (("compressed", "compressed"), (0, 1), True),
    "bdense": ("dense", None, True),
}
SHORTHAND_NAMES = tuple(_SHORTHANDS)


def shorthand(name: str, order: int) -> Format | None:
    """The format a shorthand names for a tensor of `order` modes, or None if it does not fit."""
    spec = _SHORTHANDS.get(name)
    if spec is None:
        return None
    levels, mode_order, blocked = spec
    if isinstance(levels, str):
        if blocked and order != 2:
            return None
        return Format((levels,) * order, tuple(range(order)), blocked)
    if len(levels) != order:
        return None
    return Format(levels, mode_order, blocked)


def shorthand_orders(name: str) -> str:
    """Human text of which tensor orders a shorthand fits (for error messages)."""
    spec = _SHORTHANDS[name]
    if isinstance(spec[0], str):
        return "order 2" if spec[2] else "any order"
    return f"order {len(spec[0])}"
