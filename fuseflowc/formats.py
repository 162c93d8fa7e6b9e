"""Storage formats: a level format per mode plus a mode order (TACO's format abstraction).

A tensor of order n is stored as n levels. Storage level k holds logical mode `mode_order[k]`
with level format `levels[k]`:
  dense       every coordinate 0..size-1 is stored (no arrays, only the size);
  compressed  the stored coordinates of each fiber (seg and crd arrays);
  compressed(c)  fixed-length (ELL): every fiber stores exactly c slots, its coordinates in
              increasing order then padding (coordinate PAD, value 0) up to c; a crd array of
              parents * c entries and no seg array. Padding is not an entry: readers and the
              scanner drop it, so it never changes a result or a stored pattern;
  singleton   one coordinate per parent position (a crd array, no seg). It must directly follow
              a compressed level, which is then non-unique (TACO's COO: `compressed, singleton`):
              that level's crd repeats a coordinate once per singleton coordinate beneath it
              (per entry, when the singleton level is the last).
A blocked format stores dense b x b blocks as values; its levels iterate block coordinates. The
block size b is a schedule choice (`block T: 16`), not part of the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVEL_KINDS = ("dense", "compressed", "singleton")
#: What a level is, for the stages that treat them differently (`Format.kind`): `nonunique` is a
#: compressed level directly above a singleton one, `fixed` a compressed(c) level.
KINDS = ("dense", "compressed", "nonunique", "fixed", "singleton")
#: The coordinate of a padding slot of a fixed-length level (never a real coordinate).
PAD = -1
#: Largest fixed length c of compressed(c) (its crd array has parents * c entries).
MAX_WIDTH = 1 << 20

_FIXED = re.compile(r"compressed\((\d+)\)\Z")


def fixed_level(width: int) -> str:
    """The level text of a fixed-length compressed level of `width` slots per fiber."""
    return f"compressed({width})"


def level_width(level: str) -> int | None:
    """c of a `compressed(c)` level; None for the other level formats."""
    m = _FIXED.match(level)
    return int(m.group(1)) if m else None


def level_problem(name: str, arg: int | None) -> str | None:
    """Why `name` or `name(arg)` is not a level format (None when it is one)."""
    if name not in LEVEL_KINDS:
        return f"unknown level format {name!r}; level formats are {', '.join(LEVEL_KINDS)}, " \
               f"compressed(c)"
    if arg is None:
        return None
    if name != "compressed":
        return f"level format {name} takes no argument (only compressed(c) does)"
    if not 1 <= arg <= MAX_WIDTH:
        return f"the fixed length of compressed(c) must be between 1 and {MAX_WIDTH}, not {arg}"
    return None


def level_text(name: str, arg: int | None) -> str:
    """The canonical text of level `name` or `name(arg)` (checked by `level_problem`)."""
    return name if arg is None else fixed_level(arg)


def format_problem(levels: tuple[str, ...], blocked: bool) -> str | None:
    """Why a sequence of (valid) levels does not make a format (None when it does)."""
    for k, lv in enumerate(levels):
        if lv == "singleton" and (k == 0 or levels[k - 1] != "compressed"):
            return ("a singleton level must directly follow a compressed level (COO is "
                    "`compressed, singleton`)")
    if blocked and any(lv not in ("dense", "compressed") for lv in levels):
        return "blocked formats take dense and compressed levels only"
    return None


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
        assert all(k in LEVEL_KINDS or level_width(k) for k in self.levels), self.levels
        assert format_problem(self.levels, self.blocked) is None, self.levels

    def kind(self, k: int) -> str:
        """What storage level k is (one of KINDS): its level format, with a compressed level
        above a singleton one `nonunique` and a compressed(c) level `fixed`."""
        lv = self.levels[k]
        if lv == "compressed" and k + 1 < len(self.levels) and self.levels[k + 1] == "singleton":
            return "nonunique"
        return "fixed" if level_width(lv) else lv

    @property
    def kinds(self) -> tuple[str, ...]:
        """`kind(k)` of every storage level."""
        return tuple(self.kind(k) for k in range(len(self.levels)))

    @property
    def classic(self) -> bool:
        """Whether every level is dense or (unique) compressed: the formats every stage knows."""
        return all(k in ("dense", "compressed") for k in self.kinds)

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
        got = _NAMES.get(self)   # (every tensor line of every IR printed asks)
        if got is None:
            got = _NAMES[self] = self._name()
        return got

    def _name(self) -> str:
        # Order-specific shorthands first, so an all-compressed matrix prints as dcsr.
        for short in sorted(SHORTHAND_NAMES, key=lambda n: isinstance(_SHORTHANDS[n][0], str)):
            if short in PARAM_SHORTHANDS:
                width = level_width(self.levels[-1]) if self.levels else None
                if width and shorthand(short, self.order, width) == self:
                    return f"{short}({width})"
            elif shorthand(short, self.order) == self:
                return short
        text = "(" + ", ".join(self.levels) + ")"
        if self.mode_order != tuple(range(self.order)):
            text += " order (" + ", ".join(map(str, self.mode_order)) + ")"
        if self.blocked:
            text += " blocked"
        return text

    def __str__(self) -> str:
        return self.name()


#: Format -> its name (Format.name), made once per format.
_NAMES: dict[Format, str] = {}


def classic_equivalent(fmt: Format) -> Format:
    """The dense/compressed format whose scanners emit the same streams as `fmt`'s: a
    compressed(c) level scans like a compressed one, COO's (compressed, singleton) like DCSR's
    two compressed levels (the estimator models the streams of the equivalent format)."""
    levels = tuple("dense" if k == "dense" else "compressed" for k in fmt.kinds)
    return Format(levels, fmt.mode_order, fmt.blocked)


def copy_levels(fmt: Format) -> tuple[str, ...]:
    """The levels of fuse's permuted copy of a tensor stored in `fmt`: the same, but a
    compressed(c) level becomes compressed (the fibers of another mode order can be longer than
    c)."""
    return tuple("compressed" if level_width(lv) else lv for lv in fmt.levels)


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
    "coo": (("compressed", "singleton"), (0, 1), False),
    "ell": (("dense", "compressed(c)"), (0, 1), False),
}
SHORTHAND_NAMES = tuple(_SHORTHANDS)
#: Shorthands that take an argument, the fixed length c: `ell(4)`.
PARAM_SHORTHANDS = ("ell",)


def shorthand_problem(name: str, arg: int | None) -> str | None:
    """Why `name` or `name(arg)` is not a format shorthand (None when it is one; the order is
    checked by `shorthand`)."""
    if name not in _SHORTHANDS:
        return (f"unknown format {name!r}; known formats: {', '.join(shorthand_texts())}, or "
                f"the general form (dense, compressed, ...) order (...)")
    if name in PARAM_SHORTHANDS and arg is None:
        return f"format {name} needs its fixed length: {name}(c), e.g. {name}(4)"
    if name not in PARAM_SHORTHANDS and arg is not None:
        return f"format {name} takes no argument"
    if arg is not None and not 1 <= arg <= MAX_WIDTH:
        return f"the fixed length of {name}(c) must be between 1 and {MAX_WIDTH}, not {arg}"
    return None


def shorthand_texts() -> list[str]:
    """The shorthands as a user writes them (`ell(c)`)."""
    return [f"{n}(c)" if n in PARAM_SHORTHANDS else n for n in SHORTHAND_NAMES]


def shorthand(name: str, order: int, arg: int | None = None) -> Format | None:
    """The format a shorthand names for a tensor of `order` modes (`arg`: the c of `ell(c)`), or
    None if it does not fit (or lacks its argument)."""
    spec = _SHORTHANDS.get(name)
    if spec is None or (name in PARAM_SHORTHANDS) != (arg is not None):
        return None
    levels, mode_order, blocked = spec
    if arg is not None:
        levels = tuple(fixed_level(arg) if lv == "compressed(c)" else lv for lv in levels)
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
